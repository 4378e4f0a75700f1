"""Audit of the policies against their documentation (docs/policies.md,
docs/bremen.md Policies, docs/etape.md Policies, `etappe policies [GAME]`).

Each named parameter is checked on a position where its setting must change
the move, in the direction the documentation gives; the expected moves come
from the documented meaning (scores, thresholds), never from running the
policy first. Also: `random` is uniform over the legal moves, the presets are
the parameter settings the docs name, seats get their policies where the docs
say, and a parameter the family lacks or a value out of range is refused."""
from collections import Counter
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from card_order import in_card_order
from scipy.stats import chisquare
from typer.testing import CliRunner

from etappe.analysis import bremen as B
from etappe.analysis import etape as E
from etappe.analysis.race import RaceRun, simulate
from etappe.cli.main import app
from etappe.kernels import bremen as BK
from etappe.kernels import etape as EK
from etappe.kernels import race as K
from etappe.kernels.race_design import load_design, parse_design
from etappe.kernels.race_policies import PRESETS, parse_policy
from etappe.kernels.race_position import play_position_move, position_state

MB_TEXT = (resources.files("etappe.kernels") / "designs" / "millebornes.toml").read_text("utf-8")
MB = load_design("millebornes")
ROLL = {"battle": "roll"}
USER = f"{Path(__file__).resolve().parents[1] / 'docs' / 'examples' / 'distance_first.py'}:distance_first"


def race_position(hand, sides, players=2, others=None):
    hands = {"0": list(hand)}
    hands.update({str(k): list(v) for k, v in (others or {}).items()})
    return {"players": players, "on_turn": 0, "stock": 30, "hands": hands, "sides": sides}


def greedy_picks(design, position, spec, keys=12, options=None):
    """Greedy's moves from `position` under `keys` decision keys, as 'play X [on N]' / 'discard X'."""
    state, ct, rules, seat = position_state(design, position, seed=1, options=options)
    params = np.array(parse_policy(spec).params)
    picks = set()
    for key in range(1, keys + 1):
        m = int(K.greedy_move_call(state, ct, rules, seat, params, np.uint64(key))[0])
        card, target = design.cards[m >> 3].key, m & 7
        picks.add(f"discard {card}" if target == K.DISCARD else f"play {card} on {target}")
    return picks


# ---- race games: the greedy family -------------------------------------------------
# attack scores 40 x attack against 60-70 for distance, 80 for a go or remedy, 100 for a
# safety that clears a hazard on us, 50 for an end of limit (GREEDY_PARAMETERS["attack"]).
@pytest.mark.parametrize("what, hand, own, expected", [
    ("distance", ["km75", "stop", "km25", "km50", "gasoline", "repairs", "spare_tire"],
     {"battle": "roll", "distance": {"km100": 1}},
     {"greedy": "play stop on 1", "aggressive": "play stop on 1", "builder": "play km75 on 0"}),
    ("remedy", ["spare_tire", "stop", "km25", "km50", "gasoline", "repairs", "km75"], {"battle": "flat_tire"},
     {"greedy": "play spare_tire on 0", "aggressive": "play stop on 1", "builder": "play spare_tire on 0"}),
    ("safety clearing a hazard", ["driving_ace", "stop", "km25", "km50", "gasoline", "repairs", "km75"],
     {"battle": "accident"},
     {"greedy": "play driving_ace on 0", "aggressive": "play stop on 1", "builder": "play driving_ace on 0"}),
    ("end of limit", ["end_of_limit", "stop", "km200", "km200", "gasoline", "repairs", "spare_tire"],
     {"battle": "roll", "limit": "speed_limit", "distance": {"km100": 1}},
     {"greedy": "play stop on 1", "aggressive": "play stop on 1", "builder": "play end_of_limit on 0"}),
    ("nothing else useful", ["km200", "stop", "km200", "gasoline", "repairs", "spare_tire", "spare_tire"],
     {"battle": "stop"},
     {"greedy": "play stop on 1", "aggressive": "play stop on 1", "builder": "play stop on 1"}),
])
def test_attack_weight_ranks_attacks_as_documented(what, hand, own, expected):
    position = race_position(hand, [own, {"battle": "roll", "distance": {"km100": 2}}])
    for spec, move in expected.items():
        assert greedy_picks(MB, position, spec) == {move}, (what, spec)


