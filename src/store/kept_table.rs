//! `status`'s table kept whole (`<namespace>/.cache/table.v2`): every row's cells but its
//! UPDATED time, with what each row and the table stand on, so that a namespace where nothing
//! changed costs one `stat` a workspace and laying the rows out, instead of reading,
//! reconciling and measuring every record again.
//!
//! What the kept table stands on, each compared before it is used (any difference: the table
//! is made anew from the files and kept again):
//! - each row's agent-writable view `<id>/.agent-workflow.json`, by device, inode, size,
//!   modification and change times, as the kept records ([`crate::store::summary`]) are;
//! - the state directory `.state`, by the same stamp: agent-workspace writes every state
//!   whole, by rename ([`crate::store::state::write`]), and any state added, removed or
//!   replaced changes its directory. While that stamp is as kept, no state is looked at;
//!   when it moved, each row's state `.state/<id>.json` is compared by its own stamp. (A state
//!   edited in place by hand, which agent-workspace never does, is seen once anything else
//!   the table stands on changes, or by `status --json` and `status <ID>`, which read every
//!   record from its files);
//! - the namespace directory, its `.locks` and `.pool` directories, by the same stamp: a
//!   workspace directory added, removed, renamed or replaced, a lease taken for the first
//!   time or dropped, a prepared workspace being taken, each changes its directory;
//! - the repository's operation heads (jj): while they are the same, so is jj's view (an
//!   operation id names its view), hence which workspaces jj knows, their working-copy
//!   commits and the answers kept under them. When they moved, the table stands only if jj's
//!   working copies (every name and commit) are still those kept, and no row shows a land
//!   (whether a land still holds depends on the whole repository)
//!   (`table.v2.same-view` notes the latest heads found to have the working copies of those
//!   a table was made at, so that they are compared once);
//! - this build's version.
//!
//! Nothing is kept from a file that changed less than [`crate::store::summary::settled`]'s
//! 2 s before the command began (a second change in the same clock tick could leave its
//! times alike). The caller keeps only tables that depend on nothing else: no run that may
//! be live, no land under way, no problem that needs the backend's recorded paths, no
//! changes that could not be read.
//!
//! The file is text, one item a line, fields separated by tabs, free text escaped (`\\`,
//! `\t`, `\n`), ending with an `end` line: a file cut short or damaged in any way is not
//! read, and is written anew.

use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::store::summary::{self, Stamp};

/// The file's name in the namespace's cache directory; the version is in the name.
pub(crate) const FILE_NAME: &str = "table.v2";

/// The first line: what the file is, and the build that wrote it.
fn first_line() -> String {
    format!(
        "agent-workspace status table\t{}",
        env!("CARGO_PKG_VERSION")
    )
}

/// One row: its workspace id, the stamps of its two files, its line as shown up to the
/// UPDATED column, the moment UPDATED counts from, and its hint (for a problem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row<'a> {
    pub id: Cow<'a, str>,
    pub state: Option<Stamp>,
    pub view: Option<Stamp>,
    pub line: Cow<'a, str>,
    pub updated: Option<SystemTime>,
    pub hint: Option<Cow<'a, str>>,
    /// A run recorded as running: its supervisor's process id and start, and whether the
    /// row shows it ended (`crashed`). Looked at again each time: a process can die
    /// without any file changing.
    pub run: Option<Run>,
}

/// A file's stamp as the table keeps it (each row's two, and the directories'): its seven
/// numbers in hexadecimal joined by commas, or `-` for no file. A row's stamps are compared
/// as text: the file's stamp now is written the same way and compared byte for byte with the
/// kept one, never parsed (the directories' four are read back once, with the head).
#[derive(Clone, Copy)]
pub(crate) struct StampText {
    bytes: [u8; STAMP_TEXT_MAX],
    len: usize,
}

/// Seven numbers of at most sixteen digits, and six commas.
const STAMP_TEXT_MAX: usize = 7 * 17 - 1;

