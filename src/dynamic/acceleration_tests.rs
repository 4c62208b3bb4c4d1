//! Acceleration structures and shader binding tables through the dyn path
//! (on noop): descriptors with many geometries, barriers, compacted sizes,
//! bindings, foreign resources, and the dyn table's buffer.

use super::{instance, shader_table, BackendChoice, DynAccelerationStructure, DynBuffer};
use crate::{
    AccelerationStructureBarrier, AccelerationStructureBuildMode, AccelerationStructureCopy,
    AccelerationStructureDescriptor, AccelerationStructureEntries, AccelerationStructureError,
    AccelerationStructureKind, AccelerationStructurePlacement, AccelerationStructureTriangles,
    AccelerationStructureUses, BindGroupDescriptor, BindGroupEntry, BindGroupLayoutDescriptor,
    BindingResource, BufferDescriptor, BuildAccelerationStructureDescriptor, CommandEncoder as _,
    ComputePassDescriptor, Device as _, DeviceDescriptor, DeviceError, DynApi,
    GetAccelerationStructureBuildSizesDescriptor, HalFeatures, Instance as _, InstanceDescriptor,
    Memory, Queue as _, ShaderBindingTable, ShaderBindingTableRegion, StateTransition,
};

type Flags = wgt::AccelerationStructureFlags;

fn open() -> crate::OpenDevice<DynApi> {
    let chosen = instance(BackendChoice::Noop, &InstanceDescriptor::default()).unwrap();
    // SAFETY: the adapter comes from this instance; one thread.
    unsafe {
        let adapter = chosen.instance.enumerate_adapters().remove(0).adapter;
        crate::Adapter::open(
            &adapter,
            &DeviceDescriptor {
                required_hal_features: HalFeatures::ACCELERATION_STRUCTURE,
                ..Default::default()
            },
        )
        .unwrap()
    }
}

/// An acceleration structure of no backend at all.
#[derive(Debug)]
struct Foreign;
impl DynAccelerationStructure for Foreign {}

