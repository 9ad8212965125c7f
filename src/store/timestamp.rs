//! The moments the store keeps (a record's `*_at`, a land's, a setup's, a prepared
//! workspace's): RFC 3339 in UTC to the second, `2026-11-26T22:58:06Z`, on disk and in JSON.
//!
//! A record is data an agent can write, so reading one never fails on a time: text of any
//! other form is kept as it was (rewriting the record leaves it unchanged) and has a moment
//! only when it reads as RFC 3339 at all; an age or a duration with it is unknown.
//!
//! A timestamp keeps its text and reads the moment from it when asked: a record holds a
//! hundred of them (two per past run) and most commands that load it ask for none, while
//! every save writes them all.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A moment a record keeps, as its text.
///
/// Two timestamps are equal when their texts are: a time this tool writes is one text per
/// second, and text in another form (an older writer's, an agent's edit) is never equal to
/// this tool's text for its moment, being another text.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Timestamp(Box<str>);

impl Timestamp {
    /// Now, to the second (as it will read back from disk).
    pub(crate) fn now() -> Timestamp {
        Timestamp::from_time(SystemTime::now())
    }

    /// `time` to the second, within what RFC 3339 writes: a time before 1970 or after 9999
    /// (a clock set wrong, a file's mtime an agent set) is taken as the nearest it can write.
    pub(crate) fn from_time(time: SystemTime) -> Timestamp {
        let secs = time
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let time = UNIX_EPOCH + Duration::from_secs(secs.min(LAST_SECOND));
        // A whole second from 1970 to 9999, which humantime writes without failing.
        Timestamp(humantime::format_rfc3339_seconds(time).to_string().into())
    }

    /// Reads `text` as written on disk; never fails (see the module's note).
    pub(crate) fn parse(text: &str) -> Timestamp {
        Timestamp(text.into())
    }

    /// The text, as it was read or will be written.
    fn as_str(&self) -> &str {
        &self.0
    }

    /// Its moment; `None` for text that is no time. Text in another form than this tool's
    /// has one when it reads as RFC 3339 (fractions of a second, no `Z`, a space for `T`).
    pub(crate) fn time(&self) -> Option<SystemTime> {
        humantime::parse_rfc3339_weak(self.as_str()).ok()
    }

    /// How long before `now` it was (zero for a moment after `now`); `None` for text that is
    /// no time.
    pub(crate) fn age(&self, now: SystemTime) -> Option<Duration> {
        self.time()
            .map(|t| now.duration_since(t).unwrap_or_default())
    }

    /// How long from it to `later` (zero when `later` is earlier); `None` when either is
    /// no time.
    pub(crate) fn until(&self, later: &Timestamp) -> Option<Duration> {
        later.time().and_then(|end| self.age(end))
    }

    /// Without `-` and `:`, for a file name: `20261126T225806Z`.
    pub(crate) fn compact(&self) -> String {
        self.to_string()
            .chars()
            .filter(|c| *c != '-' && *c != ':')
            .collect()
    }

    /// Reads [`Timestamp::compact`]'s form; `None` for anything else.
    pub(crate) fn parse_compact(stamp: &str) -> Option<Timestamp> {
        let b = stamp.as_bytes();
        if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
            return None;
        }
        let digits = |r: std::ops::Range<usize>| {
            b.get(r.clone())
                .filter(|d| d.iter().all(u8::is_ascii_digit))
                .map(|_| &stamp[r])
        };
        let text = format!(
            "{}-{}-{}T{}:{}:{}Z",
            digits(0..4)?,
            digits(4..6)?,
            digits(6..8)?,
            digits(9..11)?,
            digits(11..13)?,
            digits(13..15)?
        );
        humantime::parse_rfc3339(&text)
            .ok()
            .map(Timestamp::from_time)
    }
}

