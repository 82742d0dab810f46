//! Inspect logs (`.eval` or `.json`) to a run ledger that `benchaudit report` reads.

use benchaudit_runs::Error as RunsError;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use benchaudit_agents::collector::payload_sha256;
use benchaudit_agents::{
    AgentCounts, EpisodeKey, EpisodeRecord, Level, Outcome, Timing, TokenUsage, Transcript,
    sha256_hex,
};
use benchaudit_comtrade::{Submission, SubmitArgs};
use benchaudit_runs::{Ledger, Manifest};
use benchaudit_scoring::{RewardScorer, Scores};
use serde_json::{Value, json};

use super::archive::Reader;
use super::{RECORD_KEY, field, file_safe, value_to_float};
use crate::error::{Error, Result};

/// Largest whole-JSON log read (`.json` logs hold every sample in one document).
pub const MAX_JSON_LOG_BYTES: u64 = 1 << 30;

/// How to read Inspect logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// The scorer whose value becomes each episode's `reward`: `NAME`, or `NAME.KEY` for a
    /// scorer whose value is a dict. `None`: the log's headline scorer, else its first.
    pub score: Option<String>,
}

/// What [`import_logs`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The run directory written.
    pub out: PathBuf,
    /// Records appended now.
    pub appended: usize,
    /// Records already in the ledger (a repeated import resumes, appending nothing twice).
    pub skipped: usize,
    /// Of the records read, those exported by benchaudit and restored exactly.
    pub restored: usize,
    /// Of the records read, ComtradeBench episodes played under Inspect
    /// ([`COMTRADEBENCH_TASK`]), re-scored from the submission the log records.
    pub comtrade: usize,
    /// Samples that ended in an error (recorded as infra errors: excluded and listed).
    pub errors: usize,
    /// Samples without the chosen score (recorded without a reward: excluded and listed).
    pub unscored: usize,
    /// Per log: the file and the scorer read from it (`None` for logs benchaudit exported).
    pub logs: Vec<(PathBuf, Option<String>)>,
}

impl Imported {
    /// What `benchaudit import` prints: the counts, the scorer read from each log, and the
    /// `report` command that reads the run (on F1 when every record was restored exactly).
    pub fn summary(&self) -> String {
        let mut text = format!(
            "{}: {} episode(s) appended, {} already there ({} restored from benchaudit exports, {} ComtradeBench episodes re-scored; {} errored, {} unscored)\n",
            self.out.display(),
            self.appended,
            self.skipped,
            self.restored,
            self.comtrade,
            self.errors,
            self.unscored
        );
        for (path, score) in &self.logs {
            if let Some(score) = score {
                text.push_str(&format!("  {}: reward = score `{score}`\n", path.display()));
            }
        }
        let metric = if self.restored + self.comtrade == self.appended + self.skipped {
            "f1"
        } else {
            "reward"
        };
        text.push_str(&format!(
            "report it with: benchaudit report {} --metric {metric}\n",
            self.out.display()
        ));
        text
    }
}

/// One log as read: the header (an `EvalLog` without samples) and its samples.
struct Log {
    path: PathBuf,
    header: Value,
    samples: Vec<Value>,
}

