//! The noop queue: submission executes the commands right away, on the
//! submitting thread, then signals the fence; presenting counts a frame.
//! External memory and semaphores are synchronised as `external.rs` says.
//! Also the fence itself and the clock timestamp queries read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::command::{self, CommandBuffer};
use super::{external, Api, DeviceShared, Surface, SurfaceTexture};
use crate::{DeviceError, FenceValue, SurfaceError};

/// The device's one queue.
#[derive(Debug)]
pub struct Queue {
    pub(crate) shared: Arc<DeviceShared>,
}

impl crate::Queue for Queue {
    type A = Api;

    unsafe fn submit(
        &self,
        command_buffers: &[&CommandBuffer],
        _surface_textures: &[&SurfaceTexture],
        fence: &Fence,
        value: FenceValue,
    ) -> Result<(), DeviceError> {
        self.shared.lost.guard(|| {
            // Commands run here and now: surface textures need no ordering.
            let _in_flight = self.shared.submit_lock.lock();
            run(command_buffers, &self.shared)?;
            fence.signal(value);
            Ok(())
        })
    }

    unsafe fn present(
        &self,
        surface: &Surface,
        texture: SurfaceTexture,
    ) -> Result<(), SurfaceError> {
        self.shared.lost.guard(|| {
            // The frame was written at submit; presenting only counts it.
            surface.give_back(texture, true);
            Ok(())
        })
    }

    fn timestamp_period(&self) -> f32 {
        1.0
    }

    /// Waits (blocking, see `external.rs`), runs the commands, signals.
    /// A failed wait drops the whole submission: nothing runs or signals.
    unsafe fn submit_external(
        &self,
        submission: &crate::ExternalSubmissionOf<'_, Api>,
    ) -> Result<(), DeviceError> {
        self.shared.lost.guard(|| {
            let _in_flight = self.shared.submit_lock.lock();
            for wait in submission.waits {
                external::wait(wait.semaphore, wait.value)?;
            }
            run(submission.command_buffers, &self.shared)?;
            for signal in submission.signals {
                external::signal(signal.semaphore, signal.value)?;
            }
            if let Some((fence, value)) = submission.fence {
                fence.signal(value);
            }
            Ok(())
        })
    }
}

/// Executes command buffers in order, with external memory synchronised
/// with its shared files around them (the coherence rule of `external.rs`).
/// An error reading the files runs nothing; an error writing them back
/// comes after the commands ran, and the submission reports it.
fn run(command_buffers: &[&CommandBuffer], shared: &DeviceShared) -> Result<(), DeviceError> {
    let external = command::external_memory(command_buffers)?;
    for (bytes, _) in &external {
        bytes.pull()?;
    }
    for buffer in command_buffers {
        command::execute(buffer, shared);
    }
    for (bytes, written) in &external {
        if *written {
            bytes.push()?;
        }
    }
    Ok(())
}

/// A fence: a counter that only grows, with a condition variable to wait on.
#[derive(Debug, Default)]
pub struct Fence {
    value: Mutex<FenceValue>,
    reached: Condvar,
}

impl Fence {
    /// A fence at 0.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The current value.
    pub(crate) fn value(&self) -> FenceValue {
        *self.value.lock()
    }

    /// Raises the value to `value` (never lowers it) and wakes waiters.
    pub(crate) fn signal(&self, value: FenceValue) {
        let mut current = self.value.lock();
        if value <= *current {
            log::warn!(
                "noop: fence signalled with {value}, not above its value {}",
                *current
            );
            return;
        }
        *current = value;
        self.reached.notify_all();
    }

    /// Waits until the value reaches `value`; `false` if `timeout` passed first.
    pub(crate) fn wait(&self, value: FenceValue, timeout: Option<Duration>) -> bool {
        // A timeout too long to represent is no timeout.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut current = self.value.lock();
        while *current < value {
            match deadline {
                None => self.reached.wait(&mut current),
                Some(deadline) => {
                    if self.reached.wait_until(&mut current, deadline).timed_out() {
                        return *current >= value;
                    }
                }
            }
        }
        true
    }
}

/// The timestamp source: nanoseconds since the device was opened, strictly
/// increasing across reads (two reads in the same nanosecond differ by one).
/// Starts above 0, so a written timestamp is never mistaken for a reset one.
#[derive(Debug)]
pub(crate) struct Clock {
    origin: Instant,
    last: AtomicU64,
}

impl Clock {
    pub(crate) fn new() -> Self {
        Self {
            origin: Instant::now(),
            last: AtomicU64::new(0),
        }
    }

    /// The next timestamp.
    pub(crate) fn now(&self) -> u64 {
        let elapsed = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let update = self
            .last
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
                Some(elapsed.max(last.saturating_add(1)))
            });
        // The closure always returns `Some`, so both arms carry the previous value.
        let previous = match update {
            Ok(previous) | Err(previous) => previous,
        };
        elapsed.max(previous.saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_strictly_increases() {
        let clock = Clock::new();
        let mut last = 0;
        for _ in 0..1000 {
            let now = clock.now();
            assert!(now > last);
            last = now;
        }
    }

    #[test]
    fn fence_waits_and_times_out() {
        let fence = Arc::new(Fence::new());
        assert!(!fence.wait(1, Some(Duration::from_millis(1))));
        assert!(fence.wait(0, Some(Duration::ZERO)));
        let signaller = Arc::clone(&fence);
        let thread = std::thread::spawn(move || signaller.signal(3));
        assert!(fence.wait(2, None));
        thread.join().expect("test fixture");
        fence.signal(2);
        assert_eq!(fence.value(), 3);
    }
}
