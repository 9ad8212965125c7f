//! Whether a killed command left anything for the next one to settle, answered without
//! listing the namespace's directories when they are as they were the last time nothing was
//! left (`<namespace>/.cache/settled.v1`).
//!
//! What a killed command leaves: a creation's journal `.state/<id>.creating`, a removal's
//! `.state/<id>.removing`, a repair's copy `<namespace>/.recovering-<id>/` and a take of a
//! prepared workspace `.pool/<token>.taking`. Each is made in one of three directories (the
//! namespace, `.state`, `.pool`), which changes that directory's stamp. While all three
//! stamps are those noted when nothing of the kind was there, nothing is: the three listings
//! (thousands of names in a namespace of a thousand workspaces) are left out. A stamp is
//! noted only once it had settled ([`Stamp::settled`]: a second change in the same clock
//! tick could leave it alike), and the stamps are taken before the listings, so an entry
//! made in between changes them.

use std::path::Path;
use std::time::SystemTime;

use crate::store::cache::Cache;
use crate::store::fsutil;
use crate::store::layout::POOL_DIR;
use crate::store::stamp::{open_dir, Stamp};
use crate::store::state::DIR_NAME as STATE_DIR;
use crate::workspace::context::Context;

/// The note's name in the namespace's cache directory (the version is its header's).
const FILE_NAME: &str = "settled.v1";

/// Whether nothing is left to settle in the namespace of `ctx` (true), or something may be
/// (false: the caller settles as before). Notes the answer when it can.
pub(crate) fn nothing_left(ctx: &Context) -> bool {
    let began = SystemTime::now();
    let Ok(dir) = open_dir(&ctx.layout.dir) else {
        // No namespace yet: nothing was left in it.
        return !ctx.layout.dir.exists();
    };
    let stamps = [".", STATE_DIR, POOL_DIR].map(|name| Stamp::at(&dir, name));
    let note = key(&stamps);
    let file = Cache::new(ctx.layout.cache().join(FILE_NAME), "settled", 2);
    if file.get(note.as_bytes()).is_some() {
        return true;
    }
    if anything_left(&ctx.layout.dir) {
        return false;
    }
    let settled = stamps.iter().flatten().all(|s| s.settled(began));
    if settled && fsutil::create_dir_nofollow(&ctx.layout.cache()).is_ok() {
        let _ = file.put(note.as_bytes(), b"");
    }
    true
}

/// Whether the namespace at `dir` holds anything a killed command leaves.
fn anything_left(dir: &Path) -> bool {
    let creating = super::create::journal::SUFFIX;
    let removing = super::remove::JOURNAL_SUFFIX;
    let journal = |name: &str| (name.ends_with(creating) || name.ends_with(removing)).then_some(());
    !fsutil::names_where(&dir.join(STATE_DIR), journal).is_empty()
        || !fsutil::names_where(dir, |name| name.starts_with(".recovering-").then_some(()))
            .is_empty()
        || !fsutil::names_where(&dir.join(POOL_DIR), |name| {
            name.ends_with(".taking").then_some(())
        })
        .is_empty()
}

/// The note's key for `stamps`: this build's version, then the stamps (`null` for no
/// directory).
fn key(stamps: &[Option<Stamp>; 3]) -> String {
    let stamps = serde_json::to_string(stamps).unwrap_or_default();
    format!("{}\n{stamps}", env!("CARGO_PKG_VERSION"))
}
