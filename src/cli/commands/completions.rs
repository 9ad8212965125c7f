//! `completions`: the script that registers a shell's completion. The script calls the binary
//! back on each TAB, which answers from the command line's one definition (`cli::complete`).

use clap::{Args, ValueEnum};
use clap_complete::env::EnvCompleter;

use crate::error::{CliError, Result};
use crate::ui::Ui;

/// Print the script that registers completion for a shell
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The shells clap_complete's dynamic completion registers with.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

pub(in crate::cli) fn cmd_completions(ui: &Ui, args: &CompletionsArgs) -> Result<i32> {
    let name = match args.shell {
        Shell::Bash => "bash",
        Shell::Zsh => "zsh",
        Shell::Fish => "fish",
        Shell::Elvish => "elvish",
        Shell::Powershell => "powershell",
    };
    ui.generated(&registration(name)?)?;
    Ok(0)
}

/// The variable the registration scripts set to ask for completions (clap's `COMPLETE`, named
/// for this tool so that a `COMPLETE` meant for another program never reaches it).
pub(in crate::cli) const VAR: &str = "AGENT_WORKSPACE_COMPLETE";

/// The command the scripts complete, and the one they call back (found on `PATH`).
const BIN: &str = "agent-workspace";

pub(in crate::cli) fn completer(shell: &str) -> Result<&'static dyn EnvCompleter, CliError> {
    use clap_complete::env::{Bash, Elvish, Fish, Powershell, Zsh};
    Ok(match shell {
        "bash" => &Bash,
        "zsh" => &Zsh,
        "fish" => &Fish,
        "elvish" => &Elvish,
        "powershell" | "pwsh" => &Powershell,
        _ => {
            return Err(
                CliError::usage(format!("{VAR}={shell:?} is not a shell completion knows"))
                    .hint("use bash, zsh, fish, elvish or powershell"),
            )
        }
    })
}

/// The script that registers completion for `shell`: it calls the binary back on each TAB.
pub(in crate::cli) fn registration(shell: &str) -> Result<String, CliError> {
    let mut script = Vec::new();
    completer(shell)?
        .write_registration(VAR, BIN, BIN, BIN, &mut script)
        .map_err(|e| {
            CliError::failure("could not write the completion script").cause(e.to_string())
        })?;
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if shell == "zsh" {
        // Autoloaded from a `_agent-workspace` file on `fpath`, the file's body runs on the first
        // TAB: it registers the function, which must then answer that TAB too.
        script.push_str(ZSH_AUTOLOAD);
    }
    Ok(script)
}

const ZSH_AUTOLOAD: &str = r#"if [[ "${funcstack[1]}" == "_agent-workspace" ]]; then
    _clap_dynamic_completer_agent_workspace "$@"
fi
"#;
