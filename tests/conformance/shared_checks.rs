//! The checks every backend shares (`src/validate/`): a resource whose
//! usage, format, sample count, dimension, aspect or kind does not fit
//! where it is used is the same typed error on noop and on Vulkan, caught
//! before the driver sees it (a render-attachment-only view bound as
//! sampled used to crash lavapipe inside `vkUpdateDescriptorSets`), and
//! error messages name what was asked and what is allowed.

use keel_hal::wgt;
use keel_hal::{
    AccelerationStructureDescriptor, AccelerationStructureError, AccelerationStructureKind,
    AccelerationStructurePlacement, Adapter, Api, BindGroupDescriptor, BindGroupEntry,
    BindGroupLayoutDescriptor, BindingError, BindingResource, BufferBinding, BufferDescriptor,
    BufferError, CommandEncoder, CommandEncoderDescriptor, Device, DeviceDescriptor, DeviceError,
    ExternalError, ExternalHandle, ExternalHandleType, ExternalMemory, HalFeatures, Memory,
    PipelineLayoutDescriptor, PushConstantRange, QuerySetDescriptor, QuerySetError,
    SamplerDescriptor, StructureBuffer, TextureDescriptor, TextureError, TextureViewDescriptor,
};

use crate::external_side::Side;
use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{create_buffer, texture_desc};
use crate::pipelines::{entry, storage, uniform};

conformance_tests!(
    render_attachment_view_bound_as_sampled,
    sampled_only_view_bound_as_storage,
    buffer_without_uniform_usage_bound_as_uniform,
    depth_view_bound_as_filterable_float,
    multisampled_view_bound_as_single_sampled,
    storage_view_of_another_format,
    view_of_another_dimension,
    sampler_of_the_wrong_kind,
    depth_aspect_of_a_colour_texture,
    structure_placed_without_storage_usage,
    messages_name_what_was_asked,
    end_encoding_without_begin_is_invalid_state,
    wrong_resource_type_names_both,
    pipeline_layout_limits_name_the_numbers,
    query_set_counts,
    short_host_pointer_is_too_small_for_the_buffer,
    imported_texture_ignores_the_callers_memory,
    texture_from_a_host_pointer_is_refused_first,
);

const STAGES: wgt::ShaderStages = wgt::ShaderStages::COMPUTE;

/// Tries to make a bind group of one binding (0, of type `ty`) pointing at
/// `resource`; returns the error, and fails if the call succeeded or live
/// counts changed.
///
/// # Safety
/// Every resource came from `ctx.device`.
unsafe fn group_error<A: Api>(
    ctx: &Ctx<A>,
    ty: wgt::BindingType,
    resource: BindingResource<'_, A>,
) -> Result<BindingError, Failure> {
    let entries = [entry(0, STAGES, ty)];
    // SAFETY: live device; the layout is destroyed below.
    let layout = unsafe {
        ctx.device
            .create_bind_group_layout(&BindGroupLayoutDescriptor {
                label: Some("shared checks"),
                entries: &entries,
                ..Default::default()
            })
    }?;
    let before = ctx.device.live_counts();
    let group = [BindGroupEntry {
        binding: 0,
        resource,
    }];
    // SAFETY: the resources came from ctx.device (caller's contract).
    let made = unsafe {
        ctx.device.create_bind_group(&BindGroupDescriptor {
            label: Some("bad"),
            layout: &layout,
            entries: &group,
        })
    };
    let after = ctx.device.live_counts();
    let result = match made {
        Ok(group) => {
            // SAFETY: never bound.
            unsafe { ctx.device.destroy_bind_group(group) };
            Err("the bad bind group was created".into())
        }
        Err(e) => Ok(e),
    };
    // SAFETY: no group uses it.
    unsafe { ctx.device.destroy_bind_group_layout(layout) };
    check_eq!(after, before, "live counts after the failed create");
    result
}

