//! A land on a full disk: main's working copy is written all or nothing. Room for the files
//! the land writes there is checked before anything moves; a disk that fills while they are
//! written leaves main's files as they were before the land, and the message says what state
//! it left and what finishes it.

use std::fs;
use std::path::Path;

use crate::backends::{git_ok, Backend};
use crate::faults::{aw_on, on_small_disk, SmallDisk};
use crate::harness::TestEnv;

/// `bytes` that do not compress (xorshift), so the stores hold them whole.
fn noise(bytes: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A repository on a small disk whose workspace `w` has committed a 4 MiB file and an edit
/// of `a.txt`: the disk, the repository, the workspace root and the big file's content.
fn landing_big_file(
    env: &TestEnv,
    backend: Backend,
) -> (SmallDisk, std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    let (disk, repo, root) = on_small_disk(env, backend, "48m");
    let ws = root.join(env.namespace(&repo)).join("w");
    let data = noise(4 << 20);
    fs::write(ws.join("big.bin"), &data).unwrap();
    fs::write(ws.join("a.txt"), "landed\n").unwrap();
    match backend {
        Backend::Jj => drop(env.jj_ok(
            &ws,
            [
                "--config",
                "snapshot.max-new-file-size=16777216",
                "commit",
                "-m",
                "big",
            ],
        )),
        Backend::Git => {
            git_ok(env, &ws, &["add", "-A"]);
            git_ok(env, &ws, &["commit", "-q", "-m", "big"]);
        }
    }
    (disk, repo, root, data)
}

/// What main's history and working copy look like: jj's `@` commit and its parent, git's
/// HEAD; compared before and after a land that must change nothing.
fn main_state(env: &TestEnv, backend: Backend, repo: &Path) -> String {
    match backend {
        Backend::Jj => env.jj_ok(
            repo,
            [
                "--ignore-working-copy",
                "log",
                "--no-graph",
                "-r",
                "@ | @-",
                "-T",
                "commit_id ++ \"\\n\"",
            ],
        ),
        Backend::Git => git_ok(env, repo, &["rev-parse", "HEAD"]),
    }
}

/// Main's files as the land left them are what they were: no big.bin, a.txt as before.
fn assert_main_as_before(repo: &Path, said: &str) {
    assert!(!repo.join("big.bin").exists(), "{said}");
    assert_ne!(
        fs::read_to_string(repo.join("a.txt")).unwrap_or_default(),
        "landed\n",
        "{said}"
    );
}

/// Without room in main's file system for the files the land writes there (and the margin
/// kept free), the land is refused before anything moves, saying so: main's history and
/// files unchanged; once space is freed the same land lands.
fn a_land_without_room_in_main_changes_nothing(backend: Backend) {
    let env = TestEnv::new();
    let (disk, repo, root, data) = landing_big_file(&env, backend);
    let before = main_state(&env, backend, &repo);
    disk.fill_leaving(2 << 20);
    let out = aw_on(&env, &repo, &root, &["land", "w"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: did not land: not enough free space on the file system of [TMP]/small/repo: 12.0 MiB needed (4.0 MiB to write and 8.0 MiB kept free), 2.0 MiB free; nothing was landed
    Hint: free space on that file system, then land again
    [exit 1]
    ");
    assert_main_as_before(&repo, &out.report());
    disk.free();
    assert_eq!(main_state(&env, backend, &repo), before, "{}", out.report());
    let out = aw_on(&env, &repo, &root, &["land", "w"]);
    out.assert_ok();
    assert_eq!(fs::read(repo.join("big.bin")).unwrap(), data);
}

/// A wrapper of `tool` first on PATH that, the first time its arguments contain `trigger`,
/// fills the small disk (leaving 1 MiB free) before running the real tool: the disk fills
/// while the land writes main's files, after every check passed.
fn filling_wrapper(env: &TestEnv, disk: &Path, tool: &str, trigger: &str) -> std::ffi::OsString {
    let dir = env.path().join(format!("fill-{tool}"));
    fs::create_dir_all(&dir).unwrap();
    let real = crate::harness::which(tool).unwrap();
    let flag = dir.join("filled");
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *\"{trigger}\"*) if [ ! -e {flag} ]; then touch {flag}; dd if=/dev/zero of={disk}/filler bs=64k 2>/dev/null; truncate -s -1M {disk}/filler; fi;; esac\nexec {real} \"$@\"\n",
        flag = flag.display(),
        disk = disk.display(),
        real = real.display()
    );
    let file = dir.join(tool);
    fs::write(&file, script).unwrap();
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.path_with_first(&dir)
}

/// jj: the disk fills while jj writes main's files after the land was integrated. The land
/// is reported as landed with main's files not written (exit 1), main's files are left as
/// before the land, and the command the message names finishes it once space is freed:
/// main's files written whole, main's working-copy change never divergent, no truncated
/// file recorded as an edit.
#[test]
fn jj_a_disk_filling_while_main_is_written_is_finished_whole() {
    let env = TestEnv::new();
    let (disk, repo, root, data) = landing_big_file(&env, Backend::Jj);
    let path = filling_wrapper(&env, &env.path().join("small"), "jj", "update-stale");
    let out = env
        .aw_cmd(&repo)
        .env("AI_WORKSPACES_ROOT", &root)
        .env("PATH", &path)
        .args(["land", "w"])
        .run();
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: workspace "w" landed in the repository, but the working copy at [TMP]/small/repo was not written (no space left on its file system): its files the land changes are as they were before the land
    Hint: free space on that file system, then run `jj -R [TMP]/small/repo workspace update-stale` to write the landed files there
    [exit 1]
    "#);
    assert!(
        out.stderr.contains(&format!(
            "then run `jj -R {} workspace update-stale`",
            repo.display()
        )),
        "{}",
        out.report()
    );
    assert_main_as_before(&repo, &out.report());
    disk.free();
    env.jj_ok(&repo, ["workspace", "update-stale"]);
    assert_eq!(fs::read(repo.join("big.bin")).unwrap(), data);
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "landed\n");
    let change = env.jj_ok(&repo, ["log", "--no-graph", "-r", "@", "-T", "change_id"]);
    let heads = env.jj_ok(
        &repo,
        [
            "log",
            "--no-graph",
            "-r",
            &format!("change_id({})", change.trim()),
            "-T",
            "commit_id ++ \"\\n\"",
        ],
    );
    assert_eq!(
        heads.lines().count(),
        1,
        "main's change is divergent: {heads}"
    );
    let edits = env.jj_ok(&repo, ["diff", "--summary", "-r", "@"]);
    assert_eq!(edits, "", "the working copy recorded edits: {edits}");
}

/// git: the disk fills during the fast-forward of main: the branch does not move, main's
/// files the land touched are put back as they were (nothing half written, nothing
/// uncommitted), the message says so, and the same land lands once space is freed.
#[test]
fn git_a_disk_filling_during_the_fast_forward_puts_main_back() {
    let env = TestEnv::new();
    let (disk, repo, root, data) = landing_big_file(&env, Backend::Git);
    let before = main_state(&env, Backend::Git, &repo);
    let path = filling_wrapper(&env, &env.path().join("small"), "git", "--ff-only");
    let out = env
        .aw_cmd(&repo)
        .env("AI_WORKSPACES_ROOT", &root)
        .env("PATH", &path)
        .args(["land", "w"])
        .run();
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: the main worktree at [TMP]/small/repo ran out of space while the land wrote its files: the branch did not move and the files it had written were put back as they were; nothing was landed
    Hint: free space on that file system, then land again
    [exit 1]
    ");
    assert_main_as_before(&repo, &out.report());
    disk.free();
    assert_eq!(main_state(&env, Backend::Git, &repo), before);
    let status = git_ok(&env, &repo, &["status", "--porcelain"]);
    assert_eq!(status, "", "main holds changes after the failed land");
    let out = aw_on(&env, &repo, &root, &["land", "w"]);
    out.assert_ok();
    assert_eq!(fs::read(repo.join("big.bin")).unwrap(), data);
}

crate::both_backends!(a_land_without_room_in_main_changes_nothing);
