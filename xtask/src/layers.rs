//! `cargo xtask layers`: the module graph of our crates, read from their
//! `mod` and `use` lines, and the check that it has no circle.
//!
//! A module is a file; an edge is a path in one file that names an item of
//! another module (through `use`, a written-out path or a re-export). Edges
//! between a module and its own ancestors or descendants do not count: a
//! parent that declares a child and the child that implements the parent's
//! trait are one unit. It reads text, not types: a path through a local alias
//! it cannot follow is missed, never invented.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// A module's path in its crate, e.g. `["store", "postgres"]`; the crate
/// root is the empty path.
type ModPath = Vec<String>;

/// One crate: its modules and the tokens of each module's file.
struct Crate {
    name: &'static str,
    /// The module path of each file, and its tokens.
    modules: BTreeMap<ModPath, Vec<Token>>,
    /// What `pub use` in a module makes visible there: name to the module it
    /// comes from.
    reexports: BTreeMap<(ModPath, String), ModPath>,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Path,  // ::
    Open,  // {
    Close, // }
    Comma,
    Semi,
    Star,
    Other,
}

/// The crates whose graphs must stay free of circles: the nouns
/// (`leasedesk-model`), the library, the `leasedesk` binary (which reaches
/// the library as `leasedesk::`) and the desktop shell.
pub fn check(root: &Path) -> Result<()> {
    let lib = read_crate("leasedesk", &root.join("src/lib.rs"))?;
    let bin = read_crate("leasedesk (binary)", &root.join("src/main.rs"))?;
    let shell = read_crate("leasedesk-app", &root.join("src-tauri/src/lib.rs"))?;
    let model = read_crate("leasedesk-model", &root.join("crates/model/src/lib.rs"))?;
    let mut problems = 0;
    for krate in [&model, &lib, &bin, &shell] {
        let graph = edges(krate, &lib);
        let found = circles_of(&graph);
        let edge_count: usize = graph.values().map(BTreeSet::len).sum();
        println!(
            "{}: {} modules, {} edges between them, {} circles",
            krate.name,
            krate.modules.len(),
            edge_count,
            found.len()
        );
        if krate.name == "leasedesk" {
            let top = top_level(&graph);
            for (depth, modules) in layering(&top) {
                println!("  depth {depth}: {}", modules.join(", "));
            }
            let declared = declared_layers(&root.join("ARCHITECTURE.md"))?;
            let breaches = layer_breaches(&top, &declared);
            for breach in &breaches {
                println!("  against ARCHITECTURE.md's layers: {breach}");
            }
            problems += breaches.len();
        }
        for circle in &found {
            println!("  circle: {}", circle.join(" → "));
        }
        problems += found.len();
    }
    if problems > 0 {
        bail!("the module graph breaks ARCHITECTURE.md's layering in {problems} place(s): a circle, or a module using one of its own layer or above");
    }
    app_links_no_server()
}

/// Crates only a server, PostgreSQL or S3 needs: the desktop app links none.
const SERVER_ONLY: &[&str] = &["axum", "tokio-postgres", "postgres", "object_store"];

/// What Cargo's features cannot say by themselves: the app's normal
/// dependencies name none of [`SERVER_ONLY`] (the core's `server`,
/// `postgres` and `s3` features stay off for it).
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

fn display(path: &ModPath) -> String {
    if path.is_empty() {
        "crate".into()
    } else {
        path.join("::")
    }
}

/// Reads the crate whose root file is `root_file`, following `mod NAME;`.
fn read_crate(name: &'static str, root_file: &Path) -> Result<Crate> {
    let mut modules = BTreeMap::new();
    let mut pending: Vec<(ModPath, PathBuf)> = vec![(Vec::new(), root_file.to_path_buf())];
    while let Some((path, file)) = pending.pop() {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("could not read {}", file.display()))?;
        let tokens = tokenize(&text);
        // A root or mod.rs declares children beside it; foo.rs in foo/.
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let dir = if path.is_empty() || stem == "mod" {
            file.parent().expect("a file has a folder").to_path_buf()
        } else {
            file.with_extension("")
        };
        for child in declared_modules(&tokens) {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(&child).join("mod.rs");
            let child_file = if flat.exists() { flat } else { nested };
            if !child_file.exists() {
                bail!(
                    "{} declares `mod {child};`, which has no file",
                    file.display()
                );
            }
            let mut child_path = path.clone();
            child_path.push(child);
            pending.push((child_path, child_file));
        }
        modules.insert(path, tokens);
    }
    let mut krate = Crate {
        name,
        modules,
        reexports: BTreeMap::new(),
    };
    // Re-exports may chain (a parent's of a child's); a few rounds settle them.
    for _ in 0..4 {
        let mut found = BTreeMap::new();
        for (module, tokens) in &krate.modules {
            for (is_pub, path, alias) in use_paths(tokens) {
                if !is_pub {
                    continue;
                }
                let Some(name) = alias.or_else(|| path.last().cloned()) else {
                    continue;
                };
                if let Some(target) = resolve(&krate, None, module, &path, &BTreeMap::new()) {
                    found.insert((module.clone(), name), target);
                }
            }
        }
        krate.reexports = found;
    }
    Ok(krate)
}

