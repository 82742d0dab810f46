//! The task registry: the eleven ComtradeBench tasks with the released benchmark's parameters
//! (SPEC §2.1). The registry is data; everything else reads it.

use serde::Serialize;

/// How the released API described its paging. Advisory only: `fetch_page` takes a 1-based page
/// in both modes and the task's page size is authoritative.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PagingMode {
    /// Pages are numbered from 1.
    Page,
    /// The released API exposed offsets; we still address pages from 1 (offset = (page−1)·size).
    Offset,
}

/// The query a task asks the agent to run; codes are strings ("09" keeps its zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Query {
    /// Reporting country code.
    pub reporter: &'static str,
    /// Partner country code.
    pub partner: &'static str,
    /// Trade flow: "M" imports, "X" exports.
    pub flow: &'static str,
    /// HS commodity code.
    pub hs: &'static str,
    /// Reference year.
    pub year: i64,
}

/// The adversity a task injects. Parameters are the released benchmark's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum FaultFamily {
    /// No fault at all.
    None,
    /// Several pages, no fault: the agent must page to the end.
    Pagination,
    /// Extra copies of rows inside a page and from the previous page.
    Duplicates {
        /// Share of a page's own rows copied again into it.
        duplicate_rate: f64,
        /// Share of the page size copied in from the previously served page.
        cross_page_duplicate_rate: f64,
    },
    /// Planned requests answer HTTP 429.
    RateLimit {
        /// How many distinct valid requests fault.
        faults: u32,
    },
    /// Planned requests answer HTTP 500.
    ServerError {
        /// How many distinct valid requests fault.
        faults: u32,
    },
    /// Every valid request sees its own permutation of the full set before slicing.
    PageDrift,
    /// Every served page starts with a totals row.
    TotalsTrap,
    /// Rate-limit faults plus duplicates.
    Mixed {
        /// How many distinct valid requests answer 429.
        rate_limit_faults: u32,
        /// As in `Duplicates`.
        duplicate_rate: f64,
        /// As in `Duplicates`.
        cross_page_duplicate_rate: f64,
    },
    /// The non-stationarity engine's escalating arm on the clean substrate (SPEC §5).
    Adaptive,
}

impl FaultFamily {
    /// The released `fault_injection.mode` string; the legacy judge keys robustness on it.
    pub fn mode(&self) -> &'static str {
        match self {
            FaultFamily::None => "none",
            FaultFamily::Pagination => "pagination",
            FaultFamily::Duplicates { .. } => "duplicates",
            FaultFamily::RateLimit { .. } => "rate_limit",
            FaultFamily::ServerError { .. } => "server_error",
            FaultFamily::PageDrift => "page_drift",
            FaultFamily::TotalsTrap => "totals_trap",
            FaultFamily::Mixed { .. } => "mixed",
            FaultFamily::Adaptive => "adaptive",
        }
    }

    /// Duplicate rates `(own, cross_page)` when the family injects duplicates.
    pub fn duplicate_rates(&self) -> Option<(f64, f64)> {
        match *self {
            FaultFamily::Duplicates {
                duplicate_rate,
                cross_page_duplicate_rate,
            }
            | FaultFamily::Mixed {
                duplicate_rate,
                cross_page_duplicate_rate,
                ..
            } => Some((duplicate_rate, cross_page_duplicate_rate)),
            _ => None,
        }
    }

    /// Planned transient faults: `(count, HTTP status)`.
    pub fn planned_faults(&self) -> Option<(u32, u16)> {
        match *self {
            FaultFamily::RateLimit { faults } => Some((faults, 429)),
            FaultFamily::ServerError { faults } => Some((faults, 500)),
            FaultFamily::Mixed {
                rate_limit_faults, ..
            } => Some((rate_limit_faults, 429)),
            _ => None,
        }
    }
}

/// One task of the registry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSpec {
    /// Stable identifier; also the prefix of every record id.
    pub task_id: &'static str,
    /// What the task tests, in one sentence (shown to agents and in the card).
    pub description: &'static str,
    /// Rows per page; authoritative whatever page_size the agent passes.
    pub page_size: u32,
    /// Request budget: every fetch, rejected ones included, spends one unit.
    pub max_requests: u32,
    /// Size of the canonical record set G.
    pub total_rows: u32,
    /// Advisory rate limit, as released; faults are injected, never wall-clock throttling.
    pub rate_limit_qps: u32,
    /// Released paging description (advisory).
    pub paging_mode: PagingMode,
    /// The query the agent must run and report.
    pub query: Query,
    /// The adversity injected.
    pub fault: FaultFamily,
}

