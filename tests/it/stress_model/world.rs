//! A round's world: the repository, the workspaces' namespace, the generator, the model and
//! the step log; setting it up and observing it after each step.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::Backend;
use crate::harness::{TestEnv, AW};

use super::observe::{scan, status, History, Scan};
use super::oracle::{check, Model, Seen, MAIN};
use super::proc::{argv, profile, run, Out};
use super::rng::Rng;

/// How many of each thing a round did, for the figures in docs/stress.md.
#[derive(Default, Debug)]
pub struct Stats {
    pub steps: u64,
    pub kills: u64,
    pub runs: u64,
    pub lands: u64,
    pub lands_landed: u64,
    pub lands_conflicted: u64,
    pub undos: u64,
    pub cleans: u64,
    pub user_commits: u64,
    /// Steps that landed several workspaces at the same moment.
    pub lands_together: u64,
}

pub struct World<'a> {
    pub env: &'a TestEnv,
    pub backend: Backend,
    pub repo: PathBuf,
    pub ns: PathBuf,
    pub seed: u64,
    pub rng: Rng,
    pub model: Model,
    pub log: Vec<String>,
    pub history: History,
    /// Whether this binary's `land` takes `--allow-conflicts`.
    pub allow_conflicts: bool,
    pub stats: Stats,
    /// The `--prefer` the next `land` takes instead of drawing one (for tests of the oracle
    /// itself): `Some(None)` for none.
    pub forced_prefer: Option<Option<&'static str>>,
}

/// The files every agent and the user append to, so that their edits meet.
pub const SHARED: &[&str] = &["s0.txt", "s1.txt", "s2.txt", "sub/s3.txt"];

