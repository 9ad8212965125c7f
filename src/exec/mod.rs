//! The only place that starts processes: every helper call and the user's command's chain
//! (`process`: the supervisor's side in `child`, the guard's in `guard`), signal forwarding,
//! whether a supervisor lives and a process's descendants (`liveness`), and bubblewrap
//! (`sandbox`). Names the store (the sandbox options a record keeps) and the bottom; never
//! the backend or the lifecycle.

pub(crate) mod classify;
pub(crate) mod liveness;
pub(crate) mod process;
pub(crate) mod sandbox;
pub(crate) mod signals;
