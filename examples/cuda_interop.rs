//! keel-hal and CUDA sharing memory and a timeline semaphore on an NVIDIA
//! GPU: the recipe of `docs/interop-cuda.md`, run end to end.
//!
//! ```text
//! cargo run --release --example cuda_interop
//! cargo run --release --example cuda_interop -- --script scripts/cuda_interop.py --python python3
//! ```
//!
//! Where there is no NVIDIA Vulkan adapter, no `python3`, or no CUDA
//! Python bindings (`cuda-bindings` and CuPy), it prints `SKIP: <reason>`
//! and exits 0. Otherwise it prints `PASS` and exits 0, or `FAIL: <reason>`
//! and exits 1.
//!
//! What happens (the CUDA side is `scripts/cuda_interop.py`, a child
//! process):
//!
//! 1. keel-hal opens the NVIDIA adapter and exports, as opaque fds, a
//!    1 MiB buffer's memory, a 256×256 RGBA8 texture's memory (where the
//!    adapter exports textures) and a timeline semaphore (where it exports
//!    those). Vulkan writes a byte pattern into the buffer and the texture
//!    and releases them to `VK_QUEUE_FAMILY_EXTERNAL`.
//! 2. The fds are made inheritable on purpose (keel-hal's are
//!    close-on-exec) and their numbers passed to the child with the
//!    adapter's device UUID, `ExportedMemory::size` and `::dedicated`. The
//!    child picks the CUDA device with that UUID, imports the memory, and
//!    a CUDA kernel checks the bytes and rewrites them; Vulkan acquires
//!    the memory back and checks the new bytes (buffer, then texture).
//! 3. CUDA → Vulkan: Vulkan's queue waits on the semaphore for 1 and then
//!    copies the buffer out; CUDA spins on the GPU for half a second,
//!    rewrites the buffer with a kernel and signals 1. While CUDA spins,
//!    the host sees Vulkan's submission still pending; afterwards Vulkan
//!    read the bytes CUDA wrote after its spin.
//! 4. Vulkan → CUDA: CUDA's stream waits for 3 and then checks the buffer
//!    with a kernel and rewrites it, signalling 4; the child reports that
//!    its stream is not ready. Vulkan's queue waits for 2 (which the host
//!    signals, `Device::signal_semaphore`, after checking that both queues
//!    are still waiting), writes a new pattern, and signals 3. Vulkan then
//!    waits for 4 and reads what CUDA wrote.

use std::process::ExitCode;

