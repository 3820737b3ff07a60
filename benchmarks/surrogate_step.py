"""Compiled vs eager GRPO train step, training throughput and the environment's share.

Same as ``jaxarc bench train``: prints the table; ``--out benchmarks/results`` also writes
train_step_<preset>.{json,md} there.

    python benchmarks/surrogate_step.py --preset quick
"""

import sys

from jaxarc.cli.bench_train import main

if __name__ == "__main__":
    sys.exit(main())
