"""Rulebook scenarios of the race games (shared/rules/race_games.md).

Every rule and option of the rules page is set up as a position and checked
through the position API (legal moves, effects of a move). Expected values
come from the rules page, never from running the engine.
"""
import functools
import inspect
import re
from importlib import resources

import numpy as np
import pytest
from card_order import in_card_order

from etappe.analysis.race import simulate
from etappe.kernels import race as K
from etappe.kernels.race_design import DesignError, load_design, parse_design, turn_cap
from etappe.kernels.race_position import legal_moves_of, play_position_move, position_state

MB = load_design("millebornes")
SO = load_design("stapop")
TO = load_design("touring")


# ---- helpers -------------------------------------------------------------------
def side(battle="roll", limit="none", distance=None, safeties=()):
    return {"battle": battle, "limit": limit, "distance": dict(distance or {}), "safeties": list(safeties)}


def position(players, hands, sides, on_turn=0, stock=40, **extra):
    pos = {"players": players, "on_turn": on_turn, "stock": stock,
           "hands": {str(k): list(v) for k, v in hands.items()}, "sides": sides}
    pos.update(extra)
    return pos


def legal(design, pos, options=None):
    return set(legal_moves_of(design, pos, options=options))


def play(design, pos, move, policies=None, options=None):
    new, info = play_position_move(design, pos, move, policies=policies, options=options)
    assert info["broken_invariant"] == 0, info
    return new, info


def turn_to(new, seat, hand):
    """The position after a move, with `seat` on turn holding `hand` (after its draw)."""
    pos = dict(new)
    pos["on_turn"] = seat
    pos["hands"] = {str(seat): list(hand)}
    return pos


def km(design, side_dict):
    values = {c.key: c.value for c in design.cards}
    return sum(values[k] * n for k, n in side_dict["distance"].items())


NEUTRAL_MB = ["km25", "km50", "km75", "gasoline", "spare_tire", "repairs"]  # holds no safety


# =================================================================================
# Stap op
# =================================================================================
SO_HAND = ["go", "km5", "km6", "km8", "km10", "tailwind"]


def so_pos(own, opp, hand=SO_HAND, **kw):
    return position(2, {0: hand, 1: ["km5"] * 5}, [own, opp], **kw)


def test_stapop_deck_and_target_from_the_rules_page():
    counts = SO.counts(2)
    assert counts == {"go": 14, "crossing": 3, "flat_tyre": 3, "youth_hostel": 2, "headwind": 4, "barriers_open": 8,
                      "bike_repairer": 8, "tailwind": 5, "km5": 24, "km6": 12, "km8": 8, "km10": 8}  # the deck table
    assert sum(counts.values()) == 99
    assert counts["go"] == 14 and counts["youth_hostel"] == 2 and counts["headwind"] == 4
    assert SO.trip_for(2) == (100, 0)            # 8 x 5 + 4 x 6 + 2 x 8 + 2 x 10
    assert SO.set_target(2)["km5"] == 8 and SO.set_target(2)["km10"] == 2
    assert sum(SO.set_target(2).values()) == 16  # 16 stage cards
    assert SO.hand_size == 5


def test_stapop_starts_under_headwind():
    # A fresh side (limit "start") shows Stap op: 5 and 6 km yes, 8 and 10 km need Wind mee.
    moves = legal(SO, so_pos(side("go", "start"), side("go", "start")))
    assert {"play km5", "play km6", "play tailwind"} <= moves
    assert "play km8" not in moves and "play km10" not in moves


def test_stapop_deal_starts_every_side_under_headwind():
    ct, rules = SO.tables(3)
    state = np.zeros(K.STATE_SIZE, np.int16)
    cards = np.zeros((3, len(SO.cards), K.K_NCOLS), np.int16)
    K.deal(state, ct, rules, 0, np.uint64(12345), cards, np.zeros((0, K.LOG_NCOLS), np.int32))
    go = SO.card_index("go")
    km8 = SO.card_index("km8")
    for s in range(3):
        assert K.is_limited(state, s)
        state[K.side_at(s) + K.SD_BATTLE] = go  # even with Stap op showing, 8 km is blocked
        assert not K.can_lay_distance(state, ct, rules, s, km8)
    # and every hand holds exactly 5 cards
    assert [int(state[K.HAND_N_AT + p]) for p in range(3)] == [5, 5, 5]


def test_stapop_wind_mee_lifts_the_headwind():
    moves = legal(SO, so_pos(side("go", "tailwind"), side("go", "start")))
    assert {"play km5", "play km6", "play km8", "play km10"} <= moves
    assert "play tailwind" not in moves  # no headwind to lift


def test_stapop_tegenwind_only_on_a_side_showing_wind_mee():
    hand = ["headwind", "km5", "km5", "km5", "km5", "km5"]
    assert "play headwind on side 1" not in legal(SO, so_pos(side("go"), side("go", "start"), hand))
    assert "play headwind on side 1" not in legal(SO, so_pos(side("go"), side("go", "headwind"), hand))
    assert "play headwind on side 1" in legal(SO, so_pos(side("go"), side("go", "tailwind"), hand))
    # option limit_on_limit: also on a side showing Tegenwind, still never on one
    # under the starting headwind, which shows no Wind mee
    on = {"limit_on_limit": True}
    assert "play headwind on side 1" in legal(SO, so_pos(side("go"), side("go", "headwind"), hand), options=on)
    assert "play headwind on side 1" not in legal(SO, so_pos(side("go"), side("go", "start"), hand), options=on)
    new, info = play(SO, so_pos(side("go"), side("empty", "tailwind"), hand), "play headwind on side 1")
    assert new["sides"][1]["limit"] == "headwind"
    pos = turn_to(new, 1, ["km8", "km10", "km5", "km6", "go", "km5"])
    pos["sides"][1]["battle"] = "go"
    moves = legal(SO, pos)
    assert "play km8" not in moves and "play km10" not in moves and "play km5" in moves


@pytest.mark.parametrize("hazard", ["crossing", "flat_tyre", "youth_hostel"])
def test_stapop_hazards_only_on_a_side_showing_stap_op(hazard):
    hand = [hazard, "km5", "km5", "km5", "km5", "km5"]
    assert f"play {hazard} on side 1" in legal(SO, so_pos(side("go"), side("go"), hand))
    for battle in ("empty", "barriers_open", "bike_repairer", "crossing", "youth_hostel"):
        assert f"play {hazard} on side 1" not in legal(SO, so_pos(side("go"), side(battle), hand)), battle
    assert f"play {hazard}" not in legal(SO, so_pos(side("go"), side("go"), hand))  # never on yourself


def test_stapop_crossing_needs_its_remedy_then_a_new_stap_op():
    hand = ["barriers_open", "bike_repairer", "go", "km5", "km6", "tailwind"]
    moves = legal(SO, so_pos(side("crossing"), side("go"), hand))
    assert "play barriers_open" in moves
    assert "play bike_repairer" not in moves and "play go" not in moves
    assert "play km5" not in moves and "play km6" not in moves
    new, _ = play(SO, so_pos(side("crossing"), side("go"), hand), "play barriers_open")
    assert new["sides"][0]["battle"] == "barriers_open"
    moves = legal(SO, turn_to(new, 0, ["go", "km5", "km6", "km5", "km5", "km5"]))
    assert "play go" in moves and "play km5" not in moves
    flat = legal(SO, so_pos(side("flat_tyre"), side("go"), hand))
    assert "play bike_repairer" in flat and "play barriers_open" not in flat and "play go" not in flat


def test_stapop_jeugdherberg_is_cleared_by_stap_op_alone():
    hand = ["barriers_open", "bike_repairer", "go", "km5", "km6", "tailwind"]
    moves = legal(SO, so_pos(side("youth_hostel"), side("go"), hand))
    assert "play go" in moves
    assert "play barriers_open" not in moves and "play bike_repairer" not in moves and "play km5" not in moves
    new, _ = play(SO, so_pos(side("youth_hostel"), side("go"), hand), "play go")
    assert new["sides"][0]["battle"] == "go"
    assert "play km5" in legal(SO, turn_to(new, 0, ["km5", "km6", "km5", "km5", "km5", "km5"]))


TANDEM = ('\n[[cards]]\nkey = "tandem"\nname = "Tandem"\nrole = "safety"\ncount = 1\n'
          'protects = ["headwind"]\nacts_as_go = true\n')


def test_a_permanent_go_that_does_not_protect_from_jeugdherberg_lets_stap_op_clear_it(tmp_path):
    # "Stap op with a Mille Bornes-like safety" (rules page, section 4): a permanent go
    # against headwind only. Jeugdherberg "is cleared by Stap op alone", so a side
    # holding the tandem that takes a Jeugdherberg must still be able to lay Stap op.
    path = tmp_path / "tandem.toml"
    path.write_text(SO_TEXT + TANDEM, "utf-8")
    design = load_design(path)
    hand = ["go", "km5", "km6", "km8", "km10", "barriers_open"]
    own = side("youth_hostel", "none", safeties=["tandem"])
    moves = legal(design, so_pos(own, side("go"), hand))
    assert "play go" in moves and "play km5" not in moves
    new, _ = play(design, so_pos(own, side("go"), hand), "play go")
    moves = legal(design, turn_to(new, 0, ["go", "km5", "km8", "km5", "km5", "km5"]))
    assert "play km5" in moves and "play km8" in moves  # the tandem lifts the starting headwind too
    # with no hazard on top the permanent go makes the go card pointless, as Right of Way does
    moves = legal(design, so_pos(side("empty", "none", safeties=["tandem"]), side("go"), hand))
    assert "play go" not in moves and "play km5" in moves


def test_stapop_discarding_is_always_allowed():
    hand = ["crossing", "headwind", "km10", "km8", "barriers_open", "go"]
    moves = legal(SO, so_pos(side("crossing"), side("empty", "start"), hand))
    assert {f"discard {c}" for c in hand} <= moves