# The boundaries of the attack weight (docs/policies.md, Greedy's scores), with the target at
# 200 of 700 km: an attack scores 40 x attack + 200 / 701 = 40 x attack + 0.285.
@pytest.mark.parametrize("what, hand, own, below, above", [
    # a remedy scores 80: 1.99 gives 79.89, 2 gives 80.29
    ("remedy", ["spare_tire", "stop"], {"battle": "flat_tire"}, (1.99, "play spare_tire on 0"), (2.0, "play stop on 1")),
    # 25 km of 700 scores 60 + 10 x 25 / 700 = 60.36: 1.5 gives 60.29, 1.51 gives 60.69
    ("distance", ["km25", "stop"], ROLL, (1.5, "play km25 on 0"), (1.51, "play stop on 1")),
    # an end of limit scores 50: 1.24 gives 49.89, 1.26 gives 50.69
    ("end of limit", ["end_of_limit", "stop"], {"battle": "roll", "limit": "speed_limit"},
     (1.24, "play end_of_limit on 0"), (1.26, "play stop on 1")),
])
def test_the_attack_weight_crosses_each_play_where_the_scores_say(what, hand, own, below, above):
    position = race_position(hand, [own, {"battle": "roll", "distance": {"km100": 2}}])
    for attack, move in (below, above):
        assert greedy_picks(MB, position, f"greedy:attack={attack}") == {move}, (what, attack)


def test_target_leader_attacks_the_leader_or_the_next_side():
    # three sides: seat 0's next side is 1; side 2 has the most distance
    position = race_position(["stop", "km25", "km50", "gasoline", "repairs", "spare_tire", "km75"],
                             [{"battle": "stop"}, {"battle": "roll", "distance": {"km100": 1}},
                              {"battle": "roll", "distance": {"km100": 3}}], players=3)
    assert greedy_picks(MB, position, "greedy") == {"play stop on 2"}
    assert greedy_picks(MB, position, "next_target") == {"play stop on 1"}
    assert greedy_picks(MB, position, "greedy:target_leader=0") == {"play stop on 1"}


def test_hold_safeties_keeps_a_safety_unless_it_clears_a_hazard():
    rolling = race_position(["driving_ace", "km25", "km50", "gasoline", "repairs", "spare_tire", "km75"],
                            [ROLL, ROLL])
    assert greedy_picks(MB, rolling, "hoarder") == {"play km75 on 0"}  # the longest distance; the safety waits
    assert greedy_picks(MB, rolling, "spender") == {"play driving_ace on 0"}
    hit = race_position(["driving_ace", "km25", "km50", "gasoline", "repairs", "spare_tire", "km75"],
                        [{"battle": "accident"}, ROLL])
    assert greedy_picks(MB, hit, "hoarder") == greedy_picks(MB, hit, "spender") == {"play driving_ace on 0"}
    # stopped, nothing to play: a card that can never be laid (200 km beyond the 700 km trip) goes
    # before the held safety; with only cards of use to throw away, the safety is laid instead
    dead = race_position(["driving_ace", "km200", "km50", "gasoline", "repairs", "spare_tire", "km75"],
                         [{"battle": "stop", "distance": {"km200": 2, "km100": 2}}, {"battle": "stop"}])
    assert greedy_picks(MB, dead, "hoarder") == {"discard km200"}
    useful = race_position(["driving_ace", "km25", "km50", "km75", "km100", "gasoline", "repairs"],
                           [{"battle": "flat_tire"}, {"battle": "stop"}])
    assert greedy_picks(MB, useful, "hoarder") == {"play driving_ace on 0"}