#[cfg(feature = "vulkan")]
fn main() -> ExitCode {
    env_logger::init();
    match interop::run() {
        Ok(interop::Outcome::Pass) => {
            println!("PASS: keel-hal and CUDA shared memory and a timeline semaphore");
            ExitCode::SUCCESS
        }
        Ok(interop::Outcome::Skip(reason)) => {
            println!("SKIP: {reason}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("FAIL: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(feature = "vulkan"))]
fn main() -> ExitCode {
    println!("SKIP: keel-hal was built without the vulkan feature");
    ExitCode::SUCCESS
}

#[cfg(feature = "vulkan")]
mod interop {
    use std::error::Error;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::path::{Path, PathBuf};
    use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
    use std::time::{Duration, Instant};

    use keel_hal::vulkan;
    use keel_hal::wgt;
    use keel_hal::{
        AdapterInfo, BufferBarrier, BufferCopy, BufferDescriptor, BufferTextureCopy, BufferUses,
        DeviceDescriptor, ExportedMemory, ExposedAdapter, ExternalHandleType, ExternalMemory,
        ExternalSemaphoreDescriptor, ExternalSemaphoreType, ExternalSubmission, HalFeatures,
        InstanceDescriptor, InstanceFlags, Memory, OwnershipTransfer, SemaphoreKind,
        SemaphoreSignal, SemaphoreWait, TextureBarrier, TextureDescriptor, TextureUses,
    };
    // The trait set.
    use keel_hal::{Adapter as _, CommandEncoder as _, Device as _, Instance as _, Queue as _};

    pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

    /// How the run ended, short of a failure.
    pub enum Outcome {
        Pass,
        Skip(String),
    }

    /// PCI vendor id of NVIDIA.
    const NVIDIA: u32 = 0x10de;
    /// Bytes of the shared buffer.
    const BUFFER_LEN: u64 = 1 << 20;
    /// The shared texture's side, in texels (RGBA8: rows of 1 KiB).
    const SIDE: u32 = 256;
    /// How long CUDA spins on the GPU before signalling, and how long the
    /// host lets both queues wait before its signal.
    const SPIN_MS: u64 = 500;
    const HOLD_MS: u64 = 200;
    /// The longest any one wait may take before the run fails.
    const TIMEOUT: Duration = Duration::from_secs(30);

    /// `(i * 7 + 3 + seed * 31) mod 251`: what each side writes and checks
    /// (the script's `pattern`).
    fn pattern(len: u64, seed: u64) -> Vec<u8> {
        (0..len)
            .map(|i| ((i * 7 + 3 + seed * 31) % 251) as u8)
            .collect()
    }

    /// Compares bytes, naming the first difference.
    fn compare(got: &[u8], seed: u64, what: &str) -> Result<()> {
        let want = pattern(got.len() as u64, seed);
        match got.iter().zip(&want).position(|(g, w)| g != w) {
            None => {
                println!("vulkan: {what}: all {} bytes as expected", got.len());
                Ok(())
            }
            Some(i) => Err(format!(
                "{what}: byte {i} is {:#04x}, expected {:#04x} ({} of {} differ)",
                got[i],
                want[i],
                got.iter().zip(&want).filter(|(g, w)| g != w).count(),
                got.len()
            )
            .into()),
        }
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Options: `--script PATH`, `--python PROGRAM`.
    struct Options {
        script: Option<PathBuf>,
        python: String,
    }

    fn options() -> Result<Options> {
        let mut o = Options {
            script: None,
            python: "python3".into(),
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--script" => o.script = Some(args.next().ok_or("--script needs a path")?.into()),
                "--python" => o.python = args.next().ok_or("--python needs a program")?,
                other => {
                    return Err(format!(
                        "unknown argument {other:?} (--script PATH, --python PROGRAM)"
                    )
                    .into())
                }
            }
        }
        Ok(o)
    }

    /// The script: `--script`, else `scripts/cuda_interop.py` under the
    /// working directory, else under the source tree this was built from.
    fn script(o: &Options) -> Result<PathBuf> {
        if let Some(s) = &o.script {
            return Ok(s.clone());
        }
        let candidates = [
            PathBuf::from("scripts/cuda_interop.py"),
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/cuda_interop.py"),
        ];
        candidates
            .iter()
            .find(|p| p.is_file())
            .cloned()
            .ok_or_else(|| {
                format!("scripts/cuda_interop.py not found (tried {candidates:?}; use --script)")
                    .into()
            })
    }

    /// Whether an fd is close-on-exec (`/proc/self/fdinfo`).
    fn close_on_exec(fd: &OwnedFd) -> Option<bool> {
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
        let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
        Some(u32::from_str_radix(flags.trim(), 8).ok()? & 0o2_000_000 != 0)
    }

    /// Clears `FD_CLOEXEC` on an fd about to be handed to a child process:
    /// keel-hal returns every fd close-on-exec, so inheriting one is an
    /// explicit act. (`std` has no call for it, hence `fcntl`.)
    fn make_inheritable(fd: &OwnedFd) -> Result<()> {
        use std::ffi::c_int;
        const F_GETFD: c_int = 1;
        const F_SETFD: c_int = 2;
        const FD_CLOEXEC: c_int = 1;
        extern "C" {
            fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
        }
        // SAFETY: F_GETFD on an fd this process owns reads its flags only.
        let flags = unsafe { fcntl(fd.as_raw_fd(), F_GETFD) };
        // SAFETY: F_SETFD on the same fd changes only its close-on-exec flag.
        if flags < 0 || unsafe { fcntl(fd.as_raw_fd(), F_SETFD, flags & !FD_CLOEXEC) } < 0 {
            return Err(format!("fcntl: {}", std::io::Error::last_os_error()).into());
        }
        Ok(())
    }

    /// The NVIDIA adapter that exports memory as opaque fds, or why none.
    fn nvidia_adapter(
        instance: &vulkan::Instance,
    ) -> std::result::Result<ExposedAdapter<vulkan::Api>, String> {
        // SAFETY: live instance.
        let adapters = unsafe { instance.enumerate_adapters() };
        let names: Vec<String> = adapters
            .iter()
            .map(|a| format!("{} ({:#06x})", a.info.name, a.info.vendor))
            .collect();
        adapters
            .into_iter()
            .find(|a| {
                a.info.vendor == NVIDIA
                    && a.capabilities
                        .hal_features
                        .contains(HalFeatures::EXTERNAL_MEMORY_FD)
            })
            .ok_or_else(|| {
                format!(
                    "no NVIDIA Vulkan adapter that exports memory as opaque fds (adapters: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                )
            })
    }

    /// Runs the script with `args`; `Ok(None)` with the reason to skip.
    fn spawn(o: &Options, script: &Path, args: &[String]) -> Result<Option<Child>> {
        match Command::new(&o.python)
            .arg(script)
            .args(args)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
        {
            Ok(child) => Ok(Some(child)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("starting {}: {e}", o.python).into()),
        }
    }

    /// The child's pipes: lines in, lines out.
    struct Talk {
        to: ChildStdin,
        from: BufReader<ChildStdout>,
    }

    impl Talk {
        /// The child's next line, which must start with `word`; a `FAIL`
        /// line (or the end of its output) is an error.
        fn expect(&mut self, word: &str) -> Result<String> {
            let mut line = String::new();
            loop {
                line.clear();
                if self.from.read_line(&mut line)? == 0 {
                    return Err(format!("the CUDA side ended before {word:?}").into());
                }
                let line = line.trim_end();
                println!("  cuda: {line}");
                if let Some(rest) = line.strip_prefix("FAIL") {
                    return Err(format!("CUDA side: {}", rest.trim()).into());
                }
                if line.starts_with(word) {
                    return Ok(line.to_string());
                }
                if !line.starts_with("DEVICE") {
                    return Err(format!("expected {word:?} from the CUDA side").into());
                }
            }
        }

        fn send(&mut self, word: &str) -> Result<()> {
            writeln!(self.to, "{word}")?;
            self.to.flush()?;
            Ok(())
        }
    }

    pub fn run() -> Result<Outcome> {
        let o = options()?;
        let desc = InstanceDescriptor {
            name: "keel-hal cuda_interop",
            flags: if std::env::var_os("KEEL_VALIDATION").is_some() {
                InstanceFlags::VALIDATION
            } else {
                InstanceFlags::empty()
            },
            ..Default::default()
        };
        // SAFETY: the system's Vulkan loader, if any, is a real one.
        let instance = match unsafe { vulkan::Instance::init(&desc) } {
            Ok(i) => i,
            Err(e) => return Ok(Outcome::Skip(format!("no Vulkan here: {e}"))),
        };
        let exposed = match nvidia_adapter(&instance) {
            Ok(a) => a,
            Err(reason) => return Ok(Outcome::Skip(reason)),
        };
        let script = script(&o)?;
        let Some(mut probe) = spawn(&o, &script, &["--probe".into()])? else {
            return Ok(Outcome::Skip(format!(
                "no {} to run the CUDA side",
                o.python
            )));
        };
        drop(probe.stdin.take());
        let mut bytes = Vec::new();
        if let Some(mut out) = probe.stdout.take() {
            out.read_to_end(&mut bytes)?;
        }
        let status = probe.wait()?;
        let answer = String::from_utf8_lossy(&bytes).trim().to_string();
        if let Some(reason) = answer.strip_prefix("SKIP") {
            return Ok(Outcome::Skip(format!("CUDA side: {}", reason.trim())));
        }
        if !status.success() || !answer.starts_with("OK") {
            return Err(format!("the CUDA probe failed ({status}): {answer}").into());
        }
        println!("cuda probe: {answer}");
        describe(&exposed.info);
        session(&o, &script, exposed)?;
        drop(instance);
        Ok(Outcome::Pass)
    }

    fn describe(info: &AdapterInfo) {
        println!(
            "vulkan: {} ({}), device UUID {}, driver UUID {}, LUID {:?}",
            info.name,
            info.driver_info,
            hex(&info.device_uuid),
            hex(&info.driver_uuid),
            info.device_luid.map(|l| hex(&l))
        );
    }

    fn describe_export(what: &str, m: &ExportedMemory) {
        println!(
            "vulkan: exported {what}: {} bytes, dedicated {}, memory type {:?} {:?}, \
             close-on-exec {:?}",
            m.size,
            m.dedicated,
            m.memory_type_index,
            m.memory_properties,
            close_on_exec(&m.fd)
        );
    }

    /// The Vulkan side: a device, its queue, one fence counting submissions.
    struct Gpu {
        device: vulkan::Device,
        queue: vulkan::Queue,
        fence: vulkan::Fence,
        submitted: u64,
        /// Encoders and command buffers to free once their work is done.
        spent: Vec<(vulkan::CommandEncoder, vulkan::CommandBuffer)>,
    }

    impl Gpu {
        /// Records with `record` and submits, waiting on and signalling
        /// the semaphore as asked; returns the fence value that marks it done.
        ///
        /// # Safety
        /// What `record` names is this device's and in the states it expects.
        unsafe fn submit(
            &mut self,
            label: &str,
            waits: &[SemaphoreWait<'_, vulkan::ExternalSemaphore>],
            signals: &[SemaphoreSignal<'_, vulkan::ExternalSemaphore>],
            record: impl FnOnce(&mut vulkan::CommandEncoder),
        ) -> Result<u64> {
            // SAFETY: live device; the encoder is recorded, then submitted.
            unsafe {
                let mut encoder = self.device.create_command_encoder(&Default::default())?;
                encoder.begin_encoding(Some(label))?;
                record(&mut encoder);
                let commands = encoder.end_encoding()?;
                self.submitted += 1;
                self.queue.submit_external(&ExternalSubmission {
                    command_buffers: &[&commands],
                    waits,
                    signals,
                    fence: Some((&self.fence, self.submitted)),
                })?;
                self.spent.push((encoder, commands));
            }
            Ok(self.submitted)
        }

        /// Waits for the fence to reach `value`.
        fn finish(&self, value: u64, what: &str) -> Result<()> {
            // SAFETY: the fence is this device's; `value` was submitted.
            if unsafe { self.device.wait(&self.fence, value, Some(TIMEOUT)) }? {
                Ok(())
            } else {
                Err(format!("{what}: Vulkan's work did not finish within {TIMEOUT:?}").into())
            }
        }

        fn fence_value(&self) -> Result<u64> {
            // SAFETY: the fence is this device's.
            Ok(unsafe { self.device.get_fence_value(&self.fence) }?)
        }

        /// A mappable buffer; with `bytes`, filled with them.
        ///
        /// # Safety
        /// The caller destroys it.
        unsafe fn staging(&self, len: u64, bytes: Option<&[u8]>) -> Result<vulkan::Buffer> {
            let (memory, usage) = match bytes {
                Some(_) => (
                    Memory::Upload,
                    wgt::BufferUsages::MAP_WRITE | wgt::BufferUsages::COPY_SRC,
                ),
                None => (
                    Memory::Readback,
                    wgt::BufferUsages::MAP_READ | wgt::BufferUsages::COPY_DST,
                ),
            };
            // SAFETY: live device; a new buffer the GPU does not use yet.
            unsafe {
                let buffer = self.device.create_buffer(&BufferDescriptor {
                    label: Some("staging"),
                    size: len,
                    usage,
                    memory,
                })?;
                if let Some(bytes) = bytes {
                    let map = self.device.map_buffer(&buffer)?;
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.ptr.as_ptr(), bytes.len());
                }
                Ok(buffer)
            }
        }

        /// A readback buffer's bytes.
        ///
        /// # Safety
        /// The GPU is done writing it.
        unsafe fn read(&self, buffer: &vulkan::Buffer, len: u64) -> Result<Vec<u8>> {
            // SAFETY: forwarded contract; the mapping holds `len` bytes.
            unsafe {
                let map = self.device.map_buffer(buffer)?;
                Ok(std::slice::from_raw_parts(map.ptr.as_ptr(), len as usize).to_vec())
            }
        }
    }

    /// Records the read-back of the shared buffer after the foreign API
    /// wrote it: acquire from `VK_QUEUE_FAMILY_EXTERNAL` (`shared` was left
    /// in `shared_was` by its release), copy it into `readback` (in
    /// `readback_was`) and make that readable by the host.
    ///
    /// # Safety
    /// As `CommandEncoder::copy_buffer_to_buffer`; both buffers are idle.
    unsafe fn record_read_back(
        e: &mut vulkan::CommandEncoder,
        shared: &vulkan::Buffer,
        shared_was: BufferUses,
        readback: &vulkan::Buffer,
        readback_was: BufferUses,
    ) {
        // SAFETY: forwarded contract.
        unsafe {
            e.transfer_ownership(
                OwnershipTransfer::Acquire,
                &[BufferBarrier::new(shared, shared_was, BufferUses::COPY_SRC)],
                &[],
            );
            e.transition_buffers(&[BufferBarrier::new(
                readback,
                readback_was,
                BufferUses::COPY_DST,
            )]);
            e.copy_buffer_to_buffer(shared, readback, &whole(BUFFER_LEN));
            e.transition_buffers(&[BufferBarrier::new(
                readback,
                BufferUses::COPY_DST,
                BufferUses::MAP_READ,
            )]);
        }
    }

    fn whole(len: u64) -> [BufferCopy; 1] {
        [BufferCopy {
            src_offset: 0,
            dst_offset: 0,
            size: len,
        }]
    }

    fn texture_region() -> [BufferTextureCopy; 1] {
        [BufferTextureCopy {
            buffer_layout: wgt::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(SIDE * 4),
                rows_per_image: Some(SIDE),
            },
            texture_base: Default::default(),
            size: wgt::Extent3d {
                width: SIDE,
                height: SIDE,
                depth_or_array_layers: 1,
            },
        }]
    }

    fn wait(
        s: &vulkan::ExternalSemaphore,
        value: u64,
    ) -> [SemaphoreWait<'_, vulkan::ExternalSemaphore>; 1] {
        [SemaphoreWait {
            semaphore: s,
            value,
            stages: Default::default(),
        }]
    }

    fn signal(
        s: &vulkan::ExternalSemaphore,
        value: u64,
    ) -> [SemaphoreSignal<'_, vulkan::ExternalSemaphore>; 1] {
        [SemaphoreSignal {
            semaphore: s,
            value,
            stages: Default::default(),
        }]
    }

    /// Opens the device and runs the whole exchange. On a failure the
    /// child is killed and the process exits at once: GPU work may still
    /// wait on a semaphore nobody will signal, so nothing is destroyed.
    fn session(o: &Options, script: &Path, exposed: ExposedAdapter<vulkan::Api>) -> Result<()> {
        let adapter = &exposed.adapter;
        let ht = ExternalHandleType::OpaqueFd;
        let buffer_desc = BufferDescriptor {
            label: Some("shared with CUDA"),
            size: BUFFER_LEN,
            usage: wgt::BufferUsages::COPY_SRC | wgt::BufferUsages::COPY_DST,
            memory: Memory::External(ExternalMemory::export(ht)),
        };
        let caps = adapter.external_buffer_capabilities(&buffer_desc, ht);
        if !caps.exportable {
            return Err(format!("opaque-fd buffers are not exportable: {caps:?}").into());
        }
        let texture_desc = TextureDescriptor {
            label: Some("shared with CUDA"),
            size: wgt::Extent3d {
                width: SIDE,
                height: SIDE,
                depth_or_array_layers: 1,
            },
            format: wgt::TextureFormat::Rgba8Unorm,
            usage: wgt::TextureUsages::COPY_SRC | wgt::TextureUsages::COPY_DST,
            memory: Memory::External(ExternalMemory::export(ht)),
            ..Default::default()
        };
        let texture_ok = adapter
            .external_texture_capabilities(&texture_desc, ht)
            .is_ok_and(|c| c.exportable);
        let sem_desc = ExternalSemaphoreDescriptor {
            handle_type: ExternalSemaphoreType::OpaqueFd,
            kind: SemaphoreKind::Timeline { initial_value: 0 },
        };
        let sem_ok = exposed
            .capabilities
            .hal_features
            .contains(HalFeatures::EXTERNAL_SEMAPHORE_FD)
            && adapter
                .external_semaphore_capabilities(&sem_desc)
                .exportable;
        let mut features = HalFeatures::EXTERNAL_MEMORY_FD;
        if sem_ok {
            features |= HalFeatures::EXTERNAL_SEMAPHORE_FD;
        }
        // SAFETY: the adapter is live; the device goes before it.
        let open = unsafe {
            adapter.open(&DeviceDescriptor {
                label: Some("cuda_interop"),
                required_hal_features: features,
                ..Default::default()
            })
        }?;
        // SAFETY: live device.
        let fence = unsafe { open.device.create_fence() }?;
        let mut gpu = Gpu {
            device: open.device,
            queue: open.queue,
            fence,
            submitted: 0,
            spent: Vec::new(),
        };
        let mut child: Option<Child> = None;
        // SAFETY: every object is this device's; on success each is
        // destroyed after the work using it finished.
        let result = unsafe {
            exchange(
                o,
                script,
                &exposed.info,
                &mut gpu,
                &mut child,
                &buffer_desc,
                texture_ok.then_some(&texture_desc),
                sem_ok.then_some(&sem_desc),
            )
        };
        if let Err(e) = result {
            if let Some(mut c) = child {
                let _ = c.kill();
                let _ = c.wait();
            }
            println!("FAIL: {e}");
            std::process::exit(1);
        }
        if let Some(mut c) = child {
            let status = c.wait()?;
            if !status.success() {
                return Err(format!("the CUDA side exited with {status}").into());
            }
        }
        // SAFETY: all work is done (every fence value waited for).
        unsafe {
            for (mut encoder, commands) in gpu.spent.drain(..) {
                encoder.reset_all([commands]);
                gpu.device.destroy_command_encoder(encoder);
            }
            gpu.device.destroy_fence(gpu.fence);
        }
        Ok(())
    }

    /// The exchange itself (see the module docs).
    ///
    /// # Safety
    /// `gpu` is live; on success everything made here is destroyed after
    /// the work using it finished.
    #[allow(clippy::too_many_arguments)]
    unsafe fn exchange(
        o: &Options,
        script: &Path,
        info: &AdapterInfo,
        gpu: &mut Gpu,
        child: &mut Option<Child>,
        buffer_desc: &BufferDescriptor,
        texture_desc: Option<&TextureDescriptor>,
        sem_desc: Option<&ExternalSemaphoreDescriptor>,
    ) -> Result<()> {
        // SAFETY (whole body): the caller's contract; each submission is
        // waited for before what it uses is read or destroyed.
        unsafe {
            let ht = ExternalHandleType::OpaqueFd;
            let tex_len = u64::from(SIDE) * u64::from(SIDE) * 4;
            let shared = gpu.device.create_buffer(buffer_desc)?;
            let texture = match texture_desc {
                Some(d) => Some(gpu.device.create_texture(d)?),
                None => None,
            };
            let sem = match sem_desc {
                Some(d) => Some(gpu.device.create_external_semaphore(d)?),
                None => None,
            };
            let upload = gpu.staging(BUFFER_LEN, Some(&pattern(BUFFER_LEN, 1)))?;
            let tex_upload = gpu.staging(tex_len, Some(&pattern(tex_len, 11)))?;
            let readback = gpu.staging(BUFFER_LEN, None)?;
            let tex_readback = gpu.staging(tex_len, None)?;

            // 1. Vulkan writes pattern(1) and pattern(11), and releases both.
            let done = gpu.submit("write", &[], &[], |e| {
                e.transition_buffers(&[
                    BufferBarrier::new(&upload, BufferUses::empty(), BufferUses::COPY_SRC),
                    BufferBarrier::new(&tex_upload, BufferUses::empty(), BufferUses::COPY_SRC),
                    BufferBarrier::new(&shared, BufferUses::empty(), BufferUses::COPY_DST),
                ]);
                e.copy_buffer_to_buffer(&upload, &shared, &whole(BUFFER_LEN));
                e.transfer_ownership(
                    OwnershipTransfer::Release,
                    &[BufferBarrier::new(
                        &shared,
                        BufferUses::COPY_DST,
                        BufferUses::COPY_DST,
                    )],
                    &[],
                );
                if let Some(t) = &texture {
                    e.transition_textures(&[TextureBarrier::new(
                        t,
                        TextureUses::UNINITIALIZED,
                        TextureUses::COPY_DST,
                    )]);
                    e.copy_buffer_to_texture(&tex_upload, t, &texture_region());
                    e.transition_textures(&[TextureBarrier::new(
                        t,
                        TextureUses::COPY_DST,
                        TextureUses::COPY_SRC,
                    )]);
                    e.transfer_ownership(
                        OwnershipTransfer::Release,
                        &[],
                        &[TextureBarrier::new(
                            t,
                            TextureUses::COPY_SRC,
                            TextureUses::COPY_SRC,
                        )],
                    );
                }
            })?;
            gpu.finish(done, "the first write")?;

            // 2. Export, and hand the fds to the child.
            let buffer_mem = gpu.device.export_buffer_memory(&shared, ht)?;
            describe_export("buffer", &buffer_mem);
            let texture_mem = match &texture {
                Some(t) => {
                    let m = gpu.device.export_texture_memory(t, ht)?;
                    describe_export("texture", &m);
                    Some(m)
                }
                None => {
                    println!("vulkan: RGBA8 textures are not exportable as opaque fds here");
                    None
                }
            };
            let sem_fd = match &sem {
                Some(s) => {
                    let fd = gpu.device.export_semaphore(s)?;
                    println!(
                        "vulkan: exported a timeline semaphore, close-on-exec {:?}",
                        close_on_exec(&fd)
                    );
                    Some(fd)
                }
                None => {
                    println!("vulkan: timeline semaphores are not exportable here");
                    None
                }
            };
            let mut args = vec![
                "--device-uuid".to_string(),
                hex(&info.device_uuid),
                "--buffer-fd".into(),
                buffer_mem.fd.as_raw_fd().to_string(),
                "--buffer-size".into(),
                buffer_mem.size.to_string(),
                "--buffer-len".into(),
                BUFFER_LEN.to_string(),
                "--dedicated".into(),
                u8::from(buffer_mem.dedicated).to_string(),
                "--spin-ms".into(),
                SPIN_MS.to_string(),
            ];
            make_inheritable(&buffer_mem.fd)?;
            if let Some(m) = &texture_mem {
                make_inheritable(&m.fd)?;
                args.extend([
                    "--texture-fd".into(),
                    m.fd.as_raw_fd().to_string(),
                    "--texture-size".into(),
                    m.size.to_string(),
                    "--width".into(),
                    SIDE.to_string(),
                    "--height".into(),
                    SIDE.to_string(),
                ]);
            }
            if let Some(fd) = &sem_fd {
                make_inheritable(fd)?;
                args.extend(["--semaphore-fd".into(), fd.as_raw_fd().to_string()]);
            }
            let spawned = spawn(o, script, &args)?.ok_or("python vanished")?;
            // The child has its copies; the parent's go now.
            drop(buffer_mem);
            drop(texture_mem);
            drop(sem_fd);
            let c = child.insert(spawned);
            let mut talk = Talk {
                to: c.stdin.take().ok_or("no pipe to the child")?,
                from: BufReader::new(c.stdout.take().ok_or("no pipe from the child")?),
            };

            // Buffer: CUDA checked pattern(1), wrote pattern(2).
            let first = talk.expect("")?;
            if let Some(reason) = first.strip_prefix("SKIP") {
                return Err(format!(
                    "the CUDA probe passed, then the CUDA side skipped: {}",
                    reason.trim()
                )
                .into());
            }
            talk.expect("BUFFER done")?;
            let done = gpu.submit("read buffer", &[], &[], |e| {
                record_read_back(
                    e,
                    &shared,
                    BufferUses::COPY_DST,
                    &readback,
                    BufferUses::empty(),
                );
                // CUDA writes it again in step 3.
                e.transfer_ownership(
                    OwnershipTransfer::Release,
                    &[BufferBarrier::new(
                        &shared,
                        BufferUses::COPY_SRC,
                        BufferUses::COPY_SRC,
                    )],
                    &[],
                );
            })?;
            gpu.finish(done, "reading the buffer")?;
            compare(
                &gpu.read(&readback, BUFFER_LEN)?,
                2,
                "buffer after CUDA's kernel",
            )?;

            // Texture: CUDA checked pattern(11), wrote pattern(12).
            talk.send("TEXTURE")?;
            let answer = talk.expect("TEXTURE")?;
            match (&texture, answer.as_str()) {
                (Some(t), a) if a.starts_with("TEXTURE done") => {
                    let done = gpu.submit("read texture", &[], &[], |e| {
                        e.transfer_ownership(
                            OwnershipTransfer::Acquire,
                            &[],
                            &[TextureBarrier::new(
                                t,
                                TextureUses::COPY_SRC,
                                TextureUses::COPY_SRC,
                            )],
                        );
                        e.transition_buffers(&[BufferBarrier::new(
                            &tex_readback,
                            BufferUses::empty(),
                            BufferUses::COPY_DST,
                        )]);
                        e.copy_texture_to_buffer(
                            t,
                            TextureUses::COPY_SRC,
                            &tex_readback,
                            &texture_region(),
                        );
                        e.transition_buffers(&[BufferBarrier::new(
                            &tex_readback,
                            BufferUses::COPY_DST,
                            BufferUses::MAP_READ,
                        )]);
                    })?;
                    gpu.finish(done, "reading the texture")?;
                    compare(
                        &gpu.read(&tex_readback, tex_len)?,
                        12,
                        "texture after CUDA's kernel",
                    )?;
                }
                (_, a) => println!("vulkan: texture part not run ({a})"),
            }

            if let Some(s) = &sem {
                semaphores(gpu, &mut talk, s, &shared, &upload, &readback)?;
            } else {
                talk.expect("SEMAPHORE none")?;
            }
            drop(talk);

            // Everything above was waited for.
            gpu.device.destroy_buffer(tex_readback);
            gpu.device.destroy_buffer(readback);
            gpu.device.destroy_buffer(tex_upload);
            gpu.device.destroy_buffer(upload);
            if let Some(t) = texture {
                gpu.device.destroy_texture(t);
            }
            gpu.device.destroy_buffer(shared);
            if let Some(s) = sem {
                gpu.device.destroy_external_semaphore(s);
            }
        }
        Ok(())
    }

    /// Steps 3 and 4: the timeline semaphore orders work both ways, and
    /// each waiter is seen waiting before its signal.
    ///
    /// # Safety
    /// As [`exchange`]; the buffer is released to the outside world in
    /// `COPY_SRC`, the upload buffer is in `COPY_SRC`, the readback buffer
    /// in `MAP_READ`; the semaphore is at 0 with nothing pending.
    unsafe fn semaphores(
        gpu: &mut Gpu,
        talk: &mut Talk,
        sem: &vulkan::ExternalSemaphore,
        shared: &vulkan::Buffer,
        upload: &vulkan::Buffer,
        readback: &vulkan::Buffer,
    ) -> Result<()> {
        // SAFETY (whole body): forwarded contract; see each step.
        unsafe {
            talk.expect("SEMAPHORE imported")?;

            // 3. CUDA -> Vulkan: Vulkan's queue waits for 1, then reads.
            let done = gpu.submit("wait for CUDA (1), read", &wait(sem, 1), &[], |e| {
                record_read_back(
                    e,
                    shared,
                    BufferUses::COPY_SRC,
                    readback,
                    BufferUses::MAP_READ,
                );
            })?;
            talk.send("A")?;
            talk.expect("A enqueued")?;
            let pending = gpu.fence_value()? < done;
            let value = gpu.device.semaphore_value(sem)?;
            println!(
                "vulkan: while CUDA spins: our submission pending {pending}, semaphore at {value}"
            );
            if !pending || value != 0 {
                return Err(format!(
                    "Vulkan did not wait for CUDA: submission pending {pending}, semaphore \
                     {value}, while CUDA still spins for {SPIN_MS} ms"
                )
                .into());
            }
            let start = Instant::now();
            gpu.finish(done, "waiting for CUDA's signal")?;
            println!(
                "vulkan: our queue's wait for CUDA's 1 ended after {:?}",
                start.elapsed()
            );
            compare(
                &gpu.read(readback, BUFFER_LEN)?,
                3,
                "buffer CUDA wrote after its spin",
            )?;
            talk.expect("A done")?;

            // 4. Vulkan -> CUDA: CUDA's stream waits for 3; Vulkan's queue
            // waits for the host's 2, writes pattern(4), signals 3.
            talk.send("B")?;
            let line = talk.expect("B waiting")?;
            if !line.contains("ready=0") {
                return Err(
                    format!("CUDA's stream did not wait for Vulkan's signal: {line}").into(),
                );
            }
            let fresh = pattern(BUFFER_LEN, 4);
            let map = gpu.device.map_buffer(upload)?;
            std::ptr::copy_nonoverlapping(fresh.as_ptr(), map.ptr.as_ptr(), fresh.len());
            let done = gpu.submit(
                "wait for the host (2), write, signal 3",
                &wait(sem, 2),
                &signal(sem, 3),
                |e| {
                    // Vulkan acquired the buffer in step 3 and still owns it.
                    e.transition_buffers(&[BufferBarrier::new(
                        shared,
                        BufferUses::COPY_SRC,
                        BufferUses::COPY_DST,
                    )]);
                    e.copy_buffer_to_buffer(upload, shared, &whole(BUFFER_LEN));
                    e.transfer_ownership(
                        OwnershipTransfer::Release,
                        &[BufferBarrier::new(
                            shared,
                            BufferUses::COPY_DST,
                            BufferUses::COPY_DST,
                        )],
                        &[],
                    );
                },
            )?;
            std::thread::sleep(Duration::from_millis(HOLD_MS));
            let pending = gpu.fence_value()? < done;
            let value = gpu.device.semaphore_value(sem)?;
            println!(
                "vulkan: after {HOLD_MS} ms: our submission pending {pending}, semaphore at {value}"
            );
            if !pending || value != 1 {
                return Err(format!(
                    "before the host signal: submission pending {pending}, semaphore {value} \
                     (expected pending, 1)"
                )
                .into());
            }
            gpu.device.signal_semaphore(sem, 2)?;
            gpu.finish(done, "our write after the host's signal")?;
            talk.expect("B done")?;
            // CUDA signals 4 after its kernel: the host sees it, the queue waits for it.
            if !gpu.device.wait_semaphore(sem, 4, Some(TIMEOUT))? {
                return Err("the host never saw CUDA's 4".into());
            }
            let done = gpu.submit("wait for CUDA (4), read", &wait(sem, 4), &[], |e| {
                record_read_back(
                    e,
                    shared,
                    BufferUses::COPY_DST,
                    readback,
                    BufferUses::MAP_READ,
                );
            })?;
            gpu.finish(done, "the last read")?;
            compare(
                &gpu.read(readback, BUFFER_LEN)?,
                5,
                "buffer CUDA wrote after waiting for Vulkan",
            )?;
            println!(
                "vulkan: semaphore at {} at the end",
                gpu.device.semaphore_value(sem)?
            );
            talk.send("END")?;
        }
        Ok(())
    }
}
