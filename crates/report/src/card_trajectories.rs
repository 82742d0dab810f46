//! The card section of an agent-benchmark target audited through forged runs (τ², AgentDojo):
//! the cards per group and for the benchmark, the forgery and component tables, per group the
//! do-nothing floor, the pass rate of every forgery on every component, the tasks where a
//! lower-quality forgery passes, what could not be built, and the ownership measured by
//! intervention beside the declared map. Every figure is tagged with its path in audit.json.

use std::path::Path;

use benchaudit_audit::Card;
use benchaudit_audit::battery::Quality;
use benchaudit_audit::trajectories::table::{Benchmark, Forgery, quality};
use benchaudit_audit::trajectories::verdict::GroupResult;
use benchaudit_audit::trajectories::{TrajectoriesAudit, Unit, label};

use crate::card::{rate, status_md as cell, table};
use crate::doc::{Block, FigureBlock, tagged};
use crate::error::Result;
use crate::figures::{self, ProbeBarsData};
use crate::plots::FIGURE_DIR;

/// How many unit ids a list names before it says how many more there are.
const LISTED: usize = 12;

/// Unit ids as the card writes them ([`label`]), the first [`LISTED`] of them (the count
/// stands beside every list; audit.json has them all).
fn ids(list: &[String]) -> String {
    let mut shown: Vec<String> = list.iter().take(LISTED).map(|id| label(id)).collect();
    if list.len() > LISTED {
        shown.push("…".into());
    }
    shown.join(", ")
}

/// The paper's reading of τ-bench (§5.4, A.9, A.13), compared with the measured cards.
fn against_paper(a: &TrajectoriesAudit, at: &str) -> Option<String> {
    if a.config.benchmark != Benchmark::Tau2 {
        return None;
    }
    let card = a.benchmark_card()?;
    let p = a.paper?;
    let pa = format!("{at}/paper");
    let mut s = format!(
        "The paper audited τ-bench, τ²'s predecessor: a wrong answer string and a corrupted write both scored 0 (an outcome scorer), an empty trajectory passed {} of its {} retail tasks, and one model's reward moved by up to {} across the {} shipped scaffolds (measured with paid models), so ownership failed and the card licensed model–scaffold system performance. Measured here on τ², key-free: criterion sensitivity **{}**, ownership **{}**, replay **{}**, so the lattice licenses **{}**.",
        tagged(p.retail_do_nothing, &format!("{pa}/retail_do_nothing")),
        tagged(p.retail_tasks, &format!("{pa}/retail_tasks")),
        tagged(
            format!("{:.3}", p.scaffold_spread),
            &format!("{pa}/scaffold_spread")
        ),
        tagged(p.scaffolds, &format!("{pa}/scaffolds")),
        card.criterion_sensitivity.status.label(),
        card.ownership.status.label(),
        card.replay.status.label(),
        card.licensed_claim.label()
    );
    let floors: Vec<String> = a
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.floor.played > 0)
        .map(|(gi, g)| {
            let f = format!("{at}/groups/{gi}/floor");
            format!(
                "{} {} of {}",
                g.name,
                tagged(g.floor.passed, &format!("{f}/passed")),
                tagged(g.floor.played, &format!("{f}/played"))
            )
        })
        .collect();
    if !floors.is_empty() {
        s.push_str(&format!(
            " The do-nothing floor (tasks an agent that does nothing passes): {}.",
            floors.join(", ")
        ));
    }
    Some(s)
}