/// A 4×4 texture of `format` with `usage` and `samples`, and its default view.
///
/// # Safety
/// The caller destroys both (view first).
unsafe fn texture_and_view<A: Api>(
    ctx: &Ctx<A>,
    format: wgt::TextureFormat,
    usage: wgt::TextureUsages,
    samples: u32,
) -> Result<(A::Texture, A::TextureView), Failure> {
    let desc = TextureDescriptor {
        usage,
        sample_count: samples,
        ..texture_desc(format, 4, 4, 1, 1)
    };
    // SAFETY: live device.
    let texture = unsafe { ctx.device.create_texture(&desc) }?;
    // SAFETY: the texture is live.
    match unsafe {
        ctx.device
            .create_texture_view(&texture, &TextureViewDescriptor::default())
    } {
        Ok(view) => Ok((texture, view)),
        Err(e) => {
            // SAFETY: viewless.
            unsafe { ctx.device.destroy_texture(texture) };
            Err(e.into())
        }
    }
}

/// Binds a default view of a fresh texture to a layout binding of `ty`.
fn view_error<A: Api>(
    ctx: &Ctx<A>,
    format: wgt::TextureFormat,
    usage: wgt::TextureUsages,
    samples: u32,
    ty: wgt::BindingType,
) -> Result<BindingError, Failure> {
    // SAFETY: both are destroyed below; nothing is submitted.
    unsafe {
        let (texture, view) = texture_and_view(ctx, format, usage, samples)?;
        let e = group_error(ctx, ty, BindingResource::TextureView(&view));
        ctx.device.destroy_texture_view(view);
        ctx.device.destroy_texture(texture);
        e
    }
}

fn sampled(sample_type: wgt::TextureSampleType, multisampled: bool) -> wgt::BindingType {
    wgt::BindingType::Texture {
        sample_type,
        view_dimension: wgt::TextureViewDimension::D2,
        multisampled,
    }
}

fn storage_texture(format: wgt::TextureFormat) -> wgt::BindingType {
    wgt::BindingType::StorageTexture {
        access: wgt::StorageTextureAccess::WriteOnly,
        format,
        view_dimension: wgt::TextureViewDimension::D2,
    }
}

const FILTERABLE: wgt::TextureSampleType = wgt::TextureSampleType::Float { filterable: true };
const UNFILTERABLE: wgt::TextureSampleType = wgt::TextureSampleType::Float { filterable: false };

/// The view of a texture that can only be rendered to, bound as sampled
/// (lavapipe crashed in `vkUpdateDescriptorSets` on this).
fn render_attachment_view_bound_as_sampled<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let e = view_error(
        ctx,
        wgt::TextureFormat::Rgba8Unorm,
        wgt::TextureUsages::RENDER_ATTACHMENT,
        1,
        sampled(FILTERABLE, false),
    )?;
    check!(
        matches!(
            &e,
            BindingError::MissingUsage {
                binding: 0,
                needed: "TEXTURE_BINDING",
                has,
            } if has == "RENDER_ATTACHMENT"
        ),
        "{e:?}"
    );
    Ok(Outcome::Pass)
}

/// The view of a texture that can only be sampled, bound as storage.
fn sampled_only_view_bound_as_storage<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let format = wgt::TextureFormat::Rgba8Unorm;
    let e = view_error(
        ctx,
        format,
        wgt::TextureUsages::TEXTURE_BINDING,
        1,
        storage_texture(format),
    )?;
    check!(
        matches!(
            e,
            BindingError::MissingUsage {
                binding: 0,
                needed: "STORAGE_BINDING",
                ..
            }
        ),
        "{e:?}"
    );
    Ok(Outcome::Pass)
}

/// A storage-only buffer bound as a uniform buffer, and a uniform-only one
/// as storage.
fn buffer_without_uniform_usage_bound_as_uniform<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for (usage, ty, needed) in [
        (wgt::BufferUsages::STORAGE, uniform(), "UNIFORM"),
        (wgt::BufferUsages::UNIFORM, storage(true, false), "STORAGE"),
    ] {
        // SAFETY: destroyed below; nothing is submitted.
        unsafe {
            let buffer = create_buffer(ctx, 256, usage, Memory::Device)?;
            let e = group_error(
                ctx,
                ty,
                BindingResource::Buffer(BufferBinding::whole(&buffer)),
            );
            ctx.device.destroy_buffer(buffer);
            let e = e?;
            check!(
                matches!(e, BindingError::MissingUsage { binding: 0, needed: n, .. } if n == needed),
                "a {usage:?} buffer for a binding needing {needed}: {e:?}"
            );
        }
    }
    Ok(Outcome::Pass)
}

