"""A yardstick for the engine's speed, and a second implementation of Stap op.

Issue 2 asks for 150,000 four-player Stap op games/s with greedy and says a
tight hand-written Numba kernel reaches about 270,000. This script is such a
kernel, written from the rules page for Stap op alone (four players, default
options): constant tables, none of the other designs' features (safeties,
caps, coups fourrés, sum targets, teams), no positions, logs or invariant
checks. It deals, draws and reshuffles from the same random streams as the
engine (kernels/rng.py) and scores moves as etappe's greedy does (go or
remedy 80, distance 60 + value / 10, attack 70 + the target's distance / 101,
discards by keep value, ties by a random rank), so it plays the very same
games: tests/test_race_floor.py checks that every record agrees.

With --records it also keeps the per-card records etappe keeps (drawn,
played, discarded, received, turns lost; progress by round; lead changes and
deficits), in the same kind of arrays. The figures it prints are what a
kernel for one design could reach; docs/speed.md compares them with
`etappe bench`.

    python benchmarks/stapop_floor.py [--records] [--threads N] [--games N]
"""
import argparse
import time

import numba
import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from etappe.kernels.race import first_seats
from etappe.kernels.rng import game_key, next_u64, randint, rank

GO, CROSSING, FLAT, HOSTEL, HEADWIND, BARRIERS, REPAIRER, TAILWIND, KM5, KM6, KM8, KM10 = range(12)
N_TYPES = 12
COUNTS = np.array([14, 3, 3, 2, 4, 8, 8, 5, 24, 12, 8, 8], np.int64)
VALUE = np.array([0] * 8 + [5, 6, 8, 10], np.int64)
TARGET = np.array([0] * 8 + [8, 4, 2, 2], np.int64)
FITS = np.zeros(N_TYPES + 1, np.int64)  # by battle top + 1 (0: empty pile): go and remedy types that fit
FITS[0] = 1 << GO
FITS[CROSSING + 1] = 1 << BARRIERS
FITS[FLAT + 1] = 1 << REPAIRER
FITS[HOSTEL + 1] = 1 << GO
FITS[BARRIERS + 1] = 1 << GO
FITS[REPAIRER + 1] = 1 << GO
HAZARDS = (1 << CROSSING) | (1 << FLAT) | (1 << HOSTEL)
DISTANCE = (1 << KM5) | (1 << KM6) | (1 << KM8) | (1 << KM10)
NEEDS_TAILWIND = (1 << KM8) | (1 << KM10)
PLAYERS = 4
DISCARD = 7
# records: cards[player, type, stat]
DRAWN, PLAYED, DISCARDED, RECEIVED, TURNS_LOST = range(5)
# progress: the distances at the end of these rounds (etappe keeps the same ones)
ROUNDS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50,
          60, 70, 80, 90, 100, 120, 140, 160, 180, 200)

# The kernels are not cached: this file runs both as a script and imported by
# a test, and Numba cannot load a cache entry written under one module name
# (__main__) under the other. They compile in about 5 s.


@njit(inline="always")
def consider(m, score, pick, best, word):
    """Keep the move of highest score; among equal scores, of highest random rank."""
    if score > best or (score == best and rank(word, m) > rank(word, pick)):
        return m, score
    return pick, best


@njit(inline="always")
def shuffle(stock, n, key):
    """Fisher-Yates, drawing from the key as kernels/rng.py's shuffle does."""
    for i in range(n - 1, 0, -1):
        j, key = randint(key, i + 1)
        stock[i], stock[j] = stock[j], stock[i]
    return key


@njit(inline="always")
def draw(stock, n, hand, held, records, cards, p):
    """Player p takes the top card of the stock; returns the new stock size."""
    n -= 1
    t = stock[n]
    hand[p, t] += 1
    held[p] |= 1 << t
    if records:
        cards[p, t, DRAWN] += 1
    return n


