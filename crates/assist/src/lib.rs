//! The LLM-assisted layers of BenchAudit (paper §4.5, A.12): they **propose, never score**.
//!
//! - [`discover`]: scaffold discovery. A harness's source goes to a model, which says who owns
//!   each execution-critical decision and cites the lines; the answer becomes an ownership map
//!   in the target manifest's `[ownership]` format, marked `proposed`, with every citation
//!   checked against the files.
//! - [`probes`]: probe design. Given only a scorer's source, a model predicts the scorer's kind
//!   and proposes a forgery battery, written as data the external-target protocol runs.
//! - [`narrate`]: a card's prose, where every figure goes through the number guard
//!   ([`benchaudit_audit::guard`]) against `audit.json`.
//! - [`eval`]: each layer measured against references shipped in the repository, over N seeded
//!   runs, with the worst run.
//!
//! Every request and response goes through a [`Chat`], which records it
//! ([`Recording`], `exchanges.json`) and can answer again from a recording without the model.
//! Nothing here changes a card: a proposal is refused by the manifest loader until a person
//! confirms it (`proposed` renamed to `confirmed_from`).
//!
//! ```
//! use benchaudit_assist::source::Source;
//! let dir = tempfile::tempdir().unwrap();
//! let file = dir.path().join("harness.py");
//! std::fs::write(&file, "def run():\n    retry()\n").unwrap();
//! let source = Source::load(&[file.display().to_string()], 10_000).unwrap();
//! assert_eq!(source.files[0].line_count(), 2);
//! assert!(source.check_citation("harness.py", 2, 2).is_ok());
//! assert!(source.check_citation("harness.py", 2, 9).is_err());
//! ```
#![deny(missing_docs)]

pub mod chat;
pub mod discover;
pub mod eval;
pub mod narrate;
pub mod probes;
pub mod source;

pub use chat::{Chat, Exchange, Recording};

/// Why an assist command could not produce its output.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read (missing, not a regular file, too large, not UTF-8).
    #[error("{0}")]
    File(String),
    /// The source handed to the model is larger than the bound.
    #[error(
        "the source is {bytes} bytes, more than the bound of {limit} (--max-source-bytes): pass fewer files or a line range FILE:START-END"
    )]
    SourceTooLarge {
        /// Bytes the files hold.
        bytes: u64,
        /// The bound.
        limit: u64,
    },
    /// The provider could not answer (after the client's retries) or refused the request.
    #[error("the model could not be asked: {0}")]
    Provider(String),
    /// The model answered something that is not the requested structure.
    #[error(
        "the model's answer is not a usable {what}: {why}; nothing was written (its answer: {excerpt:?})"
    )]
    Garbage {
        /// What was asked for.
        what: &'static str,
        /// What is wrong with it.
        why: String,
        /// The start of the answer.
        excerpt: String,
    },
    /// Replay met a request the recording does not hold.
    #[error("replay: {0}")]
    Replay(String),
    /// An output could not be written.
    #[error("cannot write {path}: {cause}")]
    Write {
        /// The file.
        path: String,
        /// The IO error.
        cause: String,
    },
    /// A bad argument or input document.
    #[error("{0}")]
    Input(String),
}

/// The first characters of a model's answer, for error messages.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX: usize = 300;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half.
pub(crate) fn write_atomic(path: &std::path::Path, text: &str) -> Result<(), Error> {
    let err = |e: std::io::Error| Error::Write {
        path: path.display().to_string(),
        cause: e.to_string(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}
