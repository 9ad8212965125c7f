//! `man`: the manual pages, `agent-workspace.1` and one per subcommand, written to a directory.

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
pub(crate) fn cmd_man(ui: &Ui, args: &ManArgs, command: clap::Command) -> Result<i32> {
    let mut command = command.disable_help_subcommand(true);
    // Building names each subcommand `agent-workspace-<name>`: its page's title and file.
    command.build();
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| CliError::io("create the manual directory", &args.dir, &e).hint(HINT))?;
    let mut written = vec![page(&args.dir, command.clone())?];
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.push(page(&args.dir, sub.clone())?);
    }
    let list: String = written
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    ui.data(&list)?;
    Ok(0)
}

const HINT: &str = "pass --dir a writable directory";

/// Renders one page with clap_mangen and writes it (never through a symlink) into `dir`.
fn page(dir: &Path, command: clap::Command) -> Result<PathBuf> {
    let man = clap_mangen::Man::new(command);
    let mut roff = Vec::new();
    man.render(&mut roff)
        .map_err(|e| CliError::failure("could not render a manual page").cause(e.to_string()))?;
    let path = dir.join(man.get_filename());
    crate::store::fsutil::write_atomic(&path, &roff).map_err(|e| CliError::from(e).hint(HINT))?;
    Ok(path)
}
