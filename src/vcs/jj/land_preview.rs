//! The one query a jj land asks of its target before changing anything: the commits that
//! would land with their files, and the target working copy's own changes and name.

use std::path::PathBuf;

use super::{workspace_revset, Jj};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::LandTarget;
use crate::vcs::land::{hex_ids, Divergent, LandError, Plan, Result};
use crate::vcs::Commit;

/// Each file a commit changes as `F`, path; a file renamed away counts under its old path
/// too (its content is gone from there).
pub(super) const FILES_TEMPLATE: &str = r#"self.diff().files().map(|f| "F\0" ++ f.path() ++ "\0" ++ if(f.status() == "renamed", "F\0" ++ f.source().path() ++ "\0", "")).join("")"#;

/// Per commit `C`, change id, commit id, conflict flag (`d` added when the change is
/// divergent), subject; for the target's working-copy
/// commit `W`, its workspaces' names, whether workspace `id` is built on it (`1`), its
/// conflict flag and commit id; then each file the commit changes ([`FILES_TEMPLATE`]).
/// Every field ends with NUL, which no path or first line holds.
fn preview_template(id: &WorkspaceId) -> String {
    // Ids hold no quote (layout's id rules): the single-quoted literal is the revset.
    let ws = workspace_revset(id);
    format!(
        r#"if(current_working_copy, "W\0" ++ working_copies ++ "\0" ++ if(self.contained_in('::{ws}'), "1", "0") ++ "\0" ++ if(conflict, "c", "-") ++ "\0" ++ commit_id ++ "\0", "C\0" ++ change_id ++ "\0" ++ commit_id ++ "\0" ++ if(conflict, "c", "-") ++ if(divergent, "d") ++ "\0" ++ description.first_line() ++ "\0") ++ {FILES_TEMPLATE}"#
    )
}

/// One commit of a land as jj lists it.
#[derive(Debug)]
pub(super) struct Landed {
    pub(super) change: String,
    pub(super) commit: Commit,
    pub(super) conflicted: bool,
    /// Whether another visible commit has the same change id.
    pub(super) divergent: bool,
    pub(super) files: Vec<String>,
}

/// What the preview query found: the commits, and the target working copy's names and files.
#[derive(Debug, Default)]
pub(super) struct Preview {
    pub(super) commits: Vec<Landed>,
    pub(super) target_names: Vec<String>,
    /// Whether the workspace is built on the target working-copy commit (a child forked from
    /// it): its working copy then follows that commit instead of the landed ones.
    pub(super) target_in_workspace: bool,
    /// Whether the target working-copy commit has unresolved conflicts, and its id.
    pub(super) target_conflicted: bool,
    pub(super) target_commit: String,
    pub(super) target_files: Vec<String>,
}

/// The target: a revset in the repository `dir` is, as recorded, and whether it is a working
/// copy (then `revset` is `@` of `dir`).
pub(super) struct Place {
    pub(super) revset: String,
    pub(super) recorded: Option<LandTarget>,
    pub(super) dir: PathBuf,
    pub(super) working_copy: bool,
}

impl Jj {
    /// One query from the target's repository (snapshotting its working copy): the commits
    /// that would land, with their files, and the target working copy's own changes.
    pub(super) fn preview(&self, plan: &Plan, place: &Place) -> Result<Preview> {
        let set = land_set(plan.id, plan.base, &place.revset, true);
        let mut call = self.call(&place.dir)?;
        let revset = match place.working_copy {
            true => format!("({set}) | @"),
            false => {
                call = call.arg("--ignore-working-copy");
                set
            }
        };
        let out = call
            .args(["log", "--no-graph", "--reversed", "-T"])
            .arg(preview_template(plan.id))
            .arg(format!("--revisions={revset}"))
            .stdout()
            .map_err(|e| LandError::Preview {
                id: plan.id.clone(),
                source: Box::new(e),
            })?;
        let preview = parse_preview(&out);
        self.refuse_divergent(plan, &preview)?;
        Ok(preview)
    }

