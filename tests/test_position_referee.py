"""Every legal move of a position, refereed: nothing the docs allow refused, nothing they forbid listed.

tests/test_design_referee.py checks that each card the engine played in a replayed hand was legal; this
file checks the other way too. A strategy draws a position (docs/positions.md) of a built-in or a
generated design, and the engine's legal moves (`legal_moves_of`) must be exactly the moves the docs
allow there: each play the referee of tests/test_design_referee.py finds no fault with (the card table's
roles, the "Roles" paragraph, the options table of docs/designs.md), a discard of every card held
("Discarding is always allowed", the rules page; under option discard = "when_no_play" only when no card
can be played) and `pass` only with an empty hand.
"""
import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from etappe.kernels.race_design import DesignError, MAX_LAID, load_design, parse_design
from etappe.kernels.race_position import legal_moves_of

from test_design_referee import CANCELLED, SET_TARGET, Game, Tableau, plays, probe
from test_generated_designs import design_texts

BUILTINS = [load_design(name) for name in ("stapop", "millebornes", "touring")]
# rule options that decide what is legal; a run may set one where it changes something
MOVE_OPTIONS = {"overshoot": ["forbid", "disqualify"], "limit_on_limit": [True, False],
                "roll_after_safety": [True, False], "go_with_permanent_go": [True, False],
                "discard": ["always", "when_no_play"]}


def tableau(game, side):
    """A side table of a position as the referee's Tableau."""
    limit, battle = side["limit"], side["battle"]
    tab = Tableau(game, limit == "start")  # "start": limited, showing no card
    tab.shows_limit = limit in game.index and game.role(game.index[limit]) == "limit"
    tab.limited |= tab.shows_limit  # an end of limit card, or "none": not limited
    words = {"empty": None, "needs_go": CANCELLED, "virtual_go": CANCELLED}  # both: a hazard its safety cancelled
    tab.battle = words[battle] if battle in words else game.index[battle]
    for key, n in side["distance"].items():
        tab.laid[game.index[key]] = n
        tab.km += n * game.cards[game.index[key]].value
    for key in side["safeties"]:
        tab.lay_safety(game.index[key])  # a safety against a limit lifts it
    return tab


def expected_moves(design, options, position):
    """The legal moves by the docs: plays with no fault, on one's own side or (attacks) on each
    opponent's; a discard of every card held (under discard = "when_no_play": only if there is no
    play); `pass` only for a player holding nothing."""
    players = position["players"]
    game = Game(design, players, options)
    game.trip = position.get("trip", game.trip)  # the extended trip, once called
    tableaux = [tableau(game, side) for side in position["sides"]]
    seat = position["on_turn"]
    own = seat % game.sides  # "Seat p plays for side p mod sides"
    hand = position["hands"][str(seat)]
    if not hand:
        return {"pass"}
    moves = {f"play {design.cards[card].key}" + (f" on side {s}" if s != own else "")
             for card, s in plays(game, tableaux, own, {game.index[key] for key in hand})}
    if options["discard"] == "always" or not moves:
        moves |= {f"discard {key}" for key in hand}
    return moves


def check(design, position, overrides=None):
    """The engine's moves are the referee's; on a difference, say what to reproduce it with."""
    got = legal_moves_of(design, position, options=overrides)
    expected = expected_moves(design, design.resolved_options(overrides), position)
    assert len(got) == len(set(got)), f"a move listed twice: {got}"
    assert set(got) == expected, (
        f"refused but legal: {sorted(expected - set(got))}\nlisted but illegal: {sorted(set(got) - expected)}\n"
        f"options: {overrides}\nposition: {json.dumps(position)}\ndesign:\n{design.text}")


# ---- positions drawn for a design -----------------------------------------------
def take(draw, left, keys):
    """One copy of one of `keys` not yet placed, or None."""
    keys = [k for k in keys if left[k] > 0]
    if not keys:
        return None
    key = draw(st.sampled_from(keys))
    left[key] -= 1
    return key


