//! External targets: a manifest names up to four hook commands that speak JSON over
//! stdin/stdout, so a benchmark written in any language can be audited without model calls.
//!
//! ```toml
//! name = "my-bench"
//! scorer_kind = "outcome"          # shape | outcome | specification (optional)
//! resolution = 1e-6                # smallest score difference the scorer expresses (optional)
//! [hooks]                          # each optional; argv, run in the manifest's directory
//! ownership = ["python3", "hooks.py", "ownership"]
//! registry  = ["python3", "hooks.py", "registry"]
//! truth     = ["python3", "hooks.py", "truth"]
//! score     = ["python3", "hooks.py", "score"]
//! ```
//!
//! Requests and answers (one JSON value each way):
//! * ownership: `{}` → `{"entries": [["L0", "dedup", "harness"], …], "claimed": ["dedup", …], "scored_level": "L0"}`
//! * registry: `{}` → `{"tasks": [{"task_id": "t1", "seeds": [0]}]}`
//! * truth: `{"task": "t1", "seed": 0}` → `{"records": [{…}, …]}`
//! * score: `{"task": "t1", "seed": 0, "submission": {"records": […], "metadata": {…}, "run_log": "…"}}` → `{"score": 0.75}`

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::target::{DeclaredOwnership, Forged, ScorerKind, Target, TargetTask};

/// How long one hook call may take.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest answer a hook may print.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;

/// The manifest file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Target name.
    pub name: String,
    /// Declared scorer kind.
    #[serde(default)]
    pub scorer_kind: Option<ScorerKind>,
    /// Scorer resolution ε.
    #[serde(default)]
    pub resolution: Option<f64>,
    /// Hook commands.
    #[serde(default)]
    pub hooks: Hooks,
}

/// The four optional hook commands (argv).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hooks {
    /// Hook 1.
    pub ownership: Option<Vec<String>>,
    /// Hook 2.
    pub registry: Option<Vec<String>>,
    /// Hook 3.
    pub truth: Option<Vec<String>>,
    /// Hook 4.
    pub score: Option<Vec<String>>,
}

/// A target whose hooks are external commands.
#[derive(Debug, Clone)]
pub struct ExternalTarget {
    manifest: Manifest,
    dir: PathBuf,
}

impl ExternalTarget {
    /// Loads a manifest (TOML).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| {
            format!(
                "{} is not a target manifest: {}",
                path.display(),
                e.message()
            )
        })?;
        for (name, argv) in [
            ("ownership", &manifest.hooks.ownership),
            ("registry", &manifest.hooks.registry),
            ("truth", &manifest.hooks.truth),
            ("score", &manifest.hooks.score),
        ] {
            if argv.as_ref().is_some_and(|a| a.is_empty()) {
                return Err(format!(
                    "{}: hook `{name}` has an empty command",
                    path.display()
                ));
            }
        }
        if manifest
            .resolution
            .is_some_and(|r| !r.is_finite() || r < 0.0)
        {
            return Err(format!(
                "{}: resolution must be a finite number ≥ 0",
                path.display()
            ));
        }
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(ExternalTarget { manifest, dir })
    }

    fn call(&self, argv: &[String], request: &Value) -> Result<Value, String> {
        let (program, args) = argv.split_first().ok_or("empty hook command")?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{program}`: {e}"))?;
        let input = request.to_string();
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let mut stdout = child.stdout.take().ok_or("no stdout")?;
        let reader = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let r = (&mut stdout)
                .take(MAX_ANSWER_BYTES as u64 + 1)
                .read_to_end(&mut buf);
            r.map(|_| buf)
        });
        let mut stderr = child.stderr.take().ok_or("no stderr")?;
        let err_reader = std::thread::spawn(move || {
            let mut buf = String::new();
            let _ = (&mut stderr).take(4096).read_to_string(&mut buf);
            buf
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() > HOOK_TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "`{program}` timed out after {}s",
                        HOOK_TIMEOUT.as_secs()
                    ));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Err(format!("waiting for `{program}`: {e}")),
            }
        };
        let _ = writer.join();
        let out = reader
            .join()
            .map_err(|_| "reader thread failed")?
            .map_err(|e| format!("reading `{program}`: {e}"))?;
        let err = err_reader.join().unwrap_or_default();
        if !status.success() {
            return Err(format!("`{program}` exited with {status}: {}", err.trim()));
        }
        if out.len() > MAX_ANSWER_BYTES {
            return Err(format!(
                "`{program}` answered more than {MAX_ANSWER_BYTES} bytes"
            ));
        }
        serde_json::from_slice(&out).map_err(|e| format!("`{program}` did not answer JSON: {e}"))
    }
}

impl Target for ExternalTarget {
    fn name(&self) -> String {
        self.manifest.name.clone()
    }

    fn ownership(&self) -> Option<DeclaredOwnership> {
        let argv = self.manifest.hooks.ownership.as_ref()?;
        // A broken ownership hook is treated as absent: the stage is not probed, never passed.
        self.call(argv, &json!({}))
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
    }

    fn registry(&self) -> Option<Vec<TargetTask>> {
        let argv = self.manifest.hooks.registry.as_ref()?;
        let v = self.call(argv, &json!({})).ok()?;
        serde_json::from_value(v.get("tasks")?.clone()).ok()
    }

    fn truth(&self, task: &str, seed: u64) -> Option<Result<Vec<Value>, String>> {
        let argv = self.manifest.hooks.truth.as_ref()?;
        Some(
            self.call(argv, &json!({"task": task, "seed": seed}))
                .and_then(|v| match v.get("records") {
                    Some(Value::Array(r)) => Ok(r.clone()),
                    _ => Err("truth hook answered without a `records` array".into()),
                }),
        )
    }

    fn score(&self, task: &str, seed: u64, submission: &Forged) -> Option<Result<f64, String>> {
        let argv = self.manifest.hooks.score.as_ref()?;
        Some(
            self.call(
                argv,
                &json!({"task": task, "seed": seed, "submission": submission}),
            )
            .and_then(|v| {
                v.get("score")
                    .and_then(Value::as_f64)
                    .filter(|s| s.is_finite())
                    .ok_or_else(|| "score hook answered without a finite `score`".to_string())
            }),
        )
    }

    fn resolution(&self) -> f64 {
        self.manifest.resolution.unwrap_or(1e-9)
    }

    fn declared_scorer_kind(&self) -> ScorerKind {
        self.manifest.scorer_kind.unwrap_or(ScorerKind::Unknown)
    }
}
