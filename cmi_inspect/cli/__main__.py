"""``python -m cmi_inspect.cli``: the ``cmi-inspect`` command."""

import sys

from cmi_inspect.cli import main

sys.exit(main())
