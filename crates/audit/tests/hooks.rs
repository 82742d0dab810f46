//! Hostile hooks: a hook runs in its own process group, nothing of it outlives the call, its
//! output is drained concurrently and bounded, and every failure is a `HookFailure` that the
//! audit turns into a "not probed" cell. Fixtures are `sh` one-liners.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use benchaudit_audit::external::{
    ExternalTarget, HookFailure, MAX_ANSWER_BYTES, MAX_ANSWER_VALUES, run_hook,
};
use benchaudit_audit::{Status, audit_external};
use serde_json::{Value, json};

fn sh(script: &str, timeout: Duration) -> Result<Value, HookFailure> {
    let argv = ["sh", "-c", script].map(String::from);
    run_hook(&argv, Path::new("."), &json!({}), timeout)
}

/// Whether process `pid` is gone (or a zombie waiting for its reaper: it runs no more).
fn dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn wait_dead(pid: &str) -> bool {
    // The kill is asynchronous: allow the kernel a moment to deliver it.
    (0..200).any(|_| {
        let d = dead(pid);
        if !d {
            std::thread::sleep(Duration::from_millis(10));
        }
        d
    })
}

#[test]
fn a_forked_child_holding_stdout_neither_stalls_the_call_nor_survives_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // The child inherits stdout and sleeps 45 s; the hook itself answers and exits at once.
    let script = format!(
        "sleep 45 & echo $! > {}; echo '{{\"ok\": 1}}'",
        pidfile.display()
    );
    let started = std::time::Instant::now();
    let v = sh(&script, Duration::from_secs(20)).unwrap();
    assert_eq!(v, json!({"ok": 1}));
    // Not a timing measurement: a hang detector. Waiting for the child's EOF would take 45 s,
    // far past the 20 s timeout.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the call waited for the child"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        wait_dead(&pid),
        "the forked sleep {} is still alive",
        pid.trim()
    );
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!("sleep 45 & echo $! > {}; sleep 45", pidfile.display());
    let e = sh(&script, Duration::from_secs(1)).unwrap_err();
    assert!(e.cause.contains("timed out after 1s"), "{e}");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        wait_dead(&pid),
        "the forked sleep {} outlived the timeout",
        pid.trim()
    );
}

#[test]
fn a_flood_on_stdout_is_cut_at_the_bound_and_reported() {
    let script = format!("head -c {} /dev/zero", MAX_ANSWER_BYTES + 4096);
    let e = sh(&script, Duration::from_secs(60)).unwrap_err();
    assert!(e.cause.contains("answered more than"), "{e}");
}

#[test]
fn a_flood_on_stderr_is_drained_and_only_its_tail_kept() {
    // 1 MiB of log, then the answer: the hook must not block on a full stderr pipe.
    let script =
        "head -c 1048576 /dev/zero | tr '\\0' x >&2; echo LAST-LINE >&2; echo '{\"ok\": 2}'";
    assert_eq!(
        sh(script, Duration::from_secs(20)).unwrap(),
        json!({"ok": 2})
    );
    let script = "head -c 1048576 /dev/zero | tr '\\0' x >&2; echo LAST-LINE >&2; exit 3";
    let e = sh(script, Duration::from_secs(20)).unwrap_err();
    assert!(e.cause.contains("exited with exit status: 3"), "{e}");
    assert!(
        e.stderr_tail.ends_with("LAST-LINE\n"),
        "{:?}",
        &e.stderr_tail[..40]
    );
    assert!(e.stderr_tail.len() <= benchaudit_audit::external::STDERR_TAIL_BYTES);
}

#[test]
fn every_failure_kind_is_a_hook_failure_with_its_cause() {
    let e = sh("echo 'bad input' >&2; exit 3", Duration::from_secs(20)).unwrap_err();
    assert!(e.cause.contains("exit status: 3"), "{e}");
    assert_eq!(e.stderr_tail.trim(), "bad input");
    assert_eq!(e.to_string(), format!("{}; stderr: bad input", e.cause));
    let e = sh("echo not-json", Duration::from_secs(20)).unwrap_err();
    assert!(e.cause.contains("did not answer JSON"), "{e}");
    let argv = ["/nonexistent/hook".to_string()];
    let e = run_hook(&argv, Path::new("."), &json!({}), Duration::from_secs(5)).unwrap_err();
    assert!(e.cause.contains("cannot start"), "{e}");
}

#[test]
fn a_failing_truth_hook_makes_criterion_sensitivity_not_probed_and_the_audit_goes_on() {
    let manifest =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile/target.toml");
    let target = ExternalTarget::load(&manifest).unwrap();
    let a = audit_external(&target, &[0], None).expect("a hook failure never stops the audit");
    let c = &a.card.criterion_sensitivity;
    assert_eq!(c.status, Status::NotProbed, "{}", c.evidence);
    assert!(c.evidence.contains("exit status: 3"), "{}", c.evidence);
    assert!(
        c.evidence.contains("stderr: truth: no such task"),
        "{}",
        c.evidence
    );
    assert_eq!(a.card.licensed_claim.label(), "none");
}

#[test]
fn a_child_that_left_the_group_with_setsid_dies_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // `setsid` puts the sleep in a session (and group) of its own: a group kill misses it.
    let script = format!(
        "setsid sleep 45 & echo $! > {}; sleep 45",
        pidfile.display()
    );
    let e = sh(&script, Duration::from_secs(1)).unwrap_err();
    assert!(e.cause.contains("timed out after 1s"), "{e}");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        wait_dead(&pid),
        "the setsid sleep {} outlived the timeout",
        pid.trim()
    );
}

#[test]
fn a_setsid_child_holding_stdout_neither_stalls_the_answer_nor_survives_it() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "setsid sleep 45 & echo $! > {}; echo '{{\"ok\": 3}}'",
        pidfile.display()
    );
    // The sleep holds stdout open: before, the call waited for its EOF until the timeout.
    assert_eq!(
        sh(&script, Duration::from_secs(10)).unwrap(),
        json!({"ok": 3})
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        wait_dead(&pid),
        "the setsid sleep {} is still alive",
        pid.trim()
    );
}

#[test]
fn an_answer_of_too_many_values_is_refused_while_parsing() {
    // Two million empty records: 6 MB of text, far below MAX_ANSWER_BYTES, but a tree of two
    // million values (the issue measured 3 GB once the audit had used them).
    let script =
        "printf '{\"records\": ['; yes '{},' | head -n 2000000 | tr -d '\\n'; printf '{}]}'";
    let e = sh(script, Duration::from_secs(60)).unwrap_err();
    assert!(
        e.cause.contains(&format!(
            "answered more than {MAX_ANSWER_VALUES} JSON values"
        )),
        "{e}"
    );
    // The bound counts every value: records, fields and the answer's own object and array.
    let n = MAX_ANSWER_VALUES - 3;
    let script =
        format!("printf '{{\"records\": ['; yes '1,' | head -n {n} | tr -d '\\n'; printf '1]}}'");
    let v = sh(&script, Duration::from_secs(60)).unwrap();
    assert_eq!(v["records"].as_array().map(Vec::len), Some(n + 1));
    let script = format!(
        "printf '{{\"records\": ['; yes '1,' | head -n {} | tr -d '\\n'; printf '1]}}'",
        n + 1
    );
    assert!(sh(&script, Duration::from_secs(60)).is_err());
}
