"""Mille Bornes hand scores: the worked examples of the rules page and every bonus.

Each hand end is built as a real position (position_state), the side records
the kernel fills at the end of a hand (distance, safeties on the tableau,
coups fourrés) are taken from that position, and kernels.race.score_hand
scores it. Expected numbers are the rules page's, added up by hand.
"""
import numpy as np
import pytest

from etappe.kernels import race as K
from etappe.kernels.race_design import load_design
from etappe.kernels.race_position import position_state

MB = load_design("millebornes")


def hand_end(players, sides, stock=0, trip_side=-1, extension_side=-1, coups=None, options=None, design=MB):
    """Score the end of a hand of `design`: `sides` are position tables (distance, safeties)."""
    pos = {"players": players, "on_turn": 0, "stock": stock, "hands": {"0": []}, "sides": sides,
           "hand_sizes": {str(p): 0 for p in range(players)}}
    if extension_side >= 0:
        pos["trip"] = 1000
        pos["extension_side"] = extension_side
    state, ct, rules, _ = position_state(design, pos, options=options)
    state[K.ST_TRIP_SIDE] = trip_side
    n = int(rules[K.R_SIDES])
    out = np.zeros((n, K.S_NCOLS), np.int32)
    values = {c.key: c.value for c in design.cards}
    for s, table in enumerate(sides):
        out[s, K.S_DISTANCE] = sum(values[k] * c for k, c in table.get("distance", {}).items())
        out[s, K.S_SAFETIES] = len(table.get("safeties", []))
        out[s, K.S_COUPS] = (coups or [0] * n)[s]
    K.score_hand(state, rules, out)
    return [int(x) for x in out[:, K.S_SCORE]]


def tab(distance=None, safeties=()):
    return {"battle": "roll", "limit": "none", "distance": dict(distance or {}), "safeties": list(safeties)}


def test_french_rulebook_empty_stock_850_and_925():
    # 4 players; hand ends on an empty stock, nobody completed the trip.
    ns = tab({"km100": 3, "km50": 1}, ["extra_tank", "driving_ace"])                   # 350 km
    ew = tab({"km200": 2, "km100": 4, "km25": 1}, ["puncture_proof"])                   # 825 km
    assert hand_end(4, [ns, ew], stock=0, coups=[1, 0]) == [350 + 2 * 100 + 300, 825 + 100]
    assert hand_end(4, [ns, ew], stock=0, coups=[1, 0]) == [850, 925]


def test_french_rulebook_delayed_action_2300():
    # N-S completes 1000 after the stock ran out, no 200, 3 safeties:
    # 1000 + 400 (trip) + 300 (delayed action) + 300 (safe trip) + 300 (safeties) = 2300.
    ns = tab({"km100": 8, "km75": 2, "km50": 1}, ["extra_tank", "driving_ace", "puncture_proof"])
    ew = tab({"km100": 2, "km25": 2}, [])
    assert hand_end(4, [ns, ew], stock=0, trip_side=0)[0] == 2300
    assert hand_end(4, [ns, ew], stock=0, trip_side=0)[1] == 250
    # the same trip with cards left in the stock: no delayed action
    assert hand_end(4, [ns, ew], stock=5, trip_side=0)[0] == 2000


def test_winning_moves_two_safeties_and_two_coups_fourres_1300():
    # 2 safeties played normally, 2 by coup fourré: 4 x 100 + 300 (all four) + 2 x 300 = 1300
    four = tab({}, ["extra_tank", "puncture_proof", "driving_ace", "right_of_way"])
    other = tab({"km100": 2})
    assert hand_end(2, [four, other], stock=10, coups=[2, 0])[0] == 1300


def test_three_safeties_get_no_all_four_bonus():
    three = tab({}, ["extra_tank", "puncture_proof", "driving_ace"])
    assert hand_end(2, [three, tab({"km25": 1})], stock=10)[0] == 300


