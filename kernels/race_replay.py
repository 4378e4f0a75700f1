"""Replay one game of a run as a readable play-by-play.

The replay uses the same keys and seating as the batch run (game i of seed
S), so it shows exactly the game recorded in row i.
"""
from __future__ import annotations

import numpy as np

from . import race as K
from .race_policies import PolicyError, policy_table, user_policy_names
from .race_position import seen_position
from .race_design import (HAND_CAP, R_COUP_TURN_EMPTY, R_GAME_TARGET, R_HAND_SIZE, R_PLAYERS, R_RESHUFFLE,
                          R_SAFETY_EXTRA_TURN_EMPTY, R_SCORING, R_SIDES, R_TIED_GAME_PLAYS_ON, R_TURN_CAP, Design)
from .user_policy import raised_in_policy

# Events a turn can log: a reshuffle and a draw, the play, a coup fourré with its replacement draw and
# reshuffle (or the extension's answer), a broken invariant, the stock running out; and before it a pass
# by each other seat.
EVENTS_PER_TURN = 8


def replay_hands(design: Design, card_table, rules, seat_specs, seed: int, game: int):
    """Play game `game` hand by hand; yield (hand, log rows, sides record, hand record, totals so far)."""
    for hand, log, sides_out, hand_out, totals, _ in played_hands(design, card_table, rules, seat_specs, seed, game):
        yield hand, log, sides_out, hand_out, totals


def played_hands(design: Design, card_table, rules, seat_specs, seed: int, game: int,
                 stop: tuple[int, int] | None = None):
    """replay_hands, with each hand's final state last in the tuple. stop =
    (hand, turns played): that hand stops after the draw of the next turn
    (the log's last event is then EV_STOPPED, by the seat on turn) and the
    replay ends there."""
    players = int(rules[R_PLAYERS])
    sides = int(rules[R_SIDES])
    chance = np.empty(1, np.uint64)
    pkeys = np.empty((1, players), np.uint64)
    K.initial_keys(seed, np.array([game], np.int64), players, chance, pkeys)
    distinct = list(dict.fromkeys(seat_specs))
    table_ids, table_params, policy_functions = policy_table(distinct)
    ids = np.array([table_ids[distinct.index(s)] for s in seat_specs], np.int32)
    params = np.ascontiguousarray(table_params[[distinct.index(s) for s in seat_specs]])
    totals = np.zeros(sides, np.int64)
    hand_cap = HAND_CAP if rules[R_SCORING] else 1
    # room for every event of a hand up to the turn cap (a full log would drop the rest: it stops the replay)
    rows = 1 + int(rules[R_HAND_SIZE]) * players + (int(rules[R_TURN_CAP]) + 1) * (EVENTS_PER_TURN + players - 1)
    for hand in range(hand_cap):
        log = np.zeros((rows, K.LOG_NCOLS), np.int32)
        state = np.empty(K.STATE_SIZE, np.int16)
        hand_out = np.zeros(K.H_NCOLS, np.int32)
        sides_out = np.zeros((sides, K.S_NCOLS), np.int32)
        cards = np.zeros((sides, len(design.cards), K.K_NCOLS), np.int16)
        progress = np.zeros((sides, K.N_PROGRESS), np.int16)
        first = int(K.first_seats(game, hand, players))
        stop_turn = stop[1] if stop is not None and stop[0] == hand else -1
        with raised_in_policy(user_policy_names(distinct), PolicyError):
            K.play_hand_logged(card_table, rules, ids, params, first, chance, pkeys[0], state,
                               hand_out, sides_out, cards, progress, log, stop_turn, *policy_functions)
        if log[0, 0] == rows - 1:
            raise RuntimeError(f"game {game}, hand {hand}: the play-by-play filled its {rows - 1} rows; "
                               "the events after that were not kept (an etappe bug: please report it)")
        totals += sides_out[:, K.S_SCORE]
        yield hand, log[1:log[0, 0] + 1], sides_out, hand_out, totals.copy(), state
        if stop_turn >= 0 or not rules[R_SCORING] or hand_out[K.H_CAPPED] or _decided(rules, totals):
            break


