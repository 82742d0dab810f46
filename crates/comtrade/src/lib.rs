//! ComtradeBench: a seeded, adversarial, paginated mock trade-data API.
//!
//! Everything is a pure function of `(task_id, seed)` (plus the episode's options): the
//! canonical records, every page, every injected fault. No IO, no clock, no global RNG — an
//! episode replays bit for bit, and ground truth is regenerated instead of stored.
//!
//! ```
//! use benchaudit_comtrade::{Episode, EpisodeOptions, FetchPageArgs, task};
//!
//! let t = task("T3_duplicates").unwrap();
//! let mut episode = Episode::new(t, 7, EpisodeOptions::default());
//! let page = episode.fetch_page(FetchPageArgs { page: 1, page_size: None }).unwrap();
//! assert!(page.rows.len() > 10); // duplicates are injected into every page
//! assert_eq!(episode.requests_remaining(), t.max_requests - 1);
//! ```
#![deny(missing_docs)]

pub mod card;
pub mod episode;
pub mod faults;
pub mod protocol;
pub mod record;
pub mod rng;
pub mod schema;
pub mod stress;
pub mod submission;
pub mod task;

pub use episode::{Episode, EpisodeCounts, MAX_QUOTA};
pub use faults::FaultPlan;
pub use protocol::{
    AppendArgs, ArgumentError, EpisodeOptions, FetchPageArgs, InterfaceProfile, PageResponse,
    SubmissionProtocol, SubmitArgs, TOOL_NAMES, TaskInfo, TaskInfoArgs, ToolError, ToolText,
    argument_envelope, unknown_tool,
};
pub use record::{Generator, Record, Row, RowJson, RowWriter, Totals};
pub use schema::{ToolDef, tool_defs};
pub use stress::StressConfig;
pub use submission::Submission;
pub use task::{
    FaultFamily, PagingMode, Query, TaskSpec, find_task, select_tasks, short_id, task, tasks,
};
