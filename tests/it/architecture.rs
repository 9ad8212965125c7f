//! The module graph of `src/` has no circle.
//!
//! A module is one file: `src/store/state.rs` is `store::state`, `src/vcs/jj/mod.rs` is
//! `vcs::jj`; `src/lib.rs` and `src/main.rs` declare the modules and are not ones. Module `a`
//! depends on `b` when `a` names a path through `crate::`, `super::` or `self::` (in a `use`
//! line, a group `{b, c::{d, e}}` or a path in code) that leads into `b`: the longest module
//! the path starts with. So `cli` and its commands count apart, and so do a folder's
//! submodules: a circle between two files of one folder fails like one between layers. A
//! parent naming a child by its bare name (`mod child;`, `child::f()`) is how Rust declares
//! it, not an edge. Unit tests (`tests.rs`, and from a `#[cfg(test)]` line to the end of a
//! file) do not count: they may reach sideways for fixtures.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

pub(crate) type Graph = BTreeMap<String, BTreeSet<String>>;

pub(crate) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_module_graph_has_no_cycles() {
    let graph = module_graph(&src());
    assert!(
        graph.contains_key("cli::parse"),
        "no modules read: {graph:?}"
    );
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "the module graph has cycles (each line: modules that depend on each other, then one \
         cycle through them):\n{}",
        cycles.join("\n")
    );
}

/// Every module of `src` (one per `.rs` file) and the modules it names.
pub(crate) fn module_graph(src: &Path) -> Graph {
    let files: Vec<(String, PathBuf)> = rust_files(src)
        .into_iter()
        .filter_map(|file| Some((module_of(file.strip_prefix(src).ok()?)?, file)))
        .collect();
    let modules: BTreeSet<&str> = files.iter().map(|(m, _)| m.as_str()).collect();
    let mut graph = Graph::new();
    for (module, file) in &files {
        let text = fs::read_to_string(file).unwrap();
        let deps: BTreeSet<String> = references(module, &text)
            .iter()
            .filter_map(|path| longest_module(&modules, path))
            .filter(|dep| dep != module)
            .collect();
        graph.insert(module.clone(), deps);
    }
    graph
}

/// The module a file under `src/` is (`a/b.rs` and `a/b/mod.rs` are `a::b`); `None` for the
/// crate roots and unit-test files.
fn module_of(rel: &Path) -> Option<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.last().map(String::as_str) {
        Some("tests") => return None,
        Some("mod") => {
            parts.pop();
        }
        _ => {}
    }
    let module = parts.join("::");
    (!matches!(module.as_str(), "main" | "lib" | "")).then_some(module)
}

/// The longest module of `modules` that `path` (`a::b::Item`) starts with.
fn longest_module(modules: &BTreeSet<&str>, path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .map(|n| parts[..n].join("::"))
        .find(|prefix| modules.contains(prefix.as_str()))
}

pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The paths (from the crate root, `a::b::Item`) that module `module`'s `text` names through
/// `crate::`, `super::` or `self::`, outside comments and unit tests.
fn references(module: &str, text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let here: Vec<&str> = module.split("::").collect();
    let mut found = BTreeSet::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let Some(start) = ["crate::", "super::", "self::"]
            .iter()
            .filter_map(|key| rest.find(key))
            .min()
        else {
            break;
        };
        let before = code[..at + start].chars().last();
        at += start;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            // `$crate::`, `my_crate::`, `a::super::`: not a path from here.
            at += code[at..].find("::").unwrap_or(0) + 2;
            continue;
        }
        let mut base: Vec<&str> = vec![];
        let mut rest = &code[at..];
        if let Some(after) = rest.strip_prefix("crate::") {
            rest = after;
        } else if let Some(after) = rest.strip_prefix("self::") {
            base = here.clone();
            rest = after;
        } else {
            base = here.clone();
            while let Some(after) = rest.strip_prefix("super::") {
                base.pop();
                rest = after;
            }
        }
        let base: Vec<String> = base.into_iter().map(String::from).collect();
        let (paths, used) = paths(rest, &base);
        found.extend(paths.into_iter().map(|p| p.join("::")));
        at = code.len() - rest.len() + used.max(1);
    }
    found
}

