//! The validity card rendered: `card.md`, `report.html` and the figures from the audit's data,
//! `card.json` and `audit.json` beside them, and the number guard run on both documents.

use std::path::Path;

use benchaudit_audit::comtrade_target::short_id;
use benchaudit_audit::guard::{self, GuardReport};
use benchaudit_audit::joint::Joint;
use benchaudit_audit::pipeline::decision_names;
use benchaudit_audit::probes::ProbeKind;
use benchaudit_audit::{
    AuditReport, Card, Claim, ComtradeAudit, Configuration, Owner, Status, Suite, solvability,
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
    let page = html("BenchAudit validity card", &blocks)
        .map_err(io("rendering report.html".to_string()))?;
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
    write_forged(report, out)?;
    write_atomic(&out.join("report.html"), page.as_bytes())?;
    Ok(CardOutput {
        guard_markdown: guard::check(&md, &doc),
        guard_html: guard::check_html(&page, &doc),
    })
}

/// `forged/<slug>.jsonl`: every forged run of each trajectory target, one JSON object a line
/// (group, unit, forgery, termination, scores, trajectory), so the same run can be scored by
/// another scorer.
fn write_forged(report: &AuditReport, out: &Path) -> Result<()> {
    if report.trajectories.is_empty() {
        return Ok(());
    }
    let dir = out.join("forged");
    std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
    for t in &report.trajectories {
        let mut text = String::new();
        for r in t.audit.runs.iter().filter(|r| r.built) {
            let line = json!({
                "target": t.audit.target,
                "group": r.group,
                "unit": r.unit,
                "forgery": r.forgery,
                "termination": r.termination,
                "scores": r.scores,
                "error": r.error,
                "trajectory": r.trajectory,
            });
            text.push_str(&line.to_string());
            text.push('\n');
        }
        write_atomic(&dir.join(format!("{}.jsonl", t.slug)), text.as_bytes())?;
    }
    write_compared(report, out)
}

/// `compare/<slug>.jsonl`: every run of `--model`'s comparison on each trajectory target, with
/// every model request and response it made, one run a line, so each reward on the card traces
/// back to what the model was asked and answered.
fn write_compared(report: &AuditReport, out: &Path) -> Result<()> {
    let compared: Vec<_> = (report.trajectories.iter())
        .filter(|t| t.audit.comparisons.iter().any(|c| !c.runs.is_empty()))
        .collect();
    if compared.is_empty() {
        return Ok(());
    }
    let dir = out.join("compare");
    std::fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
    for t in compared {
        let mut text = String::new();
        for c in &t.audit.comparisons {
            for (r, requests) in c.runs.iter().zip(&c.requests) {
                let line = json!({
                    "target": t.audit.target,
                    "model": c.model,
                    "run": r,
                    "requests": requests,
                });
                text.push_str(&line.to_string());
                text.push('\n');
            }
        }
        write_atomic(&dir.join(format!("{}.jsonl", t.slug)), text.as_bytes())?;
    }
    Ok(())
}

/// A rate or score to three decimals, tagged with its JSON path; `-` when there is none.
pub(crate) fn rate(x: Option<f64>, at: &str) -> String {
    x.map_or("-".into(), |x| tagged(format!("{x:.3}"), at))
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
        inline_svg: rendered.inline(),
    })
}

/// What a per-player channel row says where the harness, not the player, owns the decision.
const HARNESS_OWNED: &str = "not probed (harness-owned)";

/// The seeds of every cell in words: "seeds 0 to 4", "seed 2", "seeds 3, 7".
fn seeds_label(seeds: &[u64]) -> String {
    match seeds {
        [] => "seed 0".into(),
        [one] => format!("seed {one}"),
        [first, .., last] if seeds.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("seeds {first} to {last}")
        }
        _ => {
            let all: Vec<String> = seeds.iter().map(u64::to_string).collect();
            format!("seeds {}", all.join(", "))
        }
    }
}

/// The paragraph under the title: every target the report holds (so a target added to the
/// audit is named), then who played ComtradeBench and on which seeds.
fn intro(report: &AuditReport) -> String {
    let a = &report.comtrade;
    let targets = report.targets();
    let models: Vec<&str> = a
        .players
        .iter()
        .map(String::as_str)
        .filter(|p| p.parse::<benchaudit_agents::RuleKind>().is_err())
        .collect();
    let who = if models.is_empty() {
        "the oracle and rule stand-ins that each get one decision wrong".to_string()
    } else {
        format!(
            "the oracle, rule stand-ins that each get one decision wrong, and {}",
            models.join(", ")
        )
    };
    let key = if models.is_empty() {
        " No model is called, so the audit needs no key."
    } else {
        ""
    };
    format!(
        "{} audited: {}. ComtradeBench is benchaudit's own implementation of the benchmark (a self-audit), played by {} players ({who}), {} per cell.{key} Every number below is in audit.json.",
        if targets.len() == 1 {
            "Target"
        } else {
            "Targets"
        },
        targets.join(", "),
        a.players.len(),
        seeds_label(&a.seeds),
    )
}

