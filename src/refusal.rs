//! Work an encoder refuses while recording. Recording calls return nothing
//! (their contract is the caller's), so a backend that finds a command it
//! cannot record safely (a region outside its resource, a draw past the
//! pipeline's buffers, a command outside its pass) skips it and says why
//! with [`refused!`]: a `log::error!` line, and, while a [`capture`] runs
//! on the thread, an entry in its list. An upper layer that records on the
//! program's behalf (keel-wgpu at submit) captures, and hands each refusal
//! to the program as an error instead of leaving it in the log.

use std::cell::RefCell;

thread_local! {
    /// The refusals of the innermost capture running on this thread.
    static CAPTURED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `f`, returning what it returned and every refusal a keel-hal encoder
/// made on this thread meanwhile, in order. Captures nest: an inner one
/// takes its own refusals, the outer one the rest.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let outer = CAPTURED.with(|c| c.borrow_mut().replace(Vec::new()));
    let result = f();
    let mine = CAPTURED.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer));
    (result, mine.unwrap_or_default())
}

/// Records one refusal (the [`refused!`] macro's second half).
pub(crate) fn note(message: String) {
    CAPTURED.with(|c| {
        if let Some(list) = c.borrow_mut().as_mut() {
            list.push(message);
        }
    });
}

/// Says why a command was skipped: logs it, and adds it to the running
/// [`capture`]. Takes `format!` arguments.
macro_rules! refused {
    ($($arg:tt)*) => {{
        let message = format!($($arg)*);
        log::error!("{message}");
        $crate::refusal::note(message);
    }};
}
pub(crate) use refused;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_nest_and_end() {
        let ((), outer) = capture(|| {
            refused!("one");
            let ((), inner) = capture(|| refused!("two {}", 2));
            assert_eq!(inner, ["two 2"]);
            refused!("three");
        });
        assert_eq!(outer, ["one", "three"]);
        // No capture running: logged only.
        refused!("four");
        let ((), none) = capture(|| ());
        assert!(none.is_empty());
    }
}
