//! ComtradeBench over REST and MCP (work in progress: being written).
#![deny(missing_docs)]

use std::net::SocketAddr;

use benchaudit_comtrade::{EpisodeOptions, TaskSpec};

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ServeError(pub String);

/// Serves REST and MCP on `addr` until SIGINT/SIGTERM.
pub fn serve_blocking(addr: SocketAddr) -> Result<(), ServeError> {
    Err(ServeError(format!("serving on {addr} is not built yet")))
}

/// Serves one episode over MCP stdio until the client disconnects.
pub fn serve_stdio_blocking(task: &'static TaskSpec, seed: u64, options: EpisodeOptions) -> Result<(), ServeError> {
    let _ = (task, seed, options);
    Err(ServeError("MCP over stdio is not built yet".into()))
}
