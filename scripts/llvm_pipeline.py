#!/usr/bin/env python3
"""Derives `-O3`'s LLVM pipeline (compiler/codegen/src/o3_pipeline.txt): LLVM's `default<O3>` less every pass
whose removal leaves the PTX of every example byte for byte the same.

    python3 scripts/llvm_pipeline.py [--cutec target/release/cutec] [--opt /usr/lib/llvm-22/bin/opt] [--write]

`opt -print-pipeline-passes` spells out `default<O3>` pass by pass; the script then removes one pass at a time, in
order, builds every case of scripts/ptx_identity.sh with `--llvm-passes` set to what is left, and keeps the removal
when every PTX file equals `default<O3>`'s. What remains is printed (and written with --write), one pass per line.
Run it again after an LLVM upgrade, or when `o3_pipeline_gives_default_o3_ptx` fails for a new example. About 10
minutes on 2 cores (one ptx_identity build of every case per pass of `default<O3>`).
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"verify", "require", "invalidate", "BitcodeWriterPass"}  # analyses and the printer: nothing to remove


def parse(s, i=0):
    """`a,b<p>(c,d)` as a list of [name, params, children-or-None]; returns (items, index after them)."""
    items = []
    while i < len(s):
        j = i
        while j < len(s) and s[j] not in ",()<":
            j += 1
        name, params, children = s[i:j], "", None
        if j < len(s) and s[j] == "<":
            depth, k = 0, j
            while True:
                depth += {"<": 1, ">": -1}.get(s[k], 0)
                if depth == 0:
                    break
                k += 1
            params, j = s[j:k + 1], k + 1
        if j < len(s) and s[j] == "(":
            children, j = parse(s, j + 1)
            j += 1  # ')'
        items.append([name, params, children])
        if j < len(s) and s[j] == ",":
            i = j + 1
            continue
        return items, j
    return items, i


def spell(items, indent=None, depth=0):
    """The pipeline text: one line (indent None) or one pass per line. Removed passes (empty names) and nests left
    empty are dropped."""
    parts = []
    for name, params, children in items:
        if children is None:
            if name:
                parts.append(("    " * depth if indent else "") + name + params)
            continue
        inner = spell(children, indent, depth + 1)
        if not inner:
            continue
        if indent:
            parts.append("    " * depth + f"{name}{params}(\n{inner}\n" + "    " * depth + ")")
        else:
            parts.append(f"{name}{params}({inner})")
    return (",\n" if indent else ",").join(parts)


def leaves(items, out):
    for item in items:
        if item[2] is None:
            out.append(item)
        else:
            leaves(item[2], out)
    return out


def build_all(cutec, passes, out):
    """Every ptx_identity case built with `--llvm-passes passes` into `out`."""
    shutil.rmtree(out, ignore_errors=True)
    wrapper = Path(out + ".sh")
    wrapper.write_text(f'#!/bin/sh\nexec "{cutec}" "$@" --llvm-passes "$CUTEC_PIPELINE"\n')
    wrapper.chmod(0o755)
    env = dict(os.environ, CUTEC_PIPELINE=passes)
    subprocess.run(["bash", "scripts/ptx_identity.sh", "save", out, str(wrapper)], cwd=ROOT, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def first_difference(reference, out):
    for f in sorted(Path(reference).glob("*.ptx")):
        g = Path(out) / f.name
        if not g.exists() or not filecmp.cmp(f, g, shallow=False):
            return f.name
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cutec", default=str(ROOT / "target/release/cutec"))
    ap.add_argument("--opt", default="/usr/lib/llvm-22/bin/opt")
    ap.add_argument("--write", action="store_true", help="write compiler/codegen/src/o3_pipeline.txt")
    args = ap.parse_args()
    empty = tempfile.NamedTemporaryFile("w", suffix=".ll", delete=False)
    empty.write('target triple = "nvptx64-nvidia-cuda"\n')
    empty.close()
    # opt exits 1 after printing: it cannot parse back the `BitcodeWriterPass` it prints last.
    printed = subprocess.run([args.opt, "-passes=default<O3>", "-print-pipeline-passes", empty.name, "-o",
                              os.devnull], capture_output=True, text=True, check=False).stdout.strip()
    if "instcombine" not in printed:
        sys.exit(f"{args.opt} printed no pipeline for default<O3>")
    tree, _ = parse(printed)
    assert spell(tree) == printed, "the pipeline text did not parse back to itself"
    for item in leaves(tree, []):
        if item[0] in SKIP:
            item[0], item[1] = "", ""  # `BitcodeWriterPass` is opt's, the analyses are re-required on demand
    work = tempfile.mkdtemp(prefix="llvm-pipeline-")
    reference = os.path.join(work, "reference")
    build_all(args.cutec, "default<O3>", reference)
    cases = len(list(Path(reference).glob("*.ptx")))
    build_all(args.cutec, spell(tree), os.path.join(work, "start"))
    different = first_difference(reference, os.path.join(work, "start"))
    if different:
        sys.exit(f"default<O3> spelled out pass by pass already changes {different}")
    removed = 0
    for item in leaves(tree, []):
        if not item[0]:
            continue
        kept = item[:2]
        item[0], item[1] = "", ""
        out = os.path.join(work, "try")
        build_all(args.cutec, spell(tree), out)
        different = first_difference(reference, out)
        if different:
            item[0], item[1] = kept
            print(f"keep    {kept[0]:32} ({different} changes without it)", flush=True)
        else:
            removed += 1
            print(f"remove  {kept[0]}", flush=True)
    text = spell(tree, indent=True) + "\n"
    print(f"\n{removed} passes removed; the same PTX on all {cases} cases:\n\n{text}")
    if args.write:
        (ROOT / "compiler/codegen/src/o3_pipeline.txt").write_text(text)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
