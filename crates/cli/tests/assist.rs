//! `benchaudit assist` end to end: the real binary against a scripted OpenAI-compatible server
//! on 127.0.0.1 (the one the `run --model` tests use). Covers the acceptance list of the
//! assist layers: a correct proposal, a proposal citing lines that do not exist (flagged),
//! garbage output (a clear error, nothing written), a narration with an invented number
//! (rejected by the guard, exit 1), and replay of recorded responses giving the same outputs;
//! then `assist eval` scored against the shipped references, replayed byte for byte, and a
//! proposal that changes no card until a person confirms it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../agents/tests/llm_support/mod.rs"]
mod llm_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchaudit_agents::{Level, OwnershipMap};
use benchaudit_audit::comtrade_target::decision_name;
use benchaudit_audit::external::ExternalTarget;
use benchaudit_audit::{Status, Target, audit_external};
use benchaudit_testkit::files_under;
use llm_support::{Recorded, Reply, Server, messages, text_reply};
use serde_json::{Value, json};

const VAR: &str = "BENCHAUDIT_ASSIST_TEST_KEY";
const KEY: &str = "sk-assist-5c0ffee9d1-SECRET-VALUE";

fn benchaudit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(args)
        .env(VAR, KEY)
        // References outside the repository are "not evaluated" unless named (each test
        // names what it needs).
        .env_remove("INSPECT_SCORER_DIR")
        .env_remove("BFCL_CHECKER")
        .output()
        .expect("run benchaudit")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn content(req: &Value, i: usize) -> String {
    messages(req)
        .get(i)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The levels a discovery prompt asks about.
fn levels_asked(user: &str) -> Vec<String> {
    let line = user
        .lines()
        .find_map(|l| l.strip_prefix("Levels (configurations of the harness) to answer for: "))
        .expect("levels line");
    line.trim_end_matches('.')
        .split(", ")
        .map(str::to_string)
        .collect()
}

/// The first file shown in a prompt: its name and first line number.
fn first_file(user: &str) -> (String, usize) {
    let header = user
        .lines()
        .find(|l| l.starts_with("=== FILE "))
        .expect("a file header");
    let name = header["=== FILE ".len()..]
        .split(" (")
        .next()
        .unwrap()
        .to_string();
    let after = user.split(header).nth(1).unwrap();
    let first: usize = after
        .lines()
        .nth(1)
        .and_then(|l| l.split('|').next())
        .and_then(|n| n.trim().parse().ok())
        .expect("a numbered line");
    (name, first)
}

/// A discovery answer that is the declared map at the levels asked, citing lines shown, except
/// at seed 1, where L1 retry is answered wrongly. `cite_past` cites lines past the file's end.
fn discovery_answer(req: &Value, cite_past: bool) -> String {
    let user = content(req, 1);
    let (file, first) = first_file(&user);
    let seed = req["seed"].as_u64().unwrap_or(0);
    let declared = OwnershipMap::declared();
    let mut decisions = Vec::new();
    for l in levels_asked(&user) {
        for (lv, d, o) in &declared.entries {
            if lv.to_string() != l {
                continue;
            }
            let mut owner = match o {
                benchaudit_agents::Owner::Harness => "harness",
                benchaudit_agents::Owner::Model => "model",
            };
            if seed == 1 && *lv == Level::L1 && decision_name(*d) == "retry" {
                owner = "harness";
            }
            let (start, end) = if cite_past {
                (9_000, 9_010)
            } else {
                (first, first + 2)
            };
            decisions.push(
                json!({"level": l, "decision": decision_name(*d), "owner": owner,
                "lines": [{"file": file, "start": start, "end": end}],
                "why": "the harness code here decides it"}),
            );
        }
    }
    format!(
        "Here is the map:\n```json\n{}\n```",
        json!({ "decisions": decisions })
    )
}

/// A probe-design answer: an outcome scorer and a battery covering the human one (seed 1
/// leaves out duplicates), plus one probe the humans lacked.
fn probes_answer(req: &Value) -> String {
    let seed = req["seed"].as_u64().unwrap_or(0);
    let mut probes = vec![
        json!({"name": "empty_submission", "description": "submit no records at all", "forgery": "empty"}),
        json!({"name": "fabricated_ids", "description": "records of the right shape with invented ids", "forgery": "fabricated"}),
        json!({"name": "report_contradiction", "description": "metadata row_count contradicts the records", "forgery": "contradictory_report"}),
        json!({"name": "other_task", "description": "the records of another task", "forgery": "wrong_task_id"}),
        json!({"name": "unicode_ids", "description": "record keys in another normal form", "forgery": "nfc_forms"}),
    ];
    if seed != 1 {
        probes.push(json!({"name": "duplicated_rows", "description": "every record twice", "forgery": "duplicate_laden"}));
    }
    json!({"scorer_kind": "outcome", "why": "it compares records with ground truth", "probes": probes})
        .to_string()
}

/// A narration quoting the first numeric fact with its tag; `invent` changes the figure.
fn narration_answer(req: &Value, invent: bool) -> String {
    let user = content(req, 1);
    let (pointer, value) = user
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .find(|(p, v)| p.starts_with('/') && v.parse::<f64>().is_ok())
        .map(|(p, v)| (p.to_string(), v.to_string()))
        .unwrap_or_default();
    if pointer.is_empty() {
        return "The card licenses the claim it names; no figure is quoted.".into();
    }
    let figure = if invent { "0.4242".to_string() } else { value };
    format!(
        "The audit measured {figure}<!-- ba:{pointer} --> on its first cell.\n\nThe rest follows the card."
    )
}

/// The scripted assistant: answers each layer by its system prompt.
fn assistant(req: &Value, mode: Mode) -> Value {
    let system = content(req, 0);
    let answer = if system.contains("audit benchmark harnesses") {
        match mode {
            Mode::Garbage => "I think the harness is fine and owns everything.".to_string(),
            Mode::CitePast => discovery_answer(req, true),
            _ => discovery_answer(req, false),
        }
    } else if system.contains("audit the scorers") {
        probes_answer(req)
    } else if system.contains("validity card") {
        narration_answer(req, mode == Mode::Invent)
    } else {
        panic!("unexpected request: {system}");
    };
    text_reply(&answer, 40)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Good,
    CitePast,
    Garbage,
    Invent,
}

fn server(mode: Mode) -> Server {
    Server::start(move |_, r: &Recorded| Reply::ok(assistant(&r.body, mode)))
}

fn harness(dir: &Path) -> PathBuf {
    let file = dir.join("harness.py");
    let lines: Vec<String> = (1..=40)
        .map(|i| format!("    step_{i}()  # retry, dedup, totals, pages, submit"))
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

fn model_flags(s: &Server) -> Vec<String> {
    vec![
        "--model".into(),
        "scripted:assistant".into(),
        "--base-url".into(),
        s.base_url(),
        "--api-key-env".into(),
        VAR.into(),
    ]
}

fn run(args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    benchaudit(&args)
}

fn no_key_under(dir: &Path) {
    for f in files_under(dir) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !text(&bytes).contains(KEY),
            "the key reached {}",
            f.display()
        );
    }
}

