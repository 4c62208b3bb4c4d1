#!/usr/bin/env python3
"""The CUDA side of keel-hal's CUDA interop test (examples/cuda_interop.rs).

The example starts this script with file descriptors keel-hal exported
(a buffer's memory, a texture's memory, a timeline semaphore), made
inheritable by the example on purpose (keel-hal's fds are close-on-exec),
and their numbers on the command line. The script

* picks the CUDA device whose UUID is the Vulkan adapter's
  (`AdapterInfo::device_uuid`),
* imports the memory (`cudaImportExternalMemory`, opaque fd, the exported
  size, `cudaExternalMemoryDedicated`), maps it
  (`cudaExternalMemoryGetMappedBuffer`, `cudaExternalMemoryGetMappedMipmappedArray`),
  checks what Vulkan wrote and rewrites it with CUDA kernels (CuPy), and
* imports the semaphore (`cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd`)
  and orders GPU work both ways with it.

It talks to the example over standard input and output, one line each
way per step (see `main`). Lines it prints start with a keyword: `SKIP`
(no CUDA here: the example skips), `FAIL` (the test failed), or a step's
answer. `--probe` only says whether CUDA is usable.

Ownership of the fds: on a successful `cudaImportExternalMemory` or
`cudaImportExternalSemaphore` of an fd, CUDA owns it (the script must not
close it); on a failed import, and for every fd it does not import, the
script closes it.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

# A hung GPU wait must not hang the test: SIGALRM's default action ends
# the process even while it is blocked inside a CUDA call.
WATCHDOG_SECONDS = 120


def say(*words):
    print(" ".join(str(w) for w in words), flush=True)


class Skip(Exception):
    """CUDA is not usable here; the example skips."""


class Fail(Exception):
    """The test failed."""


def load_cudart():
    """The CUDA runtime bindings: `cuda.bindings.runtime` (cuda-bindings
    12.6 and later) or the older `cuda.cudart`."""
    try:
        from cuda.bindings import runtime as cudart  # noqa: PLC0415

        return cudart
    except ImportError as first:
        try:
            from cuda import cudart  # noqa: PLC0415

            return cudart
        except ImportError:
            raise Skip(f"no CUDA Python bindings (cuda-bindings): {first}") from None


def load_cupy():
    try:
        import cupy  # noqa: PLC0415

        return cupy
    except ImportError as e:
        raise Skip(f"no CuPy: {e}") from None


class Cuda:
    """The runtime bindings with error checking."""

    def __init__(self):
        self.rt = load_cudart()

    def call(self, name, *args):
        result = getattr(self.rt, name)(*args)
        if not isinstance(result, tuple):
            result = (result,)
        err, rest = result[0], result[1:]
        if err != self.rt.cudaError_t.cudaSuccess:
            raise Fail(f"{name} failed: {self.error_name(err)}")
        if len(rest) == 0:
            return None
        return rest[0] if len(rest) == 1 else rest

    def error_name(self, err):
        try:
            _, text = self.rt.cudaGetErrorString(err)
            text = text.decode() if isinstance(text, (bytes, bytearray)) else str(text)
        except Exception:  # noqa: BLE001 - only for the message
            text = "?"
        return f"{err} ({text})"


def uuid_bytes(value):
    """16 UUID bytes from whatever the bindings return (bytes, str, a list
    of ints, an object with `.bytes`), or None."""
    if value is None:
        return None
    value = getattr(value, "bytes", value)
    if isinstance(value, str):
        value = value.encode("latin-1")
    try:
        raw = bytes(value) if isinstance(value, (bytes, bytearray)) else bytes(int(x) & 0xFF for x in value)
    except (TypeError, ValueError):
        return None
    return raw if len(raw) == 16 else None


def smi_uuids():
    """`nvidia-smi`'s GPU UUIDs by index (GPU-xxxxxxxx-xxxx-...), if any."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    uuids = []
    for line in out.splitlines():
        hexpart = line.strip().removeprefix("GPU-").replace("-", "")
        try:
            uuids.append(bytes.fromhex(hexpart))
        except ValueError:
            uuids.append(None)
    return uuids


