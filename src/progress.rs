//! The progress of a slow step, reported by the lifecycle to whoever shows it (the command
//! layer draws it on a terminal); nothing is shown by default.

/// A part of opening or landing a workspace that can take a while.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The backend writes the new workspace's files.
    CheckingOut,
    /// `copy.include`'s files are copied into it.
    Copying,
    /// The setup command runs in it.
    SettingUp,
    /// A land waits for another land of the repository to finish.
    WaitingToLand,
}

/// Where phases go: a callback given `Some(phase)` when one starts and `None` when nothing
/// slow is under way any more.
#[derive(Default)]
pub(crate) struct Progress(Option<Box<dyn Fn(Option<Phase>) + Send + Sync>>);

impl Progress {
    pub(crate) fn to(show: impl Fn(Option<Phase>) + Send + Sync + 'static) -> Progress {
        Progress(Some(Box::new(show)))
    }

    /// `phase` starts.
    pub(crate) fn report(&self, phase: Phase) {
        if let Some(show) = &self.0 {
            show(Some(phase));
        }
    }

    /// Nothing slow is under way (before something else is printed).
    pub(crate) fn idle(&self) {
        if let Some(show) = &self.0 {
            show(None);
        }
    }
}
