//! The steps of a round, drawn by the generator: agents' runs (and their children), the
//! user's edits, commits and rebases in the main working copy, checkpoints, lands with and
//! without `--prefer`, the printed undo, clean, `clean --landed`, gc, and commands SIGKILLed
//! at a random moment. Each step updates the model from what the command reported; the
//! agents', the user's, the lands' and the removals' steps live in their own files.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::backends::Backend;
use crate::harness::AW;

use super::oracle::{Expect, MAIN};
use super::proc::{argv, spawn, Out};
use super::world::World;

/// At most this many workspaces live at once (more and the round cleans one).
pub(super) const MAX_LIVE: usize = 5;

/// How to run a command: to its end, or SIGKILLed after a delay.
#[derive(Clone, Copy)]
pub(super) enum Mode {
    Finish,
    Kill(Duration),
}

impl World<'_> {
    /// Draws and performs one step; returns whether it killed a command (its check then
    /// leaves `status` out).
    pub fn step(&mut self) -> bool {
        self.stats.steps += 1;
        let live = self.model.live_ws();
        let has = |b: bool, w: u64| if b { w } else { 0 };
        let weights = [
            28,                                         // agent run
            has(!live.is_empty(), 5),                   // child run
            14,                                         // user edit
            has(!live.is_empty(), 6),                   // user rebase / amend
            has(!live.is_empty(), 6),                   // checkpoint
            has(!live.is_empty(), 16),                  // land
            has(self.model.last_land.is_some(), 8),     // undo
            has(!live.is_empty(), 4),                   // clean
            3,                                          // clean --landed
            3,                                          // gc
            6,                                          // kill
            has(!self.scan(MAIN).marked.is_empty(), 6), // resolve
            has(!self.model.checkpoints.is_empty(), 3), // run on a checkpoint
            has(self.landing_together().len() >= 2, 6), // lands at once
        ];
        let choice = if live.len() > MAX_LIVE {
            7
        } else {
            self.rng.weighted(&weights)
        };
        let mut killed = false;
        match choice {
            0 => self.agent_run(Mode::Finish),
            1 => self.child_run(),
            2 => self.user_edit(),
            3 => self.user_rebase(),
            4 => self.checkpoint(Mode::Finish),
            5 => {
                let id = self.pick_live();
                self.land(&id, Mode::Finish)
            }
            6 => self.undo(),
            7 => {
                let id = self.pick_live();
                self.clean(&id, Mode::Finish)
            }
            8 => self.clean_landed(),
            9 => self.gc(Mode::Finish),
            10 => killed = self.kill(),
            11 => self.resolve(),
            12 => self.base_change_run(),
            _ => {
                let mut ids = self.landing_together();
                while ids.len() > 2 && self.rng.chance(50) {
                    let drop = self.rng.below(ids.len() as u64) as usize;
                    ids.remove(drop);
                }
                self.lands_together(&ids)
            }
        }
        killed
    }

    /// The live workspaces whose land goes to the main working copy (no live parent).
    fn landing_together(&self) -> Vec<String> {
        let live = self.model.live_ws();
        live.iter()
            .filter(|id| {
                let parent = self.model.ws.get(*id).and_then(|w| w.parent.clone());
                !parent.is_some_and(|p| live.contains(&p))
            })
            .cloned()
            .collect()
    }

    pub(super) fn pick_live(&mut self) -> String {
        let live = self.model.live_ws();
        self.rng.pick(&live).clone()
    }

    pub(super) fn new_id(&mut self, prefix: &str) -> String {
        self.model.next_ws += 1;
        format!("{prefix}{}", self.model.next_ws)
    }

    /// Runs `program args` in the repository, to its end or killed; logs it.
    pub(super) fn exec(&mut self, program: &str, args: &[String], mode: Mode) -> Out {
        let started = spawn(self.env, &self.repo, program, args);
        let out = match mode {
            Mode::Finish => started.wait(),
            Mode::Kill(delay) => {
                let out = started.kill_after(delay);
                if out.killed {
                    self.stats.kills += 1;
                    // An agent's script may outlive its supervisor for a moment.
                    std::thread::sleep(Duration::from_millis(400));
                }
                out
            }
        };
        self.note(program, args, &out);
        if program == AW {
            self.kept_named(&out);
        }
        out
    }

    /// Starts every one of `calls` (`program`, `args`) in the repository at once, then waits
    /// for each to end; logs them in the order given.
    pub(super) fn exec_together(&mut self, calls: &[(&str, Vec<String>)]) -> Vec<Out> {
        let started: Vec<_> = calls
            .iter()
            .map(|(program, args)| spawn(self.env, &self.repo, program, args))
            .collect();
        let outs: Vec<Out> = started.into_iter().map(|s| s.wait()).collect();
        for ((program, args), out) in calls.iter().zip(&outs) {
            self.note(program, args, out);
            if *program == AW {
                self.kept_named(out);
            }
        }
        outs
    }

    /// The lines a command kept aside and named (a stale repair whose update conflicts with
    /// a workspace's unrecorded edit keeps the edit in `<namespace>/.kept/<id>-<time>/` and
    /// says so): the workspace no longer has to hold them on its disk, and the LOST check
    /// finds them in `.kept/`.
    fn kept_named(&mut self, out: &Out) {
        let text = out.text();
        // The stale repair reports the files whose update conflicts with an unrecorded edit
        // (exit non-zero): the workspace holds the updated version of each, which may be a
        // jj conflict (markers on disk, reported).
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("Error: workspace \"") else {
                continue;
            };
            let Some((id, rest)) = rest.split_once('"') else {
                continue;
            };
            if let Some(files) =
                rest.strip_prefix(" was stale; updating it conflicts with its unrecorded edits to ")
            {
                for file in files.split(", ") {
                    self.model.allow(id, file.trim());
                }
            }
        }
        let mut dirs: Vec<String> = vec![];
        for word in text.split(|c: char| c.is_whitespace() || "`'\"(),;".contains(c)) {
            let Some((_, rest)) = word.split_once("/.kept/") else {
                continue;
            };
            let dir = rest
                .split('/')
                .next()
                .unwrap_or_default()
                .trim_end_matches([':', '.']);
            if !dir.is_empty() && !dirs.iter().any(|d| d == dir) {
                dirs.push(dir.to_string());
            }
        }
        for dir in dirs {
            // `<id>-<time>[.n]`: ids in a round hold no `-`.
            let Some((id, _)) = dir.split_once('-') else {
                continue;
            };
            let kept = super::observe::scan(&self.ns.join(".kept").join(&dir), self.seed).all();
            let on_disk = self.scan(id).all();
            let excused: Vec<u64> = self
                .model
                .required(id)
                .into_iter()
                .filter(|n| kept.contains(n) && !on_disk.contains(n))
                .collect();
            if excused.is_empty() {
                continue;
            }
            self.log.push(format!(
                "    kept aside in .kept/{dir} (named by the command): {}",
                excused
                    .iter()
                    .map(|n| format!("L{}_{n}_", self.seed))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
            if let Some(set) = self.model.required_mut(id) {
                for n in &excused {
                    set.remove(n);
                }
            }
        }
    }

    fn checkpoint(&mut self, mode: Mode) {
        let id = self.pick_live();
        self.log.push(format!("  checkpoint {id}"));
        let out = self.exec(AW, &argv(&["checkpoint", &id, "-m", "cp", "--json"]), mode);
        self.model.touched(&id);
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&out.stdout) {
            let key = match self.backend {
                Backend::Jj => "change_id",
                Backend::Git => "commit",
            };
            if let Some(rev) = json[key].as_str() {
                self.model.checkpoints.push(rev.to_string());
                let reported: BTreeSet<String> = self
                    .model
                    .allowed
                    .iter()
                    .filter(|(loc, _)| *loc == id)
                    .map(|(_, file)| file.clone())
                    .collect();
                let from = self
                    .model
                    .checkpoint_from
                    .entry(rev.to_string())
                    .or_insert_with(|| (id.clone(), BTreeSet::new()));
                from.1.extend(reported);
            }
        }
        if !out.ok() {
            if let Some(w) = self.model.ws.get_mut(&id) {
                w.expect = Expect::Any;
            }
        }
    }

    /// Starts a command and SIGKILLs it after 0 to 400 ms.
    fn kill(&mut self) -> bool {
        let delay = Duration::from_millis(self.rng.below(400));
        let live = !self.model.live_ws().is_empty();
        let kind = if live { self.rng.below(5) } else { 0 };
        self.log
            .push(format!("  kill after {} ms:", delay.as_millis()));
        let before = self.stats.kills;
        match kind {
            0 => self.agent_run(Mode::Kill(delay)),
            1 => {
                let id = self.pick_live();
                self.land(&id, Mode::Kill(delay));
            }
            2 => {
                let id = self.pick_live();
                self.clean(&id, Mode::Kill(delay));
            }
            3 => self.checkpoint(Mode::Kill(delay)),
            _ => self.gc(Mode::Kill(delay)),
        }
        self.stats.kills > before
    }
}

