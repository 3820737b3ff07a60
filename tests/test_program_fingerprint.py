"""``benchmarks/program_fingerprint.py`` (docs/layout.md): the hashes that show a refactoring
changed no computation. It lowers the real programs, the GRPO update included (whose jit
carries the agents' compiler options and so cannot be wrapped in another jit)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import jax
import jax.numpy as jnp

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "program_fingerprint.py"


def test_fingerprints_every_program_and_tells_computations_apart(capsys):
    namespace = runpy.run_path(str(SCRIPT), run_name="__main__")
    out = capsys.readouterr().out
    found = dict(re.findall(r"^(.+?) ([0-9a-f]{16})$", out, re.MULTILINE))
    assert set(found) == {
        "point reset+step",
        "bbox reset+step",
        "mask reset+step",
        "grpo update (quick preset)",
    }, out
    assert len(set(found.values())) == 4  # four different programs

    digest = namespace["digest"]
    x = jnp.arange(4, dtype=jnp.float32)
    twice = digest(jax.jit(lambda v: v * 2).lower(x))
    assert digest(jax.jit(lambda v: v * 2).lower(x)) == twice  # (source locations dropped)
    assert digest(jax.jit(lambda v: v * 3).lower(x)) != twice