WHEN_NO_PLAY = {"discard": "when_no_play"}


def test_option_discard_when_no_play_takes_the_discards_away_while_a_card_can_be_played():
    # The seed: a card goes "op de aflegstapel ..., als bovengenoemde mogelijkheden niet voorhanden zijn".
    # Crossing on the own pile, the opponent not moving and under the starting headwind: of this hand only
    # Spoorbomen open (the crossing's remedy) can be played.
    hand = ["crossing", "headwind", "km10", "km8", "barriers_open", "go"]
    assert legal(SO, so_pos(side("crossing"), side("empty", "start"), hand), options=WHEN_NO_PLAY) == {
        "play barriers_open"}
    # Mille Bornes: a safety is a play, so a hand holding one never discards.
    hand = ["km25", "km50", "km75", "km100", "km200", "stop", "driving_ace"]
    assert legal(MB, position(2, {0: hand, 1: NEUTRAL_MB}, [side("stop"), side("empty")]),
                 options=WHEN_NO_PLAY) == {"play driving_ace"}


def test_option_discard_when_no_play_lets_a_player_who_cannot_play_discard_any_card():
    # Not moving (crossing on the pile, no remedy held), the opponent shows no Stap op (no hazard fits) and no
    # Wind mee (no Tegenwind): nothing can be played, so every held card may be discarded, as by default.
    hand = ["km10", "km8", "km5", "headwind", "crossing", "youth_hostel"]
    pos = so_pos(side("crossing"), side("empty", "start"), hand)
    assert legal(SO, pos, options=WHEN_NO_PLAY) == legal(SO, pos) == {f"discard {c}" for c in hand}


def test_option_discard_when_no_play_forces_a_stage_that_disqualifies():
    # Under overshoot = "disqualify" a stage of a complete kind is a play: holding nothing else, the player
    # must lay it (docs/race_rules.md), where by default it could discard.
    own = side("go", "tailwind", {"km5": 8})
    hand = ["km5"] * 6
    opts = {"overshoot": "disqualify"}
    assert legal(SO, so_pos(own, side("empty", "start"), hand), options=opts | WHEN_NO_PLAY) == {"play km5"}
    assert legal(SO, so_pos(own, side("empty", "start"), hand), options=opts) == {"play km5", "discard km5"}


def test_stapop_stage_of_a_complete_kind_is_refused():
    own = side("go", "tailwind", {"km5": 8, "km6": 3})
    moves = legal(SO, so_pos(own, side("go")))
    assert "play km5" not in moves and "discard km5" in moves
    assert "play km6" in moves  # 3 of 4


def test_stapop_laying_the_whole_set_wins():
    own = side("go", "tailwind", {"km5": 8, "km6": 4, "km8": 2, "km10": 1})
    assert km(SO, own) == 90
    new, info = play(SO, so_pos(own, side("go")), "play km10")
    assert info["hand_over"] and info["trip_side"] == 0
    assert new["sides"][0]["km"] == 100


def test_stapop_100_km_in_the_wrong_stages_does_not_win():
    # The target is the set, not the sum. Under the default (forbid) a stage of
    # a complete kind cannot be laid, so 100 km in the wrong stages needs
    # overshoot = "disqualify": 10 x 5 + 4 x 6 + 2 x 8 + 1 x 10 = 100 km.
    own = side("go", "tailwind", {"km5": 10, "km6": 4, "km8": 2})
    new, info = play(SO, so_pos(own, side("go")), "play km10", options={"overshoot": "disqualify"})
    assert new["sides"][0]["km"] == 100
    assert not info["hand_over"] and info["trip_side"] == -1


def test_stapop_option_overshoot_disqualify():
    opts = {"overshoot": "disqualify"}
    own = side("go", "tailwind", {"km5": 8, "km6": 3})
    assert "play km5" in legal(SO, so_pos(own, side("go")), options=opts)
    # Having laid a ninth 5 km, the owner can no longer win by completing the set.
    own = side("go", "tailwind", {"km5": 9, "km6": 4, "km8": 2, "km10": 1})
    new, info = play(SO, so_pos(own, side("go")), "play km10", options=opts)
    assert not info["hand_over"] and info["trip_side"] == -1
    # The same last card wins for a side that did not overshoot.
    own = side("go", "tailwind", {"km5": 8, "km6": 4, "km8": 2, "km10": 1})
    _, info = play(SO, so_pos(own, side("go")), "play km10", options=opts)
    assert info["hand_over"] and info["trip_side"] == 0


def test_stapop_position_beyond_the_set_is_refused_under_forbid():
    # default overshoot = "forbid": a ninth 5 km stage can never have been laid
    own = side("go", "tailwind", {"km5": 9})
    with pytest.raises(DesignError, match="sides\\[0\\].distance.km5: 9, but the target set takes 8"):
        legal(SO, so_pos(own, side("go")))


def test_stapop_disqualify_through_the_move_itself():
    opts = {"overshoot": "disqualify"}
    own = side("go", "tailwind", {"km5": 8, "km6": 4, "km8": 2, "km10": 1})
    hand = ["km5", "km10", "km5", "km5", "km5", "km5"]
    new, info = play(SO, so_pos(own, side("go"), hand), "play km5", options=opts)
    assert not info["hand_over"] and new["sides"][0].get("disqualified") is True
    pos = turn_to(new, 0, ["km10", "km5", "km5", "km5", "km5", "km5"])
    _, info = play(SO, pos, "play km10", options=opts)
    assert not info["hand_over"] and info["trip_side"] == -1


def test_stapop_reshuffle_collects_the_cards_under_every_pile_top():
    # "every battle/limit pile except its top card": a position cannot bury cards under a top, so they
    # are put there in the state, taken from the discard pile (every card stays accounted for). Side 0's
    # battle pile: go, crossing, barriers_open, go (top); its limit pile: headwind, tailwind (top).
    own = side("go", "tailwind", {"km5": 2})
    opp = side("go", "start")
    pos = position(2, {0: ["km10", "km5", "km5", "km5", "km5"], 1: ["km6"] * 5}, [own, opp], stock=0)
    state, ct, rules, seat = position_state(SO, pos)
    b0 = K.side_at(0)
    buried = ["go", "crossing", "barriers_open", "headwind"]
    for name in buried:
        t = SO.card_index(name)
        state[K.DISCARD_AT + t] -= 1
        state[b0 + K.SD_TABLEAU + t] += 1
    n_types = len(SO.cards)
    # what the rebuilt stock must hold: the discard pile, side 0's two stages and its four buried cards
    expected = np.array([state[K.DISCARD_AT + t] for t in range(n_types)])
    expected[SO.card_index("km5")] += 2
    for name in buried:
        expected[SO.card_index(name)] += 1
    hand_before = np.array([state[K.HAND_AT + t] for t in range(n_types)])
    cards = np.zeros((2, n_types, K.K_NCOLS), np.int16)
    log = np.zeros((16, K.LOG_NCOLS), np.int32)
    drew, _ = K.draw(state, ct, rules, 0, np.uint64(7), cards, log)
    assert drew and log[1, 2] == K.EV_RESHUFFLE and log[1, 5] == expected.sum()
    stock = np.bincount(state[K.STOCK_AT:K.STOCK_AT + state[K.ST_STOCK_N]], minlength=n_types)
    drawn = np.array([state[K.HAND_AT + t] for t in range(n_types)]) - hand_before
    np.testing.assert_array_equal(stock + drawn, expected)
    tableau = {SO.cards[t].key: int(state[b0 + K.SD_TABLEAU + t]) for t in range(n_types)
               if state[b0 + K.SD_TABLEAU + t]}
    assert tableau == {"go": 1, "tailwind": 1}  # the tops stay; nothing is left under them
    assert state[b0 + K.SD_BATTLE] == SO.card_index("go") and state[b0 + K.SD_DIST] == 10
    assert K.check_state(state, ct, rules) != K.BROKEN_CONSERVATION


def test_stapop_reshuffle_keeps_laid_stages_counted():
    own = side("go", "tailwind", {"km5": 8, "km6": 4, "km8": 2, "km10": 1})
    opp = side("go", "start", {"km5": 3})
    discard = ["crossing", "km6", "headwind", "go", "km8"]
    pos = position(2, {0: ["km10", "km5", "km5", "km5", "km5"], 1: ["km6"] * 5}, [own, opp], stock=0,
                   discard=discard)
    state, ct, rules, seat = position_state(SO, pos)
    # Counted by hand from the position: 99 cards - 10 in hands - 18 laid stages (15 + 3) - 3 pile tops
    # (go, tailwind; go: the opponent's "start" headwind is no card) = 68 on the discard pile (the cards
    # not placed anywhere), and nothing under the tops. The rebuild collects the discard pile, every laid
    # stage and every pile but its top: 68 + 18 + 0 = 86; the draw then takes one: 85.
    cards = np.zeros((2, len(SO.cards), K.K_NCOLS), np.int16)
    log = np.zeros((16, K.LOG_NCOLS), np.int32)
    drew, _ = K.draw(state, ct, rules, 0, np.uint64(7), cards, log)
    assert drew
    assert log[1, 2] == K.EV_RESHUFFLE and log[1, 5] == 86
    assert state[K.ST_STOCK_N] == 85
    b0, b1 = K.side_at(0), K.side_at(1)
    assert state[b0 + K.SD_DIST] == 90 and state[b1 + K.SD_DIST] == 15  # still counted
    assert state[b0 + K.SD_BATTLE] == SO.card_index("go")              # tops stay
    assert state[b0 + K.SD_TABLEAU + SO.card_index("km5")] == 0        # the stage cards are gone
    assert K.check_state(state, ct, rules) != K.BROKEN_CONSERVATION
    # ...and the last stage still completes the set
    m = SO.card_index("km10") * 8 + 0
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, 0, moves)
    assert m in moves[:n]
    ids = np.zeros(2, np.int32)
    params = np.zeros((2, K.N_PARAMS))
    result = np.zeros(2, np.int64)
    K.apply_move_boxed(ct, rules, state, 0, m, ids, params, np.arange(1, 3, dtype=np.uint64),
                       np.array([3], np.uint64), np.zeros((2, K.S_NCOLS), np.int32), cards,
                       np.zeros((16, K.LOG_NCOLS), np.int32), result)
    assert result[1] == 1 and state[K.ST_TRIP_SIDE] == 0 and state[b0 + K.SD_DIST] == 100
    assert K.check_state(state, ct, rules) == 0


