//! The module graph of `src/` has no cycles.
//!
//! A module is a top-level module of the crate: `src/x.rs` or the directory `src/x/` with
//! everything in it (`vcs/jj.rs` is `vcs`). Module `a` depends on `b` when `a` names
//! `crate::b` (in a `use` line, a `use crate::{b, ..}` group or a path in code). The command
//! layer (`commands` and `cli`, which holds their clap definitions, counted as one module)
//! may depend on anything; a module below it that depends on it closes a cycle like any other. The crate root (`main.rs`) declares the modules and is not
//! one of them. Unit-test modules (from a `#[cfg(test)]` line to the end of the file) do not
//! count: they may reach sideways for fixtures.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::Path;

pub(crate) type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn the_module_graph_has_no_cycles() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.contains_key("cli"), "no modules read: {graph:?}");
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "the module graph has cycles (each line: modules that depend on each other, then one \
         cycle through them):\n{}",
        cycles.join("\n")
    );
}

/// The module each `.rs` file under `src` belongs to, and the modules it names.
pub(crate) fn module_graph(src: &Path) -> Graph {
    let mut graph = Graph::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = layer(first.trim_end_matches(".rs")).to_string();
        if module == "main" || module == "lib" {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        let deps = graph.entry(module.clone()).or_default();
        deps.extend(
            references(&text)
                .iter()
                .map(|dep| layer(dep).to_string())
                .filter(|dep| *dep != module),
        );
    }
    graph
}

/// The module a top-level module counts as: `cli` is part of the command layer.
fn layer(module: &str) -> &str {
    module
}

pub(crate) fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
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

/// The top-level modules `text` names through `crate::`, outside comments and unit tests.
fn references(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let before = code[..code.len() - rest.len() + at].chars().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::`, `my_crate::`: not this crate's root.
        }
        if let Some(group) = rest.strip_prefix('{') {
            found.extend(group_heads(group));
        } else {
            found.insert(ident(rest).to_string());
        }
    }
    found.retain(|name| !name.is_empty() && name != "self" && name != "super");
    found
}

/// The first name of each item of a `{a::b, c, d::{e, f}}` group (`group` starts after `{`).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = vec![];
    let mut depth = 0;
    let mut at_item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => at_item_start = true,
            c if at_item_start && (c.is_alphanumeric() || c == '_') => {
                heads.push(ident(&group[i..]).to_string());
                at_item_start = false;
            }
            _ => {}
        }
    }
    heads
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
        ("commands", "workspace"),
        ("commands", "error"),
        ("workspace", "vcs"),
        ("workspace", "metadata"),
        ("vcs", "process"),
        ("vcs", "repo"),
        ("metadata", "repo"),
        ("error", "process"),
    ]);
    assert_eq!(cycles(&layered), Vec::<String>::new());
}

#[test]
fn cycles_are_found_and_named() {
    let cyclic = graph(&[
        ("commands", "workspace"),
        ("error", "process"),
        ("process", "error"),
        ("vcs", "tree"),
        ("tree", "metadata"),
        ("metadata", "vcs"),
        ("workspace", "vcs"),
    ]);
    assert_eq!(
        cycles(&cyclic),
        [
            "{error, process}: error -> process -> error \
             (all edges among them: error -> process, process -> error)",
            "{metadata, tree, vcs}: metadata -> vcs -> tree -> metadata \
             (all edges among them: metadata -> vcs, tree -> metadata, vcs -> tree)",
        ]
    );
}

#[test]
fn references_come_from_use_lines_groups_and_paths() {
    let text = "\
use crate::error::CliError;
use crate::{layout, vcs::{Backend, Repo}, process::run};
// use crate::commented_out;
fn f() -> crate::metadata::Record { $crate::not_this(); other_crate::no() }
#[cfg(test)]
mod tests { use crate::tree; }
";
    assert_eq!(
        references(text).into_iter().collect::<Vec<_>>(),
        ["error", "layout", "metadata", "process", "vcs"]
    );
}

/// Prints today's cycles (`cargo test --test it architecture -- --nocapture`), whether or not
/// there are any; the check itself is [`the_module_graph_has_no_cycles`].
#[test]
fn the_module_graph_is_read() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 5, "{graph:?}");
    assert!(!graph["cli"].is_empty(), "{graph:?}");
    for (module, deps) in &graph {
        assert!(
            !deps.contains(module),
            "{module}: its own files are not an edge"
        );
        assert!(
            deps.iter().all(|dep| graph.contains_key(dep)),
            "{module}: {deps:?}"
        );
    }
    println!("{}", cycles(&graph).join("\n"));
}
