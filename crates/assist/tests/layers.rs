//! The layers' parsing and checking without a model: what a model's answer becomes, which
//! citations hold, which facts a narration is offered, and that the shipped references are
//! complete (every human probe has rubric keywords, every reference a known level).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use benchaudit_agents::Owner;
use benchaudit_assist::discover::{self, Ask};
use benchaudit_assist::eval::References;
use benchaudit_assist::narrate;
use benchaudit_assist::probes;
use benchaudit_assist::source::Source;
use benchaudit_audit::external::ProbeFamily;
use benchaudit_audit::target::ScorerKind;
use serde_json::json;

fn source(dir: &std::path::Path, lines: usize, range: Option<&str>) -> (Source, Vec<String>) {
    let f = dir.join("h.py");
    let text: Vec<String> = (1..=lines).map(|i| format!("line {i}")).collect();
    std::fs::write(&f, text.join("\n")).unwrap();
    let spec = format!("{}{}", f.display(), range.unwrap_or(""));
    (
        Source::load(std::slice::from_ref(&spec), 1_000_000).unwrap(),
        vec![spec],
    )
}

fn ask() -> Ask {
    Ask {
        levels: vec!["L0".into()],
        scored_level: "L0".into(),
        claimed: discover::standard_decisions(),
    }
}

#[test]
fn a_line_range_shows_its_original_numbers_and_bounds_the_citations() {
    let dir = tempfile::tempdir().unwrap();
    let (s, _) = source(dir.path(), 50, Some(":10-20"));
    let shown = s.render();
    assert!(
        shown.contains("(lines 10-20 of 50)") && shown.contains("\n10| line 10\n"),
        "{shown}"
    );
    assert!(!shown.contains("| line 9\n") && !shown.contains("| line 21\n"));
    assert!(s.check_citation("h.py", 10, 20).is_ok());
    assert!(
        s.check_citation("h.py", 9, 12)
            .unwrap_err()
            .contains("outside the lines shown (10-20)")
    );
    assert!(
        s.check_citation("other.py", 10, 11)
            .unwrap_err()
            .contains("no file `other.py`")
    );
    assert!(s.check_citation("h.py", 15, 12).is_err());
    // Bounds on input.
    let spec = vec![format!("{}:60-70", dir.path().join("h.py").display())];
    assert!(
        Source::load(&spec, 1_000_000)
            .unwrap_err()
            .to_string()
            .contains("the file has 50 lines")
    );
    let spec = vec![dir.path().join("h.py").display().to_string()];
    let e = Source::load(&spec, 100).unwrap_err().to_string();
    assert!(e.contains("more than the bound of 100"), "{e}");
}

#[test]
fn discovery_reads_lenient_answers_and_flags_what_a_person_must_check() {
    let dir = tempfile::tempdir().unwrap();
    let (s, names) = source(dir.path(), 30, None);
    let answer = json!({"decisions": [
        {"level": "L0", "decision": "Retry", "owner": "Harness", "lines": [{"file": "h.py", "lines": [3, 5]}]},
        {"level": "L0", "decision": "dedup", "owner": "model", "lines": "h.py:7-8"},
        {"level": "L0", "decision": "dedup", "owner": "harness", "lines": "h.py:7-8"},
        {"level": "L0", "decision": "totals filter", "owner": "scaffold", "citations": [{"file": "h.py", "start": 40, "end": 41}]},
        {"level": "L9", "decision": "pagination", "owner": "model"},
        {"level": "L0", "decision": "submission", "owner": "nobody"}
    ]})
    .to_string();
    let p = discover::parse(
        &format!("Sure!\n{answer}\nDone."),
        &s,
        &ask(),
        "x:y",
        &names,
    )
    .unwrap();
    let got: Vec<(&str, &str, Owner)> = p
        .entries
        .iter()
        .map(|e| (e.level.as_str(), e.decision.as_str(), e.owner))
        .collect();
    assert_eq!(
        got,
        vec![
            ("L0", "retry", Owner::Harness),
            ("L0", "dedup", Owner::Model),
            ("L0", "totals_filter", Owner::Harness)
        ]
    );
    assert_eq!(p.bad_citations(), 1);
    let flags = p.flags.join("\n");
    for expected in [
        "L0 dedup answered twice: the first answer is kept",
        "L0 totals_filter: citation h.py:40-41 does not exist",
        "level `L9`, which was not asked about, was dropped",
        "1 unreadable entries were dropped",
        "L0 pagination: not answered",
        "L0 submission: not answered",
    ] {
        assert!(flags.contains(expected), "missing `{expected}` in\n{flags}");
    }
    // The same answer gives the same id; another answer another.
    let again = discover::parse(&answer, &s, &ask(), "x:y", &names).unwrap();
    assert_ne!(p.id, again.id);
    assert_eq!(
        again.id,
        discover::parse(&answer, &s, &ask(), "x:y", &names)
            .unwrap()
            .id
    );
    // The TOML is the manifest's table, marked proposed.
    let t: toml::Table = toml::from_str(&p.to_toml()).unwrap();
    assert_eq!(t["ownership"]["proposed"].as_str(), Some(p.id.as_str()));
    assert_eq!(t["ownership"]["entries"].as_array().unwrap().len(), 3);
}

