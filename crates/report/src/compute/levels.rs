//! Worst-case shortfalls across scaffolding levels and the judge-vs-ground-truth contrast.

use std::collections::BTreeMap;

use benchaudit_agents::{Level, Outcome};
use benchaudit_runs::JUDGE_SCALE;
use benchaudit_stats::mean;

use super::{Family, Grid, TaskSeeds, label, shortfall};
use crate::error::{Result, stats};
use crate::load::Loaded;
use crate::model::{Condition, LevelShortfall, ScorerContrast};

/// Across-level shortfalls per (policy, arm, options) family present at two or more levels.
pub(super) fn level_shortfalls(grid: &Grid, show_hash: bool) -> Result<Vec<LevelShortfall>> {
    let mut families: BTreeMap<Family, BTreeMap<Level, &TaskSeeds>> = BTreeMap::new();
    let mut settings = BTreeMap::new();
    for (c, tasks) in grid {
        settings.insert(c.options_hash.clone(), c.setting);
        families
            .entry((c.policy.clone(), c.arm.clone(), c.options_hash.clone()))
            .or_default()
            .insert(c.level, tasks);
    }
    let mut out = Vec::new();
    for ((policy, arm, options_hash), by_level) in families {
        let (Some((&scaffolded_level, easy)), Some((&unscaffolded_level, hard))) =
            (by_level.first_key_value(), by_level.last_key_value())
        else {
            continue;
        };
        if scaffolded_level == unscaffolded_level {
            continue;
        }
        let setting = settings.get(&options_hash).copied().flatten();
        let cond = Condition {
            policy: policy.clone(),
            level: scaffolded_level,
            arm: arm.clone(),
            options_hash: options_hash.clone(),
            setting,
        };
        let lbl = label(&cond, show_hash);
        let flat = |t: &TaskSeeds| {
            t.values()
                .flat_map(|s| s.values().copied())
                .collect::<Vec<_>>()
        };
        let pooled = shortfall(&flat(easy), &flat(hard)).map_err(stats(&lbl))?;
        out.push(LevelShortfall {
            policy: policy.clone(),
            arm: arm.clone(),
            options_hash: options_hash.clone(),
            label: lbl.clone(),
            task_id: None,
            scaffolded_level,
            unscaffolded_level,
            shortfall: pooled,
        });
        for (task, easy_seeds) in easy.iter() {
            let Some(hard_seeds) = hard.get(task) else {
                continue;
            };
            let e: Vec<f64> = easy_seeds.values().copied().collect();
            let h: Vec<f64> = hard_seeds.values().copied().collect();
            out.push(LevelShortfall {
                policy: policy.clone(),
                arm: arm.clone(),
                options_hash: options_hash.clone(),
                label: lbl.clone(),
                task_id: Some(task.clone()),
                scaffolded_level,
                unscaffolded_level,
                shortfall: shortfall(&e, &h).map_err(stats(&lbl))?,
            });
        }
    }
    Ok(out)
}

/// Mean F1 and mean judge / 100 per condition over scored, non-infra episodes, each mean
/// summed in episode-key order (for a condition: task, then seed).
pub(super) fn scorer_contrast(
    loaded: &Loaded,
    conditions: &[Condition],
    show_hash: bool,
) -> Result<Vec<ScorerContrast>> {
    // Each condition's groups (one a task), in task order.
    let mut by: BTreeMap<&Condition, Vec<usize>> = BTreeMap::new();
    for (g, c) in conditions.iter().enumerate() {
        by.entry(c).or_default().push(g);
    }
    let mut out = Vec::new();
    for (c, mut groups) in by {
        groups.sort_by(|&a, &b| loaded.groups[a].task_id.cmp(&loaded.groups[b].task_id));
        let (mut f1, mut judge) = (Vec::new(), Vec::new());
        for g in groups {
            let e = &loaded.episodes[g];
            for i in 0..e.len() {
                if e.outcome(i) == Outcome::InfraError {
                    continue;
                }
                if let Some((f, judge_total)) = e.scores(i)
                    && f.is_finite()
                    && judge_total.is_finite()
                {
                    f1.push(f);
                    judge.push(judge_total / JUDGE_SCALE);
                }
            }
        }
        if f1.is_empty() {
            continue;
        }
        let lbl = label(c, show_hash);
        out.push(ScorerContrast {
            label: lbl.clone(),
            n: f1.len(),
            f1_mean: mean(&f1).map_err(stats(&lbl))?,
            judge_mean: mean(&judge).map_err(stats(&lbl))?,
            condition: c.clone(),
        });
    }
    Ok(out)
}
