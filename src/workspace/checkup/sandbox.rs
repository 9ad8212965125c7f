//! What a sandboxed run gets on this host: whether it reaches the network (and so can send
//! what it reads), and the process and memory limits its cgroup holds it to.

use super::Check;
use crate::config::Config;
use crate::exec::sandbox::limits;

/// The sandbox's network and limits, as `config` and this host give them.
pub(super) fn check(config: &Config) -> Vec<Check> {
    vec![network(config), limits(config)]
}

/// Says plainly that a networked sandbox can send what it reads: a warning where every run
/// is sandboxed (`sandbox.enabled`) with the network on.
fn network(config: &Config) -> Check {
    let name = "sandbox network";
    if !config.sandbox_network {
        return Check::ok(
            name,
            "sandboxed runs have no network (sandbox.network = false)",
        );
    }
    if let Some(hosts) = &config.sandbox_allowed_hosts {
        let list: Vec<String> = hosts.iter().map(ToString::to_string).collect();
        let message = match list.is_empty() {
            true => "sandboxed runs reach no host (sandbox.allowed_hosts = [])".to_string(),
            false => format!(
                "sandboxed runs reach only {} (sandbox.allowed_hosts), through a proxy: an agent in one can send what it can read there to those hosts",
                list.join(", ")
            ),
        };
        return Check::ok(name, &message);
    }
    let message = "sandboxed runs reach the network (sandbox.network, the default): an agent \
                   in one can send what it can read there (its workspace, what the sandbox \
                   shows of HOME, the variables passed in) to any host";
    let fix = "set sandbox.allowed_hosts to the hosts the agent needs (its model's API), or \
               sandbox.network = false (or pass --no-network) where it needs none, in your \
               own file";
    match config.sandbox {
        true => Check::warning(name, message, fix),
        false => Check::ok(name, message),
    }
}

/// The limits a sandboxed run would get now, or why it gets none.
fn limits(config: &Config) -> Check {
    let name = "sandbox limits";
    match limits::resolve(&config.sandbox_limits) {
        Ok((got, None)) => {
            let memory = got
                .memory
                .map_or_else(|| "no memory limit".to_string(), |m| {
                    format!("{} of memory", limits::size_words(m))
                });
            let pids = got.pids.map_or_else(
                || "no process limit".to_string(),
                |p| format!("at most {p} processes"),
            );
            Check::ok(name, format!("a sandboxed run gets {pids} and {memory}, through a cgroup"))
        }
        Ok((_, Some(why))) => Check::warning(
            name,
            format!("a sandboxed run gets no process or memory limit here: {why}"),
            "run as a user who may make cgroups on this host (root on a host without a cgroup manager), or keep [sandbox.limits] unset and watch runaway agents yourself",
        ),
        Err(err) => {
            let message = err.to_string();
            let worded: crate::error::CliError = err.into();
            Check::error(name, message, worded.hint.unwrap_or_default())
        }
    }
}
