//! The validity card rendered: `card.md`, `report.html` and the figures from the audit's data,
//! `card.json` and `audit.json` beside them, and the number guard run on both documents.

use std::path::Path;

use benchaudit_audit::comtrade_target::short_id;
use benchaudit_audit::guard::{self, GuardReport};
use benchaudit_audit::joint::Joint;
use benchaudit_audit::pipeline::decision_names;
use benchaudit_audit::probes::ProbeKind;
use benchaudit_audit::{
    AuditReport, Card, ComtradeAudit, Configuration, Owner, Suite, solvability,
};
use benchaudit_runs::write_atomic;
use serde_json::json;

use crate::doc::{Align, Block, FigureBlock, html, markdown, tagged};
use crate::error::{Result, io, json as json_err};
use crate::figures::{
    self, ProbeBarsData, ScaffoldingData, SpectrumData, SpectrumRow, num_or_no_data,
};
use crate::plots::FIGURE_DIR;

/// The files an audit wrote and whether its documents passed the number guard.
#[derive(Debug)]
pub struct CardOutput {
    /// Guard result on card.md.
    pub guard_markdown: GuardReport,
    /// Guard result on report.html.
    pub guard_html: GuardReport,
}

impl CardOutput {
    /// Whether both documents passed the number guard.
    #[must_use]
    pub fn passed(&self) -> bool {
        self.guard_markdown.passed() && self.guard_html.passed()
    }
}

