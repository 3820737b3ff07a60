"""Benchmarks print unless asked to write, fetched datasets
are found by ``jaxarc.make`` and Gymnasium, and ``jaxarc eval`` takes generated sources."""

from __future__ import annotations

import json
import re

import pytest

from jaxarc.cli.main import main

TASK = {
    "train": [{"input": [[0, 1], [2, 3]], "output": [[3, 2], [1, 0]]}],
    "test": [{"input": [[1, 1]], "output": [[2, 2]]}],
}


@pytest.fixture()
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.json").write_text(json.dumps(TASK))
    return tmp_path


def _written(root) -> list[str]:
    skip = ("cache", "tasks")
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] not in skip
    )


# -- `jaxarc bench env|train` print; they write only into --out ---------------------

BENCH_ENV = ["bench", "env", "--source", "tasks", "--formats", "point", "--batch-sizes", "2"]
BENCH_ENV += ["--steps", "2", "--loop-steps", "1", "--repeats", "1"]
# the faces table too, on its cheapest setting (its defaults, 1024 and 4096 environments on two
# sources, took 5 minutes of the suite; a bundled bank compiles in half the time of a
# generator's pool)
BENCH_ENV += ["--face-batch-sizes", "2", "--face-envs", "ARC-AGI-1"]


@pytest.mark.long  # times the environment at every action format (make test-long)
def test_bench_env_prints_and_writes_nothing_by_default(workdir, capsys):
    assert main(BENCH_ENV) == 0
    printed = capsys.readouterr().out
    assert "| point | 2 |" in printed
    assert "| ARC-AGI-1 | gymnax+sample | 2 |" in printed
    assert _written(workdir) == []  # old default: benchmarks/results/throughput_cpu.{md,json}


@pytest.mark.parametrize("kind", ["env", "train"])
def test_bench_writes_only_into_out(kind):
    from jaxarc.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["bench", kind]).out is None  # old default: benchmarks/results
    assert str(parser.parse_args(["bench", kind, "--out", "d"]).out) == "d"


# -- a fetched dataset is found by jaxarc.make and its Gymnasium id -----------------


def _fetch_miniarc_from_a_local_archive(tmp_path, miniarc_dir):
    """``jaxarc data fetch miniarc --url file://...``: the real fetch, from a local zip."""
    import zipfile

    archive = tmp_path / "miniarc.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(miniarc_dir.rglob("*.json")):
            zf.write(path, f"MINI-ARC-master/{path.relative_to(miniarc_dir).as_posix()}")
    assert main(["data", "fetch", "miniarc", "--url", archive.as_uri()]) == 0


def test_make_finds_a_fetched_dataset_without_data_dir(workdir, miniarc_dir, capsys):
    import gymnasium

    import jaxarc
    import jaxarc.gym  # noqa: F401  (registers the Gymnasium ids)

    with pytest.raises(TypeError, match="jaxarc data fetch miniarc"):
        jaxarc.make("MiniARC")
    _fetch_miniarc_from_a_local_archive(workdir, miniarc_dir)
    env, _ = jaxarc.make("MiniARC")  # old: TypeError, "'MiniARC' needs data_dir="
    assert env.task_source.num_tasks == 149 and env.task_source.canvas_shape == (5, 5)
    eval_env, _ = jaxarc.make("MiniARC-eval")
    assert eval_env.config.environment.episode_mode == "eval"
    # through gymnasium.make: a damaged cache entry is rebuilt, with a warning
    (entry,) = (workdir / "cache" / "banks").glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:100])
    with pytest.warns(UserWarning, match="damaged task-bank cache entry"):
        gym_env = gymnasium.make("jaxarc/MiniARC-v0")
    obs, _ = gym_env.reset(seed=0)
    assert obs["grid"].shape == (5, 5)
    gym_env.close()


# -- `jaxarc eval` takes every source training takes (gen/...) ----------------------


def test_eval_accepts_a_generated_source(workdir, capsys):
    import jax

    from jaxarc.agents import TrainConfig, make_train
    from jaxarc.agents.model.policy import PolicyConfig
    from jaxarc.agents.run.checkpoint import save_checkpoint

    small = PolicyConfig(channels=4, trunk_layers=1, pair_channels=4, context_size=8, head_hidden=8)
    config = TrainConfig(
        batch_tasks=2, group_size=2, max_episode_steps=1, eval_tasks=3, policy=small
    )  # source gen/easy, the default
    init, _ = make_train(config)
    save_checkpoint(workdir / "run" / "checkpoints", 0, init(jax.random.key(0)), config)
    argv = ["eval", "--checkpoint", "run", "--source", "gen/easy", "--attempts", "1"]
    argv += ["--batch-size", "4", "--no-compile-cache", "--out", "eval.json"]
    assert main(argv) == 0, capsys.readouterr().err  # old: "use load_source(), not load_bank()"
    report = json.loads((workdir / "eval.json").read_text())
    assert report["source"] == "gen/easy" and report["num_tasks"] == 3
    assert [t["task_id"] for t in report["tasks"]] == ["gen/easy#0", "gen/easy#1", "gen/easy#2"]
    printed = capsys.readouterr()
    assert (
        printed.out.startswith("gen/easy: solved ")
        and "of 3 tasks (pass@1 by task: " in printed.out
    )
    assert printed.out.splitlines()[-1] == "results: eval.json"
    # a progress bar over the tasks, whose first batch says that it compiles
    assert "gen/easy: compiling the evaluation program (first batch of 4 episodes)" in printed.err
    assert "3/3" in printed.err


