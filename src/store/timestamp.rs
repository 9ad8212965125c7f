//! The moments the store keeps (a record's `*_at`, a land's, a setup's, a prepared
//! workspace's): RFC 3339 in UTC to the second, `2026-11-26T22:58:06Z`, on disk and in JSON.
//!
//! A record is data an agent can write, so reading one never fails on a time: text of any
//! other form is kept as it was (rewriting the record leaves it unchanged) and has a moment
//! only when it reads as RFC 3339 at all; an age or a duration with it is unknown.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A moment a record keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Timestamp(Repr);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Repr {
    /// A whole second, written as this tool writes it.
    At(SystemTime),
    /// Text in another form (an older writer's, an agent's edit), kept as it was; its
    /// moment when it reads as RFC 3339 (fractions of a second, no `Z`, a space for `T`).
    Other {
        text: String,
        at: Option<SystemTime>,
    },
}

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
        Timestamp(Repr::At(
            UNIX_EPOCH + Duration::from_secs(secs.min(LAST_SECOND)),
        ))
    }

    /// Reads `text` as written on disk; never fails (see the module's note).
    pub(crate) fn parse(text: &str) -> Timestamp {
        let at = humantime::parse_rfc3339_weak(text).ok();
        match at {
            Some(time) if writes_as(time, text) => Timestamp(Repr::At(time)),
            at => Timestamp(Repr::Other {
                text: text.to_string(),
                at,
            }),
        }
    }

    /// Its moment; `None` for text that is no time.
    pub(crate) fn time(&self) -> Option<SystemTime> {
        match &self.0 {
            Repr::At(time) => Some(*time),
            Repr::Other { at, .. } => *at,
        }
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

/// Whether `time` is written exactly as `text` (without building the text: every record
/// read checks each of its times).
fn writes_as(time: SystemTime, text: &str) -> bool {
    struct Matches<'a>(&'a str);
    impl fmt::Write for Matches<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0 = self.0.strip_prefix(s).ok_or(fmt::Error)?;
            Ok(())
        }
    }
    let mut rest = Matches(text);
    // A moment humantime cannot write (after 9999) is an error here, so `Other`.
    fmt::write(
        &mut rest,
        format_args!("{}", humantime::format_rfc3339_seconds(time)),
    )
    .is_ok()
        && rest.0.is_empty()
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            // Only `from_time` (clamped) and `parse` (that wrote it back) make one: a whole
            // second from 1970 to 9999, which humantime writes without failing.
            Repr::At(time) => write!(f, "{}", humantime::format_rfc3339_seconds(*time)),
            Repr::Other { text, .. } => f.write_str(text),
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Reads the string in place: a time this tool wrote allocates nothing.
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
}
