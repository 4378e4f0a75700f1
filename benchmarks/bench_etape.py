"""Tape l'étape benchmark: cold compile (or cache load), warm start, races/s.

    /tmp/venv/bin/python benchmarks/bench_etape.py [--races 50000] [--players 4]

Run it twice: the first run of a fresh checkout compiles, later runs load the
Numba cache (the 'first call' line shows which)."""
import argparse
import time

import numba

t0 = time.perf_counter()
from etappe.analysis import etape as E  # noqa: E402

imported = time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--races", type=int, default=50_000)
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    print(f"import: {imported:.2f} s; threads: {numba.get_num_threads()}")
    t = time.perf_counter()
    E.simulate(args.players, 2, ["random"], seed=0)
    print(f"first call (compile or cache load): {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    E.simulate(args.players, 2, ["random"], seed=1)
    print(f"warm start (2 races): {(time.perf_counter() - t) * 1000:.1f} ms")
    for label, pols in (("random", ["random"]), ("heuristic", ["heuristic"]),
                        ("mixed", ["heuristic", "random", "blocker", "high", "connector", "random"][:args.players])):
        for mode in ("sprint", "endurance"):
            t = time.perf_counter()
            races, stages = E.simulate(args.players, args.races, pols, seed=2, options={"mode": mode})
            wall = time.perf_counter() - t
            print(f"{args.players} players, {label:9s}, {mode:9s}: {args.races / wall:9,.0f} races/s "
                  f"({len(stages) / wall:10,.0f} stages/s, {wall:.2f} s)")


if __name__ == "__main__":
    main()
