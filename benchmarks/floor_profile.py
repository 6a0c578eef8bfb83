"""Where a floor store consumer spends its time under floor_scale's load (issue 32): cProfile.

    python -m benchmarks.floor_profile [--tables 1000] [--flood 20] [--day 86400] [--consumers 1]

The rig of benchmarks/bench_floor_scale.py (a Mosquitto and a PostgreSQL of its own, the load
generator speaking the floor's schema), with the consumers in this process so that cProfile sees
their two threads: the worker (parsing, the store) and the connection thread (its own MQTT
client, controller/floor/mqtt.py, reading the broker). A flood of `--flood` entries a table,
then one table `--day` entries behind, caught up. Prints JSON: each phase's seconds, and the
ten functions of each thread with the most time of their own (profiled: about two to three
times slower than unprofiled). Not a `bench_` module: `make bench` does not run it.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import bench_floor_scale as rig
from controller.adapters.floor.config import Broker
from controller.floor.consumer import FloorConsumer


def top(profile: cProfile.Profile, count: int = 10) -> list[dict[str, Any]]:
    stats = pstats.Stats(profile, stream=io.StringIO())
    rows = []
    for (path, line, name), (_cc, calls, own, cumulative, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{Path(path).name}:{line}({name})" if line else name
        rows.append({"function": where, "calls": calls, "own_s": round(own, 3), "cumulative_s": round(cumulative, 3)})
    return sorted(rows, key=lambda r: -float(r["own_s"]))[:count]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--flood", type=int, default=20)
    parser.add_argument("--day", type=int, default=rig.DAY)
    parser.add_argument("--consumers", type=int, default=1)
    parser.add_argument("--generators", type=int, default=2)
    args = parser.parse_args()
    rig.TABLES, rig.GENERATORS = args.tables, args.generators
    profiles: dict[str, cProfile.Profile] = {}
    work, network = FloorConsumer._work, FloorConsumer._connect_loop

    def profiled(name: str, run: Any) -> Any:
        def wrapper(self: Any, *rest: Any) -> Any:
            profile = profiles.setdefault(f"{name}-{len(profiles)}", cProfile.Profile())
            profile.enable()
            try:
                return run(self, *rest)
            finally:
                profile.disable()

        return wrapper

    FloorConsumer._work = profiled("worker", work)  # type: ignore[method-assign]
    FloorConsumer._connect_loop = profiled("network", network)  # type: ignore[method-assign]
    load_before = os.getloadavg()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, rig.broker(Path(tmp)) as port, rig.postgres() as pg:
        home = Path(tmp)
        template = rig.make_template(home)
        url = rig.new_database(pg, "floor_profile")
        import psycopg

        db = psycopg.connect(url, autocommit=True)
        broker = Broker("127.0.0.1", port, False)
        consumers = [FloorConsumer(broker, url, consumer_id=f"p{n}", group=rig.GROUP) for n in range(args.consumers)]
        for c in consumers:
            c.start()
        for c in consumers:
            c.connected.wait(60)
        generator = rig.Generator(port, template, (home / "generator.log").open("wb"))

        def count(sql: str) -> int:
            return int(db.execute(sql).fetchone()[0])  # type: ignore[index]

        try:
            rig._wait(lambda: count("SELECT COUNT(*) FROM floor_tables") >= rig.TABLES, 120, "no statuses")
            start = time.time()
            generator.do(f"flood {args.flood}")
            total = rig.TABLES * args.flood
            done = rig._within(lambda: count("SELECT COUNT(*) FROM floor_entries") >= total, 300, 0.05)
            seconds = round((done or time.time()) - start, 2)
            out["flood"] = {"entries": total, "seconds": seconds, "complete": bool(done)}
            start = time.time()
            generator.do(f"behind DAY {args.day}")
            held = "SELECT COALESCE(MAX(contiguous), 0) FROM floor_tables WHERE table_id = 'DAY'"
            done = rig._within(lambda: count(held) >= args.day, 300, 0.2)
            out["day"] = {"entries": args.day, "seconds": round((done or time.time()) - start, 2), "held": count(held)}
        finally:
            for c in consumers:
                c.stop(60)
            generator.stop()
            db.close()
    out["load_average_before"] = [round(x, 2) for x in load_before]
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    out["top"] = {name: top(profile) for name, profile in profiles.items()}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
