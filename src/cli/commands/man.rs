//! `man`: the manual pages, `agent-workspace.1` and one per subcommand (nested ones too),
//! written to a directory. clap_mangen renders what the command line defines; the examples,
//! EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO sections are added here.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::error::{CliError, Result};
use crate::ui::Ui;

/// Write the manual pages (agent-workspace.1 and one per subcommand) into a directory
///
/// One page per subcommand, nested ones included (agent-workspace-pool-fill.1), each with
/// the exit status, the environment and the files the tool reads; the path of each page
/// written is printed.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing; pages there are replaced)
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
}

/// `command` is the whole command line's clap definition, handed over by the dispatch.
pub(in crate::cli) fn cmd_man(ui: &Ui, args: &ManArgs, command: clap::Command) -> Result<i32> {
    let mut command = command.disable_help_subcommand(true);
    // Building resolves the deferred subcommands and names each `agent-workspace-<name>`
    // (`agent-workspace-pool-fill`): its page's title and file.
    command.build();
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| CliError::io("create the manual directory", &args.dir, &e).hint(HINT))?;
    let mut pages = vec![];
    collect(&command, None, &mut pages);
    let mut written = vec![];
    for (command, parent) in pages {
        written.push(page(&args.dir, command, parent.as_deref())?);
    }
    let list: String = written
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    ui.data(&list)?;
    Ok(0)
}

const HINT: &str = "pass --dir a writable directory";

/// What the roff crate writes before every rendered piece (a portable apostrophe string).
const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// `command` and every visible subcommand below it, each with its parent page's name.
fn collect(
    command: &clap::Command,
    parent: Option<String>,
    pages: &mut Vec<(clap::Command, Option<String>)>,
) {
    pages.push((command.clone(), parent));
    let name = display_name(command);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, Some(name.clone()), pages);
    }
}

fn display_name(command: &clap::Command) -> String {
    command
        .get_display_name()
        .unwrap_or_else(|| command.get_name())
        .to_string()
}

/// Renders one page and writes it (never through a symlink) into `dir`.
fn page(dir: &Path, command: clap::Command, parent: Option<&str>) -> Result<PathBuf> {
    let examples = command.get_after_long_help().map(|t| t.to_string());
    let children: Vec<String> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(display_name)
        .collect();
    // The examples get a section of their own below, not clap_mangen's EXTRA paragraph.
    let command = command
        .after_long_help(None::<&str>)
        .after_help(None::<&str>);
    let man = clap_mangen::Man::new(command.clone())
        .source(format!("agent-workspace {}", env!("CARGO_PKG_VERSION")))
        .manual("agent-workspace manual");
    let mut roff = Vec::new();
    let rendered = (|| -> std::io::Result<()> {
        man.render_title(&mut roff)?;
        man.render_name_section(&mut roff)?;
        man.render_synopsis_section(&mut roff)?;
        man.render_description_section(&mut roff)?;
        man.render_options_section(&mut roff)?;
        if !children.is_empty() {
            man.render_subcommands_section(&mut roff)?;
        }
        Ok(())
    })();
    rendered
        .map_err(|e| CliError::failure("could not render a manual page").cause(e.to_string()))?;
    // Each section rendered apart starts with roff's preamble: keep the first only.
    let text = String::from_utf8_lossy(&roff);
    let mut text = match text.find(PREAMBLE) {
        Some(0) => format!("{PREAMBLE}{}", text.replace(PREAMBLE, "")),
        _ => text.into_owned(),
    };
    if let Some(examples) = examples {
        text.push_str(&examples_section(&examples));
    }
    text.push_str(&exit_status_section());
    text.push_str(&list_section("ENVIRONMENT", ENVIRONMENT));
    text.push_str(&list_section("FILES", FILES));
    text.push_str(&see_also_section(parent, &children));
    let path = dir.join(man.get_filename());
    crate::store::fsutil::write_atomic(&path, text.as_bytes())
        .map_err(|e| CliError::from(e).hint(HINT))?;
    Ok(path)
}

/// Text made safe for roff: backslashes and hyphens escaped, a leading `.` or `'` kept text.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

