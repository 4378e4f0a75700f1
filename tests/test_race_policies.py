"""Policies: user plugins, the look-ahead's information set, presets."""
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from etappe.analysis.race import RaceRun, simulate
from etappe.kernels import race as K
from etappe.kernels.race_design import load_design
from etappe.kernels.race_policies import (
    GREEDY_PARAMETERS,
    LOOKAHEAD_PARAMETERS,
    PARAMETER_RANGES,
    PRESETS,
    PolicyError,
    PolicySpec,
    parse_policy,
)
from etappe.kernels.race_position import position_state

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "distance_first.py"


def test_documented_example_policy_runs_and_beats_random():
    df = simulate("millebornes", players=2, games=60, policies=[f"{EXAMPLE}:distance_first", "random"],
                  seed=4, seating="rotate")
    last = df[df.last_hand == 1]
    # the winning side's policy (-1: no winner)
    wins = np.where(last.winner_side == 0, last.seat0_policy, np.where(last.winner_side == 1, last.seat1_policy, -1))
    assert df.attrs["policy_names"][0].endswith("distance_first.py:distance_first")
    # Laying distance whenever possible beats random play nearly always.
    assert (wins == 0).sum() >= 50


def test_user_policy_with_wrong_signature_is_refused(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def pick(state, moves):\n    return 0\n")
    with pytest.raises(PolicyError, match="takes \\(state, moves\\), but a policy takes"):
        parse_policy(f"{bad}:pick")


def test_user_policy_that_does_not_type_is_refused(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                   "    return 'first'\n")
    with pytest.raises(PolicyError, match="does not compile to the policy signature"):
        parse_policy(f"{bad}:pick")


def test_user_policy_that_only_raises_is_refused_before_the_kernel_sees_it(tmp_path):
    # Numba types a body that only raises as returning none, whatever the
    # signature asked; the kernel's tuple of policies then failed to type.
    bad = tmp_path / "pol_raise.py"
    bad.write_text("def p(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                   "    raise ValueError('boom')\n")
    with pytest.raises(PolicyError, match=r"does not compile to the policy signature int64 p\(state, .*"
                                          r"it returns none, never a move index"):
        parse_policy(f"{bad}:p")


def test_user_policy_returning_a_fraction_is_refused(tmp_path):
    # the signature would cast 0.5 to move 0 without a word (docs/policies.md: a policy returns an index)
    bad = tmp_path / "pol_float.py"
    bad.write_text("def p(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                   "    if n_moves > 2:\n        return 0.5\n    return 0\n")
    with pytest.raises(PolicyError, match=r"returns a float64 on some path; a policy returns the index of its move"):
        parse_policy(f"{bad}:p")
    good = tmp_path / "pol_int.py"  # a whole number computed from floats is fine once made int
    good.write_text("def p(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                    "    return int(0.5 * n_moves)\n")
    assert parse_policy(f"{good}:p").kernel_id >= K.POLICY_USER


def test_a_user_policy_file_is_imported_as_a_module_of_its_own(tmp_path):
    # a file that works when Python imports it works as a policy: here a dataclass under postponed
    # annotations, which looks its module up in sys.modules while the file is being imported
    path = tmp_path / "with_class.py"
    path.write_text("from __future__ import annotations\n\nfrom dataclasses import dataclass\n\n\n"
                    "@dataclass\nclass Choice:\n    index: int = 0\n\n\n"
                    "def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n    return 0\n")
    assert parse_policy(f"{path}:pick").kernel_id == K.POLICY_USER


def test_a_policy_that_is_no_string_is_refused_by_name():
    # the API takes specs as the CLI writes them; anything else is named in the refusal, not a traceback
    for spec in (1, None):
        with pytest.raises(PolicyError, match=f"a policy is a string such as 'greedy', not {spec}"):
            simulate("stapop", players=2, games=1, policies=["greedy", spec])


def test_user_policy_missing_function_or_file(tmp_path):
    good = tmp_path / "p.py"
    good.write_text("x = 1\n")
    with pytest.raises(PolicyError, match="has no function 'pick'"):
        parse_policy(f"{good}:pick")
    with pytest.raises(PolicyError, match="no file"):
        parse_policy(f"{tmp_path / 'missing.py'}:pick")
    with pytest.raises(PolicyError, match="'x' is not a function"):
        parse_policy(f"{good}:x")
    for spec in (str(good), f"{good}:"):  # the function's name is not optional
        with pytest.raises(PolicyError, match="expected path/to/file.py:function"):
            parse_policy(spec)


def test_the_records_name_each_policy_with_every_parameter_it_plays_with():
    # docs/records.md: `policies`, {name, family, params} per seat; random has no parameter, the
    # look-ahead greedy's five (docs/policies.md) and its own three
    records = simulate("stapop", players=3, games=1, seed=1,
                       policies=["random", "lookahead:playouts=20", "greedy:attack=3"])
    greedy = {"attack": 1.75, "target_leader": 1.0, "hold_safeties": 1.0, "extension_margin": 100.0, "coup_fourre": 1.0}
    assert records.attrs["policies"] == [
        {"name": "random", "family": "random", "params": {}},
        {"name": "lookahead:playouts=20", "family": "lookahead",
         "params": greedy | {"playouts": 20.0, "horizon": 30.0, "confidence": 2.0}},
        {"name": "greedy:attack=3", "family": "greedy", "params": greedy | {"attack": 3.0}}]


def test_at_most_four_different_user_policies_in_one_run(tmp_path):
    # docs/policies.md: the kernel takes its user policies in a tuple of four places. Each seat plays
    # its own: the fourth only discards (target 7), so its side never lays a km; the others play a card
    # whenever they can (the first legal play; the third the last), and they do lay km
    specs = []
    for i in range(5):
        wanted = "moves[i] % 8 == 7" if i == 3 else "moves[i] % 8 != 7"
        order = "range(n_moves - 1, -1, -1)" if i == 2 else "range(n_moves)"
        body = f"    for i in {order}:\n        if {wanted}:\n            return i\n    return 0\n"
        (tmp_path / f"p{i}.py").write_text("def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n" + body)
        specs.append(f"{tmp_path}/p{i}.py:pick")
    records = simulate("stapop", players=4, games=20, seed=1, policies=specs[:4])
    assert (records["s3_distance"] == 0).all()
    assert all((records[f"s{seat}_distance"] > 0).any() for seat in range(3))
    with pytest.raises(PolicyError, match="at most 4 different user policies in one run"):
        simulate("millebornes", players=6, games=2, seed=1, policies=specs + ["greedy"])


def test_an_edited_user_policy_is_another_policy_in_the_records(tmp_path):
    # A run's identity (resume) and metadata (replay) hold the policy file's hash.
    path = tmp_path / "p.py"
    path.write_text("def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n    return 0\n")
    spec = PolicySpec(f"{path}:pick", K.POLICY_USER, (0.0,) * K.N_PARAMS)
    before = spec.describe()
    path.write_text("def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n    return n_moves - 1\n")
    after = spec.describe()
    assert before["name"] == after["name"] and before["source_hash"] != after["source_hash"]


def test_user_policy_returning_an_illegal_index_is_reported(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                   "    return n_moves\n")
    with pytest.raises(PolicyError, match="not one of the legal moves"):
        simulate("stapop", players=2, games=2, policies=[f"{bad}:pick", "greedy"], seed=1)
    # the message names the policy, its seat and the first game it failed in (every game here)
    with pytest.raises(PolicyError, match=r"policy '.*bad\.py:pick' \(seat 1\) .*\(game 0, hand 0 in the records\)"):
        simulate("stapop", players=2, games=2, policies=["greedy", f"{bad}:pick"], seed=1)


def user_policy_file(tmp_path, body: str, name: str = "pick") -> str:
    """A policy file holding `def pick(state, card_table, rules, seat, moves, n_moves, params, key)` with `body`."""
    path = tmp_path / f"{name}.py"
    path.write_text(f"def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n{body}")
    return f"{path}:pick"


def test_one_user_policy_on_several_seats_is_one_policy(tmp_path):
    # docs/policies.md: one policy on several seats is one policy, in the records, their summary and the
    # report; so it plays every seat of a six-player table (four different ones are the most)
    from etappe.analysis.race_summary import outcomes_by_policy, summarize
    from etappe.reports.race_report import build_report

    spec = user_policy_file(tmp_path, "    return 0\n")
    records = simulate("stapop", players=6, games=2, seed=1, policies=[spec])
    assert records.attrs["policy_names"] == [spec]
    assert all((records[f"seat{s}_policy"] == 0).all() for s in range(6))
    records = simulate("stapop", players=4, games=40, seed=1, policies=[spec, "greedy"])
    assert records.attrs["policy_names"] == [spec, "greedy"]
    summary = summarize(records)
    table = outcomes_by_policy(summary)
    won = int((records["winner_side"] >= 0).sum())  # a game with a winner counts once for each side of a policy
    assert list(table["policy"]) == [spec, "greedy"] and list(table["side_games"]) == [2 * won, 2 * won]
    report = build_report(summary, records.attrs).to_markdown()
    assert f"seat 0: {spec} (file sha256 {records.attrs['policies'][0]['source_hash']})" in report


def test_a_user_policy_that_raises_while_playing_stops_the_run_naming_it_and_its_line(tmp_path):
    spec = user_policy_file(tmp_path, "    if n_moves > 3:\n        raise ValueError('too many moves')\n    return 0\n")
    said = (rf"user policy '{re.escape(spec)}' raised ValueError: too many moves \(.*pick\.py, line 3\) while "
            "playing; a policy returns the index of its move and must not raise")
    with pytest.raises(PolicyError, match=said):
        simulate("millebornes", players=2, games=20, seed=1, policies=[spec, "greedy"])
    with pytest.raises(PolicyError, match=said):  # and in a replay
        RaceRun("millebornes", 2, [spec, "greedy"], seed=1).replay(0)


def test_a_user_policy_reading_past_an_array_s_end_stops_the_run(tmp_path):
    # compiled with bounds checks (docs/policies.md): an IndexError, not a read of other memory
    spec = user_policy_file(tmp_path, "    return moves[moves.size] * 0\n")
    with pytest.raises(PolicyError, match=rf"user policy '{re.escape(spec)}' raised IndexError: index is out of bounds"):
        simulate("stapop", players=2, games=5, seed=1, policies=[spec, "greedy"])


def test_a_user_policy_that_writes_to_the_game_or_is_no_plain_function_is_refused(tmp_path):
    # its arguments are read-only (docs/policies.md): writing to the state would change the game unseen
    writes = user_policy_file(tmp_path, "    state[0] = 0\n    return 0\n")
    with pytest.raises(PolicyError, match="it writes to an argument, and a policy's arguments are read-only"):
        parse_policy(writes)
    for name, text, said in [
            ("cls", "class pick:\n    def __init__(self, state, card_table, rules, seat, moves, n_moves, params, key):\n"
             "        pass\n", "'pick' is not a function \\(a def\\) but a type"),
            ("asynchronous", "async def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n    return 0\n",
             "'pick' is an async or generator function"),
            ("context", "def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n"
             "    with open('x') as f:\n        pass\n    return 0\n",
             "does not compile to the policy signature .*'with \\(context manager\\) as \\(variable\\):'"),
            ("no_return", "def pick(state, card_table, rules, seat, moves, n_moves, params, key):\n"
             "    if n_moves > 100:\n        return 0\n", "does some path end without a return")]:
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        with pytest.raises(PolicyError, match=said):
            parse_policy(f"{path}:pick")


def test_a_user_policy_never_draws_the_numbers_of_its_next_decision(tmp_path):
    # A user policy may draw several numbers from its key. Given the seat's
    # own key, whose next step is the next decision's key, its second draw
    # would be its first draw at the next decision: a choice made from the
    # one would always be the choice made from the other.
    path = tmp_path / "draws.py"
    path.write_text("from etappe.kernels.rng import randint\n"
                    "def second(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                    "    i, key = randint(key, n_moves)\n"
                    "    i, key = randint(key, n_moves)\n"
                    "    return i\n"
                    "def first(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                    "    i, key = randint(key, n_moves)\n"
                    "    return i\n")
    lookahead, users = RaceRun("millebornes", 2, [f"{path}:second", f"{path}:first"], 0).policy_functions
    state, ct, rules, seat = position_state(load_design("millebornes"), MIDGAME, seed=0)
    moves = np.empty(K.MAX_MOVES, np.int32)
    params = np.zeros(K.N_PARAMS)
    n_moves = K.legal_moves(state, ct, rules, seat, moves)
    assert n_moves >= 10
    same = 0
    for key in range(1, 41):
        second, next_key = K.choose_move(state, ct, rules, seat, moves, K.POLICY_USER, params, np.uint64(key),
                                         lookahead, users)
        first, _ = K.choose_move(state, ct, rules, seat, moves, K.POLICY_USER + 1, params, np.uint64(next_key),
                                 lookahead, users)
        same += second == first
    assert same <= 12  # independent choices agree 40 / n_moves = 4 times on average; sharing, 40 times


def test_unknown_policy_and_parameter_are_refused():
    with pytest.raises(PolicyError, match="unknown policy 'clever'"):
        parse_policy("clever")
    with pytest.raises(PolicyError, match="bad greedy parameter 'bravery=3'"):
        parse_policy("greedy:bravery=3")
    with pytest.raises(PolicyError, match="must be a number"):
        parse_policy("greedy:attack=lots")


MIDGAME = {
    "players": 2, "on_turn": 0, "stock": 45,
    "hands": {"0": ["km100", "km25", "roll", "stop", "gasoline", "km50", "speed_limit"]},
    "sides": [{"battle": "roll", "distance": {"km200": 1, "km100": 2}},
              {"battle": "roll", "distance": {"km100": 3}, "safeties": ["driving_ace"]}],
}


def hidden_cards(state, seat, players):
    """Card type -> count in the stock and the hands other than `seat`'s."""
    counts = Counter(int(t) for t in state[K.STOCK_AT:K.STOCK_AT + state[K.ST_STOCK_N]])
    for p in range(players):
        if p != seat:
            for t in range(K.MAX_TYPES):
                counts[t] += int(state[K.HAND_AT + p * K.MAX_TYPES + t])
    return +counts


def redeal_hidden(state, seat, players, seed):
    """The same public position with the hidden cards (the stock and the
    other hands) dealt differently: only card locations nobody but their
    holder can see change."""
    state = state.copy()
    hidden = list(hidden_cards(state, seat, players).elements())
    for p in range(players):
        if p != seat:
            state[K.HAND_AT + p * K.MAX_TYPES:K.HAND_AT + (p + 1) * K.MAX_TYPES] = 0
    np.random.default_rng(seed).shuffle(hidden)
    n = int(state[K.ST_STOCK_N])
    state[K.STOCK_AT:K.STOCK_AT + n] = hidden[:n]
    used = n
    for p in range(players):
        if p != seat:
            for t in hidden[used:used + state[K.HAND_N_AT + p]]:
                state[K.HAND_AT + p * K.MAX_TYPES + t] += 1
            used += state[K.HAND_N_AT + p]
    assert used == len(hidden)
    return state


def lookahead_choice(position, hidden_seed, key):
    design = load_design("millebornes")
    state, ct, rules, seat = position_state(design, position, seed=0)
    state = redeal_hidden(state, seat, position["players"], hidden_seed)
    K.recount_held(state, rules)
    assert K.check_state(state, ct, rules) in (0, K.BROKEN_HAND_SIZE)  # seat on turn holds 7
    moves = np.empty(K.MAX_MOVES, np.int32)
    params = np.array(parse_policy("lookahead:playouts=40,horizon=10,confidence=0").params)
    return int(K.choose_move(state, ct, rules, seat, moves, K.POLICY_LOOKAHEAD, params, np.uint64(key),
                             *RaceRun("millebornes", 2, ["lookahead"], 0).policy_functions)[0])


@pytest.mark.parametrize("on_turn", [0, 1])
def test_determinize_deals_the_unseen_cards_afresh_and_only_them(on_turn):
    # docs/policies.md: the look-ahead deals the cards it has not seen (from the deck, its own
    # hand, the discard pile and the tableaux) afresh into the stock and the other hands.
    position = dict(MIDGAME, players=3, on_turn=on_turn, discard=["km25", "km25", "accident"],
                    hands={str(on_turn): MIDGAME["hands"]["0"][:6]},
                    sides=MIDGAME["sides"] + [{"battle": "accident", "distance": {"km50": 2}}])
    state, ct, rules, seat = position_state(load_design("millebornes"), position, seed=2)
    public = [(K.DISCARD_AT, K.HAND_AT), (K.HAND_AT + seat * K.MAX_TYPES, K.HAND_AT + (seat + 1) * K.MAX_TYPES),
              (K.HAND_N_AT, K.HELD_AT), (K.SIDE_AT, K.STATE_SIZE), (0, K.STOCK_AT)]
    deals = set()
    for key in range(1, 7):
        world = np.empty_like(state)
        K.determinize(state, ct, rules, seat, world, np.zeros(K.MAX_TYPES, np.int16), np.uint64(key))
        assert K.check_state(world, ct, rules) == 0
        for start, end in public:   # the own hand, the hand sizes, the discards and tableaux: as they were
            np.testing.assert_array_equal(world[start:end], state[start:end])
        assert hidden_cards(world, seat, 3) == hidden_cards(state, seat, 3)
        deals.add(world.tobytes())
    assert len(deals) == 6


def test_determinize_deals_a_discard_pile_nobody_saw_afresh_too():
    # docs/positions.md: the cards a position leaves over are assumed to be in the discard pile, but
    # they were not seen, so each deal of the unseen cards takes them in too; the discards listed stay
    position = dict(MIDGAME, discard=["km25", "km25"], hands={"0": MIDGAME["hands"]["0"][:6]})  # before the draw
    state, ct, rules, seat = position_state(load_design("millebornes"), position, seed=2)
    listed = np.zeros(K.MAX_TYPES, np.int16)
    listed[0] = 2  # km25, the design's first card
    assert load_design("millebornes").cards[0].key == "km25"
    unknown = state[K.DISCARD_AT:K.DISCARD_AT + K.MAX_TYPES] - listed
    assert unknown.sum() > 0
    unseen = hidden_cards(state, seat, 2) + Counter({t: int(c) for t, c in enumerate(unknown) if c})
    piles = set()
    for key in range(1, 21):
        world = np.empty_like(state)
        K.determinize(state, ct, rules, seat, world, unknown, np.uint64(key))
        assert K.check_state(world, ct, rules) == 0
        discard = world[K.DISCARD_AT:K.DISCARD_AT + K.MAX_TYPES]
        assert (discard >= listed).all() and discard.sum() == state[K.DISCARD_AT:K.HAND_AT].sum()
        assert hidden_cards(world, seat, 2) + Counter({t: int(c) for t, c in enumerate(discard - listed) if c}) \
            == unseen
        piles.add(discard.tobytes())
    assert len(piles) == 20


@pytest.mark.parametrize("design, sides, win_only, value", [
    # scored (Mille Bornes): its hand score minus the best other side's, in thousands: 650 km and a
    # safety (100) against 600 km; with win_only, 1 for the strictly best score
    ("millebornes", [{"distance": {"km200": 2, "km100": 2, "km50": 1}, "safeties": ["driving_ace"]},
                     {"distance": {"km200": 2, "km100": 2}}], False, 0.15),
    ("millebornes", [{"distance": {"km200": 2, "km100": 2, "km50": 1}, "safeties": ["driving_ace"]},
                     {"distance": {"km200": 2, "km100": 2}}], True, 1.0),
    ("millebornes", [{"distance": {"km200": 2, "km100": 2}}, {"distance": {"km200": 2, "km100": 2}}], True, 0.0),
    ("millebornes", [{"distance": {"km200": 1}}, {"distance": {"km200": 2, "km100": 2}}], False, -0.4),
    # three sides: the best of the other two (600 km, not the last side's 500)
    ("millebornes", [{"distance": {"km200": 2, "km100": 2, "km50": 1}, "safeties": ["driving_ace"]},
                     {"distance": {"km200": 2, "km100": 2}}, {"distance": {"km100": 5}}], False, 0.15),
    # not scored (Stap op, 100 km): 0.5 plus half the distance lead over the trip
    ("stapop", [{"distance": {"km5": 4}}, {"distance": {"km10": 1}}], False, 0.55),
    ("stapop", [{"distance": {"km5": 2}}, {"distance": {"km10": 2}}], False, 0.45),
    ("stapop", [{"distance": {"km5": 4}}, {"distance": {"km10": 1}}], True, 0.0),
])
def test_a_playout_ends_with_the_documented_value(design, sides, win_only, value):
    position = {"players": len(sides), "on_turn": 0, "stock": 20, "hands": {"0": []}, "sides": sides}
    state, ct, rules, _ = position_state(load_design(design), position, seed=1)
    sides_out = np.zeros((len(sides), K.S_NCOLS), np.int32)
    assert K.playout_value(ct, rules, state, 0, sides_out, win_only) == pytest.approx(value)


def test_a_playout_value_after_the_trip_or_a_disqualification():
    # not scored: 1 for completing the trip, 0 for another side completing it or for the own
    # disqualification; a disqualified opponent is out of the race (the lead is over the others)
    position = {"players": 3, "on_turn": 0, "stock": 20, "hands": {"0": []},
                "sides": [{"distance": {"km5": 4}}, {"distance": {"km10": 1}}, {"distance": {"km10": 2, "km8": 1}}]}
    state, ct, rules, _ = position_state(load_design("stapop"), position, seed=1)
    sides_out = np.zeros((3, K.S_NCOLS), np.int32)

    def value(side, trip_side=-1, disqualified=()):
        world = state.copy()
        world[K.ST_TRIP_SIDE] = trip_side
        for s in disqualified:
            world[K.SIDE_AT + s * K.SIDE_STRIDE + K.SD_DISQ] = 1
        return K.playout_value(ct, rules, world, side, sides_out, False)
    assert value(0) == pytest.approx(0.5 + 0.5 * (20 - 28) / 100)
    assert value(0, trip_side=0) == 1.0 and value(1, trip_side=0) == 0.0
    assert value(0, disqualified=[0]) == 0.0
    assert value(0, disqualified=[2]) == pytest.approx(0.5 + 0.5 * (20 - 10) / 100)


def test_lookahead_plays_the_only_legal_move():
    # stopped by an accident, one card that cannot be laid: its discard is the one move
    position = {"players": 2, "on_turn": 0, "stock": 30, "hands": {"0": ["km200"]},
                "sides": [{"battle": "accident"}, {"battle": "stop", "limit": "speed_limit"}]}
    state, ct, rules, seat = position_state(load_design("millebornes"), position, seed=0)
    moves = np.full(K.MAX_MOVES, -1, np.int32)
    params = np.array(parse_policy("lookahead").params)
    functions = RaceRun("millebornes", 2, ["lookahead"], 0).policy_functions
    move = K.choose_move(state, ct, rules, seat, moves, K.POLICY_LOOKAHEAD, params, np.uint64(3), *functions)[0]
    km200 = [c.key for c in load_design("millebornes").cards].index("km200")
    assert move == km200 * 8 + K.DISCARD   # a move is card type * 8 + target


def test_lookahead_keeps_greedys_move_among_moves_of_equal_value():
    # Nothing hidden (empty stock, the opponent's hand empty), two useless cards (the opponent is
    # protected from both): either discard ends the hand the same way, 850 points against 800.
    # Greedy picks one at random; no other move does better, so the look-ahead plays greedy's.
    position = {"players": 2, "on_turn": 0, "stock": 0, "hands": {"0": ["accident", "flat_tire"]},
                "hand_sizes": {"1": 0},
                "sides": [{"battle": "roll", "distance": {"km200": 2, "km100": 2, "km50": 1},
                           "safeties": ["extra_tank", "right_of_way"]},
                          {"battle": "roll", "distance": {"km200": 2, "km100": 2},
                           "safeties": ["driving_ace", "puncture_proof"]}]}
    state, ct, rules, seat = position_state(load_design("millebornes"), position, seed=0)
    moves = np.empty(K.MAX_MOVES, np.int32)
    params = np.array(parse_policy("lookahead:playouts=8").params)
    functions = RaceRun("millebornes", 2, ["lookahead"], 0).policy_functions
    picks = set()
    for key in map(np.uint64, range(1, 13)):
        greedy = int(K.greedy_move_call(state, ct, rules, seat, params, key)[0])
        assert K.choose_move(state, ct, rules, seat, moves, K.POLICY_LOOKAHEAD, params, key, *functions)[0] == greedy
        assert greedy & 7 == K.DISCARD
        picks.add(greedy >> 3)
    assert len(picks) == 2   # greedy discarded each card for some key


def test_lookahead_never_uses_hidden_cards():
    # The same public position with the stock and the opponent's hand dealt
    # differently: with the same policy key, the decision must be the same,
    # whatever the hidden cards are; so its decision distribution is too.
    for key in range(1, 9):
        choices = {lookahead_choice(MIDGAME, hidden_seed, key) for hidden_seed in range(5)}
        assert len(choices) == 1, f"key {key}: decisions {choices} depend on hidden cards"


def test_lookahead_decisions_do_depend_on_its_key():
    # The check above would pass trivially if the decision ignored the playouts.
    choices = {lookahead_choice(MIDGAME, 0, key) for key in range(1, 25)}
    assert len(choices) > 1


# Stap op: one 10 km stage left, Stap op on the pile, tailwind shown, a crossing to attack with.
ONE_STAGE_LEFT = {
    "players": 2, "on_turn": 0, "stock": 30,
    "hands": {"0": ["km10", "km5", "go", "crossing", "tailwind", "km6"]},
    "sides": [{"battle": "go", "limit": "tailwind", "distance": {"km5": 8, "km6": 4, "km8": 2, "km10": 1}},
              {"battle": "go", "limit": "tailwind", "distance": {"km5": 3}}],
}


def test_lookahead_takes_the_winning_card():
    # Stap op: one 10 km stage left, Stap op on the pile, tailwind shown:
    # laying it wins at once, every other move can only lose time. Greedy
    # would attack instead (an attack scores above a stage), and that also
    # wins unless the opponent hits back in its one turn, so the win shows
    # only in the deals where it can: enough playouts that every key sees
    # some of them (with 60, some keys saw none and kept greedy's attack).
    design = load_design("stapop")
    state, ct, rules, seat = position_state(design, ONE_STAGE_LEFT, seed=1)
    moves = np.empty(K.MAX_MOVES, np.int32)
    params = np.array(parse_policy("lookahead:playouts=1000,confidence=0").params)
    policy_functions = RaceRun("stapop", 2, ["lookahead"], 0).policy_functions
    for key in range(1, 6):
        m, _ = K.choose_move(state, ct, rules, seat, moves, K.POLICY_LOOKAHEAD, params, np.uint64(key), *policy_functions)
        assert m == design.card_index("km10") * 8 + 0


def greedy_over_the_list(state, ct, rules, seat, params, key):
    """Greedy as its docstring defines it: score every move legal_moves
    lists and keep the best; among equal scores, the move of highest random
    rank under the decision's random word."""
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, seat, moves)
    side = seat % int(rules[K.R_SIDES])
    word, key = K.next_u64(key)
    scored = []
    for m in moves[:n]:
        t, target = int(m) >> 3, int(m) & 7
        if target == K.DISCARD:
            score = -K.keep_value(state, ct, rules, seat, t)
        elif target != side:
            score = K.attack_score(state, rules, side, target, params)
        else:
            score = K.own_score(state, ct, rules, side, t, params)
        scored.append((score, int(K.rank(np.uint64(word), m)), int(m)))
    return max(scored)[2], key


@pytest.mark.parametrize("design_name,players,options", [
    ("stapop", 4, None), ("millebornes", 4, None), ("millebornes", 6, None), ("touring", 3, None),
    ("stapop", 4, {"discard": "when_no_play"}), ("millebornes", 4, {"discard": "when_no_play"})])
def test_greedy_move_is_greedy_over_the_listed_moves(design_name, players, options):
    # greedy_move scores the legal moves as it finds them, role by role, and
    # skips discards that cannot win (and, under discard = "when_no_play",
    # every discard once it found a play); along random games it must pick
    # the move its definition picks from legal_moves' list, for every preset.
    design = load_design(design_name)
    ct, rules = design.tables(players, options)
    sides = int(rules[K.R_SIDES])
    rows = [np.array(parse_policy(p).params) for p in ("greedy", "aggressive", "builder", "spender", "next_target")]
    rng = np.random.default_rng(7)
    no_log = np.zeros((0, K.LOG_NCOLS), np.int32)
    compared = 0
    for game in range(4):
        state = np.zeros(K.STATE_SIZE, np.int16)
        cards = np.zeros((sides, len(design.cards), K.K_NCOLS), np.int16)
        sides_out = np.zeros((sides, K.S_NCOLS), np.int32)
        chance = np.array([game + 1], np.uint64)
        chance[0] = K.deal(state, ct, rules, 0, chance[0], cards, no_log)
        seat, result = 0, np.zeros(2, np.int64)
        for _ in range(150):
            _, chance[0] = K.draw(state, ct, rules, seat, chance[0], cards, no_log)
            if state[K.HAND_N_AT + seat] == 0:
                break
            for row in rows:
                key = np.uint64(rng.integers(1, 2**63))
                assert K.greedy_move_call(state, ct, rules, seat, row, key) == greedy_over_the_list(
                    state, ct, rules, seat, row, key)
                compared += 1
            moves = np.empty(K.MAX_MOVES, np.int32)
            n = K.legal_moves(state, ct, rules, seat, moves)
            K.apply_move_boxed(ct, rules, state, seat, int(moves[rng.integers(n)]), np.zeros(players, np.int32),
                               np.tile(rows[0], (players, 1)), np.ones(players, np.uint64), chance, sides_out, cards,
                               no_log, result)
            if result[1]:
                break
            seat = int(result[0])
    assert compared > 500


def test_greedy_breaks_ties_uniformly():
    # Stap op, side 0 not moving (no Stap op on its pile) and its 5, 6 and
    # 8 km kinds complete: no play is legal but the tailwind's, which is
    # pointless (no headwind) and not legal, so the best moves are the three
    # discards of a stage card that can never be laid (keep value -10 each).
    # Each must be chosen a third of the time.
    design = load_design("stapop")
    position = {
        "players": 2, "on_turn": 0, "stock": 30,
        "hands": {"0": ["km5", "km6", "km8", "crossing", "flat_tyre", "tailwind"]},
        "sides": [{"limit": "tailwind", "distance": {"km5": 8, "km6": 4, "km8": 2}}, {}],
    }
    state, ct, rules, seat = position_state(design, position, seed=1)
    params = np.array(parse_policy("greedy").params)
    tries = 3000
    picks = Counter(int(K.greedy_move_call(state, ct, rules, seat, params, np.uint64(key))[0])
                    for key in range(1, tries + 1))
    discards = {design.card_index(k) * 8 + K.DISCARD for k in ("km5", "km6", "km8")}
    assert set(picks) == discards
    sd = (tries * (1 / 3) * (2 / 3)) ** 0.5
    for m in discards:
        assert abs(picks[m] - tries / 3) < 4 * sd, picks


def complete_kinds_position():
    """Stap op under overshoot = "disqualify": the 5 and 6 km kinds complete, more of them in hand, the
    opponent under a flat tyre (no attack possible). (design, state, card table, rules, seat)"""
    design = load_design("stapop")
    position = {
        "players": 2, "on_turn": 0, "stock": 30,
        "hands": {"0": ["km5", "km5", "km6", "km6", "crossing", "flat_tyre"]},
        "sides": [{"battle": "go", "limit": "tailwind", "distance": {"km5": 8, "km6": 4}},
                  {"battle": "flat_tyre", "limit": "tailwind"}],
    }
    return (design, *position_state(design, position, seed=1, options={"overshoot": "disqualify"}))


def test_greedy_never_disqualifies_itself():
    # overshoot = "disqualify": laying a stage of a complete kind is legal but
    # the side can no longer win (rules page), so greedy discards instead.
    design, state, ct, rules, seat = complete_kinds_position()
    moves = np.empty(K.MAX_MOVES, np.int32)
    legal = set(moves[:K.legal_moves(state, ct, rules, seat, moves)].tolist())
    assert design.card_index("km5") * 8 + 0 in legal  # legal, and it would disqualify
    params = np.array(parse_policy("greedy").params)
    for key in range(1, 50):
        m, _ = K.greedy_move_call(state, ct, rules, seat, params, np.uint64(key))
        assert int(m) & 7 == K.DISCARD and int(m) >> 3 in (design.card_index("km5"), design.card_index("km6"))
    df = simulate("stapop", players=2, games=200, policies=["greedy"], seed=11, options={"overshoot": "disqualify"})
    assert (df["s0_disqualified"] == 0).all() and (df["s1_disqualified"] == 0).all()


def test_lookahead_does_not_disqualify_itself():
    # The same position: a ninth 5 km stage puts the side 5 km ahead, but it can no longer win, so the
    # look-ahead must value it below a discard (it used to value a playout by the distance lead alone).
    _, state, ct, rules, seat = complete_kinds_position()
    moves = np.empty(K.MAX_MOVES, np.int32)
    params = np.array(parse_policy("lookahead:playouts=200,confidence=0").params)
    policy_functions = RaceRun("stapop", 2, ["lookahead"], 0).policy_functions
    for key in range(1, 6):
        m, _ = K.choose_move(state, ct, rules, seat, moves, K.POLICY_LOOKAHEAD, params, np.uint64(key), *policy_functions)
        assert int(m) & 7 == K.DISCARD, int(m)


def test_presets_are_parameter_settings_of_one_family():
    greedy, aggressive = parse_policy("greedy"), parse_policy("aggressive")
    assert greedy.kernel_id == aggressive.kernel_id == K.POLICY_GREEDY
    assert aggressive.params[K.P_ATTACK] == 3.0 and greedy.params[K.P_ATTACK] == 1.75
    assert parse_policy("greedy:attack=3").params == aggressive.params


def test_policies_command_lists_every_preset():
    out = subprocess.run([sys.executable, "-m", "etappe.cli", "policies"], capture_output=True, text=True,
                         check=True).stdout
    for name in ("random", "greedy", "aggressive", "builder", "hoarder", "spender", "cautious", "lookahead"):
        assert name in out
    # each family's parameters under its heading, each with its default and valid values, said once
    lines = out.splitlines()
    look, greedy = lines.index("lookahead parameters:"), lines.index("greedy parameters (override with name:key=value,...):")
    assert look < greedy
    assert ("  horizon (default 30; a whole number, 0 to 32767 (0: to the end of the hand)): turns each playout looks "
            "ahead") in lines[look + 1:greedy]
    assert any(line.startswith("  attack (default 1.75; a number >= 0): ") for line in lines[greedy + 1:])
    # cautious never calls the extension: its margin is the documented "inf", not a number wrapped as "1e+0 9"
    assert "extension_margin=inf" in "".join(out.split()) and "1e+" not in out


def test_policies_command_lists_the_other_games_too():
    # the policies `simulate etape|bremen --policy` accepts, and the rule options with their defaults
    # (and the ranges the commands enforce: docs/etape.md, docs/bremen.md)
    # A yes/no option offers its other value; a named choice its others.
    for game, names, options in (("etape", ("heuristic", "high", "blocker", "connector", "random", "lookahead"),
                                  ("endurance_stages=5 (1 to 5)",  # rules page: Endurance, k stages each (default 5)
                                   "rotate_seats=true (or false)")),
                                 ("bremen", ("random", "greedy", "lookahead"),
                                  ("target=7 (1 to 100)",  # rules: 7 points
                                   "harder=false (or true)", "tie_rule=mover_first (or mover_last)"))):
        out = subprocess.run([sys.executable, "-m", "etappe.cli", "policies", game], capture_output=True,
                             text=True, check=True).stdout
        lines = [line.strip() for line in out.splitlines()]
        assert all(name in out for name in names) and all(option in lines for option in options), out


@pytest.mark.parametrize("spec, message", [
    ("lookahead:playouts=0", "playouts must be a whole number, 1 to 1000000, not 0"),
    ("lookahead:playouts=2.5", "playouts must be a whole number, 1 to 1000000, not 2.5"),
    # beyond 2^63 the kernel's integer would wrap round to a tiny count (the audit saw 1e20 play as 1)
    ("lookahead:playouts=99999999999999999999", "playouts must be a whole number, 1 to 1000000"),
    ("lookahead:horizon=-3", "horizon must be a whole number, 0 to 32767"),
    ("lookahead:horizon=40000", "horizon must be a whole number, 0 to 32767"),
    ("greedy:attack=3,attack=4", "attack is given twice"),
    ("greedy:hold_safeties=7", "hold_safeties must be 0 or 1, not 7"),
    ("greedy:target_leader=0.5", "target_leader must be 0 or 1"),
    ("greedy:coup_fourre=1.5", "coup_fourre must be a probability, 0 to 1"),
    ("greedy:attack=-1", "attack must be a number >= 0"),
    ("greedy:attack=nan", "attack must be a number >= 0"),
])
def test_parameters_out_of_range_are_refused_not_clamped(spec, message):
    with pytest.raises(PolicyError, match=re.escape(message)):
        parse_policy(spec)


def test_every_default_and_preset_is_in_range():
    assert set(PARAMETER_RANGES) == set(GREEDY_PARAMETERS) | set(LOOKAHEAD_PARAMETERS)
    for name in list(PRESETS) + ["lookahead"]:
        row = parse_policy(name).params
        for key, (i, _, _) in (GREEDY_PARAMETERS | LOOKAHEAD_PARAMETERS).items():
            if name != "lookahead" and key in LOOKAHEAD_PARAMETERS:
                continue
            assert PARAMETER_RANGES[key][1](row[i]), (name, key, row[i])


def test_lookahead_confidence_keeps_greedys_move_unless_clearly_beaten():
    # One 10 km stage wins at once; greedy attacks instead (an attack scores above a stage). With an
    # unreachable confidence the look-ahead must play greedy's move whatever its playouts say.
    design = load_design("stapop")
    state, ct, rules, seat = position_state(design, ONE_STAGE_LEFT, seed=1)
    moves = np.empty(K.MAX_MOVES, np.int32)
    functions = RaceRun("stapop", 2, ["lookahead"], 0).policy_functions
    greedy = np.array(parse_policy("greedy").params)
    stubborn = np.array(parse_policy("lookahead:playouts=60,confidence=1000000").params)
    for key in range(1, 4):
        expected, _ = K.greedy_move_call(state, ct, rules, seat, greedy, np.uint64(key))
        assert int(expected) == design.card_index("crossing") * 8 + 1  # the attack
        m, _ = K.choose_move(state, ct, rules, seat, moves, K.POLICY_LOOKAHEAD, stubborn, np.uint64(key), *functions)
        assert m == expected
