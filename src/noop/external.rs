//! External memory and semaphores on noop: not supported. The adapter
//! reports none of the external [`crate::HalFeatures`], every capability
//! query answers "no", and every creation, import or export returns
//! [`ExternalError::Unsupported`] (an imported fd is closed, as the
//! contract says). No external semaphore can exist, so submissions that
//! name one cannot be made: `submit_external` is a plain submit.

use std::os::fd::OwnedFd;

use crate::{ExternalCapabilities, ExternalError, ExternalHandle};

/// An external semaphore of noop: none can be created (an uninhabited type).
#[derive(Debug)]
pub enum ExternalSemaphore {}

/// The error of every external operation on noop.
pub(crate) fn unsupported(handle: &'static str) -> ExternalError {
    ExternalError::Unsupported {
        handle,
        reason: "the noop backend has no external memory or semaphores",
    }
}

/// Consumes an import's handle (closing its fd) and answers `Unsupported`.
pub(crate) fn refuse_handle(handle: ExternalHandle) -> ExternalError {
    let name = handle.handle_type().name();
    drop(handle);
    unsupported(name)
}

/// Consumes a semaphore fd (closing it) and answers `Unsupported`.
pub(crate) fn refuse_fd(fd: OwnedFd, handle: &'static str) -> ExternalError {
    drop(fd);
    unsupported(handle)
}

/// Every capability query's answer.
pub(crate) fn no_capabilities() -> ExternalCapabilities {
    ExternalCapabilities::default()
}
