//! A store that holds work outside what came back is kept, never deleted: what it holds in
//! words (`beyond`), and the store moved whole under the namespace's kept-aside directory
//! (`keep_aside`); the base packs no store borrows any more go (`prune_bases`).

use std::fs;
use std::path::{Path, PathBuf};

use super::synced;
use crate::exec::sandbox;
use crate::store::layout::WorkspaceId;
use crate::vcs::own_store::Beyond;
use crate::workspace::context::Context;

/// A workspace's own store kept when the workspace was removed, and what it holds that did
/// not come back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeptStore {
    /// The store (jj: a repository; git: a git directory), moved aside.
    pub path: PathBuf,
    /// What it holds, in words.
    pub holds: String,
}

/// What the store at `dir` holds outside what came back, in words; `None` when nothing.
/// git's refs are read as data and looked up in the user's repository; jj's heads are asked
/// of jj inside the workspace's confinement (never outside it).
pub(super) fn beyond(ctx: &Context, dir: &Path) -> Option<String> {
    let made = synced::read_made(dir);
    if made.is_some() && made == ctx.vcs.own_store_state(dir) {
        return None;
    }
    let Some(synced) = synced::read(dir) else {
        return Some("a state agent-workspace could not read".into());
    };
    let confine = |scratch: &Path| {
        // A sandbox error's message is its own words.
        let bwrap = sandbox::find().map_err(|err| err.to_string())?;
        let mounts = ctx
            .vcs
            .own_store_mounts(dir, synced.base_objects.as_deref(), None);
        super::confine::confinement(ctx, scratch, mounts, &bwrap).map_err(|err| err.message)
    };
    let heads_unread = |why: String| Some(format!("heads agent-workspace could not read ({why})"));
    match ctx.vcs.own_store_beyond(dir, &synced.at, &confine) {
        Beyond::Nothing => None,
        Beyond::Heads { commits, bookmarks } => Some(heads_words(&commits, &bookmarks)),
        Beyond::Refs(names) => Some(format!(
            "work outside the HEAD and index that came back: {}",
            names_of(&names)
        )),
        Beyond::HeadsUnread(why) => heads_unread(why),
        Beyond::Printed(line) => heads_unread(format!("jj printed {:?}", names_of(&[line]))),
        Beyond::RefsUnread => {
            Some("refs agent-workspace could not read (or too many of them)".into())
        }
        Beyond::RefsUnchecked(err) => Some(format!("refs that could not be checked ({err})")),
    }
}

/// jj's heads outside `@` and its ancestors, in words.
fn heads_words(commits: &[String], bookmarks: &[String]) -> String {
    let noun = if commits.len() == 1 {
        "commit"
    } else {
        "commits"
    };
    let mut text = format!(
        "{} {noun} outside @ and its ancestors (what came back): {}",
        commits.len(),
        names_of(commits)
    );
    if !bookmarks.is_empty() {
        let noun = if bookmarks.len() == 1 {
            "bookmark"
        } else {
            "bookmarks"
        };
        text += &format!(" ({noun} {})", names_of(bookmarks));
    }
    text
}

/// At most ten of `names` (each in printable characters), then how many more.
fn names_of(names: &[String]) -> String {
    let mut text: Vec<String> = names
        .iter()
        .take(10)
        .map(|n| {
            n.chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .take(200)
                .collect()
        })
        .collect();
    if names.len() > 10 {
        text.push(format!("and {} more", names.len() - 10));
    }
    text.join(", ")
}

