//! A run ledger to Inspect `.eval` logs, one per condition.

use benchaudit_runs::Error as RunsError;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use benchaudit_agents::{EpisodeRecord, Level, Outcome, RunOptions, sha256_hex};
use benchaudit_runs::{Manifest, read_ledger};
use serde_json::{Map, Value, json};

use super::archive::Writer;
use super::{RECORD_KEY, file_safe, rfc3339};
use crate::error::{Error, Result};

/// One log written by [`export_run`].
#[derive(Debug, Clone, PartialEq)]
pub struct ExportedLog {
    /// The `.eval` file.
    pub path: PathBuf,
    /// Policy or model of the condition.
    pub policy: String,
    /// Level.
    pub level: Level,
    /// Stress arm, if any.
    pub arm: Option<String>,
    /// Options hash.
    pub options_hash: String,
    /// Samples (episodes) in the log: tasks × seeds present.
    pub samples: usize,
}

/// What `benchaudit export` prints: each log written, and how to browse them.
pub fn export_summary(logs: &[ExportedLog], out: &std::path::Path) -> String {
    let mut text = format!("wrote {} Inspect log(s):\n", logs.len());
    for l in logs {
        let arm = l
            .arm
            .as_deref()
            .map(|a| format!(" [{a}]"))
            .unwrap_or_default();
        text.push_str(&format!(
            "  {}  ({} {}{arm}, {} samples)\n",
            l.path.display(),
            l.policy,
            l.level,
            l.samples
        ));
    }
    text.push_str(&format!(
        "browse them with: inspect view --log-dir {}\n",
        out.display()
    ));
    text
}

/// (policy, level, arm, options hash): one condition, one log.
type Condition = (String, Level, Option<String>, String);

/// Writes one Inspect `.eval` log per condition of the run in `run_dir` into `out`.
///
/// Exists as the whole of `benchaudit export --format inspect` minus argument parsing.
/// The same run exports to the same bytes: times come from the ledger file, ids from hashes.
///
/// # Errors
/// [`Error::Invalid`] when `run_dir` holds no readable ledger; IO and zip errors naming the
/// file otherwise.
pub fn export_run(run_dir: &Path, out: &Path) -> Result<Vec<ExportedLog>> {
    let episodes = run_dir.join("episodes.jsonl");
    if !episodes.is_file() {
        return Err(Error::Invalid(format!(
            "{} has no episodes.jsonl: not a run directory",
            run_dir.display()
        )));
    }
    let records = read_ledger(&episodes)?.records;
    if records.is_empty() {
        return Err(Error::Invalid(format!(
            "{} holds no complete episode record",
            episodes.display()
        )));
    }
    let manifest = Manifest::read(run_dir)?;
    let created = std::fs::metadata(&episodes)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let arms = manifest.as_ref().map(run_options).unwrap_or_default();
    let mut groups: BTreeMap<Condition, Vec<&EpisodeRecord>> = BTreeMap::new();
    for r in &records {
        let k = &r.key;
        groups
            .entry((
                k.policy.clone(),
                k.level,
                k.arm.clone(),
                k.options_hash.clone(),
            ))
            .or_default()
            .push(r);
    }
    std::fs::create_dir_all(out).map_err(RunsError::io(format!("creating {}", out.display())))?;
    let mut written = Vec::new();
    for (condition, mut group) in groups {
        group.sort_by(|a, b| (&a.key.task_id, a.key.seed).cmp(&(&b.key.task_id, b.key.seed)));
        let options = arms.iter().find(|o| o.hash() == condition.3);
        let log = Log {
            run_dir,
            manifest: manifest.as_ref(),
            condition: &condition,
            options,
            created: rfc3339(created),
        };
        let name = format!(
            "benchaudit_{}_{}{}_{}.eval",
            file_safe(&condition.0),
            condition.1,
            condition
                .2
                .as_deref()
                .map(|a| format!("_{}", file_safe(a)))
                .unwrap_or_default(),
            &condition.3
        );
        let path = out.join(name);
        log.write(&path, &group)?;
        written.push(ExportedLog {
            path,
            policy: condition.0,
            level: condition.1,
            arm: condition.2,
            options_hash: condition.3,
            samples: group.len(),
        });
    }
    Ok(written)
}

