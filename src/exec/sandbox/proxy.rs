//! The proxy of a sandboxed run whose network is allowed host by host
//! (`sandbox.allowed_hosts`): the run has a network namespace of its own with only loopback,
//! and its one way out is this proxy, which agent-workspace runs outside the sandbox for
//! that run, on a unix socket bound into it. Inside, the guard (`process::forward`) listens
//! on the sandbox's loopback and hands each connection to the socket; `HTTP_PROXY`,
//! `HTTPS_PROXY` and `ALL_PROXY` name that listener.
//!
//! Each connection opens with a request: `CONNECT host:port` (a tunnel, what HTTPS and most
//! clients use) or a plain HTTP request naming its URL. Its host is compared with the list
//! as the client wrote it and resolved here, outside; a host the list does not allow gets
//! `403 Forbidden`, and the refusal (host, port, time) is kept for the run's record.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::hosts::{self, HostPattern};
use crate::store::metadata::RefusedHost;
use crate::store::timestamp::Timestamp;

/// The most bytes of a request's head (its line and headers) the proxy reads.
const HEAD_LIMIT: usize = 64 * 1024;
/// How long a client has to send its request's head.
const HEAD_TIME: Duration = Duration::from_secs(30);
/// How long connecting to an allowed host may take.
const CONNECT_TIME: Duration = Duration::from_secs(15);
/// The most distinct refused hosts a run's record keeps (each with its count).
const REFUSALS_KEPT: usize = 20;

/// A running proxy: its socket in a directory of its own, and what it refused so far.
pub(crate) struct Proxy {
    dir: PathBuf,
    socket: PathBuf,
    stop: Arc<AtomicBool>,
    refused: Arc<Mutex<Vec<RefusedHost>>>,
    accepting: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Starts a proxy letting through connections to `allowed` only, its socket in a new
    /// directory only this user can enter.
    pub(crate) fn start(allowed: Vec<HostPattern>) -> io::Result<Proxy> {
        let dir = private_dir()?;
        let socket = dir.join("proxy.sock");
        let listener = match UnixListener::bind(&socket) {
            Ok(listener) => listener,
            Err(err) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(err);
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let refused = Arc::new(Mutex::new(vec![]));
        let allowed = Arc::new(allowed);
        let accepting = {
            let (stop, refused) = (stop.clone(), refused.clone());
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(client) = client else { continue };
                    let (allowed, refused) = (allowed.clone(), refused.clone());
                    std::thread::spawn(move || serve(client, &allowed, &refused));
                }
            })
        };
        Ok(Proxy {
            dir,
            socket,
            stop,
            refused,
            accepting: Some(accepting),
        })
    }

    /// The socket the sandbox's forwarder connects to.
    pub(crate) fn socket(&self) -> &Path {
        &self.socket
    }

    /// Stops accepting (connections under way end with the sandbox) and returns the hosts
    /// refused, in the order first refused.
    pub(crate) fn finish(mut self) -> Vec<RefusedHost> {
        self.stop_accepting();
        let refused = self.refused.lock().map(|r| r.clone()).unwrap_or_default();
        refused
    }

    fn stop_accepting(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(accepting) = self.accepting.take() {
            // Wakes the accepting thread, which then sees the flag.
            let _ = UnixStream::connect(&self.socket);
            let _ = accepting.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop_accepting();
    }
}

/// A new directory for the socket: under the temporary directory when its path leaves
/// room for a socket's name (a unix socket's path is at most 107 bytes), else under `/tmp`.
fn private_dir() -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let tmp = std::env::temp_dir();
    let base = match tmp.as_os_str().len() < 60 {
        true => tmp,
        false => PathBuf::from("/tmp"),
    };
    let mut last = None;
    for _ in 0..8 {
        let dir = base.join(format!("agent-workspace-proxy-{:016x}", random()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no directory for the proxy's socket")))
}

fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.write_u32(std::process::id());
    hasher.finish()
}

/// What a request asks the proxy for.
#[derive(Debug, PartialEq, Eq)]
enum Asked {
    /// A tunnel to `host`:`port`.
    Tunnel { host: String, port: u16 },
    /// A plain HTTP request to `host`:`port`, passed on as `head` (its target made
    /// origin-form, the proxy's own headers left out).
    Plain {
        host: String,
        port: u16,
        head: Vec<u8>,
    },
}

/// Serves one connection from the sandbox: reads its request, refuses or connects, then
/// copies both ways until either side ends.
fn serve(mut client: UnixStream, allowed: &[HostPattern], refused: &Mutex<Vec<RefusedHost>>) {
    let _ = client.set_read_timeout(Some(HEAD_TIME));
    let Ok((head, rest)) = read_head(&mut client) else {
        return;
    };
    let asked = match parse(&head) {
        Ok(asked) => asked,
        Err(why) => return answer(&mut client, "400 Bad Request", why),
    };
    let (host, port) = match &asked {
        Asked::Tunnel { host, port } | Asked::Plain { host, port, .. } => (host.clone(), *port),
    };
    if !hosts::allowed(allowed, &host, port) {
        note_refusal(refused, &host, port);
        let why = format!(
            "agent-workspace: {host}:{port} is not in sandbox.allowed_hosts, so this sandbox may not reach it\n"
        );
        return answer(&mut client, "403 Forbidden", &why);
    }
    let Some(mut server) = connect(&host, port) else {
        let why = format!("agent-workspace: cannot connect to {host}:{port}\n");
        return answer(&mut client, "502 Bad Gateway", &why);
    };
    let _ = client.set_read_timeout(None);
    let sent = match &asked {
        Asked::Tunnel { .. } => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
        Asked::Plain { head, .. } => server.write_all(head),
    };
    if sent.and_then(|()| server.write_all(&rest)).is_err() {
        return;
    }
    splice(client, server);
}

/// Reads up to the end of the request's head: the head, and what came after it.
fn read_head(client: &mut UnixStream) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + at + 4;
            let rest = buf.split_off(end);
            return Ok((buf, rest));
        }
        if buf.len() > HEAD_LIMIT {
            return Err(io::ErrorKind::InvalidData.into());
        }
    }
}