impl<'a> World<'a> {
    /// A fresh repository of `backend` with the shared files committed, and `gc` configured
    /// to remove landed workspaces after a second.
    pub fn new(env: &'a TestEnv, backend: Backend, seed: u64) -> World<'a> {
        let repo = backend.repo(env);
        let config = env.path().join("xdg/config/agent-workspace");
        fs::create_dir_all(&config).expect("create the config dir");
        fs::write(config.join("config.toml"), "[retention]\nlanded = \"1s\"\n")
            .expect("write the user config");
        let mut world = World {
            env,
            backend,
            ns: env.namespace_dir(&repo),
            repo,
            seed,
            rng: Rng::new(seed),
            model: Model::default(),
            log: vec![],
            history: History::default(),
            allow_conflicts: false,
            stats: Stats::default(),
            forced_prefer: None,
        };
        for file in SHARED {
            let n = world.model.token(MAIN);
            world.append(MAIN, file, n);
            world.model.written(MAIN, n);
        }
        world.user_commit("shared files");
        let help = run(env, &world.repo, AW, &argv(&["land", "--help"]));
        world.allow_conflicts = help.stdout.contains("--allow-conflicts");
        world
    }

    /// The directory of a location: the main working copy or a workspace.
    pub fn dir(&self, loc: &str) -> PathBuf {
        if loc == MAIN {
            self.repo.clone()
        } else {
            self.ns.join(loc)
        }
    }

    pub fn scan(&self, loc: &str) -> Scan {
        scan(&self.dir(loc), self.seed)
    }

    /// The text of token `n`'s line, as `loc` writes it.
    pub fn line(&self, loc: &str, n: u64) -> String {
        format!("{loc} L{}_{n}_", self.seed)
    }

    /// Appends token `n`'s line to `file` in `loc`'s directory (the user's edits).
    pub fn append(&self, loc: &str, file: &str, n: u64) {
        let path = self.dir(loc).join(file);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create a directory");
        }
        let mut text = fs::read_to_string(&path).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&self.line(loc, n));
        text.push('\n');
        fs::write(&path, text).expect("append a line");
    }

    /// Runs a command and logs it with how it ended.
    pub fn cmd(&mut self, dir: &Path, program: &str, args: &[String]) -> Out {
        let out = run(self.env, dir, program, args);
        self.note(program, args, &out);
        out
    }

    pub fn note(&mut self, program: &str, args: &[String], out: &Out) {
        let program = if program == AW {
            "agent-workspace"
        } else {
            program
        };
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if a.contains(' ') || a.contains('\'') {
                    format!("'{}'", a.replace('\'', "'\\''"))
                } else {
                    a.clone()
                }
            })
            .collect();
        let first = out
            .stderr
            .lines()
            .find(|l| l.starts_with("Error:"))
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default();
        self.log.push(format!(
            "    $ {program} {} -> {}{first}",
            shown.join(" "),
            out.how()
        ));
    }

    /// A jj command in the main working copy, brought up to date first if it is stale (as
    /// a user would, following jj's hint).
    pub fn user_jj(&mut self, args: &[&str]) -> Out {
        let repo = self.repo.clone();
        let mut full = argv(&["--no-pager", "--color=never"]);
        full.extend(argv(args));
        let out = self.cmd(&repo, "jj", &full);
        if !out.ok() && out.stderr.contains("stale") {
            self.cmd(
                &repo,
                "jj",
                &argv(&["--no-pager", "workspace", "update-stale"]),
            );
            return self.cmd(&repo, "jj", &full);
        }
        out
    }

    /// Commits everything in the main working copy.
    pub fn user_commit(&mut self, message: &str) -> bool {
        self.stats.user_commits += 1;
        let repo = self.repo.clone();
        match self.backend {
            Backend::Jj => self.user_jj(&["commit", "-m", message]).ok(),
            Backend::Git => {
                self.cmd(&repo, "git", &argv(&["add", "-A"]));
                self.cmd(&repo, "git", &argv(&["commit", "-q", "-m", message]))
                    .ok()
            }
        }
    }

    /// Looks at everything and checks the model; `lenient` leaves `status` out (the step
    /// right after a kill, before any command could repair).
    pub fn check(&mut self, lenient: bool) -> Vec<String> {
        // `status` first: it finishes or rolls back what a killed command left (a removal,
        // a creation), and the disks are looked at as it left them.
        let status = (!lenient).then(|| status(self.env, &self.repo));
        if !lenient {
            for (loc, added) in std::mem::take(&mut self.model.pending) {
                if let Some(set) = self.model.required_mut(&loc) {
                    set.extend(added);
                }
            }
        }
        for id in self.model.live_ws() {
            let gone = !self.dir(&id).is_dir();
            if let Some(w) = self.model.ws.get_mut(&id) {
                if w.half_made && gone {
                    // A creation killed before the workspace's state was saved: nothing ran
                    // in it, and the next command rolled it back.
                    w.live = false;
                    w.required.clear();
                    w.half_made = false;
                    self.log
                        .push(format!("    {id}: its killed creation was rolled back"));
                } else if w.half_removed && !lenient {
                    w.half_removed = false;
                    if gone {
                        // `status` finished the removal a kill interrupted.
                        w.live = false;
                        w.required.clear();
                        self.log
                            .push(format!("    {id}: its killed removal was finished"));
                    }
                }
            }
        }
        let clock = std::time::Instant::now();
        let mut disks = BTreeMap::new();
        disks.insert(MAIN.to_string(), self.scan(MAIN));
        if let Ok(entries) = fs::read_dir(&self.ns) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !name.starts_with('.') && entry.path().is_dir() {
                    disks.insert(name.clone(), scan(&entry.path(), self.seed));
                }
            }
        }
        let mut kept = scan(&self.ns.join(".kept"), self.seed);
        // A stale repair killed once jj updated the working copy keeps the workspace's
        // unrecorded edits in `.recovering-<id>/files/` until the next command puts them back
        // (`status` below, when the check is not lenient): until then they are the
        // workspace's, beside it.
        for id in self.model.live_ws() {
            let copy = scan(&self.ns.join(format!(".recovering-{id}/files")), self.seed);
            if copy.files.is_empty() {
                continue;
            }
            kept.files.extend(
                copy.files
                    .iter()
                    .map(|(f, ns)| (format!("{id}/{f}"), ns.clone())),
            );
            if lenient {
                if let Some(disk) = disks.get_mut(&id) {
                    for (file, ns) in copy.files {
                        disk.files.entry(file).or_default().extend(ns);
                    }
                }
            }
        }
        profile::add("(oracle) scan the disks", clock.elapsed());
        let history = self.history.tokens(
            self.env,
            &self.repo,
            self.backend,
            &self.model.named,
            self.seed,
        );
        let seen = Seen {
            disks,
            kept,
            history,
            status,
        };
        let mut broken = check(&self.model, &seen, self.seed);
        broken.extend(self.divergent_main());
        broken
    }

    /// jj: main's working-copy change shown divergent (two lands, or a land and the user's
    /// command, merged by jj instead of one waiting for the other).
    fn divergent_main(&mut self) -> Option<String> {
        if self.backend != Backend::Jj {
            return None;
        }
        let out = run(
            self.env,
            &self.repo,
            "jj",
            &argv(&[
                "--no-pager",
                "--ignore-working-copy",
                "log",
                "--no-graph",
                "-r",
                "@",
                "-T",
                "if(divergent, change_id.short() ++ \"\\n\")",
            ]),
        );
        let shown = out.stdout.trim();
        (!shown.is_empty())
            .then(|| format!("DIVERGENT: main's working-copy change {shown} is divergent"))
    }
}