def test_next_target_counts_the_turn_order_from_the_seat_on_turn():
    # seat 2 of 3 on turn: its next side is 0, then 1; side 1 leads
    position = {"players": 3, "on_turn": 2, "stock": 30,
                "hands": {"2": ["stop", "km25", "km50", "gasoline", "repairs", "spare_tire", "km75"]},
                "sides": [{"battle": "roll", "distance": {"km100": 1}}, {"battle": "roll", "distance": {"km100": 3}},
                          {"battle": "stop"}]}
    assert greedy_picks(MB, position, "greedy") == {"play stop on 1"}
    assert greedy_picks(MB, position, "next_target") == {"play stop on 0"}


# A card's type number is its place in the design file; these orders put a hazard, the limit
# and a remedy first (the engine reads -1 as "none", never 0).
CARD_ORDERS = [[], ["accident"], ["flat_tire"], ["speed_limit"], ["spare_tire"]]


def in_order(lead):
    return parse_design(in_card_order(MB_TEXT, lead), "reordered millebornes.toml") if lead else MB


@pytest.mark.parametrize("lead", CARD_ORDERS)
def test_a_held_safety_is_laid_only_where_it_clears_the_hazard_or_limit(lead):
    design = in_order(lead)
    # rolling under a speed limit: the driving ace clears no limit, so it is held (0.5) and the
    # 25 km card laid (60.36); right of way clears the limit (100)
    limited = [{"battle": "roll", "limit": "speed_limit"}, ROLL]
    assert greedy_picks(design, race_position(["driving_ace", "km25", "km200"], limited),
                        "hoarder") == {"play km25 on 0"}
    assert greedy_picks(design, race_position(["right_of_way", "km25", "km200"], limited),
                        "hoarder") == {"play right_of_way on 0"}
    # after an accident the driving ace clears it (100) before the repairs (80)
    hit = [{"battle": "accident"}, ROLL]
    assert greedy_picks(design, race_position(["driving_ace", "repairs", "km25"], hit),
                        "hoarder") == {"play driving_ace on 0"}


def test_greedy_lays_the_card_that_ends_the_trip_exactly_under_option_overshoot_disqualify():
    # at 650 of 700 km: 50 km completes the trip (60.71), 75 km would disqualify the side
    position = race_position(["km50", "km25", "km75"], [{"battle": "roll", "distance": {"km200": 2, "km100": 2,
                                                                                          "km50": 1}}, ROLL])
    assert greedy_picks(MB, position, "greedy", options={"overshoot": "disqualify"}) == {"play km50 on 0"}


# Greedy's discards (docs/policies.md, Greedy's scores): stopped by an accident with no repairs,
# against an opponent stopped and limited, no card can be played and greedy discards the card of
# the lowest keep value. 700 km trip: a distance card keeps 1 + 4 x value / 700 - 0.5 per other
# copy (25 km 1.14, 50 km 1.29, 75 km 1.43, 100 km 1.57, 200 km 2.14); a go card 2.5 (a second
# copy 0.5), a remedy 2, an attack card 1.5; a card of no further use -5, one never laid -10.
STUCK = {"battle": "accident"}
BLOCKED = {"battle": "stop", "limit": "speed_limit"}


