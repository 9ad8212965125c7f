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
    pub(super) fn user_rebase(&mut self) {
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
