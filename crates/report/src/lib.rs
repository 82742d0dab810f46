//! Reports: from records to a typed statistics model, to documents and figures.
//!
//! A run directory's ledger ([`load`]) becomes `stats.json` ([`model`], computed by
//! [`compute`]); a document model ([`doc`]) of blocks is built from the model only
//! ([`render`]) and rendered to Markdown and to a self-contained HTML page; the figures
//! ([`figures`], chosen by [`plots`]) are drawn with plotters from the same numbers. The number
//! guard then checks both documents against the JSON, so a report cannot state a figure that
//! `stats.json` does not hold. The audit's validity card is rendered the same way ([`card`]:
//! `card.md`, `card.json`, `audit.json`, `report.html`), and [`text`] has the terminal tables
//! of `run` and `ab`.
//!
//! Run a policy on a task into a ledger and report it:
//!
//! ```
//! use benchaudit_agents::{Level, RuleKind};
//! use benchaudit_comtrade::task;
//! use benchaudit_report::{Options, write_run_report};
//! use benchaudit_runs::{Metric, Plan, Player, execute};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let plan = Plan::new(
//!     vec![Player::rule(RuleKind::Oracle), Player::rule(RuleKind::Fabricator)],
//!     vec![Level::L2],
//!     vec![task("T3_duplicates").ok_or("no T3")?],
//!     (0..5).collect(),
//! );
//! let dir = tempfile::tempdir()?;
//! let run = dir.path().join("run");
//! execute(&run, plan.config(), &plan, 2, &mut |_| {})?;
//! let written = write_run_report(&run, &dir.path().join("report"), &Options::new(Metric::F1))?;
//! assert!(written.passed(), "the number guard accepts every figure");
//! let stats: serde_json::Value =
//!     serde_json::from_slice(&std::fs::read(written.out.join("stats.json"))?)?;
//! // Ground truth separates the oracle (1.0) from the fabricator (0.0).
//! let means: Vec<f64> = stats["pooled"].as_array().ok_or("pooled")?.iter()
//!     .map(|p| p["summary"]["mean"].as_f64().unwrap_or(f64::NAN)).collect();
//! assert_eq!(means, [0.0, 1.0]);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

/// The README's Rust example, compiled and run as a doctest so it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

pub mod card;
mod card_answers;
mod card_calls;
mod card_trajectories;
pub mod compute;
pub mod cost;
pub mod doc;
mod error;
pub mod figures;
pub mod json;
pub mod listing;
pub mod load;
pub mod model;
pub mod order;
pub mod plots;
pub mod render;
pub mod text;

use std::path::{Path, PathBuf};

use benchaudit_audit::guard::{self, GuardReport};
use benchaudit_runs::write_atomic;
use serde::Serialize;

pub use compute::Options;
pub use error::{Error, Result, chain};
use error::{io, json};
pub use load::{Loaded, load_run, load_run_for};
use plots::{FIGURE_DIR, Written};
use render::Drawn;

/// What a report run wrote and whether its documents passed the number guard.
///
/// Exists so the command can print where things are and choose its exit code.
#[derive(Debug)]
pub struct ReportOutput {
    /// The report directory.
    pub out: PathBuf,
    /// Files written, relative to `out`.
    pub files: Vec<String>,
    /// Guard result on report.md.
    pub guard_markdown: GuardReport,
    /// Guard result on report.html.
    pub guard_html: GuardReport,
    /// A short text summary for the terminal (the pooled table, as in the report).
    pub summary: String,
    /// The same summary as data (`report --json`): the kind, settings and episode tally of
    /// `stats.json`, its pooled rows and level shortfalls (a run) or its comparison (a compare).
    pub summary_json: serde_json::Value,
    /// Things the reader should know that are not errors (e.g. a torn last ledger line).
    pub notes: Vec<String>,
}

impl ReportOutput {
    /// What `report --json` prints: where the files are, the guard on both documents, and
    /// the summary as data.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "out": self.out,
            "files": self.files,
            "notes": self.notes,
            "number_guard": {"report.md": self.guard_markdown, "report.html": self.guard_html},
            "passed": self.passed(),
            "summary": self.summary_json,
        })
    }

    /// What `report` prints on stdout: the summary, then every file written.
    pub fn text(&self) -> String {
        let mut text = self.summary.clone();
        text.push_str(&format!("wrote {}:\n", self.out.display()));
        for f in &self.files {
            text.push_str(&format!("  {f}\n"));
        }
        text
    }

    /// Whether both documents passed the number guard.
    ///
    /// Exists as the command's success criterion.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.guard_markdown.passed() && self.guard_html.passed()
    }
}