/// The blocks of one trajectory audit (the `ti`-th in audit.json), figures into `fig_dir`.
pub fn blocks(a: &TrajectoriesAudit, ti: usize, fig_dir: &Path, slug: &str) -> Result<Vec<Block>> {
    let at = format!("/trajectories/{ti}");
    let b_json = &a.benchmark;
    let package = b_json["package"].as_str().unwrap_or("?");
    let version = b_json["version"].as_str().unwrap_or("?");
    let evaluator = b_json["evaluator"].as_str().unwrap_or("?");
    let noun = a.config.benchmark.group_noun();
    let sample = match a.config.sample {
        Some(n) => format!(
            "a seeded sample of {} tasks per {noun} (seed {}; {})",
            tagged(n, &format!("{at}/config/sample")),
            tagged(a.config.seed, &format!("{at}/config/seed")),
            a.sample_rule
        ),
        None => format!("every task of each {noun}"),
    };
    let mut b = vec![
        Block::Heading(2, a.target.clone()),
        Block::Paragraph(format!(
            "Forged runs played through the released {package} v{version} with no model call: {}, and `{evaluator}` scores the run. Probed: {sample}. The forged trajectories are in `forged/{slug}.jsonl`, one run a line, for scoring by another scorer.",
            a.config.benchmark.how_played()
        )),
    ];
    if let Some(run) = &a.battery {
        b.push(crate::card::battery_block(run));
    }
    if !a.failures.is_empty() {
        b.push(Block::List(
            a.failures
                .iter()
                .map(|f| format!("not probed: {f}"))
                .collect(),
        ));
    }
    if let Some(p) = against_paper(a, &at) {
        b.push(Block::Paragraph(p));
    }
    let mut head = vec![String::new()];
    head.extend(a.cards.iter().map(|c| c.target.clone()));
    let row = |name: &str, f: &dyn Fn(&Card) -> String| {
        let mut r = vec![name.to_string()];
        r.extend(a.cards.iter().map(f));
        r
    };
    b.push(table(
        head,
        vec![
            row("criterion sensitivity", &|c| cell(&c.criterion_sensitivity)),
            row("ownership completeness", &|c| cell(&c.ownership)),
            row("replay", &|c| cell(&c.replay)),
            row("**licensed claim**", &|c| {
                format!("**{}**", c.licensed_claim.label())
            }),
        ],
    ));

    b.push(Block::Heading(3, "The forgery table".into()));
    b.push(Block::Paragraph(
        "Each forgery's construction and what it takes away from the gold run. Its declared quality on a component of the score is **lower** where it takes away something that component judges, **equal** elsewhere; a criterion-valid evaluator passes gold and fails every lower-quality forgery of the same task, and may score an equal one either way.".into(),
    ));
    b.push(table(
        vec![
            "forgery".into(),
            "how it is built".into(),
            "takes away".into(),
            "built where".into(),
        ],
        a.table
            .iter()
            .map(|r| {
                vec![
                    r.forgery.name().into(),
                    r.construction.into(),
                    r.takes_away.into(),
                    r.built_where.into(),
                ]
            })
            .collect(),
    ));
    let mut comp_rows: Vec<Vec<String>> = a
        .components
        .iter()
        .map(|c| {
            vec![
                c.name.into(),
                c.judges
                    .iter()
                    .map(|j| j.label())
                    .collect::<Vec<_>>()
                    .join(", "),
                if c.headline { "yes" } else { "" }.into(),
                c.meaning.into(),
            ]
        })
        .collect();
    for n in &a.not_probed {
        comp_rows.push(vec![
            n.name.into(),
            "-".into(),
            String::new(),
            format!("**not probed**: {}", n.why),
        ]);
    }
    b.push(table(
        vec![
            "component".into(),
            "judges".into(),
            "headline".into(),
            "what it is".into(),
        ],
        comp_rows,
    ));

    for (gi, g) in a.groups.iter().enumerate() {
        b.extend(group_blocks(a, gi, g, &at, fig_dir, slug)?);
    }
    b.extend(ownership_blocks(a, &at));
    b.extend(port_blocks(a, &at));
    b.extend(compare_blocks(a, &at, slug));
    Ok(b)
}

