//! `mcp`: the Model Context Protocol server over stdio (rmcp), bound to one repository.
//!
//! Each tool call runs this same binary (`current_exe`) with `--json`, pinned to the
//! repository, root and backend the server resolved when it started: the call's result is
//! the CLI's own document, a run is a real `run` (its own supervisor, lease, guard and
//! record, so parallel runs in different workspaces need nothing shared in this process),
//! and a cancelled call sends that `run` the SIGINT a Ctrl-C would. docs/mcp.md says why.

mod child;
mod hints;
mod logs;
pub(in crate::cli) mod tools;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::process::Command;

use crate::error::{CliError, FailureJson, Result};
use crate::store::layout::{Layout, WorkspaceId};
use child::{Finished, Stopped, Watch};
use tools::{
    CheckpointInput, CleanInput, CreateInput, DiffInput, LandInput, Prefer, RunInput, RunJson,
    StatusInput, StatusRow, StatusRowsJson, BEHIND,
};

/// What the server was started with.
pub(in crate::cli) struct Options {
    /// Every run sandboxed, whatever a call asks.
    pub sandbox: bool,
    /// `workspace_land` may land (a dry run is always allowed).
    pub allow_land: bool,
}

/// The server: this binary and the flags that pin every command it starts to one repository.
#[derive(Clone)]
struct Server {
    exe: PathBuf,
    pinned: Vec<OsString>,
    layout: Layout,
    sandbox: bool,
    allow_land: bool,
    tools: std::sync::Arc<Vec<Tool>>,
    /// True once the client closed the connection.
    closed: tokio::sync::watch::Receiver<bool>,
}

/// Serves MCP on stdin and stdout until the client closes the connection.
pub(in crate::cli) fn serve(
    ui: &crate::ui::Ui,
    ctx: &crate::workspace::context::Context,
    options: Options,
) -> Result<i32> {
    let exe = std::env::current_exe().map_err(|e| {
        CliError::failure("could not find this program's own path").cause(e.to_string())
    })?;
    let pinned: Vec<OsString> = vec![
        "--repo".into(),
        ctx.repo.root.clone().into(),
        "--root".into(),
        ctx.layout.root.clone().into(),
        "--backend".into(),
        ctx.repo.backend.as_str().into(),
        "--color".into(),
        "never".into(),
    ];
    // The namespace directory the runs' logs go under, made now as the first run would.
    ctx.layout.ensure(&ctx.repo)?;
    let (closed_tx, closed) = tokio::sync::watch::channel(false);
    let server = Server {
        exe,
        pinned,
        layout: ctx.layout.clone(),
        sandbox: options.sandbox || ctx.config.sandbox,
        allow_land: options.allow_land,
        tools: std::sync::Arc::new(tools::all()),
        closed,
    };
    // One thread: the server only waits (for the client, its commands and their output),
    // and every hand-off between threads would be paid on each call (docs/benchmarks.md).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::failure("could not start the MCP server").cause(e.to_string()))?;
    // Ending (the client closed the connection, or a signal) drops every call under way: a
    // run's call then sends its `run` the SIGINT that interrupts it (`child::Interrupt`).
    let ended = runtime.block_on(async move {
        // Made inside the runtime: the pipes register with its reactor.
        let (stdin, stdout) = ui.protocol_stdio();
        let stdin = child::Stdin {
            inner: stdin,
            closed: closed_tx,
        };
        let serving = async {
            let running = server.serve((stdin, stdout)).await.map_err(|e| {
                CliError::failure("the MCP client did not initialize").cause(e.to_string())
            })?;
            running
                .waiting()
                .await
                .map_err(|e| CliError::failure("the MCP server stopped").cause(e.to_string()))?;
            Ok(0)
        };
        tokio::select! {
            ended = serving => ended,
            signal = stop_signal() => Ok(128 + signal),
        }
    });
    // Dropping the calls under way interrupts their runs; a thread blocked reading stdin
    // (when it is not a pipe) is not waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    ended
}

