//! What one sandboxed run may take of the machine: its processes, memory and CPU time through
//! a cgroup made for the run, the CPUs it is placed on, and the size of each tmpfs its sandbox
//! mounts.
//!
//! The cgroup is made in cgroupfs directly: in the cgroup v2 hierarchy where this user may
//! enable the controllers below its root (root, on a host without a manager holding it), else
//! in the v1 `pids`, `memory` and `cpu` hierarchies below this process's own cgroups. The
//! sandbox's first process joins it before bubblewrap starts, so every process of the run is
//! in it; it is removed after the run. Where no cgroup can be made, a limit the user set is an
//! error; the defaults alone let the run go without a process, memory or CPU limit, which is
//! said.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::SandboxError;
use crate::store::metadata::{CgroupKind, Cpus, LimitHit, SandboxLimits};

/// What one sandboxed run may take of the machine, as the user's file sets it
/// (`[sandbox.limits]`); a limit left out takes its default (see [`resolve`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AskedLimits {
    /// Processes (and threads) at once.
    pub pids: Option<u64>,
    /// Bytes of memory, the run's tmpfs files included.
    pub memory: Option<u64>,
    /// CPUs, in thousandths.
    pub cpus_milli: Option<u32>,
    /// Bytes of each tmpfs the sandbox mounts (`/tmp`, `/dev/shm`, ...).
    pub tmp: Option<u64>,
}

/// Processes (and threads) a run may have at once unless the user says otherwise.
pub(crate) const DEFAULT_PIDS: u64 = 4096;

/// The cgroup v2 directory the runs' cgroups are made in, below the hierarchy's root.
const V2_PARENT: &str = "agent-workspace";

/// The prefix of every run's cgroup's name; the supervisor's pid and a count follow.
const PREFIX: &str = "agent-workspace-";

/// The limits a sandboxed run gets: the user's (`[sandbox.limits]`), else the defaults
/// (4096 processes, half the machine's memory, a quarter of it per tmpfs, every CPU), and
/// why no cgroup can be used when none can. A limit the user set that this host cannot apply
/// is an error.
pub(crate) fn resolve(
    asked: &AskedLimits,
) -> Result<(SandboxLimits, Option<String>), SandboxError> {
    let memory_total = total_memory();
    let tmp = asked.tmp.or(memory_total.map(|m| m / 4));
    let cpus = asked.cpus_milli.map(Cpus);
    match Host::find() {
        Ok(host) => {
            if cpus.is_some() && !host.has_cpu() {
                return Err(SandboxError::LimitUnavailable {
                    key: "cpus",
                    why: "this host's cgroups have no cpu controller agent-workspace may use"
                        .into(),
                });
            }
            let limits = SandboxLimits {
                pids: Some(asked.pids.unwrap_or(DEFAULT_PIDS)),
                memory: asked.memory.or(memory_total.map(|m| m / 2)),
                cpus,
                tmp,
                cgroup: Some(host.kind()),
            };
            Ok((limits, None))
        }
        Err(why) => {
            let set = [
                ("pids", asked.pids.is_some()),
                ("memory", asked.memory.is_some()),
                ("cpus", asked.cpus_milli.is_some()),
            ];
            if let Some((key, _)) = set.iter().find(|(_, set)| *set) {
                return Err(SandboxError::LimitUnavailable {
                    key,
                    why: format!("no cgroup agent-workspace may use ({why})"),
                });
            }
            let limits = SandboxLimits {
                tmp,
                ..SandboxLimits::default()
            };
            Ok((limits, Some(why)))
        }
    }
}

/// The machine's memory in bytes (`MemTotal`).
fn total_memory() -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Where this host lets agent-workspace make a run's cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    /// Below `parent` in the v2 hierarchy, its controllers enabled for its children.
    V2 { parent: PathBuf, cpu: bool },
    /// Below this process's own cgroup in each v1 hierarchy.
    V1 {
        pids: PathBuf,
        memory: PathBuf,
        cpu: Option<PathBuf>,
    },
}

impl Host {
    /// The cgroup v2 hierarchy where its root's controllers can be handed to a directory of
    /// agent-workspace's own, else the v1 hierarchies where this process's own cgroups are
    /// writable; else why neither.
    fn find() -> Result<Host, String> {
        let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let v2 = match v2_root(&mounts) {
            Some(root) => match ready_v2(&root) {
                Ok(host) => return Ok(host),
                Err(why) => Some(why),
            },
            None => None,
        };
        let v1 = v1_host(&mounts, &own);
        match (v1, v2) {
            (Ok(host), _) => Ok(host),
            (Err(why), None) => Err(why),
            (Err(None), Some(v2)) => Err(Some(v2)),
            (Err(Some(v1)), Some(v2)) => Err(Some(format!("{v2}; {v1}"))),
        }
        .map_err(|why| why.unwrap_or_else(|| "no cgroup hierarchy is mounted".into()))
    }

