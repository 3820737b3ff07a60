"""Environment state and observation pytrees.

Static/traced split: every array leaf of :class:`ArcState` belongs to one environment (a
batch of environments is the same module with a leading axis on every leaf). The task
source (a possibly large task bank) is *not* a leaf: the state holds it through
:class:`SourceRef`, a static field compared by identity, so the bank is shared by all
environments, never copied per environment, and left out of serialised states.

The episode's pair (its input and target grids, :class:`~jaxarc.envs.episode.EpisodePair`)
is read from the source once, at reset, and kept in the state: the step reads no task data,
so it costs the same whether or not the batch's task indices change between steps (under
auto-reset they do; docs/design-notes.md). To play another task or pair, reset
with its indices: editing ``task_index`` in a state does not change the grids played.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
from jaxtyping import Array, Bool, Float32, Int8, Int32, PRNGKeyArray, PyTree

from jaxarc.data.source import AbstractTaskSource
from jaxarc.envs.config import RewardParams
from jaxarc.envs.episode import EpisodePair


class SourceRef:
    """A hashable, identity-compared handle to a task source (static in pytrees)."""

    __slots__ = ("source",)

    def __init__(self, source: AbstractTaskSource):
        self.source = source

    def __hash__(self) -> int:
        return id(self.source)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SourceRef) and other.source is self.source

    def __repr__(self) -> str:
        return f"SourceRef({type(self.source).__name__} {self.source.name})"


class ArcState(eqx.Module):
    """One environment's full state (``H W`` = canvas, ``T`` = max_episode_steps)."""

    key: PRNGKeyArray
    task_index: Int32[Array, ""]  # index into the task bank (-1 for generated tasks)
    pair_index: Int32[Array, ""]  # demonstration pair (train mode) or test pair (eval mode)
    grid: Int8[Array, "H W"]  # working grid: colours 0..9 inside grid_shape, -1 outside
    grid_shape: Int32[Array, "2"]
    selection: Bool[Array, "H W"]  # the last action's effective selection
    clipboard: Int8[Array, "H W"]
    clipboard_mask: Bool[Array, "H W"]
    step_count: Int32[Array, ""]
    terminated: Bool[Array, ""]
    truncated: Bool[Array, ""]
    success: Bool[Array, ""]
    similarity: Float32[Array, ""]  # similarity of grid to target after the last step
    pair: EpisodePair  # the episode's input and target (read from the source at reset)
    history: Array  # [T, ...] format-specific action rows (see structured_actions)
    history_length: Int32[Array, ""]
    reward_params: RewardParams
    episode_store: PyTree  # what the source needs to find the task again (() for banks)
    source_ref: SourceRef = eqx.field(static=True)

    @property
    def source(self) -> AbstractTaskSource:
        return self.source_ref.source

    @property
    def done(self) -> Bool[Array, ""]:
        return self.terminated | self.truncated


class ArcObservation(eqx.Module):
    """What the agent sees (``P`` = demonstration pairs). The target is never included.

    The episode's constants (:data:`CONTEXT_FIELDS`: the input grid and the demonstration
    pairs) are ``None`` when ``config.environment.episode_context == "at_reset"``; they are
    then read once per episode with :func:`~jaxarc.envs.functional.episode_context`.
    """

    grid: Int8[Array, "H W"]
    grid_shape: Int32[Array, "2"]
    input_grid: Int8[Array, "H W"] | None = None
    input_shape: Int32[Array, "2"] | None = None
    demo_inputs: Int8[Array, "P H W"] | None = None
    demo_outputs: Int8[Array, "P H W"] | None = None
    demo_input_shapes: Int32[Array, "P 2"] | None = None
    demo_output_shapes: Int32[Array, "P 2"] | None = None
    # valid in-context pairs (the episode's own pair is masked)
    demo_mask: Bool[Array, " P"] | None = None
    clipboard: Int8[Array, "H W"] = eqx.field(kw_only=True)
    clipboard_mask: Bool[Array, "H W"] = eqx.field(kw_only=True)
    allowed_operations: Bool[Array, " 35"] = eqx.field(kw_only=True)
    step_count: Int32[Array, ""] = eqx.field(kw_only=True)


class EpisodeContext(eqx.Module):
    """The constants of an episode: its input grid and the in-context demonstration pairs."""

    input_grid: Int8[Array, "H W"]
    input_shape: Int32[Array, "2"]
    demo_inputs: Int8[Array, "P H W"]
    demo_outputs: Int8[Array, "P H W"]
    demo_input_shapes: Int32[Array, "P 2"]
    demo_output_shapes: Int32[Array, "P 2"]
    demo_mask: Bool[Array, " P"]


CONTEXT_FIELDS: tuple[str, ...] = tuple(EpisodeContext.__dataclass_fields__)
"""Observation fields that are constant within an episode (the episode context)."""

OBSERVATION_FIELDS: tuple[str, ...] = tuple(ArcObservation.__dataclass_fields__)
"""Names of the observation's fields, in order."""

StepInfo = dict[str, Any]
