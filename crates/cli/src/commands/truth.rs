//! `benchaudit truth`: the canonical records of (task, seed) as JSON Lines.

use std::process::ExitCode;

use benchaudit_comtrade::{Generator, Row, record::write_jsonl};

use crate::cli::TruthArgs;
use crate::output::print;

/// Runs the subcommand.
pub fn run(args: &TruthArgs) -> anyhow::Result<ExitCode> {
    let task = args.task;
    let rows: Vec<Row> = Generator::new(task, args.seed)
        .truth()
        .map(Row::Record)
        .collect();
    let mut out = String::with_capacity(rows.len() * 200);
    write_jsonl(task, &rows, &mut out);
    print(&out)?;
    Ok(ExitCode::SUCCESS)
}
