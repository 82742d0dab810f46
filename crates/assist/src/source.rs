//! Source handed to a model: named files, optionally a line range of each (`FILE:START-END`),
//! read bounded, shown with their names and original line numbers, so the model can cite
//! `file:lines` and every citation can be checked against what it was shown.

use std::path::Path;

use serde::Serialize;

use crate::Error;

/// The default bound of the source sent in one request (about 30 000 tokens of code).
pub const DEFAULT_MAX_SOURCE_BYTES: u64 = 120_000;

/// One file (or a line range of it) as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceFile {
    /// The name the model is shown and cites (the path as given).
    pub name: String,
    /// The first line shown (1-based).
    pub first: usize,
    /// The lines shown.
    pub lines: Vec<String>,
    /// Lines in the whole file.
    pub total_lines: usize,
}

impl SourceFile {
    /// Lines in the whole file.
    pub fn line_count(&self) -> usize {
        self.total_lines
    }

    /// The last line shown (1-based).
    pub fn last(&self) -> usize {
        self.first + self.lines.len().saturating_sub(1)
    }
}

/// The files of one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    /// In the order given.
    pub files: Vec<SourceFile>,
}

/// A 1-based, inclusive line range.
type LineRange = (usize, usize);

/// `PATH` or `PATH:START-END`.
fn split_range(spec: &str) -> Result<(&str, Option<LineRange>), Error> {
    if let Some((path, range)) = spec.rsplit_once(':')
        && let Some((a, b)) = range.split_once('-')
        && !a.is_empty()
        && a.bytes().all(|c| c.is_ascii_digit())
        && b.bytes().all(|c| c.is_ascii_digit())
        && !b.is_empty()
    {
        let (a, b): (usize, usize) = (
            a.parse()
                .map_err(|_| Error::Input(format!("bad line range in {spec}")))?,
            b.parse()
                .map_err(|_| Error::Input(format!("bad line range in {spec}")))?,
        );
        if a == 0 || b < a {
            return Err(Error::Input(format!(
                "{spec}: a line range is START-END with 1 ≤ START ≤ END"
            )));
        }
        return Ok((path, Some((a, b))));
    }
    Ok((spec, None))
}

impl Source {
    /// Reads `specs` (`PATH` or `PATH:START-END`); the lines shown, together, may hold at most
    /// `max_bytes` bytes.
    pub fn load(specs: &[String], max_bytes: u64) -> Result<Source, Error> {
        if specs.is_empty() {
            return Err(Error::Input("no source files given".into()));
        }
        let mut files = Vec::new();
        let mut bytes = 0u64;
        for spec in specs {
            let (path, range) = split_range(spec)?;
            // Whole files are read up to the SMALL bound (4 MiB); what is shown is bounded below.
            let text = benchaudit_runs::files::read_text_bounded(
                Path::new(path),
                benchaudit_runs::files::limits::SMALL,
            )
            .map_err(|e| Error::File(e.to_string()))?;
            let all: Vec<&str> = text.lines().collect();
            let (first, last) = match range {
                Some((a, _)) if a > all.len() => {
                    return Err(Error::Input(format!(
                        "{spec}: the file has {} lines",
                        all.len()
                    )));
                }
                Some((a, b)) => (a, b.min(all.len())),
                None => (1, all.len()),
            };
            let lines: Vec<String> = all
                .get(first.saturating_sub(1)..last)
                .unwrap_or_default()
                .iter()
                .map(|l| l.to_string())
                .collect();
            bytes += lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>();
            files.push(SourceFile {
                name: path.to_string(),
                first,
                lines,
                total_lines: all.len(),
            });
        }
        if bytes > max_bytes {
            return Err(Error::SourceTooLarge {
                bytes,
                limit: max_bytes,
            });
        }
        Ok(Source { files })
    }

    /// The files as the model reads them: a header per file, then `NUMBER| line`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            let range = if f.first == 1 && f.lines.len() == f.total_lines {
                format!("{} lines", f.total_lines)
            } else {
                format!("lines {}-{} of {}", f.first, f.last(), f.total_lines)
            };
            out.push_str(&format!("=== FILE {} ({range}) ===\n", f.name));
            for (i, line) in f.lines.iter().enumerate() {
                out.push_str(&format!("{}| {line}\n", f.first + i));
            }
            out.push('\n');
        }
        out
    }

    /// The file a citation names: its name as shown, or a unique file name (`scaffold.rs` for
    /// `crates/agents/src/scaffold.rs`).
    pub fn find(&self, name: &str) -> Option<&SourceFile> {
        let name = name.trim();
        if let Some(f) = self.files.iter().find(|f| f.name == name) {
            return Some(f);
        }
        let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
        let matches: Vec<&SourceFile> = self
            .files
            .iter()
            .filter(|f| f.name.ends_with(name) || base(&f.name) == base(name))
            .collect();
        match matches.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    }

    /// Whether lines `start..=end` of `file` exist among the lines the model was shown; the
    /// reason when they do not.
    pub fn check_citation(&self, file: &str, start: usize, end: usize) -> Result<(), String> {
        let Some(f) = self.find(file) else {
            return Err(format!("no file `{file}` was given"));
        };
        if start == 0 || end < start {
            return Err(format!("{start}-{end} is not a line range"));
        }
        if start < f.first || end > f.last() {
            return Err(format!(
                "{}:{start}-{end} is outside the lines shown ({}-{})",
                f.name,
                f.first,
                f.last()
            ));
        }
        Ok(())
    }
}