def test_safe_trip_only_without_a_200():
    with200 = tab({"km200": 1, "km100": 5}, [])
    without = tab({"km100": 7}, [])
    other = tab({"km50": 1})
    assert hand_end(2, [with200, other], stock=10, trip_side=0)[0] == 700 + 400
    assert hand_end(2, [without, other], stock=10, trip_side=0)[0] == 700 + 400 + 300
    # the same from the second side
    assert hand_end(2, [other, with200], stock=10, trip_side=1)[1] == 700 + 400
    assert hand_end(2, [other, without], stock=10, trip_side=1)[1] == 700 + 400 + 300


@pytest.mark.parametrize("players", [2, 3])
def test_shutout_default_parker(players):
    # Parker / Winning Moves: to the side completing the trip if no opponent laid any distance.
    winner = tab({"km100": 7})
    zeros = [tab() for _ in range(players - 1)]
    scores = hand_end(players, [winner] + zeros, stock=10, trip_side=0)
    assert scores == [700 + 400 + 300 + 500] + [0] * (players - 1)
    # one opponent with 25 km: no shut-out
    some = [tab({"km25": 1})] + zeros[1:]
    assert hand_end(players, [winner] + some, stock=10, trip_side=0)[0] == 700 + 400 + 300
    # nobody completed the trip: no shut-out even against a side at 0 km
    assert hand_end(players, [tab({"km100": 3})] + zeros, stock=0) == [300] + [0] * (players - 1)


def test_shutout_option_fr():
    fr = {"shutout": "fr"}
    # any side with 0 km gives 500 to each opponent, trip completed or not
    assert hand_end(2, [tab({"km100": 3}), tab()], stock=0, options=fr) == [300 + 500, 0]
    scores = hand_end(3, [tab({"km100": 3}), tab({"km50": 1}), tab()], stock=0, options=fr)
    assert scores == [300 + 500, 50 + 500, 0]
    # two sides at 0 km: each gives 500 to each of its opponents
    scores = hand_end(3, [tab({"km100": 7}), tab(), tab()], stock=10, trip_side=0, options=fr)
    assert scores == [700 + 400 + 300 + 2 * 500, 500, 500]


def test_extension_bonus_to_the_caller_who_completes_1000():
    caller = tab({"km100": 10})
    other = tab({"km75": 8})
    scores = hand_end(2, [caller, other], stock=10, trip_side=0, extension_side=0)
    assert scores == [1000 + 400 + 300 + 200, 600]


def test_extension_bonus_to_each_opponent_when_the_caller_fails():
    # the caller stalls at 800; nobody completes 1000
    scores = hand_end(3, [tab({"km100": 8}), tab({"km100": 2}), tab({"km50": 1})], stock=0, extension_side=0)
    assert scores == [800, 200 + 200, 50 + 200]
    # an opponent completes 1000 instead
    scores = hand_end(2, [tab({"km75": 8, "km50": 4}), tab({"km100": 10})], stock=10, trip_side=1, extension_side=0)
    assert scores == [800, 1000 + 400 + 300 + 200]


def test_option_failed_extension_trip_points():
    # the caller completed 700, called the extension and stalls at 800: with the option it keeps
    # the 400 for the trip it completed; the opponents get the extension bonus as before
    keep = {"failed_extension_trip_points": True}
    scores = hand_end(3, [tab({"km100": 8}), tab({"km100": 2}), tab({"km50": 1})], stock=0, extension_side=0,
                      options=keep)
    assert scores == [800 + 400, 200 + 200, 50 + 200]
    # the caller who completes 1000 scores its trip once
    scores = hand_end(2, [tab({"km100": 10}), tab({"km75": 8})], stock=10, trip_side=0, extension_side=0,
                      options=keep)
    assert scores == [1000 + 400 + 300 + 200, 600]


def test_no_extension_no_extension_bonus():
    scores = hand_end(2, [tab({"km100": 7}), tab({"km100": 2})], stock=10, trip_side=0)
    assert scores == [700 + 400 + 300, 200]