/// Names of the figure files a report may write; stale ones from an earlier report into the
/// same directory are removed so the directory matches `stats.json`.
const FIGURE_PREFIXES: [&str; 9] = [
    "passk",
    "cost",
    "spectrum_",
    "heatmap_",
    "scorers_",
    "scaffolding",
    "joint",
    "forest",
    "degradation",
];

fn clear_stale_figures(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let ours = FIGURE_PREFIXES.iter().any(|p| name.starts_with(p))
            && (name.ends_with(".svg") || name.ends_with(".png"));
        if ours {
            std::fs::remove_file(entry.path()).map_err(io(format!(
                "removing stale figure {}",
                entry.path().display()
            )))?;
        }
    }
    Ok(())
}

fn drawn(figs: &[Written]) -> Vec<Drawn<'_>> {
    figs.iter()
        .map(|w| Drawn {
            caption: &w.info.title,
            svg: &w.info.svg,
            png: &w.info.png,
            rendered: &w.rendered,
        })
        .collect()
}

/// The `stats.json` fields `report --json` prints (those present).
const SUMMARY_FIELDS: [&str; 8] = [
    "kind",
    "settings",
    "episodes",
    "episodes_a",
    "episodes_b",
    "pooled",
    "level_shortfalls",
    "comparison",
];

/// [`write_stats`], then [`write_documents`].
#[cfg(test)]
fn finish<S: Serialize>(
    out: &Path,
    stats: &S,
    title: &str,
    blocks: &[doc::Block],
    figs: &[Written],
) -> Result<ReportOutput> {
    let (stats_json, summary_json) = write_stats(out, stats)?;
    write_documents(out, &stats_json, title, blocks, figs, summary_json)
}

/// Writes `stats` to `out/stats.json`; returns its path and the summary `report --json`
/// prints ([`SUMMARY_FIELDS`]).
fn write_stats<S: Serialize>(out: &Path, stats: &S) -> Result<(PathBuf, serde_json::Value)> {
    // Printed streamed from the structs, byte for byte as their value tree (keys sorted, as
    // stats.json has always been written) would print: neither the tree nor the text is held
    // (at 1 000 seeds the text is 23 MB, the tree several times that). The guard reads the file.
    let stats_json = out.join("stats.json");
    benchaudit_runs::write_atomic_with(&stats_json, |w| -> Result<()> {
        json::to_writer_sorted_pretty(w, stats).map_err(error::json("serialising stats.json"))?;
        w.write_all(b"\n")
            .map_err(io(format!("writing {}", stats_json.display())))
    })?;
    let summary_json = serde_json::Value::from(
        json::fields_to_values(stats, &SUMMARY_FIELDS)
            .map_err(error::json("serialising the summary of stats.json"))?,
    );
    Ok((stats_json, summary_json))
}

/// Renders both documents, guards them against the file `stats_json`, and writes them and
/// guard.json to `out`.
fn write_documents(
    out: &Path,
    stats_json: &Path,
    title: &str,
    blocks: &[doc::Block],
    figs: &[Written],
    summary_json: serde_json::Value,
) -> Result<ReportOutput> {
    let summary = pooled_summary(blocks);
    let markdown = doc::markdown(blocks);
    let guard_markdown = guard::check_against_file(&markdown, stats_json)
        .map_err(json("guarding report.md against stats.json"))?;
    write_atomic(&out.join("report.md"), markdown.as_bytes())?;
    drop(markdown);
    // The guard reads the page as a reader sees it, which drops the inline figures: they are
    // left out of its copy (their line breaks kept), and copied into report.html from their
    // files as the page is written.
    let page = doc::html_for_guard(title, blocks)
        .map_err(io("rendering report.html for the number guard".to_string()))?;
    let guard_html = guard::check_html_against_file(&page, stats_json)
        .map_err(json("guarding report.html against stats.json"))?;
    drop(page);
    let report_html = out.join("report.html");
    benchaudit_runs::write_atomic_with(&report_html, |w| -> Result<()> {
        doc::write_html(w, title, blocks).map_err(io(format!("writing {}", report_html.display())))
    })?;
    let guard_json = serde_json::json!({ "report.md": guard_markdown, "report.html": guard_html });
    let guard_text =
        serde_json::to_string_pretty(&guard_json).map_err(error::json("serialising guard.json"))?;
    write_atomic(&out.join("guard.json"), (guard_text + "\n").as_bytes())?;
    let mut files: Vec<String> = ["stats.json", "report.md", "report.html", "guard.json"]
        .map(str::to_string)
        .to_vec();
    for f in figs {
        files.push(f.info.svg.clone());
        files.push(f.info.png.clone());
    }
    Ok(ReportOutput {
        out: out.to_path_buf(),
        files,
        guard_markdown,
        guard_html,
        summary,
        summary_json,
        notes: Vec::new(),
    })
}