/// The edges of `krate`'s graph, each from a module to the modules it names.
fn edges(krate: &Crate, lib: &Crate) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (module, tokens) in &krate.modules {
        let outgoing = graph.entry(module.clone()).or_default();
        // Names a `use` binds to a module, so `store::Tx` after `use crate::store;` counts.
        let mut aliases = BTreeMap::new();
        for (_, path, alias) in use_paths(tokens) {
            if let Some(target) = resolve(krate, Some(lib), module, &path, &BTreeMap::new()) {
                if let Some(name) = alias.or_else(|| path.last().cloned()) {
                    if krate.modules.contains_key(&target) && target.last() == path.last() {
                        aliases.insert(name, target.clone());
                    }
                }
                add_edge(outgoing, module, target);
            }
        }
        for path in written_paths(tokens) {
            if let Some(target) = resolve(krate, Some(lib), module, &path, &aliases) {
                add_edge(outgoing, module, target);
            }
        }
    }
    graph
}

fn add_edge(outgoing: &mut BTreeSet<ModPath>, from: &ModPath, to: ModPath) {
    let nested = to.starts_with(from) || from.starts_with(&to);
    if !nested {
        outgoing.insert(to);
    }
}

/// The module a path names an item of, or None for a path outside our crates.
fn resolve(
    krate: &Crate,
    lib: Option<&Crate>,
    module: &ModPath,
    path: &[String],
    aliases: &BTreeMap<String, ModPath>,
) -> Option<ModPath> {
    let (start, rest): (ModPath, &[String]) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (module.clone(), &path[1..]),
        "super" => {
            let mut at = module.clone();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                at.pop();
                rest = &rest[1..];
            }
            (at, rest)
        }
        "leasedesk" if lib.is_some() && krate.name != "leasedesk" => {
            return resolve(
                lib?,
                None,
                &Vec::new(),
                &path_with_crate(&path[1..]),
                aliases,
            );
        }
        first => {
            if let Some(target) = aliases.get(first) {
                (target.clone(), &path[1..])
            } else {
                let mut child = module.clone();
                child.push(first.to_string());
                if krate.modules.contains_key(&child) {
                    (child, &path[1..])
                } else {
                    return None;
                }
            }
        }
    };
    let mut at = start;
    for segment in rest {
        let mut child = at.clone();
        child.push(segment.clone());
        if krate.modules.contains_key(&child) {
            at = child;
        } else if let Some(target) = krate.reexports.get(&(at.clone(), segment.clone())) {
            return Some(target.clone());
        } else {
            break;
        }
    }
    Some(at)
}

fn path_with_crate(rest: &[String]) -> Vec<String> {
    std::iter::once("crate".to_string())
        .chain(rest.iter().cloned())
        .collect()
}

/// The circles of a graph: each strongly connected component of more than
/// one module, shown as one cycle through it.
fn circles_of(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<String>> {
    let mut circles = Vec::new();
    let mut seen = BTreeSet::new();
    for start in graph.keys() {
        if seen.contains(start) {
            continue;
        }
        // The modules that reach `start` and that `start` reaches: its component.
        let forward = reachable(graph, start);
        let component: BTreeSet<ModPath> = forward
            .iter()
            .filter(|m| reachable(graph, m).contains(start))
            .cloned()
            .collect();
        seen.extend(component.iter().cloned());
        if component.len() > 1 {
            circles.push(cycle_through(graph, start, &component));
        }
    }
    circles
}

fn reachable(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>, from: &ModPath) -> BTreeSet<ModPath> {
    let mut found = BTreeSet::new();
    let mut stack = vec![from.clone()];
    while let Some(at) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if found.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    found
}

/// A shortest way from `start` back to itself inside its component.
fn cycle_through(
    graph: &BTreeMap<ModPath, BTreeSet<ModPath>>,
    start: &ModPath,
    component: &BTreeSet<ModPath>,
) -> Vec<String> {
    let mut came_from: BTreeMap<ModPath, ModPath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(at) = queue.pop_front() {
        for next in graph.get(&at).into_iter().flatten() {
            if !component.contains(next) {
                continue;
            }
            if next == start {
                let mut way = vec![display(start)];
                let mut back = at.clone();
                while &back != start {
                    way.push(display(&back));
                    back = came_from[&back].clone();
                }
                way.push(display(start));
                way.reverse();
                return way;
            }
            if !came_from.contains_key(next) {
                came_from.insert(next.clone(), at.clone());
                queue.push_back(next.clone());
            }
        }
    }
    vec![display(start)]
}

/// The layers ARCHITECTURE.md declares: under `## Layers`, each numbered
/// line names (in backticks) the top-level modules of one layer, lowest first.
fn declared_layers(file: &Path) -> Result<BTreeMap<String, usize>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("could not read {}", file.display()))?;
    let section = text
        .split("\n## ")
        .find(|part| part.starts_with("Layers"))
        .with_context(|| format!("{} has no `## Layers` section", file.display()))?;
    let mut layers = BTreeMap::new();
    let numbered = section.lines().filter(|line| {
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && line[digits..].starts_with(". ")
    });
    for (layer, line) in numbered.enumerate() {
        for name in line.split('`').skip(1).step_by(2) {
            if layers.insert(name.to_string(), layer).is_some() {
                bail!("ARCHITECTURE.md names `{name}` in two layers");
            }
        }
    }
    Ok(layers)
}

