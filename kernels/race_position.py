"""Positions of the race games: a documented TOML/JSON format -> state row.

A position is what the players can see at a decision: whose turn it is, the
hand of the player on turn (after the draw), every side's tableau and the
stock size. See docs/positions.md for the format; `legal_moves_of` lists the
legal moves in the notation `play CARD`, `play CARD on side N`, `discard CARD`.
"""
from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from . import race as K
from .options import did_you_mean, is_count_text, toml_problem, value_text
from .options import whole as whole_argument
from .race_design import MAX_LAID, MAX_TYPES, Design, DesignError, load_design


def read_position_file(path: str | Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text("utf-8-sig")  # a byte-order mark, as some editors write, is not TOML
    except FileNotFoundError:
        raise DesignError(f"{path}: no such position file") from None
    except IsADirectoryError:
        raise DesignError(f"{path}: a folder, not a position file") from None
    except UnicodeDecodeError:
        raise DesignError(f"{path}: not a position file (a position is TOML or JSON text, UTF-8)") from None
    except OSError as exc:
        raise DesignError(f"{path}: cannot read the position file: {exc}") from None
    try:
        return json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DesignError(f"{path}: cannot parse position: {toml_problem(exc, text)}") from None
    except ValueError as exc:
        raise DesignError(f"{path}: cannot parse position: {exc}") from None


BATTLE_WORDS = {"empty": K.EMPTY, "needs_go": K.NEEDS_GO, "virtual_go": K.VIRTUAL_GO}
POSITION_FIELDS = {"players", "on_turn", "stock", "trip", "extension_side", "discard", "hands", "hand_sizes", "sides"}
# km: optional, checked against the distance cards; disqualified: optional, what the distance cannot show
# (a side that passed the trip before an extension raised it, option overshoot = "disqualify")
SIDE_FIELDS = {"battle", "limit", "distance", "reshuffled", "safeties", "coups", "km", "disqualified"}


def design_of(design: str | Path | Design) -> Design:
    """A Design as it is, a design name or path loaded (load_design)."""
    return design if isinstance(design, Design) else load_design(design)


def position_state(design: Design, position: dict, source: str = "position", options: dict | None = None,
                   seed: int = 0):
    """Build (state, card_table, rules, seat on turn) from a position dict.

    Cards nobody can see (the stock, hands not listed) are dealt at random,
    with `seed`, from the cards not visible anywhere; what is left of them is
    taken to be in the discard pile. So the state conserves every card.
    """
    where = source
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict of rule option name: value, e.g. {{'overshoot': 'disqualify'}}, "
                        f"not {type(options).__name__}")
    seed = whole_argument("seed", seed)

    def fail(field, problem):
        raise DesignError(f"{where}: {field}: {problem}")

    def whole(field, value, low=0):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            fail(field, f"must be a whole number >= {low}, not {value!r}")
        return value

    def of_kind(field, value, kind, allowed=None):
        """value must be a table (dict) or a list; a table's keys among `allowed`."""
        if not isinstance(value, kind):
            fail(field or "the position", f"must be a {'table' if kind is dict else 'list'}, not {value!r}")
        unknown = sorted(set(value) - set(allowed)) if allowed is not None else []
        if unknown:
            fail(f"{field}.{unknown[0]}" if field else unknown[0],
                 f"unknown field{did_you_mean(unknown[0], sorted(allowed))}; known: {', '.join(sorted(allowed))}")
        return value

    of_kind("", position, dict, POSITION_FIELDS)
    players = position.get("players")
    if not isinstance(players, int) or isinstance(players, bool):
        fail("players", "missing or not a whole number")
    if players not in design.players:
        fail("players", f"{players}, but {design.title} is played by {', '.join(map(str, design.players))} players")
    ct, rules = design.tables(players, options)
    sides = int(rules[K.R_SIDES])
    n_types = len(design.cards)
    keys = {c.key: i for i, c in enumerate(design.cards)}
    unseen = ct[:, 1].astype(np.int64).copy()  # copies not yet placed
    state = np.zeros(K.STATE_SIZE, np.int16)
    seat = position.get("on_turn", 0)
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < players:
        fail("on_turn", f"must be a seat 0..{players - 1}, not {value_text(seat) if isinstance(seat, bool) else repr(seat)}")
    stock = whole("stock", position.get("stock", 0))
    trip, extension = int(rules[K.R_TRIP]), int(rules[K.R_EXTENSION])
    given_trip = whole("trip", position.get("trip", trip), 1)
    if given_trip not in (trip, extension or trip):
        fail("trip", f"{given_trip}, but {players} players of {design.name} race {trip}"
             + (f", or {extension} after the extension" if extension else " (no extension)"))
    extension_side = whole("extension_side", position.get("extension_side", -1), -1)
    if extension_side >= sides:
        fail("extension_side", f"must be a side 0..{sides - 1}, or -1 (nobody called the extension)")
    if extension and given_trip == extension and extension_side < 0:
        fail("extension_side", f"missing: the trip is {extension}, so a side called the extension; give that "
             f"side (0..{sides - 1})")
    if extension_side >= 0 and given_trip != extension:
        fail("extension_side", f"{extension_side}, but the trip is {given_trip}: a side calls the extension "
             "exactly when the trip is " + (f"{extension}; give trip = {extension}" if extension else
                                            "extended, and this design has no extension at this player count"))
    state[K.ST_TRIP] = given_trip
    state[K.ST_EXT_SIDE] = extension_side
    state[K.ST_TRIP_SIDE] = -1
    state[K.ST_LEADER] = -1

    def card(field, key, roles=None):
        if not isinstance(key, str):
            fail(field, f"must be a card key (a string), not {key!r}")
        if key not in keys:
            fail(field, f"no card {key!r} in {design.name}{did_you_mean(key, keys)}")
        if roles and design.cards[keys[key]].role not in roles:
            fail(field, f"{key!r} is a {design.cards[keys[key]].role}, expected {' or '.join(roles)}")
        return keys[key]

    def place(field, t, count=1):
        if unseen[t] < count:
            fail(field, f"more {design.cards[t].key} than the deck holds ({ct[t, 1]})")
        unseen[t] -= count

    # seat keys are strings in TOML and JSON; from Python an int is as natural
    hands = {str(k): v for k, v in of_kind("hands", position.get("hands", {}), dict).items()}
    for name, cards in hands.items():
        if not is_count_text(name) or int(name) >= players:
            fail(f"hands.{name}", f"not a seat 0..{players - 1}")
        of_kind(f"hands.{name}", cards, list)
        p = int(name)
        for key in cards:
            t = card(f"hands.{name}", key)
            place(f"hands.{name}", t)
            state[K.HAND_AT + p * MAX_TYPES + t] += 1
        state[K.HAND_N_AT + p] = len(cards)
    if str(seat) not in hands:
        fail("hands", f"the hand of the player on turn (seat {seat}) is needed")
    hand_size = int(rules[K.R_HAND_SIZE])
    for name, cards in hands.items():
        most = hand_size + (int(name) == seat)  # one more on turn, after the draw
        if len(cards) > most:
            fail(f"hands.{name}", f"{len(cards)} cards, but a hand holds at most {most}"
                 + (" on turn (after the draw)" if int(name) == seat else ""))
    for key in of_kind("discard", position.get("discard", []), list):
        t = card("discard", key)
        place("discard", t)
        state[K.DISCARD_AT + t] += 1
    tableaux = of_kind("sides", position.get("sides", []), list)
    if len(tableaux) != sides:
        fail("sides", f"{players} players of {design.name} play as {sides} sides; give {sides} [[sides]] tables")
    for s, side in enumerate(tableaux):
        b = K.side_at(s)
        f = f"sides[{s}]"
        of_kind(f, side, dict, SIDE_FIELDS)
        battle = side.get("battle", "empty")
        if isinstance(battle, str) and battle in BATTLE_WORDS:
            state[b + K.SD_BATTLE] = BATTLE_WORDS[battle]
        else:
            t = card(f"{f}.battle", battle, ("go", "hazard", "remedy"))
            place(f"{f}.battle", t)
            state[b + K.SD_BATTLE] = t
            state[b + K.SD_TABLEAU + t] += 1
        limit = side.get("limit", "start" if design.start_under_limit else "none")
        state[b + K.SD_LIMIT_TOP] = K.EMPTY
        if limit == "start":
            if not design.start_under_limit:
                fail(f"{f}.limit", f"\"start\", but no side of {design.name} starts under the limit")
            state[b + K.SD_LIMITED] = 1
        elif limit != "none":
            t = card(f"{f}.limit", limit, ("limit", "end_limit"))
            place(f"{f}.limit", t)
            state[b + K.SD_LIMIT_TOP] = t
            state[b + K.SD_LIMITED] = int(design.cards[t].role == "limit")
            state[b + K.SD_TABLEAU + t] += 1
        need, km = int(rules[K.R_SET_TOTAL]), 0
        distance = of_kind(f"{f}.distance", side.get("distance", {}), dict)
        # laid distance cards that a reshuffle took back into the stock: they stay counted for the side
        reshuffled = of_kind(f"{f}.reshuffled", side.get("reshuffled", {}), dict)
        if reshuffled and not rules[K.R_RESHUFFLE]:
            fail(f"{f}.reshuffled", f"{design.name} has no reshuffle: laid cards never go back into the stock")
        for key, back in reshuffled.items():
            whole(f"{f}.reshuffled.{key}", back)
            if back > distance.get(key, 0):
                fail(f"{f}.reshuffled.{key}", f"{back}, but the side's distance counts {distance.get(key, 0)} "
                     f"{key} (reshuffled cards stay counted there)")
        for key, count in distance.items():
            t = card(f"{f}.distance.{key}", key, ("distance",))
            on_tableau = whole(f"{f}.distance.{key}", count) - reshuffled.get(key, 0)
            place(f"{f}.distance.{key}", t, on_tableau)
            cap, target = int(ct[t, K.C_CAP]), int(ct[t, K.C_TARGET])
            if cap and count > cap:
                fail(f"{f}.distance.{key}", f"{count}, but a side may lay at most {cap} in a hand (the card's cap)")
            if rules[K.R_TARGET_SET] and count > target and not rules[K.R_OVERSHOOT_DISQUALIFY]:
                fail(f"{f}.distance.{key}", f"{count}, but the target set takes {target} and the option "
                     "overshoot = \"forbid\" lets no more be laid")
            state[b + K.SD_LAID + t] = count
            state[b + K.SD_TABLEAU + t] = on_tableau
            km += count * int(ct[t, K.C_VALUE])
            if count:  # what the scoring table asks was laid (kernels/race.py, ST_DISTANCE_LAID)
                state[K.ST_DISTANCE_LAID] |= 1 << s
                if t == rules[K.R_SAFE_TRIP_TYPE]:
                    state[K.ST_SAFE_TRIP_LAID] |= 1 << s
            need -= min(count, target)
            if rules[K.R_TARGET_SET] and count > target:
                state[b + K.SD_DISQ] = 1
        if km > MAX_LAID:
            fail(f"{f}.distance", f"{km} {design.unit}, but no side's distance goes beyond {MAX_LAID} (a card "
                 "that would take it there is not laid)")
        state[b + K.SD_NEED] = need
        state[b + K.SD_DIST] = km
        if "km" in side and side["km"] != km:
            fail(f"{f}.km", f"{side['km']!r}, but its distance cards add up to {km}")
        if not rules[K.R_TARGET_SET] and km > state[K.ST_TRIP] and rules[K.R_OVERSHOOT_DISQUALIFY]:
            state[b + K.SD_DISQ] = 1
        if "disqualified" in side:
            disqualified_field(rules, state, s, side["disqualified"], f"{where}: {f}.disqualified")
        for key in of_kind(f"{f}.safeties", side.get("safeties", []), list):
            t = card(f"{f}.safeties", key, ("safety",))
            place(f"{f}.safeties", t)
            for pile, top in (("battle", state[b + K.SD_BATTLE]), ("limit", state[b + K.SD_LIMIT_TOP])):
                # laying the safety clears such a card, so it cannot lie there beside it
                if top >= 0 and ct[top, K.C_PROTECTED_BY] == t:
                    fail(f"{f}.safeties", f"{key} protects against {design.cards[top].key}, so that card cannot "
                         f"be on top of the {pile} pile")
            K.land_safety(state, ct, rules, s, t)
        # coups fourrés this side made earlier in the hand: each laid one of its safeties, and they score
        coups = whole(f"{f}.coups", side.get("coups", 0))
        safeties_laid = len(side.get("safeties", []))
        if coups > safeties_laid:
            fail(f"{f}.coups", f"{coups}, but each coup fourré lays a safety and this side shows {safeties_laid}")
        if coups and not rules[K.R_COUP_FOURRE]:
            fail(f"{f}.coups", f"{coups}, but option coup_fourre = false: no coup fourré is made")
        state[b + K.SD_COUPS] = coups
        if battle in ("needs_go", "virtual_go"):
            # Only a safety laid over its hazard leaves these, as option roll_after_safety says.
            shown = [design.cards[t] for t in range(n_types) if design.cards[t].role == "safety"
                     and state[b + K.SD_TABLEAU + t] > 0]
            if not any(design.cards[design.card_index(k)].role == "hazard" for c in shown for k in c.protects):
                fail(f"{f}.battle", f"{battle!r} is left only by a safety laid over its hazard, and this side "
                     "shows no safety that protects from a hazard")
            if (battle == "needs_go") != bool(rules[K.R_ROLL_AFTER_SAFETY]):
                fail(f"{f}.battle", f"{battle!r} does not arise under roll_after_safety = "
                     f"{str(bool(rules[K.R_ROLL_AFTER_SAFETY])).lower()}: a safety laid over its hazard leaves "
                     f"{'needs_go' if rules[K.R_ROLL_AFTER_SAFETY] else 'virtual_go'}")
    if extension_side >= 0 and not any(c.role == "setback" for c in design.cards):
        km = int(state[K.side_at(extension_side) + K.SD_DIST])
        if km < trip:  # nothing takes distance away in this design, and the caller had reached the trip
            fail("extension_side", f"{extension_side}, but that side shows {km} {design.unit}: only a side that "
                 f"reached the trip of {trip} calls the extension")
    # Deal what nobody can see: the stock and the hands not listed.
    rng = np.random.default_rng(seed)
    pool = np.repeat(np.arange(n_types), unseen)
    rng.shuffle(pool)
    hand_sizes = {str(k): v for k, v in of_kind("hand_sizes", position.get("hand_sizes", {}), dict).items()}
    for name, size in hand_sizes.items():
        if not is_count_text(name) or int(name) >= players:
            fail(f"hand_sizes.{name}", f"not a seat 0..{players - 1}")
        if name in hands and size != len(hands[name]):
            fail(f"hand_sizes.{name}", f"{size!r}, but hands.{name} lists {len(hands[name])} cards "
                 "(hand_sizes is for the hands not listed)")
    needed = stock
    for p in range(players):
        if str(p) not in hands:
            size = whole(f"hand_sizes.{p}", hand_sizes.get(str(p), hand_size))
            if size > hand_size:
                fail(f"hand_sizes.{p}", f"{size}, but a hand holds at most {hand_size}")
            needed += size
    if needed > pool.size:
        fail("stock", f"the stock and unlisted hands need {needed} unseen cards but only {pool.size} are left")
    for i in range(stock):
        state[K.STOCK_AT + i] = pool[i]
    state[K.ST_STOCK_N] = stock
    used = stock
    for p in range(players):
        if str(p) in hands:
            continue
        size = hand_sizes.get(str(p), int(rules[K.R_HAND_SIZE]))
        for t in pool[used:used + size]:
            state[K.HAND_AT + p * MAX_TYPES + t] += 1
        state[K.HAND_N_AT + p] = size
        used += size
    for t in pool[used:]:
        state[K.DISCARD_AT + t] += 1
    K.recount_held(state, rules)
    return state, ct, rules, seat


