"""`python -m slmactor` runs the CLI."""

from slmactor.cli.entry import main

raise SystemExit(main())
