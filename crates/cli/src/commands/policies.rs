//! `benchaudit policies`: the rule policies and the one decision each makes differently.

use std::fmt::Write;
use std::process::ExitCode;

use benchaudit_agents::RuleKind;
use benchaudit_audit::comtrade_target::decision_name;
use clap::Args;
use serde_json::json;

use crate::output::print;

/// `benchaudit policies`
#[derive(Debug, Args)]
pub struct PoliciesArgs {
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The decision a policy gets wrong, in the audit's words (`-` for none).
fn wrong(kind: RuleKind) -> &'static str {
    kind.wrong_decision().map_or("-", decision_name)
}

/// Runs the subcommand.
pub fn run(args: &PoliciesArgs) -> anyhow::Result<ExitCode> {
    if args.json {
        let list: Vec<_> = RuleKind::ALL
            .iter()
            .map(|k| {
                json!({
                    "policy": k.name(),
                    "stand_in": RuleKind::STAND_INS.contains(k),
                    "wrong_decision": k.wrong_decision(),
                    "description": k.description(),
                })
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&list)?;
        text.push('\n');
        print(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    writeln!(out, "{:<14} {:<14} what it does", "policy", "wrong on")?;
    for k in RuleKind::ALL {
        writeln!(out, "{:<14} {:<14} {}", k.name(), wrong(k), k.description())?;
    }
    out.push_str(
        "\nStand-ins are wrong on exactly one decision each; `--model PROVIDER:NAME` adds LLMs.\n",
    );
    print(&out)?;
    Ok(ExitCode::SUCCESS)
}
