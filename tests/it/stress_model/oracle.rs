//! The model the round keeps of who wrote which line, where each line must be, which
//! conflicts a command reported and what `status` should say; and the checks against it.

use std::collections::{BTreeMap, BTreeSet};

use super::observe::{Scan, Shown};

/// The id the main working copy goes by in the model.
pub const MAIN: &str = "main";

/// What became of a line a step meant to write.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fate {
    /// Written and not deleted by its writer: it must be somewhere.
    Live,
    /// Deleted on purpose by its writer.
    Deleted,
    /// Never written (the command writing it was killed or refused first).
    Unwritten,
    /// In the losing side's conflicting hunk of a `--prefer` land: dropped by the user's
    /// explicit choice (the land's undo brings it back).
    Dropped,
}

pub struct Token {
    pub writer: String,
    pub fate: Fate,
}

/// What `status` must show for a workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    Any,
    Is(&'static str),
    /// One of these statuses.
    OneOf(&'static [&'static str]),
    /// None of these statuses, and why not.
    Not(&'static [&'static str], &'static str),
}

/// A workspace as the model knows it.
pub struct Ws {
    pub parent: Option<String>,
    pub live: bool,
    /// Tokens that must be on its disk while it lives: its own writes and what landed in it.
    pub required: BTreeSet<u64>,
    /// Files it created itself (the only ones it deletes or renames).
    pub own_files: Vec<String>,
    pub next_file: u32,
    pub expect: Expect,
    /// A run of it was SIGKILLed since its last run that finished: `crashed` is fine.
    pub may_crash: bool,
    /// Its first run (which creates it) was SIGKILLed: it may be half made, and the next
    /// command rolls it back.
    pub half_made: bool,
    /// A removal of it (`clean`, `gc`) was SIGKILLed while its directory was still there:
    /// the next command may finish it (the removal is journaled) or leave it live.
    pub half_removed: bool,
    /// git: the commits its last land brought into the target (a user's amend of one of
    /// them leaves the land no longer an ancestor of the target).
    pub brought: Vec<String>,
}

/// The last land, while its printed undo may still be run.
pub struct LandRec {
    pub ws: String,
    pub target: String,
    pub added: BTreeSet<u64>,
    pub allowed: Vec<(String, String)>,
    /// The printed undo: a shell command line, run in the repository.
    pub undo: String,
}

#[derive(Default)]
pub struct Model {
    pub tokens: BTreeMap<u64, Token>,
    pub main_required: BTreeSet<u64>,
    pub main_files: u32,
    pub ws: BTreeMap<String, Ws>,
    /// (location, file) pairs where a command reported a conflict; file `*` is any file.
    pub allowed: BTreeSet<(String, String)>,
    pub last_land: Option<LandRec>,
    /// Allowances whose conflict was undone, by the workspace whose disk still shows it:
    /// they go when the next command of agent-workspace brings that workspace up to date.
    pub fading: BTreeMap<String, Vec<(String, String)>>,
    /// Lines a location must hold once the next command finished what a killed one left
    /// (a killed land that happened: the next command brings the target up to date).
    pub pending: Vec<(String, BTreeSet<u64>)>,
    /// Commit ids the tool named (clean, gc, a land's undo).
    pub named: BTreeSet<String>,
    pub next_ws: u32,
    /// The checkpoints agents made (jj change ids, git commits), for `run --base-change`.
    pub checkpoints: Vec<String>,
    /// By checkpoint: the workspace that made it and the files a command had reported
    /// conflicted there when it did (their markers may be in the checkpoint's files).
    pub checkpoint_from: BTreeMap<String, (String, BTreeSet<String>)>,
    /// (target, token): a `--prefer workspace` land dropped the token from that target.
    pub dropped_from: BTreeSet<(String, u64)>,
}

impl Model {
    /// A new token written by `writer`; its fate is settled by the step.
    pub fn token(&mut self, writer: &str) -> u64 {
        let n = self.tokens.len() as u64 + 1;
        self.tokens.insert(
            n,
            Token {
                writer: writer.to_string(),
                fate: Fate::Unwritten,
            },
        );
        n
    }

    /// The set a location must hold on its disk.
    pub fn required_mut(&mut self, loc: &str) -> Option<&mut BTreeSet<u64>> {
        if loc == MAIN {
            Some(&mut self.main_required)
        } else {
            self.ws.get_mut(loc).map(|w| &mut w.required)
        }
    }

