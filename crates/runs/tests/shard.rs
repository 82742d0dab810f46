//! Shards and the verified merge (issue 19): the shards partition a plan for any N, a shard's
//! manifest pins its shard and plan, and a merge of complete shards is the single-process
//! run's ledger, while overlaps, gaps and foreign shards are refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use benchaudit_agents::llm::{AgentOptions, build_agents};
use benchaudit_agents::{EpisodeKey, Level, RuleKind, RunOptions};
use benchaudit_comtrade::{EpisodeOptions, InterfaceProfile, TaskSpec, task, tasks};
use benchaudit_runs::merge::{GapState, MergeError, canonical_order};
use benchaudit_runs::shard::{Shard, ShardRun, assign, expected_cost, plan_sha256};
use benchaudit_runs::{Error, Manifest, Plan, Player, Progress, execute, execute_shard, merge};
use proptest::prelude::*;
use serde_json::Value;

fn rule_plan(seeds: std::ops::Range<u64>) -> Plan {
    Plan::new(
        vec![
            Player::rule(RuleKind::Oracle),
            Player::rule(RuleKind::NoDedup),
        ],
        vec![Level::L1, Level::L2],
        vec![
            task("T2_multi_page").unwrap(),
            task("T3_duplicates").unwrap(),
            task("T8_mixed_faults").unwrap(),
        ],
        seeds.collect(),
    )
}

fn shard_run(index: u32, count: u32, out: &Path) -> ShardRun {
    let args = [
        "benchaudit",
        "run",
        "--policy",
        "oracle,no-dedup",
        "--shard",
        "0/1",
        "--out",
        "x",
    ]
    .map(String::from);
    ShardRun::from_args(Shard::new(index, count).unwrap(), args, out).unwrap()
}

fn run_shard(plan: &Plan, index: u32, count: u32, out: &Path) -> benchaudit_runs::Executed {
    execute_shard(
        out,
        plan.config(),
        plan,
        &shard_run(index, count, out),
        2,
        &mut |_| {},
    )
    .unwrap()
}

/// The ledger's lines, each with its `timing` object removed, as the bytes serde writes.
fn lines_without_timing(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("episodes.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("timing");
            serde_json::to_string(&v).unwrap()
        })
        .collect()
}

