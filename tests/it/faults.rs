//! Faults and hidden state that must not lose work: git index flags that hide edits, ignored
//! build output of workspaces `gc` removes, and commands killed half way (clean, pool fill,
//! a take), finished or rolled back by the next command.

use std::fs;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;
use crate::pool_crash::killing_wrapper;
use crate::pool_support::prepared_repo;

/// The files in `<namespace>/.pool/` whose name ends in `suffix`.
fn pool_files(env: &TestEnv, repo: &std::path::Path, suffix: &str) -> Vec<String> {
    fs::read_dir(env.namespace_dir(repo).join(".pool"))
        .map(|dir| {
            dir.map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.ends_with(suffix))
                .collect()
        })
        .unwrap_or_default()
}

/// git: an edit to a file marked skip-worktree or assume-unchanged is invisible to
/// `git status` and `git add -A`; `clean` still keeps it (committed to the branch).
#[test]
fn git_clean_keeps_edits_hidden_by_index_flags() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    git_ok(&env, &ws, &["update-index", "--skip-worktree", "a.txt"]);
    git_ok(
        &env,
        &ws,
        &["update-index", "--assume-unchanged", "sub/b.txt"],
    );
    fs::write(ws.join("a.txt"), "skip-worktree edit\n").unwrap();
    fs::write(ws.join("sub/b.txt"), "assume-unchanged edit\n").unwrap();
    let out = env.aw(&repo, ["clean", "w"]);
    out.assert_ok();
    let (branch, _) = Backend::Git.kept(&env, &repo, "w", &out.stdout);
    let kept = |file: &str| Backend::Git.kept_file(&env, &repo, &branch, file);
    assert_eq!(kept("a.txt"), "skip-worktree edit\n", "{}", out.report());
    assert_eq!(
        kept("sub/b.txt"),
        "assume-unchanged edit\n",
        "{}",
        out.report()
    );
}

