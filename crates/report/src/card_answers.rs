//! The card section of an answer target (an Inspect task): what ran, the card, the answer
//! format the anchor was written in, the forgery table, every scorer's pass rate per forgery
//! and one probe-bar figure per probed scorer. Every number comes from the [`AnswersAudit`]
//! written to audit.json at `/answers/{index}`; the main ones are tagged with their path.

use std::path::Path;

use benchaudit_audit::Status;
use benchaudit_audit::answers::AnswersAudit;
use benchaudit_audit::answers::forge::AnswerKind;
use benchaudit_audit::battery::Quality;

use crate::card::{rate, status_md as cell, table};
use crate::doc::{Block, FigureBlock, tagged};
use crate::error::Result;
use crate::figures::{self, ProbeBarsData};
use crate::plots::FIGURE_DIR;

/// The blocks of one answer audit (`index` is its place in audit.json's `answers`), writing
/// its figures to `fig_dir`.
pub fn blocks(a: &AnswersAudit, fig_dir: &Path, slug: &str, index: usize) -> Result<Vec<Block>> {
    let root = format!("/answers/{index}");
    let version = |name: &str| a.packages[name].as_str().unwrap_or("?").to_string();
    let mut b = vec![Block::Heading(2, a.target.clone())];
    let sample = match a.config.sample {
        Some(n) => format!(
            "a seeded sample of {} samples (seed {}; {})",
            tagged(n, &format!("{root}/config/sample")),
            tagged(a.config.seed, &format!("{root}/config/seed")),
            a.sample_rule
        ),
        None => "every sample".into(),
    };
    match &a.task {
        Some(t) => {
            let dataset = t.dataset["name"].as_str().unwrap_or("?");
            let local = t.dataset["local_file"]
                .as_str()
                .map(|f| format!(" (its records read from the local file `{f}` through the task's own record conversion)"))
                .unwrap_or_default();
            b.push(Block::Paragraph(format!(
                "Forged answers played through Inspect's own runtime (inspect_ai {}, inspect_evals {}) with no model call: Inspect's `mockllm/model` answers each sample's first generate call with the forged text and the task's own solver chain ({}) and scorers ({}) run unchanged. Dataset `{dataset}`{local}: {} of its {} samples probed, {sample}. A second process scores the same answers again for replay.",
                version("inspect_ai"),
                version("inspect_evals"),
                t.solver.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
                t.scorers.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
                tagged(a.samples_probed, &format!("{root}/samples_probed")),
                tagged(a.samples_total, &format!("{root}/samples_total")),
            )));
        }
        None => b.push(Block::Paragraph(
            "The task could not be described, so nothing was scored.".into(),
        )),
    }
    if let Some(run) = &a.battery {
        b.push(crate::card::battery_block(run));
    }
    if !a.failures.is_empty() {
        b.push(Block::List(a.failures.clone()));
    }
    let c = &a.card;
    b.push(table(
        vec![String::new(), a.target.clone()],
        vec![
            vec![
                "criterion sensitivity".into(),
                cell(&c.criterion_sensitivity),
            ],
            vec!["ownership completeness".into(), cell(&c.ownership)],
            vec!["replay".into(), cell(&c.replay)],
            vec![
                "**licensed claim**".into(),
                format!("**{}**", c.licensed_claim.label()),
            ],
            vec![
                "what would raise the claim".into(),
                c.to_raise_the_claim
                    .clone()
                    .unwrap_or_else(|| "nothing: the strongest claim".into()),
            ],
        ],
    ));
    if let Some(f) = &a.format {
        b.push(Block::Heading(3, "The answer format".into()));
        b.push(Block::Paragraph(format!(
            "The target written in each format, scored on the probed samples: the anchor (`target`) and every other forgery are written in the first format every probed scorer gives full marks on every sample (or, failing that, on most): here `{}`. The target in the other formats is an equal-quality forgery.",
            f.chosen.name()
        )));
        b.push(table(
            vec!["format".into(), "samples with full marks".into()],
            f.passed
                .iter()
                .enumerate()
                .map(|(i, (format, n))| {
                    vec![
                        format!("`{}`", format.write("x")),
                        format!(
                            "{} of {}",
                            tagged(n, &format!("{root}/format/passed/{i}/1")),
                            tagged(f.of, &format!("{root}/format/of"))
                        ),
                    ]
                })
                .collect(),
        ));
    }
    b.push(Block::Heading(3, "The forgery table".into()));
    b.push(Block::Paragraph(format!(
        "Declared quality of each forgery relative to the anchor, per kind of answer (the probed samples: {} free text, {} number, {} multiple choice); a criterion-valid scorer scores every lower-quality forgery below the anchor on the same sample and may treat an equal-quality one either way.",
        tagged(a.kinds[0], &format!("{root}/kinds/0")),
        tagged(a.kinds[1], &format!("{root}/kinds/1")),
        tagged(a.kinds[2], &format!("{root}/kinds/2")),
    )));
    let mut head = vec!["forgery".to_string(), "how it is built".to_string()];
    head.extend(AnswerKind::ALL.iter().map(|k| k.name().to_string()));
    b.push(table(
        head,
        a.table
            .iter()
            .map(|r| {
                let mut v = vec![r.forgery.name().to_string(), r.construction.to_string()];
                v.extend(
                    r.quality
                        .iter()
                        .map(|q| q.map_or("n/a".to_string(), |q| q.label().to_string())),
                );
                v
            })
            .collect(),
    ));
    b.push(Block::Heading(3, "Pass rate per forgery".into()));
    b.push(Block::Paragraph(
        "Samples given full marks / samples the forgery was built for, per scorer.".into(),
    ));
    let mut rows = Vec::new();
    for (s_i, s) in a.scorers.iter().enumerate() {
        for (r_i, r) in s.separation.rates.iter().enumerate() {
            let path = format!("{root}/scorers/{s_i}/rates/{r_i}");
            rows.push(vec![
                format!("`{}`", s.name),
                r.forgery.clone(),
                r.quality.label().into(),
                format!(
                    "{} of {}",
                    tagged(r.passed, &format!("{path}/passed")),
                    tagged(r.applicable, &format!("{path}/applicable"))
                ),
                r.rate.map_or("-".into(), |x| {
                    tagged(format!("{x:.3}"), &format!("{path}/rate"))
                }),
                match r.quality {
                    Quality::Lower => format!(
                        "{} not separated",
                        tagged(r.not_separated, &format!("{path}/not_separated"))
                    ),
                    Quality::Equal => format!(
                        "{} rejected as equivalent",
                        tagged(r.rejected, &format!("{path}/rejected"))
                    ),
                    Quality::Anchor => String::new(),
                },
            ]);
        }
    }
    b.push(table(
        vec![
            "scorer".into(),
            "forgery".into(),
            "quality".into(),
            "full marks".into(),
            "rate".into(),
            "against the ordering".into(),
        ],
        rows,
    ));
    if a.scorers.len() > 1 {
        b.push(table(
            vec!["scorer".into(), "criterion sensitivity".into()],
            a.scorers
                .iter()
                .map(|s| vec![format!("`{}`", s.name), cell(&s.separation.criterion)])
                .collect(),
        ));
    }
    for s in &a.scorers {
        let built: Vec<_> = s
            .separation
            .rates
            .iter()
            .filter(|r| r.applicable > 0)
            .collect();
        if built.is_empty() || s.separation.criterion.status == Status::NotProbed {
            continue;
        }
        let data = ProbeBarsData {
            title: format!("{} scorer probe: {}", a.target, s.name),
            kinds: built.iter().map(|r| r.forgery.clone()).collect(),
            judge: built.iter().map(|r| r.rate.unwrap_or(0.0)).collect(),
            truth: built
                .iter()
                .map(|r| {
                    if r.quality == Quality::Lower {
                        0.0
                    } else {
                        1.0
                    }
                })
                .collect(),
            judge_label: "share given full marks".into(),
            truth_label: "declared quality (1 = as good as the target)".into(),
            y_label: "rate".into(),
        };
        let scorer: String = s
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let name = format!("inspect_{slug}_{scorer}");
        let rendered = figures::write(&data, fig_dir, &name)?;
        b.push(Block::Figure(FigureBlock {
            caption: format!(
                "{}, scorer {}: share of samples each forgery gets full marks on, beside its declared quality.",
                a.target, s.name
            ),
            svg: format!("{FIGURE_DIR}/{name}.svg"),
            png: format!("{FIGURE_DIR}/{name}.png"),
            inline_svg: rendered.inline(),
        }));
    }
    b.extend(model_blocks(a, &root));
    Ok(b)
}

