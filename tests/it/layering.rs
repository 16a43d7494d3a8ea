//! The library's files form layers, and so do the program's: no file reaches, through its
//! paths (`crate::`, `super::` and its own child modules), a file that reaches it back, inside
//! a folder as across folders. Read from the source text: each file of `src/` (the library,
//! `src/bin/` left out) and of `src/bin/nqueens/` (the program) is one node (`quadrant` for
//! `quadrant/mod.rs`, `quadrant/join` for `quadrant/join.rs`); a path goes to the deepest
//! file it names (`crate::quadrant::sieve::Sieve` to `quadrant/sieve`,
//! `crate::quadrant::Layout` to `quadrant`); a folder's `mod.rs` reaches each child it
//! declares; `lib.rs` and `main.rs` sit on top and are left out; a file's closing test
//! modules are left out, as tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every path in `code` that starts with `root` (`crate` or `super`), as its segments after
/// the root, grouped paths spelt out (`crate::{a, b::{c, d}}` gives `a`, `b::c`, `b::d`).
fn paths_from(code: &str, root: &str) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let start = format!("{root}::");
    for (at, _) in code.match_indices(&start) {
        if at > 0 && is_ident(code.as_bytes()[at - 1] as char) {
            continue; // `my_crate::` or `$crate::`-like prefixes are not ours
        }
        if root == "super" && code[..at].ends_with("super::") {
            continue; // the second `super` of `super::super::`, read with the first
        }
        spell_out(&code[at + start.len()..], Vec::new(), &mut found);
    }
    found.retain(|path| !path.is_empty());
    found
}

/// The paths of `rest` (the text after a `::`) under `prefix`.
fn spell_out(rest: &str, prefix: Vec<String>, found: &mut BTreeSet<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        for part in top_level_parts(group) {
            spell_out(part, prefix.clone(), found);
        }
        return;
    }
    let name = leading_ident(rest);
    let mut path = prefix;
    if name.is_empty() {
        found.insert(path);
        return;
    }
    path.push(name.clone());
    match rest[name.len()..].strip_prefix("::") {
        Some(next) => spell_out(next, path, found),
        None => {
            found.insert(path);
        }
    }
}

