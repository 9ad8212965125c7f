//! Whether the process that recorded a run is still alive, robust against pid reuse.

/// The start time of `pid` in clock ticks since boot, where the platform tells it.
#[cfg(target_os = "linux")]
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat).map(|(_, start)| start)
}

#[cfg(not(target_os = "linux"))]
pub fn start_time(_pid: u32) -> Option<u64> {
    None
}

/// (ppid, starttime) from the text of `/proc/<pid>/stat`; the command name may hold spaces and
/// parentheses, so fields are counted after the last `)`.
pub(crate) fn parse_stat(stat: &str) -> Option<(u32, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(3) ppid(4) ... starttime(22), numbered from 1 in proc(5).
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, start))
}

/// Whether `pid` is alive and, when `start` is known, still the same process.
pub(crate) fn is_alive(pid: u32, start: Option<u64>) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    match (start, start_time(pid)) {
        (Some(recorded), Some(now)) => recorded == now,
        (Some(_), None) if cfg!(target_os = "linux") => false,
        _ => {
            let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
                return false;
            };
            // Signal 0 only checks for existence and permission.
            matches!(
                rustix::process::test_kill_process(pid),
                Ok(()) | Err(rustix::io::Errno::PERM)
            )
        }
    }
}

/// Every process `/proc` lists: its pid and its directory there.
fn processes() -> Vec<(u32, std::path::PathBuf)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path())))
        .collect()
}

/// Every live (not zombie) process below `pid`, found through `/proc` (Linux; elsewhere none).
pub(crate) fn descendants(pid: u32) -> Vec<u32> {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for (child, dir) in processes() {
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        if let (Some((ppid, _)), Some(state)) = (parse_stat(&stat), parse_state(&stat)) {
            if state != 'Z' && state != 'X' {
                children.entry(ppid).or_default().push(child);
            }
        }
    }
    let mut found = vec![];
    let mut queue = vec![pid];
    while let Some(next) = queue.pop() {
        for &child in children.get(&next).map(Vec::as_slice).unwrap_or_default() {
            found.push(child);
            queue.push(child);
        }
    }
    found
}

/// The state letter of `/proc/<pid>/stat` (R, S, D, Z, ...).
fn parse_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Whether `pid` is this process or one of its ancestors (Linux; elsewhere unknown: false).
pub(crate) fn is_ancestor(pid: u32) -> bool {
    let mut current = std::process::id();
    for _ in 0..64 {
        if current == pid {
            return true;
        }
        if current <= 1 {
            return false;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{current}/stat")) else {
            return false;
        };
        match parse_stat(&stat) {
            Some((ppid, _)) => current = ppid,
            None => return false,
        }
    }
    false
}

/// Every live process (other than this one) with `path` as one of its arguments, found
/// through `/proc` (Linux; elsewhere none): a helper call on a workspace (`jj -R <path> ...`)
/// that a killed command left running.
pub(crate) fn naming(path: &std::path::Path) -> Vec<u32> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    let wanted = path.as_os_str().as_bytes();
    let me = std::process::id();
    let mut found = vec![];
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let live = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|s| parse_state(&s))
            .is_some_and(|state| state != 'Z' && state != 'X');
        if live && cmdline.split(|&b| b == 0).any(|arg| arg == wanted) {
            found.push(pid);
        }
    }
    found
}

/// Waits until no process names `paths` (see [`naming`]), up to `limit`; whether none is
/// left.
pub(crate) fn wait_unnamed(paths: &[&std::path::Path], limit: std::time::Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        if paths.iter().all(|p| naming(p).is_empty()) {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Shells a hook's command runs through, skipped when looking for who ran the hook.
const SHELLS: [&str; 7] = ["sh", "bash", "dash", "zsh", "fish", "ksh", "env"];

/// The nearest ancestor of this process that is no shell (the program that ran a hook's
/// command, `sh -c` or not), with its start time; `None` where `/proc` does not tell.
#[cfg(target_os = "linux")]
pub(crate) fn hook_caller() -> Option<(u32, Option<u64>)> {
    let mut pid = rustix::process::getppid()?.as_raw_nonzero().get() as u32;
    for _ in 0..8 {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        if !SHELLS.contains(&comm.trim()) {
            return Some((pid, start_time(pid)));
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        pid = parse_stat(&stat)?.0;
        if pid <= 1 {
            return None;
        }
    }
    None
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn hook_caller() -> Option<(u32, Option<u64>)> {
    None
}

/// The processes whose command line `matches` (its arguments, the program first), as
/// `/proc` lists them (another user's are listed too: signalling them fails).
#[cfg(target_os = "linux")]
pub(crate) fn processes_whose_args(matches: impl Fn(&[&[u8]]) -> bool) -> Vec<u32> {
    let mut found = vec![];
    for (pid, dir) in processes() {
        let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .collect();
        if matches(&args) {
            found.push(pid);
        }
    }
    found
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn processes_whose_args(_matches: impl Fn(&[&[u8]]) -> bool) -> Vec<u32> {
    vec![]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_awkward_command_name() {
        let stat =
            "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 99 0 0 0 1 2 0 0 20 0 1 0 987654 1 2";
        assert_eq!(parse_stat(stat), Some((17, 987654)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_state(stat), Some('S'));
    }

    #[test]
    fn this_process_is_alive_and_its_own_ancestor() {
        let me = std::process::id();
        assert!(is_alive(me, start_time(me)));
        assert!(
            !is_alive(me, start_time(me).map(|s| s + 1).or(Some(1))) || !cfg!(target_os = "linux")
        );
        assert!(is_ancestor(me));
        assert!(!is_alive(0, None));
    }

    #[test]
    fn a_process_naming_a_path_is_found_until_it_ends() {
        let dir = std::env::temp_dir().join(format!("aw-naming-{}", std::process::id()));
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30"])
            .arg(&dir)
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(wait_named(&dir, pid), "{:?}", naming(&dir));
        assert!(!wait_unnamed(
            &[&dir],
            std::time::Duration::from_millis(100)
        ));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(wait_unnamed(&[&dir], std::time::Duration::from_secs(5)));
    }

    /// Until `pid` shows up as naming `dir` (its exec may take a moment).
    fn wait_named(dir: &std::path::Path, pid: u32) -> bool {
        (0..250).any(|_| {
            let found = naming(dir).contains(&pid);
            if !found {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            found
        })
    }
}
