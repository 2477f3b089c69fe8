"""``python -m refault sweep|plot|report ...``: see :mod:`refault.cli`."""

import sys

from .cli import main

sys.exit(main())
