//! The one error type of the crate.

/// Why a log or a run could not be converted.
///
/// [`Error::Invalid`] is the caller's to fix (a file that is not an Inspect log, a score that
/// is not a number, a run directory that is not one): a command line maps it to a usage error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input cannot be converted as given; the message says what is wrong and where.
    #[error("{0}")]
    Invalid(String),
    /// A file could not be read or written.
    #[error("{context}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A document could not be read or written as JSON.
    #[error("{context}")]
    Json {
        /// What was being read or written, naming the file and member.
        context: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A `.eval` archive could not be read or written.
    #[error("{context}")]
    Zip {
        /// What was being done, naming the file.
        context: String,
        /// The cause.
        #[source]
        source: zip::result::ZipError,
    },
    /// The run ledger refused the operation (locked, another configuration, corrupt).
    #[error(transparent)]
    Runs(#[from] benchaudit_runs::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an IO error with what was being done.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
        let context = context.into();
        move |source| Error::Io { context, source }
    }

    /// Wraps a JSON error with what was being read or written.
    pub(crate) fn json(context: impl Into<String>) -> impl FnOnce(serde_json::Error) -> Error {
        let context = context.into();
        move |source| Error::Json { context, source }
    }

    /// Wraps a zip error with what was being done.
    pub(crate) fn zip(context: impl Into<String>) -> impl FnOnce(zip::result::ZipError) -> Error {
        let context = context.into();
        move |source| Error::Zip { context, source }
    }
}
