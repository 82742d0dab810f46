//! Response bodies shared by REST and MCP: the submit answer of SPEC §2.3, the page body, and
//! the failure envelope.

use benchaudit_comtrade::{PageResponse, RowJson, TaskSpec, ToolError};
use benchaudit_scoring::{Breakdown, RewardScorer, Scores};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;

use crate::store::Gone;

/// `submit_results`' answer: `{done, reward, scores: {f1, precision, recall, judge,
/// judge_breakdown}, errors, score, breakdown}`, the judge on the 0–1 scale of every other
/// benchaudit output. `score` and `breakdown` are compatibility fields: the released
/// ComtradeBench environment's names for the legacy judge's total (0–100) and its points per
/// dimension, which the released client and agent read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubmitAnswer {
    /// Always true: the episode is over once a submission is accepted.
    pub done: bool,
    /// The primary scorer's reward (ground-truth F1 unless the episode chose the judge).
    pub reward: f64,
    /// Both scorers, always recorded.
    pub scores: ScoreBlock,
    /// Where the released judge would have raised (its total is then 0).
    pub errors: Vec<String>,
    /// Compatibility: the legacy judge's total in points, 0–100 (the released `score`).
    pub score: f64,
    /// Compatibility: the legacy judge's points per dimension (the released `breakdown`).
    pub breakdown: Breakdown,
}

/// The `scores` object of the submit answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreBlock {
    /// Ground-truth F1.
    pub f1: f64,
    /// Ground-truth precision.
    pub precision: f64,
    /// Ground-truth recall.
    pub recall: f64,
    /// Legacy judge on 0–1: the released total / 100 to four decimals, as the released
    /// environment rounds its reward ([`benchaudit_scoring::judge_share`]).
    pub judge: f64,
    /// Legacy judge per dimension on the same scale (the six sum to `judge` before the
    /// released judge rounds its total to 0.1 points).
    pub judge_breakdown: Breakdown,
}

impl SubmitAnswer {
    /// Builds the answer from both scorers' verdicts.
    pub fn from_scores(scores: Scores, primary: RewardScorer) -> Self {
        SubmitAnswer {
            done: true,
            reward: scores.reward(primary),
            scores: ScoreBlock {
                f1: scores.f1,
                precision: scores.precision,
                recall: scores.recall,
                judge: scores.judge(),
                judge_breakdown: scores.judge_breakdown.shares(),
            },
            score: scores.judge_total,
            breakdown: scores.judge_breakdown,
            errors: scores.judge_errors,
        }
    }
}

/// A served page, serialised straight from the episode's rows: MCP builds its structured
/// content from it; REST writes the same bytes with `PageResponse::write_json`, which skips
/// serde (a test pins the two byte for byte). Same fields as `PageResponse::to_json`.
#[derive(Debug)]
pub struct PageBody<'a> {
    /// Task supplying the row fields.
    pub task: &'a TaskSpec,
    /// The page as the episode served it.
    pub page: &'a PageResponse,
}

impl Serialize for PageBody<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Rows<'a>(&'a TaskSpec, &'a PageResponse);
        impl Serialize for Rows<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.1.rows.iter().map(|row| RowJson { task: self.0, row }))
            }
        }
        let p = self.page;
        let mut map = serializer.serialize_map(Some(7))?;
        map.serialize_entry("rows", &Rows(self.task, p))?;
        map.serialize_entry("page", &p.page)?;
        map.serialize_entry("page_size", &p.page_size)?;
        map.serialize_entry("total_pages", &p.total_pages)?;
        map.serialize_entry("total_rows", &p.total_rows)?;
        map.serialize_entry("has_more", &p.has_more)?;
        map.serialize_entry("request", &p.request)?;
        map.end()
    }
}

/// Any failure a client sees: the tool envelope `{status, error, retry, retry_after_s?}`,
/// plus `reason` ("evicted" | "expired") on 410. REST sends it with `status` as the HTTP
/// status; MCP sends it as a tool result with `isError: true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The envelope.
    pub envelope: ToolError,
    /// Why the episode left the store, on 410.
    pub gone: Option<Gone>,
}

/// Longest error message a client is sent, in bytes: messages may quote input (a serde error
/// names an unknown field or variant), and an echo must not grow with the request.
pub const MAX_ERROR_BYTES: usize = 512;

