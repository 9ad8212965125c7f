//! One agent-workspace command the server starts for a tool call: its output read as it
//! comes (bounded, or copied whole into a log), progress said while it runs, and a client's
//! cancellation or the call's timeout turned into the SIGINT a Ctrl-C would send.

use std::collections::VecDeque;
use std::io::Write;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

/// How much output a run's result carries unless the call says (the rest is in its log).
pub(in crate::cli) const OUTPUT_DEFAULT: usize = 16 << 10;

/// The most output a call may ask for.
pub(in crate::cli) const OUTPUT_LIMIT: usize = 256 << 10;

/// How long the readers may outlive the command: a process that escaped the run's guard and
/// still holds a pipe must not keep the tool call open.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// One stream's output: its last `limit` bytes (all of it without a limit) and how much came.
#[derive(Default)]
pub(in crate::cli) struct Captured {
    pub bytes: Vec<u8>,
    pub total: u64,
}

impl Captured {
    /// Whether bytes were dropped to keep within the limit.
    pub(in crate::cli) fn truncated(&self) -> bool {
        self.total > self.bytes.len() as u64
    }

    /// How many bytes were dropped from its start.
    pub(in crate::cli) fn cut(&self) -> u64 {
        self.total.saturating_sub(self.bytes.len() as u64)
    }

    pub(in crate::cli) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// Keeps at most the last `limit` bytes, from a character's start (a UTF-8 text cut
    /// mid-way, here or while it was read, starts at the next character).
    fn keep_last(&mut self, limit: usize) {
        let from = self.bytes.len().saturating_sub(limit);
        if from == 0 && !self.truncated() {
            return;
        }
        let skip = self.bytes[from..]
            .iter()
            .take(3)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        self.bytes.drain(..from + skip);
    }
}

/// Both streams within `limit` bytes together, each keeping its end: a stream that fits in
/// half is given whole, the other the rest.
pub(in crate::cli) fn within(
    mut stdout: Captured,
    mut stderr: Captured,
    limit: usize,
) -> (Captured, Captured) {
    let (out, err) = (stdout.bytes.len(), stderr.bytes.len());
    let half = limit / 2;
    let (out_share, err_share) = match (out <= half, err <= half) {
        _ if out + err <= limit => (out, err),
        (true, _) => (out, limit - out),
        (_, true) => (limit - err, err),
        _ => (limit - half, half),
    };
    stdout.keep_last(out_share);
    stderr.keep_last(err_share);
    (stdout, stderr)
}

/// Why the server ended a command before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::cli) enum Stopped {
    Cancelled,
    TimedOut,
}

/// How a command ended.
pub(in crate::cli) struct Finished {
    /// Its exit code, or 128 + the signal that killed it.
    pub code: i32,
    pub stdout: Captured,
    pub stderr: Captured,
    pub stopped: Option<Stopped>,
}

/// What a started command reports to, and how it may be ended.
pub(in crate::cli) struct Watch<'a> {
    pub context: &'a RequestContext<RoleServer>,
    /// Becomes true when the client closed the connection (the server's stdin ended).
    pub closed: tokio::sync::watch::Receiver<bool>,
    /// Keep only the last this many bytes of each stream.
    pub limit: Option<usize>,
    /// Where both streams are copied whole, as they come.
    pub log: Option<std::fs::File>,
    pub timeout: Option<Duration>,
    /// Whether a cancelled call interrupts the command (a `run`, which ends as Ctrl-C ends
    /// it); the other commands are left to finish, their answer unread, so a land or a
    /// clean is never cut short.
    pub interruptible: bool,
    /// What the progress notifications say is running.
    pub subject: String,
    /// Housekeeping done once the command has started (while it runs, rather than before).
    pub after_start: Option<Box<dyn FnOnce() + Send + 'a>>,
}

/// The server's stdin, which says when it ends: the client closed the connection, and the
/// runs under way are interrupted (rmcp would otherwise wait for their calls to finish).
pub(in crate::cli) struct Stdin {
    pub inner: rmcp::transport::StdioReader,
    pub closed: tokio::sync::watch::Sender<bool>,
}

impl AsyncRead for Stdin {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        let ended = match &polled {
            std::task::Poll::Ready(Ok(())) => buf.filled().len() == before,
            std::task::Poll::Ready(Err(_)) => true,
            std::task::Poll::Pending => false,
        };
        if ended {
            self.closed.send_replace(true);
        }
        polled
    }
}

/// Sends SIGINT to a command still running when its call goes away (the client cancelled
/// or disconnected and the call's future was dropped): the command then ends its run as a
/// Ctrl-C would, recording it interrupted.
struct Interrupt {
    pid: Option<i32>,
}

impl Interrupt {
    fn send(&self) {
        // pid is our own child, not yet reaped (cleared once waited for), so it cannot name
        // another process.
        if let Some(pid) = self.pid.and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        }
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        self.send();
    }
}

