//! The layers of `docs/architecture.md` hold: every module of `src/` sits in one layer and
//! names only modules of its own layer or below.

use std::fs;
use std::path::Path;

use crate::architecture::{module_graph, Graph};

/// The layers, top first, as `docs/architecture.md` draws them (`cli` counts as `commands`).
const LAYERS: [(&str, &[&str]); 4] = [
    (
        "command",
        &[
            "commands",
            "report",
            "output",
            "status_table",
            "progress_line",
        ],
    ),
    (
        "lifecycle",
        &["workspace", "inventory", "checkup", "launch", "context"],
    ),
    (
        "middle",
        &[
            "vcs",
            "config",
            "sandbox",
            "direnv",
            "envrc_loads",
            "metadata",
            "state",
            "verdict",
            "aside",
            "recovery",
            "tree",
            "layout",
            "lock",
            "liveness",
            "disk",
            "tools",
            "include",
            "reflink",
            "pool_journal",
        ],
    ),
    (
        "bottom",
        &[
            "repo", "process", "fsutil", "signals", "vars", "refname", "error", "progress",
        ],
    ),
];

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The index of `module`'s layer in [`LAYERS`] (0 is the top).
fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, members)| members.contains(&module))
}

/// One line per module in no layer, and per edge that points to a higher layer.
fn violations(graph: &Graph) -> Vec<String> {
    let mut found = vec![];
    for (module, deps) in graph {
        let Some(own) = layer_of(module) else {
            found.push(format!(
                "{module}: in no layer (add it to docs/architecture.md and LAYERS)"
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
    assert!(graph.len() > 20, "no modules read: {graph:?}");
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
        .entry("vcs".into())
        .or_default()
        .insert("workspace".into());
    graph
        .entry("workspace".into())
        .or_default()
        .insert("vcs".into());
    graph.entry("newthing".into()).or_default();
    assert_eq!(
        violations(&graph),
        [
            "newthing: in no layer (add it to docs/architecture.md and LAYERS)",
            "vcs (middle) names workspace (lifecycle), a layer above it",
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
        for module in members {
            assert!(
                graph.contains_key(*module),
                "{layer}: {module} is not a module of src/"
            );
            assert!(
                drawing.contains(&format!("{module}.rs"))
                    || drawing.contains(&format!("{module}/")),
                "docs/architecture.md does not draw {module}"
            );
        }
    }
}
