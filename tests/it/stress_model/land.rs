//! `land` (with and without `--prefer` and `--allow-conflicts`), a land SIGKILLed part way,
//! and the undo a land printed: what each tells the model.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use crate::backends::Backend;
use crate::harness::AW;

use super::observe::{commit_tokens, tokens, Scan};
use super::oracle::{Expect, LandRec, MAIN};
use super::proc::{argv, Out};
use super::steps::Mode;
use super::world::World;

impl World<'_> {
    /// Where `land id` lands: the parent workspace while it lives, else the main working copy.
    fn target_of(&self, id: &str) -> String {
        match self.model.ws.get(id).and_then(|w| w.parent.clone()) {
            Some(p) if self.model.ws.get(&p).is_some_and(|w| w.live) => p,
            _ => MAIN.to_string(),
        }
    }

    /// `land <id>` with a random `--prefer` (and `--allow-conflicts` when the binary has it).
    pub(super) fn land(&mut self, id: &str, mode: Mode) {
        let prep = self.land_prep(id, false);
        let out = self.exec(AW, &prep.args, mode);
        self.land_apply(prep, out);
    }

    /// Several workspaces landing into the main working copy at the same moment (plain
    /// lands, no `--prefer`), sometimes while the user commits in main: each land either
    /// lands whole onto what the one before left, or changes nothing.
    pub(super) fn lands_together(&mut self, ids: &[String]) {
        self.stats.lands_together += 1;
        self.log.push(format!("  lands at once: {}", ids.join(" ")));
        let preps: Vec<LandPrep> = ids.iter().map(|id| self.land_prep(id, true)).collect();
        let mut calls: Vec<(&str, Vec<String>)> =
            preps.iter().map(|p| (AW, p.args.clone())).collect();
        let user = self.rng.chance(50);
        if user {
            self.stats.user_commits += 1;
            calls.push(match self.backend {
                Backend::Jj => (
                    "jj",
                    argv(&["--no-pager", "commit", "-m", "user commit during lands"]),
                ),
                Backend::Git => (
                    "sh",
                    argv(&[
                        "-c",
                        "git add -A && git commit -q -m 'user commit during lands'",
                    ]),
                ),
            });
        }
        let mut outs = self.exec_together(&calls);
        if user {
            outs.pop();
        }
        for (prep, out) in preps.into_iter().zip(outs) {
            self.land_apply(prep, out);
        }
        // Which land the printed undo of the last one assumes came last is not known here.
        self.model.last_land = None;
    }

    /// What `land` is asked and what the model knows before it runs; `together`: no
    /// `--prefer` nor `--allow-conflicts`.
    fn land_prep(&mut self, id: &str, together: bool) -> LandPrep {
        self.stats.lands += 1;
        let target = self.target_of(id);
        let prefer = match self.forced_prefer.take() {
            _ if together => None,
            Some(forced) => forced,
            None => match self.rng.below(10) {
                0 | 1 => Some("workspace"),
                2 | 3 => Some("target"),
                _ => None,
            },
        };
        let allow = !together && self.allow_conflicts && self.rng.chance(20);
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
        // A line a `--prefer` land dropped from a target stays dropped: the commit that held
        // it is already in the target's history, so a later land does not bring it again.
        added.retain(|n| !self.model.dropped_from.contains(&(target.clone(), *n)));
        // What `--prefer` merges: both sides' files as they are and the commit they forked
        // from, to tell which lines are in conflicting hunks.
        let sides = prefer.map(|p| {
            let base = self.fork_point(id, &target);
            Sides {
                chain: self.chain(id, &target, base.as_deref()),
                base,
                target: self.target_texts(&target, &tscan),
                workspace: self.texts(id, &wscan),
                flag: if p == "workspace" {
                    "--theirs"
                } else {
                    "--ours"
                },
            }
        });
        let git_before = self.git_head(&target);
        let mut args = argv(&["land", id]);
        if let Some(p) = prefer {
            args.extend(argv(&["--prefer", p]));
        }
        if allow {
            args.push("--allow-conflicts".into());
        }
        LandPrep {
            id: id.to_string(),
            target,
            wscan,
            tscan,
            added,
            sides,
            git_before,
            args,
        }
    }

    /// What a land's outcome tells the model.
    fn land_apply(&mut self, prep: LandPrep, out: Out) {
        let LandPrep {
            id,
            target,
            wscan,
            tscan,
            mut added,
            sides,
            git_before,
            ..
        } = prep;
        let id = id.as_str();
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
        let mut undo = String::new();
        for line in out.stdout.lines().chain(out.stderr.lines()) {
            if let Some(rest) = line.strip_prefix("Conflict in ") {
                let file = rest.rsplit_once(" (").map_or(rest, |(f, _)| f);
                conflicts.push(file.to_string());
            } else if let Some(rest) = line.strip_prefix("Resolved ") {
                if let Some((file, side)) = rest.split_once(" by taking the ") {
                    resolved.push((file.to_string(), side.starts_with("target")));
                }
            } else if let Some(rest) = line.strip_prefix("Undo: ") {
                // A shell command line (quoted revsets, `&&`, `if ...; fi`): run by `sh -c`.
                undo = rest.trim().to_string();
                // The commits it names hold what the land replaced (jj: the workspace's
                // commit before `--prefer` resolved it; git: main's HEAD before).
                for word in undo.split(|c: char| !c.is_ascii_hexdigit()) {
                    if word.len() >= 12 {
                        self.model.named.insert(word.to_string());
                    }
                }
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
                // The losing side's lines in the file's conflicting hunks, by the user's
                // choice; every other line of both sides must survive (hunk-level prefer).
                let hunks = sides.as_ref().and_then(|s| self.conflict_hunks(s, file));
                if *target_side {
                    let dropped = match &hunks {
                        Some((_, ws_side)) => ws_side.clone(),
                        // The target renamed the file: the workspace's side is under the old
                        // name, one of the files the target no longer has (git's merge follows
                        // the rename: git seed 11 step 3499).
                        None if !wscan.files.contains_key(file) => wscan
                            .files
                            .keys()
                            .filter(|old| !tscan.files.contains_key(*old))
                            .filter_map(|old| {
                                let s = sides.as_ref()?;
                                self.conflict_hunks_renamed(s, file, old)
                            })
                            .flat_map(|(_, ws_side)| ws_side)
                            .collect(),
                        None => wscan.files.get(file).cloned().unwrap_or_default(),
                    };
                    if !dropped.is_empty() {
                        self.log.push(format!(
                            "    --prefer target may drop the workspace's conflicting lines: {}",
                            self.names(&dropped)
                        ));
                    }
                    for n in dropped {
                        self.model.dropped(n);
                        added.remove(&n);
                        if let Some(set) = self.model.required_mut(id) {
                            set.remove(&n);
                        }
                    }
                } else {
                    let dropped = match &hunks {
                        Some((target_side, _)) => target_side.clone(),
                        None => {
                            let mut dropped = tscan.files.get(file).cloned().unwrap_or_default();
                            if !tscan.files.contains_key(file) {
                                // The workspace renamed the file: the target's side is under
                                // the old name, one of the files the workspace no longer has.
                                for (old, ns) in &tscan.files {
                                    if !wscan.files.contains_key(old) {
                                        dropped.extend(ns);
                                    }
                                }
                            }
                            dropped
                        }
                    };
                    if !dropped.is_empty() {
                        self.log.push(format!(
                            "    --prefer workspace may drop the target's conflicting lines: {}",
                            self.names(&dropped)
                        ));
                    }
                    for n in &dropped {
                        self.model.dropped(*n);
                        self.model.dropped_from.insert((target.clone(), *n));
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
            // jj: the workspace goes on from the landed commits, on the target's state: the
            // markers the target holds (reported there, or held as text) are on its disk too
            // (jj seed 14 step 1122), and a line of its own that a `--prefer workspace` land
            // dropped from the target after it landed is gone from it (jj seed 12 step 4225).
            if self.backend == Backend::Jj {
                self.model.sits_on(id, &target);
                let inherited: Vec<(String, String)> = self
                    .model
                    .allowed
                    .iter()
                    .filter(|(loc, _)| *loc == target)
                    .map(|(_, file)| (id.to_string(), file.clone()))
                    .collect();
                self.model.allowed.extend(inherited);
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
        let brought = match (&git_before, landed) {
            (Some(before), true) => self.git_brought(&target, before),
            _ => vec![],
        };
        // Another workspace's commits the land brought (it started while main held them, and
        // their own land was undone since) are in the target again: `landed` is true of it
        // (git seed 10 step 3880).
        for other in self.model.live_ws() {
            let undone =
                matches!(self.model.ws[&other].expect, Expect::Not(s, _) if s.contains(&"landed"));
            if other != id && undone && self.git_head(&other).is_some_and(|h| brought.contains(&h))
            {
                if let Some(w) = self.model.ws.get_mut(&other) {
                    w.expect =
                        Expect::Not(&["conflicted"], "its commits were landed by another land");
                }
            }
        }
        if let Some(w) = self.model.ws.get_mut(id) {
            w.expect = expect;
            if landed {
                w.brought = brought;
            }
        }
        // A child's land gives its parent commits its own land never brought: a parent
        // shown `landed` may now show `done` (git seed 8 step 1317).
        if landed {
            if let Some(p) = self.model.ws.get_mut(&target) {
                if p.expect == Expect::Is("landed") {
                    p.expect = Expect::OneOf(&["done", "landed"]);
                }
            }
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
            // The land's journal is finished by the next command (which brings the target's
            // working copy up to date): from then on its disk must hold them.
            self.model.pending.push((target.to_string(), added));
        }
        if let Some(w) = self.model.ws.get_mut(id) {
            w.expect = if happened {
                Expect::Not(
                    &["done", "error", "idle", "interrupted"],
                    "a killed land whose lines are in the target",
                )
            } else {
                Expect::Any
            };
        }
        self.model.last_land = None;
    }

    /// Runs the undo the last land printed; the model forgets what that land brought.
    pub(super) fn undo(&mut self) {
        let Some(rec) = self.model.last_land.take() else {
            return;
        };
        self.stats.undos += 1;
        self.log.push(format!("  undo the land of {}", rec.ws));
        let repo = self.repo.clone();
        let out = self.cmd(&repo, "sh", &argv(&["-c", &rec.undo]));
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
                w.expect = Expect::Not(&["landed", "conflicted"], "the land was undone");
            }
        }
        // (After the allowances the undone land had: they are taken back above.)
        // jj: reverting the land's operation after later commits in main that changed the
        // same lines leaves jj conflicts, which jj reports ("unresolved conflicts at these
        // paths: <file>  2-sided conflict"): those files may hold markers in main.
        let text = out.text();
        let mut listing = false;
        for line in text.lines() {
            if line.to_lowercase().contains("conflict") {
                self.log.push(format!("      {line}"));
            }
            if line.contains("unresolved conflicts at these paths") {
                listing = true;
                continue;
            }
            let path = line.split_whitespace().next().unwrap_or_default();
            if listing && line.contains("conflict") && !path.is_empty() {
                self.model
                    .allowed
                    .insert((MAIN.to_string(), path.to_string()));
            } else {
                listing = false;
            }
        }
        // jj: the undo moves the landed commits from under what was built on them, other
        // workspaces started from the main working copy since included; jj reports the
        // conflicts that leaves ("New conflicts appeared", "unresolved conflicts"), and such
        // a workspace inherits them as one started from a conflicted main working copy does.
        if self.backend == Backend::Jj && out.ok() && text.contains("conflicts") {
            for id in self.model.live_ws() {
                for file in self.conflicted_in(&id) {
                    self.model.allow(&id, &file);
                }
            }
        }
    }

    /// jj: the files with a conflict in workspace `id`'s working-copy commit.
    fn conflicted_in(&mut self, id: &str) -> Vec<String> {
        let repo = self.repo.clone();
        let out = self.cmd(
            &repo,
            "jj",
            &argv(&[
                "--no-pager",
                "--ignore-working-copy",
                "file",
                "list",
                "-r",
                &format!("present({id}@)"),
                "-T",
                "if(conflict, path ++ \"\\n\")",
            ]),
        );
        match out.ok() {
            true => out.stdout.lines().map(str::to_string).collect(),
            false => vec![],
        }
    }
}

/// The two sides of a `--prefer` land before it ran, and the commit they forked from.
/// The length of the round's merge's conflict markers: longer than any a file may hold as
/// text (jj's own are 7, or longer only as far as a file's text needs).
const MARKER: usize = 32;

/// A land as prepared by [`World::land_prep`], for [`World::land_apply`].
struct LandPrep {
    id: String,
    target: String,
    wscan: Scan,
    tscan: Scan,
    /// The lines the land brings.
    added: BTreeSet<u64>,
    sides: Option<Sides>,
    git_before: Option<String>,
    args: Vec<String>,
}

struct Sides {
    base: Option<String>,
    target: BTreeMap<String, String>,
    workspace: BTreeMap<String, String>,
    /// jj: the workspace's commits that land, oldest first, without its working-copy commit
    /// (its disk is the last step): jj's land resolves each commit in turn.
    chain: Vec<String>,
    /// `git merge-file`'s flag for the side preferred.
    flag: &'static str,
}

impl World<'_> {
    /// The text of every file of a scan of `loc`.
    fn texts(&self, loc: &str, scan: &Scan) -> BTreeMap<String, String> {
        scan.files
            .keys()
            .map(|f| {
                let text = fs::read_to_string(self.dir(loc).join(f)).unwrap_or_default();
                (f.clone(), text)
            })
            .collect()
    }

    /// The target's side of the land's merge: jj snapshots the target's working copy first, so
    /// its files as they are; git merges into the target's commit, so HEAD's files (an
    /// uncommitted edit there that the land leaves alone is not part of the merge: git seed 10
    /// step 433, the user's committed line in `s1.txt` deleted but not committed).
    fn target_texts(&self, target: &str, scan: &Scan) -> BTreeMap<String, String> {
        let Some(head) = self.git_head(target) else {
            return self.texts(target, scan);
        };
        scan.files
            .keys()
            .map(|f| (f.clone(), self.file_at(&head, f)))
            .collect()
    }

    /// The commit `id`'s work and `target` forked from (the base of the land's merge).
    fn fork_point(&mut self, id: &str, target: &str) -> Option<String> {
        let repo = self.repo.clone();
        let out = match self.backend {
            Backend::Jj => {
                let tgt = if target == MAIN {
                    "default@".to_string()
                } else {
                    format!("{target}@")
                };
                // A workspace started on a checkpoint or a child lands only its own
                // commits: their base is the one it started on, while it is an ancestor.
                let record = fs::read_to_string(self.dir(id).join(".agent-workflow.json"))
                    .ok()
                    .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
                let started = record
                    .as_ref()
                    .and_then(|r| r["base_change"].as_str())
                    .filter(|c| c.chars().all(|ch| ch.is_ascii_alphanumeric()))
                    .map(|c| format!("heads(::{id}@ & ::present({c}))"));
                let revset = match started {
                    Some(started) => format!("coalesce({started}, heads(::{id}@ & ::{tgt}))"),
                    None => format!("heads(::{id}@ & ::{tgt})"),
                };
                self.cmd(
                    &repo,
                    "jj",
                    &argv(&[
                        "--no-pager",
                        "--ignore-working-copy",
                        "log",
                        "--no-graph",
                        "-r",
                        &revset,
                        "-T",
                        "commit_id ++ \"\\n\"",
                    ]),
                )
            }
            Backend::Git => {
                let t = self.git_head(target)?;
                let w = self.git_head(id)?;
                self.cmd(&repo, "git", &argv(&["merge-base", &t, &w]))
            }
        };
        let commit = out.stdout.lines().next().unwrap_or_default().trim();
        (out.ok() && !commit.is_empty()).then(|| commit.to_string())
    }

    /// jj: the commits of workspace `id` that a land into `target` brings, oldest first,
    /// without its working-copy commit (they are on the commit they forked from, `base`).
    fn chain(&mut self, id: &str, target: &str, base: Option<&str>) -> Vec<String> {
        let Some(base) = base.filter(|_| self.backend == Backend::Jj) else {
            return vec![];
        };
        let tgt = if target == MAIN {
            "default@".to_string()
        } else {
            format!("{target}@")
        };
        let revset = format!("(::{id}@ ~ ::({base} | {tgt})) ~ {id}@");
        let repo = self.repo.clone();
        let out = self.cmd(
            &repo,
            "jj",
            &argv(&[
                "--no-pager",
                "--ignore-working-copy",
                "log",
                "--no-graph",
                "--reversed",
                "-r",
                &revset,
                "-T",
                "commit_id ++ \"\\n\"",
            ]),
        );
        match out.ok() {
            true => out.stdout.lines().map(str::to_string).collect(),
            false => vec![],
        }
    }

    /// The text of `file` in `commit` (empty when it has none).
    fn file_at(&self, commit: &str, file: &str) -> String {
        let out = super::proc::run(
            self.env,
            &self.repo,
            "git",
            &argv(&["show", &format!("{commit}:{file}")]),
        );
        if out.ok() {
            out.stdout
        } else {
            String::new()
        }
    }

    /// `git merge-file -p` of the three texts (with `flag`, a side taken in the conflicting
    /// hunks); `None` when it could not run.
    fn merge_file(&self, target: &str, base: &str, workspace: &str, flag: &str) -> Option<String> {
        let io = self.env.path().join(".stress-io");
        fs::create_dir_all(&io).ok()?;
        let paths = [io.join("t"), io.join("b"), io.join("w")];
        for (p, text) in paths.iter().zip([target, base, workspace]) {
            fs::write(p, text).ok()?;
        }
        let mut args = argv(&["merge-file", "-p", &format!("--marker-size={MARKER}")]);
        // git's land merges with ort, which diffs with histogram; jj's `--prefer` runs
        // `git merge-file` as it is (Myers). Neither reads the user's `diff.algorithm`.
        if self.backend == Backend::Git {
            args.extend(argv(&["--diff-algorithm", "histogram"]));
        }
        if !flag.is_empty() {
            args.push(flag.to_string());
        }
        args.extend(argv(&["-L", "target", "-L", "base", "-L", "workspace"]));
        args.extend(paths.iter().map(|p| p.to_string_lossy().into_owned()));
        Some(super::proc::run(self.env, &self.repo, "git", &args).stdout)
    }

    /// The tokens of each side in the conflicting hunks of a `git merge-file -p` output:
    /// (target's, workspace's). Its markers are [`MARKER`] long and labelled, so a side's
    /// markers as text are read as the side's lines (jj seed 10 step 5012).
    fn hunk_tokens(&self, merged: &str) -> (Vec<u64>, Vec<u64>) {
        let (mut t, mut w) = (vec![], vec![]);
        let mut side = 0;
        let marker = |c: &str, label: &str| format!("{}{label}", c.repeat(MARKER));
        let (open, middle, close) = (
            marker("<", " target"),
            marker("=", ""),
            marker(">", " workspace"),
        );
        for line in merged.lines() {
            if line == open {
                side = 1;
            } else if line == middle && side == 1 {
                side = 2;
            } else if line == close {
                side = 0;
            } else if side == 1 {
                t.extend(tokens(line, self.seed));
            } else if side == 2 {
                w.extend(tokens(line, self.seed));
            }
        }
        (t, w)
    }

    /// git: the commit `loc`'s HEAD is at.
    fn git_head(&self, loc: &str) -> Option<String> {
        if self.backend != Backend::Git {
            return None;
        }
        let out = super::proc::run(
            self.env,
            &self.dir(loc),
            "git",
            &argv(&["rev-parse", "HEAD"]),
        );
        out.ok().then(|| out.stdout.trim().to_string())
    }

    /// git: the commits a land brought into `loc` (from `before` to its HEAD now).
    fn git_brought(&self, loc: &str, before: &str) -> Vec<String> {
        let out = super::proc::run(
            self.env,
            &self.dir(loc),
            "git",
            &argv(&["rev-list", &format!("{before}..HEAD")]),
        );
        out.stdout.lines().map(str::to_string).collect()
    }

    /// The tokens of each side in the conflicting hunks of a three-way merge of `file`
    /// (`git merge-file`, as the land's `--prefer` merges): (target's, workspace's). `None`
    /// when the file is not on both sides (a rename: the caller counts the whole file).
    /// jj's land resolves each landed commit in turn, on the one before as resolved: a
    /// hunk of an earlier commit that conflicted may lose the other side's lines even when
    /// a later commit takes its own back out (the sides' final texts then do not conflict),
    /// so each commit's merge counts too.
    fn conflict_hunks(&self, sides: &Sides, file: &str) -> Option<(Vec<u64>, Vec<u64>)> {
        self.conflict_hunks_renamed(sides, file, file)
    }

    /// [`Self::conflict_hunks`] of a file named `file` on the target's side and `old` on the
    /// workspace's and the base's (the target renamed it).
    fn conflict_hunks_renamed(
        &self,
        sides: &Sides,
        file: &str,
        old: &str,
    ) -> Option<(Vec<u64>, Vec<u64>)> {
        let target = sides.target.get(file)?;
        let workspace = sides.workspace.get(old)?;
        let base = sides
            .base
            .as_ref()
            .map(|b| self.file_at(b, old))
            .unwrap_or_default();
        let (mut t, mut w) = self.hunk_tokens(&self.merge_file(target, &base, workspace, "")?);
        if !sides.chain.is_empty() {
            let mut left = target.clone();
            let mut below = base;
            let texts = sides.chain.iter().map(|c| self.file_at(c, old));
            for right in texts.chain([workspace.clone()]) {
                let (ct, cw) = self.hunk_tokens(&self.merge_file(&left, &below, &right, "")?);
                t.extend(ct);
                w.extend(cw);
                left = self.merge_file(&left, &below, &right, sides.flag)?;
                below = right;
            }
            t.sort_unstable();
            t.dedup();
            w.sort_unstable();
            w.dedup();
        }
        Some((t, w))
    }

    fn names(&self, ns: &[u64]) -> String {
        ns.iter()
            .map(|n| format!("L{}_{n}_", self.seed))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// jj's `--prefer` resolves each landed commit in turn: an earlier commit's line that
/// conflicted with the target's takes the target's line out, and a later commit that
/// deletes its own line does not bring it back, although the sides' final texts do not
/// conflict. The round must excuse that target line (as `land_safety_jj::
/// prefer_resolves_each_landed_commit_in_turn` shows the land does), not only the lines
/// of the conflicting hunks of one merge of the final texts.
#[test]
fn stress_model_prefer_excuses_the_lines_of_each_commit_s_conflicting_hunks() {
    let env = crate::harness::TestEnv::new();
    let mut world = World::new(&env, Backend::Jj, 3);
    let commit = |world: &mut World, text: &str| -> String {
        fs::write(world.dir(MAIN).join("f.txt"), text).unwrap();
        world.user_jj(&["commit", "-m", "step"]);
        let out = world.user_jj(&["log", "--no-graph", "-r", "@-", "-T", "commit_id"]);
        out.stdout.trim().to_string()
    };
    let (a, u) = (world.model.token("w1"), world.model.token(MAIN));
    let a_line = world.line("w1", a);
    let u_line = world.line(MAIN, u);
    let fork = commit(&mut world, "x\n");
    let first = commit(&mut world, &format!("x\n{a_line}\n"));
    let file = |text: &str| BTreeMap::from([("f.txt".to_string(), text.to_string())]);
    let mut sides = Sides {
        base: Some(fork),
        target: file(&format!("x\n{u_line}\n")),
        // The workspace's working copy deleted its line again.
        workspace: file("x\n"),
        chain: vec![],
        flag: "--theirs",
    };
    let (target_side, _) = world.conflict_hunks(&sides, "f.txt").unwrap();
    assert!(target_side.is_empty(), "{target_side:?}");
    sides.chain = vec![first];
    let (target_side, workspace_side) = world.conflict_hunks(&sides, "f.txt").unwrap();
    assert_eq!(target_side, [u]);
    assert_eq!(workspace_side, [a]);
}

/// A file holding conflict markers as text (inherited from a checkpoint) keeps them in the
/// merge's hunks: the round's reading of `git merge-file`'s output must not take a marker line
/// of a side for the end of the hunk (jj seed 10 step 5012: `land b535 --prefer target`
/// dropped b535's line after `>>>>>>> conflict 1 of 1 ends`, the last line of a hunk whose
/// reading ended at that text and left the line out of the workspace's side).
#[test]
fn stress_model_markers_as_text_stay_inside_the_hunk_that_holds_them() {
    let env = crate::harness::TestEnv::new();
    let mut world = World::new(&env, Backend::Jj, 10);
    let (b, t, w) = (
        world.model.token("w1"),
        world.model.token(MAIN),
        world.model.token("w1"),
    );
    let ends = ">>>>>>> conflict 1 of 1 ends";
    let base = format!("x\n{ends}\n{}\n", world.line("w1", b));
    let file = |text: String| BTreeMap::from([("f.txt".to_string(), text)]);
    fs::write(world.dir(MAIN).join("f.txt"), &base).unwrap();
    world.user_jj(&["commit", "-m", "base"]);
    let out = world.user_jj(&["log", "--no-graph", "-r", "@-", "-T", "commit_id"]);
    let sides = Sides {
        base: Some(out.stdout.trim().to_string()),
        target: file(format!("x\n{}\n", world.line(MAIN, t))),
        workspace: file(format!("{base}{}\n", world.line("w1", w))),
        chain: vec![],
        flag: "--ours",
    };
    let (target_side, workspace_side) = world.conflict_hunks(&sides, "f.txt").unwrap();
    assert_eq!(target_side, [t]);
    assert_eq!(workspace_side, [b, w]);
}

/// The round's git merge draws the hunks git's land draws: `merge-tree -Xtheirs` (ort,
/// histogram diff) and the round's `merge-file --theirs` agree on texts Myers aligns
/// differently.
#[test]
fn stress_model_git_merges_as_the_land_merges() {
    let env = crate::harness::TestEnv::new();
    let world = World::new(&env, Backend::Git, 3);
    let text = |s: &str| s.chars().map(|c| format!("{c}\n")).collect::<String>();
    let (base, ours, theirs) = (
        text("bcaebcceebbcd"),
        text("azebcceebbcad"),
        text("aebccybbcd"),
    );
    let dir = env.path().join("merge");
    fs::create_dir_all(&dir).unwrap();
    let git = |args: &[&str]| super::proc::run(world.env, &dir, "git", &argv(args));
    git(&["init", "-q", "-b", "b"]);
    let commit = |branch: &str, content: &str| -> String {
        git(&["checkout", "-q", "-B", branch]);
        fs::write(dir.join("m.txt"), content).unwrap();
        git(&["add", "m.txt"]);
        git(&["commit", "-q", "-m", branch]);
        git(&["rev-parse", "HEAD"]).stdout.trim().to_string()
    };
    let b = commit("b", &base);
    let o = commit("o", &ours);
    git(&["checkout", "-q", &b]);
    let t = commit("t", &theirs);
    let out = git(&["merge-tree", "--write-tree", "-Xtheirs", &o, &t]);
    let tree = out.stdout.lines().next().unwrap().to_string();
    let land = git(&["show", &format!("{tree}:m.txt")]).stdout;
    let round = world.merge_file(&ours, &base, &theirs, "--theirs").unwrap();
    assert_eq!(round, land);
}

/// A parent shown `landed` gets commits of its child's land that its own land never
/// brought: it may show `done` after it (git seed 8 step 1317, `land c127` into `w125`).
#[test]
fn stress_model_a_landed_parent_may_show_done_once_its_child_landed_in_it() {
    let env = crate::harness::TestEnv::new();
    let mut world = World::new(&env, Backend::Git, 8);
    // git lands no conflicts: a land drawn with `--allow-conflicts` is refused.
    world.allow_conflicts = false;
    world.agent_run_to_end();
    let id = world.model.live_ws()[0].clone();
    world.land(&id, Mode::Finish);
    assert_eq!(
        world.model.ws[&id].expect,
        Expect::Is("landed"),
        "{:?}",
        world.log
    );
    let broken = world.check(false);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    world.child_run();
    let child = world
        .model
        .live_ws()
        .into_iter()
        .find(|w| *w != id)
        .expect("the child");
    fs::write(world.dir(&child).join("child.txt"), "child L8_999_\n").unwrap();
    world.land(&child, Mode::Finish);
    assert!(
        world.log.iter().any(|l| l.contains("Landed")),
        "{:?}",
        world.log
    );
    let broken = world.check(false);
    assert!(broken.is_empty(), "{}\n{:?}", broken.join("\n"), world.log);
}

/// A line another land's `--prefer workspace` dropped from the target stays dropped when its
/// writer lands again: the commit holding it is already in the target's history, so neither
/// git's merge nor jj's rebase brings it back (git seed 9 step 1161: `land w93` after `land
/// w92 --prefer workspace` dropped two of w93's landed lines from main).
#[test]
fn stress_model_a_line_a_prefer_land_dropped_from_the_target_is_not_brought_back_by_its_writer() {
    let env = crate::harness::TestEnv::new();
    let mut world = git_world(&env, 9, 2);
    let first = a_line_dropped_from_main(&mut world);
    write(&mut world, &first, "later.txt");
    world.forced_prefer = Some(None);
    world.land(&first, Mode::Finish);
    assert!(
        world.log.iter().filter(|l| l.contains("Landed")).count() >= 3,
        "{}",
        world.log.join("\n")
    );
    assert_holds(&mut world);
}

/// Appends a new line of `id`'s to `file` in its directory (as its agent would).
fn write(world: &mut World, id: &str, file: &str) -> u64 {
    let n = world.model.token(id);
    world.append(id, file, n);
    world.model.written(id, n);
    n
}

/// With two live workspaces: the first lands a line into main, and the second's `--prefer
/// workspace` land drops it from main; the first's id.
fn a_line_dropped_from_main(world: &mut World) -> String {
    let live = world.model.live_ws();
    let (first, second) = (live[0].clone(), live[1].clone());
    let dropped = write(world, &first, "s0.txt");
    world.forced_prefer = Some(None);
    world.land(&first, Mode::Finish);
    write(world, &second, "s0.txt");
    world.forced_prefer = Some(Some("workspace"));
    world.land(&second, Mode::Finish);
    let name = world.line(&first, dropped);
    let token = name.split(' ').next_back().unwrap().to_string();
    assert!(
        world
            .log
            .iter()
            .any(|l| l.contains("may drop the target's") && l.contains(&token)),
        "{}",
        world.log.join("\n")
    );
    first
}

/// git lands into the target's commit: a line the user committed in main and then deleted
/// without committing is still on the target's side of the merge, and `--prefer target`
/// takes it over the workspace's line beside it (git seed 10 step 433: the round merged main's
/// working copy, saw no conflict and expected the workspace's line in main).
#[test]
fn stress_model_git_merges_the_target_s_commit_not_its_uncommitted_edits() {
    let env = crate::harness::TestEnv::new();
    let mut world = git_world(&env, 10, 1);
    let id = world.model.live_ws()[0].clone();
    let user = world.model.token(MAIN);
    world.append(MAIN, "s1.txt", user);
    world.model.written(MAIN, user);
    assert!(world.user_commit("user edit"));
    let line = world.line(MAIN, user);
    let path = world.dir(MAIN).join("s1.txt");
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace(&format!("{line}\n"), "");
    fs::write(&path, text).unwrap();
    world.model.deleted(user);
    let agent = world.model.token(&id);
    world.append(&id, "s1.txt", agent);
    world.model.written(&id, agent);
    world.forced_prefer = Some(Some("target"));
    world.land(&id, Mode::Finish);
    assert_logged(&world, "Resolved s1.txt by taking the target side");
    assert_holds(&mut world);
}

/// A git round (git lands no conflicts: `--allow-conflicts` is never drawn) with `live`
/// workspaces made by agents' runs.
fn git_world(env: &crate::harness::TestEnv, seed: u64, live: usize) -> World<'_> {
    let mut world = World::new(env, Backend::Git, seed);
    world.allow_conflicts = false;
    while world.model.live_ws().len() < live {
        world.agent_run_to_end();
    }
    world
}

/// A jj round with `live` workspaces made by agents' runs.
fn jj_world(env: &crate::harness::TestEnv, seed: u64, live: usize) -> World<'_> {
    let mut world = World::new(env, Backend::Jj, seed);
    while world.model.live_ws().len() < live {
        world.agent_run_to_end();
    }
    world
}

/// A line of the step log holds `text` (the step log otherwise).
fn assert_logged(world: &World, text: &str) {
    assert!(
        world.log.iter().any(|l| l.contains(text)),
        "{}",
        world.log.join("\n")
    );
}

/// The oracle finds nothing broken now (the broken invariants and the step log otherwise).
fn assert_holds(world: &mut World) {
    let broken = world.check(false);
    assert!(
        broken.is_empty(),
        "{}\n{}",
        broken.join("\n"),
        world.log.join("\n")
    );
}

/// A file the target renamed and both sides appended to: git's merge follows the rename and
/// `--prefer target` drops the workspace's lines in the renamed file's conflicting hunk, which
/// the workspace holds under the old name (git seed 11 step 3499: `land w317 --prefer target`
/// after `s1.txt` became `moved-w326-759.txt` in main; the round looked for the workspace's
/// side under the new name, found none and expected all three of its lines in main).
#[test]
fn stress_model_prefer_target_follows_a_rename_the_target_made() {
    let env = crate::harness::TestEnv::new();
    let mut world = git_world(&env, 11, 1);
    let id = world.model.live_ws()[0].clone();
    let main = world.dir(MAIN);
    fs::rename(main.join("s1.txt"), main.join("moved.txt")).unwrap();
    let user = world.model.token(MAIN);
    world.append(MAIN, "moved.txt", user);
    world.model.written(MAIN, user);
    assert!(world.user_commit("user rename"));
    let agent = world.model.token(&id);
    world.append(&id, "s1.txt", agent);
    world.model.written(&id, agent);
    world.forced_prefer = Some(Some("target"));
    world.land(&id, Mode::Finish);
    assert_logged(&world, "Resolved moved.txt by taking the target side");
    assert_holds(&mut world);
}

/// A workspace started while main held another's landed commits brings them back when it
/// lands after that land was undone: the other workspace's work is in main again, and its
/// `landed` is true (git seed 10 step 3880: `land w350` after the undo of `land w349`, w350
/// made from main in between; the round still expected w349 not `landed`).
#[test]
fn stress_model_a_land_may_bring_back_another_workspace_s_undone_land() {
    let env = crate::harness::TestEnv::new();
    let mut world = git_world(&env, 10, 1);
    world.forced_prefer = Some(None);
    let first = world.model.live_ws()[0].clone();
    world.land(&first, Mode::Finish);
    assert_eq!(world.model.ws[&first].expect, Expect::Is("landed"));
    while world.model.live_ws().len() < 2 {
        world.agent_run_to_end();
    }
    world.undo();
    let second = world
        .model
        .live_ws()
        .into_iter()
        .find(|w| *w != first)
        .expect("the second workspace");
    world.land(&second, Mode::Finish);
    assert!(
        world.log.iter().filter(|l| l.contains("Landed")).count() >= 2,
        "{}",
        world.log.join("\n")
    );
    let shown = super::observe::status(world.env, &world.repo).unwrap();
    assert_eq!(shown[&first].status, "landed", "{}", world.log.join("\n"));
    assert_holds(&mut world);
}

/// jj: a child that lands into its parent continues on the landed commit, which holds the
/// parent's files: markers the parent holds (reported there, or markers as text it
/// inherited) are then on the child's disk too (jj seed 14 step 1122: `land c104
/// --allow-conflicts` into c103, which had renamed a file inherited conflicted; the round
/// took the markers c104 received for unreported).
#[test]
fn stress_model_a_child_landed_into_its_parent_receives_the_parent_s_markers() {
    let env = crate::harness::TestEnv::new();
    let mut world = World::new(&env, Backend::Jj, 14);
    world.forced_prefer = Some(None);
    while world.model.live_ws().is_empty() {
        world.agent_run_to_end();
    }
    let parent = world.model.live_ws()[0].clone();
    world.child_run();
    let child = world
        .model
        .live_ws()
        .into_iter()
        .find(|w| *w != parent)
        .expect("the child");
    let text =
        "<<<<<<< conflict 1 of 1\n%%%%%%% a\n+x\n+++++++ b\ny\n>>>>>>> conflict 1 of 1 ends\n";
    fs::write(world.dir(&parent).join("marked.txt"), text).unwrap();
    world
        .model
        .allowed
        .insert((parent.clone(), "marked.txt".to_string()));
    // The parent's checkpoint: the commit the child lands on holds the file.
    world.exec(
        AW,
        &argv(&["checkpoint", &parent, "-m", "cp"]),
        Mode::Finish,
    );
    let n = world.model.token(&child);
    world.append(&child, "child.txt", n);
    world.model.written(&child, n);
    world.land(&child, Mode::Finish);
    assert_logged(&world, "Landed");
    assert!(
        world.dir(&child).join("marked.txt").exists(),
        "{}",
        world.log.join("\n")
    );
    assert_holds(&mut world);
}

/// jj: a workspace the user rebases onto main sits on main's files: a line it landed that a
/// `--prefer workspace` land then dropped from main is gone from its disk too, its commit
/// being in main's history (jj seed 12 step 2882: b269's `L12_1857_`, dropped from main by
/// `land b267 --prefer workspace`, missing from b269 after `jj rebase -b b269@ -o @-` and
/// b269's next run).
#[test]
fn stress_model_a_line_dropped_from_main_is_not_expected_back_in_its_writer_rebased_onto_main() {
    let env = crate::harness::TestEnv::new();
    let mut world = jj_world(&env, 12, 2);
    let first = a_line_dropped_from_main(&mut world);
    world.rebase_onto_main(&first);
    // Its next run brings its disk up to the rebased commit (and shows `done`).
    world.exec(AW, &argv(&["run", &first, "--", "true"]), Mode::Finish);
    world.model.ws.get_mut(&first).unwrap().expect = Expect::Is("done");
    assert_holds(&mut world);
}

/// jj: a workspace that lands again goes on from the target's state, where a line of its own
/// that it landed before and a `--prefer workspace` land then dropped is gone: it no longer
/// has to hold it (jj seed 12 step 4225: b415's `L12_2793_`, dropped from main by `land b411
/// --prefer workspace`, missing from b415 after `land b415 --prefer workspace`).
#[test]
fn stress_model_a_line_dropped_from_main_is_not_expected_back_in_its_writer_that_lands_again() {
    let env = crate::harness::TestEnv::new();
    let mut world = jj_world(&env, 12, 2);
    let first = a_line_dropped_from_main(&mut world);
    write(&mut world, &first, "later.txt");
    world.forced_prefer = Some(None);
    world.land(&first, Mode::Finish);
    assert_holds(&mut world);
}
