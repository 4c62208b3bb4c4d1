//! Vulkan-only binding tests: descriptor-set recycling, the checks of
//! bind group layouts, bind groups and pipeline layouts (typed errors,
//! nothing left alive), bind groups past the stack scratch, and binding
//! arrays with update-after-bind where the adapter has descriptor indexing.
//! Every test runs with the validation layer on (when installed) and fails
//! on any validation error.
#![cfg(feature = "vulkan")]

use std::num::{NonZeroU32, NonZeroU64};

use keel_hal::vulkan;
use keel_hal::wgt;
use keel_hal::{Adapter as _, Device as _, Instance as _};
use keel_hal::{
    BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor, BindGroupLayoutFlags,
    BindingError, BindingResource, BufferBinding, BufferDescriptor, DeviceDescriptor,
    InstanceDescriptor, InstanceFlags, PipelineLayoutDescriptor, PushConstantRange,
    SamplerDescriptor, TextureDescriptor, TextureViewDescriptor,
};

/// Counts heap allocations made on the current thread.
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a const-initialised
// thread-local `Cell`, which never allocates.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded contract.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.with(|n| n.get())
}

type Entry = wgt::BindGroupLayoutEntry;
type Group<'a> = BindGroupEntry<'a, vulkan::Api>;

/// Opens the first adapter with every binding-array feature it has, runs
/// `test`, then checks the validation count after everything is dropped.
fn with_device(name: &str, test: impl FnOnce(&vulkan::Device, wgt::Features, &wgt::Limits)) {
    let desc = InstanceDescriptor {
        name,
        flags: InstanceFlags::VALIDATION,
        ..Default::default()
    };
    // SAFETY: the system loader is trusted.
    let Ok(instance) = (unsafe { vulkan::Instance::init(&desc) }) else {
        println!("skipped: no Vulkan");
        return;
    };
    // SAFETY: live instance.
    let Some(exposed) = (unsafe { instance.enumerate_adapters() })
        .into_iter()
        .next()
    else {
        println!("skipped: no Vulkan 1.3 adapter");
        return;
    };
    use wgt::Features as F;
    let wanted = F::TEXTURE_BINDING_ARRAY
        | F::BUFFER_BINDING_ARRAY
        | F::STORAGE_RESOURCE_BINDING_ARRAY
        | F::PARTIALLY_BOUND_BINDING_ARRAY;
    let features = exposed.capabilities.features & wanted;
    let open_desc = DeviceDescriptor {
        required_features: features,
        ..Default::default()
    };
    // SAFETY: the device is dropped before the instance.
    let open = unsafe { exposed.adapter.open(&open_desc) }.expect("open");
    test(&open.device, features, &exposed.capabilities.limits);
    assert_eq!(
        open.device.live_counts(),
        keel_hal::LiveCounts::default(),
        "objects left alive"
    );
    let validation = instance.validation_counter();
    drop((open, exposed.adapter, instance));
    assert_eq!(validation.errors(), 0, "validation errors (see the log)");
}

fn buffer_entry(binding: u32, ty: wgt::BufferBindingType, dynamic: bool) -> Entry {
    Entry {
        binding,
        visibility: wgt::ShaderStages::COMPUTE,
        ty: wgt::BindingType::Buffer {
            ty,
            has_dynamic_offset: dynamic,
            min_binding_size: None,
        },
        count: None,
    }
}

fn uniform_entry(binding: u32) -> Entry {
    buffer_entry(binding, wgt::BufferBindingType::Uniform, false)
}

fn layout(device: &vulkan::Device, entries: &[Entry]) -> vulkan::BindGroupLayout {
    let desc = BindGroupLayoutDescriptor {
        label: Some("test layout"),
        entries,
        ..Default::default()
    };
    // SAFETY: live device.
    unsafe { device.create_bind_group_layout(&desc) }.expect("layout")
}

fn buffer(device: &vulkan::Device, size: u64, usage: wgt::BufferUsages) -> vulkan::Buffer {
    let desc = BufferDescriptor {
        size,
        usage,
        ..Default::default()
    };
    // SAFETY: live device.
    unsafe { device.create_buffer(&desc) }.expect("buffer")
}

