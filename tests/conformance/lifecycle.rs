//! Object lifecycles and device opening: counters, missing features and
//! capabilities, limits, foreign resources on the dyn path, and the noop
//! backend's memory budget.

use std::any::Any;

use keel_hal::wgt;
use keel_hal::{
    Adapter, Api, Backend, BufferDescriptor, BufferError, BufferUses, CommandEncoder,
    CommandEncoderDescriptor, Device, DeviceDescriptor, DeviceError, HalFeatures,
    InstanceDescriptor, LiveCounts, MapError, Memory, OpenError, QuerySetDescriptor, Queue,
    SamplerDescriptor, TextureDescriptor, TextureError, TextureViewDescriptor,
};

use crate::configs::{other_backend, OtherBackend};
use crate::harness::{skip, Ctx, Failure, Outcome, TestResult};
use crate::helpers::{
    buffer_barrier, compare, pattern, read_mapped, readback_buffer, submit_with, texture_desc,
    upload_buffer,
};

conformance_tests!(
    counters_return_to_zero,
    open_with_missing_features,
    open_with_missing_capabilities,
    open_with_limit_above_the_adapter,
    requested_limits_are_enforced,
    foreign_resources_on_the_dyn_path,
    noop_memory_budget,
);

/// Opens acceleration-structure devices (every hal feature alone): alone
/// where the validation layer cannot take such devices made on several
/// threads at once (`harness::ray_tracing_needs_isolation`).
mod with_structures {
    use super::every_advertised_feature_opens_a_device;
    ray_tracing_conformance_tests!(every_advertised_feature_opens_a_device);
}

fn counters_return_to_zero<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let desc = DeviceDescriptor {
        required_features: ctx.features,
        ..Default::default()
    };
    // SAFETY: a fresh device on the live adapter; every object is created
    // from it, never submitted, and destroyed before it is dropped.
    unsafe {
        let open = ctx.adapter.open(&desc)?;
        let device = &open.device;
        check_eq!(
            device.live_counts(),
            LiveCounts::default(),
            "a new device's counts"
        );

        let buffer = device.create_buffer(&BufferDescriptor {
            label: Some("one buffer"),
            size: 1024,
            usage: wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC,
            memory: Memory::Upload,
        })?;
        let texture = device.create_texture(&TextureDescriptor {
            usage: wgt::TextureUsages::TEXTURE_BINDING | wgt::TextureUsages::COPY_DST,
            ..texture_desc(wgt::TextureFormat::Rgba8Unorm, 16, 16, 1, 1)
        })?;
        let view = device.create_texture_view(&texture, &TextureViewDescriptor::default())?;
        let sampler = device.create_sampler(&SamplerDescriptor::default())?;
        let set = device.create_query_set(&QuerySetDescriptor {
            label: Some("one set"),
            ty: wgt::QueryType::Occlusion,
            count: 2,
        })?;
        let fence = device.create_fence()?;
        let encoder = device.create_command_encoder(&CommandEncoderDescriptor::default())?;

        let live = device.live_counts();
        let ones = LiveCounts {
            buffers: 1,
            textures: 1,
            texture_views: 1,
            samplers: 1,
            query_sets: 1,
            fences: 1,
            command_encoders: 1,
            // One per buffer or texture (the documented meaning).
            memory_allocations: 2,
            // None made here: bindings, pipelines and external semaphores count in
            // their own tests.
            ..LiveCounts::default()
        };

        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        device.destroy_query_set(set);
        device.destroy_sampler(sampler);
        device.destroy_texture_view(view);
        device.destroy_texture(texture);
        device.destroy_buffer(buffer);
        let after = device.live_counts();

        check_eq!(live, ones, "counts with one object of each kind alive");
        check_eq!(
            after,
            LiveCounts::default(),
            "counts after destroying them all"
        );
    }
    Ok(Outcome::Pass)
}

/// Opens a device that must fail; `check` judges the error.
fn expect_open_error<A: Api>(
    ctx: &Ctx<A>,
    desc: &DeviceDescriptor,
    check: impl FnOnce(&OpenError) -> bool,
    expected: &str,
) -> Result<(), Failure> {
    // SAFETY: the adapter is live; a device that should not exist is dropped empty.
    match unsafe { ctx.adapter.open(desc) } {
        Ok(_) => Err(format!("{desc:?}: a device opened; expected {expected}").into()),
        Err(e) => {
            check!(check(&e), "{desc:?}: expected {expected}, got {e:?}");
            Ok(())
        }
    }
}

