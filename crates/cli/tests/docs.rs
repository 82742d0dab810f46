//! Every ```` ```console ```` block in README.md and docs/*.md is run against the real binary and
//! its output compared with what the document shows (issue 13), so documented output cannot
//! drift.
//!
//! A block is a sequence of `$ command` lines (a trailing `\` continues a command), each followed
//! by the output it prints (stdout and stderr together). The commands of one document run in
//! order in one bash session (so `ID=$(…)` carries over, as when a reader types them) in a fresh
//! temporary directory with `benchaudit` on `PATH`; `cargo run --release --` is read as
//! `benchaudit`. A command ending in `&` runs in the background (its output discarded) until the
//! document is done. In the shown output, `[..]` matches the rest of a line
//! and a line `...` any number of lines; durations and the temporary directory are redacted on
//! both sides, so documents keep real figures. Blocks that record measurements (load scripts,
//! timing runs) are ```` ```text ````, not `console`.
//!
//! `BENCHAUDIT_BLESS=1 cargo test -p benchaudit --test docs` rewrites the shown output of every
//! mismatching command with the actual output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `$ command` with the output the document shows for it.
#[derive(Debug)]
struct Step {
    /// 1-based line of the `$` in the document.
    line: usize,
    command: String,
    /// Lines of the shown output (index range in the document, for blessing).
    output: std::ops::Range<usize>,
}

fn parse(md: &str) -> Vec<Step> {
    let lines: Vec<&str> = md.lines().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```console" {
            i += 1;
            continue;
        }
        i += 1;
        let mut current: Option<Step> = None;
        while i < lines.len() && !lines[i].starts_with("```") {
            if let Some(rest) = lines[i].strip_prefix("$ ") {
                if let Some(s) = current.take() {
                    steps.push(s);
                }
                let line = i + 1;
                let mut command = rest.to_string();
                while command.ends_with('\\') && i + 1 < lines.len() {
                    command.pop();
                    i += 1;
                    command.push(' ');
                    command.push_str(lines[i].trim_start());
                }
                current = Some(Step {
                    line,
                    command,
                    output: i + 1..i + 1,
                });
            } else if let Some(s) = current.as_mut() {
                s.output.end = i + 1;
            }
            i += 1;
        }
        if let Some(s) = current.take() {
            steps.push(s);
        }
        i += 1;
    }
    steps
}

fn redactions(tmp: &Path) -> snapbox::Redactions {
    let mut r = snapbox::Redactions::new();
    r.insert(
        "[DURATION]",
        regex::Regex::new(r"(?<redacted>\b\d+(\.\d+)? ?(s|ms|µs)\b)").unwrap(),
    )
    .unwrap();
    r.insert("[TMP]", tmp.to_path_buf()).unwrap();
    r
}

/// One bash session per document, so `ID=$(…)` in one command is seen by the next, as when a
/// reader types them.
struct Session {
    child: Child,
    stdin: std::process::ChildStdin,
    output: std::sync::mpsc::Receiver<Vec<u8>>,
    buffer: Vec<u8>,
    count: usize,
}

