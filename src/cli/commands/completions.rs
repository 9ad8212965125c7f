//! `completions`: a shell's completion script, with workspace ids where the shell can ask.

use clap::Args;
use clap_complete::Shell;

use crate::error::{CliError, Result};
use crate::ui::Ui;

/// Print the completion script for SHELL on stdout
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `command` is the whole command line's clap definition, handed over by the dispatch.
pub(crate) fn cmd_completions(
    ui: &Ui,
    args: &CompletionsArgs,
    mut command: clap::Command,
) -> Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "agent-workspace", &mut script);
    let script = String::from_utf8(script).map_err(|e| {
        CliError::failure("the completion script is not UTF-8").cause(e.to_string())
    })?;
    let script = match args.shell {
        Shell::Bash => bash_with_ids(script),
        Shell::Fish => script + FISH_IDS,
        Shell::Zsh => zsh_with_ids(&script),
        _ => script,
    };
    ui.data(&script)?;
    Ok(0)
}

/// zsh: the id arguments (`ID`, `IDS`, `--parent`) complete with `_agent_workspace_ids`,
/// defined right after `#compdef` so that an autoloaded file has it before its first call.
fn zsh_with_ids(script: &str) -> String {
    let mut out = String::with_capacity(script.len() + ZSH_IDS.len());
    for (n, line) in script.lines().enumerate() {
        let arg = line.trim_start();
        let is_id = [":id -- ", "::id -- ", "*::ids -- "]
            .iter()
            .any(|p| arg.starts_with(&format!("'{p}")))
            || arg.starts_with("'(--base-change)--parent=");
        match line.strip_suffix(":_default' \\") {
            Some(head) if is_id => out.push_str(&format!("{head}:_agent_workspace_ids' \\")),
            _ => out.push_str(line),
        }
        out.push('\n');
        if n == 0 {
            out.push_str(ZSH_IDS);
        }
    }
    out
}

/// bash: the wrapper calls clap's function, whatever clap named it, and replaces its
/// registration.
fn bash_with_ids(script: String) -> String {
    let generated = script
        .split("complete -F ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or("_agent-workspace")
        .to_string();
    script + &BASH_IDS.replace("CLAP_FUNCTION", &generated)
}

// Elvish and PowerShell keep clap's static script: no workspace ids.

// bash: clap's completion first, then the ids for an id position: the first word after a
// subcommand that takes one (any word for `clean`), or the value of `--parent`. After another
// option the ids are not offered, since its value may be what is being completed.

const BASH_IDS: &str = r#"
_agent_workspace_with_ids() {
    CLAP_FUNCTION "$@"
    local cur="${COMP_WORDS[COMP_CWORD]}" sub="" i
    local prev="${COMP_WORDS[COMP_CWORD-1]}"
    [[ "$prev" != -* || "$prev" == --parent ]] || return
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --) return ;;
            --root|--repo|--backend|--parent|--workflow|--base-change) ((i++)) ;;
            -*) ;;
            *) if [[ -z "$sub" ]]; then sub="${COMP_WORDS[i]}"; else [[ "$sub" == clean ]] || return; fi ;;
        esac
    done
    case " run status shell clean diff checkpoint land sync-tools " in
        *" $sub "*) ;;
        *) return ;;
    esac
    [[ -n "$sub" && "$cur" != -* ]] || return
    local ids
    ids="$(agent-workspace __complete-ids 2>/dev/null)" || return 0
    COMPREPLY+=($(compgen -W "$ids" -- "$cur"))
}
complete -F _agent_workspace_with_ids -o bashdefault -o default agent-workspace
"#;

const ZSH_IDS: &str = r#"_agent_workspace_ids() {
    local -a ids
    ids=(${(f)"$(agent-workspace __complete-ids 2>/dev/null)"})
    _describe -t workspaces 'workspace id' ids
}
"#;

const FISH_IDS: &str = r#"
complete -c agent-workspace -n "__fish_seen_subcommand_from run status shell clean diff checkpoint land sync-tools" -f -a "(agent-workspace __complete-ids 2>/dev/null)" -d "workspace"
"#;
