//! What jj recorded about a working copy, read from jj's own state files without running jj
//! and without looking at the working copy's files (so never a snapshot).
//!
//! jj keeps, in `<ws>/.jj/working_copy/checkout`, the operation at which the working copy
//! was last updated and the workspace's name; each operation (`op_store/operations/<id>`)
//! names a view (`op_store/views/<id>`), which maps every workspace to its working-copy
//! commit. The files are protocol buffers (jj's `local_working_copy.proto` and
//! `simple_op_store.proto`); only the few fields needed here are read. Anything unexpected
//! (another format, a missing or unreadable file, an operation jj no longer keeps) answers
//! "not known to be fresh", and the caller asks jj itself.

use std::fs;
use std::path::Path;

/// What jj's records say of the working copy at `ws`, in the repository whose `.jj/repo`
/// is `store`.
#[derive(Debug, PartialEq)]
pub(super) enum Freshness {
    /// Fresh: the working copy was updated at the current operation, or every operation head
    /// keeps the working-copy commit it had when the working copy was last updated (its files
    /// are that commit's tree, which is what jj checks).
    Fresh,
    /// Fresh if each of `commits` (hex; the workspace's commit at the heads that moved it)
    /// has the tree `tree` (hex) the working copy has checked out: jj judges by the tree, so
    /// a commit rewritten without changing its files (a description, a `commit` that left
    /// the working copy alone) keeps it fresh.
    SameTree { tree: String, commits: Vec<String> },
    /// Not known from the records: ask jj (never "stale").
    Unknown,
}

pub(super) fn freshness(store: &Path, ws: &Path) -> Freshness {
    read_freshness(store, ws).unwrap_or(Freshness::Unknown)
}

fn read_freshness(store: &Path, ws: &Path) -> Option<Freshness> {
    let wc = ws.join(".jj").join("working_copy");
    let (wc_op, name) = parse_checkout(&fs::read(wc.join("checkout")).ok()?)?;
    let heads = op_heads(store)?;
    if heads == [wc_op.as_str()] {
        return Some(Freshness::Fresh);
    }
    let ops = store.join("op_store");
    let recorded = wc_commit_at(&ops, &wc_op, &name)?;
    // Several heads (operations that ran at once, which jj merges on its next load): when
    // every one of them keeps the same commit, so does their merge.
    let mut moved = vec![];
    for head in heads {
        let commit = wc_commit_at(&ops, &head, &name)?;
        if commit != recorded && !moved.contains(&commit) {
            moved.push(commit);
        }
    }
    if moved.is_empty() {
        return Some(Freshness::Fresh);
    }
    let tree_state = fs::read(wc.join("tree_state")).ok()?;
    Some(Freshness::SameTree {
        tree: to_hex(checked_out_tree(&tree_state)?),
        commits: moved.iter().map(|c| to_hex(c)).collect(),
    })
}

/// Every workspace's working-copy commit (name, hex commit id) in the view of the
/// repository's operation head, with that head's id: what `jj workspace list` and
/// `working_copies()` answer, read without a process. `None` when there is not exactly one
/// head (jj merges several on its next command) or anything is unexpected.
pub(super) fn working_copies(store: &Path) -> Option<(String, Vec<(String, String)>)> {
    let heads = op_heads(store)?;
    let [head] = &heads[..] else { return None };
    let view = view_at(&store.join("op_store"), head)?;
    let mut found = vec![];
    for entry in fields(&view)?
        .into_iter()
        .filter_map(|(n, f)| (n == 8).then_some(f)?.bytes())
    {
        let entry = fields(entry)?;
        let name = entry
            .iter()
            .find_map(|(n, f)| (*n == 1).then_some(f)?.bytes())?;
        let commit = entry
            .iter()
            .find_map(|(n, f)| (*n == 2).then_some(f)?.bytes())?;
        if commit.is_empty() {
            return None;
        }
        found.push((std::str::from_utf8(name).ok()?.to_string(), to_hex(commit)));
    }
    // A view without any working copy is not one jj writes while a workspace exists.
    (!found.is_empty()).then(|| (head.clone(), found))
}

/// Every root jj recorded (name, path as recorded: relative to `store`), from the workspace
/// store's index (`workspace_store/index`, jj's `workspace_store.proto`); `None` when it
/// cannot be read as that.
pub(super) fn recorded_roots(store: &Path) -> Option<Vec<(String, String)>> {
    let index = fs::read(store.join("workspace_store").join("index")).ok()?;
    let mut found = vec![];
    for entry in fields(&index)? {
        let (1, Field::Bytes(entry)) = entry else {
            return None;
        };
        let entry = fields(entry)?;
        let text = |number: u64| {
            entry
                .iter()
                .find_map(|(n, f)| (*n == number).then_some(f)?.bytes())
                .and_then(|b| std::str::from_utf8(b).ok())
        };
        found.push((text(1)?.to_string(), text(2)?.to_string()));
    }
    Some(found)
}

