//! `benchaudit audit`: the main job. The key-free self-audit of ComtradeBench (as shipped and
//! repaired), plus any external targets: card.md, card.json, audit.json, report.html and the
//! figures; a short summary on stdout; exit 1 when an oracle check or the number guard fails.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use benchaudit_audit::external::{ExternalTarget, ProbeFamily};
use benchaudit_audit::{
    AuditConfig, AuditReport, CallsTargetAudit, ComtradeTarget, Configuration, Resolution,
    audit_comtrade, audit_external, calls,
};
use clap::Args;

use crate::UsageError;
use crate::commands::run::ModelArgs;
use crate::output::print;

/// `benchaudit audit`
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Output directory.
    #[arg(long, default_value = "benchaudit-audit")]
    pub out: PathBuf,
    /// Seeds per cell (seeds 0..N−1), 1 to 10 000.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub seeds: u64,
    /// Worker threads, 1 to 1 024.
    #[arg(long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    pub jobs: usize,
    /// External target manifests (TOML) to audit as well; a bare name such as `bfcl` means
    /// `targets/NAME/target.toml` in this folder or a parent.
    #[arg(long = "target")]
    pub targets: Vec<PathBuf>,
    /// Entries per category for function-call targets (seeded sample); 0 = every entry.
    /// Default: the manifest's `[calls] sample`.
    #[arg(long)]
    pub calls_sample: Option<usize>,
    /// Real models to add beside the rule players (2×2, ownership channels, reliability).
    #[command(flatten)]
    pub models: ModelArgs,
}

/// Runs the subcommand.
pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    if args.seeds == 0 || args.seeds > 1000 {
        return Err(UsageError("--seeds must be between 1 and 1000".into()).into());
    }
    let mut config = AuditConfig::key_free(args.seeds, args.jobs.max(1));
    config.players.extend(args.models.players()?);
    let targets = [
        ComtradeTarget::new(Configuration::AsShipped),
        ComtradeTarget::new(Configuration::Repaired),
    ];
    let comtrade =
        audit_comtrade(&config, &targets).map_err(|e| anyhow::anyhow!("audit failed: {e}"))?;
    let mut resolutions: Vec<Resolution> = targets.iter().map(|t| Resolution::of(t)).collect();
    let mut external = Vec::new();
    let mut calls_audits = Vec::new();
    for arg in &args.targets {
        let path = resolve_target(arg)?;
        let target = ExternalTarget::load(&path).map_err(UsageError)?;
        resolutions.push(Resolution::of(&target));
        if target.probes() == ProbeFamily::Calls {
            let config = target.calls_config(args.calls_sample).ok_or_else(|| {
                UsageError(format!(
                    "{}: probes = \"calls\" needs a [calls] table",
                    path.display()
                ))
            })?;
            let slug = path
                .parent()
                .and_then(|p| p.file_name())
                .map_or("calls".into(), |n| n.to_string_lossy().to_lowercase());
            let name = benchaudit_audit::Target::name(&target);
            calls_audits.push(CallsTargetAudit {
                slug,
                audit: calls::audit(&name, &target, &config),
            });
            continue;
        }
        external.push(
            audit_external(&target, 0)
                .map_err(|e| anyhow::anyhow!("auditing {}: {e}", path.display()))?,
        );
    }
    let report = AuditReport {
        suite: *targets[0].suite(),
        comtrade,
        resolutions,
        external,
        calls: calls_audits,
    };
    let written = benchaudit_report::card::write_audit(&report, &args.out)?;

    let mut out = String::new();
    for c in report.cards() {
        out.push_str(&format!(
            "{}\n  criterion sensitivity: {}\n  ownership:             {}\n  replay:                {}\n  licensed claim:        {}\n",
            c.target,
            c.criterion_sensitivity.status.label(),
            c.ownership.status.label(),
            c.replay.status.label(),
            c.licensed_claim.label()
        ));
    }
    let checks = &report.comtrade.checks;
    let passed = checks.iter().filter(|c| c.pass).count();
    out.push_str(&format!("oracle checks: {passed}/{} pass\n", checks.len()));
    for c in checks.iter().filter(|c| !c.pass) {
        out.push_str(&format!(
            "  FAILED {}: expected {}, observed {}\n",
            c.name, c.expected, c.observed
        ));
    }
    let (md, html) = (&written.guard_markdown, &written.guard_html);
    let verdict =
        |g: &benchaudit_audit::guard::GuardReport| if g.passed() { "pass" } else { "FAIL" };
    out.push_str(&format!(
        "number guard: card.md {} ({} numbers), report.html {} ({} numbers)\n",
        verdict(md),
        md.checked,
        verdict(html),
        html.checked
    ));
    for v in md.violations.iter().chain(&html.violations) {
        out.push_str(&format!(
            "  {} at line {}: {}\n",
            v.number.text, v.number.line, v.context
        ));
    }
    out.push_str(&format!(
        "wrote {} (card.md, card.json, audit.json, report.html, figures/) in {:.2} s\n",
        args.out.display(),
        started.elapsed().as_secs_f64()
    ));
    print(&out)?;
    Ok(if passed == checks.len() && written.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A manifest path, or a bare target name (`bfcl`) looked up as `targets/NAME/target.toml` in
/// the current folder and its parents.
fn resolve_target(arg: &std::path::Path) -> anyhow::Result<PathBuf> {
    let bare = arg.components().count() == 1 && arg.extension().is_none();
    if !bare || arg.exists() {
        return Ok(arg.to_path_buf());
    }
    let rel = std::path::Path::new("targets")
        .join(arg)
        .join("target.toml");
    let cwd =
        std::env::current_dir().map_err(|e| anyhow::anyhow!("reading the current folder: {e}"))?;
    for dir in cwd.ancestors() {
        let candidate = dir.join(&rel);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(UsageError(format!(
        "no target `{}`: {} is not in {} or a parent folder",
        arg.display(),
        rel.display(),
        cwd.display()
    ))
    .into())
}
