//! The files a `.envrc` loads that its workspace can change: `source_env` and
//! `source_env_if_exists` targets, `dotenv`/`dotenv_if_exists` files (default `.env`),
//! `use flake`'s `flake.nix` and `flake.lock`, and `watch_file` targets. Only paths inside the
//! workspace count (relative, without `..` or variables).

use std::collections::BTreeMap;
use std::path::Path;

use crate::store::fsutil;
use crate::store::state::digest;

/// What a missing file's digest is recorded as.
pub(crate) const ABSENT: &str = "absent";
/// The digest recorded for a loaded file that is not a regular file of a sane size.
const UNREADABLE: &str = "unreadable";

/// The workspace-relative files `envrc` loads, in order, without duplicates. Every simple
/// command of a line counts, not only its first word: a load behind a guard (`[ -f x ] &&
/// source_env x`, `if [ -f x ]; then dotenv x; fi`) or in a group loads the file whenever it
/// is there, and the shell's own `source` and `.` load one too.
pub(crate) fn targets(envrc: &str, workspace: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for words in envrc.lines().flat_map(commands) {
        let Some((command, args)) = words.split_first() else {
            continue;
        };
        let files: Vec<String> = match command.as_str() {
            "source_env" | "source_env_if_exists" => args
                .first()
                .map(|a| envrc_of(a, workspace))
                .into_iter()
                .collect(),
            "source" | "." => args.first().cloned().into_iter().collect(),
            "dotenv" | "dotenv_if_exists" => {
                vec![args.first().cloned().unwrap_or_else(|| ".env".into())]
            }
            "use" if args.first().map(String::as_str) == Some("flake") => {
                let dir = match args.get(1) {
                    Some(a) if a.starts_with('.') => a.split('#').next().unwrap_or(".").to_string(),
                    _ => ".".to_string(),
                };
                vec![format!("{dir}/flake.nix"), format!("{dir}/flake.lock")]
            }
            "watch_file" => args.to_vec(),
            _ => vec![],
        };
        for file in files.into_iter().filter_map(|f| inside(&f)) {
            if !found.contains(&file) {
                found.push(file);
            }
        }
    }
    found
}

/// What leads into a command without being one: `if [ -f x ]; then dotenv x` runs `dotenv`.
const LEADING: [&str; 11] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "command", "builtin", "time",
];

/// The simple commands of one shell line, each as its words with quotes taken off and the
/// keywords that lead into it ([`LEADING`]) left out. A command ends at `;`, `&`, `|`, a
/// parenthesis, a brace or a backquote outside quotes (`$(` opens one); a `#` that starts a
/// word ends the line. A reading for what may be loaded, not a shell: it errs towards
/// finding more commands, never fewer.
fn commands(line: &str) -> Vec<Vec<String>> {
    let mut all = vec![];
    let mut command: Vec<String> = vec![];
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    let end_word = |word: &mut String, in_word: &mut bool, command: &mut Vec<String>| {
        if *in_word && (!command.is_empty() || !LEADING.contains(&word.as_str())) {
            command.push(std::mem::take(word));
        }
        word.clear();
        *in_word = false;
    };
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut command),
            (None, ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`') => {
                if c == '(' && word.ends_with('$') {
                    word.pop();
                }
                end_word(&mut word, &mut in_word, &mut command);
                all.push(std::mem::take(&mut command));
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut command);
    all.push(command);
    all.retain(|c| !c.is_empty());
    all
}

/// `source_env` of a directory loads its `.envrc`.
fn envrc_of(arg: &str, workspace: &Path) -> String {
    match arg.ends_with('/') || inside(arg).is_some_and(|a| workspace.join(a).is_dir()) {
        true => format!("{}/.envrc", arg.trim_end_matches('/')),
        false => arg.to_string(),
    }
}

/// `path` normalised relative to the workspace, or `None` when it may lie outside it.
fn inside(path: &str) -> Option<String> {
    if path.is_empty() || path.starts_with('/') || path.contains('$') || path.contains('~') {
        return None;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    Some(parts.join("/"))
}

/// The digest of each target's content in the workspace now ([`ABSENT`] when missing).
pub(crate) fn digests(workspace: &Path, targets: &[String]) -> BTreeMap<String, String> {
    targets
        .iter()
        .map(|t| {
            let d = match fsutil::read_untrusted(&workspace.join(t), fsutil::UNTRUSTED_LIMIT) {
                Ok(bytes) => digest(&bytes),
                Err(e) if fsutil::is_missing(&e) => ABSENT.to_string(),
                // A FIFO, a device or a huge file never matches what was allowed.
                Err(_) => UNREADABLE.to_string(),
            };
            (t.clone(), d)
        })
        .collect()
}

/// The files a workspace's `.envrc` loads and their digests now; empty without an `.envrc`.
pub(crate) fn current(workspace: &Path) -> BTreeMap<String, String> {
    let text = fsutil::read_untrusted_string(&workspace.join(".envrc"), fsutil::UNTRUSTED_LIMIT)
        .unwrap_or_default();
    digests(workspace, &targets(&text, workspace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_loaded_files_inside_the_workspace() {
        let text = "source_env_if_exists .envrc.local\ndotenv\ndotenv_if_exists \"conf/.env\"\n\
                    use flake\nwatch_file a.txt ./b.txt\nsource_env /etc/x\nsource_env ../up\n\
                    # dotenv commented\nexport X=1\n";
        assert_eq!(
            targets(text, Path::new("/nonexistent")),
            [
                ".envrc.local",
                ".env",
                "conf/.env",
                "flake.nix",
                "flake.lock",
                "a.txt",
                "b.txt"
            ]
        );
    }

    #[test]
    fn a_load_behind_a_guard_or_in_a_group_counts() {
        let text = "[ -f .envrc.local ] && source_env .envrc.local\n\
                    if [ -f .env.dev ]; then dotenv .env.dev; fi\n\
                    test -f extra.sh && { source extra.sh; }\n\
                    ! [ -e dot.sh ] || . ./dot.sh # the shell's own\n\
                    X=$(source_env 'quoted dir/') ; echo \"dotenv not-a-load\"\n\
                    # source commented.sh\n";
        assert_eq!(
            targets(text, Path::new("/nonexistent")),
            [
                ".envrc.local",
                ".env.dev",
                "extra.sh",
                "dot.sh",
                "quoted dir/.envrc"
            ]
        );
    }
}
