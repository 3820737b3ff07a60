"""Contract checks for jaxarc environments, to run on your own tasks and faces.

>>> from jaxarc.testing import check_environment
>>> check_environment("gen/flip")                 # every face of a registered name
>>> check_environment(my_bank, faces=("gymnax",))  # any task source

See :mod:`jaxarc.testing.contracts` for what is checked.
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

__all__ = [
    "FACES",
    "ContractError",
    "check_environment",
    "check_functional",
    "check_gymnasium",
    "check_gymnax",
    "check_jumanji",
]
