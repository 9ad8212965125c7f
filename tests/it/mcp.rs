//! `agent-workspace mcp` driven by an independent MCP client (the Python SDK): the tools
//! and their schemas, a workspace's whole life through them, failures as `isError` results,
//! cancellation, parallel runs and the server's sandbox, on both backends.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};

use crate::backends::Backend;
use crate::harness::TestEnv;
use crate::mcp_support::{call, drive};
use crate::schemas::assert_valid;

const TOOLS: [&str; 7] = [
    "workspace_create",
    "workspace_run",
    "workspace_status",
    "workspace_diff",
    "workspace_checkpoint",
    "workspace_land",
    "workspace_clean",
];

/// A successful call's document, after checking it was one.
#[track_caller]
fn ok(step: &Value) -> &Value {
    assert_eq!(step["is_error"], false, "{step:#}");
    &step["structured"]
}

/// A failed call's failure document, after checking it was an `isError` result.
#[track_caller]
fn failed(step: &Value) -> &Value {
    assert_eq!(step["is_error"], true, "{step:#}");
    assert_valid("failure", &step["structured"]);
    &step["structured"]
}

fn lifecycle(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let write_and_fail = [
        "sh",
        "-c",
        "echo made > new.txt; echo to-stdout; echo to-stderr >&2; exit 3",
    ];
    let doc = drive(
        &env,
        &repo,
        &[],
        json!([
            {"list_tools": true},
            call("workspace_create", json!({"id": "w1"})),
            call("workspace_run", json!({"id": "w1", "command": write_and_fail})),
            call("workspace_diff", json!({"id": "w1", "patch": true})),
            call("workspace_checkpoint", json!({"id": "w1", "message": "from the agent"})),
            call("workspace_land", json!({"id": "w1", "dry_run": true})),
            call("workspace_land", json!({"id": "w1"})),
            call("workspace_status", json!({"id": "nope"})),
            call("workspace_run", json!({"id": "-all", "command": ["true"]})),
            call("workspace_status", json!({"ident": "w1"})),
            call("workspace_nothing", json!({})),
        ]),
    );
    assert!(doc["initialize"]["protocolVersion"].is_string(), "{doc:#}");
    assert_eq!(doc["initialize"]["serverInfo"]["name"], "agent-workspace");
    let steps = doc["steps"].as_array().unwrap();

    // Every tool, each with an input and an output schema the client found valid.
    let tools = steps[0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, TOOLS);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool:#}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool:#}");
    }

    let created = ok(&steps[1]);
    assert_valid("create", created);
    assert_eq!(created["workspace_id"], "w1");
    assert_eq!(created["backend"], backend.name());
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(created["path"], ws.to_str().unwrap());

    // The command's exit code comes back, with the end of its output and the whole log.
    let ran = ok(&steps[2]);
    assert_valid("mcp-run", ran);
    assert_eq!(ran["exit_code"], 3, "{ran:#}");
    assert_eq!(ran["status"], "error");
    assert_eq!(ran["stdout"], "to-stdout\n");
    assert_eq!(ran["stderr"], "to-stderr\n");
    assert_eq!(ran["truncated"], false);
    let log = fs::read_to_string(ran["log"].as_str().unwrap()).unwrap();
    assert!(
        log.contains("to-stdout\n") && log.contains("to-stderr\n"),
        "{log}"
    );
    assert_eq!(fs::read_to_string(ws.join("new.txt")).unwrap(), "made\n");

    let diff = ok(&steps[3]);
    assert_valid("diff", diff);
    let files: Vec<&str> = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["new.txt"], "{diff:#}");
    let patch = steps[3]["text"].as_array().unwrap().last().unwrap();
    assert!(patch.as_str().unwrap().contains("+made"), "{patch}");

    let checkpoint = ok(&steps[4]);
    assert_valid("checkpoint", checkpoint);
    assert_eq!(checkpoint["created"], true);
    assert_eq!(checkpoint["paths"], json!(["new.txt"]));

    let dry = ok(&steps[5]);
    assert_valid("land", dry);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["outcome"], "would_land", "{dry:#}");

    // Without --allow-land the land is refused, and nothing landed.
    let refused = failed(&steps[6]);
    assert_eq!(refused["error"]["kind"], "usage");
    assert_eq!(refused["exit_code"], 2);
    let hint = refused["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("--allow-land") && hint.contains("`workspace_land` with `dry_run: true`"),
        "{hint}"
    );
    assert!(!repo.join("new.txt").exists());

    // An unknown workspace: the CLI's error object, its hint and exit code.
    let unknown = failed(&steps[7]);
    assert_eq!(unknown["error"]["kind"], "failure");
    assert_eq!(unknown["exit_code"], 1);
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nope"));
    // Its hint names the tools to call, not the CLI's command lines.
    let hint = unknown["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("`workspace_status`") && !hint.contains("agent-workspace"),
        "{hint}"
    );
    // A malformed id is refused before anything runs: never taken for a flag.
    let malformed = failed(&steps[8]);
    assert_eq!(malformed["error"]["kind"], "usage");
    assert_eq!(malformed["exit_code"], 2);
    // Protocol misuse: JSON-RPC errors, not tool results.
    assert_eq!(steps[9]["rpc_error"]["code"], -32602, "{:#}", steps[9]);
    assert!(steps[10]["rpc_error"]["code"].is_i64(), "{:#}", steps[10]);

    // A server started with --allow-land lands; status shows the workspace; clean removes it.
    let doc = drive(
        &env,
        &repo,
        &["--allow-land"],
        json!([
            call("workspace_land", json!({"id": "w1"})),
            call("workspace_status", json!({})),
            call("workspace_status", json!({"id": "w1"})),
            call("workspace_clean", json!({"id": "w1", "dry_run": true})),
            call("workspace_clean", json!({"id": "w1"})),
        ]),
    );
    let steps = doc["steps"].as_array().unwrap();
    let landed = ok(&steps[0]);
    assert_valid("land", landed);
    assert_eq!(landed["dry_run"], false);
    assert_eq!(landed["outcome"], "landed", "{landed:#}");
    assert_eq!(fs::read_to_string(repo.join("new.txt")).unwrap(), "made\n");
    // The list is a row per workspace (issue 39): `mcp-status`, not `status --json`.
    let all = ok(&steps[1]);
    assert_valid("mcp-status", all);
    assert_eq!(all["workspaces"][0]["workspace_id"], "w1");
    let one = ok(&steps[2]);
    assert_valid("status-workspace", one);
    assert_eq!(one["workspace_id"], "w1");
    // The run's log goes with the workspace: the dry run says it would, the clean did.
    let logs = env.namespace_dir(&repo).join(".logs/w1");
    let would = ok(&steps[3]);
    assert_valid("clean", would);
    assert_eq!(
        would["removed"][0]["run_logs"]["files_count"], 1,
        "{would:#}"
    );
    assert_eq!(
        would["removed"][0]["run_logs"]["path"],
        logs.to_str().unwrap()
    );
    let cleaned = ok(&steps[4]);
    assert_valid("clean", cleaned);
    assert_eq!(cleaned["removed"][0]["path"], ws.to_str().unwrap());
    assert_eq!(
        cleaned["removed"][0]["run_logs"]["files_count"], 1,
        "{cleaned:#}"
    );
    assert!(!ws.exists());
    assert!(!logs.exists(), "{}", env.listing());
}

