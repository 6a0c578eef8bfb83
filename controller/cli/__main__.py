"""`python -m controller.cli`: the same as the `tablectl` command."""

from controller.cli.main import main

raise SystemExit(main())
