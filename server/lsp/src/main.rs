use std::process::ExitCode;

use clap::Parser;
use rein::cli::{Cli, Command};
use rein::{ServerOptions, logging};

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init();
    let result = match cli.command {
        Command::Lsp => run_lsp(),
        Command::Run(args) => Ok(rein::run_cmd::main(args)),
        Command::Demo => Ok(rein::demo::main()),
        Command::Trace(args) => Ok(rein::trace_cmd::main(args)),
        other => Ok(not_built(&other)),
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
    let handle = runtime.block_on(rein::serve(
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

/// Subcommands whose issue has not landed yet say so instead of pretending.
fn not_built(command: &Command) -> ExitCode {
    let what = match command {
        Command::Doctor => "the providers and editor clients (issues 3 and 7)",
        Command::Lsp | Command::Run(_) | Command::Demo | Command::Trace(_) => "nothing",
    };
    eprintln!(
        "rein {}: not built yet; it comes with {what}.",
        command.name()
    );
    ExitCode::from(2)
}
