//! The words of a run's session: a workspace another run holds, a nested command that could
//! not start ([`SessionError`]).

use crate::error::CliError;
use crate::session::error::SessionError;

impl From<SessionError> for CliError {
    fn from(err: SessionError) -> CliError {
        let message = err.to_string();
        match err {
            SessionError::Busy { .. } => {
                CliError::failure(message).hint("pass --wait to queue behind it, or use another id")
            }
            SessionError::NestedNotStarted { code, source, .. } => {
                CliError::not_started(code, message)
                    .cause(source.to_string())
                    .hint("check the command's name and that it is executable")
            }
        }
    }
}
