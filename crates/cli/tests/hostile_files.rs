//! Files the CLI reads are untrusted (issue 12): a FIFO, a device or a huge file named where a
//! regular file belongs gets a clear error and a prompt exit, never a hang or unbounded memory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs benchaudit, killing it after 20 s (a hang is the failure this file tests for).
fn run(args: &[&std::ffi::OsStr]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn benchaudit");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code().unwrap_or(-1), err);
        }
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().ok();
            panic!("benchaudit {args:?} hung for 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mkfifo(p: &Path) {
    let ok = Command::new("mkfifo").arg(p).status().expect("mkfifo");
    assert!(ok.success());
}

#[test]
fn guard_refuses_a_fifo_a_device_and_a_huge_file() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("a.json");
    std::fs::write(&json, "{\"x\": 1}").unwrap();
    let fifo = dir.path().join("card.md");
    mkfifo(&fifo);
    let (code, err) = run(&[
        "guard".as_ref(),
        fifo.as_os_str(),
        "--against".as_ref(),
        json.as_os_str(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file (a FIFO)"), "{err}");

    let md = dir.path().join("ok.md");
    std::fs::write(&md, "x is 1\n").unwrap();
    let (code, err) = run(&[
        "guard".as_ref(),
        md.as_os_str(),
        "--against".as_ref(),
        "/dev/zero".as_ref(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a character device"), "{err}");

    let big = dir.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let (code, err) = run(&[
        "guard".as_ref(),
        md.as_os_str(),
        "--against".as_ref(),
        big.as_os_str(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("over the limit"), "{err}");
}

#[test]
fn score_refuses_a_fifo_in_the_submission() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("data.jsonl"));
    let (code, err) = run(&[
        "score".as_ref(),
        "--task".as_ref(),
        "T3_duplicates".as_ref(),
        "--seed".as_ref(),
        "0".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("data.jsonl") && err.contains("a FIFO"),
        "{err}"
    );
}

#[test]
fn guard_lists_a_bounded_number_of_violations_however_many_the_file_holds() {
    // 'x 1.5 ' repeated: every figure is a violation. The output (and what the guard keeps)
    // is the first MAX_LISTED_VIOLATIONS lines and a count, not a line per figure.
    use benchaudit_audit::guard::MAX_LISTED_VIOLATIONS;
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("flood.md");
    let n = 300_000;
    std::fs::write(&md, "x 1.5 ".repeat(n)).unwrap();
    let json = dir.path().join("a.json");
    std::fs::write(&json, "{\"x\": 2}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args([
            "guard".as_ref(),
            md.as_os_str(),
            "--against".as_ref(),
            json.as_os_str(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        MAX_LISTED_VIOLATIONS + 2,
        "{:?}",
        &lines[lines.len().saturating_sub(3)..]
    );
    assert!(
        lines[MAX_LISTED_VIOLATIONS].contains(&format!(
            "{} more numbers not in",
            n - MAX_LISTED_VIOLATIONS
        )),
        "{}",
        lines[MAX_LISTED_VIOLATIONS]
    );
    assert!(
        lines[MAX_LISTED_VIOLATIONS + 1].starts_with(&format!("FAIL: {n} numbers checked")),
        "{}",
        lines[MAX_LISTED_VIOLATIONS + 1]
    );
}
