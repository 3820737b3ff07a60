"""``jaxarc solve`` over several processes (``jax.distributed`` on CPU): each solves its share
of the tasks (task ``k`` to process ``k % N``) and process 0 gathers them and writes the one
submission and report, those of a one-process run but for the timings and the process count.
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
from limits import SUBPROCESS_TIMEOUT_S, XLA_TEST_FLAGS

from jaxarc.cli.main import main
from jaxarc.solve.problem import Problem
from jaxarc.solve.search_method import RandomConfig, RandomMethod
from jaxarc.solve.sharing import decode_task, encode_task, task_share

# the workers: CPU only, the suite's XLA flags, no compilation cache
ENV = {"XLA_FLAGS": XLA_TEST_FLAGS, "JAX_PLATFORMS": "cpu", "JAX_COMPILATION_CACHE_DIR": ""}
RULES = {"flip": np.fliplr, "upside": np.flipud, "turn": lambda g: np.rot90(g, 2)}
TIMING = ("wall_seconds", "compile_seconds", "tasks_per_second", "seconds_per_task")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write_dir(root: Path, count: int) -> list[str]:
    """``count`` tasks of 4x4 grids, each a flip or a half turn the search finds; their ids
    (the source's order is the ids' order)."""
    root.mkdir(parents=True)
    rng = np.random.default_rng(5)
    ids = []
    for k in range(count):
        name = list(RULES)[k % len(RULES)]
        rule = RULES[name]
        grids = [rng.integers(0, 10, (4, 4)) for _ in range(3)]
        body = {
            "train": [{"input": g.tolist(), "output": rule(g).tolist()} for g in grids[:2]],
            "test": [{"input": grids[2].tolist(), "output": rule(grids[2]).tolist()}],
        }
        ids.append(f"t{k}{name}")
        (root / f"{ids[-1]}.json").write_text(json.dumps(body))
    return ids


def _solve(out: Path, source: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "jaxarc", "solve", "--source", str(source)]
    command += ["--method", "search", "--no-compile-cache", "--out", str(out), *extra]
    return subprocess.Popen(
        command,
        env={**os.environ, **ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finish(process: subprocess.Popen) -> tuple[int, str]:
    try:
        output, _ = process.communicate(timeout=SUBPROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise AssertionError(f"timed out:\n{output[-3000:]}") from None
    return process.returncode, output


def _multi(tmp_path: Path, source: Path, *per_process: tuple[str, ...]) -> list[tuple[int, str]]:
    address = f"127.0.0.1:{_free_port()}"
    processes = [
        _solve(
            tmp_path / f"p{i}" / "sub.json",
            source,
            *("--coordinator-address", address, "--num-processes", str(len(per_process))),
            *("--process-id", str(i), *extra),
        )
        for i, extra in enumerate(per_process)
    ]
    return [_finish(p) for p in processes]


def test_the_share_takes_every_task_once_in_order() -> None:
    problems = [
        Problem(
            f"t{k}",
            (np.zeros((2, 2), np.int8),),
            (np.ones((2, 2), np.int8),),
            (np.zeros((1, 3), np.int8),),
        )
        for k in range(7)
    ]
    shares = [task_share(problems, i, 3) for i in range(3)]
    assert [s.indices for s in shares] == [(0, 3, 6), (1, 4), (2, 5)]
    for share in shares:
        assert [p.task_id for p in share.problems] == [f"t{k}" for k in share.indices]
    together = sorted(k for share in shares for k in share.indices)
    assert together == list(range(7))
    assert task_share(problems, 0, 1).problems == tuple(problems)
    assert task_share(problems[:2], 2, 3).indices == ()  # more processes than tasks
    with pytest.raises(ValueError, match="process 3 of 3"):
        task_share(problems, 3, 3)
    # a solved task travels as JSON and comes back as int8 grids
    grid = np.arange(6, dtype=np.int8).reshape(2, 3)
    sent_id, attempts, record = decode_task(encode_task("t0", [(grid, grid.T)], {"n": [1]}))
    assert (sent_id, record) == ("t0", {"n": [1]})
    assert attempts[0][0].dtype == np.int8 and np.array_equal(attempts[0][1], grid.T)


def test_a_share_solves_each_task_with_the_keys_of_its_place_in_the_whole_run() -> None:
    rng = np.random.default_rng(2)
    grids = tuple(rng.integers(0, 10, (3, 3)).astype(np.int8) for _ in range(3))
    # the same task four times: only its place tells the copies' random sequences apart
    problems = [Problem(f"t{k}", grids[:2], grids[:2], grids[2:]) for k in range(4)]
    method = RandomMethod(RandomConfig(depth=2, seed=3))
    _, whole = method.solve_all(problems)
    drawn = [whole[p.task_id]["sequences"] for p in problems]
    assert any(a != b for a in drawn for b in drawn)
    for index in range(3):
        share = task_share(problems, index, 3)
        _, records = method.solve_all(list(share.problems), None, share.indices)
        assert list(records) == [p.task_id for p in share.problems]
        assert all(records[t]["sequences"] == whole[t]["sequences"] for t in records)


@pytest.mark.long  # the share, its keys and a two-process refusal are checked above and below
@pytest.mark.slow  # three runs at once, each compiling the search (~40 s on 2 busy cores)
def test_two_processes_share_the_tasks_and_process_0_writes_one_run_s_submission(
    tmp_path: Path,
) -> None:
    source = tmp_path / "tasks"
    ids = _write_dir(source, 5)
    single = _solve(tmp_path / "one" / "sub.json", source)
    (code0, out0), (code1, out1) = _multi(tmp_path, source, (), ())
    code, out = _finish(single)
    assert (code, code0, code1) == (0, 0, 0), (out, out0, out1)
    assert not (tmp_path / "p1").exists(), out1  # process 1 wrote nothing
    assert out1.strip() == "", out1  # nor printed a word
    assert "process 0 of 2: 3 of 5 tasks" in out0
    one = json.loads((tmp_path / "one" / "sub.json").read_text())
    two = json.loads((tmp_path / "p0" / "sub.json").read_text())
    assert list(two) == list(one) == ids and two == one
    report1 = json.loads((tmp_path / "one" / "sub.report.json").read_text())
    report2 = json.loads((tmp_path / "p0" / "sub.report.json").read_text())
    assert (report1["processes"], report2["processes"]) == (1, 2)
    assert report2["num_tasks"] == 5 and list(report2["tasks"]) == ids
    assert report2["solved_tasks"] == report2["scored_tasks"] == 5
    for report in (report1, report2):
        for key in (*TIMING, "processes"):
            report.pop(key, None)
        for task in report["tasks"].values():
            task.pop("seconds", None)
    assert report2 == report1


def test_processes_with_other_tasks_stop_with_one_line_and_write_nothing(tmp_path: Path) -> None:
    source = tmp_path / "tasks"
    _write_dir(source, 3)
    (code0, out0), (code1, out1) = _multi(tmp_path, source, (), ("--limit", "2"))
    assert (code0, code1) == (2, 2), (out0, out1)
    for output in (out0, out1):
        line = output.strip().splitlines()[-1]
        assert "process 1 of 2 has other tasks than process 0" in line, output
        assert "same flags but --process-id" in line
    assert not (tmp_path / "p0").exists() and not (tmp_path / "p1").exists()


# Process 1 posts nothing until process 0 has given up waiting for it, then stops with a
# reason; process 0 prints the line each wait ends with.
WAITER = """
import sys, jax
import numpy as np
from jaxarc.agents.run.distributed import key_value_store
from jaxarc.solve.problem import Problem
from jaxarc.solve.search_method import RandomConfig, RandomMethod
from jaxarc.solve.sharing import ShareError, SharingConfig, TaskSharing