def position_at(design: Design, card_table, rules, seat_specs, seed: int, game: int, hand: int, turn: int) -> dict:
    """The position at turn `turn` of hand `hand` (both from 1, as the
    play-by-play counts them) of game `game`, after the draw: what the player
    on turn sees (race_position.seen_position). Raises ValueError for a hand
    or turn the game did not reach."""
    for h, log, _, hand_out, _, state in played_hands(design, card_table, rules, seat_specs, seed, game,
                                                      stop=(hand - 1, turn - 1)):
        if h < hand - 1:
            continue
        if not len(log) or log[-1][2] != K.EV_STOPPED:
            how = "was cut off by the turn cap" if hand_out[K.H_CAPPED] else "ended"
            raise ValueError(f"turn {turn}: hand {hand} of game {game} {how} after {hand_out[K.H_TURNS]} turns")
        return seen_position(design, state, rules, int(log[-1][1]))
    raise ValueError(f"hand {hand}: game {game} was over after {h + 1} hand{'s' if h else ''}")


def _decided(rules, totals) -> bool:
    """A scored game is over once a side reaches the game target (as the batch
    run decides it: with option tied_game = "play_on", a tie for the highest plays on)."""
    best = totals.max()
    return bool(best >= rules[R_GAME_TARGET] and (not rules[R_TIED_GAME_PLAYS_ON] or (totals == best).sum() == 1))


def game_result(rules, hands: int, hand_out, sides_out, totals) -> str:
    """Who won the replayed game, decided as the records' winner_side is."""
    if hand_out[K.H_CAPPED]:
        return "no winner: the turn cap cut the last hand off"
    if rules[R_SCORING]:
        if not _decided(rules, totals):
            return f"no winner: no side reached {rules[R_GAME_TARGET]} in {hands} hands (the hand cap)"
        best = totals.max()
        if (totals == best).sum() > 1:
            return f"no winner: a tie for the highest total, {best}"
        return f"side {int(totals.argmax())} wins with {best} points"
    if hand_out[K.H_TRIP_SIDE] >= 0:
        return f"side {hand_out[K.H_TRIP_SIDE]} wins: it completed the trip"
    # a side disqualified under option overshoot = "disqualify" can no longer win
    distance = np.where(sides_out[:, K.S_DISQUALIFIED] == 0, sides_out[:, K.S_DISTANCE], -1)
    if distance.max() < 0:
        return "no winner: nobody completed the trip and every side is disqualified"
    if (distance == distance.max()).sum() > 1:
        return f"no winner: nobody completed the trip and the longest distance, {distance.max()}, is tied"
    of_those = " of the sides not disqualified" if (sides_out[:, K.S_DISQUALIFIED] == 1).any() else ""
    return f"side {int(distance.argmax())} wins: nobody completed the trip and it went furthest{of_those}"


def score_items(state, rules, sides_out, side: int) -> str:
    """' (distance 700 + per_safety 200 + ...)': the items of a side's hand
    score that are not 0, named as the design file's [scoring] fields; ''
    where the distance is the whole score."""
    items = [(name, int(K.score_item(state, rules, sides_out, side, i))) for i, name in enumerate(K.SCORE_ITEMS)]
    if all(points == 0 for _, points in items[1:]):
        return ""
    return " (" + " + ".join(f"{name} {points}" for name, points in items if points) + ")"