def test_stapop_has_no_safeties_and_no_coup_fourre():
    assert not any(c.role == "safety" for c in SO.cards)
    # so no game ever sees a safety laid or a coup fourré, whatever is played
    df = simulate("stapop", players=4, games=100, policies=["random", "greedy"], seed=5)
    for s in range(4):
        assert (df[f"s{s}_safeties"] == 0).all() and (df[f"s{s}_coups"] == 0).all()


# =================================================================================
# Mille Bornes
# =================================================================================
def mb_pos(own, opp, hand, players=2, others=None, **kw):
    hands = {0: hand}
    for p in range(1, players):
        hands[p] = (others or {}).get(p, NEUTRAL_MB)
    sides = [own, opp] + [side() for _ in range(MB.sides(players) - 2)]
    return position(players, hands, sides, **kw)


DIST_HAND = ["km25", "km50", "km75", "km100", "km200", "roll", "end_of_limit"]
ALL_KM = {"play km25", "play km50", "play km75", "play km100", "play km200"}


def test_mille_bornes_deck_and_trips_from_the_rules_page():
    # the rules page's deck table, card by card
    assert MB.counts(4) == {"km25": 10, "km50": 10, "km75": 10, "km100": 12, "km200": 4, "out_of_gas": 3,
                            "flat_tire": 3, "accident": 3, "speed_limit": 4, "stop": 5, "gasoline": 6,
                            "spare_tire": 6, "repairs": 6, "end_of_limit": 6, "roll": 14, "extra_tank": 1,
                            "puncture_proof": 1, "driving_ace": 1, "right_of_way": 1}
    assert sum(MB.counts(4).values()) == 106 and sum(MB.counts(6).values()) == 106
    assert sum(MB.counts(2).values()) == 101 and sum(MB.counts(3).values()) == 101
    for key in ("stop", "speed_limit", "out_of_gas", "flat_tire", "accident"):
        assert MB.counts(2)[key] == MB.counts(4)[key] - 1
    assert MB.trip_for(2) == (700, 1000) and MB.trip_for(3) == (700, 1000)
    assert MB.trip_for(4) == (1000, 0) and MB.trip_for(6) == (700, 1000)
    assert MB.sides(2) == 2 and MB.sides(3) == 3 and MB.sides(4) == 2 and MB.sides(6) == 3
    assert MB.hand_size == 6
    with pytest.raises(DesignError, match="not 5"):
        MB.tables(5)


def fewest_distance_cards(design, players, km):
    """The fewest distance cards that add up to exactly `km`, within the
    deck's counts and the per-hand caps (a small exact search)."""
    limits = [(c.value, min(c.count, c.cap or c.count)) for c in design.cards if c.role == "distance"]
    fewest = {0: 0}
    for value, copies in limits:
        reach = dict(fewest)
        for total, n in fewest.items():
            for k in range(1, copies + 1):
                if total + k * value <= km and reach.get(total + k * value, 10**9) > n + k:
                    reach[total + k * value] = n + k
        fewest = reach
    return fewest[km]


def test_mb_fewest_distance_cards_to_700_and_1000():
    # Rules page: at least 5 distance cards reach 700, at least 8 reach 1000
    # (at most two 200s count in a hand).
    assert fewest_distance_cards(MB, 2, 700) == 5
    assert fewest_distance_cards(MB, 4, 1000) == 8


def test_mb_distance_needs_roll():
    assert not ALL_KM & legal(MB, mb_pos(side("empty"), side(), DIST_HAND))
    assert "play roll" in legal(MB, mb_pos(side("empty"), side(), DIST_HAND))
    assert ALL_KM <= legal(MB, mb_pos(side("roll"), side(), DIST_HAND))
    for remedy in ("gasoline", "spare_tire", "repairs"):
        assert not ALL_KM & legal(MB, mb_pos(side(remedy), side(), DIST_HAND))


def test_mb_right_of_way_is_a_permanent_roll():
    own = side("empty", safeties=["right_of_way"])
    assert ALL_KM <= legal(MB, mb_pos(own, side(), DIST_HAND))
    own = side("gasoline", safeties=["right_of_way"])  # remedied hazard: no Roll needed
    assert ALL_KM <= legal(MB, mb_pos(own, side(), DIST_HAND))
    own = side("out_of_gas", safeties=["right_of_way"])  # uncorrected hazard: no distance
    assert not ALL_KM & legal(MB, mb_pos(own, side(), DIST_HAND))


def test_mb_no_roll_under_right_of_way_unless_the_option_allows_it():
    # Decision (docs/race_rules.md): Right of Way is a permanent Roll, so a Roll is refused;
    # option go_with_permanent_go lets it be laid (on a pile a Roll may top: empty or a remedy).
    for battle in ("empty", "gasoline"):
        pos = mb_pos(side(battle, safeties=["right_of_way"]), side(), DIST_HAND)
        assert "play roll" not in legal(MB, pos)
        assert "play roll" in legal(MB, pos, options={"go_with_permanent_go": True})
    pos = mb_pos(side("roll", safeties=["right_of_way"]), side(), DIST_HAND)
    assert "play roll" not in legal(MB, pos, options={"go_with_permanent_go": True})  # never Roll on Roll


def test_mb_remedy_then_no_roll_needed_with_right_of_way():
    hand = ["gasoline", "km100", "km25", "km50", "roll", "km75", "km200"]
    new, _ = play(MB, mb_pos(side("out_of_gas", safeties=["right_of_way"]), side(), hand), "play gasoline")
    assert new["sides"][0]["battle"] == "gasoline"
    assert "play km100" in legal(MB, turn_to(new, 0, ["km100"] + NEUTRAL_MB))


def test_mb_hazards_on_a_right_of_way_side_showing_a_remedy_or_empty():
    hand = ["out_of_gas", "flat_tire", "accident", "stop", "speed_limit", "km25", "km50"]
    for battle in ("empty", "gasoline", "roll"):
        moves = legal(MB, mb_pos(side(), side(battle, safeties=["right_of_way"]), hand))
        assert {"play out_of_gas on side 1", "play flat_tire on side 1", "play accident on side 1"} <= moves, battle
        assert "play stop on side 1" not in moves and "play speed_limit on side 1" not in moves
    moves = legal(MB, mb_pos(side(), side("flat_tire", safeties=["right_of_way"]), hand))
    assert not {"play out_of_gas on side 1", "play accident on side 1", "play flat_tire on side 1"} & moves


def test_mb_hazards_only_on_a_side_showing_roll():
    hand = ["out_of_gas", "flat_tire", "accident", "stop", "speed_limit", "km25", "km50"]
    hazards = {"play out_of_gas on side 1", "play flat_tire on side 1", "play accident on side 1",
               "play stop on side 1"}
    assert hazards <= legal(MB, mb_pos(side(), side("roll"), hand))
    for battle in ("empty", "gasoline", "spare_tire", "accident", "stop"):
        assert not hazards & legal(MB, mb_pos(side(), side(battle), hand)), battle
    assert not {"play out_of_gas", "play stop", "play speed_limit"} & legal(MB, mb_pos(side(), side(), hand))


def test_mb_speed_limit_any_time_but_not_on_a_limited_side():
    hand = ["speed_limit", "km25", "km50", "km75", "km100", "roll", "gasoline"]
    for battle in ("roll", "empty", "accident"):
        assert "play speed_limit on side 1" in legal(MB, mb_pos(side(), side(battle), hand)), battle
    assert "play speed_limit on side 1" in legal(MB, mb_pos(side(), side("roll", "end_of_limit"), hand))
    limited = mb_pos(side(), side("roll", "speed_limit"), hand)
    assert "play speed_limit on side 1" not in legal(MB, limited)
    assert "play speed_limit on side 1" in legal(MB, limited, options={"limit_on_limit": True})


def test_mb_under_speed_limit_only_25_and_50():
    moves = legal(MB, mb_pos(side("roll", "speed_limit"), side(), DIST_HAND))
    assert {"play km25", "play km50", "play end_of_limit"} <= moves
    assert not {"play km75", "play km100", "play km200"} & moves
    moves = legal(MB, mb_pos(side("roll", "end_of_limit"), side(), DIST_HAND))
    assert ALL_KM <= moves and "play end_of_limit" not in moves


def test_mb_end_of_limit_lifts_the_limit():
    new, _ = play(MB, mb_pos(side("roll", "speed_limit"), side(), DIST_HAND), "play end_of_limit")
    assert new["sides"][0]["limit"] == "end_of_limit"
    assert ALL_KM <= legal(MB, turn_to(new, 0, DIST_HAND))


def test_mb_at_most_two_200s():
    assert "play km200" in legal(MB, mb_pos(side("roll", distance={"km200": 1}), side(), DIST_HAND))
    moves = legal(MB, mb_pos(side("roll", distance={"km200": 2}), side(), DIST_HAND))
    assert "play km200" not in moves and "play km100" in moves and "discard km200" in moves