/// The run options a manifest lists (`options`, or each of `arms`).
fn run_options(manifest: &Manifest) -> Vec<RunOptions> {
    let c = &manifest.config;
    let mut found: Vec<RunOptions> = Vec::new();
    if let Some(one) = c.get("options") {
        found.extend(serde_json::from_value::<RunOptions>(one.clone()).ok());
    }
    if let Some(Value::Array(arms)) = c.get("arms") {
        found.extend(
            arms.iter()
                .filter_map(|a| serde_json::from_value::<RunOptions>(a.clone()).ok()),
        );
    }
    found
}

/// Inspect names models `provider/model`; a benchaudit player is `provider:model` or a rule.
fn model_name(policy: &str) -> String {
    match policy.split_once(':') {
        Some((provider, model)) => format!("{provider}/{model}"),
        None => format!("benchaudit/{policy}"),
    }
}

/// The per-episode values an export scores, by scorer name.
fn score_values(r: &EpisodeRecord) -> Vec<(&'static str, f64)> {
    let mut v = Vec::new();
    if let Some(s) = &r.scores {
        v.push(("f1", s.f1));
        v.push(("precision", s.precision));
        v.push(("recall", s.recall));
        v.push(("judge", s.judge()));
    }
    if let Some(c) = r.coverage {
        v.push(("coverage", c));
    }
    v
}

struct Log<'a> {
    run_dir: &'a Path,
    manifest: Option<&'a Manifest>,
    condition: &'a Condition,
    options: Option<&'a RunOptions>,
    created: String,
}