/// The last second RFC 3339 writes: 9999-12-31T23:59:59Z.
const LAST_SECOND: u64 = 253_402_300_799;

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Timestamp").field(&self.as_str()).finish()
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Keeps the string as it is; its moment is read when asked.
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Timestamp;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Timestamp, E> {
                Ok(Timestamp::parse(text))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// Its schema is a string's; each field adds the pattern of [`crate::store::metadata::TIMESTAMP_PATTERN`].
#[cfg(test)]
impl schemars::JsonSchema for Timestamp {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::Timestamp;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn what_this_tool_writes_reads_back_the_same() {
        let now = Timestamp::now();
        let text = serde_json::to_string(&now).unwrap();
        let back: Timestamp = serde_json::from_str(&text).unwrap();
        assert_eq!(back, now);
        let t = Timestamp::parse("2026-11-26T22:58:06Z");
        assert_eq!(t.to_string(), "2026-11-26T22:58:06Z");
        assert_eq!(
            t.time(),
            Some(UNIX_EPOCH + Duration::from_secs(1_795_733_886))
        );
        assert_eq!(t.compact(), "20261126T225806Z");
        assert_eq!(Timestamp::parse_compact("20261126T225806Z"), Some(t));
    }

    /// Text an agent or an older writer left is kept byte for byte, with a moment only when
    /// it is a time; ages with text that is no time are unknown, never a panic.
    #[test]
    fn other_text_is_kept_as_it_was() {
        for (text, is_time) in [
            ("yesterday", false),
            ("", false),
            ("1969-01-01T00:00:00Z", false),
            ("2026-11-26T22:58:06.5Z", true),
            ("2026-11-26 22:58:06", true),
        ] {
            let json = serde_json::to_string(text).unwrap();
            let t: Timestamp = serde_json::from_str(&json).unwrap();
            assert_eq!(serde_json::to_string(&t).unwrap(), json);
            assert_eq!(t.time().is_some(), is_time, "{text}");
            assert_eq!(t.age(std::time::SystemTime::now()).is_some(), is_time);
        }
        assert_eq!(Timestamp::parse_compact("2026112xT225806Z"), None);
        // A leap second reads, as the next second, but is kept as written.
        let leap = Timestamp::parse("2026-12-31T23:59:60Z");
        assert_eq!(leap.to_string(), "2026-12-31T23:59:60Z");
        assert!(leap.time().is_some());
        // Times RFC 3339 cannot write are clamped, never a panic.
        let early = UNIX_EPOCH - Duration::from_secs(86_400);
        assert_eq!(
            Timestamp::from_time(early).to_string(),
            "1970-01-01T00:00:00Z"
        );
        let late = UNIX_EPOCH + Duration::from_secs(300_000_000_000);
        assert_eq!(
            Timestamp::from_time(late).to_string(),
            "9999-12-31T23:59:59Z"
        );
        assert_eq!(
            Timestamp::parse("2026-01-01T00:00:00Z")
                .until(&Timestamp::parse("2026-01-01T00:01:00Z")),
            Some(Duration::from_secs(60))
        );
        assert_eq!(Timestamp::parse("x").until(&Timestamp::now()), None);
    }

    /// Text of a time's length that is no time, or not in this tool's form, is kept as it
    /// was like any other; equal timestamps are equal texts, so a moment this tool writes
    /// is never equal to another form of it.
    #[test]
    fn text_of_a_times_length_is_kept_and_compared_as_text() {
        for (text, is_time) in [
            ("2026-02-30T00:00:00Z", false),
            ("2026-13-01T00:00:00Z", false),
            ("2026-11-26T24:00:00Z", false),
            ("2026-11-26 22:58:06Z", true),
            ("2026-11-26T22:58:0\u{e9}", false),
        ] {
            let json = format!("\"{text}\"");
            let t: Timestamp = serde_json::from_str(&json).unwrap();
            assert_eq!(serde_json::to_string(&t).unwrap(), json, "{text}");
            assert_eq!(t.time().is_some(), is_time, "{text}");
        }
        let written = Timestamp::parse("2026-11-26T22:58:06Z");
        let other = Timestamp::parse("2026-11-26 22:58:06Z");
        assert_eq!(other.time(), written.time());
        assert_ne!(other, written);
        assert_eq!(
            Timestamp::from_time(UNIX_EPOCH + Duration::from_secs(1_795_733_886)),
            written
        );
        assert_eq!(
            format!("{written:?}"),
            "Timestamp(\"2026-11-26T22:58:06Z\")"
        );
    }
}
