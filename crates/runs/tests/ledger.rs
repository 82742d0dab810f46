//! The run ledger's rules (issue 11): exact resume, manifest checks, torn versus corrupt lines,
//! infra-error attempts and the fatal stop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use benchaudit_agents::{
    Action, EpisodeStart, FaultContext, FaultDecision, Level, Outcome, Policy, PolicyError,
    RuleKind, RulePolicy, Slots, Step,
};
use benchaudit_comtrade::{TaskInfo, task};
use benchaudit_runs::{Error, Manifest, Plan, Player, Progress, execute, read_ledger};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The oracle, except that while `fail` holds every episode fails at its first question with
/// `fail_with` (an infrastructure error or a provider refusal).
struct Flaky {
    inner: RulePolicy,
    fail: Arc<AtomicBool>,
    fatal: bool,
    started: Arc<AtomicUsize>,
}

impl Flaky {
    fn check(&self) -> Result<(), PolicyError> {
        if !self.fail.load(Ordering::SeqCst) {
            return Ok(());
        }
        Err(if self.fatal {
            PolicyError::Fatal("HTTP 401: invalid key".into())
        } else {
            PolicyError::Infra("provider kept failing: 6 attempts, last: HTTP 503".into())
        })
    }
}

impl Policy for Flaky {
    fn name(&self) -> String {
        "flaky".into()
    }
    fn begin_episode(&mut self, start: &EpisodeStart) {
        self.started.fetch_add(1, Ordering::SeqCst);
        self.inner.begin_episode(start);
    }
    fn fill_slots(&mut self, info: &TaskInfo) -> Result<Option<Slots>, PolicyError> {
        self.check()?;
        self.inner.fill_slots(info)
    }
    fn on_fault(&mut self, fault: &FaultContext) -> Result<Option<FaultDecision>, PolicyError> {
        self.check()?;
        self.inner.on_fault(fault)
    }
    fn next_action(&mut self, history: &[Step]) -> Result<Action, PolicyError> {
        self.check()?;
        self.inner.next_action(history)
    }
}

struct Rig {
    fail: Arc<AtomicBool>,
    started: Arc<AtomicUsize>,
    plan: Plan,
}

fn rig(fatal: bool, seeds: Vec<u64>) -> Rig {
    let fail = Arc::new(AtomicBool::new(true));
    let started = Arc::new(AtomicUsize::new(0));
    let (f, s) = (Arc::clone(&fail), Arc::clone(&started));
    let player = Player::new("flaky", move || {
        Box::new(Flaky {
            inner: RulePolicy::new(RuleKind::Oracle),
            fail: Arc::clone(&f),
            fatal,
            started: Arc::clone(&s),
        })
    });
    let plan = Plan::new(
        vec![player],
        vec![Level::L0],
        vec![task("T1_single_page").unwrap()],
        seeds,
    );
    Rig {
        fail,
        started,
        plan,
    }
}

fn oracle_plan(seeds: Vec<u64>) -> Plan {
    Plan::new(
        vec![Player::rule(RuleKind::Oracle)],
        vec![Level::L1],
        vec![task("T1_single_page").unwrap()],
        seeds,
    )
}

fn lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("episodes.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn read_ledger_bytes(bytes: &[u8]) -> Vec<benchaudit_agents::EpisodeRecord> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("episodes.jsonl");
    std::fs::write(&path, bytes).unwrap();
    read_ledger(&path).unwrap().records
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(|x| json!(x)),
        (0.0f64..1.0).prop_map(|x| json!(x)),
        any::<u64>().prop_map(|x| json!(x)),
        any::<i64>().prop_map(|x| json!(x)),
        any::<bool>().prop_map(|x| json!(x)),
        "[a-z0-9 é_.-]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Any configuration written into a manifest and read back compares equal, so a resume of
    /// the same command is never refused (floats included: serde_json's `float_roundtrip`).
    #[test]
    fn any_configuration_written_then_read_back_compares_equal(config in arb_json()) {
        let dir = tempfile::tempdir().unwrap();
        let now = Manifest::new(json!({ "config": config })).unwrap();
        now.write(dir.path()).unwrap();
        let back = Manifest::read(dir.path()).unwrap().unwrap();
        prop_assert_eq!(&back, &now);
        prop_assert_eq!(back.resume_refusal(&now, dir.path()).unwrap(), None);
    }
}

#[test]
fn the_matched_levels_that_broke_resume_round_trip_exactly() {
    // The constant levels of `ab --seeds 0..20`, `0..29` and `0..4` (issue 11: a fresh run
    // was refused as "a different configuration").
    let t = task("T9_clean_ab").unwrap();
    for n in [5u64, 21, 30] {
        let seeds: Vec<u64> = (0..n).collect();
        let level = benchaudit_comtrade::StressConfig::matched_level(t, &seeds).unwrap();
        let text = serde_json::to_string(&json!({ "matched_level": level })).unwrap();
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["matched_level"].as_f64(), Some(level), "{n} seeds");
    }
}