/// Reads Inspect logs and appends one episode record per sample × epoch to the run ledger in
/// `out` (created, or resumed when it holds an import of the same logs).
///
/// Exists as the whole of `benchaudit import --format inspect` minus argument parsing.
///
/// A sample exported by benchaudit becomes its original record again. A sample of the
/// ComtradeBench Inspect task ([`COMTRADEBENCH_TASK`]) becomes a ComtradeBench record (see
/// [`comtrade_record`]): scored again by the Rust scorers from the submission in its
/// messages. Any other sample
/// becomes a record keyed (model, L2, `task.sample_id`, epoch): its policy is the eval's
/// model, its task the eval's task and sample id (characters outside `A-Za-z0-9._-` written
/// as `_`, so the ledger can name its transcript file), its seed the epoch (or, for an eval of
/// one epoch whose generate config sets a seed, that seed: [`trial_seed`]), its `reward` the
/// chosen score read as Inspect reads it ([`value_to_float`]), its usage the sample's model
/// usage; a sample that ended in an error is an `infra_error` record.
///
/// # Errors
/// [`Error::Invalid`] for a file that is not an Inspect log, a score that is not a number,
/// two samples that map to the same episode, or a ledger of another import in `out`.
pub fn import_logs(logs: &[PathBuf], out: &Path, opts: &ImportOptions) -> Result<Imported> {
    if logs.is_empty() {
        return Err(Error::Invalid("give at least one Inspect log".into()));
    }
    let mut read = Vec::with_capacity(logs.len());
    for path in logs {
        read.push(read_log(path)?);
    }
    let mut records: Vec<(EpisodeRecord, Transcript)> = Vec::new();
    let mut summary = Imported {
        out: out.to_path_buf(),
        appended: 0,
        skipped: 0,
        restored: 0,
        comtrade: 0,
        errors: 0,
        unscored: 0,
        logs: Vec::new(),
    };
    let mut sources = Vec::new();
    for log in &read {
        let eval = field(&log.header, "eval", &log.path.display().to_string())?;
        let mut scorer_used = None;
        for sample in &log.samples {
            let what = format!(
                "{} sample {} epoch {}",
                log.path.display(),
                sample.get("id").map(Value::to_string).unwrap_or_default(),
                sample
                    .get("epoch")
                    .map(Value::to_string)
                    .unwrap_or_default()
            );
            let transcript = Transcript {
                events: Vec::new(),
                messages: sample.get("messages").cloned(),
            };
            if let Some(original) = sample.get("metadata").and_then(|m| m.get(RECORD_KEY)) {
                let record: EpisodeRecord =
                    serde_json::from_value(original.clone()).map_err(|e| {
                        Error::Invalid(format!(
                            "{what}: metadata.{RECORD_KEY} is not a benchaudit record: {e}"
                        ))
                    })?;
                summary.restored += 1;
                summary.errors += usize::from(record.outcome == Outcome::InfraError);
                summary.unscored += usize::from(record.reward.is_none());
                records.push((record, transcript));
                continue;
            }
            if let Some(record) = comtrade_record(eval, sample, &what)? {
                summary.comtrade += 1;
                summary.errors += usize::from(record.outcome == Outcome::InfraError);
                summary.unscored += usize::from(record.reward.is_none());
                records.push((record, transcript));
                continue;
            }
            let scorer = match &scorer_used {
                Some(s) => String::clone(s),
                None => {
                    let s = choose_scorer(&log.header, sample, opts).ok_or_else(|| {
                        Error::Invalid(format!(
                            "{what}: the log names no scorer; give --score NAME"
                        ))
                    })?;
                    scorer_used = Some(s.clone());
                    s
                }
            };
            let record = foreign_record(eval, sample, &scorer, trial_seed(&log.header), &what)?;
            summary.errors += usize::from(record.outcome == Outcome::InfraError);
            summary.unscored += usize::from(record.reward.is_none());
            records.push((record, transcript));
        }
        let file_bytes =
            benchaudit_runs::files::read_bounded(&log.path, benchaudit_runs::files::limits::LEDGER)
                .map_err(|e| Error::Invalid(e.to_string()))?;
        sources.push(json!({
            "file": log.path.file_name().map(|n| n.to_string_lossy().to_string()),
            "sha256": sha256_hex(&file_bytes),
            "task": eval.get("task"),
            "model": eval.get("model"),
            "eval_id": eval.get("eval_id"),
            "score": scorer_used,
        }));
        summary.logs.push((log.path.clone(), scorer_used));
    }
    let mut seen = BTreeSet::new();
    for (r, _) in &records {
        if !seen.insert(&r.key) {
            return Err(Error::Invalid(format!(
                "two samples map to the same episode ({} {} {} seed {}): import each eval once",
                r.key.policy, r.key.level, r.key.task_id, r.key.seed
            )));
        }
    }
    let manifest = Manifest::new(json!({
        "source": "inspect",
        "score": opts.score,
        "logs": sources,
    }))?;
    let mut ledger = Ledger::open(out, &manifest)?;
    for (record, transcript) in &records {
        if ledger.is_done(&record.key) {
            summary.skipped += 1;
            continue;
        }
        ledger.append(record, transcript)?;
        summary.appended += 1;
    }
    Ok(summary)
}