/// Writes `audit.json`, `card.json`, `card.md`, `report.html` and `figures/` into `out` and
/// checks both documents against `audit.json`.
///
/// # Errors
/// A figure that cannot be drawn, or a file that cannot be written.
pub fn write_audit(report: &AuditReport, out: &Path) -> Result<CardOutput> {
    benchaudit_runs::outdir::claim(out, benchaudit_runs::outdir::DirKind::Audit)
        .map_err(crate::Error::Invalid)?;
    let cards = report.cards();
    std::fs::create_dir_all(out.join(FIGURE_DIR))
        .map_err(io(format!("creating {}", out.display())))?;
    let doc = report.document();
    let blocks = blocks(report, &cards, out)?;
    let md = markdown(&blocks);
    let page = html("BenchAudit validity card", &blocks);
    let pretty = |v: &serde_json::Value, what: &str| {
        serde_json::to_string_pretty(v).map_err(json_err(format!("serialising {what}")))
    };
    write_atomic(
        &out.join("audit.json"),
        pretty(&doc, "audit.json")?.as_bytes(),
    )?;
    write_atomic(
        &out.join("card.json"),
        pretty(&json!({ "cards": cards }), "card.json")?.as_bytes(),
    )?;
    write_atomic(&out.join("card.md"), md.as_bytes())?;
    write_atomic(&out.join("report.html"), page.as_bytes())?;
    Ok(CardOutput {
        guard_markdown: guard::check(&md, &doc),
        guard_html: guard::check_html(&page, &doc),
    })
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

pub(crate) fn status_md(c: &benchaudit_audit::Cell) -> String {
    format!("**{}**: {}", c.status.label(), c.evidence)
}

/// A table whose columns are left-aligned (cells mix words and numbers).
pub(crate) fn table(header: Vec<String>, rows: Vec<Vec<String>>) -> Block {
    Block::Table {
        align: vec![Align::Left; header.len()],
        header,
        rows,
    }
}

/// A figure written under `figures/`.
fn figure(caption: String, name: &str, rendered: figures::Rendered) -> Block {
    Block::Figure(FigureBlock {
        caption,
        svg: format!("{FIGURE_DIR}/{name}.svg"),
        png: format!("{FIGURE_DIR}/{name}.png"),
        inline_svg: rendered.svg,
    })
}

/// The blocks of the card document (card.md and report.html), figures drawn into
/// `out/figures`.
fn blocks(report: &AuditReport, cards: &[Card], out: &Path) -> Result<Vec<Block>> {
    let a = &report.comtrade;
    let suite = &report.suite;
    let fig_dir = out.join(FIGURE_DIR);
    let mut b = vec![
        Block::Heading(1, "BenchAudit validity card".into()),
        Block::Paragraph(format!(
            "Key-free self-audit of ComtradeBench: {} players (the oracle and rule stand-ins that each get one decision wrong), seeds 0 to {} per cell. Every number below is in audit.json.",
            a.players.len(),
            a.seeds.last().copied().unwrap_or(0)
        )),
        Block::Heading(2, "Cards".into()),
    ];
    let mut head = vec![String::new()];
    head.extend(cards.iter().map(|c| c.target.clone()));
    let row = |name: &str, f: &dyn Fn(&Card) -> String| {
        let mut r = vec![name.to_string()];
        r.extend(cards.iter().map(f));
        r
    };
    let mut rows = vec![
        row("scorer kind", &|c| {
            let kind = format!("{:?}", c.scorer_kind).to_lowercase();
            match &c.scorer_kind_override {
                Some(o) => format!(
                    "{kind} (declared {}, overridden: {})",
                    format!("{:?}", o.declared).to_lowercase(),
                    o.reason
                ),
                None => kind,
            }
        }),
        row("criterion sensitivity", &|c| {
            status_md(&c.criterion_sensitivity)
        }),
        row("ownership completeness", &|c| status_md(&c.ownership)),
    ];
    // Non-degeneracy per player, on its own episodes (L1 beside the scored level): evidence
    // next to the ownership cell, one row per (level, player) any card judges.
    let mut judged: Vec<(String, String)> = Vec::new();
    for c in cards {
        for v in &c.non_degeneracy {
            let k = (v.level.clone(), v.player.clone());
            if !judged.contains(&k) {
                judged.push(k);
            }
        }
    }
    // Levels in order (L0, L1, L2), players in audit order within a level.
    judged.sort_by(|a, b| a.0.cmp(&b.0));
    for (level, player) in &judged {
        rows.push(row(&format!("non-degeneracy at {level}: {player}"), &|c| {
            c.non_degeneracy
                .iter()
                .find(|v| &v.level == level && &v.player == player)
                .map_or("-".into(), |v| status_md(&v.verdict))
        }));
    }
    rows.push(row("replay", &|c| status_md(&c.replay)));
    rows.push(row("**licensed claim**", &|c| match &c.claim_scope {
        Some(scope) => format!("**{}** {}", c.licensed_claim.label(), scope.label()),
        None => format!("**{}**", c.licensed_claim.label()),
    }));
    rows.push(row("what would raise the claim", &|c| {
        c.to_raise_the_claim
            .clone()
            .unwrap_or_else(|| "nothing: the strongest claim".into())
    }));
    // Evidence beside the lattice (C.6): not an input to the licensed claim.
    rows.push(row("interface confound (not in the lattice)", &|c| {
        c.interface.as_ref().map_or_else(|| "-".into(), status_md)
    }));
    b.push(table(head, rows));
    b.push(Block::Heading(2, "Oracle checks".into()));
    b.push(table(
        vec![
            "check".into(),
            "expected".into(),
            "observed".into(),
            "verdict".into(),
        ],
        a.checks
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    c.expected.clone(),
                    c.observed.clone(),
                    if c.pass {
                        "pass".into()
                    } else {
                        "**FAIL**".into()
                    },
                ]
            })
            .collect(),
    ));

    // Judge probe.
    let probe_task = suite.judge_check.task;
    b.push(Block::Heading(2, format!("Judge probe ({probe_task})")));
    // With the JSON path of each probe in audit.json, for the number guard's tags.
    let (shipped, shipped_paths): (Vec<_>, Vec<String>) = a
        .probes
        .iter()
        .enumerate()
        .find(|(_, (c, _))| *c == Configuration::AsShipped)
        .map(|(ci, (_, p))| {
            p.iter()
                .enumerate()
                .filter(|(_, p)| p.task == probe_task)
                .map(|(pi, p)| (p, format!("/comtrade/probes/{ci}/1/{pi}")))
                .unzip()
        })
        .unwrap_or_default();
    b.push(table(
        vec![
            "forged submission".into(),
            "legacy judge".into(),
            "ground-truth F1".into(),
        ],
        shipped
            .iter()
            .zip(&shipped_paths)
            .map(|(p, at)| {
                vec![
                    p.kind.name().into(),
                    p.target_score
                        .map_or("-".into(), |x| tagged(f3(x), &format!("{at}/target_score"))),
                    tagged(f3(p.ground_truth), &format!("{at}/ground_truth")),
                ]
            })
            .collect(),
    ));
    let bars = ProbeBarsData {
        title: format!("Judge probe on {probe_task}"),
        kinds: shipped.iter().map(|p| p.kind.name().to_string()).collect(),
        judge: shipped
            .iter()
            .map(|p| p.target_score.unwrap_or(0.0))
            .collect(),
        truth: shipped.iter().map(|p| p.ground_truth).collect(),
        judge_label: "legacy judge (0–1)".into(),
        truth_label: "ground-truth F1".into(),
        y_label: "score".into(),
    };
    let r = figures::write(&bars, &fig_dir, "judge_probe")?;
    b.push(figure("Judge probe: the judge scores the fabricated set like the truth; ground truth separates them.".into(), "judge_probe", r));
    debug_assert!(shipped.iter().any(|p| p.kind == ProbeKind::Correct));

    // 2×2.
    if let Some(j) = &a.joint {
        b.extend(joint_blocks(j, &fig_dir)?);
    }
    b.extend(ownership_blocks(a, cards));
    b.extend(reliability_blocks(a, suite, &fig_dir)?);
    b.extend(solvability_blocks(a));
    for c in &report.calls {
        b.extend(crate::card_calls::blocks(&c.audit, &fig_dir, &c.slug)?);
    }
    for (i, a) in report.answers.iter().enumerate() {
        b.extend(crate::card_answers::blocks(&a.audit, &fig_dir, &a.slug, i)?);
    }
    Ok(b)
}

