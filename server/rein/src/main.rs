//! The `rein` binary: parses the command line (`cli.rs`) and hands each
//! subcommand to its front end (`rein-lsp`, `rein-acp`, `rein-cli`) or to
//! its module here (`demo`, `doctor`, `eval`, `trace_cmd`), all over the
//! task service (`rein-app`).

mod cli;
mod demo;
mod doctor;
mod eval;
mod hardening;
mod trace_cmd;

use std::process::ExitCode;

use clap::Parser;
use cli::{Cli, Command};
use rein_app::logging;
use rein_lsp::ServerOptions;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::SandboxExec(args) = &cli.command {
        // Nothing else first: this process becomes the command.
        return sandbox_exec(args);
    }
    logging::init();
    // Before any key is read: no other process of the user may read this
    // one's memory or environment.
    hardening::protect_this_process();
    let result = match cli.command {
        Command::Lsp => run_lsp(),
        Command::Acp => Ok(rein_acp::main()),
        Command::Run(args) => Ok(rein_cli::run::main(args)),
        Command::Demo => Ok(demo::main()),
        Command::Trace(args) => Ok(trace_cmd::main(args)),
        Command::Eval(args) => Ok(eval::main(args)),
        Command::Doctor(args) => Ok(doctor::main(args)),
        Command::Trust(args) => Ok(rein_cli::trust_cmd::main(args)),
        Command::Undo(args) => Ok(rein_cli::undo_cmd::main(args)),
        Command::SandboxExec(args) => Ok(sandbox_exec(&args)),
    };
    result.unwrap_or_else(|error| {
        eprintln!("rein: {error:#}");
        ExitCode::FAILURE
    })
}

fn run_lsp() -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let handle = runtime.block_on(rein_lsp::serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
        ServerOptions::default(),
    ));
    // tokio's stdin reader thread may still be parked in read(2); don't wait for it.
    runtime.shutdown_background();
    // LSP: exit after shutdown is 0, an exit (or EOF) without it is 1.
    Ok(if handle.shutdown_requested() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn sandbox_exec(args: &cli::SandboxExecArgs) -> ExitCode {
    if args.probe {
        // A throwaway process: the probe confines it.
        let support = rein_sandbox::probe::probe();
        let json = serde_json::to_string(&support).unwrap_or_default();
        #[allow(clippy::print_stdout)] // the probe's answer, read by Rein
        {
            println!("{json}");
        }
        return ExitCode::SUCCESS;
    }
    let policy = args.policy.as_deref().unwrap_or_default();
    let error = match (rein_sandbox::Policy::from_arg(policy), args.init_status_fd) {
        (Ok(policy), None) => rein_sandbox::exec(&policy, &args.command),
        (Ok(policy), Some(fd)) => rein_sandbox::init::init(&policy, fd, &args.command),
        (Err(error), _) => error,
    };
    // The command's output is the model's to read: say why it did not run.
    eprintln!("rein sandbox-exec: {error}");
    ExitCode::from(error.exit_code())
}
