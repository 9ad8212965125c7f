//! Answering a shell's completion request from the one clap definition: the shell's registration script (printed by
//! `completions`) calls the binary back with `AGENT_WORKSPACE_COMPLETE=<shell>` and the words
//! typed so far, and clap_complete's engine answers from [`Cli`]'s definition, with the
//! repository's workspace ids for every argument that takes one.

use std::any::TypeId;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use clap::CommandFactory;
use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};

use crate::cli::commands::completions::{completer, registration, VAR};
use crate::cli::global::GlobalArgs;
use crate::cli::parse::Cli;
use crate::error::CliError;
use crate::repo::Backend;
use crate::store::layout::WorkspaceId;
use crate::ui::output::ColorChoice;

/// Answers a completion request when `AGENT_WORKSPACE_COMPLETE` names a shell: the candidates
/// for the words after `--` in `args`, or the shell's registration script when none follow.
/// `None` for an ordinary run.
pub fn complete_from_env(args: &[OsString]) -> Option<Result<String, CliError>> {
    let shell = std::env::var_os(VAR).filter(|s| !s.is_empty() && s != "0")?;
    let shell = shell.to_string_lossy();
    Some(match args.iter().position(|a| a == "--") {
        Some(dash) => candidates(&shell, args[dash + 1..].to_vec()),
        None => registration(&shell),
    })
}

fn candidates(shell: &str, words: Vec<OsString>) -> Result<String, CliError> {
    let completer = completer(shell)?;
    let ids = ArgValueCandidates::new({
        let global = global_flags(&words);
        move || workspace_ids(&global)
    });
    let mut command = Cli::command();
    command.build();
    let mut command = for_completion(command, &ids);
    let cwd = std::env::current_dir().ok();
    let mut out = Vec::new();
    completer
        .write_complete(&mut command, words, cwd.as_deref(), &mut out)
        .map_err(|e| CliError::failure("could not complete").cause(e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The built definition with the id completer on every argument whose value is a
/// [`WorkspaceId`], and hidden subcommands out of reach: clap's engine offers a hidden
/// subcommand when it is the only match (`pool r`), so they are renamed to a name no typed
/// word starts with.
fn for_completion(mut command: clap::Command, ids: &ArgValueCandidates) -> clap::Command {
    command = command.mut_args(|arg| {
        if arg.get_value_parser().type_id() == TypeId::of::<WorkspaceId>() {
            arg.add(ids.clone())
        } else {
            arg
        }
    });
    for sub in command.get_subcommands_mut() {
        let mut taken = for_completion(std::mem::take(sub), ids);
        if taken.is_hide_set() {
            let name = format!("\0{}", taken.get_name());
            taken = taken.name(name);
        }
        *sub = taken;
    }
    command
}

/// `--root`, `--repo` and `--backend` as typed before the word being completed, so the ids
/// come from the repository and root the command will act on.
fn global_flags(words: &[OsString]) -> GlobalArgs {
    let mut global = GlobalArgs {
        root: None,
        repo: None,
        backend: None,
        color: ColorChoice::Never,
    };
    let mut words = words.iter().map(|w| w.as_os_str());
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        let text = word.to_string_lossy();
        for flag in ["--root", "--repo", "--backend"] {
            let value: Option<OsString> = if text == flag {
                words.next().map(OsStr::to_os_string)
            } else {
                text.strip_prefix(flag)
                    .and_then(|rest| rest.strip_prefix('='))
                    .map(OsString::from)
            };
            let Some(value) = value else { continue };
            match flag {
                "--root" => global.root = Some(PathBuf::from(value)),
                "--repo" => global.repo = Some(PathBuf::from(value)),
                _ => global.backend = Backend::parse(&value.to_string_lossy()),
            }
        }
    }
    global
}

/// The namespace's workspace directories: a directory listing, no jj or git call. Outside a
/// repository (or with a bad configuration) there are none, and nothing is printed.
fn workspace_ids(global: &GlobalArgs) -> Vec<CompletionCandidate> {
    let Ok(ctx) = crate::workspace::context::Context::open(global) else {
        return vec![];
    };
    crate::workspace::inventory::directories(&ctx.layout.dir)
        .into_iter()
        .map(|(id, _, _)| CompletionCandidate::new(id.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split(' ').map(OsString::from).collect()
    }

    /// Every argument that takes a workspace id gets the completer, and only those.
    #[test]
    fn every_id_argument_completes_ids() {
        let ids = ArgValueCandidates::new(Vec::<CompletionCandidate>::new);
        let mut command = Cli::command();
        command.build();
        let command = for_completion(command, &ids);
        let mut found = vec![];
        for sub in command.get_subcommands() {
            for arg in sub.get_arguments() {
                if arg.get::<ArgValueCandidates>().is_some() {
                    found.push(format!("{} {}", sub.get_name(), arg.get_id()));
                }
            }
        }
        found.sort();
        assert_eq!(
            found,
            [
                "checkpoint id",
                "clean ids",
                "create id",
                "create parent",
                "diff id",
                "land id",
                "path id",
                "run id",
                "run parent",
                "shell id",
                "status id",
                "sync-tools id",
            ]
        );
    }

    #[test]
    fn global_flags_are_read_from_the_typed_words() {
        let global = global_flags(&words(
            "agent-workspace --root=/r status --repo /p --backend git w",
        ));
        assert_eq!(global.root, Some(PathBuf::from("/r")));
        assert_eq!(global.repo, Some(PathBuf::from("/p")));
        assert_eq!(global.backend, Some(Backend::Git));
        let global = global_flags(&words("agent-workspace run w -- --root /x"));
        assert_eq!(global.root, None);
    }
}
