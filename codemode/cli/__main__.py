"""``python -m codemode.cli``: the ``codemode`` command."""

from .commands import main

raise SystemExit(main())