/// Says so when a run is still being written or holds fewer episodes than its plan.
fn incomplete_note(source: &model::Source) -> Option<String> {
    let planned = source.planned.filter(|&p| p > source.recorded);
    match (source.being_written, planned) {
        (false, None) => None,
        (true, _) => Some(format!(
            "{} is still being written by another benchaudit process: this report shows what is recorded so far (episodes recorded: {}{})",
            source.run_dir,
            source.recorded,
            planned.map_or(String::new(), |p| format!(" of {p} planned"))
        )),
        (false, Some(p)) => Some(format!(
            "{} is incomplete: {} of {p} planned episodes are recorded (the command that started it resumes it)",
            source.run_dir, source.recorded
        )),
    }
}

fn prepare(out: &Path) -> Result<()> {
    benchaudit_runs::outdir::claim(out, benchaudit_runs::outdir::DirKind::Report)
        .map_err(Error::Invalid)?;
    std::fs::create_dir_all(out.join(FIGURE_DIR))
        .map_err(io(format!("creating {}", out.display())))?;
    clear_stale_figures(&out.join(FIGURE_DIR))
}

/// The metric a report uses when none is chosen: [`benchaudit_runs::Metric::default_for_levels`]
/// over the levels the runs recorded — the same function `benchaudit ab` chooses its metric by,
/// so `report` on an `ab` run directory reads the metric `ab` tested (coverage at L0/L1, F1 at
/// L2; F1 for a run that includes L2, the one metric every level records).
#[must_use]
pub fn default_metric(runs: &[&Loaded]) -> model::Metric {
    let levels: std::collections::BTreeSet<benchaudit_agents::Level> = runs
        .iter()
        .flat_map(|l| l.groups.iter().map(|g| g.level))
        .collect();
    model::Metric::default_for_levels(&levels.into_iter().collect::<Vec<_>>())
}

/// Writes the report of one run directory into `out`.
///
/// Exists as the whole of `benchaudit report RUN_DIR` minus argument parsing and printing.
///
/// # Errors
/// [`Error::Invalid`] for an unreadable run or bad settings; IO or drawing errors otherwise.
pub fn write_run_report(run_dir: &Path, out: &Path, opts: &Options) -> Result<ReportOutput> {
    write_loaded_report(load_run(run_dir)?, out, opts)
}

/// [`write_run_report`] on a run already loaded (e.g. to choose the metric from it first). The
/// episodes are dropped once the statistics are computed.
///
/// # Errors
/// As [`write_run_report`].
pub fn write_loaded_report(loaded: Loaded, out: &Path, opts: &Options) -> Result<ReportOutput> {
    let mut notes = loaded.notes.clone();
    if let Some(note) = incomplete_note(&loaded.source) {
        notes.push(note);
    }
    if loaded.source.torn_last_line {
        notes.push(format!(
            "{}/episodes.jsonl ends in a torn line (an interrupted write); it was skipped",
            Path::new(&loaded.source.run_dir).display()
        ));
    }
    let mut stats = compute::run_stats(loaded, opts)?;
    prepare(out)?;
    let figs = plots::run_figures(&stats, out)?;
    stats.figures = figs.iter().map(|f| f.info.clone()).collect();
    let (stats_json, summary_json) = write_stats(out, &stats)?;
    let title = format!("benchaudit report: {}", stats.source.run_dir);
    let blocks = render::run_blocks(&stats, &drawn(&figs));
    // The documents hold what they say; the statistics (every seed's value, every k) are in
    // the file the guard reads.
    drop(stats);
    let mut written = write_documents(out, &stats_json, &title, &blocks, &figs, summary_json)?;
    written.notes = notes;
    Ok(written)
}

