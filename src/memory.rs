//! Where a resource's memory lives.

/// The kind of memory behind a buffer or texture.
///
/// Mapped kinds (`Upload`, `Readback`) are always host-visible *and*
/// host-coherent: no flush or invalidate is ever needed, and a backend that
/// has no such memory type fails creation with a typed error rather than
/// falling back to non-coherent memory. Coherence is not ordering: the CPU
/// and the GPU are ordered by the
/// [host-visibility rule](crate::BufferMapping#host-visibility).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Memory {
    /// GPU-only memory; fastest for the GPU, not mappable.
    #[default]
    Device,
    /// CPU writes, GPU reads. Persistently mapped, coherent.
    Upload,
    /// GPU writes, CPU reads. Persistently mapped, coherent, cached where possible.
    Readback,
    /// Shared with another API, device or process: allocated here for
    /// export, or imported (see [`crate::ExternalMemory`]). A dedicated
    /// allocation; not mappable through the hal.
    External(crate::ExternalMemory),
}

impl Memory {
    /// Whether the CPU can map memory of this kind.
    pub const fn is_mappable(self) -> bool {
        matches!(self, Memory::Upload | Memory::Readback)
    }
}
