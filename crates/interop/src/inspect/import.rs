//! Inspect logs (`.eval` or `.json`) to a run ledger that `benchaudit report` reads.

use benchaudit_runs::Error as RunsError;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use benchaudit_agents::{
    AgentCounts, EpisodeKey, EpisodeRecord, Level, Outcome, Timing, TokenUsage, Transcript,
    sha256_hex,
};
use benchaudit_runs::{Ledger, Manifest};
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
            "{}: {} episode(s) appended, {} already there ({} restored from benchaudit exports; {} errored, {} unscored)\n",
            self.out.display(),
            self.appended,
            self.skipped,
            self.restored,
            self.errors,
            self.unscored
        );
        for (path, score) in &self.logs {
            if let Some(score) = score {
                text.push_str(&format!("  {}: reward = score `{score}`\n", path.display()));
            }
        }
        let metric = if self.restored == self.appended + self.skipped {
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
/// A sample exported by benchaudit becomes its original record again. Any other sample
/// becomes a record keyed (model, L2, `task.sample_id`, epoch): its policy is the eval's
/// model, its task the eval's task and sample id (characters outside `A-Za-z0-9._-` written
/// as `_`, so the ledger can name its transcript file), its seed the epoch, its `reward` the
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
            let record = foreign_record(eval, sample, &scorer, &what)?;
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

fn foreign_record(eval: &Value, sample: &Value, scorer: &str, what: &str) -> Result<EpisodeRecord> {
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
            seed: epoch,
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
