//! Agents' steps: a run's script (appends to shared and own files, deletes of its own lines
//! and files, renames, a commit of its own), new workspaces, children (`run --parent`) and
//! workspaces on a checkpoint (`run --base-change`), and what the model learns from a run.

use std::collections::{BTreeMap, BTreeSet};

use crate::backends::Backend;
use crate::harness::AW;

use super::oracle::{Expect, Fate, Ws, MAIN};
use super::proc::{argv, Out};
use super::steps::{Mode, MAX_LIVE};
use super::world::{World, SHARED};

/// What an agent's script will do, and the model's view of it.
struct Script {
    text: String,
    writes: Vec<u64>,
    deletes: Vec<u64>,
}

impl World<'_> {
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
                    self.renamed_marked(id, &from, &to);
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
                    self.renamed_marked(id, from, &to);
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

    /// The agent renames `from` to `to`: a conflict reported for `from` there is now in
    /// `to` (jj seed 6 step 93: a marked file an agent renamed).
    fn renamed_marked(&mut self, id: &str, from: &str, to: &str) {
        let key = (id.to_string(), from.to_string());
        if self.model.allowed.contains(&key) {
            self.model.allowed.insert((id.to_string(), to.to_string()));
        }
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
            half_made: false,
            half_removed: false,
            brought: vec![],
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
        w.half_made = if out.killed {
            !w.live || w.half_made
        } else {
            false
        };
        w.live = live;
        // The run finished whatever removal a kill left first.
        w.half_removed = false;
        if out.ok() {
            w.expect = Expect::Is("done");
            w.may_crash = false;
        } else {
            w.expect = Expect::Any;
            w.may_crash |= out.killed;
        }
    }

    /// An agent's run that is not killed (for tests of the oracle itself).
    pub fn agent_run_to_end(&mut self) {
        self.agent_run(Mode::Finish);
    }

    pub(super) fn agent_run(&mut self, mode: Mode) {
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
    pub(super) fn base_change_run(&mut self) {
        let base = self.rng.pick(&self.model.checkpoints).clone();
        let id = self.new_id("b");
        self.log
            .push(format!("  agent run in {id} on a checkpoint"));
        self.log.push(format!("    checkpoint {base}"));
        self.ensure_ws(&id, None);
        // It starts from the checkpoint's files: the conflicts reported in the workspace that
        // made it (then or since) are in them as they are there (jj seed 8 step 120: a
        // conflicted file a child renamed, its markers content since, in its checkpoint).
        if let Some((from, files)) = self.model.checkpoint_from.get(&base).cloned() {
            let now: Vec<String> = self
                .model
                .allowed
                .iter()
                .filter(|(loc, _)| *loc == from)
                .map(|(_, file)| file.clone())
                .collect();
            for file in files.into_iter().chain(now) {
                self.model.allowed.insert((id.clone(), file));
            }
        }
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

    pub(super) fn child_run(&mut self) {
        let parent = self.pick_live();
        let id = self.new_id("c");
        self.log.push(format!("  child {id} of {parent}"));
        self.ensure_ws(&id, Some(parent.clone()));
        self.run_script(&id, Some(&parent), Mode::Finish);
    }
}