/// Every feature and capability the adapter advertises opens a device,
/// each alone and all together, and the device closes cleanly (the
/// harness then checks that validation reported nothing).
fn every_advertised_feature_opens_a_device<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let (features, hal) = (ctx.caps.features, ctx.caps.hal_features);
    let alone = features
        .iter()
        .map(|f| (f, keel_hal::HalFeatures::empty()))
        .chain(hal.iter().map(|h| (wgt::Features::empty(), h)));
    for (required_features, required_hal_features) in alone.chain([(features, hal)]) {
        let desc = DeviceDescriptor {
            label: Some("every advertised feature"),
            required_features,
            required_hal_features,
            allow_no_shader_execution: true,
            ..Default::default()
        };
        // SAFETY: the adapter is live; the device is dropped right away.
        let open = unsafe { ctx.adapter.open(&desc) };
        if let Err(e) = open {
            return Err(format!("{required_features:?} / {required_hal_features:?}: {e}").into());
        }
    }
    ctx.note(format!(
        "{} features and {} capabilities, each alone and all together",
        features.iter().count(),
        hal.iter().count()
    ));
    Ok(Outcome::Pass)
}

fn open_with_missing_features<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let have = ctx.caps.features;
    let Some(missing) = wgt::Features::all().iter().find(|f| !have.contains(*f)) else {
        return skip("the adapter has every feature");
    };
    // Asked together with features it has: only the missing one is named.
    let desc = DeviceDescriptor {
        required_features: missing | ctx.features,
        ..Default::default()
    };
    expect_open_error(
        ctx,
        &desc,
        |e| *e == OpenError::MissingFeatures(missing),
        &format!("MissingFeatures({missing:?})"),
    )?;
    Ok(Outcome::Pass)
}

fn open_with_missing_capabilities<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let have = ctx.caps.hal_features;
    let Some(missing) = HalFeatures::all().iter().find(|f| !have.contains(*f)) else {
        return skip("the adapter has every keel-hal capability");
    };
    let desc = DeviceDescriptor {
        required_hal_features: missing | have,
        ..Default::default()
    };
    expect_open_error(
        ctx,
        &desc,
        |e| *e == OpenError::MissingCapabilities(missing),
        &format!("MissingCapabilities({missing:?})"),
    )?;
    Ok(Outcome::Pass)
}

fn open_with_limit_above_the_adapter<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let allowed = ctx.limits().max_texture_dimension_2d;
    let mut limits = ctx.limits().clone();
    limits.max_texture_dimension_2d = allowed + 1;
    let desc = DeviceDescriptor {
        required_limits: Some(limits),
        ..Default::default()
    };
    expect_open_error(
        ctx,
        &desc,
        |e| {
            *e == OpenError::LimitExceeded {
                name: "max_texture_dimension_2d",
                requested: allowed as u64 + 1,
                allowed: allowed as u64,
            }
        },
        "LimitExceeded for max_texture_dimension_2d",
    )?;
    Ok(Outcome::Pass)
}

fn requested_limits_are_enforced<A: Api>(ctx: &Ctx<A>) -> TestResult {
    let mut limits = ctx.limits().clone();
    limits.max_texture_dimension_2d = 256;
    limits.max_buffer_size = 1 << 16;
    let desc = DeviceDescriptor {
        required_limits: Some(limits),
        ..Default::default()
    };
    // SAFETY: a fresh device on the live adapter; what it creates is destroyed at once.
    unsafe {
        let open = ctx.adapter.open(&desc)?;
        let device = &open.device;
        let wide = texture_desc(wgt::TextureFormat::Rgba8Unorm, 257, 4, 1, 1);
        match device.create_texture(&wide) {
            Ok(t) => {
                device.destroy_texture(t);
                return Err("a 257-wide texture on a device limited to 256 was created".into());
            }
            Err(e) => check_eq!(
                e,
                TextureError::TooLarge {
                    extent: wide.size,
                    limit: "max_texture_dimension_2d",
                    max: 256
                },
                "257-wide texture, limit 256"
            ),
        }
        let big = BufferDescriptor {
            label: None,
            size: (1 << 16) + 4,
            usage: wgt::BufferUsages::COPY_DST,
            memory: Memory::Device,
        };
        match device.create_buffer(&big) {
            Ok(b) => {
                device.destroy_buffer(b);
                return Err("a buffer above the requested max_buffer_size was created".into());
            }
            Err(e) => check_eq!(
                e,
                BufferError::TooLarge {
                    size: (1 << 16) + 4,
                    max: 1 << 16
                },
                "buffer above the requested limit"
            ),
        }
        // At the limit both are fine.
        let texture =
            device.create_texture(&texture_desc(wgt::TextureFormat::Rgba8Unorm, 256, 4, 1, 1))?;
        device.destroy_texture(texture);
        let buffer = device.create_buffer(&BufferDescriptor {
            size: 1 << 16,
            ..big
        })?;
        device.destroy_buffer(buffer);
        check_eq!(
            device.live_counts(),
            LiveCounts::default(),
            "counts at the end"
        );
    }
    Ok(Outcome::Pass)
}

