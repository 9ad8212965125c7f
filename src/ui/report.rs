//! How the command layer words what the lifecycle returns: a removal (the text line and the
//! JSON object `clean` and `run --cleanup` print) and the notes of opening a workspace.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::CliError;
use crate::store::aside::Aside;
use crate::store::disk::Usage;
use crate::store::timestamp::Timestamp;
use crate::vcs::Kept;
use crate::workspace::details::ChangeCounts;
use crate::workspace::inventory::{Entry, Problem};
use crate::workspace::remove::Removal;
use crate::workspace::Note;

pub(crate) fn describe(id: &str, path: &Path, removal: &Removal) -> String {
    let mut text = format!("Removed {id} ({})", path.display());
    match (&removal.kept, &removal.branch_deleted) {
        (Kept::Branch { branch, commit, .. }, Some(Ok(()))) => {
            text += &format!(
                "; deleted branch {branch} ({}) as --delete-branch asked; `git branch {branch} {commit}` restores it",
                short(commit)
            );
        }
        (Kept::Change { change_id, .. }, _) => {
            text += &format!("; its edits are kept in change {change_id}")
        }
        (
            Kept::Branch {
                branch,
                commit,
                committed: true,
                ..
            },
            _,
        ) => {
            text += &format!(
                "; its uncommitted changes were committed to branch {branch} ({})",
                short(commit)
            )
        }
        (
            Kept::Branch {
                branch,
                commit,
                committed: false,
                ..
            },
            _,
        ) => text += &format!("; branch {branch} ({}) keeps its commits", short(commit)),
        (Kept::Unregistered, _) => {
            text += "; the backend no longer knew it, so no commit holds its files"
        }
        (Kept::Nothing, _) if removal.aside.kept_dir.is_none() && removal.commits.is_empty() => {
            text += "; it had no edits to keep"
        }
        (Kept::Nothing, _) => text += "; its working copy had no recorded edits",
    }
    if let Kept::Branch {
        head: Some(head), ..
    } = &removal.kept
    {
        text += &match head.created {
            true => format!(
                "; its detached HEAD ({}) is kept on new branch {}",
                short(&head.commit),
                head.branch
            ),
            false => format!(
                "; its HEAD was on branch {} ({}), which keeps those commits",
                head.branch,
                short(&head.commit)
            ),
        };
    }
    if !removal.commits.is_empty() {
        let named: Vec<String> = removal
            .commits
            .iter()
            .take(10)
            .map(|c| format!("{} {:?}", short(&c.id), c.subject))
            .collect();
        let more = removal.commits.len().saturating_sub(10);
        text += &format!("; commits holding its work: {}", named.join(", "));
        if more > 0 {
            text += &format!(" and {more} more");
        }
    }
    text += &describe_gitlinks(&removal.gitlinks);
    text += &describe_aside(&removal.aside);
    if let Some(dir) = &removal.earlier_aside {
        text += &format!(
            "; files an interrupted removal kept aside are in {}",
            dir.display()
        );
    }
    if !removal.moved_aside.is_empty() {
        text += &format!("; {}", moved_aside(&removal.moved_aside));
    }
    for (was, now) in &removal.too_deep {
        text += &format!(
            "; {} (nested deeper than a path can name, which jj and git cannot read) kept in {}",
            crate::store::deep::words(was),
            now.display()
        );
    }
    if let Some(store) = &removal.own_store_kept {
        text += &format!(
            "; its own store (sandboxed runs) holds {}, and is kept in {} (the agent's: its configuration is not yours)",
            store.holds,
            store.path.display()
        );
    }
    if let (Some(Err(err)), Kept::Branch { branch, .. }) = (&removal.branch_deleted, &removal.kept)
    {
        let err = CliError::from(err);
        let why = match err.hint {
            Some(hint) => format!("{}; {hint}", err.message),
            None => err.message,
        };
        text += &format!("; kept branch {branch}: {why}")
    }
    text += &describe_run_logs(removal.run_logs.as_ref(), false);
    text
}

