"""Run the benchmarks: `python -m benchmarks [NAME ...]` (all of them when no name is given)."""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    return (
        f"{platform.node()} {platform.system()} {platform.machine()} {cpu}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}"
    )


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    RESULTS.mkdir(exist_ok=True)
    failed = 0
    for name in names:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        started = time.time()
        try:
            result = module.run()
        except Exception as exc:  # a benchmark that breaks is reported, the others still run
            print(f"{name}: FAILED: {exc!r}", file=sys.stderr)
            failed += 1
            continue
        result.setdefault("on", machine())
        result["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
        out = RESULTS / f"{result['name']}.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"{result['name']}: {result['what']}")
        print(f"  ratio {result['ratio']:.3g} against {result['reference']}")
        print(f"  -> {out.relative_to(HERE.parent)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