def device_uuids(cuda, cupy, index):
    """Every UUID the installed tools report for CUDA device `index`."""
    found = {}
    try:
        found["cupy"] = uuid_bytes(cupy.cuda.runtime.getDeviceProperties(index).get("uuid"))
    except Exception:  # noqa: BLE001 - one source of several
        pass
    try:
        found["cudaGetDeviceProperties"] = uuid_bytes(cuda.call("cudaGetDeviceProperties", index).uuid)
    except Exception:  # noqa: BLE001
        pass
    return {k: v for k, v in found.items() if v is not None}


def pick_device(cuda, cupy, want_hex):
    """The CUDA device with the Vulkan adapter's UUID."""
    try:
        count = cuda.call("cudaGetDeviceCount")
    except Fail as e:
        raise Skip(f"no usable CUDA device: {e}") from None
    if not count:
        raise Skip("CUDA sees no device")
    want = bytes.fromhex(want_hex)
    smi = smi_uuids()
    seen = []
    for i in range(count):
        uuids = device_uuids(cuda, cupy, i)
        if count == len(smi) and smi[i] is not None:
            uuids.setdefault("nvidia-smi", smi[i])
        for source, u in uuids.items():
            if u == want:
                return i, source
        seen.append(f"device {i}: " + ", ".join(f"{s} {u.hex()}" for s, u in uuids.items()))
    raise Fail(f"no CUDA device has the Vulkan device UUID {want_hex} ({'; '.join(seen) or 'no UUID read'})")


KERNELS = r"""
// The byte pattern both sides use: (i * 7 + 3 + seed * 31) mod 251.
__device__ unsigned char pattern(unsigned long long i, unsigned int seed) {
    return (unsigned char)((i * 7ull + 3ull + seed * 31ull) % 251ull);
}

// Counts bytes that are not pattern(expect) into *bad, then writes pattern(write).
extern "C" __global__ void check_and_write(unsigned char* bytes, unsigned long long n,
                                           unsigned int expect, unsigned int write,
                                           unsigned long long* bad) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        if (bytes[i] != pattern(i, expect)) {
            atomicAdd(bad, 1ull);
        }
        bytes[i] = pattern(i, write);
    }
}

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Keeps the GPU busy for `ns` nanoseconds (one thread).
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long start = now_ns();
    while (now_ns() - start < ns) {
    }
}
"""


def host_pattern(n, seed):
    return bytes((i * 7 + 3 + seed * 31) % 251 for i in range(n))


class Gpu:
    """The chosen device, a stream, and the kernels."""

    def __init__(self, cuda, cupy, device):
        self.cuda, self.cupy = cuda, cupy
        cupy.cuda.Device(device).use()
        cuda.call("cudaSetDevice", device)
        self.stream = cupy.cuda.Stream(non_blocking=True)
        module = cupy.RawModule(code=KERNELS)
        self.check_and_write_kernel = module.get_function("check_and_write")
        self.spin_kernel = module.get_function("spin")

    def view(self, ptr, size, owner):
        """A CuPy byte array over device memory CUDA does not own through CuPy."""
        cp = self.cupy
        mem = cp.cuda.UnownedMemory(int(ptr), int(size), owner)
        return cp.ndarray((int(size),), dtype=cp.uint8, memptr=cp.cuda.MemoryPointer(mem, 0))

    def check_and_write(self, array, expect, write):
        """Enqueues the kernel on the stream; returns the device counter of bad bytes."""
        cp = self.cupy
        with self.stream:
            bad = cp.zeros((1,), dtype=cp.uint64)
            self.check_and_write_kernel(
                (256,),
                (256,),
                (array, cp.uint64(array.size), cp.uint32(expect), cp.uint32(write), bad),
            )
        return bad

    def spin(self, ms):
        with self.stream:
            self.spin_kernel((1,), (1,), (self.cupy.uint64(ms * 1_000_000),))

    def sync(self):
        self.stream.synchronize()


