"""__main__.py - `python3 -m fusetile.importer MODEL [options] -o OUT.json` (cli.main)."""

import sys

from .cli import main

sys.exit(main())