def test_mb_never_beyond_the_trip():
    own = side("roll", distance={"km100": 6, "km50": 1})  # 650 of 700
    moves = legal(MB, mb_pos(own, side(), DIST_HAND))
    assert {"play km25", "play km50"} <= moves and not {"play km75", "play km100", "play km200"} & moves
    own = side("roll", distance={"km100": 6, "km25": 3})  # 675
    moves = legal(MB, mb_pos(own, side(), DIST_HAND))
    assert "play km25" in moves and "play km50" not in moves
    # 4 players race 1000
    own = side("roll", distance={"km100": 9, "km25": 2})  # 950 of 1000
    moves = legal(MB, mb_pos(own, side(), DIST_HAND, players=4))
    assert {"play km25", "play km50"} <= moves and "play km75" not in moves


def test_mb_option_overshoot_disqualify():
    # The seed: "wie te veel etappes of kilometers neerlegt, kan niet meer winnen" (who lays too many
    # kilometres can no longer win); the rulebooks' "never beyond the trip" is the default.
    opts = {"overshoot": "disqualify"}
    own = side("roll", distance={"km100": 6, "km50": 1})  # 650 of 700
    assert ALL_KM <= legal(MB, mb_pos(own, side(), DIST_HAND), options=opts)
    new, info = play(MB, mb_pos(own, side(), DIST_HAND), "play km100", options=opts)
    assert new["sides"][0]["km"] == 750 and not info["hand_over"] and info["trip_side"] == -1
    assert new["sides"][0].get("disqualified") is True  # "can no longer win": the move itself disqualifies
    # a position beyond the trip: refused under the default, a disqualified side under the option
    beyond = mb_pos(side("roll", distance={"km100": 7, "km50": 1}), side(), DIST_HAND)
    with pytest.raises(DesignError, match=r"sides\[0\].distance: 750 km, beyond the trip of 700"):
        legal(MB, beyond)
    assert "play km25" in legal(MB, beyond, options=opts)


def test_mb_disqualification_outlasts_the_extension_in_positions():
    # Decision (docs/race_rules.md): a side that passed 700 under overshoot = "disqualify" stays
    # disqualified when the extension raises the trip above its distance. The position format keeps it.
    opts = {"overshoot": "disqualify"}
    passed = side("roll", distance={"km200": 2, "km75": 7, "km50": 1})  # 975 of 700
    pos = mb_pos(side("roll", distance={"km100": 6}), passed, DIST_HAND)
    new, info = play(MB, pos, "play km100", policies=["bold", "bold"], options=opts)
    assert info["extension_called"] and new["trip"] == 1000 and new["extension_side"] == 0
    assert new["sides"][1]["disqualified"] is True and new["sides"][1]["km"] == 975
    after, info = play(MB, turn_to(new, 1, DIST_HAND), "play km25", options=opts)
    assert after["sides"][1]["km"] == 1000 and not info["hand_over"] and info["trip_side"] == -1
    # without the field the same side would read as racing on: the 1000 km would end the hand
    del new["sides"][1]["disqualified"]
    _, info = play(MB, turn_to(new, 1, DIST_HAND), "play km25", options=opts)
    assert info["hand_over"] and info["trip_side"] == 1
    # the field is checked against what the distance shows
    with pytest.raises(DesignError, match=r"sides\[1\].disqualified: true, but only the option overshoot"):
        legal(MB, mb_pos(side(), dict(side(), disqualified=True), DIST_HAND))
    with pytest.raises(DesignError, match=r"sides\[1\].disqualified: false, but the side's distance is beyond"):
        legal(MB, mb_pos(side(), dict(passed, disqualified=False), DIST_HAND), options=opts)
    with pytest.raises(DesignError, match=r"sides\[1\].disqualified: true, but no side is disqualified unless"):
        legal(MB, mb_pos(side(), dict(side("roll", distance={"km100": 5}), disqualified=True), DIST_HAND),
              options=opts)


@pytest.mark.parametrize("hazard,remedy", [("out_of_gas", "gasoline"), ("flat_tire", "spare_tire"),
                                           ("accident", "repairs")])
def test_mb_remedy_on_its_own_hazard_then_roll(hazard, remedy):
    hand = ["gasoline", "spare_tire", "repairs", "roll", "km25", "km50", "end_of_limit"]
    moves = legal(MB, mb_pos(side(hazard), side(), hand))
    assert f"play {remedy}" in moves
    assert not ({"play gasoline", "play spare_tire", "play repairs"} - {f"play {remedy}"}) & moves
    assert "play roll" not in moves and not ALL_KM & moves
    new, _ = play(MB, mb_pos(side(hazard), side(), hand), f"play {remedy}")
    assert new["sides"][0]["battle"] == remedy
    moves = legal(MB, turn_to(new, 0, DIST_HAND))
    assert "play roll" in moves and not ALL_KM & moves
    new, _ = play(MB, turn_to(new, 0, DIST_HAND), "play roll")
    assert ALL_KM <= legal(MB, turn_to(new, 0, DIST_HAND))


def test_mb_stop_is_cleared_by_roll():
    hand = ["gasoline", "spare_tire", "repairs", "roll", "km25", "km50", "end_of_limit"]
    moves = legal(MB, mb_pos(side("stop"), side(), hand))
    assert "play roll" in moves and not {"play gasoline", "play spare_tire", "play repairs"} & moves
    new, _ = play(MB, mb_pos(side("stop"), side(), hand), "play roll")
    assert new["sides"][0]["battle"] == "roll"


def test_mb_safety_protects_from_its_hazards():
    hand = ["out_of_gas", "flat_tire", "accident", "stop", "speed_limit", "km25", "km50"]
    for safety, blocked in (("extra_tank", {"out_of_gas"}), ("puncture_proof", {"flat_tire"}),
                            ("driving_ace", {"accident"}), ("right_of_way", {"stop", "speed_limit"})):
        moves = legal(MB, mb_pos(side(), side("roll", safeties=[safety]), hand))
        for card in ("out_of_gas", "flat_tire", "accident", "stop", "speed_limit"):
            assert (f"play {card} on side 1" in moves) == (card not in blocked), (safety, card)


@pytest.mark.parametrize("hazard,safety", [("out_of_gas", "extra_tank"), ("flat_tire", "puncture_proof"),
                                           ("accident", "driving_ace")])
def test_mb_safety_cancels_its_hazard_but_roll_is_still_needed(hazard, safety):
    hand = [safety, "km25", "km50", "km100", "roll", "km75", "km200"]
    new, info = play(MB, mb_pos(side(hazard), side(), hand), f"play {safety}")
    assert new["sides"][0]["safeties"] == [safety]
    # the hazard is cancelled, and a Roll is still needed (default): the position word "needs_go"
    # (docs/positions.md), not the hazard and not a go
    assert new["sides"][0]["battle"] == "needs_go"
    assert info["next_seat"] == 0  # extra turn
    after = ["km25", "km50", "km100", "roll", "km75", "km200", "gasoline"]
    # default: a Roll is still needed, and no remedy is (the hazard is gone): Roll or a discard, nothing else
    assert legal(MB, turn_to(new, 0, after)) == {"play roll"} | {f"discard {c}" for c in after}


@pytest.mark.parametrize("remedy,safety", [("gasoline", "extra_tank"), ("spare_tire", "puncture_proof"),
                                           ("repairs", "driving_ace")])
def test_mb_safety_over_its_remedy_leaves_the_roll_still_needed(remedy, safety):
    # The seed: a safety laid when its hazard is already covered (the remedy on top of the battle pile)
    # no longer acts on that attack: the pile still shows the remedy, and a Roll is still needed.
    # The safety is laid all the same: it protects from now on and gives the extra turn.
    hand = [safety, "km25", "km50", "km100", "roll", "km75", "km200"]
    new, info = play(MB, mb_pos(side(remedy), side(), hand), f"play {safety}")
    assert new["sides"][0]["battle"] == remedy and new["sides"][0]["safeties"] == [safety]
    assert info["next_seat"] == 0  # extra turn
    after = ["km25", "km50", "km100", "roll", "km75", "km200", "gasoline"]
    assert legal(MB, turn_to(new, 0, after)) == {"play roll"} | {f"discard {c}" for c in after}


def test_mb_option_no_roll_after_safety():
    opts = {"roll_after_safety": False}
    hand = ["extra_tank", "km25", "km50", "km100", "roll", "km75", "km200"]
    new, _ = play(MB, mb_pos(side("out_of_gas"), side(), hand), "play extra_tank", options=opts)
    moves = legal(MB, turn_to(new, 0, ["km25", "km50", "km100", "km75", "km200", "gasoline", "repairs"]),
                  options=opts)
    assert ALL_KM <= moves


def test_mb_positions_after_a_safety_over_its_hazard():
    # What the two rules above leave on the battle pile, written as a position: "needs_go" (a Roll
    # is still needed, the default) and "virtual_go" (none, under roll_after_safety = false).
    hand = ["km25", "km50", "km100", "roll", "km75", "km200", "gasoline"]
    moves = legal(MB, mb_pos(side("needs_go", safeties=["extra_tank"]), side(), hand))
    assert "play roll" in moves and not ALL_KM & moves
    opts = {"roll_after_safety": False}
    assert ALL_KM <= legal(MB, mb_pos(side("virtual_go", safeties=["extra_tank"]), side(), hand), options=opts)
    # Positions no game can reach are refused: no safety that protects from a hazard, or the other option.
    for battle, safeties, options, problem in (
            ("needs_go", [], None, "shows no safety that protects from a hazard"),
            ("virtual_go", ["extra_tank"], None, "'virtual_go' does not arise under roll_after_safety = true"),
            ("needs_go", ["extra_tank"], opts, "'needs_go' does not arise under roll_after_safety = false")):
        with pytest.raises(DesignError) as err:
            legal(MB, mb_pos(side(battle, safeties=safeties), side(), hand), options=options)
        assert "sides[0].battle: " in str(err.value) and problem in str(err.value), str(err.value)