def test_render_draws_a_generated_task(workdir, capsys):
    """Render takes generated sources (ids as `jaxarc eval` names them)."""
    assert main(["render", "gen/easy#1", "--source", "gen/easy", "--format", "ansi"]) == 0
    assert "gen/easy#1 demo 0 input" in capsys.readouterr().out


# -- flags the commands would ignore, values they would fail on ------------------------------


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "internal error" not in err and "Traceback" not in err
    assert len(err.splitlines()) == 1, err  # one line, as every CLI message
    return err


def _exit_code(argv: list[str]) -> int:
    """``main``'s exit code, also where argparse refuses a flag's value (``SystemExit``)."""
    try:
        return main(argv)
    except SystemExit as exit_info:
        return exit_info.code


EVAL = ["eval", "--baseline", "predictor-rule", "--no-compile-cache"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        # old: a plain pass@k report on the bank, --by-family said nothing
        (["--source", "arc-agi-1/evaluation", "--by-family"], "--by-family .* gen/"),
        (["--source", "gen/easy", "--by-family", "--min-side", "-3"], "--min-side"),  # old: ok
        (["--source", "gen/easy", "--by-family", "--canvas", "256"], "--canvas"),  # old: internal
        (["--source", "gen/easy", "--by-family", "--canvas", "8", "--min-side", "9"], "exceeds"),
        (["--source", "gen/easy", "--min-side", "3"], "with --by-family only"),
    ],
)
def test_eval_refuses_flags_it_would_ignore_or_fail_on(workdir, capsys, argv, said):
    assert _exit_code([*EVAL, *argv]) == 2
    err = _error(capsys)
    assert re.search(said, err), err
    assert "max_grid_height" not in err  # the flag's own name, not the config field's


def test_render_bounds_the_cell_size_and_keeps_format_and_file_name_together(workdir, capsys):
    render = ["render", "t", "--source", "tasks"]
    with pytest.raises(SystemExit) as exit_info:  # old: a 251 GiB allocation, internal error
        main([*render, "--cell-size", "100000"])
    assert exit_info.value.code == 2 and "--cell-size" in _error(capsys)
    assert main([*render, "--format", "svg", "--out", "x.png"]) == 2  # old: SVG inside x.png
    assert "--format svg" in _error(capsys) and not (workdir / "x.png").exists()
    assert main([*render, "--format", "ansi", "--out", "x.txt"]) == 2  # old: --out ignored
    assert "--out does not apply" in _error(capsys)
    assert main([*render, "--format", "svg", "--out", "x.svg"]) == 0
    assert (workdir / "x.svg").read_text().startswith("<svg")


def test_replay_refuses_an_env_index_of_a_single_state(workdir, capsys):
    import jax

    from jaxarc.data import load_bank
    from jaxarc.envs import JaxArcConfig, UnifiedDatasetConfig, arc_reset
    from jaxarc.envs.serialization import save_state

    bank = load_bank(workdir / "tasks", canvas_shape=(4, 4))
    config = JaxArcConfig(dataset=UnifiedDatasetConfig(4, 4))
    state, _ = arc_reset(jax.random.key(0), config, bank)
    path = save_state(workdir / "state.npz", state, config)
    argv = ["replay", str(path), "--source", "tasks", "--out", "x.gif"]
    assert main([*argv, "--env-index", "5"]) == 2  # old: the flag was ignored
    assert "holds one environment" in _error(capsys)
    assert main([*argv, "--env-index", "0"]) == 0 and (workdir / "x.gif").exists()


def test_output_piped_into_a_reader_that_stops_ends_quietly(workdir):
    """`jaxarc render ... --format ansi | head`: no traceback, no "internal error" (old: 2 of
    5 tries), exit code 141 as a Unix tool killed by SIGPIPE; the reader here closes the
    pipe before the command writes, so the broken pipe happens every time."""
    import subprocess
    import sys

    argv = [sys.executable, "-m", "jaxarc", "render", "t", "--source", "tasks", "--format"]
    proc = subprocess.Popen([*argv, "ansi"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader goes away at once
    _, err = proc.communicate(timeout=600)
    assert err.decode() == "" and proc.returncode == 141


def test_a_repaired_cache_warns_in_one_line(workdir, capsys):
    assert main(["data", "info", "tasks", "--canvas", "4x4"]) == 0  # writes the cache entry
    (entry,) = (workdir / "cache" / "banks").glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:100])
    capsys.readouterr()
    assert main(["data", "info", "tasks", "--canvas", "4x4"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    # old: Python's two-line format, "<file>:<line>: UserWarning: ..." and the source line
    assert len(err) == 1 and err[0].startswith("jaxarc: warning: damaged task-bank cache entry")
