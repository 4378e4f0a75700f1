"""`etappe bench`: games per second, cold compile time and warm start time.

Figures, not tests: speed depends on the machine, so it is printed here and
never asserted in the test suite.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np
from rich import box
from rich.table import Column, Table

from etappe.analysis.race import RaceRun, iter_chunks
from etappe.analysis.stats import wilson_interval
from etappe.kernels import race as K

from .common import console, progress_bar

CASES = [("stapop", 4, "greedy"), ("stapop", 4, "random"), ("millebornes", 4, "greedy"),
         ("millebornes", 2, "greedy"), ("millebornes", 4, "random"), ("touring", 4, "greedy")]
LOOKAHEAD_GAMES = 40  # enough to time a decision; the share of wins is a rough check, hence its interval
_TINY_RUN = ("from etappe.analysis.race import simulate; "
             "[simulate(d, players=p, games=10, seed=1) for d, p in (('stapop', 4), ('millebornes', 4))]")
# The look-ahead is compiled only by a run that plays it (kernels/race_policies.py).
_TINY_LOOKAHEAD_RUN = ("from etappe.analysis.race import simulate; "
                       "simulate('millebornes', players=2, games=2, policies=['lookahead:playouts=10', 'greedy'], "
                       "seed=1)")


def kernel_rate(run: RaceRun, games: int, repeats: int = 3) -> tuple[float, float]:
    """(hands per second, mean turns per hand) of the bare kernel, first hands
    only (those of games 0 .. games-1 of the run, first seats as the run
    has them); the best of `repeats` runs of the same games, as anything
    else running on the machine can only slow a run down."""
    players, sides, n_types = run.players, run.sides, len(run.design.cards)
    index = np.arange(games, dtype=np.int64)
    best = float("inf")
    for _ in range(repeats):
        chance = np.empty(games, np.uint64)
        pkeys = np.empty((games, players), np.uint64)
        K.initial_keys(run.seed, index, players, chance, pkeys)
        outs = (np.zeros((games, K.H_NCOLS), np.int32), np.zeros((games, sides, K.S_NCOLS), np.int32),
                np.zeros((games, sides, n_types, K.K_NCOLS), np.int16),
                np.zeros((games, sides, K.N_PROGRESS), np.int16))
        started = time.perf_counter()
        K.play_hands(run.card_table, run.rules, run.policy_ids, run.policy_params, run.seat_policies(index),
                     K.first_seats(index, 0, players), chance, pkeys, *outs, *run.policy_functions)
        best = min(best, time.perf_counter() - started)
    return games / best, float(outs[0][:, K.H_TURNS].mean())


def lookahead_cost(design: str, games: int) -> tuple[float, int, int]:
    """(milliseconds per look-ahead decision, games the look-ahead won, games
    won by either) over 2-player games of the default look-ahead against
    greedy, seats rotated. Decisions are counted as half the turns (the
    look-ahead plays every other turn)."""
    run = RaceRun(design, 2, ["lookahead", "greedy"], seed=1, seating="rotate")
    run.play(0, 2)
    started = time.perf_counter()
    frame = run.play(0, games)
    elapsed = time.perf_counter() - started
    last = frame[frame["last_hand"] == 1]
    winner = last["winner_side"].to_numpy()
    winning_policy = np.where(winner == 0, last["seat0_policy"], last["seat1_policy"])
    decisions = frame["turns"].sum() / 2
    return 1000 * elapsed / decisions, int((winning_policy[winner >= 0] == 0).sum()), int((winner >= 0).sum())


def start_times() -> tuple[float, float, float]:
    """(cold, warm, look-ahead) seconds for a fresh process to play a tiny
    greedy run: cold with an empty kernel cache (compiles the kernels it
    plays), warm with the cache it left; then a tiny look-ahead run on that
    cache, which compiles the look-ahead."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        times = []
        for code in (_TINY_RUN, _TINY_RUN, _TINY_LOOKAHEAD_RUN):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], env=env, check=True)
            times.append(time.perf_counter() - started)
    return times[0], times[1], times[2]


def bench(games: int, starts: bool) -> None:
    console.print(f"threads: {numba.get_num_threads()}, games per case: {games:,}")
    # on an 80-column terminal no design name is cut: the headings wrap at their spaces, and the
    # seven columns go without vertical rules
    widest = max(len(d) for d, _, _ in CASES)
    table = Table(Column("design", min_width=widest), "players", "policy", "turns per hand", "kernel hands/s",
                  "games/s (records)", "hands per game", box=box.SIMPLE_HEAD)
    look = Table(Column("design", min_width=widest), "ms per look-ahead decision",
                 "look-ahead share of wins vs greedy (95 % interval)",
                 title=f"look-ahead (default parameters), 2 players, {LOOKAHEAD_GAMES} games", box=box.SIMPLE_HEAD)
    steps = len(CASES) + 2 + (1 if starts else 0)
    with progress_bar(steps, "benchmark cases", resumable=False) as advance:  # one step per case; the first compiles if need be
        for design, players, policy in CASES:
            run = RaceRun(design, players, [policy], seed=1)
            run.play(0, 50)  # compile or load from cache outside the timing
            hands_per_s, turns = kernel_rate(run, games)
            started = time.perf_counter()
            hands = sum(len(frame) for _, frame in iter_chunks(run, games))  # as `etappe simulate` plays them
            games_per_s = games / (time.perf_counter() - started)
            table.add_row(design, str(players), policy, f"{turns:.0f}", f"{hands_per_s:,.0f}",
                          f"{games_per_s:,.0f}", f"{hands / games:.2f}")
            advance(1)
        for design in ("stapop", "millebornes"):
            ms, wins, decided = lookahead_cost(design, LOOKAHEAD_GAMES)
            low, high = wilson_interval(wins, decided)
            look.add_row(design, f"{ms:.2f}", f"{wins / decided:.2f} ({low:.2f} to {high:.2f})" if decided else "no game won")
            advance(1)
        if starts:
            cold, warm, lookahead = start_times()
            advance(1)
    console.print(table)
    console.print(look)
    if starts:
        console.print(f"start, fresh process playing a tiny greedy run: cold (empty cache, compiles) {cold:.1f} s, "
                      f"warm (cached) {warm:.1f} s; a tiny look-ahead run after them, which compiles the "
                      f"look-ahead: {lookahead:.1f} s")