@pytest.mark.parametrize("what, hand, own, opponent, expected", [
    ("an attack card (1.5) before a remedy (2) or 100 km (1.57)", ["gasoline", "stop", "roll", "km200", "km100"],
     STUCK, BLOCKED, "stop"),
    ("a distance card beyond the trip (-10): 650 + 75 > 700, while 50 km ends it exactly",
     ["km75", "km50", "km25", "gasoline", "spare_tire", "roll", "stop"],
     {"battle": "accident", "distance": {"km200": 2, "km100": 2, "km50": 1}}, BLOCKED, "km75"),
    ("a distance card whose type is at its cap (-10): two 200 km laid",
     ["km200", "km25", "km50", "gasoline", "spare_tire", "roll", "stop"],
     {"battle": "accident", "distance": {"km200": 2}}, BLOCKED, "km200"),
    ("a second copy of a distance card: 100 km twice (1.07 each) before 25 km (1.14)",
     ["km100", "km100", "km25", "gasoline", "roll", "stop"], STUCK, BLOCKED, "km100"),
    ("a second go card (0.5) before 25 km (1.14)", ["roll", "roll", "km25", "gasoline", "stop"], STUCK, BLOCKED, "roll"),
    ("a second remedy (0.3) before 25 km (1.14)", ["gasoline", "gasoline", "km25", "roll"], STUCK, BLOCKED, "gasoline"),
    ("200 km (2.14) before a go card (2.5)", ["roll", "km200"], STUCK, BLOCKED, "km200"),
    ("an end of limit (2) before 200 km (2.14)", ["end_of_limit", "km200", "roll"], STUCK, BLOCKED, "end_of_limit"),
    ("a remedy (2) before 200 km (2.14)", ["gasoline", "km200", "roll"], STUCK, BLOCKED, "gasoline"),
    ("a go card under a permanent go (-5)", ["roll", "km25", "gasoline", "stop"],
     {"battle": "accident", "safeties": ["right_of_way"]}, BLOCKED, "roll"),
    ("an end of limit when immune to limits (-5)", ["end_of_limit", "km25", "gasoline", "stop"],
     {"battle": "accident", "safeties": ["right_of_way"]}, BLOCKED, "end_of_limit"),
    ("a remedy its safety makes useless (-5)", ["spare_tire", "km25", "gasoline", "stop"],
     {"battle": "accident", "safeties": ["puncture_proof"]}, BLOCKED, "spare_tire"),
    ("an attack card every opponent is protected from (-5)", ["flat_tire", "km25", "gasoline", "roll"],
     STUCK, {"battle": "stop", "limit": "speed_limit", "safeties": ["puncture_proof"]}, "flat_tire"),
])
@pytest.mark.parametrize("lead", CARD_ORDERS)
@pytest.mark.parametrize("seat", [0, 1])
def test_greedy_discards_the_card_of_the_lowest_keep_value(what, hand, own, opponent, expected, lead, seat):
    sides = [own, opponent] if seat == 0 else [opponent, own]
    position = {"players": 2, "on_turn": seat, "stock": 30, "hands": {str(seat): hand}, "sides": sides}
    assert greedy_picks(in_order(lead), position, "greedy") == {f"discard {expected}"}, what


def test_greedy_keeps_a_stage_card_still_needed_over_a_go_card():
    # Stap op, stopped at a level crossing: a stage card of an incomplete kind keeps 3, a go card 2.5
    position = race_position(["go", "km5", "km10"], [{"battle": "crossing"}, {"battle": "flat_tyre", "limit": "headwind"}])
    assert greedy_picks(load_design("stapop"), position, "greedy") == {"discard go"}