/// "How to read this card": each term of the card's rows, defined where a reader meets it.
fn how_to_read() -> Block {
    Block::List(vec![
        "**Cards.** One column per target configuration; each row is a check with its verdict (pass, fail or not probed) and the evidence behind it.".into(),
        "**Criterion sensitivity.** Does the scorer fall when the work is worse? Forged submissions of known ground-truth quality (the truth, a fabricated set, an empty set, duplicates kept, …) are scored. The row passes when j(correct) > j(x) + ε for every forgery x of lower quality, where j is the scorer and ε its resolution (the smallest score difference it expresses); a tie or an inversion fails it. The scorer kind is outcome when it passes and shape when well-formed but wrong work scores like the truth.".into(),
        "**Ownership, declared vs measured.** The scaffold declares who makes each decision (retry or skip a fault, dedup, drop totals rows, pagination, submission) at each level: the model or the harness. The audit measures it by intervention: it swaps the oracle for the stand-in wrong on exactly that decision and compares their submitted payloads; if nothing changes, the harness made the decision, whatever the declaration says. Ownership completeness passes when the model owns every decision the benchmark claims to measure and each one moves ground-truth F1 in calibration.".into(),
        "**Non-degeneracy.** A decision tells something about a player only if the player varies it, Var(A) > 0 (A: the deviant action was taken), and the outcome differs between the two choices, E[Y | deviant] ≠ E[Y | not] (Y: ground-truth F1). It is judged per player, on that player's own episodes, and only for decisions the player owns at that level.".into(),
        "**Replay.** Playing the same task, seed, player and options again gives the same record, byte for byte outside timing; a model is replayed from its recorded provider responses, never asked twice.".into(),
        "**The lattice.** From criterion sensitivity, ownership completeness and replay the card licenses at most one claim, strongest first: model capability (all pass), model–scaffold system performance (ownership fails), specification compliance (the scorer checks a specification; ownership not probed), self-report compliance (the scorer checks only the submission's shape and its self-report), or none. A claim may hold on some tasks only: a scale-bound task cannot be solved within the output budget by re-emitting its records, so it is excluded.".into(),
        "**Not probed.** The audit could not test the condition: a target's hook is missing or failed, or there is nothing to measure (the harness owns every decision at that level). Not probed never counts as a pass and never licenses a claim.".into(),
        "**Rows beside the lattice.** The per-player non-degeneracy rows and the interface-confound row are evidence next to the three cells the lattice reads, never inputs to it; where one fails beside a claim, the note under the table says why the claim stands.".into(),
    ])
}

/// Why a fail in a row beside the lattice leaves a card's licensed claim standing, for the
/// rows that fail next to a claim.
fn beside_the_lattice(cards: &[Card]) -> Option<Block> {
    let claimed = |c: &&Card| c.licensed_claim != Claim::None;
    let degenerate = cards.iter().filter(claimed).any(|c| {
        c.non_degeneracy
            .iter()
            .any(|v| v.verdict.status == Status::Fail)
    });
    let confounded = cards.iter().filter(claimed).any(|c| {
        c.interface
            .as_ref()
            .is_some_and(|i| i.status == Status::Fail)
    });
    if !degenerate && !confounded {
        return None;
    }
    let mut items = Vec::new();
    if degenerate {
        items.push("**A non-degeneracy row that fails** judges one player's own choices, not what the score measures. The oracle is deterministic and right on every decision, so it never varies a choice and its rows fail by construction; no single reference policy can show variation, so counting its rows would turn the model-capability claim of every key-free audit, of any benchmark, into model–scaffold system performance. The ownership cell rests instead on calibration: a stand-in that deviates on each decision moves ground-truth F1. For a model added with `--model`, its own row says whether its choices varied and mattered in these episodes: read it beside the claim.".to_string());
    }
    if confounded {
        items.push("**An interface-confound row that fails** names a defect of the tool interface the configuration ships with: a rejected call answers `retry: true` though repeating it can never succeed, so an agent that trusts the flag loses the episode (the `strict` interface answers `retry: false`). It is not a fact about the scorer or about who owns a decision, so the claim stands; but a model's low score under this interface may be the interface's.".to_string());
    }
    Some(Block::List(items))
}

/// Whether the harness, as measured, owns `decision` at `level`.
fn harness_owns(a: &ComtradeAudit, level: &str, decision: &str) -> bool {
    a.ownership
        .iter()
        .any(|c| c.level == level && c.decision == decision && c.measured == Owner::Harness)
}

