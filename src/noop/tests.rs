//! End-to-end checks of the noop backend through the generic traits: the
//! backend's own smoke tests. The conformance suite in `tests/` covers the
//! contract on every backend.

use super::*;
use crate::{
    Adapter as _, BufferCopy, BufferDescriptor, BufferError, BufferTextureCopy,
    CommandEncoder as _, CommandEncoderDescriptor, Device as _, DeviceDescriptor, DeviceError,
    Instance as _, InstanceDescriptor, MapError, Memory, QuerySetDescriptor, QuerySetError,
    Queue as _, SamplerDescriptor, SamplerError, TextureCopy, TextureCopyBase, TextureDescriptor,
    TextureError, TextureUses, TextureViewDescriptor,
};

fn open(budget: Option<u64>, features: wgt::Features) -> (Device, Queue) {
    let desc = InstanceDescriptor {
        noop_memory_budget: budget,
        ..Default::default()
    };
    // SAFETY: the noop backend loads nothing; one thread opens the adapter.
    unsafe {
        let instance = Instance::init(&desc).unwrap();
        let adapter = instance.enumerate_adapters().remove(0).adapter;
        let open = adapter
            .open(&DeviceDescriptor {
                required_features: features,
                ..Default::default()
            })
            .unwrap();
        (open.device, open.queue)
    }
}

fn buffer(device: &Device, size: u64, memory: Memory) -> Buffer {
    let desc = BufferDescriptor {
        size,
        memory,
        ..Default::default()
    };
    // SAFETY: live device.
    unsafe { device.create_buffer(&desc) }.unwrap()
}

/// Records what `record` asks for, submits it with fence value 1 and waits.
fn run(device: &Device, queue: &Queue, record: impl FnOnce(&mut CommandEncoder)) {
    // SAFETY: every resource used stays alive until the fence is waited on.
    unsafe {
        let mut encoder = device
            .create_command_encoder(&CommandEncoderDescriptor::default())
            .unwrap();
        let fence = device.create_fence().unwrap();
        encoder.begin_encoding(None).unwrap();
        record(&mut encoder);
        let commands = encoder.end_encoding().unwrap();
        queue.submit(&[&commands], &[], &fence, 1).unwrap();
        assert!(device
            .wait(&fence, 1, Some(std::time::Duration::ZERO))
            .unwrap());
        encoder.reset_all([commands]);
        device.destroy_fence(fence);
        device.destroy_command_encoder(encoder);
    }
}

fn bytes_of(buffer: &Buffer) -> &[u8] {
    // SAFETY: no submission is pending; the buffer outlives the slice.
    unsafe { std::slice::from_raw_parts(buffer.bytes.as_ptr().as_ptr(), buffer.size() as usize) }
}

