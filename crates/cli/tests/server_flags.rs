//! `serve` and `mcp` refuse numeric flags outside their documented ranges with a clear error
//! (exit 2), before serving anything — never a panic in the runtime.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(args)
        .output()
        .expect("run benchaudit");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn out_of_range_flags_are_refused_clearly() {
    for (args, flag) in [
        (
            &["serve", "--max-connections", "2305843009213693952"][..],
            "--max-connections",
        ),
        (
            &["serve", "--max-connections", "0"][..],
            "--max-connections",
        ),
        (
            &["serve", "--max-episodes", "18446744073709551615"][..],
            "--max-episodes",
        ),
        (&["serve", "--max-body-bytes", "1"][..], "--max-body-bytes"),
        (&["serve", "--header-timeout", "0"][..], "--header-timeout"),
        (
            &["serve", "--connection-idle-timeout", "5"][..],
            "--connection-idle-timeout",
        ),
        (
            &["serve", "--max-mcp-sessions", "99999999999"][..],
            "--max-mcp-sessions",
        ),
        (
            &["serve", "--mcp-session-timeout=-1"][..],
            "--mcp-session-timeout",
        ),
        (
            &["serve", "--idle-timeout", "99999999999"][..],
            "--idle-timeout",
        ),
        (
            &[
                "mcp",
                "--task",
                "T1_single_page",
                "--seed",
                "1",
                "--quota",
                "4294967296",
            ][..],
            "--quota",
        ),
        (
            &[
                "mcp",
                "--task",
                "T1_single_page",
                "--seed",
                "18446744073709551616",
            ][..],
            "--seed",
        ),
        (
            &[
                "mcp",
                "--task",
                "T1_single_page",
                "--seed",
                "1",
                "--max-line-bytes",
                "10",
            ][..],
            "--max-line-bytes",
        ),
    ] {
        let (code, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(flag),
            "{args:?} does not name {flag}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn run_ab_and_audit_refuse_out_of_range_numbers_instead_of_wrapping() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let out = out.to_str().unwrap();
    for (args, flag) in [
        (
            vec![
                "ab",
                "--design",
                "quota",
                "--squeeze",
                "4294967295",
                "--out",
                out,
            ],
            "--squeeze",
        ),
        (
            vec![
                "ab",
                "--design",
                "quota",
                "--slack-sweep",
                "0,4294967295",
                "--out",
                out,
            ],
            "--slack-sweep",
        ),
        (
            vec!["ab", "--design", "quota", "--quota", "0", "--out", out],
            "--quota",
        ),
        (vec!["ab", "--jobs", "0", "--out", out], "--jobs"),
        (vec!["run", "--jobs", "100000", "--out", out], "--jobs"),
        (
            vec!["run", "--quota", "4294967296", "--out", out],
            "--quota",
        ),
        (vec!["audit", "--seeds", "5..3", "--out", out], "--seeds"),
        (vec!["audit", "--seeds", "0..1000", "--out", out], "--seeds"),
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(
        !dir.path().join("x").exists(),
        "nothing may be written on a refused flag"
    );
}
