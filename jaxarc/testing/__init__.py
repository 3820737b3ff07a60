"""Contract checks for jaxarc environments, to run on your own tasks and faces.

>>> from jaxarc.testing import check_environment
>>> check_environment("gen/flip")                 # every face of a registered name
>>> check_environment(my_bank, faces=("gymnax",))  # any task source

See :mod:`jaxarc.testing.contracts` for what is checked. A program policy has its own
contract, :func:`check_program_policy` (:mod:`jaxarc.testing.program_policy`).
"""

from jaxarc.testing.contracts import (
    FACES,
    ContractError,
    check_environment,
    check_functional,
    check_gymnasium,
    check_gymnax,
    check_jumanji,
)
from jaxarc.testing.program_policy import check_program_policy

__all__ = [
    "FACES",
    "ContractError",
    "check_environment",
    "check_functional",
    "check_gymnasium",
    "check_gymnax",
    "check_jumanji",
    "check_program_policy",
]
