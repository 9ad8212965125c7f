//! Helpers the reliability tests (and others) share: statuses as `status --json` lists them,
//! waiting for a process's death or a lease's release, and a long run to hold a workspace.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{until, wait_for_file, TestEnv};

/// `status --json` of `repo`, as (id, status) pairs.
pub(crate) fn statuses(env: &TestEnv, repo: &Path) -> Vec<(String, String)> {
    let out = env.aw(repo, ["status", "--json"]);
    out.assert_ok();
    let doc: Value = serde_json::from_str(&out.stdout).expect("status --json is JSON");
    doc["workspaces"]
        .as_array()
        .expect("a workspaces array")
        .iter()
        .map(|w| {
            let field = |k: &str| w[k].as_str().unwrap_or_default().to_string();
            (field("workspace_id"), field("status"))
        })
        .collect()
}

pub(crate) fn status_of(env: &TestEnv, repo: &Path, id: &str) -> String {
    statuses(env, repo)
        .into_iter()
        .find(|(w, _)| w == id)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("{id} not listed\n{}", env.listing()))
}

/// Whether `pid` is still a live (non-zombie) process.
fn alive(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

pub(crate) fn wait_until_dead(pid: &str) {
    let what = format!("process {pid} to end");
    until(&what, Duration::from_secs(10), || !alive(pid));
}

/// Waits (at most 10 s) until the guard of a run whose supervisor was killed has ended the
/// processes the run left and released the lease: until then the run still shows as running.
pub(crate) fn wait_until_released(env: &TestEnv, repo: &Path, id: &str) {
    let lease = env.namespace_dir(repo).join(format!(".locks/{id}.lock"));
    let what = format!("{} to be released", lease.display());
    until(&what, Duration::from_secs(10), || {
        std::process::Command::new("flock")
            .args(["-n", "-E", "99"])
            .arg(&lease)
            .arg("true")
            .status()
            .expect("run flock")
            .success()
    });
}

/// Starts a long run in `id` that touches `<tmp>/<id>.started` and then waits for
/// `<tmp>/<id>.release`.
pub(crate) fn start_long_run(
    env: &TestEnv,
    repo: &Path,
    id: &str,
    extra: &[&str],
) -> crate::harness::Running {
    let tmp = env.path().display().to_string();
    let script =
        format!("touch {tmp}/{id}.started; while [ ! -e {tmp}/{id}.release ]; do sleep 0.02; done");
    let mut args = vec!["run", id];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", &script]);
    let running = env.aw_cmd(repo).args(&args).spawn();
    wait_for_file(&env.path().join(format!("{id}.started")));
    running
}
