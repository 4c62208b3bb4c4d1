//! wgpu `tests/tests/wgpu-gpu/samplers.rs` (its two sampler-creation tests;
//! the bind group ones are not ported).

use crate::wgpu_gpu::harness::*;

// Likely to exhaust sampler caches on some devices.
const PROBABLY_PROBLEMATIC_SAMPLER_COUNT: u32 = 8 * 1024;

fn descriptor(label: &'static str, filter: bool) -> wgpu::SamplerDescriptor<'static> {
    let (f, m) = if filter {
        (wgpu::FilterMode::Linear, wgpu::MipmapFilterMode::Linear)
    } else {
        (wgpu::FilterMode::Nearest, wgpu::MipmapFilterMode::Nearest)
    };
    wgpu::SamplerDescriptor {
        label: Some(label),
        address_mode_u: wgpu::AddressMode::ClampToEdge,
        address_mode_v: wgpu::AddressMode::ClampToEdge,
        address_mode_w: wgpu::AddressMode::ClampToEdge,
        mag_filter: f,
        min_filter: f,
        mipmap_filter: m,
        lod_min_clamp: 0.0,
        lod_max_clamp: 100.0,
        compare: None,
        anisotropy_clamp: 1,
        border_color: None,
    }
}

/// wgpu_test's `did_oom`: whether `f` caused an out-of-memory error.
fn did_oom<T>(device: &wgpu::Device, f: impl FnOnce() -> T) -> (bool, T) {
    let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let result = f();
    (pollster::block_on(scope.pop()).is_some(), result)
}

// Many samplers of the same two descriptors: the backend's deduplication
// keeps that harmless.
gpu_test!(sampler_deduplication, TestParameters::default(), |ctx| {
    let desc1 = descriptor("sampler1", false);
    let desc2 = descriptor("sampler2", true);
    let samplers = (0..PROBABLY_PROBLEMATIC_SAMPLER_COUNT)
        .map(|i| {
            let desc = if i % 2 == 0 { &desc1 } else { &desc2 };
            valid(&ctx.device, || ctx.device.create_sampler(desc))
        })
        .collect::<Vec<_>>();
    drop(samplers);
});

// As many samplers as can be made until the first failure (the error
// machinery catches it); all dropped and the device polled, the caches are
// empty: as many again can be made.
gpu_test!(sampler_creation_failure, TestParameters::default(), |ctx| {
    let desc = descriptor("sampler1", false);
    let mut sampler_storage = Vec::with_capacity(PROBABLY_PROBLEMATIC_SAMPLER_COUNT as usize);
    for i in 0..PROBABLY_PROBLEMATIC_SAMPLER_COUNT {
        let (failed, sampler) = did_oom(&ctx.device, || {
            ctx.device.create_sampler(&wgpu::SamplerDescriptor {
                lod_min_clamp: i as f32 * 0.01,
                ..desc.clone()
            })
        });
        if failed {
            break;
        }
        sampler_storage.push(sampler);
    }
    let failed_count = sampler_storage.len();
    sampler_storage.clear();
    ctx.device
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    for i in 0..failed_count {
        valid(&ctx.device, || {
            let sampler = ctx.device.create_sampler(&wgpu::SamplerDescriptor {
                lod_min_clamp: i as f32 * 0.01,
                // Other cache slots than the first run's.
                lod_max_clamp: 200.0,
                ..desc.clone()
            });
            sampler_storage.push(sampler);
        });
    }
});