impl StampText {
    pub(crate) fn of(stamp: Option<&Stamp>) -> StampText {
        let mut out = StampText {
            bytes: [0; STAMP_TEXT_MAX],
            len: 0,
        };
        let Some(stamp) = stamp else {
            out.bytes[0] = b'-';
            out.len = 1;
            return out;
        };
        for (i, n) in stamp.iter().enumerate() {
            if i > 0 {
                out.bytes[out.len] = b',';
                out.len += 1;
            }
            // As the bits of an unsigned number (a negative one, which no stamp holds, too).
            let n = *n as u64;
            let digits = (64 - n.leading_zeros() as usize).div_ceil(4).max(1);
            out.bytes[out.len..out.len + digits].copy_from_slice(&hex_digits(n)[16 - digits..]);
            out.len += digits;
        }
        out
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The stamp `text` stands for, as [`StampText::of`] writes it (`None` inside: no file).
    fn decode(text: &[u8]) -> Option<Option<Stamp>> {
        if text == b"-" {
            return Some(None);
        }
        let mut stamp: Stamp = [0; 7];
        let mut parts = text.split(|&b| b == b',');
        for n in &mut stamp {
            let part = parts.next()?;
            (!part.is_empty() && part.len() <= 16).then_some(())?;
            *n = u64::from_str_radix(std::str::from_utf8(part).ok()?, 16).ok()? as i64;
        }
        parts.next().is_none().then_some(Some(stamp))
    }
}

/// The sixteen hexadecimal digits of `n`, most significant first, computed for all sixteen
/// at once (a row's stamp is written this way on every `status`, for every workspace).
fn hex_digits(n: u64) -> [u8; 16] {
    const fn each_byte(b: u8) -> u128 {
        u128::from_ne_bytes([b; 16])
    }
    // Each nibble into the low half of a byte of its own: nibble k in byte k.
    let mut x = u128::from(n);
    x = (x | (x << 32)) & 0x0000_0000_ffff_ffff_0000_0000_ffff_ffff;
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff_0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff_00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & each_byte(0x0f);
    // '0' + v, and 'a' - '0' - 10 more where v > 9 (v + 6 then carries into bit 4).
    let letters = ((x + each_byte(6)) >> 4) & each_byte(1);
    (x + each_byte(b'0') + letters * u128::from(b'a' - b'0' - 10)).to_be_bytes()
}

/// A run a row shows as live or as ended, by its process (see [`Row::run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub pid: Option<u32>,
    pub start: Option<u64>,
    pub ended: bool,
}

/// A kept table: what it stands on, and its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table<'a> {
    pub head: Head,
    pub rows: Vec<Row<'a>>,
}

/// What a kept table stands on, and what it shows besides its rows (read before them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    /// The operation heads it was made at.
    pub heads: String,
    /// The namespace, `.locks` and `.pool` directories' stamps.
    pub dirs: [Option<Stamp>; 3],
    /// The state directory's stamp, when it had settled: while it is the same, no state was
    /// added, removed or replaced in it (agent-workspace writes states by rename), so no
    /// row's state is looked at.
    pub state_dir: Option<Stamp>,
    /// Whether some row shows a land (it then stands only at the same operation heads).
    pub lands: bool,
    /// Whether the note on `*` follows it.
    pub behind: bool,
    /// Whether its header and lines are printable ASCII (its UPDATED cells always are):
    /// printed as they are, with no escape to strip.
    pub plain: bool,
    /// The widest UPDATED column its lines stand for (`None`: any).
    pub room: Option<usize>,
    /// The header line up to UPDATED.
    pub header: String,
    /// jj's working copies at `heads` (name and commit, sorted by name), as
    /// [`working_copies_text`] writes them: compared as text, only when the heads moved.
    pub working_copies: String,
}

/// The namespace's open directories, to stamp its files relative to.
pub(crate) struct Dirs {
    namespace: OwnedFd,
    state: Option<OwnedFd>,
}

impl Dirs {
    /// The namespace at `namespace` opened; `None` when it (or its state directory, when
    /// there is one) cannot be.
    pub(crate) fn open(namespace: &Path) -> Option<Dirs> {
        let state = match summary::open_dir(&namespace.join(crate::store::state::DIR_NAME)) {
            Err(rustix::io::Errno::NOENT) => None,
            Err(_) => return None,
            Ok(dir) => Some(dir),
        };
        Some(Dirs {
            namespace: summary::open_dir(namespace).ok()?,
            state,
        })
    }

