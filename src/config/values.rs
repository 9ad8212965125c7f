//! The values of configuration keys that are more than a word: sizes, retentions, relative
//! paths.

use std::path::Path;
use std::time::Duration;

/// A non-empty relative path of normal components (no `..`, `.`, or leading `/`).
pub(super) fn is_plain_relative(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// Parses a retention: `Some(None)` for `never`, `Some(Some(age))` for a duration such as
/// `30m`, `1h` or `7d`, `None` for anything else.
pub(crate) fn parse_retention(text: &str) -> Option<Option<Duration>> {
    match text.trim() {
        "never" => Some(None),
        text => humantime::parse_duration(text).ok().map(Some),
    }
}

/// Parses a size such as `5GiB`, `500MB` or `1024` (bytes).
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .ok()
        .map(|size| size.as_u64())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_with_their_units() {
        assert_eq!(parse_size("5GiB"), Some(5 * 1024 * 1024 * 1024));
        assert_eq!(parse_size("500MB"), Some(500_000_000));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("1.5 KiB"), Some(1536));
        assert_eq!(parse_size("5 parsecs"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn retentions_parse_as_durations_or_never() {
        use super::parse_retention;
        use std::time::Duration;
        assert_eq!(parse_retention("never"), Some(None));
        assert_eq!(
            parse_retention("7d"),
            Some(Some(Duration::from_secs(7 * 86400)))
        );
        assert_eq!(
            parse_retention("30m"),
            Some(Some(Duration::from_secs(1800)))
        );
        assert_eq!(parse_retention("soon"), None);
        assert_eq!(parse_retention(""), None);
    }
}
