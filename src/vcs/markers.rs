//! Conflict-marker lines a change adds, read from a diff in git's format (`git diff`, `jj
//! diff --git`): how both backends find markers held as plain text.

/// The files of a `git diff` (or `jj diff --git`) whose added lines start a conflict marker, once each, in the
/// order met. A path is read from the `+++ b/<path>` header (a deleted file has
/// `/dev/null`); a path git quotes (`"b/sp\303\251cial"`) is unquoted.
pub(crate) fn marked_files(diff: &str) -> Vec<String> {
    let mut files: Vec<String> = vec![];
    let mut file: Option<String> = None;
    let mut header = false;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            header = true;
            file = None;
        } else if header && line.starts_with("@@") {
            header = false;
        } else if header {
            if let Some(path) = line.strip_prefix("+++ ") {
                file = new_path(path);
            }
        } else if let Some(added) = line.strip_prefix('+') {
            let marker = added.starts_with("<<<<<<<") || added.starts_with(">>>>>>>");
            if let Some(path) = file.as_ref().filter(|_| marker) {
                if !files.contains(path) {
                    files.push(path.clone());
                }
            }
        }
    }
    files
}

/// The path of a `+++` header: `b/<path>` as it is, or quoted the way git quotes (C
/// escapes, octal bytes); git ends a path holding a space with a tab.
fn new_path(text: &str) -> Option<String> {
    let text = text.strip_suffix('\t').unwrap_or(text);
    let Some(quoted) = text.strip_prefix('"') else {
        return text.strip_prefix("b/").map(str::to_string);
    };
    let quoted = quoted.strip_suffix('"')?;
    let mut bytes = vec![];
    let mut chars = quoted.bytes();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        let escaped = match chars.next()? {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            d @ b'0'..=b'7' => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    value = value * 8 + u32::from(chars.next()?.checked_sub(b'0')?);
                }
                u8::try_from(value).ok()?
            }
            other => other,
        };
        bytes.push(escaped);
    }
    let text = String::from_utf8_lossy(&bytes);
    text.strip_prefix("b/").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_lines_added_name_their_file() {
        let diff = concat!(
            "diff --git a/a.txt b/a.txt\n",
            "--- a/a.txt\n",
            "+++ b/a.txt\n",
            "@@ -1 +1,2 @@\n",
            "+ <<<<<<< not at the start\n",
            "-<<<<<<< removed\n",
            "diff --git \"a/sp ace\\\"q.txt\" \"b/sp ace\\\"q.txt\"\n",
            "new file mode 100644\n",
            "--- /dev/null\n",
            "+++ \"b/sp ace\\\"q.txt\"\t\n",
            "@@ -0,0 +1,2 @@\n",
            "+>>>>>>> x\n",
            "+<<<<<<< again\n",
            "diff --git \"a/\\303\\251.txt\" \"b/\\303\\251.txt\"\n",
            "--- /dev/null\n",
            "+++ \"b/\\303\\251.txt\"\n",
            "@@ -0,0 +1 @@\n",
            "+<<<<<<< y\n",
            "diff --git a/two words.txt b/two words.txt\n",
            "--- a/two words.txt\t\n",
            "+++ b/two words.txt\t\n",
            "@@ -0,0 +1 @@\n",
            "++++ b/not-a-header\n",
            "+>>>>>>> theirs\n",
            "diff --git a/gone.txt b/gone.txt\n",
            "deleted file mode 100644\n",
            "--- a/gone.txt\n",
            "+++ /dev/null\n",
            "@@ -1 +0,0 @@\n",
            "-<<<<<<< gone\n",
        );
        assert_eq!(
            marked_files(diff),
            ["sp ace\"q.txt", "é.txt", "two words.txt"]
        );
        assert!(marked_files("").is_empty());
    }

    /// What `jj diff --git` prints for a renamed conflicted file: the markers as text.
    #[test]
    fn marker_lines_jj_s_diff_adds_name_their_file() {
        let diff = concat!(
            "diff --git a/a.txt b/a.txt\n",
            "--- a/a.txt\n",
            "+++ b/a.txt\n",
            "@@ -1 +1,2 @@\n",
            " x\n",
            "+ <<<<<<< not at the start\n",
            "-<<<<<<< removed\n",
            "diff --git a/moved.txt b/moved.txt\n",
            "new file mode 100644\n",
            "--- /dev/null\n",
            "+++ b/moved.txt\n",
            "@@ -0,0 +1,3 @@\n",
            "+<<<<<<< conflict 1 of 1\n",
            "++++ b/not-a-header\n",
            "+>>>>>>> conflict 1 of 1 ends\n",
            "diff --git a/gone.txt b/gone.txt\n",
            "deleted file mode 100644\n",
            "--- a/gone.txt\n",
            "+++ /dev/null\n",
            "@@ -1 +0,0 @@\n",
            "-<<<<<<< old\n",
        );
        assert_eq!(marked_files(diff), ["moved.txt"]);
    }
}