#[test]
fn a_client_drives_a_workspace_through_its_life_jj() {
    lifecycle(Backend::Jj);
}

#[test]
fn a_client_drives_a_workspace_through_its_life_git() {
    lifecycle(Backend::Git);
}

/// Whether process `pid` is gone (or a zombie no one waits for).
fn gone(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn cancelled(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let pidfile = env.path().join("sleep.pid");
    let script = format!(
        "echo $$ > {}.tmp; mv {0}.tmp {0}; exec sleep 30",
        pidfile.display()
    );
    let doc = drive(
        &env,
        &repo,
        &[],
        json!([
            call("workspace_create", json!({"id": "long"})),
            {"tool": "workspace_run", "args": {"id": "long", "command": ["sh", "-c", script]},
             "cancel_after": 2.5},
            {"wait_gone": pidfile, "timeout": 5},
            {"poll_status": "long", "timeout": 5},
        ]),
    );
    let steps = doc["steps"].as_array().unwrap();
    ok(&steps[0]);
    assert_eq!(steps[1]["cancelled"], true, "{:#}", steps[1]);
    // Progress was reported while it ran.
    assert!(
        !steps[1]["progress"].as_array().unwrap().is_empty(),
        "{:#}",
        steps[1]
    );
    // Its command ended within 2 s of the cancellation, and the run is recorded interrupted,
    // as a Ctrl-C leaves it.
    assert_eq!(steps[2]["gone"], true, "{:#}", steps[2]);
    assert!(
        steps[2]["seconds"].as_f64().unwrap() < 2.0,
        "{:#}",
        steps[2]
    );
    assert_eq!(steps[3]["status"], "interrupted", "{:#}", steps[3]);
    let pid = fs::read_to_string(&pidfile).unwrap();
    assert!(
        gone(pid.trim()),
        "the cancelled run's sleep {pid} still runs"
    );
}

#[test]
fn a_cancelled_run_ends_its_processes_and_is_recorded_interrupted_jj() {
    cancelled(Backend::Jj);
}

#[test]
fn a_cancelled_run_ends_its_processes_and_is_recorded_interrupted_git() {
    cancelled(Backend::Git);
}

/// Runs in different workspaces go on at once; a second run in a busy workspace gets the
/// CLI's busy error; a run past its `timeout_s` is interrupted; a long output is cut to its
/// last 16 KiB (the default `max_output_bytes`), the log holding it whole; a workspace keeps
/// its newest 50 logs.
#[test]
fn runs_go_on_in_parallel_under_the_cli_lease_rules() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let logs = env.namespace_dir(&repo).join(".logs/b");
    fs::create_dir_all(&logs).unwrap();
    for n in 0..60 {
        fs::write(logs.join(format!("2000-01-01T000000Z.{n:09}.log")), "old\n").unwrap();
    }
    let nap = ["sh", "-c", "sleep 3; echo woke"];
    let doc = drive(
        &env,
        &repo,
        &[],
        json!([
            call("workspace_create", json!({"id": "a"})),
            call("workspace_create", json!({"id": "b"})),
            {"parallel": [
                call("workspace_run", json!({"id": "a", "command": nap})),
                call("workspace_run", json!({"id": "b", "command": nap})),
            ]},
            {"parallel": [
                call("workspace_run", json!({"id": "a", "command": nap})),
                {"tool": "workspace_run", "args": {"id": "a", "command": ["true"]}, "delay": 0.5},
            ]},
            call("workspace_run", json!({"id": "b", "command": ["sleep", "30"], "timeout_s": 1})),
            call("workspace_run", json!({"id": "b", "command": ["sh", "-c", "seq 1 30000"]})),
        ]),
    );
    let steps = doc["steps"].as_array().unwrap();
    let both = &steps[2];
    for result in both["results"].as_array().unwrap() {
        assert_eq!(ok(result)["stdout"], "woke\n");
    }
    // One after the other they would take 6 s.
    assert!(both["seconds"].as_f64().unwrap() < 5.5, "{both:#}");
    let busy = steps[3]["results"].as_array().unwrap();
    assert_eq!(ok(&busy[0])["exit_code"], 0);
    let refused = failed(&busy[1]);
    assert_eq!(refused["exit_code"], 125, "{refused:#}");
    let timed = ok(&steps[4]);
    assert_eq!(timed["timed_out"], true, "{timed:#}");
    assert_eq!(timed["status"], "interrupted");
    let long = ok(&steps[5]);
    let whole: String = (1..=30000).map(|n| format!("{n}\n")).collect();
    assert!(whole.len() > 16 << 10);
    assert_eq!(long["truncated"], true);
    assert_eq!(
        long["stdout"],
        whole[whole.len() - (16 << 10)..],
        "{long:#}"
    );
    assert_eq!(
        fs::read_to_string(long["log"].as_str().unwrap()).unwrap(),
        whole
    );
    // Three runs in b added three logs; the oldest went, 50 are left.
    let mut kept: Vec<String> = fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 50, "{kept:?}");
    assert_eq!(kept[0], "2000-01-01T000000Z.000000013.log");
    assert!(kept.iter().filter(|n| !n.starts_with("2000-")).count() == 3);
}