fn group_blocks(
    a: &TrajectoriesAudit,
    gi: usize,
    g: &GroupResult,
    at: &str,
    fig_dir: &Path,
    slug: &str,
) -> Result<Vec<Block>> {
    let ga = format!("{at}/groups/{gi}");
    let noun = a.config.benchmark.group_noun();
    let mut b = vec![Block::Heading(
        3,
        format!(
            "{noun} {} ({} of {} tasks)",
            g.name,
            tagged(g.units_probed, &format!("{ga}/units_probed")),
            tagged(g.units_total, &format!("{ga}/units_total"))
        ),
    )];
    if g.units_probed == 0 {
        b.push(Block::Paragraph(cell(&g.criterion)));
        return Ok(b);
    }
    let f = &g.floor;
    let fa = format!("{ga}/floor");
    b.push(Block::Paragraph(format!(
        "**Do-nothing floor**: `do_nothing` passes the {} on {} of {} tasks ({}){}; the table declares {} of them as asking nothing the {} checks (doing nothing is as good as gold there).",
        f.component,
        tagged(f.passed, &format!("{fa}/passed")),
        tagged(f.played, &format!("{fa}/played")),
        rate(f.rate, &format!("{fa}/rate")),
        if f.units.is_empty() {
            String::new()
        } else {
            format!(": {}", ids(&f.units))
        },
        tagged(f.asks_nothing, &format!("{fa}/asks_nothing")),
        f.component
    )));
    if g.gold_misses.is_empty() {
        b.push(Block::Paragraph(format!(
            "Gold passes the {} on every probed task.",
            f.component
        )));
    } else {
        b.push(Block::Paragraph(format!(
            "Gold does not pass the {} on these tasks:",
            f.component
        )));
        b.push(Block::List(
            g.gold_misses
                .iter()
                .map(|m| format!("{}: {}", label(&m.unit), m.why))
                .collect(),
        ));
    }
    // Pass rates: forgery × component.
    let mut header = vec!["forgery".to_string(), "built".to_string()];
    header.extend(g.components.iter().map(|c| c.name.clone()));
    let forgeries: &[Forgery] = &a.config.forgeries;
    let mut rows = Vec::new();
    for f in forgeries {
        let built = g.components.first().and_then(|c| {
            c.rates
                .iter()
                .position(|r| r.forgery == *f)
                .map(|ri| (c, ri))
        });
        let Some((c0, ri0)) = built else {
            continue;
        };
        let mut r = vec![
            f.name().to_string(),
            tagged(
                c0.rates[ri0].built,
                &format!("{ga}/components/0/rates/{ri0}/built"),
            ),
        ];
        for (ci, c) in g.components.iter().enumerate() {
            r.push(match c.rates.iter().position(|x| x.forgery == *f) {
                Some(ri) if c.rates[ri].scored > 0 => {
                    let p = format!("{ga}/components/{ci}/rates/{ri}");
                    format!(
                        "{} of {}",
                        tagged(c.rates[ri].passed, &format!("{p}/passed")),
                        tagged(c.rates[ri].scored, &format!("{p}/scored"))
                    )
                }
                _ => "-".into(),
            });
        }
        rows.push(r);
    }
    b.push(Block::Paragraph(
        "Pass rate of every forgery on every component: passed of the tasks it was built for where the evaluator scored that component (`-`: never scored: the evaluator checks nothing of that component on those tasks, or scores no component of such a run).".into(),
    ));
    b.push(table(header, rows));
    // Separation per component.
    let mut srows = Vec::new();
    for (ci, c) in g.components.iter().enumerate() {
        let s = &c.separation;
        let p = format!("{ga}/components/{ci}");
        srows.push(vec![
            if c.headline {
                format!("**{}**", c.name)
            } else {
                c.name.clone()
            },
            tagged(c.units_checked, &format!("{p}/units_checked")),
            format!(
                "{} of {}",
                tagged(
                    s.cells.separated,
                    &format!("{p}/separation/cells/separated")
                ),
                tagged(s.cells.compared, &format!("{p}/separation/cells/compared"))
            ),
            cell(&s.criterion),
        ]);
    }
    b.push(table(
        vec![
            "component".into(),
            "tasks checked".into(),
            "cells separated".into(),
            "criterion on this component".into(),
        ],
        srows,
    ));
    // Where lower-quality forgeries pass the headline.
    let head_ci = g.components.iter().position(|c| c.headline).unwrap_or(0);
    let mut passing = Vec::new();
    if let Some(c) = g.components.get(head_ci) {
        for r in &c.rates {
            if r.forgery == Forgery::Gold || r.passing.is_empty() {
                continue;
            }
            passing.push(format!("{}: {}", r.forgery.name(), ids(&r.passing)));
        }
        if !passing.is_empty() {
            b.push(Block::Paragraph(format!(
                "Tasks where a forgery other than gold passes the {} (lower or equal quality, per the table):",
                c.name
            )));
            b.push(Block::List(passing));
        }
    }
    if !g.not_built.is_empty() {
        b.push(Block::Paragraph(
            "Not built (not applicable), with the reason:".into(),
        ));
        b.push(Block::List(
            g.not_built
                .iter()
                .enumerate()
                .map(|(ni, n)| {
                    let reasons: Vec<String> = n
                        .reasons
                        .iter()
                        .enumerate()
                        .map(|(k, (why, count))| {
                            format!(
                                "{} ({})",
                                why,
                                tagged(count, &format!("{ga}/not_built/{ni}/reasons/{k}/1"))
                            )
                        })
                        .collect();
                    format!(
                        "{} on {} tasks: {}",
                        n.forgery.name(),
                        tagged(n.units, &format!("{ga}/not_built/{ni}/units")),
                        reasons.join("; ")
                    )
                })
                .collect(),
        ));
    }
    if g.errors > 0 {
        b.push(Block::Paragraph(format!(
            "The evaluator raised on {} runs (unscored, never separated).",
            tagged(g.errors, &format!("{ga}/errors"))
        )));
    }
    // Figure: the headline pass rate of each forgery beside the most a criterion-valid scorer
    // could pass (the share of its tasks where the table does not declare it lower).
    if let Some(c) = g.components.get(head_ci) {
        let component = &a.config.benchmark.components()[0];
        let mut kinds = Vec::new();
        let mut measured = Vec::new();
        let mut allowed = Vec::new();
        for r in c.rates.iter().filter(|r| r.scored > 0) {
            let built: Vec<&Unit> = units_of(a, g, r.forgery);
            let not_lower = built
                .iter()
                .filter(|u| quality(r.forgery, component, &u.facts()) != Some(Quality::Lower))
                .count();
            kinds.push(r.forgery.name().to_string());
            measured.push(r.rate.unwrap_or(0.0));
            allowed.push(if built.is_empty() {
                0.0
            } else {
                not_lower as f64 / built.len() as f64
            });
        }
        if !kinds.is_empty() {
            let data = ProbeBarsData {
                title: format!("{} evaluator probe: {}", a.target, g.name),
                kinds,
                judge: measured,
                truth: allowed,
                judge_label: format!("{} pass rate", c.name),
                truth_label: "share of its tasks where it is not lower than gold".into(),
                y_label: "rate".into(),
            };
            let name = format!("{slug}_{}", g.name);
            let rendered = figures::write(&data, fig_dir, &name)?;
            b.push(Block::Figure(FigureBlock {
                caption: format!(
                    "{}: the {} pass rate of each forgery beside the share of its tasks where the table does not declare it lower than gold (the most a criterion-valid evaluator passes).",
                    g.name, c.name
                ),
                svg: format!("{FIGURE_DIR}/{name}.svg"),
                png: format!("{FIGURE_DIR}/{name}.png"),
                inline_svg: rendered.inline(),
            }));
        }
    }
    Ok(b)
}