/// `gc` never discards a file no commit holds: ignored build output (`target/`, `.direnv/`)
/// of a workspace it removes is kept aside like any other such file, and the dry run says so.
fn gc_keeps_ignored_build_output_aside(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[retention]\ndone = \"1h\"\n",
    )
    .unwrap();
    env.aw(&repo, ["run", "old", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "old");
    fs::write(ws.join(".gitignore"), "target/\n.direnv/\n").unwrap();
    fs::create_dir_all(ws.join("target/debug")).unwrap();
    fs::write(ws.join("target/debug/app"), "built\n").unwrap();
    fs::create_dir_all(ws.join(".direnv")).unwrap();
    fs::write(ws.join(".direnv/cache"), "cached\n").unwrap();
    // Recorded by the backend, so the dry run's count is exact.
    match backend {
        Backend::Jj => drop(env.jj_ok(&ws, ["status"])),
        Backend::Git => drop(git_ok(&env, &ws, &["add", ".gitignore"])),
    }
    crate::gc::age(&env, &repo, "old", std::time::Duration::from_secs(7200));
    let dry = env.aw(&repo, ["gc", "--dry-run"]);
    insta::assert_snapshot!(dry, @r"
    Would remove old ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/old): done for 2h, retention.done = 1h; would keep aside 2 files (13 B) that no commit holds
    [exit 0]
    ");
    let json = env
        .aw(&repo, ["gc", "--dry-run", "--json"])
        .assert_ok()
        .json();
    assert_eq!(
        json["removed"][0]["removal"]["untracked"]["kept_files_count"], 2,
        "{json:#}"
    );
    assert_eq!(
        json["removed"][0]["removal"]["untracked"]["disposable_files_count"], 0,
        "{json:#}"
    );
    let out = env.aw(&repo, ["gc"]);
    out.assert_ok();
    assert!(!ws.exists(), "{}", out.report());
    assert!(!out.stdout.contains("discarded"), "{}", out.report());
    let kept: Vec<_> = fs::read_dir(env.namespace_dir(&repo).join(".kept"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{}", env.listing());
    assert!(
        out.stdout
            .contains(&format!("that no commit holds in {}", kept[0].display())),
        "{}",
        out.report()
    );
    assert_eq!(
        fs::read_to_string(kept[0].join("target/debug/app")).unwrap(),
        "built\n"
    );
    assert_eq!(
        fs::read_to_string(kept[0].join(".direnv/cache")).unwrap(),
        "cached\n"
    );
}

/// A take killed after the prepared workspace moved to the id's path is rolled back by the
/// next command of any kind: `status <id>` never shows it as `missing-metadata`, `clean <id>`
/// leaves no journal, and the id is free for a new run.
fn a_killed_take_is_rolled_back_by_the_next_command(backend: Backend) {
    let (tool, trigger) = match backend {
        Backend::Jj => ("jj", "workspace rename"),
        Backend::Git => ("git", "worktree repair"),
    };
    for next in [["status", "w"], ["clean", "w"]] {
        let env = TestEnv::new();
        let repo = prepared_repo(&env, backend, 0);
        env.aw(&repo, ["pool", "fill", "1"]).assert_ok();
        let path = killing_wrapper(&env, tool, trigger, false);
        let out = env
            .aw_cmd(&repo)
            .env("PATH", &path)
            .env("TRIGGER", trigger)
            .args(["run", "w", "--", "true"])
            .run();
        assert_eq!(out.code(), None, "killed\n{}", out.report());
        assert_eq!(
            pool_files(&env, &repo, ".taking").len(),
            1,
            "{}",
            env.listing()
        );
        let doctor = env.aw(&repo, ["doctor"]);
        assert!(
            doctor
                .stdout
                .contains("an interrupted take left half handed over as w"),
            "{}",
            doctor.report()
        );
        let after = env.aw(&repo, next);
        assert!(
            !after.stdout.contains("missing-metadata") && !after.stderr.contains("no record"),
            "{next:?}: {}",
            after.report()
        );
        assert_eq!(
            pool_files(&env, &repo, ".taking"),
            Vec::<String>::new(),
            "{next:?}: {}",
            env.listing()
        );
        assert!(
            !env.ws_path(&repo, "w").exists(),
            "{next:?}: {}",
            env.listing()
        );
        assert!(
            !backend.registered(&env, &repo).contains(&"w".to_string()),
            "{next:?}"
        );
        let listed = env.aw(&repo, ["status", "--json"]).assert_ok().json();
        assert_eq!(
            listed["workspaces"],
            serde_json::json!([]),
            "{next:?}: {listed:#}"
        );
        env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    }
}

/// A wrapper of `tool` first on PATH that, when its arguments contain `trigger`, stops
/// agent-workspace (its parent) at once, runs the real tool, then kills the parent with
/// SIGKILL: the parent is caught right where it started the tool.
fn stopping_wrapper(env: &TestEnv, tool: &str, trigger: &str) -> std::ffi::OsString {
    let dir = env.path().join(format!("stop-{tool}"));
    fs::create_dir_all(&dir).unwrap();
    let real = crate::harness::which(tool).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *\"{trigger}\"*) kill -STOP $PPID; {real} \"$@\"; code=$?; kill -9 $PPID; exit $code;; esac\nexec {real} \"$@\"\n",
        real = real.display()
    );
    let file = dir.join(tool);
    fs::write(&file, script).unwrap();
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.path_with_first(&dir)
}

/// A `clean` killed once the backend is forgetting the workspace (jj: `workspace forget`
/// done, the directory half deleted; git: the directory deleted, `worktree remove` not run)
/// is finished by the next `status` or `clean` without `--force`: nothing asks for it, the
/// files the first attempt kept aside are named, and a file written after the kill is kept
/// aside too, never deleted.
fn a_killed_clean_is_finished_by_the_next_command(backend: Backend) {
    for next in [
        &["status"][..],
        &["clean", "w"][..],
        &["run", "w", "--", "true"][..],
    ] {
        let env = TestEnv::new();
        let repo = backend.repo(&env);
        env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
        let ws = env.ws_path(&repo, "w");
        fs::create_dir_all(ws.join("many")).unwrap();
        for n in 0..2000 {
            fs::write(ws.join(format!("many/f{n}")), format!("{n}\n")).unwrap();
        }
        fs::write(ws.join(".gitignore"), "*.secret\n").unwrap();
        fs::write(ws.join("x.secret"), "kept aside\n").unwrap();
        let path = match backend {
            Backend::Jj => stopping_wrapper(&env, "jj", "workspace forget"),
            Backend::Git => killing_wrapper(&env, "git", "worktree remove", true),
        };
        let out = env
            .aw_cmd(&repo)
            .env("PATH", &path)
            .env("TRIGGER", "worktree remove")
            .args(["clean", "w"])
            .run();
        assert_eq!(out.code(), None, "killed\n{}", out.report());
        if ws.exists() {
            fs::write(ws.join("late.txt"), "written after the kill\n").unwrap();
        }
        let late = ws.exists();
        // jj: stopped as it started forgetting, before the directory was gone (the state the
        // next command must finish without --force).
        assert!(
            backend == Backend::Git || late,
            "the directory went before the kill: nothing was tested\n{}",
            env.listing()
        );
        assert!(
            backend == Backend::Git || !backend.registered(&env, &repo).contains(&"w".into()),
            "jj did not forget it before the kill: nothing was tested"
        );
        let doctor = env.aw(&repo, ["doctor"]);
        assert!(
            doctor
                .stdout
                .contains("the journal of an interrupted clean of w"),
            "{}",
            doctor.report()
        );
        let after = env.aw(&repo, next);
        after.assert_ok();
        let said = format!("{}{}", after.stdout, after.stderr);
        assert!(said.contains("Removed w ("), "{next:?}: {}", after.report());
        if next[0] != "run" {
            assert!(!ws.exists(), "{next:?}: {}", env.listing());
            assert!(
                !backend.registered(&env, &repo).contains(&"w".to_string()),
                "{next:?}"
            );
        }
        // The first attempt's kept-aside files are named, and so is the late file.
        let kept_root = env.namespace_dir(&repo).join(".kept");
        let kept: Vec<_> = fs::read_dir(&kept_root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let secret = kept
            .iter()
            .find(|d| d.join("x.secret").exists())
            .unwrap_or_else(|| panic!("{}", env.listing()));
        assert!(
            said.contains(&secret.display().to_string()),
            "{next:?}: {}",
            after.report()
        );
        if late {
            let holder = kept
                .iter()
                .find(|d| d.join("late.txt").exists())
                .unwrap_or_else(|| panic!("late.txt lost: {}", env.listing()));
            assert!(
                said.contains(&holder.display().to_string()),
                "{next:?}: {}",
                after.report()
            );
        }
        // Nothing is left to finish.
        let doctor = env.aw(&repo, ["doctor"]);
        assert!(
            !doctor.stdout.contains("interrupted clean"),
            "{}",
            doctor.report()
        );
        let listed = env.aw(&repo, ["status", "--json"]).assert_ok().json();
        let expected = match next[0] {
            "run" => serde_json::json!(["w"]),
            _ => serde_json::json!([]),
        };
        let ids: Vec<_> = listed["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["workspace_id"].clone())
            .collect();
        assert_eq!(serde_json::json!(ids), expected, "{next:?}: {listed:#}");
    }
}

/// A `pool drain` killed between deleting an incomplete entry's directory and forgetting its
/// registration leaves a `.pool-*` registration without a directory: `pool status` lists it
/// (incomplete), `doctor` names it with a fix that works, and the next fill removes it.
fn a_leaked_pool_registration_is_seen_and_removed(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 0);
    let (tool, add, forget) = match backend {
        Backend::Jj => ("jj", "workspace add", "workspace forget"),
        Backend::Git => ("git", "worktree add", "worktree remove"),
    };
    // A fill killed right after the checkout: an incomplete entry.
    let path = killing_wrapper(&env, tool, add, false);
    let out = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .env("TRIGGER", add)
        .args(["pool", "fill", "1"])
        .run();
    assert_eq!(out.code(), None, "killed\n{}", out.report());
    // A drain killed after deleting its directory, before forgetting it.
    let path = killing_wrapper(&env, tool, forget, true);
    let out = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .env("TRIGGER", forget)
        .args(["pool", "drain"])
        .run();
    assert_eq!(out.code(), None, "killed\n{}", out.report());
    let pool_names = || -> Vec<String> {
        match backend {
            Backend::Jj => env
                .workspace_names(&repo)
                .into_iter()
                .filter(|n| n.trim_matches('"').starts_with(".pool-"))
                .collect(),
            Backend::Git => git_ok(&env, &repo, &["worktree", "list", "--porcelain"])
                .lines()
                .filter_map(|l| l.strip_prefix("worktree "))
                .filter(|p| p.contains("/.pool-"))
                .map(str::to_string)
                .collect(),
        }
    };
    assert_eq!(pool_names().len(), 1, "the leak this test is about");
    let ns = env.namespace_dir(&repo);
    assert!(
        !fs::read_dir(&ns).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".pool-")),
        "{}",
        env.listing()
    );
    let status = crate::pool_support::pool(&env, &repo);
    assert_eq!(status["entries"][0]["state"], "incomplete", "{status:#}");
    let doctor = env.aw(&repo, ["doctor"]);
    let line = doctor
        .stdout
        .lines()
        .find(|l| l.contains(".pool-") && l.contains("registered"))
        .unwrap_or_else(|| panic!("{}", doctor.report()));
    assert!(
        doctor.stdout.contains("agent-workspace pool fill 0"),
        "{line}\n{}",
        doctor.report()
    );
    let filled = env
        .aw(&repo, ["pool", "fill", "0", "--json"])
        .assert_ok()
        .json();
    assert_eq!(filled["removed"].as_array().unwrap().len(), 1, "{filled:#}");
    assert_eq!(pool_names(), Vec::<String>::new());
    let doctor = env.aw(&repo, ["doctor"]);
    assert!(!doctor.stdout.contains(".pool-"), "{}", doctor.report());
}