def position_in_play(design: Design, position: dict, source: str = "position", options: dict | None = None,
                     seed: int = 0):
    """position_state for a hand still being played, where a move is asked
    for: a side that has completed the trip has ended the hand."""
    state, ct, rules, seat = position_state(design, position, source, options, seed)
    if state[K.ST_STOCK_N] > 0:
        # While the stock holds cards every hand is full: the hand size, one more on turn (after the draw).
        for p in range(int(rules[K.R_PLAYERS])):
            full = int(rules[K.R_HAND_SIZE]) + (p == seat)
            if state[K.HAND_N_AT + p] != full:
                field = f"hands.{p}" if str(p) in map(str, position.get("hands", {})) else f"hand_sizes.{p}"
                raise DesignError(f"{source}: {field}: {state[K.HAND_N_AT + p]} cards, but a hand holds {full}"
                                  + (" on turn (after the draw)" if p == seat else "")
                                  + " while the stock holds cards")
    elif not any(state[K.HAND_N_AT + p] for p in range(int(rules[K.R_PLAYERS]))):
        raise DesignError(f"{source}: stock: 0 and nobody holds a card, so the hand is over")
    for s in range(int(rules[K.R_SIDES])):
        b = K.side_at(s)
        km = int(state[b + K.SD_DIST])
        if not rules[K.R_TARGET_SET] and km > state[K.ST_TRIP]:
            if not rules[K.R_OVERSHOOT_DISQUALIFY]:
                raise DesignError(f"{source}: sides[{s}].distance: {km} {design.unit}, beyond the trip of "
                                  f"{state[K.ST_TRIP]}, which the option overshoot = \"forbid\" lets no side pass")
        done = state[b + K.SD_NEED] <= 0 if rules[K.R_TARGET_SET] else km >= state[K.ST_TRIP]
        if done and not state[b + K.SD_DISQ]:
            raise DesignError(f"{source}: sides[{s}].distance: {km} {design.unit}: the side has completed "
                              "the trip, so the hand is over")
    return state, ct, rules, seat


