//! The keel-hal side of the external-memory workload: two devices opened
//! with `EXTERNAL_MEMORY_FD`, an opaque-fd export on A and an import on B,
//! through the trait set. Made on first use.

use keel_hal as kh;
use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

use crate::keel::Keel;
use crate::workload::{open_fds, EXTERNAL_COPY};

/// The two devices and what B keeps between rounds. Field order is drop
/// order: B's objects (destroyed in `Drop`), then the devices.
pub(crate) struct Pair<A: kh::Api> {
    dst: Option<A::Buffer>,
    encoder: Option<A::CommandEncoder>,
    fence: Option<A::Fence>,
    value: kh::FenceValue,
    a: kh::OpenDevice<A>,
    b: kh::OpenDevice<A>,
}

fn err<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("keel-hal external {what}: {e}")
}

impl<A: kh::Api> Pair<A> {
    /// Opens both devices on the adapter named `name` of `instance`.
    fn new(instance: &A::Instance, name: &str) -> Result<Self, String> {
        // SAFETY: live instance.
        let adapters = unsafe { instance.enumerate_adapters() };
        let exposed = adapters
            .iter()
            .find(|a| a.info.name == name)
            .ok_or("keel-hal external: the adapter is gone")?;
        let desc = kh::DeviceDescriptor {
            required_hal_features: kh::HalFeatures::EXTERNAL_MEMORY_FD,
            ..Default::default()
        };
        // SAFETY: opened from one thread; dropped before the instance (the
        // caller's field order).
        let (a, b) = unsafe {
            (
                exposed.adapter.open(&desc).map_err(err("open A"))?,
                exposed.adapter.open(&desc).map_err(err("open B"))?,
            )
        };
        let mut pair = Pair {
            dst: None,
            encoder: None,
            fence: None,
            value: 0,
            a,
            b,
        };
        let d = &pair.b.device;
        let desc = kh::BufferDescriptor {
            size: EXTERNAL_COPY,
            usage: wgt::BufferUsages::COPY_DST,
            ..Default::default()
        };
        // SAFETY: live device; destroyed in Drop.
        unsafe {
            pair.dst = Some(d.create_buffer(&desc).map_err(err("dst"))?);
            pair.encoder = Some(
                d.create_command_encoder(&Default::default())
                    .map_err(err("encoder"))?,
            );
            pair.fence = Some(d.create_fence().map_err(err("fence"))?);
        }
        Ok(pair)
    }

    /// One round: export on A, import on B, copy out on B, destroy both.
    fn round(&mut self, size: u64) -> Result<(), String> {
        let ht = kh::ExternalHandleType::OpaqueFd;
        let desc = kh::BufferDescriptor {
            size,
            usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
            memory: kh::Memory::External(kh::ExternalMemory::export(ht)),
            ..Default::default()
        };
        let (Some(dst), Some(encoder), Some(fence)) =
            (&self.dst, self.encoder.as_mut(), &self.fence)
        else {
            return Err("keel-hal external: objects missing".into());
        };
        let (a, b) = (&self.a.device, &self.b.device);
        self.value += 1;
        let value = self.value;
        // SAFETY: every object is this side's; the copy is waited for before
        // anything it uses is destroyed.
        unsafe {
            let exported = a.create_buffer(&desc).map_err(err("create"))?;
            let memory = a
                .export_buffer_memory(&exported, ht)
                .map_err(err("export"))?;
            let imported = b
                .import_buffer(&desc, kh::ExternalHandle::OpaqueFd(memory.fd))
                .map_err(err("import"))?;
            encoder.begin_encoding(None).map_err(err("begin"))?;
            encoder.transfer_ownership(
                kh::OwnershipTransfer::Acquire,
                &[kh::BufferBarrier {
                    buffer: &imported,
                    usage: kh::StateTransition {
                        from: kh::BufferUses::COPY_DST,
                        to: kh::BufferUses::COPY_SRC,
                    },
                }],
                &[],
            );
            let region = kh::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: EXTERNAL_COPY,
            };
            encoder.copy_buffer_to_buffer(&imported, dst, &[region]);
            let cb = encoder.end_encoding().map_err(err("end"))?;
            self.b
                .queue
                .submit(&[&cb], &[], fence, value)
                .map_err(err("submit"))?;
            b.wait(fence, value, None).map_err(err("wait"))?;
            encoder.reset_all([cb]);
            b.destroy_buffer(imported);
            a.destroy_buffer(exported);
        }
        Ok(())
    }
}

impl<A: kh::Api> Drop for Pair<A> {
    fn drop(&mut self) {
        let d = &self.b.device;
        // SAFETY: every round waited for its work; these are B's objects.
        unsafe {
            if let Some(x) = self.dst.take() {
                d.destroy_buffer(x);
            }
            if let Some(x) = self.encoder.take() {
                d.destroy_command_encoder(x);
            }
            if let Some(x) = self.fence.take() {
                d.destroy_fence(x);
            }
        }
    }
}

impl<A: kh::Api> Keel<A> {
    /// The external workload: `iters` rounds, in ns per round.
    pub(crate) fn external(&mut self, size: u64, iters: usize) -> Result<f64, String> {
        if self.external.is_none() {
            self.external = Some(Pair::new(&self.instance, &self.adapter_name)?);
        }
        let pair = self.external.as_mut().ok_or("external devices missing")?;
        let fds = open_fds();
        let start = crate::count::Timer::start();
        for _ in 0..iters {
            pair.round(size)?;
        }
        let ns = start.stop().as_nanos() as f64 / iters as f64;
        let now = open_fds();
        if now != fds {
            return Err(format!("keel-hal: open fds {fds} before, {now} after"));
        }
        Ok(ns)
    }
}
