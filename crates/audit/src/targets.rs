//! The whole audit one invocation asks for: ComtradeBench as shipped and as repaired, then every
//! outside target named by manifest path or bare name, into one [`AuditReport`]. `benchaudit
//! audit` is this function behind flags; a Rust caller gets the same card without the binary.

use std::path::{Path, PathBuf};

use crate::external::{ExternalTarget, ProbeFamily};
use crate::{
    AuditConfig, AuditReport, CallsTargetAudit, ComtradeTarget, Configuration, Resolution,
    audit_comtrade, audit_external, calls,
};

/// Most seeds per cell an audit accepts (each seed is one episode of every cell).
pub const MAX_SEEDS: usize = 1000;

/// Why an audit could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A target manifest could not be found, read or understood (the user's input).
    #[error("{0}")]
    Target(String),
    /// More seeds than [`MAX_SEEDS`].
    #[error("{given} seeds given; the audit takes at most {MAX_SEEDS}")]
    TooManySeeds {
        /// How many were given.
        given: usize,
    },
    /// The ComtradeBench stages failed (a stage's hook or tokenizer).
    #[error("audit failed: {0}")]
    Comtrade(String),
    /// An outside target's stages failed.
    #[error("auditing {path}: {why}")]
    External {
        /// The manifest.
        path: PathBuf,
        /// What failed.
        why: String,
    },
}

/// Audits ComtradeBench (as shipped and repaired) under `config`, then each target manifest in
/// `targets` (paths as [`resolve_target`] returns them). `calls_sample` overrides a
/// function-call target's `[calls] sample` (entries per category; 0 = every entry).
///
/// # Errors
/// [`AuditError`] naming the target or stage that failed.
pub fn audit_all(
    config: &AuditConfig,
    targets: &[PathBuf],
    calls_sample: Option<usize>,
) -> Result<AuditReport, AuditError> {
    check_seeds(&config.seeds)?;
    let comtrade = [
        ComtradeTarget::new(Configuration::AsShipped),
        ComtradeTarget::new(Configuration::Repaired),
    ];
    let mut report = AuditReport {
        suite: *comtrade[0].suite(),
        comtrade: audit_comtrade(config, &comtrade).map_err(AuditError::Comtrade)?,
        resolutions: comtrade.iter().map(|t| Resolution::of(t)).collect(),
        external: Vec::new(),
        calls: Vec::new(),
    };
    for path in targets {
        let target = ExternalTarget::load(path).map_err(AuditError::Target)?;
        report.resolutions.push(Resolution::of(&target));
        if target.probes() != ProbeFamily::Calls {
            let audit = audit_external(&target, 0).map_err(|why| AuditError::External {
                path: path.clone(),
                why,
            })?;
            report.external.push(audit);
            continue;
        }
        let calls_config = target.calls_config(calls_sample).ok_or_else(|| {
            AuditError::Target(format!(
                "{}: probes = \"calls\" needs a [calls] table",
                path.display()
            ))
        })?;
        // Figures are filed under the manifest's folder name (`targets/bfcl/` → `bfcl`).
        let slug = path
            .parent()
            .and_then(Path::file_name)
            .map_or("calls".into(), |n| n.to_string_lossy().to_lowercase());
        let name = crate::Target::name(&target);
        report.calls.push(CallsTargetAudit {
            slug,
            audit: calls::audit(&name, &target, &calls_config),
        });
    }
    Ok(report)
}

/// Refuses more seeds than [`MAX_SEEDS`] (checked before any episode is played).
///
/// # Errors
/// [`AuditError::TooManySeeds`].
pub fn check_seeds(seeds: &[u64]) -> Result<(), AuditError> {
    if seeds.len() > MAX_SEEDS {
        return Err(AuditError::TooManySeeds { given: seeds.len() });
    }
    Ok(())
}

/// A manifest path as given, or a bare target name (`bfcl`) looked up as
/// `targets/NAME/target.toml` in `cwd` and its parents.
///
/// # Errors
/// [`AuditError::Target`] when a bare name is found in none of them.
pub fn resolve_target(arg: &Path, cwd: &Path) -> Result<PathBuf, AuditError> {
    let bare = arg.components().count() == 1 && arg.extension().is_none();
    if !bare || arg.exists() {
        return Ok(arg.to_path_buf());
    }
    let rel = Path::new("targets").join(arg).join("target.toml");
    cwd.ancestors()
        .map(|dir| dir.join(&rel))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            AuditError::Target(format!(
                "no target `{}`: {} is not in {} or a parent folder",
                arg.display(),
                rel.display(),
                cwd.display()
            ))
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_are_found_in_a_parent_and_paths_are_kept() {
        let root = tempfile::tempdir().unwrap();
        let manifest = root.path().join("targets/demo/target.toml");
        std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
        std::fs::write(&manifest, "").unwrap();
        let deep = root.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(resolve_target(Path::new("demo"), &deep).unwrap(), manifest);
        let given = Path::new("elsewhere/target.toml");
        assert_eq!(resolve_target(given, &deep).unwrap(), given);
        let missing = resolve_target(Path::new("nope"), &deep).unwrap_err();
        assert!(
            missing.to_string().contains("targets/nope/target.toml"),
            "{missing}"
        );
    }

    #[test]
    fn too_many_seeds_are_refused_before_any_work() {
        let mut config = AuditConfig::key_free(1, 1);
        config.seeds = (0..=MAX_SEEDS as u64).collect();
        let e = audit_all(&config, &[], None).unwrap_err();
        assert!(matches!(e, AuditError::TooManySeeds { given } if given == MAX_SEEDS + 1));
    }
}