/// The comma-separated parts of a group, up to its closing brace.
fn top_level_parts(group: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                parts.push(&group[from..i]);
                return parts;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&group[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&group[from..]);
    parts
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn leading_ident(text: &str) -> String {
    text.chars().take_while(|&c| is_ident(c)).collect()
}

/// The code of a file less its comments and its closing test modules.
fn library_code(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod ").unwrap_or(text.len());
    text[..end]
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` less the bodies of its inline modules (`mod x86 { ... }`), whose `super` is the
/// file itself.
fn outside_inline_modules(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("mod ") {
        let after = &rest[at + 4..];
        let name = leading_ident(after);
        let opens = !name.is_empty() && after[name.len()..].trim_start().starts_with('{');
        let starts_word = at == 0 || !is_ident(rest.as_bytes()[at - 1] as char);
        if !(opens && starts_word) {
            out.push_str(&rest[..at + 4]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        let body = &after[after.find('{').unwrap()..];
        let mut depth = 0;
        let end = body
            .char_indices()
            .find_map(|(i, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i + 1)
            })
            .unwrap_or(body.len());
        rest = &body[end..];
    }
    out.push_str(rest);
    out
}

/// The child modules a file declares (`mod x;`, `pub(crate) mod x;`).
fn declared_children(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| {
            let line = line.trim();
            let at = line.find("mod ")?;
            let before = &line[..at];
            let plain = before.is_empty() || before.starts_with("pub");
            let name = line[at + 4..].strip_suffix(';')?;
            (plain && name.chars().all(is_ident)).then(|| name.to_string())
        })
        .collect()
}

/// The `.rs` files under `dir`, the folder of the crate's binaries (`src/bin`) left out.
fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.ends_with("src/bin") {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The node of the module at `segments` under `src` (`[]` is the crate root), if a file
/// holds it.
fn file_node(src: &Path, segments: &[String]) -> Option<String> {
    let joined = segments.join("/");
    let exists =
        src.join(format!("{joined}.rs")).is_file() || src.join(&joined).join("mod.rs").is_file();
    (!segments.is_empty() && exists).then_some(joined)
}

/// The node a path from module `base` reaches: the deepest of its prefixes that is a file,
/// or `base` itself when it names an item of `base`.
fn reached(src: &Path, base: &[String], path: &[String]) -> Option<String> {
    (0..=path.len()).rev().find_map(|len| {
        let mut segments = base.to_vec();
        segments.extend_from_slice(&path[..len]);
        file_node(src, &segments)
    })
}

fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph = Graph::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap().with_extension("");
        let mut module: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module.last().is_some_and(|last| last == "mod") {
            module.pop();
        }
        let node = module.join("/");
        if node == "lib" || node == "main" {
            continue;
        }
        let code = library_code(&fs::read_to_string(&file).unwrap());
        let mut targets = BTreeSet::new();
        for path in paths_from(&code, "crate") {
            targets.extend(reached(src, &[], &path));
        }
        for path in paths_from(&outside_inline_modules(&code), "super") {
            // `super::super::x` climbs once more per extra `super`
            let mut base = module[..module.len() - 1].to_vec();
            let mut path = &path[..];
            while path.first().is_some_and(|s| s == "super") {
                base.pop();
                path = &path[1..];
            }
            targets.extend(reached(src, &base, path));
        }
        for child in declared_children(&code) {
            let mut segments = module.clone();
            segments.push(child);
            targets.extend(file_node(src, &segments));
        }
        targets.remove(&node);
        graph.entry(node).or_default().extend(targets);
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
fn no_file_of_the_program_reaches_a_file_that_reaches_it_back() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin/nqueens"));
    assert!(
        graph["scale"].contains("scale/plot") && graph.contains_key("cli"),
        "read {graph:?}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        panic!("files import each other in a loop: {}", cycle.join(" -> "));
    }
}

#[test]
fn no_file_reaches_a_file_that_reaches_it_back() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        !graph.keys().any(|node| node.starts_with("bin")),
        "{graph:?}"
    );
    assert!(graph.len() > 40, "read {} files", graph.len());
    assert!(
        graph["run"].iter().any(|t| t.starts_with("execute")),
        "the reader misses imports"
    );
    assert!(
        graph["quadrant"].contains("quadrant/sieve"),
        "the reader misses a folder's children"
    );
    if let Some(cycle) = find_cycle(&graph) {
        panic!("files import each other in a loop: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_reader_finds_plain_and_grouped_paths_and_loops() {
    let code = "use crate::plan::Plan;\nuse crate::{engine::Engine, error, a::{b, c::D}};\nlet x = my_crate::no;";
    let paths: Vec<String> = paths_from(code, "crate")
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        ["a::b", "a::c::D", "engine::Engine", "error", "plan::Plan"]
    );
    let code = "use super::pattern::Pattern;\nlet k = super::super::kernel::x;\nmod sieve;";
    let paths: Vec<String> = paths_from(code, "super")
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(paths, ["pattern::Pattern", "super::kernel::x"]);
    assert_eq!(declared_children(code), ["sieve"]);
    let code =
        "use super::a::B;\nmod x86 {\n    use super::Lanes;\n    fn f() {}\n}\nuse super::c;";
    let outside = outside_inline_modules(code);
    let paths: Vec<String> = paths_from(&outside, "super")
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(paths, ["a::B", "c"]);
    let mut graph = Graph::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["c".to_string()].into());
    assert_eq!(find_cycle(&graph), None);
    graph.insert("c".into(), ["a".to_string()].into());
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
}