/// The probed units of a group a forgery was built for.
fn units_of<'a>(a: &TrajectoriesAudit, g: &'a GroupResult, f: Forgery) -> Vec<&'a Unit> {
    g.units
        .iter()
        .filter(|u| {
            a.runs
                .iter()
                .any(|r| r.group == g.name && r.unit == u.id && r.forgery == f && r.built)
        })
        .collect()
}

fn ownership_blocks(a: &TrajectoriesAudit, at: &str) -> Vec<Block> {
    let o = &a.ownership;
    let mut b = vec![Block::Heading(
        3,
        "Ownership measured by intervention".into(),
    )];
    if o.decisions.is_empty() {
        b.push(Block::Paragraph(cell(&o.cell)));
        return b;
    }
    b.push(Block::Paragraph(format!(
        "The shipped agent `{}`{} driven by scripted models: each variation changes one turn of an otherwise identical base run ({}; reward {}). Declared: who the benchmark's documentation says decides; measured: who decided when the variation was played.",
        o.agent.as_deref().unwrap_or("?"),
        o.user
            .as_deref()
            .map_or(String::new(), |u| format!(" and user simulator `{u}`, both")),
        o.base["group"].as_str().map_or("?".to_string(), |g| format!(
            "{g} {}",
            label(o.base["unit"].as_str().unwrap_or("?"))
        )),
        o.decisions
            .first()
            .and_then(|d| d.base_reward)
            .map_or("-".into(), |r| tagged(r, &format!("{at}/ownership/decisions/0/base_reward")))
    )));
    b.push(table(
        vec![
            "decision".into(),
            "variation".into(),
            "claimed".into(),
            "declared".into(),
            "measured".into(),
            "what the harness did".into(),
            "reward".into(),
        ],
        o.decisions
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let p = format!("{at}/ownership/decisions/{i}");
                vec![
                    d.decision.clone(),
                    d.variation.clone(),
                    if d.claimed { "yes" } else { "no" }.into(),
                    d.declared.label().into(),
                    if d.measured == d.declared {
                        d.measured.label().into()
                    } else {
                        format!("**{}**", d.measured.label())
                    },
                    format!(
                        "{}{}{}",
                        d.outcome.label(),
                        d.environment
                            .as_deref()
                            .map_or(String::new(), |e| format!("; environment {e}")),
                        d.detail
                            .as_deref()
                            .map_or(String::new(), |x| format!(" ({x})"))
                    ),
                    format!(
                        "{}{}",
                        d.reward.map_or("none (raised)".into(), |r| tagged(
                            r,
                            &format!("{p}/reward")
                        )),
                        if d.moved { ", moved" } else { "" }
                    ),
                ]
            })
            .collect(),
    ));
    let user: Vec<String> = o.user_owned().iter().map(|d| d.decision.clone()).collect();
    if !user.is_empty() {
        b.push(Block::Paragraph(format!(
            "Decisions the simulated user, not the agent, completes: {}.",
            user.join(", ")
        )));
    }
    b.push(Block::Paragraph(format!(
        "Ownership completeness: {}",
        cell(&o.cell)
    )));
    b
}

