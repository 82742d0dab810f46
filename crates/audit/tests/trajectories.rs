//! The trajectory family through its hooks: a toy agent benchmark (fixtures/agents/hook.py)
//! for the verdicts and every failure mode, then τ² and AgentDojo through their released
//! packages (`targets/tau2/.venv`, `targets/agentdojo/.venv`, installed by each target's
//! setup.sh). Without a venv the tests that need it say so and return, unless
//! `BENCHAUDIT_REQUIRE_TAU2` / `BENCHAUDIT_REQUIRE_AGENTDOJO` is set (as the targets' ci.sh
//! set them), when they fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use benchaudit_audit::external::ExternalTarget;
use benchaudit_audit::trajectories::ownership::Owner;
use benchaudit_audit::trajectories::table::Forgery;
use benchaudit_audit::trajectories::{self, TrajectoriesAudit};
use benchaudit_audit::{Claim, Status};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A manifest in a fresh folder whose hooks run `argv` (absolute paths), probing `groups`.
fn manifest(dir: &Path, benchmark: &str, groups: &[&str], hook: &[String]) -> PathBuf {
    let argv = |name: &str| {
        let mut a: Vec<String> = hook.to_vec();
        a.insert(a.len().min(2), name.to_string());
        format!(
            "[{}]",
            a.iter()
                .map(|s| format!("{s:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let text = format!(
        "name = \"toy\"\nscorer_kind = \"outcome\"\nprobes = \"trajectories\"\n\n[trajectories]\nbenchmark = \"{benchmark}\"\ngroups = [{}]\nreplay = 2\n\n[hooks]\nunits = {}\nplay = {}\nintervene = {}\n",
        groups
            .iter()
            .map(|g| format!("{g:?}"))
            .collect::<Vec<_>>()
            .join(", "),
        argv("units"),
        argv("play"),
        argv("intervene"),
    );
    let path = dir.join("target.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn toy(mode: &str, groups: &[&str]) -> (tempfile::TempDir, TrajectoriesAudit) {
    toy_with(mode, groups, "")
}

/// The toy audited with `extra` appended to its manifest (extra hooks under `[hooks]`).
fn toy_with(mode: &str, groups: &[&str], extra: &str) -> (tempfile::TempDir, TrajectoriesAudit) {
    let dir = tempfile::tempdir().unwrap();
    let hook = repo().join("crates/audit/tests/fixtures/agents/hook.py");
    // python3 hook.py NAME MODE: the name goes after the script.
    let argv = vec![
        "python3".to_string(),
        hook.display().to_string(),
        mode.to_string(),
    ];
    let path = manifest(dir.path(), "tau2", groups, &argv);
    if !extra.is_empty() {
        let text = std::fs::read_to_string(&path).unwrap();
        let extra = extra.replace("HOOK", &format!("{:?}", hook.display().to_string()));
        std::fs::write(&path, format!("{text}{extra}")).unwrap();
    }
    let t = ExternalTarget::load(&path).unwrap();
    let config = t.trajectories_config(None, 1).unwrap();
    let a = trajectories::audit("toy", &t, &config);
    (dir, a)
}

#[test]
fn a_sound_toy_scorer_separates_and_sets_its_floor() {
    let (_d, a) = toy("sound", &["shop"]);
    assert!(a.failures.is_empty(), "{:?}", a.failures);
    let g = &a.groups[0];
    assert_eq!(g.units_probed, 3);
    assert_eq!(g.criterion.status, Status::Pass, "{}", g.criterion.evidence);
    assert_eq!((g.floor.passed, g.floor.played), (1, 3));
    assert_eq!(
        g.floor.units,
        ["0"],
        "task 0 asks for nothing the reward checks"
    );
    assert_eq!(g.floor.asks_nothing, 1);
    assert_eq!(
        a.replay.cell.status,
        Status::Pass,
        "{}",
        a.replay.cell.evidence
    );
    assert_eq!(a.ownership.cell.status, Status::Fail);
    assert!(a.ownership.cell.evidence.contains("malformed_arguments"));
    assert_eq!(a.ownership.decisions[1].measured, Owner::Harness);
    let card = a.benchmark_card().unwrap();
    assert_eq!(card.licensed_claim, Claim::ModelScaffoldSystemPerformance);
    // Forgeries not built are named with their reason, never dropped.
    let silent = g
        .not_built
        .iter()
        .find(|n| n.forgery == Forgery::SilentFinal)
        .unwrap();
    assert_eq!(silent.units, 2);
    assert_eq!(
        silent.reasons[0].0,
        "the task declares nothing to communicate"
    );
}

#[test]
fn a_port_that_reads_less_disagrees_on_the_runs_it_passes_and_changes_no_cell() {
    let port = |mode: &str| format!("port = [\"python3\", HOOK, \"port\", \"{mode}\"]\n");
    let (_d, plain) = toy("sound", &["shop"]);
    assert!(plain.port.is_none(), "no port hook, no port section");
    let (_d, a) = toy_with("sound", &["shop"], &port("sound"));
    let p = a.port.as_ref().unwrap();
    assert_eq!(p.not_probed, None);
    // One unit (the first by the replay rule): every built run of it, and only of it.
    let units: std::collections::BTreeSet<&str> =
        p.results.iter().map(|r| r.unit.as_str()).collect();
    assert_eq!(units.len(), 1, "{units:?}");
    let unit = *units.iter().next().unwrap();
    let built = a.runs.iter().filter(|r| r.unit == unit && r.built).count();
    assert_eq!(p.runs, built);
    // The toy port passes do_nothing: a disagreement exactly where the original failed it.
    let do_nothing = a.run("shop", unit, Forgery::DoNothing).unwrap().scores["reward"].unwrap();
    let want = usize::from(do_nothing < 1.0);
    assert_eq!(
        want, 1,
        "the port's unit ({unit}) has a write, so the original fails do_nothing"
    );
    assert_eq!((p.disagree, p.unscored, p.agree), (want, 0, p.runs - want));
    for r in &p.results {
        assert_eq!(
            r.agree,
            r.forgery != Forgery::DoNothing || do_nothing == 1.0,
            "{r:?}"
        );
        assert_eq!(r.notes, ["played 1 message(s)"]);
    }
    // A fact about two scorers: the original's cards are the same with or without it.
    assert_eq!(a.cards, plain.cards);

    let (_d, crashed) = toy_with("sound", &["shop"], &port("crash"));
    let p = crashed.port.as_ref().unwrap();
    let why = p.not_probed.as_deref().unwrap();
    assert!(why.contains("RuntimeError: the toy port crashed"), "{why}");
    assert!(crashed.failures.iter().any(|f| f == why));
    assert_eq!(crashed.stderr.last().unwrap().stage, "port");
}

#[test]
fn model_under_each_shipped_agent_gives_spread_eta_and_per_task_reliability_and_fails_ownership() {
    use benchaudit_audit::trajectories::compare::{CompareSettings, ModelEndpoint};
    let dir = tempfile::tempdir().unwrap();
    let hook = repo().join("crates/audit/tests/fixtures/agents/hook.py");
    let argv = vec![
        "python3".to_string(),
        hook.display().to_string(),
        "sound".to_string(),
    ];
    let path = manifest(dir.path(), "tau2", &["shop"], &argv);
    let text = std::fs::read_to_string(&path).unwrap();
    let compare = format!(
        "compare = [\"python3\", {:?}, \"compare\", \"sound\"]\n",
        hook.display().to_string()
    );
    std::fs::write(&path, format!("{text}{compare}")).unwrap();
    let t = ExternalTarget::load(&path).unwrap();
    let mut config = t.trajectories_config(None, 1).unwrap();
    let (_d, plain) = toy("sound", &["shop"]);
    assert!(
        plain.comparisons.is_empty(),
        "without --model nothing is compared"
    );
    config.compare = Some(CompareSettings {
        models: vec![ModelEndpoint {
            name: "toy:m".into(),
            model: "m".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key_env: Some("TOY_KEY".into()),
        }],
        units: 1,
        seeds: vec![0, 1],
        max_steps: 7,
        max_tokens: 64,
    });
    let a = trajectories::audit("toy", &t, &config);
    let [c] = &a.comparisons[..] else {
        panic!("{:?}", a.comparisons)
    };
    assert_eq!(c.not_probed, None);
    // The endpoint reached the hook by name and key variable, never a key.
    assert_eq!(c.settings["model"]["api_key_env"], "TOY_KEY");
    assert_eq!(c.settings["model"]["base_url"], "http://127.0.0.1:9/v1");
    assert_eq!(c.settings["max_steps"], 7);
    // Unit 2 (the first by the replay rule) has a write: `writers` applies, `nobody` does not.
    let rows: Vec<(&str, usize, usize, Option<f64>)> = c
        .scaffolds
        .iter()
        .map(|s| (s.name.as_str(), s.scored, s.not_applicable, s.mean))
        .collect();
    assert_eq!(
        rows,
        [
            ("every", 2, 0, Some(1.0)),
            ("writers", 2, 0, Some(0.5)),
            ("nobody", 0, 2, None)
        ]
    );
    let spread = c.spread.as_ref().unwrap();
    assert_eq!(
        (
            spread.value,
            spread.highest.as_str(),
            spread.lowest.as_str()
        ),
        (0.5, "every", "writers")
    );
    // (every 1, 1; writers 1, 0): grand mean 0.75, total SS 0.75, scaffold SS 0.25.
    let eta = c.eta.as_ref().unwrap();
    assert_eq!(eta.n, 4);
    assert!((eta.scaffold - 1.0 / 3.0).abs() < 1e-12, "{eta:?}");
    assert!((eta.residual - 2.0 / 3.0).abs() < 1e-12, "{eta:?}");
    assert!(
        eta.task.abs() < 1e-12 && eta.interaction.abs() < 1e-12,
        "{eta:?}"
    );
    let task: Vec<(&str, usize, f64, f64, f64, f64)> = c
        .tasks
        .iter()
        .map(|t| {
            (
                t.scaffold.as_str(),
                t.trials.seeds,
                t.trials.mean,
                t.trials.worst,
                t.trials.cvar,
                t.trials.pass_hat_k,
            )
        })
        .collect();
    assert_eq!(
        task,
        [
            ("every", 2, 1.0, 1.0, 1.0, 1.0),
            ("writers", 2, 0.5, 0.0, 0.0, 0.0)
        ]
    );
    assert_eq!(
        c.requests.iter().map(Vec::len).sum::<usize>(),
        4,
        "one recorded request a scored run"
    );
    // A spread above ε fails ownership with the measured reason, before the declared one.
    assert_eq!(a.ownership.cell.status, Status::Fail);
    assert!(
        a.ownership
            .cell
            .evidence
            .starts_with("measured with --model: toy:m's mean reward moves by 0.500"),
        "{}",
        a.ownership.cell.evidence
    );
    // A target without a compare hook says so.
    let mut no_hook = plain.config.clone();
    no_hook.compare = config.compare.clone();
    let (_d2, p) = {
        let dir = tempfile::tempdir().unwrap();
        let path = manifest(dir.path(), "tau2", &["shop"], &argv);
        let t = ExternalTarget::load(&path).unwrap();
        let a = trajectories::audit("toy", &t, &no_hook);
        (dir, a)
    };
    let why = p.comparisons[0].not_probed.as_deref().unwrap();
    assert!(why.contains("no compare hook"), "{why}");
}

#[test]
fn a_lenient_answer_check_fails_the_criterion_naming_the_forgery() {
    let (_d, a) = toy("lenient", &["shop"]);
    let g = &a.groups[0];
    assert_eq!(g.criterion.status, Status::Fail);
    assert!(
        g.criterion
            .evidence
            .contains("wrong_value not separated on 1 of 1 tasks"),
        "{}",
        g.criterion.evidence
    );
    assert_eq!(
        a.benchmark_card().unwrap().licensed_claim,
        Claim::SelfReportCompliance
    );
}

#[test]
fn a_crashing_play_hook_is_not_probed_with_its_cause() {
    let (_d, a) = toy("crash", &["shop"]);
    for card in &a.cards {
        assert_eq!(card.criterion_sensitivity.status, Status::NotProbed);
        assert!(
            card.criterion_sensitivity
                .evidence
                .contains("RuntimeError: the toy evaluator crashed"),
            "{}",
            card.criterion_sensitivity.evidence
        );
        assert_eq!(card.replay.status, Status::NotProbed);
        assert_eq!(card.licensed_claim, Claim::None);
    }
    assert_eq!(a.stderr[0].stage, "play");
    assert!(a.stderr[0].tail.contains("Traceback"));
}

#[test]
fn an_unknown_group_is_not_probed_with_its_cause() {
    let (_d, a) = toy("sound", &["shop", "garage"]);
    let card = a.benchmark_card().unwrap();
    assert_eq!(card.criterion_sensitivity.status, Status::NotProbed);
    assert!(
        card.criterion_sensitivity
            .evidence
            .contains("unknown domain 'garage'"),
        "{}",
        card.criterion_sensitivity.evidence
    );
    assert_eq!(a.groups.len(), 2, "each requested group says why");
}

#[test]
fn a_replay_that_differs_fails_replay() {
    let (_d, a) = toy("flaky", &["shop"]);
    assert_eq!(a.replay.cell.status, Status::Fail);
    assert!(a.replay.score_mismatches > 0);
    assert!(
        a.replay
            .cell
            .evidence
            .contains("in their score or termination"),
        "{}",
        a.replay.cell.evidence
    );
    assert_eq!(a.benchmark_card().unwrap().replay.status, Status::Fail);
}

/// The τ² target's hook run by an interpreter without the package.
#[test]
fn a_missing_package_is_not_probed_with_the_fix() {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import tau2"])
        .output();
    match probe {
        Ok(o) if !o.status.success() => {}
        _ => {
            eprintln!("skipped: python3 imports tau2 (or does not run)");
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let hook = repo().join("targets/tau2/hook.py");
    let argv = vec!["python3".to_string(), hook.display().to_string()];
    let path = manifest(dir.path(), "tau2", &["airline"], &argv);
    let t = ExternalTarget::load(&path).unwrap();
    let a = trajectories::audit("τ²", &t, &t.trajectories_config(None, 1).unwrap());
    let card = a.benchmark_card().unwrap();
    assert_eq!(card.criterion_sensitivity.status, Status::NotProbed);
    assert!(
        card.criterion_sensitivity
            .evidence
            .contains("run targets/tau2/setup.sh"),
        "{}",
        card.criterion_sensitivity.evidence
    );
    assert_eq!(card.ownership.status, Status::NotProbed);
    assert_eq!(card.licensed_claim, Claim::None);
}

fn ready(target: &str, var: &str) -> Option<ExternalTarget> {
    let dir = repo().join("targets").join(target);
    if !dir.join(".venv/bin/python").exists() {
        assert!(
            std::env::var_os(var).is_none(),
            "{var} is set but targets/{target}/.venv is missing: run targets/{target}/setup.sh"
        );
        eprintln!("skipped: run targets/{target}/setup.sh first");
        return None;
    }
    Some(ExternalTarget::load(&dir.join("target.toml")).unwrap())
}

#[test]
fn tau2_airline_through_the_released_evaluator() {
    let Some(t) = ready("tau2", "BENCHAUDIT_REQUIRE_TAU2") else {
        return;
    };
    let mut config = t.trajectories_config(Some(6), 2).unwrap();
    config.groups = vec!["airline".into()];
    config.replay = 1;
    let a = trajectories::audit("τ²", &t, &config);
    assert!(a.failures.is_empty(), "{:?}", a.failures);
    assert_eq!(a.benchmark["version"], "26.3");
    let g = &a.groups[0];
    assert_eq!((g.units_probed, g.units_total), (6, 50));
    assert!(g.gold_misses.is_empty(), "{:?}", g.gold_misses);
    assert_eq!(g.errors, 0);
    let reward = g.component("reward").unwrap();
    let rate = |f: Forgery| reward.rates.iter().find(|r| r.forgery == f).unwrap();
    assert_eq!(
        rate(Forgery::StepLimit).passed,
        0,
        "τ² scores 0 without a stop"
    );
    assert_eq!(rate(Forgery::Gold).passed, 6);
    assert_eq!(
        a.replay.cell.status,
        Status::Pass,
        "{}",
        a.replay.cell.evidence
    );
    // Measured, not declared: τ²'s agent ends the run on malformed arguments.
    let malformed = a
        .ownership
        .decisions
        .iter()
        .find(|d| d.decision == "malformed_arguments")
        .unwrap();
    assert_eq!(malformed.measured, Owner::Harness);
    assert!(malformed.moved);
    assert!(
        a.ownership
            .user_owned()
            .iter()
            .any(|d| d.decision == "user_ends_early")
    );
    // A bad domain is the hook's refusal, never a verdict.
    config.groups = vec!["nowhere".into()];
    let bad = trajectories::audit("τ²", &t, &config);
    assert_eq!(bad.groups[0].criterion.status, Status::NotProbed);
    assert!(
        bad.failures[0].contains("unknown τ² domain 'nowhere'"),
        "{:?}",
        bad.failures
    );
}

#[test]
fn agentdojo_banking_through_the_released_checks() {
    let Some(t) = ready("agentdojo", "BENCHAUDIT_REQUIRE_AGENTDOJO") else {
        return;
    };
    let mut config = t.trajectories_config(Some(8), 1).unwrap();
    config.groups = vec!["banking".into()];
    config.replay = 1;
    let a = trajectories::audit("AgentDojo", &t, &config);
    assert!(a.failures.is_empty(), "{:?}", a.failures);
    let g = &a.groups[0];
    assert!(g.gold_misses.is_empty(), "{:?}", g.gold_misses);
    let utility = g.component("utility").unwrap();
    let gold = utility
        .rates
        .iter()
        .find(|r| r.forgery == Forgery::Gold)
        .unwrap();
    assert_eq!(gold.passed, gold.scored);
    let text_turn = a
        .ownership
        .decisions
        .iter()
        .find(|d| d.decision == "text_turn")
        .unwrap();
    assert_eq!(text_turn.measured, Owner::Model);
    config.groups = vec!["nowhere".into()];
    let bad = trajectories::audit("AgentDojo", &t, &config);
    assert!(
        bad.failures[0].contains("unknown AgentDojo suite 'nowhere'"),
        "{:?}",
        bad.failures
    );
}