impl TaskSpec {
    /// Number of non-empty pages.
    pub fn total_pages(&self) -> u32 {
        self.total_rows.div_ceil(self.page_size)
    }
}

const fn q(
    reporter: &'static str,
    partner: &'static str,
    flow: &'static str,
    hs: &'static str,
    year: i64,
) -> Query {
    Query {
        reporter,
        partner,
        flow,
        hs,
        year,
    }
}

/// T9_clean_ab: the fault-free substrate of the A/B design, and the shape (pages, budget, rows,
/// query) T9_adaptive_adversary shares with it, the adaptive fault family aside.
const T9_CLEAN_AB: TaskSpec = TaskSpec {
    task_id: "T9_clean_ab",
    description: "The fault-free substrate of the A/B design: the stress engine is the only adversary.",
    page_size: 15,
    max_requests: 100,
    total_rows: 75,
    rate_limit_qps: 2,
    paging_mode: PagingMode::Page,
    query: q("276", "156", "X", "84", 2020),
    fault: FaultFamily::None,
};

static TASKS: [TaskSpec; 11] = [
    TaskSpec {
        task_id: "T1_single_page",
        description: "Fetch one page of 800 import records and submit them cleanly; the control task with no adversity.",
        page_size: 1000,
        max_requests: 5,
        total_rows: 800,
        rate_limit_qps: 5,
        paging_mode: PagingMode::Page,
        query: q("840", "156", "M", "85", 2021),
        fault: FaultFamily::None,
    },
    TaskSpec {
        task_id: "T2_multi_page",
        description: "Page through 2,345 export records (five pages) to the end and submit every one.",
        page_size: 500,
        max_requests: 50,
        total_rows: 2345,
        rate_limit_qps: 5,
        paging_mode: PagingMode::Page,
        query: q("276", "250", "X", "84", 2022),
        fault: FaultFamily::Pagination,
    },
    TaskSpec {
        task_id: "T3_duplicates",
        description: "Pages repeat their own rows and rows of the previous page; submit each record exactly once.",
        page_size: 10,
        max_requests: 50,
        total_rows: 25,
        rate_limit_qps: 5,
        paging_mode: PagingMode::Offset,
        query: q("392", "410", "M", "87", 2020),
        fault: FaultFamily::Duplicates {
            duplicate_rate: 0.08,
            cross_page_duplicate_rate: 0.03,
        },
    },
    TaskSpec {
        task_id: "T4_rate_limit_429",
        description: "One request is answered with HTTP 429; retry it and still collect every record.",
        page_size: 10,
        max_requests: 60,
        total_rows: 30,
        rate_limit_qps: 3,
        paging_mode: PagingMode::Page,
        query: q("724", "826", "X", "30", 2019),
        fault: FaultFamily::RateLimit { faults: 1 },
    },
    TaskSpec {
        task_id: "T5_server_error_500",
        description: "One request fails with HTTP 500; retry it and still collect every record.",
        page_size: 10,
        max_requests: 60,
        total_rows: 30,
        rate_limit_qps: 3,
        paging_mode: PagingMode::Page,
        query: q("124", "36", "M", "12", 2023),
        fault: FaultFamily::ServerError { faults: 1 },
    },
    TaskSpec {
        task_id: "T6_page_drift",
        description: "Page contents drift between requests; re-fetch until every one of the 36 records is held.",
        page_size: 12,
        max_requests: 60,
        total_rows: 36,
        rate_limit_qps: 5,
        paging_mode: PagingMode::Page,
        query: q("356", "704", "X", "09", 2018),
        fault: FaultFamily::PageDrift,
    },
    TaskSpec {
        task_id: "T7_totals_trap",
        description: "Every page opens with a totals row (partner WLD); drop the totals and submit the 750 records.",
        page_size: 250,
        max_requests: 60,
        total_rows: 750,
        rate_limit_qps: 5,
        paging_mode: PagingMode::Offset,
        query: q("826", "372", "M", "27", 2017),
        fault: FaultFamily::TotalsTrap,
    },
    TaskSpec {
        task_id: "T8_mixed_faults",
        description: "Two requests answer HTTP 429 and pages carry duplicates; retry, deduplicate and submit.",
        page_size: 20,
        max_requests: 80,
        total_rows: 60,
        rate_limit_qps: 2,
        paging_mode: PagingMode::Page,
        query: q("484", "528", "M", "72", 2016),
        fault: FaultFamily::Mixed {
            rate_limit_faults: 2,
            duplicate_rate: 0.10,
            cross_page_duplicate_rate: 0.05,
        },
    },
    TaskSpec {
        task_id: "T9_adaptive_adversary",
        description: "An adversary escalates faults, duplicates and totals rows as the agent makes progress.",
        fault: FaultFamily::Adaptive,
        ..T9_CLEAN_AB
    },
    TaskSpec {
        task_id: "T10_constrained_budget",
        description: "Duplicates under a tight request budget: no request may be wasted.",
        page_size: 10,
        max_requests: 50,
        total_rows: 80,
        rate_limit_qps: 5,
        paging_mode: PagingMode::Page,
        query: q("392", "410", "M", "90", 2021),
        fault: FaultFamily::Duplicates {
            duplicate_rate: 0.05,
            cross_page_duplicate_rate: 0.02,
        },
    },
    T9_CLEAN_AB,
];

