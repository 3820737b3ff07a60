"""PPO in the purejaxrl style (one jitted ``train`` function) on ``jaxarc.make(...)``.

jaxarc's wrappers turn the structured environment into what purejaxrl expects (a flat
``Box`` observation and a ``Discrete`` action); from there the loop is the usual one, with
gymnax's *own* ``FlattenObservationWrapper`` and ``LogWrapper`` applied exactly as in
purejaxrl. The network is a small equinox MLP.

    python examples/purejaxrl_ppo.py [--env ARC-AGI-1] [--total-timesteps 8192] [--smoke]
"""

from __future__ import annotations

import argparse
import time
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper

import jaxarc
from jaxarc.wrappers import FlatPointActionWrapper, RestrictOperationsWrapper
from jaxarc.wrappers import FlattenObservationWrapper as FlattenArcObservation


class ActorCritic(eqx.Module):
    actor: eqx.nn.MLP
    critic: eqx.nn.MLP

    def __init__(self, obs_dim: int, num_actions: int, hidden: int, key):
        actor_key, critic_key = jax.random.split(key)
        self.actor = eqx.nn.MLP(obs_dim, num_actions, hidden, 2, jax.nn.tanh, key=actor_key)
        self.critic = eqx.nn.MLP(obs_dim, "scalar", hidden, 2, jax.nn.tanh, key=critic_key)

    def __call__(self, obs):
        """Logits ``[A]`` and value ``[]`` of one observation."""
        return self.actor(obs), self.critic(obs)


class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    info: dict


def make_env(name: str, max_episode_steps: int):
    env, env_params = jaxarc.make(
        name, selection_format="point", max_episode_steps=max_episode_steps
    )
    # the jaxarc part: a few operations, one flat discrete action, a flat observation
    env = RestrictOperationsWrapper(env, [f"FILL_{c}" for c in range(10)] + ["SUBMIT"])
    env = FlatPointActionWrapper(env)
    env = FlattenArcObservation(env, ("grid", "input_grid"))
    # the purejaxrl part, unchanged: gymnax's own wrappers
    env = FlattenObservationWrapper(env)
    env = LogWrapper(env)
    return env, env_params