@st.composite
def side_tables(draw, design, game, left, trip, forbid):
    """One side's table, consistent by construction: copies within what is left of the deck, a battle
    or limit top its safeties do not protect from, distance within caps and still in the race."""
    keys = {role: [c.key for c in design.cards if c.role == role] for role in
            ("distance", "go", "hazard", "remedy", "limit", "end_limit", "safety")}
    safeties = []
    for _ in range(draw(st.integers(0, 2))):
        key = take(draw, left, [k for k in keys["safety"] if k not in safeties])
        safeties += [key] if key else []
    protected = {p for k in safeties for p in design.cards[game.index[k]].protects}
    tops = ["empty"] + [k for k in keys["go"] + keys["hazard"] + keys["remedy"] if left[k] and k not in protected]
    battle = draw(st.sampled_from(tops))
    if protected & set(keys["hazard"]) and draw(st.booleans()):  # only a safety laid over its hazard leaves these
        battle = "needs_go" if game.options["roll_after_safety"] else "virtual_go"
    if battle in left:
        left[battle] -= 1
    limits = ["none"] + (["start"] if design.start_under_limit else [])
    limit = draw(st.sampled_from(limits + [k for k in keys["limit"] + keys["end_limit"] if left[k] and k not in protected]))
    if limit in left:
        left[limit] -= 1
    laid, km = Counter(), 0
    runs = draw(st.lists(st.tuples(st.sampled_from(keys["distance"]), st.integers(1, 4)), max_size=10))
    for key in [key for key, n in runs for _ in range(n)]:  # runs of a card: up to its cap, its target
        card = design.cards[game.index[key]]
        laid[key] += 1
        fits = left[key] >= laid[key] and (not card.cap or laid[key] <= card.cap) and km + card.value <= MAX_LAID
        if game.set_target:
            over = any(laid[k] > game.need[k] for k in laid)
            done = all(laid[k] == game.need[k] for k in keys["distance"])
            fits &= not (over and forbid) and (over or not done)  # not complete: the hand would be over
        else:
            fits &= km + card.value < trip or (not forbid and km + card.value > trip)
        if fits:
            km += card.value
        else:
            laid[key] -= 1
    left.subtract(laid)
    return {"battle": battle, "limit": limit, "distance": {k: n for k, n in laid.items() if n}, "safeties": safeties}


@st.composite
def hands(draw, design, players, seat, left):
    """The hand on turn, other hands' sizes and the stock: every hand full (one more on turn) while the
    stock holds cards; otherwise hands of any size, the one on turn empty at times (a pass)."""
    size = design.hand_size
    keys = sorted(left)

    def deal(n):
        return [take(draw, left, keys) for _ in range(n)]

    if left.total() > size * players + 1 and draw(st.booleans()):
        hand = deal(size + 1)
        return {str(seat): hand}, {}, draw(st.integers(1, left.total() - size * (players - 1)))
    passing = draw(st.integers(0, 7)) == 0 or not left.total()
    hand = deal(0 if passing else draw(st.integers(1, min(size + 1, left.total()))))
    unseen, sizes = left.total(), {}  # the other hands are dealt by etappe from the unseen cards
    for p in range(players):
        if p != seat:
            low = 0 if hand or any(sizes.values()) else 1  # somebody holds a card, or the hand is over
            sizes[str(p)] = draw(st.integers(min(low, unseen), min(size, unseen)))
            unseen -= sizes[str(p)]
    return {str(seat): hand}, sizes, 0


@st.composite
def cases(draw):
    """A built-in or generated design, a player count, run options that change something there, and a position."""
    design = draw(st.sampled_from(BUILTINS) | design_texts().map(lambda text: parse_design(text, "generated.toml")))
    players = draw(st.sampled_from(design.players))
    unused = design.unused_options(players)
    overrides = {k: draw(st.sampled_from(v)) for k, v in MOVE_OPTIONS.items() if k not in unused and draw(st.booleans())}
    options = design.resolved_options(overrides)
    game = Game(design, players, options)
    left = Counter({k: n for k, n in design.counts(players).items() if n > 0})  # copies not yet placed
    seat = draw(st.integers(0, players - 1))
    position = {"players": players, "on_turn": seat}
    trip, extension = game.trip, game.extension
    if extension and draw(st.booleans()):
        trip = position["trip"] = extension
        position["extension_side"] = draw(st.integers(0, game.sides - 1))
    forbid = options["overshoot"] == "forbid"
    position["sides"] = [draw(side_tables(design, game, left, trip, forbid)) for _ in range(game.sides)]
    position["hands"], position["hand_sizes"], position["stock"] = draw(hands(design, players, seat, left))
    return design, overrides, position


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_the_engine_lists_exactly_the_moves_the_docs_allow(case):
    design, overrides, position = case
    try:
        check(design, position, overrides)
    except DesignError:
        reject()  # a position etappe refuses as inconsistent (few are: they are drawn consistent)


# ---- positions written by hand: rulebook facts, each pinned on the engine's list as well ----------
MB = BUILTINS[1]
SETS = probe(target=SET_TARGET)  # one d25 and one d50 to lay; d100 is complete from the start
LIMITED = probe(start_limited=True)


def side(battle="roll", limit="none", distance=None, safeties=()):
    return {"battle": battle, "limit": limit, "distance": distance or {}, "safeties": list(safeties)}


def position(players, hand, sides, on_turn=0, stock=40, **extra):
    return {"players": players, "on_turn": on_turn, "stock": stock, "hands": {str(on_turn): hand}, "sides": sides,
            **extra}


MB_HAND = ["gasoline", "spare_tire", "roll", "km25", "km200", "end_of_limit", "accident"]
ATTACKER = ["stop", "speed_limit", "flat_tire", "accident", "km25", "km50", "roll"]
ROLL_NEEDED = [side("needs_go", safeties=["puncture_proof"]), side("needs_go", safeties=["extra_tank"])]
STUCK_HAND = ["stop", "km25", "km50", "km75", "km100", "gasoline", "spare_tire"]  # only Stop, on a moving side
NO_ROLL_NEEDED = [side("virtual_go", safeties=["puncture_proof"]), side("virtual_go", safeties=["extra_tank"])]


