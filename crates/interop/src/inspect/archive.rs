//! The `.eval` zip archive: written with deflate in a fixed member order and fixed member
//! times (the same run exports to the same bytes), read member by member under size limits.

use benchaudit_runs::Error as RunsError;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::error::{Error, Result};

/// Largest member read from an archive (a sample with a long transcript is a few MiB).
pub const MAX_MEMBER_BYTES: u64 = 256 << 20;
/// Most members read from one archive.
pub const MAX_MEMBERS: usize = 1_000_000;

/// Writes members to a temporary file beside `path`, then renames it into place.
pub struct Writer {
    zip: ZipWriter<tempfile::NamedTempFile>,
    path: std::path::PathBuf,
}

impl Writer {
    /// Starts an archive that will become `path`.
    pub fn create(path: &Path) -> Result<Writer> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let tmp = tempfile::NamedTempFile::new_in(dir)
            .map_err(RunsError::io(format!("writing into {}", dir.display())))?;
        Ok(Writer {
            zip: ZipWriter::new(tmp),
            path: path.to_path_buf(),
        })
    }

    /// Adds `name` holding `value` as JSON.
    pub fn json<T: Serialize>(&mut self, name: &str, value: &T) -> Result<()> {
        let bytes = serde_json::to_vec(value).map_err(RunsError::json(format!(
            "serialising {name} of {}",
            self.path.display()
        )))?;
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .large_file(bytes.len() as u64 >= u64::from(u32::MAX));
        let context = || format!("writing {name} into {}", self.path.display());
        self.zip
            .start_file(name, options)
            .map_err(Error::zip(context()))?;
        self.zip
            .write_all(&bytes)
            .map_err(RunsError::io(context()))?;
        Ok(())
    }

    /// Finishes the archive and moves it into place.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let tmp = self
            .zip
            .finish()
            .map_err(Error::zip(format!("finishing {}", path.display())))?;
        tmp.as_file()
            .sync_all()
            .map_err(RunsError::io(format!("syncing {}", path.display())))?;
        // A temporary file is private (0600); a log is as readable as any file written here.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = tmp
                .as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644));
        }
        tmp.persist(&path)
            .map_err(|e| RunsError::io(format!("writing {}", path.display()))(e.error))?;
        Ok(())
    }
}

/// An open archive.
pub struct Reader {
    zip: ZipArchive<File>,
    path: std::path::PathBuf,
}

impl Reader {
    /// Opens `path` as a zip archive.
    pub fn open(path: &Path) -> Result<Reader> {
        let file =
            benchaudit_runs::files::open_regular(path, benchaudit_runs::files::limits::LEDGER)
                .map_err(|e| Error::Invalid(e.to_string()))?;
        let zip = ZipArchive::new(file).map_err(Error::zip(format!(
            "{} is not a zip archive (an Inspect .eval log is one)",
            path.display()
        )))?;
        if zip.len() > MAX_MEMBERS {
            return Err(Error::Invalid(format!(
                "{} has {} members; at most {MAX_MEMBERS} are read",
                path.display(),
                zip.len()
            )));
        }
        Ok(Reader {
            zip,
            path: path.to_path_buf(),
        })
    }

    /// Member names, in archive order (a name written twice is listed twice; the last wins).
    pub fn names(&self) -> Result<Vec<String>> {
        self.zip
            .file_names()
            .map(|n| {
                n.map(|n| n.into_owned()).map_err(Error::zip(format!(
                    "reading the member names of {}",
                    self.path.display()
                )))
            })
            .collect()
    }

    /// Whether the archive has member `name`.
    pub fn has(&self, name: &str) -> bool {
        self.zip.index_for_name(name).is_some()
    }

    /// Member `name` parsed as JSON, read under [`MAX_MEMBER_BYTES`].
    pub fn json(&mut self, name: &str) -> Result<Value> {
        let context = || format!("reading {name} of {}", self.path.display());
        let member = self.zip.by_name(name).map_err(Error::zip(context()))?;
        if member.size() > MAX_MEMBER_BYTES {
            return Err(Error::Invalid(format!(
                "{} of {} is {} bytes uncompressed; at most {MAX_MEMBER_BYTES} are read",
                name,
                self.path.display(),
                member.size()
            )));
        }
        let mut bytes = Vec::new();
        member
            .take(MAX_MEMBER_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(RunsError::io(context()))?;
        if bytes.len() as u64 > MAX_MEMBER_BYTES {
            return Err(Error::Invalid(format!(
                "{name} of {} inflates past {MAX_MEMBER_BYTES} bytes",
                self.path.display()
            )));
        }
        let context = format!("{name} of {} is not JSON", self.path.display());
        Ok(serde_json::from_slice(&bytes).map_err(RunsError::json(context))?)
    }
}
