//! Phase marks, a diagnostic: with `BENCH_PHASES` set, the compaction
//! cycle of keel-hal and of the raw floor marks where each step ends
//! (`mark`), and at the end of the cycle one line goes to stderr with the
//! microseconds spent in each step, summed over the cycle's batches
//! (`dump`): `PHASE keel create=… b_prep=… b_build=… …`. Without the
//! variable a mark is one cached flag test.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::time::Instant;

thread_local! {
    static MARKS: RefCell<Vec<(&'static str, Instant)>> = const { RefCell::new(Vec::new()) };
}

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("BENCH_PHASES").is_some())
}

/// Marks the end of step `label` (the time since the previous mark).
pub fn mark(label: &'static str) {
    if enabled() {
        MARKS.with(|m| m.borrow_mut().push((label, Instant::now())));
    }
}

/// Prints the steps marked since the last dump, as `side`'s, and forgets them.
pub fn dump(side: &str) {
    if !enabled() {
        return;
    }
    MARKS.with(|m| {
        let mut marks = m.borrow_mut();
        let mut sums: Vec<(&str, u128)> = Vec::new();
        for pair in marks.windows(2) {
            let us = pair[1].1.duration_since(pair[0].1).as_micros();
            match sums.iter_mut().find(|(label, _)| *label == pair[1].0) {
                Some(sum) => sum.1 += us,
                None => sums.push((pair[1].0, us)),
            }
        }
        let steps: Vec<String> = sums.iter().map(|(l, us)| format!("{l}={us}")).collect();
        eprintln!("PHASE {side} {}", steps.join(" "));
        marks.clear();
    });
}
