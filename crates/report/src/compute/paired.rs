//! Paired comparisons: constant vs escalating arms within a run, and run B vs run A, each with
//! a Holm adjustment within its table.

use std::collections::BTreeMap;

use benchaudit_agents::Level;
use benchaudit_runs::ArmSetting;
use benchaudit_stats::{
    PairedComparison, PairedConfig, compare_paired, holm_adjust, stratified_bootstrap_ci,
    stratified_bootstrap_mean_ci,
};

use super::curves::{Side, arm_side};
use super::{Grid, Observed, Options, Pairs, TaskSeeds, observations, tool};
use crate::error::{Error, Result, stats};
use crate::load::Loaded;
use crate::model::{CompareStats, Condition, PairedRow, PairedSection, SCHEMA, SeedValues};

fn paired_row(
    policy: &str,
    level: Level,
    arm: Option<String>,
    task_id: Option<String>,
    label: String,
    cmp: &PairedComparison,
    b_minus_a: bool,
) -> PairedRow {
    // `cmp` was computed as first − second; for B − A the first argument was B.
    let (mean_a, mean_b) = if b_minus_a {
        (cmp.mean_b, cmp.mean_a)
    } else {
        (cmp.mean_a, cmp.mean_b)
    };
    PairedRow {
        policy: policy.to_string(),
        level,
        arm,
        setting: None,
        task_id,
        label,
        n: cmp.n,
        mean_a,
        mean_b,
        delta: cmp.mean_delta,
        delta_ci: (&cmp.delta_ci).into(),
        p_value: cmp.sign_flip.p_value,
        p_method: cmp.sign_flip.method.clone(),
        p_holm: cmp.sign_flip.p_value,
        cliffs_delta: cmp.cliffs_delta,
        cliffs_ci: (&cmp.cliffs_ci).into(),
        positive: cmp.positive,
        negative: cmp.negative,
        ties: cmp.ties,
        ci_excludes_zero: cmp.delta_ci.excludes_zero_above() || cmp.delta_ci.excludes_zero_below(),
    }
}

/// Fills `p_holm` over one family of rows.
fn holm(rows: &mut [PairedRow]) -> Result<()> {
    let p: Vec<f64> = rows.iter().map(|r| r.p_value).collect();
    let adjusted = holm_adjust(&p).map_err(stats("Holm adjustment"))?;
    for (r, a) in rows.iter_mut().zip(adjusted) {
        r.p_holm = a;
    }
    Ok(())
}

/// A paired table from matched values: `pairs` maps (policy, level, arm, task) → seed →
/// (first, second); Δ = first − second.
fn paired_tables(
    pairs: &Pairs,
    opts: &Options,
    b_minus_a: bool,
    label_of: &dyn Fn(&str, Level, Option<&str>) -> String,
) -> Result<(Vec<PairedRow>, Vec<PairedRow>)> {
    let config = opts.paired_config();
    let mut rows = Vec::new();
    type GroupKey = (String, Level, Option<String>);
    // Per group, the (first, second) values of each task, in task order.
    type TaskPairs = Vec<(Vec<f64>, Vec<f64>)>;
    let mut pooled_values: BTreeMap<GroupKey, TaskPairs> = BTreeMap::new();
    for ((policy, level, arm, task), seeds) in pairs {
        let first: Vec<f64> = seeds.values().map(|p| p.0).collect();
        let second: Vec<f64> = seeds.values().map(|p| p.1).collect();
        let lbl = label_of(policy, *level, arm.as_deref());
        let cmp =
            compare_paired(&first, &second, &config).map_err(stats(&format!("{lbl} {task}")))?;
        rows.push(paired_row(
            policy,
            *level,
            arm.clone(),
            Some(task.clone()),
            lbl,
            &cmp,
            b_minus_a,
        ));
        pooled_values
            .entry((policy.clone(), *level, arm.clone()))
            .or_default()
            .push((first, second));
    }
    let mut pooled = Vec::new();
    for ((policy, level, arm), tasks) in &pooled_values {
        let lbl = label_of(policy, *level, arm.as_deref());
        let cmp = pooled_comparison(tasks, &config).map_err(stats(&lbl))?;
        pooled.push(paired_row(
            policy,
            *level,
            arm.clone(),
            None,
            lbl,
            &cmp,
            b_minus_a,
        ));
    }
    holm(&mut rows)?;
    holm(&mut pooled)?;
    Ok((rows, pooled))
}

