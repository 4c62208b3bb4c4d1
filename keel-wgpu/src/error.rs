//! Errors: keel-hal's typed errors become `wgpu::Error`s, delivered through
//! the device's error scopes or its uncaptured-error handler (wgpu's rules);
//! with neither, the error panics at the call that made it, as wgpu's
//! default handler does.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::ThreadId;

use parking_lot::Mutex;

/// A keel-wgpu error: what was asked, and why it was refused.
#[derive(Clone, Debug)]
pub struct KeelError {
    /// The wgpu call that failed (`create_buffer`, `submit`, …).
    pub call: &'static str,
    /// What keel-hal or keel-wgpu said.
    pub message: String,
    /// Which `wgpu::Error` kind it becomes.
    pub kind: ErrorKind,
}

/// How an error is classified for error scopes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// `wgpu::Error::Validation`: the caller asked for something not allowed.
    Validation,
    /// `wgpu::Error::OutOfMemory`.
    OutOfMemory,
    /// `wgpu::Error::Internal`: the driver failed or the device was lost.
    Internal,
}

impl std::fmt::Display for KeelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.call, self.message)
    }
}

impl std::error::Error for KeelError {}

impl KeelError {
    /// A validation error of `call`.
    pub(crate) fn validation(call: &'static str, message: impl Into<String>) -> Self {
        Self {
            call,
            message: message.into(),
            kind: ErrorKind::Validation,
        }
    }

    /// Classifies any keel-hal error by its text and its device error.
    pub(crate) fn from_hal(call: &'static str, error: &dyn std::error::Error) -> Self {
        let message = error.to_string();
        let kind = if message.contains("out of memory") {
            ErrorKind::OutOfMemory
        } else if message.contains("device lost") || message.contains("unexpected driver error") {
            ErrorKind::Internal
        } else {
            ErrorKind::Validation
        };
        Self {
            call,
            message,
            kind,
        }
    }

    fn into_wgpu(self) -> wgpu::Error {
        let description = self.to_string();
        match self.kind {
            ErrorKind::Validation => wgpu::Error::Validation {
                source: Box::new(self),
                description,
            },
            ErrorKind::OutOfMemory => wgpu::Error::OutOfMemory {
                source: Box::new(self),
            },
            ErrorKind::Internal => wgpu::Error::Internal {
                source: Box::new(self),
                description,
            },
        }
    }

    fn matches(&self, filter: wgpu::ErrorFilter) -> bool {
        matches!(
            (self.kind, filter),
            (ErrorKind::Validation, wgpu::ErrorFilter::Validation)
                | (ErrorKind::OutOfMemory, wgpu::ErrorFilter::OutOfMemory)
                | (ErrorKind::Internal, wgpu::ErrorFilter::Internal)
        )
    }
}

struct Scope {
    filter: wgpu::ErrorFilter,
    error: Option<KeelError>,
}

/// Where a device's errors go: the innermost matching error scope of the
/// thread that made the error, else the uncaptured-error handler, else a
/// panic (wgpu's default handler: `wgpu error: …`). Scopes are per thread, as wgpu's (`std` feature) are: an error made
/// on another thread never lands in this thread's scope.
#[derive(Default)]
pub(crate) struct ErrorSink {
    scopes: Mutex<HashMap<ThreadId, Vec<Scope>>>,
    handler: Mutex<Option<Arc<dyn wgpu::UncapturedErrorHandler>>>,
}

impl std::fmt::Debug for ErrorSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErrorSink")
            .field("threads with scopes", &self.scopes.lock().len())
            .finish_non_exhaustive()
    }
}

impl ErrorSink {
    /// Delivers `error` by wgpu's rules.
    pub(crate) fn report(&self, error: KeelError) {
        {
            let mut scopes = self.scopes.lock();
            let mine = scopes.get_mut(&std::thread::current().id());
            if let Some(scope) = mine
                .into_iter()
                .flat_map(|s| s.iter_mut().rev())
                .find(|s| error.matches(s.filter))
            {
                // A scope keeps its first error only.
                if scope.error.is_none() {
                    scope.error = Some(error);
                }
                return;
            }
        }
        let handler = self.handler.lock().clone();
        match handler {
            Some(handler) => handler(error.into_wgpu()),
            // Already unwinding (an error met while dropping): a second
            // panic would abort the process; the log gets it.
            None if std::thread::panicking() => {
                log::error!("keel-wgpu: uncaptured error while panicking: {error}")
            }
            // wgpu's default: an uncaptured error is fatal, so a program (or
            // a test) that forgot an error scope fails at the error.
            None => {
                log::error!("Handling wgpu errors as fatal by default");
                panic!("wgpu error: {}\n", error.into_wgpu());
            }
        }
    }

    pub(crate) fn set_handler(&self, handler: Arc<dyn wgpu::UncapturedErrorHandler>) {
        *self.handler.lock() = Some(handler);
    }

    /// Pushes a scope on this thread's stack; its index there.
    pub(crate) fn push(&self, filter: wgpu::ErrorFilter) -> u32 {
        let mut scopes = self.scopes.lock();
        let mine = scopes.entry(std::thread::current().id()).or_default();
        mine.push(Scope {
            filter,
            error: None,
        });
        // wgpu's guard carries the index back; more than 2^32 nested scopes
        // would have exhausted memory first.
        u32::try_from(mine.len() - 1).unwrap_or(u32::MAX)
    }

    /// Pops the scope at `index` of this thread's stack, which must be its
    /// innermost one. A pop that is not is a bug of the program that wgpu
    /// answers with a panic naming the mismatch (never while the thread is
    /// already unwinding: then the pop is dropped, as wgpu drops it), and
    /// keel-wgpu answers the same way, with wgpu's words.
    pub(crate) fn pop(&self, index: u32) -> Option<wgpu::Error> {
        let mut scopes = self.scopes.lock();
        let thread = std::thread::current().id();
        let unwinding = std::thread::panicking();
        let depth = scopes.get(&thread).map_or(0, Vec::len);
        if depth == 0 {
            drop(scopes);
            if unwinding {
                return None;
            }
            panic!("{NO_SCOPE}");
        }
        if index as usize != depth - 1 && !unwinding {
            drop(scopes);
            panic!("{WRONG_ORDER}");
        }
        let mine = scopes.get_mut(&thread)?;
        let scope = mine.pop();
        if mine.is_empty() {
            scopes.remove(&thread);
        }
        scope.and_then(|s| s.error).map(KeelError::into_wgpu)
    }
}

/// wgpu's words for a pop with no scope open on this thread.
pub(crate) const NO_SCOPE: &str = "Mismatched pop_error_scope call: no error scope for this thread. Error scopes are thread-local.";
/// wgpu's words for a pop of a scope that is not the innermost.
pub(crate) const WRONG_ORDER: &str =
    "Mismatched pop_error_scope call: error scopes must be popped in reverse order.";