#[test]
fn texture_round_trip_through_padded_rows() {
    let (device, queue) = open(None, wgt::Features::empty());
    let desc = TextureDescriptor {
        size: wgt::Extent3d {
            width: 4,
            height: 4,
            depth_or_array_layers: 2,
        },
        mip_level_count: 2,
        ..Default::default()
    };
    // SAFETY: live device; everything is destroyed below.
    unsafe {
        let a = device.create_texture(&desc).unwrap();
        let b = device.create_texture(&desc).unwrap();
        let src = buffer(&device, 512, Memory::Upload);
        let dst = buffer(&device, 64, Memory::Readback);
        let map = device.map_buffer(&src).unwrap();
        assert_eq!(device.map_buffer(&src).unwrap().ptr, map.ptr);
        for i in 0..512 {
            *map.ptr.as_ptr().add(i) = i as u8;
        }
        // 2x2 texels of mip 1, layer 1, rows 256 bytes apart in the buffer.
        let base = TextureCopyBase {
            mip_level: 1,
            array_layer: 1,
            ..Default::default()
        };
        let size = wgt::Extent3d {
            width: 2,
            height: 2,
            depth_or_array_layers: 1,
        };
        let upload = BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(256),
                rows_per_image: None,
            },
            texture_base: base,
            size,
        };
        let download = BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout::default(),
            ..upload
        };
        run(&device, &queue, |e| {
            e.copy_buffer_to_texture(&src, &a, &[upload]);
            e.copy_texture_to_texture(
                &a,
                TextureUses::COPY_SRC,
                &b,
                &[TextureCopy {
                    src_base: base,
                    dst_base: base,
                    size,
                }],
            );
            e.copy_texture_to_buffer(&b, TextureUses::COPY_SRC, &dst, &[download]);
        });
        let out = bytes_of(&dst);
        let expected: Vec<u8> = (0..8).chain(256..264).map(|i| i as u8).collect();
        assert_eq!(&out[..16], &expected[..]);
        assert!(out[16..].iter().all(|&b| b == 0));

        // A region outside the buffer is skipped: nothing changes, no panic.
        run(&device, &queue, |e| {
            e.copy_buffer_to_buffer(
                &src,
                &dst,
                &[BufferCopy {
                    src_offset: 0,
                    dst_offset: 60,
                    size: 8,
                }],
            );
            e.clear_buffer(&dst, 0..128);
        });
        assert_eq!(&bytes_of(&dst)[..16], &expected[..]);
        run(&device, &queue, |e| e.clear_buffer(&dst, 0..8));
        assert!(bytes_of(&dst)[..8].iter().all(|&b| b == 0));

        for t in [a, b] {
            device.destroy_texture(t);
        }
        device.destroy_buffer(src);
        device.destroy_buffer(dst);
    }
    assert_eq!(device.live_counts(), crate::LiveCounts::default());
}

#[test]
fn budget_and_counters() {
    let (device, _queue) = open(Some(1024), wgt::Features::empty());
    // SAFETY: live device.
    unsafe {
        let big = buffer(&device, 1000, Memory::Device);
        let desc = BufferDescriptor {
            size: 100,
            ..Default::default()
        };
        let oom = BufferError::Device(DeviceError::OutOfMemory);
        assert_eq!(device.create_buffer(&desc).unwrap_err(), oom);
        let counts = device.live_counts();
        assert_eq!((counts.buffers, counts.memory_allocations), (1, 1));
        assert_eq!(
            device
                .create_texture(&TextureDescriptor {
                    size: wgt::Extent3d {
                        width: 16,
                        height: 16,
                        depth_or_array_layers: 1,
                    },
                    ..Default::default()
                })
                .unwrap_err(),
            TextureError::Device(DeviceError::OutOfMemory)
        );
        device.destroy_buffer(big);
        let small = device.create_buffer(&desc).unwrap();
        device.destroy_buffer(small);
    }
    assert_eq!(device.live_counts(), crate::LiveCounts::default());
}

#[test]
fn queries_write_and_copy() {
    let (device, queue) = open(None, wgt::Features::TIMESTAMP_QUERY);
    let desc = |ty| QuerySetDescriptor {
        label: None,
        ty,
        count: 3,
    };
    // SAFETY: live device; everything is destroyed below.
    unsafe {
        let stamps = device
            .create_query_set(&desc(wgt::QueryType::Timestamp))
            .unwrap();
        let occlusion = device
            .create_query_set(&desc(wgt::QueryType::Occlusion))
            .unwrap();
        let out = buffer(&device, 64, Memory::Readback);
        run(&device, &queue, |e| {
            e.reset_queries(&stamps, 0..3);
            e.reset_queries(&occlusion, 0..3);
            for i in 0..3 {
                e.write_timestamp(&stamps, i);
            }
            e.begin_query(&occlusion, 1);
            e.end_query(&occlusion, 1);
            e.clear_buffer(&out, 0..64);
            e.copy_query_results(&stamps, 0..3, &out, 0, 16);
            e.copy_query_results(&occlusion, 1..2, &out, 8, 8);
        });
        let read = |at: usize| u64::from_ne_bytes(bytes_of(&out)[at..at + 8].try_into().unwrap());
        assert!(0 < read(0) && read(0) < read(16) && read(16) < read(32));
        assert_eq!(read(8), 0);
        device.destroy_query_set(stamps);
        device.destroy_query_set(occlusion);
        device.destroy_buffer(out);
    }
}

