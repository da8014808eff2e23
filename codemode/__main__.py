"""``python -m codemode`` is the ``codemode`` command."""

from .cli import main

raise SystemExit(main())