#[test]
fn discovery_refuses_answers_without_a_usable_entry() {
    let dir = tempfile::tempdir().unwrap();
    let (s, names) = source(dir.path(), 5, None);
    for (answer, why) in [
        ("The harness owns everything.", "no JSON object in it"),
        ("{\"map\": []}", "no `decisions` array"),
        (
            "{\"decisions\": [{\"level\": \"L0\", \"decision\": \"retry\", \"owner\": \"?\"}]}",
            "none of its 1 entries",
        ),
    ] {
        let e = discover::parse(answer, &s, &ask(), "x:y", &names)
            .unwrap_err()
            .to_string();
        assert!(e.contains(why) && e.contains("nothing was written"), "{e}");
    }
}

#[test]
fn probe_design_keeps_only_forgeries_the_family_builds() {
    let answer = json!({"scorer_kind": "Specification-based", "why": "schema", "probes": [
        {"name": "bad_name", "description": "call a function that does not exist", "forgery": "wrong_name"},
        {"name": "swap", "description": "swap two arguments", "forgery": "swap_args"},
        {"name": "", "description": "nameless"},
        {"name": "nothing", "description": "no call", "forgery": null}
    ]})
    .to_string();
    let p = probes::parse(&answer, ProbeFamily::Calls, "x:y", &["c.py".into()]).unwrap();
    assert_eq!(p.scorer_kind, ScorerKind::Specification);
    assert_eq!(p.battery.len(), 3);
    assert_eq!(p.runnable(), 1);
    assert!(
        p.flags[0].contains("`swap_args` is not a forgery of the calls family"),
        "{:?}",
        p.flags
    );
    let t: toml::Table = toml::from_str(&p.to_toml()).unwrap();
    assert_eq!(t["scorer_kind"].as_str(), Some("specification"));
    assert_eq!(t["battery"].as_array().unwrap().len(), 3);
    let bad = json!({"scorer_kind": "vibes", "probes": [{"name": "a"}]}).to_string();
    assert!(
        probes::parse(&bad, ProbeFamily::Records, "x:y", &[])
            .unwrap_err()
            .to_string()
            .contains("not shape, specification or outcome")
    );
}

#[test]
fn narration_facts_put_verdicts_and_figures_first_and_the_guard_checks_tags() {
    let long = "x".repeat(200);
    let doc = json!({"cards": [{"status": "fail", "evidence": long}], "zeta": {"score": 0.987, "name": "n"}});
    let f = narrate::facts(&doc, 10_000);
    assert_eq!(f[0], "/cards/0/status = \"fail\"");
    assert_eq!(f[1], "/zeta/score = 0.987");
    assert!(f[2].starts_with("/cards/0/evidence = "));
    let small = narrate::facts(&doc, 62);
    assert_eq!(
        small,
        vec![
            "/cards/0/status = \"fail\"",
            "/zeta/score = 0.987",
            "/zeta/name = \"n\""
        ]
    );
    assert!(narrate::judge("It scored 0.987<!-- ba:/zeta/score -->.".into(), &doc).passed());
    assert!(!narrate::judge("It scored 0.987<!-- ba:/cards/0/status -->.".into(), &doc).passed());
    assert!(!narrate::judge("It scored 0.99 of 3 runs.".into(), &doc).passed());
}

#[test]
fn the_shipped_references_are_complete() {
    let r = References::shipped().unwrap();
    assert!(
        r.discover.iter().any(|d| d.levels == ["L0", "L1", "L2"]),
        "the 15 decisions of A.12"
    );
    let full: Vec<&str> = r.probes.iter().map(|p| p.name.as_str()).collect();
    for name in [
        "legacy judge",
        "ground-truth F1",
        "BFCL AST checker",
        "Inspect match and includes scorers",
        "Inspect choice scorer",
    ] {
        assert!(full.contains(&name), "{name}");
    }
    for p in &r.probes {
        assert_eq!(p.battery.len(), 4, "{}", p.name);
        // The Inspect scorers' batteries are forgeries the answer family builds (the audit's
        // own probes), so a proposal naming them runs as data.
        if p.family == ProbeFamily::Answers {
            let built = p.family.forgeries();
            for b in &p.battery {
                assert!(built.contains(&b.as_str()), "{}: {b} is not built", p.name);
            }
        }
    }
}
