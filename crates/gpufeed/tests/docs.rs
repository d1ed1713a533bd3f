//! The documentation stays inside the repository: every relative link of the README and of
//! `docs/` names a file that exists, and nothing sends the reader to the team's design
//! notes outside it (README's layout section once did: `../shared/DESIGN.md`).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The targets of the Markdown links `[text](target)` of `text`.
fn links(text: &str) -> Vec<&str> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            rest.find(')').map(|end| rest[..end].trim())
        })
        .collect()
}

#[test]
fn readme_and_docs_link_only_inside_the_repository() {
    let root = root();
    let mut pages = vec![root.join("README.md")];
    for e in fs_err::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    assert!(pages.iter().any(|p| p.ends_with("ARCHITECTURE.md")));
    for page in &pages {
        let text = fs_err::read_to_string(page).unwrap();
        assert!(
            !text.contains("DESIGN.md"),
            "{} points at the design notes outside the repository",
            page.display()
        );
        for target in links(&text) {
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let file = target.split('#').next().unwrap();
            let path = page.parent().unwrap().join(file);
            assert!(
                path.exists(),
                "{}: the link `{target}` names no file of the repository",
                page.display()
            );
            let inside = path.canonicalize().unwrap();
            assert!(
                inside.starts_with(root.canonicalize().unwrap()),
                "{}: the link `{target}` leaves the repository",
                page.display()
            );
        }
    }
}

#[test]
fn the_readme_sends_the_reader_to_the_architecture() {
    let readme = fs_err::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("(docs/ARCHITECTURE.md)"));
    assert!(readme.contains("(docs/contract.md)"));
}

/// The repository's layout (docs/development.md, which the README sends developers to)
/// names every crate (issue 40): a crate added without its line fails here, as a crate
/// added without its row of docs/ARCHITECTURE.md fails `architecture.rs`.
#[test]
fn the_layout_lists_every_crate() {
    let root = root();
    let layout = fs_err::read_to_string(root.join("docs/development.md")).unwrap();
    let listed: Vec<&str> = layout
        .lines()
        .filter_map(|l| l.strip_prefix("  gpufeed"))
        .filter_map(|l| l.split('/').next())
        .collect();
    for entry in fs_err::read_dir(root.join("crates")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(rest) = name.strip_prefix("gpufeed") else {
            continue;
        };
        assert!(
            listed.contains(&rest),
            "docs/development.md's layout does not list `crates/{name}/`"
        );
    }
}
