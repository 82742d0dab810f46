//! `benchaudit serve`: REST and MCP over HTTP.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use benchaudit_server::{ServerConfig, StoreLimits};
use clap::Args;

/// `benchaudit serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to bind; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Most episodes open at once; past it the least recently used is evicted (and answers 410).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_episodes: u64,
    /// Seconds an episode may stay idle before it expires (and answers 410); 0 = never.
    #[arg(long, default_value_t = 1800)]
    pub idle_timeout: u64,
    /// Most TCP connections open at once.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Largest request body in bytes (413 past it).
    #[arg(long, default_value_t = 16 << 20, value_parser = clap::value_parser!(u64).range(1024..))]
    pub max_body_bytes: u64,
    /// Extra Host names MCP requests may use (loopback is always allowed); repeatable. Needed
    /// when serving MCP on a non-loopback address.
    #[arg(long = "allow-host")]
    pub allow_hosts: Vec<String>,
}

impl ServeArgs {
    /// The server configuration these flags describe.
    fn config(&self) -> ServerConfig {
        let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let defaults = ServerConfig::default();
        ServerConfig {
            limits: StoreLimits {
                max_episodes: to_usize(self.max_episodes),
                idle_timeout: (self.idle_timeout > 0)
                    .then(|| Duration::from_secs(self.idle_timeout)),
                max_tombstones: to_usize(self.max_episodes),
                ..defaults.limits
            },
            max_body_bytes: to_usize(self.max_body_bytes),
            max_connections: to_usize(self.max_connections),
            allowed_hosts: self.allow_hosts.clone(),
            ..defaults
        }
    }
}

/// Runs the subcommand.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    benchaudit_server::serve_blocking(args.addr, args.config(), |addr| {
        eprintln!(
            "benchaudit: serving on http://{addr} (REST /v1, MCP /mcp and /v1/episodes/{{id}}/mcp); Ctrl-C to stop"
        );
    })?;
    eprintln!("benchaudit: server stopped");
    Ok(ExitCode::SUCCESS)
}
