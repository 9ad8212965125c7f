//! Starting and ending processes: every helper call and the user's command's chain
//! (`process`), signal forwarding, whether a supervisor lives, the `.envrc` trust policy
//! (`direnv`, `envrc_loads`) and bubblewrap (`sandbox`). Names the store and, for `direnv`,
//! the backend; never the lifecycle.

pub mod liveness;
pub mod process;
pub mod sandbox;
pub mod signals;
