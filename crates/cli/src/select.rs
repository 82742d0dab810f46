//! Parsing the selections of a run: seeds, tasks, levels and policies.

use benchaudit_agents::{Level, RuleKind};
use benchaudit_comtrade::{TaskSpec, tasks};

use crate::UsageError;

/// Seeds: `A..B` (inclusive, as in "seeds 0..999"), `A..=B`, `A..<B` (exclusive), `A+N` (N
/// seeds from A), `N`, or a comma-separated mix ([`benchaudit_runs::parse_seeds`]).
pub fn seeds(spec: &str) -> Result<Vec<u64>, UsageError> {
    seeds_for("--seeds", spec)
}

/// A seed set given by `flag`.
pub fn seeds_for(flag: &str, spec: &str) -> Result<Vec<u64>, UsageError> {
    benchaudit_runs::parse_seeds(spec).map_err(|why| {
        UsageError(format!(
            "invalid {flag} `{spec}`: {why} (write e.g. 0..9, 0+10, '0..<10', 3 or 1,4,7)"
        ))
    })
}

/// Tasks: `all` or comma-separated ids.
pub fn task_list(spec: &str) -> Result<Vec<&'static TaskSpec>, UsageError> {
    if spec.trim() == "all" {
        return Ok(tasks().iter().collect());
    }
    spec.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(crate::commands::resolve_task)
        .collect()
}

/// Levels: comma-separated L0, L1, L2.
pub fn levels(spec: &str) -> Result<Vec<Level>, UsageError> {
    spec.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            Level::parse(p)
                .ok_or_else(|| UsageError(format!("unknown level `{p}` (known: L0, L1, L2)")))
        })
        .collect()
}

/// Rule policies: comma-separated names.
pub fn rule_policies(spec: &str) -> Result<Vec<RuleKind>, UsageError> {
    spec.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            RuleKind::parse(p).ok_or_else(|| {
                let names: Vec<&str> = RuleKind::ALL.iter().map(|k| k.name()).collect();
                UsageError(format!(
                    "unknown policy `{p}` (known: {})",
                    names.join(", ")
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges() {
        assert_eq!(seeds("0..3").map_err(|e| e.0), Ok(vec![0, 1, 2, 3]));
        assert_eq!(seeds("0..<3").map_err(|e| e.0), Ok(vec![0, 1, 2]));
        assert_eq!(seeds("5, 1..=2,5").map_err(|e| e.0), Ok(vec![1, 2, 5]));
        assert!(seeds("3..1").is_err());
        assert!(seeds("x").is_err());
        assert!(seeds("").is_err());
        assert!(seeds("0..<0").is_err());
        assert!(seeds("0..99999999").is_err());
    }

    #[test]
    fn lists() {
        assert_eq!(task_list("all").map(|t| t.len()).map_err(|e| e.0), Ok(11));
        assert!(task_list("T1_single_page,nope").is_err());
        assert_eq!(
            levels("L0,l2").map_err(|e| e.0),
            Ok(vec![Level::L0, Level::L2])
        );
        assert!(rule_policies("oracle,typo").is_err());
    }
}