#[test]
fn the_tool_text_is_in_the_manifest_and_a_resume_under_the_other_is_refused_naming_it() {
    use benchaudit_comtrade::ToolText;
    let dir = tempfile::tempdir().unwrap();
    let ambiguous = oracle_plan(vec![0]).with_tool_text(ToolText::Ambiguous);
    execute(dir.path(), ambiguous.config(), &ambiguous, 1, &mut |_| {}).unwrap();
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["config"]["tool_text"], "ambiguous", "{m}");
    // The same wording resumes (nothing to run); the other is refused, naming the field.
    execute(dir.path(), ambiguous.config(), &ambiguous, 1, &mut |_| {}).unwrap();
    let clarified = oracle_plan(vec![0]);
    assert_eq!(clarified.tool_text, ToolText::Clarified, "the default");
    let err = execute(dir.path(), clarified.config(), &clarified, 1, &mut |_| {}).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("tool_text") && text.contains("ambiguous") && text.contains("clarified"),
        "{text}"
    );

    // A manifest written before the field existed was played with the clarified wording: it
    // resumes under the default and is refused under the other.
    let dir = tempfile::tempdir().unwrap();
    execute(dir.path(), clarified.config(), &clarified, 1, &mut |_| {}).unwrap();
    let path = dir.path().join("manifest.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    m["config"].as_object_mut().unwrap().remove("tool_text");
    std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    execute(dir.path(), clarified.config(), &clarified, 1, &mut |_| {}).unwrap();
    let err = execute(dir.path(), ambiguous.config(), &ambiguous, 1, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("tool_text"), "{err}");
}

#[test]
fn a_resume_under_another_version_or_registry_is_refused_naming_the_field() {
    let plan = oracle_plan(vec![0]);
    for (field, edit) in [
        ("version", json!({"version": "0.0.0-other"})),
        (
            "registry_sha256",
            json!({"registry_sha256": "00".repeat(32)}),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        execute(dir.path(), plan.config(), &plan, 1, &mut |_| {}).unwrap();
        let path = dir.path().join("manifest.json");
        let mut m: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for (k, v) in edit.as_object().unwrap() {
            m[k] = v.clone();
        }
        std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
        let err = execute(dir.path(), plan.config(), &plan, 1, &mut |_| {}).unwrap_err();
        assert!(
            matches!(err, Error::Invalid(_)) && err.to_string().contains(field),
            "{field}: {err}"
        );
    }
}

#[test]
fn episodes_without_a_manifest_are_refused_not_adopted() {
    let plan = oracle_plan(vec![0, 1]);
    let dir = tempfile::tempdir().unwrap();
    execute(dir.path(), plan.config(), &plan, 1, &mut |_| {}).unwrap();
    std::fs::remove_file(dir.path().join("manifest.json")).unwrap();
    let err = execute(dir.path(), plan.config(), &plan, 1, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("no manifest.json"), "{err}");
    assert!(!dir.path().join("manifest.json").exists());
    assert_eq!(lines(dir.path()).len(), 2);
}

#[test]
fn only_a_final_line_without_newline_is_torn_even_inside_a_utf8_character() {
    let plan = oracle_plan(vec![0, 1]);
    let dir = tempfile::tempdir().unwrap();
    execute(dir.path(), plan.config(), &plan, 1, &mut |_| {}).unwrap();
    let path = dir.path().join("episodes.jsonl");
    let whole = std::fs::read(&path).unwrap();
    // Cut the last record's line and end it half-way through "é" (0xC3 0xA9).
    let last_start = whole[..whole.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let mut torn = whole[..last_start].to_vec();
    torn.extend_from_slice(b"{\"key\":{\"policy\":\"caf\xC3");
    std::fs::write(&path, &torn).unwrap();
    let contents = read_ledger(&path).unwrap();
    assert_eq!(contents.records.len(), 1);
    assert_eq!(contents.torn_at, Some(last_start as u64));
    let mut discarded = None;
    let again = execute(dir.path(), plan.config(), &plan, 1, &mut |p| {
        if let Progress::Started {
            discarded_torn_line,
            to_run,
            ..
        } = p
        {
            discarded = Some((discarded_torn_line, to_run));
        }
    })
    .unwrap();
    assert_eq!(discarded, Some((true, 1)));
    assert_eq!(again.records.len(), 2);
    // The episode was re-run identically (wall time aside).
    let untimed = |bytes: &[u8]| {
        let mut rs = read_ledger_bytes(bytes);
        for r in &mut rs {
            r.timing.wall_ms = 0.0;
        }
        rs
    };
    assert_eq!(untimed(&std::fs::read(&path).unwrap()), untimed(&whole));
}

#[test]
fn a_complete_line_that_is_not_a_record_is_corruption_and_stays_in_place() {
    let small = oracle_plan(vec![0, 1]);
    for at in [1usize, 2] {
        let dir2 = tempfile::tempdir().unwrap();
        execute(dir2.path(), small.config(), &small, 1, &mut |_| {}).unwrap();
        let path = dir2.path().join("episodes.jsonl");
        let mut ls = lines(dir2.path());
        // A complete (newline-terminated) line that is no record: in the middle or last.
        ls[at - 1] = "{\"key\": \"garbage\"}".into();
        let text = ls.join("\n") + "\n";
        std::fs::write(&path, &text).unwrap();
        let err = execute(dir2.path(), small.config(), &small, 1, &mut |_| {}).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Corrupt(_)), "{msg}");
        assert!(
            msg.contains("episodes.jsonl") && msg.contains(&format!("line {at}")),
            "{msg}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "nothing truncated"
        );
    }
}