/// The help's examples: each description a paragraph, each command line set as code.
fn examples_section(help: &str) -> String {
    let mut out = String::from(".SH EXAMPLES\n");
    for line in help.lines().skip_while(|l| *l == "Examples:") {
        if let Some(code) = line.strip_prefix("    ") {
            out.push_str(&format!(".RS 4\n.EX\n{}\n.EE\n.RE\n", escape(code)));
        } else if !line.trim().is_empty() {
            out.push_str(&format!(".PP\n{}\n", escape(line.trim())));
        }
    }
    out
}

/// The exit codes of the top-level help's footer, one tagged paragraph each.
fn exit_status_section() -> String {
    let mut out = String::from(".SH \"EXIT STATUS\"\n");
    for line in crate::cli::help::EXIT_CODES.lines().skip(1) {
        let line = line.trim();
        match line.split_once("  ") {
            Some((code, meaning)) => out.push_str(&format!(
                ".TP\n.B {}\n{}\n",
                escape(code),
                escape(meaning.trim())
            )),
            None => out.push_str(&format!(".PP\n{}\n", escape(line))),
        }
    }
    out
}

fn list_section(title: &str, items: &[(&str, &str)]) -> String {
    let mut out = format!(".SH {title}\n");
    for (name, meaning) in items {
        out.push_str(&format!(".TP\n.B {}\n{}\n", escape(name), escape(meaning)));
    }
    out
}

fn see_also_section(parent: Option<&str>, children: &[String]) -> String {
    let mut refs: Vec<String> = parent.into_iter().map(str::to_string).collect();
    refs.extend(children.iter().cloned());
    refs.extend(["jj", "git"].map(String::from));
    let refs: Vec<String> = refs
        .iter()
        .map(|r| format!(".BR {} (1)", escape(r)))
        .collect();
    format!(".SH \"SEE ALSO\"\n{}\n", refs.join(" ,\n"))
}

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "AI_WORKSPACES_ROOT",
        "The directory holding all workspaces, when --root is not given.",
    ),
    (
        "XDG_CACHE_HOME, HOME",
        "The root's fallbacks: $XDG_CACHE_HOME/ai-workspaces, else ~/.cache/ai-workspaces.",
    ),
    (
        "XDG_CONFIG_HOME",
        "Where the user's configuration file is looked for.",
    ),
    (
        "AGENT_WORKSPACE_BACKEND",
        "jj or git, when --backend is not given.",
    ),
    (
        "AGENT_WORKSPACE_BRANCH_PREFIX",
        "The git backend's branch prefix (default agent-workspace/).",
    ),
    (
        "AGENT_WORKSPACE_DISPOSABLE",
        "Comma-separated build-output patterns clean may discard.",
    ),
    (
        "AGENT_WORKSPACE_MAX_DEPTH",
        "How deep run --parent may nest children (default 10).",
    ),
    (
        "AGENT_WORKSPACE_SANDBOX_WRITE",
        "Extra paths a sandboxed run may write, separated like PATH.",
    ),
    (
        "SHELL",
        "The shell the shell subcommand starts (else /bin/sh).",
    ),
    ("NO_COLOR", "When set, --color auto prints no colour."),
    (
        "DIRENV_LOG_FORMAT",
        "Passed to direnv; when unset, direnv's status lines are silenced.",
    ),
    (
        "AGENT_WORKSPACE_COMPLETE",
        "Set by the completion scripts: the binary prints completions instead of running.",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "<root>/<namespace>/<id>",
        "A workspace; the namespace is the repository's directory name and a hash of its path.",
    ),
    (
        "<root>/<namespace>/.state/<id>.json",
        "agent-workspace's own record of a workspace, outside every workspace.",
    ),
    (
        "<root>/<namespace>/.locks/",
        "The lease of each workspace and the repository lock.",
    ),
    (
        "<root>/<namespace>/.kept/",
        "Files no commit holds, kept aside when a workspace is cleaned.",
    ),
    (
        "agent-workspace.toml, .config/agent-workspace.toml",
        "The repository's configuration, at the root of its main workspace.",
    ),
    (
        "$XDG_CONFIG_HOME/agent-workspace/config.toml",
        "The user's configuration (else ~/.config/agent-workspace/config.toml).",
    ),
];