/// "; removed its 3 run logs (DIR)", or where they stay and why; in a dry run what would be.
pub(crate) fn describe_run_logs(
    logs: Option<&crate::workspace::remove::RunLogs>,
    dry_run: bool,
) -> String {
    let Some(logs) = logs else {
        return String::new();
    };
    let noun = if logs.files == 1 { "log" } else { "logs" };
    match (&logs.left, dry_run) {
        (_, true) => format!(
            "; would remove its {} run {noun} ({})",
            logs.files,
            logs.dir.display()
        ),
        (None, false) => format!(
            "; removed its {} run {noun} ({})",
            logs.files,
            logs.dir.display()
        ),
        (Some(why), false) => format!(
            "; its run logs stay in {} ({why}; removed {})",
            logs.dir.display(),
            logs.files
        ),
    }
}

/// The lines (for stderr) saying what became of the removals a kill interrupted that a
/// command finished before doing its own work.
pub(crate) fn settled(finished: &[crate::workspace::remove::Finished]) -> Vec<String> {
    finished
        .iter()
        .map(|f| match &f.removal {
            Ok(removal) => format!(
                "Finished an interrupted clean: {}",
                describe(&f.id, &f.path, removal)
            ),
            Err(err) => format!(
                "Could not finish the interrupted clean of {}: {}",
                f.id,
                why_and_hint(err)
            ),
        })
        .collect()
}

/// The lines saying which interrupted repairs of stale working copies a command finished,
/// or could not finish now (with why and what to do).
pub(crate) fn repaired(repaired: &[crate::workspace::Repaired]) -> Vec<String> {
    repaired
        .iter()
        .map(|r| match &r.result {
            Ok(copy) => note(&Note::RepairFinished {
                id: r.id.to_string(),
                copy: copy.clone(),
            }),
            Err(err) => format!(
                "Warning: could not finish the interrupted update of workspace {:?}'s stale working copy: {}",
                r.id.as_str(),
                why_and_hint(err)
            ),
        })
        .collect()
}

/// An error's message with its hint in parentheses, for a line that reports it in passing.
fn why_and_hint(err: &crate::error::CliError) -> String {
    match &err.hint {
        Some(hint) => format!("{} ({hint})", err.message),
        None => err.message.clone(),
    }
}

/// Where each commit a gitlink names was kept ("; commit X of submodule lib is kept in DIR
/// as REF"), or that it is in no repository.
fn describe_gitlinks(links: &[crate::vcs::KeptLink]) -> String {
    let mut text = String::new();
    for link in links {
        let what = match link.submodule {
            true => "submodule",
            false => "nested repository",
        };
        text += &match &link.kept {
            Some((repo, refname)) => format!(
                "; commit {} of {what} {} is kept in {} as {refname}",
                short(&link.commit),
                link.path,
                repo.display()
            ),
            None => format!(
                "; warning: commit {} that gitlink {} names is in none of its repositories nor yours, so it was kept nowhere",
                short(&link.commit),
                link.path
            ),
        };
    }
    text
}

fn describe_aside(aside: &Aside) -> String {
    let mut text = String::new();
    if let Some(dir) = &aside.kept_dir {
        text += &format!(
            "; kept {} that no commit holds in {}",
            files(aside.kept_files, aside.kept_bytes),
            dir.display()
        );
    }
    if aside.disposable_files > 0 {
        text += &format!(
            "; discarded {} of disposable build output ({})",
            files(aside.disposable_files, aside.disposable_bytes),
            aside.disposable_patterns.join(", ")
        );
    }
    if aside.discarded_files > 0 {
        text += &format!(
            "; discarded {} that no commit held, as --discard-untracked asked",
            files(aside.discarded_files, aside.discarded_bytes)
        );
    }
    text
}

/// "1 prepared workspace", "2 prepared workspaces": `n` and `noun`, plural unless `n` is 1.
pub(crate) fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// What a dry run's removal would keep aside (`; would keep aside ...`), or nothing when
/// every file is held by a commit; `aside` is `None` when it could not be surveyed.
pub(crate) fn would_keep(aside: Option<&crate::store::aside::Aside>) -> String {
    match aside {
        Some(a) if a.kept_files > 0 => format!(
            "; would keep aside {} that no commit holds",
            files(a.kept_files, a.kept_bytes)
        ),
        Some(_) => String::new(),
        None => "; files no commit holds would be kept aside".into(),
    }
}