#[test]
fn cheap_checks_return_typed_errors() {
    let (device, _queue) = open(None, wgt::Features::empty());
    // SAFETY: live device; successful creations are destroyed.
    unsafe {
        let zero = BufferDescriptor::default();
        assert_eq!(
            device.create_buffer(&zero).unwrap_err(),
            BufferError::ZeroSize
        );
        let map_device = BufferDescriptor {
            size: 4,
            usage: wgt::BufferUsages::MAP_READ,
            ..Default::default()
        };
        assert!(matches!(
            device.create_buffer(&map_device),
            Err(BufferError::MapUsageNeedsHostMemory { .. })
        ));
        let gpu_only = buffer(&device, 4, Memory::Device);
        assert_eq!(
            device.map_buffer(&gpu_only).unwrap_err(),
            MapError::NotMappable(Memory::Device)
        );
        device.destroy_buffer(gpu_only);

        // Multisampled storage textures are not supported (as on Vulkan).
        let msaa = TextureDescriptor {
            sample_count: 4,
            usage: wgt::TextureUsages::STORAGE_BINDING,
            ..Default::default()
        };
        assert_eq!(
            device.create_texture(&msaa).unwrap_err(),
            TextureError::InvalidSampleCount {
                count: 4,
                reason: "a multisampled texture cannot have STORAGE_BINDING usage",
            }
        );
        let mips = TextureDescriptor {
            mip_level_count: 2,
            ..Default::default()
        };
        assert!(matches!(
            device.create_texture(&mips),
            Err(TextureError::InvalidMipCount {
                requested: 2,
                max: 1
            })
        ));
        // A texture no view can serve (no binding or attachment usage).
        let copy_only = device
            .create_texture(&TextureDescriptor::default())
            .unwrap();
        assert!(matches!(
            device.create_texture_view(&copy_only, &TextureViewDescriptor::default()),
            Err(TextureError::IncompatibleView { asked, allowed })
                if asked.contains("usage none") && allowed.contains("TEXTURE_BINDING")
        ));
        device.destroy_texture(copy_only);
        let texture = device
            .create_texture(&TextureDescriptor {
                usage: wgt::TextureUsages::TEXTURE_BINDING,
                ..Default::default()
            })
            .unwrap();
        let mut view = TextureViewDescriptor::default();
        view.range.base_mip_level = 1;
        assert_eq!(
            device.create_texture_view(&texture, &view).unwrap_err(),
            TextureError::InvalidRange {
                what: "mip levels",
                base: 1,
                count: None,
                total: 1,
            }
        );
        device.destroy_texture(texture);

        let aniso = SamplerDescriptor {
            anisotropy_clamp: 4,
            ..Default::default()
        };
        assert_eq!(
            device.create_sampler(&aniso).unwrap_err(),
            SamplerError::InvalidAnisotropy(4)
        );
        let lod = SamplerDescriptor {
            lod_clamp: 2.0..1.0,
            ..Default::default()
        };
        assert_eq!(
            device.create_sampler(&lod).unwrap_err(),
            SamplerError::InvalidLodClamp {
                start_bits: 2.0f32.to_bits(),
                end_bits: 1.0f32.to_bits(),
            }
        );

        let stamps = QuerySetDescriptor {
            label: None,
            ty: wgt::QueryType::Timestamp,
            count: 1,
        };
        assert_eq!(
            device.create_query_set(&stamps).unwrap_err(),
            QuerySetError::MissingFeature {
                feature: wgt::Features::TIMESTAMP_QUERY,
                enabled: wgt::Features::empty(),
            }
        );
    }
    assert_eq!(device.live_counts(), crate::LiveCounts::default());
}