def close_quietly(fd):
    if fd is not None and fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass


def import_memory(cuda, fd, size, dedicated):
    """cudaImportExternalMemory of an opaque fd. CUDA owns the fd on success;
    on failure it is closed here."""
    rt = cuda.rt
    desc = rt.cudaExternalMemoryHandleDesc()
    desc.type = rt.cudaExternalMemoryHandleType.cudaExternalMemoryHandleTypeOpaqueFd
    desc.handle.fd = fd
    desc.size = size
    # cudaExternalMemoryDedicated is 0x1 in driver_types.h.
    desc.flags = int(getattr(rt, "cudaExternalMemoryDedicated", 1)) if dedicated else 0
    try:
        return cuda.call("cudaImportExternalMemory", desc)
    except Fail:
        close_quietly(fd)
        raise


def import_semaphore(cuda, fd):
    """cudaImportExternalSemaphore of a Vulkan timeline semaphore's opaque fd."""
    rt = cuda.rt
    desc = rt.cudaExternalSemaphoreHandleDesc()
    desc.type = rt.cudaExternalSemaphoreHandleType.cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
    desc.handle.fd = fd
    desc.flags = 0
    try:
        return cuda.call("cudaImportExternalSemaphore", desc)
    except Fail:
        close_quietly(fd)
        raise


def signal_async(cuda, sem, value, stream):
    params = cuda.rt.cudaExternalSemaphoreSignalParams()
    params.params.fence.value = value
    params.flags = 0
    cuda.call("cudaSignalExternalSemaphoresAsync", [sem], [params], 1, stream.ptr)


def wait_async(cuda, sem, value, stream):
    params = cuda.rt.cudaExternalSemaphoreWaitParams()
    params.params.fence.value = value
    params.flags = 0
    cuda.call("cudaWaitExternalSemaphoresAsync", [sem], [params], 1, stream.ptr)


def expect_line(word):
    line = sys.stdin.readline()
    if not line:
        raise Fail(f"the example closed the pipe before {word!r}")
    if line.split()[:1] != [word]:
        raise Fail(f"expected {word!r} from the example, got {line.strip()!r}")
    return line.split()[1:]


def buffer_part(gpu, cuda, args):
    """Vulkan wrote pattern(1): check it with a kernel, write pattern(2), and
    confirm with cudaMemcpy."""
    ext = import_memory(cuda, args.buffer_fd, args.buffer_size, args.dedicated)
    desc = cuda.rt.cudaExternalMemoryBufferDesc()
    desc.offset = 0
    desc.size = args.buffer_size
    desc.flags = 0
    ptr = cuda.call("cudaExternalMemoryGetMappedBuffer", ext, desc)
    array = gpu.view(ptr, args.buffer_len, ext)
    bad = gpu.check_and_write(array, 1, 2)
    gpu.sync()
    bad = int(bad.get()[0])
    if bad:
        raise Fail(f"buffer: {bad} of {args.buffer_len} bytes are not what Vulkan wrote")
    host = bytearray(args.buffer_len)
    hptr = memoryview_ptr(host)
    cuda.call(
        "cudaMemcpy", hptr, int(ptr), args.buffer_len, cuda.rt.cudaMemcpyKind.cudaMemcpyDeviceToHost
    )
    if bytes(host) != host_pattern(args.buffer_len, 2):
        raise Fail("buffer: cudaMemcpy read back other bytes than the kernel wrote")
    say("BUFFER done", f"checked {args.buffer_len} bytes written by Vulkan, rewrote them")
    return ext, ptr, array


def memoryview_ptr(buf):
    """The address of a bytearray's storage (for cudaMemcpy)."""
    import ctypes  # noqa: PLC0415

    return ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))


