#!/usr/bin/env python3
"""Instructions per function of a bare-metal image under QEMU, from its execution log.

Run the image with the translation and execution log, e.g. for the firmware example:
  timeout 40 qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none -serial null \
    -icount shift=0 -semihosting-config enable=on,target=native \
    -d in_asm,exec,nochain -D /tmp/qemu.log -kernel build/cortex-m/bin/firmware_ctx128.elf
then:
  tools/scripts/cortex-m-profile.py /tmp/qemu.log [--from einfer_prefill] [--top 30]

`in_asm` gives each translated block's instructions once, `exec` (with `nochain`, so every block
execution is logged) each execution; their product per block, summed per function, is the
instruction count. --from skips everything before the first block of that function (start-up: CRC
check, RoPE table). The log grows by ~10 MB per million instructions: a time limit is enough.
"""
import argparse
import collections
import re

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("log")
parser.add_argument("--from", dest="start", default="einfer_prefill")
parser.add_argument("--top", type=int, default=30)
args = parser.parse_args()

block_len, block_fn, runs = {}, {}, collections.Counter()
block, fn, count, started = None, "?", 0, not args.start
exec_pc = re.compile(r"\[[0-9a-f]+/([0-9a-f]+)/")
with open(args.log, errors="replace") as log:
    for line in log:
        if line.startswith("IN:"):
            fn, block, count = line[3:].strip(), None, 0
        elif line.startswith("0x") and ":" in line[:12]:
            pc = int(line[2:10], 16)
            block = pc if block is None else block
            count += 1  # a block translated again (after a flush) is counted afresh
            block_len[block] = count
            block_fn[block] = fn
        else:
            block = None
            if line.startswith("Trace"):
                started = started or args.start in line
                if started:
                    runs[int(exec_pc.search(line).group(1), 16)] += 1

per_fn = collections.Counter()
for pc, n in runs.items():
    per_fn[block_fn.get(pc, "?")] += n * block_len.get(pc, 0)
total = sum(per_fn.values()) or 1
for name, n in per_fn.most_common(args.top):
    print(f"{n:12d} {100.0 * n / total:5.1f}%  {name}")
print(f"{total:12d} instructions in total")
