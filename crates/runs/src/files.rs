//! Reading a file the user named, without trusting it (issue 12).
//!
//! Every file benchaudit reads (submissions, ledgers, manifests, pre-registrations, guard
//! inputs, audit-target manifests) goes through [`read_bounded`]: it must be a regular file (a
//! FIFO would block the open or the read forever, `/dev/zero` never ends) and no larger than a
//! limit chosen for what the file holds, so a wrong path gives a clear error instead of a hang
//! or unbounded memory.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// `name` safe as a file name on every filesystem: every character outside `A-Za-z0-9.-`
/// written as `_` (a model `local:smollm2` → `local_smollm2`).
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Size limits per kind of input; each is far above anything benchaudit itself writes.
pub mod limits {
    /// A submission file (the server takes at most 16 MiB per body).
    pub const SUBMISSION: u64 = 64 << 20;
    /// A manifest, a pre-registration, a target manifest: small JSON or TOML.
    pub const SMALL: u64 = 4 << 20;
    /// A document handed to the number guard, or its source JSON.
    pub const GUARD: u64 = 256 << 20;
    /// One run's `episodes.jsonl` (about 2 KB per episode: a million episodes fit).
    pub const LEDGER: u64 = 4 << 30;
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The path does not exist or cannot be inspected.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A directory, FIFO, socket or device.
    #[error("cannot read {path}: not a regular file ({kind})")]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// Where a directory is wanted, something else.
    #[error("{} is not a directory", path.display())]
    NotDirectory {
        /// The path.
        path: PathBuf,
    },
    /// Larger than the limit for this kind of input.
    #[error("cannot read {path}: {size} bytes is over the limit of {limit} bytes for this input")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size (at least; it may have grown while read).
        size: u64,
        /// The limit.
        limit: u64,
    },
}

impl FileError {
    /// True when the file does not exist (callers that treat "absent" as "empty" use this).
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

fn kind_of(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// Opens `path` for reading after checking it is a regular file of at most `limit` bytes.
///
/// The type is checked before the open (opening a FIFO blocks until a writer appears) and again
/// on the open handle (the path may have been swapped in between).
pub fn open_regular(path: &Path, limit: u64) -> Result<File, FileError> {
    let io = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    check(path, &meta, limit)?;
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    check(path, &meta, limit)?;
    Ok(file)
}

fn check(path: &Path, meta: &std::fs::Metadata, limit: u64) -> Result<(), FileError> {
    if !meta.file_type().is_file() {
        return Err(FileError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(meta.file_type()),
        });
    }
    if meta.len() > limit {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            limit,
        });
    }
    Ok(())
}

/// Reads a whole regular file of at most `limit` bytes (a file that grows past the limit while
/// read is refused too).
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let file = open_regular(path, limit)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// [`read_bounded`] for text: invalid UTF-8 is an error naming the file.
pub fn read_text_bounded(path: &Path, limit: u64) -> Result<String, FileError> {
    let bytes = read_bounded(path, limit)?;
    String::from_utf8(bytes).map_err(|e| FileError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })
}

/// A submission directory (`data.jsonl`, `metadata.json`, `run.log`), each file bounded by
/// [`limits::SUBMISSION`]: a missing file is a missing part of the submission, an unreadable
/// one an error, and a path that is not a directory says so.
pub fn read_submission_dir(dir: &Path) -> Result<benchaudit_comtrade::Submission, FileError> {
    let meta = std::fs::metadata(dir).map_err(|source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(FileError::NotDirectory {
            path: dir.to_path_buf(),
        });
    }
    let part = |name: &str| match read_bounded(&dir.join(name), limits::SUBMISSION) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    };
    Ok(benchaudit_comtrade::Submission::from_bytes(
        part("data.jsonl")?,
        part("metadata.json")?,
        part("run.log")?,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        std::fs::write(&p, b"{\"a\":1}").unwrap();
        assert_eq!(read_bounded(&p, 7).unwrap(), b"{\"a\":1}");
        let e = read_bounded(&p, 6).unwrap_err();
        assert!(
            matches!(
                e,
                FileError::TooLarge {
                    size: 7,
                    limit: 6,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn refuses_directories_devices_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_bounded(dir.path(), 1 << 20).unwrap_err();
        assert!(
            e.to_string().contains("not a regular file (a directory)"),
            "{e}"
        );
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("a character device"), "{e}");
        let e = read_bounded(&dir.path().join("absent"), 1).unwrap_err();
        assert!(e.is_not_found(), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_fifo_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&p).status();
        assert!(
            made.is_ok_and(|s| s.success()),
            "mkfifo (coreutils) must work here"
        );
        // Opening a FIFO for reading blocks until a writer appears; we must not open it.
        let e = read_bounded(&p, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
    }

    #[test]
    fn refuses_a_sparse_file_over_the_limit_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        let f = File::create(&p).unwrap();
        f.set_len(3 << 30).unwrap(); // 3 GiB, sparse: costs no disk
        let e = read_bounded(&p, limits::GUARD).unwrap_err();
        assert!(matches!(e, FileError::TooLarge { .. }), "{e}");
    }
}