    /// The stamps of the namespace directory, its `.locks` and its `.pool`.
    pub(crate) fn stamps(&self) -> [Option<Stamp>; 3] {
        [
            summary::stamp(&self.namespace, "."),
            summary::stamp(&self.namespace, ".locks"),
            summary::stamp(&self.namespace, crate::store::layout::POOL_DIR),
        ]
    }

    /// The stamp of the state directory (none when there is none).
    pub(crate) fn state_stamp(&self) -> Option<Stamp> {
        summary::stamp(self.state.as_ref()?, ".")
    }

    /// The stamps of workspace `id`'s state (not looked at, and none, when `no_state`) and
    /// view; `name` is a buffer to build the names in.
    pub(crate) fn row(
        &self,
        id: &str,
        no_state: bool,
        name: &mut String,
    ) -> (Option<Stamp>, Option<Stamp>) {
        let state = match (no_state, &self.state) {
            (false, Some(dir)) => {
                name.clear();
                name.push_str(id);
                name.push_str(".json");
                summary::stamp(dir, name)
            }
            _ => None,
        };
        name.clear();
        name.push_str(id);
        name.push('/');
        name.push_str(crate::store::metadata::FILE_NAME);
        (state, summary::stamp(&self.namespace, name))
    }
}

/// The table kept in the cache directory `cache`, to read with [`Reader`] (`None`: there is
/// none, or not a regular file).
pub(crate) fn open(cache: &Path) -> Option<Reader<impl BufRead>> {
    let file = crate::store::fsutil::open_existing_nofollow(&cache.join(FILE_NAME)).ok()?;
    // Read a piece at a time: the pages of one buffer serve every row (a table of a thousand
    // rows is read on every `status`).
    Some(Reader::new(std::io::BufReader::with_capacity(
        64 << 10,
        file.take(crate::store::fsutil::UNTRUSTED_LIMIT),
    )))
}

/// Keeps `table` in the cache directory `cache` (written whole, by rename); a table that
/// cannot be written is simply not kept.
pub(crate) fn write(cache: &Path, table: &Table<'_>) {
    if crate::store::fsutil::create_dir_nofollow(cache).is_ok() {
        let _ = crate::store::fsutil::write_atomic(&cache.join(FILE_NAME), text(table).as_bytes());
    }
}

/// The file that names the latest operation heads known to have the same working copies as
/// those a kept table was made at.
const SAME_VIEW: &str = "table.v2.same-view";

/// Whether jj's working copies at operation heads `now` are known (from the cache directory
/// `cache`) to be those at `made_at`: a fact about two operations' views, which never change.
pub(crate) fn same_view(cache: &Path, made_at: &str, now: &str) -> bool {
    let Ok(text) = crate::store::fsutil::read_untrusted(&cache.join(SAME_VIEW), 64 << 10) else {
        return false;
    };
    text.strip_prefix(made_at.as_bytes())
        .and_then(|rest| rest.strip_prefix(b"\n"))
        .and_then(|rest| rest.strip_prefix(now.as_bytes()))
        .is_some_and(|rest| rest == b"\n")
}

/// Notes in the cache directory `cache` that jj's working copies at operation heads `now`
/// are those at `made_at` (see [`same_view`]).
pub(crate) fn note_same_view(cache: &Path, made_at: &str, now: &str) {
    let text = format!("{made_at}\n{now}\n");
    let _ = crate::store::fsutil::write_atomic(&cache.join(SAME_VIEW), text.as_bytes());
}

/// Removes the kept table of the cache directory `cache` (it no longer stands).
pub(crate) fn forget(cache: &Path) {
    let _ = std::fs::remove_file(cache.join(FILE_NAME));
}

/// Whether every one of `stamps` was settled when the command began at `began`.
pub(crate) fn settled<'s>(
    mut stamps: impl Iterator<Item = &'s Option<Stamp>>,
    began: SystemTime,
) -> bool {
    stamps.all(|s| s.as_ref().is_none_or(|s| summary::settled(s, began)))
}

