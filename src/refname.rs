//! git's rules for branch names (`git check-ref-format --branch`), so an id that cannot name
//! a branch is refused before anything is created, without spawning git.

/// Why `name` is not a valid git branch name, or `None` when it is one.
pub(crate) fn branch_problem(name: &str) -> Option<&'static str> {
    if name.starts_with('-') {
        return Some("a branch name cannot start with '-'");
    }
    if name == "HEAD" {
        return Some("HEAD is not a branch name");
    }
    if name == "@" {
        return Some("'@' is not a branch name");
    }
    if name.ends_with('.') {
        return Some("a branch name cannot end with '.'");
    }
    if name.contains("..") {
        return Some("a branch name cannot contain '..'");
    }
    if name.contains("@{") {
        return Some("a branch name cannot contain '@{'");
    }
    if name
        .chars()
        .any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c))
    {
        return Some("a branch name cannot contain spaces, control characters or any of ~^:?*[\\");
    }
    for component in name.split('/') {
        if component.is_empty() {
            return Some(
                "a branch name cannot have an empty component ('//', or a leading or trailing '/')",
            );
        }
        if component.starts_with('.') {
            return Some("no component of a branch name can start with '.'");
        }
        if component.ends_with(".lock") {
            return Some("no component of a branch name can end with '.lock'");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_rules() {
        for ok in [
            "a",
            "a/b",
            "x.lockx",
            "a.b",
            "a-b_c",
            "agent-workspace/w1",
            "@x",
        ] {
            assert_eq!(branch_problem(ok), None, "{ok}");
        }
        for bad in [
            "x.lock",
            "a..b",
            "a.",
            "-a",
            "HEAD",
            "@",
            "a/.b",
            "a//b",
            "/a",
            "a/",
            "a b",
            "a~b",
            "a^b",
            "a:b",
            "a?b",
            "a*b",
            "a[b",
            "a\\b",
            "a@{b",
            "a\x01",
            "p/x.lock/y",
        ] {
            assert!(branch_problem(bad).is_some(), "{bad:?}");
        }
    }
}