impl Log<'_> {
    fn write(&self, path: &Path, group: &[&EpisodeRecord]) -> Result<()> {
        let seeds: BTreeSet<u64> = group.iter().map(|r| r.key.seed).collect();
        let epoch_of: BTreeMap<u64, usize> =
            seeds.iter().enumerate().map(|(i, &s)| (s, i + 1)).collect();
        let tasks: BTreeSet<&str> = group.iter().map(|r| r.key.task_id.as_str()).collect();
        let mut archive = Writer::create(path)?;
        let mut summaries = Vec::with_capacity(group.len());
        for r in group {
            let epoch = epoch_of.get(&r.key.seed).copied().unwrap_or(1);
            let sample = self.sample(r, epoch)?;
            summaries.push(summary(&sample));
            archive.json(
                &format!("samples/{}_epoch_{epoch}.json", file_safe(&r.key.task_id)),
                &sample,
            )?;
        }
        let (results, reductions) = results(group, tasks.len());
        archive.json("summaries.json", &summaries)?;
        archive.json("reductions.json", &reductions)?;
        archive.json(
            "header.json",
            &self.header(group, &tasks, seeds.len(), results),
        )?;
        archive.finish()
    }

    fn ids(&self) -> (String, String) {
        let (policy, level, arm, hash) = self.condition;
        let base = format!(
            "{policy}\u{0}{level}\u{0}{}\u{0}{hash}\u{0}{}",
            arm.as_deref().unwrap_or(""),
            self.manifest
                .map(|m| m.config.to_string())
                .unwrap_or_default()
        );
        let digest = sha256_hex(base.as_bytes());
        (digest[..22].to_string(), digest[22..44].to_string())
    }

    fn task_name(&self) -> String {
        let (_, level, arm, _) = self.condition;
        match arm {
            Some(arm) => format!("comtrade_{level}_{arm}"),
            None => format!("comtrade_{level}"),
        }
    }

    fn header(
        &self,
        group: &[&EpisodeRecord],
        tasks: &BTreeSet<&str>,
        epochs: usize,
        results: Value,
    ) -> Value {
        let (policy, level, arm, hash) = self.condition;
        let (eval_id, run_id) = self.ids();
        let (input, output) = group.iter().fold((0u64, 0u64), |(i, o), r| {
            (i + r.usage.prompt_tokens, o + r.usage.completion_tokens)
        });
        let model = model_name(policy);
        let mut model_usage = Map::new();
        if input + output > 0 {
            model_usage.insert(
                model.clone(),
                json!({"input_tokens": input, "output_tokens": output, "total_tokens": input + output}),
            );
        }
        let scorers: Vec<Value> = super::SCORERS
            .iter()
            .filter(|s| group.iter().any(|r| score_values(r).iter().any(|(n, _)| n == *s)))
            .map(|s| {
                json!({"name": s, "options": {}, "metrics": [{"name": "inspect_ai/mean", "options": {}}], "metadata": {}})
            })
            .collect();
        json!({
            "version": 2,
            "status": "success",
            "eval": {
                "eval_id": eval_id,
                "run_id": run_id,
                "created": self.created,
                "task": self.task_name(),
                "task_id": format!("{}-{hash}", self.task_name()),
                "task_version": 0,
                "task_display_name": format!("ComtradeBench {level}{}", arm.as_deref().map(|a| format!(" [{a}]")).unwrap_or_default()),
                "task_attribs": {},
                "task_args": {},
                "task_args_passed": {},
                "solver": format!("benchaudit/{level}"),
                "dataset": {
                    "name": "comtrade",
                    "location": self.run_dir.display().to_string(),
                    "samples": tasks.len(),
                    "sample_ids": tasks.iter().collect::<Vec<_>>(),
                    "shuffled": false,
                },
                "model": model,
                "model_generate_config": {},
                "model_args": {},
                "config": {"epochs": epochs, "epochs_reducer": ["mean"]},
                "packages": {"benchaudit": env!("CARGO_PKG_VERSION")},
                "metadata": {
                    "benchaudit": {
                        "version": env!("CARGO_PKG_VERSION"),
                        "policy": policy,
                        "level": level,
                        "arm": arm,
                        "options_hash": hash,
                        "options": self.options,
                        "epochs_are_seeds": true,
                        "manifest": self.manifest,
                    }
                },
                "scorers": scorers,
            },
            "plan": {
                "name": "plan",
                "steps": [{"solver": format!("benchaudit/{level}"), "params": {"policy": policy}}],
                "config": {},
            },
            "results": results,
            "stats": {
                "started_at": self.created,
                "completed_at": self.created,
                "model_usage": model_usage,
            },
            "invalidated": false,
            "tags": [],
            "metadata": {},
        })
    }

    fn task_info(&self, r: &EpisodeRecord) -> String {
        let task = benchaudit_comtrade::task(&r.key.task_id);
        match (task, self.options) {
            (Some(task), Some(o)) => {
                let info =
                    benchaudit_comtrade::Episode::new(task, r.key.seed, o.episode).get_task_info();
                serde_json::to_string_pretty(&info).unwrap_or_default()
            }
            (Some(task), None) => format!(
                "{} (seed {}): {} (the run options of this episode are not in the manifest)",
                task.task_id, r.key.seed, task.description
            ),
            (None, _) => format!("{} (seed {})", r.key.task_id, r.key.seed),
        }
    }

    fn sample(&self, r: &EpisodeRecord, epoch: usize) -> Result<Value> {
        let input = self.task_info(r);
        let transcript = self.transcript(r)?;
        let mut messages =
            vec![json!({"id": "m0", "role": "user", "content": input, "source": "input"})];
        if let Some(t) = &transcript {
            messages.extend(transcript_messages(t, r.key.level));
        }
        let scores: Map<String, Value> = score_values(r)
            .into_iter()
            .map(|(name, value)| {
                let mut score = json!({"value": value});
                if name == "judge"
                    && let Some(s) = &r.scores
                {
                    score["metadata"] =
                        json!({"breakdown": s.judge_breakdown.shares(), "errors": s.judge_errors});
                }
                (name.to_string(), score)
            })
            .collect();
        let record = serde_json::to_value(r).map_err(RunsError::json("serialising a record"))?;
        let outcome = serde_json::to_value(r.outcome).unwrap_or(Value::Null);
        let mut sample = json!({
            "id": r.key.task_id,
            "epoch": epoch,
            "input": input,
            "target": "every unique record of the query, without totals rows (ground-truth F1 = 1)",
            "messages": messages,
            "metadata": {
                "seed": r.key.seed,
                "level": r.key.level,
                "outcome": outcome,
                "counts": r.counts,
                "payload_sha256": r.payload_sha256,
                "reward": r.reward,
                RECORD_KEY: record,
            },
            "store": {},
            "events": [],
            "model_usage": {},
            "total_time": r.timing.wall_ms / 1000.0,
            "working_time": r.timing.wall_ms / 1000.0,
            "uuid": sha256_hex(format!("{:?}", r.key).as_bytes())[..22].to_string(),
            "error_retries": [],
            "attachments": {},
        });
        if !scores.is_empty() {
            sample["scores"] = Value::Object(scores);
        }
        let tokens = r.usage.prompt_tokens + r.usage.completion_tokens;
        if tokens > 0 {
            sample["model_usage"] = json!({
                model_name(&r.key.policy): {
                    "input_tokens": r.usage.prompt_tokens,
                    "output_tokens": r.usage.completion_tokens,
                    "total_tokens": tokens,
                }
            });
        }
        if r.outcome == Outcome::InfraError {
            let message = r.error.clone().unwrap_or_else(|| "infra error".into());
            sample["error"] = json!({"message": message, "traceback": "", "traceback_ansi": ""});
        }
        Ok(sample)
    }

    fn transcript(&self, r: &EpisodeRecord) -> Result<Option<Value>> {
        // Bounded like every ledger read: a transcript is written by us, but the folder is
        // the user's.
        Ok(benchaudit_runs::ledger::read_transcript(
            self.run_dir,
            &r.key,
        )?)
    }
}

