//! The validity card of the key-free audit, pinned byte for byte.
//!
//! `tests/data/card.json` is the `card.json` that `benchaudit audit --out DIR` (default seeds
//! and jobs) wrote before the workspace was restructured into library crates (issue 14); this
//! test re-runs the same invocation and compares the file byte for byte, so a refactor cannot
//! change a verdict or a number of the card's evidence unnoticed.
//!
//! When an issue deliberately changes the card (the measurement-integrity issue will), update
//! the golden file from a run of the new binary in the same commit and say why in its message:
//! `benchaudit audit --out card-new && cp card-new/card.json crates/cli/tests/data/card.json`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_default_audit_writes_the_pinned_card_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("audit");
    let o = Command::new(env!("CARGO_BIN_EXE_benchaudit"))
        .args(["audit", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/card.json");
    let want = std::fs::read_to_string(&golden).unwrap();
    let have = std::fs::read_to_string(out.join("card.json")).unwrap();
    if have != want {
        let first = want
            .lines()
            .zip(have.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| want.lines().count().min(have.lines().count()));
        panic!(
            "card.json differs from {} at line {}:\n  pinned:  {}\n  written: {}",
            golden.display(),
            first + 1,
            want.lines().nth(first).unwrap_or("<end>"),
            have.lines().nth(first).unwrap_or("<end>")
        );
    }
}
