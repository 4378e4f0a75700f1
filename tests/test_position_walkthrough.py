"""A player's and designer's walkthrough of positions, replays and user
policies, using only README.md, docs/positions.md and docs/policies.md.
Legal moves are checked against the rules page
(/work/shared/rules/race_games.md), errors against what the docs promise.
Small runs only."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from etappe.analysis.race import PolicyError, RaceRun, load_design, replay, simulate
from etappe.cli.main import app
from etappe.kernels import race as K
from etappe.kernels.race_design import MAX_TYPES, DesignError, parse_design
from etappe.kernels.race_position import (analyze_position, describe_move, legal_moves_of, play_position_move,
                                          position_state)
from test_race_journey import TINY

ROOT = Path(__file__).resolve().parents[1]
POSITIONS_MD = (ROOT / "docs" / "positions.md").read_text()
POLICIES_MD = (ROOT / "docs" / "policies.md").read_text()


@pytest.fixture(scope="module")
def mb():
    return load_design("millebornes")


@pytest.fixture(scope="module")
def so():
    return load_design("stapop")


def _mb(hand, side0, side1, **extra):
    pos = {"players": 2, "on_turn": 0, "stock": 40, "hands": {"0": hand}, "sides": [side0, side1]}
    pos.update(extra)
    return pos


# ---- Mille Bornes: the rules page, section 2 --------------------------------------------------

def test_speed_limit_allows_only_25_and_50_and_hazards_only_on_a_rolling_side(mb):
    hand = ["km100", "km200", "km50", "roll", "stop", "accident", "km25"]
    moves = legal_moves_of(mb, _mb(hand, {"battle": "roll", "limit": "speed_limit"}, {"battle": "roll"}))
    assert {"play km25", "play km50"} <= set(moves)
    assert "play km100" not in moves and "play km200" not in moves  # "Under Speed Limit only 25 and 50"
    assert {"play stop on side 1", "play accident on side 1"} <= set(moves)
    assert "play roll" not in moves  # already rolling
    # never on another hazard, Speed Limit not on a side that shows it (default)
    hand = ["km25", "speed_limit", "stop", "accident", "flat_tire", "roll", "km50"]
    moves = legal_moves_of(mb, _mb(hand, {"battle": "roll"}, {"battle": "accident", "limit": "speed_limit"}))
    assert not [m for m in moves if m.endswith("on side 1")]


def test_go_is_needed_before_distance_and_after_a_safety_over_its_hazard(mb):
    hand = ["km25", "km100", "roll", "accident", "repairs", "gasoline", "km50"]
    stopped = legal_moves_of(mb, _mb(hand, {"battle": "stop"}, {"battle": "roll"}))
    assert "play roll" in stopped and not [m for m in stopped if m.startswith("play km")]
    # default roll_after_safety = true: a safety laid over its hazard still needs a Roll
    needs_go = legal_moves_of(mb, _mb(hand, {"battle": "needs_go", "safeties": ["driving_ace"]},
                                      {"battle": "roll"}))
    assert "play roll" in needs_go and not [m for m in needs_go if m.startswith("play km")]


def test_at_most_two_200s_and_never_beyond_the_trip(mb):
    hand = ["km200", "km100", "km75", "km50", "km25", "roll", "stop"]
    two = legal_moves_of(mb, _mb(hand, {"battle": "roll", "distance": {"km200": 2}}, {"battle": "roll"}))
    assert "play km200" not in two and "play km100" in two  # 400 km: a third 200 is refused
    near = legal_moves_of(mb, _mb(hand, {"battle": "roll", "distance": {"km100": 6, "km25": 1}},
                                  {"battle": "roll"}))
    assert "play km75" in near and "play km100" not in near and "play km200" not in near  # 625 of 700


def test_right_of_way(mb):
    hand = ["km25", "km100", "roll", "accident", "speed_limit", "stop", "gasoline"]
    # with Right of Way and no hazard a side drives without Roll
    own = legal_moves_of(mb, _mb(hand, {"battle": "empty", "safeties": ["right_of_way"]}, {"battle": "roll"}))
    assert {"play km25", "play km100"} <= set(own)
    # against it: no Stop, no Speed Limit; other hazards on a remedy or an empty pile
    moves = legal_moves_of(mb, _mb(hand, {"battle": "roll"},
                                   {"battle": "gasoline", "safeties": ["right_of_way"]}))
    assert "play accident on side 1" in moves
    assert "play stop on side 1" not in moves and "play speed_limit on side 1" not in moves


def test_coup_fourre_as_the_rules_page_tells_it(mb):
    pos = _mb(["km100", "km200", "km50", "roll", "stop", "accident", "km25"],
              {"battle": "roll", "limit": "speed_limit"}, {"battle": "roll"})
    pos["hands"]["1"] = ["driving_ace", "km25", "km50", "roll", "roll", "km75"]
    after, what = play_position_move(mb, pos, "play accident on side 1")
    assert what["coup_fourre_by"] == 1 and what["next_seat"] == 1 and not what["hand_over"]
    side1 = after["sides"][1]
    assert side1["safeties"] == ["driving_ace"] and side1["battle"] == "roll"  # the hazard is discarded
    assert len(after["hands"]["1"]) == 6 and "driving_ace" not in after["hands"]["1"]  # a replacement drawn
    assert after["stock"] == 39 and after["on_turn"] == 1  # the defender takes the next turn


def test_coup_fourre_is_still_allowed_once_the_stock_is_empty(mb):
    pos = {"players": 2, "on_turn": 0, "stock": 0, "hands": {"0": ["accident"], "1": ["driving_ace", "km25"]},
           "sides": [{"battle": "roll"}, {"battle": "roll"}]}
    after, what = play_position_move(mb, pos, "play accident on side 1")
    assert what["coup_fourre_by"] == 1 and after["sides"][1]["safeties"] == ["driving_ace"]
    assert after["hands"]["1"] == ["km25"]  # nothing left to draw as a replacement


def test_four_players_are_two_teams_partners_opposite(mb):
    # 4 players: the 106-card deck (5 Stops) and a trip of 1000; seat 2 plays on side 0
    pos = {"players": 4, "on_turn": 2, "stock": 40,
           "hands": {"2": ["km100", "stop", "stop", "stop", "stop", "stop", "km75"]},
           "sides": [{"battle": "roll", "distance": {"km100": 5, "km200": 2}}, {"battle": "roll"}]}
    moves = legal_moves_of(mb, pos)
    assert "play km100" in moves and "play stop on side 1" in moves  # 1000 km: 900 is not the trip
    after, what = play_position_move(mb, pos, "play km100")
    assert after["sides"][0]["km"] == 1000 and what["hand_over"] and what["trip_side"] == 0


# ---- Stap op: the rules page, section 1 -------------------------------------------------------

def test_stap_op_headwind_stage_set_and_hazard_targets(so):
    pos = {"players": 3, "on_turn": 0, "stock": 30,
           "hands": {"0": ["km5", "km8", "km6", "headwind", "crossing", "youth_hostel"]},
           "sides": [{"battle": "go", "limit": "start", "distance": {"km5": 8, "km6": 2}},
                     {"battle": "go", "limit": "tailwind", "distance": {"km5": 1}},
                     {"battle": "flat_tyre", "limit": "start"}]}
    moves = legal_moves_of(so, pos)
    assert "play km5" not in moves  # the 8 x 5 km are complete
    assert "play km8" not in moves  # every player starts under headwind
    assert "play km6" in moves
    assert "play headwind on side 1" in moves and "play headwind on side 2" not in moves  # only on Wind mee
    assert "play crossing on side 1" in moves and "play crossing on side 2" not in moves  # only on Stap op
    assert "play youth_hostel on side 2" not in moves


def test_stap_op_youth_hostel_is_cleared_by_go_alone(so):
    pos = {"players": 2, "on_turn": 0, "stock": 30,
           "hands": {"0": ["km5", "km10", "tailwind", "go", "bike_repairer", "barriers_open"]},
           "sides": [{"battle": "youth_hostel", "limit": "tailwind"}, {"battle": "empty"}]}
    moves = legal_moves_of(so, pos)
    assert "play go" in moves
    assert "play bike_repairer" not in moves and "play barriers_open" not in moves
    assert not [m for m in moves if m.startswith("play km")]


# ---- mistakes in a position file: the field named, exit 2, no traceback ----------------------

GOOD = """players = 2
on_turn = 0
stock = 40
hands = { "0" = ["km100", "km200", "km50", "roll", "stop", "accident", "km25"] }
"""
SIDES = '[[sides]]\nbattle = "roll"\n[[sides]]\nbattle = "roll"\n'
GOOD_HAND = ["km100", "km200", "km50", "roll", "stop", "accident", "km25"]


@pytest.mark.parametrize("text, field", [
    (GOOD + '[[sides]]\nbattel = "roll"\n[[sides]]\n', "sides[0].battel"),
    (GOOD + '[[sides]]\ndistance = { km100 = -1 }\n[[sides]]\n', "sides[0].distance.km100"),
    (GOOD + '[[sides]]\ndistance = { km100 = 1.5 }\n[[sides]]\n', "sides[0].distance.km100"),
    (GOOD + '[[sides]]\nbattle = "roll"\ndistance = { km200 = 3 }\n[[sides]]\n', "sides[0].distance.km200"),
    (GOOD + '[[sides]]\nbattle = "rol"\n[[sides]]\n', "sides[0].battle"),
    (GOOD + '[[sides]]\nkm = 300\ndistance = { km100 = 2 }\n[[sides]]\n', "sides[0].km"),
    (GOOD + '[[sides]]\n', "sides"),
    (GOOD + '[[sides]]\nbattle = "roll"\ndistance = { km200 = 2, km100 = 3 }\n[[sides]]\n', "sides[0].distance"),
    (GOOD + '[[sides]]\nlimit = "start"\n[[sides]]\n', "sides[0].limit"),
    (GOOD + '[[sides]]\nsafeties = ["driving_ace"]\n[[sides]]\nsafeties = ["driving_ace"]\n', "sides[1].safeties"),
    (GOOD.replace("stock = 40", "stock = 40\ntrip = 1000") + SIDES, "extension_side"),
    (GOOD.replace('"km25"', '"km25", "km25"') + SIDES, "hands.0"),
    (GOOD.replace('"km25"', '"stop", "stop", "stop", "stop"').replace('"stop", "accident", ', '') + SIDES,
     "hands.0"),  # 2 players: 4 Stops in the 101-card deck
    (GOOD.replace("on_turn = 0", "on_turn = 2") + SIDES, "on_turn"),
    (GOOD + 'hand_sizes = { "1" = 3 }\n' + SIDES, "hand_sizes.1"),
    (GOOD.replace("players = 2", "players = 5") + SIDES, "players"),
    (GOOD.replace("players = 2\n", "") + SIDES, "players"),
    (GOOD.replace("stock = 40", "stock = 40\ntrip = 1000\nextension_side = 2") + SIDES, "extension_side"),
    (GOOD.replace("on_turn = 0", "on_turn = 1") + SIDES, "hands"),  # seat 1's hand is not given
    # 101 cards less the 7 in hand leave 94 unseen: a stock of 90 and seat 1's 6 cards need 96
    (GOOD.replace("stock = 40", "stock = 90") + SIDES, "stock"),
    ('players = 2\non_turn = 0\nstock = 0\nhands = { "0" = [] }\nhand_sizes = { "1" = 0 }\n' + SIDES, "stock"),
    # a coup fourré lays one of the side's safeties: more coups than safeties cannot have been made
    (GOOD + '[[sides]]\nsafeties = ["driving_ace"]\ncoups = 2\n[[sides]]\n', "sides[0].coups"),
    (GOOD + '[[sides]]\ncoups = -1\n[[sides]]\n', "sides[0].coups"),
])
def test_position_mistakes_name_the_field(tmp_path, text, field):
    path = tmp_path / "pos.toml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["moves", "millebornes", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{field}:" in result.output and "Traceback" not in result.output
    assert not isinstance(result.exception, (KeyError, AttributeError, TypeError))


def test_a_misspelt_position_field_is_told_the_field_it_resembles(tmp_path):
    path = tmp_path / "pos.toml"
    path.write_text(GOOD.replace("stock = 40", "stok = 40") + '[[sides]]\nbattel = "roll"\n[[sides]]\n')
    said = " ".join(CliRunner().invoke(app, ["moves", "millebornes", str(path)]).output.split())
    assert "stok: unknown field (did you mean 'stock'?); known: discard, extension_side," in said
    path.write_text(GOOD + '[[sides]]\nbattel = "roll"\n[[sides]]\n')
    said = " ".join(CliRunner().invoke(app, ["moves", "millebornes", str(path)]).output.split())
    assert "sides[0].battel: unknown field (did you mean 'battle'?); known:" in said


def test_a_short_hand_while_the_stock_holds_cards_is_named_with_its_count(mb):
    position = {"players": 2, "on_turn": 0, "stock": 40, "hands": {"0": GOOD_HAND}, "hand_sizes": {"1": 3},
                "sides": [{"battle": "roll"}, {"battle": "roll"}]}
    with pytest.raises(DesignError) as refused:
        legal_moves_of(mb, position)
    assert str(refused.value) == "position: hand_sizes.1: 3 cards, but a hand holds 6 while the stock holds cards"


@pytest.mark.parametrize("players", [None, 2.0, "2"])
def test_players_must_be_given_as_a_whole_number(mb, players):
    position = {"on_turn": 0, "stock": 40, "hands": {"0": GOOD_HAND}, "sides": [{"battle": "roll"}] * 2}
    if players is not None:
        position["players"] = players
    with pytest.raises(DesignError) as refused:
        legal_moves_of(mb, position)
    assert str(refused.value) == "position: players: missing or not a whole number"


def test_the_cards_nobody_sees_are_dealt_at_random_with_the_seed(mb):
    position = {"players": 2, "on_turn": 0, "stock": 40, "hands": {"0": GOOD_HAND},
                "sides": [{"battle": "roll"}, {"battle": "roll"}]}
    hidden = [tuple(position_state(mb, position, seed=seed)[0][K.HAND_AT + MAX_TYPES:K.HAND_AT + 2 * MAX_TYPES])
              for seed in range(6)]
    assert len(set(hidden)) > 1  # six deals of seat 1's 6 cards from 94 are not all alike
    assert hidden[0] == tuple(position_state(mb, position, seed=0)[0][K.HAND_AT + MAX_TYPES:K.HAND_AT + 2 * MAX_TYPES])


def test_hand_sizes_of_a_listed_hand_must_agree_with_it(mb):
    # hand_sizes is for the hands not listed: a size that contradicts a listed hand is a mistake
    hand = ["km100", "km200", "km50", "roll", "stop", "accident", "km25"]
    side = {"battle": "roll"}
    with pytest.raises(DesignError, match=r"hand_sizes\.0: 3, but hands\.0 lists 7 cards"):
        legal_moves_of(mb, _mb(hand, side, side, hand_sizes={"0": 3}))
    assert legal_moves_of(mb, _mb(hand, side, side, hand_sizes={"0": 7})) == legal_moves_of(mb, _mb(hand, side, side))


def test_a_missing_or_unparsable_position_file(tmp_path):
    result = CliRunner().invoke(app, ["moves", "millebornes", str(tmp_path / "nothere.toml")])
    assert result.exit_code == 2 and "no such position file" in result.output
    (tmp_path / "bad.toml").write_text("players = 2 2\n")
    result = CliRunner().invoke(app, ["moves", "millebornes", str(tmp_path / "bad.toml")])
    assert result.exit_code == 2 and "cannot parse" in result.output and "Traceback" not in result.output
    assert "(at line 1, column 13): 'players = 2 2'" in " ".join(result.stderr.split())  # the line it points at
    result = CliRunner().invoke(app, ["moves", "millebornes", str(tmp_path)])
    assert result.exit_code == 2 and f"{tmp_path}: a folder, not a position file" in " ".join(result.stderr.split())


def test_a_position_file_saved_with_a_byte_order_mark_is_read(tmp_path):
    # some editors begin UTF-8 files with a byte-order mark; design files were read through it already
    path = tmp_path / "pos.toml"
    path.write_text(GOOD + SIDES, encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    result = CliRunner().invoke(app, ["moves", "millebornes", str(path)])
    assert result.exit_code == 0, result.output
    assert "play km100" in result.stdout


# ---- the docs' own examples ---------------------------------------------------------------------

def test_the_python_example_of_positions_md_runs_as_written(capsys):
    blocks = re.findall(r"```python\n(.*?)```", POSITIONS_MD, re.S)
    assert blocks, "docs/positions.md shows how to call play_position_move from Python"
    code = blocks[0]
    assert "load_design(" in code and "play_position_move(" in code
    exec(compile(code, "docs/positions.md", "exec"), {})
    out = capsys.readouterr().out
    assert "'coup_fourre_by': 1" in out  # the example's accident meets Driving Ace


def test_analyze_policies_are_those_positions_md_names(mb):
    pos = _mb(["km100", "km200", "km50", "roll", "stop", "accident", "km25"],
              {"battle": "roll", "limit": "speed_limit"}, {"battle": "roll"})
    text = " ".join(POSITIONS_MD.split())
    for refused in ("random", "lookahead"):
        assert f"`{refused}`" in text.split("are refused")[0].rsplit("analyze", 1)[-1]
        with pytest.raises((DesignError, PolicyError), match="greedy"):
            analyze_position(mb, pos, policy=refused, playouts=4)
    rows = analyze_position(mb, pos, policy="cautious", playouts=4)
    assert {r["move"] for r in rows} == set(legal_moves_of(mb, pos))


def test_analyze_plays_out_a_position_with_nothing_hidden_as_worked_by_hand(mb):
    # The stock is empty and the opponent's hand too: every deal of the unseen cards is the same
    # world, so each move's chance is 0 or 1. Seat 0 at 625 km holds 25 and 50 km; the opponent is
    # at 675 km. Playing either card, the opponent passes, seat 0 lays the other: 700 km, the trip
    # (700 + 400 against 675): a win. After a discard seat 0 ends at 675 (a tie: no strictly best
    # score) or 650 km: a loss.
    pos = {"players": 2, "on_turn": 0, "stock": 0, "hands": {"0": ["km25", "km50"]}, "hand_sizes": {"1": 0},
           "sides": [{"battle": "roll", "distance": {"km200": 2, "km100": 2, "km25": 1}},
                     {"battle": "roll", "distance": {"km200": 2, "km100": 2, "km75": 1}}]}
    chances = {r["move"]: r["probability"] for r in analyze_position(mb, pos, playouts=6)}
    assert chances == {"play km25": 1.0, "play km50": 1.0, "discard km25": 0.0, "discard km50": 0.0}
    # with the opponent at 625 km, 650 or 675 km is the strictly best score: every move wins (700
    # against 625 is less than greedy's 100 km margin for calling the extension)
    pos["sides"][1]["distance"] = {"km200": 2, "km100": 2, "km25": 1}
    chances = {r["move"]: r["probability"] for r in analyze_position(mb, pos, playouts=6)}
    assert chances == {"play km25": 1.0, "play km50": 1.0, "discard km25": 1.0, "discard km50": 1.0}


def test_analyze_counts_the_coups_fourres_a_side_made_earlier_in_the_hand(mb):
    # Four players (1000 km, no extension), nothing hidden, the stock empty: seat 0 holds a 25 km it
    # cannot lay (its side shows no Roll) and every other hand is empty, so the hand ends as it stands.
    # Side 0 scores its 800 km; side 1 has no distance and all four safeties: 4 x 100 + 300 = 700, so
    # side 0 wins the hand. Had two of those safeties been coups fourrés (300 each), side 1 would score
    # 1300 and win it (the rules page's scoring table).
    side1 = {"battle": "roll", "safeties": ["extra_tank", "puncture_proof", "driving_ace", "right_of_way"]}
    pos = {"players": 4, "on_turn": 0, "stock": 0, "hands": {"0": ["km25"]},
           "hand_sizes": {"1": 0, "2": 0, "3": 0},
           "sides": [{"battle": "empty", "distance": {"km200": 2, "km100": 4}}, side1]}
    assert [(r["move"], r["probability"]) for r in analyze_position(mb, pos, playouts=4)] == [("discard km25", 1.0)]
    side1["coups"] = 2
    assert [(r["move"], r["probability"]) for r in analyze_position(mb, pos, playouts=4)] == [("discard km25", 0.0)]
    # a position printed by etappe gives them back
    new, _ = play_position_move(mb, pos, "discard km25")
    assert new["sides"][1]["coups"] == 2 and "coups" not in new["sides"][0]


def test_coups_fourres_are_refused_in_a_position_where_none_can_be_made(mb):
    pos = {"players": 2, "on_turn": 0, "stock": 40, "hands": {"0": GOOD_HAND},
           "sides": [{"battle": "roll", "safeties": ["driving_ace"], "coups": 1}, {"battle": "roll"}]}
    assert legal_moves_of(mb, pos)
    with pytest.raises(DesignError, match=r"sides\[0\]\.coups: 1, but option coup_fourre = false"):
        legal_moves_of(mb, pos, options={"coup_fourre": False})


# ---- replays --------------------------------------------------------------------------------------

def _check_mille_bornes_replay(text, sides=2):
    """Rules-page facts, hand by hand: at most two 200s, never beyond the
    trip (700, 1000 after an extension); after a coup fourré its player
    takes the next turn."""
    hands = text.split("== hand ")[1:]
    assert hands
    for hand in hands:
        km, twos, trip = [0] * sides, [0] * sides, 700
        coup_fourre_by = None
        for line in hand.splitlines():
            if "calls the extension to 1000" in line:
                trip = 1000
            m = re.match(r"\s+seat (\d) COUP FOURR", line)
            if m:
                coup_fourre_by = m[1]
            m = re.match(r"t\s+\d+ seat (\d) draws", line)
            if m and coup_fourre_by is not None:
                assert m[1] == coup_fourre_by, line  # players in between lose their turn
                coup_fourre_by = None
            m = re.match(r"t\s+\d+ seat (\d) plays km(\d+)$", line)
            if m:
                side = int(m[1]) % sides
                km[side] += int(m[2])
                twos[side] += m[2] == "200"
                assert km[side] <= trip and twos[side] <= 2, line
        for side in range(sides):
            m = re.search(rf"side {side}: (\d+) km", hand)
            assert m and int(m[1]) == km[side]  # the summary adds up the distance laid


def test_replay_from_a_run_and_from_its_settings_agree_and_follow_the_rules():
    df = simulate("millebornes", players=2, games=2, policies=["greedy", "aggressive"], seed=3)
    from_run = replay(df.attrs, game=1)
    by_hand = replay("millebornes", game=1, players=2, policies=["greedy", "aggressive"], seed=3)
    assert from_run == by_hand
    assert from_run.startswith("Mille Bornes, 2 players, seed 3, game 1")
    assert "seat 0: greedy" in from_run and "seat 1: aggressive" in from_run
    _check_mille_bornes_replay(from_run)
    assert "== game over" in from_run


def test_a_three_player_replay_with_coups_fourres():
    text = replay("millebornes", game=1, players=3, seed=5)
    assert "COUP FOURRÉ" in text
    _check_mille_bornes_replay(text, sides=3)


STAGE_SET = {"5": 8, "6": 4, "8": 2, "10": 2}  # the rules page: 8 x 5, 4 x 6, 2 x 8, 2 x 10 km


def test_a_stap_op_replay_follows_the_rules_page():
    text = replay("stapop", game=4, players=3, seed=2)
    assert "reshuffled" in text  # the stock runs out and is reshuffled in this game
    sides = 3
    for hand in text.split("== hand ")[1:]:
        laid = [dict.fromkeys(STAGE_SET, 0) for _ in range(sides)]
        wind, battle = ["head"] * sides, ["empty"] * sides  # every player starts under headwind
        for line in hand.splitlines():
            m = re.match(r"t\s+\d+ seat (\d+) plays (\w+)(?: on side (\d+))?$", line)
            if not m:
                continue
            own = int(m[1]) % sides
            card, target = m[2], (int(m[3]) if m[3] else own)
            if card == "tailwind":
                wind[own] = "tail"
            elif card == "headwind":
                assert wind[target] == "tail" and target != own, line  # only on an opponent with Wind mee
                wind[target] = "head"
            elif card.startswith("km"):
                stage = card[2:]
                assert battle[own] == "go", line  # stages need Stap op on top
                assert stage in ("5", "6") or wind[own] == "tail", line  # 8 and 10 need Wind mee
                laid[own][stage] += 1
                assert laid[own][stage] <= STAGE_SET[stage], line  # no stage of a complete kind
            elif card in ("crossing", "flat_tyre", "youth_hostel"):
                assert battle[target] == "go" and target != own, line  # only on an opponent showing Stap op
                battle[target] = card
            else:
                battle[own] = card
        for side in range(sides):
            m = re.search(rf"side {side}: (\d+) km", hand)
            assert m and int(m[1]) == sum(int(k) * n for k, n in laid[side].items())


# ---- a policy of your own (docs/policies.md) -----------------------------------------------------

MY_POLICY = '''
from etappe.kernels.race_design import C_ROLE, ROLE_HAZARD, R_SIDES
from etappe.kernels.rng import randint


def attack_first(state, card_table, rules, seat, moves, n_moves, params, key):
    own = seat % rules[R_SIDES]
    for i in range(n_moves):
        card, target = moves[i] >> 3, moves[i] & 7
        if target != 7 and target != own and card_table[card, C_ROLE] == ROLE_HAZARD:
            return i
    i, key = randint(key, n_moves)
    return i


def wrong_signature(state, card_table, rules, seat, moves, n_moves, params):
    return 0


def off_the_end(state, card_table, rules, seat, moves, n_moves, params, key):
    return n_moves
'''


def test_a_policy_written_as_documented_plays(tmp_path, mb):
    assert "def my_policy(state, card_table, rules, seat, moves, n_moves, params, key) -> int:" in POLICIES_MD
    (tmp_path / "mine.py").write_text(MY_POLICY)
    spec = f"{tmp_path}/mine.py:attack_first"
    df = simulate("millebornes", players=2, games=4, seed=1, policies=[spec, "greedy"])
    assert df.attrs["games"] == 4
    # and its seat plays what it chooses: in the docs' position seat 0 holds Stop and side 1 shows Roll
    # (hazards go only on a side showing Roll; Puncture-Proof does not guard against Stop), so attack_first
    # plays Stop on side 1 whatever its key; with side 1 stopped it has no attack and draws its move
    lookahead, users = RaceRun("millebornes", 2, [spec, "greedy"], 0).policy_functions
    position = tomllib.loads(re.search(r"```toml\n(.*?)```", POSITIONS_MD, re.S)[1])
    stopped = {**position, "sides": [position["sides"][0], {**position["sides"][1], "battle": "stop"}]}

    def choices(pos):
        state, ct, rules, seat = position_state(mb, pos, seed=0)
        moves = np.empty(K.MAX_MOVES, np.int32)
        picked = (K.choose_move(state, ct, rules, seat, moves, K.POLICY_USER, np.zeros(K.N_PARAMS), np.uint64(key),
                                lookahead, users)[0] for key in range(1, 21))
        return {describe_move(mb, int(move), 0) for move in picked}

    assert choices(position) == {"play stop on side 1"}
    drawn = choices(stopped)
    assert len(drawn) > 1 and not any("on side 1" in move for move in drawn)


@pytest.mark.parametrize("spec, words", [
    ("mine.py:wrong_signature", "takes (state, card_table, rules, seat, moves, n_moves, params)"),
    ("mine.py:off_the_end", "not one of the legal moves"),
    ("mine.py:nothere", "no function 'nothere'"),
    ("nofile.py:f", "no file"),
    ("broken.py:f", "importing"),
])
def test_policy_mistakes_stop_the_run_with_a_message(tmp_path, spec, words):
    (tmp_path / "mine.py").write_text(MY_POLICY)
    (tmp_path / "broken.py").write_text("def f(state:\n    return 0\n")
    with pytest.raises(PolicyError, match=re.escape(words)):
        simulate("millebornes", players=2, games=1, seed=1, policies=[f"{tmp_path}/{spec}", "greedy"])


def test_a_helper_module_next_to_the_policy_is_not_importable_as_the_docs_say(tmp_path):
    text = " ".join(POLICIES_MD.split())
    assert "its folder is not put on the import path" in text and "Keep your helper functions in the same file" in text
    (tmp_path / "helper.py").write_text("def pick(n):\n    return 0\n")
    (tmp_path / "uses_helper.py").write_text(
        "from helper import pick\n\n\n"
        "def p(state, card_table, rules, seat, moves, n_moves, params, key):\n    return pick(n_moves)\n")
    with pytest.raises(PolicyError, match="No module named 'helper'"):
        simulate("millebornes", players=2, games=1, seed=1, policies=[f"{tmp_path}/uses_helper.py:p", "greedy"])


def test_position_toml_of_the_docs_parses(mb):
    block = re.search(r"```toml\n(.*?)```", POSITIONS_MD, re.S)[1]
    pos = tomllib.loads(block)
    # worked from the rules page: side 0 has 600 of the 700 km and shows Roll with no limit, so km25, km50
    # and km100 (to exactly 700) may be laid, not km200 (two 200s laid already: at most two a hand), nor
    # Roll (it shows Roll); Stop goes on side 1, which shows Roll (Puncture-Proof guards only against a
    # Flat Tire); Extra Tank, a safety, is always playable; and any card may be discarded
    hand = pos["hands"]["0"]
    assert sorted(legal_moves_of(mb, pos)) == sorted(["play km100", "play km25", "play km50", "play stop on side 1",
                                                      "play extra_tank", *(f"discard {card}" for card in hand)])


def test_analyze_agrees_with_itself_across_seeds(mb):
    """The position of docs/positions.md lists no discard pile, so the cards
    it leaves over are not known: every playout deals them afresh. (They were
    dealt once per seed, and seeds 0 and 1 then gave play km100 0.749 and
    0.863 over 2,000 playouts, intervals apart.)"""
    position = tomllib.loads(re.search(r"```toml\n(.*?)```", POSITIONS_MD, re.S)[1])
    chances = [next(r["probability"] for r in analyze_position(mb, position, playouts=1000, seed=seed)
                    if r["move"] == "play km100") for seed in range(4)]
    # four standard errors of a difference of two such shares (p near 0.8, 1,000 playouts each)
    assert max(chances) - min(chances) < 4 * (2 * 0.8 * 0.2 / 1000) ** 0.5, chances



def test_analyze_counts_a_hand_played_out_to_the_side_that_went_furthest():
    # docs/designs.md: without a scoring table, a hand played out without a trip goes to the side that
    # went furthest (a tie to nobody). test_race_journey's tiny design (no scoring, played out, a trip of
    # 100 km in 50s); nothing is hidden here: seat 0 holds the last card of the hand.
    design = parse_design(TINY, "tiny.toml")
    position = {"players": 2, "on_turn": 0, "stock": 0, "hands": {"0": ["km50"]}, "hand_sizes": {"1": 0},
                "sides": [{"battle": "go"}, {"battle": "go"}]}
    chances = {r["move"]: r["probability"] for r in analyze_position(design, position, playouts=4)}
    assert chances == {"play km50": 1.0, "discard km50": 0.0}  # 50 km against 0; 0 against 0: a tie
