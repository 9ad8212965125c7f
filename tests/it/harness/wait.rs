//! Waiting for something another process does: one poll loop with a deadline, so no test
//! sleeps a fixed time hoping it was enough, nor writes its own loop.

use std::time::{Duration, Instant};

/// How often a condition is asked again.
const EVERY: Duration = Duration::from_millis(10);

/// Asks `check` every 10 ms until it gives `Ok`, and returns its value; after `limit`, fails
/// the test naming `what` was waited for and what `check` saw last (its `Err`).
pub fn eventually<T>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match check() {
            Ok(found) => return found,
            Err(seen) if Instant::now() >= deadline => {
                panic!("waited {limit:?} for {what}, in vain; last seen: {seen}")
            }
            Err(_) => std::thread::sleep(EVERY),
        }
    }
}

/// [`eventually`] for a condition that only holds or not.
pub fn until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    eventually(what, limit, || match check() {
        true => Ok(()),
        false => Err("not yet".into()),
    })
}
