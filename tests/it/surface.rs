//! The library's public surface stays small: its items (what `lib.rs` re-exports, and the
//! top-level items of its public modules, modules themselves left out) are counted from the
//! source text. Grow it only by folding a new item into an existing type or by giving one up.

use std::fs;
use std::path::Path;

/// The most public items the library may have.
const MOST_PUBLIC_ITEMS: usize = 45;

const ITEM_KINDS: [&str; 7] = [
    "pub fn ",
    "pub struct ",
    "pub enum ",
    "pub const ",
    "pub type ",
    "pub trait ",
    "pub static ",
];

/// Names in the `pub use` lines of a file (grouped or not; `x as y` is one name): of
/// `lib.rs`, and of a public module, whose re-exports rustdoc lists as its items.
fn reexported(lib: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = lib;
    while let Some(at) = rest.find("\npub use ") {
        let statement = &rest[at + "\npub use ".len()..];
        let end = statement.find(';').unwrap();
        let body = &statement[..end];
        let list = match body.find('{') {
            Some(open) => &body[open + 1..body.rfind('}').unwrap()],
            None => body.rsplit("::").next().unwrap(),
        };
        names.extend(
            list.split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty()),
        );
        rest = &statement[end..];
    }
    names
}

/// Top-level items of a public module's file (and of its own public submodules' files).
fn module_items(file: &Path) -> Vec<String> {
    let code = fs::read_to_string(file).unwrap();
    let mut items = reexported(&code);
    for line in code.lines() {
        if let Some(sub) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
        {
            let dir = if file.ends_with("mod.rs") {
                file.parent().unwrap().to_path_buf()
            } else {
                file.with_extension("")
            };
            items.extend(module_items(&dir.join(format!("{sub}.rs"))));
        } else if ITEM_KINDS.iter().any(|kind| line.starts_with(kind)) {
            items.push(line.to_string());
        }
    }
    items
}

#[test]
fn the_public_surface_stays_within_its_budget() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut items = reexported(&lib);
    for line in lib.lines() {
        if let Some(module) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
        {
            let file = src.join(format!("{module}.rs"));
            let file = if file.exists() {
                file
            } else {
                src.join(module).join("mod.rs")
            };
            items.extend(module_items(&file));
        }
    }
    assert!(items.iter().any(|i| i == "Hooks"), "{items:?}");
    // a public module's re-export is one of its items, as rustdoc lists it
    assert!(items.iter().any(|i| i == "SCHEMA_VERSION"), "{items:?}");
    assert!(
        items.iter().any(|i| i.starts_with("pub fn plain_line")),
        "{items:?}"
    );
    assert!(
        items.len() <= MOST_PUBLIC_ITEMS,
        "{} public items, at most {MOST_PUBLIC_ITEMS}: {items:#?}",
        items.len()
    );
}