def test_mb_right_of_way_cancels_stop_and_speed_limit():
    hand = ["right_of_way", "km25", "km50", "km100", "km75", "km200", "gasoline"]
    new, info = play(MB, mb_pos(side("stop", "speed_limit"), side(), hand), "play right_of_way")
    assert info["next_seat"] == 0
    assert new["sides"][0]["limit"] == "none" and new["sides"][0]["battle"] != "stop"
    assert ALL_KM <= legal(MB, turn_to(new, 0, DIST_HAND))  # permanent Roll, no limit


def test_mb_safety_extra_turn_and_none_once_the_stock_is_empty():
    hand = ["puncture_proof", "km25", "km50", "km100", "roll", "km75", "km200"]
    _, info = play(MB, mb_pos(side(), side(), hand, stock=10), "play puncture_proof")
    assert info["next_seat"] == 0
    _, info = play(MB, mb_pos(side(), side(), hand, stock=1), "play puncture_proof")
    assert info["next_seat"] == 0  # one card still to draw: the stock is not empty yet
    _, info = play(MB, mb_pos(side(), side(), hand, stock=0), "play puncture_proof")
    assert info["next_seat"] == 1  # French rule (default)
    _, info = play(MB, mb_pos(side(), side(), hand, stock=0), "play puncture_proof",
                   options={"safety_extra_turn_after_stock_empty": True})
    assert info["next_seat"] == 0
    # an ordinary card passes the turn on
    _, info = play(MB, mb_pos(side(), side(), hand, stock=10), "play km100")
    assert info["next_seat"] == 1


def coup_position(stock=30, players=3, victim_seat=2, attack="out_of_gas", safety="extra_tank"):
    sides = MB.sides(players)
    hands = {0: [attack, "km25", "km50", "km75", "km100", "roll", "gasoline"]}
    for p in range(1, players):
        hands[p] = list(NEUTRAL_MB)
    hands[victim_seat] = [safety] + NEUTRAL_MB[1:]
    return position(players, hands, [side("roll") for _ in range(sides)], stock=stock)


def test_mb_coup_fourre_out_of_turn():
    pos = coup_position()
    new, info = play(MB, pos, "play out_of_gas on side 2", policies=["greedy"] * 3)
    assert info["coup_fourre_by"] == 2
    assert info["next_seat"] == 2 and new["on_turn"] == 2  # seat 1 loses its turn
    assert new["sides"][2]["battle"] == "roll"              # the hazard never lands
    assert new["sides"][2]["safeties"] == ["extra_tank"]
    assert "extra_tank" not in new["hands"]["2"]
    assert len(new["hands"]["2"]) == 6                      # replacement draw
    assert new["stock"] == 29
    assert sorted(new["hands"]["1"]) == sorted(NEUTRAL_MB)  # untouched
    assert len(new["hands"]["0"]) == 6
    # protected from now on
    moves = legal(MB, turn_to(new, 0, ["out_of_gas", "flat_tire"] + NEUTRAL_MB[:5]))
    assert "play out_of_gas on side 2" not in moves and "play flat_tire on side 2" in moves


def test_mb_coup_fourre_declined_or_switched_off():
    pos = coup_position()
    new, info = play(MB, pos, "play out_of_gas on side 2", policies=["greedy", "greedy", "greedy:coup_fourre=0"])
    assert info["coup_fourre_by"] is None and info["next_seat"] == 1
    assert new["sides"][2]["battle"] == "out_of_gas" and "extra_tank" in new["hands"]["2"]
    new, info = play(MB, pos, "play out_of_gas on side 2", options={"coup_fourre": False})
    assert info["coup_fourre_by"] is None and new["sides"][2]["battle"] == "out_of_gas"


def test_mb_coup_fourre_after_the_stock_ran_out():
    new, info = play(MB, coup_position(stock=0), "play out_of_gas on side 2")
    assert info["coup_fourre_by"] == 2 and info["next_seat"] == 2
    assert len(new["hands"]["2"]) == 5  # nothing to draw
    # option coup_fourre_turn_after_stock_empty = false: the safety is still laid out of turn, but
    # the turn goes on from the attacker (seat 1 keeps its turn)
    off = {"coup_fourre_turn_after_stock_empty": False}
    new, info = play(MB, coup_position(stock=0), "play out_of_gas on side 2", options=off)
    assert info["coup_fourre_by"] == 2 and info["next_seat"] == 1
    assert new["sides"][2]["safeties"] == ["extra_tank"] and new["sides"][2]["battle"] == "roll"
    # made while the stock still held a card (its replacement draw takes the last): the turn jump holds
    new, info = play(MB, coup_position(stock=1), "play out_of_gas on side 2", options=off)
    assert info["coup_fourre_by"] == 2 and info["next_seat"] == 2 and new["stock"] == 0


def test_mb_coup_fourre_against_speed_limit_with_right_of_way():
    pos = coup_position(attack="speed_limit", safety="right_of_way")
    new, info = play(MB, pos, "play speed_limit on side 2")
    assert info["coup_fourre_by"] == 2 and new["sides"][2]["limit"] == "none"
    assert "right_of_way" in new["sides"][2]["safeties"]


def test_mb_coup_fourre_in_teams_of_four():
    # seats 0 and 2 are side 0 (N-S), seats 1 and 3 side 1 (E-W)
    pos = coup_position(players=4, victim_seat=3, attack="stop", safety="right_of_way")
    new, info = play(MB, pos, "play stop on side 1")
    assert info["coup_fourre_by"] == 3 and info["next_seat"] == 3  # seats 1 and 2 lose their turn
    assert new["sides"][1]["battle"] == "roll" and new["sides"][1]["safeties"] == ["right_of_way"]
    pos = coup_position(players=4, victim_seat=1, attack="stop", safety="right_of_way")
    _, info = play(MB, pos, "play stop on side 1")
    assert info["coup_fourre_by"] == 1 and info["next_seat"] == 1
    # a partner of the attacker holding the safety cannot call it
    pos = coup_position(players=4, victim_seat=2, attack="stop", safety="right_of_way")
    new, info = play(MB, pos, "play stop on side 1")
    assert info["coup_fourre_by"] is None and new["sides"][1]["battle"] == "stop"


@pytest.mark.parametrize("attacker, declines, by", [(0, [], 1), (2, [], 3), (0, [1], 3)])
def test_coup_fourre_partners_are_asked_in_turn_order(attacker, declines, by):
    # docs/race_rules.md: "The players of the attacked side who hold the safety are asked in turn
    # order; the first who accepts makes it" (a design with two Right of Way). Side 1 is seats 1
    # and 3, both holding one: after seat 0 seat 1 is asked first, after seat 2 seat 3; a partner
    # who declines leaves it to the next.
    text = re.sub(r'(key = "right_of_way"[^[]*?count = )1', r"\g<1>2", MB_TEXT)
    assert text != MB_TEXT
    design = parse_design(text, "two right of way")
    hands = {p: list(NEUTRAL_MB) for p in range(4)}
    hands[attacker] = ["stop", "km25", "km50", "km75", "km100", "roll", "gasoline"]
    for seat in (1, 3):
        hands[seat] = ["right_of_way"] + NEUTRAL_MB[1:]
    pos = position(4, hands, [side("roll"), side("roll")], on_turn=attacker)
    policies = ["greedy:coup_fourre=0" if p in declines else "greedy" for p in range(4)]
    new, info = play(design, pos, "play stop on side 1", policies=policies)
    assert info["coup_fourre_by"] == by and info["next_seat"] == by
    assert new["sides"][1]["safeties"] == ["right_of_way"] and new["sides"][1]["battle"] == "roll"


def test_mb_coup_fourre_in_three_teams_of_six():
    pos = coup_position(players=6, victim_seat=4, attack="accident", safety="driving_ace")
    new, info = play(MB, pos, "play accident on side 1")
    assert info["coup_fourre_by"] == 4 and info["next_seat"] == 4  # seats 1, 2, 3 lose their turn


def test_mb_teams_share_a_tableau():
    hands = {2: ["km100", "km25", "km50", "km75", "roll", "gasoline", "out_of_gas"]}
    pos = position(4, hands, [side("roll", distance={"km100": 2}), side("roll")], on_turn=2)
    moves = legal(MB, pos)
    # seat 2 plays on side 0's tableau (its own, so no "on side"); the hazard only on side 1
    assert "play km100" in moves and "play roll" not in moves  # side 0 already rolls
    assert {m for m in moves if m.startswith("play out_of_gas")} == {"play out_of_gas on side 1"}
    new, info = play(MB, pos, "play km100")
    assert new["sides"][0]["km"] == 300 and info["next_seat"] == 3
    # 6 players: seat 4 plays for side 1 (4 % 3)
    hands = {4: ["km100", "km25", "km50", "km75", "roll", "gasoline", "out_of_gas"]}
    pos = position(6, hands, [side("roll"), side("roll", distance={"km50": 1}), side("roll")], on_turn=4)
    new, info = play(MB, pos, "play km100")
    assert new["sides"][1]["km"] == 150 and new["sides"][0]["km"] == 0 and info["next_seat"] == 5
    moves = legal(MB, pos)
    assert {m for m in moves if m.startswith("play out_of_gas")} == {"play out_of_gas on side 0",
                                                                      "play out_of_gas on side 2"}


def test_mb_extension_only_for_the_side_at_exactly_700():
    hand = ["km50", "km25", "km75", "roll", "gasoline", "repairs", "spare_tire"]
    own = side("roll", distance={"km100": 6, "km25": 2})  # 650
    new, info = play(MB, mb_pos(own, side(), hand), "play km50", policies=["bold", "bold"])
    assert info["extension_called"] and not info["hand_over"] and new["trip"] == 1000
    new, info = play(MB, mb_pos(own, side(), hand), "play km50", policies=["cautious", "cautious"])
    assert not info["extension_called"] and info["hand_over"] and info["trip_side"] == 0
    # not at 700: no question asked
    own = side("roll", distance={"km100": 6})
    new, info = play(MB, mb_pos(own, side(), hand), "play km50", policies=["bold", "bold"])
    assert not info["extension_called"] and not info["hand_over"] and new["trip"] == 700


