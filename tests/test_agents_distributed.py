"""Multi-process training through `jaxarc train --coordinator-address ...` (gloo on CPU).

Two processes on 127.0.0.1, one CPU device each, train one model together (the task axis of
the batch split between them); the losses and the saved state must equal a single-process
run with the same global batch, and only process 0 may write files.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from agents_worker import TASKS, policy_flags, tiny_config
from test_agents_sharding import SUBPROCESS_ENV, TIMEOUT_S

from jaxarc.agents.run.checkpoint import STATE_FILE, latest_checkpoint
from jaxarc.agents.run.metrics_log import read_metrics
from jaxarc.cli.dataclass_flags import describe_config

# a subprocess per run, each compiling the trainer (~100-160 s on a busy 2-core machine)
pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config_flags(tasks_file: Path) -> list[str]:
    config = tiny_config(tasks_file, batch_tasks=2)
    flags = ["--source", config.source, "--selection-format", config.selection_format]
    flags += ["--canvas", str(config.canvas), "--batch-tasks", str(config.batch_tasks)]
    flags += [
        "--group-size",
        str(config.group_size),
        "--max-episode-steps",
        str(config.max_episode_steps),
    ]
    flags += ["--num-updates", str(config.num_updates), "--lr", str(config.lr)]
    flags += ["--similarity-weight", str(config.similarity_weight)]
    flags += ["--grpo-epochs", str(config.grpo.epochs)]
    flags += ["--grpo-minibatches", str(config.grpo.minibatches)]
    return [*flags, *policy_flags(config.policy)]


def _train(run_dir: Path, flags: list[str], *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "jaxarc", "train", "--run-dir", str(run_dir), *flags]
    command += ["--eval-every", "0", "--no-progress", *extra]
    env = {**os.environ, **SUBPROCESS_ENV}
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _finish(process: subprocess.Popen) -> str:
    try:
        output, _ = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f"timed out after {TIMEOUT_S} s:\n{output[-3000:]}") from None
    assert process.returncode == 0, output[-3000:]
    return output


def _saved_arrays(run_dir: Path) -> list[np.ndarray]:
    """Every leaf of the newest checkpoint's state file (np.save blobs, one after another)."""
    checkpoint = latest_checkpoint(run_dir / "checkpoints")
    assert checkpoint is not None
    arrays = []
    with open(checkpoint / STATE_FILE, "rb") as f:
        while f.peek(1):
            arrays.append(np.load(f))
    return arrays


@pytest.mark.long  # two processes each compiling the trainer (make test-long; CI runs it)
def test_two_processes_train_together_like_one(tmp_path: Path) -> None:
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps(TASKS))
    flags = _config_flags(tasks_file)
    address = f"127.0.0.1:{_free_port()}"
    processes = [
        _train(
            tmp_path / f"multi{index}",
            flags,
            *("--coordinator-address", address, "--num-processes", "2"),
            *("--process-id", str(index), "--no-compile-cache"),
        )
        for index in range(2)
    ]
    cache = tmp_path / "xla-cache"
    processes.append(_train(tmp_path / "single", flags, "--compile-cache-dir", str(cache)))
    outputs = [_finish(process) for process in processes]
    # process 0 printed the config and wrote the run; process 1 wrote nothing
    assert describe_config(tiny_config(tasks_file, 2)) in outputs[0]
    assert "TrainConfig" not in outputs[1]
    assert not (tmp_path / "multi1").exists()
    multi = read_metrics(tmp_path / "multi0" / "metrics.jsonl")
    single = read_metrics(tmp_path / "single" / "metrics.jsonl")
    assert [r["update"] for r in multi] == [1, 2, 3]
    losses_multi = np.array([r["loss"] for r in multi])
    assert np.all(np.isfinite(losses_multi)) and np.abs(losses_multi).max() > 0
    np.testing.assert_allclose(losses_multi, [r["loss"] for r in single], rtol=0, atol=1e-5)
    saved_multi, saved_single = (
        _saved_arrays(tmp_path / "multi0"),
        _saved_arrays(tmp_path / "single"),
    )
    assert len(saved_multi) == len(saved_single) > 10
    for a, b in zip(saved_multi, saved_single, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)
    # the persistent compilation cache kept the compiled update for the next run
    assert any("update" in entry.name for entry in cache.iterdir()), sorted(cache.iterdir())