/// "3 files (2.1 MiB)"
pub(crate) fn files(count: u64, bytes: u64) -> String {
    let noun = if count == 1 { "file" } else { "files" };
    let size = crate::store::disk::human(bytes);
    format!("{count} {noun} ({size})")
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// A workspace in `clean --json`'s `removed` (and `gc --json`'s `removal`): what was (or
/// would be) removed and what keeps its work. Fields in alphabetical order, the order these
/// objects have always been printed in.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct RemovalJson {
    /// Whether `--delete-branch` deleted the branch; null when not asked.
    pub branch_deleted: Option<bool>,
    /// Further commits that hold the workspace's work; null in a dry run.
    pub commits: Option<Vec<crate::vcs::Commit>>,
    /// Whether uncommitted changes were committed to the kept branch first.
    pub committed_uncommitted_changes: bool,
    /// git: the commits its submodules' and nested repositories' gitlinks name that were
    /// fetched into the user's repository (or found in none) before it was removed; null in
    /// a dry run.
    pub gitlinks: Option<Vec<GitlinkJson>>,
    /// Where a detached HEAD was kept reachable (git).
    pub head: Option<HeadJson>,
    pub kept_branch: Option<String>,
    pub kept_change_id: Option<String>,
    pub kept_commit_id: Option<String>,
    /// Its own store (sandboxed runs), kept aside because it holds work that did not come
    /// back; null when it had none or it went.
    pub own_store_kept: Option<OwnStoreJson>,
    pub path: PathBuf,
    /// Its run logs (the MCP server's copies of its runs' output): removed with it, or would
    /// be in a dry run; null when it had none.
    pub run_logs: Option<RunLogsJson>,
    /// The files no commit holds: kept aside, or discarded; null when not known.
    pub untracked: Option<AsideJson>,
    pub workspace_id: String,
}

/// A removed workspace's own store, kept aside.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct OwnStoreJson {
    /// What it holds that did not come back, in words.
    pub holds: String,
    /// Where it is (jj: a repository; git: a git directory), under the kept-aside directory.
    pub path: PathBuf,
}

/// A commit a gitlink of a removed worktree names, and where it is kept.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct GitlinkJson {
    pub commit_id: String,
    /// The gitlink's path in the workspace.
    pub path: String,
    /// The ref that keeps the commit (`refs/agent-workspace/kept/<id>/<commit>`); null when
    /// none of its repositories nor the user's held it (it was kept nowhere).
    #[serde(rename = "ref")]
    pub refname: Option<String>,
    /// The git directory it was fetched into: the user's clone of the submodule, or the
    /// repository's own; null when `ref` is.
    pub repository: Option<PathBuf>,
    /// Whether it is a submodule's, not a nested repository's.
    pub submodule: bool,
}

impl From<&crate::vcs::KeptLink> for GitlinkJson {
    fn from(link: &crate::vcs::KeptLink) -> GitlinkJson {
        GitlinkJson {
            commit_id: link.commit.clone(),
            path: link.path.clone(),
            refname: link.kept.as_ref().map(|(_, r)| r.clone()),
            repository: link.kept.as_ref().map(|(dir, _)| dir.clone()),
            submodule: link.submodule,
        }
    }
}

/// A removed workspace's run logs.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct RunLogsJson {
    /// How many logs were removed (or would be, in a dry run).
    pub files_count: u64,
    /// Why some stay, in `path`, if they do (null when all went).
    pub left: Option<String>,
    /// Their directory, `<namespace>/.logs/<id>/`.
    pub path: PathBuf,
}

impl From<&crate::workspace::remove::RunLogs> for RunLogsJson {
    fn from(logs: &crate::workspace::remove::RunLogs) -> RunLogsJson {
        RunLogsJson {
            files_count: logs.files,
            left: logs.left.clone(),
            path: logs.dir.clone(),
        }
    }
}

/// The branch a removed worktree's HEAD is kept on.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct HeadJson {
    pub branch: String,
    pub commit_id: String,
    /// Whether the branch was created to keep a detached HEAD reachable.
    pub created: bool,
}

/// What became of a workspace's files that no commit holds.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct AsideJson {
    pub discarded_bytes: u64,
    pub discarded_files_count: u64,
    pub disposable_bytes: u64,
    pub disposable_files_count: u64,
    pub disposable_patterns: Vec<String>,
    pub kept_bytes: u64,
    pub kept_dir: Option<PathBuf>,
    pub kept_files_count: u64,
}