fn foreign_resources_on_the_dyn_path<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if !ctx.is_dyn {
        return skip("resources of two backends meet only on the dyn path");
    }
    let Some(other) = other_backend(ctx.backend)? else {
        return skip("no second backend here (Vulkan is off or missing)");
    };
    // SAFETY: every object is destroyed by the device that made it, after
    // the waits; foreign objects are only handed to the dyn path, which
    // checks them.
    unsafe {
        let foreign = other.device.create_buffer(&BufferDescriptor {
            label: Some("foreign"),
            size: 256,
            usage: wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC,
            memory: Memory::Upload,
        })?;
        let foreign_fence = other.device.create_fence()?;
        // On the dyn path `A::Buffer` is `Box<dyn DynBuffer>`: the same type.
        let foreign = *(Box::new(foreign) as Box<dyn Any>)
            .downcast::<A::Buffer>()
            .map_err(|_| "a dyn configuration whose buffers are not Box<dyn DynBuffer>")?;
        let foreign_fence = *(Box::new(foreign_fence) as Box<dyn Any>)
            .downcast::<A::Fence>()
            .map_err(|_| "a dyn configuration whose fences are not Box<dyn DynFence>")?;

        let result = foreign_checks(ctx, &foreign, &foreign_fence);

        let foreign = *(Box::new(foreign) as Box<dyn Any>)
            .downcast::<<keel_hal::DynApi as Api>::Buffer>()
            .map_err(|_| "the foreign buffer changed type")?;
        let foreign_fence = *(Box::new(foreign_fence) as Box<dyn Any>)
            .downcast::<<keel_hal::DynApi as Api>::Fence>()
            .map_err(|_| "the foreign fence changed type")?;
        other.device.destroy_buffer(foreign);
        other.device.destroy_fence(foreign_fence);
        result?;
        finish_other(other)?;
    }
    Ok(Outcome::Pass)
}

/// What ctx's device must say about another backend's buffer and fence.
///
/// # Safety
/// `ctx` is live; the foreign objects are live.
unsafe fn foreign_checks<A: Api>(
    ctx: &Ctx<A>,
    foreign: &A::Buffer,
    foreign_fence: &A::Fence,
) -> Result<(), Failure> {
    let foreign_err = DeviceError::ForeignResource;
    // SAFETY: forwarded contract; the dyn path checks every foreign object.
    unsafe {
        let mapped = ctx.device.map_buffer(foreign).map(|m| m.size);
        check_eq!(
            mapped,
            Err(MapError::Device(foreign_err.clone())),
            "map_buffer of a foreign buffer"
        );
        let value = ctx.device.get_fence_value(foreign_fence);
        check_eq!(
            value,
            Err(foreign_err.clone()),
            "get_fence_value of a foreign fence"
        );

        let source = pattern(256, 80);
        let upload = upload_buffer(ctx, &source)?;
        let readback = readback_buffer(ctx, 256)?;
        let mut encoder = ctx
            .device
            .create_command_encoder(&CommandEncoderDescriptor::default())?;
        let result = (|| -> Result<(), Failure> {
            encoder.begin_encoding(Some("foreign copy"))?;
            encoder.transition_buffers(&[buffer_barrier(
                &readback,
                BufferUses::empty(),
                BufferUses::COPY_DST,
            )]);
            encoder.copy_buffer_to_buffer(
                foreign,
                &readback,
                &[keel_hal::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: 256,
                }],
            );
            match encoder.end_encoding() {
                Ok(commands) => {
                    encoder.reset_all([commands]);
                    return Err("end_encoding after a copy from a foreign buffer succeeded".into());
                }
                Err(e) => check_eq!(e, foreign_err.clone(), "end_encoding after a foreign copy"),
            }
            // The encoder is usable again, and the skipped copy wrote nothing.
            submit_with(ctx, &mut encoder, |enc| {
                enc.transition_buffers(&[
                    buffer_barrier(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                    buffer_barrier(&readback, BufferUses::empty(), BufferUses::COPY_DST),
                ]);
                enc.copy_buffer_to_buffer(
                    &upload,
                    &readback,
                    &[keel_hal::BufferCopy {
                        src_offset: 0,
                        dst_offset: 0,
                        size: 256,
                    }],
                );
                enc.transition_buffers(&[buffer_barrier(
                    &readback,
                    BufferUses::COPY_DST,
                    BufferUses::MAP_READ,
                )]);
            })?;
            compare(
                &read_mapped(ctx, &readback)?,
                &source,
                "a copy recorded after the foreign one",
            )?;

            // A foreign fence is refused at submit.
            encoder.begin_encoding(Some("foreign fence"))?;
            let commands = encoder.end_encoding()?;
            let submitted = ctx.queue.submit(&[&commands], &[], foreign_fence, 1);
            encoder.reset_all([commands]);
            check_eq!(
                submitted,
                Err(foreign_err.clone()),
                "submit signalling a foreign fence"
            );
            Ok(())
        })();
        ctx.device.destroy_command_encoder(encoder);
        ctx.device.destroy_buffer(upload);
        ctx.device.destroy_buffer(readback);
        result
    }
}

