//! `ARCHITECTURE.md`'s map is the one module map of the repository: this
//! test fails when a path it lists is missing, or when a source file, test,
//! example, script or document is not listed.
//!
//! The map's format (the fenced block under `## Map`):
//! - a line is an entry when it starts at column 0 or at column 4; its
//!   first field (up to the first run of two spaces) is one or more paths
//!   separated by single spaces, the rest is its description;
//! - a path at column 0 is relative to the repository root; it opens a
//!   directory for the column-4 entries that follow (itself when it ends in
//!   `/`, else the directory it is in);
//! - a path at column 4 is relative to the open directory;
//! - a path may hold `*`, which matches within one path segment: it must
//!   match at least one file, and lists what it matches;
//! - lines indented further continue a description.

use std::collections::BTreeSet;
use std::path::Path;

/// The trees whose every file the map lists.
const LISTED_TREES: &[&str] = &[
    "src",
    "tests",
    "examples",
    "bench/src",
    "bench/examples",
    "keel-wgpu/src",
    "keel-wgpu/tests",
    "keel-wgpu/examples",
    "scripts",
    "docs",
    ".ci",
];

/// Every file under `dir`, as a path relative to `root` with `/`s.
fn files_under(root: &Path, dir: &str, out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    for entry in entries {
        let entry = entry.expect("a readable directory entry");
        let name = entry.file_name().into_string().expect("a UTF-8 file name");
        let path = format!("{dir}/{name}");
        if entry.file_type().expect("a file type").is_dir() {
            files_under(root, &path, out);
        } else {
            out.insert(path);
        }
    }
}

/// Whether `path` matches `pattern` (`*` within one segment).
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, path): (Vec<&str>, Vec<&str>) =
        (pattern.split('/').collect(), path.split('/').collect());
    pattern.len() == path.len()
        && pattern
            .iter()
            .zip(&path)
            .all(|(p, s)| segment_matches(p.as_bytes(), s.as_bytes()))
}

fn segment_matches(pattern: &[u8], s: &[u8]) -> bool {
    match pattern.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|skip| segment_matches(rest, &s[skip..])),
        Some((c, rest)) => s.first() == Some(c) && segment_matches(rest, &s[1..]),
    }
}

/// Whether a token of an entry's first field is a path.
fn is_path(token: &str) -> bool {
    token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./*".contains(c))
        && (token.contains('.') || token.contains('/'))
}

/// The paths the map lists, each relative to the repository root, with the
/// line it is on; and the problems in the map's own form.
fn listed(map: &str) -> (Vec<(String, usize)>, Vec<String>) {
    let (mut paths, mut problems) = (Vec::new(), Vec::new());
    let mut open = String::new();
    for (index, line) in map.lines().enumerate() {
        let number = index + 1;
        let indent = line.len() - line.trim_start().len();
        if line.trim().is_empty() || (indent != 0 && indent != 4) {
            continue;
        }
        let first = line.trim_start().split("  ").next().unwrap_or_default();
        for token in first.split(' ') {
            if !is_path(token) {
                problems.push(format!(
                    "map line {number}: {token:?} in the path field is not a path: {line:?}"
                ));
                continue;
            }
            let path = if indent == 0 {
                open = match token.strip_suffix('/') {
                    Some(_) => token.to_owned(),
                    None => token
                        .rfind('/')
                        .map_or(String::new(), |at| token[..=at].to_owned()),
                };
                token.to_owned()
            } else {
                format!("{open}{token}")
            };
            paths.push((path, number));
        }
    }
    (paths, problems)
}

/// The fenced block under `## Map`.
fn map_block(architecture: &str) -> &str {
    let after = architecture
        .split_once("## Map")
        .expect("ARCHITECTURE.md has a `## Map` section")
        .1;
    let start = after.find("```").expect("the map is a fenced block") + 3;
    let body = &after[start..];
    let body = &body[body.find('\n').unwrap_or(0) + 1..];
    &body[..body.find("```").expect("the map's block is closed")]
}

#[test]
fn the_map_lists_every_file_and_nothing_missing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is readable");
    let (paths, mut problems) = listed(map_block(&architecture));
    let mut files = BTreeSet::new();
    for tree in LISTED_TREES {
        files_under(root, tree, &mut files);
    }
    let mut covered = BTreeSet::new();
    for (path, line) in &paths {
        if path.contains('*') {
            let hits: Vec<&String> = files.iter().filter(|f| matches(path, f)).collect();
            if hits.is_empty() {
                problems.push(format!("map line {line}: {path} matches no file"));
            }
            covered.extend(hits.into_iter().cloned());
        } else if root.join(path).exists() {
            covered.insert(path.clone());
        } else {
            problems.push(format!("map line {line}: {path} does not exist"));
        }
    }
    for file in &files {
        if !covered.contains(file) {
            problems.push(format!("{file} is not in ARCHITECTURE.md's map"));
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's map and the tree disagree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_map_reader_reads_its_format() {
    let map = "src/lib.rs            the crate\n\
               \x20   encoder.rs pass.rs  beside it\n\
               \x20                     a continued description.rs\n\
               src/vulkan/           a directory\n\
               \x20   memory/retention.rs   nested\n\
               tests/*.rs            a pattern\n";
    let (paths, problems) = listed(map);
    assert!(problems.is_empty(), "{problems:?}");
    let paths: Vec<&str> = paths.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "src/lib.rs",
            "src/encoder.rs",
            "src/pass.rs",
            "src/vulkan/",
            "src/vulkan/memory/retention.rs",
            "tests/*.rs"
        ]
    );
    let (_, problems) = listed("src/lib.rs (+ more)  text\n");
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(matches("tests/*.rs", "tests/a.rs"));
    assert!(!matches("tests/*.rs", "tests/sub/a.rs"));
    assert!(matches("tests/vulkan_*.rs", "tests/vulkan_memory.rs"));
    assert!(!matches("tests/vulkan_*.rs", "tests/fault.rs"));
}
