//! `docs/cli.md`, the command-line reference, is generated from the clap definition: every
//! visible command's `--help`, exactly as it prints. This test fails when the checked-in file
//! differs from what the definition gives; `AGENT_WORKSPACE_WRITE_DOCS=1 cargo test --lib
//! reference` writes it anew.

use std::path::Path;

use clap::CommandFactory;

use super::parse::Cli;

/// The variable that makes the test write the reference instead of comparing it.
const WRITE: &str = "AGENT_WORKSPACE_WRITE_DOCS";

/// The command paths (`["pool", "fill"]`) of every visible subcommand, depth first.
fn paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    // clap's own `help` subcommand is left out: it prints the others' help.
    let visible = |s: &&clap::Command| !s.is_hide_set() && s.get_name() != "help";
    for sub in cmd.get_subcommands().filter(visible) {
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_string());
        out.push(path.clone());
        paths(sub, &path, out);
    }
}

/// What `agent-workspace <path> --help` prints, at a fixed width.
fn help(path: &[String]) -> String {
    let args = std::iter::once("agent-workspace".to_string())
        .chain(path.iter().cloned())
        .chain(std::iter::once("--help".to_string()));
    match Cli::command()
        .term_width(100)
        .color(clap::ColorChoice::Never)
        .try_get_matches_from(args)
    {
        Err(err) if err.kind() == clap::error::ErrorKind::DisplayHelp => err.to_string(),
        other => panic!("{path:?} --help did not print help: {other:?}"),
    }
}

/// The whole reference: the top-level help, then one section per command.
fn reference() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut all = vec![];
    paths(&cmd, &[], &mut all);
    let mut text = String::from(
        "# Command-line reference\n\n\
         Generated from the command-line definition (what `--help` prints, at 100 columns); a\n\
         test fails when it is out of date. The [commands guide](commands.md) says more.\n\n\
         ## agent-workspace\n\n```text\n",
    );
    text += help(&[]).trim_end();
    text += "\n```\n";
    for path in all {
        text += &format!("\n## agent-workspace {}\n\n```text\n", path.join(" "));
        text += help(&path).trim_end();
        text += "\n```\n";
    }
    text
}

#[test]
fn the_checked_in_reference_is_the_generated_one() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    let text = reference();
    if std::env::var_os(WRITE).is_some_and(|v| !v.is_empty()) {
        std::fs::write(&file, &text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        return;
    }
    let current = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        current == text,
        "docs/cli.md is out of date with the command-line definition: run `{WRITE}=1 cargo test --lib reference` and check the diff in"
    );
}
