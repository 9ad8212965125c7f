//! The repository and the workspace root: found, writable, one file system, free space.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::Check;
use crate::store::disk::free_bytes;
use crate::store::disk::human;
use crate::store::layout::Layout;
use crate::workspace::context::Context;
use crate::workspace::EXCLUDES;

/// Below this, with no `limits.min_free_disk`, a low disk is a warning.
const LOW_DISK: u64 = 1 << 30;

/// The repository found, its backend and namespace, and its exclude file's entries.
pub(super) fn repository(ctx: &Context) -> Check {
    let found = format!(
        "{} repository at {}, namespace {}",
        ctx.repo.backend.as_str(),
        ctx.repo.root.display(),
        ctx.layout.namespace
    );
    let Some(file) = ctx
        .vcs
        .exclude_file()
        .map(|f| crate::store::layout::resolve(&f))
    else {
        return Check::ok("repository", found);
    };
    let current = std::fs::read_to_string(&file).unwrap_or_default();
    let tools = format!("/{}/", ctx.config.tools_dir);
    let missing: Vec<&str> = EXCLUDES
        .iter()
        .copied()
        .chain([tools.as_str()])
        .filter(|line| !current.lines().any(|l| l.trim() == *line))
        .collect();
    if missing.is_empty() {
        return Check::ok(
            "repository",
            format!("{found}; {} lists the workspace files", file.display()),
        );
    }
    let lacks = format!("{found}; {} lacks {}", file.display(), missing.join(" "));
    if crate::workspace::inventory::directories(&ctx.layout.dir).is_empty() {
        return Check::ok(
            "repository",
            format!("{lacks} (added with the first workspace)"),
        );
    }
    Check::warning(
        "repository",
        lacks,
        "the next `agent-workspace run` that creates a workspace adds them; until then jj or git may track a workspace's record, .direnv/ and tools bundle",
    )
}

/// The root and the repository's namespace in it.
pub(super) fn root(layout: &Layout, min_free: Option<u64>) -> Vec<Check> {
    let mut checks = root_alone(&layout.root);
    if checks.iter().any(|c| c.level != super::Level::Ok) || !layout.root.exists() {
        return checks;
    }
    checks.push(space(&layout.root, min_free));
    let (Ok(root), Ok(ns)) = (
        std::fs::metadata(&layout.root),
        std::fs::symlink_metadata(&layout.dir),
    ) else {
        return checks;
    };
    if ns.dev() != root.dev() {
        checks.push(Check::warning(
            "namespace",
            format!("{} is on another file system than the root {}", layout.dir.display(), layout.root.display()),
            "keep the namespace directory on the root's file system (moves between them are not atomic)",
        ));
    } else {
        checks.push(Check::ok(
            "namespace",
            format!("{} is on the root's file system", layout.dir.display()),
        ));
    }
    checks
}

/// The root: a writable directory (or not yet created, made by the first run).
pub(super) fn root_alone(root: &Path) -> Vec<Check> {
    let fix = "pass --root DIR or set AI_WORKSPACES_ROOT to a writable directory";
    match std::fs::metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => vec![missing(root, fix)],
        Err(e) => vec![Check::error(
            "root",
            format!("cannot read {}: {e}", root.display()),
            fix,
        )],
        Ok(m) if !m.is_dir() => vec![Check::error(
            "root",
            format!("{} is not a directory", root.display()),
            fix,
        )],
        Ok(_) if !writable(root) => vec![Check::error(
            "root",
            format!("{} is not writable", root.display()),
            fix,
        )],
        Ok(_) => vec![Check::ok(
            "root",
            format!("{} is a writable directory", root.display()),
        )],
    }
}

/// A root not created yet: fine when its nearest existing ancestor is writable.
fn missing(root: &Path, fix: &str) -> Check {
    let ancestor = root.ancestors().skip(1).find(|a| a.is_dir());
    match ancestor {
        Some(dir) if writable(dir) => Check::ok(
            "root",
            format!(
                "{} does not exist yet (the first run creates it)",
                root.display()
            ),
        ),
        Some(dir) => Check::error(
            "root",
            format!(
                "{} does not exist and {} is not writable",
                root.display(),
                dir.display()
            ),
            fix,
        ),
        None => Check::error("root", format!("{} cannot be created", root.display()), fix),
    }
}

fn writable(dir: &Path) -> bool {
    use rustix::fs::Access;
    rustix::fs::access(dir, Access::WRITE_OK | Access::EXEC_OK).is_ok()
}

fn space(root: &Path, min_free: Option<u64>) -> Check {
    let Some(free) = free_bytes(root) else {
        return Check::warning(
            "free space",
            format!("cannot tell the free space of {}", root.display()),
            "check the file system with df",
        );
    };
    let fix =
        "free space on that file system (`agent-workspace clean` removes finished workspaces)";
    match min_free {
        Some(min) if free < min => Check::error(
            "free space",
            format!(
                "{} free under {}, below limits.min_free_disk ({}): new workspaces are refused",
                human(free),
                root.display(),
                human(min)
            ),
            fix,
        ),
        None if free < LOW_DISK => Check::warning(
            "free space",
            format!("only {} free under {}", human(free), root.display()),
            fix,
        ),
        _ => Check::ok(
            "free space",
            format!("{} free under {}", human(free), root.display()),
        ),
    }
}
