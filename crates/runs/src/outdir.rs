//! Output directories and who owns them (issue 13): a command writes into a directory only
//! when it is absent, empty, or already holds that command's own output, so `audit --out` never
//! overwrites a run ledger and `run --out` never adopts an audit's folder.

use std::path::Path;

/// The kinds of directory benchaudit commands write, each recognised by a file only it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirKind {
    /// A run ledger (`run`, `ab`, `import`): `manifest.json`, `episodes.jsonl`.
    Run,
    /// An audit's output (`audit`): `audit.json`, `card.json`.
    Audit,
    /// A report (`report`): `stats.json`, `guard.json`.
    Report,
}

impl DirKind {
    /// The files any one of which marks a directory as this kind's.
    fn markers(self) -> &'static [&'static str] {
        match self {
            DirKind::Run => &["manifest.json", "episodes.jsonl"],
            DirKind::Audit => &["audit.json", "card.json"],
            DirKind::Report => &["stats.json", "guard.json"],
        }
    }

    /// What the kind is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            DirKind::Run => "a run ledger",
            DirKind::Audit => "an audit's output",
            DirKind::Report => "a report",
        }
    }

    /// Entries a fresh directory of this kind may hold before its marker is written (a run
    /// whose first open stopped before the manifest was written).
    fn scaffolding(self) -> &'static [&'static str] {
        match self {
            DirKind::Run => &[".lock", "transcripts"],
            DirKind::Audit | DirKind::Report => &["figures"],
        }
    }

    /// Entries the command itself writes before its marker, whatever they hold: an audit's
    /// `--model` runs write their Inspect logs while the audit runs, before audit.json.
    fn written_first(self) -> &'static [&'static str] {
        match self {
            DirKind::Audit => &["inspect-logs"],
            DirKind::Run | DirKind::Report => &[],
        }
    }
}

/// What `dir` holds, judged by the marker files: `None` when it is absent, empty or holds none.
pub fn kind_of(dir: &Path) -> Option<DirKind> {
    [DirKind::Run, DirKind::Audit, DirKind::Report]
        .into_iter()
        .find(|k| k.markers().iter().any(|m| dir.join(m).exists()))
}

/// Checks that `dir` may be written as `kind`: it is absent, empty (but for the entries a
/// fresh directory of the kind holds), or already holds `kind`'s output.
///
/// # Errors
/// A message naming the directory, what it holds, and what to do.
pub fn claim(dir: &Path, kind: DirKind) -> Result<(), String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(format!(
                "cannot use {} as an output folder: {e}",
                dir.display()
            ));
        }
    };
    match kind_of(dir) {
        Some(found) if found == kind => return Ok(()),
        Some(found) => {
            return Err(format!(
                "{} holds {} ({} is there), not {}: benchaudit does not write into another command's folder; choose another --out",
                dir.display(),
                found.describe(),
                found
                    .markers()
                    .iter()
                    .find(|m| dir.join(m).exists())
                    .copied()
                    .unwrap_or("its marker"),
                kind.describe()
            ));
        }
        None => {}
    }
    let mut foreign: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !kind.written_first().contains(&name.as_str()))
        .filter(|name| {
            !kind.scaffolding().contains(&name.as_str()) || {
                // A scaffolding folder counts only while empty.
                std::fs::read_dir(dir.join(name)).is_ok_and(|mut d| d.next().is_some())
            }
        })
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    let shown = foreign.len().min(3);
    Err(format!(
        "{} is not empty and does not hold {} (it holds {}{}); benchaudit writes only into a new or empty folder or its own earlier output: choose another --out",
        dir.display(),
        kind.describe(),
        foreign[..shown].join(", "),
        if foreign.len() > shown {
            format!(" and {} more", foreign.len() - shown)
        } else {
            String::new()
        }
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_audit_claims_the_inspect_logs_its_model_runs_wrote_before_its_marker() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        std::fs::create_dir_all(dir.join("inspect-logs/arc/m/seed-0")).unwrap();
        std::fs::write(dir.join("inspect-logs/arc/m/seed-0/x.eval"), "log").unwrap();
        assert_eq!(claim(&dir, DirKind::Audit), Ok(()));
        assert!(
            claim(&dir, DirKind::Run).is_err(),
            "a run does not adopt it"
        );
        assert!(claim(&dir, DirKind::Report).is_err());
    }

    #[test]
    fn a_folder_is_claimed_only_by_its_own_kind_or_when_new_or_empty() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        assert_eq!(claim(&dir, DirKind::Audit), Ok(()), "absent");
        std::fs::create_dir(&dir).unwrap();
        assert_eq!(claim(&dir, DirKind::Run), Ok(()), "empty");
        std::fs::create_dir(dir.join("transcripts")).unwrap();
        std::fs::write(dir.join(".lock"), "").unwrap();
        assert_eq!(
            claim(&dir, DirKind::Run),
            Ok(()),
            "a fresh run's scaffolding"
        );
        let e = claim(&dir, DirKind::Audit).unwrap_err();
        assert!(e.contains(".lock") && e.contains("not empty"), "{e}");
        std::fs::write(dir.join("manifest.json"), "{}").unwrap();
        assert_eq!(kind_of(&dir), Some(DirKind::Run));
        assert_eq!(claim(&dir, DirKind::Run), Ok(()));
        let e = claim(&dir, DirKind::Audit).unwrap_err();
        assert!(
            e.contains("holds a run ledger (manifest.json is there)"),
            "{e}"
        );
        let e = claim(&dir, DirKind::Report).unwrap_err();
        assert!(e.contains("not a report"), "{e}");

        let mine = root.path().join("notes");
        std::fs::create_dir_all(mine.join("figures")).unwrap();
        std::fs::write(mine.join("figures/plot.png"), "").unwrap();
        std::fs::write(mine.join("thesis.tex"), "").unwrap();
        let e = claim(&mine, DirKind::Report).unwrap_err();
        assert!(e.contains("figures, thesis.tex"), "{e}");
        std::fs::write(mine.join("stats.json"), "{}").unwrap();
        assert_eq!(
            claim(&mine, DirKind::Report),
            Ok(()),
            "its own earlier output"
        );
    }
}