def disqualified_field(rules: np.ndarray, state: np.ndarray, s: int, given, where: str):
    """Check a side's `disqualified` field against what its distance shows,
    and set it. The distance shows it, except for a side that passed the
    trip before an extension raised the trip above its distance."""
    b = K.side_at(s)
    if not isinstance(given, bool):
        raise DesignError(f"{where}: must be true or false, not {given!r}")
    if given and not rules[K.R_OVERSHOOT_DISQUALIFY]:
        raise DesignError(f"{where}: true, but only the option overshoot = \"disqualify\" disqualifies a side")
    shown = bool(state[b + K.SD_DISQ])
    if rules[K.R_TARGET_SET]:
        beyond = "holds more of a kind than the target set takes"
    else:
        beyond = f"is beyond the trip of {state[K.ST_TRIP]}"
        if state[K.ST_EXT_SIDE] >= 0:
            beyond += f" or, before the extension, of {rules[K.R_TRIP]}"
    passed_before_extension = (not rules[K.R_TARGET_SET] and state[K.ST_EXT_SIDE] >= 0
                               and state[b + K.SD_DIST] > rules[K.R_TRIP])
    if shown and not given:
        raise DesignError(f"{where}: false, but the side's distance {beyond}, which disqualifies it")
    if given and not shown and not passed_before_extension:
        raise DesignError(f"{where}: true, but no side is disqualified unless its distance {beyond}")
    state[b + K.SD_DISQ] = int(given)