fn sandboxed(backend: Backend) {
    let (env, repo) = crate::sandbox_support::setup(backend);
    // The main working copy and HOME (the sandbox's /tmp is its own, so not a temp path).
    let outside = repo.join("outside.txt");
    let home = env.home().join("outside.txt");
    let inside = format!(
        "echo in > inside.txt; echo out > {}; echo out > {}",
        home.display(),
        outside.display()
    );
    let doc = drive(
        &env,
        &repo,
        &["--sandbox"],
        json!([call(
            "workspace_run",
            json!({"id": "box", "command": ["sh", "-c", inside], "sandbox": false})
        ),]),
    );
    let ran = ok(&doc["steps"][0]);
    assert_ne!(ran["exit_code"], 0, "{ran:#}");
    for path in [&outside, &home] {
        assert!(!path.exists(), "a sandboxed run wrote {}", path.display());
    }
    let ws = env.ws_path(&repo, "box");
    assert_eq!(fs::read_to_string(ws.join("inside.txt")).unwrap(), "in\n");
    assert!(env.metadata(&ws)["sandbox"].is_object(), "{ran:#}");
    assert!(Path::new(ran["log"].as_str().unwrap()).is_file());
}

#[test]
fn a_sandboxed_server_confines_every_run_jj() {
    sandboxed(Backend::Jj);
}

