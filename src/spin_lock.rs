//! A lock for critical sections of a few instructions: taking it is one
//! atomic read-modify-write, releasing it one plain store (a
//! `parking_lot::Mutex` releases with a second read-modify-write, so it can
//! wake parked waiters). Waiters spin a little, then yield their time slice.
//!
//! Only for sections that do a bounded amount of work and never wait: no
//! driver call, no other lock taken after it, no I/O. The descriptor
//! allocator's set cache (a pop or a push per bind group) is the one user;
//! everything slow stays under a `parking_lot::Mutex`.

use std::sync::atomic::{AtomicBool, Ordering};

/// A value behind a [`RawSpinLock`].
pub(crate) type SpinLock<T> = parking_lot::lock_api::Mutex<RawSpinLock, T>;

/// Spins before a waiter starts yielding its time slice.
const SPINS_BEFORE_YIELD: u32 = 64;

/// The raw lock of [`SpinLock`]: one flag.
pub(crate) struct RawSpinLock(AtomicBool);

// SAFETY: `lock` returns only once this thread turned the flag from false to
// true (an acquire read-modify-write), so one holder at a time; `unlock`
// turns it back with a release store, so the next holder sees every write
// of this one. A guard may move to another thread: the flag is not
// tied to the thread that set it.
unsafe impl parking_lot::lock_api::RawMutex for RawSpinLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self(AtomicBool::new(false));

    type GuardMarker = parking_lot::lock_api::GuardSend;

    #[inline(always)]
    fn lock(&self) {
        if !self.try_lock() {
            self.lock_contended();
        }
    }

    #[inline(always)]
    fn try_lock(&self) -> bool {
        self.0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[inline(always)]
    unsafe fn unlock(&self) {
        self.0.store(false, Ordering::Release);
    }

    fn is_locked(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

impl RawSpinLock {
    /// [`parking_lot::lock_api::RawMutex::lock`] when another thread holds
    /// the lock: wait (reading, not writing, the flag) until it looks free,
    /// then try again.
    #[cold]
    #[inline(never)]
    fn lock_contended(&self) {
        let mut spins = 0;
        loop {
            while self.0.load(Ordering::Relaxed) {
                if spins < SPINS_BEFORE_YIELD {
                    spins += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            if parking_lot::lock_api::RawMutex::try_lock(self) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads incrementing one counter under the lock lose no increment.
    #[test]
    fn holders_exclude_each_other() {
        let counter = std::sync::Arc::new(SpinLock::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let counter = std::sync::Arc::clone(&counter);
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let mut value = counter.lock();
                        // A read, a pause and a write: a lost update shows.
                        let seen = *value;
                        std::hint::spin_loop();
                        *value = seen + 1;
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("a thread panicked");
        }
        assert_eq!(*counter.lock(), 80_000);
    }

    #[test]
    fn try_lock_fails_while_held() {
        let lock = SpinLock::new(());
        let guard = lock.lock();
        assert!(lock.try_lock().is_none());
        drop(guard);
        assert!(lock.try_lock().is_some());
    }
}
