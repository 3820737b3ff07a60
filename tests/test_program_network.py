"""The program network: a pointer over each task's vocabulary, trained across tasks by the
GRPO trainer's own update, carried to new tasks as program-rl's starting logits."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from limits import SUBPROCESS_TIMEOUT_S, XLA_TEST_FLAGS

from jaxarc.agents.grpo.config import GRPOConfig
from jaxarc.agents.model.program_policy import ProgramPolicy, ProgramPolicyConfig
from jaxarc.grid import operation_ids as ops
from jaxarc.solve.network_store import NETWORK_FILE, NetworkError, load_network, save_network
from jaxarc.solve.problem import Problem
from jaxarc.solve.program_attempts import program_rl_attempts
from jaxarc.solve.program_network import (
    ProgramNetworkConfig,
    chain_logits,
    init_state,
    make_update,
    network_start,
    network_task,
    relabelled_task,
    train_program_network,
    training_batch,
)
from jaxarc.solve.program_play import program_returns
from jaxarc.solve.program_rl import ProgramRLConfig
from jaxarc.solve.program_tasks import ALL_KINDS
from jaxarc.solve.program_variant import LearnerVariant
from jaxarc.testing import check_program_policy
from jaxarc.testing.contracts import ContractError

CONFIG = ProgramNetworkConfig(
    updates=20,
    tasks_per_update=4,
    group_size=16,
    program_length=2,
    learning_rate=0.02,
    grpo=GRPOConfig(epochs=1, minibatches=1, beta=0.0),
)


def flip_task(task_id: str, seed: int, demos: int = 3) -> Problem:
    """A task whose every output is its input mirrored left-right (random 5x5 grids)."""
    rng = np.random.default_rng(seed)
    grids = [rng.integers(0, 5, (5, 5)).astype(np.int8) for _ in range(demos + 1)]
    return Problem(
        task_id,
        tuple(grids[:demos]),
        tuple(np.ascontiguousarray(g[:, ::-1]) for g in grids[:demos]),
        (grids[-1],),
    )


@pytest.fixture(scope="module")
def trained() -> tuple[ProgramPolicy, list[dict]]:
    tasks = [network_task(flip_task(f"flip{k}", k), CONFIG.reward()) for k in range(4)]
    return train_program_network(tasks, CONFIG, jax.random.key(0))


def test_the_program_policy_keeps_its_contract() -> None:
    policy = ProgramPolicy(jax.random.key(1), ProgramPolicyConfig(kinds=ALL_KINDS))
    check_program_policy(policy, vocabulary_sizes=(64, 128))


def test_the_relation_bias_follows_each_items_parent_as_a_numpy_reference_does() -> None:
    import equinox as eqx

    from jaxarc.testing.program_policy import random_program_task

    policy = ProgramPolicy(jax.random.key(2), ProgramPolicyConfig(kinds=ALL_KINDS))
    task = random_program_task(jax.random.key(5), 32, ALL_KINDS, 32)
    bias = jnp.asarray([0.0, 3.0, 1.0, -2.0], jnp.float32)  # see RELATIONS
    biased = eqx.tree_at(lambda p: p.relation_bias, policy, bias)
    added = np.asarray(biased.chain_logits(task)) - np.asarray(policy.chain_logits(task))
    parents = np.asarray(task.parents)
    assert (parents > 0).any() and (parents == 0).any()
    expected = np.zeros((32, 32), np.float32)
    for previous in range(32):
        for item in range(32):
            if parents[item] == 0:
                continue
            if parents[item] == previous:
                expected[previous, item] = 3.0
            elif parents[item] == parents[previous]:
                expected[previous, item] = 1.0
            else:
                expected[previous, item] = -2.0
    np.testing.assert_allclose(added, expected, atol=1e-5)
    check_program_policy(biased, vocabulary_sizes=(64,))


def test_the_contract_catches_a_policy_that_leaks_onto_invalid_items() -> None:
    class Leaky(ProgramPolicy):
        def act(self, obs, task):
            dist = super().act(obs, task)
            return dataclasses.replace(dist, valid=jnp.ones_like(dist.valid))

    with pytest.raises(ContractError, match="valid items"):
        check_program_policy(Leaky(jax.random.key(1), ProgramPolicyConfig(kinds=ALL_KINDS)))


def test_training_raises_the_reward_and_carries_to_a_new_task(trained) -> None:
    policy, history = trained
    assert len(history) == CONFIG.updates
    assert all(np.isfinite(r["loss"]) for r in history)
    first, last = history[0]["mean_reward"], history[-1]["mean_reward"]
    assert last > first, (first, last)
    # a task it never trained on: its greedy program, with no learning, solves it
    problem = flip_task("new", 99)
    frozen = ProgramRLConfig(updates=0, program_length=CONFIG.program_length)
    start = network_start(policy, CONFIG.reward())
    attempts, info = program_rl_attempts(
        problem,
        frozen,
        jax.random.key(0),
        variant=LearnerVariant(language=True),
        start_logits=start,
    )
    assert info["greedy_solves_demos"], info["greedy_program"]
    np.testing.assert_array_equal(attempts[0][0], problem.test_inputs[0][:, ::-1])
    # the untrained network does not: what carried over was learned
    untrained = ProgramPolicy(jax.random.key(0), CONFIG.policy)
    _, info = program_rl_attempts(
        problem,
        frozen,
        jax.random.key(0),
        variant=LearnerVariant(language=True),
        start_logits=network_start(untrained, CONFIG.reward()),
    )
    assert not info["greedy_solves_demos"], info["greedy_program"]


def test_a_relabelled_program_solves_its_own_task_and_the_network_reads_it_anew() -> None:
    task = network_task(flip_task("r", 7), CONFIG.reward())
    reward = CONFIG.reward()
    table = np.asarray(task.arrays.table)[:, 0]
    turn = int(np.flatnonzero(table[:, 0] == ops.FLIP_TB)[0])  # turns every random grid
    program = np.asarray([turn, 0], np.int32)
    made = relabelled_task(task, program, reward)
    assert made is not None and made.task_id == f"r+{turn}"
    _, _, _, solved = program_returns(made.arrays, jnp.asarray(program)[None], reward, made.side)
    assert bool(solved[0, -1])
    _, _, _, before = program_returns(task.arrays, jnp.asarray(program)[None], reward, task.side)
    assert not bool(before[0, -1])
    # the item's statistics are read again: alone it now solves every pair
    assert float(made.reads.item_stats[turn, 2]) == 1.0
    assert float(task.reads.item_stats[turn, 2]) == 0.0
    assert relabelled_task(task, np.zeros(2, np.int32), reward) is None  # changes nothing


def test_training_with_hindsight_draws_relabelled_tasks() -> None:
    config = dataclasses.replace(CONFIG, updates=3, hindsight_tasks=2)
    tasks = [network_task(flip_task(f"h{k}", k), config.reward()) for k in range(4)]
    seen: list[int] = []
    train_program_network(
        tasks, config, jax.random.key(0), on_update=lambda i, r, p: seen.append(i)
    )
    assert seen == [0, 1, 2]
    with pytest.raises(ValueError, match="hindsight_tasks"):
        dataclasses.replace(CONFIG, hindsight_tasks=CONFIG.tasks_per_update)


def test_the_update_compiles_once_and_its_batch_has_the_trainer_layout() -> None:
    tasks = [network_task(flip_task(f"t{k}", k), CONFIG.reward()) for k in range(4)]
    state = init_state(jax.random.key(0), CONFIG)
    update = make_update(CONFIG)
    memory: dict = {}
    for index in range(3):
        logits = chain_logits(state.policy, [t.reads for t in tasks])
        batch, _ = training_batch(tasks, logits, jax.random.key(index), CONFIG, memory)
        episodes = CONFIG.tasks_per_update * CONFIG.group_size
        assert batch.actions.shape == (episodes, CONFIG.program_length)
        assert batch.actions.dtype == jnp.int32 and batch.task_index.shape == (episodes,)
        state, metrics = update(state, batch)
        assert np.isfinite(float(metrics["loss"]))
    assert int(state.update_index) == 3
    assert update._cached._cache_size() == 1  # (equinox's filter_jit cache: one program)


def test_learning_from_the_network_refuses_a_prior_too() -> None:
    from jaxarc.solve.program_rl import ProgramRLError, learn_program

    policy = ProgramPolicy(jax.random.key(0), CONFIG.policy)
    with pytest.raises(ProgramRLError, match="no prior"):
        learn_program(
            flip_task("x", 0),
            ProgramRLConfig(updates=1, program_length=2),
            jax.random.key(0),
            prior=np.zeros((4, 4), np.float32),
            start_logits=network_start(policy, CONFIG.reward()),
        )


def test_a_saved_network_loads_equal_and_a_damaged_one_is_one_line(tmp_path: Path) -> None:
    policy = ProgramPolicy(jax.random.key(3), ProgramPolicyConfig(kinds=ALL_KINDS, width=16))
    save_network(tmp_path / "net", policy, {"updates": 0})
    loaded = load_network(tmp_path / "net")
    for a, b in zip(jax.tree.leaves(policy), jax.tree.leaves(loaded), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    path = tmp_path / "net" / NETWORK_FILE
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(NetworkError, match="damaged"):
        load_network(tmp_path / "net")
    with pytest.raises(NetworkError, match="network.json"):
        load_network(tmp_path / "missing")
    # a network made when the language numbered its item kinds otherwise is refused
    record = tmp_path / "net" / "network.json"
    meta = json.loads(record.read_text())
    record.write_text(json.dumps({**meta, "kind_layout": "an older language"}))
    with pytest.raises(NetworkError, match="another layout of item kinds"):
        load_network(tmp_path / "net")


SHARDED_SCRIPT = """
import sys, json
import jax, numpy as np
from jax.sharding import Mesh
sys.path.insert(0, "tests")
from test_program_network import CONFIG, flip_task
from jaxarc.solve.program_network import network_task, train_program_network
cfg = CONFIG.__class__(**{**CONFIG.__dict__, "updates": 2})
tasks = [network_task(flip_task(f"t{k}", k), cfg.reward()) for k in range(4)]
mesh = Mesh(np.asarray(jax.devices()), ("data",)) if len(jax.devices()) > 1 else None
policy, history = train_program_network(tasks, cfg, jax.random.key(0), mesh=mesh)
import equinox as eqx
leaves = [np.asarray(x).ravel() for x in jax.tree.leaves(eqx.filter(policy, eqx.is_array))]
losses = [[r["loss"], r["grad_norm"], r["mean_reward"]] for r in history]
print(json.dumps({"devices": len(jax.devices()), "params": np.concatenate(leaves).tolist(),
                  "losses": losses}))
