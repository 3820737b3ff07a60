"""PPO in the purejaxrl style (one jitted ``train`` function) on ``jaxarc.make_flat(...)``.

``jaxarc.make_flat`` gives what purejaxrl expects (a flat ``Box`` observation and a
``Discrete`` action over the allowed operations); from there the loop is the usual one, with
gymnax's *own* ``FlattenObservationWrapper`` and ``LogWrapper`` applied exactly as in
purejaxrl. The network is a small equinox MLP.

On a rung of the difficulty ladder (``jaxarc.data.ladder``: ``gen/ladder-1`` ...) the rung
fixes the operations, observation fields and episode length; ``--reward-preset generic``
(the default here) is the reward for generic agents (docs/ladder.md). The run prints the
success rate of the episodes that ended during training and of greedy episodes on fresh
tasks after it; ``--json`` writes them.

    python examples/purejaxrl_ppo.py [--env gen/ladder-1] [--total-timesteps 8192] [--smoke]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper

import jaxarc
from jaxarc.data.ladder import RUNGS
from jaxarc.envs import split_key

COLOURS = 11  # an observation cell holds -1 (padding) or a colour 0..9


class ActorCritic(eqx.Module):
    actor: eqx.nn.MLP
    critic: eqx.nn.MLP
    one_hot: bool = eqx.field(static=True)

    def __init__(self, obs_dim: int, num_actions: int, hidden: int, key, one_hot: bool = False):
        actor_key, critic_key = jax.random.split(key)
        width = obs_dim * COLOURS if one_hot else obs_dim
        self.actor = eqx.nn.MLP(width, num_actions, hidden, 2, jax.nn.tanh, key=actor_key)
        self.critic = eqx.nn.MLP(width, "scalar", hidden, 2, jax.nn.tanh, key=critic_key)
        self.one_hot = one_hot

    def __call__(self, obs):
        """Logits ``[A]`` and value ``[]`` of one observation."""
        if self.one_hot:  # each cell's colour as 11 indicators instead of one number
            obs = jax.nn.one_hot(obs.astype(jnp.int32) + 1, COLOURS).reshape(-1)
        return self.actor(obs), self.critic(obs)


class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    info: dict


DEFAULT_OPERATIONS = [f"FILL_{c}" for c in range(10)] + ["SUBMIT"]  # names outside the ladder


def env_options(
    name: str,
    reward_preset: str,
    max_episode_steps: int | None = None,
    operations: list[str] | None = None,
    hindsight: float = 0.0,
    success_bonus: float | None = None,
) -> dict:
    """``jaxarc.make_flat`` options: the rung's (a ladder name) or a few FILLs and SUBMIT."""
    if name in RUNGS:
        options = RUNGS[name].make_options()
    else:
        options = {"allowed_operations": DEFAULT_OPERATIONS, "max_episode_steps": 10}
    if max_episode_steps is not None:
        options["max_episode_steps"] = max_episode_steps
    if operations:
        options["allowed_operations"] = list(operations)
    if hindsight:
        options["hindsight"] = hindsight
    if success_bonus is not None:  # overrides the preset's weight
        options["success_bonus"] = success_bonus
    return {**options, "reward_preset": reward_preset}


