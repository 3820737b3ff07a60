import sys

from jaxarc.cli.main import main

sys.exit(main())
