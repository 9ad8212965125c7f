//! One list of output filters: what differs between runs and machines, replaced by
//! placeholders. Snapshot tests bind it with [`TestEnv::settings`]; [`TestEnv::normalize`]
//! applies the same list to text a test inspects itself.

use regex::Regex;
use serde_json::Value;

use super::TestEnv;

/// Filters that do not depend on the test environment, in the order they apply (after the
/// temp dir's): `(regex, replacement)`.
const FIXED: &[(&str, &str)] = &[
    // RFC 3339 timestamps: `2026-01-02T03:04:05Z`, with an optional fraction and offset.
    (
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:Z|[+-][0-9]{2}:[0-9]{2})",
        "[TIME]",
    ),
    // Commit ids: 40 hex digits.
    (r"\b[0-9a-f]{40}\b", "[COMMIT]"),
    // jj change ids: 32 letters k-z.
    (r"\b[k-z]{32}\b", "[CHANGE]"),
    // The namespace hash: 10 hex digits after a `-`.
    (r"-[0-9a-f]{10}\b", "-[HASH]"),
    // Process ids, in text and in JSON.
    (r#"(pid |"pid": |"pid_start": )[0-9]+"#, "${1}[PID]"),
    // Durations in JSON.
    (r#"("duration_ms": )[0-9]+"#, "${1}[MS]"),
    // Relative times in the status table: `just now`, `5m ago`.
    (r"\b(?:just now|[0-9]+[smhd] ago)\b", "[AGO]"),
    // The column after one: its width follows the longest relative time (`just now`,
    // `12s ago`, `5m ago`), so the gap after the header and each time is two spaces.
    (r"\b(UPDATED|\[AGO\]) {2,}(\S)", "${1}  ${2}"),
    // A workspace's TCP ports in JSON (chosen free when it was created).
    (r#"("ports": )\[[\s0-9,]*\]"#, "${1}[PORTS]"),
];

/// Filters only a displayed [`super::Outcome`] applies, after [`FIXED`]: what varies in the
/// tool's messages that tests comparing text themselves (through [`TestEnv::normalize`]) must
/// still see as it is.
const OUTCOME: &[(&str, &str)] = &[
    // Short commit ids (12 hex digits): jj's are random where the tool's own jj made the
    // commit (its jj is not seeded: see `harness::env::seed`).
    (r"\b[0-9a-f]{12}\b", "[SHORT]"),
    // The time in the name of a directory kept aside (`.kept/w1-20260102T030405Z`).
    (r"\b[0-9]{8}T[0-9]{6}Z\b", "[STAMP]"),
    // The name of a prepared (pool) workspace: `.pool-`, then the time in nanoseconds and the
    // process id, in hex (as long as the pid is: it varies).
    (r"(\.pool-)[0-9a-f]{16,}\b", "${1}[POOL]"),
    // The suffix of a record kept aside as corrupt.
    (r"(\.corrupt\.)[0-9]+\b", "${1}[N]"),
    // Run durations in the status views: `0.1s`.
    (r"\b[0-9]+\.[0-9]s\b", "[DUR]"),
    // This machine's memory, which the sandbox's default limits follow (`doctor`).
    (
        r"\b[0-9]+(?:\.[0-9]+)? [KMGT]iB of memory\b",
        "[SIZE] of memory",
    ),
    // jj's `*` after `clean` in the status table (its last snapshot is not newer than the
    // run's end): it depends on the second each happened in. `live_look.rs` tests it.
    (r"\bclean\*", "clean "),
];

impl TestEnv {
    /// The filters, in order: the temp dir (`[TMP]`, canonical and as created), then
    /// timestamps (`[TIME]`), commit ids (`[COMMIT]`), change ids (`[CHANGE]`), the
    /// namespace hash (`[HASH]`), pids (`[PID]`) and durations (`[MS]`).
    pub fn filters(&self) -> Vec<(String, String)> {
        let mut dirs = vec![self.root.to_string_lossy().into_owned()];
        let raw = self.tmp.path().to_string_lossy().into_owned();
        if raw != dirs[0] {
            dirs.push(raw);
        }
        let tmp = dirs
            .iter()
            .map(|dir| (regex::escape(dir), "[TMP]".to_string()));
        let fixed = FIXED
            .iter()
            .map(|(re, to)| (re.to_string(), to.to_string()));
        tmp.chain(fixed).collect()
    }

    /// What a displayed [`super::Outcome`] is filtered with: [`TestEnv::filters`], the binary
    /// under test (`[AW]`: its build directory varies), then short commit ids (`[SHORT]`),
    /// kept-aside stamps (`[STAMP]`, `[N]`), prepared workspaces' names (`[POOL]`) and run
    /// durations (`[DUR]`).
    pub(super) fn outcome_filters(&self) -> Vec<(String, String)> {
        let aw = (regex::escape(super::AW), "[AW]".to_string());
        let outcome = OUTCOME
            .iter()
            .map(|(re, to)| (re.to_string(), to.to_string()));
        let mut all = self.filters();
        all.push(aw);
        all.extend(outcome);
        all
    }

    /// insta settings with [`TestEnv::filters`]: `env.settings().bind(|| assert_snapshot!(..))`.
    pub fn settings(&self) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        for (re, to) in self.filters() {
            settings.add_filter(&re, to);
        }
        settings
    }

    /// `text` with [`TestEnv::filters`] applied.
    pub fn normalize(&self, text: &str) -> String {
        apply(&self.filters(), text)
    }

    /// [`TestEnv::normalize`] applied to pretty-printed JSON.
    pub fn normalize_json(&self, value: &Value) -> String {
        self.normalize(&serde_json::to_string_pretty(value).unwrap())
    }
}

/// `text` with `filters` applied in order.
pub(super) fn apply(filters: &[(String, String)], text: &str) -> String {
    filters.iter().fold(text.to_string(), |text, (re, to)| {
        let re = Regex::new(re).expect("a valid filter");
        re.replace_all(&text, to.as_str()).into_owned()
    })
}

#[test]
fn normalize_replaces_what_varies() {
    let env = TestEnv::new();
    let text = format!(
        "{}/x repo-0123abcdef 2026-11-22T13:16:19Z pid 4242 {} {} {} 2026-11-22T13:16:19.123+01:00 {}",
        env.path().display(),
        "a".repeat(40),
        "k".repeat(32),
        "\"pid\": 17,",
        "\"pid_start\": 9, \"duration_ms\": 12"
    );
    let expected = "[TMP]/x repo-[HASH] [TIME] pid [PID] [COMMIT] [CHANGE] \"pid\": [PID], \
                    [TIME] \"pid_start\": [PID], \"duration_ms\": [MS]";
    assert_eq!(env.normalize(&text), expected);
    // The snapshot settings apply the same list.
    env.settings()
        .bind(|| insta::assert_snapshot!(text, @r#"[TMP]/x repo-[HASH] [TIME] pid [PID] [COMMIT] [CHANGE] "pid": [PID], [TIME] "pid_start": [PID], "duration_ms": [MS]"#));
}

#[test]
fn normalize_leaves_other_words_alone() {
    let env = TestEnv::new();
    // Too short, too long, not hex, not after a dash.
    let text = format!(
        "{} {} x0123abcdef repo-0123abcdef0",
        "a".repeat(39),
        "k".repeat(33)
    );
    assert_eq!(env.normalize(&text), text);
}