/// The paired comparison of a pooled row: Δ over every pair of every task, its mean, sign-flip
/// test and counts as [`compare_paired`] gives them, with both intervals (mean Δ and Cliff's
/// δ) from the stratified bootstrap: the pairs are resampled within each task, so a replicate
/// keeps the run's task mix ([`stratified_bootstrap_mean_ci`]).
pub(super) fn pooled_comparison(
    tasks: &[(Vec<f64>, Vec<f64>)],
    config: &PairedConfig,
) -> benchaudit_stats::Result<PairedComparison> {
    let first: Vec<f64> = tasks.iter().flat_map(|t| t.0.iter().copied()).collect();
    let second: Vec<f64> = tasks.iter().flat_map(|t| t.1.iter().copied()).collect();
    let mut cmp = compare_paired(&first, &second, config)?;
    let strata: Vec<Vec<f64>> = tasks
        .iter()
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x - y).collect())
        .collect();
    let bootstrap = config.bootstrap();
    cmp.delta_ci = stratified_bootstrap_mean_ci(&strata, &bootstrap)?;
    cmp.cliffs_ci = stratified_bootstrap_ci(&strata, &bootstrap, |r| {
        let (mut net, mut n) = (0i64, 0usize);
        for d in r.iter().flatten() {
            n += 1;
            if *d > 0.0 {
                net += 1;
            } else if *d < 0.0 {
                net -= 1;
            }
        }
        if n == 0 { 0.0 } else { net as f64 / n as f64 }
    })?;
    Ok(cmp)
}

