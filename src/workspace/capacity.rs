//! What a new workspace may take: the configured limits (how many workspaces, how much free
//! disk must remain) and its TCP ports, probed free and unique among the namespace's
//! workspaces.

use std::collections::HashSet;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use crate::store::disk::{free_bytes, human};

/// Where port ranges are looked for: above the usual services, below the ephemeral range.
const PORT_FIRST: u32 = 20_000;
const PORT_SPAN: u32 = 12_000;

#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    #[error("the repository already has {count} workspace{}, the configured limits.max_workspaces", if *count == 1 { "" } else { "s" })]
    TooMany { count: usize },
    #[error("{} has {free} free, less than the configured limits.min_free_disk of {min}", root.display())]
    LowDisk {
        root: PathBuf,
        free: String,
        min: String,
    },
    #[error("no {count} free TCP port{} in a row found for the workspace", if *count == 1 { "" } else { "s" })]
    NoPorts { count: u16 },
}

/// Refuses a new workspace beyond `max` workspaces in `namespace_dir`, or when the file system
/// of `root` has less than `min_free` bytes free.
pub(crate) fn check(
    namespace_dir: &Path,
    root: &Path,
    max: Option<usize>,
    min_free: Option<u64>,
) -> Result<(), CapacityError> {
    if let Some(max) = max {
        let count = crate::workspace::inventory::directories(namespace_dir).len();
        if count >= max {
            return Err(CapacityError::TooMany { count });
        }
    }
    if let (Some(min), Some(free)) = (min_free, free_bytes(root)) {
        if free < min {
            return Err(CapacityError::LowDisk {
                root: root.to_path_buf(),
                free: human(free),
                min: human(min),
            });
        }
    }
    Ok(())
}

/// `count` consecutive TCP ports for workspace `id`, free now and used by no other workspace
/// of the namespace (whose records are in `state_dir`). The search starts at a place derived
/// from the namespace and the id, so ids (and the same id in two repositories) keep apart
/// without coordination, and moves on past taken ports.
pub(crate) fn ports(state_dir: &Path, id: &str, count: u16) -> Result<Vec<u16>, CapacityError> {
    use std::os::unix::ffi::OsStrExt;
    if count == 0 {
        return Ok(vec![]);
    }
    let taken = taken_ports(state_dir, id);
    let count_u32 = u32::from(count.max(1));
    let seed = state_dir
        .as_os_str()
        .as_bytes()
        .iter()
        .chain(b"\0")
        .chain(id.as_bytes());
    let start = seed.fold(2166136261u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(16777619)
    });
    let slots = PORT_SPAN / count_u32;
    for step in 0..slots {
        let first = PORT_FIRST + ((start % slots + step) % slots) * count_u32;
        let range: Vec<u16> = (first..first + count_u32)
            .filter_map(|p| u16::try_from(p).ok())
            .collect();
        if range.iter().all(|p| !taken.contains(p) && free_port(*p)) {
            return Ok(range);
        }
    }
    Err(CapacityError::NoPorts { count })
}

/// Whether nothing listens on `port` on either loopback: 127.0.0.1 and ::1 (a machine
/// without IPv6 has no ::1 to hold it).
fn free_port(port: u16) -> bool {
    let v6 = match TcpListener::bind(("::1", port)) {
        Ok(_) => true,
        Err(e) => e.kind() == std::io::ErrorKind::AddrNotAvailable,
    };
    v6 && TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// The ports the namespace's other workspaces keep in their records.
fn taken_ports(state_dir: &Path, id: &str) -> HashSet<u16> {
    let mut taken = HashSet::new();
    let Ok(entries) = fs::read_dir(state_dir) else {
        return taken;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == format!("{id}.json") || !name.ends_with(".json") {
            continue;
        }
        let Ok(text) = crate::store::fsutil::read_untrusted(
            &entry.path(),
            crate::store::fsutil::UNTRUSTED_LIMIT,
        ) else {
            continue;
        };
        #[derive(serde::Deserialize)]
        struct State {
            record: Ports,
        }
        #[derive(serde::Deserialize)]
        struct Ports {
            #[serde(default)]
            ports: Vec<u16>,
        }
        if let Ok(state) = serde_json::from_slice::<State>(&text) {
            taken.extend(state.record.ports);
        }
    }
    taken
}

/// Gives a workspace made before ports existed its ports (under the repository lock, as a
/// creation does); nothing when it has them.
pub(crate) fn ensure_ports(
    ctx: &crate::workspace::context::Context,
    record: &mut crate::store::metadata::Record,
) -> crate::error::Result<()> {
    // `ports.count = 0` turns ports off.
    if !record.ports.is_empty() || ctx.config.ports == 0 {
        return Ok(());
    }
    let _repo_lock = crate::store::lock::exclusive(&ctx.layout.repo_lock())?;
    let namespace_dir = record
        .workspace_path
        .parent()
        .unwrap_or(&record.workspace_path);
    record.ports = ports(
        &namespace_dir.join(crate::store::state::DIR_NAME),
        &record.workspace_id,
        ctx.config.ports,
    )?;
    Ok(())
}
