"""Old module paths of the modules moved by the re-layering, kept importable.

``import jaxarc.envs.operations`` (and every other path in :data:`MOVED_MODULES`) gives the
module at its new place, with a ``DeprecationWarning`` naming it. The alias is the same
module object, so ``jaxarc.envs.operations.apply_operation is
jaxarc.grid.operations.apply_operation``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

_GRID = ["operation_ids", "operations", "point_operations", "flood_fill", "bit_rows"]
_GRID += ["fusion_barrier"]
_MODEL = ["policy", "distributions", "features", "incontext", "layers"]
_GRPO = ["config", "advantages", "loss", "rollout", "train", "train_step"]
_RUN = ["training_loop", "checkpoint", "metrics_log", "plotting", "evaluate", "distributed"]

MOVED_MODULES: dict[str, str] = {
    **{f"jaxarc.envs.{name}": f"jaxarc.grid.{name}" for name in _GRID},
    "jaxarc.envs.grid_geometry": "jaxarc.grid.geometry",
    **{f"jaxarc.envs.{name}": f"jaxarc.gymnax.{name}" for name in ("environment", "spaces")},
    "jaxarc.envs.registry": "jaxarc.gymnax.registry",
    **{f"jaxarc.agents.{name}": f"jaxarc.agents.model.{name}" for name in _MODEL},
    **{f"jaxarc.agents.{name}": f"jaxarc.agents.grpo.{name}" for name in _GRPO},
    **{f"jaxarc.agents.{name}": f"jaxarc.agents.run.{name}" for name in _RUN},
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths only; everything else is left to the normal finders."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec) -> ModuleType:
        new = MOVED_MODULES[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there", DeprecationWarning, stacklevel=2
        )
        # The module at its new place: its own __name__ and __spec__ are kept.
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed under its new name


def install() -> None:
    """Put the finder in front of ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())