/// The transcript's events as Inspect chat messages: a call is an assistant message with
/// one tool call (made by the harness at L0/L1, by the model at L2), its result a tool
/// message; decisions, slots and notes are assistant or system text.
fn transcript_messages(transcript: &Value, level: Level) -> Vec<Value> {
    let by = if level == Level::L2 {
        "model"
    } else {
        "harness"
    };
    let mut out = Vec::new();
    let mut pending: Vec<(String, String)> = Vec::new();
    let events = transcript
        .get("events")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, e) in events.iter().enumerate() {
        let id = format!("m{}", i + 1);
        let text = |v: Option<&Value>| v.map(Value::to_string).unwrap_or_default();
        match e.get("event").and_then(Value::as_str) {
            Some("call") => {
                let name = e.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let call_id = format!("call_{}", i + 1);
                pending.push((name.clone(), call_id.clone()));
                let arguments = match e.get("arguments") {
                    Some(Value::Object(m)) => Value::Object(m.clone()),
                    Some(other) => json!({"value": other}),
                    None => json!({}),
                };
                out.push(json!({
                    "id": id, "role": "assistant", "content": "", "source": "generate",
                    "metadata": {"by": by},
                    "tool_calls": [{"id": call_id, "function": name, "arguments": arguments, "type": "function"}],
                }));
            }
            Some("result") => {
                let name = e.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                let call_id = pending
                    .iter()
                    .rposition(|(n, _)| *n == name)
                    .map(|at| pending.remove(at).1);
                let result = e.get("result").cloned().unwrap_or(Value::Null);
                let mut m = json!({
                    "id": id, "role": "tool", "content": result.to_string(),
                    "tool_call_id": call_id, "function": name,
                });
                if let Some(err) = result.get("error").and_then(Value::as_str)
                    && result.get("status").is_some()
                {
                    m["error"] = json!({"type": "unknown", "message": err});
                }
                out.push(m);
            }
            Some("decision") => out.push(json!({
                "id": id, "role": "assistant",
                "content": format!("decision on fault {}: {}", text(e.get("fault")), text(e.get("decision"))),
                "metadata": {"by": "model", "event": e},
            })),
            Some("slots") => out.push(json!({
                "id": id, "role": "assistant",
                "content": format!("slots {} (replaced by the harness: {})", text(e.get("slots")), text(e.get("replaced"))),
                "metadata": {"by": "model", "event": e},
            })),
            _ => out.push(json!({
                "id": id, "role": "system",
                "content": e.get("text").and_then(Value::as_str).map_or_else(|| e.to_string(), str::to_string),
            })),
        }
    }
    out
}