@njit
def play(key, pkeys, first, records, cards, progress, deficit):
    stock = np.empty(99, np.int8)
    hand = np.zeros((PLAYERS, N_TYPES), np.int16)
    tableau = np.zeros((PLAYERS, N_TYPES), np.int16)
    discards = np.zeros(N_TYPES, np.int16)
    top = np.full(PLAYERS, -1, np.int64)
    limit_top = np.full(PLAYERS, -1, np.int64)
    laid = np.zeros((PLAYERS, N_TYPES), np.int16)
    need = np.full(PLAYERS, 16, np.int64)
    dist = np.zeros(PLAYERS, np.int64)
    held = np.zeros(PLAYERS, np.int64)
    n = 0
    kept = 0  # the next of ROUNDS to record
    for t in range(N_TYPES):
        for _ in range(COUNTS[t]):
            stock[n] = t
            n += 1
    key = shuffle(stock, n, key)
    for _ in range(5):
        for i in range(PLAYERS):
            n = draw(stock, n, hand, held, records, cards, (first + i) % PLAYERS)
    limited = 15  # bit p: player p is under headwind (everyone starts so)
    leader = -1
    lead_changes = 0
    seat = first
    turns = 0
    winner = -1
    while turns < 10_000:
        if records:
            if top[seat] >= CROSSING and top[seat] <= HOSTEL:
                cards[seat, top[seat], TURNS_LOST] += 1
            elif (limited >> seat) & 1 and limit_top[seat] >= 0:
                cards[seat, limit_top[seat], TURNS_LOST] += 1
        if n == 0:  # reshuffle: discards, laid stages, piles but their tops
            for t in range(N_TYPES):
                for _ in range(discards[t]):
                    stock[n] = t
                    n += 1
                discards[t] = 0
            for p in range(PLAYERS):
                for t in range(N_TYPES):
                    keep = 1 if t == top[p] or t == limit_top[p] else 0
                    for _ in range(tableau[p, t] - keep):
                        stock[n] = t
                        n += 1
                    tableau[p, t] = keep
            key = shuffle(stock, n, key)
        n -= 1  # draw(), written out: through the helper the turn loop is 5 % slower
        t = stock[n]
        hand[seat, t] += 1
        held[seat] |= 1 << t
        if records:
            cards[seat, t, DRAWN] += 1

        # greedy
        h = held[seat]
        word, pkeys[seat] = next_u64(pkeys[seat])
        pick = -1
        best = -1e18
        under_headwind = (limited >> seat) & 1
        own = h & FITS[top[seat] + 1]
        if under_headwind:
            own |= h & (1 << TAILWIND)
        while own != 0:
            c = trailing_zeros(own)
            own &= own - 1
            pick, best = consider(c * 8 + seat, 50.0 if c == TAILWIND else 80.0, pick, best, word)
        if top[seat] == GO:
            stages = h & DISTANCE
            if under_headwind:
                stages &= ~NEEDS_TAILWIND
            while stages != 0:
                c = trailing_zeros(stages)
                stages &= stages - 1
                if laid[seat, c] < TARGET[c]:
                    pick, best = consider(c * 8 + seat, 60.0 + 0.1 * VALUE[c], pick, best, word)
        attacks = h & (HAZARDS | (1 << HEADWIND))
        if attacks != 0:
            for other in range(PLAYERS):
                if other == seat:
                    continue
                fits = 0
                if top[other] == GO:
                    fits |= attacks & HAZARDS
                if (limited >> other) & 1 == 0:
                    fits |= attacks & (1 << HEADWIND)
                score = 70.0 + dist[other] / 101.0
                while fits != 0:
                    c = trailing_zeros(fits)
                    fits &= fits - 1
                    pick, best = consider(c * 8 + other, score, pick, best, word)
        if best <= 10.0:
            cs = h
            while cs != 0:
                c = trailing_zeros(cs)
                cs &= cs - 1
                count = hand[seat, c]
                if c >= KM5:
                    keep = 3.0 if laid[seat, c] + count <= TARGET[c] else -10.0
                elif c == GO:
                    keep = 0.5 if count > 1 else 2.5
                elif c == BARRIERS or c == REPAIRER or c == TAILWIND:
                    keep = 0.3 if count > 1 else 2.0
                else:
                    keep = 1.0 if count > 1 else 1.5
                pick, best = consider(c * 8 + DISCARD, -keep, pick, best, word)

        # the move's effects
        c = pick >> 3
        target = pick & 7
        left = hand[seat, c] - 1
        hand[seat, c] = left
        if left == 0:
            held[seat] &= ~(1 << c)
        turns += 1
        if records:
            cards[seat, c, DISCARDED if target == DISCARD else PLAYED] += 1
        if target == DISCARD:
            discards[c] += 1
        elif c >= KM5:
            laid[seat, c] += 1
            tableau[seat, c] += 1
            dist[seat] += VALUE[c]
            need[seat] -= 1
            if records:
                most = -1
                first = -1
                for p in range(PLAYERS):
                    if dist[p] > most:
                        most = dist[p]
                        first = p
                    elif dist[p] == most:
                        first = -1
                if first >= 0:
                    if leader >= 0 and leader != first:
                        lead_changes += 1
                    leader = first
                for p in range(PLAYERS):
                    deficit[p] = max(deficit[p], most - dist[p])
        elif c == TAILWIND:
            limited &= ~(1 << seat)
            limit_top[seat] = c
            tableau[seat, c] += 1
        elif c == HEADWIND:
            limited |= 1 << target
            limit_top[target] = c
            tableau[target, c] += 1
            if records:
                cards[target, c, RECEIVED] += 1
        else:
            top[target] = c
            tableau[target, c] += 1
            if records and target != seat:
                cards[target, c, RECEIVED] += 1
        if records and kept < len(ROUNDS) and turns == ROUNDS[kept] * PLAYERS:
            for p in range(PLAYERS):
                progress[p, kept] = dist[p]
            kept += 1
        if need[seat] == 0:
            winner = seat
            break
        seat = 0 if seat == PLAYERS - 1 else seat + 1
    if records:
        for p in range(PLAYERS):
            for k in range(kept, len(ROUNDS)):
                progress[p, k] = dist[p]
    return turns, winner, lead_changes