/// Reads a `.eval` archive, or a `.json` log (one `EvalLog` document).
fn read_log(path: &Path) -> Result<Log> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json {
        let len = std::fs::metadata(path)
            .map_err(RunsError::io(format!("reading {}", path.display())))?
            .len();
        if len > MAX_JSON_LOG_BYTES {
            return Err(Error::Invalid(format!(
                "{} is {len} bytes; JSON logs of at most {MAX_JSON_LOG_BYTES} bytes are read (use the .eval format)",
                path.display()
            )));
        }
        let bytes =
            benchaudit_runs::files::read_bounded(path, benchaudit_runs::files::limits::LEDGER)
                .map_err(|e| Error::Invalid(e.to_string()))?;
        let mut doc: Value = serde_json::from_slice(&bytes)
            .map_err(RunsError::json(format!("{} is not JSON", path.display())))?;
        let samples = match doc.get_mut("samples").map(Value::take) {
            Some(Value::Array(s)) => s,
            _ => Vec::new(),
        };
        return checked(Log {
            path: path.to_path_buf(),
            header: doc,
            samples,
        });
    }
    let mut zip = Reader::open(path)?;
    let header = if zip.has("header.json") {
        zip.json("header.json")?
    } else if zip.has("_journal/start.json") {
        // A log still being written (or whose writer died): the start record has the spec.
        zip.json("_journal/start.json")?
    } else {
        return Err(Error::Invalid(format!(
            "{} has neither header.json nor _journal/start.json: not an Inspect .eval log",
            path.display()
        )));
    };
    let mut names: Vec<String> = zip
        .names()?
        .into_iter()
        .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
        .collect();
    names.sort();
    names.dedup();
    let mut samples = Vec::with_capacity(names.len());
    for name in names {
        samples.push(zip.json(&name)?);
    }
    checked(Log {
        path: path.to_path_buf(),
        header,
        samples,
    })
}

fn checked(log: Log) -> Result<Log> {
    let what = log.path.display().to_string();
    let eval = field(&log.header, "eval", &what)?;
    for key in ["task", "model"] {
        if !field(eval, key, &format!("{what}: eval"))?.is_string() {
            return Err(Error::Invalid(format!(
                "{what}: eval.{key} is not a string"
            )));
        }
    }
    Ok(log)
}

/// The scorer to read: the option, else the headline scorer, else the first one listed.
fn choose_scorer(header: &Value, sample: &Value, opts: &ImportOptions) -> Option<String> {
    if let Some(s) = &opts.score {
        return Some(s.clone());
    }
    let results = header.get("results");
    results
        .and_then(|r| r.pointer("/headline/scorer"))
        .or_else(|| results.and_then(|r| r.pointer("/scores/0/name")))
        .or_else(|| header.pointer("/eval/scorers/0/name"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            sample
                .get("scores")
                .and_then(Value::as_object)
                .and_then(|m| m.keys().next().cloned())
        })
}

