//! Counting the file descriptors keel-hal opens, for the leak checks of the
//! fault sweep and the external-memory tests (included with `#[path]`).
//!
//! `/proc/self/fd` also lists descriptors the driver opens and closes on its
//! own threads, at any moment: Mesa's shader-cache files (and NVIDIA's
//! GLCache) come and go while a test runs, so a plain count of the directory
//! flakes. Only descriptors whose target is not a driver cache and not
//! `/proc` itself (the directory being read) are counted: exported and
//! imported memory (memfds, dma-bufs, `/dev/shm` files), semaphores (sync
//! files, anonymous inodes), pipes and sockets a test made.

// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

use std::path::PathBuf;

/// Whether a descriptor's target is a driver's own cache or `/proc`.
fn is_driver_or_proc(target: &str) -> bool {
    const DRIVER_CACHES: [&str; 4] = ["mesa_shader_cache", "shader_cache", "GLCache", "/.nv/"];
    // `/proc` is the directory being read; `/sys` files are read for a
    // moment by libraries on other threads (glibc's and LLVM's CPU counts
    // read `/sys/devices/system/cpu/online`); keel-hal hands out neither.
    if target.starts_with("/proc/")
        || target.starts_with("/sys/")
        || DRIVER_CACHES.iter().any(|c| target.contains(c))
    {
        return true;
    }
    std::env::var_os("MESA_SHADER_CACHE_DIR")
        .filter(|dir| !dir.is_empty())
        .is_some_and(|dir| target.starts_with(&*PathBuf::from(dir).to_string_lossy()))
}

/// The process's open descriptors that keel-hal or the test opened (see
/// the module docs for what is left out), with their targets.
pub fn owned_fds() -> Vec<(i32, String)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    let mut fds: Vec<(i32, String)> = dir
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let fd = entry.file_name().to_str()?.parse().ok()?;
            // A descriptor closed since the directory was read has no link.
            let target = std::fs::read_link(entry.path()).ok()?;
            let target = target.to_string_lossy().into_owned();
            (!is_driver_or_proc(&target)).then_some((fd, target))
        })
        .collect();
    fds.sort();
    fds
}

/// How many descriptors [`owned_fds`] lists.
pub fn open_fds() -> usize {
    owned_fds().len()
}

/// The descriptors [`owned_fds`] lists now that were not in `before`,
/// once there are none, or after a second if some stay: a driver thread
/// may hold a descriptor for a moment (a file it reads, a pipe to its
/// worker), while a leaked one never goes. Descriptors of `before` that
/// closed meanwhile are not counted: another thread's transient file was
/// open when `before` was taken.
pub fn new_fds_settled(before: &[(i32, String)]) -> Vec<(i32, String)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let new: Vec<_> = owned_fds()
            .into_iter()
            .filter(|fd| !before.contains(fd))
            .collect();
        if new.is_empty() || std::time::Instant::now() >= deadline {
            return new;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