/// Port fidelity: the runs the original and its port scored differently. Absent when the
/// target declares no port.
fn port_blocks(a: &TrajectoriesAudit, at: &str) -> Vec<Block> {
    let Some(p) = &a.port else {
        return Vec::new();
    };
    let at = format!("{at}/port");
    let mut b = vec![Block::Heading(3, "Port fidelity".into())];
    if let Some(why) = &p.not_probed {
        b.push(Block::Paragraph(format!("**not probed**: {why}")));
        return b;
    }
    let package = p.port["package"].as_str().unwrap_or("?");
    let version = p.port["version"].as_str().unwrap_or("?");
    let noun = a.config.benchmark.group_noun();
    b.push(Block::Paragraph(format!(
        "The forged runs of {} task(s) per {noun} (the first by the replay rule), {} runs, scored again by {package} v{version}'s port of the benchmark: each run's messages played through the port's own task, tools and scorer by scripted models, the agent's turns and the user's where the benchmark simulates one (the port is given the messages; how the original's run ended is the original's). The port and the original agree on {}, disagree on {}; {} could not be scored by one side. A disagreement is a fact about the two scorers, not a verdict on either, and changes no cell above: a leaderboard that reports the port's number reports the port's scorer.",
        tagged(p.units, &format!("{at}/units")),
        tagged(p.runs, &format!("{at}/runs")),
        tagged(p.agree, &format!("{at}/agree")),
        tagged(p.disagree, &format!("{at}/disagree")),
        tagged(p.unscored, &format!("{at}/unscored")),
    )));
    let rows: Vec<Vec<String>> = p
        .results
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.agree)
        .map(|(i, r)| {
            let rp = format!("{at}/results/{i}");
            vec![
                r.group.clone(),
                label(&r.unit),
                r.forgery.name().into(),
                r.termination.clone().unwrap_or_else(|| "-".into()),
                rate(r.original, &format!("{rp}/original")),
                rate(r.port, &format!("{rp}/port")),
                r.error
                    .iter()
                    .chain(&r.notes)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        })
        .collect();
    if !rows.is_empty() {
        b.push(table(
            vec![
                noun.into(),
                "task".into(),
                "forgery".into(),
                "how the run ended".into(),
                "original".into(),
                "port".into(),
                "the port noticed".into(),
            ],
            rows,
        ));
    }
    b
}