def state_position(design: Design, state: np.ndarray, rules: np.ndarray, on_turn: int) -> dict:
    """The readable position of a state (inverse of position_state for what
    it shows)."""
    players = int(rules[K.R_PLAYERS])
    names = [c.key for c in design.cards]
    words = {v: k for k, v in BATTLE_WORDS.items()}
    hands = {}
    for p in range(players):
        hands[str(p)] = [names[t] for t in range(len(names)) for _ in range(state[K.HAND_AT + p * MAX_TYPES + t])]
    sides = []
    for s in range(int(rules[K.R_SIDES])):
        b = K.side_at(s)
        top = int(state[b + K.SD_BATTLE])
        lim = int(state[b + K.SD_LIMIT_TOP])
        limited = state[b + K.SD_LIMITED] == 1 and state[b + K.SD_LIMIT_IMMUNE] == 0
        side = {
            "battle": words.get(top) or names[top],
            "limit": names[lim] if lim >= 0 else ("start" if limited else "none"),
            "distance": {names[t]: int(state[b + K.SD_LAID + t]) for t in range(len(names))
                         if design.cards[t].role == "distance" and state[b + K.SD_LAID + t]},
        }
        reshuffled = {names[t]: int(state[b + K.SD_LAID + t] - state[b + K.SD_TABLEAU + t])
                      for t in range(len(names)) if design.cards[t].role == "distance"
                      and state[b + K.SD_LAID + t] > state[b + K.SD_TABLEAU + t]}
        if reshuffled:
            side["reshuffled"] = reshuffled
        side["safeties"] = [names[t] for t in range(len(names))
                            if design.cards[t].role == "safety" and state[b + K.SD_TABLEAU + t]]
        side["km"] = int(state[b + K.SD_DIST])
        sides.append(side)
        if state[b + K.SD_COUPS]:
            sides[-1]["coups"] = int(state[b + K.SD_COUPS])
        if state[b + K.SD_DISQ]:
            sides[-1]["disqualified"] = True
    return {"players": players, "on_turn": on_turn, "stock": int(state[K.ST_STOCK_N]),
            "trip": int(state[K.ST_TRIP]), "extension_side": int(state[K.ST_EXT_SIDE]), "hands": hands, "sides": sides}