def texture_part(gpu, cuda, args):
    """Vulkan wrote pattern(11) into a width x height RGBA8 texture: map its
    memory as a CUDA mipmapped array, copy level 0 out, check and rewrite
    with a kernel (pattern(12)), copy it back."""
    rt = cuda.rt
    try:
        ext = import_memory(cuda, args.texture_fd, args.texture_size, args.dedicated)
    except Fail as e:
        say("TEXTURE unsupported", f"cudaImportExternalMemory: {e}")
        return None
    desc = rt.cudaExternalMemoryMipmappedArrayDesc()
    desc.offset = 0
    desc.formatDesc.x = 8
    desc.formatDesc.y = 8
    desc.formatDesc.z = 8
    desc.formatDesc.w = 8
    desc.formatDesc.f = rt.cudaChannelFormatKind.cudaChannelFormatKindUnsigned
    desc.extent.width = args.width
    desc.extent.height = args.height
    desc.extent.depth = 0
    desc.flags = 0
    desc.numLevels = 1
    if (desc.extent.width, desc.extent.height, desc.formatDesc.w) != (args.width, args.height, 8):
        raise Fail("these CUDA bindings do not let nested struct fields be set")
    try:
        mipmap = cuda.call("cudaExternalMemoryGetMappedMipmappedArray", ext, desc)
    except Fail as e:
        cuda.call("cudaDestroyExternalMemory", ext)
        say("TEXTURE unsupported", f"cudaExternalMemoryGetMappedMipmappedArray: {e}")
        return None
    try:
        level0 = cuda.call("cudaGetMipmappedArrayLevel", mipmap, 0)
        row = args.width * 4
        n = row * args.height
        staging = gpu.cupy.empty((n,), dtype=gpu.cupy.uint8)
        kind = rt.cudaMemcpyKind.cudaMemcpyDeviceToDevice
        cuda.call("cudaMemcpy2DFromArray", staging.data.ptr, row, level0, 0, 0, row, args.height, kind)
        # The copy ran on the legacy default stream, which the kernel's
        # non-blocking stream does not wait for.
        cuda.call("cudaDeviceSynchronize")
        bad = gpu.check_and_write(staging, 11, 12)
        gpu.sync()
        bad = int(bad.get()[0])
        if bad:
            raise Fail(f"texture: {bad} of {n} bytes are not what Vulkan wrote")
        cuda.call("cudaMemcpy2DToArray", level0, 0, 0, staging.data.ptr, row, row, args.height, kind)
        cuda.call("cudaDeviceSynchronize")
    finally:
        cuda.call("cudaFreeMipmappedArray", mipmap)
        cuda.call("cudaDestroyExternalMemory", ext)
    say("TEXTURE done", f"checked {args.width}x{args.height} RGBA8 texels written by Vulkan, rewrote them")
    return True