/// `s` cut to at most `max` bytes at a character boundary, with `…` when cut.
pub fn cap(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

impl Failure {
    /// A non-retryable failure.
    pub fn new(status: u16, error: impl Into<String>) -> Self {
        Failure::from(ToolError::fatal(status, error))
    }

    /// The HTTP-style status.
    pub fn status(&self) -> u16 {
        self.envelope.status
    }

    /// The envelope as JSON.
    pub fn to_json(&self) -> Value {
        let mut v = self.envelope.to_json();
        if let (Some(gone), Value::Object(m)) = (self.gone, &mut v) {
            m.insert("reason".into(), Value::String(gone.as_str().into()));
        }
        v
    }
}

impl From<ToolError> for Failure {
    fn from(mut envelope: ToolError) -> Self {
        if envelope.error.len() > MAX_ERROR_BYTES {
            envelope.error = cap(&envelope.error, MAX_ERROR_BYTES);
        }
        Failure {
            envelope,
            gone: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchaudit_comtrade::{Episode, EpisodeOptions, FetchPageArgs, task};
    use benchaudit_scoring::{RewardScorer, Scores};

    #[test]
    fn page_body_matches_the_episode_json() {
        let t = task("T7_totals_trap").expect("registry");
        let mut ep = Episode::new(t, 4, EpisodeOptions::default());
        let page = ep
            .fetch_page(FetchPageArgs {
                page: 2,
                page_size: Some(7),
            })
            .expect("served");
        let direct = serde_json::to_value(PageBody {
            task: t,
            page: &page,
        })
        .expect("json");
        assert_eq!(direct, page.to_json(t));
    }

    #[test]
    fn error_messages_are_bounded() {
        let f = Failure::new(422, format!("unknown variant `{}`", "é".repeat(1 << 20)));
        assert!(f.envelope.error.len() <= MAX_ERROR_BYTES + '…'.len_utf8());
        assert!(f.envelope.error.starts_with("unknown variant `é"));
        assert_eq!(Failure::new(400, "short").envelope.error, "short");
    }

    #[test]
    fn rest_page_bytes_are_the_page_body_bytes() {
        for t in benchaudit_comtrade::tasks() {
            let mut ep = Episode::new(t, 2, EpisodeOptions::default());
            for page in [
                1,
                2,
                i64::from(t.total_pages()),
                i64::from(t.total_pages()) + 1,
            ] {
                let Ok(page) = ep.fetch_page(FetchPageArgs {
                    page,
                    page_size: None,
                }) else {
                    continue;
                };
                let serde = serde_json::to_vec(&PageBody {
                    task: t,
                    page: &page,
                })
                .expect("json");
                let mut fast = Vec::new();
                page.write_json(t, &mut fast);
                assert_eq!(
                    String::from_utf8(fast).expect("utf-8"),
                    String::from_utf8(serde).expect("utf-8"),
                    "{}",
                    t.task_id
                );
            }
        }
    }

    /// The released ComtradeBench agent reads `score` (0–100) and `breakdown` from the submit
    /// answer; the judge on 0–1 is the released reward's rounding, so no float noise.
    #[test]
    fn submit_answers_carry_the_released_fields_and_a_rounded_judge() {
        use benchaudit_comtrade::{Generator, Submission, record::write_jsonl};
        let t = task("T3_duplicates").expect("registry");
        let rows: Vec<benchaudit_comtrade::Row> = Generator::new(t, 7)
            .truth()
            .map(benchaudit_comtrade::Row::Record)
            .collect();
        let mut data = String::new();
        write_jsonl(t, &rows, &mut data);
        let meta = r#"{"task_id":"T3_duplicates","row_count":25}"#;
        let scores = Scores::compute(t, 7, &Submission::new(data, meta, "pages 1-3"));
        let answer = SubmitAnswer::from_scores(scores.clone(), RewardScorer::Judge);
        let v = serde_json::to_value(&answer).expect("json");
        assert_eq!(v["score"], scores.judge_total);
        assert!((0.0..=100.0).contains(&scores.judge_total) && scores.judge_total > 1.0);
        assert_eq!(
            v["breakdown"],
            serde_json::to_value(scores.judge_breakdown).expect("json")
        );
        assert_eq!(v["breakdown"].as_object().map(|m| m.len()), Some(6));
        // The judge, and the reward it gives, to four decimals: their shortest text has at
        // most four digits after the point.
        for judge in [&v["scores"]["judge"], &v["reward"]] {
            let text = judge.to_string();
            let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(decimals <= 4, "{text}");
            assert_eq!(
                judge.as_f64(),
                Some(benchaudit_scoring::judge_share(scores.judge_total))
            );
        }
    }

    #[test]
    fn gone_failures_say_why() {
        let f = Failure {
            envelope: ToolError::fatal(410, "episode expired"),
            gone: Some(Gone::Expired),
        };
        assert_eq!(
            f.to_json(),
            serde_json::json!({"status": 410, "error": "episode expired", "retry": false, "reason": "expired"})
        );
    }
}
