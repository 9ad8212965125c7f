//! What interrupted commands leave in a namespace: half-done recoveries, temporary files
//! of dead processes, leases of workspaces that are gone, a child's temporary index.

use std::fs;
use std::path::{Path, PathBuf};

use super::Check;
use crate::store::layout::Layout;
use crate::store::layout::WorkspaceId;

pub(super) fn check(layout: &Layout) -> Vec<Check> {
    let mut found: Vec<Check> = vec![];
    for (name, path) in names(&layout.dir) {
        if let Some(id) = name.strip_prefix(".recovering-") {
            let check = match crate::store::recovery::is_complete(&path) {
                // A whole copy to put back: that writes the workspace again, so it needs
                // room on the same file system.
                true => {
                    let room = crate::store::disk::check_room(
                        &layout.dir,
                        crate::store::disk::usage(&crate::store::recovery::files(&path)).allocated,
                    );
                    Check::warning(
                        "leftovers",
                        format!(
                            "{} holds workspace {id}'s files, copied by an interrupted repair of its stale working copy",
                            path.display()
                        ),
                        match room {
                            Ok(()) => format!("`agent-workspace run {id} -- true` puts them back and removes the copy"),
                            Err(e) => format!("{e}: free space there first, then `agent-workspace run {id} -- true` puts them back"),
                        },
                    )
                }
                false => Check::warning(
                    "leftovers",
                    format!(
                        "{} is a partial copy an interrupted repair of workspace {id} left (the workspace itself was not changed)",
                        path.display()
                    ),
                    format!("`agent-workspace run {id} -- true` removes it and repairs the workspace"),
                ),
            };
            found.push(check);
        }
    }
    if !crate::store::lock::is_held(&layout.repo_lock()) {
        for id in crate::workspace::pool::taking(&layout.dir) {
            found.push(Check::warning(
                "leftovers",
                format!(
                    "{} is a prepared workspace an interrupted take left half handed over as {id}",
                    layout.workspace(&id).display()
                ),
                "`agent-workspace status` rolls it back (it holds no one's work)",
            ));
        }
    }
    for dir in [
        layout.dir.join(crate::store::state::DIR_NAME),
        layout.cache(),
        layout.locks(),
    ] {
        for (name, path) in names(&dir) {
            if temp_of_dead_process(&name) {
                found.push(scratch(&path, "a temporary file of a command that died"));
            } else if let Some(id) = name
                .strip_suffix(".removing")
                .filter(|_| dir == layout.dir.join(crate::store::state::DIR_NAME))
                .and_then(|id| WorkspaceId::parse(id).ok())
            {
                if !crate::store::lock::is_held(&layout.lease(&id)) {
                    found.push(Check::warning(
                        "leftovers",
                        format!("{} is the journal of an interrupted clean of {id}", path.display()),
                        format!(
                            "`agent-workspace clean {id}` finishes it (files changed since are kept aside)"
                        ),
                    ));
                }
            } else if let Some(id) = name.strip_suffix(".creating").filter(|_| {
                dir == layout.dir.join(crate::store::state::DIR_NAME)
                    && !crate::store::lock::is_held(&layout.repo_lock())
            }) {
                found.push(Check::warning(
                    "leftovers",
                    format!(
                        "{} is the journal of a creation of {id} a kill interrupted",
                        path.display()
                    ),
                    "`agent-workspace status` rolls it back (nothing ran in it yet)",
                ));
            } else if name.starts_with(".fork-")
                && name.ends_with(".index")
                && !crate::store::lock::is_held(&layout.repo_lock())
            {
                found.push(scratch(
                    &path,
                    "the temporary index of an interrupted `run --parent`",
                ));
            } else if let Some(id) = name
                .strip_suffix(".lock")
                .filter(|_| dir == layout.locks())
                .and_then(|id| WorkspaceId::parse(id).ok())
            {
                if stale_lease(layout, &id, &path) {
                    found.push(scratch(
                        &path,
                        &format!("the lease of workspace {id}, which is gone"),
                    ));
                }
            }
        }
    }
    if found.is_empty() {
        found.push(Check::ok("leftovers", "no stale lock or scratch file"));
    }
    found
}

/// Registrations of prepared workspaces whose directory is gone (a fill or drain killed
/// half way): the backend keeps them until forgotten.
pub(super) fn pool_registrations(ctx: &crate::workspace::context::Context) -> Vec<Check> {
    let filling = crate::store::lock::is_held(&ctx.layout.pool_lock());
    if filling {
        return vec![];
    }
    crate::workspace::pool::leaked(ctx, false)
        .into_iter()
        .map(|entry| {
            Check::warning(
                "leftovers",
                format!(
                    "{} is registered with {} as a prepared workspace, but its directory is gone (an interrupted pool fill or drain)",
                    entry.path.display(),
                    ctx.repo.backend.as_str()
                ),
                "`agent-workspace pool fill 0` forgets it (and any other incomplete one)",
            )
        })
        .collect()
}

fn scratch(path: &Path, what: &str) -> Check {
    Check::warning(
        "leftovers",
        format!("{} is {what}", path.display()),
        format!(
            "remove it: rm {}",
            crate::exec::process::quote(&path.to_string_lossy())
        ),
    )
}

/// A lease nobody holds whose workspace has neither a directory nor a record.
fn stale_lease(layout: &Layout, id: &WorkspaceId, lease: &Path) -> bool {
    let gone = |p: PathBuf| fs::symlink_metadata(p).is_err();
    gone(layout.workspace(id))
        && gone(crate::store::state::path(&layout.workspace(id)))
        && !crate::store::lock::is_held(lease)
}

/// `<name>.tmp.<pid>[.<n>]` whose process is gone.
fn temp_of_dead_process(name: &str) -> bool {
    let Some((_, rest)) = name.split_once(".tmp.") else {
        return false;
    };
    let pid = rest.split('.').next().and_then(|p| p.parse::<i32>().ok());
    // Signal 0 only asks whether the process exists.
    pid.and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH))
}

fn names(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return vec![];
    };
    let mut found: Vec<_> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    found.sort();
    found
}
