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
    /// A `.eval` archive could not be read or written.
    #[error("{context}")]
    Zip {
        /// What was being done, naming the file.
        context: String,
        /// The cause.
        #[source]
        source: zip::result::ZipError,
    },
    /// The run ledger refused the operation (locked, another configuration, corrupt), or a
    /// file or JSON document could not be read or written (`runs::Error::io` and `json` wrap
    /// those with what was being done): one shape of file error across the crates.
    #[error(transparent)]
    Runs(#[from] benchaudit_runs::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a zip error with what was being done.
    pub(crate) fn zip(context: impl Into<String>) -> impl FnOnce(zip::result::ZipError) -> Error {
        let context = context.into();
        move |source| Error::Zip { context, source }
    }
}
