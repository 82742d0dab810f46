//! The one error type of the crate.

/// Why a run, a ledger, a design or a pre-registration could not be used.
///
/// [`Error::Invalid`] is the caller's to fix (a bad setting, a locked or foreign run
/// directory, an edited pre-registration): a command line maps it to a usage error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request cannot be honoured as given; the message says what to change.
    #[error("{0}")]
    Invalid(String),
    /// A ledger file is damaged beyond a torn last line.
    #[error("{0}")]
    Corrupt(String),
    /// A provider refused a request outright (401/403, unknown model, invalid tool schema):
    /// every later episode would fail the same way, so the run stopped.
    #[error(
        "the provider refused a request, so the run stopped: {message}\n{recorded} episodes were recorded by this run and {not_run} were not run (the refused one included, so a resume runs it again); fix the cause, then run the same command to resume"
    )]
    Fatal {
        /// The provider's refusal.
        message: String,
        /// Episodes recorded by the stopped call (they finished while the refusal came in).
        recorded: usize,
        /// Episodes of the call left to run.
        not_run: usize,
    },
    /// A file could not be read or written.
    #[error("{context}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A value could not be written as JSON.
    #[error("{context}")]
    Json {
        /// What was being serialised.
        context: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// Shard directories that cannot be merged (the message names the field, the shard or the
    /// episode, and for missing or incomplete shards the commands that complete them).
    #[error(transparent)]
    Merge(#[from] crate::merge::MergeError),
    /// A statistic of a design could not be computed.
    #[error(transparent)]
    Stats(#[from] benchaudit_stats::StatsError),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an IO error with what was being done (`.map_err(Error::io("writing X"))`).
    pub fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let context = context.into();
        move |source| Error::Io { context, source }
    }

    /// Wraps a JSON error with what was being serialised.
    pub fn json(context: impl Into<String>) -> impl FnOnce(serde_json::Error) -> Error {
        let context = context.into();
        move |source| Error::Json { context, source }
    }
}