fn group<'a>(
    device: &vulkan::Device,
    layout: &'a vulkan::BindGroupLayout,
    entries: &'a [Group<'a>],
) -> Result<vulkan::BindGroup, BindingError> {
    let desc = BindGroupDescriptor {
        label: Some("test group"),
        layout,
        entries,
    };
    // SAFETY: the resources outlive the group (each test destroys it first).
    unsafe { device.create_bind_group(&desc) }
}

#[test]
fn a_destroyed_groups_set_serves_the_next_group_of_its_layout() {
    with_device("keel-hal set recycling", |device, _, _| {
        let layout = layout(device, &[uniform_entry(0)]);
        let uniform = buffer(device, 256, wgt::BufferUsages::UNIFORM);
        let entries = [Group {
            binding: 0,
            resource: BindingResource::Buffer(BufferBinding::whole(&uniform)),
        }];
        // SAFETY: no GPU work uses the groups.
        unsafe {
            let first = group(device, &layout, &entries).expect("first group");
            let raw = first.raw();
            device.destroy_bind_group(first);
            for _ in 0..100 {
                let again = group(device, &layout, &entries).expect("group");
                assert_eq!(again.raw(), raw, "the freed set is reused");
                device.destroy_bind_group(again);
            }
            // Two live groups need two sets.
            let a = group(device, &layout, &entries).expect("a");
            let b = group(device, &layout, &entries).expect("b");
            assert_ne!(a.raw(), b.raw());
            device.destroy_bind_group(a);
            device.destroy_bind_group(b);
            device.destroy_bind_group_layout(layout);
            device.destroy_buffer(uniform);
        }
    });
}

