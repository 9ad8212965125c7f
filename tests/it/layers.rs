//! The layers of `docs/architecture.md` hold: every module of `src/` sits in one layer (the
//! folder or bottom file it is in) and names only modules of its own layer or below.

use std::fs;
use std::path::Path;

use crate::architecture::{module_graph, src, Graph};

/// The layers, top first, as `docs/architecture.md` draws them: the folders (and bottom
/// files) of `src/` each belongs to.
const LAYERS: [(&str, &[&str]); 6] = [
    ("command", &["cli", "ui"]),
    ("lifecycle", &["session", "workspace"]),
    ("backend", &["vcs", "config"]),
    ("exec", &["exec"]),
    ("store", &["store"]),
    ("bottom", &["error", "repo", "vars", "refname", "progress"]),
];

/// The folder or bottom file a module is in: `store::metadata::history` is in `store`.
fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

/// The index of `module`'s layer in [`LAYERS`] (0 is the top).
fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, members)| members.contains(&top(module)))
}

/// One line per module in no layer, and per edge that points to a higher layer.
fn violations(graph: &Graph) -> Vec<String> {
    let mut found = vec![];
    for (module, deps) in graph {
        let Some(own) = layer_of(module) else {
            found.push(format!(
                "{module}: in no layer (add {} to docs/architecture.md and LAYERS)",
                top(module)
            ));
            continue;
        };
        for dep in deps {
            match layer_of(dep) {
                Some(theirs) if theirs < own => found.push(format!(
                    "{module} ({}) names {dep} ({}), a layer above it",
                    LAYERS[own].0, LAYERS[theirs].0
                )),
                _ => {}
            }
        }
    }
    found
}

#[test]
fn every_module_names_only_its_own_layer_or_below() {
    let graph = module_graph(&src());
    assert!(graph.len() > 100, "no modules read: {graph:?}");
    let found = violations(&graph);
    assert!(
        found.is_empty(),
        "the layers are broken:\n{}",
        found.join("\n")
    );
}

#[test]
fn an_upward_edge_and_an_unplaced_module_are_found() {
    let mut graph = Graph::new();
    graph
        .entry("vcs::jj::land".into())
        .or_default()
        .insert("workspace::pool".into());
    graph
        .entry("workspace::pool".into())
        .or_default()
        .insert("vcs::jj::land".into());
    graph
        .entry("store::state".into())
        .or_default()
        .insert("exec::process".into());
    graph.entry("newthing::part".into()).or_default();
    assert_eq!(
        violations(&graph),
        [
            "newthing::part: in no layer (add newthing to docs/architecture.md and LAYERS)",
            "store::state (store) names exec::process (exec), a layer above it",
            "vcs::jj::land (backend) names workspace::pool (lifecycle), a layer above it",
        ]
    );
}

#[test]
fn every_layer_module_exists_and_the_drawing_names_it() {
    let graph = module_graph(&src());
    let drawing =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    for (layer, members) in LAYERS {
        for member in members {
            assert!(
                graph.keys().any(|module| top(module) == *member),
                "{layer}: {member} is not a module of src/"
            );
            assert!(
                drawing.contains(&format!("{member}.rs"))
                    || drawing.contains(&format!("{member}/")),
                "docs/architecture.md does not draw {member}"
            );
        }
    }
}
