//! Bind group creation: wgpu's entries resolved to keel-hal objects (which
//! check every binding against its layout), and what the group holds for
//! lifetimes and the usage tracker.

use std::sync::Arc;

use keel_hal::dynamic::{DynBuffer, DynResources, DynSampler, DynTextureView};

use crate::binding::{
    buffer_use, texture_use, BindGroup, BindGroupLayout, BoundBuffer, DynamicBinding,
};
use crate::error::KeelError;
use crate::handles::{KBindGroupLayout, KBuffer, KSampler, KTextureView};
use crate::owner::owned;
use crate::resource::{Buffer, LastUse, Sampler, TextureView};
use crate::shared::DeviceShared;

/// One entry, resolved.
enum Resolved {
    Buffers(Vec<(Arc<Buffer>, u64, Option<wgpu::BufferSize>)>),
    Samplers(Vec<Arc<Sampler>>),
    Views(Vec<Arc<TextureView>>),
}

fn resolve(
    shared: &Arc<DeviceShared>,
    resource: &wgpu::BindingResource<'_>,
) -> Result<(Resolved, bool), String> {
    let buffer = |b: &wgpu::BufferBinding<'_>| {
        owned(shared, b.buffer.as_custom::<KBuffer>()).map(|k| (k, b.offset, b.size))
    };
    let sampler = |s: &wgpu::Sampler| owned(shared, s.as_custom::<KSampler>());
    let view = |v: &wgpu::TextureView| owned(shared, v.as_custom::<KTextureView>());
    Ok(match resource {
        wgpu::BindingResource::Buffer(b) => (Resolved::Buffers(vec![buffer(b)?]), false),
        wgpu::BindingResource::BufferArray(bs) => (
            Resolved::Buffers(bs.iter().map(buffer).collect::<Result<_, _>>()?),
            true,
        ),
        wgpu::BindingResource::Sampler(s) => (Resolved::Samplers(vec![sampler(s)?]), false),
        wgpu::BindingResource::SamplerArray(ss) => (
            Resolved::Samplers(ss.iter().map(|s| sampler(s)).collect::<Result<_, _>>()?),
            true,
        ),
        wgpu::BindingResource::TextureView(v) => (Resolved::Views(vec![view(v)?]), false),
        wgpu::BindingResource::TextureViewArray(vs) => (
            Resolved::Views(vs.iter().map(|v| view(v)).collect::<Result<_, _>>()?),
            true,
        ),
        _ => {
            return Err(
                "acceleration structures and external textures are not among keel-wgpu's features"
                    .into(),
            )
        }
    })
}

/// Creates a bind group (invalid, with the error reported, on failure).
pub(crate) fn create(
    shared: &Arc<DeviceShared>,
    desc: &wgpu::BindGroupDescriptor<'_>,
) -> Arc<BindGroup> {
    let layout = owned(shared, desc.layout.as_custom::<KBindGroupLayout>());
    match try_create(shared, desc, layout.clone()) {
        Ok(group) => group,
        Err(e) => {
            shared.report(e);
            let layout = layout.unwrap_or_else(|_| {
                Arc::new(BindGroupLayout {
                    shared: shared.clone(),
                    raw: None,
                    entries: Vec::new(),
                    last_use: LastUse::default(),
                    exclusive: None,
                })
            });
            Arc::new(BindGroup {
                shared: shared.clone(),
                raw: None,
                layout,
                buffers: Vec::new(),
                views: Vec::new(),
                samplers: Vec::new(),
                dynamic: Vec::new(),
                buffer_sizes: Vec::new(),
                last_use: LastUse::default(),
            })
        }
    }
}