#[test]
fn structures_travel_through_dyn_api() {
    let crate::OpenDevice { device, queue } = open();
    // Usages as the shared checks ask (and Vulkan would).
    let buffer = |size, memory, usage| {
        let desc = BufferDescriptor {
            size,
            memory,
            usage,
            ..Default::default()
        };
        // SAFETY: live device.
        unsafe { device.create_buffer(&desc) }.unwrap()
    };
    let vertices = buffer(12 * 3 * 10, Memory::Device, wgt::BufferUsages::BLAS_INPUT);
    let scratch = buffer(4096, Memory::Device, wgt::BufferUsages::STORAGE);
    let sizes_buffer = buffer(16, Memory::Readback, wgt::BufferUsages::COPY_DST);
    // Ten geometries: more than the lists hold inline.
    let geometry = |vertex_buffer| AccelerationStructureTriangles {
        vertex_buffer,
        vertex_offset: 0,
        vertex_format: wgt::VertexFormat::Float32x3,
        vertex_stride: 12,
        vertex_count: 3,
        indices: None,
        transform: None,
        flags: wgt::AccelerationStructureGeometryFlags::OPAQUE,
    };
    let query: Vec<_> = (0..10).map(|_| geometry(None)).collect();
    let query = AccelerationStructureEntries::Triangles(&query);
    let flags = Flags::ALLOW_COMPACTION;
    // SAFETY: every object lives until the submission has run, then is destroyed.
    unsafe {
        let sizes = device
            .get_acceleration_structure_build_sizes(&GetAccelerationStructureBuildSizesDescriptor {
                entries: &query,
                flags,
            })
            .unwrap();
        assert_eq!(sizes.acceleration_structure_size, 128 + 64 * 10);
        let make = |kind, size| {
            let desc = AccelerationStructureDescriptor {
                label: None,
                kind,
                size,
                placement: AccelerationStructurePlacement::Owned,
            };
            device.create_acceleration_structure(&desc).unwrap()
        };
        let blases: Vec<_> = (0..9)
            .map(|_| make(AccelerationStructureKind::BottomLevel, 768))
            .collect();
        let copy = make(AccelerationStructureKind::BottomLevel, 768);
        let tlas = make(AccelerationStructureKind::TopLevel, 256);
        assert_eq!(device.get_acceleration_structure_size(&copy), 768);
        assert!(device.get_acceleration_structure_device_address(&copy) != 0);

        let one: Vec<_> = (0..1).map(|_| geometry(Some(&vertices))).collect();
        let one = AccelerationStructureEntries::Triangles(&one);
        let ten: Vec<_> = (0..10).map(|_| geometry(Some(&vertices))).collect();
        let ten = AccelerationStructureEntries::Triangles(&ten);
        // Nine builds (more than inline), one of ten geometries.
        let descs: Vec<_> = blases
            .iter()
            .enumerate()
            .map(|(i, blas)| BuildAccelerationStructureDescriptor::<DynApi> {
                entries: if i == 0 { &ten } else { &one },
                mode: AccelerationStructureBuildMode::Build,
                flags,
                source_acceleration_structure: None,
                destination_acceleration_structure: blas,
                scratch_buffer: &scratch,
                scratch_buffer_offset: 0,
            })
            .collect();

        let mut encoder = device.create_command_encoder(&Default::default()).unwrap();
        let fence = device.create_fence().unwrap();
        encoder.begin_encoding(None).unwrap();
        encoder.build_acceleration_structures(&descs).unwrap();
        let refs: Vec<_> = blases.iter().collect();
        encoder.place_acceleration_structure_barrier(AccelerationStructureBarrier {
            structures: &refs,
            usage: StateTransition {
                from: AccelerationStructureUses::BUILD_OUTPUT,
                to: AccelerationStructureUses::COPY_SRC,
            },
        });
        let (empty, copy_dst) = (crate::BufferUses::empty(), crate::BufferUses::COPY_DST);
        encoder.transition_buffers(&[crate::BufferBarrier::new(&sizes_buffer, empty, copy_dst)]);
        encoder
            .read_acceleration_structure_compacted_sizes(&refs[..2], &sizes_buffer, 0)
            .unwrap();
        encoder
            .copy_acceleration_structure(&blases[1], &copy, AccelerationStructureCopy::Compact)
            .unwrap();
        // The host-visibility rule (`BufferMapping`): a barrier to MAP_READ, then the fence wait.
        let map_read = crate::BufferUses::MAP_READ;
        encoder.transition_buffers(&[crate::BufferBarrier::new(&sizes_buffer, copy_dst, map_read)]);
        let commands = encoder.end_encoding().unwrap();
        queue.submit(&[&commands], &[], &fence, 1).unwrap();
        assert!(device.wait(&fence, 1, None).unwrap());
        let map = device.map_buffer(&sizes_buffer).unwrap();
        let bytes = std::slice::from_raw_parts(map.ptr.as_ptr(), 16);
        assert_eq!(bytes[..8], 768u64.to_ne_bytes());
        assert_eq!(bytes[8..], 768u64.to_ne_bytes());

        // A top-level structure binds.
        let layout = device
            .create_bind_group_layout(&BindGroupLayoutDescriptor {
                entries: &[wgt::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgt::ShaderStages::COMPUTE,
                    ty: wgt::BindingType::AccelerationStructure {
                        vertex_return: false,
                    },
                    count: None,
                }],
                ..Default::default()
            })
            .unwrap();
        let group = device
            .create_bind_group(&BindGroupDescriptor {
                label: None,
                layout: &layout,
                entries: &[BindGroupEntry {
                    binding: 0,
                    resource: BindingResource::AccelerationStructure(&tlas),
                }],
            })
            .unwrap();

        // Foreign structures: a typed error where the call returns one,
        // else the recording fails at its end.
        let foreign: Box<dyn DynAccelerationStructure> = Box::new(Foreign);
        let foreign_error = AccelerationStructureError::Device(DeviceError::ForeignResource);
        encoder.begin_encoding(None).unwrap();
        assert_eq!(
            encoder.copy_acceleration_structure(&foreign, &copy, AccelerationStructureCopy::Clone),
            Err(foreign_error.clone())
        );
        let mixed = [&blases[0], &foreign];
        assert_eq!(
            encoder.read_acceleration_structure_compacted_sizes(&mixed, &sizes_buffer, 0),
            Err(foreign_error.clone())
        );
        let foreign_build = BuildAccelerationStructureDescriptor::<DynApi> {
            destination_acceleration_structure: &foreign,
            ..BuildAccelerationStructureDescriptor {
                entries: &one,
                mode: AccelerationStructureBuildMode::Build,
                flags,
                source_acceleration_structure: None,
                destination_acceleration_structure: &copy,
                scratch_buffer: &scratch,
                scratch_buffer_offset: 0,
            }
        };
        assert_eq!(
            encoder.build_acceleration_structures(std::slice::from_ref(&foreign_build)),
            Err(foreign_error.clone())
        );
        encoder.place_acceleration_structure_barrier(AccelerationStructureBarrier {
            structures: &mixed,
            usage: StateTransition {
                from: AccelerationStructureUses::BUILD_OUTPUT,
                to: AccelerationStructureUses::SHADER_INPUT,
            },
        });
        assert_eq!(
            encoder.end_encoding().unwrap_err(),
            DeviceError::ForeignResource
        );
        assert_eq!(device.get_acceleration_structure_size(&foreign), 0);
        let desc = AccelerationStructureDescriptor::<DynApi> {
            label: None,
            kind: AccelerationStructureKind::BottomLevel,
            size: 256,
            placement: AccelerationStructurePlacement::InBuffer {
                buffer: &(Box::new(7u32) as Box<dyn DynBuffer>),
                offset: 0,
            },
        };
        assert_eq!(
            device.create_acceleration_structure(&desc).unwrap_err(),
            foreign_error
        );

        encoder.reset_all([commands]);
        device.destroy_bind_group(group);
        device.destroy_bind_group_layout(layout);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
        for s in blases.into_iter().chain([copy, tlas]) {
            device.destroy_acceleration_structure(s);
        }
        for b in [vertices, scratch, sizes_buffer] {
            device.destroy_buffer(b);
        }
        // A foreign structure is leaked, never destroyed by the wrong backend.
        device.destroy_acceleration_structure(foreign);
    }
    assert_eq!(device.live_counts(), Default::default());
}