def format_replay(design: Design, card_table, rules, seat_specs, seed: int, game: int) -> str:
    players = int(rules[R_PLAYERS])
    sides = int(rules[R_SIDES])
    names = [c.key for c in design.cards]
    unit = design.unit
    lines = [f"{design.title}, {players} players, seed {seed}, game {game}"]
    for p, spec in enumerate(seat_specs):
        lines.append(f"  seat {p}: {spec.name}" + (f" (side {p % sides})" if sides != players else ""))
    for hand, log, sides_out, hand_out, totals, state in played_hands(design, card_table, rules, seat_specs, seed,
                                                                     game):
        lines.append(f"\n== hand {hand + 1} (hand {hand} in the records): seat {hand_out[K.H_FIRST_SEAT]} plays first ==")
        deal: dict[int, list[str]] = {}
        previous = -1
        last_mover, drew = -1, False  # who played the last turn; whether this turn began with a draw
        last_card = False  # the next draw empties the stock
        for i, (turn, seat, event, card, side, value) in enumerate(log):
            if event == K.EV_DEAL:
                deal.setdefault(seat, []).append(names[card])
                continue
            if deal:
                for s in sorted(deal):
                    lines.append(f"  seat {s} is dealt: {' '.join(sorted(deal[s]))}")
                deal = {}
            who = f"t{turn:>4} seat {seat}"  # plays are logged once the turn is counted
            # a seat that plays two turns in a row has an extra turn (a safety laid on its own turn)
            again = " (extra turn)" if seat == last_mover else ""
            if event == K.EV_DRAW and previous == K.EV_COUP_FOURRE:
                lines.append(f"{'':>5} seat {seat} draws {names[card]} to replace the safety")
            elif event == K.EV_DRAW:
                lines.append(f"t{turn + 1:>4} seat {seat} draws {names[card]}{again}")
                drew = True
            if event == K.EV_DRAW and last_card:
                no_extra = "" if rules[R_SAFETY_EXTRA_TURN_EMPTY] else "; a safety laid from now gives no extra turn"
                lines.append(f"{'':>5} that was the stock's last card: the hands are played out{no_extra}")
                last_card = False
            elif event == K.EV_PLAY:
                target = "" if side == seat % sides else f" on side {side}"
                lines.append(f"{who} plays {names[card]}{target}{'' if drew else again}")
                last_mover, drew = seat, False
            elif event == K.EV_DISCARD:
                lines.append(f"{who} discards {names[card]}{'' if drew else again}")
                last_mover, drew = seat, False
            elif event == K.EV_STOCK_EMPTY:
                last_card = not rules[R_RESHUFFLE]  # a reshuffle says so at the draw after
            elif event == K.EV_COUP_FOURRE:
                # The replacement draw follows unless the stock is empty; then the turn
                # jump depends on the option coup_fourre_turn_after_stock_empty.
                replaced = i + 1 < len(log) and log[i + 1][2] == K.EV_DRAW and log[i + 1][1] == seat
                then = ("takes the next turn" if replaced else
                        "takes the next turn (the stock is empty: no card replaces the safety)" if rules[R_COUP_TURN_EMPTY]
                        else "the stock is empty: no card replaces the safety and play goes on after the attacker")
                lines.append(f"{'':>5} seat {seat} COUP FOURRÉ with {names[card]} against {names[value]}; {then}")
            elif event == K.EV_EXTENSION:
                lines.append(f"{'':>5} side {side} calls the extension to {value} {unit}")
            elif event == K.EV_DECLINE_EXTENSION:
                lines.append(f"{'':>5} side {side} completes the trip and does not extend")
            elif event == K.EV_PASS:
                lines.append(f"{'':>5} seat {seat} has no card and passes")
                last_mover, drew = seat, False
            elif event == K.EV_RESHUFFLE:
                lines.append(f"{'':>5} the stock is empty: reshuffled into {value} cards")
            elif event == K.EV_BROKEN_INVARIANT:
                lines.append(f"{'':>5} BROKEN INVARIANT {value} after this move (a bug: please report it)")
            previous = event
        end = "cut off by the turn cap" if hand_out[K.H_CAPPED] else (
            f"side {hand_out[K.H_TRIP_SIDE]} completes the trip" if hand_out[K.H_TRIP_SIDE] >= 0 else "no side completed the trip")
        lines.append(f"-- hand over after {hand_out[K.H_TURNS]} turns: {end}")
        for s in range(sides):  # a design without a scoring table plays one hand that the trip decides: no score
            score = (f", hand score {sides_out[s, K.S_SCORE]}{score_items(state, rules, sides_out, s)}, "
                     f"total {totals[s]}" if rules[R_SCORING] else "")
            lines.append(f"   side {s}: {sides_out[s, K.S_DISTANCE]} {unit}{score}")
    lines.append(f"== game over: {game_result(rules, hand + 1, hand_out, sides_out, totals)}")
    return "\n".join(lines)