/// Checks the other backend's device is empty and its instance saw no validation error.
fn finish_other(other: OtherBackend) -> Result<(), Failure> {
    let OtherBackend {
        device,
        queue,
        instance,
        errors,
    } = other;
    let counts = device.live_counts();
    drop(queue);
    drop(device);
    drop(instance);
    check_eq!(
        counts,
        LiveCounts::default(),
        "the other backend's live objects"
    );
    check_eq!(errors(), 0, "the other backend's validation errors");
    Ok(())
}

fn noop_memory_budget<A: Api>(ctx: &Ctx<A>) -> TestResult {
    if ctx.backend != Backend::Noop {
        return skip("the memory budget is a noop-backend setting");
    }
    let desc = InstanceDescriptor {
        noop_memory_budget: Some(1 << 20),
        ..ctx.instance_desc.clone()
    };
    let (_instance, exposed) = ctx.new_instance(&desc)?;
    // SAFETY: a fresh device on the new instance's adapter; what it creates
    // is never submitted and is destroyed before the device is dropped.
    unsafe {
        let open = exposed.adapter.open(&DeviceDescriptor::default())?;
        let device = &open.device;
        let buffer = |size: u64| {
            device.create_buffer(&BufferDescriptor {
                label: Some("budget"),
                size,
                usage: wgt::BufferUsages::COPY_DST,
                memory: Memory::Device,
            })
        };
        let oom = BufferError::Device(DeviceError::OutOfMemory);
        match buffer(2 << 20) {
            Ok(b) => {
                device.destroy_buffer(b);
                return Err("a 2 MiB buffer fit a 1 MiB budget".into());
            }
            Err(e) => check_eq!(e, oom.clone(), "2 MiB buffer, 1 MiB budget"),
        }
        check_eq!(
            device.live_counts(),
            LiveCounts::default(),
            "counts after the failure"
        );

        let half = buffer(512 << 10)?;
        let over = buffer(768 << 10);
        let texture = device.create_texture(&texture_desc(
            wgt::TextureFormat::Rgba8Unorm,
            512,
            512,
            1,
            1,
        ));
        device.destroy_buffer(half);
        let after_free = buffer(768 << 10);
        let result = (|| -> Result<(), Failure> {
            match &over {
                Ok(_) => return Err("768 KiB fit next to 512 KiB in a 1 MiB budget".into()),
                Err(e) => check_eq!(*e, oom.clone(), "768 KiB next to 512 KiB"),
            }
            match &texture {
                Ok(_) => return Err("a 1 MiB texture fit next to 512 KiB in a 1 MiB budget".into()),
                Err(e) => check_eq!(
                    *e,
                    TextureError::Device(DeviceError::OutOfMemory),
                    "1 MiB texture next to 512 KiB"
                ),
            }
            check!(
                after_free.is_ok(),
                "768 KiB after freeing 512 KiB: {:?}",
                after_free.as_ref().err()
            );
            Ok(())
        })();
        for b in [over, after_free].into_iter().flatten() {
            device.destroy_buffer(b);
        }
        if let Ok(t) = texture {
            device.destroy_texture(t);
        }
        result?;
        check_eq!(
            device.live_counts(),
            LiveCounts::default(),
            "counts at the end"
        );
    }
    Ok(Outcome::Pass)
}
