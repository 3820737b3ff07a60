"""Fingerprints of the compiled programs (StableHLO without location metadata): reset+step per
format and one GRPO update of the quick preset. Equal fingerprints before and after a
refactoring show that it changed no computation:

    python benchmarks/program_fingerprint.py
"""

import hashlib
import re

import jax
import jax.numpy as jnp

import jaxarc.agents as agents
from jaxarc.data import load_bank
from jaxarc.envs import (
    BboxAction,
    JaxArcConfig,
    MaskAction,
    PointAction,
    UnifiedActionConfig,
    batch_reset,
    batch_step,
)


def digest(lowered) -> str:
    lowered = getattr(lowered, "lowered", lowered)  # equinox wraps jax's Lowered
    txt = lowered.as_text(debug_info=False)
    txt = re.sub(r"loc\([^\n]*?\)", "", txt)
    txt = re.sub(r"#loc\d*", "", txt)
    return hashlib.sha256(txt.encode()).hexdigest()[:16]


bank = load_bank("arc-agi-1/training")
keys = jax.random.split(jax.random.key(0), 8)
z = jnp.zeros(8, jnp.int32)
actions = {
    "point": PointAction(z + 3, z, z),
    "bbox": BboxAction(z + 3, z, z, z + 2, z + 2),
    "mask": MaskAction(z + 3, jnp.zeros((8, 30, 30), bool)),
}
for fmt, action in actions.items():
    config = JaxArcConfig(action=UnifiedActionConfig(selection_format=fmt))

    def episode(k, a, config=config):
        states, _ = batch_reset(k, config, bank)
        return batch_step(states, a, config)

    print(fmt, "reset+step", digest(jax.jit(episode).lower(keys, action)))

config = agents.PRESETS["quick"].replace(bc_updates=0)  # the GRPO update alone
init, update = agents.make_train(config)
state = init(jax.random.key(0))
# ``update`` is compiled already (with the agents' compiler options, which a nested jit
# cannot take): lower it directly
print("grpo update (quick preset)", digest(update.lower(state)))