/// The paths a `use` tree names, each prefixed by `prefix`: `a::b`, `a::{b, c::{d, e}}`;
/// `self` inside a group is the group's own path. Also how many bytes of `text` it took.
fn paths(text: &str, prefix: &[String]) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix.to_vec();
    let mut at = 0;
    loop {
        let rest = &text[at..];
        if let Some(group) = rest.strip_prefix('{') {
            at += 1;
            let mut found = vec![];
            let mut inner = group;
            loop {
                let trimmed = inner.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
                at += inner.len() - trimmed.len();
                inner = trimmed;
                if inner.is_empty() {
                    return (found, at);
                }
                if inner.starts_with('}') {
                    return (found, at + 1);
                }
                let (more, used) = paths(inner, &path);
                if used == 0 {
                    // Not a path (`*`, `r#`): skip one character.
                    at += inner.chars().next().map_or(1, char::len_utf8);
                    inner = &text[at..];
                    continue;
                }
                found.extend(more);
                at += used;
                inner = &text[at..];
            }
        }
        let name = ident(rest);
        if name.is_empty() {
            let taken = at;
            return (
                if path.len() > prefix.len() {
                    vec![path]
                } else {
                    vec![]
                },
                taken,
            );
        }
        at += name.len();
        if name != "self" {
            path.push(name.to_string());
        }
        match text[at..].strip_prefix("::") {
            Some(_) => at += 2,
            None => return (vec![path], at),
        }
    }
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// One line per group of modules that depend on each other (a strongly connected component
/// of more than one module): its members, a shortest cycle through its first member, and
/// every edge among them.
fn cycles(graph: &Graph) -> Vec<String> {
    components(graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|component| {
            let first = component.iter().next().unwrap();
            let cycle = shortest_cycle(graph, first, &component);
            let edges: Vec<String> = component
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|to| component.contains(*to))
                        .map(move |to| format!("{from} -> {to}"))
                })
                .collect();
            format!(
                "{{{}}}: {} (all edges among them: {})",
                component.iter().cloned().collect::<Vec<_>>().join(", "),
                cycle.join(" -> "),
                edges.join(", ")
            )
        })
        .collect()
}

/// The strongly connected components: modules that reach each other.
fn components(graph: &Graph) -> Vec<BTreeSet<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(node) = todo.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|node| (node, reach(node))).collect();
    let mut placed = BTreeSet::new();
    let mut out = vec![];
    for node in graph.keys() {
        if placed.contains(node) {
            continue;
        }
        let mut component: BTreeSet<String> = reached[node]
            .iter()
            .filter(|other| reached.get(other).is_some_and(|r| r.contains(node)))
            .cloned()
            .collect();
        component.insert(node.clone());
        placed.extend(component.iter().cloned());
        out.push(component);
    }
    out
}

/// A shortest path `start -> .. -> start` inside `within` (breadth first).
fn shortest_cycle(graph: &Graph, start: &str, within: &BTreeSet<String>) -> Vec<String> {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([start.to_string()]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(&node).into_iter().flatten() {
            if !within.contains(next) {
                continue;
            }
            if next == start {
                let mut path = vec![start.to_string(), node.clone()];
                while let Some(prev) = came_from.get(path.last().unwrap()) {
                    path.push(prev.clone());
                }
                if node == start {
                    path.pop();
                }
                path.reverse();
                return path;
            }
            if !came_from.contains_key(next) {
                came_from.insert(next.clone(), node.clone());
                queue.push_back(next.clone());
            }
        }
    }
    unreachable!("{start} is in a component of more than one module")
}

fn graph(edges: &[(&str, &str)]) -> Graph {
    let mut graph = Graph::new();
    for (from, to) in edges {
        graph
            .entry(from.to_string())
            .or_default()
            .insert(to.to_string());
        graph.entry(to.to_string()).or_default();
    }
    graph
}

#[test]
fn a_layered_graph_has_no_cycles() {
    let layered = graph(&[
        ("cli", "cli::parse"),
        ("cli", "cli::commands::run"),
        ("cli::parse", "cli::commands::run"),
        ("cli::commands::run", "cli::global"),
        ("cli::commands::run", "workspace"),
        ("workspace", "vcs"),
        ("vcs", "exec::process"),
        ("exec::process", "error"),
    ]);
    assert_eq!(cycles(&layered), Vec::<String>::new());
}