/// Writes the paired comparison of runs `a` and `b` (Δ = B − A) into `out`.
///
/// Exists as the whole of `benchaudit report --compare RUN_A RUN_B` minus parsing and printing.
///
/// # Errors
/// [`Error::Invalid`] for unreadable runs or nothing to pair; IO or drawing errors otherwise.
pub fn write_compare_report(
    a: &Path,
    b: &Path,
    out: &Path,
    opts: &Options,
) -> Result<ReportOutput> {
    write_loaded_compare(&load_run(a)?, &load_run(b)?, out, opts)
}

/// [`write_compare_report`] on runs already loaded.
///
/// # Errors
/// As [`write_compare_report`].
pub fn write_loaded_compare(
    la: &Loaded,
    lb: &Loaded,
    out: &Path,
    opts: &Options,
) -> Result<ReportOutput> {
    let mut stats = compute::compare_stats(la, lb, opts)?;
    prepare(out)?;
    let figs = plots::compare_figures(&stats, out)?;
    stats.figures = figs.iter().map(|f| f.info.clone()).collect();
    let (stats_json, summary_json) = write_stats(out, &stats)?;
    let blocks = render::compare_blocks(&stats, &drawn(&figs));
    let title = format!(
        "benchaudit comparison: {} vs {}",
        stats.source_a.run_dir, stats.source_b.run_dir
    );
    drop(stats);
    let mut written = write_documents(out, &stats_json, &title, &blocks, &figs, summary_json)?;
    written.notes = la.notes.iter().chain(&lb.notes).cloned().collect();
    Ok(written)
}

/// The first table of a report (the pooled one), as Markdown, for the terminal.
fn pooled_summary(blocks: &[doc::Block]) -> String {
    blocks
        .iter()
        .find(|b| matches!(b, doc::Block::Table { .. }))
        .map(|t| doc::plain_markdown(std::slice::from_ref(t)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use doc::Block;

    #[test]
    fn a_report_stating_a_number_absent_from_the_json_fails_the_guard() {
        let dir = tempfile::tempdir().unwrap();
        let stats = serde_json::json!({ "mean": 0.887, "n": 60 });
        let honest = vec![Block::Paragraph("mean 0.887 over n = 60".into())];
        let written = finish(dir.path(), &stats, "t", &honest, &[]).unwrap();
        assert!(written.passed(), "{}", written.guard_markdown);
        let invented = vec![Block::Paragraph("mean 0.887 over n = 60, solved 59".into())];
        let written = finish(dir.path(), &stats, "t", &invented, &[]).unwrap();
        assert!(!written.passed());
        assert_eq!(written.guard_markdown.violations[0].number.text, "59");
        assert_eq!(written.guard_html.violations[0].number.text, "59");
        // The files are still written (for inspection), with the verdict in guard.json.
        let guard: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("guard.json")).unwrap())
                .unwrap();
        assert_eq!(guard["report.md"]["violations"][0]["number"]["text"], "59");
        assert!(
            std::fs::read_to_string(dir.path().join("report.md"))
                .unwrap()
                .contains("solved 59")
        );
    }

    #[test]
    fn stale_figures_are_removed_and_other_files_kept() {
        let dir = tempfile::tempdir().unwrap();
        let figures = dir.path().join(FIGURE_DIR);
        std::fs::create_dir_all(&figures).unwrap();
        for f in ["spectrum_L0.png", "joint.svg", "notes.txt", "my_plot.png"] {
            std::fs::write(figures.join(f), "x").unwrap();
        }
        // An earlier report's folder (a stranger's folder is refused: `runs::outdir`).
        std::fs::write(dir.path().join("stats.json"), "{}").unwrap();
        prepare(dir.path()).unwrap();
        assert!(!figures.join("spectrum_L0.png").exists() && !figures.join("joint.svg").exists());
        assert!(figures.join("notes.txt").exists() && figures.join("my_plot.png").exists());
    }
}
