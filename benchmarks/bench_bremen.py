"""Bremer Stadtmusikanten speed: cold compile, warm start, games per second.

    python benchmarks/bench_bremen.py [--games 20000]

Cold compile runs in a subprocess with an empty NUMBA_CACHE_DIR; warm start
is a fresh process that finds the cache (import + a 10-game batch).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numba

SNIPPET = (
    "import time; t = time.perf_counter();"
    "from etappe.analysis.bremen import simulate;"
    "simulate(players=4, games=10, policies=['greedy'] * 4, seed=0);"
    "print(time.perf_counter() - t)"
)


def _start_time(cache_dir: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", SNIPPET], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        cold = _start_time(cache)
        warm = _start_time(cache)
    print(f"cold start (compile, empty cache): {cold:.1f} s")
    print(f"warm start (cached, import + 10 games): {warm:.2f} s")

    from etappe.analysis.bremen import simulate

    simulate(players=4, games=10, policies=["greedy"] * 4, seed=0)  # load this process's cache
    print(f"threads: {numba.get_num_threads()}")
    cases = [
        (4, ["greedy"] * 4, args.games),
        (4, ["greedy", "random"] * 2, args.games),
        (2, ["greedy"] * 2, args.games),
        (3, ["greedy"] * 3, args.games),
        (4, ["random"] * 4, max(10, args.games // 200)),  # never ends: every game runs to the 2000-turn cap
    ]
    for players, policies, games in cases:
        t = time.perf_counter()
        df = simulate(players=players, games=games, policies=policies, seed=1)
        wall = time.perf_counter() - t
        print(f"{players}p {'/'.join(policies):32s} {games:7d} games {games / wall:9.0f} games/s "
              f"{df['turns'].sum() / wall:10.0f} turns/s  mean turns {df['turns'].mean():7.1f}  "
              f"capped {df['capped'].mean():.3f}")


if __name__ == "__main__":
    main()
