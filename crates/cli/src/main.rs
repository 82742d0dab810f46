//! The `benchaudit` binary: wires the library crates together. Data goes to stdout, messages
//! to stderr; exit codes: 0 ok, 1 a finding (e.g. a failed oracle check), 2 bad usage or input
//! (or a provider refusal that stopped a run), 3 an incomplete run (`run`/`ab`: episodes ended
//! in `infra_error`; the same command retries them; `merge`: shards missing or incomplete).

mod args;
mod cli;
mod commands;
mod output;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// An error the user caused (bad task id, unreadable input): exit code 2, its message alone.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Logs go to stderr (stdout carries data, or the MCP protocol): warnings and errors by
/// default, more with `RUST_LOG` (e.g. `RUST_LOG=debug`, `RUST_LOG=benchaudit_server=info`).
fn init_logging() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A bad flag value is one line, as every other input error (the libraries' parsers
        // name the values they know); clap's own rendering for everything else.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: invalid value"));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    init_logging();
    let result = match cli.command {
        Command::Tasks(args) => commands::tasks::run(&args),
        Command::Policies(args) => commands::policies::run(&args),
        Command::Truth(args) => commands::truth::run(&args),
        Command::Score(args) => commands::score::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Merge(args) => commands::merge::run(&args),
        Command::Audit(args) => commands::audit::run(&args),
        Command::Guard(args) => commands::guard::run(&args),
        Command::Ab(args) => commands::ab::run(&args),
        Command::Prereg(args) => commands::prereg::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Serve(args) => commands::serve::run(&args),
        Command::Mcp(args) => commands::mcp::run(&args),
        Command::Export(args) => commands::export::run(&args),
        Command::Import(args) => commands::import::run(&args),
        Command::Assist(args) => commands::assist::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            if err.downcast_ref::<UsageError>().is_some() {
                eprintln!("error: {err}");
            } else {
                eprintln!("error: {err:#}");
            }
            ExitCode::from(2)
        }
    }
}
