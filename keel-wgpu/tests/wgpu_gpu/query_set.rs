//! wgpu `tests/tests/wgpu-gpu/query_set.rs`.

use crate::wgpu_gpu::harness::*;

gpu_test!(
    drop_failed_timestamp_query_set,
    TestParameters::default(),
    |ctx| {
        // In an error scope, so the catch-all doesn't report the error early.
        let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        // Fails: TIMESTAMP_QUERY is not among the device's features.
        let bad_query_set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("doomed query set"),
            ty: wgpu::QueryType::Timestamp,
            count: 1,
        });
        // Dropping it must not panic.
        drop(bad_query_set);
        assert!(pollster::block_on(scope.pop()).is_some());
    }
);
