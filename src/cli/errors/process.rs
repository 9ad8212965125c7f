//! The words of a failed helper call: a [`ProcessError`] as the quoted command line, its exit
//! status, its stderr and a hint.

use crate::error::CliError;
use crate::exec::process::ProcessError;

impl From<ProcessError> for CliError {
    fn from(err: ProcessError) -> Self {
        CliError::from(&err)
    }
}

impl From<&ProcessError> for CliError {
    fn from(err: &ProcessError) -> Self {
        let hint = process_hint(err);
        let stderr = err.stderr().to_string();
        CliError::failure(err.to_string()).cause(stderr).hint(hint)
    }
}

/// What to do after the backend failed to create a workspace (nothing of it was kept).
pub(in crate::cli) fn creation_hint(err: &ProcessError) -> String {
    match process_hint(err) {
        hint if hint.starts_with("the tool's own") => {
            "nothing of the workspace was kept; fix what the backend reports above and run again"
                .into()
        }
        hint => hint,
    }
}

/// What to do about a failed helper call, from what it reported.
fn process_hint(err: &ProcessError) -> String {
    if let ProcessError::NotFound { program } = err {
        return crate::error::install_hint(program);
    }
    match crate::exec::classify::disk_full(err.stderr()) {
        true => "free space on that file system and try again; nothing was kept half made".into(),
        // What jj or git said in their own terms is hinted at by the backend (`vcs::error`).
        false => "the tool's own message is above; fix what it reports and try again".into(),
    }
}