/// A stale repair SIGKILLed once jj updated the working copy leaves the workspace's
/// unrecorded edits in `<namespace>/.recovering-<id>/`, and the next command of any kind puts
/// them back (docs/guarantees.md): right after the kill the round finds them there, not
/// missing (jj seed 13 step 26: `run w4` killed 198 ms in, w4 stale from the user's rebase,
/// its line in `.recovering-w4/files/sub/s3.txt`), and after the next `status` on the disk.
#[test]
fn stress_model_a_killed_repair_keeps_the_edits_beside_the_workspace_until_the_next_command() {
    let env = crate::harness::TestEnv::new();
    let mut world = World::new(&env, Backend::Jj, 13);
    while world.model.live_ws().is_empty() {
        world.agent_run_to_end();
    }
    let id = world.model.live_ws()[0].clone();
    let n = world.model.token(&id);
    world.append(&id, "s1.txt", n);
    world.model.written(&id, n);
    // Enough files for the repair to be caught between jj's update and the edits' return.
    let many = world.dir(&id).join("many");
    fs::create_dir(&many).unwrap();
    for i in 0..2000 {
        fs::write(many.join(i.to_string()), format!("{i}\n")).unwrap();
    }
    let u = world.model.token(MAIN);
    world.append(MAIN, "main-0.txt", u);
    world.model.written(MAIN, u);
    assert!(world.user_commit("user edit"));
    assert!(world
        .user_jj(&["rebase", "-b", &format!("{id}@"), "-o", "@-"])
        .ok());
    let scratch = world.ns.join(format!(".recovering-{id}"));
    let running = super::proc::spawn(
        world.env,
        &world.repo,
        AW,
        &argv(&["run", &id, "--", "true"]),
    );
    let clock = std::time::Instant::now();
    while !scratch.join("updated").exists() {
        assert!(clock.elapsed().as_secs() < 120, "the repair never updated");
        std::thread::yield_now();
    }
    let out = running.kill_after(std::time::Duration::ZERO);
    assert!(
        out.killed && scratch.is_dir(),
        "the repair ended before the kill"
    );
    let broken = world.check(true);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    let broken = world.check(false);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert!(!scratch.exists(), "status finished the repair");
}