impl DynBuffer for u32 {}

/// The dyn table's buffer is the backend's table: tracing sets the
/// regions the dyn table holds, mapping reaches its buffer, destroying
/// returns it to the backend.
#[test]
fn shader_binding_tables_round_trip() {
    let crate::OpenDevice { device, queue } = open();
    // SAFETY: every object lives until the submission has run, then is destroyed.
    unsafe {
        let made: Box<dyn std::any::Any> = device
            .create_buffer(&BufferDescriptor {
                size: 64,
                memory: Memory::Upload,
                ..Default::default()
            })
            .unwrap();
        let own = super::cast_box::<crate::noop::Buffer>(made).unwrap();
        let region = ShaderBindingTableRegion {
            offset: 0,
            stride: 32,
            size: 32,
        };
        let mut table = shader_table::wrap::<crate::noop::Api>(ShaderBindingTable {
            buffer: own,
            ray_generation: region,
            miss: Default::default(),
            hit: Default::default(),
        });
        assert_eq!(table.ray_generation, region);
        assert!(device.map_buffer(&table.buffer).is_ok());
        device.unmap_buffer(&table.buffer);

        table.miss = ShaderBindingTableRegion {
            offset: 32,
            stride: 32,
            size: 32,
        };
        let mut encoder = device.create_command_encoder(&Default::default()).unwrap();
        let fence = device.create_fence().unwrap();
        encoder.begin_encoding(None).unwrap();
        encoder.begin_ray_tracing_pass(&ComputePassDescriptor::default());
        encoder.trace_rays(&table, [1, 1, 1]);
        encoder.end_ray_tracing_pass();
        let commands = encoder.end_encoding().unwrap();
        queue.submit(&[&commands], &[], &fence, 1).unwrap();
        let seen = shader_table::with_table::<crate::noop::Api, _>(&table, |t| t.miss).unwrap();
        assert_eq!(seen, table.miss);

        // A table whose buffer is not a backend table is foreign.
        let fake = ShaderBindingTable {
            buffer: Box::new(7u32) as Box<dyn DynBuffer>,
            ray_generation: region,
            miss: Default::default(),
            hit: Default::default(),
        };
        encoder.reset_all([commands]);
        encoder.begin_encoding(None).unwrap();
        encoder.begin_ray_tracing_pass(&ComputePassDescriptor::default());
        encoder.trace_rays(&fake, [1, 1, 1]);
        encoder.end_ray_tracing_pass();
        assert_eq!(
            encoder.end_encoding().unwrap_err(),
            DeviceError::ForeignResource
        );

        device.destroy_shader_binding_table(table);
        device.destroy_shader_binding_table(fake);
        device.destroy_command_encoder(encoder);
        device.destroy_fence(fence);
    }
    assert_eq!(device.live_counts(), Default::default());
}
