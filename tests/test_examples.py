"""Every example runs (``--smoke``: tiny sizes) in a fresh interpreter and says what it did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# example -> text its smoke run must print
EXPECTED_OUTPUT = {
    "quickstart.py": "gymnax step:",
    "batch_rollout.py": "steps/s",
    "gymnasium_random_agent.py": "vector env: 4 envs x 6 steps",
    "render_task.py": "scripted episode: success True",
    "memory_efficiency.py": "task bank (shared",
    "custom_task.py": "through Gymnasium: terminated True, success True",
    "purejaxrl_ppo.py": "PPO updates",
    "program_network.py": "tasks solved by a sampled program",
}


# example -> the test that runs it in full instead of a smoke run (checking the same text)
RUN_IN_FULL_BY = {"purejaxrl_ppo.py": "test_ladder.py::test_ppo_example_learns_rung_one"}


def test_every_example_is_covered():
    assert {p.name for p in EXAMPLES.glob("*.py")} == set(EXPECTED_OUTPUT)
    assert set(RUN_IN_FULL_BY) <= set(EXPECTED_OUTPUT)


def run_example(name: str, *extra: str, cwd: Path, smoke: bool = True) -> str:
    """The example's stdout after a run in a fresh interpreter (``--smoke`` unless asked for a
    full run), which must succeed with deprecation warnings made errors."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONWARNINGS": "error::DeprecationWarning"}
    command = [sys.executable, str(EXAMPLES / name), *(["--smoke"] if smoke else []), *extra]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        cwd=cwd,
        env=env,
    )
    assert result.returncode == 0, (
        f"{name} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    )
    return result.stdout


# examples whose smoke run compiles long programs: make test-long (CI runs them)
LONG_SMOKE = {"program_network.py"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.long) if name in LONG_SMOKE else name
        for name in sorted(set(EXPECTED_OUTPUT) - {"render_task.py"} - set(RUN_IN_FULL_BY))
    ],
)
def test_example_runs(name, tmp_path):
    assert EXPECTED_OUTPUT[name] in run_example(name, cwd=tmp_path)


@pytest.mark.slow
def test_render_task_example_writes_images(tmp_path):
    from jaxarc.render import ARC_PALETTE, EpisodeRecord, load_gif_frames, load_png

    out = run_example("render_task.py", "--out-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert EXPECTED_OUTPUT["render_task.py"] in out
    sheet = load_png(tmp_path / "r" / "007bbfb7.png")
    assert sheet.shape[0] > 50 and sheet.shape[1] > 100
    record = EpisodeRecord.load(tmp_path / "r" / "episode.npz")
    assert record.success and record.task_id == "007bbfb7"
    frames = load_gif_frames(tmp_path / "r" / "episode.gif")
    assert len(frames) == record.num_steps + 1
    # every colour of the solved grid appears in the last frame
    final = record.grids[-1][record.grids[-1] >= 0]
    last = frames[-1].reshape(-1, 3)
    for colour in np.unique(final):
        assert (last == ARC_PALETTE[colour]).all(axis=1).any()
