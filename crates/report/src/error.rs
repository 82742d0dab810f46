//! The one error type of the crate.

/// Why a report could not be computed, drawn or written.
///
/// [`Error::Invalid`] is the caller's to fix (not a run directory, an empty ledger, a bad
/// setting, nothing to pair): a command line maps it to a usage error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input or a setting cannot be used; the message says what to change.
    #[error("{0}")]
    Invalid(String),
    /// A statistic could not be computed.
    #[error("{what}")]
    Stats {
        /// Which row or section.
        what: String,
        /// The cause.
        #[source]
        source: benchaudit_stats::StatsError,
    },
    /// A figure could not be laid out or drawn.
    #[error("{0}")]
    Figure(String),
    /// A file could not be read or written (IO and JSON errors carry what was being done), or
    /// a run directory could not be read.
    #[error(transparent)]
    Runs(#[from] benchaudit_runs::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Wraps an IO error with what was being done.
pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let wrap = benchaudit_runs::Error::io(context);
    move |source| Error::Runs(wrap(source))
}

/// Wraps a JSON error with what was being serialised.
pub(crate) fn json(context: impl Into<String>) -> impl FnOnce(serde_json::Error) -> Error {
    let wrap = benchaudit_runs::Error::json(context);
    move |source| Error::Runs(wrap(source))
}

/// Wraps a statistics error with the row or section it belongs to.
pub(crate) fn stats(what: impl Into<String>) -> impl FnOnce(benchaudit_stats::StatsError) -> Error {
    let what = what.into();
    move |source| Error::Stats { what, source }
}

/// An error and its causes, joined by `: ` (what `{:#}` shows for an `anyhow` error).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
