//! The book (`book/`) is tested through its sources: every Rust block in its pages is an
//! `{{#include}}` of a file that the workspace compiles and runs (the project template, the
//! host examples, the integration tests and their kernels, build scripts, examples), never
//! code written in the page, which nothing would compile. This checks that, and that every
//! included file and anchor exists (mdBook only logs a missing one) and every page is in
//! `SUMMARY.md`. No GPU needed.

use std::{
    fs,
    path::{Path, PathBuf},
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// The book's pages (`book/src/*.md`).
fn pages() -> Vec<PathBuf> {
    let dir = root().join("book/src");
    let mut pages: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

/// A fenced code block of a page: its info string (`rust`, `sh`, ...), first line number and
/// lines.
struct Block {
    info: String,
    line: usize,
    body: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    line: i + 1,
                    body: Vec::new(),
                })
            }
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some(block), None) => block.body.push(line.to_owned()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

/// `{{#include PATH}}` or `{{#include PATH:ANCHOR}}` on `line`: `(PATH, ANCHOR)`.
fn include(line: &str) -> Option<(String, Option<String>)> {
    let inner = line
        .trim()
        .strip_prefix("{{#include ")?
        .strip_suffix("}}")?
        .trim();
    Some(match inner.split_once(':') {
        Some((path, anchor)) => (path.to_owned(), Some(anchor.to_owned())),
        None => (inner.to_owned(), None),
    })
}

#[test]
fn every_rust_block_is_an_include_of_a_tested_file() {
    let root = root();
    let mut rust_blocks = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        for block in blocks(&text) {
            let is_rust = block.info.split(',').next() == Some("rust");
            let includes: Vec<_> = block.body.iter().filter_map(|l| include(l)).collect();
            if is_rust {
                rust_blocks += 1;
                let written = block
                    .body
                    .iter()
                    .find(|l| !l.trim().is_empty() && include(l).is_none());
                assert!(
                    written.is_none() && !includes.is_empty(),
                    "{name}:{}: a Rust block must only `{{{{#include}}}}` a file the workspace \
                     compiles and runs; found `{}`",
                    block.line,
                    written.map_or("an empty block", |l| l.as_str())
                );
            }
            for (path, anchor) in includes {
                let file = page.parent().unwrap().join(&path);
                let file = file
                    .canonicalize()
                    .unwrap_or_else(|e| panic!("{name}:{}: {path}: {e}", block.line));
                let relative = file
                    .strip_prefix(&root)
                    .unwrap_or_else(|_| panic!("{name}: {path} is outside the repository"));
                assert!(
                    !relative.starts_with("book"),
                    "{name}: {path} is in the book, where nothing compiles it"
                );
                let source = fs::read_to_string(&file).unwrap();
                if let Some(anchor) = anchor {
                    assert!(
                        !anchor.chars().next().is_some_and(|c| c.is_ascii_digit()),
                        "{name}: {path}:{anchor}: use a named anchor, not line numbers \
                         (they drift as the file changes)"
                    );
                    for marker in [format!("ANCHOR: {anchor}"), format!("ANCHOR_END: {anchor}")] {
                        assert!(
                            source.lines().any(|l| l.trim_end().ends_with(&marker)),
                            "{name}: {} has no `// {marker}` line",
                            relative.display()
                        );
                    }
                }
            }
        }
    }
    // The chapters show code: a parser that finds no block is broken.
    assert!(rust_blocks >= 10, "only {rust_blocks} Rust blocks found");
}

#[test]
fn every_page_is_in_the_summary_and_every_summary_entry_exists() {
    let dir = root().join("book/src");
    let summary = fs::read_to_string(dir.join("SUMMARY.md")).unwrap();
    let linked: Vec<&str> = summary
        .split("](")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap())
        .collect();
    for link in &linked {
        assert!(
            dir.join(link).is_file(),
            "SUMMARY.md links {link}, which does not exist"
        );
    }
    for page in pages() {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name == "SUMMARY.md" || linked.contains(&name.as_str()),
            "{name} is not in SUMMARY.md (mdBook would not build it)"
        );
    }
}

/// mdBook expands `{{#…}}` in prose too (and only logs a failure): prose writes it escaped.
#[test]
fn prose_names_mdbook_directives_escaped() {
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        let mut in_block = false;
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
            } else if !in_block {
                let unescaped = line.replace("\\{{#", "");
                assert!(
                    !unescaped.contains("{{#"),
                    "{}:{}: write `\\{{{{#…}}}}` in prose, or mdBook expands it",
                    page.display(),
                    i + 1
                );
            }
        }
    }
}

#[test]
fn the_parser_finds_blocks_and_includes() {
    let text = "a\n```rust\n{{#include ../../x.rs:y}}\n```\n```sh\necho\n```\n";
    let found = blocks(text);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].info.as_str(), found[0].line), ("rust", 2));
    assert_eq!(
        include(&found[0].body[0]),
        Some(("../../x.rs".to_owned(), Some("y".to_owned())))
    );
    assert_eq!(include("let x = 1;"), None);
}
