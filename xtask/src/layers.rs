//! `cargo xtask layers`: the two rules of ARCHITECTURE.md's layering that
//! Cargo cannot say by itself. Cargo keeps each crate to the dependencies
//! its manifest names and refuses a circle; it does not know which of our
//! crates may name which. Here:
//!
//! - each crate of ours (under `crates/`) is in one layer of ARCHITECTURE.md's
//!   `## Layers` list and depends (normally) only on ours of lower layers;
//! - the desktop app's normal dependencies, with the features it builds
//!   with, name no crate only a server, PostgreSQL or S3 needs.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// Each crate of ours with the crates of ours it depends on (normal
/// dependencies only: tests may reach anywhere).
type CrateGraph = BTreeMap<String, Vec<String>>;

pub fn check(root: &Path) -> Result<()> {
    let graph = our_crates(root)?;
    let declared = declared_layers(&root.join("ARCHITECTURE.md"))?;
    let breaches = layer_breaches(&graph, &declared);
    for (name, deps) in &graph {
        let layer = declared
            .get(name)
            .map_or("?".into(), |l| (l + 1).to_string());
        println!("{layer}  {name} → {}", deps.join(", "));
    }
    for breach in &breaches {
        println!("against ARCHITECTURE.md's layers: {breach}");
    }
    if !breaches.is_empty() {
        bail!(
            "our crates break ARCHITECTURE.md's layering in {} place(s)",
            breaches.len()
        );
    }
    app_links_no_server()
}

/// Our crates under `crates/` and their normal dependencies among them, from
/// `cargo metadata`.
fn our_crates(root: &Path) -> Result<CrateGraph> {
    let out = super::cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .context("cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    }
    let metadata: Value = serde_json::from_slice(&out.stdout).context("cargo metadata's JSON")?;
    Ok(crate_graph(&metadata, &root.join("crates")))
}

/// The graph of the packages whose manifests lie under `crates`.
fn crate_graph(metadata: &Value, crates: &Path) -> CrateGraph {
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let ours = |package: &Value| {
        package["manifest_path"]
            .as_str()
            .is_some_and(|path| Path::new(path).starts_with(crates))
    };
    let names: Vec<&str> = packages
        .iter()
        .filter(|p| ours(p))
        .filter_map(|p| p["name"].as_str())
        .collect();
    let mut graph = CrateGraph::new();
    for package in packages.iter().filter(|p| ours(p)) {
        let deps = package["dependencies"].as_array().into_iter().flatten();
        let mut on: Vec<String> = deps
            .filter(|dep| dep["kind"].is_null())
            .filter_map(|dep| dep["name"].as_str())
            .filter(|name| names.contains(name))
            .map(str::to_owned)
            .collect();
        on.sort();
        on.dedup();
        graph.insert(package["name"].as_str().unwrap_or("?").to_owned(), on);
    }
    graph
}

/// The layers ARCHITECTURE.md declares: under `## Layers`, each numbered
/// line names (in backticks) the crates of one layer, lowest first.
fn declared_layers(file: &Path) -> Result<BTreeMap<String, usize>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("could not read {}", file.display()))?;
    layers_in(&text).with_context(|| format!("in {}", file.display()))
}

fn layers_in(text: &str) -> Result<BTreeMap<String, usize>> {
    let section = text
        .split("\n## ")
        .find(|part| part.starts_with("Layers"))
        .context("no `## Layers` section")?;
    let mut layers = BTreeMap::new();
    let numbered = section.lines().filter(|line| {
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && line[digits..].starts_with(". ")
    });
    for (layer, line) in numbered.enumerate() {
        for name in line.split('`').skip(1).step_by(2) {
            if layers.insert(name.to_string(), layer).is_some() {
                bail!("`{name}` is named in two layers");
            }
        }
    }
    Ok(layers)
}

/// What breaks the declared layering: a crate in no layer, or a dependency
/// on a crate that is not in a lower layer.
fn layer_breaches(graph: &CrateGraph, declared: &BTreeMap<String, usize>) -> Vec<String> {
    let mut breaches = Vec::new();
    for (from, deps) in graph {
        let Some(&from_layer) = declared.get(from) else {
            breaches.push(format!("`{from}` is in no layer"));
            continue;
        };
        for to in deps {
            match declared.get(to) {
                Some(&to_layer) if to_layer < from_layer => {}
                Some(&to_layer) => breaches.push(format!(
                    "`{from}` (layer {}) depends on `{to}` (layer {})",
                    from_layer + 1,
                    to_layer + 1
                )),
                None => {} // reported where it is `from`
            }
        }
    }
    breaches
}

