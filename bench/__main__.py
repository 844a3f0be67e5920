"""Run the benchmarks: `python -m bench [NAME ...] [--quick] [--json FILE] [bench options]`.

Each `bench/bench_<name>.py` exposes `run(quick: bool) -> list[dict]`; rows carry the measured
value, the floor measured in the same run, their ratio and the target. Run on a quiet machine:
both cores are used by client and daemon.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path
from typing import Any


def _modules() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return "" if value is None else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default: all of {', '.join(_modules())})")
    parser.add_argument("--quick", action="store_true", help="fewer iterations (smoke run)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args, extra = parser.parse_known_args(argv)
    names = args.names or _modules()
    rows: list[dict[str, Any]] = []
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        started = time.monotonic()
        print(f"# {name} ...", file=sys.stderr, flush=True)
        # A bench with options of its own (`real --heldout`) takes the ones left unparsed.
        if hasattr(module, "run_args"):
            produced = module.run_args(args.quick, extra)
        elif extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        else:
            produced = module.run(args.quick)
        for row in produced:
            row.setdefault("bench", name)
            rows.append(row)
        print(f"# {name} done in {time.monotonic() - started:.1f}s", file=sys.stderr, flush=True)
    header = f"{'bench':<12} {'measure':<46} {'value':>12} {'unit':<8} {'floor':>12} {'ratio':>7}  target"
    print(header)
    for row in rows:
        print(
            f"{row['bench']:<12} {row['name']:<46} {_fmt(row.get('value')):>12} {row.get('unit', ''):<8} "
            f"{_fmt(row.get('floor')):>12} {_fmt(row.get('ratio')):>7}  {row.get('target', '')}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