/// A small tmpfs mounted for a test, unmounted when dropped.
pub(crate) struct SmallDisk {
    dir: std::path::PathBuf,
}

/// A repository of `backend` and its workspace root, both on a small file system of `size`,
/// with workspace `w` made there by a run: the disk, the repository and the root.
pub(crate) fn on_small_disk(
    env: &TestEnv,
    backend: Backend,
    size: &str,
) -> (SmallDisk, std::path::PathBuf, std::path::PathBuf) {
    let disk = SmallDisk::mount(env.path().join("small"), size);
    let repo = backend.repo_named(env, "small/repo");
    let root = env.path().join("small/workspaces");
    aw_on(env, &repo, &root, &["run", "w", "--", "true"]).assert_ok();
    (disk, repo, root)
}

/// agent-workspace with `args` in `repo`, its workspaces under `root`.
pub(crate) fn aw_on(
    env: &TestEnv,
    repo: &std::path::Path,
    root: &std::path::Path,
    args: &[&str],
) -> crate::harness::Outcome {
    env.aw_cmd(repo)
        .env("AI_WORKSPACES_ROOT", root)
        .args(args)
        .run()
}

impl SmallDisk {
    /// Mounts a tmpfs of `size` at `dir`. Mounting needs root (CI runs as root): elsewhere
    /// the test fails saying so, never skips.
    fn mount(dir: std::path::PathBuf, size: &str) -> SmallDisk {
        assert!(
            crate::harness::running_as_root(),
            "this test fills a small tmpfs it mounts, which needs root: run it as root (CI does)"
        );
        fs::create_dir_all(&dir).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mount -t tmpfs failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk { dir }
    }