def seen_position(design: Design, state: np.ndarray, rules: np.ndarray, on_turn: int) -> dict:
    """What the player on turn sees of a state, as a position: its own hand,
    the others' hand sizes, every tableau and the discard pile, with the
    cards buried under the tops of the battle and limit piles (seen as they
    were laid; a position counts them as discarded)."""
    position = state_position(design, state, rules, on_turn)
    hands = position.pop("hands")
    if position["extension_side"] < 0:
        del position["extension_side"]
    discard = []
    for t, c in enumerate(design.cards):
        count = int(state[K.DISCARD_AT + t])
        if c.role not in ("distance", "safety"):
            for s in range(int(rules[K.R_SIDES])):
                b = K.side_at(s)
                on_top = int(state[b + K.SD_BATTLE] == t or state[b + K.SD_LIMIT_TOP] == t)
                count += int(state[b + K.SD_TABLEAU + t]) - on_top
        discard += [c.key] * count
    position["discard"] = discard
    position["hands"] = {str(on_turn): hands[str(on_turn)]}
    position["hand_sizes"] = {p: len(cards) for p, cards in hands.items() if p != str(on_turn)}
    position["sides"] = position.pop("sides")  # last, as a TOML file has its tables
    return position


def position_toml(position: dict, header: str = "") -> str:
    """A position as a TOML file in docs/positions.md's layout, `header` as
    comment lines above it. Strings are written as JSON writes them, which
    TOML reads the same."""
    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(str(k))} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
        return str(int(v))

    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"{k} = {value(v)}" for k, v in position.items() if k != "sides"]
    for side in position.get("sides", []):
        lines += ["", "[[sides]]"] + [f"{k} = {value(v)}" for k, v in side.items()]
    return "\n".join(lines) + "\n"


