"""Running training as a program: the host loop (progress, metrics log, checkpoints,
learning-curve plot), checkpoint evaluation and multi-process set-up.

Import the modules directly (``jaxarc.agents.run.training_loop``, ``.checkpoint``,
``.evaluate``, ``.family_eval``, ``.distributed``, ``.metrics_log``, ``.plotting``); this
package imports nothing on its own so that the CLI pays only for what a command uses.
"""