    /// Fills the file system up to the last byte with `<dir>/filler`.
    pub(crate) fn fill(&self) {
        use std::io::Write;
        let mut file = fs::File::create(self.dir.join("filler")).unwrap();
        let chunk = vec![0u8; 64 << 10];
        while file.write_all(&chunk).is_ok() {}
        let mut byte = [0u8; 1];
        while file.write_all(&byte).is_ok() {
            byte[0] = 1;
        }
        let _ = file.sync_all();
    }

    /// Fills the file system, then gives back `bytes` of the filler: about that much free.
    pub(crate) fn fill_leaving(&self, bytes: u64) {
        self.fill();
        let filler = fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("filler"))
            .unwrap();
        let len = filler.metadata().unwrap().len();
        filler.set_len(len.saturating_sub(bytes)).unwrap();
    }

    pub(crate) fn free(&self) {
        fs::remove_file(self.dir.join("filler")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .status();
    }
}

/// On a full disk `clean` refuses before recording anything: an `Error:` naming the free
/// space and a `Hint:`, the workspace untouched (not made stale, no copy of it anywhere, no
/// kept-aside directory); once space is freed the same `clean` keeps every edit.
fn clean_on_a_full_disk_changes_nothing(backend: Backend) {
    let env = TestEnv::new();
    let (disk, repo, root) = on_small_disk(&env, backend, "24m");
    let aw = |args: &[&str]| aw_on(&env, &repo, &root, args);
    let ws = root.join(env.namespace(&repo)).join("w");
    assert!(ws.is_dir(), "{}", env.listing());
    fs::write(ws.join("a.txt"), "edited\n").unwrap();
    fs::write(ws.join("notes.txt"), "n".repeat(200 << 10)).unwrap();
    disk.fill();
    let out = aw(&["clean", "w"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: did not remove workspace "w": not enough free space on the file system of [TMP]/small/repo: 8.2 MiB needed (200.0 KiB to write and 8.0 MiB kept free), 0 B free
    Hint: nothing was changed: free space on that file system, then clean again (its edits are recorded in the repository first)
    [exit 1]
    "#);
    disk.free();
    let ns = root.join(env.namespace(&repo));
    let names: Vec<String> = fs::read_dir(&ns)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with(".recovering") || n == ".kept"),
        "{names:?}"
    );
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "edited\n");
    if backend == Backend::Jj {
        // Not made stale: jj works in it without an update.
        env.jj(&ws, ["status"]).assert_ok();
    }
    let out = aw(&["clean", "w"]);
    out.assert_ok();
    let (keeper, _) = backend.kept(&env, &repo, "w", &out.stdout);
    assert_eq!(backend.kept_file(&env, &repo, &keeper, "a.txt"), "edited\n");
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "notes.txt").len(),
        200 << 10
    );
}

