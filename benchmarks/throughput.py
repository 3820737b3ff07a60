"""Environment throughput benchmark (same as ``jaxarc bench env``).

python benchmarks/throughput.py                 # full table, printed
python benchmarks/throughput.py --out benchmarks/results   # ... and written (md + json)
python benchmarks/throughput.py --quick         # batch 1/64/1024, fewer steps
"""

import sys

from jaxarc.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["bench", "env", *sys.argv[1:]]))