/// A depth view where the layout wants a filterable float texture (depth
/// cannot be filtered as a colour).
fn depth_view_bound_as_filterable_float<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let e = view_error(
        ctx,
        wgt::TextureFormat::Depth32Float,
        wgt::TextureUsages::TEXTURE_BINDING,
        1,
        sampled(FILTERABLE, false),
    )?;
    check!(
        matches!(
            e,
            BindingError::IncompatibleResource {
                binding: 0,
                property: "sample type",
                ..
            }
        ),
        "{e:?}"
    );
    Ok(Outcome::Pass)
}

/// A multisampled view where the layout wants a single-sampled texture.
fn multisampled_view_bound_as_single_sampled<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let usage = wgt::TextureUsages::TEXTURE_BINDING | wgt::TextureUsages::RENDER_ATTACHMENT;
    let desc = TextureDescriptor {
        usage,
        sample_count: 4,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 4, 4, 1, 1)
    };
    // SAFETY: live device; destroyed at once.
    match unsafe { ctx.device.create_texture(&desc) } {
        // SAFETY: unused.
        Ok(t) => unsafe { ctx.device.destroy_texture(t) },
        Err(TextureError::InvalidSampleCount { .. }) => return skip("no 4× multisampling"),
        Err(e) => return Err(e.into()),
    }
    let e = view_error(
        ctx,
        wgt::TextureFormat::Rgba8Unorm,
        usage,
        4,
        sampled(UNFILTERABLE, false),
    )?;
    check!(
        matches!(
            &e,
            BindingError::IncompatibleResource {
                binding: 0,
                property: "sample count",
                got,
                ..
            } if got == "4"
        ),
        "{e:?}"
    );
    Ok(Outcome::Pass)
}

/// A storage view of Rgba8Unorm where the layout says R32Float.
fn storage_view_of_another_format<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let e = view_error(
        ctx,
        wgt::TextureFormat::Rgba8Unorm,
        wgt::TextureUsages::STORAGE_BINDING,
        1,
        storage_texture(wgt::TextureFormat::R32Float),
    )?;
    check!(
        matches!(
            e,
            BindingError::IncompatibleResource {
                binding: 0,
                property: "format",
                ..
            }
        ),
        "{e:?}"
    );
    Ok(Outcome::Pass)
}

/// A 2D view where the layout says 2D array.
fn view_of_another_dimension<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let e = view_error(
        ctx,
        wgt::TextureFormat::Rgba8Unorm,
        wgt::TextureUsages::TEXTURE_BINDING,
        1,
        wgt::BindingType::Texture {
            sample_type: FILTERABLE,
            view_dimension: wgt::TextureViewDimension::D2Array,
            multisampled: false,
        },
    )?;
    check!(
        matches!(
            e,
            BindingError::IncompatibleResource {
                binding: 0,
                property: "view dimension",
                ..
            }
        ),
        "{e:?}"
    );
    Ok(Outcome::Pass)
}

/// A comparison sampler for a filtering binding, a plain one for a
/// comparison binding, a linear one for a non-filtering binding.
fn sampler_of_the_wrong_kind<A: Api>(ctx: &Ctx<A>) -> TestResult {
    use wgt::SamplerBindingType as S;
    let comparison = SamplerDescriptor {
        compare: Some(wgt::CompareFunction::Less),
        ..Default::default()
    };
    let linear = SamplerDescriptor {
        mag_filter: wgt::FilterMode::Linear,
        min_filter: wgt::FilterMode::Linear,
        ..Default::default()
    };
    for (desc, ty) in [
        (&comparison, S::Filtering),
        (&SamplerDescriptor::default(), S::Comparison),
        (&linear, S::NonFiltering),
    ] {
        // SAFETY: destroyed below.
        unsafe {
            let sampler = ctx.device.create_sampler(desc)?;
            let e = group_error(
                ctx,
                wgt::BindingType::Sampler(ty),
                BindingResource::Sampler(&sampler),
            );
            ctx.device.destroy_sampler(sampler);
            let e = e?;
            check!(
                matches!(
                    e,
                    BindingError::IncompatibleResource {
                        binding: 0,
                        property: "sampler kind",
                        ..
                    }
                ),
                "{ty:?} binding: {e:?}"
            );
        }
    }
    Ok(Outcome::Pass)
}