def parse_move(design: Design, text: str, own_side: int) -> int:
    """`play CARD`, `play CARD on side N`, `discard CARD` -> move code (`pass` has none: play_position_move)."""
    words = text.split()
    keys = [c.key for c in design.cards]
    if len(words) == 2 and words[0] in ("play", "discard") and words[1] in keys:
        return keys.index(words[1]) * 8 + (K.DISCARD if words[0] == "discard" else own_side)
    if len(words) == 5 and words[0] == "play" and words[1] in keys and words[2:4] == ["on", "side"] and is_count_text(words[4]):
        return keys.index(words[1]) * 8 + int(words[4])
    if len(words) >= 2 and words[0] in ("play", "discard") and words[1] not in keys:
        raise DesignError(f"move {text!r}: no card {words[1]!r} in {design.name}{did_you_mean(words[1], keys)}")
    raise DesignError(f"move {text!r}: expected 'play CARD', 'play CARD on side N' or 'discard CARD'")


def play_position_move(design: str | Path | Design, position: dict, move: str,
                       policies: list[str] | str | None = None, options: dict | None = None,
                       seed: int = 0) -> tuple[dict, dict]:
    """Apply one move to a position; return (new position, what happened).

    `policies` (one per seat, or one string for every seat; default greedy)
    decide the coup fourré and extension questions the move may raise.
    Raises DesignError for an illegal move.
    """
    from .race_policies import parse_policy

    if not isinstance(move, str):
        raise DesignError(f"a move is a string such as \"play km100\", not {move!r}")
    design = design_of(design)
    state, ct, rules, seat = position_in_play(design, position, "position", options, seed)
    players = int(rules[K.R_PLAYERS])
    if isinstance(policies, str):  # one policy for every seat
        policies = [policies] * players
    policies = policies or ["greedy"] * players
    if len(policies) != players:
        raise DesignError(f"policies: give one per seat ({players}), not {len(policies)}")
    sides = int(rules[K.R_SIDES])
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, seat, moves)
    if move.strip() == "pass":
        if n:
            raise DesignError(f"move 'pass' is not legal here: seat {seat} holds cards (a player passes only with "
                              "no card and an empty stock)")
        info = {"next_seat": (seat + 1) % players, "hand_over": False, "coup_fourre_by": None,
                "extension_called": False, "trip_side": int(state[K.ST_TRIP_SIDE]), "broken_invariant": 0}
        return state_position(design, state, rules, info["next_seat"]), info
    m = parse_move(design, move, seat % sides)
    if m not in moves[:n]:
        raise DesignError(f"move {move!r} is not legal here; legal: {', '.join(describe_move(design, int(x), seat % sides) for x in moves[:n])}")
    specs = [parse_policy(p) for p in policies]
    ids = np.array([s.kernel_id for s in specs], np.int32)
    params = np.array([s.params for s in specs], np.float64)
    pkeys = np.arange(1, players + 1, dtype=np.uint64)
    key = np.array([seed + 1], np.uint64)
    log = np.zeros((64, K.LOG_NCOLS), np.int32)
    sides_out = np.zeros((sides, K.S_NCOLS), np.int32)
    cards = np.zeros((sides, len(design.cards), K.K_NCOLS), np.int16)
    result = np.zeros(2, np.int64)
    K.apply_move_boxed(ct, rules, state, seat, m, ids, params, pkeys, key, sides_out, cards, log, result)
    events = log[1:log[0, 0] + 1]
    coup = [int(e[1]) for e in events if e[2] == K.EV_COUP_FOURRE]
    info = {"next_seat": int(result[0]), "hand_over": bool(result[1]),
            "coup_fourre_by": coup[0] if coup else None,
            "extension_called": any(e[2] == K.EV_EXTENSION for e in events),
            "trip_side": int(state[K.ST_TRIP_SIDE]), "broken_invariant": int(K.check_state(state, ct, rules))}
    return state_position(design, state, rules, int(result[0])), info


