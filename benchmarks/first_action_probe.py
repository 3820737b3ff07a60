"""What the policy's first action looks like while the rl preset trains on a bbox source.

    python benchmarks/first_action_probe.py --source gen/medium --updates 600 --every 100 \
        --set similarity_weight=0 policy.whole_grid_prior=3

Trains with ``make_train`` (the same compiled update as ``jaxarc train``) and, every
``--every`` updates, reads the policy's first-action distribution on ``--episodes`` fresh
episodes (drawn once, keys never used in training) and prints exact probabilities, averaged
over the episodes (no sampling):

* ``geometric op``: a MOVE, ROTATE or FLIP operation;
* ``whole box | geometric``: the whole-grid box, given one of those operations (mean over them);
* ``whole-grid geometric``: both at once;
* ``donors``: the mean ``hindsight_donor_fraction`` of the updates since the last row.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxarc.agents import TrainConfig, make_train
from jaxarc.agents.grpo.train import load_task_source
from jaxarc.envs.functional import batch_reset
from jaxarc.grid import operation_ids as ops

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learning_curve import with_sets  # noqa: E402

GEOMETRIC = np.zeros(ops.NUM_OPERATIONS, bool)
GEOMETRIC[ops.MOVE_UP : ops.FLIP_TB + 1] = True


@eqx.filter_jit
def first_action_probabilities(policy, obs):
    """Per episode: P(geometric op), mean P(whole box | geometric op), P(whole-grid geometric)."""
    geometric = jnp.asarray(GEOMETRIC)

    def one(observation):
        dist = policy(observation)
        rows, cols = observation.grid_shape[0], observation.grid_shape[1]
        op_probs = jax.nn.softmax(dist.operation_logits)
        top_left = jax.nn.softmax(dist.first_corner_logits, axis=-1)[:, 0]
        bottom_right = jax.nn.softmax(dist.second_corner_logits, axis=-1)[
            :, (rows - 1) * dist.width + (cols - 1)
        ]
        whole_box = top_left * bottom_right  # [O]
        return (
            jnp.sum(jnp.where(geometric, op_probs, 0.0)),
            jnp.sum(jnp.where(geometric, whole_box, 0.0)) / GEOMETRIC.sum(),
            jnp.sum(jnp.where(geometric, op_probs * whole_box, 0.0)),
        )

    return jax.vmap(one)(obs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="gen/medium", help="a bbox source")
    parser.add_argument("--updates", type=int, default=600)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--episodes", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", nargs="*", default=[], help="FIELD=VALUE (dotted: nested)")
    args = parser.parse_args()
    config = with_sets(
        TrainConfig.preset("rl", source=args.source), [f"seed={args.seed}", *args.set]
    )
    if config.selection_format != "bbox":
        parser.error(f"--source {args.source}: the rl preset plays it with point actions")
    keys = jax.random.split(jax.random.key(2**31 - 1), args.episodes)
    _, obs = batch_reset(keys, config.env_config(), load_task_source(config))
    init, update = make_train(config)
    state = eqx.filter_jit(init)(jax.random.key(config.seed))
    print(f"{args.source}, seed {config.seed}, {args.episodes} episodes; --set {args.set}")
    print("update  geometric op  whole box | geometric  whole-grid geometric  donors")
    donors: list[float] = []
    for index in range(args.updates + 1):
        if index % args.every == 0:
            parts = (float(np.mean(x)) for x in first_action_probabilities(state.policy, obs))
            geometric, whole_box, both = parts
            donor_share = float(np.mean(donors)) if donors else 0.0
            row = f"{index:6d}  {geometric:12.4f}  {whole_box:20.4f}  {both:20.5f}"
            print(f"{row}  {donor_share:6.3f}")
            donors = []
        if index < args.updates:
            state, metrics = update(state)
            donors.append(float(metrics["hindsight_donor_fraction"]))


if __name__ == "__main__":
    main()