/// The depth aspect of an Rgba8Unorm texture.
fn depth_aspect_of_a_colour_texture<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = TextureDescriptor {
        usage: wgt::TextureUsages::TEXTURE_BINDING,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 4, 4, 1, 1)
    };
    let view = TextureViewDescriptor {
        range: wgt::ImageSubresourceRange {
            aspect: wgt::TextureAspect::DepthOnly,
            ..Default::default()
        },
        ..Default::default()
    };
    // SAFETY: destroyed below; a view that is made is destroyed.
    unsafe {
        let texture = ctx.device.create_texture(&desc)?;
        let before = ctx.device.live_counts();
        let made = ctx.device.create_texture_view(&texture, &view);
        let after = ctx.device.live_counts();
        let e = match made {
            Ok(v) => {
                ctx.device.destroy_texture_view(v);
                None
            }
            Err(e) => Some(e),
        };
        ctx.device.destroy_texture(texture);
        let Some(e) = e else {
            return Err("the depth view of a colour texture was created".into());
        };
        check_eq!(
            e,
            TextureError::InvalidAspect {
                aspect: wgt::TextureAspect::DepthOnly,
                format: wgt::TextureFormat::Rgba8Unorm,
            },
            "error"
        );
        check_eq!(after, before, "live counts after the failed create");
    }
    Ok(Outcome::Pass)
}

/// A structure placed in a buffer without `STORAGE` usage (Vulkan needs
/// `ACCELERATION_STRUCTURE_STORAGE`, which keel-hal derives from it).
fn structure_placed_without_storage_usage<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx
        .caps
        .hal_features
        .contains(HalFeatures::ACCELERATION_STRUCTURE)
    {
        return skip("no ACCELERATION_STRUCTURE");
    }
    let desc = DeviceDescriptor {
        label: Some("shared checks"),
        required_hal_features: HalFeatures::ACCELERATION_STRUCTURE,
        ..Default::default()
    };
    // SAFETY: the adapter is live; the device is dropped empty.
    let open = unsafe { ctx.adapter.open(&desc) }?;
    let device = &open.device;
    let usage = wgt::BufferUsages::UNIFORM | wgt::BufferUsages::COPY_DST;
    // SAFETY: destroyed below; a structure that is made is destroyed.
    let result = unsafe {
        let buffer = device.create_buffer(&keel_hal::BufferDescriptor {
            label: Some("not storage"),
            size: 4096,
            usage,
            memory: Memory::Device,
        })?;
        let made = device.create_acceleration_structure(&AccelerationStructureDescriptor {
            label: Some("bad"),
            kind: AccelerationStructureKind::BottomLevel,
            size: 1024,
            placement: AccelerationStructurePlacement::InBuffer {
                buffer: &buffer,
                offset: 0,
            },
        });
        let result: Result<AccelerationStructureError, Failure> = match made {
            Ok(s) => {
                device.destroy_acceleration_structure(s);
                Err("a structure was placed in a buffer without STORAGE usage".into())
            }
            Err(e) => Ok(e),
        };
        device.destroy_buffer(buffer);
        result
    };
    let live = device.live_counts();
    drop(open);
    let e = result?;
    check_eq!(
        e,
        AccelerationStructureError::BufferUsage {
            role: StructureBuffer::Placement,
            usage,
            allowed: wgt::BufferUsages::STORAGE,
        },
        "placement in a buffer without STORAGE"
    );
    let text = e.to_string();
    check!(
        text.contains("COPY_DST | UNIFORM") && text.contains("needs one of STORAGE"),
        "{text}"
    );
    check_eq!(live, keel_hal::LiveCounts::default(), "live counts");
    Ok(Outcome::Pass)
}