/// The first SIGTERM, SIGINT or SIGHUP the server gets (a client that stops it rather than
/// closing its stdin); never, where they cannot be caught.
async fn stop_signal() -> i32 {
    use tokio::signal::unix::{signal, SignalKind};
    let caught = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    );
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = caught else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => libc::SIGTERM,
        _ = int.recv() => libc::SIGINT,
        _ = hup.recv() => libc::SIGHUP,
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "agent-workspace",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Isolated jj (or git worktree) workspaces of one repository: create one, run \
                 commands in it, look at its diff, checkpoint it, land it or clean it. A \
                 result's structured content is the document `agent-workspace <command> \
                 --json` prints; workspace_status without an id lists a row per workspace.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "workspace_create" => self.create(input(args)?, &context).await,
            "workspace_run" => self.run(input(args)?, &context).await,
            "workspace_status" => self.status(input(args)?, &context).await,
            "workspace_diff" => self.diff(input(args)?, &context).await,
            "workspace_checkpoint" => self.checkpoint(input(args)?, &context).await,
            "workspace_land" => self.land(input(args)?, &context).await,
            "workspace_clean" => self.clean(input(args)?, &context).await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no tool named {other:?}"),
                    None,
                ))
            }
        };
        Ok(result.unwrap_or_else(|failed| failed).into())
    }
}

/// A call's arguments as its input type; arguments that do not fit are the client's mistake,
/// a JSON-RPC error.
fn input<T: DeserializeOwned>(args: JsonObject) -> std::result::Result<T, ErrorData> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| ErrorData::invalid_params(format!("invalid arguments: {e}"), None))
}

/// The most of a patch `workspace_diff` gives (an agent's context is not the place for more).
const PATCH_LIMIT: usize = 256 << 10;

/// A tool's answer, or the error result it ends with (both are tool results).
type Answer = std::result::Result<CallToolResult, CallToolResult>;

impl Server {
    async fn create(&self, i: CreateInput, cx: &RequestContext<RoleServer>) -> Answer {
        let mut argv = vec![
            "create".to_string(),
            checked(&i.id)?.to_string(),
            "--json".into(),
        ];
        if let Some(parent) = &i.parent {
            argv.push(format!("--parent={}", checked(parent)?));
        }
        push_value(&mut argv, "--base-change", i.base_change.as_deref());
        push_value(&mut argv, "--workflow", i.workflow.as_deref());
        if self.sandbox {
            argv.push("--sandbox".into());
        }
        self.json_tool(argv, cx, |doc| {
            format!(
                "workspace {} {} at {}",
                field(doc, "workspace_id"),
                if doc["created"] == true {
                    "created"
                } else {
                    "reattached"
                },
                field(doc, "path")
            )
        })
        .await
    }

    async fn status(&self, i: StatusInput, cx: &RequestContext<RoleServer>) -> Answer {
        let mut argv = vec!["status".to_string()];
        if let Some(id) = &i.id {
            argv.push(checked(id)?.to_string());
        }
        argv.push("--json".into());
        let answer = self
            .json_tool(argv, cx, |doc| {
                format!(
                    "workspace {}: {}",
                    field(doc, "workspace_id"),
                    field(doc, "status")
                )
            })
            .await?;
        // Without an id, a row per workspace: the whole records are for one id.
        let list = answer.structured_content.as_ref().map(|d| &d["workspaces"]);
        let Some(Value::Array(list)) = list.filter(|_| i.id.is_none()) else {
            return Ok(answer);
        };
        let rows = StatusRowsJson {
            schema_version: 1,
            workspaces: list.iter().map(StatusRow::of).collect(),
        };
        let mut summary = crate::ui::report::count(rows.workspaces.len(), "workspace");
        let behind = |row: &StatusRow| row.changes.as_ref().is_some_and(|c| c.ends_with(BEHIND));
        if rows.workspaces.iter().any(behind) {
            summary.push_str(
                "; changes marked (may be behind) are as of jj's snapshot before the last run \
                 ended: `workspace_status` with `id` reads the files now",
            );
        }
        Ok(success(
            serde_json::to_value(rows).unwrap_or_default(),
            summary,
        ))
    }