/// The view (its raw bytes) of operation `op`.
fn view_at(ops: &Path, op: &str) -> Option<Vec<u8>> {
    let operation = fs::read(ops.join("operations").join(op)).ok()?;
    let view_id = fields(&operation)?
        .into_iter()
        .find_map(|(n, f)| (n == 1).then_some(f)?.bytes())?;
    if view_id.is_empty() {
        return None;
    }
    fs::read(ops.join("views").join(to_hex(view_id))).ok()
}

/// The tree a `tree_state` file records as checked out, when it is a single (resolved) tree.
fn checked_out_tree(buf: &[u8]) -> Option<&[u8]> {
    let fields = fields(buf)?;
    let trees: Vec<&[u8]> = fields
        .iter()
        .filter_map(|(n, f)| (*n == 5).then_some(f)?.bytes())
        .collect();
    match trees[..] {
        [tree] if !tree.is_empty() => Some(tree),
        _ => None,
    }
}

/// The operation heads, as jj names their files (hex); `None` when there are none or too
/// many to be worth reading.
fn op_heads(store: &Path) -> Option<Vec<String>> {
    let mut heads = vec![];
    for entry in fs::read_dir(store.join("op_heads").join("heads")).ok()? {
        let name = entry.ok()?.file_name().into_string().ok()?;
        if !is_hex(&name) || heads.len() == 8 {
            return None;
        }
        heads.push(name);
    }
    (!heads.is_empty()).then_some(heads)
}

/// The working-copy commit of workspace `name` in the view of operation `op` (hex ids).
fn wc_commit_at(ops: &Path, op: &str, name: &str) -> Option<Vec<u8>> {
    let view = view_at(ops, op)?;
    fields(&view)?
        .into_iter()
        .filter_map(|(n, f)| (n == 8).then_some(f)?.bytes())
        .find_map(|entry| {
            let entry = fields(entry)?;
            let key = entry
                .iter()
                .find_map(|(n, f)| (*n == 1).then_some(f)?.bytes());
            let value = entry
                .iter()
                .find_map(|(n, f)| (*n == 2).then_some(f)?.bytes());
            (key? == name.as_bytes()).then(|| value.map(<[u8]>::to_vec))?
        })
        .filter(|commit| !commit.is_empty())
}

/// The operation id (hex) and workspace name in a `checkout` file.
fn parse_checkout(buf: &[u8]) -> Option<(String, String)> {
    let fields = fields(buf)?;
    let op = fields
        .iter()
        .find_map(|(n, f)| (*n == 2).then_some(f)?.bytes())?;
    let name = fields
        .iter()
        .find_map(|(n, f)| (*n == 3).then_some(f)?.bytes())?;
    let name = std::str::from_utf8(name).ok()?;
    (!op.is_empty() && !name.is_empty()).then(|| (to_hex(op), name.to_string()))
}

/// Lowercase hex, two digits a byte (a view of a thousand workspaces holds a thousand ids:
/// a table lookup, not a formatter call per byte).
fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.extend_from_slice(&[DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]);
    }
    // Only ASCII digits were written.
    String::from_utf8(out).unwrap_or_default()
}

fn is_hex(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// One field of a protocol buffer message: only length-delimited values are looked at.
#[derive(Debug, PartialEq)]
enum Field<'a> {
    Bytes(&'a [u8]),
    Other,
}

impl<'a> Field<'a> {
    fn bytes(&self) -> Option<&'a [u8]> {
        match self {
            Field::Bytes(b) => Some(b),
            Field::Other => None,
        }
    }
}

/// The top-level fields of a protocol buffer message, with their numbers; `None` when it is
/// not well formed (or uses the deprecated groups, which jj's messages never do).
fn fields(mut buf: &[u8]) -> Option<Vec<(u64, Field<'_>)>> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        let field = match key & 7 {
            0 => varint(&mut buf).map(|_| Field::Other)?,
            1 => skip(&mut buf, 8).map(|_| Field::Other)?,
            2 => {
                let len = usize::try_from(varint(&mut buf)?).ok()?;
                Field::Bytes(skip(&mut buf, len)?)
            }
            5 => skip(&mut buf, 4).map(|_| Field::Other)?,
            _ => return None,
        };
        out.push((key >> 3, field));
    }
    Some(out)
}

