"""Where an environment's tasks come from: the abstract task source and the task it hands out.

A source hands ``reset`` one :class:`Task` per episode, inside compiled code. Two kinds
exist:

* :class:`~jaxarc.data.bank.TaskBank`: fixed tasks in padded arrays. The state keeps only
  the task index (``episode_store`` returns an empty tuple) and the task is re-read from
  the one shared bank when needed, so nothing is copied per environment.
* generators (``gen/...``): a new random task per episode made with ``jax.random``; the
  state keeps the generated task itself (it is small: generator canvases are small).
"""

from __future__ import annotations

import abc

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Bool, Int8, Int32, PRNGKeyArray, PyTree


class Task(eqx.Module):
    """One task, padded to a canvas: demonstration pairs and test pairs."""

    demo_inputs: Int8[Array, "P H W"]
    demo_outputs: Int8[Array, "P H W"]
    demo_input_shapes: Int32[Array, "P 2"]
    demo_output_shapes: Int32[Array, "P 2"]
    num_demos: Int32[Array, ""]
    test_inputs: Int8[Array, "Q H W"]
    test_outputs: Int8[Array, "Q H W"]  # all PAD_VALUE where the pair is unscored
    test_input_shapes: Int32[Array, "Q 2"]
    test_output_shapes: Int32[Array, "Q 2"]  # (0, 0) where unscored
    num_tests: Int32[Array, ""]
    test_scored: Bool[Array, " Q"]  # False for padding and for tests without outputs

    @property
    def canvas_shape(self) -> tuple[int, int]:
        return tuple(self.demo_inputs.shape[-2:])  # type: ignore[return-value]


class AbstractTaskSource(eqx.Module):
    """Interface every task source implements (all methods traceable, one instance)."""

    @property
    def name(self) -> str:
        """A label for messages, saved states and reports (sources override it with a
        static ``name`` field; the class name otherwise)."""
        return type(self).__name__

    @property
    @abc.abstractmethod
    def canvas_shape(self) -> tuple[int, int]:
        """``(H, W)`` of every grid this source produces (static)."""

    @property
    @abc.abstractmethod
    def max_demos(self) -> int:
        """``P``: demonstration pairs per task, padded (static)."""

    @property
    @abc.abstractmethod
    def max_tests(self) -> int:
        """``Q``: test pairs per task, padded (static)."""

    @abc.abstractmethod
    def sample_task(
        self, key: PRNGKeyArray, task_index: Int32[Array, ""]
    ) -> tuple[Task, Int32[Array, ""]]:
        """A task for a new episode and its index.

        ``task_index >= 0`` asks for that task (banks); a negative index samples one
        uniformly. Generators ignore the index and return ``-1`` as the index.
        """

    @abc.abstractmethod
    def episode_store(self, task: Task) -> PyTree:
        """What the environment state must keep to find ``task`` again (per environment)."""

    @abc.abstractmethod
    def episode_task(self, store: PyTree, task_index: Int32[Array, ""]) -> Task:
        """The episode's task from what :meth:`episode_store` kept and the task index."""

    def episode_pair_arrays(
        self, store: PyTree, task_index: Int32[Array, ""], pair_index: Int32[Array, ""], test: bool
    ) -> tuple[
        Int8[Array, "H W"],
        Int32[Array, "2"],
        Int8[Array, "H W"],
        Int32[Array, "2"],
        Bool[Array, ""],
    ]:
        """``(input, input_shape, output, output_shape, scored)`` of one pair of the episode's
        task: demonstration pair ``pair_index``, or test pair when ``test`` (static).

        The step reads these every step. A source overrides this to read the pair without
        the rest of the task (a bank indexes its arrays by task and pair at once: one small
        gather per array instead of a whole task's)."""
        return pair_arrays(self.episode_task(store, task_index), pair_index, test)


def pair_arrays(
    arrays: Task | PyTree, index: Int32[Array, ""] | tuple, test: bool
) -> tuple[
    Int8[Array, "H W"], Int32[Array, "2"], Int8[Array, "H W"], Int32[Array, "2"], Bool[Array, ""]
]:
    """``(input, input_shape, output, output_shape, scored)`` at ``index`` of the demonstration
    (or, when ``test``, test) arrays of ``arrays``: a :class:`Task` indexed
    by pair, or a bank indexed by ``(task, pair)``. Demonstration pairs are always scored."""
    split = "test" if test else "demo"
    return (
        getattr(arrays, f"{split}_inputs")[index],
        getattr(arrays, f"{split}_input_shapes")[index],
        getattr(arrays, f"{split}_outputs")[index],
        getattr(arrays, f"{split}_output_shapes")[index],
        arrays.test_scored[index] if test else jnp.asarray(True),
    )