    async fn diff(&self, i: DiffInput, cx: &RequestContext<RoleServer>) -> Answer {
        let id = checked(&i.id)?;
        let argv = vec!["diff".to_string(), id.to_string(), "--json".into()];
        let mut answer = self
            .json_tool(argv, cx, |doc| {
                let files = doc["files"].as_array().map_or(0, Vec::len);
                format!(
                    "workspace {}: {}",
                    field(doc, "workspace_id"),
                    match files {
                        1 => "1 file changed".to_string(),
                        n => format!("{n} files changed"),
                    }
                )
            })
            .await?;
        if i.patch == Some(true) {
            let argv = vec!["diff".to_string(), id.to_string(), "--patch".into()];
            let done = self.start(&argv, cx).await.map_err(failed_start)?;
            if done.code != 0 {
                return Err(self.no_document(&argv, &done));
            }
            let mut patch = done.stdout.text();
            if patch.len() > PATCH_LIMIT {
                let mut cut = PATCH_LIMIT;
                while !patch.is_char_boundary(cut) {
                    cut -= 1;
                }
                patch.truncate(cut);
                patch.push_str(&format!(
                    "\n[the patch is cut at {} KiB: the user's `agent-workspace diff {} --patch` shows it whole]\n",
                    PATCH_LIMIT >> 10,
                    i.id
                ));
            }
            answer.content.push(ContentBlock::text(patch));
        }
        Ok(answer)
    }

    async fn checkpoint(&self, i: CheckpointInput, cx: &RequestContext<RoleServer>) -> Answer {
        let mut argv = vec![
            "checkpoint".to_string(),
            checked(&i.id)?.to_string(),
            "--json".into(),
        ];
        push_value(&mut argv, "--message", i.message.as_deref());
        self.json_tool(argv, cx, |doc| match doc["created"] == true {
            true => format!(
                "checkpoint {} of {}: {}",
                doc["number"],
                field(doc, "workspace_id"),
                field(doc, "commit_id")
            ),
            false => format!(
                "no checkpoint of {}: nothing changed",
                field(doc, "workspace_id")
            ),
        })
        .await
    }

    async fn land(&self, i: LandInput, cx: &RequestContext<RoleServer>) -> Answer {
        let id = checked(&i.id)?;
        let dry_run = i.dry_run == Some(true);
        if !dry_run && !self.allow_land {
            return Err(failure(
                &CliError::usage("this server may not land workspaces")
                    .hint("call `workspace_land` with `dry_run: true` to see what would land, and ask the user to land it (`agent-workspace land ID`) or to start the server with `agent-workspace mcp --allow-land`"),
                2,
            ));
        }
        let mut argv = vec!["land".to_string(), id.to_string(), "--json".into()];
        if dry_run {
            argv.push("--dry-run".into());
        }
        if let Some(prefer) = i.prefer {
            argv.push(match prefer {
                Prefer::Workspace => "--prefer=workspace".into(),
                Prefer::Target => "--prefer=target".into(),
            });
        }
        push_value(&mut argv, "--onto", i.onto.as_deref());
        self.json_tool(argv, cx, |doc| {
            format!(
                "land of {}{}: {}",
                field(doc, "workspace_id"),
                if doc["dry_run"] == true {
                    " (dry run)"
                } else {
                    ""
                },
                field(doc, "outcome")
            )
        })
        .await
    }

    async fn clean(&self, i: CleanInput, cx: &RequestContext<RoleServer>) -> Answer {
        let mut argv = vec![
            "clean".to_string(),
            checked(&i.id)?.to_string(),
            "--json".into(),
        ];
        if i.dry_run == Some(true) {
            argv.push("--dry-run".into());
        }
        if i.force == Some(true) {
            argv.push("--force".into());
        }
        self.json_tool(argv, cx, |doc| {
            let count = |key: &str| doc[key].as_array().map_or(0, Vec::len);
            format!(
                "{}removed {}, skipped {}, failed {}",
                if doc["dry_run"] == true {
                    "would have "
                } else {
                    ""
                },
                count("removed"),
                count("skipped"),
                count("failed")
            )
        })
        .await
    }

