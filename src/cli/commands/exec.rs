//! `__exec`, the hidden subcommand that runs the guard (`exec/process/guard.rs`): the process
//! between a run's supervisor and its command.

use std::ffi::OsString;

use crate::error::CliError;
use crate::exec::process::{self, TRAMPOLINE};
use crate::ui::Ui;

/// Runs the guard for `args` (`-- CMD...`); returns its exit code when it cannot raise the
/// command's signal on itself.
pub fn cmd_exec(ui: &Ui, args: &[OsString]) -> i32 {
    let command = match args.first() {
        Some(sep) if sep == "--" => &args[1..],
        _ => args,
    };
    let mut setup = process::report_started();
    if command.is_empty() {
        ui.error(
            &CliError::usage(format!("{TRAMPOLINE} needs a command"))
                .hint("it is run by agent-workspace itself"),
        );
        return 125;
    }
    #[cfg(not(target_os = "linux"))]
    {
        if !setup.wait_for_go() {
            return process::NO_GO;
        }
        // No subreaper or parent-death signal here: become the command, as before.
        let (code, err) = process::exec(command, None);
        ui.error(&CliError::failure(format!(
            "{}: {err}",
            command[0].to_string_lossy()
        )));
        return code;
    }
    #[cfg(target_os = "linux")]
    let no_proxy = |err: std::io::Error| {
        ui.warning_with_hint(
            format!("the sandbox's proxy cannot listen on its loopback ({err}): this run has no network"),
            "sandbox.allowed_hosts needs a loopback inside the sandbox; see `agent-workspace doctor`",
        )
    };
    match process::guard(command, &mut setup, no_proxy) {
        Ok(code) => code,
        Err((code, err)) => {
            let program = command[0].to_string_lossy();
            let what = match (code, err.raw_os_error()) {
                (127, _) => "command not found".to_string(),
                (_, Some(libc::EACCES)) => "permission denied".to_string(),
                _ => err.to_string(),
            };
            let hint = match code {
                127 => "check its name and the PATH the workspace's environment sets",
                _ => "make it executable (chmod +x) or run it through its interpreter",
            };
            ui.error(&CliError::failure(format!("{program}: {what}")).hint(hint));
            code
        }
    }
}
