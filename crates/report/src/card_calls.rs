//! The card section of a function-call target (BFCL): the sample, the forgery table, the pass
//! rate of every forgery per category, the per-category cells and one probe-bar figure per
//! category. Every number comes from the [`CallsAudit`] written to audit.json.

use std::path::Path;

use benchaudit_audit::calls::forge::Quality;
use benchaudit_audit::calls::{CallsAudit, CategoryKind};
use benchaudit_audit::{Card, Status};

use crate::doc::{Block, FigureBlock};
use crate::error::Result;
use crate::figures::{self, ProbeBarsData};
use crate::plots::FIGURE_DIR;

use crate::card::{status_md as cell, table};

/// The paper's verdict for BFCL's AST track, compared with the measured one.
fn against_paper(a: &CallsAudit) -> String {
    let Some(ast) = a.group_cards().first() else {
        return String::new();
    };
    let claim = ast.licensed_claim.label();
    if ast.criterion_sensitivity.status == Status::NotProbed {
        return format!(
            "The {} was not probed ({}), so it is not compared with the paper's verdict (specification compliance).",
            ast.target, ast.criterion_sensitivity.evidence
        );
    }
    if claim == "specification compliance" {
        return format!(
            "The measured claim for the {} matches the paper's verdict (specification compliance).",
            ast.target
        );
    }
    let failing: Vec<String> = a
        .categories
        .iter()
        .filter(|c| c.kind == CategoryKind::Ast && c.criterion().status == Status::Fail)
        .map(|c| c.name.clone())
        .collect();
    let passing: Vec<String> = a
        .categories
        .iter()
        .filter(|c| c.kind == CategoryKind::Ast && c.criterion().status == Status::Pass)
        .map(|c| c.name.clone())
        .collect();
    format!(
        "**The measurement disagrees with the paper's verdict for BFCL's AST track (specification compliance): the lattice licenses {claim}.** Criterion sensitivity fails on {} (see their rows: a lower-quality forgery is not separated from the correct call), so by the fixed lattice a failed criterion reads as a shape-graded scorer; on {} every lower-quality forgery is separated and those categories license specification compliance, as the paper found for its Python probe.",
        if failing.is_empty() {
            "no category".to_string()
        } else {
            failing.join(", ")
        },
        if passing.is_empty() {
            "no category".to_string()
        } else {
            passing.join(", ")
        }
    )
}

/// The blocks of one function-call audit, writing its figures to `fig_dir`.
pub fn blocks(a: &CallsAudit, fig_dir: &Path, slug: &str) -> Result<Vec<Block>> {
    let version = a.checker["version"].as_str().unwrap_or("?");
    let package = a.checker["package"].as_str().unwrap_or("?");
    let decoder = a.checker["decoder"].as_str().unwrap_or("?");
    let model = a.checker["decoder_model"].as_str().unwrap_or("?");
    let sample = match a.config.sample {
        Some(n) => format!(
            "a seeded sample of {n} entries per category (seed {}; {})",
            a.config.seed, a.sample_rule
        ),
        None => "every entry of each category".into(),
    };
    let mut b = vec![
        Block::Heading(2, a.target.clone()),
        Block::Paragraph(format!(
            "Forged outputs scored by the released checker of {package} {version}, with no model call: each raw output goes through BFCL's own per-entry evaluation (the {decoder} decoder of the prompt-mode model {model}, then the AST or relevance checker). Probed: {sample}. A second checker process scores the same outputs again for replay."
        )),
    ];
    if let Some(run) = &a.battery {
        b.push(crate::card::battery_block(run));
    }
    if !a.failures.is_empty() {
        b.push(Block::List(a.failures.clone()));
    }
    b.push(Block::Paragraph(against_paper(a)));
    let group: Vec<&Card> = a.group_cards().iter().collect();
    let mut head = vec![String::new()];
    head.extend(group.iter().map(|c| c.target.clone()));
    let row = |name: &str, f: &dyn Fn(&Card) -> String| {
        let mut r = vec![name.to_string()];
        r.extend(group.iter().map(|c| f(c)));
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
    b.push(Block::Paragraph("Intended quality of each forgery relative to the anchor (the correct answer) per kind of category; a criterion-valid checker passes the anchor and fails every lower-quality forgery on the same entry, and may treat an equal-quality one either way.".into()));
    b.push(table(
        vec![
            "forgery".into(),
            "how it is built".into(),
            "ast".into(),
            "relevance".into(),
            "irrelevance".into(),
        ],
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

    b.push(Block::Heading(3, "Checker pass rate per forgery".into()));
    b.push(Block::Paragraph("Passed / built per category (entries probed of entries in the category); a forgery is built only where the entry has what it needs.".into()));
    let mut rows = Vec::new();
    for c in &a.categories {
        for r in &c.separation.rates {
            rows.push(vec![
                format!("{} ({} of {})", c.name, c.entries_probed, c.entries_total),
                r.forgery.clone(),
                r.quality.label().into(),
                format!("{} of {}", r.passed, r.applicable),
                r.rate.map_or("-".into(), |x| format!("{x:.3}")),
                match r.quality {
                    Quality::Lower => format!("{} not separated", r.not_separated),
                    Quality::Equal => format!("{} rejected as equivalent", r.rejected),
                    Quality::Anchor => String::new(),
                },
            ]);
        }
    }
    b.push(table(
        vec![
            "category".into(),
            "forgery".into(),
            "quality".into(),
            "passed".into(),
            "rate".into(),
            "against the ordering".into(),
        ],
        rows,
    ));

    b.push(Block::Heading(3, "Per-category cards".into()));
    let cards = &a.cards[..a.categories.len().min(a.cards.len())];
    b.push(table(
        vec![
            "category".into(),
            "criterion sensitivity".into(),
            "licensed claim".into(),
        ],
        cards
            .iter()
            .map(|c| {
                vec![
                    c.target.clone(),
                    cell(&c.criterion_sensitivity),
                    c.licensed_claim.label().into(),
                ]
            })
            .collect(),
    ));

    for c in &a.categories {
        let built: Vec<_> = c
            .separation
            .rates
            .iter()
            .filter(|r| r.applicable > 0)
            .collect();
        if built.is_empty() {
            continue;
        }
        let data = ProbeBarsData {
            title: format!("{} checker probe: {}", slug.to_uppercase(), c.name),
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
            judge_label: "checker pass rate".into(),
            truth_label: "intended quality (1 = as good as correct)".into(),
            y_label: "rate".into(),
        };
        let name = format!("{slug}_{}", c.name);
        let rendered = figures::write(&data, fig_dir, &name)?;
        b.push(Block::Figure(FigureBlock {
            caption: format!(
                "{}: checker pass rate of each forgery beside its intended quality.",
                c.name
            ),
            svg: format!("{FIGURE_DIR}/{name}.svg"),
            png: format!("{FIGURE_DIR}/{name}.png"),
            inline_svg: rendered.inline(),
        }));
    }
    Ok(b)
}