    fn kind(&self) -> CgroupKind {
        match self {
            Host::V2 { .. } => CgroupKind::V2,
            Host::V1 { .. } => CgroupKind::V1,
        }
    }

    fn has_cpu(&self) -> bool {
        match self {
            Host::V2 { cpu, .. } => *cpu,
            Host::V1 { cpu, .. } => cpu.is_some(),
        }
    }
}

/// The v1 hierarchies of the `pids`, `memory` and (where mounted) `cpu` controllers, at this
/// process's own cgroup in each, when each is writable; else why not (`None`: no v1
/// hierarchy at all).
fn v1_host(mounts: &str, own: &str) -> Result<Host, Option<String>> {
    let dir = |controller: &str| -> Option<PathBuf> {
        let (point, root) = mounts.lines().find_map(|line| {
            let mount = split_mountinfo(line)?;
            (mount.fs_type == "cgroup" && mount.options.split(',').any(|o| o == controller))
                .then(|| (mount.point.to_string(), mount.root.to_string()))
        })?;
        let path = own.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == controller)
                .then(|| path.to_string())
        })?;
        let inside = path
            .strip_prefix(root.trim_end_matches('/'))
            .unwrap_or(&path);
        Some(Path::new(&point).join(inside.trim_start_matches('/')))
    };
    let (pids, memory) = match (dir("pids"), dir("memory")) {
        (Some(pids), Some(memory)) => (pids, memory),
        (None, None) => return Err(None),
        _ => {
            return Err(Some(
                "cgroup v1 has no pids or no memory hierarchy mounted".into(),
            ))
        }
    };
    for dir in [&pids, &memory] {
        if !writable(dir) {
            return Err(Some(format!(
                "cgroup v1's {} is not writable by this user",
                dir.display()
            )));
        }
    }
    let cpu = dir("cpu").filter(|d| writable(d));
    Ok(Host::V1 { pids, memory, cpu })
}

/// The cgroup v2 mount whose directory is the hierarchy's root here (`/` in mountinfo).
fn v2_root(mounts: &str) -> Option<PathBuf> {
    mounts.lines().find_map(|line| {
        let mount = split_mountinfo(line)?;
        (mount.fs_type == "cgroup2" && mount.root == "/").then(|| PathBuf::from(mount.point))
    })
}

/// `root`'s directory of agent-workspace's own, with the memory and pids controllers (and
/// cpu where there is one) enabled for its children; else why not.
fn ready_v2(root: &Path) -> Result<Host, String> {
    let controllers = fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
    let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
    if !has("memory") || !has("pids") {
        return Err(format!(
            "cgroup v2 at {} has no memory and pids controllers to hand out",
            root.display()
        ));
    }
    if !writable(root) {
        return Err(format!(
            "cgroup v2 at {} is not writable by this user",
            root.display()
        ));
    }
    let cpu = has("cpu");
    let enable = match cpu {
        true => "+memory +pids +cpu",
        false => "+memory +pids",
    };
    let parent = root.join(V2_PARENT);
    let ready = (|| -> std::io::Result<()> {
        fs::write(root.join("cgroup.subtree_control"), enable)?;
        match fs::create_dir(&parent) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        fs::write(parent.join("cgroup.subtree_control"), enable)
    })();
    ready.map_err(|e| {
        format!(
            "cannot hand cgroup v2's controllers at {} to {}: {e}",
            root.display(),
            parent.display()
        )
    })?;
    Ok(Host::V2 { parent, cpu })
}

/// What a line of `/proc/self/mountinfo` says of one mount.
#[derive(Debug, PartialEq, Eq)]
struct MountLine<'a> {
    /// The directory of the file system mounted (a cgroup hierarchy's: the cgroup).
    root: &'a str,
    point: &'a str,
    fs_type: &'a str,
    /// The file system's own options (a v1 hierarchy's controllers among them).
    options: &'a str,
}

fn split_mountinfo(line: &str) -> Option<MountLine<'_>> {
    let (before, after) = line.split_once(" - ")?;
    let fields: Vec<&str> = before.split(' ').collect();
    let rest: Vec<&str> = after.split(' ').collect();
    Some(MountLine {
        root: fields.get(3)?,
        point: fields.get(4)?,
        fs_type: rest.first()?,
        options: rest.get(2)?,
    })
}

fn writable(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
}

