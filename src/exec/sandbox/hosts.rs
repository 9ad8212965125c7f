//! The hosts a sandboxed run may reach through its proxy (`sandbox.allowed_hosts`): each a
//! name or address, or `*.` and a domain for every name below it, with an optional port.

use std::fmt;

/// One entry of `sandbox.allowed_hosts`: `host`, `host:port`, `*.domain`, `*.domain:port`,
/// `[v6 address]:port`. Names are compared without case and without a final dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: Host,
    /// The only port allowed; none: every port.
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    /// This name or address only.
    Exact(String),
    /// Every name ending in `.domain` (not the domain itself).
    Below(String),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{text:?} is not a host such as \"api.example.com\", \"example.com:443\" or \"*.example.com\": {why}")]
pub struct BadHost {
    pub text: String,
    pub why: &'static str,
}

impl std::str::FromStr for HostPattern {
    type Err = BadHost;

    fn from_str(text: &str) -> Result<HostPattern, BadHost> {
        let bad = |why| BadHost {
            text: text.to_string(),
            why,
        };
        let (host, port) =
            split_port(text.trim()).ok_or_else(|| bad("its port is no number from 1 to 65535"))?;
        let host = normalized(host);
        if host.is_empty() {
            return Err(bad("it names no host"));
        }
        let host = match host.strip_prefix("*.") {
            Some(domain) => Host::Below(domain.to_string()),
            None => Host::Exact(host),
        };
        let name = match &host {
            Host::Exact(n) | Host::Below(n) => n,
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.:_".contains(c))
        {
            return Err(bad("a host has only letters, digits, '-', '.', '_' (and ':' in an IPv6 address); '*' only as its first label"));
        }
        Ok(HostPattern { host, port })
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = match &self.host {
            Host::Exact(name) if name.contains(':') => format!("[{name}]"),
            Host::Exact(name) => name.clone(),
            Host::Below(domain) => format!("*.{domain}"),
        };
        match self.port {
            Some(port) => write!(f, "{host}:{port}"),
            None => f.write_str(&host),
        }
    }
}

impl HostPattern {
    /// Whether a connection to `host` (a name or address as a client asked for it) on
    /// `port` is allowed by this entry.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let host = normalized(host);
        match &self.host {
            Host::Exact(name) => host == *name,
            Host::Below(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }

    /// Whether every connection `other` allows, this one allows too (so `other` only
    /// narrows this).
    fn covers(&self, other: &HostPattern) -> bool {
        if self.port.is_some() && self.port != other.port {
            return false;
        }
        match (&self.host, &other.host) {
            // Ports were compared above: `self` allows every port, or the same one.
            (_, Host::Exact(name)) => self.allows(name, other.port.unwrap_or(0)),
            (Host::Below(mine), Host::Below(theirs)) => {
                theirs == mine || theirs.ends_with(&format!(".{mine}"))
            }
            (Host::Exact(_), Host::Below(_)) => false,
        }
    }
}

/// The hosts a run may reach: the user's list, narrowed by the repository's where it sets
/// one (an entry of the repository's that the user's list does not cover is left out).
pub(crate) fn narrowed(
    user: Option<&[HostPattern]>,
    repo: Option<&[HostPattern]>,
) -> Option<Vec<HostPattern>> {
    match (user, repo) {
        (None, None) => None,
        (Some(user), None) => Some(user.to_vec()),
        (None, Some(repo)) => Some(repo.to_vec()),
        (Some(user), Some(repo)) => Some(
            repo.iter()
                .filter(|r| user.iter().any(|u| u.covers(r)))
                .cloned()
                .collect(),
        ),
    }
}

/// Whether any entry of `list` lets a connection to `host`:`port` through.
pub(crate) fn allowed(list: &[HostPattern], host: &str, port: u16) -> bool {
    list.iter().any(|p| p.allows(host, port))
}

/// `text` as a host and its port: `[v6]:port`, `name:port`, a bare IPv6 address, a name.
fn split_port(text: &str) -> Option<(&str, Option<u16>)> {
    let port = |p: &str| p.parse::<u16>().ok().filter(|p| *p != 0);
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((host, Some(port(p)?))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match text.rsplit_once(':') {
        // More than one ':' and no brackets: an IPv6 address without a port.
        Some((host, _)) if host.contains(':') => Some((text, None)),
        Some((host, p)) => Some((host, Some(port(p)?))),
        None => Some((text, None)),
    }
}

/// A host as compared: lower case, no final dot, no brackets.
fn normalized(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> HostPattern {
        text.parse().expect(text)
    }

    #[test]
    fn a_name_allows_itself_on_every_port_or_the_one_given() {
        assert!(p("api.example.com").allows("API.example.com.", 443));
        assert!(p("api.example.com").allows("api.example.com", 80));
        assert!(!p("api.example.com").allows("example.com", 443));
        assert!(!p("api.example.com").allows("evil-api.example.com", 443));
        assert!(p("example.com:443").allows("example.com", 443));
        assert!(!p("example.com:443").allows("example.com", 80));
        assert!(p("[::1]:8080").allows("::1", 8080));
        assert!(p("::1").allows("[::1]", 1));
        assert!(p("127.0.0.2").allows("127.0.0.2", 9));
    }

    #[test]
    fn a_wildcard_allows_the_names_below_its_domain_only() {
        let wild = p("*.example.com");
        assert!(wild.allows("a.example.com", 443));
        assert!(wild.allows("a.b.example.com", 443));
        assert!(!wild.allows("example.com", 443));
        assert!(!wild.allows("badexample.com", 443));
        assert!(!wild.allows("example.com.evil.net", 443));
    }

    #[test]
    fn what_is_no_host_is_refused_with_why() {
        for bad in [
            "", "a b", "*", "*.", "h:0", "h:99999", "h:x", "a/b", "*.*.x", "[::1",
        ] {
            assert!(bad.parse::<HostPattern>().is_err(), "{bad:?}");
        }
        assert_eq!(p("Example.COM.:443").to_string(), "example.com:443");
        assert_eq!(p("[::1]:80").to_string(), "[::1]:80");
    }

    #[test]
    fn a_repository_only_narrows_the_users_list() {
        let user = [p("*.example.com"), p("pypi.org:443")];
        let repo = [
            p("api.example.com"),
            p("pypi.org"),
            p("evil.net"),
            p("pypi.org:443"),
        ];
        let kept = narrowed(Some(&user), Some(&repo)).expect("a list");
        let kept: Vec<String> = kept.iter().map(ToString::to_string).collect();
        assert_eq!(kept, ["api.example.com", "pypi.org:443"]);
        assert_eq!(narrowed(None, None), None);
        assert_eq!(
            narrowed(None, Some(&repo[..1])),
            Some(vec![p("api.example.com")])
        );
    }
}
