//! The steps of a round, drawn by the generator: agents' runs (and their children), the
//! user's edits, commits and rebases in the main working copy, checkpoints, lands with and
//! without `--prefer`, the printed undo, clean, `clean --landed`, gc, and commands SIGKILLed
//! at a random moment. Each step updates the model from what the command reported.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::time::Duration;

use crate::backends::Backend;
use crate::harness::AW;

use super::observe::{commit_tokens, MARKERS};
use super::oracle::{Expect, Fate, LandRec, Ws, MAIN};
use super::proc::{argv, spawn, Out};
use super::world::{World, SHARED};

/// At most this many workspaces live at once (more and the round cleans one).
const MAX_LIVE: usize = 5;

/// What an agent's script will do, and the model's view of it.
struct Script {
    text: String,
    writes: Vec<u64>,
    deletes: Vec<u64>,
}

/// How to run a command: to its end, or SIGKILLed after a delay.
#[derive(Clone, Copy)]
enum Mode {
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
            _ => self.base_change_run(),
        }
        killed
    }

    fn pick_live(&mut self) -> String {
        let live = self.model.live_ws();
        self.rng.pick(&live).clone()
    }

    fn new_id(&mut self, prefix: &str) -> String {
        self.model.next_ws += 1;
        format!("{prefix}{}", self.model.next_ws)
    }

    /// An agent's edits in `id`: appends to shared and own files, deletes of its own lines
    /// and files, renames, and sometimes a commit of its own.
    fn compose(&mut self, id: &str) -> Script {
        let disk = self.scan(id);
        let mut script = Script {
            text: String::new(),
            writes: vec![],
            deletes: vec![],
        };
        // The agent's own lines by file as the script goes: what is on disk now, then what
        // the script appends, renames and deletes.
        let mut pending: BTreeMap<String, Vec<u64>> = disk
            .files
            .iter()
            .map(|(file, ns)| {
                let own = ns
                    .iter()
                    .copied()
                    .filter(|n| self.model.tokens.get(n).is_some_and(|t| t.writer == id))
                    .collect();
                (file.clone(), own)
            })
            .collect();
        let actions = 1 + self.rng.below(3);
        for _ in 0..actions {
            match self.rng.weighted(&[40, 25, 10, 7, 7, 3, 8]) {
                0 => {
                    let file = *self.rng.pick(SHARED);
                    self.append_in_script(id, file, &mut script);
                    pending
                        .entry(file.to_string())
                        .or_default()
                        .extend(script.writes.last());
                }
                1 => {
                    let own = self.model.ws[id].own_files.clone();
                    let file = if !own.is_empty() && self.rng.chance(50) {
                        self.rng.pick(&own).clone()
                    } else {
                        self.own_file(id)
                    };
                    self.append_in_script(id, &file, &mut script);
                    pending
                        .entry(file)
                        .or_default()
                        .extend(script.writes.last());
                }
                2 => {
                    let mine: Vec<u64> = disk
                        .all()
                        .into_iter()
                        .filter(|n| {
                            self.model
                                .tokens
                                .get(n)
                                .is_some_and(|t| t.writer == id && t.fate == Fate::Live)
                                && !script.deletes.contains(n)
                        })
                        .collect();
                    if mine.is_empty() {
                        continue;
                    }
                    let n = *self.rng.pick(&mine);
                    let tok = format!("L{}_{n}_", self.seed);
                    script.text.push_str(&format!(
                        "for f in $(grep -rlF --exclude-dir=.jj --exclude-dir=.git '{tok}' .); do sed -i '/{tok}/d' \"$f\"; done; "
                    ));
                    script.deletes.push(n);
                }
                3 => {
                    let own: Vec<String> = self.model.ws[id]
                        .own_files
                        .iter()
                        .filter(|f| pending.contains_key(*f))
                        .cloned()
                        .collect();
                    if own.is_empty() {
                        continue;
                    }
                    let file = self.rng.pick(&own).clone();
                    script
                        .deletes
                        .extend(pending.remove(&file).unwrap_or_default());
                    script.text.push_str(&format!("rm -f {file}; "));
                    if let Some(w) = self.model.ws.get_mut(id) {
                        w.own_files.retain(|f| *f != file);
                    }
                }
                4 => {
                    let own = self.model.ws[id].own_files.clone();
                    if own.is_empty() {
                        continue;
                    }
                    let from = self.rng.pick(&own).clone();
                    let to = self.own_file(id);
                    if let Some(moved) = pending.remove(&from) {
                        pending.insert(to.clone(), moved);
                    }
                    script
                        .text
                        .push_str(&format!("[ -f {from} ] && mv {from} {to}; "));
                    if let Some(w) = self.model.ws.get_mut(id) {
                        w.own_files.retain(|f| *f != from);
                    }
                }
                5 => {
                    let from = *self.rng.pick(SHARED);
                    let to = format!("moved-{id}-{}.txt", self.rng.below(1000));
                    script
                        .text
                        .push_str(&format!("[ -f {from} ] && mv {from} {to}; "));
                }
                _ => script.text.push_str(match self.backend {
                    Backend::Jj => "jj --no-pager commit -m 'agent commit' >/dev/null 2>&1; ",
                    Backend::Git => {
                        "git add -A && git commit -q -m 'agent commit' >/dev/null 2>&1; "
                    }
                }),
            }
        }
        script.text.push_str("true");
        script
    }

    fn own_file(&mut self, id: &str) -> String {
        let w = self.model.ws.get_mut(id).expect("a known workspace");
        w.next_file += 1;
        let file = format!("{id}-{}.txt", w.next_file);
        w.own_files.push(file.clone());
        file
    }

    fn append_in_script(&mut self, id: &str, file: &str, script: &mut Script) {
        let n = self.model.token(id);
        let line = self.line(id, n);
        if let Some((dir, _)) = file.rsplit_once('/') {
            script.text.push_str(&format!("mkdir -p {dir}; "));
        }
        script
            .text
            .push_str(&format!("printf '%s\\n' '{line}' >> {file}; "));
        script.writes.push(n);
    }

    fn ensure_ws(&mut self, id: &str, parent: Option<String>) {
        if !self.model.ws.contains_key(id) {
            // A new workspace starts from its parent's or the main working copy's state,
            // with the conflicts reported there.
            let from = parent.clone().unwrap_or_else(|| MAIN.to_string());
            let inherited: Vec<(String, String)> = self
                .model
                .allowed
                .iter()
                .filter(|(loc, _)| *loc == from)
                .map(|(_, file)| (id.to_string(), file.clone()))
                .collect();
            self.model.allowed.extend(inherited);
        }
        self.model.ws.entry(id.to_string()).or_insert(Ws {
            parent,
            live: false,
            required: BTreeSet::new(),
            own_files: vec![],
            next_file: 0,
            expect: Expect::Any,
            may_crash: false,
        });
    }

    /// `run <id> [--parent P] -- sh -c <script>`, then the model learns what was written.
    fn run_script(&mut self, id: &str, parent: Option<&str>, mode: Mode) {
        self.stats.runs += 1;
        let mut script = self.compose(id);
        if matches!(mode, Mode::Kill(_)) && self.rng.chance(50) {
            script.text = format!("sleep 0.{}; {}", self.rng.below(3), script.text);
        }
        let mut args = argv(&["run", id]);
        if let Some(p) = parent {
            args.extend(argv(&["--parent", p]));
        }
        args.extend(argv(&["--", "sh", "-c", &script.text]));
        let out = self.exec(AW, &args, mode);
        self.after_run(id, script, out);
    }

    /// The model learns what a run's script wrote and deleted.
    fn after_run(&mut self, id: &str, script: Script, out: Out) {
        self.model.touched(id);
        // What the script wrote is what is on the disk now (all of it when it exited 0).
        let disk = self.scan(id).all();
        for n in &script.writes {
            if out.ok() || disk.contains(n) {
                self.model.written(id, *n);
            }
        }
        for n in &script.deletes {
            self.model.deleted(*n);
        }
        let live = self.dir(id).is_dir();
        let w = self.model.ws.get_mut(id).expect("a known workspace");
        w.live = live;
        if out.ok() {
            w.expect = Expect::Is("done");
            w.may_crash = false;
        } else {
            w.expect = Expect::Any;
            w.may_crash |= out.killed;
        }
    }

    /// Runs `program args` in the repository, to its end or killed; logs it.
    fn exec(&mut self, program: &str, args: &[String], mode: Mode) -> Out {
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
        out
    }

    /// An agent's run that is not killed (for tests of the oracle itself).
    pub fn agent_run_to_end(&mut self) {
        self.agent_run(Mode::Finish);
    }

    fn agent_run(&mut self, mode: Mode) {
        let live = self.model.live_ws();
        let id = if live.len() < 2 || (live.len() < MAX_LIVE && self.rng.chance(20)) {
            self.new_id("w")
        } else {
            self.rng.pick(&live).clone()
        };
        self.log.push(format!("  agent run in {id}"));
        self.ensure_ws(&id, None);
        self.run_script(&id, None, mode);
    }

    /// A new workspace started on an agent's checkpoint (`run --base-change`).
    fn base_change_run(&mut self) {
        let base = self.rng.pick(&self.model.checkpoints).clone();
        let id = self.new_id("b");
        self.log
            .push(format!("  agent run in {id} on a checkpoint"));
        self.log.push(format!("    checkpoint {base}"));
        self.ensure_ws(&id, None);
        self.stats.runs += 1;
        let script = self.compose(&id);
        let args = argv(&[
            "run",
            &id,
            "--base-change",
            &base,
            "--",
            "sh",
            "-c",
            &script.text,
        ]);
        let out = self.exec(AW, &args, Mode::Finish);
        self.after_run(&id, script, out);
    }

    fn child_run(&mut self) {
        let parent = self.pick_live();
        let id = self.new_id("c");
        self.log.push(format!("  child {id} of {parent}"));
        self.ensure_ws(&id, Some(parent.clone()));
        self.run_script(&id, Some(&parent), Mode::Finish);
    }

    /// The user appends lines in the main working copy, sometimes deletes one of their own,
    /// and commits most of the time.
    fn user_edit(&mut self) {
        self.log.push("  user edits main".into());
        for _ in 0..1 + self.rng.below(2) {
            let file = if self.rng.chance(60) {
                SHARED[self.rng.below(SHARED.len() as u64) as usize].to_string()
            } else {
                self.model.main_files += 1;
                format!("main-{}.txt", self.model.main_files % 5)
            };
            let n = self.model.token(MAIN);
            self.append(MAIN, &file, n);
            self.model.written(MAIN, n);
            self.log
                .push(format!("    append L{}_{n}_ to {file}", self.seed));
        }
        if self.rng.chance(15) {
            let disk = self.scan(MAIN);
            let mine: Vec<(String, u64)> = disk
                .files
                .iter()
                .flat_map(|(f, ns)| ns.iter().map(move |n| (f.clone(), *n)))
                .filter(|(_, n)| {
                    self.model
                        .tokens
                        .get(n)
                        .is_some_and(|t| t.writer == MAIN && t.fate == Fate::Live)
                })
                .collect();
            if !mine.is_empty() {
                let (file, n) = self.rng.pick(&mine).clone();
                let path = self.repo.join(&file);
                let tok = format!("L{}_{n}_", self.seed);
                let text = fs::read_to_string(&path).unwrap_or_default();
                let kept: String = text
                    .lines()
                    .filter(|l| !l.contains(&tok))
                    .map(|l| format!("{l}\n"))
                    .collect();
                fs::write(&path, kept).expect("delete a line");
                self.model.deleted(n);
                self.log.push(format!("    delete {tok} from {file}"));
            }
        }
        if self.rng.chance(60) {
            self.user_commit("user edit");
        }
    }

    /// jj: the user rebases an agent's commits onto main's latest commit from the main
    /// workspace (undoing it at once if jj reports a conflict). git: the user amends main's
    /// last commit with a new line.
    fn user_rebase(&mut self) {
        match self.backend {
            Backend::Jj => {
                let id = self.pick_live();
                self.log
                    .push(format!("  user rebases {id}'s commits onto main"));
                let target = format!("{id}@");
                let out = self.user_jj(&["rebase", "-b", &target, "-o", "@-"]);
                if out.text().to_lowercase().contains("conflict") {
                    self.user_jj(&["undo"]);
                }
            }
            Backend::Git => {
                self.log.push("  user amends main's last commit".into());
                let n = self.model.token(MAIN);
                self.append(MAIN, "main-amend.txt", n);
                self.model.written(MAIN, n);
                let repo = self.repo.clone();
                self.cmd(&repo, "git", &argv(&["add", "-A"]));
                self.cmd(
                    &repo,
                    "git",
                    &argv(&["commit", "-q", "--amend", "--no-edit"]),
                );
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
            }
        }
        if !out.ok() {
            if let Some(w) = self.model.ws.get_mut(&id) {
                w.expect = Expect::Any;
            }
        }
    }

    /// Where `land id` lands: the parent workspace while it lives, else the main working copy.
    fn target_of(&self, id: &str) -> String {
        match self.model.ws.get(id).and_then(|w| w.parent.clone()) {
            Some(p) if self.model.ws.get(&p).is_some_and(|w| w.live) => p,
            _ => MAIN.to_string(),
        }
    }

    /// `land <id>` with a random `--prefer` (and `--allow-conflicts` when the binary has it).
    fn land(&mut self, id: &str, mode: Mode) {
        self.stats.lands += 1;
        let target = self.target_of(id);
        let prefer = match self.rng.below(10) {
            0 | 1 => Some("workspace"),
            2 | 3 => Some("target"),
            _ => None,
        };
        let allow = self.allow_conflicts && self.rng.chance(20);
        self.log.push(format!("  land {id} into {target}"));
        let wscan = self.scan(id);
        let tscan = self.scan(&target);
        // What the land brings: the lines the workspace wrote or that landed in it (the
        // lines of its base are the target's business: the target may have dropped them).
        let on_disk = wscan.all();
        let mut added: BTreeSet<u64> = self
            .model
            .required(id)
            .into_iter()
            .filter(|n| on_disk.contains(n))
            .collect();
        let before = self.model.required(&target);
        added.retain(|n| !before.contains(n));
        let mut args = argv(&["land", id]);
        if let Some(p) = prefer {
            args.extend(argv(&["--prefer", p]));
        }
        if allow {
            args.push("--allow-conflicts".into());
        }
        let out = self.exec(AW, &args, mode);
        self.model.touched(id);
        self.model.touched(&target);
        for line in out.stdout.lines() {
            if [
                "Landed", "Did not", "Nothing", "Conflict", "Resolved", "Undo",
            ]
            .iter()
            .any(|p| line.starts_with(p))
            {
                self.log.push(format!("      {line}"));
            }
        }
        if out.killed {
            self.killed_land(id, &target, added);
            return;
        }
        let mut conflicts = vec![];
        let mut resolved = vec![];
        let mut undo = vec![];
        for line in out.stdout.lines().chain(out.stderr.lines()) {
            if let Some(rest) = line.strip_prefix("Conflict in ") {
                let file = rest.rsplit_once(" (").map_or(rest, |(f, _)| f);
                conflicts.push(file.to_string());
            } else if let Some(rest) = line.strip_prefix("Resolved ") {
                if let Some((file, side)) = rest.split_once(" by taking the ") {
                    resolved.push((file.to_string(), side.starts_with("target")));
                }
            } else if let Some(rest) = line.strip_prefix("Undo: ") {
                undo = rest.split_whitespace().map(str::to_string).collect();
            }
        }
        let landed = out.ok() && out.stdout.lines().any(|l| l.starts_with("Landed "));
        let applied = landed
            || out
                .stdout
                .lines()
                .any(|l| l.starts_with("Landed with conflicts"));
        if applied {
            for (file, target_side) in &resolved {
                if *target_side {
                    let dropped = wscan.files.get(file).cloned().unwrap_or_default();
                    for n in dropped {
                        added.remove(&n);
                        if let Some(set) = self.model.required_mut(id) {
                            set.remove(&n);
                        }
                    }
                } else {
                    let mut dropped = tscan.files.get(file).cloned().unwrap_or_default();
                    if !tscan.files.contains_key(file) {
                        // The workspace renamed the file: the target's side is under the
                        // old name, one of the files the workspace no longer has.
                        for (old, ns) in &tscan.files {
                            if !wscan.files.contains_key(old) {
                                dropped.extend(ns);
                            }
                        }
                    }
                    if let Some(set) = self.model.required_mut(&target) {
                        for n in dropped {
                            set.remove(&n);
                        }
                    }
                }
            }
            if let Some(set) = self.model.required_mut(&target) {
                set.extend(added.iter().copied());
            }
        }
        let mut allowed = vec![];
        if !conflicts.is_empty() && !out.ok() {
            self.stats.lands_conflicted += 1;
            for file in &conflicts {
                for loc in [&target, &id.to_string()] {
                    let key = (loc.to_string(), file.to_string());
                    if self.model.allowed.insert(key.clone()) {
                        allowed.push(key);
                    }
                }
            }
        }
        let expect = if !conflicts.is_empty() && !out.ok() {
            Expect::Is("conflicted")
        } else if landed && resolved.iter().any(|(_, target_side)| *target_side) {
            // Whether a land that dropped some of the workspace's lines counts as landed is
            // for `land` to say; the lines themselves are checked.
            self.stats.lands_landed += 1;
            Expect::Any
        } else if landed && conflicts.is_empty() {
            self.stats.lands_landed += 1;
            Expect::Is("landed")
        } else if out.ok() {
            Expect::Any
        } else {
            // A refusal leaves the workspace's status as it was.
            self.model.ws[id].expect.clone()
        };
        if let Some(w) = self.model.ws.get_mut(id) {
            w.expect = expect;
        }
        if applied || !conflicts.is_empty() {
            self.model.last_land = (!undo.is_empty()).then(|| LandRec {
                ws: id.to_string(),
                target: target.clone(),
                added: if applied { added } else { BTreeSet::new() },
                allowed,
                undo,
            });
        }
    }

    /// A land killed part way: it happened if the target's commit now holds what it brings.
    fn killed_land(&mut self, id: &str, target: &str, added: BTreeSet<u64>) {
        let commit = match self.backend {
            Backend::Jj => {
                let rev = if target == MAIN {
                    "default@".to_string()
                } else {
                    format!("{target}@")
                };
                let out = self.cmd(
                    &self.repo.clone(),
                    "jj",
                    &argv(&[
                        "--no-pager",
                        "--ignore-working-copy",
                        "log",
                        "--no-graph",
                        "-r",
                        &rev,
                        "-T",
                        "commit_id",
                    ]),
                );
                out.stdout.trim().to_string()
            }
            Backend::Git => {
                let out = self.cmd(&self.dir(target), "git", &argv(&["rev-parse", "HEAD"]));
                out.stdout.trim().to_string()
            }
        };
        let there = commit_tokens(self.env, &self.repo, &commit, self.seed);
        let happened = !added.is_empty() && added.iter().all(|n| there.contains(n));
        self.log.push(format!(
            "    killed land: the target holds its lines: {happened}"
        ));
        if happened {
            if let Some(set) = self.model.required_mut(target) {
                set.extend(added);
            }
        }
        if let Some(w) = self.model.ws.get_mut(id) {
            w.expect = if happened {
                Expect::Not(&["done", "error", "idle", "interrupted"])
            } else {
                Expect::Any
            };
        }
        self.model.last_land = None;
    }

    /// Runs the undo the last land printed; the model forgets what that land brought.
    fn undo(&mut self) {
        let Some(rec) = self.model.last_land.take() else {
            return;
        };
        self.stats.undos += 1;
        self.log.push(format!("  undo the land of {}", rec.ws));
        let repo = self.repo.clone();
        let out = self.cmd(&repo, &rec.undo[0], &rec.undo[1..]);
        if out.ok() {
            if let Some(set) = self.model.required_mut(&rec.target) {
                for n in &rec.added {
                    set.remove(n);
                }
            }
            // The undo ran in the main working copy, which it updated; a workspace's disk
            // shows the undone conflict until a command brings it up to date.
            for key in rec.allowed {
                if key.0 == MAIN {
                    self.model.allowed.remove(&key);
                } else {
                    self.model
                        .fading
                        .entry(key.0.clone())
                        .or_default()
                        .push(key);
                }
            }
            if let Some(w) = self.model.ws.get_mut(&rec.ws) {
                w.expect = Expect::Not(&["landed", "conflicted"]);
            }
        }
    }

    /// Records what a `clean --json` or `gc --json` removed: gone from the model, the
    /// commits it named kept.
    fn removed(&mut self, entries: &[serde_json::Value]) {
        for e in entries {
            let Some(id) = e["workspace_id"].as_str() else {
                continue;
            };
            let removal = if e["removal"].is_object() {
                &e["removal"]
            } else {
                e
            };
            for key in ["kept_commit_id"] {
                if let Some(c) = removal[key].as_str() {
                    self.model.named.insert(c.to_string());
                }
            }
            if let Some(c) = removal["head"]["commit"].as_str() {
                self.model.named.insert(c.to_string());
            }
            for c in removal["commits"].as_array().cloned().unwrap_or_default() {
                if let Some(c) = c["commit_id"].as_str() {
                    self.model.named.insert(c.to_string());
                }
            }
            self.gone(id);
        }
    }

    fn gone(&mut self, id: &str) {
        let live = self.dir(id).is_dir();
        if let Some(w) = self.model.ws.get_mut(id) {
            w.live = live;
            if !live {
                w.required.clear();
            }
        }
        if self.model.last_land.as_ref().is_some_and(|l| l.ws == id) {
            self.model.last_land = None;
        }
    }

    fn clean(&mut self, id: &str, mode: Mode) {
        self.stats.cleans += 1;
        self.log.push(format!("  clean {id}"));
        let out = self.exec(AW, &argv(&["clean", id, "--json"]), mode);
        self.after_removal(&out, "removed");
        self.gone(id);
        if !out.ok() {
            // A clean that failed or was killed may have moved part of the files aside
            // already (it says where): they must be somewhere, no longer in the workspace.
            if let Some(w) = self.model.ws.get_mut(id) {
                w.required.clear();
                if out.killed {
                    w.expect = Expect::Any;
                }
            }
        }
    }

    fn after_removal(&mut self, out: &Out, key: &str) {
        if let Ok(json) = serde_json::from_str::<serde_json::Value>(&out.stdout) {
            let entries = json[key].as_array().cloned().unwrap_or_default();
            self.removed(&entries);
        }
    }

    fn clean_landed(&mut self) {
        self.log.push("  clean --landed".into());
        let out = self.exec(AW, &argv(&["clean", "--landed", "--json"]), Mode::Finish);
        self.after_removal(&out, "removed");
    }

    fn gc(&mut self, mode: Mode) {
        self.log.push("  gc".into());
        let out = self.exec(AW, &argv(&["gc", "--json"]), mode);
        self.after_removal(&out, "removed");
        if out.killed {
            for id in self.model.live_ws() {
                self.gone(&id);
                if let Some(w) = self.model.ws.get_mut(&id) {
                    // gc removes only landed workspaces (`retention.landed`).
                    if w.expect != Expect::Is("done") {
                        w.required.clear();
                    }
                    w.expect = Expect::Any;
                }
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

    /// The user resolves the conflicts a land left in the main working copy by keeping every
    /// side's lines (the markers removed), then commits.
    fn resolve(&mut self) {
        self.log
            .push("  user resolves the conflicts in main".into());
        let scan = self.scan(MAIN);
        for file in &scan.marked {
            let path = self.repo.join(file);
            let text = fs::read_to_string(&path).unwrap_or_default();
            let kept: String = text
                .lines()
                .filter(|l| !MARKERS.iter().any(|m| l.starts_with(m)))
                .filter(|l| !l.starts_with("=======") && !l.starts_with("|||||||"))
                .map(|l| format!("{l}\n"))
                .collect();
            fs::write(&path, kept).expect("resolve a file");
        }
        self.user_commit("resolve");
    }
}