/// Crates only a server, PostgreSQL or S3 needs: the desktop app links none.
const SERVER_ONLY: &[&str] = &["axum", "tokio-postgres", "postgres", "object_store"];

/// The app's normal dependencies, as built for it, name none of
/// [`SERVER_ONLY`]: a feature turned on by mistake would bring them back
/// without any manifest of the app's naming them.
fn app_links_no_server() -> Result<()> {
    let out = super::cargo()
        .args([
            "tree",
            "-p",
            "leasedesk-app",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .output()
        .context("cargo tree")?;
    if !out.status.success() {
        bail!("cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    }
    let linked = server_crates_in(&String::from_utf8_lossy(&out.stdout));
    if !linked.is_empty() {
        bail!(
            "the desktop app links what only a server needs: {}",
            linked.join(", ")
        );
    }
    println!("leasedesk-app links no server, PostgreSQL or S3 crate");
    Ok(())
}

/// The [`SERVER_ONLY`] crates a `cargo tree --prefix none` listing names.
fn server_crates_in(tree: &str) -> Vec<String> {
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| SERVER_ONLY.contains(name))
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_that_names_a_server_crate_is_caught() {
        let tree = "leasedesk-app v0.1.0\nreqwest v0.12.28\naxum v0.8.9\ntokio-postgres v0.7.13\naxum v0.8.9 (*)\n";
        assert_eq!(server_crates_in(tree), ["axum", "tokio-postgres"]);
        let app = "leasedesk-app v0.1.0\nhyper v1.0.0\npostgres-types v0.2.9\n";
        assert!(server_crates_in(app).is_empty());
    }

    #[test]
    fn layers_are_read_from_the_numbered_list() {
        let text = "# A\n\n## Layers\n\nintro `not_a_layer`\n\n1. `model`, `wire`: nouns\n2. `store`\n\n## Next\n\n3. `ignored`\n";
        let layers = layers_in(text).unwrap();
        assert_eq!(layers.get("model"), Some(&0));
        assert_eq!(layers.get("wire"), Some(&0));
        assert_eq!(layers.get("store"), Some(&1));
        assert!(!layers.contains_key("not_a_layer"));
        assert!(!layers.contains_key("ignored"));
        assert!(layers_in("## Layers\n1. `a`\n2. `a`\n").is_err());
    }

    #[test]
    fn only_our_crates_and_their_normal_dependencies_make_the_graph() {
        let metadata = serde_json::json!({"packages": [
            {"name": "low", "manifest_path": "/r/crates/low/Cargo.toml", "dependencies": [
                {"name": "serde", "kind": null}]},
            {"name": "high", "manifest_path": "/r/crates/high/Cargo.toml", "dependencies": [
                {"name": "low", "kind": null}, {"name": "testing", "kind": "dev"},
                {"name": "app", "kind": "dev"}]},
            {"name": "app", "manifest_path": "/r/src-tauri/Cargo.toml", "dependencies": [
                {"name": "high", "kind": null}]},
        ]});
        let graph = crate_graph(&metadata, Path::new("/r/crates"));
        assert_eq!(
            graph.len(),
            2,
            "the app is not one of the layers: {graph:?}"
        );
        assert_eq!(graph["high"], ["low"]);
        assert!(graph["low"].is_empty());
    }

    #[test]
    fn a_dependency_sideways_or_up_and_a_crate_in_no_layer_are_breaches() {
        let declared: BTreeMap<String, usize> =
            [("model", 0), ("store", 1), ("rules", 1), ("server", 2)]
                .map(|(n, l)| (n.to_owned(), l))
                .into();
        let graph = |edges: &[(&str, &[&str])]| -> CrateGraph {
            edges
                .iter()
                .map(|(from, to)| (from.to_string(), to.iter().map(|s| s.to_string()).collect()))
                .collect()
        };
        let fine = graph(&[
            ("server", &["rules", "model"]),
            ("rules", &["model"]),
            ("model", &[]),
        ]);
        assert!(layer_breaches(&fine, &declared).is_empty());
        let wrong = graph(&[
            ("rules", &["store"]),
            ("model", &["server"]),
            ("extra", &["model"]),
        ]);
        let breaches = layer_breaches(&wrong, &declared);
        assert_eq!(breaches.len(), 3, "{breaches:?}");
        assert!(breaches
            .iter()
            .any(|b| b.contains("`rules` (layer 2) depends on `store` (layer 2)")));
        assert!(breaches
            .iter()
            .any(|b| b.contains("`model` (layer 1) depends on `server`")));
        assert!(breaches
            .iter()
            .any(|b| b.contains("`extra` is in no layer")));
    }
}