/// Starts `command` (stdin from /dev/null: the server's stdin is the protocol) and waits for
/// it, reading its output, reporting progress each second when the client asked for it, and
/// interrupting it on cancellation or timeout.
pub(in crate::cli) async fn run(
    mut command: Command,
    watch: Watch<'_>,
) -> std::io::Result<Finished> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn()?;
    let mut interrupt = Interrupt {
        pid: child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .filter(|_| watch.interruptible),
    };
    let log = watch.log.map(|f| Arc::new(Mutex::new(f)));
    let counted = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let out = tokio::spawn(capture(
        child.stdout.take(),
        watch.limit,
        log.clone(),
        counted.clone(),
    ));
    let err = tokio::spawn(capture(
        child.stderr.take(),
        watch.limit,
        log,
        counted.clone(),
    ));
    if let Some(after_start) = watch.after_start {
        after_start();
    }
    let token = watch.context.meta.get_progress_token();
    let started = Instant::now();
    let deadline = watch.timeout.map(|t| tokio::time::Instant::now() + t);
    // The first tick a second from now (an interval's immediate first tick would wake the
    // server for nothing).
    let second = Duration::from_secs(1);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + second, second);
    let mut stopped = None;
    let mut closed = watch.closed.clone();
    let status: ExitStatus = loop {
        tokio::select! {
            status = child.wait() => break status?,
            () = watch.context.ct.cancelled(), if stopped.is_none() && watch.interruptible => {
                interrupt.send();
                stopped = Some(Stopped::Cancelled);
            }
            () = until_closed(&mut closed), if stopped.is_none() && watch.interruptible => {
                interrupt.send();
                stopped = Some(Stopped::Cancelled);
            }
            () = sleep_until(deadline), if stopped.is_none() && deadline.is_some() => {
                interrupt.send();
                stopped = Some(Stopped::TimedOut);
            }
            _ = tick.tick(), if token.is_some() => {
                progress(watch.context, token.as_ref(), started, &counted, &watch.subject).await;
            }
        }
    };
    interrupt.pid = None;
    let stdout = drain(out).await;
    let stderr = drain(err).await;
    Ok(Finished {
        code: code(status),
        stdout,
        stderr,
        stopped,
    })
}

/// Resolves when the client closed the connection (never if that cannot be known).
async fn until_closed(closed: &mut tokio::sync::watch::Receiver<bool>) {
    if closed.wait_for(|c| *c).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// One progress notification: the seconds the command has run and the output it gave.
async fn progress(
    context: &RequestContext<RoleServer>,
    token: Option<&ProgressToken>,
    started: Instant,
    counted: &std::sync::atomic::AtomicU64,
    subject: &str,
) {
    let Some(token) = token else { return };
    let seconds = started.elapsed().as_secs();
    let bytes = counted.load(std::sync::atomic::Ordering::Relaxed);
    let mut note = ProgressNotificationParam::new(token.clone(), seconds as f64);
    note.message = Some(format!(
        "{subject}: running for {seconds} s, {bytes} bytes of output"
    ));
    // A client that stopped listening to progress is no reason to stop the command.
    let _ = context.peer.notify_progress(note).await;
}

/// What a reader task kept, waiting at most [`DRAIN_GRACE`] for it.
async fn drain(task: tokio::task::JoinHandle<Captured>) -> Captured {
    let abort = task.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok(captured)) => captured,
        Ok(Err(_)) => Captured::default(),
        Err(_) => {
            abort.abort();
            Captured::default()
        }
    }
}

/// Reads `stream` to its end, keeping its tail within `limit` and copying it into `log`.
async fn capture(
    stream: Option<impl AsyncRead + Unpin>,
    limit: Option<usize>,
    log: Option<Arc<Mutex<std::fs::File>>>,
    counted: Arc<std::sync::atomic::AtomicU64>,
) -> Captured {
    let Some(mut stream) = stream else {
        return Captured::default();
    };
    let mut kept: VecDeque<u8> = VecDeque::new();
    let mut total = 0u64;
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        total += n as u64;
        counted.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        if let Some(log) = &log {
            if let Ok(mut file) = log.lock() {
                // A full disk loses the log's copy, never the run: the tail is still kept.
                let _ = file.write_all(&buf[..n]);
            }
        }
        kept.extend(&buf[..n]);
        if let Some(limit) = limit {
            let over = kept.len().saturating_sub(limit);
            kept.drain(..over);
        }
    }
    Captured {
        bytes: kept.into(),
        total,
    }
}

/// The exit code as a shell reports it: the code, or 128 + the signal.
fn code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::{within, Captured};

    fn captured(text: &str) -> Captured {
        Captured {
            bytes: text.as_bytes().to_vec(),
            total: text.len() as u64,
        }
    }

    #[test]
    fn both_streams_share_the_limit_each_keeping_its_end() {
        let (out, err) = within(captured("0123456789"), captured("ab"), 6);
        assert_eq!((out.text().as_str(), err.text().as_str()), ("6789", "ab"));
        assert_eq!((out.cut(), err.cut()), (6, 0));
        let (out, err) = within(captured("0123456789"), captured("abcdefgh"), 6);
        assert_eq!((out.text().as_str(), err.text().as_str()), ("789", "fgh"));
        let (out, err) = within(captured("0123"), captured("ab"), 6);
        assert_eq!((out.cut(), err.cut()), (0, 0));
    }

    /// A cut never starts inside a character.
    #[test]
    fn a_cut_starts_at_a_character() {
        let (out, _) = within(captured("aéé"), captured(""), 3);
        assert_eq!(out.text(), "é");
        assert_eq!(out.cut(), 3);
        // Cut mid-character while it was read: it starts at the next one.
        let read = Captured {
            bytes: "éa".as_bytes()[1..].to_vec(),
            total: 10,
        };
        let (out, _) = within(read, captured(""), 100);
        assert_eq!(out.text(), "a");
        assert_eq!(out.cut(), 9);
    }
}
