//! The file behind noop external memory and semaphores: a real, shareable
//! file descriptor.
//!
//! Vulkan drivers export memory as an fd (lavapipe: a memfd). The noop
//! backend does the same: a memfd (`libc::memfd_create`, close-on-exec),
//! an anonymous file in RAM with no name to clean up, reached only through
//! its descriptor. Exporting duplicates the descriptor; importing, in this
//! process or another one, takes it. The bytes are read and written with
//! positioned I/O (`pread`/`pwrite`), which never moves a shared file
//! offset.
//!
//! The file starts with a [`HEADER_LEN`]-byte header naming what it holds,
//! so an import can tell a noop handle from any other fd (a pipe, a regular
//! file, a semaphore passed as memory) and answer
//! [`ExternalError::InvalidHandle`], as a driver rejects a foreign handle:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `b"KEELNOOP"` |
//! | 8..12 | format version (1), little-endian |
//! | 12..16 | [`Kind`], little-endian |
//! | 16..24 | payload size in bytes, little-endian |
//!
//! The payload follows at [`HEADER_LEN`]: a resource's bytes, or a
//! semaphore's `u64` value.

use std::fs::File;
use std::io;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::os::unix::fs::FileExt as _;

use crate::{DeviceError, ExternalError};

/// Bytes before the payload.
pub(crate) const HEADER_LEN: u64 = 64;
const MAGIC: &[u8; 8] = b"KEELNOOP";
const VERSION: u32 = 1;

/// What a shared file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The bytes of a buffer or texture.
    Memory = 1,
    /// A binary semaphore: payload 0 (unsignalled) or 1 (signalled).
    BinarySemaphore = 2,
    /// A timeline semaphore: payload its counter.
    TimelineSemaphore = 3,
}

impl Kind {
    fn from_u32(v: u32) -> Option<Self> {
        match v {
            1 => Some(Kind::Memory),
            2 => Some(Kind::BinarySemaphore),
            3 => Some(Kind::TimelineSemaphore),
            _ => None,
        }
    }
}

/// An unlinked shared file with a header and a payload.
#[derive(Debug)]
pub(crate) struct SharedFile {
    file: File,
    kind: Kind,
    /// Payload size in bytes.
    size: u64,
}

/// Maps an I/O error of a shared file: a full tmpfs or a failed allocation
/// is out of memory; anything else means the "device memory" is gone.
pub(crate) fn io_err(e: &io::Error) -> DeviceError {
    const ENOMEM: i32 = 12;
    const ENOSPC: i32 = 28;
    match e.raw_os_error() {
        Some(ENOMEM | ENOSPC) => DeviceError::OutOfMemory,
        _ => {
            log::error!("noop: shared file I/O failed: {e}");
            DeviceError::Lost
        }
    }
}

