//! The library's modules form layers: no module reaches, through `crate::` paths, a module
//! that reaches it back. Read from the source text (each top-level module of `src/` is one
//! node, a folder with its files one node; `lib.rs` and `main.rs` sit on top and are left
//! out; a file's closing `#[cfg(test)] mod tests` is left out, as tests may reach anywhere).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The top-level modules named after each `crate::` in `code` (grouped `crate::{a, b::c}` too).
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && is_ident(code.as_bytes()[at - 1] as char) {
            continue; // `my_crate::` or `$crate::`-like prefixes are not ours
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                found.insert(leading_ident(part.trim()));
            }
        } else {
            found.insert(leading_ident(rest));
        }
    }
    found.retain(|name| !name.is_empty());
    found
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn leading_ident(text: &str) -> String {
    text.chars().take_while(|&c| is_ident(c)).collect()
}

/// The code of a file less its doc comments and its closing test module.
fn library_code(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let node = Path::new(first)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if node == "lib" || node == "main" {
            continue;
        }
        let code = library_code(&fs::read_to_string(&file).unwrap());
        let targets = graph.entry(node.clone()).or_default();
        targets.extend(crate_paths(&code).into_iter().filter(|t| *t != node));
    }
    graph
}

/// One loop of the graph, if it has any.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        graph: &Graph,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_reaches_a_module_that_reaches_it_back() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 20, "read {} modules", graph.len());
    assert!(
        graph["run"].contains("execute"),
        "the reader misses imports"
    );
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "modules import each other in a loop: {}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn the_reader_finds_plain_and_grouped_paths_and_loops() {
    let code = "use crate::plan::Plan;\nuse crate::{engine::Engine, error};\nlet x = my_crate::no;";
    let names: Vec<_> = crate_paths(code).into_iter().collect();
    assert_eq!(names, ["engine", "error", "plan"]);
    let mut graph = Graph::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["c".to_string()].into());
    assert_eq!(find_cycle(&graph), None);
    graph.insert("c".into(), ["a".to_string()].into());
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
}