/// What breaks the declared layering: a module in no layer, or a use of a
/// module that is not in a lower layer.
fn layer_breaches(
    top: &BTreeMap<ModPath, BTreeSet<ModPath>>,
    declared: &BTreeMap<String, usize>,
) -> Vec<String> {
    let mut breaches = Vec::new();
    for (from, targets) in top {
        let from = display(from);
        let Some(&from_layer) = declared.get(&from) else {
            breaches.push(format!("`{from}` is in no layer"));
            continue;
        };
        for to in targets {
            let to = display(to);
            match declared.get(&to) {
                Some(&to_layer) if to_layer < from_layer => {}
                Some(&to_layer) => breaches.push(format!(
                    "`{from}` (layer {}) uses `{to}` (layer {})",
                    from_layer + 1,
                    to_layer + 1
                )),
                None => {} // reported as in no layer where it is `from`
            }
        }
    }
    breaches
}

/// The graph of the crate's top-level modules: `store::postgres` → `trust`
/// counts as `store` → `trust`.
fn top_level(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut top: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (from, targets) in graph {
        let Some(from) = from.first() else { continue };
        let outgoing = top.entry(vec![from.clone()]).or_default();
        for to in targets {
            if let Some(to) = to.first().filter(|to| *to != from) {
                outgoing.insert(vec![to.clone()]);
            }
        }
    }
    top
}

/// Modules by layer: layer 0 names no other module, layer n only lower ones.
fn layering(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> BTreeMap<usize, Vec<String>> {
    fn depth_of(
        graph: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        module: &ModPath,
        memo: &mut BTreeMap<ModPath, usize>,
        visiting: &mut BTreeSet<ModPath>,
    ) -> usize {
        if let Some(depth) = memo.get(module) {
            return *depth;
        }
        if !visiting.insert(module.clone()) {
            return 0; // a circle: reported apart
        }
        let depth = graph
            .get(module)
            .into_iter()
            .flatten()
            .map(|next| depth_of(graph, next, memo, visiting) + 1)
            .max()
            .unwrap_or(0);
        visiting.remove(module);
        memo.insert(module.clone(), depth);
        depth
    }
    let mut memo = BTreeMap::new();
    let mut layers: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for module in graph.keys().filter(|m| !m.is_empty()) {
        let depth = depth_of(graph, module, &mut memo, &mut BTreeSet::new());
        layers.entry(depth).or_default().push(display(module));
    }
    layers
}

/// The names of `mod NAME;` declarations outside inline modules' bodies.
fn declared_modules(tokens: &[Token]) -> Vec<String> {
    let mut found = Vec::new();
    for window in tokens.windows(3) {
        if let [Token::Ident(m), Token::Ident(name), Token::Semi] = window {
            if m == "mod" {
                found.push(name.clone());
            }
        }
    }
    found
}

/// Every `use` item: whether it is `pub`, the full path, and its `as` name.
/// Groups are expanded; a glob keeps the path to the module it reads.
fn use_paths(tokens: &[Token]) -> Vec<(bool, Vec<String>, Option<String>)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == Token::Ident("use".into()) {
            let is_pub = i > 0 && matches!(&tokens[i - 1], Token::Ident(p) if p == "pub")
                || i > 3 && matches!(&tokens[i - 4], Token::Ident(p) if p == "pub");
            let end = tokens[i..]
                .iter()
                .position(|t| *t == Token::Semi)
                .map_or(tokens.len(), |p| i + p);
            expand_use(&tokens[i + 1..end], &[], &mut |path, alias| {
                found.push((is_pub, path, alias))
            });
            i = end;
        }
        i += 1;
    }
    found
}