/// `text` cut to 80 bytes at a character boundary, for messages that quote input.
pub(crate) fn shorten(text: &str) -> String {
    if text.len() <= 80 {
        return text.to_string();
    }
    let mut end = 80;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The trial an eval of one epoch stands for, when its generate config sets a seed (the
/// model's config, as `audit --model` sets one per seed, else the eval's, as `inspect eval
/// --seed S` sets it): evals of the same task and model run under different seeds are then
/// different trials, not one epoch twice. `None` for an eval of several epochs or no seed.
fn trial_seed(header: &Value) -> Option<u64> {
    let epochs = header
        .pointer("/eval/config/epochs")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    if epochs != 1 {
        return None;
    }
    header
        .pointer("/eval/model_generate_config/seed")
        .and_then(Value::as_u64)
        .or_else(|| header.pointer("/plan/config/seed").and_then(Value::as_u64))
}

fn foreign_record(
    eval: &Value,
    sample: &Value,
    scorer: &str,
    trial_seed: Option<u64>,
    what: &str,
) -> Result<EpisodeRecord> {
    let model = eval.get("model").and_then(Value::as_str).unwrap_or("");
    let task = eval.get("task").and_then(Value::as_str).unwrap_or("");
    let id = match field(sample, "id", what)? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => {
            return Err(Error::Invalid(format!(
                "{what}: id {} is neither a string nor a number",
                shorten(&other.to_string())
            )));
        }
    };
    let epoch = field(sample, "epoch", what)?
        .as_u64()
        .ok_or_else(|| Error::Invalid(format!("{what}: epoch is not a whole number")))?;
    let (name, key) = match scorer.split_once('.') {
        Some((n, k)) => (n, Some(k)),
        None => (scorer, None),
    };
    let score = sample
        .get("scores")
        .and_then(|s| s.get(name))
        .and_then(|s| s.get("value"));
    let score =
        match (score, key) {
            (Some(v), Some(k)) => Some(v.get(k).ok_or_else(|| {
                Error::Invalid(format!("{what}: score `{name}` has no key `{k}`"))
            })?),
            (v, _) => v,
        };
    let reward = score
        .map(|v| value_to_float(v).map_err(|e| Error::Invalid(format!("{what}: {e}"))))
        .transpose()?;
    let error = sample.get("error").filter(|e| !e.is_null()).map(|e| {
        e.get("message")
            .and_then(Value::as_str)
            .map_or_else(|| e.to_string(), str::to_string)
    });
    let outcome = match (&error, reward) {
        (Some(_), _) => Outcome::InfraError,
        (None, Some(_)) => Outcome::Submitted,
        (None, None) => Outcome::NoSubmission,
    };
    let mut usage = TokenUsage::default();
    if let Some(models) = sample.get("model_usage").and_then(Value::as_object) {
        for u in models.values() {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            usage.prompt_tokens += n("input_tokens");
            usage.completion_tokens += n("output_tokens");
        }
    }
    let messages = sample.get("messages").and_then(Value::as_array);
    let assistant = messages.map_or(0, |m| {
        m.iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .count()
    });
    let tool_calls = messages.map_or(0, |m| {
        m.iter()
            .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
            .map(Vec::len)
            .sum::<usize>()
    });
    usage.requests = u32::try_from(assistant).unwrap_or(u32::MAX);
    let options_hash =
        sha256_hex(format!("inspect\u{0}{task}\u{0}{scorer}").as_bytes())[..16].to_string();
    Ok(EpisodeRecord {
        key: EpisodeKey {
            policy: model.to_string(),
            level: Level::L2,
            task_id: format!("{}.{}", file_safe(task), file_safe(&id)),
            seed: trial_seed.unwrap_or(epoch),
            arm: None,
            options_hash,
        },
        outcome,
        reward: if error.is_some() { None } else { reward },
        scores: None,
        coverage: None,
        counts: AgentCounts {
            tool_calls: u32::try_from(tool_calls).unwrap_or(u32::MAX),
            ..AgentCounts::default()
        },
        payload_sha256: None,
        usage,
        error,
        mean_intensity: None,
        timing: Timing {
            wall_ms: sample
                .get("total_time")
                .and_then(Value::as_f64)
                .map_or(0.0, |s| s * 1000.0),
        },
    })
}

/// The registry name of the ComtradeBench Inspect task the Python package ships
/// (`python/benchaudit/comtradebench.py`): its samples are ComtradeBench episodes.
pub const COMTRADEBENCH_TASK: &str = "benchaudit/comtradebench";

/// A sample of [`COMTRADEBENCH_TASK`] as the ledger record `benchaudit run` would have written
/// for the same episode, or `None` for a sample of another task.
///
/// Key: policy `MODEL+SCAFFOLD` (the agent loop is part of the player), level L2, the sample's
/// `metadata.task_id` and `metadata.seed`, options hashed from the task's interface, tool text
/// and submission protocol. Scores: the Rust scorers on the accepted `submit_results` call's
/// arguments (full protocol), or on missing files when nothing was accepted, as `run` scores
/// them; the log's own `f1` and `judge` must agree, else the log is refused. Under the `ids` and
/// `chunked` protocols the submission is not in the arguments alone: the log's `f1` is the
/// reward and the record carries no scores.
fn comtrade_record(eval: &Value, sample: &Value, what: &str) -> Result<Option<EpisodeRecord>> {
    let task_name = eval.get("task_registry_name").or_else(|| eval.get("task"));
    if task_name.and_then(Value::as_str) != Some(COMTRADEBENCH_TASK) {
        return Ok(None);
    }
    let md = sample.get("metadata");
    let (Some(task_id), Some(seed)) = (
        md.and_then(|m| m.get("task_id")).and_then(Value::as_str),
        md.and_then(|m| m.get("seed")).and_then(Value::as_u64),
    ) else {
        return Ok(None);
    };
    let task = benchaudit_comtrade::find_task(task_id)
        .map_err(|e| Error::Invalid(format!("{what}: metadata.task_id: {e}")))?;
    let args = eval.get("task_args");
    let arg = |name: &str, default: &str| {
        args.and_then(|a| a.get(name))
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_string()
    };
    let (scaffold, interface, tool_text, protocol) = (
        arg("scaffold", "react"),
        arg("interface", "legacy"),
        arg("tool_text", "clarified"),
        arg("submission", "full"),
    );
    let mut record = foreign_record(eval, sample, "f1", None, what)?;
    record.key.policy = format!("{}+{scaffold}", record.key.policy);
    record.key.task_id = task.task_id.to_string();
    record.key.seed = seed;
    record.key.options_hash = sha256_hex(
        format!("inspect\u{0}{COMTRADEBENCH_TASK}\u{0}{interface}\u{0}{tool_text}\u{0}{protocol}")
            .as_bytes(),
    )[..16]
        .to_string();
    if record.outcome == Outcome::InfraError {
        return Ok(Some(record));
    }
    let submitted = accepted_submit_arguments(sample);
    let submission = match (&submitted, protocol.as_str()) {
        (None, _) => Submission::default(),
        (Some(args), "full") => {
            let a = SubmitArgs::from_json(args)
                .map_err(|e| Error::Invalid(format!("{what}: submit_results arguments: {e}")))?;
            Submission {
                data_jsonl: a.data_jsonl,
                metadata_json: a.metadata_json,
                run_log: a.run_log,
                undecodable: Vec::new(),
            }
        }
        (Some(_), _) => {
            record.outcome = Outcome::Submitted;
            return Ok(Some(record));
        }
    };
    let scores = Scores::compute(task, seed, &submission);
    let logged = |name: &str| {
        sample
            .pointer(&format!("/scores/{name}/value"))
            .map(value_to_float)
            .transpose()
            .map_err(|e| Error::Invalid(format!("{what}: {e}")))
    };
    for (name, ours) in [("f1", scores.f1), ("judge", scores.judge())] {
        if let Some(theirs) = logged(name)?
            && theirs != ours
        {
            return Err(Error::Invalid(format!(
                "{what}: the log's {name} {theirs} differs from its submission re-scored ({ours})"
            )));
        }
    }
    record.outcome = if submitted.is_some() {
        Outcome::Submitted
    } else {
        Outcome::NoSubmission
    };
    record.payload_sha256 = submitted.is_some().then(|| payload_sha256(&submission));
    record.reward = Some(scores.reward(RewardScorer::F1));
    record.scores = Some(scores);
    Ok(Some(record))
}

/// The arguments of the `submit_results` call the episode accepted: the call whose tool
/// result carries no error and answers `done`.
fn accepted_submit_arguments(sample: &Value) -> Option<&Value> {
    let messages = sample.get("messages")?.as_array()?;
    let accepted = messages.iter().find(|m| {
        m.get("role").and_then(Value::as_str) == Some("tool")
            && m.get("function").and_then(Value::as_str) == Some("submit_results")
            && m.get("error").is_none_or(Value::is_null)
            && tool_text(m).is_some_and(|t| {
                serde_json::from_str::<Value>(&t)
                    .ok()
                    .and_then(|v| v.get("done").and_then(Value::as_bool))
                    == Some(true)
            })
    })?;
    let id = accepted.get("tool_call_id")?.as_str()?;
    messages
        .iter()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(id))
        .and_then(|c| c.get("arguments"))
}

