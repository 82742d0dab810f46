//! `benchaudit audit`: the main job. The key-free self-audit of ComtradeBench (as shipped and
//! repaired), plus any external targets: card.md, card.json, audit.json, report.html and the
//! figures; a short summary on stdout; exit 1 when an oracle check or the number guard fails.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use benchaudit_audit::calls;
use benchaudit_audit::external::{ExternalTarget, ProbeFamily};
use benchaudit_audit::pipeline::ComtradeAudit;
use benchaudit_audit::probes::ProbeKind;
use benchaudit_audit::{
    AuditConfig, Card, ComtradeTarget, Configuration, Owner, Player, audit_comtrade, audit_external,
};
use clap::Args;
use serde_json::{Value, json};

use crate::UsageError;
use crate::commands::run::{Agent, ModelArgs};
use crate::figures::{
    self, JointPanelData, JointSeries, ProbeBarsData, ScaffoldingData, SpectrumData, SpectrumRow,
};
use crate::ledger::write_atomic;
use crate::output::print;
use crate::report::doc::{Align, Block, FigureBlock, html, markdown};

/// `benchaudit audit`
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Output directory.
    #[arg(long, default_value = "benchaudit-audit")]
    pub out: PathBuf,
    /// Seeds per cell (seeds 0..N−1).
    #[arg(long, default_value_t = 5)]
    pub seeds: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
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

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn status_md(c: &benchaudit_audit::Cell) -> String {
    format!("**{}**: {}", c.status.label(), c.evidence)
}

/// The probe values the checks quote, on the judge's 100-point scale.
fn judge_points(a: &ComtradeAudit) -> Value {
    let mut out = serde_json::Map::new();
    if let Some((_, probes)) = a
        .probes
        .iter()
        .find(|(c, _)| *c == Configuration::AsShipped)
    {
        for p in probes.iter().filter(|p| p.task == "T2_multi_page") {
            if let Some(s) = p.target_score {
                out.insert(p.kind.name().into(), json!((s * 1000.0).round() / 10.0));
            }
        }
    }
    Value::Object(out)
}

