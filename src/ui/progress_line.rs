//! The progress line on stderr while a slow step works (checking a new workspace's files out,
//! copying `copy.include`'s files, running the setup): on a terminal only, shown after a short
//! delay so a quick step never flashes, redrawn by a thread with the seconds so far, and
//! erased (`\r`, clear line) as soon as the step ends, before anything else is printed.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::progress::{Phase, Progress};

/// How long a step runs before its line appears.
const DELAY: Duration = Duration::from_millis(250);
/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(100);
const SPINNER: [char; 4] = ['-', '\\', '|', '/'];
const ERASE: &str = "\r\x1b[K";

/// What a phase is doing, as the line says it.
fn doing(phase: Phase) -> &'static str {
    match phase {
        Phase::CheckingOut => "checking out files",
        Phase::Copying => "copying copy.include's files",
        Phase::SettingUp => "running the setup command",
        Phase::WaitingToLand => "waiting for another land of this repository to finish",
    }
}

/// The line of one command. Dropping it erases it. Without a terminal it draws nothing, and
/// says once, on a line of its own, only a wait for another party (nothing else is worth a
/// line in a log).
pub(crate) struct ProgressLine {
    subject: String,
    shared: Option<Arc<Shared>>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

struct State {
    subject: String,
    /// The phase under way and when the current stretch of phases began.
    phase: Option<(Phase, Instant)>,
    shown: bool,
    finished: bool,
}

impl ProgressLine {
    /// A line about `subject` (such as `workspace w`), drawn on stderr if it is a terminal.
    pub(crate) fn on_stderr(subject: &str) -> ProgressLine {
        if !std::io::stderr().is_terminal() {
            return ProgressLine {
                subject: subject.to_string(),
                shared: None,
                thread: None,
            };
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                subject: subject.to_string(),
                phase: None,
                shown: false,
                finished: false,
            }),
            wake: Condvar::new(),
        });
        let drawer = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || drawer.draw_until_finished())
            .ok();
        ProgressLine {
            subject: subject.to_string(),
            shared: thread.is_some().then_some(shared),
            thread,
        }
    }

    /// The hook the lifecycle reports its phases to (`Context::progress`).
    pub(crate) fn progress(&self) -> Progress {
        match &self.shared {
            Some(shared) => {
                let shared = Arc::clone(shared);
                Progress::to(move |phase| shared.set(phase))
            }
            None => {
                let subject = self.subject.clone();
                let said = std::sync::atomic::AtomicBool::new(false);
                Progress::to(move |phase| {
                    let wait = phase == Some(Phase::WaitingToLand);
                    if wait && !said.swap(true, std::sync::atomic::Ordering::Relaxed) {
                        write_err(&format!("{subject}: {}...\n", doing(Phase::WaitingToLand)));
                    }
                })
            }
        }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        if let Some(shared) = &self.shared {
            let mut state = shared.lock();
            state.finished = true;
            erase(&mut state);
            shared.wake.notify_all();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A phase starts, or (`None`) nothing is under way: the line is erased at once.
    fn set(&self, phase: Option<Phase>) {
        let mut state = self.lock();
        match (phase, state.phase) {
            (Some(phase), Some((_, since))) => state.phase = Some((phase, since)),
            (Some(phase), None) => state.phase = Some((phase, Instant::now())),
            (None, _) => {
                state.phase = None;
                erase(&mut state);
            }
        }
        self.wake.notify_all();
    }

    fn draw_until_finished(&self) {
        let mut state = self.lock();
        let mut frame = 0;
        while !state.finished {
            if let Some((phase, since)) = state.phase.filter(|(_, s)| s.elapsed() >= DELAY) {
                let line = format!(
                    "{ERASE}{} {}: {}... {}s",
                    SPINNER[frame % SPINNER.len()],
                    state.subject,
                    doing(phase),
                    since.elapsed().as_secs()
                );
                state.shown = write_err(&line);
                frame += 1;
            }
            state = match self.wake.wait_timeout(state, TICK) {
                Ok((state, _)) => state,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

fn erase(state: &mut State) {
    if state.shown {
        write_err(ERASE);
        state.shown = false;
    }
}

/// Writes to stderr; whether it worked.
fn write_err(text: &str) -> bool {
    let mut stderr = std::io::stderr().lock();
    stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush())
        .is_ok()
}
