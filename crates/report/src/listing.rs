//! The short console answers of the small commands (`tasks`, `policies`, `score`, `guard`):
//! rendered here so the binary only prints, and so each text is one function a test can call.

use std::fmt::Write;
use std::path::Path;

use benchaudit_agents::RuleKind;
use benchaudit_audit::comtrade_target::decision_name;
use benchaudit_audit::guard::GuardReport;
use benchaudit_comtrade::{TaskSpec, tasks};
use benchaudit_scoring::Scores;
use serde_json::{Value, json};

/// `benchaudit tasks`: one row per task of the registry.
pub fn tasks_table() -> String {
    let mut out = format!(
        "{:<24} {:>5} {:>6} {:>6} {:>5}  {:<7} fault\n",
        "task", "rows", "pages", "budget", "qps", "paging"
    );
    for t in tasks() {
        let _ = writeln!(
            out,
            "{:<24} {:>5} {:>6} {:>6} {:>5}  {:<7} {}",
            t.task_id,
            t.total_rows,
            t.total_pages(),
            t.max_requests,
            t.rate_limit_qps,
            format!("{:?}", t.paging_mode).to_lowercase(),
            t.fault.mode()
        );
    }
    out
}

/// `benchaudit policies`: each rule policy, the decision it gets wrong and what it does.
pub fn policies_table() -> String {
    let mut out = format!("{:<14} {:<14} what it does\n", "policy", "wrong on");
    for k in RuleKind::ALL {
        let wrong = k.wrong_decision().map_or("-", decision_name);
        let _ = writeln!(out, "{:<14} {wrong:<14} {}", k.name(), k.description());
    }
    out.push_str(
        "\nStand-ins are wrong on exactly one decision each; `--model PROVIDER:NAME` adds LLMs.\n",
    );
    out
}

/// `benchaudit policies --json`.
pub fn policies_json() -> Value {
    (RuleKind::ALL.iter())
        .map(|k| {
            json!({
                "policy": k.name(),
                "stand_in": RuleKind::STAND_INS.contains(k),
                "wrong_decision": k.wrong_decision(),
                "description": k.description(),
            })
        })
        .collect()
}

/// `benchaudit score --json`: both scorers of one submission.
pub fn score_json(task: &TaskSpec, seed: u64, s: &Scores) -> Value {
    json!({
        "task_id": task.task_id,
        "seed": seed,
        "f1": s.f1,
        "precision": s.precision,
        "recall": s.recall,
        "judge": {
            "score": s.judge(),
            "breakdown": s.judge_breakdown.shares(),
            "errors": s.judge_errors,
            "released_total": s.judge_total,
        },
    })
}

/// `benchaudit score`: both scorers of one submission, the judge by dimension.
pub fn score_text(task: &TaskSpec, seed: u64, s: &Scores) -> String {
    let b = &s.judge_breakdown.shares();
    let mut out = format!("{} seed {seed}\n", task.task_id);
    let _ = writeln!(
        out,
        "  ground truth  F1 {:.3}  precision {:.3}  recall {:.3}  ({} true of {} lines; |G| = {})",
        s.f1, s.precision, s.recall, s.true_unique, s.submitted, task.total_rows
    );
    let _ = writeln!(
        out,
        "  legacy judge  {:.3} (0-1; the released judge's {:.1}/100)",
        s.judge(),
        s.judge_total
    );
    let _ = writeln!(
        out,
        "                correctness {:.3}  completeness {:.3}  robustness {:.3}  efficiency {:.3}  data_quality {:.3}  observability {:.3}",
        b.correctness, b.completeness, b.robustness, b.efficiency, b.data_quality, b.observability
    );
    for e in &s.judge_errors {
        let _ = writeln!(out, "                (released judge would raise: {e})");
    }
    out
}

/// `benchaudit guard`: one `file:line:column:` line per violation, then the verdict.
pub fn guard_text(report: &GuardReport, file: &Path, against: &Path) -> String {
    let mut out = String::new();
    for v in &report.violations {
        let why = match &v.path {
            Some(path) => format!("is not the value at its tagged path {path} of"),
            None => "is not in".into(),
        };
        let _ = writeln!(
            out,
            "{}:{}:{}: {} {why} {}: {}",
            file.display(),
            v.number.line,
            v.number.column,
            v.number.text,
            against.display(),
            v.context
        );
    }
    if report.unlisted > 0 {
        let _ = writeln!(
            out,
            "{}: … and {} more numbers not in {} (not listed)",
            file.display(),
            report.unlisted,
            against.display()
        );
    }
    let _ = writeln!(
        out,
        "{}: {} numbers checked ({} at their tagged path), {} not accounted for by the JSON",
        if report.passed() { "pass" } else { "FAIL" },
        report.checked,
        report.tagged,
        report.violation_count()
    );
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_task_and_policy_has_its_row() {
        let table = tasks_table();
        assert_eq!(table.lines().count(), tasks().len() + 1);
        assert!(table.contains("T7_totals_trap"));
        let policies = policies_table();
        assert!(policies.contains("no-dedup       dedup"), "{policies}");
        // The JSON says which policies are stand-ins and what each gets wrong.
        let json = policies_json();
        let entry = |name: &str| {
            json.as_array()
                .and_then(|a| a.iter().find(|e| e["policy"] == name))
                .cloned()
        };
        let oracle = entry("oracle").unwrap();
        let no_dedup = entry("no-dedup").unwrap();
        assert_eq!(oracle["stand_in"], json!(false));
        assert_eq!(oracle["wrong_decision"], json!(null));
        assert_eq!(no_dedup["stand_in"], json!(true));
        assert_eq!(
            no_dedup["wrong_decision"],
            serde_json::to_value(benchaudit_agents::Decision::Dedup).unwrap()
        );
    }

    #[test]
    fn a_guard_violation_names_its_place_and_the_path_it_was_checked_at() {
        let json = json!({"a": {"b": 0.5}, "c": 0.7});
        let text = "b is 0.7<!-- ba:/a/b -->, c is 0.9";
        let report = benchaudit_audit::guard::check(text, &json);
        let out = guard_text(&report, Path::new("card.md"), Path::new("audit.json"));
        assert!(
            out.contains("card.md:1:6: 0.7 is not the value at its tagged path /a/b"),
            "{out}"
        );
        assert!(out.contains(": 0.9 is not in audit.json"), "{out}");
        assert!(out.ends_with("FAIL: 2 numbers checked (1 at their tagged path), 2 not accounted for by the JSON\n"), "{out}");
    }
}