    pub fn required(&self, loc: &str) -> BTreeSet<u64> {
        if loc == MAIN {
            self.main_required.clone()
        } else {
            self.ws
                .get(loc)
                .map(|w| w.required.clone())
                .unwrap_or_default()
        }
    }

    /// `loc` wrote `n`: it is live and must stay on `loc`'s disk.
    pub fn written(&mut self, loc: &str, n: u64) {
        if let Some(t) = self.tokens.get_mut(&n) {
            t.fate = Fate::Live;
        }
        if let Some(set) = self.required_mut(loc) {
            set.insert(n);
        }
    }

    /// Its writer deleted `n`: nothing needs it any more.
    pub fn deleted(&mut self, n: u64) {
        if let Some(t) = self.tokens.get_mut(&n) {
            t.fate = Fate::Deleted;
        }
        self.main_required.remove(&n);
        for w in self.ws.values_mut() {
            w.required.remove(&n);
        }
    }

    /// `id`'s working copy now sits on `loc`'s files (a land into `loc`, a rebase onto it):
    /// a line of its own that a `--prefer workspace` land dropped from `loc` is gone from it.
    pub fn sits_on(&mut self, id: &str, loc: &str) {
        let gone: Vec<u64> = self
            .required(id)
            .into_iter()
            .filter(|n| self.dropped_from.contains(&(loc.to_string(), *n)))
            .collect();
        if let Some(set) = self.required_mut(id) {
            for n in gone {
                set.remove(&n);
            }
        }
    }

    /// `n` was in the losing side's conflicting hunk of a `--prefer` land: not checked.
    pub fn dropped(&mut self, n: u64) {
        if let Some(t) = self.tokens.get_mut(&n) {
            if t.fate == Fate::Live {
                t.fate = Fate::Dropped;
            }
        }
    }

    /// A command reported a conflict in `file` at `loc` now: it excuses markers there, and
    /// an earlier allowance for it that was fading (its conflict undone) no longer fades.
    pub fn allow(&mut self, loc: &str, file: &str) {
        let key = (loc.to_string(), file.to_string());
        if let Some(fading) = self.fading.get_mut(loc) {
            fading.retain(|k| *k != key);
        }
        self.allowed.insert(key);
    }

    /// A command brought `loc` up to date: conflicts undone before no longer excuse markers.
    pub fn touched(&mut self, loc: &str) {
        for key in self.fading.remove(loc).unwrap_or_default() {
            self.allowed.remove(&key);
        }
    }

    pub fn live_ws(&self) -> Vec<String> {
        self.ws
            .iter()
            .filter(|(_, w)| w.live)
            .map(|(id, _)| id.clone())
            .collect()
    }

    pub fn live_tokens(&self) -> BTreeSet<u64> {
        self.tokens
            .iter()
            .filter(|(_, t)| t.fate == Fate::Live)
            .map(|(n, _)| *n)
            .collect()
    }

    fn writer(&self, n: u64) -> &str {
        self.tokens
            .get(&n)
            .map(|t| t.writer.as_str())
            .unwrap_or("?")
    }

    fn allows(&self, loc: &str, file: &str) -> bool {
        self.allowed.contains(&(loc.to_string(), file.to_string()))
            || self.allowed.contains(&(loc.to_string(), "*".to_string()))
    }
}

/// What the round observed after a step.
pub struct Seen {
    /// The main working copy and every workspace directory, by location.
    pub disks: BTreeMap<String, Scan>,
    /// Every kept-aside directory.
    pub kept: Scan,
    /// Tokens held by the repository's commits and by the commits the tool named.
    pub history: BTreeSet<u64>,
    /// `status --json`, unless this step is not checked against it.
    pub status: Option<Result<BTreeMap<String, Shown>, String>>,
}

/// The statuses a workspace may show without anything being wrong with it.
const NORMAL: &[&str] = &[
    "done",
    "error",
    "interrupted",
    "idle",
    "landed",
    "conflicted",
];

