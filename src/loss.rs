//! Device loss is remembered: once a device is lost it stays lost (the
//! Vulkan rule, "Lost Device" in the specification), so every later
//! fallible call of the device, its queue and its encoders returns
//! [`DeviceError::Lost`] without asking the driver again.
//!
//! Each backend keeps one [`LossLatch`] in its device's shared state and
//! runs its fallible entry points through [`LossLatch::guard`]: the latch is
//! checked first, and set when the call's error says the device was lost
//! (wherever in the call the driver said so: the error types carry it up
//! through [`LostError`]). Destruction never goes through the latch: host
//! objects are freed on a lost device as on a live one (`vkDestroy*` is
//! valid on a lost device). But a destroy must still not free what the
//! driver holds for a pending submission, and after the loss the caller
//! cannot wait for one (every wait returns `Lost`): so the first destroy
//! after the loss retires the driver's work once ([`LossLatch::retire_once`];
//! on Vulkan one real `vkDeviceWaitIdle`, which a lost device answers at
//! once, the specification requiring it to return in finite time).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::{
    AccelerationStructureError, BindingError, BufferError, DeviceError, ExternalError, MapError,
    PipelineCacheError, PipelineError, QuerySetError, SamplerError, ShaderError, SurfaceError,
    TextureError,
};

#[cfg(feature = "fault-injection")]
thread_local! {
    /// An `ERROR_DEVICE_LOST` injected on this thread by a one-call fault
    /// plan (`vulkan::fault::arm`), not yet seen by a loss latch.
    static TRANSIENT_LOSS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks (or clears) a one-call injected device loss on this thread: the
/// next [`LossLatch::latch`] here then leaves the device usable, the fault
/// sweep's premise being that one call failed, not that the device is gone.
#[cfg(feature = "fault-injection")]
pub(crate) fn mark_transient_loss(transient: bool) {
    let _ = TRANSIENT_LOSS.try_with(|t| t.set(transient));
}

/// Whether the loss being latched on this thread was a one-call injected
/// one ([`mark_transient_loss`]); consumes the mark.
#[cfg(feature = "fault-injection")]
fn take_transient_loss() -> bool {
    TRANSIENT_LOSS
        .try_with(|t| t.replace(false))
        .unwrap_or(false)
}

/// Whether a device was lost; set once, never cleared.
#[derive(Debug, Default)]
pub(crate) struct LossLatch {
    lost: AtomicBool,
    /// Whether the driver's work was retired after the loss.
    retired: AtomicBool,
}

impl LossLatch {
    /// Whether the device was lost.
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Runs `retire` (which waits for, or abandons, every submission the
    /// driver still holds) the first time it is asked after the loss;
    /// nothing on a live device, or once it has run. Every destroy calls
    /// it first: on a live device that is one load.
    #[inline(always)]
    pub(crate) fn retire_once(&self, retire: impl FnOnce()) {
        if self.is_lost() && !self.retired.swap(true, Ordering::AcqRel) {
            retire();
        }
    }

    /// Marks the device lost, for good.
    pub(crate) fn latch(&self) {
        #[cfg(feature = "fault-injection")]
        if take_transient_loss() {
            // Injected as a one-call failure (`fault::arm`): not a loss.
            return;
        }
        if !self.lost.swap(true, Ordering::AcqRel) {
            log::error!("device lost: every later call on it returns DeviceError::Lost");
        }
    }

    /// `Err(Lost)` once the device is lost.
    #[inline(always)]
    pub(crate) fn check<E: From<DeviceError>>(&self) -> Result<(), E> {
        if self.is_lost() {
            Err(DeviceError::Lost.into())
        } else {
            Ok(())
        }
    }

    /// Latches when `result` says the device was lost; returns it unchanged.
    #[inline(always)]
    pub(crate) fn note<T, E: LostError>(&self, result: Result<T, E>) -> Result<T, E> {
        if let Err(e) = &result {
            if e.is_device_lost() {
                self.latch();
            }
        }
        result
    }

    /// Runs `call` unless the device is lost (then `Err(Lost)`, and `call`
    /// does not run), latching when it reports the loss. Inlined: it wraps
    /// every fallible device call, and its result is moved once less.
    #[inline(always)]
    pub(crate) fn guard<T, E: LostError>(
        &self,
        call: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        self.check()?;
        self.note(call())
    }
}

/// An error that may say the device was lost.
pub(crate) trait LostError: From<DeviceError> {
    /// Whether this is (or wraps) [`DeviceError::Lost`].
    fn is_device_lost(&self) -> bool;
}

impl LostError for DeviceError {
    fn is_device_lost(&self) -> bool {
        *self == DeviceError::Lost
    }
}

/// Errors whose only route to a device failure is their `Device` variant.
macro_rules! lost_through_device {
    ($($error:ty),* $(,)?) => {$(
        impl LostError for $error {
            fn is_device_lost(&self) -> bool {
                matches!(self, Self::Device(DeviceError::Lost))
            }
        }
    )*};
}

lost_through_device!(
    AccelerationStructureError,
    BindingError,
    ExternalError,
    MapError,
    PipelineCacheError,
    PipelineError,
    QuerySetError,
    SamplerError,
    ShaderError,
    SurfaceError,
);

/// Errors that also wrap an [`ExternalError`].
macro_rules! lost_through_device_or_external {
    ($($error:ty),* $(,)?) => {$(
        impl LostError for $error {
            fn is_device_lost(&self) -> bool {
                match self {
                    Self::Device(DeviceError::Lost) => true,
                    Self::External(e) => e.is_device_lost(),
                    _ => false,
                }
            }
        }
    )*};
}

lost_through_device_or_external!(BufferError, TextureError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_device_stays_lost_and_is_not_called() {
        let latch = LossLatch::default();
        let mut calls = 0;
        let r: Result<u32, BufferError> = latch.guard(|| {
            calls += 1;
            Ok(1)
        });
        assert_eq!(r, Ok(1));
        // Another error does not latch.
        let r: Result<(), MapError> = latch.guard(|| Err(DeviceError::OutOfMemory.into()));
        assert_eq!(r, Err(MapError::Device(DeviceError::OutOfMemory)));
        assert!(!latch.is_lost());
        // Lost, nested in an external error: latched.
        let r: Result<(), TextureError> =
            latch.guard(|| Err(TextureError::External(DeviceError::Lost.into())));
        assert!(r.is_err());
        assert!(latch.is_lost());
        // From now on the call never runs.
        let r: Result<u32, PipelineError> = latch.guard(|| {
            calls += 1;
            Ok(2)
        });
        assert_eq!(r, Err(PipelineError::Device(DeviceError::Lost)));
        assert_eq!(calls, 1);
        assert_eq!(latch.check::<DeviceError>(), Err(DeviceError::Lost));
    }
}