/// Every task, in registry order.
pub fn tasks() -> &'static [TaskSpec] {
    &TASKS
}

/// Looks a task up by id.
pub fn task(task_id: &str) -> Option<&'static TaskSpec> {
    TASKS.iter().find(|t| t.task_id == task_id)
}

/// The short id of a task id, the part before the first `_` (`T2_multi_page` → `T2`), as
/// cards and check names write it and the command line accepts it where it is unique.
pub fn short_id(task_id: &str) -> &str {
    task_id.split('_').next().unwrap_or(task_id)
}

/// Looks a task up by its id, or by its short id (`T3`) when exactly one task has it; else
/// says which ids exist (a flag's value parser). Two tasks share `T9`
/// (`T9_adaptive_adversary`, `T9_clean_ab`): the message names both.
///
/// # Errors
/// An ambiguous short id with the full ids it stands for, or an unknown id with the list of
/// known ones.
pub fn find_task(task_id: &str) -> Result<&'static TaskSpec, String> {
    let id = task_id.trim();
    if let Some(t) = task(id) {
        return Ok(t);
    }
    let same: Vec<&'static TaskSpec> = TASKS.iter().filter(|t| short_id(t.task_id) == id).collect();
    match same.as_slice() {
        [one] => Ok(one),
        [] => {
            let ids: Vec<&str> = TASKS.iter().map(|t| t.task_id).collect();
            Err(format!("unknown task `{id}` (known: {})", ids.join(", ")))
        }
        many => {
            let ids: Vec<&str> = many.iter().map(|t| t.task_id).collect();
            Err(format!(
                "task `{id}` is ambiguous: give the full id, {}",
                ids.join(" or ")
            ))
        }
    }
}

/// `all`, or comma-separated task ids, in the order given.
///
/// # Errors
/// As [`find_task`], for the first unknown id.
pub fn select_tasks(spec: &str) -> Result<Vec<&'static TaskSpec>, String> {
    if spec.trim() == "all" {
        return Ok(TASKS.iter().collect());
    }
    (spec.split(',').map(str::trim))
        .filter(|p| !p.is_empty())
        .map(find_task)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn registry_has_eleven_unique_tasks() {
        assert_eq!(tasks().len(), 11);
        for t in tasks() {
            assert_eq!(task(t.task_id), Some(t));
            assert!(t.page_size > 0 && t.total_rows > 0);
        }
        assert_eq!(task("T6_page_drift").map(|t| t.query.hs), Some("09"));
        assert_eq!(select_tasks("all").map(|t| t.len()), Ok(11));
        assert_eq!(
            select_tasks(" T3_duplicates,T1_single_page").map(|t| t[1].task_id),
            Ok("T1_single_page")
        );
        // Short ids where they are unique; the full ids where two tasks share one.
        assert_eq!(find_task("T3").map(|t| t.task_id), Ok("T3_duplicates"));
        assert_eq!(
            find_task(" T10 ").map(|t| t.task_id),
            Ok("T10_constrained_budget")
        );
        assert_eq!(
            select_tasks("T1,T7_totals_trap").map(|t| t.iter().map(|t| t.task_id).collect()),
            Ok(vec!["T1_single_page", "T7_totals_trap"])
        );
        assert_eq!(
            find_task("T9").map(|t| t.task_id),
            Err(
                "task `T9` is ambiguous: give the full id, T9_adaptive_adversary or T9_clean_ab"
                    .into()
            )
        );
        assert!(
            find_task("T11")
                .unwrap_err()
                .starts_with("unknown task `T11` (known: T1_single_page")
        );
        let e = select_tasks("T1_single_page,nope").unwrap_err();
        assert!(
            e.contains("`nope`") && e.contains("T10_constrained_budget"),
            "{e}"
        );
        assert_eq!(task("T2_multi_page").map(TaskSpec::total_pages), Some(5));
        assert!(task("T11").is_none());
    }
}
