"""One code path for one and many devices: a 4-device sharded run equals the 1-device run.

Runs in a subprocess because the CPU device count must be set before JAX starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S, XLA_TEST_FLAGS

# a subprocess per run, each compiling the trainer (~100-160 s on a busy 2-core machine):
# make test-long (CI runs it)
pytestmark = [pytest.mark.slow, pytest.mark.long]

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

from agents_worker import TASKS  # noqa: E402

TIMEOUT_S = SUBPROCESS_TIMEOUT_S
# The workers' environment: CPU only and no inherited XLA flags but the suite's own (fusion
# emitters off); XLA's backend optimisation is off as in every test process (tests/conftest.py
# sets JAX_DISABLE_MOST_OPTIMIZATIONS, which they inherit). Nor do they use the run's
# compilation cache: each compiles programs no other process of the run compiles, and a run
# given --no-compile-cache must compile.
SUBPROCESS_ENV = {
    "XLA_FLAGS": XLA_TEST_FLAGS,
    "JAX_PLATFORMS": "cpu",
    "JAX_COMPILATION_CACHE_DIR": "",
}


def run_worker(out: Path, *args: str) -> subprocess.Popen:
    tasks_file = out.parent / "tasks.json"
    if not tasks_file.exists():
        tasks_file.write_text(json.dumps(TASKS))
    env = {**os.environ, **SUBPROCESS_ENV}
    command = [sys.executable, str(TESTS / "agents_worker.py"), "--out", str(out)]
    command += ["--tasks-file", str(tasks_file), *args]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def finish(process: subprocess.Popen, timeout_s: int = TIMEOUT_S) -> None:
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f"worker timed out after {timeout_s} s:\n{output[-3000:]}") from None
    assert process.returncode == 0, output[-3000:]


def test_four_device_sharded_run_matches_one_device(tmp_path: Path) -> None:
    # two processes side by side (one compile each): 4 CPU devices and 1 CPU device
    sharded = run_worker(tmp_path / "four.npz", "--local-devices", "4", "--mesh-sizes", "4")
    single = run_worker(tmp_path / "one.npz", "--local-devices", "1", "--mesh-sizes", "1")
    finish(sharded)
    finish(single)
    four, one = np.load(tmp_path / "four.npz"), np.load(tmp_path / "one.npz")
    assert int(four["global_devices"]) == 4 and int(one["global_devices"]) == 1
    # parameters are replicated on every device of the mesh
    assert four["replicas_4"].tolist() == [4] and one["replicas_1"].tolist() == [1]
    losses_4, losses_1 = four["losses_4"], one["losses_1"]
    assert losses_4.shape == (3,) and np.all(np.isfinite(losses_4))
    assert np.abs(losses_4).max() > 0
    np.testing.assert_allclose(losses_4, losses_1, rtol=0, atol=1e-5)
    np.testing.assert_allclose(four["params_4"], one["params_1"], rtol=0, atol=1e-5)


def test_two_device_behaviour_cloning_matches_one_device(tmp_path: Path) -> None:
    """The BC stage runs on a 2-device data mesh (it refused several devices before) with
    its expert episodes sharded over the mesh, and gives the 1-device losses and
    parameters (two processes side by side, one compile each)."""
    bc = ("--bc", "--batch-tasks", "2", "--updates", "3")
    sharded = run_worker(tmp_path / "two.npz", *bc, "--local-devices", "2", "--mesh-sizes", "2")
    single = run_worker(tmp_path / "one.npz", *bc, "--local-devices", "1", "--mesh-sizes", "1")
    finish(sharded)
    finish(single)
    two, one = np.load(tmp_path / "two.npz"), np.load(tmp_path / "one.npz")
    assert int(two["global_devices"]) == 2 and int(one["global_devices"]) == 1
    assert two["replicas_2"].tolist() == [2] and one["replicas_1"].tolist() == [1]
    assert int(two["data_constraints_2"]) > 0  # expert episodes split over the devices
    losses_2, losses_1 = two["losses_2"], one["losses_1"]
    assert losses_2.shape == (3,) and np.all(np.isfinite(losses_2)) and losses_2.min() > 0
    np.testing.assert_allclose(losses_2, losses_1, rtol=0, atol=1e-5)
    np.testing.assert_allclose(two["params_2"], one["params_1"], rtol=0, atol=1e-5)