    async fn run(&self, i: RunInput, cx: &RequestContext<RoleServer>) -> Answer {
        let id = checked(&i.id)?;
        if i.command.is_empty() {
            return Err(failure(
                &CliError::usage("no command given")
                    .hint("give the command and its arguments: [\"make\", \"test\"]"),
                2,
            ));
        }
        let failure_file = logs::failure_path(&self.layout, &id);
        let mut argv = vec!["run".to_string(), id.to_string()];
        push_value(&mut argv, "--workflow", i.workflow.as_deref());
        // The server's sandbox is not the client's to turn off: `sandbox: false` asks for
        // nothing, and --no-sandbox is never passed.
        if self.sandbox || i.sandbox == Some(true) {
            argv.push("--sandbox".into());
        }
        if i.no_network == Some(true) {
            argv.push("--no-network".into());
        }
        argv.push(format!("--failure-file={}", failure_file.display()));
        argv.push("--".into());
        argv.extend(i.command.iter().cloned());
        let (log, log_path) = match logs::open(&self.layout, &id) {
            Ok((file, path)) => (Some(file), Some(path)),
            Err(_) => (None, None),
        };
        let max_output = i
            .max_output_bytes
            .unwrap_or(child::OUTPUT_DEFAULT)
            .min(child::OUTPUT_LIMIT);
        let watch = Watch {
            context: cx,
            limit: Some(max_output),
            log,
            timeout: i.timeout_s.map(Duration::from_secs),
            interruptible: true,
            closed: self.closed.clone(),
            subject: format!("workspace {id}"),
            after_start: Some(Box::new(|| logs::prune(&self.layout, &id))),
        };
        let done = self.start_watched(&argv, watch).await.map_err(failed_start);
        let failed = logs::read_failure(&failure_file);
        let done = done?;
        if let Some(doc) = failed {
            return Err(error_result(doc));
        }
        // The status alone, not the whole record (read on every call).
        let workspace = self.layout.workspace(&id);
        let recorded = crate::store::metadata::recorded_status(&workspace).or_else(|| {
            match crate::store::metadata::load(&workspace) {
                crate::store::metadata::Loaded::Ok(record) => Some(record.status),
                _ => None,
            }
        });
        let status = match recorded {
            Some(status) => status.as_str().to_string(),
            None if done.stopped.is_some() => "interrupted".into(),
            None => "unknown".into(),
        };
        let (stdout, stderr) = child::within(done.stdout, done.stderr, max_output);
        let doc = RunJson {
            schema_version: 1,
            workspace_id: id.to_string(),
            exit_code: done.code,
            status,
            timed_out: done.stopped == Some(Stopped::TimedOut),
            truncated: stdout.truncated() || stderr.truncated(),
            stdout_cut_bytes: stdout.cut(),
            stderr_cut_bytes: stderr.cut(),
            stdout: stdout.text(),
            stderr: stderr.text(),
            log: log_path.map(|p| p.display().to_string()),
        };
        let cut = doc.stdout_cut_bytes + doc.stderr_cut_bytes;
        let summary = format!(
            "`{}` in {id}: exit {} ({}){}{}",
            one_line(&i.command.join(" "), 120),
            doc.exit_code,
            doc.status,
            match cut {
                0 => String::new(),
                cut => format!("; output cut to its last {max_output} bytes ({cut} bytes cut)"),
            },
            doc.log
                .as_deref()
                .map(|l| format!("; whole output in {l}"))
                .unwrap_or_default()
        );
        // The output once: in the structured content, the text block a line.
        let mut result = CallToolResult::structured(serde_json::to_value(&doc).unwrap_or_default());
        result.content = vec![ContentBlock::text(summary)];
        Ok(result)
    }

    /// Runs a `--json` command and answers with its document: a success when it exits 0,
    /// else an error result carrying what it printed (its failure document, or a land that
    /// left conflicts).
    async fn json_tool(
        &self,
        argv: Vec<String>,
        cx: &RequestContext<RoleServer>,
        summary: impl Fn(&Value) -> String,
    ) -> Answer {
        let done = self.start(&argv, cx).await.map_err(failed_start)?;
        let doc: Option<Value> = serde_json::from_slice(&done.stdout.bytes).ok();
        match doc {
            Some(doc) if done.code == 0 => {
                let text = summary(&doc);
                Ok(success(doc, text))
            }
            Some(doc) if doc.get("error").is_some() => Err(error_result(doc)),
            Some(doc) => {
                let text = format!("{} (exit {})", summary(&doc), done.code);
                let mut result = success(doc, text);
                result.is_error = Some(true);
                Err(result)
            }
            None => Err(self.no_document(&argv, &done)),
        }
    }

