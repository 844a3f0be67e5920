"""The `slmactor` command: argparse, one module per command group, `--json` everywhere."""