impl RemovalJson {
    /// Workspace `id` at `path`, removed (`removal`) or, in a dry run, not (`None`).
    pub(crate) fn new(id: &str, path: &Path, removal: Option<&Removal>) -> RemovalJson {
        let kept = removal.map(|r| &r.kept);
        let (change, commit, branch, committed) = match kept {
            Some(Kept::Change {
                change_id,
                commit_id,
            }) => (Some(change_id), Some(commit_id), None, false),
            Some(Kept::Branch {
                branch,
                commit,
                committed,
                ..
            }) => (None, Some(commit), Some(branch), *committed),
            _ => (None, None, None, false),
        };
        let head = match kept {
            Some(Kept::Branch { head: Some(h), .. }) => Some(HeadJson {
                branch: h.branch.clone(),
                commit_id: h.commit.clone(),
                created: h.created,
            }),
            _ => None,
        };
        RemovalJson {
            branch_deleted: removal
                .and_then(|r| r.branch_deleted.as_ref())
                .map(|r| r.is_ok()),
            commits: removal.map(|r| r.commits.clone()),
            committed_uncommitted_changes: committed,
            gitlinks: removal.map(|r| r.gitlinks.iter().map(GitlinkJson::from).collect()),
            head,
            kept_branch: branch.cloned(),
            kept_change_id: change.cloned(),
            kept_commit_id: commit.cloned(),
            own_store_kept: removal
                .and_then(|r| r.own_store_kept.as_ref())
                .map(|s| OwnStoreJson {
                    holds: s.holds.clone(),
                    path: s.path.clone(),
                }),
            path: path.to_path_buf(),
            run_logs: removal
                .and_then(|r| r.run_logs.as_ref())
                .map(RunLogsJson::from),
            untracked: removal.map(|r| AsideJson::from(&r.aside)),
            workspace_id: id.to_string(),
        }
    }
}

impl From<&Aside> for AsideJson {
    fn from(a: &Aside) -> AsideJson {
        AsideJson {
            discarded_bytes: a.discarded_bytes,
            discarded_files_count: a.discarded_files,
            disposable_bytes: a.disposable_bytes,
            disposable_files_count: a.disposable_files,
            disposable_patterns: a.disposable_patterns.clone(),
            kept_bytes: a.kept_bytes,
            kept_dir: a.kept_dir.clone(),
            kept_files_count: a.kept_files,
        }
    }
}

