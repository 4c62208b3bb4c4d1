#!/usr/bin/env python3
"""Crude user-space stacks of a hung process without ptrace (a debugger
attached to NVIDIA's hung threads has left processes unkillable): for each
thread, the stack pointer from /proc/PID/task/TID/syscall, then every word
of the next 256 KiB of its stack that points into an executable mapping,
printed as mapping+offset. Return addresses among them give the calls in
flight; resolve the binary's with addr2line against the unstripped build.

    stack-scan.py PID
"""
import sys

pid = sys.argv[1]
maps = []
with open(f"/proc/{pid}/maps") as f:
    for line in f:
        parts = line.split()
        if len(parts) < 6 or "x" not in parts[1]:
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        offset = int(parts[2], 16)
        maps.append((lo, hi, offset, parts[5].rsplit("/", 1)[-1]))

def where(addr):
    for lo, hi, offset, name in maps:
        if lo <= addr < hi:
            return f"{name}+{addr - lo + offset:#x}"
    return None

import os
mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
    base = f"/proc/{pid}/task/{tid}"
    comm = open(f"{base}/comm").read().strip()
    wchan = open(f"{base}/wchan").read().strip()
    fields = open(f"{base}/syscall").read().split()
    print(f"== thread {tid} {comm} wchan={wchan} syscall={' '.join(fields[:1])}")
    if len(fields) < 3:
        continue
    sp = int(fields[-2], 16)
    pc = int(fields[-1], 16)
    print(f"   pc {where(pc)}")
    try:
        data = os.pread(mem, 256 * 1024, sp)
    except OSError:
        try:
            data = os.pread(mem, 32 * 1024, sp)
        except OSError as e:
            print(f"   stack unreadable: {e}")
            continue
    seen = 0
    for i in range(0, len(data) - 7, 8):
        w = int.from_bytes(data[i:i + 8], "little")
        name = where(w)
        if name:
            print(f"   sp+{i:#x} {name}")
            seen += 1
            if seen >= 120:
                break
