"""Per-kernel wall time of the faces table's scans, from a ``jax.profiler`` trace.

Traces one compiled call of the ``core`` or ``gymnax`` scan of ``jaxarc bench env --faces``
(ARC-AGI-1 unless ``--env`` says otherwise; point actions unless ``--format`` does) and
prints, per scan step, the wall time of each kernel of the scan's body (the XLA thunks named
as in the optimized HLO), with the op name that made it.
``--inside NAME`` also lists the kernels run inside one of those kernels (a ``while`` loop,
e.g. the auto-reset's chunk loop). The gymnax face notes of docs/design-notes.md come from

    python benchmarks/face_kernels.py gymnax --episode-steps 100
    python benchmarks/face_kernels.py core --episode-steps 100
    python benchmarks/face_kernels.py gymnax --inside while.277

Kernel names (``while.277``) are those of this run's compiled program; they change with the
code. Times are wall times on the calling thread: a kernel split into partitions runs them
on both cores, and a kernel nested in another is counted in both.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import tempfile
import time
from pathlib import Path

import jax

import jaxarc
from jaxarc.benchmarking.env_throughput import MASK_POOL
from jaxarc.benchmarking.face_throughput import SCAN_FACES, face_scan_body


def _scan_body_kernels(hlo: str) -> dict[str, tuple[str, str]]:
    """``{kernel: (shape, op name)}`` of the largest ``while`` body (the scan's) in ``hlo``."""
    bodies: dict[str, list[str]] = {}
    current = None
    for line in hlo.splitlines():
        header = re.match(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$", line)
        if header and not line.startswith(" "):
            current = header.group(1)
            bodies[current] = []
        elif current and line.startswith(" "):
            bodies[current].append(line)
    loops = re.findall(r"= .* while\(.*body=%?([\w.\-]+)", hlo)
    body = max(loops, key=lambda name: len(bodies.get(name, [])))
    kernels = {}
    for line in bodies[body]:
        m = re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = (\S+)", line)
        if m:
            op = re.search(r'op_name="([^"]*)"', line)
            shape = "(tuple)" if m.group(2).startswith("(") else m.group(2)[:40]
            kernels[m.group(1)] = (shape, op.group(1)[-70:] if op else "")
    return kernels


def _trace_events(directory: Path) -> list[dict]:
    path = next(directory.rglob("*perfetto_trace.json.gz"))
    with gzip.open(path) as trace:
        events = json.load(trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    return [e for e in events if e.get("ph") == "X"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("face", choices=SCAN_FACES)
    parser.add_argument("--env", default="ARC-AGI-1", help="a registered environment")
    parser.add_argument("--format", choices=("point", "bbox", "mask"), default="point")
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=20, help="scan steps traced")
    parser.add_argument("--episode-steps", type=int, default=100)
    parser.add_argument("--top", type=int, default=30, help="kernels listed")
    parser.add_argument("--inside", help="also list the kernels run inside this kernel")
    args = parser.parse_args()

    env, params = jaxarc.make(
        args.env, selection_format=args.format, max_episode_steps=args.episode_steps
    )
    canvas = env.config.dataset.canvas_shape
    pool = jax.random.bernoulli(jax.random.key(7), 0.3, (MASK_POOL, *canvas))
    body = face_scan_body(args.face, env, params, args.batch, pool)
    keys = jax.random.split(jax.random.key(0), args.batch)
    _, states = jax.vmap(env.reset, (0, None))(keys, params)

    @jax.jit
    def rollout(states, key):
        states, rewards = jax.lax.scan(body, states, jax.random.split(key, args.steps))
        return states.step_count, rewards.sum()

    jax.block_until_ready(rollout(states, jax.random.key(1)))  # compile
    start = time.perf_counter()
    jax.block_until_ready(rollout(states, jax.random.key(2)))
    wall_ms = (time.perf_counter() - start) / args.steps * 1e3
    kernels = _scan_body_kernels(rollout.lower(states, jax.random.key(1)).compile().as_text())
    with tempfile.TemporaryDirectory() as directory:
        with jax.profiler.trace(directory, create_perfetto_trace=True):
            jax.block_until_ready(rollout(states, jax.random.key(3)))
        events = _trace_events(Path(directory))

    total, calls = collections.Counter(), collections.Counter()
    for event in events:
        if event["name"] in kernels:
            total[event["name"]] += event["dur"]
            calls[event["name"]] += 1
    steps = args.steps
    print(
        f"{args.env}, {args.face}, {args.format}, B={args.batch}, "
        f"{args.episode_steps}-step episodes: "
        f"{wall_ms:.2f} wall-ms per step untraced; scan-body kernels sum to "
        f"{sum(total.values()) / steps / 1e3:.2f} ms per step, "
        f"{sum(calls.values()) / steps:.0f} calls per step\n"
    )
    print("| kernel | us per step | calls per step | shape | op |")
    print("|---|---:|---:|---|---|")
    for name, us in total.most_common(args.top):
        shape, op = kernels[name]
        print(f"| {name} | {us / steps:.1f} | {calls[name] / steps:.1f} | {shape} | {op} |")
    if args.inside:
        windows = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["name"] == args.inside]
        nested, count = collections.Counter(), collections.Counter()
        for event in events:
            name = event["name"]
            if name == args.inside or name.startswith(("$", "end:", "Thunk", "Threadpool")):
                continue
            end = event["ts"] + event["dur"]
            if any(a <= event["ts"] and end <= b for a, b in windows):
                nested[name] += event["dur"]
                count[name] += 1
        print(f"\ninside {args.inside} ({len(windows) / steps:.1f} calls per step):\n")
        print("| kernel | us per step | calls per step |")
        print("|---|---:|---:|")
        for name, us in nested.most_common(args.top):
            print(f"| {name} | {us / steps:.1f} | {count[name] / steps:.1f} |")


if __name__ == "__main__":
    main()
