//! The README shows `examples/first_dispatch.rs` and states its length:
//! both must stay true.

const README: &str = include_str!("../README.md");
const EXAMPLE: &str = include_str!("../examples/first_dispatch.rs");

/// Lines that are neither blank nor comments, as
/// `grep -vE '^\s*(//.*)?$' | wc -l` counts them.
fn counted_lines(source: &str) -> usize {
    source
        .lines()
        .map(str::trim_start)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .count()
}

#[test]
fn readme_shows_the_first_dispatch_example_as_it_is() {
    let code = &EXAMPLE[EXAMPLE
        .find("use keel_hal")
        .expect("the example imports keel_hal")..];
    assert!(
        README.contains(&format!("```rust\n{code}```")),
        "README.md's copy of examples/first_dispatch.rs differs from the file"
    );
}

#[test]
fn readme_states_the_first_dispatch_line_count() {
    let lines = counted_lines(EXAMPLE);
    assert!(
        lines <= 90,
        "first_dispatch has {lines} counted lines, the goal is 90 at most"
    );
    assert!(
        README.contains(&format!(
            "**{lines} lines** without blank and comment lines"
        )),
        "README.md does not state the example's {lines} counted lines"
    );
}
