"""Positions of the race games: a documented TOML/JSON format -> state row.

A position is what the players can see at a decision: whose turn it is, the
hand of the player on turn (after the draw), every side's tableau and the
stock size. See docs/positions.md for the format; `legal_moves_of` lists the
legal moves in the notation `play CARD`, `play CARD on side N`, `discard CARD`.
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np

from . import race as K
from .race_design import MAX_TYPES, Design, DesignError


def read_position_file(path: str | Path) -> dict:
    path = Path(path)
    text = path.read_text("utf-8")
    try:
        return json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise DesignError(f"{path}: cannot parse position: {exc}") from None


def position_state(design: Design, position: dict, source: str = "position", options: dict | None = None):
    """Build (state, card_table, rules, seat on turn) from a position dict."""
    where = source

    def fail(field, problem):
        raise DesignError(f"{where}: {field}: {problem}")

    players = position.get("players")
    if not isinstance(players, int):
        fail("players", "missing or not a whole number")
    ct, rules = design.tables(players, options)
    sides = int(rules[K.R_SIDES])
    keys = {c.key: i for i, c in enumerate(design.cards)}
    state = np.zeros(K.STATE_SIZE, np.int16)
    seat = position.get("on_turn", 0)
    if not isinstance(seat, int) or not 0 <= seat < players:
        fail("on_turn", f"must be a seat 0..{players - 1}")
    stock = position.get("stock", 0)
    if not isinstance(stock, int) or stock < 0:
        fail("stock", "must be a whole number >= 0")
    state[K.ST_STOCK_N] = stock
    state[K.ST_TRIP] = position.get("trip", int(rules[K.R_TRIP]))
    state[K.ST_EXT_SIDE] = -1
    state[K.ST_TRIP_SIDE] = -1
    state[K.ST_LEADER] = -1

    def card(field, key, roles=None):
        if key not in keys:
            fail(field, f"no card {key!r} in {design.name}")
        if roles and design.cards[keys[key]].role not in roles:
            fail(field, f"{key!r} is a {design.cards[keys[key]].role}, expected {' or '.join(roles)}")
        return keys[key]

    hands = position.get("hands", {})
    for name, cards in hands.items():
        if not name.isdigit() or int(name) >= players:
            fail(f"hands.{name}", f"not a seat 0..{players - 1}")
        p = int(name)
        for key in cards:
            state[K.HAND_AT + p * MAX_TYPES + card(f"hands.{name}", key)] += 1
        state[K.HAND_N_AT + p] = len(cards)
    if str(seat) not in hands:
        fail("hands", f"the hand of the player on turn (seat {seat}) is needed")
    tableaux = position.get("sides", [])
    if len(tableaux) != sides:
        fail("sides", f"{players} players of {design.name} play as {sides} sides; give {sides} [[sides]] tables")
    for s, side in enumerate(tableaux):
        b = K.side_at(s)
        f = f"sides[{s}]"
        battle = side.get("battle", "empty")
        state[b + K.SD_BATTLE] = {"empty": K.EMPTY, "needs_go": K.NEEDS_GO}.get(battle, None) \
            if battle in ("empty", "needs_go") else card(f"{f}.battle", battle, ("go", "hazard", "remedy"))
        limit = side.get("limit", "start" if design.start_under_limit else "none")
        if limit == "start":
            state[b + K.SD_LIMITED] = 1
            state[b + K.SD_LIMIT_TOP] = K.EMPTY
        elif limit == "none":
            state[b + K.SD_LIMIT_TOP] = K.EMPTY
        else:
            t = card(f"{f}.limit", limit, ("limit", "end_limit"))
            state[b + K.SD_LIMIT_TOP] = t
            state[b + K.SD_LIMITED] = int(design.cards[t].role == "limit")
            state[b + K.SD_TABLEAU + t] += 1
        if state[b + K.SD_BATTLE] >= 0:
            state[b + K.SD_TABLEAU + state[b + K.SD_BATTLE]] += 1
        need = int(rules[K.R_SET_TOTAL])
        for key, count in side.get("distance", {}).items():
            t = card(f"{f}.distance.{key}", key, ("distance",))
            state[b + K.SD_LAID + t] = count
            state[b + K.SD_TABLEAU + t] = count
            state[b + K.SD_DIST] += count * int(ct[t, 2])
            need -= min(count, int(ct[t, 5]))
        state[b + K.SD_NEED] = need
        for key in side.get("safeties", []):
            K.land_safety(state, ct, rules, s, card(f"{f}.safeties", key, ("safety",)))
    return state, ct, rules, seat


def describe_move(design: Design, move: int, own_side: int) -> str:
    t, target = move >> 3, move & 7
    key = design.cards[t].key
    if target == K.DISCARD:
        return f"discard {key}"
    if target == own_side:
        return f"play {key}"
    return f"play {key} on side {target}"


def legal_moves_of(design: Design, position: dict, source: str = "position", options: dict | None = None) -> list[str]:
    state, ct, rules, seat = position_state(design, position, source, options)
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, seat, moves)
    side = seat % int(rules[K.R_SIDES])
    return [describe_move(design, int(m), side) for m in moves[:n]]