/// A message's text: a string `content`, or its text parts joined.
fn tool_text(message: &Value) -> Option<String> {
    match message.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use benchaudit_comtrade::{Generator, Row, find_task, record::write_jsonl};

    /// A `.json` log of the ComtradeBench Inspect task with one T3_duplicates seed-0 sample:
    /// `submit` the accepted call's arguments (None: no call), `f1` and `judge` its scores.
    fn log(dir: &Path, submit: Option<Value>, f1: f64, judge: f64) -> PathBuf {
        let mut messages = vec![json!({"role": "user", "content": "go"})];
        if let Some(arguments) = submit {
            messages.push(json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "function": "submit_results", "arguments": arguments}]}));
            messages.push(
                json!({"role": "tool", "tool_call_id": "c1", "function": "submit_results",
                "content": [{"type": "text", "text": "{\"done\":true,\"errors\":[]}"}]}),
            );
        }
        let doc = json!({
            "version": 2, "status": "success",
            "eval": {"task": COMTRADEBENCH_TASK, "task_registry_name": COMTRADEBENCH_TASK,
                     "model": "openai/m", "task_args": {"scaffold": "basic_agent", "seeds": "0"}},
            "samples": [{"id": "T3_duplicates:0", "epoch": 1,
                         "metadata": {"task_id": "T3_duplicates", "seed": 0},
                         "scores": {"f1": {"value": f1}, "judge": {"value": judge}},
                         "messages": messages}],
        });
        let path = dir.join("log.json");
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    }

    fn truth() -> String {
        let task = find_task("T3_duplicates").unwrap();
        let rows: Vec<Row> = Generator::new(task, 0).truth().map(Row::Record).collect();
        let mut out = String::new();
        write_jsonl(task, &rows, &mut out);
        out
    }

    fn records(out: &Path) -> Vec<EpisodeRecord> {
        std::fs::read_to_string(out.join("episodes.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_comtradebench_sample_becomes_a_rescored_comtrade_record() {
        let dir = tempfile::tempdir().unwrap();
        let (data, meta, log_text) = (truth(), "{\"task_id\":\"T3_duplicates\"}", "INFO done");
        let submission = Submission::new(data.clone(), meta, log_text);
        let want = Scores::compute(find_task("T3_duplicates").unwrap(), 0, &submission);
        assert_eq!(want.f1, 1.0);
        let args = json!({"data_jsonl": data, "metadata_json": meta, "run_log": log_text});
        let path = log(dir.path(), Some(args), want.f1, want.judge());
        let out = dir.path().join("run");
        let summary = import_logs(&[path], &out, &ImportOptions::default()).unwrap();
        assert_eq!((summary.comtrade, summary.appended), (1, 1));
        assert!(
            summary.summary().contains("--metric f1"),
            "{}",
            summary.summary()
        );
        let [r] = records(&out).try_into().unwrap();
        assert_eq!(r.key.policy, "openai/m+basic_agent");
        assert_eq!((r.key.task_id.as_str(), r.key.seed), ("T3_duplicates", 0));
        assert_eq!(r.key.level, Level::L2);
        assert_eq!(r.outcome, Outcome::Submitted);
        assert_eq!(r.reward, Some(1.0));
        assert_eq!(r.scores, Some(want));
        assert_eq!(r.payload_sha256, Some(payload_sha256(&submission)));
    }

    #[test]
    fn a_log_whose_scores_disagree_with_its_submission_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"data_jsonl": truth(), "metadata_json": "{}", "run_log": ""});
        let path = log(dir.path(), Some(args), 0.5, 0.5);
        let err = import_logs(&[path], &dir.path().join("run"), &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the log's f1 0.5 differs from its submission re-scored (1)"),
            "{err}"
        );
    }

    #[test]
    fn a_sample_without_an_accepted_submission_scores_the_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let empty = Scores::compute(
            find_task("T3_duplicates").unwrap(),
            0,
            &Submission::default(),
        );
        let path = log(dir.path(), None, empty.f1, empty.judge());
        let out = dir.path().join("run");
        import_logs(&[path], &out, &ImportOptions::default()).unwrap();
        let [r] = records(&out).try_into().unwrap();
        assert_eq!(r.outcome, Outcome::NoSubmission);
        assert_eq!(r.scores, Some(empty));
        assert_eq!(r.payload_sha256, None);
    }

    /// A `.json` log of one sample of a foreign task, one epoch, `seed` in the model's
    /// generate config (none: not set), `epochs` in the eval's config.
    fn foreign(dir: &Path, name: &str, seed: Option<u64>, epochs: u64, value: &str) -> PathBuf {
        let doc = json!({
            "version": 2, "status": "success",
            "eval": {"task": "arc_easy", "model": "openai-api/benchaudit/m",
                     "config": {"epochs": epochs},
                     "model_generate_config": {"seed": seed, "max_tokens": 16}},
            "plan": {"config": {}},
            "samples": [{"id": "q1", "epoch": 1, "scores": {"choice": {"value": value}},
                         "messages": []}],
        });
        let path = dir.join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    }

    #[test]
    fn evals_run_under_different_seeds_are_different_trials() {
        let dir = tempfile::tempdir().unwrap();
        let logs = [
            foreign(dir.path(), "s3.json", Some(3), 1, "C"),
            foreign(dir.path(), "s7.json", Some(7), 1, "I"),
        ];
        let out = dir.path().join("run");
        import_logs(&logs, &out, &ImportOptions::default()).unwrap();
        let got: Vec<(u64, Option<f64>)> = records(&out)
            .iter()
            .map(|r| (r.key.seed, r.reward))
            .collect();
        assert_eq!(got, [(3, Some(1.0)), (7, Some(0.0))]);
        // Without a seed (or with several epochs) the epoch is the trial: two such evals of
        // the same sample are one trial twice, refused.
        let twice = [
            foreign(dir.path(), "a.json", None, 1, "C"),
            foreign(dir.path(), "b.json", None, 1, "I"),
        ];
        let e = import_logs(&twice, &dir.path().join("run2"), &ImportOptions::default());
        assert!(e.unwrap_err().to_string().contains("same episode"));
        let epochs = [foreign(dir.path(), "e.json", Some(5), 3, "C")];
        import_logs(&epochs, &dir.path().join("run3"), &ImportOptions::default()).unwrap();
        assert_eq!(records(&dir.path().join("run3"))[0].key.seed, 1);
    }
}
