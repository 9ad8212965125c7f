//! Removing workspaces: `clean <id>`, `clean --landed` and `gc`, whole or killed, and the
//! commits their reports name.

use crate::harness::AW;

use super::oracle::Expect;
use super::proc::{argv, Out};
use super::steps::Mode;
use super::world::World;

impl World<'_> {
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
            if let Some(c) = removal["kept_commit_id"].as_str() {
                self.model.named.insert(c.to_string());
            }
            if let Some(c) = removal["head"]["commit_id"].as_str() {
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
        if !live {
            // A child landed (or whose land conflicted) in a workspace now removed: its land
            // can no longer be checked against a live target, so `status` may say `done`
            // (conservative) or what the land said (jj seeds 3 and 2 at 100 steps).
            for w in self.model.ws.values_mut() {
                if w.parent.as_deref() != Some(id) {
                    continue;
                }
                if w.expect == Expect::Is("landed") {
                    w.expect = Expect::OneOf(&["done", "landed"]);
                } else if w.expect == Expect::Is("conflicted") {
                    w.expect = Expect::OneOf(&["done", "conflicted"]);
                }
            }
        }
        if self.model.last_land.as_ref().is_some_and(|l| l.ws == id) {
            self.model.last_land = None;
        }
    }

    pub(super) fn clean(&mut self, id: &str, mode: Mode) {
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
                    w.half_removed = w.live;
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

    pub(super) fn clean_landed(&mut self) {
        self.log.push("  clean --landed".into());
        let out = self.exec(AW, &argv(&["clean", "--landed", "--json"]), Mode::Finish);
        self.after_removal(&out, "removed");
    }

    pub(super) fn gc(&mut self, mode: Mode) {
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
                        w.half_removed = w.live;
                    }
                    w.expect = Expect::Any;
                }
            }
        }
    }
}