#[test]
fn a_key_repeats_only_after_infra_error_attempts() {
    let plan = oracle_plan(vec![0, 1]);
    let dir = tempfile::tempdir().unwrap();
    execute(dir.path(), plan.config(), &plan, 1, &mut |_| {}).unwrap();
    let path = dir.path().join("episodes.jsonl");
    let ls = lines(dir.path());
    // A finished episode recorded twice is corruption, for every reader.
    std::fs::write(&path, format!("{}\n{}\n{}\n", ls[0], ls[1], ls[0])).unwrap();
    let err = read_ledger(&path).unwrap_err();
    assert!(
        matches!(err, Error::Corrupt(_)) && err.to_string().contains("line 3"),
        "{err}"
    );
    assert!(execute(dir.path(), plan.config(), &plan, 1, &mut |_| {}).is_err());
    // An infra_error attempt followed by the retry is one episode: the last record counts.
    let mut failed: Value = serde_json::from_str(&ls[0]).unwrap();
    failed["outcome"] = json!("infra_error");
    failed["scores"] = Value::Null;
    let failed = serde_json::to_string(&failed).unwrap();
    std::fs::write(&path, format!("{failed}\n{}\n{}\n", ls[1], ls[0])).unwrap();
    let contents = read_ledger(&path).unwrap();
    assert_eq!(contents.records.len(), 2);
    assert_eq!(contents.superseded.len(), 1);
    assert!(
        contents
            .records
            .iter()
            .all(|r| r.outcome == Outcome::Submitted)
    );
    // A failed attempt after a finished record is corruption.
    std::fs::write(&path, format!("{}\n{}\n{failed}\n", ls[0], ls[1])).unwrap();
    assert!(matches!(read_ledger(&path), Err(Error::Corrupt(_))));
}

#[test]
fn an_infra_error_is_retried_on_resume_and_its_transcript_kept() {
    let r = rig(false, vec![0, 1]);
    let dir = tempfile::tempdir().unwrap();
    let first = execute(dir.path(), r.plan.config(), &r.plan, 1, &mut |_| {}).unwrap();
    assert_eq!((first.ran, first.infra_errors), (2, 2));
    assert!(
        first
            .records
            .iter()
            .all(|x| x.outcome == Outcome::InfraError)
    );
    // Still failing: retried again, still incomplete.
    let second = execute(dir.path(), r.plan.config(), &r.plan, 1, &mut |_| {}).unwrap();
    assert_eq!((second.ran, second.infra_errors), (2, 2));
    r.fail.store(false, Ordering::SeqCst);
    let mut started = None;
    let third = execute(dir.path(), r.plan.config(), &r.plan, 1, &mut |p| {
        if let Progress::Started {
            recorded,
            to_run,
            retrying,
            ..
        } = p
        {
            started = Some((recorded, to_run, retrying));
        }
    })
    .unwrap();
    assert_eq!(started, Some((0, 2, 2)));
    assert_eq!((third.ran, third.infra_errors), (2, 0));
    assert!(
        third
            .records
            .iter()
            .all(|x| x.outcome == Outcome::Submitted)
    );
    assert_eq!(
        lines(dir.path()).len(),
        6,
        "attempts are appended, never rewritten"
    );
    let contents = read_ledger(&dir.path().join("episodes.jsonl")).unwrap();
    assert_eq!((contents.records.len(), contents.superseded.len()), (2, 4));
    // Each failed attempt's transcript is kept under its attempt number.
    let key = &third.records[0].key;
    let t = dir.path().join("transcripts");
    for n in [1, 2] {
        assert!(
            t.join(benchaudit_runs::ledger::attempt_name(key, n))
                .exists(),
            "attempt {n}"
        );
    }
    assert!(
        t.join(benchaudit_runs::ledger::transcript_name(key))
            .exists()
    );
    // Finished now: nothing runs.
    let fourth = execute(dir.path(), r.plan.config(), &r.plan, 1, &mut |_| {}).unwrap();
    assert_eq!(fourth.ran, 0);
    assert_eq!(r.started.load(Ordering::SeqCst), 6);
}

