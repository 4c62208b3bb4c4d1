//! `Device::generate_allocator_report` lists every live buffer and texture
//! by its label, in blocks, on keel-wgpu (noop, Vulkan) as on stock wgpu;
//! dropped and destroyed resources leave the list.

mod common;

use common::{each_backend, Gpu};

fn buffer(gpu: &Gpu, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage,
        mapped_at_creation: false,
    })
}

/// The report, checked for shape: each block's allocations lie inside it
/// without overlap, and the blocks cover every allocation.
fn report(gpu: &Gpu) -> wgpu::AllocatorReport {
    let report = gpu
        .device
        .generate_allocator_report()
        .unwrap_or_else(|| panic!("{}: no allocator report", gpu.name));
    let mut covered = 0;
    for block in &report.blocks {
        assert_eq!(
            block.allocations.start, covered,
            "{}: blocks in order",
            gpu.name
        );
        covered = block.allocations.end;
        // (Stock's are not in offset order within a block; keel-wgpu's are.)
        let mut inside: Vec<_> = report.allocations[block.allocations.clone()]
            .iter()
            .collect();
        inside.sort_by_key(|a| a.offset);
        let mut end = 0;
        for a in inside {
            assert!(
                a.offset >= end,
                "{}: {} overlaps its neighbour",
                gpu.name,
                a.name
            );
            end = a.offset + a.size;
            assert!(
                end <= block.size,
                "{}: {} outside its block",
                gpu.name,
                a.name
            );
        }
    }
    assert_eq!(
        covered,
        report.allocations.len(),
        "{}: every allocation in a block",
        gpu.name
    );
    report
}

fn find<'r>(
    report: &'r wgpu::AllocatorReport,
    name: &str,
) -> Option<&'r wgpu::wgt::AllocationReport> {
    report.allocations.iter().find(|a| a.name == name)
}

#[test]
fn allocator_report_lists_live_resources_by_block() {
    each_backend(wgpu::Features::empty(), |gpu| {
        let big = buffer(gpu, "big storage", 1 << 20, wgpu::BufferUsages::STORAGE);
        let small = buffer(gpu, "small uniform", 256, wgpu::BufferUsages::UNIFORM);
        let readback = buffer(
            gpu,
            "readback",
            4096,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("colour target"),
            size: wgpu::Extent3d {
                width: 64,
                height: 64,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let first = report(gpu);
        for (name, at_least) in [
            ("big storage", 1 << 20),
            ("small uniform", 256),
            ("readback", 4096),
            ("colour target", 64 * 64 * 4),
        ] {
            let a = find(&first, name)
                .unwrap_or_else(|| panic!("{}: {name} not in the report", gpu.name));
            assert!(
                a.size >= at_least,
                "{}: {name} is {} bytes",
                gpu.name,
                a.size
            );
        }
        let listed: u64 = first.allocations.iter().map(|a| a.size).sum();
        assert!(
            first.total_reserved_bytes >= listed,
            "{}: {} reserved bytes under {listed} listed",
            gpu.name,
            first.total_reserved_bytes
        );
        drop(big);
        small.destroy();
        let second = report(gpu);
        assert!(
            find(&second, "big storage").is_none(),
            "{}: a dropped buffer listed",
            gpu.name
        );
        assert!(
            find(&second, "small uniform").is_none(),
            "{}: a destroyed buffer listed",
            gpu.name
        );
        assert!(find(&second, "readback").is_some(), "{}", gpu.name);
        assert!(find(&second, "colour target").is_some(), "{}", gpu.name);
        drop((readback, texture, small));
    });
}