/// The free-space check counts only what recording the edits writes: fresh ignored build
/// output (never recorded) does not make `clean` refuse on a tight but sufficient disk.
fn clean_on_a_tight_disk_ignores_build_output(backend: Backend) {
    let env = TestEnv::new();
    let (disk, repo, root) = on_small_disk(&env, backend, "40m");
    let aw = |args: &[&str]| aw_on(&env, &repo, &root, args);
    let ws = root.join(env.namespace(&repo)).join("w");
    fs::write(ws.join(".gitignore"), "build/\n").unwrap();
    fs::create_dir(ws.join("build")).unwrap();
    fs::write(ws.join("build/out.bin"), vec![1u8; 12 << 20]).unwrap();
    fs::write(ws.join("edit.txt"), "edit\n").unwrap();
    disk.fill_leaving(11 << 20);
    let out = aw(&["clean", "w"]);
    out.assert_ok();
    let keeper = match backend {
        Backend::Jj => out
            .stdout
            .split_once("; its edits are kept in change ")
            .map(|(_, c)| c.split([';', '\n']).next().unwrap().trim().to_string())
            .unwrap_or_else(|| panic!("{}", out.report())),
        Backend::Git => backend.kept(&env, &repo, "w", &out.stdout).0,
    };
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "edit.txt"),
        "edit\n"
    );
    disk.free();
}