impl Session {
    fn start(dir: &Path, path_env: &str) -> Session {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("bash")
            .args(["--noprofile", "--norc"])
            .current_dir(dir)
            .env("PATH", path_env)
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn bash");
        let mut stdout = child.stdout.take().unwrap();
        let (tx, output) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 1 << 16];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut s = Session {
            child,
            stdin,
            output,
            buffer: Vec::new(),
            count: 0,
        };
        s.write("exec 2>&1\n");
        s
    }

    fn write(&mut self, text: &str) {
        use std::io::Write;
        self.stdin
            .write_all(text.as_bytes())
            .expect("write to bash");
        self.stdin.flush().expect("flush bash");
    }

    /// Runs one command (stdin from /dev/null, so it cannot eat the script) and returns what
    /// it printed, or None after `limit`.
    fn run(&mut self, command: &str, limit: Duration) -> Option<String> {
        if let Some(bg) = command.trim_end().strip_suffix('&') {
            self.write(&format!("{{ {bg}\n}} </dev/null >/dev/null 2>&1 &\n"));
            return Some(String::new());
        }
        self.count += 1;
        let marker = format!("\n__benchaudit_docs_done_{}__\n", self.count);
        self.write(&format!(
            "{{ {command}\n}} </dev/null\nprintf '\\n__benchaudit_docs_done_{}__\\n'\n",
            self.count
        ));
        let deadline = Instant::now() + limit;
        loop {
            if let Some(pos) = find(&self.buffer, marker.as_bytes()) {
                let out = String::from_utf8_lossy(&self.buffer[..pos]).into_owned();
                self.buffer.drain(..pos + marker.len());
                return Some(out);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.output.recv_timeout(left) {
                Ok(chunk) => self.buffer.extend_from_slice(&chunk),
                Err(_) => return None,
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl Drop for Session {
    fn drop(&mut self) {
        // bash leads its own process group; background servers are in it: stop all of it.
        let _ = Command::new("kill")
            .arg("--")
            .arg(format!("-{}", self.child.id()))
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Text as compared: every line ends with a newline.
fn lines_text(s: &str) -> String {
    s.lines().map(|l| format!("{l}\n")).collect()
}

/// Runs one document's commands; returns its mismatches (and blesses them when asked).
fn check_document(doc: &Path, bin_dir: &Path) -> Vec<String> {
    let md = std::fs::read_to_string(doc).expect("read doc");
    let steps = parse(&md);
    if steps.is_empty() {
        return Vec::new();
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let path_env = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let redact = redactions(tmp.path());
    let assert = snapbox::Assert::new().redact_with(redactions(tmp.path()));
    let bless = std::env::var_os("BENCHAUDIT_BLESS").is_some();
    let lines: Vec<&str> = md.lines().collect();
    let mut replacements: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut failures = Vec::new();
    let mut session = Session::start(tmp.path(), &path_env);
    for step in &steps {
        let command = step.command.replace("cargo run --release --", "benchaudit");
        let Some(actual) = session.run(&command, Duration::from_secs(600)) else {
            failures.push(format!(
                "{}:{}: `{}` did not finish within 600 s",
                doc.display(),
                step.line,
                step.command
            ));
            break;
        };
        let actual = lines_text(&actual);
        let expected = lines_text(&lines[step.output.clone()].join("\n"));
        // Both sides redacted: the document keeps its real durations.
        let result = assert.try_eq(
            Some(&"actual"),
            snapbox::Data::text(redact.redact(&actual)),
            snapbox::Data::text(redact.redact(&expected)),
        );
        if let Err(e) = result {
            failures.push(format!(
                "{}:{}: `{}` printed something else than documented:\n{e}",
                doc.display(),
                step.line,
                step.command
            ));
            replacements.push((step.output.clone(), actual));
        }
    }
    drop(session);
    if bless && !replacements.is_empty() {
        let mut out = String::new();
        let mut i = 0;
        for (range, actual) in &replacements {
            for l in &lines[i..range.start] {
                out.push_str(l);
                out.push('\n');
            }
            out.push_str(actual);
            i = range.end;
        }
        for l in &lines[i..] {
            out.push_str(l);
            out.push('\n');
        }
        std::fs::write(doc, out).expect("bless doc");
    }
    failures
}

fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

#[test]
fn parser_reads_commands_continuations_and_outputs() {
    let md = "x\n```console\n$ echo a \\\n  b\na b\n$ true\n```\n```sh\n$ not run\n```\n";
    let steps = parse(md);
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].command, "echo a  b");
    assert_eq!(steps[0].output, 4..5);
    assert_eq!(steps[1].command, "true");
    assert_eq!(steps[1].output, 6..6);
}

#[test]
fn a_wrong_documented_output_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("d.md");
    std::fs::write(
        &doc,
        "```console\n$ echo 41\n42\n$ echo took 1.5 s\ntook 9.9 s\n```\n",
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_benchaudit"))
        .parent()
        .unwrap();
    let failures = check_document(&doc, bin);
    // Durations are redacted and the session keeps variables; 41 ≠ 42 is caught.
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("d.md:2"), "{failures:?}");
}

#[test]
fn every_console_block_prints_what_the_docs_show() {
    let bin = Path::new(env!("CARGO_BIN_EXE_benchaudit"))
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let docs = documents();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = docs
            .iter()
            .map(|d| s.spawn(|| check_document(d, &bin)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("document thread"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Words of a work diary: a working session named by its ordinal or as the current one, a
/// counted range of them, a numbered or current stop (the examples in the test below). The
/// protocol's sessions stay legal: an MCP session that opens, closes or is refused.
fn diary() -> regex::Regex {
    let ordinal = "fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|\
                   fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|\
                   [0-9]+(?:st|nd|rd|th)";
    let counted = "one|two|three|four|five|six|seven|eight|nine|ten|[0-9]+";
    regex::Regex::new(&format!(
        r"\b(?:(?:{ordinal})\s+session|the\s+(?:first|second|third)\s+session(?:'s|\s+(?:ran|measured|found|changed|made|took|on|of)\b)|this\s+(?:session|stop)\b|sessions\s+(?:{counted})\s+(?:to|and|through)\b|stop\s+[0-9]+\b)"
    ))
    .unwrap()
}

/// Paths that exist on one machine only: a workspace, a home, a temporary folder, the folder
/// shared beside a checkout.
fn machine_path() -> regex::Regex {
    regex::Regex::new(
        // Written with escapes so this file does not hold the paths it looks for.
        r"/w\x6frk/|/r\x6fot/|/home/[^/\s]+/|/Users/[^/\s]+/|/var/folders/|/t\x6dp/|\.\./sh\x61red\b",
    )
    .unwrap()
}

/// Each line of `text` (lowercased for the diary words) that matches, as `line: match`.
fn tree_findings(text: &str) -> Vec<String> {
    let (diary, path) = (diary(), machine_path());
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        for m in diary.find_iter(&lower).chain(path.find_iter(line)) {
            found.push(format!("{}: {}", i + 1, m.as_str()));
        }
    }
    found
}

#[test]
fn tree_patterns_catch_a_diary_and_machine_paths_but_not_protocol_sessions() {
    for bad in [
        "The twelfth sessi\u{6f}n's quiet half hour",
        "measured in the 3rd sessi\u{6f}n",
        "as this sessi\u{6f}n found",
        "Sessi\u{6f}ns one to five ran on an Intel host",
        "Sessi\u{6f}n summary (second wave, this st\u{6f}p).",
        "before st\u{6f}p 4",
        "the second sessi\u{6f}n ran the comparison",
        "RELEASED_MOCK=/w\u{6f}rk/shared/anchors/released-mock",
        "--out /t\u{6d}p/hf",
        "a copy in ../sh\u{61}red/anchors",
        "model_path: /r\u{6f}ot/.cache/x.gguf",
        "see /home/alice/src",
    ] {
        assert!(!tree_findings(bad).is_empty(), "not caught: {bad}");
    }
    for good in [
        "// The cap: a second sessi\u{6f}n opens, a third is refused.",
        "the episode opened by the sessi\u{6f}n's `initialize`",
        "The SDK answers a closed sessi\u{6f}n 202",
        "An MCP sessi\u{6f}n idle for --mcp-sessi\u{6f}n-timeout is closed",
        "stop the server; the workers stop",
        "RELEASED_MOCK=$HOME/released-mock scripts/bench/compare.sh",
        "${TMPDIR:-/t\u{6d}p}/benchaudit-venv",
        "target/release/benchaudit serve",
    ] {
        assert_eq!(tree_findings(good), Vec::<String>::new(), "{good}");
    }
}

/// Docs are a reference, not a diary (issue 40): no tracked file names a numbered working
/// session or a path of one machine. This file is skipped: it holds the patterns and their
/// examples.
#[test]
fn no_tracked_file_mentions_a_numbered_session_or_a_machine_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("git ls-files (the tree test needs git and a clone)");
    assert!(out.status.success(), "git ls-files failed: {out:?}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for name in out.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = PathBuf::from(String::from_utf8_lossy(name).into_owned());
        if name == Path::new("crates/cli/tests/docs.rs") {
            continue;
        }
        // Binary files (figures, archives) are not text a reader reads.
        let Ok(text) = std::fs::read_to_string(root.join(&name)) else {
            continue;
        };
        checked += 1;
        for f in tree_findings(&text) {
            failures.push(format!("{}:{f}", name.display()));
        }
    }
    assert!(checked > 100, "only {checked} tracked text files found");
    assert!(
        failures.is_empty(),
        "diary words or machine paths:\n{}",
        failures.join("\n")
    );
}

/// The lines of each ```` ```sh ```` block of `md`, comments and blank lines dropped.
fn sh_blocks(md: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in md.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), text) => {
                let command = text.split(" #").next().unwrap_or("").trim();
                if !command.is_empty() && !command.starts_with('#') {
                    block.push(command.to_string());
                }
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The README opens with exactly the two set-up commands (build-and-audit, test), then offers the
/// pip route and the Inspect route in two lines each, and what those lines name exists: the
/// wheel folder is the one `scripts/wheel/build.sh` writes, `pyproject.toml` builds crates/cli's
/// binary (maturin binary bindings) with the Python package and registers the task under
/// Inspect's entry point, and every `-T NAME=` is a parameter of the task. `scripts/wheel/ci.sh`
/// runs the pip lines as written in a venv with no Rust toolchain (issue 36).
#[test]
fn readme_opens_with_two_commands_then_the_pip_and_inspect_routes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).expect(p);
    let blocks = sh_blocks(&read("README.md"));
    assert_eq!(
        blocks[0],
        ["cargo run --release -- audit", "cargo test --workspace"]
    );
    let wheel = "target/wheels/benchaudit-*.whl";
    assert_eq!(
        blocks[1],
        [
            format!("pip install {wheel}"),
            "benchaudit audit".to_string()
        ]
    );
    assert_eq!(blocks[2].len(), 2, "{:?}", blocks[2]);
    assert_eq!(
        blocks[2][0],
        format!("pip install \"$(ls {wheel})[inspect]\"")
    );
    let eval = blocks[2][1]
        .strip_prefix("inspect eval benchaudit/comtradebench ")
        .expect("the Inspect route runs benchaudit/comtradebench");

    assert!(read("scripts/wheel/build.sh").contains("out=\"$target/wheels\""));
    let py: toml::Table = read("pyproject.toml").parse().expect("pyproject.toml");
    assert_eq!(py["project"]["name"].as_str(), Some("benchaudit"));
    assert!(py["project"]["optional-dependencies"]["inspect"].is_array());
    assert_eq!(
        py["project"]["entry-points"]["inspect_ai"]["benchaudit"].as_str(),
        Some("benchaudit._registry")
    );
    let maturin = &py["tool"]["maturin"];
    assert_eq!(maturin["bindings"].as_str(), Some("bin"));
    assert_eq!(
        maturin["manifest-path"].as_str(),
        Some("crates/cli/Cargo.toml")
    );
    assert_eq!(maturin["python-source"].as_str(), Some("python"));
    assert!(
        read("python/benchaudit/_registry.py")
            .contains("from .comtradebench import comtrade_agent, comtradebench")
    );
    let task = read("python/benchaudit/comtradebench.py");
    let signature = task
        .split("def comtradebench(")
        .nth(1)
        .and_then(|s| s.split(") -> Task:").next())
        .expect("def comtradebench(...) -> Task");
    for arg in eval.split_whitespace().filter_map(|w| w.split_once('=')) {
        assert!(
            signature.contains(&format!("\n    {}:", arg.0)),
            "-T {}: not a parameter of comtradebench",
            arg.0
        );
    }
}