/// Messages name what was asked and what is allowed.
fn messages_name_what_was_asked<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // A query type whose feature is off.
    let stats = QuerySetDescriptor {
        label: None,
        ty: wgt::QueryType::PipelineStatistics(
            wgt::PipelineStatisticsTypes::VERTEX_SHADER_INVOCATIONS,
        ),
        count: 1,
    };
    // On a second device opened without features (the suite's has
    // PIPELINE_STATISTICS_QUERY where the adapter does).
    // SAFETY: the adapter is live; the device is dropped empty.
    let bare = unsafe { ctx.adapter.open(&DeviceDescriptor::default()) }?;
    // SAFETY: live device; a set that is made is destroyed.
    let made = unsafe { bare.device.create_query_set(&stats) };
    let e = match made {
        Ok(set) => {
            // SAFETY: unused.
            unsafe { bare.device.destroy_query_set(set) };
            return Err("a pipeline-statistics set was created without the feature".into());
        }
        Err(e) => e,
    };
    drop(bare);
    check!(matches!(e, QuerySetError::MissingFeature { .. }), "{e:?}");
    let text = e.to_string();
    check!(
        text.contains("PIPELINE_STATISTICS_QUERY") && text.contains("enabled:"),
        "message: {text}"
    );
    check!(!text.contains("Features {"), "message: {text}");

    // A buffer range past the end.
    // SAFETY: destroyed below.
    let e = unsafe {
        let buffer = create_buffer(ctx, 256, wgt::BufferUsages::STORAGE, Memory::Device)?;
        let e = group_error(
            ctx,
            storage(true, false),
            BindingResource::Buffer(BufferBinding {
                buffer: &buffer,
                offset: 0,
                size: std::num::NonZeroU64::new(512),
            }),
        );
        ctx.device.destroy_buffer(buffer);
        e?
    };
    let text = e.to_string();
    check!(
        text.contains("0..512") && text.contains("256-byte"),
        "message: {text}"
    );

    // Mips past the texture.
    let desc = TextureDescriptor {
        usage: wgt::TextureUsages::TEXTURE_BINDING,
        ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 4, 4, 1, 2)
    };
    let view = TextureViewDescriptor {
        range: wgt::ImageSubresourceRange {
            base_mip_level: 1,
            mip_level_count: Some(3),
            ..Default::default()
        },
        ..Default::default()
    };
    // SAFETY: destroyed below; a view that is made is destroyed.
    let e = unsafe {
        let texture = ctx.device.create_texture(&desc)?;
        let made = ctx.device.create_texture_view(&texture, &view);
        let e = match made {
            Ok(v) => {
                ctx.device.destroy_texture_view(v);
                None
            }
            Err(e) => Some(e),
        };
        ctx.device.destroy_texture(texture);
        e.ok_or("a view of mips 1..4 of a 2-mip texture was created")?
    };
    check_eq!(
        e,
        TextureError::InvalidRange {
            what: "mip levels",
            base: 1,
            count: Some(3),
            total: 2,
        },
        "error"
    );
    let text = e.to_string();
    check!(
        text.contains("1..4") && text.contains("0..2"),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}

/// `end_encoding` without `begin_encoding`: the caller's mistake, typed.
fn end_encoding_without_begin_is_invalid_state<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // SAFETY: live device; the encoder is destroyed below. Ending without
    // a recording breaks the contract, but every backend checks it.
    unsafe {
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())?;
        let r = encoder.end_encoding();
        let e = match r {
            Ok(buffer) => {
                encoder.reset_all([buffer]);
                ctx.device.destroy_command_encoder(encoder);
                return Err("end_encoding without a recording succeeded".into());
            }
            Err(e) => e,
        };
        ctx.device.destroy_command_encoder(encoder);
        check!(matches!(e, DeviceError::InvalidState(_)), "{e:?}");
        check!(e.to_string().contains("begin_encoding"), "message: {e}");
    }
    Ok(Outcome::Pass)
}

