//! `benchaudit serve`: REST and MCP over HTTP.
//!
//! Every numeric flag has a range (shown in `--help`, enforced by clap with a clear error, and
//! the same table the server library validates: `ServerConfig::RANGES`).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use benchaudit_runs::served::served_key;
use benchaudit_server::record::{Finished, Recorder, RecorderHandle};
use benchaudit_server::{ServeError, ServerConfig, StoreLimits};
use clap::Args;

use crate::UsageError;

/// `benchaudit serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address and port to bind, e.g. 127.0.0.1:8080 or [::1]:8080; loopback unless told
    /// otherwise.
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse_addr)]
    pub addr: SocketAddr,
    /// Most episodes open at once (1..=10000000); past it the least recently used is evicted
    /// (and answers 410).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_episodes: u64,
    /// Seconds an episode may stay idle before it expires and answers 410 (0..=31536000; 0 =
    /// never).
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(0..=31_536_000))]
    pub idle_timeout: u64,
    /// Most TCP connections open at once (1..=1000000); more wait in the accept backlog.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Largest request body in bytes (1024..=1073741824; 413 past it).
    #[arg(long, default_value_t = 16 << 20, value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    pub max_body_bytes: u64,
    /// Seconds a request head may take to arrive, from connect or the previous response
    /// (1..=3600); idle keep-alive connections close after it too.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Seconds a whole request body may take to arrive after its head (1..=3600; 408 past it).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
    /// Seconds a connection may move no byte before it is closed (20..=86400).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(20..=86_400))]
    pub connection_idle_timeout: u64,
    /// Most MCP sessions open at once on /mcp (1..=1000000); past it new sessions get 503.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_mcp_sessions: u64,
    /// Seconds an /mcp session may stay idle before it closes with its episode (1..=86400).
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub mcp_session_timeout: u64,
    /// Extra Host names (or host:port) requests may use (loopback is always allowed);
    /// repeatable. Needed when serving on a non-loopback address.
    #[arg(long = "allow-host", value_delimiter = ',')]
    pub allow_hosts: Vec<String>,
    /// Record every accepted submission into this run ledger (created or resumed; an L2
    /// record under the create request's `agent`, default `served`), for `report`.
    #[arg(long, value_name = "DIR")]
    pub ledger: Option<std::path::PathBuf>,
    /// The wording of fetch_page's `page` argument in every tool list (REST, MCP, OpenEnv):
    /// `clarified` states the base (1-based), `ambiguous` says only "Page number".
    #[arg(long, value_enum, default_value = "clarified")]
    pub tool_text: crate::args::ToolTextArg,
}

/// `serve --ledger`: the server's recorder, appending to a run ledger.
struct LedgerRecorder(benchaudit_runs::served::ServedLedger);

impl Recorder for LedgerRecorder {
    fn admits(
        &self,
        agent: &str,
        task: &'static benchaudit_comtrade::TaskSpec,
        seed: u64,
        options: benchaudit_comtrade::EpisodeOptions,
        reward: benchaudit_scoring::RewardScorer,
    ) -> Result<(), String> {
        if self
            .0
            .holds(&served_key(agent, task, seed, options, reward))
        {
            return Err(format!(
                "the ledger already holds agent `{agent}`'s episode on {} seed {seed} with these options; a ledger records one episode per key: choose another seed or agent name",
                task.task_id
            ));
        }
        Ok(())
    }

    fn record(&self, f: &Finished<'_>) -> Result<(), String> {
        let key = served_key(f.agent, f.task, f.seed, f.options, f.reward_scorer);
        self.0
            .record(key, f.submission, f.scores, f.reward, f.counts, f.wall_ms)
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

impl ServeArgs {
    /// The server configuration these flags describe.
    fn config(&self) -> ServerConfig {
        // Every flag's range fits usize on 32- and 64-bit targets.
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
            header_timeout: Duration::from_secs(self.header_timeout),
            body_timeout: Duration::from_secs(self.body_timeout),
            connection_idle_timeout: Duration::from_secs(self.connection_idle_timeout),
            max_mcp_sessions: to_usize(self.max_mcp_sessions),
            mcp_session_timeout: Duration::from_secs(self.mcp_session_timeout),
            allowed_hosts: self.allow_hosts.clone(),
            tool_text: self.tool_text.into(),
            ..defaults
        }
    }
}

/// `--addr`: an IP address and a port, as the socket is bound (no name lookup, so the address
/// served is the one written); anything else is answered with the form expected.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse().map_err(|_| {
        format!("`{text}` is not an IP address and port: write e.g. 127.0.0.1:8080 or [::1]:8080")
    })
}

/// Runs the subcommand. The ledger of `--ledger` is opened once the address is bound: a
/// server that cannot listen creates nothing.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let result = benchaudit_server::serve_blocking(args.addr, args.config(), |addr, config| {
        if let Some(dir) = &args.ledger {
            let ledger = benchaudit_runs::served::ServedLedger::open(dir)
                .map_err(|e| ServeError::Setup(format!("--ledger: {e}")))?;
            config.recorder = Some(RecorderHandle(Arc::new(LedgerRecorder(ledger))));
            eprintln!(
                "benchaudit: recording accepted submissions into {} (`benchaudit report {}` reads it)",
                dir.display(),
                dir.display()
            );
        }
        eprintln!(
            "benchaudit: serving on http://{addr} (REST /v1, MCP /mcp and /v1/episodes/{{id}}/mcp); Ctrl-C to stop"
        );
        Ok(())
    });
    match result {
        Err(ServeError::Setup(e)) => return Err(UsageError(e).into()),
        other => other?,
    }
    eprintln!("benchaudit: server stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Wrap {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn flag_ranges_match_the_servers_own() {
        // The defaults and each end of every range pass the library's validation; one past
        // either end is refused by clap with the flag named.
        let defaults = Wrap::try_parse_from(["serve"]).expect("defaults");
        defaults.serve.config().validate().expect("defaults valid");
        for range in ServerConfig::RANGES {
            for ok in [range.min, range.max] {
                let w = Wrap::try_parse_from(["serve", range.flag, &ok.to_string()])
                    .unwrap_or_else(|e| panic!("{} {ok}: {e}", range.flag));
                w.serve
                    .config()
                    .validate()
                    .unwrap_or_else(|e| panic!("{} {ok}: {e}", range.flag));
            }
            let mut outside = vec![range.max + 1];
            if range.min > 0 {
                outside.push(range.min - 1);
            }
            for bad in outside {
                let e = Wrap::try_parse_from(["serve", range.flag, &bad.to_string()])
                    .expect_err("outside its range");
                let text = e.to_string();
                assert!(
                    text.contains(range.flag) && text.contains("not in"),
                    "{text}"
                );
            }
        }
    }
}