def make_env(name: str, options: dict):
    # the jaxarc part: the allowed operations, one flat discrete action, a flat observation
    env, env_params = jaxarc.make_flat(name, **options)
    # the purejaxrl part, unchanged: gymnax's own wrappers
    env = FlattenObservationWrapper(env)
    env = LogWrapper(env)
    return env, env_params


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Everything a PPO run depends on (purejaxrl's hyper-parameters, as a typed record)."""

    env_name: str
    env_options: dict  # jaxarc.make options of the rung (operations, fields, episode length)
    hidden: int = 64  # MLP width
    one_hot: bool = False  # the network reads each cell's colour one-hot
    task_refresh: int = 0  # generated sources: pool slots given new tasks at every update
    eval_episodes: int = 1024
    lr: float = 2.5e-4
    num_envs: int = 32
    num_steps: int = 32  # steps per environment per update
    total_timesteps: int = 8192
    update_epochs: int = 4
    num_minibatches: int = 4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


def make_train(config: PPOConfig):
    env, env_params = make_env(config.env_name, config.env_options)
    num_updates = config.total_timesteps // config.num_steps // config.num_envs
    minibatch_size = config.num_envs * config.num_steps // config.num_minibatches

    def linear_schedule(count):
        frac = 1.0 - (count // (config.num_minibatches * config.update_epochs)) / num_updates
        return config.lr * frac

    obs_dim = int(env.observation_space(env_params).shape[0])
    num_actions = int(env.action_space(env_params).n)

    def train(rng, init_params=None):
        """PPO from a fresh network, or from ``init_params`` (a curriculum's earlier stage)."""
        rng, init_rng = jax.random.split(rng)
        network = ActorCritic(obs_dim, num_actions, config.hidden, init_rng, config.one_hot)
        # equinox modules also hold functions (activations): carry only the arrays
        params, static = eqx.partition(network, eqx.is_array)
        if init_params is not None:
            params = init_params
        tx = optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm),
            optax.adam(learning_rate=linear_schedule, eps=1e-5),
        )
        opt_state = tx.init(params)

        rng, reset_rng = jax.random.split(rng)
        reset_rng = jax.random.split(reset_rng, config.num_envs)
        obsv, env_state = jax.vmap(env.reset, in_axes=(0, None))(reset_rng, env_params)

        def _update_step(carry, unused):
            runner_state, env_params = carry  # env_params: the task pool this update plays
            if config.task_refresh:
                params, opt_state, env_state, last_obs, rng = runner_state
                rng, pool_rng = jax.random.split(rng)
                env_params = env.refresh_task_pool(pool_rng, env_params, count=config.task_refresh)
                runner_state = (params, opt_state, env_state, last_obs, rng)

            def _env_step(runner_state, unused):
                params, opt_state, env_state, last_obs, rng = runner_state
                rng, action_rng = jax.random.split(rng)
                logits, value = jax.vmap(eqx.combine(params, static))(last_obs)
                action = jax.random.categorical(action_rng, logits)
                log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[
                    :, 0
                ]
                rng, step_rng = jax.random.split(rng)
                # the keys jax.random.split gives, without its CPU loop (docs/ecosystem.md)
                step_rng = split_key(step_rng, config.num_envs)
                obsv, env_state, reward, terminated, truncated, info = jax.vmap(
                    env.step, in_axes=(0, 0, 0, None)
                )(step_rng, env_state, action, env_params)
                done = jnp.logical_or(terminated, truncated)
                transition = Transition(done, action, value, reward, log_prob, last_obs, info)
                return (params, opt_state, env_state, obsv, rng), transition

            runner_state, traj_batch = jax.lax.scan(_env_step, runner_state, None, config.num_steps)
            params, opt_state, env_state, last_obs, rng = runner_state
            _, last_val = jax.vmap(eqx.combine(params, static))(last_obs)

            def _calculate_gae(traj_batch, last_val):
                def _get_advantages(gae_and_next_value, transition):
                    gae, next_value = gae_and_next_value
                    done, value, reward = transition.done, transition.value, transition.reward
                    delta = reward + config.gamma * next_value * (1 - done) - value
                    gae = delta + config.gamma * config.gae_lambda * (1 - done) * gae
                    return (gae, value), gae

                _, advantages = jax.lax.scan(
                    _get_advantages,
                    (jnp.zeros_like(last_val), last_val),
                    traj_batch,
                    reverse=True,
                    unroll=16,
                )
                return advantages, advantages + traj_batch.value

            advantages, targets = _calculate_gae(traj_batch, last_val)

            def _update_epoch(update_state, unused):
                def _update_minbatch(train_state, batch_info):
                    params, opt_state = train_state
                    traj_batch, advantages, targets = batch_info

                    def _loss_fn(params, traj_batch, gae, targets):
                        logits, value = jax.vmap(eqx.combine(params, static))(traj_batch.obs)
                        log_probs = jax.nn.log_softmax(logits)
                        log_prob = jnp.take_along_axis(
                            log_probs, traj_batch.action[:, None], axis=1
                        )[:, 0]
                        value_pred_clipped = traj_batch.value + (value - traj_batch.value).clip(
                            -config.clip_eps, config.clip_eps
                        )
                        value_losses = jnp.square(value - targets)
                        value_losses_clipped = jnp.square(value_pred_clipped - targets)
                        value_loss = 0.5 * jnp.maximum(value_losses, value_losses_clipped).mean()
                        ratio = jnp.exp(log_prob - traj_batch.log_prob)
                        gae = (gae - gae.mean()) / (gae.std() + 1e-8)
                        loss_actor1 = ratio * gae
                        loss_actor2 = (
                            jnp.clip(ratio, 1.0 - config.clip_eps, 1.0 + config.clip_eps) * gae
                        )
                        loss_actor = -jnp.minimum(loss_actor1, loss_actor2).mean()
                        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1).mean()
                        total_loss = (
                            loss_actor + config.vf_coef * value_loss - config.ent_coef * entropy
                        )
                        return total_loss, (value_loss, loss_actor, entropy)

                    grad_fn = jax.value_and_grad(_loss_fn, has_aux=True)
                    total_loss, grads = grad_fn(params, traj_batch, advantages, targets)
                    updates, opt_state = tx.update(grads, opt_state, params)
                    params = optax.apply_updates(params, updates)
                    return (params, opt_state), total_loss

                params, opt_state, traj_batch, advantages, targets, rng = update_state
                rng, perm_rng = jax.random.split(rng)
                batch_size = minibatch_size * config.num_minibatches
                permutation = jax.random.permutation(perm_rng, batch_size)
                batch = (traj_batch, advantages, targets)
                batch = jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:]), batch)
                shuffled = jax.tree.map(lambda x: jnp.take(x, permutation, axis=0), batch)
                minibatches = jax.tree.map(
                    lambda x: jnp.reshape(x, [config.num_minibatches, -1] + list(x.shape[1:])),
                    shuffled,
                )
                (params, opt_state), total_loss = jax.lax.scan(
                    _update_minbatch, (params, opt_state), minibatches
                )
                return (params, opt_state, traj_batch, advantages, targets, rng), total_loss

            update_state = (params, opt_state, traj_batch, advantages, targets, rng)
            update_state, loss_info = jax.lax.scan(
                _update_epoch, update_state, None, config.update_epochs
            )
            params, opt_state, rng = update_state[0], update_state[1], update_state[-1]
            info = traj_batch.info
            ended = info["returned_episode"]
            metric = {  # per update: episodes that ended, how many were solved, their return
                "episodes": ended.sum(),
                "solved": (ended & info["success"]).sum(),
                "return_sum": (info["returned_episode_returns"] * ended).sum(),
            }
            runner_state = (params, opt_state, env_state, last_obs, rng)
            return (runner_state, env_params), metric

        rng, _rng = jax.random.split(rng)
        runner_state = (params, opt_state, env_state, obsv, _rng)
        (runner_state, _), metric = jax.lax.scan(
            _update_step, (runner_state, env_params), None, num_updates
        )
        return {"runner_state": runner_state, "metrics": metric}

    def evaluate(params, rng):
        """Greedy success rate on ``EVAL_EPISODES`` fresh episodes (new tasks).

        A generated source's resets draw from the task pool of the params they get, and
        training played the pool of ``env_params``: the evaluation draws from a new pool
        (a bank's params have none and are unchanged)."""
        _, static = eqx.partition(
            ActorCritic(obs_dim, num_actions, config.hidden, jax.random.key(0), config.one_hot),
            eqx.is_array,
        )
        model = eqx.combine(params, static)
        count = config.eval_episodes
        rng, pool_rng = jax.random.split(rng)
        eval_params = env.refresh_task_pool(pool_rng, env_params)
        reset_keys = jax.random.split(rng, count)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(reset_keys, eval_params)

        def step(carry, key):
            obs, state, finished, solved = carry
            logits, _ = jax.vmap(model)(obs)
            keys = jax.random.split(key, count)
            obs, state, _, terminated, truncated, info = jax.vmap(
                env.step, in_axes=(0, 0, 0, None)
            )(keys, state, jnp.argmax(logits, axis=-1), eval_params)
            ends = (terminated | truncated) & ~finished
            return (obs, state, finished | ends, solved | (ends & info["success"])), None

        horizon = config.env_options["max_episode_steps"]
        start = (obs, state, jnp.zeros(count, bool), jnp.zeros(count, bool))
        (_, _, _, solved), _ = jax.lax.scan(step, start, jax.random.split(rng, horizon))
        return solved.mean()

    return train, evaluate, num_updates


