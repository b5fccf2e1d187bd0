#!/usr/bin/env python3
"""The wgmma loops of each kernel in SASS: for every backward branch whose body issues HGMMA, the body's length, its
HGMMAs, how many of its instructions move a vector register to a uniform one (R2UR) and how many run on the uniform
datapath (U...). An MMA loop whose wgmma descriptors pass through R2UR keeps its pipeline state in vector registers:
the hooked kernels did, costing 15-32 instructions per k-block, until their k-block counts were made warp-uniform
(runtime/include/cusync/warp_uniform.cuh; docs/GPU_NOTES.md).

  scripts/sass_mma_loops.py build/.../instance.cu.o      # runs cuobjdump -sass on an object or executable
  scripts/sass_mma_loops.py --sass dump.sass             # reads cuobjdump -sass output
  --kernel REGEX       only kernels whose (mangled) name matches
  --require-uniform    exit 1 when some wgmma loop has an R2UR (a check for a build: no loop off the uniform datapath)

Exit 0, 1 (--require-uniform failed), 2 (bad command line, unreadable input, no kernel with a wgmma loop, no
cuobjdump).
"""
import argparse
import re
import shutil
import subprocess
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);")
BRANCH_TARGET = re.compile(r"\bBRA\s+(0x[0-9a-f]+)")


def kernels(sass):
    """(name, [(address, text)]) of each function in cuobjdump -sass output."""
    for chunk in re.split(r"\n\s*Function : ", sass)[1:]:
        name = chunk.split("\n", 1)[0].strip()
        yield name, [(int(a, 16), text.strip()) for a, text in INSTRUCTION.findall(chunk)]


def mma_loops(instructions):
    """The innermost loops that issue HGMMA: backward branches whose body holds an HGMMA and no shorter such loop.
    (first index, last index, body texts), in address order."""
    index_of = {address: i for i, (address, _) in enumerate(instructions)}
    loops = []
    for i, (address, text) in enumerate(instructions):
        match = BRANCH_TARGET.search(text)
        if match and int(match.group(1), 16) < address and int(match.group(1), 16) in index_of:
            first = index_of[int(match.group(1), 16)]
            body = [t for _, t in instructions[first:i + 1]]
            if any(opcode(t).startswith("HGMMA") for t in body):
                loops.append((first, i, body))
    # Not loops: the out-of-line retries of a barrier wait, placed after the kernel's body, branch back into a loop
    # (their range starts inside it and ends past it).
    loops = [loop for loop in loops if not any(o[0] < loop[0] <= o[1] < loop[1] for o in loops)]
    innermost = [loop for loop in loops
                 if not any(other is not loop and loop[0] <= other[0] and other[1] <= loop[1] for other in loops)]
    return sorted(innermost)


def opcode(text):
    words = text.split()
    return words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary", nargs="?", help="object file or executable (cuobjdump -sass is run on it)")
    parser.add_argument("--sass", help="a file of cuobjdump -sass output, instead of a binary")
    parser.add_argument("--kernel", default="", help="only kernels whose name matches this regular expression")
    parser.add_argument("--require-uniform", action="store_true", help="exit 1 when a wgmma loop has an R2UR")
    args = parser.parse_args(argv)
    if (args.binary is None) == (args.sass is None):
        parser.error("give a binary or --sass FILE, not both or neither")
    try:
        if args.sass:
            sass = open(args.sass).read()
        else:
            cuobjdump = shutil.which("cuobjdump")
            if cuobjdump is None:
                print("sass_mma_loops: cuobjdump is not on PATH", file=sys.stderr)
                return 2
            done = subprocess.run([cuobjdump, "-sass", args.binary], capture_output=True, text=True)
            if done.returncode != 0:
                print(f"sass_mma_loops: cuobjdump -sass {args.binary}: {done.stderr.strip()}", file=sys.stderr)
                return 2
            sass = done.stdout
    except OSError as error:
        print(f"sass_mma_loops: {error}", file=sys.stderr)
        return 2
    try:
        pattern = re.compile(args.kernel)
    except re.error as error:
        print(f"sass_mma_loops: --kernel '{args.kernel}' is not a regular expression: {error}", file=sys.stderr)
        return 2
    found, off_uniform = 0, 0
    for name, instructions in kernels(sass):
        if not pattern.search(name):
            continue
        loops = mma_loops(instructions)
        if not loops:
            continue
        found += 1
        print(f"{name[:110]}: {len(instructions)} instructions")
        for first, last, body in loops:
            r2ur = sum(opcode(t) == "R2UR" for t in body)
            uniform = sum(opcode(t).startswith("U") for t in body)
            hgmma = sum(opcode(t).startswith("HGMMA") for t in body)
            off_uniform += r2ur > 0
            print(f"  loop at instruction {first}: {last - first + 1} instructions, {hgmma} HGMMA, {r2ur} R2UR, "
                  f"{uniform} uniform" + ("  <- off the uniform datapath" if r2ur else ""))
    if found == 0:
        print("sass_mma_loops: no kernel with a wgmma loop" + (f" matching '{args.kernel}'" if args.kernel else ""),
              file=sys.stderr)
        return 2
    return 1 if args.require_uniform and off_uniform else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