def completing_position(opponent_km):
    """Seat 0 at 625 of 700 km with a 75 in hand; the opponent at `opponent_km`."""
    opponent = {"km100": opponent_km // 100}
    if opponent_km % 100:
        opponent["km50"] = 1
    return race_position(["km75", "km25", "km50", "gasoline", "repairs", "spare_tire", "roll"],
                         [{"battle": "roll", "distance": {"km200": 2, "km100": 2, "km25": 1}},
                          {"battle": "roll", "distance": opponent}])


def extension_called(policy, opponent_km):
    _, info = play_position_move(MB, completing_position(opponent_km), "play km75", policies=[policy, "greedy"])
    return info["extension_called"]


def test_extension_margin_calls_the_extension_only_when_far_enough_ahead():
    # 700 km against 500 (200 ahead) and against 650 (50 ahead); greedy's margin is 100 km
    assert extension_called("greedy", 500) and not extension_called("greedy", 650)
    assert extension_called("greedy:extension_margin=0", 650)
    assert not extension_called("cautious", 500) and not extension_called("cautious", 650)
    assert extension_called("bold", 500) and extension_called("bold", 650)


def test_coup_fourre_is_the_probability_of_calling_it():
    keys = [np.uint64(k) for k in np.random.default_rng(5).integers(1, 2**63, 4000)]
    for spec, p in (("greedy", 1.0), ("greedy:coup_fourre=0", 0.0), ("greedy:coup_fourre=0.3", 0.3), ("random", 0.5)):
        s = parse_policy(spec)
        row = np.array(s.params)
        rate = np.mean([K.wants_coup_fourre(s.kernel_id, row, key)[0] for key in keys])
        assert abs(rate - p) < 4 * (p * (1 - p) / len(keys)) ** 0.5 + 1e-12, (spec, rate)


def test_random_calls_the_extension_half_the_time():
    # docs/policies.md: random "answers coup fourré and extension questions at 50 %", whatever the lead
    state, ct, rules, seat = position_state(MB, completing_position(650), seed=1)
    s = parse_policy("random")
    keys = [np.uint64(k) for k in np.random.default_rng(6).integers(1, 2**63, 4000)]
    rate = np.mean([K.wants_extension(state, rules, seat, s.kernel_id, np.array(s.params), key)[0] for key in keys])
    assert abs(rate - 0.5) < 4 * (0.25 / len(keys)) ** 0.5


def test_a_user_policy_answers_coup_fourre_and_extension_with_the_greedy_defaults():
    # docs/policies.md: "Coup fourré and extension questions are answered for a user policy by the
    # greedy defaults": coup_fourre = 1 (always), extension_margin = 100 km. The user's row was all
    # zeros, so a user seat never called a coup fourré and called every extension when not behind.
    attacked = race_position(["accident", "km25", "km50", "gasoline", "repairs", "spare_tire", "km75"], [ROLL, ROLL],
                             others={1: ["driving_ace", "km25", "km50", "km75", "gasoline", "repairs"]})
    _, info = play_position_move(MB, attacked, "play accident on side 1", policies=["greedy", USER])
    assert info["coup_fourre_by"] == 1
    assert extension_called(USER, 500) and not extension_called(USER, 650)
    assert parse_policy(USER).params == parse_policy("greedy").params


def test_a_remedy_for_two_hazards_is_kept_while_one_can_still_hit():
    # A user design: a second hazard, nail, also cleared by the spare tire, with a safety of its own.
    text = MB_TEXT + ('\n[[cards]]\nkey = "nail"\nrole = "hazard"\ncount = 2\nremedy = "spare_tire"\n'
             '\n[[cards]]\nkey = "nail_guard"\nrole = "safety"\ncount = 1\nprotects = ["nail"]\n')
    design = parse_design(text, "two_hazards_one_remedy.toml")
    hand = ["spare_tire", "km25", "km50", "km75", "km100", "gasoline", "repairs"]

    def discard(safeties):
        # stopped with no roll: nothing to play, so greedy discards its least useful card
        position = race_position(hand, [{"battle": "stop", "safeties": safeties}, ROLL])
        return greedy_picks(design, position, "greedy")
    # protected from the nail only: the flat tire can still hit, so the spare tire (keep value 2)
    # stays and the 25 km card (1 + 4 x 25 / 700) goes; protected from both, the spare tire is useless
    assert discard(["nail_guard"]) == {"discard km25"}
    # and at 2 it goes before 200 km (2.14), after an attack card (1.5); a second copy (0.3) before 25 km
    for cards, expected in ((["spare_tire", "km200", "roll"], "spare_tire"), (["spare_tire", "km200", "stop"], "stop"),
                            (["spare_tire", "spare_tire", "km25"], "spare_tire")):
        position = race_position(cards, [{"battle": "accident", "safeties": ["nail_guard"]}, BLOCKED])
        assert greedy_picks(design, position, "greedy") == {f"discard {expected}"}
    assert discard(["puncture_proof"]) == {"discard km25"}
    assert discard(["puncture_proof", "nail_guard"]) == {"discard spare_tire"}


def test_random_is_uniform_over_the_legal_moves_discards_included():
    position = race_position(["km25", "km50", "stop", "gasoline", "driving_ace", "repairs", "km75"],
                             [{"battle": "roll", "distance": {"km100": 1}}, {"battle": "roll", "distance": {"km100": 2}}])
    state, ct, rules, seat = position_state(MB, position, seed=1)
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, seat, moves)
    legal = [int(m) for m in moves[:n]]
    assert n == 12 and sum(m & 7 == K.DISCARD for m in legal) == 7  # every held card's discard is a move
    functions = RaceRun("millebornes", 2, ["random"], 0).policy_functions
    params = np.array(parse_policy("random").params)
    draws = 6000
    keys = np.random.default_rng(11).integers(1, 2**63, draws)
    counts = Counter(int(K.choose_move(state, ct, rules, seat, moves, K.POLICY_RANDOM, params, np.uint64(k),
                                       *functions)[0]) for k in keys)
    assert set(counts) == set(legal)
    assert chisquare([counts[m] for m in legal], [draws / n] * n).pvalue > 0.001