fn transcripts(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir.join("transcripts"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn merge_err(dirs: &[PathBuf], out: &Path) -> MergeError {
    match merge(dirs, out) {
        Err(Error::Merge(e)) => e,
        other => panic!("expected a merge error, got {other:?}"),
    }
}

#[test]
fn three_shards_merged_equal_the_single_process_run_byte_for_byte() {
    let plan = rule_plan(0..6);
    let root = tempfile::tempdir().unwrap();
    let single = root.path().join("single");
    let whole = execute(&single, plan.config(), &plan, 1, &mut |_| {}).unwrap();
    assert_eq!(whole.records.len(), 72);

    let dirs: Vec<PathBuf> = (0..3)
        .map(|i| root.path().join(format!("shard-{i}")))
        .collect();
    let mut sizes = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        sizes.push(run_shard(&plan, i as u32, 3, d).records.len());
    }
    assert_eq!(sizes.iter().sum::<usize>(), 72);
    assert!(sizes.iter().all(|&n| n > 0), "{sizes:?}");

    let out = root.path().join("merged");
    // Shards in any order.
    let given = [dirs[2].clone(), dirs[0].clone(), dirs[1].clone()];
    let merged = merge(&given, &out).unwrap();
    assert_eq!((merged.shards, merged.records.len()), (3, 72));
    assert_eq!(merged.transcripts, 72);

    // The single-process ledger in canonical order is the merged one, timing aside.
    let mut want = lines_without_timing(&single);
    let mut by_key: Vec<(EpisodeKey, String)> = whole
        .records
        .iter()
        .map(|r| r.key.clone())
        .zip(want.drain(..))
        .collect();
    by_key.sort_by(|a, b| a.0.cmp(&b.0));
    let want: Vec<String> = by_key.into_iter().map(|(_, l)| l).collect();
    assert_eq!(lines_without_timing(&out), want);
    // The same order through the library's own canonical_order.
    let mut records = whole.records.clone();
    canonical_order(&mut records);
    let keys: Vec<_> = records.iter().map(|r| &r.key).collect();
    let merged_keys: Vec<_> = merged.records.iter().map(|r| &r.key).collect();
    assert_eq!(keys, merged_keys);
    // Every record's timing came over from its shard.
    assert!(merged.records.iter().all(|r| r.timing.wall_ms > 0.0));

    // Transcripts carried over, identical.
    assert_eq!(transcripts(&out), transcripts(&single));

    // The manifest: the run's own, no shard, the merge recorded.
    let m = Manifest::read(&out).unwrap().unwrap();
    let s = Manifest::read(&single).unwrap().unwrap();
    assert_eq!(
        (&m.config, &m.version, &m.registry_sha256),
        (&s.config, &s.version, &s.registry_sha256)
    );
    assert!(m.shard.is_none());
    let from = m.merged.unwrap();
    assert_eq!(from.shards, 3);
    assert_eq!(
        from.sources,
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
    );
    let keys: Vec<&EpisodeKey> = whole.records.iter().map(|r| &r.key).collect();
    assert_eq!(from.plan_sha256, plan_sha256(&plan.config(), keys).unwrap());

    // The unsharded command resumes the merged directory and runs nothing.
    let mut to_run = None;
    let again = execute(&out, plan.config(), &plan, 2, &mut |p| {
        if let Progress::Started { to_run: n, .. } = p {
            to_run = Some(n);
        }
    })
    .unwrap();
    assert_eq!((to_run, again.ran, again.records.len()), (Some(0), 0, 72));
}

#[test]
fn a_shard_directory_resumes_only_as_the_same_shard_of_the_same_plan() {
    let plan = rule_plan(0..3);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shard-1");
    let first = run_shard(&plan, 1, 4, &dir);
    // The same shard resumes and runs nothing.
    let again = run_shard(&plan, 1, 4, &dir);
    assert_eq!((again.ran, again.records.len()), (0, first.records.len()));

    let refusal = |r: benchaudit_runs::Result<benchaudit_runs::Executed>| match r {
        Err(Error::Invalid(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let other = execute_shard(
        &dir,
        plan.config(),
        &plan,
        &shard_run(2, 4, &dir),
        1,
        &mut |_| {},
    );
    let m = refusal(other);
    assert!(m.contains("shard: recorded 1/4, now 2/4"), "{m}");
    let other_n = execute_shard(
        &dir,
        plan.config(),
        &plan,
        &shard_run(1, 3, &dir),
        1,
        &mut |_| {},
    );
    assert!(refusal(other_n).contains("recorded 1/4, now 1/3"));
    let unsharded = execute(&dir, plan.config(), &plan, 1, &mut |_| {});
    let m = refusal(unsharded);
    assert!(m.contains("shard: the run there is shard 1/4"), "{m}");
    assert!(m.contains("--shard 1/4"), "{m}");
    let wider = rule_plan(0..4);
    let m = refusal(execute_shard(
        &dir,
        wider.config(),
        &wider,
        &shard_run(1, 4, &dir),
        1,
        &mut |_| {},
    ));
    assert!(m.contains("config.seeds"), "{m}");

    // An unsharded run directory does not become a shard.
    let plain = root.path().join("plain");
    execute(&plain, plan.config(), &plan, 1, &mut |_| {}).unwrap();
    let m = refusal(execute_shard(
        &plain,
        plan.config(),
        &plan,
        &shard_run(0, 2, &plain),
        1,
        &mut |_| {},
    ));
    assert!(m.contains("shard: the run there is not a shard"), "{m}");

    // An unsharded manifest reads as before: no `shard`, no `merged` key in the file.
    let text = std::fs::read_to_string(plain.join("manifest.json")).unwrap();
    assert!(
        !text.contains("\"shard\"") && !text.contains("\"merged\""),
        "{text}"
    );
    let recorded = Manifest::read(&dir).unwrap().unwrap().shard.unwrap();
    assert_eq!(
        (recorded.index, recorded.count, recorded.episodes),
        (1, 4, first.records.len())
    );
    assert_eq!(recorded.plan_episodes, plan.len());
    assert_eq!(
        recorded.command[recorded.command.len() - 4..],
        ["--shard", "1/4", "--out", &dir.display().to_string()].map(String::from)
    );
}

#[test]
fn merge_refuses_overlaps_foreign_shards_and_a_used_out() {
    let plan = rule_plan(0..3);
    let root = tempfile::tempdir().unwrap();
    let d = |n: &str| root.path().join(n);
    for i in 0..2 {
        run_shard(&plan, i, 2, &d(&format!("shard-{i}")));
    }
    // The same shard twice, under two names.
    copy_dir(&d("shard-1"), &d("copy-of-1"));
    let e = merge_err(&[d("shard-0"), d("shard-1"), d("copy-of-1")], &d("out"));
    assert!(matches!(e, MergeError::Overlap { shard, .. } if shard == Shard::new(1, 2).unwrap()));
    assert!(e.to_string().contains("shard 1/2 is given twice"), "{e}");

    // A shard of another plan (other seeds): named field, both values.
    let other = rule_plan(0..4);
    run_shard(&other, 1, 2, &d("other-1"));
    let e = merge_err(&[d("shard-0"), d("other-1")], &d("out"));
    match &e {
        MergeError::Mismatch {
            field,
            first_value,
            other_value,
            ..
        } => {
            assert_eq!(field, "config.seeds");
            assert_eq!(
                (first_value.as_str(), other_value.as_str()),
                ("[0,1,2]", "[0,1,2,3]")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("config.seeds differs"), "{e}");

    // Another N.
    run_shard(&plan, 1, 3, &d("of-three-1"));
    let e = merge_err(&[d("shard-0"), d("of-three-1")], &d("out"));
    assert!(
        matches!(&e, MergeError::Mismatch { field, .. } if field == "shard.count"),
        "{e}"
    );

    // Another tool version, registry: edited manifests.
    for (field, value) in [("version", "0.0.1"), ("registry_sha256", "00ff")] {
        let name = format!("edited-{field}");
        copy_dir(&d("shard-1"), &d(&name));
        let path = d(&name).join("manifest.json");
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        m[field] = Value::from(value);
        std::fs::write(&path, m.to_string()).unwrap();
        let e = merge_err(&[d("shard-0"), d(&name)], &d("out"));
        match &e {
            MergeError::Mismatch {
                field: f,
                other_value,
                ..
            } => {
                assert_eq!((f.as_str(), other_value.as_str()), (field, value));
            }
            other => panic!("{other:?}"),
        }
    }

    // An unsharded run is not a shard.
    execute(&d("plain"), plan.config(), &plan, 1, &mut |_| {}).unwrap();
    let e = merge_err(&[d("shard-0"), d("plain")], &d("out"));
    assert!(matches!(e, MergeError::NotAShard { .. }), "{e}");

    // A used --out.
    let e = merge_err(&[d("shard-0"), d("shard-1")], &d("plain"));
    assert!(matches!(e, MergeError::OutNotEmpty { .. }), "{e}");
    assert!(!d("out").exists(), "nothing was written by a refused merge");
    merge(&[d("shard-0"), d("shard-1")], &d("out")).unwrap();
}

#[test]
fn merge_reports_every_missing_or_incomplete_shard_with_the_command_that_completes_it() {
    let plan = rule_plan(0..4);
    let root = tempfile::tempdir().unwrap();
    let d = |i: u32| root.path().join(format!("shard-{i}"));
    for i in [0, 1, 3] {
        run_shard(&plan, i, 4, &d(i));
    }
    // Shard 3 loses its last two records (as a killed run would have them unwritten) and
    // gains a torn line.
    let file = d(3).join("episodes.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let expected = lines.len();
    lines.truncate(expected - 2);
    std::fs::write(&file, format!("{}\n{{\"key\":", lines.join("\n"))).unwrap();

    let e = merge_err(&[d(0), d(1), d(3)], &root.path().join("out"));
    let MergeError::Gaps { count, gaps } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(*count, 4);
    assert_eq!(gaps.len(), 2);
    assert_eq!(gaps[0].shard, Shard::new(2, 4).unwrap());
    assert_eq!(gaps[0].state, GapState::Missing);
    let workdir = std::env::current_dir().unwrap();
    // The missing shard's command: a sibling's, with its shard and --out.
    assert!(
        gaps[0]
            .command
            .starts_with(&format!("cd {} && benchaudit run", workdir.display())),
        "{}",
        gaps[0].command
    );
    assert!(
        gaps[0]
            .command
            .contains(&format!("--shard 2/4 --out {}", d(2).display()))
    );
    assert_eq!(gaps[1].dir.as_deref(), Some(d(3).as_path()));
    assert_eq!(
        gaps[1].state,
        GapState::Incomplete {
            recorded: expected - 2,
            expected,
            infra_errors: 0,
            torn_line: true
        }
    );
    assert!(
        gaps[1]
            .command
            .ends_with(&format!("--shard 3/4 --out {}", d(3).display()))
    );
    let message = e.to_string();
    assert!(
        message.contains("2 of the 4 shards are missing or incomplete"),
        "{message}"
    );
    assert!(
        message.contains("shard 2/4: missing; run it with:"),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "incomplete: {} of {expected} episodes recorded, a torn last line",
            expected - 2
        )),
        "{message}"
    );
    assert!(!root.path().join("out").exists());

    // The reported commands' shard runs complete the plan: then the merge goes through.
    run_shard(&plan, 2, 4, &d(2));
    let resumed = run_shard(&plan, 3, 4, &d(3));
    assert_eq!((resumed.ran, resumed.records.len()), (2, expected));
    let merged = merge(&[d(0), d(1), d(2), d(3)], &root.path().join("out")).unwrap();
    assert_eq!(merged.records.len(), plan.len());
}

#[test]
fn a_shard_still_being_written_is_reported_as_running() {
    let plan = rule_plan(0..2);
    let root = tempfile::tempdir().unwrap();
    let d = |i: u32| root.path().join(format!("shard-{i}"));
    run_shard(&plan, 0, 2, &d(0));
    run_shard(&plan, 1, 2, &d(1));
    let manifest = Manifest::read(&d(1)).unwrap().unwrap();
    let writer = benchaudit_runs::Ledger::open(&d(1), &manifest).unwrap();
    let e = merge_err(&[d(0), d(1)], &root.path().join("out"));
    let MergeError::Gaps { gaps, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0].state, GapState::Running);
    drop(writer);
    merge(&[d(0), d(1)], &root.path().join("out")).unwrap();
}

#[test]
fn a_shard_whose_episodes_were_edited_is_refused() {
    let plan = rule_plan(0..2);
    let root = tempfile::tempdir().unwrap();
    let d = |i: u32| root.path().join(format!("shard-{i}"));
    run_shard(&plan, 0, 2, &d(0));
    run_shard(&plan, 1, 2, &d(1));
    // Shard 1's first record changes its seed: same count, other episodes.
    let file = d(1).join("episodes.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if i == 0 {
            v["key"]["seed"] = Value::from(99);
        }
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    std::fs::write(&file, out).unwrap();
    match merge(&[d(0), d(1)], &root.path().join("out")) {
        Err(Error::Corrupt(m)) => assert!(
            m.contains("not the") && m.contains("episodes_sha256"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("transcripts")).unwrap();
    for name in ["manifest.json", "episodes.jsonl"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
    for e in std::fs::read_dir(from.join("transcripts")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join("transcripts").join(e.file_name())).unwrap();
    }
}

/// An LLM player that is never asked anything (the assignment only reads its configuration).
fn model_player() -> Player {
    let agents = build_agents(&["local:idle".to_string()], &AgentOptions::default()).unwrap();
    Player::model(agents.into_iter().next().unwrap())
}

#[test]
fn llm_episodes_are_spread_before_rule_episodes_fill_in() {
    let t2 = task("T2_multi_page").unwrap();
    let plan = Plan::new(
        vec![Player::rule(RuleKind::Oracle), model_player()],
        vec![Level::L2],
        vec![t2, task("T1_single_page").unwrap()],
        (0..8).collect(),
    );
    let jobs = plan.jobs();
    let llm_cost = expected_cost(&jobs[16]);
    assert_eq!(llm_cost, 10_000 * (u64::from(t2.total_pages()) + 1));
    assert_eq!(expected_cost(&jobs[0]), u64::from(t2.total_pages()) + 1);
    let shards = assign(&jobs, 4);
    // 16 LLM episodes over 4 shards: 4 each (8 of T2, 8 of T1, each task's spread evenly).
    let mut llm_per_shard: HashMap<(u32, &str), usize> = HashMap::new();
    for (j, s) in jobs.iter().zip(&shards) {
        if j.player.model_config().is_some() {
            *llm_per_shard.entry((*s, j.spec.task.task_id)).or_default() += 1;
        }
    }
    for s in 0..4 {
        assert_eq!(llm_per_shard[&(s, "T2_multi_page")], 2);
        assert_eq!(llm_per_shard[&(s, "T1_single_page")], 2);
    }
}

fn options(i: usize) -> RunOptions {
    RunOptions {
        episode: EpisodeOptions {
            interface: if i.is_multiple_of(2) {
                InterfaceProfile::Legacy
            } else {
                InterfaceProfile::Strict
            },
            max_requests: (i > 1).then_some(20 + i as u32),
            ..EpisodeOptions::default()
        },
        ..RunOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// For random plans and N in 1..16, the shards partition the plan: each distinct episode in
    /// exactly one shard, nothing else in any; the assignment is a function of the plan; no
    /// shard's expected cost exceeds another's by more than the costliest episode; the plan
    /// hash is the same for every N.
    #[test]
    fn shards_partition_the_plan_exactly(
        kinds in proptest::sample::subsequence(RuleKind::ALL.to_vec(), 1..=4),
        with_model in any::<bool>(),
        levels in proptest::sample::subsequence(Level::ALL.to_vec(), 1..=3),
        task_idx in proptest::sample::subsequence((0..tasks().len()).collect::<Vec<_>>(), 1..=5),
        seeds in proptest::collection::vec(0u64..1000, 1..8),
        arms in 1usize..=3,
        n in 1u32..16,
    ) {
        let mut players: Vec<Player> = kinds.into_iter().map(Player::rule).collect();
        if with_model {
            players.push(model_player());
        }
        let task_list: Vec<&'static TaskSpec> = task_idx.iter().map(|&i| &tasks()[i]).collect();
        // Seeds may repeat: the plan then lists an episode twice, and it is still run once.
        let mut plan = Plan::new(players, levels, task_list, seeds);
        plan.arms = (0..arms).map(options).collect();
        let jobs = plan.jobs();
        let distinct: HashSet<&EpisodeKey> = jobs.iter().map(|j| &j.key).collect();

        let mut seen: HashMap<EpisodeKey, u32> = HashMap::new();
        let mut loads = vec![0u64; n as usize];
        for shard in Shard::all(n).unwrap() {
            for j in shard.jobs(&plan) {
                loads[shard.index as usize] += expected_cost(&j);
                if let Some(other) = seen.insert(j.key.clone(), shard.index) {
                    prop_assert!(false, "{:?} in shards {other} and {}", j.key, shard.index);
                }
            }
        }
        prop_assert_eq!(seen.len(), distinct.len());
        prop_assert!(seen.keys().all(|k| distinct.contains(k)));
        prop_assert_eq!(assign(&jobs, n), assign(&plan.jobs(), n));
        let max_cost = jobs.iter().map(expected_cost).max().unwrap_or(0);
        let (lo, hi) = (loads.iter().min().copied(), loads.iter().max().copied());
        prop_assert!(hi.unwrap_or(0) - lo.unwrap_or(0) <= max_cost, "{loads:?}, max {max_cost}");

        let root = Path::new("/nonexistent");
        let hashes: HashSet<String> = [1, n, 16]
            .iter()
            .map(|&c| shard_run(0, c, root).manifest(&plan.config(), &plan).unwrap().plan_sha256)
            .collect();
        prop_assert_eq!(hashes.len(), 1);
    }
}

/// Shards of a plan that keeps no transcripts merge without any.
#[test]
fn shards_without_transcripts_merge() {
    let plan = rule_plan(0..2).with_transcripts(benchaudit_runs::Transcripts::None);
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..2).map(|i| tmp.path().join(format!("s{i}"))).collect();
    for (i, d) in dirs.iter().enumerate() {
        run_shard(&plan, i as u32, 2, d);
        assert!(transcripts(d).is_empty());
    }
    let out = tmp.path().join("merged");
    let merged = merge(&dirs, &out).unwrap();
    assert_eq!((merged.records.len(), merged.transcripts), (plan.len(), 0));
    assert!(transcripts(&out).is_empty());
    assert_eq!(
        Manifest::read(&out).unwrap().unwrap().config["transcripts"],
        "none"
    );
}

/// Shards recorded before transcripts were compressed (plain `*.json`) still merge, their
/// transcripts copied and read back as they were.
#[test]
fn shards_with_plain_transcripts_merge() {
    use benchaudit_runs::ledger::{read_transcript, transcript_name};
    let plan = rule_plan(0..2);
    let tmp = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..2).map(|i| tmp.path().join(format!("s{i}"))).collect();
    let mut docs = BTreeMap::new();
    for (i, d) in dirs.iter().enumerate() {
        let run = run_shard(&plan, i as u32, 2, d);
        for r in &run.records {
            let doc = read_transcript(d, &r.key).unwrap().unwrap();
            let zst = d.join("transcripts").join(transcript_name(&r.key));
            let plain = zst.with_extension("");
            std::fs::write(&plain, serde_json::to_vec(&doc).unwrap()).unwrap();
            std::fs::remove_file(&zst).unwrap();
            docs.insert(format!("{:?}", r.key), (r.key.clone(), doc));
        }
    }
    let out = tmp.path().join("merged");
    let merged = merge(&dirs, &out).unwrap();
    assert_eq!(merged.transcripts, plan.len());
    assert_eq!(docs.len(), plan.len());
    for (key, doc) in docs.values() {
        assert_eq!(read_transcript(&out, key).unwrap().as_ref(), Some(doc));
    }
    assert!(transcripts(&out).keys().all(|n| n.ends_with(".json")));
}

#[test]
fn every_record_a_run_writes_agrees_with_itself() {
    // What merge now checks must hold for every record the runner writes: every rule policy,
    // level and task, under both reward scorers and with an exhausted quota.
    let players: Vec<Player> = RuleKind::ALL.into_iter().map(Player::rule).collect();
    for arm in [
        RunOptions::default(),
        RunOptions {
            reward: benchaudit_scoring::RewardScorer::Judge,
            episode: EpisodeOptions {
                max_requests: Some(1),
                ..EpisodeOptions::default()
            },
            ..RunOptions::default()
        },
    ] {
        let plan = Plan::new(
            players.clone(),
            Level::ALL.to_vec(),
            tasks().iter().collect(),
            vec![0, 1],
        )
        .with_options(arm);
        for r in benchaudit_runs::run_all(&plan, 2) {
            assert_eq!(r.inconsistency(), None, "{:?}", r.key);
        }
    }
}

#[test]
fn a_shard_record_that_contradicts_itself_is_refused() {
    let plan = rule_plan(0..2);
    let root = tempfile::tempdir().unwrap();
    let d = |i: u32| root.path().join(format!("shard-{i}"));
    run_shard(&plan, 0, 2, &d(0));
    run_shard(&plan, 1, 2, &d(1));
    let clean = root.path().join("clean");
    copy_dir(&d(1), &clean);
    // Each edit keeps every key (the key hash still matches) but breaks the record.
    for (edit, expected) in [
        (
            ("reward", Value::from(0.123)),
            "reward 0.123 is neither its f1",
        ),
        (("f1", Value::from(0.5)), "f1 0.5 is not the"),
        (
            ("recall", Value::from(-5.0)),
            "recall -5.0 is outside [0, 1]",
        ),
        (
            ("judge_total", Value::from(1e300)),
            "judge_total 1e300 is outside",
        ),
        (
            ("true_unique", Value::from(1_000_000)),
            "1000000 true records",
        ),
    ] {
        copy_dir(&clean, &d(1));
        let file = d(1).join("episodes.jsonl");
        let text = std::fs::read_to_string(&file).unwrap();
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            let mut v: Value = serde_json::from_str(line).unwrap();
            if i == 1 {
                let (field, value) = edit.clone();
                if field == "reward" {
                    v[field] = value;
                } else {
                    v["scores"][field] = value;
                }
            }
            out.push_str(&serde_json::to_string(&v).unwrap());
            out.push('\n');
        }
        std::fs::write(&file, out).unwrap();
        // A score outside [0, 1] is refused by the ledger reader itself; a record whose fields
        // disagree is refused by merge's own check. Either way nothing merges.
        match merge(&[d(0), d(1)], &root.path().join("out")) {
            Err(e) => {
                let m = e.to_string();
                assert!(
                    m.contains(expected) && (m.contains("shard 1/2") || m.contains("shard-1")),
                    "{m}"
                );
            }
            Ok(merged) => panic!("{edit:?}: merged {} records", merged.records.len()),
        }
    }
    copy_dir(&clean, &d(1));
    merge(&[d(0), d(1)], &root.path().join("out")).unwrap();
}
