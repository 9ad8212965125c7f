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

/// Parses a limit's size: a number with a single-letter suffix counts in powers of 1024, as
/// systemd, docker and `ulimit` count (`512M`, `4G`); otherwise as [`parse_size`] (`1.5GiB`,
/// `500MB`, `1024`).
pub(crate) fn parse_limit_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let binary = ["K", "M", "G", "T"]
        .iter()
        .position(|unit| text.ends_with(unit))
        .and_then(|power| {
            let number = text[..text.len() - 1].trim().parse::<f64>().ok()?;
            let bytes = number * 1024f64.powi(power as i32 + 1);
            (number >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
        });
    binary.or_else(|| parse_size(text))
}

#[cfg(test)]
mod tests {
    use super::{parse_limit_size, parse_size};

    #[test]
    fn limit_sizes_count_single_letters_in_powers_of_1024() {
        assert_eq!(parse_limit_size("128M"), Some(128 << 20));
        assert_eq!(parse_limit_size("4G"), Some(4 << 30));
        assert_eq!(parse_limit_size("0.5G"), Some(512 << 20));
        assert_eq!(parse_limit_size("16K"), Some(16 << 10));
        assert_eq!(parse_limit_size("1.5GiB"), Some(1536 << 20));
        assert_eq!(parse_limit_size("500MB"), Some(500_000_000));
        assert_eq!(parse_limit_size("4096"), Some(4096));
        assert_eq!(parse_limit_size("lots"), None);
        assert_eq!(parse_limit_size("-1M"), None);
        assert_eq!(parse_limit_size("M"), None);
    }

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
