"""``python -m fakekube`` is the same as the ``fakekube`` command."""

import sys

from fakekube.cli.main import main

sys.exit(main())