/// Constant vs escalating arms paired by (task, seed) within (policy, level, quota setting).
///
/// An arm changes the run options, so the two sides carry different options hashes; they are
/// paired when a (policy, level, setting) holds exactly one constant and one escalating
/// condition. The setting is the quota setting of an `ab` run's arms (read from its manifest),
/// so each arm of a quota or slack sweep pairs with the constant arm of its own setting, as
/// `ab` pairs them; every row is one family for the Holm adjustment. A group with both sides but
/// several of either (e.g. a sweep whose manifest is missing) is ambiguous and listed in
/// `skipped` rather than guessed; one with a single side is not an A/B design.
pub(super) fn ab_section(
    grid: &Grid,
    opts: &Options,
    show_hash: bool,
) -> Result<Option<PairedSection>> {
    type Sides<'a> = (
        Vec<(&'a Condition, &'a TaskSeeds)>,
        Vec<(&'a Condition, &'a TaskSeeds)>,
    );
    let mut by: BTreeMap<(String, Level, Option<ArmSetting>), Sides<'_>> = BTreeMap::new();
    for (c, tasks) in grid {
        match arm_side(c.arm.as_deref()) {
            Some(Side::Constant) => by
                .entry((c.policy.clone(), c.level, c.setting))
                .or_default()
                .0
                .push((c, tasks)),
            Some(Side::Escalating) => by
                .entry((c.policy.clone(), c.level, c.setting))
                .or_default()
                .1
                .push((c, tasks)),
            None => {}
        }
    }
    // A design needs both sides; a (policy, level) with only constant doses is a degradation
    // sweep, not an A/B comparison.
    by.retain(|_, (constant, escalating)| !constant.is_empty() && !escalating.is_empty());
    if by.is_empty() {
        return Ok(None);
    }
    let mut pairs = BTreeMap::new();
    let (mut unpaired_a, mut unpaired_b, mut n_pairs) = (0, 0, 0);
    let mut skipped = Vec::new();
    let count = |t: &TaskSeeds| t.values().map(SeedValues::len).sum::<usize>();
    let mut settings: BTreeMap<String, ArmSetting> = BTreeMap::new();
    for ((policy, level, setting), (constant, escalating)) in &by {
        let (&[(c_cond, c_tasks)], &[(_, e_tasks)]) = (constant.as_slice(), escalating.as_slice())
        else {
            skipped.push(format!("{policy} {level}"));
            unpaired_a += constant.iter().map(|(_, t)| count(t)).sum::<usize>();
            unpaired_b += escalating.iter().map(|(_, t)| count(t)).sum::<usize>();
            continue;
        };
        let qualifier = match setting {
            Some(s) => {
                settings.insert(s.label(), *s);
                Some(s.label())
            }
            None => show_hash.then(|| format!("#{}", c_cond.options_hash)),
        };
        for (task, c_seeds) in c_tasks {
            let e_seeds = e_tasks.get(task);
            for (seed, cv) in c_seeds.iter() {
                match e_seeds.and_then(|s| s.get(&seed)) {
                    Some(ev) => {
                        pairs
                            .entry((policy.clone(), *level, qualifier.clone(), task.clone()))
                            .or_insert_with(BTreeMap::new)
                            .insert(seed, (cv, *ev));
                        n_pairs += 1;
                    }
                    None => unpaired_a += 1,
                }
            }
        }
        for (task, e_seeds) in e_tasks {
            unpaired_b += e_seeds
                .keys()
                .filter(|s| c_tasks.get(task).is_none_or(|c| !c.contains_key(s)))
                .count();
        }
    }
    if pairs.is_empty() && skipped.is_empty() {
        return Ok(None);
    }
    let label_of = |policy: &str, level: Level, q: Option<&str>| match q {
        Some(q) => format!("{policy} {level} {q}"),
        None => format!("{policy} {level}"),
    };
    let (mut rows, mut pooled) = paired_tables(&pairs, opts, false, &label_of)?;
    // The qualifier only disambiguated labels (and named the setting); the arms are the two
    // sides here.
    for r in rows.iter_mut().chain(pooled.iter_mut()) {
        r.setting = r.arm.as_ref().and_then(|q| settings.get(q)).copied();
        r.arm = None;
    }
    // Sweep rows in quota order (quota 8 before quota 10), not in their labels' text order.
    let order = |a: &PairedRow, b: &PairedRow| {
        (&a.policy, a.level, a.setting, &a.task_id)
            .cmp(&(&b.policy, b.level, b.setting, &b.task_id))
    };
    rows.sort_by(order);
    pooled.sort_by(order);
    Ok(Some(PairedSection {
        a: "constant".to_string(),
        b: "escalating".to_string(),
        delta: "a - b".to_string(),
        paired_by: "(policy, level, task, seed)".to_string(),
        pairs: n_pairs,
        unpaired_a,
        unpaired_b,
        skipped,
        rows,
        pooled,
    }))
}