index, address = int(sys.argv[1]), sys.argv[2]
jax.distributed.initialize(coordinator_address=address, num_processes=2, process_id=index)
store = key_value_store()
grid = np.zeros((2, 2), np.int8)
problems = [Problem(f"t{k}", (grid,), (grid,), (grid,)) for k in range(2)]
sharing = TaskSharing(problems, index, 2, store, SharingConfig(wait_s=0.5, poll_s=0.1))
if index == 1:
    store.blocking_key_value_get("test/go", 60_000)
    sharing.stop("it broke")
    store.blocking_key_value_get("jaxarc/solve/stopped/0", 60_000)
    sys.exit(0)
for step in (lambda: sharing.agree({}), lambda: sharing.gather({"t0": []}, {"t0": {}})):
    try:
        step()
    except ShareError as err:
        print(err)
    store.key_value_set("test/go", "1", allow_overwrite=True)
sharing.stop("process 1 is gone")
"""


def test_a_process_that_sends_nothing_or_stops_is_named_in_one_line() -> None:
    address = f"127.0.0.1:{_free_port()}"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WAITER, str(i), address],
            env={**os.environ, **ENV},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    (code0, out0), (code1, out1) = (_finish(p) for p in processes)
    assert (code0, code1) == (0, 0), (out0, out1)
    lines = out0.strip().splitlines()
    assert lines[-2].startswith("process 1 of 2 sent nothing for 0.5 s (waiting for its tasks"), (
        out0
    )
    assert lines[-1] == "process 1 of 2 stopped: it broke", out0


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--num-processes", "2"], "needs all of --coordinator-address"),
        (
            ["--coordinator-address", "127.0.0.1:1", "--num-processes", "2", "--process-id", "2"],
            "--process-id must be in [0, 2) for --num-processes 2, got 2",
        ),
        (
            ["--coordinator-address", "127.0.0.1:1", "--num-processes", "0", "--process-id", "0"],
            "--num-processes must be 1 or more, got 0",
        ),
        (
            [
                "--method",
                "test-time-rl",
                "--checkpoint",
                "run",
                "--coordinator-address",
                "127.0.0.1:1",
                "--num-processes",
                "2",
                "--process-id",
                "0",
            ],
            "--method test-time-rl draws every task's random keys from one stream",
        ),
    ],
)
def test_bad_process_flags_are_one_line_before_any_work(
    tmp_path: Path, capsys, argv: list[str], expected: str
) -> None:
    source = tmp_path / "tasks"
    _write_dir(source, 1)
    out = tmp_path / "out" / "sub.json"
    try:
        code = main(["solve", "--source", str(source), "--out", str(out), *argv])
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and expected in err, err
    assert not out.parent.exists()