fn text(table: &Table<'_>) -> String {
    use std::fmt::Write as _;
    let mut out = first_line();
    out.push('\n');
    let stamp = |out: &mut String, stamp: &Option<Stamp>| {
        // Hexadecimal digits, commas or a dash.
        let text = StampText::of(stamp.as_ref());
        out.push_str(std::str::from_utf8(text.as_bytes()).unwrap_or_default());
    };
    out.push_str("heads\t");
    escape(&mut out, &table.head.heads);
    out.push_str("\ndirs");
    for dir in &table.head.dirs {
        out.push('\t');
        stamp(&mut out, dir);
    }
    out.push_str("\nstate\t");
    stamp(&mut out, &table.head.state_dir);
    let flag = |b: bool| if b { "1" } else { "0" };
    let _ = write!(
        out,
        "\nflags\t{}\t{}\t{}\t",
        flag(table.head.lands),
        flag(table.head.behind),
        flag(table.head.plain)
    );
    match table.head.room {
        Some(room) => {
            let _ = write!(out, "{room}");
        }
        None => out.push('-'),
    }
    out.push_str("\nheader\t");
    escape(&mut out, &table.head.header);
    out.push('\n');
    out.push_str(&table.head.working_copies);
    for row in &table.rows {
        out.push_str("row\t");
        escape(&mut out, &row.id);
        for row_stamp in [&row.state, &row.view] {
            out.push('\t');
            stamp(&mut out, row_stamp);
        }
        out.push('\t');
        match row
            .updated
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        {
            Some(d) => {
                let _ = write!(out, "{},{}", d.as_secs(), d.subsec_nanos());
            }
            None => out.push('-'),
        }
        // `-` for no hint, else the hint after a `+`.
        out.push('\t');
        match &row.hint {
            Some(hint) => {
                out.push('+');
                escape(&mut out, hint);
            }
            None => out.push('-'),
        }
        // `-` for no run, else `<pid or ->,<start or ->,<1 ended | 0 live>`.
        out.push('\t');
        match &row.run {
            Some(run) => {
                let opt = |out: &mut String, n: Option<u64>| match n {
                    Some(n) => {
                        let _ = write!(out, "{n}");
                    }
                    None => out.push('-'),
                };
                opt(&mut out, run.pid.map(u64::from));
                out.push(',');
                opt(&mut out, run.start);
                out.push_str(if run.ended { ",1" } else { ",0" });
            }
            None => out.push('-'),
        }
        out.push('\t');
        escape(&mut out, &row.line);
        out.push('\n');
    }
    out.push_str("end\n");
    out
}

/// One row as read, borrowed from the line it was read from; its stamps as kept
/// ([`StampText`]).
#[derive(Debug)]
pub(crate) struct RowRead<'a> {
    pub id: Cow<'a, str>,
    pub state: &'a [u8],
    pub view: &'a [u8],
    pub line: Cow<'a, str>,
    pub updated: Option<SystemTime>,
    pub hint: Option<Cow<'a, str>>,
    pub run: Option<Run>,
}

/// A kept table read a line at a time: its [`Head`], its working copies, then its rows.
/// Anything damaged or cut short reads as `None`: the table is then made anew.
pub(crate) struct Reader<R> {
    input: R,
    /// A line that did not lie whole in `input`'s buffer, copied here.
    line: Vec<u8>,
    /// Where the line last given is: the first `n` bytes of `input`'s buffer (its newline
    /// included; consumed when the next line is read), or `line`.
    last: Last,
    /// Whether the line last given is to be given again.
    pending: bool,
}

#[derive(Clone, Copy)]
enum Last {
    Nothing,
    Buffer(usize),
    Copied,
}

impl<R: BufRead> Reader<R> {
    pub(crate) fn new(input: R) -> Reader<R> {
        Reader {
            input,
            line: Vec::with_capacity(512),
            last: Last::Nothing,
            pending: false,
        }
    }

    /// The next line, without its newline (a last line without one is not given). A line
    /// that lies whole in the input's buffer is given from there, not copied.
    fn next_line(&mut self) -> Option<&[u8]> {
        if !self.pending {
            if let Last::Buffer(n) = std::mem::replace(&mut self.last, Last::Nothing) {
                self.input.consume(n);
            }
            let buffer = self.input.fill_buf().ok()?;
            self.last = match memchr::memchr(b'\n', buffer) {
                Some(at) => Last::Buffer(at + 1),
                None => {
                    self.line.clear();
                    self.input.read_until(b'\n', &mut self.line).ok()?;
                    (self.line.pop() == Some(b'\n')).then_some(())?;
                    Last::Copied
                }
            };
        }
        self.pending = false;
        match self.last {
            Last::Nothing => None,
            Last::Copied => Some(&self.line),
            // Still the front of the buffer: nothing was consumed since.
            Last::Buffer(n) => Some(&self.input.fill_buf().ok()?[..n - 1]),
        }
    }

