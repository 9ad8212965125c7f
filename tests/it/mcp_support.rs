//! Driving `agent-workspace mcp` through an independent client: the Python MCP SDK, run by
//! `mcp_client.py` beside this file with a plan of steps; its answer is one JSON document.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::harness::{TestEnv, AW};

/// The variable naming the Python interpreter that has the `mcp` package (default: the
/// `python3` on PATH).
const PYTHON_VAR: &str = "AW_TEST_PYTHON";

/// The Python interpreter (absolute) and the directory its `mcp` package is in: found with
/// the developer's environment, since the test's own HOME hides user installs and pyenv.
/// A missing client fails the test: it is the independent side of every MCP test.
fn client() -> &'static (PathBuf, PathBuf) {
    static FOUND: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    FOUND.get_or_init(|| {
        let python = std::env::var_os(PYTHON_VAR).unwrap_or_else(|| "python3".into());
        let probe = Command::new(&python)
            .args([
                "-c",
                "import os, sys, mcp, jsonschema; v = tuple(int(x) for x in __import__('importlib.metadata').metadata.version('mcp').split('.')[:1]); assert v >= (2,), v; print(sys.executable); print(os.path.dirname(os.path.dirname(mcp.__file__)))",
            ])
            .output();
        let out = match probe {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
            Ok(out) => panic!(
                "the Python MCP client (mcp >= 2) is missing: `{} -m pip install 'mcp>=2'` installs it (.ci/run does); {PYTHON_VAR} names another interpreter\n{}",
                python.to_string_lossy(),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(e) => panic!(
                "no Python interpreter {:?} for the MCP client ({e}); install python3 and `pip install 'mcp>=2'`, or set {PYTHON_VAR}",
                python
            ),
        };
        let mut lines = out.lines();
        let exe = PathBuf::from(lines.next().expect("the interpreter's path"));
        let site = PathBuf::from(lines.next().expect("the package's directory"));
        (exe, site)
    })
}

/// Runs `steps` against `agent-workspace mcp <server_args>` started in `repo`; the client's
/// document (`initialize` and one result per step).
pub(crate) fn drive(env: &TestEnv, repo: &Path, server_args: &[&str], steps: Value) -> Value {
    let (python, site) = client();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/mcp_client.py");
    let mut server = vec![AW, "mcp"];
    server.extend(server_args);
    let plan = json!({"server": server, "cwd": repo, "steps": steps});
    let out = env
        .cmd(python, repo)
        .env("PYTHONPATH", site)
        .arg(&script)
        .arg(plan.to_string())
        .run();
    out.assert_ok();
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("the client's answer is not JSON: {e}\n{}", out.report()))
}

/// A tool call step.
pub(crate) fn call(tool: &str, args: Value) -> Value {
    json!({"tool": tool, "args": args})
}