fn varint(buf: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = buf.split_first()?;
        *buf = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

fn skip<'a>(buf: &mut &'a [u8], len: usize) -> Option<&'a [u8]> {
    if buf.len() < len {
        return None;
    }
    let (taken, rest) = buf.split_at(len);
    *buf = rest;
    Some(taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(to_hex(&[0x00, 0x0f, 0xa0, 0xff, 0x12]), "000fa0ff12");
        assert_eq!(to_hex(&[]), "");
    }

    fn bytes_field(number: u8, value: &[u8]) -> Vec<u8> {
        let mut out = vec![(number << 3) | 2, u8::try_from(value.len()).unwrap()];
        out.extend_from_slice(value);
        out
    }

    /// A store with one operation head whose view maps `wcs` (name, commit bytes).
    fn store_with_view(dir: &Path, heads: &[&str], wcs: &[(&str, &[u8])]) {
        let mut view = bytes_field(2, b"other field");
        for (name, commit) in wcs {
            let mut entry = bytes_field(1, name.as_bytes());
            entry.extend(bytes_field(2, commit));
            view.extend(bytes_field(8, &entry));
        }
        for sub in ["op_heads/heads", "op_store/operations", "op_store/views"] {
            fs::create_dir_all(dir.join(sub)).unwrap();
        }
        fs::write(dir.join("op_store/views/beef"), view).unwrap();
        for head in heads {
            fs::write(dir.join("op_heads/heads").join(head), "").unwrap();
            fs::write(
                dir.join("op_store/operations").join(head),
                bytes_field(1, &[0xbe, 0xef]),
            )
            .unwrap();
        }
    }

    #[test]
    fn reads_every_working_copy_of_the_one_head() {
        let dir = tempfile::tempdir().unwrap();
        store_with_view(
            dir.path(),
            &["ab12"],
            &[("default", &[0x01, 0x02]), ("w1", &[0xff])],
        );
        let (head, wcs) = working_copies(dir.path()).unwrap();
        assert_eq!(head, "ab12");
        assert_eq!(
            wcs,
            [
                ("default".to_string(), "0102".to_string()),
                ("w1".to_string(), "ff".to_string())
            ]
        );
        let two = tempfile::tempdir().unwrap();
        store_with_view(two.path(), &["ab12", "cd34"], &[("default", &[0x01])]);
        assert_eq!(
            working_copies(two.path()),
            None,
            "two heads: jj merges them"
        );
        let none = tempfile::tempdir().unwrap();
        store_with_view(none.path(), &["ab12"], &[]);
        assert_eq!(
            working_copies(none.path()),
            None,
            "a view without working copies"
        );
    }

    #[test]
    fn reads_recorded_roots() {
        let dir = tempfile::tempdir().unwrap();
        let mut entry = bytes_field(1, b"default");
        entry.extend(bytes_field(2, b"../.."));
        let mut index = bytes_field(1, &entry);
        let mut entry = bytes_field(1, b"w1");
        entry.extend(bytes_field(2, b"../../../ns/w1"));
        index.extend(bytes_field(1, &entry));
        fs::create_dir(dir.path().join("workspace_store")).unwrap();
        let path = dir.path().join("workspace_store").join("index");
        fs::write(&path, &index).unwrap();
        assert_eq!(
            recorded_roots(dir.path()).unwrap(),
            [
                ("default".to_string(), "../..".to_string()),
                ("w1".to_string(), "../../../ns/w1".to_string())
            ]
        );
        fs::write(&path, bytes_field(2, b"x")).unwrap();
        assert_eq!(recorded_roots(dir.path()), None, "another field");
    }

    #[test]
    fn reads_a_checkout() {
        let mut buf = bytes_field(2, &[0xab, 0x01]);
        buf.extend(bytes_field(3, b"w1"));
        assert_eq!(parse_checkout(&buf), Some(("ab01".into(), "w1".into())));
    }

    #[test]
    fn skips_other_wire_types_and_refuses_malformed_input() {
        // field 1 varint 300, field 2 fixed64, field 3 bytes, field 4 fixed32
        let mut buf = vec![0x08, 0xac, 0x02, 0x11, 1, 2, 3, 4, 5, 6, 7, 8];
        buf.extend(bytes_field(3, b"x"));
        buf.extend([0x25, 1, 2, 3, 4]);
        let parsed = fields(&buf).unwrap();
        assert_eq!(parsed.len(), 4);
        assert_eq!(parsed[2], (3, Field::Bytes(b"x")));
        assert_eq!(fields(&[0x1a, 5, b'a']), None, "a length past the end");
        assert_eq!(fields(&[0x0b]), None, "a group");
        assert_eq!(fields(&[0x08, 0x80]), None, "an unfinished varint");
        assert_eq!(parse_checkout(&bytes_field(3, b"w1")), None, "no operation");
    }

    #[test]
    fn reads_the_checked_out_tree_only_when_resolved() {
        let mut buf = bytes_field(2, b"file state");
        buf.extend(bytes_field(5, &[0x12, 0x34]));
        assert_eq!(checked_out_tree(&buf), Some(&[0x12, 0x34][..]));
        buf.extend(bytes_field(5, &[0x56]));
        assert_eq!(checked_out_tree(&buf), None, "a conflict");
        assert_eq!(checked_out_tree(&bytes_field(2, b"x")), None, "no tree");
    }
}
