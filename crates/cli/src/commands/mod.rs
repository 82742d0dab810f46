//! One module per subcommand.

pub mod ab;
pub mod assist;
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