@pytest.mark.parametrize("design,pos,options,listed,refused", [
    # "Remedy on its own hazard, then Roll on a later turn"; Stop is cleared by a Roll
    (MB, position(2, MB_HAND, [side("flat_tire"), side()]), None, ["play spare_tire"],
     ["play gasoline", "play roll", "play km25", "play end_of_limit"]),
    (MB, position(2, MB_HAND, [side("stop"), side()]), None, ["play roll"], ["play gasoline", "play spare_tire"]),
    # Right of Way protects from Speed Limit and Stop, yet is a permanent Roll: other hazards hit the side
    (MB, position(2, ATTACKER, [side(), side(safeties=["right_of_way"])]), None, ["play flat_tire on side 1"],
     ["play speed_limit on side 1", "play stop on side 1"]),
    # Speed Limit "unless the side already shows Speed Limit (default; option to allow)"
    (MB, position(2, ATTACKER, [side(), side(limit="speed_limit")]), None, ["play stop on side 1"],
     ["play speed_limit on side 1"]),
    (MB, position(2, ATTACKER, [side(), side(limit="speed_limit")]), {"limit_on_limit": True},
     ["play speed_limit on side 1"], []),
    # teams of two: seat 4 of 6 plays for side 1 (with seat 1), and attacks only sides 0 and 2
    (MB, position(6, ATTACKER, [side(), side(), side()], on_turn=4), None,
     ["play stop on side 0", "play stop on side 2", "play km25"], ["play stop on side 1", "play stop"]),
    # a safety over its hazard: a Roll is still needed, and the side is not moving, so no hazard hits it
    (MB, position(2, MB_HAND, ROLL_NEEDED), None, ["play roll"],
     ["play km25", "play accident on side 1"]),
    # roll_after_safety = false: it moves at once, "and a go card fits there no more than on a go"
    (MB, position(2, MB_HAND, NO_ROLL_NEEDED), {"roll_after_safety": False},
     ["play km25", "play accident on side 1"], ["play roll"]),
    # after the extension the trip is 1000: 100 km more fit at 700, a third 200 never (at most two)
    (MB, position(2, ["km100"] + MB_HAND[1:], [side(distance={"km200": 2, "km100": 3}), side()], trip=1000,
                  extension_side=0, hand_sizes={"1": 6}), None, ["play km100"], ["play km200"]),
    # a set target: a complete kind is refused under "forbid" and may be laid under "disqualify"
    (SETS, position(2, ["d25", "d50", "d100", "go", "flat"], [side("go", distance={"d25": 1}), side("go")]), None,
     ["play d50"], ["play d25", "play d100"]),
    (SETS, position(2, ["d25", "d50", "d100", "go", "flat"], [side("go", distance={"d25": 1}), side("go")]),
     {"overshoot": "disqualify"}, ["play d25", "play d50", "play d100"], []),
    # a safety against a limit lifts the starting limit: limited distance, and nothing for an end of limit
    (LIMITED, position(2, ["d100", "end", "limit", "go", "d25"], [side("empty", "start", safeties=["siren"]),
                                                                  side("go", "start")]), None,
     ["play d100", "play d25"], ["play end", "play go", "play limit on side 1"]),
    # "Discarding is always allowed"; with no card and an empty stock a player passes
    (MB, position(2, ["stop"], [side(), side("flat_tire")], stock=0, hand_sizes={"1": 3}), None,
     ["discard stop"], ["play stop on side 1", "pass"]),
    (MB, position(2, [], [side(), side()], stock=0, hand_sizes={"1": 3}), None, ["pass"], ["discard stop"]),
    # discard = "when_no_play": the seed's discard pile "als bovengenoemde mogelijkheden niet voorhanden zijn";
    # not moving, this player can still attack the moving opponent, so it may not discard
    (MB, position(2, STUCK_HAND, [side("empty"), side()]), {"discard": "when_no_play"},
     ["play stop on side 1"], ["discard stop", "discard km25", "discard gasoline"]),
    (MB, position(2, STUCK_HAND, [side("empty"), side("flat_tire")]), {"discard": "when_no_play"},
     ["discard stop", "discard km25", "discard gasoline"], ["play stop on side 1", "play km25"]),
], ids=["remedy", "stop", "right_of_way", "limit_shown", "limit_on_limit", "teams", "roll_after_safety",
        "no_roll_after_safety", "extension", "set_forbid", "set_disqualify", "limit_immune", "discard", "pass",
        "discard_when_a_play_exists", "discard_when_no_play"])
def test_a_position_written_from_the_rules(design, pos, options, listed, refused):
    check(design, pos, options)
    moves = legal_moves_of(design, pos, options=options)
    assert set(listed) <= set(moves) and not set(refused) & set(moves), moves