def test_mb_extension_may_be_called_after_the_stock_ran_out():
    # The rules page sets no limit on when the extension may be called (docs/race_rules.md): with the
    # stock empty and the hands being played out, the side reaching exactly 700 may still call it.
    own = side("roll", distance={"km100": 6, "km25": 2})  # 650
    pos = mb_pos(own, side(), ["km50", "km25"], stock=0, others={1: ["km25", "km25"]})
    new, info = play(MB, pos, "play km50", policies=["bold", "bold"])
    assert info["extension_called"] and not info["hand_over"] and new["trip"] == 1000 and new["stock"] == 0
    _, info = play(MB, pos, "play km50", policies=["cautious", "cautious"])
    assert not info["extension_called"] and info["hand_over"] and info["trip_side"] == 0


def test_mb_after_the_extension_only_1000_ends_the_hand():
    hand = ["km50", "km25", "km75", "roll", "gasoline", "repairs", "spare_tire"]
    own = side("roll", distance={"km100": 6, "km25": 2})  # 650: reaches 700 after the other side called
    new, info = play(MB, mb_pos(own, side("roll", distance={"km200": 2, "km100": 3}), hand, trip=1000, extension_side=1),
                     "play km50", policies=["bold", "bold"])
    assert not info["extension_called"] and not info["hand_over"]
    own = side("roll", distance={"km100": 9, "km25": 2})  # 950
    caller = side("roll", distance={"km200": 2, "km100": 3})  # called the extension at exactly 700
    moves = legal(MB, mb_pos(own, caller, hand, trip=1000, extension_side=1))
    assert "play km50" in moves and "play km75" not in moves
    _, info = play(MB, mb_pos(own, caller, hand, trip=1000, extension_side=1), "play km50")
    assert info["hand_over"] and info["trip_side"] == 0


def test_mb_no_extension_with_four_players():
    hand = ["km50", "km25", "km75", "roll", "gasoline", "repairs", "spare_tire"]
    own = side("roll", distance={"km100": 6, "km25": 2})  # 650 of 1000: reaching 700 is nothing
    _, info = play(MB, mb_pos(own, side(), hand, players=4), "play km50", policies=["bold"] * 4)
    assert not info["extension_called"] and not info["hand_over"]
    own = side("roll", distance={"km100": 9, "km25": 2})
    _, info = play(MB, mb_pos(own, side(), hand, players=4), "play km50", policies=["bold"] * 4)
    assert not info["extension_called"] and info["hand_over"] and info["trip_side"] == 0


def test_mb_extension_with_six_players():
    hand = ["km50", "km25", "km75", "roll", "gasoline", "repairs", "spare_tire"]
    own = side("roll", distance={"km100": 6, "km25": 2})
    new, info = play(MB, mb_pos(own, side(), hand, players=6), "play km50", policies=["bold"] * 6)
    assert info["extension_called"] and not info["hand_over"] and new["trip"] == 1000


# =================================================================================
# Touring (reconstructed)
# =================================================================================
def test_touring_deck_and_targets():
    # the rules page's 99 cards, card by card
    full = {"m25": 19, "m35": 10, "m50": 10, "m75": 12, "go": 13, "freeway": 6, "populated_area": 3,
            "gasoline": 7, "wrecker": 7, "stop_to_refuel": 3, "missed_the_curve": 3, "burning_oil": 2,
            "broken_spring": 2, "brake_adjustment": 2}
    assert TO.counts(2) == full and TO.counts(4) == full
    # 3 or 6 players: one of each delay card out
    delays = ("stop_to_refuel", "missed_the_curve", "burning_oil", "broken_spring", "brake_adjustment")
    assert TO.counts(3) == {k: n - (k in delays) for k, n in full.items()} == TO.counts(6)
    assert sum(TO.counts(2).values()) == 99
    assert TO.trip_for(2) == (590, 0) and TO.trip_for(4) == (590, 0) and TO.trip_for(5) == (590, 0)
    assert TO.trip_for(3) == (295, 0) and TO.trip_for(6) == (295, 0)
    assert sum(TO.counts(3).values()) == 99 - 5 and sum(TO.counts(6).values()) == 99 - 5
    assert TO.reconstructed
    assert TO.hand_size == 5  # "5-card hands"


def test_touring_deal_gives_5_card_hands():
    for players in (2, 3, 6):
        ct, rules = TO.tables(players)
        state = np.zeros(K.STATE_SIZE, np.int16)
        cards = np.zeros((TO.sides(players), len(TO.cards), K.K_NCOLS), np.int16)
        K.deal(state, ct, rules, 0, np.uint64(2024), cards, np.zeros((0, K.LOG_NCOLS), np.int32))
        assert [int(state[K.HAND_N_AT + p]) for p in range(players)] == [5] * players
        assert state[K.ST_STOCK_N] == sum(TO.counts(players).values()) - 5 * players


@pytest.mark.parametrize("hazard,remedy,other", [("stop_to_refuel", "gasoline", "wrecker"),
                                                 ("missed_the_curve", "wrecker", "gasoline")])
def test_touring_remedy_mapping(hazard, remedy, other):
    # rules page section 3 and touring.toml: Gasoline clears Stop to Refuel, Wrecker clears Missed the Curve
    hand = [remedy, other, "go", "m25", "m35", "freeway"]
    pos = position(2, {0: hand, 1: ["m25"] * 5}, [side(hazard, "freeway"), side("go", "freeway")])
    moves = legal(TO, pos)
    assert f"play {remedy}" in moves
    assert f"play {other}" not in moves and "play go" not in moves and "play m25" not in moves
    new, _ = play(TO, pos, f"play {remedy}")
    assert new["sides"][0]["battle"] == remedy
    # then a Go on a later turn before mileage
    moves = legal(TO, turn_to(new, 0, ["go", "m25", "m35", "m25", "m25", "m25"]))
    assert "play go" in moves and "play m25" not in moves
    # and the hazard is played on a side showing Go
    attack = position(2, {0: [hazard, "m25", "m25", "m25", "m25", "m25"]}, [side("go"), side("go")])
    assert f"play {hazard} on side 1" in legal(TO, attack)


def test_touring_set_target_590_and_295():
    hand = ["m75", "m25", "m35", "m50", "go", "freeway"]
    own = side("go", "freeway", {"m25": 8, "m35": 4, "m50": 2, "m75": 1})
    _, info = play(TO, position(2, {0: hand, 1: ["m25"] * 5}, [own, side("go", "start")]), "play m75")
    assert info["hand_over"] and info["trip_side"] == 0
    own = side("go", "freeway", {"m25": 4, "m35": 2, "m50": 1})
    pos = position(3, {0: hand, 1: ["m25"] * 5, 2: ["m25"] * 5}, [own, side("go", "start"), side("go", "start")])
    new, info = play(TO, pos, "play m75")
    assert info["hand_over"] and info["trip_side"] == 0 and new["sides"][0]["km"] == 295
    own = side("go", "freeway", {"m25": 4, "m35": 2, "m50": 1})  # the m25 kind is complete
    moves = legal(TO, position(3, {0: hand}, [own, side("go", "start"), side("go", "start")]))
    assert "play m25" not in moves and "play m75" in moves


def test_touring_50_and_75_need_freeway_and_populated_area_blocks_them():
    hand = ["m25", "m35", "m50", "m75", "populated_area", "freeway"]
    moves = legal(TO, position(2, {0: hand}, [side("go", "start"), side("go", "start")]))
    assert {"play m25", "play m35", "play freeway"} <= moves and not {"play m50", "play m75"} & moves
    assert "play populated_area on side 1" not in moves
    moves = legal(TO, position(2, {0: hand}, [side("go", "freeway"), side("go", "freeway")]))
    assert {"play m50", "play m75", "play populated_area on side 1"} <= moves
    new, _ = play(TO, position(2, {0: hand, 1: ["m25"] * 5}, [side("go", "freeway"), side("go", "freeway")]),
                  "play populated_area on side 1")
    moves = legal(TO, turn_to(new, 1, hand))
    assert "play m25" in moves and not {"play m50", "play m75"} & moves


@pytest.mark.parametrize("setback,removes,value", [("burning_oil", "m25", 25), ("broken_spring", "m35", 35),
                                                    ("brake_adjustment", "m50", 50)])
def test_touring_setback_removes_a_laid_card(setback, removes, value):
    hand = [setback, "m25", "m35", "m50", "go", "freeway"]
    opp = side("go", "freeway", {"m25": 3, "m35": 2, "m50": 1})
    pos = position(2, {0: hand, 1: ["m25"] * 5}, [side("go", "freeway"), opp])
    assert f"play {setback} on side 1" in legal(TO, pos)
    new, info = play(TO, pos, f"play {setback} on side 1")
    assert new["sides"][1]["km"] == 75 + 70 + 50 - value
    assert new["sides"][1]["distance"].get(removes, 0) == opp["distance"][removes] - 1
    # nothing of that value laid: the setback has no target
    opp = side("go", "freeway", {k: v for k, v in opp["distance"].items() if k != removes})
    assert f"play {setback} on side 1" not in legal(TO, position(2, {0: hand}, [side("go", "freeway"), opp]))