/// Expands `a::b::{c, d::{e as f}, *}` below `prefix`.
fn expand_use(
    tokens: &[Token],
    prefix: &[String],
    emit: &mut dyn FnMut(Vec<String>, Option<String>),
) {
    // Split at top-level commas.
    let mut depth = 0;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Open => depth += 1,
            Token::Close => depth -= 1,
            Token::Comma if depth == 0 => {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tokens[start..]);
    for part in parts {
        let mut path = prefix.to_vec();
        let mut alias = None;
        let mut i = 0;
        while i < part.len() {
            match &part[i] {
                Token::Ident(word) if word == "as" => {
                    if let Some(Token::Ident(name)) = part.get(i + 1) {
                        alias = Some(name.clone());
                    }
                    i += 1;
                }
                Token::Ident(word) => path.push(word.clone()),
                Token::Open => {
                    let close = part
                        .iter()
                        .rposition(|t| *t == Token::Close)
                        .unwrap_or(part.len());
                    expand_use(&part[i + 1..close], &path, emit);
                    path.clear();
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        if !path.is_empty() {
            emit(path, alias);
        }
    }
}

/// Paths written out in code (outside `use`): `a::b::c` sequences.
fn written_paths(tokens: &[Token]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == Token::Ident("use".into()) {
            while i < tokens.len() && tokens[i] != Token::Semi {
                i += 1;
            }
            continue;
        }
        if let Token::Ident(first) = &tokens[i] {
            let mut path = vec![first.clone()];
            let mut j = i + 1;
            while j + 1 < tokens.len() && tokens[j] == Token::Path {
                match &tokens[j + 1] {
                    Token::Ident(next) => path.push(next.clone()),
                    _ => break,
                }
                j += 2;
            }
            if path.len() > 1 {
                found.push(path);
            }
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// The tokens that matter for paths, with comments, strings, character
/// literals and the file's `#[cfg(test)]` items left out (a test may use what
/// its module must not).
fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && raw_string_end(&chars, i).is_some()
        {
            i = raw_string_end(&chars, i).expect("checked");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{1F}'), else a lifetime.
            if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c == '#' && text_at(&chars, i, "#[cfg(test)]") {
            i += "#[cfg(test)]".len();
            skip_item(&chars, &mut i);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
        } else {
            tokens.push(match (c, next) {
                (':', Some(':')) => {
                    i += 1;
                    Token::Path
                }
                ('{', _) => Token::Open,
                ('}', _) => Token::Close,
                (',', _) => Token::Comma,
                (';', _) => Token::Semi,
                ('*', _) => Token::Star,
                (c, _) if c.is_whitespace() => {
                    i += 1;
                    continue;
                }
                _ => Token::Other,
            });
            i += 1;
        }
    }
    tokens
}

fn text_at(chars: &[char], at: usize, text: &str) -> bool {
    text.chars()
        .enumerate()
        .all(|(k, c)| chars.get(at + k) == Some(&c))
}

/// Where a raw string starting at `at` (`r"…"`, `r#"…"#`) ends, if it is one.
fn raw_string_end(chars: &[char], at: usize) -> Option<usize> {
    let mut i = at + 1;
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if chars.get(i) != Some(&'"')
        || (at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_'))
    {
        return None;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(chars.len())
}

/// Skips the item after an attribute: up to its `;`, or through its braces.
fn skip_item(chars: &[char], i: &mut usize) {
    let mut depth = 0usize;
    while *i < chars.len() {
        match chars[*i] {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    *i += 1;
                    return;
                }
            }
            ';' if depth == 0 => {
                *i += 1;
                return;
            }
            '"' => {
                *i += 1;
                while *i < chars.len() && chars[*i] != '"' {
                    if chars[*i] == '\\' {
                        *i += 1;
                    }
                    *i += 1;
                }
            }
            _ => {}
        }
        *i += 1;
    }
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
        let dir = tempfile_dir();
        let file = dir.join("ARCHITECTURE.md");
        std::fs::write(
            &file,
            "# A\n\n## Layers\n\nintro `not_a_layer`\n\n1. `model`, `wire`: nouns\n2. `store`\n\n## Next\n\n3. `ignored`\n",
        )
        .unwrap();
        let layers = declared_layers(&file).unwrap();
        assert_eq!(layers.get("model"), Some(&0));
        assert_eq!(layers.get("wire"), Some(&0));
        assert_eq!(layers.get("store"), Some(&1));
        assert!(!layers.contains_key("not_a_layer"));
        assert!(!layers.contains_key("ignored"));
    }

    /// A fresh folder of this test run's own.
    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-layers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
