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
    pub state: Option<Hex>,
    pub view: Option<Hex>,
    pub line: Cow<'a, str>,
    pub updated: Option<SystemTime>,
    pub hint: Option<Cow<'a, str>>,
    /// A run recorded as running: its supervisor's process id and start, and whether the
    /// row shows it ended (`crashed`). Looked at again each time: a process can die
    /// without any file changing.
    pub run: Option<Run>,
}

/// A file's stamp as a row keeps it: its seven numbers as sixteen hexadecimal digits each,
/// compared as they are (a row's stamp is made from the file and compared, never parsed).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hex([u8; HEX_LEN]);

const HEX_LEN: usize = 7 * 16;

impl Hex {
    pub(crate) fn of(stamp: &Stamp) -> Hex {
        // Each byte's two digits (a table checks a stamp a row on every answer).
        const PAIRS: [[u8; 2]; 256] = {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            let mut pairs = [[0; 2]; 256];
            let mut i = 0;
            while i < 256 {
                pairs[i] = [DIGITS[i >> 4], DIGITS[i & 0xf]];
                i += 1;
            }
            pairs
        };
        let mut out = [0u8; HEX_LEN];
        for (n, chunk) in stamp.iter().zip(out.chunks_exact_mut(16)) {
            for (byte, pair) in n.to_be_bytes().iter().zip(chunk.chunks_exact_mut(2)) {
                pair.copy_from_slice(&PAIRS[usize::from(*byte)]);
            }
        }
        Hex(out)
    }

    /// The digits as text (empty for a stamp read from a damaged file that holds other
    /// bytes: only stamps made by [`Hex::of`] are written).
    fn text(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The stamp field at the start of `rest` as [`text`] writes it (112 hexadecimal digits,
    /// or `-` for no file, then a tab), `rest` moved past it. Its digits are not looked at:
    /// a stamp that is not one is never that of a file.
    fn parse(rest: &mut &[u8]) -> Option<Option<Hex>> {
        if let Some(after) = rest.strip_prefix(b"-\t") {
            *rest = after;
            return Some(None);
        }
        let (hex, after) = rest.split_first_chunk::<HEX_LEN>()?;
        *rest = after.strip_prefix(b"\t")?;
        Some(Some(Hex(*hex)))
    }
}

impl std::fmt::Debug for Hex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// A run a row shows as live or as ended, by its process (see [`Row::run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub pid: Option<u32>,
    pub start: Option<u64>,
    pub ended: bool,
}

/// A kept table and what it stands on; read, its text is borrowed from the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table<'a> {
    /// The operation heads it was made at.
    pub heads: Cow<'a, str>,
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
    /// Whether its header, lines and hints are printable ASCII (its UPDATED cells always
    /// are): printed as they are, with no escape to strip.
    pub plain: bool,
    /// The widest UPDATED column its lines stand for (`None`: any).
    pub room: Option<usize>,
    /// The header line up to UPDATED.
    pub header: Cow<'a, str>,
    /// jj's working copies at `heads` (name and commit, sorted by name), as
    /// [`working_copies_text`] writes them: compared as text, only when the heads moved.
    pub working_copies: Cow<'a, str>,
    pub rows: Vec<Row<'a>>,
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
        name.clear();
        name.push_str(id);
        name.push_str(".json");
        let state = match no_state {
            true => None,
            false => self
                .state
                .as_ref()
                .and_then(|dir| summary::stamp(dir, name)),
        };
        name.clear();
        name.push_str(id);
        name.push('/');
        name.push_str(crate::store::metadata::FILE_NAME);
        (state, summary::stamp(&self.namespace, name))
    }
}