/// git: the free-space check counts what committing the changes writes from what `status`
/// lists, not from the files changed since the index was last written: an edit made before
/// the index was written again (here another file staged after it) still counts, and on a
/// disk without room for it and the margin `clean` refuses, changing nothing; once space is
/// freed the same `clean` commits it whole.
#[test]
fn git_clean_counts_an_edit_made_before_the_index_was_written() {
    let env = TestEnv::new();
    let (disk, repo, root) = on_small_disk(&env, Backend::Git, "40m");
    let aw = |args: &[&str]| aw_on(&env, &repo, &root, args);
    let ws = root.join(env.namespace(&repo)).join("w");
    // 4 MiB that do not compress (xorshift), then the index written after them.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let data: Vec<u8> = (0..4 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    fs::write(ws.join("big.bin"), &data).unwrap();
    fs::write(ws.join("small.txt"), "small\n").unwrap();
    git_ok(&env, &ws, &["add", "small.txt"]);
    // 10 MiB free: room for the 8 MiB margin, not for the edit besides.
    disk.fill_leaving(10 << 20);
    let out = aw(&["clean", "w"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: did not remove workspace "w": not enough free space on the file system of [TMP]/small/repo: 12.0 MiB needed (4.0 MiB to write and 8.0 MiB kept free), 10.0 MiB free
    Hint: nothing was changed: free space on that file system, then clean again (its edits are recorded in the repository first)
    [exit 1]
    "#);
    assert_eq!(fs::read(ws.join("big.bin")).unwrap(), data);
    let branch_files = git_ok(
        &env,
        &repo,
        &["ls-tree", "-r", "--name-only", "agent-workspace/w"],
    );
    assert!(!branch_files.contains("big.bin"), "{branch_files}");
    disk.free();
    let out = aw(&["clean", "w"]);
    out.assert_ok();
    let size = git_ok(
        &env,
        &repo,
        &["cat-file", "-s", "agent-workspace/w:big.bin"],
    );
    assert_eq!(size.trim(), (4 << 20).to_string(), "{}", out.report());
}

/// jj: a stale working copy is carried across its update through a copy of its files; on a
/// disk without room for that copy `clean` copies nothing (no `.recovering-<id>` of empty
/// files), says why, and the next `clean` once space is freed keeps every file. With 3 MiB
/// free the removal refuses before recording anything; with 10 MiB (room to record, not for
/// the copy and its margin) the carry refuses before copying.
#[test]
fn jj_stale_clean_without_room_for_the_copy_copies_nothing() {
    for (leave, refusal) in [
        (
            3 << 20,
            "did not remove workspace \"w\": not enough free space",
        ),
        (
            10 << 20,
            "did not carry the edits of the stale working copy",
        ),
    ] {
        stale_clean_leaving(leave, refusal);
    }
}

fn stale_clean_leaving(leave: u64, refusal: &str) {
    let env = TestEnv::new();
    let (disk, repo, root) = on_small_disk(&env, Backend::Jj, "32m");
    let aw = |args: &[&str]| aw_on(&env, &repo, &root, args);
    let ws = root.join(env.namespace(&repo)).join("w");
    fs::create_dir(ws.join("data")).unwrap();
    for n in 0..6 {
        fs::write(
            ws.join(format!("data/{n}.bin")),
            vec![n as u8 + 1; 1000 << 10],
        )
        .unwrap();
    }
    // jj records the files, then another workspace's operation rewrites w's working-copy
    // commit: w is stale, little changed since jj's last look, and the repair's copy of the
    // workspace needs 6 MiB.
    env.jj(&ws, ["status"]).assert_ok();
    fs::write(repo.join("upstream.txt"), "upstream\n").unwrap();
    env.jj(&repo, ["commit", "-m", "upstream"]).assert_ok();
    env.jj(&repo, ["rebase", "-s", "w@", "-o", "@-"])
        .assert_ok();
    fs::write(ws.join("after.txt"), "after the rewrite\n").unwrap();
    disk.fill_leaving(leave);
    let out = aw(&["clean", "w"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains(refusal) && out.stderr.contains("not enough free space"),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("Hint: "), "{}", out.report());
    let ns = root.join(env.namespace(&repo));
    assert!(!ns.join(".recovering-w").exists(), "{}", env.listing());
    assert!(!ns.join(".kept").exists(), "{}", env.listing());
    assert_eq!(
        fs::read(ws.join("data/5.bin")).unwrap(),
        vec![6u8; 1000 << 10]
    );
    disk.free();
    let out = aw(&["clean", "w"]);
    out.assert_ok();
    // The change id the message names (the stale repair may leave it divergent: any of its
    // commits holding the files keeps them).
    let change = out
        .stdout
        .rsplit_once("; its edits are kept in change ")
        .map(|(_, c)| c.split([';', '\n']).next().unwrap().trim().to_string())
        .unwrap_or_else(|| panic!("{}", out.report()));
    let commits = env.jj_ok(
        &repo,
        [
            "log",
            "--no-graph",
            "-r",
            &format!("change_id({change})"),
            "-T",
            "commit_id ++ \"\\n\"",
        ],
    );
    assert!(
        commits.lines().any(|c| env
            .jj_ok(&repo, ["file", "list", "-r", c])
            .contains("data/5.bin")),
        "{}",
        out.report()
    );
}

/// `doctor` tells a whole copy an interrupted stale repair left from a partial one, and on a
/// file system without room to put the whole copy back says to free space first (its plain
/// fix, the next run, would fail the same way).
#[test]
fn doctor_says_when_putting_a_recovery_copy_back_needs_space_first() {
    let env = TestEnv::new();
    let (disk, repo, root) = on_small_disk(&env, Backend::Jj, "16m");
    let aw = |args: &[&str]| aw_on(&env, &repo, &root, args);
    let ns = root.join(env.namespace(&repo));
    let copy = ns.join(".recovering-w");
    fs::create_dir_all(copy.join("files")).unwrap();
    fs::write(copy.join("files/big.bin"), vec![1u8; 2 << 20]).unwrap();
    fs::write(copy.join("complete"), "copied\n").unwrap();
    let line = |out: &crate::harness::Outcome| -> String {
        out.stdout
            .lines()
            .skip_while(|l| !l.contains(".recovering-w"))
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let roomy = aw(&["doctor"]);
    assert!(
        line(&roomy).contains("holds workspace w's files")
            && line(&roomy).contains("puts them back"),
        "{}",
        roomy.report()
    );
    assert!(!line(&roomy).contains("free space"), "{}", roomy.report());
    disk.fill();
    let full = aw(&["doctor"]);
    assert!(
        line(&full).contains("not enough free space")
            && line(&full).contains("free space there first"),
        "{}",
        full.report()
    );
    disk.free();
}

crate::both_backends!(
    gc_keeps_ignored_build_output_aside,
    a_killed_take_is_rolled_back_by_the_next_command,
    a_killed_clean_is_finished_by_the_next_command,
    a_leaked_pool_registration_is_seen_and_removed,
    clean_on_a_full_disk_changes_nothing,
    clean_on_a_tight_disk_ignores_build_output,
);