/// The 2×2: its paragraph, table and panel.
fn joint_blocks(j: &Joint, fig_dir: &Path) -> Result<Vec<Block>> {
    let mut b = vec![Block::Heading(
        2,
        format!("The 2×2 joint intervention ({})", j.tasks.join(", ")),
    )];
    let cells = [
        ("L0 × judge", j.spread.l0_judge),
        ("L0 × ground truth", j.spread.l0_truth),
        ("L2 × judge", j.spread.l2_judge),
        ("L2 × ground truth", j.spread.l2_truth),
    ];
    let spread: Vec<String> = cells
        .iter()
        .map(|(c, v)| format!("{c} {}", num_or_no_data(*v)))
        .collect();
    b.push(Block::Paragraph(format!(
        "L0 payloads identical for {} of {} player pairs. Spread over players (max − min): {}.",
        j.l0_identical,
        j.l0_pairs,
        spread.join(", ")
    )));
    b.push(table(
        vec![
            "player".into(),
            "L0 × judge".into(),
            "L0 × ground truth".into(),
            "L2 × judge".into(),
            "L2 × ground truth".into(),
        ],
        j.rows
            .iter()
            .map(|r| {
                vec![
                    r.player.clone(),
                    num_or_no_data(r.l0_judge),
                    num_or_no_data(r.l0_truth),
                    num_or_no_data(r.l2_judge),
                    num_or_no_data(r.l2_truth),
                ]
            })
            .collect(),
    ));
    let panel = crate::plots::joint_panel(
        j,
        format!("2×2 joint intervention on {}", j.tasks.join(", ")),
        "legacy judge (0–1)",
        "mean over seeds per player",
    );
    let r = figures::write(&panel, fig_dir, "joint_2x2")?;
    b.push(figure(
        "The 2×2: only the L2 × ground-truth cell separates the players.".into(),
        "joint_2x2",
        r,
    ));
    Ok(b)
}