def test_presets_are_the_documented_parameter_settings():
    # docs/policies.md's table and `etappe policies`
    documented = {"greedy": {}, "aggressive": {"attack": 3}, "builder": {"attack": 1}, "hoarder": {"hold_safeties": 1},
                  "spender": {"hold_safeties": 0}, "next_target": {"target_leader": 0}}
    defaults = {"attack": 1.75, "target_leader": 1, "hold_safeties": 1, "extension_margin": 100, "coup_fourre": 1}
    for name, settings in documented.items():
        assert parse_policy(name).describe()["params"] == defaults | settings, name
    # the parameter's documented range: "inf: never, -inf: always" (not a large number a table prints as 1e+09)
    assert parse_policy("cautious").params == parse_policy("greedy:extension_margin=inf").params
    assert parse_policy("bold").params == parse_policy("greedy:extension_margin=-inf").params
    assert set(documented) | {"cautious", "bold"} == set(PRESETS)


def test_policies_sit_where_the_docs_say():
    # A,B at 4 seats: A,B,A,B; rotate: each game shifts the seating by one seat, so over 4 games
    # every policy sits in every seat once
    df = simulate("millebornes", players=4, games=4, policies=["greedy", "random"], seed=2)
    names = df.attrs["policy_names"]
    seats = df.groupby("game")[[f"seat{p}_policy" for p in range(4)]].first().to_numpy()
    assert [[names[i] for i in row] for row in seats] == [["greedy", "random", "greedy", "random"]] * 4
    df = simulate("millebornes", players=4, games=4, policies=["greedy", "random", "builder", "spender"], seed=2,
                  seating="rotate")
    seats = df.groupby("game")[[f"seat{p}_policy" for p in range(4)]].first().to_numpy()
    names = df.attrs["policy_names"]
    assert [names[i] for i in seats[0]] == ["greedy", "random", "builder", "spender"]
    for g in range(1, 4):
        assert sorted(seats[g]) == [0, 1, 2, 3]
        shift = [np.roll(seats[g - 1], k).tolist() for k in (1, -1)]
        assert seats[g].tolist() in shift
    assert all(sorted(seats[:, p]) == [0, 1, 2, 3] for p in range(4))


