"""Tape l'étape benchmark: cold compile (or cache load), warm start, races/s.

    /tmp/venv/bin/python benchmarks/bench_etape.py [--races 50000] [--players 4]
    /tmp/venv/bin/python benchmarks/bench_etape.py --lookahead 2000 [--spec lookahead]

Run it twice: the first run of a fresh checkout compiles, later runs load the
Numba cache (the 'first call' line shows which)."""
import argparse
import time

import numba
import numpy as np

t0 = time.perf_counter()
from etappe.analysis import etape as E  # noqa: E402

imported = time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--races", type=int, default=50_000)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--lookahead", type=int, default=0,
                        help="instead: this many races of one look-ahead against heuristics")
    parser.add_argument("--spec", default="lookahead")
    args = parser.parse_args()
    if args.lookahead:
        return lookahead(args.players, args.lookahead, args.spec)
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


def lookahead(players, races, spec, positions=300):
    """One look-ahead seat against heuristics (seats rotated): its share of
    races won (ties split) with a 95 % Wilson interval, its mean race time
    minus the heuristics' mean in the same race, and the cost per decision,
    timed on positions met in heuristic play (each seat to move with two or
    more legal cards)."""
    from etappe.analysis.stats import wilson_interval
    from etappe.kernels import etape as K

    pols = [spec] + ["heuristic"] * (players - 1)
    E.simulate(players, 2, pols, seed=0)
    t = time.perf_counter()
    r, _ = E.simulate(players, races, pols, seed=11)
    wall = time.perf_counter() - t
    times = np.stack([r[f"time_{s}"].to_numpy() for s in range(players)], axis=1)
    slots = np.stack([r[f"slot_{s}"].to_numpy() for s in range(players)], axis=1)
    best = times.min(axis=1, keepdims=True)
    share = ((times == best) / (times == best).sum(axis=1, keepdims=True))[slots == 0]
    wins = share.sum()
    lo, hi = wilson_interval(wins, races)
    mine = times[slots == 0]
    others = np.where(slots != 0, times, 0).sum(axis=1) / (players - 1)
    diff = mine - others
    print(f"{players} players, {races} races, {pols[0]} vs heuristic, seats rotated, seed 11: "
          f"{wall:.1f} s ({numba.get_num_threads()} threads)")
    print(f"  races won {wins / races:.3f} [{lo:.3f}, {hi:.3f}] (fair share {1 / players:.3f})")
    print(f"  race time minus the heuristics' mean: {diff.mean():+.1f} s "
          f"(standard error {diff.std(ddof=1) / np.sqrt(races):.1f} s)")
    # Cost per decision: positions from heuristic play, timed one by one.
    pid, prm, _ = E.parse_policy(spec)
    opts = E.option_vector({})
    hpids = np.full(players, K.POL_HEURISTIC, np.int64)
    hprm = np.stack([E.parse_policy("heuristic")[1]] * players)
    rng = np.random.default_rng(5)
    found, spent, g = 0, 0.0, 0
    while found < positions:
        st = np.zeros(K.S_SIZE, np.int64)
        K.init_race(st, players, opts)
        K.deal(st, np.uint64(rng.integers(1, 2**62)))
        profile = int(rng.integers(0, 5))
        K.start_stage(st, opts, profile, K.profile_start(st, opts, profile))
        st[K.S_TURN] = g % players
        g += 1
        rec = np.zeros(K.STAGE_COLS, np.int64)
        pkeys = np.arange(1, players + 1).astype(np.uint64)
        while K.stage_status(st, opts) == 0 and found < positions:
            t = st[K.S_TURN]
            legal = st[K.S_HAND + t] & K.legal_mask(st, opts)
            if K.popcount(legal) > 1:
                t0 = time.perf_counter()
                K.lookahead_card(st, opts, t, legal, False, False, prm, np.uint64(found + 1))
                spent += time.perf_counter() - t0
                found += 1
            K.play_turn(st, opts, hpids, hprm, np.uint64(g), pkeys, rec)
            if K.stage_status(st, opts) == 0:
                K.next_turn(st)
    print(f"  cost per decision (one thread, {positions} positions from heuristic play): "
          f"{spent / positions * 1000:.2f} ms")


if __name__ == "__main__":
    main()