/// Declared vs measured ownership, the channels' calibration and each judged player's own
/// channels.
fn ownership_blocks(a: &ComtradeAudit, cards: &[Card]) -> Vec<Block> {
    let mut b = vec![Block::Heading(2, "Declared vs measured ownership".into())];
    let owner = |o: Option<Owner>| o.map_or("-".into(), |o| format!("{o:?}").to_lowercase());
    let mut rows = Vec::new();
    for d in decision_names() {
        let mut r = vec![d.to_string()];
        for level in ["L0", "L1", "L2"] {
            let c = a
                .ownership
                .iter()
                .find(|c| c.decision == d && c.level == level);
            r.push(c.map_or("-".into(), |c| {
                format!(
                    "{} / {} ({} of {} differ)",
                    owner(c.declared),
                    owner(Some(c.measured)),
                    c.differed,
                    c.compared
                )
            }));
        }
        rows.push(r);
    }
    b.push(table(
        vec![
            "decision".into(),
            "L0 declared / measured".into(),
            "L1".into(),
            "L2".into(),
        ],
        rows,
    ));
    // Both channel tables end in E[Y | deviant], E[Y | not] and the verdict.
    let channel_row = |mut leading: Vec<String>, c: &benchaudit_audit::ownership::Channel| {
        let verdict = if c.non_degenerate { "yes" } else { "no" };
        leading.extend([num_or_no_data(c.mean_y.0), num_or_no_data(c.mean_y.1)]);
        leading.push(verdict.to_string());
        leading
    };
    let mut rows = Vec::new();
    for (level, chans) in &a.calibration {
        for c in chans {
            let deviant = format!("{} of {}", c.deviant, c.episodes);
            rows.push(channel_row(
                vec![level.clone(), c.decision.clone(), deviant],
                c,
            ));
        }
    }
    b.push(Block::Paragraph("Calibration of each decision channel: the oracle's episodes beside those of the stand-ins built to deviate on exactly that decision (A = the deviant action; Y = ground-truth F1). It shows that a deviation would move the score (the ownership cell's input); it says nothing about whether any one player's choices vary.".into()));
    b.push(table(
        vec![
            "level".into(),
            "decision".into(),
            "deviant".into(),
            "E[Y | deviant]".into(),
            "E[Y | not]".into(),
            "outcome-sensitive".into(),
        ],
        rows,
    ));
    let mut judged: Vec<&str> = Vec::new();
    for v in cards.iter().flat_map(|c| &c.non_degeneracy) {
        if !judged.contains(&v.player.as_str()) {
            judged.push(&v.player);
        }
    }
    let mut rows = Vec::new();
    for pc in a
        .channels
        .iter()
        .filter(|c| judged.contains(&c.player.as_str()))
    {
        for c in &pc.channels {
            let action = benchaudit_audit::ownership::deviant_action(&c.decision);
            let deviant = format!("{action} chosen {} of {}", c.deviant, c.episodes);
            let leading = vec![
                pc.player.clone(),
                pc.level.clone(),
                c.decision.clone(),
                deviant,
            ];
            rows.push(channel_row(leading, c));
        }
    }
    b.push(Block::Paragraph("Non-degeneracy per player, on that player's own episodes only (Var(A) > 0 and E[Y | deviant] ≠ E[Y | not]): the oracle, the rule target's player, and every model; never the stand-ins built to deviate.".into()));
    b.push(table(
        vec![
            "player".into(),
            "level".into(),
            "decision".into(),
            "deviant".into(),
            "E[Y | deviant]".into(),
            "E[Y | not]".into(),
            "non-degenerate".into(),
        ],
        rows,
    ));
    b
}