/// `--model`: each model through the task's own solver and scorers, trials being seeds.
fn model_blocks(a: &AnswersAudit, root: &str) -> Vec<Block> {
    let mut b = Vec::new();
    for (mi, m) in a.model_runs.iter().enumerate() {
        let at = format!("{root}/model_runs/{mi}");
        b.push(Block::Heading(
            3,
            format!("`{}` through the task's own solver and scorers", m.model),
        ));
        if let Some(why) = &m.not_probed {
            b.push(Block::Paragraph(format!("**not probed**: {why}")));
            continue;
        }
        let logs = m.log_folder().map_or_else(
            || "The Inspect logs were not kept.".to_string(),
            |dir| format!(
                "Every model request and response is in the Inspect logs under `{dir}/` (one per seed; `inspect view` and `benchaudit import` read them)."
            ),
        );
        b.push(Block::Paragraph(format!(
            "The model answers the first {} sample(s) of the probed sample through the task's own solver chain and scorers, one Inspect eval per seed ({} seed(s); the seed set in the model's generate config, so trials are seeds), through Inspect's OpenAI-compatible provider: {} model requests, {} failed. {logs} A model's scores are evidence about the model, not the scorer: no cell changes. A trial passes at a score of 1; CVaR is the mean of the worst {} of a scorer's trials; the worst case of a sample is its lowest trial.",
            tagged(m.sample_count, &format!("{at}/sample_count")),
            tagged(m.seed_count, &format!("{at}/seed_count")),
            tagged(m.requests, &format!("{at}/requests")),
            tagged(m.failed_requests, &format!("{at}/failed_requests")),
            tagged(m.cvar_alpha, &format!("{at}/cvar_alpha")),
        )));
        let mut rows = Vec::new();
        for (si, s) in m.scorers.iter().enumerate() {
            let p = format!("{at}/scorers/{si}");
            let pass = |k: usize| -> String {
                s.pass_k.get(k).map_or("-".into(), |x| {
                    let q = format!("{p}/pass_k/{k}/pass_hat_k");
                    format!(
                        "{} [{}, {}]",
                        tagged(
                            format!("{:.3}", x.pass_hat_k.estimate),
                            &format!("{q}/estimate")
                        ),
                        tagged(format!("{:.3}", x.pass_hat_k.lo), &format!("{q}/lo")),
                        tagged(format!("{:.3}", x.pass_hat_k.hi), &format!("{q}/hi")),
                    )
                })
            };
            let last = s.pass_k.len().saturating_sub(1);
            rows.push(vec![
                format!("`{}`", s.name),
                tagged(s.scored, &format!("{p}/scored")),
                tagged(s.unscored, &format!("{p}/unscored")),
                rate(s.mean, &format!("{p}/mean")),
                rate(s.mean_worst, &format!("{p}/mean_worst")),
                rate(s.cvar, &format!("{p}/cvar")),
                pass(0),
                if s.pass_k.len() > 1 {
                    format!(
                        "k = {}: {}",
                        tagged(s.pass_k[last].k, &format!("{p}/pass_k/{last}/k")),
                        pass(last)
                    )
                } else {
                    "-".into()
                },
                s.excluded
                    .clone()
                    .or_else(|| s.note.clone())
                    .unwrap_or_default(),
            ]);
        }
        b.push(table(
            vec![
                "scorer".into(),
                "trials scored".into(),
                "unscored".into(),
                "mean".into(),
                "mean worst case".into(),
                "CVaR".into(),
                "pass^1 [95% CI]".into(),
                "pass^k [95% CI]".into(),
                "note".into(),
            ],
            rows,
        ));
        let mut rows = Vec::new();
        for (si, s) in m.scorers.iter().enumerate() {
            for (ri, r) in s.samples.iter().enumerate() {
                let p = format!("{at}/scorers/{si}/samples/{ri}");
                rows.push(vec![
                    format!("`{}`", s.name),
                    format!("`{}`", r.sample),
                    tagged(r.trials.seeds, &format!("{p}/seeds")),
                    rate(Some(r.trials.mean), &format!("{p}/mean")),
                    rate(Some(r.trials.worst), &format!("{p}/worst")),
                    rate(Some(r.trials.cvar), &format!("{p}/cvar")),
                    rate(Some(r.trials.pass_hat_k), &format!("{p}/pass_hat_k")),
                ]);
            }
        }
        if !rows.is_empty() {
            b.push(table(
                vec![
                    "scorer".into(),
                    "sample".into(),
                    "seeds".into(),
                    "mean".into(),
                    "worst".into(),
                    "CVaR".into(),
                    "pass^k".into(),
                ],
                rows,
            ));
        }
    }
    b
}