#[test]
fn a_sandboxed_server_confines_every_run_git() {
    sandboxed(Backend::Git);
}

/// The protocol itself, line by line without an SDK: an older version a client asks for is
/// the one agreed; an unknown method is a JSON-RPC error; the server ends with its input.
#[test]
fn an_older_protocol_version_is_negotiated_and_misuse_is_a_json_rpc_error() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = env.aw_cmd(&repo).arg("mcp").stdin(&input).run();
    out.assert_ok();
    let mut answers: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    // Requests are answered as they finish, not in order.
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers.len(), 3, "{}", out.report());
    assert_eq!(answers[0]["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(
        answers[1]["result"]["tools"].as_array().unwrap().len(),
        TOOLS.len()
    );
    assert_eq!(answers[2]["error"]["code"], -32601, "{}", out.report());
}

/// Outside a repository the server does not start: the usual error, before any protocol.
#[test]
fn outside_a_repository_the_server_refuses_to_start() {
    let env = TestEnv::new();
    let out = env.aw_cmd(env.path()).arg("mcp").run();
    out.assert_code(1);
    assert!(out.stdout.is_empty(), "{}", out.report());
    assert!(out.stderr.starts_with("Error: "), "{}", out.report());
    assert!(out.stderr.contains("Hint: "), "{}", out.report());
}

/// How a client lets the server go.
#[derive(Clone, Copy, Debug)]
enum Goodbye {
    /// Closes the server's stdin.
    Eof,
    /// Sends it SIGTERM.
    Sigterm,
}