#[test]
fn a_correct_proposal_is_written_marked_proposed_and_replays_to_the_same_files() {
    let s = server(Mode::Good);
    let dir = tempfile::tempdir().unwrap();
    let src = harness(dir.path());
    let out = dir.path().join("proposal");
    let mut args: Vec<String> = vec![
        "assist".into(),
        "discover".into(),
        src.display().to_string(),
    ];
    args.extend([
        "--levels".into(),
        "L0,L2".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    args.extend(model_flags(&s));
    let o = run(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let toml_text = std::fs::read_to_string(out.join("ownership.toml")).unwrap();
    let doc: toml::Table = toml::from_str(&toml_text).expect("the proposal is TOML");
    let own = doc["ownership"].as_table().unwrap();
    assert!(
        own["proposed"]
            .as_str()
            .unwrap()
            .starts_with("assist-discover-")
    );
    let entries = own["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 10, "5 decisions at each of 2 levels");
    assert!(entries.iter().any(|e| e.as_array().unwrap()
        == &vec![
            toml::Value::from("L0"),
            toml::Value::from("dedup"),
            toml::Value::from("harness")
        ]));
    assert!(entries.iter().any(|e| e.as_array().unwrap()
        == &vec![
            toml::Value::from("L2"),
            toml::Value::from("retry"),
            toml::Value::from("model")
        ]));
    assert!(!toml_text.contains("NOT FOUND"), "{toml_text}");
    let proposal: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("proposal.json")).unwrap()).unwrap();
    assert_eq!(proposal["flags"], json!([]), "{proposal}");
    // One request, recorded with its response; the key went in the header only.
    let requests = s.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(
        requests[0].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("harness.py")
    );
    let rec: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("exchanges.json")).unwrap())
            .unwrap();
    assert_eq!(rec["exchanges"].as_array().unwrap().len(), 1);
    assert_eq!(rec["exchanges"][0]["request"], requests[0].body);
    no_key_under(&out);

    // Replay: no model, the same files.
    let again = dir.path().join("again");
    let o = benchaudit(&[
        "assist",
        "discover",
        &src.display().to_string(),
        "--levels",
        "L0,L2",
        "--out",
        &again.display().to_string(),
        "--replay",
        &out.join("exchanges.json").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(s.requests().len(), 1, "replay asked no model");
    for f in ["ownership.toml", "proposal.json", "exchanges.json"] {
        let a = std::fs::read_to_string(out.join(f)).unwrap();
        let b = std::fs::read_to_string(again.join(f)).unwrap();
        if f == "exchanges.json" {
            let (a, b): (Value, Value) = (
                serde_json::from_str(&a).unwrap(),
                serde_json::from_str(&b).unwrap(),
            );
            assert_eq!(a["exchanges"], b["exchanges"]);
        } else {
            assert_eq!(a, b, "{f} differs on replay");
        }
    }
    // A replay with other inputs is refused, naming why.
    let o = benchaudit(&[
        "assist",
        "discover",
        &src.display().to_string(),
        "--levels",
        "L0",
        "--out",
        &dir.path().join("other").display().to_string(),
        "--replay",
        &out.join("exchanges.json").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("replay: the recording holds no unanswered `discover` request"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn citations_of_lines_that_do_not_exist_are_flagged() {
    let s = server(Mode::CitePast);
    let dir = tempfile::tempdir().unwrap();
    let src = harness(dir.path());
    let out = dir.path().join("p");
    let mut args: Vec<String> = vec![
        "assist".into(),
        "discover".into(),
        src.display().to_string(),
    ];
    args.extend(["--out".into(), out.display().to_string()]);
    args.extend(model_flags(&s));
    let o = run(&args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a flagged citation is a finding: {}",
        text(&o.stderr)
    );
    let stdout = text(&o.stdout);
    assert!(
        stdout.contains("citation") && stdout.contains("9000-9010 does not exist"),
        "{stdout}"
    );
    let toml_text = std::fs::read_to_string(out.join("ownership.toml")).unwrap();
    assert_eq!(toml_text.matches("NOT FOUND").count(), 5, "{toml_text}");
    assert!(
        toml_text.contains("outside the lines shown (1-40)"),
        "{toml_text}"
    );
    let proposal: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("proposal.json")).unwrap()).unwrap();
    let problem = &proposal["entries"][0]["citations"][0]["problem"];
    assert!(
        problem
            .as_str()
            .unwrap()
            .contains("outside the lines shown"),
        "{proposal}"
    );
}

#[test]
fn garbage_output_is_a_clear_error_and_writes_no_proposal() {
    let s = server(Mode::Garbage);
    let dir = tempfile::tempdir().unwrap();
    let src = harness(dir.path());
    let out = dir.path().join("p");
    let mut args: Vec<String> = vec![
        "assist".into(),
        "discover".into(),
        src.display().to_string(),
    ];
    args.extend(["--out".into(), out.display().to_string()]);
    args.extend(model_flags(&s));
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("the model's answer is not a usable ownership proposal: no JSON object in it; nothing was written"),
        "{err}"
    );
    assert!(
        err.contains("I think the harness is fine"),
        "the answer is quoted: {err}"
    );
    assert!(!out.join("ownership.toml").exists() && !out.join("proposal.json").exists());
    // The exchange itself is kept: what the model said can be read and replayed.
    let rec: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("exchanges.json")).unwrap())
            .unwrap();
    assert_eq!(rec["exchanges"].as_array().unwrap().len(), 1);
    // The same for probe design.
    let o = run(&{
        let mut a: Vec<String> = vec![
            "assist".into(),
            "probes".into(),
            src.display().to_string(),
            "--out".into(),
            dir.path().join("q").display().to_string(),
            "--replay".into(),
        ];
        a.push(out.join("exchanges.json").display().to_string());
        a
    });
    assert_eq!(
        o.status.code(),
        Some(2),
        "a discovery recording does not answer probe design"
    );
}

fn audit_dir(dir: &Path) -> PathBuf {
    let audit = dir.join("audit");
    std::fs::create_dir_all(&audit).unwrap();
    let doc = json!({
        "cards": [{"target": "toy", "licensed_claim": "none", "ownership": {"status": "fail", "evidence": "the harness owns dedup"}}],
        "comtrade": {"probes": [{"task": "T3_duplicates", "kind": "fabricated", "target_score": 0.987, "truth": 0.0}]},
    });
    std::fs::write(
        audit.join("audit.json"),
        serde_json::to_string_pretty(&doc).unwrap(),
    )
    .unwrap();
    audit
}

#[test]
fn a_narration_with_an_invented_number_is_rejected_by_the_guard() {
    let dir = tempfile::tempdir().unwrap();
    let audit = audit_dir(dir.path());
    let s = server(Mode::Invent);
    let mut args: Vec<String> = vec![
        "assist".into(),
        "narrate".into(),
        audit.display().to_string(),
    ];
    args.extend(model_flags(&s));
    let o = run(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("the narration is rejected: number guard failed: 1 of 1 numbers"),
        "{err}"
    );
    assert!(
        err.contains("0.4242") && err.contains("/comtrade/probes/0/target_score"),
        "{err}"
    );
    let out = audit.join("narration");
    assert!(!out.join("narration.md").exists());
    assert!(
        std::fs::read_to_string(out.join("narration.rejected.md"))
            .unwrap()
            .contains("0.4242")
    );
    let guard: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("guard.json")).unwrap()).unwrap();
    assert_eq!(guard["violations"].as_array().unwrap().len(), 1);

    // The faithful narration passes, the figure checked at its tagged path.
    let s = server(Mode::Good);
    let out = dir.path().join("good");
    let mut args: Vec<String> = vec![
        "assist".into(),
        "narrate".into(),
        audit.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(model_flags(&s));
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let prose = std::fs::read_to_string(out.join("narration.md")).unwrap();
    assert!(
        prose.contains("0.987<!-- ba:/comtrade/probes/0/target_score -->"),
        "{prose}"
    );
    let guard: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("guard.json")).unwrap()).unwrap();
    assert_eq!(
        (guard["checked"].as_u64(), guard["tagged"].as_u64()),
        (Some(1), Some(1))
    );
    // The facts the model saw were pointer = value lines of the document.
    let req = &s.requests()[0].body;
    assert!(content(req, 1).contains("/comtrade/probes/0/target_score = 0.987"));
    // Replayed, the narration is the same.
    let again = dir.path().join("again");
    let o = benchaudit(&[
        "assist",
        "narrate",
        &audit.display().to_string(),
        "--out",
        &again.display().to_string(),
        "--replay",
        &out.join("exchanges.json").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(again.join("narration.md")).unwrap(),
        prose
    );
}