/// A workspace started on a checkpoint (`run --base-change`) starts with the checkpoint's
/// files: a conflict reported in the workspace that made it (whose markers a rename there
/// made content, jj seed 8 step 120) excuses the same markers in the new workspace.
#[test]
fn stress_model_a_run_on_a_checkpoint_inherits_its_workspace_s_reported_conflicts() {
    let env = crate::harness::TestEnv::new();
    let mut world = World::new(&env, Backend::Jj, 8);
    world.agent_run_to_end();
    let live = world.model.live_ws();
    assert_eq!(live.len(), 1, "{live:?}");
    let id = live[0].clone();
    // Markers as ordinary content in the workspace, reported by a command.
    std::fs::write(
        world.dir(&id).join("marked.txt"),
        "<<<<<<< conflict 1 of 1\nx\n>>>>>>> conflict 1 of 1 ends\n",
    )
    .expect("write a marked file");
    world.model.allow(&id, "marked.txt");
    world.checkpoint(Mode::Finish);
    assert_eq!(world.model.checkpoints.len(), 1, "{:?}", world.log);
    world.base_change_run();
    let live = world.model.live_ws();
    let started = live.iter().find(|w| **w != id).expect("the new workspace");
    assert!(
        world.scan(started).marked.contains("marked.txt"),
        "{:?}",
        world.log
    );
    let broken = world.check(false);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