@njit(parallel=True)
def play_games(seed, games, firsts, records, out, cards, progress, deficit):
    """Games 0 .. games-1 of `seed`, in parallel: out[g] = turns, winner, lead changes.
    Seat firsts[g] plays first in game g."""
    for g in prange(games):
        pkeys = np.empty(PLAYERS, np.uint64)
        for p in range(PLAYERS):
            pkeys[p] = game_key(seed, g, 1 + p)
        out[g, 0], out[g, 1], out[g, 2] = play(game_key(seed, g, 0), pkeys, firsts[g], records, cards[g], progress[g], deficit[g])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", action="store_true", help="keep etappe's per-card records as well")
    parser.add_argument("--threads", type=int, default=0, help="Numba threads (default: all cores)")
    parser.add_argument("--games", type=int, default=200_000)
    args = parser.parse_args()
    if args.threads:
        numba.set_num_threads(args.threads)
    games = args.games
    out = np.zeros((games, 3), np.int64)
    cards = np.zeros((games, PLAYERS, N_TYPES, TURNS_LOST + 1), np.int16)
    progress = np.zeros((games, PLAYERS, len(ROUNDS)), np.int16)
    deficit = np.zeros((games, PLAYERS), np.int64)
    firsts = first_seats(np.arange(games), 0, PLAYERS)
    play_games(1, 100, firsts, args.records, out, cards, progress, deficit)  # compile outside the timing
    best = float("inf")
    for _ in range(3):
        cards[:] = 0
        deficit[:] = 0
        started = time.perf_counter()
        play_games(1, games, firsts, args.records, out, cards, progress, deficit)
        best = min(best, time.perf_counter() - started)
    turns = out[:, 0].mean()
    threads = numba.get_num_threads()
    print(f"Stap op floor, 4 players, greedy, records {'on' if args.records else 'off'}, {threads} threads: "
          f"{games / best:,.0f} games/s, {turns:.1f} turns a game, "
          f"{best / games / turns * 1e9 * threads:.1f} ns a turn per thread, "
          f"{np.mean(out[:, 1] < 0):.4f} capped")


if __name__ == "__main__":
    main()