#[test]
fn eval_scores_each_layer_against_the_shipped_references_and_replays_identically() {
    let s = server(Mode::Good);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let mut args: Vec<String> = vec![
        "assist".into(),
        "eval".into(),
        "--slice".into(),
        "small".into(),
        "--runs".into(),
        "2".into(),
        "--root".into(),
        root().display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(model_flags(&s));
    let o = run(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let eval: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("eval.json")).unwrap()).unwrap();
    // Discovery on L0 and L1: 10 decisions; seed 1 misclassifies L1 retry.
    let d = &eval["discover"][0];
    assert_eq!(
        (d["of"].as_u64(), d["worst"].as_u64(), d["mean"].as_f64()),
        (Some(10), Some(9), Some(9.5)),
        "{d}"
    );
    assert_eq!(
        d["runs"][1]["misses"],
        json!(["L1 retry: proposed harness, declared model"])
    );
    // Probe design on F1: the kind right in both runs; 4 of 4, then 3 of 4 human probes.
    let p = &eval["probes"][0];
    assert_eq!(
        (p["of"].as_u64(), p["worst"].as_u64(), p["mean"].as_f64()),
        (Some(4), Some(3), Some(3.5)),
        "{p}"
    );
    assert_eq!(eval["kind_right"][0][1], json!(2));
    assert_eq!(p["runs"][0]["beyond"], json!(["other_task", "unicode_ids"]));
    assert_eq!(
        p["runs"][0]["runnable"],
        json!(5),
        "nfc_forms is no forgery of the records family"
    );
    // Narration of the self-audit: the guard passes a faithful narration.
    let n = &eval["narrate"][0];
    assert_eq!(n["worst"], json!(1), "{n}");
    assert_eq!(
        (
            n["runs"][0]["checked"].as_u64(),
            n["runs"][0]["tagged"].as_u64()
        ),
        (Some(1), Some(1)),
        "a figure of the self-audit was quoted and checked at its path: {n}"
    );
    assert_eq!(s.requests().len(), 6, "3 layers x 2 runs");
    // Inspect's scorers are read from the installed package: unnamed, listed with the reason.
    assert_eq!(
        eval["skipped"],
        json!([{
            "reference": "Inspect match and includes scorers (small slice: their definitions)",
            "why": "INSPECT_SCORER_DIR is not set (it names a source that is not in the repository)"
        }]),
    );
    let stdout = text(&o.stdout);
    assert!(stdout.contains("discover  ComtradeBench production harness function at L0 and L1: decisions right, mean 9.50 of 10, worst run 9 of 10"), "{stdout}");
    no_key_under(&out);

    // Replay: the same eval.json without the model.
    let again = dir.path().join("again");
    let o = benchaudit(&[
        "assist",
        "eval",
        "--slice",
        "small",
        "--runs",
        "2",
        "--root",
        &root().display().to_string(),
        "--out",
        &again.display().to_string(),
        "--replay",
        &out.join("exchanges.json").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(s.requests().len(), 6);
    assert_eq!(
        std::fs::read(out.join("eval.json")).unwrap(),
        std::fs::read(again.join("eval.json")).unwrap()
    );
}

#[test]
fn a_proposal_changes_no_card_until_a_person_confirms_it() {
    let s = server(Mode::Good);
    let dir = tempfile::tempdir().unwrap();
    let src = harness(dir.path());
    let before = std::fs::read(&src).unwrap();
    let out = dir.path().join("p");
    let mut args: Vec<String> = vec![
        "assist".into(),
        "discover".into(),
        src.display().to_string(),
        "--levels".into(),
        "L2".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(model_flags(&s));
    assert_eq!(run(&args).status.code(), Some(0));
    assert_eq!(
        std::fs::read(&src).unwrap(),
        before,
        "the harness is not touched"
    );
    let proposal = std::fs::read_to_string(out.join("ownership.toml")).unwrap();
    let id = toml::from_str::<toml::Table>(&proposal).unwrap()["ownership"]["proposed"]
        .as_str()
        .unwrap()
        .to_string();

    // Without an ownership map the card's ownership cell is not probed.
    let target_dir = dir.path().join("target");
    std::fs::create_dir_all(&target_dir).unwrap();
    let manifest = target_dir.join("target.toml");
    std::fs::write(&manifest, "name = \"toy\"\n").unwrap();
    let bare = audit_external(&ExternalTarget::load(&manifest).unwrap(), &[0], None).unwrap();
    assert_eq!(bare.card.ownership.status, Status::NotProbed);

    // The proposal pasted as is: refused, so no card can rest on it.
    std::fs::write(&manifest, format!("name = \"toy\"\n{proposal}")).unwrap();
    let err = ExternalTarget::load(&manifest).unwrap_err();
    assert!(
        err.contains("is a proposal") && err.contains("rename `proposed` to `confirmed_from`"),
        "{err}"
    );
    let o = benchaudit(&[
        "audit",
        "--seeds",
        "0",
        "--target",
        &manifest.display().to_string(),
        "--out",
        &dir.path().join("audit").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));

    // Confirmed by a person: the declaration counts, and the card names the proposal.
    std::fs::write(
        &manifest,
        format!(
            "name = \"toy\"\n{}",
            proposal.replace("proposed = ", "confirmed_from = ")
        ),
    )
    .unwrap();
    let target = ExternalTarget::load(&manifest).unwrap();
    let declared = target.ownership_hook().unwrap().unwrap();
    assert_eq!(declared.confirmed_from.as_deref(), Some(id.as_str()));
    let confirmed = audit_external(&target, &[0], None).unwrap();
    let evidence = &confirmed.card.ownership.evidence;
    assert!(
        evidence.contains("declared: the model owns every claimed decision at L2"),
        "{evidence}"
    );
    assert!(
        evidence.contains(&format!("ownership map confirmed from the proposal {id}")),
        "{evidence}"
    );
    assert_ne!(
        bare.card.ownership.evidence,
        confirmed.card.ownership.evidence
    );
}

#[test]
fn a_proposed_battery_runs_as_a_step_of_its_own_and_changes_no_claim_by_itself() {
    // `assist probes` writes probes.toml; `audit --battery` refuses it until a person confirms
    // it, then runs its runnable probes (and the anchor) on a target through the
    // external-target protocol: ordinary measured cells, the proposal named. On a sound scorer
    // the partial battery separates what it runs and yet licenses no more than without a
    // criterion measurement.
    let s = server(Mode::Good);
    let dir = tempfile::tempdir().unwrap();
    let src = harness(dir.path());
    let out = dir.path().join("p");
    let mut args: Vec<String> = vec![
        "assist".into(),
        "probes".into(),
        src.display().to_string(),
        "--family".into(),
        "records".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(model_flags(&s));
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let probes = out.join("probes.toml");
    let id = toml::from_str::<toml::Table>(&std::fs::read_to_string(&probes).unwrap()).unwrap()
        ["proposed"]
        .as_str()
        .unwrap()
        .to_string();
    let manifest = root().join("crates/audit/tests/fixtures/measured/target.toml");
    let audit_out = dir.path().join("audit");
    let audit = |battery: &Path| {
        benchaudit(&[
            "audit",
            "--seeds",
            "0",
            "--target",
            &manifest.display().to_string(),
            "--battery",
            &battery.display().to_string(),
            "--out",
            &audit_out.display().to_string(),
        ])
    };
    // As written, a proposal: refused before anything runs.
    let o = audit(&probes);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("rename `proposed` to `confirmed_from`"),
        "{}",
        text(&o.stderr)
    );
    assert!(!audit_out.join("card.json").exists());
    // Confirmed by a person.
    let confirmed = dir.path().join("confirmed.toml");
    std::fs::write(
        &confirmed,
        std::fs::read_to_string(&probes)
            .unwrap()
            .replace("proposed = ", "confirmed_from = "),
    )
    .unwrap();
    let o = audit(&confirmed);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(s.requests().len(), 1, "running the battery asks no model");
    let audit: Value =
        serde_json::from_str(&std::fs::read_to_string(audit_out.join("audit.json")).unwrap())
            .unwrap();
    let e = &audit["external"][0];
    assert_eq!(e["battery"]["id"], json!(id));
    assert_eq!(
        e["battery"]["run"],
        json!([
            "empty",
            "fabricated",
            "contradictory_report",
            "wrong_task_id",
            "duplicate_laden"
        ])
    );
    assert_eq!(e["battery"]["described"], json!(["unicode_ids"]));
    let run: Vec<&str> = (e["probes"].as_array().unwrap().iter())
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert!(run.contains(&"fabricated") && run.contains(&"correct"));
    assert!(!run.contains(&"totals_leaked"), "{run:?}");
    assert_eq!(e["card"]["criterion_sensitivity"]["status"], "not_probed");
    assert_ne!(e["card"]["licensed_claim"], "model_capability");
}
