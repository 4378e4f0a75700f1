"""Bremer Stadtmusikanten speed: cold compile, warm start, games per second.

    python benchmarks/bench_bremen.py [--games 20000]
    python benchmarks/bench_bremen.py --lookahead 400 [--spec lookahead] [--players 2]

Cold compile runs in a subprocess with an empty NUMBA_CACHE_DIR; warm start
is a fresh process that finds the cache (import + a 10-game batch).
--lookahead N instead plays N games of the look-ahead against greedy, seats
rotated (half the games with the look-ahead in seat 0, half in the last seat;
the starting player is drawn per game), and times single first-move
decisions in positions from greedy games.
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


def lookahead(games: int, spec: str, players: int) -> None:
    import numpy as np

    from etappe.analysis.bremen import Game, parse_policy, simulate
    from etappe.analysis.stats import wilson_interval
    from etappe.kernels import bremen as K

    wins = n = 0
    t = time.perf_counter()
    for seat in (0, players - 1):
        policies = ["greedy"] * players
        policies[seat] = spec
        df = simulate(players=players, games=games // 2, policies=policies, seed=2026 + seat)
        wins += int((df["winner_seat"] == seat).sum())
        n += len(df)
        capped = int(df["capped"].sum())
    wall = time.perf_counter() - t
    lo, hi = wilson_interval(wins, n)
    print(f"{spec} vs greedy, {players} players, seats rotated: {wins}/{n} wins = {wins / n:.3f} "
          f"(95 % Wilson {lo:.3f}-{hi:.3f}; fair share {1 / players:.3f}); {wall:.0f} s, "
          f"{numba.get_num_threads()} threads, last run capped {capped}")
    _, prow, _ = parse_policy(spec)
    rng = np.random.default_rng(1)
    times, sizes = [], []
    for i in range(60):
        g = Game(players=players, seed=i)
        g.play(["greedy"] * players, turns=int(rng.integers(4, 20)), seed=i)
        if g.winner >= 0:
            continue
        b = g.board
        d0, d1 = int(rng.integers(1, 7)), int(rng.integers(2, 7))
        moves = np.zeros(32 * int(b.binfo[K.B_N]), np.int64)
        k = K.first_moves(g.state, d0, d1, g.seat, b.kind, b.adj, b.deg, g.opts, b.binfo, moves,
                          np.empty_like(g.state), np.zeros_like(moves), np.zeros(8, np.int64),
                          np.zeros(8, np.int64), np.zeros(len(b.names), np.int8))
        if k < 2:
            continue
        t = time.perf_counter()
        K.lookahead_choice(g.state, g.seat, moves[:k], k, 0, d0, d1, False, 0, prow, b.kind, b.adj, b.deg,
                           b.dist, b.binfo, g.opts, np.uint64(i))
        if i:  # the first call may compile
            times.append(time.perf_counter() - t)
            sizes.append(k)
    print(f"cost per first-move decision (one thread): mean {1000 * np.mean(times):.1f} ms, "
          f"median {1000 * np.median(times):.1f} ms over {len(times)} positions, "
          f"mean {np.mean(sizes):.0f} legal moves")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--lookahead", type=int, default=0, help="games of the look-ahead against greedy")
    parser.add_argument("--spec", default="lookahead")
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args()
    if args.lookahead:
        lookahead(args.lookahead, args.spec, args.players)
        return
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