/// A cgroup made for one run (one directory per v1 hierarchy), removed when dropped.
pub(crate) struct Cgroup {
    kind: CgroupKind,
    /// Its directories: the pids one first, then memory, then cpu where there is one (v2:
    /// the one).
    dirs: Vec<PathBuf>,
    /// Each directory's `cgroup.procs`, open for the sandbox's first process to join.
    procs: Vec<OwnedFd>,
    /// The CPUs the run is placed on (`nproc` inside), when fewer than this process's.
    cpus: Option<Vec<usize>>,
}

static MADE: AtomicU32 = AtomicU32::new(0);

impl Cgroup {
    /// The cgroup of `limits` (none when they name none), made with each limit written.
    /// Nothing of it is left when making it fails.
    pub(crate) fn make(limits: &SandboxLimits) -> Result<Option<Cgroup>, SandboxError> {
        if limits.cgroup.is_none() {
            return Ok(None);
        }
        let host = Host::find().map_err(|why| SandboxError::NoCgroup { why })?;
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        let (kind, parents) = match &host {
            Host::V2 { parent, .. } => (CgroupKind::V2, vec![parent.clone()]),
            Host::V1 { pids, memory, cpu } => {
                let mut parents = vec![pids.clone(), memory.clone()];
                if limits.cpus.is_some() {
                    parents.extend(cpu.clone());
                }
                (CgroupKind::V1, parents)
            }
        };
        let mut cgroup = Cgroup {
            kind,
            dirs: vec![],
            procs: vec![],
            cpus: limits.cpus.and_then(placement),
        };
        for parent in &parents {
            remove_abandoned(parent);
            let dir = parent.join(&name);
            fs::create_dir(&dir).map_err(|source| SandboxError::Cgroup {
                path: dir.clone(),
                source,
            })?;
            cgroup.dirs.push(dir);
        }
        cgroup.write(limits)?;
        for dir in &cgroup.dirs {
            let file = dir.join("cgroup.procs");
            let open = fs::OpenOptions::new().write(true).open(&file);
            let fd = open.map_err(|source| SandboxError::Cgroup { path: file, source })?;
            cgroup.procs.push(fd.into());
        }
        Ok(Some(cgroup))
    }

    /// Writes each limit into its controller's file.
    fn write(&self, limits: &SandboxLimits) -> Result<(), SandboxError> {
        let set = |dir: &Path, file: &str, value: String| {
            let path = dir.join(file);
            fs::write(&path, value).map_err(|source| SandboxError::Cgroup { path, source })
        };
        const PERIOD: u64 = 100_000;
        let quota = limits
            .cpus
            .map(|cpus| (u64::from(cpus.0) * PERIOD / 1000).max(1000));
        match self.kind {
            CgroupKind::V2 => {
                let dir = &self.dirs[0];
                if let Some(pids) = limits.pids {
                    set(dir, "pids.max", pids.to_string())?;
                }
                if let Some(memory) = limits.memory {
                    set(dir, "memory.max", memory.to_string())?;
                    // Swapped out, a hog would slow the machine instead of being stopped.
                    if dir.join("memory.swap.max").exists() {
                        set(dir, "memory.swap.max", "0".into())?;
                    }
                }
                if let Some(quota) = quota {
                    set(dir, "cpu.max", format!("{quota} {PERIOD}"))?;
                }
            }
            CgroupKind::V1 => {
                let (pids, memory) = (&self.dirs[0], &self.dirs[1]);
                if let Some(max) = limits.pids {
                    set(pids, "pids.max", max.to_string())?;
                }
                if let Some(max) = limits.memory {
                    set(memory, "memory.limit_in_bytes", max.to_string())?;
                    if memory.join("memory.memsw.limit_in_bytes").exists() {
                        set(memory, "memory.memsw.limit_in_bytes", max.to_string())?;
                    }
                }
                if let (Some(quota), Some(cpu)) = (quota, self.dirs.get(2)) {
                    set(cpu, "cpu.cfs_period_us", PERIOD.to_string())?;
                    set(cpu, "cpu.cfs_quota_us", quota.to_string())?;
                }
            }
        }
        Ok(())
    }