/// Moves the store at `dir` aside under the namespace's kept-aside directory, made whole
/// first (its base's pack linked in, so it no longer borrows a pack that may go). Where it
/// cannot be moved it stays where it is, and that is said.
pub(super) fn keep_aside(ctx: &Context, id: &WorkspaceId, dir: &Path, holds: String) -> KeptStore {
    let store = |dir: &Path| {
        let store = ctx.vcs.own_store(dir);
        match store.is_dir() {
            true => store,
            false => dir.to_path_buf(),
        }
    };
    if let Some(base) = synced::read(dir).and_then(|s| s.base_objects) {
        link_pack(&base.join("pack"), &ctx.vcs.own_store_objects(dir));
    }
    let kept_root = ctx.layout.dir.join(crate::store::aside::KEPT_DIR);
    let dest = crate::store::aside::fresh_dest(&kept_root, id.as_str());
    let moved = fs::create_dir_all(&kept_root).and_then(|()| fs::rename(dir, &dest));
    match moved {
        Ok(()) => {
            prune_bases(&ctx.layout.private_stores());
            KeptStore {
                path: store(&dest),
                holds,
            }
        }
        Err(_) => KeptStore {
            path: store(dir),
            holds,
        },
    }
}

/// Hard-links (or copies) every file of the pack directory `from` into the objects directory
/// `objects` of an agent's store, then drops its alternates: only when `objects` and its
/// `pack` are real directories (the agent could have left a link leading anywhere).
fn link_pack(from: &Path, objects: &Path) {
    let real = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_dir());
    let pack = objects.join("pack");
    if !real(objects) || !real(&pack) {
        return;
    }
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let to = pack.join(entry.file_name());
        if fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        let linked = crate::store::fsutil::hard_link(&entry.path(), &to);
        if linked.is_err() && fs::copy(entry.path(), &to).is_err() {
            return;
        }
    }
    let _ = fs::remove_file(objects.join("info/alternates"));
}

/// Removes the base packs no store borrows any more. A pack made in the last hour is left
/// alone: a store being made may not have recorded it yet.
pub(super) fn prune_bases(stores: &Path) {
    let Ok(entries) = fs::read_dir(stores) else {
        return;
    };
    let used: Vec<PathBuf> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            (!name.starts_with('.')).then(|| synced::read(&stores.join(name)))?
        })
        .filter_map(|synced| synced.base_objects)
        .collect();
    let bases = stores.join(".bases");
    let Ok(entries) = fs::read_dir(&bases) else {
        return;
    };
    let hour = std::time::Duration::from_secs(3600);
    for entry in entries.flatten() {
        let path = entry.path();
        let recent = entry
            .metadata()
            .and_then(|m| m.modified())
            .map(|t| t.elapsed().unwrap_or_default() < hour)
            .unwrap_or(true);
        if !recent && !used.iter().any(|objects| objects.starts_with(&path)) {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::jj::WorkingCommit;

    #[test]
    fn only_base_packs_no_store_borrows_and_older_than_an_hour_go() {
        let tmp = tempfile::tempdir().unwrap();
        let stores = tmp.path();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        for base in ["used", "unused", "fresh"] {
            let dir = stores.join(".bases").join(base);
            fs::create_dir_all(dir.join("objects")).unwrap();
            if base != "fresh" {
                let handle = fs::File::open(&dir).unwrap();
                handle.set_modified(old).unwrap();
            }
        }
        fs::create_dir_all(stores.join("w")).unwrap();
        let record = synced::Synced {
            at: WorkingCommit {
                commit: "c".into(),
                parents: vec![],
            },
            op: "o".into(),
            user_op: "u".into(),
            base_objects: Some(stores.join(".bases/used/objects")),
        };
        synced::write(&stores.join("w"), &record).unwrap();
        prune_bases(stores);
        assert!(stores.join(".bases/used").is_dir());
        assert!(stores.join(".bases/fresh").is_dir());
        assert!(!stores.join(".bases/unused").exists());
    }

    #[test]
    fn heads_are_named_ten_at_most() {
        let commits: Vec<String> = (0..12).map(|n| format!("c{n}")).collect();
        let text = heads_words(&commits, &["b".into()]);
        assert!(text.starts_with("12 commits outside @ and its ancestors (what came back): c0, "));
        assert!(text.ends_with("c9, and 2 more (bookmark b)"), "{text}");
    }
}
