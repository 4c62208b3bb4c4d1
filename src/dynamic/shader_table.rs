//! Shader binding tables on the dyn path.
//!
//! A backend's table, `ShaderBindingTable<A::Buffer>`, owns its buffer and
//! is passed to `trace_rays` by reference. The dyn path's table is a
//! `ShaderBindingTable<Box<dyn DynBuffer>>` (also [`DynApi`](crate::DynApi)'s),
//! and a `&ShaderBindingTable<A::Buffer>` cannot be made from it without
//! owning the buffer. So the dyn table's `buffer` is the backend's whole
//! table ([`TableBuffer`]), and its regions are copies: `trace_rays`
//! traces with the dyn table's regions (a caller may change them, as on the
//! static path), written into the backend table for the call.
//!
//! The dyn table's buffer serves `trace_rays`, `map_buffer`/`unmap_buffer`
//! and `destroy_shader_binding_table`; any other call that takes a buffer
//! sees it as a resource of another backend.

use std::any::Any;

use parking_lot::Mutex;

use super::{cast, cast_box, DynBuffer};
use crate::{Api, ShaderBindingTable};

/// A backend's shader binding table, as the object inside the dyn table's
/// `buffer`. The lock lets `trace_rays` set the regions through a shared
/// reference; it is only ever taken for the length of one call.
#[derive(Debug)]
pub(crate) struct TableBuffer<A: Api>(Mutex<ShaderBindingTable<A::Buffer>>);

impl<A: Api> DynBuffer for TableBuffer<A> {}

/// The dyn form of a backend's table.
pub(crate) fn wrap<A: Api>(
    table: ShaderBindingTable<A::Buffer>,
) -> ShaderBindingTable<Box<dyn DynBuffer>> {
    let (ray_generation, miss, hit) = (table.ray_generation, table.miss, table.hit);
    ShaderBindingTable {
        buffer: Box::new(TableBuffer::<A>(Mutex::new(table))),
        ray_generation,
        miss,
        hit,
    }
}

/// The backend's table back, or `None` (the table is dropped) when it
/// belongs to another backend.
pub(crate) fn unwrap<A: Api>(
    table: ShaderBindingTable<Box<dyn DynBuffer>>,
) -> Option<ShaderBindingTable<A::Buffer>> {
    let buffer: Box<dyn Any> = table.buffer;
    cast_box::<TableBuffer<A>>(buffer).map(|t| t.0.into_inner())
}

/// Calls `f` with the backend's table, its regions set to the dyn table's;
/// `None` when the table belongs to another backend.
pub(crate) fn with_table<A: Api, R>(
    table: &ShaderBindingTable<Box<dyn DynBuffer>>,
    f: impl FnOnce(&ShaderBindingTable<A::Buffer>) -> R,
) -> Option<R> {
    let object: &dyn Any = &*table.buffer;
    let own = cast::<TableBuffer<A>>(object)?;
    let mut own = own.0.lock();
    own.ray_generation = table.ray_generation;
    own.miss = table.miss;
    own.hit = table.hit;
    Some(f(&own))
}

/// Calls `f` with the buffer of the table inside `buffer`, if `buffer` is
/// a dyn table's buffer of backend `A`.
pub(crate) fn with_table_buffer<A: Api, R>(
    buffer: &dyn Any,
    f: impl FnOnce(&A::Buffer) -> R,
) -> Option<R> {
    let own = cast::<TableBuffer<A>>(buffer)?;
    let own = own.0.lock();
    Some(f(&own.buffer))
}