/// The reliability table and the scaffolding and reliability spectra.
fn reliability_blocks(a: &ComtradeAudit, suite: &Suite, fig_dir: &Path) -> Result<Vec<Block>> {
    // The tasks the spectrum pools: the execution tasks the solvability stage finds solvable
    // within the output budget; the scale-bound ones are named as excluded.
    let pooled: Vec<&str> = suite
        .execution_tasks
        .iter()
        .filter(|t| a.solvable_tasks.iter().any(|s| s == *t))
        .map(|t| short_id(t))
        .collect();
    let excluded: Vec<&str> = suite
        .execution_tasks
        .iter()
        .filter(|t| !a.solvable_tasks.iter().any(|s| s == *t))
        .map(|t| short_id(t))
        .collect();
    let tasks = if excluded.is_empty() {
        pooled.join(", ")
    } else {
        format!(
            "{}; {} excluded: scale-bound",
            pooled.join(", "),
            excluded.join(", ")
        )
    };
    let mut b = vec![Block::Heading(
        2,
        format!("Reliability by scaffolding level (ground-truth F1 pooled over {tasks})"),
    )];
    b.push(table(
        vec![
            "player".into(),
            "level".into(),
            "n".into(),
            "mean".into(),
            "worst".into(),
            "CVaR@0.2".into(),
            "Reliability@0.9".into(),
            "95% CI (seeds resampled within each task)".into(),
        ],
        a.reliability
            .iter()
            .map(|r| {
                let s = &r.summary;
                let rel = s
                    .reliability
                    .iter()
                    .find(|x| (x.tau - 0.9).abs() < 1e-12)
                    .map_or("-".into(), |x| f3(x.fraction));
                let ci = format!("[{}, {}]", f3(s.mean_ci.lo), f3(s.mean_ci.hi));
                let mut row = vec![r.player.clone(), r.level.clone(), s.n.to_string()];
                row.extend([s.mean, s.worst, s.cvar].map(f3));
                row.extend([rel, ci]);
                row
            })
            .collect(),
    ));
    let players = &a.players;
    let value = |p: &str, l: &str| {
        a.reliability
            .iter()
            .find(|r| r.player == p && r.level == l)
            .map(|r| r.summary.mean)
    };
    let scaff = ScaffoldingData {
        title: format!("Scaffolding spectrum: mean ground-truth F1 on {tasks}"),
        models: players.clone(),
        levels: vec!["L0".into(), "L1".into(), "L2".into()],
        values: players
            .iter()
            .map(|p| ["L0", "L1", "L2"].iter().map(|l| value(p, l)).collect())
            .collect(),
        y_label: "mean ground-truth F1".into(),
        note: Some("L0 ties every player; L2 separates them".into()),
    };
    let r = figures::write(&scaff, fig_dir, "scaffolding_spectrum")?;
    b.push(figure(
        "Scaffolding spectrum.".into(),
        "scaffolding_spectrum",
        r,
    ));
    let rows: Vec<SpectrumRow> = a
        .reliability
        .iter()
        .filter(|r| r.level == "L2")
        .map(|r| {
            let s = &r.summary;
            SpectrumRow {
                label: r.player.clone(),
                n: s.n,
                worst: s.worst,
                q1: r.five.q1,
                median: r.five.median,
                q3: r.five.q3,
                max: r.five.max,
                mean: s.mean,
                cvar: s.cvar,
            }
        })
        .collect();
    let spec = SpectrumData {
        title: format!("L2 reliability spectrum (ground-truth F1, {tasks})"),
        x_label: "ground-truth F1".into(),
        alpha: 0.2,
        rows,
    };
    let r = figures::write(&spec, fig_dir, "reliability_spectrum")?;
    b.push(figure(
        "Reliability spectrum at L2: box = IQR, whiskers = min–max, dot = mean, tick = CVaR@0.2."
            .into(),
        "reliability_spectrum",
        r,
    ));
    Ok(b)
}

/// Oracle solvability and the re-emission bounds.
fn solvability_blocks(a: &ComtradeAudit) -> Vec<Block> {
    let mut b = vec![Block::Heading(2, "Solvability".into())];
    b.push(Block::Paragraph(format!(
        "Oracle at L2 within each task's budget, and the L2 re-emission demand counted with the {} tokenizer against output budgets of {} and {} tokens (F1 caps; ids = the ids protocol; chunked = rows spread over the step limit's responses).",
        solvability::TOKENIZER,
        solvability::BUDGETS[0],
        solvability::BUDGETS[1]
    )));
    b.push(table(
        vec![
            "task".into(),
            "oracle solved".into(),
            "max requests / budget".into(),
            "tokens per row".into(),
            "F1 cap full".into(),
            "F1 cap ids".into(),
            "F1 cap chunked".into(),
            "scale-bound".into(),
        ],
        a.oracle
            .iter()
            .zip(&a.re_emission)
            .map(|(o, r)| {
                let caps = |v: &[(u64, f64, f64)]| {
                    v.iter().map(|c| f3(c.2)).collect::<Vec<_>>().join(" / ")
                };
                vec![
                    o.task.clone(),
                    format!("{} of {}", o.solved, o.seeds),
                    format!("{} / {}", o.max_requests, o.budget),
                    format!("{:.1}", r.tokens_per_row),
                    caps(&r.full),
                    caps(&r.ids),
                    caps(&r.chunked),
                    if r.scale_bound {
                        "**yes**".into()
                    } else {
                        "no".into()
                    },
                ]
            })
            .collect(),
    ));
    b
}
