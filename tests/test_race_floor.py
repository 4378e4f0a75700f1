"""The engine against an independent Stap op kernel.

benchmarks/stapop_floor.py is a second implementation of Stap op (four
players, greedy), written from the rules page for Stap op alone: its own
deal, draw, reshuffle, legal plays, effects, end and records, sharing
nothing with the engine but the random streams (kernels/rng.py) and
greedy's scores. Two implementations that agree on every record of
thousands of games, reshuffles included, are far less likely to share a
mistake than one implementation checked against itself. A difference is a
bug in one of them, or a change to the rules or to greedy made in one only.
"""
import importlib.util
from pathlib import Path

import numpy as np

from etappe.analysis.race import simulate

GAMES = 2000
CARD_STATS = ("drawn", "played", "discarded", "received", "victim_turns")  # the floor's order


def _floor_module():
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "stapop_floor.py"
    spec = importlib.util.spec_from_file_location("stapop_floor", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_independent_stapop_kernel_plays_the_same_games():
    floor = _floor_module()
    out = np.zeros((GAMES, 3), np.int64)  # turns, winner, lead changes
    cards = np.zeros((GAMES, floor.PLAYERS, floor.N_TYPES, len(CARD_STATS)), np.int16)
    progress = np.zeros((GAMES, floor.PLAYERS, len(floor.ROUNDS)), np.int16)
    deficit = np.zeros((GAMES, floor.PLAYERS), np.int64)
    engine = simulate("stapop", players=4, games=GAMES, policies=["greedy"], seed=7)
    firsts = engine["first_seat"].to_numpy(np.int64)
    assert set(firsts) == {0, 1, 2, 3}, "every seat starts some games"
    floor.play_games(7, GAMES, firsts, True, out, cards, progress, deficit)

    assert out[:, 1].min() >= 0, "every game has a winner"
    np.testing.assert_array_equal(engine["turns"], out[:, 0])
    np.testing.assert_array_equal(engine["winner_side"], out[:, 1])
    np.testing.assert_array_equal(engine["lead_changes"], out[:, 2])
    assert engine.attrs["progress_rounds"] == list(floor.ROUNDS)
    keys = [card["key"] for card in engine.attrs["cards"]]
    assert keys == ["go", "crossing", "flat_tyre", "youth_hostel", "headwind", "barriers_open", "bike_repairer",
                    "tailwind", "km5", "km6", "km8", "km10"]  # the floor's type numbers
    for s in range(floor.PLAYERS):
        np.testing.assert_array_equal(engine[f"s{s}_max_deficit"], deficit[:, s])
        for k, r in enumerate(floor.ROUNDS):
            np.testing.assert_array_equal(engine[f"s{s}_r{r}"], progress[:, s, k])
        for t, key in enumerate(keys):
            for k, stat in enumerate(CARD_STATS):
                np.testing.assert_array_equal(engine[f"s{s}_{key}_{stat}"], cards[:, s, t, k],
                                              err_msg=f"seat {s}, {key}, {stat}")
    assert (engine["reshuffles"] > 0).mean() > 0.9, "the games go through reshuffles"