/// Creates a group that must fail with `expected`; nothing may stay alive.
fn expect_group_error(
    device: &vulkan::Device,
    layout: &vulkan::BindGroupLayout,
    entries: &[Group<'_>],
    expected: BindingError,
) {
    let before = device.live_counts();
    match group(device, layout, entries) {
        Ok(g) => {
            // SAFETY: never used.
            unsafe { device.destroy_bind_group(g) };
            panic!("the bind group was created; expected {expected:?}");
        }
        Err(e) => assert_eq!(e, expected),
    }
    assert_eq!(device.live_counts(), before);
}

#[test]
fn bind_group_mistakes_are_typed_errors() {
    with_device("keel-hal bind group errors", |device, _, limits| {
        let layout = layout(
            device,
            &[
                uniform_entry(0),
                Entry {
                    binding: 3,
                    visibility: wgt::ShaderStages::COMPUTE,
                    ty: wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        );
        let uniform = buffer(device, 256, wgt::BufferUsages::UNIFORM);
        let storage_only = buffer(device, 256, wgt::BufferUsages::STORAGE);
        // SAFETY: live device.
        let sampler = unsafe { device.create_sampler(&SamplerDescriptor::default()) }.unwrap();
        let whole = BindingResource::Buffer(BufferBinding::whole(&uniform));
        let range = |offset, size| {
            BindingResource::Buffer(BufferBinding {
                buffer: &uniform,
                offset,
                size: NonZeroU64::new(size),
            })
        };
        let with = |resource| {
            [
                Group {
                    binding: 0,
                    resource,
                },
                Group {
                    binding: 3,
                    resource: BindingResource::Sampler(&sampler),
                },
            ]
        };
        let past_end = "runs past the end of the 256-byte buffer";
        let invalid = |offset, size, reason: &str| BindingError::InvalidBufferRange {
            binding: 0,
            offset,
            size,
            buffer_size: 256,
            reason: reason.into(),
        };

        let missing = [Group {
            binding: 0,
            resource: BindingResource::Buffer(BufferBinding::whole(&uniform)),
        }];
        expect_group_error(device, &layout, &missing, BindingError::MissingBinding(3));
        let mut unknown = with(BindingResource::Buffer(BufferBinding::whole(&uniform)));
        unknown[1].binding = 7;
        expect_group_error(device, &layout, &unknown, BindingError::UnknownBinding(7));
        expect_group_error(
            device,
            &layout,
            &with(BindingResource::Sampler(&sampler)),
            BindingError::WrongType {
                binding: 0,
                expected: "a uniform buffer",
                got: "a sampler",
            },
        );
        expect_group_error(
            device,
            &layout,
            &with(BindingResource::Buffer(BufferBinding::whole(&storage_only))),
            BindingError::MissingUsage {
                binding: 0,
                needed: "UNIFORM",
                has: "STORAGE".into(),
            },
        );
        expect_group_error(
            device,
            &layout,
            &with(range(0, 512)),
            invalid(0, 512, past_end),
        );
        expect_group_error(
            device,
            &layout,
            &with(range(256, 16)),
            invalid(256, 16, past_end),
        );
        // Binding to the end from the end is an empty range.
        let at_end = BindingResource::Buffer(BufferBinding {
            buffer: &uniform,
            offset: 256,
            size: None,
        });
        expect_group_error(device, &layout, &with(at_end), invalid(256, 0, "is empty"));
        if limits.min_uniform_buffer_offset_alignment > 4 {
            let misaligned = format!(
                "starts at an offset that is not a multiple of {} \
                 (min_uniform_buffer_offset_alignment)",
                limits.min_uniform_buffer_offset_alignment
            );
            expect_group_error(
                device,
                &layout,
                &with(range(4, 16)),
                invalid(4, 16, &misaligned),
            );
        }
        let mut twice = with(BindingResource::Buffer(BufferBinding::whole(&uniform)));
        twice[1] = Group {
            binding: 0,
            resource: whole,
        };
        expect_group_error(device, &layout, &twice, BindingError::DuplicateBinding(0));
        // SAFETY: nothing uses them.
        unsafe {
            device.destroy_bind_group_layout(layout);
            device.destroy_sampler(sampler);
            device.destroy_buffer(uniform);
            device.destroy_buffer(storage_only);
        }
    });
}

/// Creates a layout that must fail with `expected`; nothing may stay alive.
fn expect_layout_error(
    device: &vulkan::Device,
    entries: &[Entry],
    flags: BindGroupLayoutFlags,
    expected: impl Fn(&BindingError) -> bool,
) {
    let before = device.live_counts();
    let desc = BindGroupLayoutDescriptor {
        label: None,
        flags,
        entries,
    };
    // SAFETY: live device.
    match unsafe { device.create_bind_group_layout(&desc) } {
        Ok(layout) => {
            // SAFETY: never used.
            unsafe { device.destroy_bind_group_layout(layout) };
            panic!("the layout {entries:?} was created");
        }
        Err(e) => assert!(expected(&e), "{entries:?}: unexpected {e:?}"),
    }
    assert_eq!(device.live_counts(), before);
}

#[test]
fn layout_and_pipeline_layout_mistakes_are_typed_errors() {
    with_device("keel-hal layout errors", |device, features, limits| {
        expect_layout_error(
            device,
            &[uniform_entry(2), uniform_entry(1), uniform_entry(2)],
            BindGroupLayoutFlags::empty(),
            |e| *e == BindingError::DuplicateBinding(2),
        );
        let external = Entry {
            binding: 4,
            visibility: wgt::ShaderStages::FRAGMENT,
            ty: wgt::BindingType::ExternalTexture,
            count: None,
        };
        expect_layout_error(device, &[external], BindGroupLayoutFlags::empty(), |e| {
            matches!(e, BindingError::Unsupported { binding: 4, .. })
        });
        let dynamic_array = Entry {
            count: NonZeroU32::new(4),
            ..buffer_entry(0, wgt::BufferBindingType::Uniform, true)
        };
        expect_layout_error(
            device,
            &[dynamic_array],
            BindGroupLayoutFlags::empty(),
            |e| matches!(e, BindingError::Unsupported { binding: 0, .. }),
        );
        if !features.contains(wgt::Features::TEXTURE_BINDING_ARRAY) {
            let textures = Entry {
                binding: 1,
                visibility: wgt::ShaderStages::FRAGMENT,
                ty: wgt::BindingType::Texture {
                    sample_type: wgt::TextureSampleType::Float { filterable: true },
                    view_dimension: wgt::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: NonZeroU32::new(8),
            };
            expect_layout_error(device, &[textures], BindGroupLayoutFlags::empty(), |e| {
                matches!(e, BindingError::Unsupported { binding: 1, .. })
            });
        }
        // Dynamic offsets and update-after-bind do not mix.
        expect_layout_error(
            device,
            &[buffer_entry(0, wgt::BufferBindingType::Uniform, true)],
            BindGroupLayoutFlags::UPDATE_AFTER_BIND,
            |e| matches!(e, BindingError::Unsupported { binding: 0, .. }),
        );

        let group_layout = layout(device, &[uniform_entry(0)]);
        let before = device.live_counts();
        let pipeline_layout = |groups: &[&vulkan::BindGroupLayout],
                               ranges: &[PushConstantRange]| {
            let desc = PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: groups,
                push_constant_ranges: ranges,
            };
            // SAFETY: the group layouts are live.
            unsafe { device.create_pipeline_layout(&desc) }
        };
        let range = |stages, range| PushConstantRange { stages, range };
        let compute = wgt::ShaderStages::COMPUTE;
        let too_many = vec![&group_layout; limits.max_bind_groups as usize + 1];
        let invalid =
            |range: std::ops::Range<u32>, stages, reason| BindingError::InvalidPushConstantRange {
                range,
                stages,
                reason,
            };
        let max = limits.max_immediate_size;
        let bad_ranges = [
            (
                vec![range(compute, 0..6)],
                invalid(0..6, compute, "its start and end must be multiples of 4"),
            ),
            (
                vec![range(compute, 8..8)],
                invalid(8..8, compute, "it is empty (start must be below end)"),
            ),
            (
                vec![range(wgt::ShaderStages::empty(), 0..16)],
                invalid(
                    0..16,
                    wgt::ShaderStages::empty(),
                    "it names no shader stage",
                ),
            ),
            (
                vec![range(compute, 0..max + 4)],
                BindingError::LimitExceeded {
                    what: "push-constant range end",
                    limit: "max_immediate_size",
                    requested: u64::from(max) + 4,
                    allowed: max.into(),
                },
            ),
            (
                vec![range(compute, 0..16), range(compute, 16..32)],
                invalid(
                    16..32,
                    compute,
                    "a stage it names is in an earlier range too (one range per stage)",
                ),
            ),
        ];
        assert_eq!(
            pipeline_layout(&too_many, &[]).err(),
            Some(BindingError::LimitExceeded {
                what: "bind group layouts",
                limit: "max_bind_groups",
                requested: u64::from(limits.max_bind_groups) + 1,
                allowed: limits.max_bind_groups.into(),
            })
        );
        for (ranges, expected) in &bad_ranges {
            let result = pipeline_layout(&[&group_layout], ranges);
            assert_eq!(result.as_ref().err(), Some(expected), "{ranges:?}");
        }
        assert_eq!(device.live_counts(), before);
        let ok = pipeline_layout(
            &[&group_layout, &group_layout],
            &[
                range(compute, 0..16),
                range(wgt::ShaderStages::VERTEX_FRAGMENT, 16..64),
            ],
        )
        .expect("pipeline layout");
        // SAFETY: nothing uses them.
        unsafe {
            device.destroy_pipeline_layout(ok);
            device.destroy_bind_group_layout(group_layout);
        }
    });
}

/// Every binding kind in one group of more bindings (and descriptors)
/// than the stack scratch holds; dynamic offsets, storage textures,
/// samplers and sub-ranges included.
#[test]
fn a_group_of_every_kind_past_the_stack_scratch() {
    with_device("keel-hal big group", |device, _, limits| {
        use wgt::BufferBindingType as B;
        let sampled = wgt::BindingType::Texture {
            sample_type: wgt::TextureSampleType::Float { filterable: true },
            view_dimension: wgt::TextureViewDimension::D2,
            multisampled: false,
        };
        let storage_texture = wgt::BindingType::StorageTexture {
            access: wgt::StorageTextureAccess::WriteOnly,
            format: wgt::TextureFormat::Rgba8Unorm,
            view_dimension: wgt::TextureViewDimension::D2,
        };
        let sampler = wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering);
        let kinds = [
            buffer_entry(0, B::Uniform, false).ty,
            buffer_entry(0, B::Uniform, true).ty,
            buffer_entry(0, B::Storage { read_only: true }, false).ty,
            buffer_entry(0, B::Storage { read_only: false }, true).ty,
            sampled,
            storage_texture,
            sampler,
        ];
        // 21 bindings, spread over binding numbers with gaps, given in reverse.
        let entries: Vec<Entry> = (0..21u32)
            .rev()
            .map(|i| Entry {
                binding: i * 3,
                visibility: wgt::ShaderStages::COMPUTE | wgt::ShaderStages::FRAGMENT,
                ty: kinds[i as usize % kinds.len()],
                count: None,
            })
            .collect();
        let layout = layout(device, &entries);
        let align = u64::from(
            limits
                .min_uniform_buffer_offset_alignment
                .max(limits.min_storage_buffer_offset_alignment),
        );
        let usage = wgt::BufferUsages::UNIFORM | wgt::BufferUsages::STORAGE;
        let buffer = buffer(device, align * 8, usage);
        let texture_desc = TextureDescriptor {
            size: wgt::Extent3d {
                width: 4,
                height: 4,
                depth_or_array_layers: 1,
            },
            format: wgt::TextureFormat::Rgba8Unorm,
            usage: wgt::TextureUsages::TEXTURE_BINDING | wgt::TextureUsages::STORAGE_BINDING,
            ..Default::default()
        };
        // SAFETY: live device; everything is destroyed below.
        let (texture, sampler_obj) = unsafe {
            (
                device.create_texture(&texture_desc).expect("texture"),
                device
                    .create_sampler(&SamplerDescriptor::default())
                    .expect("sampler"),
            )
        };
        // SAFETY: the texture is live.
        let view =
            unsafe { device.create_texture_view(&texture, &TextureViewDescriptor::default()) }
                .expect("view");
        let resources: Vec<Group<'_>> = entries
            .iter()
            .map(|e| Group {
                binding: e.binding,
                resource: match e.ty {
                    wgt::BindingType::Buffer { .. } => BindingResource::Buffer(BufferBinding {
                        buffer: &buffer,
                        offset: align * u64::from(e.binding % 4),
                        size: NonZeroU64::new(align),
                    }),
                    wgt::BindingType::Sampler(_) => BindingResource::Sampler(&sampler_obj),
                    _ => BindingResource::TextureView(&view),
                },
            })
            .collect();
        // SAFETY: the resources outlive the groups.
        unsafe {
            for _ in 0..3 {
                let g = group(device, &layout, &resources).expect("group");
                assert_eq!(g.dynamic_binding_count(), layout.dynamic_binding_count());
                device.destroy_bind_group(g);
            }
            device.destroy_bind_group_layout(layout);
            device.destroy_texture_view(view);
            device.destroy_texture(texture);
            device.destroy_sampler(sampler_obj);
            device.destroy_buffer(buffer);
        }
    });
}

/// Binding arrays, partially bound with update-after-bind, where the
/// adapter has descriptor indexing; and a wrong element count.
#[test]
fn update_after_bind_binding_arrays() {
    with_device("keel-hal binding arrays", |device, features, _| {
        use wgt::Features as F;
        let needed = F::TEXTURE_BINDING_ARRAY
            | F::BUFFER_BINDING_ARRAY
            | F::STORAGE_RESOURCE_BINDING_ARRAY
            | F::PARTIALLY_BOUND_BINDING_ARRAY;
        if !features.contains(needed) {
            println!("skipped: the adapter lacks descriptor indexing");
            return;
        }
        let entries = [
            Entry {
                count: NonZeroU32::new(8),
                ..buffer_entry(
                    0,
                    wgt::BufferBindingType::Storage { read_only: true },
                    false,
                )
            },
            Entry {
                binding: 1,
                visibility: wgt::ShaderStages::COMPUTE,
                ty: wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
                count: NonZeroU32::new(4),
            },
        ];
        let desc = BindGroupLayoutDescriptor {
            label: Some("uab layout"),
            flags: BindGroupLayoutFlags::UPDATE_AFTER_BIND,
            entries: &entries,
        };
        // SAFETY: live device.
        let layout = unsafe { device.create_bind_group_layout(&desc) }.expect("uab layout");
        let plain_desc = BindGroupLayoutDescriptor {
            flags: BindGroupLayoutFlags::empty(),
            ..desc.clone()
        };
        // SAFETY: live device.
        let plain = unsafe { device.create_bind_group_layout(&plain_desc) }.expect("layout");
        let storage = buffer(device, 1024, wgt::BufferUsages::STORAGE);
        // SAFETY: live device.
        let sampler = unsafe { device.create_sampler(&SamplerDescriptor::default()) }.unwrap();
        let buffers = [BufferBinding::whole(&storage); 3];
        let samplers = [&sampler; 4];
        let entries = [
            Group {
                binding: 0,
                resource: BindingResource::BufferArray(&buffers),
            },
            Group {
                binding: 1,
                resource: BindingResource::SamplerArray(&samplers),
            },
        ];
        // SAFETY: the resources outlive the groups.
        unsafe {
            // Partially bound: 3 of 8 buffers.
            let g = group(device, &layout, &entries).expect("partially bound group");
            device.destroy_bind_group(g);
        }
        // Without update-after-bind (so without partial binding) 3 of 8 is wrong.
        expect_group_error(
            device,
            &plain,
            &entries,
            BindingError::WrongCount {
                binding: 0,
                got: 3,
                expected: 8,
            },
        );
        // SAFETY: nothing uses them.
        unsafe {
            device.destroy_bind_group_layout(layout);
            device.destroy_bind_group_layout(plain);
            device.destroy_sampler(sampler);
            device.destroy_buffer(storage);
        }
    });
}

/// Bind-group churn of a 16-binding layout (every kind but storage
/// textures) allocates nothing on the heap once warm: the scratch is on the
/// stack and the set is recycled.
#[test]
fn bind_group_churn_does_not_allocate() {
    with_device("keel-hal churn", |device, _, _| {
        let kinds = [
            buffer_entry(0, wgt::BufferBindingType::Uniform, false).ty,
            buffer_entry(
                0,
                wgt::BufferBindingType::Storage { read_only: false },
                true,
            )
            .ty,
            wgt::BindingType::Sampler(wgt::SamplerBindingType::Filtering),
            wgt::BindingType::Texture {
                sample_type: wgt::TextureSampleType::Float { filterable: true },
                view_dimension: wgt::TextureViewDimension::D2,
                multisampled: false,
            },
        ];
        let entries: Vec<Entry> = (0..16u32)
            .map(|i| Entry {
                binding: i,
                visibility: wgt::ShaderStages::COMPUTE,
                ty: kinds[i as usize % kinds.len()],
                count: None,
            })
            .collect();
        let layout = layout(device, &entries);
        let usage = wgt::BufferUsages::UNIFORM | wgt::BufferUsages::STORAGE;
        let buffer = buffer(device, 1024, usage);
        let texture_desc = TextureDescriptor {
            usage: wgt::TextureUsages::TEXTURE_BINDING,
            ..Default::default()
        };
        // SAFETY: live device; everything is destroyed below.
        let (texture, sampler) = unsafe {
            (
                device.create_texture(&texture_desc).expect("texture"),
                device
                    .create_sampler(&SamplerDescriptor::default())
                    .expect("sampler"),
            )
        };
        // SAFETY: the texture is live.
        let view =
            unsafe { device.create_texture_view(&texture, &TextureViewDescriptor::default()) }
                .expect("view");
        let resources: Vec<Group<'_>> = entries
            .iter()
            .map(|e| Group {
                binding: e.binding,
                resource: match e.ty {
                    wgt::BindingType::Buffer { .. } => {
                        BindingResource::Buffer(BufferBinding::whole(&buffer))
                    }
                    wgt::BindingType::Sampler(_) => BindingResource::Sampler(&sampler),
                    _ => BindingResource::TextureView(&view),
                },
            })
            .collect();
        let desc = BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &resources,
        };
        let churn = |rounds| {
            for _ in 0..rounds {
                // SAFETY: the resources outlive the groups; no GPU work.
                unsafe {
                    let a = device.create_bind_group(&desc).expect("a");
                    let b = device.create_bind_group(&desc).expect("b");
                    device.destroy_bind_group(a);
                    device.destroy_bind_group(b);
                }
            }
        };
        churn(8);
        let before = allocations();
        churn(1000);
        assert_eq!(allocations() - before, 0, "heap allocations during churn");
        let probe = allocations();
        drop(std::hint::black_box(Box::new(1u64)));
        assert!(allocations() > probe, "the allocator counts");
        // SAFETY: nothing uses them.
        unsafe {
            device.destroy_bind_group_layout(layout);
            device.destroy_texture_view(view);
            device.destroy_texture(texture);
            device.destroy_sampler(sampler);
            device.destroy_buffer(buffer);
        }
    });
}