def semaphore_part(gpu, cuda, args, array):
    """Both directions on the GPU with one timeline semaphore (values 1..4)."""
    sem = import_semaphore(cuda, args.semaphore_fd)
    say("SEMAPHORE imported", "timeline, opaque fd")
    try:
        # A: CUDA -> Vulkan. Vulkan's queue already waits for 1. CUDA spins,
        # then checks pattern(2) and writes pattern(3), then signals 1.
        expect_line("A")
        gpu.spin(args.spin_ms)
        bad_a = gpu.check_and_write(array, 2, 3)
        signal_async(cuda, sem, 1, gpu.stream)
        say("A enqueued", f"spin {args.spin_ms} ms, write, signal 1")
        t0 = time.monotonic()
        gpu.sync()
        if int(bad_a.get()[0]):
            raise Fail("A: the buffer was not what CUDA wrote before")
        say("A done", f"stream finished after {1000 * (time.monotonic() - t0):.0f} ms")

        # B: Vulkan -> CUDA. CUDA's stream waits for 3 (Vulkan signals it
        # after its host was told to signal 2 and its copy of pattern(4)),
        # then checks pattern(4), writes pattern(5), signals 4.
        expect_line("B")
        wait_async(cuda, sem, 3, gpu.stream)
        bad_b = gpu.check_and_write(array, 4, 5)
        signal_async(cuda, sem, 4, gpu.stream)
        # Nothing has signalled 3 yet (Vulkan waits for the host's 2, which
        # waits for this line): the stream must be waiting.
        err = cuda.rt.cudaStreamQuery(gpu.stream.ptr)
        err = err[0] if isinstance(err, tuple) else err
        ready = err == cuda.rt.cudaError_t.cudaSuccess
        if not ready and err != cuda.rt.cudaError_t.cudaErrorNotReady:
            raise Fail(f"cudaStreamQuery: {cuda.error_name(err)}")
        say("B waiting", f"ready={int(ready)}")
        t0 = time.monotonic()
        gpu.sync()
        waited = time.monotonic() - t0
        bad = int(bad_b.get()[0])
        if bad:
            raise Fail(f"B: {bad} bytes were not what Vulkan wrote after its wait")
        say("B done", f"the stream waited {1000 * waited:.0f} ms for Vulkan's signal")
        expect_line("END")
    finally:
        # Every wait and signal has completed (the stream was synchronised),
        # or the process is ending anyway.
        gpu.sync()
        cuda.call("cudaDestroyExternalSemaphore", sem)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--probe", action="store_true", help="only say whether CUDA is usable")
    p.add_argument("--device-uuid", help="the Vulkan adapter's device UUID, hex")
    p.add_argument("--buffer-fd", type=int, default=-1)
    p.add_argument("--buffer-size", type=int, default=0, help="ExportedMemory::size")
    p.add_argument("--buffer-len", type=int, default=0, help="bytes of the buffer")
    p.add_argument("--dedicated", type=int, default=1, help="ExportedMemory::dedicated")
    p.add_argument("--texture-fd", type=int, default=-1)
    p.add_argument("--texture-size", type=int, default=0)
    p.add_argument("--width", type=int, default=0)
    p.add_argument("--height", type=int, default=0)
    p.add_argument("--semaphore-fd", type=int, default=-1)
    p.add_argument("--spin-ms", type=int, default=500)
    return p.parse_args()


def main():
    args = parse()
    fds = [args.buffer_fd, args.texture_fd, args.semaphore_fd]
    signal.alarm(WATCHDOG_SECONDS)
    try:
        cuda = Cuda()
        cupy = load_cupy()
        if args.probe:
            try:
                count = cuda.call("cudaGetDeviceCount")
            except Fail as e:
                raise Skip(f"CUDA is not usable here: {e}") from None
            if not count:
                raise Skip("CUDA sees no device")
            say("OK", f"{count} CUDA device(s), CuPy {cupy.__version__}")
            return 0
        device, source = pick_device(cuda, cupy, args.device_uuid)
        say("DEVICE", device, f"(UUID {args.device_uuid} matched through {source})")
        gpu = Gpu(cuda, cupy, device)
        # Each import takes its fd: CUDA's on success, closed on failure.
        fds[0] = -1
        ext, ptr, array = buffer_part(gpu, cuda, args)
        try:
            expect_line("TEXTURE")
            if args.texture_fd >= 0:
                fds[1] = -1
                texture_part(gpu, cuda, args)
            else:
                say("TEXTURE none")
            if args.semaphore_fd >= 0:
                fds[2] = -1
                semaphore_part(gpu, cuda, args, array)
            else:
                say("SEMAPHORE none")
        finally:
            del array
            cuda.call("cudaFree", ptr)
            cuda.call("cudaDestroyExternalMemory", ext)
        return 0
    except Skip as e:
        say("SKIP", e)
        return 0
    except Fail as e:
        say("FAIL", e)
        return 1
    except Exception as e:  # noqa: BLE001 - reported to the example
        say("FAIL", f"{type(e).__name__}: {e}")
        return 1
    finally:
        for fd in fds:
            close_quietly(fd)


if __name__ == "__main__":
    sys.exit(main())
