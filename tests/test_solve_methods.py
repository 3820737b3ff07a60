"""The method interface behind ``jaxarc solve`` (``jaxarc.solve.method``): every method is
one small class with a typed config; the default is the search (with the content language),
program-rl learns from the shipped prior; the
search and the program learner pad tasks by one rule (``jaxarc.solve.canvas``)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from jaxarc.cli.main import main
from jaxarc.solve import canvas, program_tasks, search
from jaxarc.solve.method import MethodError, SolveMethod
from jaxarc.solve.prior_store import load_prior
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_rl_method import (
    DEFAULT_PRIOR_DIR,
    ProgramRLMethod,
    ProgramRLSolveConfig,
)
from jaxarc.solve.search_method import RandomConfig, RandomMethod, SearchConfig, SearchMethod


def _flip(name: str, seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    grids = [rng.integers(0, 10, (3, 3)).astype(np.int8) for _ in range(3)]
    return Problem(name, tuple(grids[:2]), tuple(np.fliplr(g) for g in grids[:2]), (grids[2],))


def test_one_bucketing_rule_pads_the_search_and_the_program_learner() -> None:
    assert search.bucket is canvas.bucket and program_tasks.bucket is canvas.bucket
    assert search.CANVAS_SIDES is canvas.CANVAS_SIDES
    assert not hasattr(program_tasks, "CANVAS_SIDES") and not hasattr(program_tasks, "_bucket")
    assert [canvas.bucket(v, (4, 6, 13)) for v in (1, 4, 5, 13)] == [4, 4, 6, 13]
    # past the last bucket: the next power of two (the two copies rounded differently here)
    assert [canvas.bucket(v, (4, 6, 13)) for v in (14, 16, 17, 33)] == [16, 16, 32, 64]
    assert canvas.bucket(300, program_tasks.VOCABULARY_SLOTS) == 512
    assert [canvas.canvas_side(s) for s in (1, 10, 11, 21, 30, 45)] == [10, 10, 20, 30, 30, 30]
    with pytest.raises(ValueError, match="value 0"):
        canvas.bucket(0, (4,))


def test_each_method_is_built_from_its_typed_config_and_checks_it_at_once() -> None:
    for config_type in (SearchConfig, RandomConfig, ProgramRLSolveConfig):
        assert dataclasses.is_dataclass(config_type)
        with pytest.raises(dataclasses.FrozenInstanceError):
            config_type().seed = 1  # type: ignore[misc]
    with pytest.raises(MethodError, match="--depth 9: use 1 to 4"):
        SearchConfig(depth=9)
    with pytest.raises(MethodError, match="prior.npz: no such file"):
        ProgramRLMethod(ProgramRLSolveConfig(prior=Path("/no/such/prior")))
    with pytest.raises(MethodError, match="one program-rl update takes 1024 program steps"):
        ProgramRLMethod.with_budget(None, 1000)
    shipped = ProgramRLMethod(ProgramRLSolveConfig())
    assert shipped.config.prior == DEFAULT_PRIOR_DIR
    assert shipped.learner == load_prior(DEFAULT_PRIOR_DIR)[1].program  # the recorded settings
    budgeted = ProgramRLMethod.with_budget(DEFAULT_PRIOR_DIR, 5000)
    assert budgeted.learner.updates == 5000 // 1024
    assert budgeted.settings()["program_steps_per_task"] == 4 * 1024
    uniform = ProgramRLMethod(ProgramRLSolveConfig(prior=None))
    assert uniform.prior is None and uniform.settings()["prior"] == "none (uniform)"
    methods = [SearchMethod(SearchConfig(depth=1)), RandomMethod(RandomConfig(depth=1)), shipped]
    assert all(isinstance(m, SolveMethod) for m in methods)
    assert [m.experimental for m in methods] == [False, True, False]


def test_a_method_gives_two_attempts_per_test_input_and_a_record() -> None:
    problems = [_flip("a", 1), _flip("b", 2)]
    method = SearchMethod(SearchConfig(depth=1))
    calls: list[tuple[int, int]] = []
    attempts, records = method.solve_all(problems, lambda done, total: calls.append((done, total)))
    assert calls == [(0, 2), (1, 2), (2, 2)]
    for problem in problems:
        ((first, second),) = attempts[problem.task_id]
        assert first.dtype == np.int8 and first.shape == (3, 3)
        np.testing.assert_array_equal(first, np.fliplr(problem.test_inputs[0]))
        assert records[problem.task_id]["solutions"][0] == ["FLIP_LR(0,0,29,29)"]
    alone, record = method.solve(problems[1], 1)
    np.testing.assert_array_equal(alone[0][0], attempts["b"][0][0])
    assert record["solutions"] == records["b"]["solutions"]
    random = RandomMethod(RandomConfig(depth=2, seed=5))
    again = [random.solve(problems[0], 3)[1]["sequences"] for _ in range(2)]
    assert again[0] == again[1]  # task k draws from (seed, k), whatever ran before


@pytest.mark.slow  # searches, then learns one small task with the shipped prior (~30 s)
def test_jaxarc_solve_searches_by_default_and_program_rl_learns_from_the_shipped_prior(
    tmp_path: Path, capsys
) -> None:
    task = _flip("flip", 3)
    body = {
        "train": [
            {"input": a.tolist(), "output": b.tolist()}
            for a, b in zip(task.demo_inputs, task.demo_outputs, strict=True)
        ],
        "test": [{"input": g.tolist(), "output": np.fliplr(g).tolist()} for g in task.test_inputs],
    }
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "flip.json").write_text(json.dumps(body))
    argv = ["solve", "--no-compile-cache", "--source", str(tmp_path / "tasks")]
    searched = tmp_path / "searched.json"
    code = main([*argv, "--out", str(searched)])
    stdout = capsys.readouterr().out
    assert code == 0 and "1 tasks, search depth 2" in stdout and "solved 1 of 1" in stdout
    assert "1 by programs that solve every demonstration" in stdout, stdout
    report = json.loads(searched.with_suffix(".report.json").read_text())
    assert report["method"] == "search" and report["solved_tasks_by_solutions"] == 1
    assert report["tasks"]["flip"]["attempts_from_solutions"][0] is True
    out = tmp_path / "s.json"
    code = main([*argv, "--method", "program-rl", "--budget", "4096", "--out", str(out)])
    stdout = capsys.readouterr().out
    assert code == 0 and "1 tasks, program-rl" in stdout and "solved 1 of 1" in stdout, stdout
    report = json.loads(out.with_suffix(".report.json").read_text())
    assert report["method"] == "program-rl" and report["experimental"] is False
    assert report["prior"] == str(DEFAULT_PRIOR_DIR)
    recorded = dataclasses.asdict(load_prior(DEFAULT_PRIOR_DIR)[1].program)
    assert report["program_rl"] == {**recorded, "updates": 4}
    assert report["program_steps_per_task"] == 4 * 64 * 16
    assert report["program_steps_per_second"] > 0 and "env_steps_per_second" not in report