def run(config: PPOConfig, seed: int) -> dict:
    """Compile, train and evaluate; the figures of one seed (compilation timed apart)."""
    train, evaluate, num_updates = make_train(config)
    key = jax.random.key(seed)
    start = time.perf_counter()
    compiled = jax.jit(train).lower(key).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    out = jax.block_until_ready(compiled(key))
    train_s = time.perf_counter() - start
    params = out["runner_state"][0]
    greedy = float(jax.jit(evaluate)(params, jax.random.key(seed + 10_000)))
    metrics = jax.tree.map(lambda x: jax.device_get(x).astype(float), out["metrics"])
    episodes, solved, return_sum = metrics["episodes"], metrics["solved"], metrics["return_sum"]
    tail = max(1, num_updates // 10)  # the last tenth of the updates
    return {
        "env": config.env_name,
        "seed": seed,
        "updates": num_updates,
        "env_steps": num_updates * config.num_steps * config.num_envs,
        "compile_s": round(compile_s, 2),
        "train_s": round(train_s, 2),
        "train_success_last_tenth": float(solved[-tail:].sum() / max(episodes[-tail:].sum(), 1)),
        "mean_return_last_tenth": float(return_sum[-tail:].sum() / max(episodes[-tail:].sum(), 1)),
        "greedy_success": greedy,
        "eval_episodes": config.eval_episodes,
        "curve": [  # (update, success rate of the episodes that ended in that update)
            (int(u), float(solved[u] / max(episodes[u], 1)))
            for u in sorted({0, *range(0, num_updates, max(1, num_updates // 20)), num_updates - 1})
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="gen/ladder-1", help="a jaxarc.make name or a rung")
    parser.add_argument("--reward-preset", default="generic", choices=("generic", "default"))
    parser.add_argument("--max-episode-steps", type=int, default=None, help="(rung's default)")
    parser.add_argument("--operations", nargs="+", default=None, help="(rung's default)")
    parser.add_argument(
        "--hindsight",
        type=float,
        default=0.0,
        help="probability that an episode is followed by its hindsight task (0: off)",
    )
    parser.add_argument(
        "--success-bonus",
        type=float,
        default=None,
        help="reward of a correct SUBMIT (default: the reward preset's, 1.0)",
    )
    parser.add_argument("--total-timesteps", type=int, default=8192)
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--num-steps", type=int, default=32, help="steps per env per update")
    parser.add_argument("--lr", type=float, default=2.5e-4)
    parser.add_argument("--hidden", type=int, default=64, help="MLP width")
    parser.add_argument(
        "--one-hot", action="store_true", help="the network reads each cell's colour one-hot"
    )
    parser.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus weight")
    parser.add_argument(
        "--task-refresh",
        type=int,
        default=0,
        help="generated sources: task-pool slots given new tasks at every update (0: a fixed pool)",
    )
    parser.add_argument("--seed", type=int, nargs="+", default=[42])
    parser.add_argument("--eval-episodes", type=int, default=1024)
    parser.add_argument("--json", default=None, help="write the results (one per seed) here")
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()
    config = PPOConfig(
        env_name=args.env,
        env_options=env_options(
            args.env,
            args.reward_preset,
            args.max_episode_steps,
            args.operations,
            args.hindsight,
            args.success_bonus,
        ),
        hidden=args.hidden,
        one_hot=args.one_hot,
        eval_episodes=args.eval_episodes,
        lr=args.lr,
        num_envs=args.num_envs,
        num_steps=args.num_steps,
        total_timesteps=args.total_timesteps,
        ent_coef=args.ent_coef,
        task_refresh=args.task_refresh,
    )
    if args.smoke:
        config = dataclasses.replace(
            config, num_envs=4, num_steps=8, total_timesteps=64, update_epochs=1, eval_episodes=8
        )
    results = []
    for seed in args.seed:
        result = run(config, seed)
        results.append(
            {
                **result,
                "reward_preset": args.reward_preset,
                "config": dataclasses.asdict(config),  # env_options: operations, weights
            }
        )
        print(
            f"{config.env_name} seed {seed}: {result['updates']} PPO updates, "
            f"{result['env_steps']} env steps in {result['train_s']:.1f}s "
            f"(+{result['compile_s']:.1f}s compilation); success of the episodes that ended in "
            f"the last tenth {result['train_success_last_tenth']:.1%}, greedy on "
            f"{result['eval_episodes']} fresh tasks {result['greedy_success']:.1%}"
        )
        for update, rate in result["curve"][:: max(1, len(result["curve"]) // 5)]:
            print(f"  update {update:>5}: success {rate:.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