#[test]
fn a_provider_refusal_is_not_recorded_and_stops_the_run() {
    let r = rig(true, vec![0, 1, 2, 3]);
    let dir = tempfile::tempdir().unwrap();
    let err = execute(dir.path(), r.plan.config(), &r.plan, 1, &mut |_| {}).unwrap_err();
    match &err {
        Error::Fatal {
            message,
            recorded,
            not_run,
        } => {
            assert!(message.contains("HTTP 401"), "{message}");
            assert_eq!((*recorded, *not_run), (0, 4));
        }
        other => panic!("not fatal: {other}"),
    }
    assert_eq!(
        r.started.load(Ordering::SeqCst),
        1,
        "no episode starts after it"
    );
    assert!(
        lines(dir.path()).is_empty(),
        "the refused episode is not recorded"
    );
    r.fail.store(false, Ordering::SeqCst);
    let done = execute(dir.path(), r.plan.config(), &r.plan, 1, &mut |_| {}).unwrap();
    assert_eq!((done.ran, done.records.len()), (4, 4));
}

/// Issue 37: transcripts are zstd-compressed JSON, read back by `read_transcript` (as are the
/// plain ones older runs wrote), and a run may keep none, which its manifest records.
#[test]
fn transcripts_are_compressed_or_not_kept_as_the_manifest_says() {
    use benchaudit_runs::Transcripts;
    use benchaudit_runs::ledger::{read_transcript, transcript_name};
    let plan = || {
        Plan::new(
            vec![Player::rule(RuleKind::NoDedup)],
            vec![Level::L0, Level::L2],
            vec![task("T3_duplicates").unwrap()],
            vec![0, 1],
        )
    };
    let kept = tempfile::tempdir().unwrap();
    let run = execute(kept.path(), plan().config(), &plan(), 1, &mut |_| {}).unwrap();
    assert!(
        plan().config().get("transcripts").is_none(),
        "kept: the manifest is as before"
    );
    let folder = kept.path().join("transcripts");
    for r in &run.records {
        let name = transcript_name(&r.key);
        assert!(name.ends_with(".json.zst"), "{name}");
        let bytes = std::fs::read(folder.join(&name)).unwrap();
        assert_eq!(bytes[..4], [0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
        let doc = read_transcript(kept.path(), &r.key).unwrap().unwrap();
        let events = doc["events"].as_array().unwrap();
        assert!(events.iter().any(|e| e["event"] == "call"), "{doc}");
        // Smaller than the JSON it holds.
        assert!(bytes.len() < serde_json::to_vec(&doc).unwrap().len());
    }
    // A transcript written before they were compressed is read too; a damaged one is an error.
    let key = &run.records[0].key;
    let doc = read_transcript(kept.path(), key).unwrap().unwrap();
    std::fs::remove_file(folder.join(transcript_name(key))).unwrap();
    let plain = transcript_name(key).replace(".json.zst", ".json");
    std::fs::write(folder.join(&plain), serde_json::to_vec(&doc).unwrap()).unwrap();
    assert_eq!(read_transcript(kept.path(), key).unwrap(), Some(doc));
    std::fs::remove_file(folder.join(&plain)).unwrap();
    std::fs::write(folder.join(transcript_name(key)), b"not zstd").unwrap();
    assert!(matches!(
        read_transcript(kept.path(), key),
        Err(Error::Corrupt(_))
    ));

    let none = tempfile::tempdir().unwrap();
    let plan_none = || plan().with_transcripts(Transcripts::None);
    let config = plan_none().config();
    assert_eq!(config["transcripts"], "none");
    assert_eq!(Transcripts::of(&config), Transcripts::None);
    let run = execute(none.path(), config, &plan_none(), 1, &mut |_| {}).unwrap();
    assert_eq!(run.records.len(), 4);
    assert_eq!(
        std::fs::read_dir(none.path().join("transcripts"))
            .unwrap()
            .count(),
        0
    );
    let manifest = Manifest::read(none.path()).unwrap().unwrap();
    assert_eq!(manifest.config["transcripts"], "none");
    assert_eq!(
        read_transcript(none.path(), &run.records[0].key).unwrap(),
        None
    );
    // A resume that would keep them is another configuration.
    let Err(err) = execute(none.path(), plan().config(), &plan(), 1, &mut |_| {}) else {
        panic!("a resume that keeps transcripts is refused");
    };
    assert!(err.to_string().contains("config.transcripts"), "{err}");
}