    /// What the table stands on: every line before its working copies, which
    /// [`Reader::working_copies`] reads next (`Head::working_copies` is left empty).
    pub(crate) fn head(&mut self) -> Option<Head> {
        (self.next_line()? == first_line().as_bytes()).then_some(())?;
        let heads = unescape(self.next_line()?.strip_prefix(b"heads\t")?)?.into_owned();
        let mut dirs_line = self
            .next_line()?
            .strip_prefix(b"dirs\t")?
            .split(|&b| b == b'\t');
        let mut dirs = [None; 3];
        for dir in &mut dirs {
            *dir = StampText::decode(dirs_line.next()?)?;
        }
        dirs_line.next().is_none().then_some(())?;
        let state_dir = StampText::decode(self.next_line()?.strip_prefix(b"state\t")?)?;
        let mut flags = utf8(self.next_line()?.strip_prefix(b"flags\t")?)?.split('\t');
        let mut flag = || match flags.next()? {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        };
        let (lands, behind, plain) = (flag()?, flag()?, flag()?);
        let room = match flags.next()? {
            "-" => None,
            n => Some(n.parse().ok()?),
        };
        flags.next().is_none().then_some(())?;
        let header = unescape(self.next_line()?.strip_prefix(b"header\t")?)?.into_owned();
        Some(Head {
            heads,
            dirs,
            state_dir,
            lands,
            behind,
            plain,
            room,
            header,
            working_copies: String::new(),
        })
    }

    /// The working copies kept (every line after the head that starts with `wc`, as
    /// text), read after [`Reader::head`]; without `keep`, passed over (an empty text):
    /// they are compared only when the operation heads moved.
    pub(crate) fn working_copies(&mut self, keep: bool) -> Option<String> {
        let mut working_copies = String::new();
        loop {
            let line = self.next_line()?;
            if !line.starts_with(b"wc\t") {
                break;
            }
            if keep {
                working_copies.push_str(utf8(line)?);
                working_copies.push('\n');
            }
        }
        self.pending = true;
        Some(working_copies)
    }

    /// The next row (`Some(None)` after the last, when nothing follows the end); read after
    /// [`Reader::working_copies`].
    pub(crate) fn row(&mut self) -> Option<Option<RowRead<'_>>> {
        if self.next_line()? == b"end" {
            // Nothing may follow.
            if let Last::Buffer(n) = std::mem::replace(&mut self.last, Last::Nothing) {
                self.input.consume(n);
            }
            return self.input.fill_buf().ok()?.is_empty().then_some(None);
        }
        self.pending = true;
        row_of(self.next_line()?).map(Some)
    }
}

/// The row of `line`, as [`text`] writes it.
fn row_of(line: &[u8]) -> Option<RowRead<'_>> {
    let rest = line.strip_prefix(b"row\t")?;
    // The six fields before the line, each ended by a tab, found in one pass.
    let mut fields = [&rest[..0]; 6];
    let mut tabs = memchr::memchr_iter(b'\t', rest);
    let mut start = 0;
    for field in &mut fields {
        let end = tabs.next()?;
        *field = &rest[start..end];
        start = end + 1;
    }
    let [id, state, view, updated, hint, run] = fields;
    let rest = &rest[start..];
    let id = unescape(id)?;
    let updated = match updated {
        b"-" => None,
        t => {
            let at = memchr::memchr(b',', t)?;
            let (s, n) = (number(&t[..at])?, number(&t[at + 1..])?);
            Some(SystemTime::UNIX_EPOCH + Duration::new(s.try_into().ok()?, n.try_into().ok()?))
        }
    };
    let hint = match hint {
        b"-" => None,
        hint => Some(unescape(hint.strip_prefix(b"+")?)?),
    };
    let run = match run {
        b"-" => None,
        run => {
            let mut parts = run.split(|&b| b == b',');
            let mut opt = || match parts.next()? {
                b"-" => Some(None),
                n => Some(Some(number(n)?)),
            };
            let (pid, start) = (opt()?, opt()?);
            let ended = match parts.next()? {
                b"1" => true,
                b"0" => false,
                _ => return None,
            };
            parts.next().is_none().then_some(())?;
            Some(Run {
                pid: pid.map(u32::try_from).transpose().ok()?,
                start: start.map(u64::try_from).transpose().ok()?,
                ended,
            })
        }
    };
    // The line is the last field, to the end of the line.
    let line = unescape(rest)?;
    Some(RowRead {
        id,
        state,
        view,
        line,
        updated,
        hint,
        run,
    })
}