fn try_create(
    shared: &Arc<DeviceShared>,
    desc: &wgpu::BindGroupDescriptor<'_>,
    layout: Result<Arc<BindGroupLayout>, String>,
) -> Result<Arc<BindGroup>, KeelError> {
    let call = "create_bind_group";
    let fail = |m: String| KeelError::validation(call, m);
    let layout = layout.map_err(|m| fail(format!("the layout: {m}")))?;
    let raw_layout = layout
        .raw
        .as_deref()
        .ok_or_else(|| fail("the bind group layout is invalid".into()))?;
    let mut resolved = Vec::with_capacity(desc.entries.len());
    for entry in desc.entries {
        let layout_entry = layout.entry(entry.binding).ok_or_else(|| {
            fail(format!(
                "binding {} is not in the layout (its bindings: {:?})",
                entry.binding,
                layout.entries.iter().map(|e| e.binding).collect::<Vec<_>>()
            ))
        })?;
        let (r, array) = resolve(shared, &entry.resource)
            .map_err(|m| fail(format!("binding {}: {m}", entry.binding)))?;
        resolved.push((entry.binding, layout_entry.ty, r, array));
    }

    let mut buffers = Vec::new();
    let mut views = Vec::new();
    let mut samplers = Vec::new();
    // Raw references, one list per entry, kept alive for the hal call.
    let mut buffer_lists: Vec<Vec<keel_hal::BufferBinding<'_, dyn DynBuffer>>> = Vec::new();
    let mut sampler_lists: Vec<Vec<&dyn DynSampler>> = Vec::new();
    let mut view_lists: Vec<Vec<&dyn DynTextureView>> = Vec::new();
    for (binding, ty, r, _) in &resolved {
        match r {
            Resolved::Buffers(list) => {
                let usage = buffer_use(ty).ok_or_else(|| {
                    fail(format!(
                        "binding {binding}: a buffer given for a {ty:?} binding"
                    ))
                })?;
                let mut raws = Vec::new();
                for (buffer, offset, size) in list {
                    // As wgpu-core: a mapped buffer may be bound (a submit
                    // using it while mapped fails); a destroyed one not.
                    let raw = buffer
                        .bindable()
                        .map_err(|m| fail(format!("binding {binding}: {m}")))?;
                    let bind_size = size.map_or(buffer.size.saturating_sub(*offset), |s| s.get());
                    crate::create_check::check_storage_binding_size(ty, bind_size)
                        .map_err(|m| fail(format!("binding {binding}: {m}")))?;
                    raws.push(keel_hal::BufferBinding {
                        buffer: raw,
                        offset: *offset,
                        size: *size,
                    });
                    buffers.push(BoundBuffer {
                        buffer: buffer.clone(),
                        usage,
                    });
                }
                buffer_lists.push(raws);
            }
            Resolved::Samplers(list) => {
                let mut raws = Vec::new();
                for sampler in list {
                    if *ty == wgpu::BindingType::Sampler(wgpu::SamplerBindingType::NonFiltering)
                        && sampler.filtering
                    {
                        return Err(fail(format!(
                            "Sampler binding {binding} expects filtering = false, \
                             but given a sampler with filtering = true"
                        )));
                    }
                    raws.push(sampler.raw.as_deref().ok_or_else(|| {
                        fail(format!("binding {binding}: the sampler is invalid"))
                    })?);
                    samplers.push(sampler.clone());
                }
                sampler_lists.push(raws);
            }
            Resolved::Views(list) => {
                let usage = texture_use(ty).ok_or_else(|| {
                    fail(format!(
                        "binding {binding}: a texture view given for a {ty:?} binding"
                    ))
                })?;
                let mut raws = Vec::new();
                for view in list {
                    crate::create_check::check_bound_view(*binding, ty, view).map_err(fail)?;
                    raws.push(
                        view.raw()
                            .map_err(|m| fail(format!("binding {binding}: {m}")))?,
                    );
                    views.push((view.clone(), usage));
                }
                view_lists.push(raws);
            }
        }
    }
    let (mut b, mut s, mut v) = (0, 0, 0);
    let mut entries = Vec::with_capacity(resolved.len());
    for (binding, _, r, array) in &resolved {
        let resource = match r {
            Resolved::Buffers(_) => {
                b += 1;
                let list = &buffer_lists[b - 1];
                match (array, list.first()) {
                    (false, Some(first)) => keel_hal::BindingResource::Buffer(*first),
                    _ => keel_hal::BindingResource::BufferArray(list),
                }
            }
            Resolved::Samplers(_) => {
                s += 1;
                let list = &sampler_lists[s - 1];
                match (array, list.first()) {
                    (false, Some(first)) => keel_hal::BindingResource::Sampler(*first),
                    _ => keel_hal::BindingResource::SamplerArray(list),
                }
            }
            Resolved::Views(_) => {
                v += 1;
                let list = &view_lists[v - 1];
                match (array, list.first()) {
                    (false, Some(first)) => keel_hal::BindingResource::TextureView(*first),
                    _ => keel_hal::BindingResource::TextureViewArray(list),
                }
            }
        };
        entries.push(keel_hal::BindGroupEntry {
            binding: *binding,
            resource,
        });
    }
    let hal_desc = keel_hal::BindGroupDescriptor::<DynResources> {
        label: desc.label,
        layout: raw_layout,
        entries: &entries,
    };
    // SAFETY: every object came from this device and is alive.
    let raw = unsafe { shared.hal().create_bind_group(&hal_desc) }
        .map_err(|e| KeelError::from_hal(call, &e))?;
    let mut dynamic: Vec<DynamicBinding> = resolved
        .iter()
        .filter_map(|(binding, ty, r, _)| match (ty, r) {
            (
                wgpu::BindingType::Buffer {
                    ty,
                    has_dynamic_offset: true,
                    ..
                },
                Resolved::Buffers(list),
            ) => list.first().map(|(buffer, offset, size)| {
                let end = size.map_or(buffer.size, |s| offset.saturating_add(s.get()));
                DynamicBinding {
                    binding: *binding,
                    uniform: matches!(ty, wgpu::BufferBindingType::Uniform),
                    range: (*offset, end),
                    buffer_size: buffer.size,
                }
            }),
            _ => None,
        })
        .collect();
    dynamic.sort_by_key(|d| d.binding);
    let buffer_sizes = resolved
        .iter()
        .filter_map(|(binding, _, r, _)| match r {
            Resolved::Buffers(list) => list.first().map(|(buffer, offset, size)| {
                let bytes = size.map_or(buffer.size.saturating_sub(*offset), |s| s.get());
                (*binding, bytes)
            }),
            _ => None,
        })
        .collect();
    drop(entries);
    drop((buffer_lists, sampler_lists, view_lists));
    Ok(Arc::new(BindGroup {
        shared: shared.clone(),
        raw: Some(raw),
        layout,
        buffers,
        views,
        samplers,
        dynamic,
        buffer_sizes,
        last_use: LastUse::default(),
    }))
}
