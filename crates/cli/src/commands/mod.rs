//! One module per subcommand.

pub mod ab;
pub mod audit;
pub mod export;
pub mod guard;
pub mod import;
pub mod mcp;
pub mod merge;
pub mod policies;
pub mod prereg;
pub mod report;
pub mod run;
pub mod score;
pub mod serve;
pub mod tasks;
pub mod truth;

use benchaudit_comtrade::TaskSpec;

use crate::UsageError;

/// Resolves a task id or fails with the list of valid ones.
pub fn resolve_task(id: &str) -> Result<&'static TaskSpec, UsageError> {
    benchaudit_comtrade::task(id).ok_or_else(|| {
        let ids: Vec<&str> = benchaudit_comtrade::tasks()
            .iter()
            .map(|t| t.task_id)
            .collect();
        UsageError(format!("unknown task `{id}` (known: {})", ids.join(", ")))
    })
}