@pytest.mark.parametrize("game, spec, message", [
    ("millebornes", "greedy:playouts=5", "bad greedy parameter 'playouts=5'"),  # a look-ahead parameter
    ("millebornes", "random:attack=1", "policy 'random' takes no parameters"),
    ("millebornes", "greedy:boldness=1", "bad greedy parameter 'boldness=1'"),
    ("millebornes", "greedy:hold_safeties=2", "hold_safeties must be 0 or 1, not 2"),
    ("millebornes", "greedy,random,greedy", "give one policy per seat"),
    ("bremen", "greedy:attack=1", "bad greedy parameter 'attack=1'"),
    ("bremen", "greedy:playouts=10", "bad greedy parameter 'playouts=10'"),
    ("bremen", "greedy:noise=-1", "noise must be a number 0 to 1000, not -1"),
    ("etape", "heuristic:joker_p=0.5", "bad heuristic parameter 'joker_p=0.5'"),  # random's parameter
    ("etape", "random:value=2", "bad random parameter 'value=2'"),
    ("etape", "heuristic:braq_min=0", "braq_min must be a whole number of cards, 1 to 8, not 0"),
])
def test_bad_policy_parameters_are_refused_with_a_nonzero_exit(game, spec, message):
    args = ["simulate", game, "--games", "2", "--policy", spec]
    if game == "millebornes":
        args += ["--players", "2"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output


# ---- Bremer Stadtmusikanten: greedy's weights (docs/bremen.md, Policies) -----------
def bremen_score(game, colour, animal, field, **weights):
    """greedy_score of moving `animal` of `colour` to `field` for seat 0, with only `weights` set."""
    row = np.zeros(BK.N_PARAM)
    for name, value in weights.items():
        row[B._PARAM_INDEX[name]] = value
    m = (game.animal(colour, animal) << 16) | game.field(field)
    return float(BK.greedy_score(game.state, m, 0, row, game.board.dist, game.board.binfo))


def bremen_game(players=4):
    game = B.Game(players=players)
    game.seat = 0
    return game


def test_bremen_greedy_weights_score_what_the_docs_say():
    g = bremen_game()
    for animal in ("donkey", "dog", "cat", "rooster"):
        g.place(0, animal, "i01")
    assert bremen_score(g, 0, "donkey", "house", storm=10) == 10 * (4 + 1)  # 4 own animals + robber at home
    g.set_robber("m05")
    assert bremen_score(g, 0, "donkey", "house", storm=10) == 10 * 4
    g = bremen_game()
    for animal in ("donkey", "dog", "cat", "rooster"):
        g.place(0, animal, "m02")
    g.set_robber("m04")
    assert bremen_score(g, 0, "donkey", "m04", chase=4) == 4
    g = bremen_game()  # a dog landing on a foreign dog (size 3) and rooster (1) sends both home
    g.place(0, "dog", "r04")
    g.place(1, "dog", "r05")
    g.place(1, "rooster", "r05")
    g.place(2, "cat", "r07")
    assert bremen_score(g, 0, "dog", "r05", knock=1) == 4 and bremen_score(g, 0, "dog", "r07", knock=1) == 2
    g.state[BK.S_POINTS + 1] = 3  # seat 1 leads alone: its animals weigh 1 + leader
    assert bremen_score(g, 0, "dog", "r05", knock=1, leader=1) == 8
    g.state[BK.S_POINTS + 2] = 3  # shared lead: no extra weight
    assert bremen_score(g, 0, "dog", "r05", knock=1, leader=1) == 4
    g = bremen_game()
    g.place(0, "cat", "r04")
    g.place(1, "dog", "r05")
    g.place(0, "rooster", "r07")
    assert bremen_score(g, 0, "cat", "r05", climb=2) == 2
    assert bremen_score(g, 0, "cat", "r07", own_home=1) == -1
    g = bremen_game(players=3)  # colour 3 is neutral: half the knock
    g.place(0, "dog", "r04")
    g.place(3, "cat", "r05")
    assert bremen_score(g, 0, "dog", "r05", knock=1) == 1
    g = bremen_game()
    g.place(0, "cat", "m00")
    g.place(0, "rooster", "m00")
    g.place(0, "donkey", "r05")
    steps = int(g.board.dist[g.field("m00")] - g.board.dist[g.field("i00")])
    assert bremen_score(g, 0, "cat", "i00", progress=1) == 2 * steps
    assert bremen_score(g, 0, "cat", "r05", build=1) == 3  # donkey, cat, rooster


# ---- Tape l'étape: the heuristic's parameters (docs/etape.md, Policies) --------------
def etape_position(profile, hands):
    opts = E.option_vector({})
    st = np.zeros(EK.S_SIZE, np.int64)
    EK.init_race(st, 4, opts)
    for s, hand in enumerate(hands):
        for colour, value in hand:
            st[EK.S_HAND + s] |= 1 << (colour * 12 + value - 1)
    EK.start_stage(st, opts, profile, EK.profile_start(st, opts, profile))
    return st, opts


def test_etape_card_weights_choose_as_documented():
    # Plaine, red column at 6. Red 7: 30 s, opens the unseen red 8, leads to no own card;
    # red 5: 10 s, opens nothing (red 4 is ours), leads to own red 4 and 3.
    # score = value * secs / 30 + own * (own cards further along) - block * (unseen cards opened)
    st, opts = etape_position(EK.PLAINE, [[(0, 7), (0, 5), (0, 4), (0, 3), (1, 9), (1, 10)], [(0, 8), (2, 3)],
                                          [(3, 3)], [(3, 4), (0, 6)]])
    EK.lay(st, 3, 6 - 1)

    def pick(spec):
        pid, prm, _ = E.parse_policy(spec)
        card, _ = EK.choose_card(st, opts, 0, st[EK.S_HAND] & EK.legal_mask(st, opts), pid, prm, np.uint64(1))
        return card % 12 + 1
    # red 7 scores value - block, red 5 value / 3 + 2 own
    assert pick("heuristic:own=0,block=0") == 7 and pick("heuristic:own=1,block=0") == 5
    assert pick("heuristic:own=0,block=1") == 5 and pick("heuristic:own=0,block=0,value=0.1") == 7
    assert pick("high") == 7  # 3 against 1 + 1
    assert pick("heuristic") == pick("blocker") == pick("connector") == 5


def test_etape_joker_thresholds_choose_as_documented():
    st, opts = etape_position(EK.PLAINE, [[(0, 7), (1, 9), (1, 10)], [(0, 8), (2, 3)], [(3, 3), (3, 4), (3, 5)],
                                          [(2, 4)]])
    assert st[EK.S_STAGE] < st[EK.S_NSTAGES] - 1  # not the last stage: no relaxed thresholds

    def crevaison(spec, on_turn):
        pid, prm, _ = E.parse_policy(spec)
        return EK.choose_crevaison(st, opts, 0, on_turn, pid, prm, np.uint64(1))[0]
    assert crevaison("heuristic", 1) == 1 and crevaison("heuristic", 2) == -1  # 2 cards <= 2 < 3 cards
    assert crevaison("heuristic:crev_cards=1", 1) == -1 and crevaison("heuristic:crev_cards=3", 2) == 2

    def vitamine(spec):
        pid, prm, _ = E.parse_policy(spec)
        return EK.choose_vitamine(st, opts, 0, pid, prm, np.uint64(1))[0]
    assert vitamine("heuristic") == 3 and vitamine("heuristic:vita_cards=0") == -1  # seat 3 holds 1 card
    st, opts = etape_position(EK.MONTAGNE, [[(0, 3), (0, 4), (0, 5), (1, 9), (1, 10)], [(0, 8)], [(3, 7)], [(2, 9)]])

    def braquet(spec):
        pid, prm, _ = E.parse_policy(spec)
        return bool(EK.choose_braquet(st, opts, 0, pid, prm, np.uint64(1))[0])
    assert braquet("heuristic") and braquet("heuristic:braq_min=2") and not braquet("heuristic:braq_min=4")


def test_etape_stage_pick_and_random_probabilities():
    # a hand of 3s and 4s: Montagne (columns from 3) fits it; Plaine's columns from 6 suit it worst,
    # which makes Voiture balai (scored the other way, times balai_w) attractive with a large balai_w
    low = [(colour, value) for colour in range(4) for value in (3, 4)]
    st, opts = etape_position(EK.PLAINE, [low, [], [], []])

    def profiles(spec):
        pid, prm, _ = E.parse_policy(spec)
        return {EK.PROFILE_NAMES[EK.choose_profile(st.copy(), opts, 0, pid, prm, np.uint64(k))[0]] for k in range(1, 13)}
    assert profiles("heuristic") == {"montagne"}
    assert profiles("heuristic:balai_w=10") == {"voiture_balai"}
    assert len(profiles("heuristic:pick=1")) > 1
    for spec, joker_p, more_p in (("random", 0.25, 0.5), ("random:joker_p=0,more_p=1", 0, 1),
                                  ("random:joker_p=1,more_p=0", 1, 0)):
        pid, prm, _ = E.parse_policy(spec)
        keys = [np.uint64(k) for k in range(1, 2001)]
        used = np.mean([EK.choose_braquet(st, opts, 0, pid, prm, k)[0] for k in keys])
        more = np.mean([EK.choose_more(st, opts, 0, pid, prm, k)[0] for k in keys])
        assert abs(used - joker_p) < 0.05 and abs(more - more_p) < 0.05, spec