impl SharedFile {
    /// Creates a file of `kind` with a zeroed payload of `size` bytes.
    pub(crate) fn create(kind: Kind, size: u64) -> Result<Self, DeviceError> {
        let total = size
            .checked_add(HEADER_LEN)
            .ok_or(DeviceError::OutOfMemory)?;
        // SAFETY: a NUL-terminated name and a valid flag; the call makes a
        // new anonymous file and returns its descriptor (or -1 and errno).
        let raw = unsafe { libc::memfd_create(c"keel-noop".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io_err(&io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        let mut header = [0u8; HEADER_LEN as usize];
        header[0..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&(kind as u32).to_le_bytes());
        header[16..24].copy_from_slice(&size.to_le_bytes());
        // On error `file` is dropped: its descriptor closes and the memory goes.
        file.set_len(total).map_err(|e| io_err(&e))?;
        file.write_all_at(&header, 0).map_err(|e| io_err(&e))?;
        Ok(Self { file, kind, size })
    }

    /// Takes `fd` as a file of `kind`. Anything else (not a regular file,
    /// no noop header, another kind, truncated) is `InvalidHandle`; the fd
    /// is closed on every error.
    pub(crate) fn open(fd: OwnedFd, kind: Kind) -> Result<Self, ExternalError> {
        let file = File::from(fd);
        let meta = file.metadata().map_err(|_| ExternalError::InvalidHandle)?;
        if !meta.is_file() || meta.len() < HEADER_LEN {
            return Err(ExternalError::InvalidHandle);
        }
        let mut header = [0u8; HEADER_LEN as usize];
        file.read_exact_at(&mut header, 0)
            .map_err(|_| ExternalError::InvalidHandle)?;
        let word = |range: std::ops::Range<usize>| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&header[range]);
            u32::from_le_bytes(b)
        };
        let mut size = [0u8; 8];
        size.copy_from_slice(&header[16..24]);
        let size = u64::from_le_bytes(size);
        let ok = &header[0..8] == MAGIC
            && word(8..12) == VERSION
            && Kind::from_u32(word(12..16)) == Some(kind)
            && meta.len().checked_sub(HEADER_LEN) == Some(size);
        if !ok {
            return Err(ExternalError::InvalidHandle);
        }
        Ok(Self { file, kind, size })
    }

    /// Payload size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// What the file holds.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// A new descriptor of the same file (close-on-exec, as `std` makes them).
    pub(crate) fn export(&self) -> Result<OwnedFd, ExternalError> {
        let dup = self
            .file
            .try_clone()
            .map_err(|e| ExternalError::Device(io_err(&e)))?;
        Ok(OwnedFd::from(dup))
    }

    /// Reads `buf.len()` payload bytes at `offset`.
    pub(crate) fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), DeviceError> {
        let at = self.at(offset, buf.len())?;
        self.file.read_exact_at(buf, at).map_err(|e| io_err(&e))
    }

    /// Writes `buf` into the payload at `offset`.
    pub(crate) fn write(&self, offset: u64, buf: &[u8]) -> Result<(), DeviceError> {
        let at = self.at(offset, buf.len())?;
        self.file.write_all_at(buf, at).map_err(|e| io_err(&e))
    }

    /// A semaphore's value.
    pub(crate) fn read_u64(&self) -> Result<u64, DeviceError> {
        let mut b = [0u8; 8];
        self.read(0, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Sets a semaphore's value.
    pub(crate) fn write_u64(&self, value: u64) -> Result<(), DeviceError> {
        self.write(0, &value.to_le_bytes())
    }

    /// The file position of payload bytes `offset..offset + len`, checked.
    fn at(&self, offset: u64, len: usize) -> Result<u64, DeviceError> {
        match offset.checked_add(len as u64) {
            Some(end) if end <= self.size => Ok(HEADER_LEN + offset),
            _ => {
                log::error!("noop: shared file access outside its payload");
                Err(DeviceError::Lost)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_a_second_descriptor() {
        let a = SharedFile::create(Kind::Memory, 100).expect("create");
        a.write(90, &[1, 2, 3]).expect("write");
        let b = SharedFile::open(a.export().expect("export"), Kind::Memory).expect("open");
        assert_eq!(b.size(), 100);
        let mut got = [0u8; 4];
        b.read(89, &mut got).expect("read");
        assert_eq!(got, [0, 1, 2, 3]);
        assert!(b.read(98, &mut got).is_err());
    }

    #[test]
    fn foreign_descriptors_are_invalid_handles() {
        let sem = SharedFile::create(Kind::BinarySemaphore, 8).expect("create");
        let fd = sem.export().expect("export");
        assert_eq!(
            SharedFile::open(fd, Kind::Memory).unwrap_err(),
            ExternalError::InvalidHandle
        );
        let null = File::open("/dev/null").expect("/dev/null");
        assert_eq!(
            SharedFile::open(OwnedFd::from(null), Kind::Memory).unwrap_err(),
            ExternalError::InvalidHandle
        );
    }
}