/// A client that goes away while a run is under way: the run is interrupted as by Ctrl-C
/// (its processes end, it is recorded interrupted), not left running with no one to answer.
fn client_leaves_mid_run(goodbye: Goodbye) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["create", "w"]).assert_ok();
    let pidfile = env.path().join("sleep.pid");
    let script = format!(
        "echo $$ > {}.tmp; mv {0}.tmp {0}; exec sleep 30",
        pidfile.display()
    );
    let mut server = Command::new(crate::harness::AW)
        .arg("mcp")
        .current_dir(&repo)
        .env_clear()
        .envs(env.vars())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "workspace_run", "arguments": {"id": "w", "command": ["sh", "-c", script]}}}),
    ];
    let mut stdin = server.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    crate::harness::wait_for_file(&pidfile);
    let pid = fs::read_to_string(&pidfile).unwrap();
    let left = Instant::now();
    match goodbye {
        Goodbye::Eof => drop(stdin),
        Goodbye::Sigterm => {
            // SAFETY: kill has no memory-safety preconditions; the server is our child.
            unsafe { libc::kill(server.id() as i32, libc::SIGTERM) };
        }
    }
    // The server ends at once (a hung one is killed after 5 s, and the test fails: the wait
    // gives up on its own so that the kill comes first).
    let ended =
        crate::harness::eventually(
            "the server to end",
            Duration::from_secs(60),
            || match server.try_wait().unwrap() {
                Some(status) => Ok(Some(status)),
                None if left.elapsed() > Duration::from_secs(5) => Ok(None),
                None => Err("still running".into()),
            },
        );
    let Some(status) = ended else {
        let _ = server.kill();
        panic!("{goodbye:?}: the server did not end");
    };
    assert!(
        left.elapsed() < Duration::from_secs(2),
        "{goodbye:?}: {status:?}"
    );
    crate::harness::until(
        &format!("{goodbye:?}: the run's sleep {pid} to end with its client"),
        Duration::from_secs(5),
        || gone(pid.trim()),
    );
    let recorded = crate::harness::eventually(
        "the run recorded as ended",
        Duration::from_secs(5),
        || match env.aw(&repo, ["status", "w", "--json"]).json()["status"].as_str() {
            Some("running") => Err("running".into()),
            other => Ok(other.map(str::to_string)),
        },
    );
    assert_eq!(recorded.as_deref(), Some("interrupted"), "{goodbye:?}");
}

#[test]
fn a_client_that_closes_the_connection_interrupts_its_runs() {
    client_leaves_mid_run(Goodbye::Eof);
}

#[test]
fn a_server_stopped_by_sigterm_interrupts_its_runs() {
    client_leaves_mid_run(Goodbye::Sigterm);
}