    /// The descriptors of its `cgroup.procs` files: the sandbox's first process writes `0`
    /// to each before it execs bubblewrap, so it and every process it starts are inside.
    pub(crate) fn procs(&self) -> Vec<RawFd> {
        self.procs.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// The CPUs the run is placed on, when `cpus` leaves fewer than this process may use.
    pub(crate) fn cpus(&self) -> Option<&[usize]> {
        self.cpus.as_deref()
    }

    /// The limit the run reached, read once it ended (`killed`: by SIGKILL): the memory one
    /// when the kernel killed a process of it for memory, else the process one when a fork
    /// was refused.
    pub(crate) fn hit(&self, killed: bool) -> Option<LimitHit> {
        let count = |file: PathBuf, key: &str| -> Option<u64> {
            let text = fs::read_to_string(file).ok()?;
            text.lines().find_map(|line| {
                let (name, value) = line.split_once(' ')?;
                (name == key).then(|| value.trim().parse().ok())?
            })
        };
        let (pids, memory) = match self.kind {
            CgroupKind::V2 => (&self.dirs[0], &self.dirs[0]),
            CgroupKind::V1 => (&self.dirs[0], &self.dirs[1]),
        };
        let oom = match self.kind {
            CgroupKind::V2 => count(memory.join("memory.events"), "oom_kill"),
            // `oom_kill` in memory.oom_control since Linux 4.13; before it, a SIGKILL while
            // the limit was reached is taken for the OOM killer's.
            CgroupKind::V1 => count(memory.join("memory.oom_control"), "oom_kill").or_else(|| {
                let failed = fs::read_to_string(memory.join("memory.failcnt")).ok()?;
                Some(u64::from(killed && failed.trim() != "0"))
            }),
        };
        if oom.is_some_and(|n| n > 0) {
            return Some(LimitHit::Memory);
        }
        count(pids.join("pids.events"), "max")
            .is_some_and(|n| n > 0)
            .then_some(LimitHit::Pids)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.procs.clear();
        for dir in &self.dirs {
            remove(dir);
        }
    }
}

/// Removes the cgroup `dir`, killing what is left in it first (the run's processes are gone
/// when its sandbox has ended; this is for a sandbox that could not end them).
fn remove(dir: &Path) {
    for attempt in 0..50 {
        match fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
            _ => return,
        }
        let left = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in left.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10 * (attempt + 1).min(10)));
    }
}

/// Removes the empty cgroups a supervisor killed before it could left in `parent`.
fn remove_abandoned(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            // An empty cgroup goes; one with processes refuses (EBUSY) and stays.
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// The first `ceil(cpus)` CPUs this process may run on, when that is fewer than all.
fn placement(cpus: Cpus) -> Option<Vec<usize>> {
    let allowed = allowed_cpus()?;
    (cpus.ceil() < allowed.len()).then(|| allowed[..cpus.ceil().max(1)].to_vec())
}

#[cfg(target_os = "linux")]
fn allowed_cpus() -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes at most its
    // size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: `set` is a valid cpu_set_t of `size` bytes.
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return None;
    }
    let count = 8 * size;
    // SAFETY: every index is below the set's capacity.
    Some(
        (0..count)
            .filter(|cpu| unsafe { libc::CPU_ISSET(*cpu, &set) })
            .collect(),
    )
}

#[cfg(not(target_os = "linux"))]
fn allowed_cpus() -> Option<Vec<usize>> {
    None
}

/// Places the calling process on `cpus` (in a forked child: async-signal-safe).
#[cfg(target_os = "linux")]
pub(crate) fn place(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; each index is one sched_getaffinity
    // reported, so below its capacity; sched_setaffinity reads `size` bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in cpus {
            libc::CPU_SET(*cpu, &mut set);
        }
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_setaffinity(0, size, &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn place(_cpus: &[usize]) -> std::io::Result<()> {
    Ok(())
}

/// Moves the calling process into the cgroups whose `cgroup.procs` are open at `procs` (in a
/// forked child: async-signal-safe).
pub(crate) fn join(procs: &[RawFd]) -> std::io::Result<()> {
    for fd in procs {
        // SAFETY: writes one byte from a static buffer to a descriptor this process owns.
        if unsafe { libc::write(*fd, b"0".as_ptr().cast(), 1) } != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A size as the user reads it: in the largest unit it reaches (GiB, MiB, KiB), whole where
/// it is, else to a tenth.
pub(crate) fn size_words(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift {
            return match bytes.is_multiple_of(1 << shift) {
                true => format!("{} {unit}", bytes >> shift),
                false => format!("{:.1} {unit}", bytes as f64 / (1u64 << shift) as f64),
            };
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 /outer /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn mountinfo_names_each_hierarchy_and_its_root() {
        assert_eq!(
            v2_root(MOUNTS),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let line = MOUNTS.lines().nth(2).unwrap();
        assert_eq!(
            split_mountinfo(line),
            Some(MountLine {
                root: "/outer",
                point: "/sys/fs/cgroup/memory",
                fs_type: "cgroup",
                options: "rw,memory"
            })
        );
    }

    #[test]
    fn sizes_are_said_in_the_largest_whole_unit() {
        assert_eq!(size_words(128 << 20), "128 MiB");
        assert_eq!(size_words(4 << 30), "4 GiB");
        assert_eq!(size_words(16 << 10), "16 KiB");
        assert_eq!(size_words(12_637_837_312), "11.8 GiB");
        assert_eq!(size_words(500_000_000), "476.8 MiB");
        assert_eq!(size_words(100), "100 bytes");
    }
}