/// The table in `text`, when it reads whole (every row kept in memory; `status` reads the
/// rows one at a time instead).
#[cfg(test)]
fn parse(text: &[u8]) -> Option<Table<'static>> {
    parse_from(text)
}

/// [`parse`] from any reader (through a small buffer, lines cross its ends).
#[cfg(test)]
fn parse_from(input: impl BufRead) -> Option<Table<'static>> {
    let mut reader = Reader::new(input);
    let mut head = reader.head()?;
    head.working_copies = reader.working_copies(true)?;
    let mut rows = vec![];
    while let Some(row) = reader.row()? {
        rows.push(Row {
            id: row.id.into_owned().into(),
            state: StampText::decode(row.state)?,
            view: StampText::decode(row.view)?,
            line: row.line.into_owned().into(),
            updated: row.updated,
            hint: row.hint.map(|h| h.into_owned().into()),
            run: row.run,
        });
    }
    Some(Table { head, rows })
}

fn utf8(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// The working copies `view` (name and commit) as a kept table holds them.
pub(crate) fn working_copies_text<'v>(view: impl Iterator<Item = (&'v str, &'v str)>) -> String {
    let mut out = String::new();
    for (name, commit) in view {
        out.push_str("wc\t");
        escape(&mut out, name);
        out.push('\t');
        escape(&mut out, commit);
        out.push('\n');
    }
    out
}