/// Where the reliability table shows the oracle below 1 at a level the harness owns: whose
/// score that is. The harness's decisions (at L0, every one) are the same for every player,
/// so what they lose shows in every player's mean, the oracle's included.
fn harness_scores_note(a: &ComtradeAudit) -> Option<String> {
    const ORACLE: &str = "oracle";
    let mean = |level: &str| {
        a.reliability
            .iter()
            .find(|r| r.player == ORACLE && r.level == level)
            .map(|r| r.summary.mean)
    };
    let l0 = mean("L0")?;
    if l0 >= 1.0 - 1e-12 {
        return None;
    }
    let chans = a
        .channels
        .iter()
        .find(|c| c.player == ORACLE && c.level == "L0")?;
    let causes: Vec<String> = chans
        .channels
        .iter()
        .filter(|c| c.deviant > 0 && harness_owns(a, "L0", &c.decision))
        .map(|c| {
            let what = if c.decision == "pagination" {
                "its pagination reads each page once and does not re-fetch a page that drifted between reads, so it collects an incomplete set".to_string()
            } else {
                format!(
                    "its {} decision takes the deviant action ({})",
                    c.decision,
                    benchaudit_audit::ownership::deviant_action(&c.decision)
                )
            };
            format!(
                "{what} in {} of the oracle's {} L0 episodes (mean ground-truth F1 {} in them)",
                c.deviant,
                c.episodes,
                num_or_no_data(c.mean_y.0)
            )
        })
        .collect();
    if causes.is_empty() {
        return None;
    }
    let shared = a
        .reliability
        .iter()
        .filter(|r| r.level == "L0")
        .all(|r| (r.summary.mean - l0).abs() < 1e-12);
    // L1 leaves only the retry decision to the player: the harness's other decisions, and
    // what they lose, are the same there.
    let also_l1 = mean("L1").is_some_and(|m| (m - l0).abs() < 1e-12)
        && chans
            .channels
            .iter()
            .filter(|c| c.deviant > 0)
            .all(|c| !harness_owns(a, "L0", &c.decision) || harness_owns(a, "L1", &c.decision));
    let l2 = mean("L2").map_or(String::new(), |m| {
        format!(
            " At L2, where the oracle makes these decisions itself, its mean is {}.",
            f3(m)
        )
    });
    Some(format!(
        "The oracle's mean at L0{} is {} and not a perfect score because the harness decides there: {}. That score is the harness's, not the oracle's{}.{l2}",
        if also_l1 { " and L1" } else { "" },
        f3(l0),
        causes.join("; "),
        if shared {
            ", and at L0 every player shares it"
        } else {
            ""
        },
    ))
}

/// The blocks of the card document (card.md and report.html), figures drawn into
/// `out/figures`.
fn blocks(report: &AuditReport, cards: &[Card], out: &Path) -> Result<Vec<Block>> {
    let a = &report.comtrade;
    let suite = &report.suite;
    let fig_dir = out.join(FIGURE_DIR);
    let mut b = vec![
        Block::Heading(1, "BenchAudit validity card".into()),
        Block::Paragraph(intro(report)),
        Block::Heading(2, "How to read this card".into()),
        how_to_read(),
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
    if let Some(why) = beside_the_lattice(cards) {
        b.push(why);
    }
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
    for (ti, t) in report.trajectories.iter().enumerate() {
        b.extend(crate::card_trajectories::blocks(
            &t.audit, ti, &fig_dir, &t.slug,
        )?);
    }
    for e in &report.external {
        if let Some(run) = &e.battery {
            b.push(Block::Heading(2, e.card.target.clone()));
            b.push(battery_block(run));
        }
    }
    Ok(b)
}

/// What a battery given as data (`--battery`) ran, beside the family's cells.
pub(crate) fn battery_block(run: &benchaudit_audit::proposed::BatteryRun) -> Block {
    let list = |v: &[String]| {
        v.iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = format!(
        "Battery given as data: {}, run as a step of its own (`--battery`): the forgeries {} and the anchor, nothing else.",
        run.source(),
        list(&run.run)
    );
    if !run.left_out.is_empty() {
        s.push_str(&format!(
            " Left out: {}; a partial battery can fail a scorer but not pass it, so a criterion pass reads not probed.",
            list(&run.left_out)
        ));
    }
    if !run.described.is_empty() {
        s.push_str(&format!(
            " Described only, not run (no forgery of the family builds them): {}.",
            list(&run.described)
        ));
    }
    Block::Paragraph(s)
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
            let leading = |deviant: String| {
                vec![
                    pc.player.clone(),
                    pc.level.clone(),
                    c.decision.clone(),
                    deviant,
                ]
            };
            if harness_owns(a, &pc.level, &c.decision) {
                // What the harness did is not the player's choice: no verdict on the player.
                let mut row = leading(format!(
                    "{action} by the harness in {} of {}",
                    c.deviant, c.episodes
                ));
                row.extend([num_or_no_data(c.mean_y.0), num_or_no_data(c.mean_y.1)]);
                row.push(HARNESS_OWNED.into());
                rows.push(row);
            } else {
                let deviant = format!("{action} chosen {} of {}", c.deviant, c.episodes);
                rows.push(channel_row(leading(deviant), c));
            }
        }
    }
    b.push(Block::Paragraph(format!("Non-degeneracy per player, on that player's own episodes only (Var(A) > 0 and E[Y | deviant] ≠ E[Y | not]): the oracle, the rule target's player, and every model; never the stand-ins built to deviate. Where the harness owns a decision at a level (as measured above), its rows show what the harness did, which is not the player's choice: they read \"{HARNESS_OWNED}\".")));
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
    if let Some(note) = harness_scores_note(a) {
        b.push(Block::Paragraph(note));
    }
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