    /// Runs a command that is not a `run` to its end, its output whole.
    async fn start(
        &self,
        argv: &[String],
        cx: &RequestContext<RoleServer>,
    ) -> std::io::Result<Finished> {
        let watch = Watch {
            context: cx,
            limit: None,
            log: None,
            timeout: None,
            interruptible: false,
            closed: self.closed.clone(),
            subject: argv.first().cloned().unwrap_or_default(),
            after_start: None,
        };
        self.start_watched(argv, watch).await
    }

    async fn start_watched(&self, argv: &[String], watch: Watch<'_>) -> std::io::Result<Finished> {
        let mut command = Command::new(&self.exe);
        command.args(&self.pinned).args(argv);
        child::run(command, watch).await
    }

    /// A command that printed no document: its exit code and the end of its stderr.
    fn no_document(&self, argv: &[String], done: &Finished) -> CallToolResult {
        let code = u8::try_from(done.code).unwrap_or(1);
        let err = if done.stopped.is_some() {
            CliError::interrupted(libc::SIGINT, "the call was cancelled")
        } else {
            CliError::failure(format!(
                "`agent-workspace {}` failed (exit status: {})",
                argv.join(" "),
                done.code
            ))
            .cause(done.stderr.text())
        };
        failure(&err, code)
    }
}

/// The id when it is a valid workspace id (so no id is ever taken for a flag), else the
/// usage error the CLI gives.
fn checked(id: &str) -> std::result::Result<WorkspaceId, CallToolResult> {
    WorkspaceId::parse(id).map_err(|err| failure(&err.into(), 2))
}

/// `--flag=value` (one argument: a value starting with `-` is never read as a flag).
fn push_value(argv: &mut Vec<String>, flag: &str, value: Option<&str>) {
    if let Some(value) = value {
        argv.push(format!("{flag}={value}"));
    }
}

/// `text` on one line (line breaks as spaces), cut to `max` characters with `...`.
fn one_line(text: &str, max: usize) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line,
    }
}

fn field<'a>(doc: &'a Value, key: &str) -> &'a str {
    doc[key].as_str().unwrap_or("?")
}

/// A success: the document as structured content (its hints naming tools), a summary and
/// the document as text.
fn success(mut doc: Value, summary: String) -> CallToolResult {
    hints::in_document(&mut doc);
    let mut result = CallToolResult::structured(doc);
    result.content.insert(0, ContentBlock::text(summary));
    result
}

/// An error result carrying a failure document (`schema/failure.schema.json`), its hint
/// naming tools where the CLI's names a command line.
fn error_result(mut doc: Value) -> CallToolResult {
    hints::in_document(&mut doc);
    let message = doc["error"]["message"]
        .as_str()
        .unwrap_or("failed")
        .to_string();
    let hint = doc["error"]["hint"]
        .as_str()
        .map(|h| format!("; hint: {h}"));
    let text = format!(
        "{message} (exit {}){}",
        doc["exit_code"],
        hint.unwrap_or_default()
    );
    let mut result = CallToolResult::structured_error(doc);
    result.content.insert(0, ContentBlock::text(text));
    result
}

/// `err` as the failure document the CLI prints for it with `--json`.
fn failure(err: &CliError, exit_code: u8) -> CallToolResult {
    let doc = FailureJson {
        schema_version: 1,
        error: err.to_json(),
        exit_code,
    };
    error_result(serde_json::to_value(doc).unwrap_or_default())
}

fn failed_start(err: std::io::Error) -> CallToolResult {
    failure(
        &CliError::failure("could not start agent-workspace for this call").cause(err.to_string()),
        1,
    )
}

#[cfg(test)]
mod tests {
    /// A run's summary names its command on one line, however long or many-lined.
    #[test]
    fn a_command_is_named_on_one_line() {
        assert_eq!(super::one_line("sh -c a\nb\tc", 120), "sh -c a b c");
        assert_eq!(super::one_line("ééééé", 3), "ééé...");
        assert_eq!(super::one_line("true", 4), "true");
    }
}
