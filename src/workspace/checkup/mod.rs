//! `doctor`'s checks: the tools, the workspace root, the repository, direnv's trust database,
//! leftovers of interrupted commands and workspaces with problems, each ok, a warning or an
//! error with its fix. Nothing here changes anything.

mod leftovers;
mod root;
mod sandbox;
mod tools;

use serde::Serialize;

use crate::workspace::context::{Context, Options};
use crate::workspace::inventory::{self, Entry};

/// How bad a check's finding is; any error makes `doctor` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum Level {
    Ok,
    Warning,
    Error,
}

/// One finding: what was checked, what was found and, unless ok, how to fix it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Check {
    pub name: String,
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub(crate) fn ok(name: impl Into<String>, message: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            level: Level::Ok,
            message: message.into(),
            fix: None,
        }
    }

    pub(crate) fn warning(
        name: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            level: Level::Warning,
            fix: Some(fix.into()),
            ..Check::ok(name, message)
        }
    }

    pub(crate) fn error(
        name: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            level: Level::Error,
            ..Check::warning(name, message, fix)
        }
    }
}

/// Everything found: the checks in order, and the workspaces that have a problem (their
/// wording is the command layer's, as in `status`).
pub(crate) struct Findings {
    pub checks: Vec<Check>,
    pub troubled: Vec<Entry>,
}

/// Runs every check. Without a repository the repository's own checks are replaced by one
/// error; the tools and the root are checked all the same.
pub(crate) fn run(options: Options<'_>) -> Findings {
    let context = Context::open(options);
    let backend = context.as_ref().ok().map(|ctx| ctx.repo.backend);
    let sandbox = context.as_ref().is_ok_and(|ctx| ctx.config.sandbox);
    let mut checks = tools::check(backend, sandbox);
    let mut troubled = vec![];
    match &context {
        Ok(ctx) => {
            checks.push(root::repository(ctx));
            checks.extend(root::root(&ctx.layout, ctx.config.min_free_disk));
            checks.push(tools::trust_database());
            checks.extend(sandbox::check(&ctx.config));
            checks.extend(leftovers::check(&ctx.layout));
            checks.extend(leftovers::pool_registrations(ctx));
            let (entries, warning) = inventory::all(ctx);
            let unasked = warning.is_some();
            if let Some(err) = warning {
                checks.push(Check::warning(
                    "workspaces",
                    format!(
                        "could not ask the backend which workspaces it knows: {}",
                        err.message
                    ),
                    err.hint
                        .unwrap_or_else(|| "run `agent-workspace status` for details".into()),
                ));
            }
            troubled = entries
                .into_iter()
                .filter(|e| e.problem.is_some())
                .collect();
            if troubled.is_empty() && !unasked {
                checks.push(Check::ok("workspaces", "no workspace has a problem"));
            }
        }
        Err(err) => {
            checks.push(Check::error(
                "repository",
                err.message.clone(),
                err.hint.clone().unwrap_or_else(|| {
                    "run inside a jj or git repository, or pass --repo PATH".into()
                }),
            ));
            if let Ok(dir) = crate::store::layout::workspace_root(options.root) {
                checks.extend(root::root_alone(&dir));
            }
            checks.push(tools::trust_database());
        }
    }
    Findings { checks, troubled }
}