/// A resource of another kind than the binding's: the error names both.
fn wrong_resource_type_names_both<A: Api>(ctx: &Ctx<A>) -> TestResult {
    // SAFETY: destroyed below; nothing is submitted.
    let e = unsafe {
        let sampler = ctx.device.create_sampler(&SamplerDescriptor::default())?;
        let e = group_error(ctx, uniform(), BindingResource::Sampler(&sampler));
        ctx.device.destroy_sampler(sampler);
        e?
    };
    check_eq!(
        e,
        BindingError::WrongType {
            binding: 0,
            expected: "a uniform buffer",
            got: "a sampler",
        },
        "a sampler bound as a uniform buffer"
    );
    let text = e.to_string();
    check!(
        text.contains("a sampler") && text.contains("a uniform buffer"),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}

/// Pipeline layouts past the limits (the shared `validate/layout.rs`): the
/// same error on every backend, naming the limit, what was asked and what
/// is allowed.
fn pipeline_layout_limits_name_the_numbers<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let max = ctx.limits().max_immediate_size;
    let ranges = [PushConstantRange {
        stages: STAGES,
        range: 0..max + 4,
    }];
    let before = ctx.device.live_counts();
    // SAFETY: live device; a layout that should not exist is destroyed at once.
    let made = unsafe {
        ctx.device
            .create_pipeline_layout(&PipelineLayoutDescriptor {
                label: Some("too many push-constant bytes"),
                bind_group_layouts: &[],
                push_constant_ranges: &ranges,
            })
    };
    let e = match made {
        Ok(layout) => {
            // SAFETY: never used.
            unsafe { ctx.device.destroy_pipeline_layout(layout) };
            return Err("a push-constant range past max_immediate_size was accepted".into());
        }
        Err(e) => e,
    };
    check_eq!(ctx.device.live_counts(), before, "live counts");
    check_eq!(
        e,
        BindingError::LimitExceeded {
            what: "push-constant range end",
            limit: "max_immediate_size",
            requested: u64::from(max) + 4,
            allowed: max.into(),
        },
        "error"
    );
    let text = e.to_string();
    check!(
        text.contains(&(max + 4).to_string())
            && text.contains(&format!("max_immediate_size = {max}")),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}

/// Query-set counts outside `1..=MAX_QUERIES`: the shared check.
fn query_set_counts<A: Api>(ctx: &Ctx<A>) -> TestResult {
    for count in [0, keel_hal::MAX_QUERIES + 1] {
        let desc = QuerySetDescriptor {
            label: None,
            ty: wgt::QueryType::Occlusion,
            count,
        };
        // SAFETY: live device; a set that should not exist is destroyed at once.
        match unsafe { ctx.device.create_query_set(&desc) } {
            Ok(set) => {
                // SAFETY: unused.
                unsafe { ctx.device.destroy_query_set(set) };
                return Err(format!("a query set of {count} was created").into());
            }
            Err(e) => {
                check_eq!(e, QuerySetError::InvalidCount(count), "count {count}");
                let text = e.to_string();
                check!(
                    text.contains(&format!("{count} is not in 1..={}", keel_hal::MAX_QUERIES)),
                    "message: {text}"
                );
            }
        }
    }
    Ok(Outcome::Pass)
}

/// A host allocation shorter than the buffer: `TooSmall` with the
/// buffer's size as `required` on every backend (Vulkan used to report its
/// driver's memory requirement, which rounds an odd size like this one up).
fn short_host_pointer_is_too_small_for_the_buffer<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let ht = ExternalHandleType::HostAllocation;
    let caps = ctx.adapter.external_buffer_capabilities(
        &BufferDescriptor {
            label: None,
            size: 4096,
            usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
            memory: Memory::Device,
        },
        ht,
    );
    if !caps.importable {
        return skip("host allocations are not importable");
    }
    let Some(a) = Side::open(ctx, HalFeatures::EXTERNAL_MEMORY_HOST)? else {
        return skip("the adapter lacks EXTERNAL_MEMORY_HOST");
    };
    let align = caps.host_pointer_alignment.max(1);
    // One aligned block of memory for a buffer of almost two (a size no
    // driver's memory requirement keeps as it is).
    let size = 4096u64.next_multiple_of(align);
    let wanted = 2 * size - 4;
    let desc = BufferDescriptor {
        label: Some("short host pointer"),
        size: wanted,
        usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
        memory: Memory::Device,
    };
    let layout = std::alloc::Layout::from_size_align(size as usize, align as usize)?;
    // SAFETY: non-zero size.
    let raw = unsafe { std::alloc::alloc_zeroed(layout) };
    let ptr = std::ptr::NonNull::new(raw).ok_or("host allocation failed")?;
    // SAFETY: the import fails before anything uses the memory; a buffer
    // that is made is destroyed before the memory is freed.
    let made = unsafe {
        let made = a
            .device
            .import_buffer(&desc, ExternalHandle::HostPointer { ptr, size });
        match made {
            Ok(buffer) => {
                a.device.destroy_buffer(buffer);
                None
            }
            Err(e) => Some(e),
        }
    };
    // SAFETY: allocated above with this layout; no buffer uses it.
    unsafe { std::alloc::dealloc(raw, layout) };
    let e = made.ok_or("a buffer was imported from a host allocation half its size")?;
    a.check_clean("short host pointer")?;
    check_eq!(
        e,
        BufferError::External(ExternalError::TooSmall {
            size,
            required: wanted,
        }),
        "error"
    );
    let text = e.to_string();
    check!(
        text.contains(&size.to_string()) && text.contains(&wanted.to_string()),
        "message: {text}"
    );
    Ok(Outcome::Pass)
}