def test_touring_removed_stage_must_be_laid_again():
    # a full set but one m25 short after Burning Oil: laying the m75 does not win
    opp = side("go", "freeway", {"m25": 8, "m35": 4, "m50": 2, "m75": 1})
    pos = position(2, {0: ["burning_oil", "m25", "m25", "m25", "m25", "m25"],
                       1: ["m75", "m25", "m25", "m25", "m25"]}, [side("go"), opp])
    new, _ = play(TO, pos, "play burning_oil on side 1")
    pos = turn_to(new, 1, ["m75", "m25", "m25", "m25", "m25", "m25"])
    new, info = play(TO, pos, "play m75")
    assert not info["hand_over"]
    pos = turn_to(new, 1, ["m25", "m25", "m25", "m25", "m25", "m35"])
    _, info = play(TO, pos, "play m25")
    assert info["hand_over"] and info["trip_side"] == 1


# =================================================================================
# Design validation: errors name the field and the problem
# =================================================================================
MB_TEXT = resources.files("etappe.kernels").joinpath("designs/millebornes.toml").read_text("utf-8")
SO_TEXT = resources.files("etappe.kernels").joinpath("designs/stapop.toml").read_text("utf-8")


def bad_design(tmp_path, text, name="bad.toml"):
    path = tmp_path / name
    path.write_text(text, "utf-8")
    with pytest.raises(DesignError) as err:
        load_design(path)
    return str(err.value)


def test_builtin_designs_load_and_a_copy_loads_too(tmp_path):
    path = tmp_path / "copy.toml"
    path.write_text(MB_TEXT, "utf-8")
    assert load_design(path).trip_for(4) == (1000, 0)


def test_design_error_unknown_role(tmp_path):
    text = MB_TEXT.replace('key = "extra_tank"\nname = "Extra Tank (Citerne)"\nrole = "safety"',
                           'key = "extra_tank"\nname = "Extra Tank (Citerne)"\nrole = "bonus"')
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert "bad.toml" in msg and "extra_tank" in msg and ".role" in msg and "'bonus'" in msg


def test_design_error_a_misspelt_required_field_is_named(tmp_path):
    text = MB_TEXT.replace("hand_size = 6", "hand_sise = 6")
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert "design.hand_size: missing" in msg and "'hand_sise'" in msg


def test_design_error_a_set_target_the_deck_cannot_hold(tmp_path):
    # Stap op's 2 copies of "8 km naar de zee" to lay (rules page), from a deck of 1 or 8; the message named
    # "for 2 players", the first of its player counts, where the file's count holds for all of them
    text = SO_TEXT.replace('value = 8\ncount = 8\ntarget = 2', 'value = 8\ncount = 1\ntarget = 2')
    assert text != SO_TEXT
    assert bad_design(tmp_path, text) == f"{tmp_path / 'bad.toml'}: cards[10] (km8).target: needs 2 but its count is 1"
    # one player count's removal: that count's deck
    msg = bad_design(tmp_path, SO_TEXT + "\n[players.3]\nremove = { km8 = 7 }\n")
    assert msg.endswith(": cards[10] (km8).target: needs 2 but the deck has 1 for 3 players: players.3.remove "
                        "takes 7 of its 8"), msg
    # one player count's set, from the file's count: the set's field names the player count
    msg = bad_design(tmp_path, SO_TEXT + "\n[players.4]\ntarget = { km5 = 8, km6 = 4, km8 = 9, km10 = 2 }\n")
    assert msg.endswith(": players.4.target.km8: needs 9 but its count is 8"), msg


def test_design_error_remedy_for_a_missing_hazard(tmp_path):
    text = MB_TEXT.replace('remedy = "gasoline"', 'remedy = "petrol"')
    msg = bad_design(tmp_path, text)
    assert "out_of_gas" in msg and "remedy" in msg and "'petrol'" in msg
    # a remedy card that no hazard names
    text = MB_TEXT + '\n[[cards]]\nkey = "wax"\nname = "Wax"\nrole = "remedy"\ncount = 2\n'
    msg = bad_design(tmp_path, text, "wax.toml")
    assert "wax" in msg and "no hazard" in msg


def test_design_error_a_hazard_nothing_can_clear_and_no_go_card(tmp_path):
    text = MB_TEXT.replace('key = "gasoline"\nname = "Gasoline (Essence)"\nrole = "remedy"\ncount = 6',
                           'key = "gasoline"\nname = "Gasoline (Essence)"\nrole = "remedy"\ncount = 0')
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert "(out_of_gas).remedy" in msg and "'gasoline' has count 0" in msg
    text = MB_TEXT.replace('role = "go"\ncount = 14', 'role = "go"\ncount = 0')
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert "(roll).count" in msg and "go card has count 0" in msg


def test_design_error_unreachable_target(tmp_path):
    text = MB_TEXT.replace("[players.4]\nteam_size = 2\ntrip = 1000", "[players.4]\nteam_size = 2\ntrip = 1010")
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert "players.4.trip" in msg and "1010" in msg and "cannot be laid" in msg
    # an extension the deck cannot reach: 4 x 200 but only two may be laid, 12 x 100 ... 3000 is too far
    text = MB_TEXT.replace("[players.6]\nteam_size = 2\ntrip = 700\nextension = 1000",
                           "[players.6]\nteam_size = 2\ntrip = 700\nextension = 4000")
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text, "ext.toml")
    assert "players.6.extension" in msg and "4000" in msg
    text = SO_TEXT.replace("count = 8\ntarget = 2\nlimited = true                  # needs Wind mee",
                           "count = 8\ntarget = 9\nlimited = true")
    assert text != SO_TEXT
    msg = bad_design(tmp_path, text, "so.toml")
    assert "km8" in msg and "needs 9" in msg and "8" in msg


def test_design_error_negative_count(tmp_path):
    text = MB_TEXT.replace('role = "hazard"\ncount = 3\nremedy = "spare_tire"',
                           'role = "hazard"\ncount = -3\nremedy = "spare_tire"')
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert "flat_tire" in msg and "count" in msg and "negative" in msg
    text = MB_TEXT.replace("remove = { stop = 1,", "remove = { stop = -1,", 1)
    msg = bad_design(tmp_path, text, "remove.toml")
    assert "players.2.remove.stop" in msg


# The engine's integers (docs/designs.md): a hand's turns are counted in 16 bits
# (at most 2**15 - 1 = 32767), scores and game totals in 32 bits. Each scoring
# field is at most 50 000 and the game target at most 1 000 000: worked by hand,
# a hand scores at most 32 767 km + 50 000 x (32 safeties + all safeties + 400
# coups fourrés + trip + delayed + safe trip + extension + 5 shut-outs)
# = 22 132 767, and 60 hands 1 327 966 020 < 2**31 - 1 = 2 147 483 647.
@pytest.mark.parametrize("old, new, field", [
    ("per_safety = 100", "per_safety = 2000000000", "scoring.per_safety: must be at most 50000"),
    ("per_safety = 100", "per_safety = 99999999999", "scoring.per_safety: must be at most 50000"),
    ("shutout = 500", "shutout = 50001", "scoring.shutout: must be at most 50000"),
    ("game_target = 5000 ", "game_target = 999999999999 ", "scoring.game_target: must be at most 1000000"),
    ("cap = 2 ", "cap = 99999999999 ", "(km200).cap: must be at most 400"),
    ("[target]\nkind = \"sum\"                    # exactly the trip, never beyond\ntrip = 1000",
     "[target]\nkind = \"sum\"\ntrip = 99999999999", "target.trip: must be at most 30000"),
    ("[players.4]\nteam_size = 2\ntrip = 1000", "[players.4]\nteam_size = 2\ntrip = 4294967297",
     "players.4.trip: must be at most 30000"),
    ("remove = { stop = 1,", "remove = { stop = 99999999999,", "players.2.remove.stop: must be at most 400"),
])
def test_design_error_numbers_beyond_the_engines_integers(tmp_path, old, new, field):
    text = MB_TEXT.replace(old, new, 1)
    assert text != MB_TEXT
    assert field in bad_design(tmp_path, text)


def test_numbers_at_the_engines_bounds_are_accepted_and_turn_cap_beyond_is_refused(tmp_path):
    text = MB_TEXT
    for field in ("per_safety = 100", "all_safeties = 300", "coup_fourre = 300", "trip_completed = 400",
                  "delayed_action = 300", "safe_trip = 300", "extension = 200", "shutout = 500"):
        text = text.replace(field, field.split(" = ")[0] + " = 50000", 1)
    text = text.replace("game_target = 5000 ", "game_target = 1000000 ")
    path = tmp_path / "max.toml"
    path.write_text(text, "utf-8")
    design = load_design(path)
    assert design.scoring["per_safety"] == 50_000 and design.scoring["game_target"] == 1_000_000
    _, rules = design.tables(2, {"turn_cap": 32767})
    assert rules[K.R_TURN_CAP] == 32767
    for too_big in (32768, 2**32 + 1, 10**20):
        with pytest.raises(DesignError, match=f"options.turn_cap: must be at most 32767, not {too_big}"):
            design.tables(2, {"turn_cap": too_big})
    with pytest.raises(DesignError, match="options.turn_cap: must be at most 32767"):
        parse_design(MB_TEXT.replace('tied_game = "no_winner"', 'tied_game = "no_winner"\nturn_cap = 40000'),
                     "cap.toml")