#[test]
fn cycles_are_found_and_named() {
    let cyclic = graph(&[
        ("cli::commands::run", "cli"),
        ("cli", "cli::commands::run"),
        ("exec::process::child", "exec::process::guard"),
        ("exec::process::guard", "exec::process::child"),
        ("vcs", "store::tree"),
        ("store::tree", "store::metadata"),
        ("store::metadata", "vcs"),
    ]);
    assert_eq!(
        cycles(&cyclic),
        [
            "{cli, cli::commands::run}: cli -> cli::commands::run -> cli \
             (all edges among them: cli -> cli::commands::run, cli::commands::run -> cli)",
            "{exec::process::child, exec::process::guard}: exec::process::child -> \
             exec::process::guard -> exec::process::child (all edges among them: \
             exec::process::child -> exec::process::guard, exec::process::guard -> \
             exec::process::child)",
            "{store::metadata, store::tree, vcs}: store::metadata -> vcs -> store::tree -> \
             store::metadata (all edges among them: store::metadata -> vcs, store::tree -> \
             store::metadata, vcs -> store::tree)",
        ]
    );
}

#[test]
fn references_come_from_use_lines_groups_and_relative_paths() {
    let text = "\
use crate::error::CliError;
use crate::{store::layout, vcs::{Backend, jj::{self, Jj}}, exec::process::run};
use super::land_preview::{land_set, Landed};
use super::super::Note;
use self::inner::Thing;
// use crate::commented_out;
fn f() -> crate::store::metadata::Record { $crate::not_this(); other_crate::no() }
#[cfg(test)]
mod tests { use crate::store::tree; }
";
    assert_eq!(
        references("vcs::jj::land", text)
            .into_iter()
            .collect::<Vec<_>>(),
        [
            "error::CliError",
            "exec::process::run",
            "store::layout",
            "store::metadata::Record",
            "vcs::Backend",
            "vcs::Note",
            "vcs::jj",
            "vcs::jj::Jj",
            "vcs::jj::land::inner::Thing",
            "vcs::jj::land_preview::Landed",
            "vcs::jj::land_preview::land_set",
        ]
    );
}

#[test]
fn a_file_is_its_module_and_a_path_leads_into_the_longest_one() {
    assert_eq!(
        module_of(Path::new("store/state.rs")).as_deref(),
        Some("store::state")
    );
    assert_eq!(
        module_of(Path::new("vcs/jj/mod.rs")).as_deref(),
        Some("vcs::jj")
    );
    assert_eq!(module_of(Path::new("error.rs")).as_deref(), Some("error"));
    assert_eq!(module_of(Path::new("lib.rs")), None);
    assert_eq!(module_of(Path::new("store/metadata/tests.rs")), None);
    let modules = BTreeSet::from(["vcs", "vcs::jj", "vcs::jj::land"]);
    assert_eq!(
        longest_module(&modules, "vcs::jj::Jj").as_deref(),
        Some("vcs::jj")
    );
    assert_eq!(
        longest_module(&modules, "vcs::jj::land::Place").as_deref(),
        Some("vcs::jj::land")
    );
    assert_eq!(longest_module(&modules, "std::fs"), None);
}

/// Prints today's cycles (`cargo test --test it architecture -- --nocapture`), whether or not
/// there are any; the check itself is [`the_module_graph_has_no_cycles`].
#[test]
fn the_module_graph_is_read() {
    let graph = module_graph(&src());
    assert!(graph.len() > 100, "{graph:?}");
    assert!(
        graph["cli::commands::run"].contains("cli::invocation"),
        "{graph:?}"
    );
    assert!(
        graph["vcs::jj::land"].contains("vcs::jj::land_preview"),
        "{graph:?}"
    );
    for (module, deps) in &graph {
        assert!(
            !deps.contains(module),
            "{module}: its own file is not an edge"
        );
        assert!(
            deps.iter().all(|dep| graph.contains_key(dep)),
            "{module}: {deps:?}"
        );
    }
    println!("{}", cycles(&graph).join("\n"));
}