    /// Refuses a land of a change that has several visible commits (the same change id
    /// twice: divergent, e.g. after jj commands run at an older operation): the rebase and
    /// every later step find the land's commits by change id, and would take each copy.
    /// Names every commit of each such change and which are outside the workspace's history.
    fn refuse_divergent(&self, plan: &Plan, preview: &Preview) -> Result<()> {
        let changes: Vec<&str> = preview
            .commits
            .iter()
            .filter(|c| c.divergent)
            .map(|c| c.change.as_str())
            .collect();
        if changes.is_empty() {
            return Ok(());
        }
        let ws = workspace_revset(plan.id);
        let out = self
            .query()?
            .args(["log", "--no-graph", "-T"])
            .arg(format!(
                r#"change_id ++ " " ++ commit_id ++ " " ++ if(self.contained_in('::{ws}'), "in", "out") ++ "\n""#
            ))
            .arg(format!("--revisions={}", super::by_change(&changes)))
            .stdout()?;
        let mut found: Vec<Divergent> = vec![];
        for line in out.lines() {
            let mut words = line.split_whitespace();
            let (Some(change), Some(commit), Some(place)) =
                (words.next(), words.next(), words.next())
            else {
                continue;
            };
            let short = |full: &str| full[..full.len().min(12)].to_string();
            let at = match found.iter().position(|d| d.change == short(change)) {
                Some(at) => at,
                None => {
                    found.push(Divergent {
                        change: short(change),
                        ..Divergent::default()
                    });
                    found.len() - 1
                }
            };
            found[at].commits.push(short(commit));
            if place == "out" {
                found[at].outside.push(short(commit));
            }
        }
        Err(LandError::Divergent {
            id: plan.id.clone(),
            ws: plan.ws.to_path_buf(),
            changes: found,
        })
    }
}

/// The workspace's own commits not yet in the target: `::<id>@` but not `::(target | base)`,
/// with its working-copy commit when it holds work (a preview), or without it (once its work
/// was recorded into a commit of its own).
pub(super) fn land_set(
    id: &WorkspaceId,
    base: &[String],
    target: &str,
    with_working_copy: bool,
) -> String {
    let ws = workspace_revset(id);
    let mut stop = vec![target.to_string()];
    stop.extend(hex_ids(base).iter().map(|c| format!("present({c})")));
    let own = format!("(::{ws} ~ ::({}))", stop.join(" | "));
    match with_working_copy {
        true => format!("{own} ~ ({ws} & empty() & description(exact:\"\"))"),
        false => format!("{own} ~ {ws}"),
    }
}

/// Parses [`preview_template`] output.
pub(super) fn parse_preview(text: &str) -> Preview {
    let mut preview = Preview::default();
    let mut fields = text.split('\0');
    // Files go to the last commit, or to the target when it came last.
    let mut to_target = false;
    while let Some(kind) = fields.next() {
        match kind.trim_start_matches('\n') {
            "C" => {
                let mut next = || fields.next().unwrap_or("").to_string();
                let (change, id, flag, subject) = (next(), next(), next(), next());
                preview.commits.push(Landed {
                    commit: Commit {
                        id,
                        change_id: Some(change.clone()),
                        subject,
                    },
                    change,
                    conflicted: flag.starts_with('c'),
                    divergent: flag.ends_with('d'),
                    files: vec![],
                });
                to_target = false;
            }
            "W" => {
                let names = fields.next().unwrap_or("");
                preview.target_names = names.split_whitespace().map(str::to_string).collect();
                preview.target_in_workspace = fields.next() == Some("1");
                preview.target_conflicted = fields.next() == Some("c");
                preview.target_commit = fields.next().unwrap_or("").to_string();
                to_target = true;
            }
            "F" => {
                let path = fields.next().unwrap_or("").to_string();
                match (to_target, preview.commits.last_mut()) {
                    (true, _) => preview.target_files.push(path),
                    (false, Some(commit)) => commit.files.push(path),
                    (false, None) => {}
                }
            }
            _ => {}
        }
    }
    preview
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews() {
        let text = concat!(
            "C\0kx\0ab12\0cd\0fix: a\tb\0F\0a.txt\0F\0sp ace\0",
            "\nW\0default@\0",
            "1\0-\0ef56\0F\0mine.txt\0",
            "\nC\0zz\0cd34\0-\0\0"
        );
        let p = parse_preview(text);
        assert_eq!(p.commits.len(), 2);
        assert!(p.commits[0].conflicted && !p.commits[1].conflicted);
        assert!(p.commits[0].divergent && !p.commits[1].divergent);
        assert_eq!(p.commits[0].commit.subject, "fix: a\tb");
        assert_eq!(p.commits[0].files, ["a.txt", "sp ace"]);
        assert_eq!(p.target_names, ["default@"]);
        assert!(p.target_in_workspace);
        assert!(!p.target_conflicted);
        assert_eq!(p.target_commit, "ef56");
        assert_eq!(p.target_files, ["mine.txt"]);
        assert_eq!(p.commits[1].change, "zz");
        assert!(p.commits[1].files.is_empty());
    }

    #[test]
    fn sets() {
        let base = ["abc".to_string(), "x)|all()".to_string()];
        assert_eq!(
            land_set(&WorkspaceId::parse("w1").unwrap(), &base, "@", false),
            r#"(::"w1"@ ~ ::(@ | present(abc))) ~ "w1"@"#
        );
    }
}
