//! The main job end to end: files written, checks pass, and the number guard rejects a
//! doctored copy of the card.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::{Value, json};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchaudit"))
}

#[test]
fn audit_writes_the_card_and_guards_its_own_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("audit");
    let o = bin()
        .args(["audit", "--seeds", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("licensed claim:        self-report compliance"),
        "{stdout}"
    );
    assert!(
        stdout.contains("licensed claim:        model capability"),
        "{stdout}"
    );
    assert!(stdout.contains("oracle checks: 11/11 pass"), "{stdout}");
    // The repaired claim names the tasks it holds on (issue 11).
    assert!(
        stdout.contains("T1, T2, T7 excluded: scale-bound"),
        "{stdout}"
    );
    // The card's L1 row: the oracle's own skip channel is degenerate (issue 11).
    let md = std::fs::read_to_string(out.join("card.md")).unwrap();
    assert!(
        md.lines().any(|l| l.starts_with("| non-degeneracy at L1: oracle | **fail**: oracle at L1: degenerate (retry: skip chosen 0 of 3).")),
        "{md}"
    );
    // An aggregate over no episodes reads "no data", never 0.000: the oracle never skips, so
    // E[Y | skip] has no episode.
    assert!(
        md.contains("| oracle | L1 | retry | skip chosen 0 of 3 | no data | 1.000 | no |"),
        "{md}"
    );
    how_to_read_defines_every_term(&md);
    l0_rows_do_not_contradict_each_other(&md, &out.join("audit.json"));
    assert!(
        md.contains("Target audited: ComtradeBench. ComtradeBench is benchaudit's own implementation of the benchmark (a self-audit), played by 8 players (the oracle and rule stand-ins that each get one decision wrong), seed 2 per cell. No model is called"),
        "{md}"
    );
    for f in ["card.md", "card.json", "audit.json", "report.html"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    for fig in [
        "judge_probe",
        "joint_2x2",
        "scaffolding_spectrum",
        "reliability_spectrum",
    ] {
        let png = std::fs::read(out.join("figures").join(format!("{fig}.png"))).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{fig}");
        assert!(out.join("figures").join(format!("{fig}.svg")).is_file());
    }
    let cards: Value =
        serde_json::from_slice(&std::fs::read(out.join("card.json")).unwrap()).unwrap();
    assert_eq!(
        cards["cards"][0]["licensed_claim"],
        "self_report_compliance"
    );
    assert_eq!(cards["cards"][1]["licensed_claim"], "model_capability");

    let guard = |file: &std::path::Path| {
        bin()
            .arg("guard")
            .arg(file)
            .arg("--against")
            .arg(out.join("audit.json"))
            .output()
            .unwrap()
    };
    assert!(guard(&out.join("card.md")).status.success());
    assert!(guard(&out.join("report.html")).status.success());
    let card = std::fs::read_to_string(out.join("card.md")).unwrap();
    assert!(card.contains("| 0.987 and 0.987 | 0.987 and 0.987 |"));
    let doctored = dir.path().join("doctored.md");
    std::fs::write(
        &doctored,
        card.replace(
            "| 0.987 and 0.987 | 0.987 and 0.987 |",
            "| 0.987 and 0.987 | 0.973 and 0.987 |",
        ),
    )
    .unwrap();
    let o = guard(&doctored);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0.973 is not in"));
}

/// The card's "how to read" block (issue 40): each term of the card's rows is defined before
/// the table, and the repaired card's fail rows beside its claim are explained under it.
fn how_to_read_defines_every_term(md: &str) {
    let section = |heading: &str| {
        let start = md
            .find(heading)
            .unwrap_or_else(|| panic!("no {heading}:\n{md}"));
        let rest = &md[start + heading.len()..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    let read = section("## How to read this card");
    let cards_at = md.find("## Cards").unwrap();
    assert!(
        md.find("## How to read this card").unwrap() < cards_at,
        "{md}"
    );
    for term in [
        "**Criterion sensitivity.**",
        "j(correct) > j(x) + ε",
        "ε its resolution",
        "**Ownership, declared vs measured.**",
        "declares",
        "measures",
        "**Non-degeneracy.**",
        "Var(A) > 0",
        "E[Y | deviant] ≠ E[Y | not]",
        "**Replay.**",
        "**The lattice.**",
        "model capability",
        "model–scaffold system performance",
        "specification compliance",
        "self-report compliance",
        "scale-bound",
        "**Not probed.**",
        "never counts as a pass",
    ] {
        assert!(read.contains(term), "how to read lacks {term}:\n{read}");
    }
    // The repaired card licenses model capability beside failing non-degeneracy and
    // interface rows: the note under the table says why they do not gate the claim.
    let cards = section("## Cards");
    assert!(
        cards.contains("**A non-degeneracy row that fails** judges one player's own choices"),
        "{cards}"
    );
    assert!(
        cards.contains(
            "**An interface-confound row that fails** names a defect of the tool interface"
        ),
        "{cards}"
    );
}

/// The L0 rows agree (issue 40): where the harness owns a decision at a level (as measured in
/// audit.json), no per-player row credits the player with a choice or a verdict, and the
/// oracle's L0 score is said to be the harness's.
fn l0_rows_do_not_contradict_each_other(md: &str, audit_json: &std::path::Path) {
    let audit: Value = serde_json::from_slice(&std::fs::read(audit_json).unwrap()).unwrap();
    let harness: Vec<(String, String)> = audit["comtrade"]["ownership"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["measured"] == "harness")
        .map(|c| {
            (
                c["level"].as_str().unwrap().to_string(),
                c["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        harness.iter().any(|(l, d)| l == "L0" && d == "pagination"),
        "{harness:?}"
    );
    let mut checked = 0;
    let start = md.find("Non-degeneracy per player").unwrap();
    let table = &md[start..start + md[start..].find("\n## ").unwrap()];
    for line in table.lines().filter(|l| l.starts_with("| oracle | L")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let (level, decision) = (cells[1], cells[2]);
        if harness.iter().any(|(l, d)| l == level && d == decision) {
            assert!(!line.contains(" chosen "), "credits the player: {line}");
            assert!(line.ends_with("| not probed (harness-owned) |"), "{line}");
            checked += 1;
        } else {
            assert!(line.contains(" chosen "), "{line}");
        }
    }
    // Every decision at L0, and all but retry at L1.
    assert_eq!(checked, 9, "{md}");
    assert!(
        md.contains("| non-degeneracy at L0: oracle | **not probed**"),
        "{md}"
    );
    assert!(
        md.lines().any(|l| l.starts_with("The oracle's mean at L0 and L1 is 0.")
            && l.contains(" and not a perfect score because the harness decides there: its pagination reads each page once")),
        "{md}"
    );
}

#[test]
fn audit_includes_external_targets() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/fixtures");
    let o = bin()
        .args(["audit", "--seeds", "1", "--out"])
        .arg(dir.path())
        .arg("--target")
        .arg(fixtures.join("toy/target.toml"))
        .arg("--target")
        .arg(fixtures.join("partial/target.toml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(
        stdout.contains("toy outcome benchmark\n  criterion sensitivity: pass"),
        "{stdout}"
    );
    assert!(stdout.contains("partial benchmark\n  criterion sensitivity: not probed\n  ownership:             not probed"), "{stdout}");
    // The card's heading names every target audited, not ComtradeBench alone.
    let md = std::fs::read_to_string(dir.path().join("card.md")).unwrap();
    assert!(
        md.contains(
            "Targets audited: ComtradeBench, toy outcome benchmark, partial benchmark. ComtradeBench is benchaudit's own implementation"
        ),
        "{md}"
    );
    let bad = bin()
        .args(["audit", "--out"])
        .arg(dir.path())
        .args(["--target", "/nonexistent.toml"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_function_call_target_whose_checker_fails_is_not_probed_on_the_card() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("target.toml");
    std::fs::write(
        &manifest,
        "name = \"calls bench\"\nscorer_kind = \"specification\"\nprobes = \"calls\"\n[calls]\ncategories = [\"simple_python\"]\n[hooks]\nentries = [\"sh\", \"-c\", \"cat >/dev/null; echo 'ModuleNotFoundError: bfcl_eval' >&2; exit 4\"]\nscore_batch = [\"sh\", \"-c\", \"exit 4\"]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = bin()
        .args(["audit", "--seeds", "1", "--out"])
        .arg(&out)
        .arg("--target")
        .arg(&manifest)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}");
    assert!(
        stdout.contains("calls bench: AST track\n  criterion sensitivity: not probed"),
        "{stdout}"
    );
    let md = std::fs::read_to_string(out.join("card.md")).unwrap();
    assert!(md.contains("ModuleNotFoundError: bfcl_eval"), "{md}");
    let bad = bin()
        .args(["audit", "--seeds", "1", "--out"])
        .arg(dir.path().join("bad"))
        .args(["--target", "no_such_target"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("targets/no_such_target/target.toml"));
}

#[test]
fn a_target_named_from_its_own_folder_audits_like_dot_slash_and_the_absolute_path() {
    // Hook paths resolve against the manifest's folder: `--target target.toml` run from that
    // folder (parent "") must find `hooks.py` exactly as `./target.toml` and the absolute path do.
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("toy");
    std::fs::create_dir(&folder).unwrap();
    let fixtures =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/fixtures/toy");
    for f in ["hooks.py", "target.toml"] {
        std::fs::copy(fixtures.join(f), folder.join(f)).unwrap();
    }
    let external = |target: &std::path::Path, out: &str| -> Value {
        let out = dir.path().join(out);
        let o = bin()
            .current_dir(&folder)
            .args(["audit", "--seeds", "0", "--out"])
            .arg(&out)
            .arg("--target")
            .arg(target)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("audit.json")).unwrap())
                .unwrap();
        doc["external"].clone()
    };
    let bare = external(std::path::Path::new("target.toml"), "bare");
    assert_eq!(
        bare[0]["card"]["criterion_sensitivity"]["status"], "pass",
        "the hooks ran: {bare}"
    );
    assert_eq!(bare, external(std::path::Path::new("./target.toml"), "dot"));
    assert_eq!(bare, external(&folder.join("target.toml"), "absolute"));
}

#[test]
fn every_target_s_card_passes_its_own_guard_and_the_lattice_reads_measurements() {
    // A flawed scorer declared `outcome` and a sound one with a measured ownership map: the
    // card states every number it renders for both (the guard passes), the flawed one licenses
    // at most self-report compliance with its declared kind shown overridden, and the measured
    // one reaches model capability.
    let dir = tempfile::tempdir().unwrap();
    let fixtures =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/fixtures");
    let out = dir.path().join("out");
    let o = bin()
        .args(["audit", "--seeds", "1", "--json", "--out"])
        .arg(&out)
        .arg("--target")
        .arg(fixtures.join("flawed/target.toml"))
        .arg("--target")
        .arg(fixtures.join("measured/target.toml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["number_guard"]["card.md"]["violations"], json!([]));
    assert_eq!(
        summary["number_guard"]["report.html"]["violations"],
        json!([])
    );
    let cards: Value =
        serde_json::from_slice(&std::fs::read(out.join("card.json")).unwrap()).unwrap();
    let card = |name: &str| {
        cards["cards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["target"] == name)
            .unwrap()
            .clone()
    };
    let flawed = card("toy flawed benchmark");
    assert_eq!(flawed["licensed_claim"], "self_report_compliance");
    assert_eq!(flawed["scorer_kind"], "shape");
    assert_eq!(flawed["scorer_kind_override"]["declared"], "outcome");
    assert_eq!(flawed["ownership"]["status"], "pass", "{flawed}");
    let measured = card("toy measured benchmark");
    assert_eq!(measured["licensed_claim"], "model_capability", "{measured}");
    assert!(measured.get("to_raise_the_claim").is_none());
    let md = std::fs::read_to_string(out.join("card.md")).unwrap();
    assert!(md.contains("declared outcome, overridden"), "{md}");
    // The flawed scorer's violation count is stated, and stated as the JSON holds it.
    let audit: Value =
        serde_json::from_slice(&std::fs::read(out.join("audit.json")).unwrap()).unwrap();
    let n = audit["external"][0]["criterion_violations"]
        .as_u64()
        .unwrap();
    assert!(n > 0);
    assert!(md.contains(&format!("{n} tie or inversion")), "{md}");
}

#[test]
fn a_failing_hook_is_named_on_the_console_not_only_on_the_card() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("target.toml");
    std::fs::write(
        &manifest,
        "name = \"crashing bench\"\n[hooks]\nregistry = [\"sh\", \"-c\", \"cat >/dev/null; echo 'Traceback: line 42, KeyError' >&2; exit 3\"]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = bin()
        .args(["audit", "--seeds", "1", "--out"])
        .arg(&out)
        .arg("--target")
        .arg(&manifest)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "the hook's numbers are quoted, not figures: {stdout}"
    );
    assert!(
        stdout.contains("crashing bench\n  criterion sensitivity: not probed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  not probed because:    the registry hook failed: `")
            && stdout.contains("line 42, KeyError"),
        "{stdout}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn an_audit_stopped_by_a_signal_leaves_no_hook_running() {
    // The hook writes its pid, then sleeps far past the test: only the audit's signal
    // handling can end it (it runs in its own process group, out of reach of the signal).
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("hook.pid");
    let manifest = dir.path().join("target.toml");
    std::fs::write(
        &manifest,
        format!(
            "name = \"slow bench\"\n[hooks]\nregistry = [\"sh\", \"-c\", \"echo $$ > {}.tmp && mv {}.tmp {} && exec sleep 600\"]\n",
            pidfile.display(),
            pidfile.display(),
            pidfile.display()
        ),
    )
    .unwrap();
    let audit = bin()
        .args(["audit", "--seeds", "1", "--out"])
        .arg(dir.path().join("out"))
        .arg("--target")
        .arg(&manifest)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let pid = loop {
        if let Ok(text) = std::fs::read_to_string(&pidfile) {
            break text.trim().parse::<u32>().unwrap();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "the hook never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false)
    };
    assert!(alive(pid));
    let status = Command::new("kill")
        .args(["-TERM", &audit.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = audit.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "128 + SIGTERM");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("1 running hook call(s) killed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gone = std::time::Instant::now();
    while alive(pid) {
        assert!(
            gone.elapsed() < std::time::Duration::from_secs(10),
            "the hook (pid {pid}) outlived the audit"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_battery_given_as_data_runs_alone_fails_scorers_and_cannot_pass_them() {
    // `--battery`: the proposed forgeries and the anchor run, nothing else. On a sound scorer
    // a partial battery separates every forgery it runs, yet cannot license the pass (the card
    // says what it left out); the whole battery given as data licenses what the default does;
    // on a flawed scorer a proposed forgery that passes fails it; a battery of another family
    // stops the command before any hook runs.
    let dir = tempfile::tempdir().unwrap();
    let fixtures =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/fixtures");
    let battery = |name: &str, family: &str, forgeries: &[&str]| {
        let mut text = format!(
            "confirmed_from = \"assist-probes-5e6f\"\nscorer_kind = \"outcome\"\nprobes = \"{family}\"\n"
        );
        for f in forgeries {
            text.push_str(&format!(
                "\n[[battery]]\nname = \"p_{f}\"\nforgery = \"{f}\"\ndescription = \"d\"\n"
            ));
        }
        text.push_str(
            "\n[[battery]]\nname = \"by_hand\"\ndescription = \"no forgery builds it\"\n",
        );
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let audit = |target: &str, battery: &std::path::Path, out: &str| {
        let out = dir.path().join(out);
        let o = bin()
            .args(["audit", "--seeds", "1", "--json", "--out"])
            .arg(&out)
            .arg("--target")
            .arg(fixtures.join(target))
            .arg("--battery")
            .arg(battery)
            .output()
            .unwrap();
        (o, out)
    };
    let card = |out: &std::path::Path| -> Value {
        let cards: Value =
            serde_json::from_slice(&std::fs::read(out.join("card.json")).unwrap()).unwrap();
        cards["cards"].as_array().unwrap().last().unwrap().clone()
    };
    let external = |out: &std::path::Path| -> Value {
        let audit: Value =
            serde_json::from_slice(&std::fs::read(out.join("audit.json")).unwrap()).unwrap();
        audit["external"][0].clone()
    };

    let partial = battery("partial.toml", "records", &["empty", "fabricated"]);
    let (o, out) = audit("measured/target.toml", &partial, "partial");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["number_guard"]["card.md"]["violations"], json!([]));
    let measured = card(&out);
    assert_eq!(measured["target"], "toy measured benchmark");
    assert_eq!(
        measured["criterion_sensitivity"]["status"], "not_probed",
        "{measured}"
    );
    let why = measured["criterion_sensitivity"]["evidence"]
        .as_str()
        .unwrap();
    assert!(why.contains("leaves out duplicate_laden"), "{why}");
    assert!(
        why.contains("partial.toml (confirmed from the proposal assist-probes-5e6f)"),
        "{why}"
    );
    assert_ne!(measured["licensed_claim"], "model_capability");
    let e = external(&out);
    assert_eq!(e["battery"]["run"], json!(["empty", "fabricated"]));
    assert_eq!(e["battery"]["described"], json!(["by_hand"]));
    let mut kinds: Vec<&str> = (e["probes"].as_array().unwrap().iter())
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds, ["correct", "empty", "fabricated"]);
    let md = std::fs::read_to_string(out.join("card.md")).unwrap();
    assert!(md.contains("Battery given as data"), "{md}");

    let every: Vec<&str> = [
        "empty",
        "fabricated",
        "duplicate_laden",
        "totals_leaked",
        "partial",
        "contradictory_report",
        "wrong_task_id",
        "wrong_query",
        "row_count_off",
        "contradicted_claim",
    ]
    .to_vec();
    let whole = battery("whole.toml", "records", &every);
    let (o, out) = audit("measured/target.toml", &whole, "whole");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(card(&out)["licensed_claim"], "model_capability");
    assert_eq!(external(&out)["battery"]["left_out"], json!([]));

    let (o, out) = audit("flawed/target.toml", &partial, "flawed");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let flawed = card(&out);
    assert_eq!(
        flawed["criterion_sensitivity"]["status"], "fail",
        "{flawed}"
    );
    assert_eq!(flawed["licensed_claim"], "self_report_compliance");

    let calls = battery("calls.toml", "calls", &["wrong_name"]);
    let (o, out) = audit("measured/target.toml", &calls, "other");
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("a battery for the calls family") && stderr.contains("probes records"),
        "{stderr}"
    );
    assert!(!out.join("card.json").exists());
}