/// `import_texture` ignores `desc.memory` on every backend (one rule,
/// `validate::external::imported_texture_desc`): a texture exported as an
/// opaque fd imports with `Memory::Upload` in the description. Noop used to refuse it (`UnsupportedMemory`)
/// where Vulkan imported it.
fn imported_texture_ignores_the_callers_memory<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let ht = ExternalHandleType::OpaqueFd;
    let desc = TextureDescriptor {
        label: Some("exported"),
        size: wgt::Extent3d {
            width: 16,
            height: 16,
            depth_or_array_layers: 1,
        },
        usage: wgt::TextureUsages::COPY_SRC | wgt::TextureUsages::COPY_DST,
        memory: Memory::External(ExternalMemory::export(ht)),
        ..Default::default()
    };
    let caps = ctx.adapter.external_texture_capabilities(&desc, ht)?;
    if !(caps.exportable && caps.importable) {
        return skip(format!(
            "opaque-fd textures are not exportable and importable: {caps:?}"
        ));
    }
    let Some(a) = Side::open(ctx, HalFeatures::EXTERNAL_MEMORY_FD)? else {
        return skip("the adapter lacks EXTERNAL_MEMORY_FD");
    };
    let upload = TextureDescriptor {
        label: Some("imported with Memory::Upload"),
        memory: Memory::Upload,
        ..desc.clone()
    };
    // SAFETY: the imported texture is the exported one's memory, with its
    // description; both are destroyed before the device.
    let imported = unsafe {
        let exported = a.device.create_texture(&desc)?;
        let result = a
            .device
            .export_texture_memory(&exported, ht)
            .map_err(Failure::from)
            .and_then(|memory| {
                let handle = ExternalHandle::OpaqueFd(memory.fd);
                let texture = a.device.import_texture(&upload, handle)?;
                a.device.destroy_texture(texture);
                Ok(())
            });
        a.device.destroy_texture(exported);
        result
    };
    check_eq!(
        imported.map_err(|e| e.to_string()),
        Ok(()),
        "import of a texture with Memory::Upload in its description"
    );
    a.check_clean("import with Memory::Upload")?;
    Ok(Outcome::Pass)
}

/// A texture imported from a host allocation is refused with one error on
/// every backend, before its description is checked (here a zero extent,
/// which would otherwise be `ZeroExtent`): noop checked the handle first
/// and Vulkan the description first.
fn texture_from_a_host_pointer_is_refused_first<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let mut host = vec![0u8; 8192];
    let handle = ExternalHandle::HostPointer {
        ptr: std::ptr::NonNull::new(host.as_mut_ptr()).ok_or("null")?,
        size: host.len() as u64,
    };
    let desc = TextureDescriptor {
        size: wgt::Extent3d {
            width: 0,
            height: 16,
            depth_or_array_layers: 1,
        },
        usage: wgt::TextureUsages::COPY_SRC,
        ..Default::default()
    };
    let before = ctx.device.live_counts();
    // SAFETY: live device; the allocation outlives the call, which fails.
    let result = unsafe { ctx.device.import_texture(&desc, handle) };
    check_eq!(ctx.device.live_counts(), before, "live counts");
    let Err(err) = result else {
        return Err("a texture was imported from a host allocation".into());
    };
    check_eq!(
        err,
        TextureError::External(ExternalError::Unsupported {
            handle: ExternalHandleType::HostAllocation.name(),
            reason: "textures cannot be imported from host allocations",
        }),
        "host-pointer texture"
    );
    drop(host);
    Ok(Outcome::Pass)
}