/// `--model`: each model under the benchmark's shipped agent implementations.
fn compare_blocks(a: &TrajectoriesAudit, at: &str, slug: &str) -> Vec<Block> {
    let mut b = Vec::new();
    for (ci, c) in a.comparisons.iter().enumerate() {
        let at = format!("{at}/comparisons/{ci}");
        b.push(Block::Heading(
            3,
            format!("`{}` under each shipped agent implementation", c.model),
        ));
        if let Some(why) = &c.not_probed {
            b.push(Block::Paragraph(format!("**not probed**: {why}")));
            continue;
        }
        let note = c.user["note"]
            .as_str()
            .map_or(String::new(), |n| format!(" ({n})"));
        let user = match c.user["implementation"].as_str() {
            Some(u) => format!(
                "The user simulator is held fixed: `{u}` played by `{}`{note}",
                c.user["model"].as_str().unwrap_or("?")
            ),
            None => format!("There is no user simulator{note}"),
        };
        b.push(Block::Paragraph(format!(
            "The same model under each agent implementation the package registers, through the benchmark's own run loop and evaluator, on the first task(s) per {} by the replay rule, one run per seed ({} seed(s); trials are seeds). {user}. Every model request and response is in `compare/{slug}.jsonl`.",
            a.config.benchmark.group_noun(),
            tagged(c.seeds, &format!("{at}/seeds")),
        )));
        b.push(table(
            vec![
                "agent implementation".into(),
                "applies to".into(),
                "runs scored".into(),
                "not applicable".into(),
                "unscored".into(),
                "mean reward".into(),
            ],
            c.scaffolds
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let p = format!("{at}/scaffolds/{i}");
                    vec![
                        format!("`{}`", s.name),
                        s.applies_to.clone(),
                        tagged(s.scored, &format!("{p}/scored")),
                        tagged(s.not_applicable, &format!("{p}/not_applicable")),
                        tagged(s.unscored, &format!("{p}/unscored")),
                        rate(s.mean, &format!("{p}/mean")),
                    ]
                })
                .collect(),
        ));
        let spread = c.spread.as_ref().map_or_else(
            || "no spread: fewer than two implementations have a scored run".to_string(),
            |s| {
                let value = tagged(format!("{:.3}", s.value), &format!("{at}/spread/value"));
                if s.value == 0.0 {
                    format!("spread of the means {value} (every implementation's mean is the same)")
                } else {
                    format!(
                        "spread of the means {value} (`{}` highest, `{}` lowest)",
                        s.highest, s.lowest
                    )
                }
            },
        );
        let eta = c.eta.as_ref().map_or_else(
            || c.eta_note.clone().unwrap_or_default(),
            |e| {
                format!(
                    "η² over {} runs{}: scaffold {}, task {}, interaction {}, residual {}",
                    tagged(e.n, &format!("{at}/eta/n")),
                    if e.balanced { "" } else { " (unbalanced)" },
                    tagged(format!("{:.3}", e.scaffold), &format!("{at}/eta/scaffold")),
                    tagged(format!("{:.3}", e.task), &format!("{at}/eta/task")),
                    tagged(
                        format!("{:.3}", e.interaction),
                        &format!("{at}/eta/interaction")
                    ),
                    tagged(format!("{:.3}", e.residual), &format!("{at}/eta/residual")),
                )
            },
        );
        b.push(Block::Paragraph(format!("{spread}; {eta}.")));
        if !c.tasks.is_empty() {
            b.push(table(
                vec![
                    a.config.benchmark.group_noun().into(),
                    "task".into(),
                    "agent implementation".into(),
                    "seeds".into(),
                    "mean".into(),
                    "worst".into(),
                    "CVaR".into(),
                    "pass^k".into(),
                ],
                c.tasks
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let p = format!("{at}/tasks/{i}");
                        vec![
                            t.group.clone(),
                            label(&t.unit),
                            format!("`{}`", t.scaffold),
                            tagged(t.trials.seeds, &format!("{p}/seeds")),
                            rate(Some(t.trials.mean), &format!("{p}/mean")),
                            rate(Some(t.trials.worst), &format!("{p}/worst")),
                            rate(Some(t.trials.cvar), &format!("{p}/cvar")),
                            rate(Some(t.trials.pass_hat_k), &format!("{p}/pass_hat_k")),
                        ]
                    })
                    .collect(),
            ));
        }
    }
    b
}