/// What a sandboxed run left that jj or git would follow, moved aside: where each now is
/// (out of the workspace, in its kept-aside directory; one left inside, renamed, says so).
pub(crate) fn moved_aside(paths: &[crate::store::nested_aside::MovedAside]) -> String {
    use crate::store::nested_aside::MovedAside;
    format!(
        "moved aside a .git or .jj a sandboxed run made (git or jj would have followed it to a store of the agent's and run its configuration): {}",
        paths
            .iter()
            .map(|moved| match moved {
                MovedAside::Kept(path) => path.display().to_string(),
                MovedAside::InPlace { path, why } => format!(
                    "{} (renamed in the workspace, where a checkpoint records it: {why})",
                    path.display()
                ),
            })
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The hosts a run's proxy refused, as said after the run and in `status <id>`: each with
/// how many times, its name escaped (the run chose it).
pub(crate) fn refused_hosts(hosts: &[crate::store::metadata::RefusedHost]) -> String {
    hosts
        .iter()
        .map(|h| {
            let host = crate::ui::output::escape_controls(&h.host);
            match h.times {
                1 => format!("{host} (at {})", h.at),
                n => format!("{host} ({n} times, first at {})", h.at),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What to do about paths [`moved_aside`] names.
pub(crate) const MOVED_ASIDE_HINT: &str =
    "look at what each holds, as data, before putting it back; the workspace's other files are unchanged";

/// The line to print for a note of opening a workspace.
pub(crate) fn note(note: &Note) -> String {
    match note {
        Note::MovedAside { paths } => format!("Warning: {}", moved_aside(paths)),
        Note::OwnStoreKept { store } => format!(
            "Warning: the workspace's own store was made again from your side; the old one holds {}, and is kept in {} (the agent's: its configuration is not yours)",
            store.holds,
            store.path.display()
        ),
        Note::CorruptRecordKept { workspace, kept, why } => format!(
            "Warning: the record of {} was unreadable ({why}); kept it as {} and started a new record",
            workspace.display(),
            kept.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
        ),
        Note::RepairFinished { id, copy } => format!(
            "Note: finished the interrupted update of workspace {id:?}'s stale working copy; its edits are back from {}",
            copy.display()
        ),
        Note::UpdatedStale { id } => {
            format!("Note: workspace {id:?} was stale; updated it (its edits are kept)")
        }
        Note::ViewRewritten { view, state } => format!(
            "Warning: {} was changed outside agent-workspace; rewrote it from {}",
            view.display(),
            state.display()
        ),
        Note::RecordMoved { workspace, state } => format!(
            "Note: moved the record of {} into {}; its .envrc trust is checked anew against the base revision",
            workspace.display(),
            state.display()
        ),
        Note::RecreatedOnChange { id, change_id } => format!(
            "Note: the directory of workspace {id:?} was deleted; re-created it on top of change {change_id}, which keeps its edits"
        ),
        Note::Copied { id, copied, elapsed } => format!(
            "Copied {} ({}; {} cloned copy-on-write, {} copied) and {} into workspace {id:?} in {:.1}s{}",
            count(copied.files as usize, "file"),
            crate::store::disk::human(copied.bytes),
            copied.reflinked,
            copied.copied,
            count(copied.symlinks as usize, "symlink"),
            elapsed.as_secs_f64(),
            match copied.outside_symlinks {
                0 => String::new(),
                n => format!(
                    "; skipped {} pointing outside the main workspace",
                    count(n as usize, "symlink")
                ),
            }
        ),
        Note::RecreatedOnBranch { id, branch } => format!(
            "Note: the directory of workspace {id:?} was deleted; re-created it on branch {branch}, which keeps its commits"
        ),
        Note::ToolsLinksSkipped { paths } => format!(
            "Warning: not copied into the tools bundle (symlinks leading out of the repository): {}",
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// How a run was sandboxed, in a few words: `no`, or `bwrap` with its options.
pub(crate) fn sandbox(options: Option<&crate::exec::sandbox::Options>) -> String {
    let Some(options) = options else {
        return "no".into();
    };
    let mut words = vec!["bwrap".to_string()];
    match (&options.allowed_hosts, options.network) {
        (_, false) => words.push("no network".into()),
        (Some(hosts), true) if hosts.is_empty() => words.push("no host allowed".into()),
        (Some(hosts), true) => words.push(format!(
            "network to {} only",
            crate::ui::output::escape_controls(&hosts.join(", "))
        )),
        (None, true) => {}
    }
    for path in &options.writable {
        words.push(format!("writes {}", path.display()));
    }
    words.join(", ")
}

/// A sandbox's limits as `status <id>` shows them: each one applied, and through what.
pub(crate) fn limits(limits: &crate::store::metadata::SandboxLimits) -> String {
    use crate::exec::sandbox::limits::size_words;
    let mut words = vec![];
    if let Some(pids) = limits.pids {
        words.push(format!("{pids} processes"));
    }
    if let Some(memory) = limits.memory {
        words.push(format!("{} memory", size_words(memory)));
    }
    if let Some(cpus) = limits.cpus {
        words.push(format!("{cpus} CPUs"));
    }
    if let Some(tmp) = limits.tmp {
        words.push(format!("{} per tmpfs", size_words(tmp)));
    }
    words.push(match limits.cgroup {
        Some(crate::store::metadata::CgroupKind::V2) => "cgroup v2".into(),
        Some(crate::store::metadata::CgroupKind::V1) => "cgroup v1".into(),
        None => "no cgroup: no process or memory limit".into(),
    });
    words.join(", ")
}

/// The lines `status <ID>` adds below a workspace's record: its changes since its base, its
/// last activity and, when measured, its disk usage; then its commits.
pub(crate) fn describe_details(
    changes: Option<&Result<ChangeCounts, CliError>>,
    last_activity: Option<&Timestamp>,
    usage: Option<&Usage>,
) -> String {
    let mut out = String::new();
    let mut field = |name: &str, value: String| out.push_str(&format!("{name:<14}{value}\n"));
    match changes {
        Some(Ok(c)) => {
            field(
                "commits",
                match (c.commits.len(), c.unlanded_commits_count) {
                    (n, u) if u >= n => n.to_string(),
                    (n, 0) => format!("{n}, all landed"),
                    (n, u) => format!("{n} ({u} not landed)"),
                },
            );
            let binary = match c.binary_count {
                0 => String::new(),
                n => format!(" ({n} binary)"),
            };
            let moment = match (c.files_as_of, c.snapshot_at.as_ref()) {
                ("last-snapshot", Some(at)) => format!(" (as of jj's last snapshot at {at})"),
                ("last-snapshot", None) => " (as of jj's last snapshot)".into(),
                _ => String::new(),
            };
            field(
                "files",
                format!(
                    "{} changed, +{} -{}{binary}{moment}",
                    c.files_count, c.added, c.removed
                ),
            );
        }
        Some(Err(err)) => field("changes", format!("unknown: {}", err.message)),
        None => {}
    }
    if let Some(when) = last_activity {
        field("last activity", when.to_string());
    }
    if let Some(u) = usage {
        field(
            "size",
            format!(
                "{} ({} bytes)",
                crate::store::disk::human(u.allocated),
                u.allocated
            ),
        );
        let newest = u.newest.map(|t| Timestamp::from_time(t).to_string());
        field("newest file", newest.unwrap_or_else(|| "-".into()));
    }
    if let Some(Ok(c)) = changes.filter(|c| c.as_ref().is_ok_and(|c| !c.commits.is_empty())) {
        out.push_str("\nCOMMITS\n");
        let rows = c.commits.iter().map(|commit| {
            let subject = &commit.subject;
            [short(&commit.commit_id).to_string(), subject.to_string()]
        });
        crate::ui::output::columns(rows, &mut out);
    }
    out
}

/// How to fix a workspace's problem, as `status` and `doctor` say it.
pub(crate) fn problem_hint(problem: &Problem, entry: &Entry) -> String {
    let id = entry.id.as_str();
    match problem {
        Problem::Crashed => format!("its run died; `agent-workspace run {id} -- ...` resumes it, `agent-workspace clean {id}` removes it"),
        Problem::MissingDirectory => format!("its directory was deleted; `agent-workspace run {id} -- ...` re-creates it with its edits, `agent-workspace clean {id}` forgets it"),
        Problem::Unregistered => {
            let err = CliError::from(crate::workspace::error::WorkspaceError::Unregistered {
                id: id.to_string(),
                path: entry.path.clone(),
            });
            format!("{}; {}", err.message, err.hint.unwrap_or_default())
        }
        Problem::CorruptMetadata(why) => format!("its record is unreadable ({why}); the next run keeps it aside and starts a new one"),
        Problem::MissingMetadata => format!("it has no record; the next `agent-workspace run {id}` adopts it"),
        Problem::NewerSchema(v) => format!("its record is schema {v}, from a newer agent-workspace; upgrade to manage it"),
        Problem::NotADirectory => "it is a symlink or file, not a workspace; remove it by hand".into(),
        Problem::Mismatch(m) => format!("{}; {}", m.message(&entry.id), m.hint()),
        Problem::Renamed(name) => format!("the backend knows it as {name:?}; `agent-workspace clean {id}` forgets that name, keeping its edits"),
        Problem::TamperedRecord => format!("its {} was changed outside agent-workspace, which goes by its own state in .state/{id}.json; the next `agent-workspace run {id}` rewrites it", crate::store::metadata::FILE_NAME),
    }
}

/// The words for what went wrong around a run whose command ran (its exit code stands): the
/// warning and, when there is one, its hint.
/// What a run that reached its sandbox's limit `hit` is told, and what to do.
fn limit_hit(
    hit: crate::store::metadata::LimitHit,
    limits: &crate::store::metadata::SandboxLimits,
) -> (String, Option<String>) {
    use crate::exec::sandbox::limits::size_words;
    use crate::store::metadata::LimitHit;
    let (key, value, what) = match hit {
        LimitHit::Memory => (
            "memory",
            limits.memory.map(size_words),
            "the command was killed for want of memory: it reached the sandbox's memory limit",
        ),
        LimitHit::Pids => (
            "pids",
            limits.pids.map(|p| p.to_string()),
            "the command could not start a process: it reached the sandbox's process limit",
        ),
    };
    let value = value.map_or(String::new(), |v| format!(" = {v}"));
    (
        format!("{what} (sandbox.limits.{key}{value})"),
        Some(format!(
            "raise sandbox.limits.{key} in your own configuration file if the command needs more"
        )),
    )
}

/// The note of a sandboxed run that gets no process, memory or CPU limit, and why.
pub(crate) fn unlimited(why: &str) -> String {
    format!("Note: this sandboxed run has no process or memory limit: {why}")
}

/// The words of what a run hit, after its exit code in `status <id>`.
pub(crate) fn limit_hit_words(hit: crate::store::metadata::LimitHit) -> &'static str {
    match hit {
        crate::store::metadata::LimitHit::Memory => {
            "out of memory: killed at the sandbox's memory limit"
        }
        crate::store::metadata::LimitHit::Pids => "reached the sandbox's process limit",
    }
}

pub(crate) fn run_warning(warning: &crate::session::Warning) -> (String, Option<String>) {
    use crate::session::Warning;
    let with_hint = |text: String, err: &crate::error::CliError, default: &str| {
        (
            format!("{text}: {}", err.message),
            Some(err.hint.clone().unwrap_or_else(|| default.to_string())),
        )
    };
    match warning {
        Warning::ViewChanged { view } => (
            format!(
                "{} was changed during the run; rewrote it from agent-workspace's state",
                view.display()
            ),
            None,
        ),
        Warning::NotRecorded { code, err } => with_hint(
            format!("the run ended (exit code {code}) but its outcome could not be recorded"),
            err,
            "check the workspace and its state directory",
        ),
        Warning::LimitHit { hit, limits } => limit_hit(*hit, limits),
        Warning::NotInCheckpoint { path, why } => (
            format!("not in the checkpoint: {} ({why})", path.display()),
            None,
        ),
        Warning::CheckpointFailed { code, err } => with_hint(
            format!("the run ended (exit code {code}) but its checkpoint failed"),
            err,
            "run `agent-workspace checkpoint` on the workspace",
        ),
        Warning::MovedAside { paths } => (
            moved_aside(paths),
            Some(MOVED_ASIDE_HINT.into()),
        ),
        Warning::HostsRefused { hosts } => (
            format!(
                "the sandbox's proxy refused the run {} (not in sandbox.allowed_hosts): {}",
                match hosts.iter().map(|h| h.times).sum::<u64>() {
                    1 => "1 connection".to_string(),
                    n => format!("{n} connections"),
                },
                refused_hosts(hosts)
            ),
            Some("if the run needs them, add them to sandbox.allowed_hosts in your own configuration file; `status <id>` lists them".into()),
        ),
        Warning::OwnStoreKept { store } => (
            format!(
                "the workspace's own store was made again from your side; the old one holds {}, and is kept in {}",
                store.holds,
                store.path.display()
            ),
            Some("it is the agent's (its configuration is not yours): read it as data".into()),
        ),
        Warning::NotBroughtBack { code, err } => with_hint(
            format!("the run ended (exit code {code}) but the commits it made in its own store were not brought back"),
            err,
            "its files are in the workspace; the next sandboxed run tries again",
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(
            super::count(1, "prepared workspace"),
            "1 prepared workspace"
        );
        assert_eq!(
            super::count(0, "prepared workspace"),
            "0 prepared workspaces"
        );
        assert_eq!(super::count(2, "file"), "2 files");
    }

    #[test]
    fn what_was_moved_aside_is_named_where_it_is_and_one_left_inside_says_so() {
        use crate::store::nested_aside::MovedAside;
        let text = super::moved_aside(&[
            MovedAside::Kept("/ns/.kept/w-20261207T183646Z/sub/.git".into()),
            MovedAside::InPlace {
                path: "/ns/w/src/.jj.from-sandbox".into(),
                why: "could not move it to /ns/.kept/w-20261207T183646Z/src/.jj: Invalid cross-device link (os error 18)".into(),
            },
        ]);
        assert!(
            text.ends_with(
                "run its configuration): /ns/.kept/w-20261207T183646Z/sub/.git, \
                 /ns/w/src/.jj.from-sandbox (renamed in the workspace, where a checkpoint \
                 records it: could not move it to /ns/.kept/w-20261207T183646Z/src/.jj: \
                 Invalid cross-device link (os error 18))"
            ),
            "{text}"
        );
    }
}
