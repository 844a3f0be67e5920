"""`python -m slmactor` runs the CLI."""

from slmactor.cli.main import main

raise SystemExit(main())