def make_train(config: dict):
    env, env_params = make_env(config["ENV_NAME"], config["MAX_EPISODE_STEPS"])
    num_updates = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    minibatch_size = config["NUM_ENVS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"]

    def linear_schedule(count):
        frac = 1.0 - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"])) / num_updates
        return config["LR"] * frac

    obs_dim = int(env.observation_space(env_params).shape[0])
    num_actions = int(env.action_space(env_params).n)

    def train(rng):
        rng, init_rng = jax.random.split(rng)
        network = ActorCritic(obs_dim, num_actions, 64, init_rng)
        # equinox modules also hold functions (activations): carry only the arrays
        params, static = eqx.partition(network, eqx.is_array)
        tx = optax.chain(
            optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
            optax.adam(learning_rate=linear_schedule, eps=1e-5),
        )
        opt_state = tx.init(params)

        rng, reset_rng = jax.random.split(rng)
        reset_rng = jax.random.split(reset_rng, config["NUM_ENVS"])
        obsv, env_state = jax.vmap(env.reset, in_axes=(0, None))(reset_rng, env_params)

        def _update_step(runner_state, unused):
            def _env_step(runner_state, unused):
                params, opt_state, env_state, last_obs, rng = runner_state
                rng, action_rng = jax.random.split(rng)
                logits, value = jax.vmap(eqx.combine(params, static))(last_obs)
                action = jax.random.categorical(action_rng, logits)
                log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[
                    :, 0
                ]
                rng, step_rng = jax.random.split(rng)
                step_rng = jax.random.split(step_rng, config["NUM_ENVS"])
                obsv, env_state, reward, terminated, truncated, info = jax.vmap(
                    env.step, in_axes=(0, 0, 0, None)
                )(step_rng, env_state, action, env_params)
                done = jnp.logical_or(terminated, truncated)
                transition = Transition(done, action, value, reward, log_prob, last_obs, info)
                return (params, opt_state, env_state, obsv, rng), transition

            runner_state, traj_batch = jax.lax.scan(
                _env_step, runner_state, None, config["NUM_STEPS"]
            )
            params, opt_state, env_state, last_obs, rng = runner_state
            _, last_val = jax.vmap(eqx.combine(params, static))(last_obs)

            def _calculate_gae(traj_batch, last_val):
                def _get_advantages(gae_and_next_value, transition):
                    gae, next_value = gae_and_next_value
                    done, value, reward = transition.done, transition.value, transition.reward
                    delta = reward + config["GAMMA"] * next_value * (1 - done) - value
                    gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - done) * gae
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
                            -config["CLIP_EPS"], config["CLIP_EPS"]
                        )
                        value_losses = jnp.square(value - targets)
                        value_losses_clipped = jnp.square(value_pred_clipped - targets)
                        value_loss = 0.5 * jnp.maximum(value_losses, value_losses_clipped).mean()
                        ratio = jnp.exp(log_prob - traj_batch.log_prob)
                        gae = (gae - gae.mean()) / (gae.std() + 1e-8)
                        loss_actor1 = ratio * gae
                        loss_actor2 = (
                            jnp.clip(ratio, 1.0 - config["CLIP_EPS"], 1.0 + config["CLIP_EPS"])
                            * gae
                        )
                        loss_actor = -jnp.minimum(loss_actor1, loss_actor2).mean()
                        entropy = -(jnp.exp(log_probs) * log_probs).sum(-1).mean()
                        total_loss = (
                            loss_actor
                            + config["VF_COEF"] * value_loss
                            - config["ENT_COEF"] * entropy
                        )
                        return total_loss, (value_loss, loss_actor, entropy)

                    grad_fn = jax.value_and_grad(_loss_fn, has_aux=True)
                    total_loss, grads = grad_fn(params, traj_batch, advantages, targets)
                    updates, opt_state = tx.update(grads, opt_state, params)
                    params = optax.apply_updates(params, updates)
                    return (params, opt_state), total_loss

                params, opt_state, traj_batch, advantages, targets, rng = update_state
                rng, perm_rng = jax.random.split(rng)
                batch_size = minibatch_size * config["NUM_MINIBATCHES"]
                permutation = jax.random.permutation(perm_rng, batch_size)
                batch = (traj_batch, advantages, targets)
                batch = jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:]), batch)
                shuffled = jax.tree.map(lambda x: jnp.take(x, permutation, axis=0), batch)
                minibatches = jax.tree.map(
                    lambda x: jnp.reshape(x, [config["NUM_MINIBATCHES"], -1] + list(x.shape[1:])),
                    shuffled,
                )
                (params, opt_state), total_loss = jax.lax.scan(
                    _update_minbatch, (params, opt_state), minibatches
                )
                return (params, opt_state, traj_batch, advantages, targets, rng), total_loss

            update_state = (params, opt_state, traj_batch, advantages, targets, rng)
            update_state, loss_info = jax.lax.scan(
                _update_epoch, update_state, None, config["UPDATE_EPOCHS"]
            )
            params, opt_state, rng = update_state[0], update_state[1], update_state[-1]
            metric = traj_batch.info
            runner_state = (params, opt_state, env_state, last_obs, rng)
            return runner_state, metric

        rng, _rng = jax.random.split(rng)
        runner_state = (params, opt_state, env_state, obsv, _rng)
        runner_state, metric = jax.lax.scan(_update_step, runner_state, None, num_updates)
        return {"runner_state": runner_state, "metrics": metric}

    return train, num_updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="ARC-AGI-1", help="a jaxarc.make name")
    parser.add_argument("--total-timesteps", type=int, default=8192)
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--smoke", action="store_true", help="a tiny, fast run")
    args = parser.parse_args()
    config = {
        "ENV_NAME": args.env,
        "MAX_EPISODE_STEPS": 10,
        "LR": 2.5e-4,
        "NUM_ENVS": args.num_envs,
        "NUM_STEPS": 32,
        "TOTAL_TIMESTEPS": args.total_timesteps,
        "UPDATE_EPOCHS": 4,
        "NUM_MINIBATCHES": 4,
        "GAMMA": 0.99,
        "GAE_LAMBDA": 0.95,
        "CLIP_EPS": 0.2,
        "ENT_COEF": 0.01,
        "VF_COEF": 0.5,
        "MAX_GRAD_NORM": 0.5,
    }
    if args.smoke:
        config.update(NUM_ENVS=4, NUM_STEPS=8, TOTAL_TIMESTEPS=64, UPDATE_EPOCHS=1)
    train, num_updates = make_train(config)
    start = time.perf_counter()
    out = jax.block_until_ready(jax.jit(train)(jax.random.key(42)))
    seconds = time.perf_counter() - start
    metrics = out["metrics"]
    finished = metrics["returned_episode"]  # [updates, steps, envs]
    returns = metrics["returned_episode_returns"]
    steps = num_updates * config["NUM_STEPS"] * config["NUM_ENVS"]
    print(
        f"{config['ENV_NAME']}: {num_updates} PPO updates, {steps} env steps in {seconds:.1f}s "
        "(compilation included)"
    )
    for update in sorted({0, num_updates // 2, num_updates - 1}):
        done = finished[update]
        mean = float(jnp.sum(returns[update] * done) / jnp.maximum(done.sum(), 1))
        print(f"  update {update:>4}: {int(done.sum()):>4} episodes ended, mean return {mean:+.3f}")


if __name__ == "__main__":
    main()