/// Every invariant the step broke, one line each.
pub fn check(model: &Model, seen: &Seen, seed: u64) -> Vec<String> {
    let mut bad = vec![];
    let name = |n: u64| format!("L{seed}_{n}_ (by {})", model.writer(n));
    // 1. Every line ever written and not deleted by its writer is somewhere.
    let mut anywhere: BTreeSet<u64> = seen.history.clone();
    anywhere.extend(seen.kept.all());
    for scan in seen.disks.values() {
        anywhere.extend(scan.all());
    }
    for n in model.live_tokens() {
        if !anywhere.contains(&n) {
            bad.push(format!(
                "LOST: line {} is in no working copy, workspace, kept-aside directory or commit",
                name(n)
            ));
        }
    }
    // 2. Every line a location must hold is on its disk.
    let mut locations = vec![MAIN.to_string()];
    locations.extend(model.live_ws());
    for loc in &locations {
        let on_disk = seen.disks.get(loc).map(Scan::all).unwrap_or_default();
        for n in model.required(loc) {
            if !on_disk.contains(&n) {
                bad.push(format!(
                    "MISSING: line {} is not in {loc}'s working copy, which wrote it or received it by a land",
                    name(n)
                ));
            }
        }
    }
    // 3. No conflict marker that no command reported.
    for (loc, scan) in &seen.disks {
        for file in &scan.marked {
            if !model.allows(loc, file) {
                bad.push(format!(
                    "MARKERS: {loc}/{file} holds conflict markers no command reported"
                ));
            }
        }
    }
    // 4. `status` agrees with the model.
    match &seen.status {
        None => {}
        Some(Err(e)) => bad.push(format!("STATUS: {e}")),
        Some(Ok(shown)) => {
            for (id, s) in shown {
                let w = model.ws.get(id);
                let crash_ok = w.is_some_and(|w| w.may_crash) && s.status == "crashed";
                if !NORMAL.contains(&s.status.as_str()) && !crash_ok {
                    bad.push(format!(
                        "STATUS: {id} shows `{}` (problem: {:?}) after a step that ended normally",
                        s.status, s.problem
                    ));
                }
                match w {
                    None => bad.push(format!("STATUS: unknown workspace {id} listed")),
                    Some(w) if !w.live => bad.push(format!(
                        "STATUS: {id} was removed but is listed as `{}`",
                        s.status
                    )),
                    Some(w) => match &w.expect {
                        Expect::Is(want) if s.status != *want && !crash_ok => bad.push(format!(
                            "STATUS: {id} shows `{}`, the model expects `{want}`",
                            s.status
                        )),
                        Expect::OneOf(want) if !want.contains(&s.status.as_str()) && !crash_ok => {
                            bad.push(format!(
                                "STATUS: {id} shows `{}`, the model expects one of {want:?}",
                                s.status
                            ))
                        }
                        Expect::Not(not, why) if not.contains(&s.status.as_str()) => {
                            bad.push(format!("STATUS: {id} shows `{}` after {why}", s.status))
                        }
                        _ => {}
                    },
                }
            }
            for id in model.live_ws() {
                if !shown.contains_key(&id) {
                    bad.push(format!("STATUS: live workspace {id} is not listed"));
                }
            }
        }
    }
    bad
}

/// A workspace whose last run was killed may show `crashed` whatever else the model expects
/// of it: also after its parent, which it had landed in, was removed (git seed 7 step 489:
/// `c40` after `clean c38`). One whose runs all ended may not (a status not normal, and not
/// one the model expects).
#[test]
fn stress_model_a_killed_run_excuses_crashed_after_the_parent_it_landed_in_went() {
    let ws = |may_crash: bool| Ws {
        parent: None,
        live: true,
        required: BTreeSet::new(),
        own_files: vec![],
        next_file: 0,
        expect: Expect::OneOf(&["done", "landed"]),
        may_crash,
        half_made: false,
        half_removed: false,
        brought: vec![],
    };
    let seen = Seen {
        disks: BTreeMap::new(),
        kept: Scan::default(),
        history: BTreeSet::new(),
        status: Some(Ok(BTreeMap::from([(
            "c40".to_string(),
            Shown {
                status: "crashed".into(),
                problem: None,
            },
        )]))),
    };
    for (may_crash, broken) in [(true, 0), (false, 2)] {
        let mut model = Model::default();
        model.ws.insert("c40".into(), ws(may_crash));
        assert_eq!(
            check(&model, &seen, 7).len(),
            broken,
            "may_crash {may_crash}"
        );
    }
}