/// The summary `inspect view` lists for a sample.
fn summary(sample: &Value) -> Value {
    let mut s = json!({
        "id": sample["id"],
        "epoch": sample["epoch"],
        "input": sample["input"],
        "target": sample["target"],
        "metadata": {
            "seed": sample["metadata"]["seed"],
            "level": sample["metadata"]["level"],
            "outcome": sample["metadata"]["outcome"],
            "payload_sha256": sample["metadata"]["payload_sha256"],
        },
        "model_usage": sample["model_usage"],
        "total_time": sample["total_time"],
        "working_time": sample["working_time"],
        "uuid": sample["uuid"],
        "retries": 0,
        "completed": true,
        "message_count": sample["messages"].as_array().map_or(0, Vec::len),
    });
    if let Some(scores) = sample.get("scores") {
        s["scores"] = scores.clone();
    }
    if let Some(message) = sample.pointer("/error/message") {
        s["error"] = message.clone();
    }
    s
}

/// `results` and `reductions` as Inspect computes them with the `mean` reducer and metric:
/// each sample's epochs averaged, then the mean over samples.
fn results(group: &[&EpisodeRecord], samples: usize) -> (Value, Value) {
    let mut scores = Vec::new();
    let mut reductions = Vec::new();
    for name in super::SCORERS {
        // task → values over seeds, in seed order.
        let mut by_task: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for r in group {
            if let Some((_, v)) = score_values(r).into_iter().find(|(n, _)| *n == name) {
                by_task.entry(&r.key.task_id).or_default().push(v);
            }
        }
        if by_task.is_empty() {
            continue;
        }
        let reduced: Vec<(&str, f64)> = by_task
            .iter()
            .map(|(t, v)| (*t, v.iter().sum::<f64>() / v.len() as f64))
            .collect();
        let mean = reduced.iter().map(|(_, v)| v).sum::<f64>() / reduced.len() as f64;
        scores.push(json!({
            "name": name, "scorer": name, "reducer": "mean",
            "scored_samples": reduced.len(), "unscored_samples": samples - reduced.len(),
            "params": {},
            "metrics": {"mean": {"name": "mean", "value": mean, "params": {}}},
        }));
        reductions.push(json!({
            "scorer": name, "reducer": "mean",
            "samples": reduced.iter().map(|(t, v)| json!({"value": v, "sample_id": t})).collect::<Vec<_>>(),
        }));
    }
    let completed = group
        .iter()
        .filter(|r| r.outcome != Outcome::InfraError)
        .count();
    let headline = scores
        .first()
        .map(|s| json!({"scorer": s["name"], "score": s["name"], "metric": "mean"}));
    let mut results = json!({
        "total_samples": group.len(),
        "completed_samples": completed,
        "scores": scores,
    });
    if let Some(h) = headline {
        results["headline"] = h;
    }
    (results, Value::Array(reductions))
}
