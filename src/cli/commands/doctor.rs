//! `doctor`: checks the tools, the root, the repository and its workspaces, and says how to
//! fix what is wrong.

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::Invocation;
use crate::error::Result;
use crate::ui::report;
use crate::workspace::checkup::{self, Check, Level};

/// Check the tools, the workspace root, the repository and its workspaces
///
/// Each finding is ok, a warning or an error with its fix; the exit code is 1 when any is an
/// error.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

/// `doctor --json`.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct DoctorJson {
    schema_version: u64,
    ok: bool,
    #[cfg_attr(test, schemars(length(min = 1)))]
    checks: Vec<Check>,
}

pub(in crate::cli) fn cmd_doctor(inv: &Invocation, args: &DoctorArgs) -> Result<i32> {
    let ui = inv.ui;
    let findings = checkup::run(inv.global.into());
    let mut checks = findings.checks;
    for entry in &findings.troubled {
        if let Some(problem) = &entry.problem {
            checks.push(Check::warning(
                "workspaces",
                format!("workspace {} has a problem: {}", entry.id, problem.code()),
                report::problem_hint(problem, entry),
            ));
        }
    }
    let ok = checks.iter().all(|c| c.level != Level::Error);
    let text = if args.json {
        let doc = DoctorJson {
            schema_version: 1,
            ok,
            checks,
        };
        serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
    } else {
        render(&checks)
    };
    ui.data(&text)?;
    Ok(if ok { 0 } else { 1 })
}

fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for check in checks {
        let level = match check.level {
            Level::Ok => "ok",
            Level::Warning => "warning",
            Level::Error => "error",
        };
        out += &format!("{level:<7}  {}: {}\n", check.name, check.message);
        if let Some(fix) = &check.fix {
            out += &format!("         fix: {fix}\n");
        }
    }
    let errors = checks.iter().filter(|c| c.level == Level::Error).count();
    let warnings = checks.iter().filter(|c| c.level == Level::Warning).count();
    let (errors, warnings) = (
        report::count(errors, "error"),
        report::count(warnings, "warning"),
    );
    out += &format!("{errors}, {warnings}\n");
    out
}