"""


@pytest.mark.long  # two processes, each compiling the update (make test-long)
def test_sharded_training_equals_one_device() -> None:
    runs = {}
    for devices in (2, 1):
        flags = f"{XLA_TEST_FLAGS} --xla_force_host_platform_device_count={devices}"
        env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}
        done = subprocess.run(
            [sys.executable, "-c", SHARDED_SCRIPT],
            cwd=Path(__file__).resolve().parents[1],
            env=env,
            capture_output=True,
            text=True,
            timeout=SUBPROCESS_TIMEOUT_S,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        import json

        runs[devices] = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs[2]["devices"] == 2 and runs[1]["devices"] == 1
    # the same programs played and the same losses and gradient norms, update by update
    np.testing.assert_allclose(runs[2]["losses"], runs[1]["losses"], rtol=1e-4, atol=1e-6)
    # the same parameters, but where Adam divides a near-zero gradient by its own size:
    # there the devices' other order of summing may turn a weight's step (up to lr an
    # update) the other way, in each of the two updates
    two, one = np.asarray(runs[2]["params"]), np.asarray(runs[1]["params"])
    apart = np.abs(two - one)
    assert np.mean(apart > 1e-5) < 0.01, np.mean(apart > 1e-5)
    assert apart.max() <= 2 * 2 * CONFIG.learning_rate


def test_jaxarc_solve_learns_each_task_from_a_network_given_as_the_prior(
    trained, tmp_path: Path, capsys
) -> None:
    import json

    from jaxarc.cli.main import main

    policy, _ = trained
    seen, new = flip_task("flip0", 0), flip_task("fresh", 77)
    save_network(tmp_path / "net", policy, {"updates": CONFIG.updates}, trained_on=[seen])
    (tmp_path / "tasks").mkdir()
    for problem in (seen, new):
        pairs = zip(problem.demo_inputs, problem.demo_outputs, strict=True)
        body = {
            "train": [{"input": a.tolist(), "output": b.tolist()} for a, b in pairs],
            "test": [
                {"input": g.tolist(), "output": g[:, ::-1].tolist()} for g in problem.test_inputs
            ],
        }
        (tmp_path / "tasks" / f"{problem.task_id}.json").write_text(json.dumps(body))
    out = tmp_path / "s.json"
    argv = ["solve", "--no-compile-cache", "--source", str(tmp_path / "tasks")]
    code = main([*argv, "--prior", str(tmp_path / "net"), "--budget", "1024", "--out", str(out)])
    stdout = capsys.readouterr().out
    assert code == 0, stdout
    # the task it trained on is named and left out of the score; the fresh one is solved
    assert "prior saw 1 of 2 tasks" in stdout and "solved 1 of 1" in stdout, stdout
    report = json.loads(out.with_suffix(".report.json").read_text())
    assert report["start"] == "network" and report["language_items"] is True
    assert report["seen_by_prior"] == ["flip0"]
    # a network given as --checkpoint is named for what it is
    code = main([*argv, "--method", "policy", "--checkpoint", str(tmp_path / "net"), "--out", "x"])
    assert code == 2 and "is a program network: give it as --prior" in capsys.readouterr().err


def test_the_shipped_network_loads_fits_this_vocabulary_and_names_what_it_saw() -> None:
    """The network in package data loads under this jaxarc's kinds (a language whose
    families change without training it again fails here), keeps the policy contract,
    records ARC-AGI-1 training tasks 100-399 as seen and the tuning split as unseen, and
    ``--prior network`` starts program-rl from it."""
    from test_program_rl import package_data

    from jaxarc.cli import solve as cli_solve
    from jaxarc.data import load_bank
    from jaxarc.solve import method_choice
    from jaxarc.solve.network_store import seen_by_network
    from jaxarc.solve.problem import problems_from_bank
    from jaxarc.solve.program_rl_method import NETWORK_UPDATES, SHIPPED_NETWORK_DIR

    assert {"solve/priors/*/network.eqx", "solve/priors/*/network.json"} <= package_data()
    policy = load_network(SHIPPED_NETWORK_DIR)
    check_program_policy(policy, vocabulary_sizes=(64,))
    problems = problems_from_bank(load_bank("arc-agi-1/training"))
    probe = [problems[0], problems[99], problems[100], problems[399]]
    assert seen_by_network(SHIPPED_NETWORK_DIR, probe) == [
        problems[100].task_id,
        problems[399].task_id,
    ]
    assert cli_solve.SHIPPED_NETWORK == method_choice.SHIPPED_NETWORK
    assert cli_solve.NO_PRIOR == method_choice.NO_PRIOR
    method = method_choice.build_method(
        method_choice.MethodChoice("program-rl", prior=method_choice.SHIPPED_NETWORK)
    )
    assert method.settings()["start"] == "network"
    assert method.settings()["prior"] == str(SHIPPED_NETWORK_DIR)
    assert method.settings()["program_rl"]["updates"] == NETWORK_UPDATES  # unless a budget