/// What an agent pays for in its context (issue 39): the tools' list, the status of 12
/// workspaces, and a run that printed 20 KB, each measured as the SDK received it. The list
/// of workspaces is one row each, the details only for one id; a run's output is given once
/// (in the structured content; the text is one line), its tail within `max_output_bytes`.
#[test]
fn answers_are_sized_for_a_model() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let ids: Vec<String> = (1..=12).map(|n| format!("agent-task-{n:02}")).collect();
    for id in &ids {
        env.aw(&repo, ["run", id, "--", "sh", "-c", "echo edit > f.txt"])
            .assert_ok();
    }
    // 9 KB of output, then 20 KB, then 170 KB.
    let quiet = ["sh", "-c", "seq 1 2000; seq 1 200 >&2"];
    let loud = ["sh", "-c", "seq 1 4000; seq 1 200 >&2"];
    let louder = ["sh", "-c", "seq 1 30000"];
    let doc = drive(
        &env,
        &repo,
        &[],
        json!([
            {"list_tools": true},
            call("workspace_status", json!({})),
            call("workspace_status", json!({"id": "agent-task-01"})),
            call("workspace_run", json!({"id": "agent-task-01", "command": quiet})),
            call("workspace_run", json!({"id": "agent-task-01", "command": loud})),
            call("workspace_run", json!({"id": "agent-task-01", "command": louder, "max_output_bytes": 1000})),
        ]),
    );
    let steps = doc["steps"].as_array().unwrap();
    let bytes = |step: &Value| step["bytes"].as_u64().unwrap_or(0);
    eprintln!(
        "sizes: tools/list {}, status of 12 {}, status of one {}, run of 9 KB {}, of 20 KB {}, of 170 KB with max_output_bytes 1000 {}",
        bytes(&steps[0]),
        bytes(&steps[1]),
        bytes(&steps[2]),
        bytes(&steps[3]),
        bytes(&steps[4]),
        bytes(&steps[5])
    );

    let listed = bytes(&steps[0]);
    assert!(listed <= 16 << 10, "tools/list is {listed} bytes");

    let all = &steps[1];
    assert!(
        bytes(all) <= 6 << 10,
        "status of 12 is {} bytes: {all:#}",
        bytes(all)
    );
    let rows = ok(all)["workspaces"].as_array().unwrap();
    let listed_ids: Vec<&str> = rows
        .iter()
        .map(|r| r["workspace_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed_ids, ids);
    for row in rows {
        assert_eq!(row["status"], "done", "{row:#}");
        // The list reads jj's last snapshot, which may be older than the run's edit.
        let changes = row["changes"].as_str().unwrap();
        assert!(
            changes == "1 file +1 -0" || changes == "0 files +0 -0 (may be behind)",
            "{row:#}"
        );
        assert!(row["updated_at"].is_string(), "{row:#}");
        assert!(row.get("record").is_none(), "{row:#}");
    }
    // One id: the whole document, record and run history included.
    let one = ok(&steps[2]);
    assert_valid("status-workspace", one);
    assert!(one["record"]["runs"].is_array(), "{one:#}");
    assert_eq!(one["changes"]["files_count"], 1, "{one:#}");

    let seq = |n: u32| -> String { (1..=n).map(|n| format!("{n}\n")).collect() };
    // The output once: whole in the structured content, the text a single line.
    let quiet = &steps[3];
    let ran = ok(quiet);
    assert_valid("mcp-run", ran);
    assert!(ran["stdout"] == seq(2000) && ran["stderr"] == seq(200));
    assert_eq!(ran["truncated"], false);
    let text = quiet["text"].as_array().unwrap();
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(!text[0].as_str().unwrap().contains('\n'), "{text:?}");
    // What the output takes as JSON strings (a newline is two bytes there), once.
    let as_json = |text: &str| json!(text).to_string().len() as u64;
    let printed = as_json(&seq(2000)) + as_json(&seq(200));
    assert!(
        bytes(quiet) <= printed + 1024,
        "a run whose output is {printed} bytes as JSON answers {} bytes",
        bytes(quiet)
    );

    // Past 16 KiB (the default) or `max_output_bytes`: the ends, how much was cut, and where
    // the whole output is.
    for (step, limit, out, err) in [
        (&steps[4], 16 << 10, seq(4000), seq(200)),
        (&steps[5], 1000, seq(30000), String::new()),
    ] {
        let ran = ok(step);
        assert_valid("mcp-run", ran);
        assert_eq!(ran["truncated"], true);
        // The shorter stream, within half the limit, is given whole.
        let kept = limit - err.len();
        assert!(ran["stdout"] == out[out.len() - kept..], "{}", step["text"]);
        assert_eq!(ran["stderr"], err);
        assert_eq!(ran["stdout_cut_bytes"], out.len() - kept);
        assert_eq!(ran["stderr_cut_bytes"], 0);
        let log = ran["log"].as_str().unwrap();
        assert_eq!(
            fs::read_to_string(log).unwrap().len(),
            out.len() + err.len()
        );
        let text = step["text"][0].as_str().unwrap();
        assert!(
            text.contains(&format!("{} bytes cut", out.len() - kept)) && text.contains(log),
            "{text}"
        );
        let given = as_json(&out[out.len() - kept..]) + as_json(&err);
        assert!(bytes(step) <= given + 1024, "{} for {given}", bytes(step));
    }
}

/// A hint in an answer names the tool and the arguments that do what it says, where the
/// CLI's names its flags: a workspace the backend forgot is cleaned with `force: true`.
#[test]
fn hints_name_tools_and_their_arguments() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["create", "w"]).assert_ok();
    env.jj(&repo, ["workspace", "forget", "w"]).assert_ok();
    let doc = drive(
        &env,
        &repo,
        &[],
        json!([
            call("workspace_status", json!({})),
            call("workspace_clean", json!({"id": "w"})),
            call("workspace_clean", json!({"id": "w", "force": true})),
        ]),
    );
    let steps = doc["steps"].as_array().unwrap();
    let call = "`workspace_clean` with `id: \"w\", force: true`";
    let row = &ok(&steps[0])["workspaces"][0];
    assert_eq!(row["problem"], "unregistered", "{row:#}");
    assert!(row["hint"].as_str().unwrap().contains(call), "{row:#}");
    // Without force, clean refuses it: its failed entry's hint says how.
    assert_eq!(steps[1]["is_error"], true, "{:#}", steps[1]);
    let refused = &steps[1]["structured"]["failed"][0];
    let hint = refused["error"]["hint"].as_str().unwrap();
    assert!(hint.contains(call), "{hint}");
    let cleaned = ok(&steps[2]);
    assert_eq!(cleaned["removed"][0]["workspace_id"], "w", "{cleaned:#}");
}
