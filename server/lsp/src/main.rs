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
        Command::Doctor(args) => Ok(rein::doctor::main(args)),
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
