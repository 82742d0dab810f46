//! `benchaudit serve`: REST and MCP over HTTP.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Args;

/// `benchaudit serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to bind; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
}

/// Runs the subcommand.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    benchaudit_server::serve_blocking(args.addr)?;
    Ok(ExitCode::SUCCESS)
}