/// What the request head `head` asks for, or why it is none the proxy serves.
fn parse(head: &[u8]) -> Result<Asked, &'static str> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err("agent-workspace: the proxy could not read this request\n"),
    }
    let (Some(method), Some(target), Some(version)) =
        (request.method, request.path, request.version)
    else {
        return Err("agent-workspace: the proxy could not read this request\n");
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) =
            authority(target, None).ok_or("agent-workspace: CONNECT needs host:port\n")?;
        return Ok(Asked::Tunnel { host, port });
    }
    let Some(after) = strip_prefix_ignore_case(target, "http://") else {
        return Err("agent-workspace: the proxy passes on http:// URLs and CONNECT tunnels only\n");
    };
    let (authority_text, path) = match after.find(['/', '?']) {
        Some(at) => (&after[..at], &after[at..]),
        None => (after, "/"),
    };
    let (host, port) = authority(authority_text, Some(80))
        .ok_or("agent-workspace: the URL names no host the proxy can read\n")?;
    let path = match path.starts_with('?') {
        true => format!("/{path}"),
        false => path.to_string(),
    };
    let mut out = format!("{method} {path} HTTP/1.{version}\r\n").into_bytes();
    for header in request.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("proxy-connection")
            || name.eq_ignore_ascii_case("proxy-authorization")
        {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(header.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Ok(Asked::Plain {
        host,
        port,
        head: out,
    })
}

/// `host:port` (or `[v6]:port`) as a host and port; `default` when no port is given. A
/// user name (`user@host`) is refused: which host it names is for the client to say.
fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    if text.contains('@') || text.is_empty() {
        return None;
    }
    let (host, port) = match text.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        },
    };
    let port = match port {
        Some(port) => port.parse::<u16>().ok().filter(|p| *p != 0)?,
        None => default?,
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// A connection to `host`:`port`, resolved here, each address tried in turn.
fn connect(host: &str, port: u16) -> Option<TcpStream> {
    let addresses = (host, port).to_socket_addrs().ok()?;
    addresses
        .into_iter()
        .find_map(|address| TcpStream::connect_timeout(&address, CONNECT_TIME).ok())
}

/// Answers the client with `status` and `body`, then closes.
fn answer(client: &mut UnixStream, status: &str, body: &str) {
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(text.as_bytes());
}

/// Copies bytes both ways until each side has ended its half.
fn splice(client: UnixStream, server: TcpStream) {
    let (Ok(mut client_reader), Ok(mut server_writer)) = (client.try_clone(), server.try_clone())
    else {
        return;
    };
    let upstream = std::thread::spawn(move || {
        let _ = io::copy(&mut client_reader, &mut server_writer);
        let _ = server_writer.shutdown(Shutdown::Write);
    });
    let (mut server_reader, mut client_writer) = (server, client);
    let _ = io::copy(&mut server_reader, &mut client_writer);
    let _ = client_writer.shutdown(Shutdown::Write);
    let _ = upstream.join();
}

/// Keeps `host`:`port`'s refusal: its first time and how many.
fn note_refusal(refused: &Mutex<Vec<RefusedHost>>, host: &str, port: u16) {
    let Ok(mut refused) = refused.lock() else {
        return;
    };
    let name = format!("{host}:{port}");
    if let Some(known) = refused.iter_mut().find(|r| r.host == name) {
        known.times += 1;
    } else if refused.len() < REFUSALS_KEPT {
        refused.push(RefusedHost {
            host: name,
            at: Timestamp::now(),
            times: 1,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tunnel_and_a_plain_request_name_their_host() {
        let tunnel = parse(b"CONNECT Example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
        assert_eq!(
            tunnel,
            Ok(Asked::Tunnel {
                host: "example.com".into(),
                port: 443
            })
        );
        let plain = parse(
            b"GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\n\r\n",
        );
        assert_eq!(
            plain,
            Ok(Asked::Plain {
                host: "example.com".into(),
                port: 80,
                head: b"GET /a?b HTTP/1.1\r\nHost: example.com\r\n\r\n".to_vec(),
            })
        );
        let v6 = parse(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n");
        assert_eq!(
            v6,
            Ok(Asked::Tunnel {
                host: "::1".into(),
                port: 8080
            })
        );
    }

    #[test]
    fn what_names_no_host_plainly_is_refused() {
        for head in [
            &b"CONNECT example.com HTTP/1.1\r\n\r\n"[..],
            b"CONNECT user@example.com:443 HTTP/1.1\r\n\r\n",
            b"GET /local HTTP/1.1\r\nHost: example.com\r\n\r\n",
            b"GET ftp://example.com/ HTTP/1.1\r\n\r\n",
            b"GET http://user@evil.net@example.com/ HTTP/1.1\r\n\r\n",
            b"NOT HTTP\r\n\r\n",
        ] {
            assert!(parse(head).is_err(), "{}", String::from_utf8_lossy(head));
        }
    }
}