/// The text of the table kept in the cache directory `cache`, to [`parse`].
pub(crate) fn read(cache: &Path) -> Option<Vec<u8>> {
    crate::store::fsutil::read_untrusted(
        &cache.join(FILE_NAME),
        crate::store::fsutil::UNTRUSTED_LIMIT,
    )
    .ok()
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
    let stamp = |out: &mut String, stamp: &Option<Stamp>| match stamp {
        // Writing to a String cannot fail.
        Some(s) => {
            let _ = write!(
                out,
                "{},{},{},{},{},{},{}",
                s[0], s[1], s[2], s[3], s[4], s[5], s[6]
            );
        }
        None => out.push('-'),
    };
    out.push_str("heads\t");
    escape(&mut out, &table.heads);
    out.push_str("\ndirs");
    for dir in &table.dirs {
        out.push('\t');
        stamp(&mut out, dir);
    }
    out.push_str("\nstate\t");
    stamp(&mut out, &table.state_dir);
    let flag = |b: bool| if b { "1" } else { "0" };
    let _ = write!(
        out,
        "\nflags\t{}\t{}\t{}\t",
        flag(table.lands),
        flag(table.behind),
        flag(table.plain)
    );
    match table.room {
        Some(room) => {
            let _ = write!(out, "{room}");
        }
        None => out.push('-'),
    }
    out.push_str("\nheader\t");
    escape(&mut out, &table.header);
    out.push('\n');
    out.push_str(&table.working_copies);
    for row in &table.rows {
        out.push_str("row\t");
        escape(&mut out, &row.id);
        for hex in [&row.state, &row.view] {
            out.push('\t');
            out.push_str(hex.as_ref().map_or("-", Hex::text));
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

/// The table in `text` (as [`read`] gives it), when it reads whole. Read as bytes: only the
/// fields kept as text are checked to be UTF-8 (a row's stamps are compared as they are).
pub(crate) fn parse(text: &[u8]) -> Option<Table<'_>> {
    let mut lines = Lines(text);
    (lines.next()? == first_line().as_bytes()).then_some(())?;
    let heads = unescape(lines.next()?.strip_prefix(b"heads\t")?)?;
    let mut dirs_line = utf8(lines.next()?.strip_prefix(b"dirs\t")?)?.split('\t');
    let mut dirs = [None; 3];
    for dir in &mut dirs {
        *dir = stamp(dirs_line.next()?)?;
    }
    dirs_line.next().is_none().then_some(())?;
    let state_dir = stamp(utf8(lines.next()?.strip_prefix(b"state\t")?)?)?;
    let mut flags = utf8(lines.next()?.strip_prefix(b"flags\t")?)?.split('\t');
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
    let header = unescape(lines.next()?.strip_prefix(b"header\t")?)?;
    // The working copies: every line from here that starts with `wc`, kept as text.
    let start = text.len() - lines.0.len();
    while let Some(after) = lines.0.strip_prefix(b"wc\t") {
        lines.0 = &after[after.iter().position(|&b| b == b'\n')? + 1..];
    }
    let end = text.len() - lines.0.len();
    let mut table = Table {
        heads,
        dirs,
        state_dir,
        lands,
        behind,
        plain,
        room,
        header,
        working_copies: Cow::Borrowed(utf8(&text[start..end])?),
        // About a hundred bytes a row.
        rows: Vec::with_capacity(lines.0.len() / 96),
    };
    // The rows, each read in one pass over its bytes.
    loop {
        if let Some(after) = lines.0.strip_prefix(b"end\n") {
            // Nothing may follow.
            return after.is_empty().then_some(table);
        }
        let mut rest = lines.0.strip_prefix(b"row\t")?;
        let id = unescape(field(&mut rest)?)?;
        let state = Hex::parse(&mut rest)?;
        let view = Hex::parse(&mut rest)?;
        let updated = match field(&mut rest)? {
            b"-" => None,
            t => {
                let at = t.iter().position(|&b| b == b',')?;
                let (s, n) = (number(&t[..at])?, number(&t[at + 1..])?);
                Some(SystemTime::UNIX_EPOCH + Duration::new(s.try_into().ok()?, n.try_into().ok()?))
            }
        };
        let hint = match field(&mut rest)? {
            b"-" => None,
            hint => Some(unescape(hint.strip_prefix(b"+")?)?),
        };
        let run = match field(&mut rest)? {
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
        // The line is the last field, up to the newline.
        let at = rest.iter().position(|&b| b == b'\n')?;
        let line = unescape(&rest[..at])?;
        lines.0 = &rest[at + 1..];
        table.rows.push(Row {
            id,
            state,
            view,
            line,
            updated,
            hint,
            run,
        });
    }
}

fn utf8(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// The lines of a text, each ending with a newline (a last line without one is not given).
struct Lines<'a>(&'a [u8]);

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let at = self.0.iter().position(|&b| b == b'\n')?;
        let line = &self.0[..at];
        self.0 = &self.0[at + 1..];
        Some(line)
    }
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

/// The field at the start of `rest` (up to a tab, within its line), `rest` moved past it and
/// its tab.
fn field<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let at = rest.iter().position(|&b| b == b'\t' || b == b'\n')?;
    (rest[at] == b'\t').then_some(())?;
    let (field, after) = rest.split_at(at);
    *rest = &after[1..];
    Some(field)
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

/// A directory's stamp as [`text`] writes it: seven numbers joined by commas, or `-` for
/// none.
fn stamp(field: &str) -> Option<Option<Stamp>> {
    if field == "-" {
        return Some(None);
    }
    let mut stamp: Stamp = [0; 7];
    let mut parts = field.as_bytes().split(|&b| b == b',');
    for n in &mut stamp {
        *n = number(parts.next()?)?;
    }
    parts.next().is_none().then_some(Some(stamp))
}

/// Appends `text` with its backslashes, tabs and newlines escaped.
fn escape(out: &mut String, text: &str) {
    if !text.contains(['\\', '\t', '\n', '\r']) {
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
    let field = utf8(field)?;
    if !field.contains('\\') {
        return Some(Cow::Borrowed(field));
    }
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
            heads: "abc,def".into(),
            dirs: [Some([1, 2, 3, 4, 5, 6, 7]), None, Some([-1; 7])],
            state_dir: Some([3; 7]),
            lands: false,
            behind: true,
            plain: false,
            room: Some(12),
            header: "WORKSPACE  STATUS  ".into(),
            working_copies: working_copies_text([("default", "00ff"), ("w\t1", "11")].into_iter())
                .into(),
            rows: vec![
                Row {
                    id: "w1".into(),
                    state: None,
                    view: Some(Hex::of(&[9, -9, 0, i64::MAX, i64::MIN, 1, 2])),
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
                    state: Some(Hex::of(&[8; 7])),
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
    fn a_stamp_is_kept_as_sixteen_digits_a_number_and_read_back_only_so() {
        let stamp = [1, -1, 0, i64::MAX, i64::MIN, 0x0123_4567_89ab_cdef, 42];
        let hex = Hex::of(&stamp);
        assert_eq!(
            hex.text(),
            concat!(
                "0000000000000001ffffffffffffffff0000000000000000",
                "7fffffffffffffff80000000000000000123456789abcdef",
                "000000000000002a"
            )
        );
        let field = format!("{}\tnext", hex.text());
        let mut rest = field.as_bytes();
        assert_eq!(Hex::parse(&mut rest), Some(Some(hex)));
        assert_eq!(rest, b"next");
        let mut rest = &b"-\tnext"[..];
        assert_eq!(Hex::parse(&mut rest), Some(None));
        assert_eq!(rest, b"next");
        // Any number changed changes the text.
        for i in 0..7 {
            let mut other = stamp;
            other[i] = other[i].wrapping_add(1);
            assert_ne!(Hex::of(&other), hex);
        }
        // A digit short or too many: not a stamp field.
        for field in [&hex.text()[1..], &format!("{}0", hex.text())] {
            let field = format!("{field}\tnext");
            assert_eq!(Hex::parse(&mut field.as_bytes()), None, "{field}");
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