/// Computes a run-vs-run comparison: episodes of A and B paired by (policy, level, arm, task,
/// seed), Δ = B − A (positive = B scores higher).
///
/// Exists as the pure core of `benchaudit report --compare RUN_A RUN_B`. The options hash is
/// not part of the pairing key: comparing two option sets (e.g. submission protocols) is a
/// main use. A run that holds one key under several option sets is ambiguous and rejected.
///
/// # Errors
/// [`Error::Invalid`] when nothing pairs or a run is ambiguous; a statistics error otherwise.
pub fn compare_stats(a: &Loaded, b: &Loaded, opts: &Options) -> Result<CompareStats> {
    // The arm's quota setting is part of the key, so two `ab` sweeps compare arm by arm.
    type Key = (
        String,
        Level,
        Option<String>,
        Option<ArmSetting>,
        String,
        u64,
    );
    let (obs_a, counts_a, _) = observations(a, opts.metric);
    let (obs_b, counts_b, _) = observations(b, opts.metric);
    let index = |run: &Loaded, obs: &Observed, name: &str| -> Result<BTreeMap<Key, f64>> {
        // In ledger order: a key held under several option sets is named where it repeats.
        let mut in_order: Vec<(u32, usize, u64, f64)> = Vec::with_capacity(obs.used());
        for (g, values) in obs.values.iter().enumerate() {
            let e = &run.episodes[g];
            let mut i = 0;
            for (seed, v) in values.iter() {
                // The episodes of `values` are a subsequence of the group's, both by seed.
                while e.seeds().get(i).is_some_and(|&s| s < seed) {
                    i += 1;
                }
                in_order.push((e.line(i.min(e.len().saturating_sub(1))), g, seed, v));
            }
        }
        in_order.sort_by_key(|&(line, ..)| line);
        let mut m = BTreeMap::new();
        for (_, g, seed, v) in in_order {
            let (c, task) = (&obs.conditions[g], &run.groups[g].task_id);
            let key = (
                c.policy.clone(),
                c.level,
                c.arm.clone(),
                c.setting,
                task.clone(),
                seed,
            );
            if m.insert(key, v).is_some() {
                return Err(Error::Invalid(format!(
                    "run {name} holds {} {} {task} seed {seed} under several option sets; compare runs with one option set each",
                    c.policy, c.level
                )));
            }
        }
        Ok(m)
    };
    let va = index(a, &obs_a, "A")?;
    let vb = index(b, &obs_b, "B")?;
    let mut pairs: Pairs = BTreeMap::new();
    // The pairing key's arm names the setting too ("escalating; quota 8, slack 0").
    let mut settings: BTreeMap<String, ArmSetting> = BTreeMap::new();
    for ((policy, level, arm, setting, task, seed), x) in &va {
        let key = (
            policy.clone(),
            *level,
            arm.clone(),
            *setting,
            task.clone(),
            *seed,
        );
        if let Some(y) = vb.get(&key) {
            let arm = match (arm, setting) {
                (Some(a), Some(s)) => {
                    let named = format!("{a}; {}", s.label());
                    settings.insert(named.clone(), *s);
                    Some(named)
                }
                (arm, _) => arm.clone(),
            };
            // First − second = B − A.
            pairs
                .entry((policy.clone(), *level, arm, task.clone()))
                .or_default()
                .insert(*seed, (*y, *x));
        }
    }
    let n_pairs: usize = pairs.values().map(BTreeMap::len).sum();
    if n_pairs == 0 {
        return Err(Error::Invalid(format!(
            "no episode of {} has a partner in {} with the same (policy, level, arm, task, seed) and the metric `{}`",
            a.source.run_dir,
            b.source.run_dir,
            opts.metric.flag()
        )));
    }
    let label_of = |policy: &str, level: Level, arm: Option<&str>| match arm {
        Some(arm) => format!("{policy} {level} [{arm}]"),
        None => format!("{policy} {level}"),
    };
    let (mut rows, mut pooled) = paired_tables(&pairs, opts, true, &label_of)?;
    // The recorded arm stays the ledger's; the setting moves to its own field.
    for r in rows.iter_mut().chain(pooled.iter_mut()) {
        if let Some(s) = r.arm.as_ref().and_then(|a| settings.get(a)) {
            r.setting = Some(*s);
            r.arm = r
                .arm
                .as_ref()
                .and_then(|a| a.split_once(';'))
                .map(|(a, _)| a.to_string());
        }
    }
    Ok(CompareStats {
        schema: SCHEMA.to_string(),
        kind: "compare".to_string(),
        tool: tool(),
        source_a: a.source.clone(),
        source_b: b.source.clone(),
        settings: opts.settings(),
        episodes_a: counts_a,
        episodes_b: counts_b,
        comparison: PairedSection {
            a: a.source.run_dir.clone(),
            b: b.source.run_dir.clone(),
            delta: "b - a".to_string(),
            paired_by: "(policy, level, arm, task, seed)".to_string(),
            pairs: n_pairs,
            unpaired_a: va.len() - n_pairs,
            unpaired_b: vb.len() - n_pairs,
            skipped: Vec::new(),
            rows,
            pooled,
        },
        figures: Vec::new(),
    })
}
