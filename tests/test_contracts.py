"""``jaxarc.testing``'s contracts over every registered environment name and every face.

Every name runs the functional contract (one compiled rollout per distinct task source and
config; aliases share one); one generated family and one hand-made task bank run every face.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from env_helpers import make_bank, make_task

import jaxarc
from jaxarc.testing import FACES, ContractError, check_environment
from jaxarc.testing.contracts import _check_batched_rollout

DIRECTORY_SETS = ("MiniARC", "MiniARC-eval", "ConceptARC", "ConceptARC-eval")


@pytest.mark.slow
@pytest.mark.parametrize("name", jaxarc.registered_names())
def test_every_registered_name_keeps_the_functional_contract(name, request):
    options = {"max_episode_steps": 3}
    if name in DIRECTORY_SETS:
        fixture = "miniarc_dir" if name.startswith("MiniARC") else "conceptarc_dir"
        options["data_dir"] = str(request.getfixturevalue(fixture))
    (report,) = check_environment(name, faces=("functional",), batch=2, steps=2, **options)
    assert report["face"] == "functional" and report["steps"] == 2


@pytest.mark.parametrize("face", FACES)
def test_every_face_keeps_its_contract_on_a_generated_family(face):
    if face == "jumanji":
        pytest.importorskip("jumanji")
    (report,) = check_environment("gen/flip", faces=(face,), max_episode_steps=3)
    assert report["face"] == face


def test_a_custom_task_source_keeps_the_contract_in_every_format():
    task = make_task([([[1, 2], [3, 4]], [[2, 1], [4, 3]])], [([[5, 6]], [[6, 5]])], canvas=(4, 4))
    bank = make_bank([task])
    for fmt in ("bbox", "mask"):
        (report,) = check_environment(
            bank, faces=("gymnax",), selection_format=fmt, max_episode_steps=2, steps=3
        )
        assert report["episodes_ended"] >= 0


def test_the_checker_rejects_a_nondeterministic_or_lane_mixing_rollout():
    keys = jnp.arange(2, dtype=jnp.uint32)
    rng = np.random.default_rng(0)

    def noisy(keys):  # a different episode for the same keys
        return keys.astype(jnp.float32), jnp.asarray(rng.random((3, 2)), jnp.float32)

    with pytest.raises(ContractError, match="same keys"):
        _check_batched_rollout("test", noisy, keys, batch=2, steps=3)

    def mixing(keys):  # every lane sees the first key: lanes are not independent
        first = jnp.broadcast_to(keys[:1], keys.shape).astype(jnp.float32)
        return first, jnp.broadcast_to(first, (3, 2))

    with pytest.raises(ContractError, match="reversing the keys"):
        _check_batched_rollout("test", mixing, keys, batch=2, steps=3)

    def nan(keys):
        return keys.astype(jnp.float32), jnp.full((3, 2), jnp.nan, jnp.float32)

    with pytest.raises(ContractError, match="non-finite"):
        _check_batched_rollout("test", nan, keys, batch=2, steps=3)


def test_unknown_faces_are_refused():
    with pytest.raises(ValueError, match="unknown face"):
        check_environment("gen/flip", faces=("brax",))