/// Runs the subcommand.
pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    if args.seeds == 0 || args.seeds > 1000 {
        return Err(UsageError("--seeds must be between 1 and 1000".into()).into());
    }
    let mut config = AuditConfig::key_free(args.seeds, args.jobs.max(1));
    for agent in Agent::models(&args.models)? {
        let name = agent.name();
        config.players.push(Player {
            name,
            make: Box::new(move || agent.policy()),
        });
    }
    let targets = [
        ComtradeTarget::new(Configuration::AsShipped),
        ComtradeTarget::new(Configuration::Repaired),
    ];
    let audit =
        audit_comtrade(&config, &targets).map_err(|e| anyhow::anyhow!("audit failed: {e}"))?;
    let mut external = Vec::new();
    let mut resolutions: Vec<Value> = targets
        .iter()
        .map(|t| json!({"target": benchaudit_audit::Target::name(t), "epsilon": benchaudit_audit::Target::resolution(t)}))
        .collect();
    let mut calls_audits = Vec::new();
    for arg in &args.targets {
        let path = resolve_target(arg)?;
        let target = ExternalTarget::load(&path).map_err(UsageError)?;
        resolutions.push(json!({"target": benchaudit_audit::Target::name(&target), "epsilon": benchaudit_audit::Target::resolution(&target)}));
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
            calls_audits.push((
                slug,
                calls::audit(&benchaudit_audit::Target::name(&target), &target, &config),
            ));
            continue;
        }
        external.push(
            audit_external(&target, 0)
                .map_err(|e| anyhow::anyhow!("auditing {}: {e}", path.display()))?,
        );
    }
    let mut cards: Vec<Card> = audit.cards.clone();
    cards.extend(external.iter().map(|e| e.card.clone()));
    for (_, c) in &calls_audits {
        cards.extend(c.group_cards().iter().cloned());
    }
    std::fs::create_dir_all(args.out.join("figures"))
        .with_context(|| format!("creating {}", args.out.display()))?;

    let doc = json!({
        "tool": "benchaudit",
        "version": env!("CARGO_PKG_VERSION"),
        "comtrade": audit,
        "judge_points_t2": judge_points(&audit),
        "resolutions": resolutions,
        "external": external,
        "calls": calls_audits.iter().map(|(_, c)| c).collect::<Vec<_>>(),
        "cards": cards,
    });
    let mut blocks = report_blocks(&audit, &cards, &args.out)?;
    for (slug, c) in &calls_audits {
        blocks.extend(crate::commands::calls_card::blocks(
            c,
            &args.out.join("figures"),
            slug,
        )?);
    }
    let md = markdown(&blocks);
    let page = html("BenchAudit validity card", &blocks);
    write_atomic(
        &args.out.join("audit.json"),
        serde_json::to_string_pretty(&doc)?.as_bytes(),
    )?;
    write_atomic(
        &args.out.join("card.json"),
        serde_json::to_string_pretty(&json!({"cards": cards}))?.as_bytes(),
    )?;
    write_atomic(&args.out.join("card.md"), md.as_bytes())?;
    write_atomic(&args.out.join("report.html"), page.as_bytes())?;
    let guard_md = benchaudit_audit::guard::check(&md, &doc);
    let guard_html = benchaudit_audit::guard::check_html(&page, &doc);

    let mut out = String::new();
    for c in &cards {
        out.push_str(&format!(
            "{}\n  criterion sensitivity: {}\n  ownership:             {}\n  replay:                {}\n  licensed claim:        {}\n",
            c.target,
            c.criterion_sensitivity.status.label(),
            c.ownership.status.label(),
            c.replay.status.label(),
            c.licensed_claim.label()
        ));
    }
    let passed = audit.checks.iter().filter(|c| c.pass).count();
    out.push_str(&format!(
        "oracle checks: {passed}/{} pass\n",
        audit.checks.len()
    ));
    for c in audit.checks.iter().filter(|c| !c.pass) {
        out.push_str(&format!(
            "  FAILED {}: expected {}, observed {}\n",
            c.name, c.expected, c.observed
        ));
    }
    out.push_str(&format!(
        "number guard: card.md {} ({} numbers), report.html {} ({} numbers)\n",
        if guard_md.passed() { "pass" } else { "FAIL" },
        guard_md.checked,
        if guard_html.passed() { "pass" } else { "FAIL" },
        guard_html.checked
    ));
    for v in guard_md.violations.iter().chain(&guard_html.violations) {
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
    let ok = passed == audit.checks.len() && guard_md.passed() && guard_html.passed();
    Ok(if ok {
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
    let cwd = std::env::current_dir().context("reading the current folder")?;
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

/// A table whose columns are left-aligned (cells mix words and numbers).
fn table(header: Vec<String>, rows: Vec<Vec<String>>) -> Block {
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
        svg: format!("figures/{name}.svg"),
        png: format!("figures/{name}.png"),
        inline_svg: rendered.svg,
    })
}

fn report_blocks(
    a: &ComtradeAudit,
    cards: &[Card],
    out: &std::path::Path,
) -> anyhow::Result<Vec<Block>> {
    let fig_dir = out.join("figures");
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
    b.push(table(
        head,
        vec![
            row("scorer kind", &|c| {
                format!("{:?}", c.scorer_kind).to_lowercase()
            }),
            row("criterion sensitivity", &|c| {
                status_md(&c.criterion_sensitivity)
            }),
            row("ownership completeness", &|c| status_md(&c.ownership)),
            row("replay", &|c| status_md(&c.replay)),
            row("**licensed claim**", &|c| {
                format!("**{}**", c.licensed_claim.label())
            }),
        ],
    ));
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
    b.push(Block::Heading(2, "Judge probe (T2_multi_page)".into()));
    let shipped: Vec<_> = a
        .probes
        .iter()
        .find(|(c, _)| *c == Configuration::AsShipped)
        .map(|(_, p)| p.iter().filter(|p| p.task == "T2_multi_page").collect())
        .unwrap_or_default();
    b.push(table(
        vec![
            "forged submission".into(),
            "legacy judge".into(),
            "ground-truth F1".into(),
        ],
        shipped
            .iter()
            .map(|p| {
                vec![
                    p.kind.name().into(),
                    p.target_score.map_or("-".into(), f3),
                    f3(p.ground_truth),
                ]
            })
            .collect(),
    ));
    let bars = ProbeBarsData {
        title: "Judge probe on T2_multi_page".into(),
        kinds: shipped.iter().map(|p| p.kind.name().to_string()).collect(),
        judge: shipped
            .iter()
            .map(|p| p.target_score.unwrap_or(0.0))
            .collect(),
        truth: shipped.iter().map(|p| p.ground_truth).collect(),
        judge_label: "legacy judge / 100".into(),
        truth_label: "ground-truth F1".into(),
        y_label: "score".into(),
    };
    let r = figures::judge_probe_bars(&bars, &fig_dir, "judge_probe")?;
    b.push(figure("Judge probe: the judge scores the fabricated set like the truth; ground truth separates them.".into(), "judge_probe", r));
    debug_assert!(shipped.iter().any(|p| p.kind == ProbeKind::Correct));

    // 2×2.
    let j = &a.joint;
    b.push(Block::Heading(
        2,
        format!("The 2×2 joint intervention ({})", j.task),
    ));
    b.push(Block::Paragraph(format!(
        "L0 payloads identical for {} of {} player pairs. Spread over players (max − min): L0 × judge {}, L0 × ground truth {}, L2 × judge {}, L2 × ground truth {}.",
        j.l0_identical,
        j.l0_pairs,
        f3(j.spread[0]),
        f3(j.spread[1]),
        f3(j.spread[2]),
        f3(j.spread[3])
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
                    f3(r.l0_judge),
                    f3(r.l0_truth),
                    f3(r.l2_judge),
                    f3(r.l2_truth),
                ]
            })
            .collect(),
    ));
    let panel = JointPanelData {
        title: format!("2×2 joint intervention on {}", j.task),
        row_labels: ["harness L0".into(), "harness L2".into()],
        col_labels: ["legacy judge / 100".into(), "ground-truth F1".into()],
        note: "mean over seeds per player".into(),
        models: j
            .rows
            .iter()
            .map(|r| JointSeries {
                label: r.player.clone(),
                values: [
                    [Some(r.l0_judge), Some(r.l0_truth)],
                    [Some(r.l2_judge), Some(r.l2_truth)],
                ],
            })
            .collect(),
    };
    let r = figures::joint_panel(&panel, &fig_dir, "joint_2x2")?;
    b.push(figure(
        "The 2×2: only the L2 × ground-truth cell separates the players.".into(),
        "joint_2x2",
        r,
    ));

    // Ownership.
    b.push(Block::Heading(2, "Declared vs measured ownership".into()));
    let owner = |o: Option<Owner>| o.map_or("-".into(), |o| format!("{o:?}").to_lowercase());
    let mut rows = Vec::new();
    for d in benchaudit_audit::pipeline::decision_names() {
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
    let mut rows = Vec::new();
    for (level, chans) in &a.channels {
        for c in chans {
            rows.push(vec![
                level.clone(),
                c.decision.clone(),
                format!("{} of {}", c.deviant, c.episodes),
                c.mean_y.0.map_or("-".into(), f3),
                c.mean_y.1.map_or("-".into(), f3),
                if c.non_degenerate {
                    "yes".into()
                } else {
                    "no".into()
                },
            ]);
        }
    }
    b.push(Block::Paragraph("Non-degeneracy of each decision channel over the players' episodes (A = the deviant action; Y = ground-truth F1).".into()));
    b.push(table(
        vec![
            "level".into(),
            "decision".into(),
            "deviant".into(),
            "E[Y | deviant]".into(),
            "E[Y | not]".into(),
            "non-degenerate".into(),
        ],
        rows,
    ));

    // Reliability and scaffolding spectra.
    b.push(Block::Heading(2, "Reliability by scaffolding level".into()));
    b.push(table(
        vec![
            "player".into(),
            "level".into(),
            "n".into(),
            "mean".into(),
            "worst".into(),
            "CVaR@0.2".into(),
            "Reliability@0.9".into(),
            "95% CI".into(),
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
                vec![
                    r.player.clone(),
                    r.level.clone(),
                    s.n.to_string(),
                    f3(s.mean),
                    f3(s.worst),
                    f3(s.cvar),
                    rel,
                    format!("[{}, {}]", f3(s.mean_ci.lo), f3(s.mean_ci.hi)),
                ]
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
        title: "Scaffolding spectrum: mean ground-truth F1 on T3–T8".into(),
        models: players.clone(),
        levels: vec!["L0".into(), "L1".into(), "L2".into()],
        values: players
            .iter()
            .map(|p| ["L0", "L1", "L2"].iter().map(|l| value(p, l)).collect())
            .collect(),
        y_label: "mean ground-truth F1".into(),
        note: Some("L0 ties every player; L2 separates them".into()),
    };
    let r = figures::scaffolding_spectrum(&scaff, &fig_dir, "scaffolding_spectrum")?;
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
                q1: r.q1,
                median: r.median,
                q3: r.q3,
                max: r.max,
                mean: s.mean,
                cvar: s.cvar,
            }
        })
        .collect();
    let spec = SpectrumData {
        title: "L2 reliability spectrum (ground-truth F1, T3–T8)".into(),
        x_label: "ground-truth F1".into(),
        alpha: 0.2,
        rows,
    };
    let r = figures::reliability_spectrum(&spec, &fig_dir, "reliability_spectrum")?;
    b.push(figure(
        "Reliability spectrum at L2: box = IQR, whiskers = min–max, dot = mean, tick = CVaR@0.2."
            .into(),
        "reliability_spectrum",
        r,
    ));

    // Solvability.
    b.push(Block::Heading(2, "Solvability".into()));
    b.push(Block::Paragraph(format!(
        "Oracle at L2 within each task's budget, and the L2 re-emission demand counted with the {} tokenizer against output budgets of {} and {} tokens (F1 caps; ids = the ids protocol; chunked = rows spread over the step limit's responses).",
        benchaudit_audit::solvability::TOKENIZER,
        benchaudit_audit::solvability::BUDGETS[0],
        benchaudit_audit::solvability::BUDGETS[1]
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
    Ok(b)
}
