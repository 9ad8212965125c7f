//! Inside a sandbox whose network is allowed host by host: the guard's listener on the
//! sandbox's own loopback, each connection handed to the proxy's unix socket (see
//! `sandbox::proxy`), and the variables that point the command's clients at it.

use std::ffi::OsString;
use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The environment variable naming the proxy's socket to the guard (removed before the
/// command starts).
pub(crate) const PROXY_VAR: &str = "AGENT_WORKSPACE_PROXY_SOCKET";

/// Where local connections go directly: the sandbox's own loopback.
const DIRECT: &str = "localhost,127.0.0.1,::1";

/// Listens on the loopback for the command's proxied connections, passing each to the proxy
/// at `socket`; returns the variables that name the listener to the command's clients.
pub(crate) fn start(socket: &Path) -> io::Result<Vec<(OsString, OsString)>> {
    let listener = TcpListener::bind(("127.0.0.1", 0))?;
    let port = listener.local_addr()?.port();
    let socket = socket.to_path_buf();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let socket = socket.clone();
            std::thread::spawn(move || pass_on(client, &socket));
        }
    });
    let url = format!("http://127.0.0.1:{port}");
    let mut vars = vec![];
    for name in ["http_proxy", "https_proxy", "all_proxy"] {
        vars.push((name.into(), url.clone().into()));
        vars.push((name.to_ascii_uppercase().into(), url.clone().into()));
    }
    vars.push(("no_proxy".into(), DIRECT.into()));
    vars.push(("NO_PROXY".into(), DIRECT.into()));
    Ok(vars)
}

/// Copies `client`'s connection to and from a new connection to the proxy.
fn pass_on(client: TcpStream, socket: &PathBuf) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let (Ok(mut client_reader), Ok(mut proxy_writer)) = (client.try_clone(), proxy.try_clone())
    else {
        return;
    };
    let upstream = std::thread::spawn(move || {
        let _ = io::copy(&mut client_reader, &mut proxy_writer);
        let _ = proxy_writer.shutdown(Shutdown::Write);
    });
    let (mut proxy_reader, mut client_writer) = (proxy, client);
    let _ = io::copy(&mut proxy_reader, &mut client_writer);
    let _ = client_writer.shutdown(Shutdown::Write);
    let _ = upstream.join();
}
