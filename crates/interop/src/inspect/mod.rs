//! Inspect `.eval` logs, both ways.
//!
//! **The format.** A `.eval` log is a zip archive (as `inspect-ai` 0.3.x writes it):
//! `header.json` (the `EvalLog` without samples: `version` 2, `status`, `eval` — the
//! `EvalSpec` —, `plan`, `results`, `stats`), one `samples/{id}_epoch_{n}.json` per sample and
//! epoch (`EvalSample`), `summaries.json` (an `EvalSampleSummary` per sample, which
//! `inspect view` lists) and `reductions.json` (per scorer, each sample's score reduced over
//! epochs). Inspect compresses members with zstd; it reads stored and deflate members as well.
//! Inspect also writes whole logs as one JSON document (`.json`); [`import_logs`] reads both.
//!
//! **The mapping** (see docs/decisions.md, "Interop"):
//!
//! | benchaudit | Inspect |
//! |---|---|
//! | a condition: player × level × arm × options | one eval (one log): Inspect has one model per eval |
//! | a task (`T3_duplicates`) | a sample id |
//! | a seed | an epoch: the seed's rank among the condition's seeds, from 1; the seed itself in `metadata.seed` |
//! | F1, precision, recall, judge (0–1), coverage | one scorer each (`f1`, …), reduced over epochs by `mean` |
//! | tool calls and results of the transcript | `messages` (assistant tool calls, tool results) |
//! | an infra error | a sample `error` (Inspect's own meaning: the sample did not run) |
//!
//! Every exported sample carries its whole ledger record in `metadata.benchaudit_record`, so a
//! log exported here imports back to the identical record; a log of the ComtradeBench Inspect
//! task ([`COMTRADEBENCH_TASK`], which the Python package ships) becomes ComtradeBench records
//! re-scored from the submissions in their messages (`benchaudit report` on F1); any other log
//! Inspect wrote becomes records whose `reward` is the chosen scorer's value
//! (`benchaudit report --metric reward`).

mod archive;
mod export;
mod import;

pub use export::{ExportedLog, export_run, export_summary};
pub use import::{COMTRADEBENCH_TASK, ImportOptions, Imported, import_logs};

use serde_json::Value;

use crate::error::{Error, Result};

/// Sample metadata key holding the full ledger record of an exported episode.
pub const RECORD_KEY: &str = "benchaudit_record";

/// The scorer names an export writes, in order (`coverage` only where recorded).
pub const SCORERS: [&str; 5] = ["f1", "precision", "recall", "judge", "coverage"];

/// Inspect's reading of a score value as a number (its `value_to_float`, with the default
/// sentinels): `C` → 1, `P` → 0.5, `I` and `N` → 0, booleans, numbers, numeric strings and
/// yes/no/true/false. Where Inspect would warn and count 0 (a list, a dict, other text), this
/// refuses: an imported statistic must not rest on a silent zero.
pub fn value_to_float(value: &Value) -> std::result::Result<f64, String> {
    let x = match value {
        Value::String(s) if s == "C" => 1.0,
        Value::String(s) if s == "P" => 0.5,
        Value::String(s) if s == "I" || s == "N" => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| format!("score {n} is not a finite number"))?,
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "yes" | "true" => 1.0,
            "no" | "false" => 0.0,
            other => other
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("score value `{s}` is not a number or C/I/P/N"))?,
        },
        other => {
            return Err(format!(
                "score value {} is not a scalar (give --score SCORER.KEY for a dict value)",
                crate::inspect::import::shorten(&other.to_string())
            ));
        }
    };
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("score value {value} is not finite"))
    }
}

/// `YYYY-MM-DDTHH:MM:SS+00:00` of a time in seconds since the Unix epoch (UTC), the form
/// Inspect writes in `created`, `started_at` and `completed_at`.
pub(crate) fn rfc3339(unix_seconds: u64) -> String {
    let days = unix_seconds / 86_400;
    let secs = unix_seconds % 86_400;
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm, proleptic Gregorian).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}+00:00",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

pub(crate) use benchaudit_runs::files::file_safe;

/// The field `key` of a JSON object, or an error naming `what`.
pub(crate) fn field<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a Value> {
    v.get(key)
        .ok_or_else(|| Error::Invalid(format!("{what} has no `{key}`")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn scores_read_as_inspect_reads_them() {
        for (v, x) in [
            (json!("C"), 1.0),
            (json!("I"), 0.0),
            (json!("P"), 0.5),
            (json!("N"), 0.0),
            (json!(true), 1.0),
            (json!(false), 0.0),
            (json!(0.25), 0.25),
            (json!(3), 3.0),
            (json!("Yes"), 1.0),
            (json!("false"), 0.0),
            (json!(" 0.5"), 0.5),
        ] {
            assert_eq!(value_to_float(&v), Ok(x), "{v}");
        }
        for bad in [
            json!("maybe"),
            json!([1]),
            json!({"a": 1}),
            json!(null),
            json!("nan"),
        ] {
            assert!(value_to_float(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timestamps_are_utc_civil_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00+00:00");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20+00:00");
        assert_eq!(rfc3339(4_107_542_399), "2100-02-28T23:59:59+00:00");
    }
}