def test_design_error_a_limit_nothing_can_lift(tmp_path):
    # Stap op: every side starts under headwind and the set needs 2 x 8 km and
    # 2 x 10 km, which headwind blocks; without Wind mee no game could end.
    no_wind = SO_TEXT.replace('role = "end_limit"\ncount = 5', 'role = "end_limit"\ncount = 0')
    assert no_wind != SO_TEXT
    msg = bad_design(tmp_path, no_wind)
    assert re.search(r"bad.toml: cards\[\d+\] \(tailwind\)\.count: 'tailwind' has count 0 and no safety", msg), msg
    assert "the target for 2 players needs km8, km10" in msg
    # the same for one player count, through its removals
    removed = SO_TEXT + '\n[players.3]\nremove = { tailwind = 5 }\n'
    msg = bad_design(tmp_path, removed, "removed.toml")
    assert "removed.toml: players.3.remove.tailwind:" in msg and "for 3 players" in msg
    # a safety against headwind lifts it (docs/designs.md): playable again
    path = tmp_path / "tandem.toml"
    path.write_text(no_wind + TANDEM, "utf-8")
    assert load_design(path).counts(2)["tailwind"] == 0
    # Mille Bornes without End of Limit: Right of Way lifts the limit, so it is valid
    no_end = MB_TEXT.replace('role = "end_limit"\ncount = 6', 'role = "end_limit"\ncount = 0')
    assert no_end != MB_TEXT
    path = tmp_path / "no_end.toml"
    path.write_text(no_end, "utf-8")
    assert load_design(path).counts(4)["end_of_limit"] == 0
    # ... and Right of Way against Stop only: under Speed Limit only 25 and 50
    # (rules page), 10 x 25 + 10 x 50 = 750 km, so 700 can still be laid (2, 3,
    # 6 players; the extension is optional) but the 4 players' 1000 cannot.
    msg = bad_design(tmp_path, no_end.replace('protects = ["stop", "speed_limit"]', 'protects = ["stop"]'))
    assert "(end_of_limit).count: 'end_of_limit' has count 0 and no safety" in msg
    assert "the target for 4 players needs km75, km100, km200" in msg
    assert "speed_limit can limit a side" in msg and "km75, km100, km200" in msg


@pytest.mark.parametrize("players,bad", [("[1, 2, 3, 4, 6]", "1"), ("[2, 3, 4, 6, 7]", "7"), ("[]", None)])
def test_design_error_bad_player_count(tmp_path, players, bad):
    text = MB_TEXT.replace("players = [2, 3, 4, 6]", f"players = {players}")
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert "design.players" in msg
    if bad:
        assert f"bad player count {bad}" in msg


def test_design_error_bad_team_size_and_unknown_option(tmp_path):
    msg = bad_design(tmp_path, MB_TEXT.replace("[players.4]\nteam_size = 2", "[players.4]\nteam_size = 3"))
    assert "players.4.team_size" in msg
    msg = bad_design(tmp_path, MB_TEXT.replace('shutout = "parker"', 'shutout = "dutch"'), "opt.toml")
    assert "options.shutout" in msg and "'dutch'" in msg
    with pytest.raises(DesignError, match="unknown rule option"):
        MB.tables(2, {"speed_limit_stacks": True})


# =================================================================================
# Limits of the engine
def many_hazards_design(hazard_types: int):
    """A legal design at the engine's limits: 6 players, 20-card hands and
    `hazard_types` hazards, each cleared by a go card (as Stap op's youth hostel)."""
    cards = ['[[cards]]\nkey = "go"\nrole = "go"\ncount = 20\n',
             '[[cards]]\nkey = "km25"\nrole = "distance"\nvalue = 25\ncount = 40\n']
    for i in range(hazard_types):
        cards.append(f'[[cards]]\nkey = "hazard{i}"\nrole = "hazard"\ncount = 10\nremedy = "go"\n')
    text = ('[design]\nname = "many_hazards"\nplayers = [6]\nhand_size = 20\nstock_exhausted = "play_out"\n'
            '[target]\nkind = "sum"\ntrip = 100\n' + "\n".join(cards))
    return parse_design(text, "many_hazards.toml")


def test_a_full_hand_of_attacks_on_five_opponents_lists_every_move():
    # 21 distinct hazards after the draw, every opponent rolling: each hazard can be
    # played on 5 opponents or discarded, so 21 x 6 = 126 moves, the most any design has.
    design = many_hazards_design(21)
    hand = [f"hazard{i}" for i in range(21)]
    sides = [side(battle="go") for _ in range(6)]
    moves = legal(design, position(6, {0: hand}, sides))
    assert len(moves) == 21 * 6
    assert K.MAX_MOVES >= 21 * 6


def test_turn_cap_cuts_a_hand_off_and_reports_it():
    # Stap op: each player needs 16 stage cards, so no 4-player game ends within 30 turns.
    df = simulate("stapop", players=4, games=20, seed=1, options={"turn_cap": 30})
    assert (df["capped"] == 1).all() and (df["turns"] == 30).all()
    assert (df["winner_side"] == -1).all() and (df["trip_side"] == -1).all()
    # Mille Bornes, 2 players: 700 km takes a side at least 6 cards, so 10 turns
    # even with Right of Way's extra turn. A capped hand ends the game, with no winner.
    df = simulate("millebornes", players=2, games=20, seed=1, options={"turn_cap": 8})
    assert (df["hand"] == 0).all() and (df["capped"] == 1).all() and (df["turns"] == 8).all()
    assert (df["winner_side"] == -1).all()


def test_default_turn_cap_follows_the_deck():
    # docs/designs.md: a play-out design's cap is the deck plus the players plus one, which no legal
    # hand reaches; a reshuffle design's is 40 turns a card. The rulebooks' decks: Mille Bornes 106
    # cards (101 for 2 or 3 players), Stap op 99.
    assert (turn_cap(MB, 4), turn_cap(MB, 6), turn_cap(MB, 2)) == (106 + 4 + 1, 106 + 6 + 1, 101 + 2 + 1)
    assert turn_cap(SO, 4) == turn_cap(SO, 2) == 40 * 99
    _, rules = MB.tables(4)
    assert rules[K.R_TURN_CAP] == 111 and MB.tables(4, {"turn_cap": 50})[1][K.R_TURN_CAP] == 50


@pytest.mark.parametrize("removal, field, problem", [
    ("roll = 14", "players.2.remove.roll", "removes every 'roll' for 2 players: no side could ever start moving"),
    ("gasoline = 6", "players.2.remove.gasoline",
     "removes every 'gasoline' for 2 players, but 'out_of_gas' stays in the deck"),
])
def test_design_error_a_removal_that_leaves_no_go_or_remedy(tmp_path, removal, field, problem):
    # docs/designs.md: a go card, or the remedy of a hazard in the deck, with count 0 is refused; so is a
    # player count whose `remove` takes every copy away (it used to pass, and every game hit the turn cap)
    text = MB_TEXT.replace("remove = { stop = 1,", f"remove = {{ {removal}, stop = 1,", 1)
    assert text != MB_TEXT
    msg = bad_design(tmp_path, text)
    assert f"{field}: {problem}" in msg


def test_design_error_a_card_key_whose_columns_would_be_a_sides_own(tmp_path):
    # docs/records.md: per side s{s}_hazards_played, and per card s{s}_{key}_played: a card keyed "hazards"
    # would write both into one column (it used to pass validation and break `simulate --out`)
    text = SO_TEXT.replace('"crossing"', '"hazards"')
    assert text != SO_TEXT
    msg = bad_design(tmp_path, text)
    assert ".key: the card's played column would be named s0_hazards_played, which is already a column" in msg


@pytest.mark.parametrize("old, new, message", [
    ('name = "stapop"', 'name = ""', "design.name: must not be empty"),
    ("players = [2, 3, 4, 5, 6]", "players = [2, 4, 4]", "design.players: player count 4 is listed 2 times"),
    # a [target] field written under [design]: the header was left out
    ('reconstructed = false\n\n[target]\nkind = "set"', 'reconstructed = false\ntarget = "set"',
     "target: missing table (there is a field 'target' in [design]: a [target] header before it?)"),
    # 99 cards: 20 to each of 6 players would take 120
    ("hand_size = 5", "hand_size = 20", "design.hand_size: 20 cards to each of 6 players take 120 of the deck's 99"),
])
def test_design_error_names_small_mistakes_precisely(tmp_path, old, new, message):
    text = SO_TEXT.replace(old, new, 1)
    assert text != SO_TEXT
    assert message in bad_design(tmp_path, text)


def test_a_design_file_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + SO_TEXT.encode("utf-8"))  # as some Windows editors save UTF-8
    assert load_design(path).name == "stapop"


# ---- the order of the cards in a design file -------------------------------------
# A card's type number is its place in the file. The engine reads "none" as -1 (no safety
# protects it, no limit shows), so a check that took 0 for "none" would misread the file's
# first card: these orders put a safety, a limit, a hazard and the go card first.
@pytest.mark.parametrize("name, lead", [
    ("MB", ["right_of_way"]), ("MB", ["speed_limit", "extra_tank"]), ("MB", ["stop", "end_of_limit"]),
    ("SO", ["headwind"]), ("SO", ["tailwind", "youth_hostel"]), ("SO", ["go"]),
])
def test_the_rules_tests_hold_whatever_the_order_of_the_cards(monkeypatch, name, lead):
    # docs/designs.md: the card tables may come in any order. Every Mille Bornes (Stap op) rules test
    # above runs again, with each of its parameters, on the design with its cards reordered.
    text = {"MB": MB_TEXT, "SO": SO_TEXT}[name]
    reordered = in_card_order(text, lead)
    design = parse_design(reordered, f"reordered {name}")
    assert [c.key for c in design.cards][:len(lead)] == lead
    assert sorted(c.key for c in design.cards) == sorted(c.key for c in globals()[name].cards)
    monkeypatch.setitem(globals(), name, design)
    prefix = {"MB": "test_mb_", "SO": "test_stapop_"}[name]
    calls = [call for k, f in globals().items() if k.startswith(prefix) for call in parametrized_calls(f)]
    assert len(calls) > 15
    for call in calls:
        call()


def parametrized_calls(test):
    """A test function's calls as pytest makes them from its parametrize marks
    (none for a test that takes a fixture)."""
    calls = [{}]
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize":
            names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else mark.args[0]
            rows = [values if len(names) > 1 else (values,) for values in mark.args[1]]
            calls = [{**call, **dict(zip(names, row))} for call in calls for row in rows]
    if set(inspect.signature(test).parameters) != set(calls[0]):
        return []
    return [functools.partial(test, **call) for call in calls]
