"""Train a program network on your own ARC tasks and plot its learning curve.

python examples/program_network.py --source my_tasks/ --updates 200 --out runs/my-network
python examples/program_network.py --smoke

The network (:mod:`jaxarc.solve.program_network`) scores the items of each task's
vocabulary (whole-grid actions and the content language's paints) given the item before
it, and learns from the reward of the programs it plays on the tasks' demonstrations,
through the GRPO trainer's own update. ``--source`` is a directory of ARC JSON files or a
bundled bank (``arc-agi-1/training``). The curve (``curve.png`` in ``--out``, with
matplotlib) shows the sampled programs' mean reward and how many tasks some sampled program
has solved. Start ``jaxarc solve``'s per-task learning from the network with
:func:`jaxarc.solve.program_network.network_start` (see docs/program-network.md).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import jax

from jaxarc.data import load_bank
from jaxarc.solve.network_store import save_network
from jaxarc.solve.problem import problems_from_bank
from jaxarc.solve.program_network import (
    ProgramNetworkConfig,
    network_task,
    train_program_network,
)


def flip_tasks(directory: Path, count: int) -> Path:
    """``count`` small "mirror the grid" tasks written as ARC JSON files (for --smoke)."""
    directory.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        grids = [
            [[(k + 3 * r + c * c + j) % 5 for c in range(4)] for r in range(3)] for j in range(3)
        ]
        pairs = [{"input": g, "output": [row[::-1] for row in g]} for g in grids]
        task = {"train": pairs[:2], "test": pairs[2:]}
        (directory / f"flip{k}.json").write_text(json.dumps(task))
    return directory


def plot(history: list[dict], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, (reward, found) = plt.subplots(1, 2, figsize=(9, 3.2))
    updates = range(1, len(history) + 1)
    reward.plot(updates, [r["mean_reward"] for r in history])
    reward.set(xlabel="update", ylabel="mean reward of sampled programs")
    found.plot(updates, [r["tasks_found"] for r in history])
    found.set(xlabel="update", ylabel="tasks solved by some sampled program")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", default=None, help="a directory of ARC JSON files or a bank")
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("runs/program-network"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="tiny made-up tasks, few updates")
    args = parser.parse_args()
    config = ProgramNetworkConfig(updates=args.updates)
    source = args.source
    if args.smoke:
        config = ProgramNetworkConfig(updates=4, tasks_per_update=2, group_size=8, program_length=2)
        source = str(flip_tasks(Path(tempfile.mkdtemp()) / "tasks", 3))
        args.out = Path(tempfile.mkdtemp()) / "network"
    if source is None:
        parser.error("--source is required (or --smoke)")
    problems = problems_from_bank(load_bank(source))
    tasks = [network_task(problem, config.reward()) for problem in problems]
    policy, history = train_program_network(tasks, config, jax.random.key(args.seed))
    save_network(args.out, policy, {"source": source, "updates": config.updates}, problems)
    last = history[-1]
    print(
        f"{len(tasks)} tasks, {config.updates} updates: mean reward {history[0]['mean_reward']:.3f}"
        f" -> {last['mean_reward']:.3f}, tasks solved by a sampled program {last['tasks_found']}"
    )
    drawn = plot(history, args.out / "curve.png")
    print(f"network: {args.out}" + (f", curve: {args.out / 'curve.png'}" if drawn else ""))


if __name__ == "__main__":
    main()