def describe_move(design: Design, move: int, own_side: int) -> str:
    t, target = move >> 3, move & 7
    key = design.cards[t].key
    if target == K.DISCARD:
        return f"discard {key}"
    if target == own_side:
        return f"play {key}"
    return f"play {key} on side {target}"


def legal_moves_of(design: str | Path | Design, position: dict, source: str = "position",
                   options: dict | None = None) -> list[str]:
    """The legal moves of the player on turn, in move notation ("play km100",
    "play stop on side 1", "discard km25", "pass"); DesignError for a position
    that is not one of play (docs/positions.md)."""
    design = design_of(design)
    state, ct, rules, seat = position_in_play(design, position, source, options)
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, seat, moves)
    if n == 0:  # no card in hand, and none to draw (a full hand is checked for while the stock holds cards)
        return ["pass"]
    side = seat % int(rules[K.R_SIDES])
    return [describe_move(design, int(m), side) for m in moves[:n]]


ANALYZE_BATCH = 100  # deals per kernel call in analyze_position


def analyze_policy(policy: str):
    """The spec of the policy that plays `analyze`'s hands out: one of the greedy family, else DesignError."""
    from .race_policies import parse_policy

    spec = parse_policy(policy)
    if spec.kernel_id not in (K.POLICY_GREEDY,):
        raise DesignError(f"analyze plays the hand out with a greedy-family policy, not {policy!r}")
    return spec