/// A decimal number, maybe negative (a byte loop: a table reads seven per file it stands on).
fn number(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix(b"-") {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    (!digits.is_empty() && digits.len() <= 18).then_some(())?;
    let mut n: i64 = 0;
    for &b in digits {
        (b.is_ascii_digit()).then_some(())?;
        n = n * 10 + i64::from(b - b'0');
    }
    Some(if negative { -n } else { n })
}

/// Appends `text` with its backslashes, tabs and newlines escaped.
fn escape(out: &mut String, text: &str) {
    if !text
        .bytes()
        .any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r'))
    {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

/// What [`escape`] wrote (borrowed when nothing was escaped); `None` for a bad escape or
/// for bytes that are not UTF-8.
fn unescape(field: &[u8]) -> Option<Cow<'_, str>> {
    if memchr::memchr(b'\\', field).is_none() {
        return Some(Cow::Borrowed(utf8(field)?));
    }
    let field = utf8(field)?;
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '\\' => match chars.next()? {
                '\\' => '\\',
                't' => '\t',
                'n' => '\n',
                'r' => '\r',
                _ => return None,
            },
            c => c,
        });
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table<'static> {
        Table {
            head: Head {
                heads: "abc,def".into(),
                dirs: [Some([1, 2, 3, 4, 5, 6, 7]), None, Some([-1; 7])],
                state_dir: Some([3; 7]),
                lands: false,
                behind: true,
                plain: false,
                room: Some(12),
                header: "WORKSPACE  STATUS  ".into(),
                working_copies: working_copies_text(
                    [("default", "00ff"), ("w\t1", "11")].into_iter(),
                ),
            },
            rows: vec![
                Row {
                    id: "w1".into(),
                    state: None,
                    view: Some([9, -9, 0, i64::MAX, i64::MIN, 1, 2]),
                    line: "w1  a\tb\\c\nd\r  ".into(),
                    updated: Some(SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 5)),
                    hint: Some("do this\n  and that".into()),
                    run: Some(Run {
                        pid: Some(42),
                        start: None,
                        ended: true,
                    }),
                },
                Row {
                    id: "w2".into(),
                    state: Some([8; 7]),
                    view: None,
                    line: String::new().into(),
                    updated: None,
                    hint: None,
                    run: Some(Run {
                        pid: None,
                        start: Some(7),
                        ended: false,
                    }),
                },
            ],
        }
    }

    #[test]
    fn a_table_reads_the_same_through_a_buffer_of_any_size() {
        let text = text(&sample());
        let through =
            |text: &[u8], capacity| parse_from(std::io::BufReader::with_capacity(capacity, text));
        for capacity in (1..64).chain([100, 200, text.len() - 1, text.len(), 64 << 10]) {
            assert_eq!(
                through(text.as_bytes(), capacity),
                Some(sample()),
                "{capacity}"
            );
            // Cut short, or with a line after its end: not read.
            for cut in [text.len() - 1, text.len() - 5, text.len() / 2] {
                assert_eq!(
                    through(&text.as_bytes()[..cut], capacity),
                    None,
                    "{capacity} {cut}"
                );
            }
            let more = format!("{text}row\tw3\t-\t-\t-\t-\t\n");
            assert_eq!(through(more.as_bytes(), capacity), None, "{capacity}");
        }
    }

    #[test]
    fn every_number_is_written_in_the_digits_format_gives() {
        let mut n: u64 = 1;
        let mut samples = vec![0, u64::MAX, 9, 10, 15, 16, 0xa0, 0x9f];
        // Every digit, at every place, through a sequence that reaches each.
        for _ in 0..4096 {
            n = n
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            samples.push(n);
            samples.push(n >> (n % 64));
        }
        for n in samples {
            assert_eq!(hex_digits(n), *format!("{n:016x}").as_bytes(), "{n:x}");
            let text = StampText::of(Some(&[n as i64; 7]));
            let one = format!("{n:x}");
            assert_eq!(text.as_bytes(), [one.as_str(); 7].join(",").as_bytes());
        }
    }

    #[test]
    fn a_stamp_is_kept_as_hexadecimal_numbers_and_any_change_changes_its_text() {
        let stamp = [1, -1, 0, i64::MAX, i64::MIN, 0x0123_4567_89ab_cdef, 42];
        let text = StampText::of(Some(&stamp));
        assert_eq!(
            text.as_bytes(),
            b"1,ffffffffffffffff,0,7fffffffffffffff,8000000000000000,123456789abcdef,2a"
        );
        assert_eq!(StampText::decode(text.as_bytes()), Some(Some(stamp)));
        assert_eq!(StampText::of(None).as_bytes(), b"-");
        assert_eq!(StampText::decode(b"-"), Some(None));
        // Any number changed changes the text.
        for i in 0..7 {
            let mut other = stamp;
            other[i] = other[i].wrapping_add(1);
            assert_ne!(StampText::of(Some(&other)).as_bytes(), text.as_bytes());
        }
        // The longest text fits.
        assert_eq!(
            StampText::of(Some(&[-1; 7])).as_bytes().len(),
            STAMP_TEXT_MAX
        );
        // Six numbers, eight, or a number of seventeen digits: no stamp.
        for bad in [
            "1,2,3,4,5,6",
            "1,2,3,4,5,6,7,8",
            "1,2,3,4,5,6,10000000000000000",
            "1,,3,4,5,6,7",
        ] {
            assert_eq!(StampText::decode(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn a_kept_table_reads_back_as_written_and_a_damaged_one_not_at_all() {
        let table = sample();
        let text = text(&table);
        assert_eq!(parse(text.as_bytes()), Some(table.clone()));
        let parse = |text: &str| parse(text.as_bytes()).map(|t| format!("{t:?}"));
        assert_eq!(parse(&text.replace("\tw1\t", "\tw\\x\t")), None);
        // Cut short anywhere, or with anything after its end: not read.
        for cut in 0..text.len() - 1 {
            assert_eq!(parse(&text[..cut]), None, "{}", &text[..cut]);
        }
        assert_eq!(parse(&format!("{text}row\tw3\t-\t-\t-\t-\t\n")), None);
        assert_eq!(parse(&text.replace("\\t", "\\q")), None);
        // A row with a field missing is not read, whatever follows it.
        let short = text.replacen("\t-\t-\t-,7,0\t\nend", "\t-\t-,7,0\t\nend", 1);
        assert_ne!(short, text);
        assert_eq!(parse(&short), None);
        // Text that is not UTF-8 is not read.
        let mut bytes = text.clone().into_bytes();
        let at = text.find("w1  a").unwrap();
        bytes[at] = 0xff;
        assert!(super::parse(&bytes).is_none());
        // Another build's table is not this build's.
        assert_eq!(
            parse(&text.replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1)),
            None
        );
    }
}
