//! The user's steps in the main working copy: edits (and deletes of their own lines), commits,
//! rebasing an agent's commits (jj) or amending main's last commit (git), and resolving the
//! conflicts a land left there.

use std::fs;

use crate::backends::Backend;

use super::observe::MARKERS;
use super::oracle::{Expect, Fate, MAIN};
use super::proc::argv;
use super::world::{World, SHARED};

impl World<'_> {
    /// The user appends lines in the main working copy, sometimes deletes one of their own,
    /// and commits most of the time.
    pub(super) fn user_edit(&mut self) {
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
    /// jj: the files jj knows conflicted in `rev` (none if it does not exist).
    fn conflicted_files(&mut self, rev: &str) -> std::collections::BTreeSet<String> {
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
                &format!("present({rev})"),
                "-T",
                "if(conflict, path ++ \"\\n\")",
            ]),
        );
        out.stdout.lines().map(str::to_string).collect()
    }

    pub(super) fn user_rebase(&mut self) {
        match self.backend {
            Backend::Jj => {
                let id = self.pick_live();
                self.rebase_onto_main(&id);
            }
            Backend::Git => {
                self.log.push("  user amends main's last commit".into());
                let repo = self.repo.clone();
                let head = self.cmd(&repo, "git", &argv(&["rev-parse", "HEAD"]));
                let head = head.stdout.trim().to_string();
                // Amending a commit a land brought leaves the workspace's commit no longer
                // an ancestor of main: `status` may say `done` (conservative) or `landed`.
                for w in self.model.ws.values_mut() {
                    if w.expect == Expect::Is("landed") && w.brought.contains(&head) {
                        w.expect = Expect::OneOf(&["done", "landed"]);
                    }
                }
                let n = self.model.token(MAIN);
                self.append(MAIN, "main-amend.txt", n);
                self.model.written(MAIN, n);
                self.cmd(&repo, "git", &argv(&["add", "-A"]));
                self.cmd(
                    &repo,
                    "git",
                    &argv(&["commit", "-q", "--amend", "--no-edit"]),
                );
            }
        }
    }

    /// jj: `jj rebase -b <id>@ -o @-` from the main workspace, undone at once if it conflicts.
    pub(super) fn rebase_onto_main(&mut self, id: &str) {
        self.log
            .push(format!("  user rebases {id}'s commits onto main"));
        let target = format!("{id}@");
        let before = self.conflicted_files(&target);
        let out = self.user_jj(&["rebase", "-b", &target, "-o", "@-"]);
        // jj reports conflicts by commit: a rebase that conflicts more files of a
        // commit already conflicted says nothing of it (jj seed 8 step 136), but
        // the user sees them in `jj log` and undoes it all the same.
        if out.text().to_lowercase().contains("conflict")
            || !self.conflicted_files(&target).is_subset(&before)
        {
            self.user_jj(&["undo"]);
            return;
        }
        // A line of the workspace's that it landed and a `--prefer workspace` land then
        // dropped from main is gone from main's files, on which the workspace now sits (its
        // commit holding the line is in main's history): it no longer has to hold it (jj
        // seed 12 step 2882).
        self.model.sits_on(id, MAIN);
    }

    /// The user resolves the conflicts a land left in the main working copy by keeping every
    /// side's lines (the markers removed), then commits.
    pub(super) fn resolve(&mut self) {
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

/// jj reports a rebase's conflicts by commit: rebasing a workspace's commits, already
/// conflicted in one file, onto a main commit that conflicts with another of their files says
/// nothing of it. The round's user undoes such a rebase as one jj reports (jj seed 8 step
/// 136: the next run's update then showed the new markers no command had reported).
#[test]
fn stress_model_the_user_undoes_a_rebase_that_conflicts_more_files_of_a_conflicted_commit() {
    let env = crate::harness::TestEnv::new();
    let mut world = World::new(&env, Backend::Jj, 8);
    world.agent_run_to_end();
    let id = world.model.live_ws()[0].clone();
    let ws = world.dir(&id);
    let jj = |dir: &std::path::Path, args: &[&str]| {
        let mut full = argv(&["--no-pager", "--color=never"]);
        full.extend(argv(args));
        let out = super::proc::run(&env, dir, "jj", &full);
        assert!(out.ok(), "jj {args:?}: {}", out.stderr);
        out
    };
    fs::write(ws.join("s0.txt"), "workspace 0\n").unwrap();
    fs::write(ws.join("s1.txt"), "workspace 1\n").unwrap();
    jj(&ws, &["commit", "-m", "workspace"]);
    let repo = world.repo.clone();
    fs::write(repo.join("s0.txt"), "main 0\n").unwrap();
    jj(&repo, &["commit", "-m", "main 0"]);
    let target = format!("{id}@");
    jj(&repo, &["rebase", "-b", &target, "-o", "@-"]);
    let before = world.conflicted_files(&target);
    assert!(before.contains("s0.txt"), "{before:?}");
    fs::write(repo.join("s1.txt"), "main 1\n").unwrap();
    jj(&repo, &["commit", "-m", "main 1"]);
    world.user_rebase();
    let after = world.conflicted_files(&target);
    assert_eq!(after, before, "{:?}", world.log);
}