def analyze_position(design: str | Path | Design, position: dict, playouts: int = 2000, policy: str = "greedy",
                     options: dict | None = None, seed: int = 0, source: str = "position",
                     progress=None) -> list[dict]:
    """Each legal move's chance to win the hand for the player on turn.

    For each of `playouts` deals of the cards the player cannot see (drawn
    from the unseen cards, never from the position's stock or other hands),
    every legal move is played and the hand is played out to its end by
    `policy` players (greedy by default); a move's value is the share of
    deals in which the player's side wins the hand: completes the trip, or
    in scored designs has the strictly best hand score.
    Returns one dict per move: move, wins, playouts, probability, and
    asks_extension (the move completes the trip while the extension can
    still be called: the playouts take `policy`'s answer).
    `progress(k)` is called after every k deals played out.
    """
    playouts = whole_argument("playouts", playouts, 1)
    analyze_policy(policy)  # before the kernels compile
    design = design_of(design)
    state, ct, rules, seat = position_in_play(design, position, source, options, seed)
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, seat, moves)
    if n == 0:
        raise DesignError(f"{source}: seat {seat} holds no card and the stock is empty: it can only pass, "
                          "so there is no move to analyze")
    params = np.array(analyze_policy(policy).params, np.float64)
    params[K.P_HORIZON] = 0  # to the end of the hand
    # the cards position_state put in the discard pile beyond those the position lists: not seen, so
    # every playout deals them afresh with the stock and the other hands
    unknown = state[K.DISCARD_AT:K.DISCARD_AT + MAX_TYPES].copy()
    for listed in position.get("discard", []):
        unknown[design.card_index(listed)] -= 1
    sums = [np.zeros(n) for _ in range(4)]  # totals, diffs, diff_squares, counts
    key = np.uint64(seed + 1)
    done = 0
    while done < playouts:
        # In batches, for the progress bar; each batch goes on from the last
        # one's key, so the deals are those of a single call.
        batch = min(ANALYZE_BATCH, playouts - done)
        key = np.uint64(K.evaluate_moves(state, ct, rules, seat, moves, n, params, batch, unknown, key, 0, True,
                                         *sums))
        done += batch
        if progress:
            progress(batch)
    side = seat % int(rules[K.R_SIDES])
    wins, counts = sums[0], sums[3]
    km = int(state[K.side_at(side) + K.SD_DIST])
    # a move that reaches the trip exactly while the extension is still to call asks the mover's policy for it
    open_extension = rules[K.R_EXTENSION] > 0 and state[K.ST_EXT_SIDE] < 0 and not rules[K.R_TARGET_SET]

    def asks_extension(m: int) -> bool:
        t = m >> 3
        return bool(open_extension and (m & 7) == side and design.cards[t].role == "distance"
                    and km + design.cards[t].value == state[K.ST_TRIP])

    return [{"move": describe_move(design, int(moves[i]), side), "wins": int(round(wins[i])),
             "playouts": int(counts[i]), "probability": wins[i] / counts[i],
             "asks_extension": asks_extension(int(moves[i]))} for i in range(n)]
