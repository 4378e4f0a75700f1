"""Python API of the race games: load a design, simulate, get a DataFrame.

    from etappe.analysis.race import load_design, simulate
    df = simulate("stapop", players=4, games=10_000, policies=["greedy"], seed=1)
    print(replay(df.attrs, game=17))   # play-by-play of game 17 of that run

One row per hand (see docs/records.md); the run's identity is in `df.attrs`.
The CLI uses exactly these functions (docs/python.md: the whole Python API).
"""
from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from etappe.kernels import race as K
from etappe.kernels.race_design import (
    CARD_COLUMNS, HAND_CAP, R_EXTENSION, R_GAME_TARGET, R_SCORING, R_SIDES, R_TIED_GAME_PLAYS_ON, R_TRIP, R_TURN_CAP, SIDE_COLUMNS,
    Design, DesignError, load_design, parse_design,
)
from etappe.kernels.options import MAX_KEY, policies_by_seat, whole
from etappe.kernels.race_policies import PolicyError, PolicySpec, parse_policy, policy_table, user_policy_names
from etappe.kernels.user_policy import raised_in_policy

from .race_summary import CAPPED_HANDS, CAPPED_TURNS
from .runio import NO_PLAY_BY_PLAY, differences, file_hash, numba_threads, package_version
from .stats import counted

__all__ = ["load_design", "simulate", "replay", "replay_position", "run_of", "iter_chunks", "RaceRun", "DesignError", "PolicyError"]

DEFAULT_CHUNK = 50_000


class RaceRun:
    """Everything that determines a run's results, checked once up front.

    Arguments as `simulate`'s; raises DesignError, PolicyError or
    ValueError (all ValueErrors), or TypeError for an argument of the wrong
    type, naming what is wrong."""

    def __init__(self, design: str | Path | Design, players: int, policies: Sequence[str] | str | None,
                 seed: int, options: dict | None = None, seating: str = "fixed"):
        # any whole number, negative too: the design says which counts it plays, and refuses the others
        players = whole("players", players, low=-MAX_KEY)
        seed = whole("seed", seed)
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(f"options must be a dict of rule option name: value, e.g. {{'overshoot': 'disqualify'}}, "
                            f"not {type(options).__name__}")
        if isinstance(design, str) and design in ("bremen", "etape") and not Path(design).exists():
            raise DesignError(f"{design} is not a race design: its Python API is etappe.analysis.{design} "
                              f"(`from etappe.analysis import {design}; {design}.simulate(...)`; docs/python.md)")
        self.design = design if isinstance(design, Design) else load_design(design)
        self.players = players
        self.options = self.design.resolved_options(options)
        self.card_table, self.rules = self.design.tables(players, options)
        self.sides = int(self.rules[R_SIDES])
        self.seed = seed
        specs = [parse_policy(p) for p in policies_by_seat(policies, players, "greedy")]  # A,B: teams A and B
        if seating not in ("fixed", "rotate"):
            raise ValueError("seating must be 'fixed' or 'rotate'")
        self.seating = seating
        self.seat_specs = specs
        self.distinct: list[PolicySpec] = list(dict.fromkeys(specs))
        self.policy_ids, self.policy_params, self.policy_functions = policy_table(self.distinct)
        self.seat_index = np.array([self.distinct.index(s) for s in specs], dtype=np.int8)

    @property
    def user_policies(self) -> list[str]:
        """The specs of the run's policies of your own (`FILE.py:FUNCTION`)."""
        return user_policy_names(self.distinct)

    @property
    def multi_hand(self) -> bool:
        return bool(self.rules[R_SCORING])

    def metadata(self, games: int) -> dict:
        d = self.design
        counts = d.counts(self.players)
        set_target = d.set_target(self.players) if d.target_kind == "set" else {}
        return {
            "game": "race",
            "design": d.name,
            "design_title": d.title,
            "design_file": d.source,
            "design_hash": file_hash(d.text),
            "design_text": d.text,  # so that a replay needs no design file, nor the folder the run was made in
            "reconstructed": d.reconstructed,
            "players": self.players,
            "sides": self.sides,
            "seat_side": [p % self.sides for p in range(self.players)],
            "policies": [s.describe() for s in self.seat_specs],
            "policy_names": [s.name for s in self.distinct],
            "seating": self.seating,
            "seed": self.seed,
            "games": games,
            "version": package_version(),
            "options": self.options,
            # each card's rules too, so that a comparison can say what a redesign changed
            "cards": [{**asdict(c), "count": counts[c.key], "target": set_target.get(c.key, 0)} for c in d.cards],
            "scoring": dict(d.scoring) if d.scoring is not None else None,
            "hand_size": d.hand_size,
            "target_kind": d.target_kind,
            "stock_exhausted": "reshuffle" if d.reshuffle else "play_out",
            "start_under_limit": d.start_under_limit,
            "unit": d.unit,
            "turn_cap": int(self.rules[R_TURN_CAP]),
            "hand_cap": HAND_CAP if self.multi_hand else 1,
            "progress_rounds": list(K.PROGRESS_ROUNDS),
            "target": int(self.rules[R_TRIP]),
            "extension": int(self.rules[R_EXTENSION]),  # the extended trip, 0: none for this player count
            "multi_hand": self.multi_hand,
        }

    def seat_policies(self, games: np.ndarray) -> np.ndarray:
        """[games, seats] index into self.distinct; rotated seating moves
        every policy one seat on from game to game."""
        base = np.broadcast_to(self.seat_index, (games.size, self.players))
        if self.seating == "fixed":
            # a copy: the broadcast view is read-only, and Numba compiles the kernel anew for a
            # read-only array (which a view of 0 or 1 games would stay, being contiguous already)
            return base.copy()
        cols = (np.arange(self.players)[None, :] + games[:, None]) % self.players
        return np.ascontiguousarray(self.seat_index[cols])

    def _hand_buffers(self, n: int) -> tuple[np.ndarray, ...]:
        """The kernel's output arrays for one hand of n games: hand_out,
        sides_out, cards_out, progress."""
        sides, n_types = self.sides, len(self.design.cards)
        return (np.zeros((n, K.H_NCOLS), np.int32), np.zeros((n, sides, K.S_NCOLS), np.int32),
                np.zeros((n, sides, n_types, K.K_NCOLS), np.int16), np.zeros((n, sides, K.N_PROGRESS), np.int16))

    def load_kernels(self) -> float:
        """Compile the kernels this run plays with, or load them from the
        cache, by calling them on no games; returns the seconds it took. A
        run that calls this first times its games without the compile."""
        started = time.perf_counter()
        games = np.zeros(0, np.int64)
        chance, pkeys = np.empty(0, np.uint64), np.empty((0, self.players), np.uint64)
        K.initial_keys(self.seed, games, self.players, chance, pkeys)
        K.play_hands(self.card_table, self.rules, self.policy_ids, self.policy_params, self.seat_policies(games),
                     K.first_seats(games, 0, self.players), chance, pkeys, *self._hand_buffers(0),
                     *self.policy_functions)
        return time.perf_counter() - started

    def replay(self, game: int) -> str:
        """Play-by-play of game `game` of this run, as `etappe replay` prints it."""
        from etappe.kernels.race_replay import format_replay

        game = whole("game", game)
        specs = [self.distinct[i] for i in self.seat_policies(np.array([game]))[0]]
        return format_replay(self.design, self.card_table, self.rules, specs, self.seed, game)

    def position(self, game: int, turn: int, hand: int = 1) -> dict:
        """The position of the player on turn at turn `turn` of hand `hand`
        (from 1, as the play-by-play counts them) of game `game`, after the
        draw (docs/positions.md). Raises ValueError for a hand or turn the
        game did not reach."""
        from etappe.kernels.race_replay import position_at

        game, turn, hand = whole("game", game), whole("turn", turn, 1), whole("hand", hand, 1)
        specs = [self.distinct[i] for i in self.seat_policies(np.array([game]))[0]]
        return position_at(self.design, self.card_table, self.rules, specs, self.seed, game, hand, turn)

    def play(self, start: int, count: int) -> pd.DataFrame:
        """Play games start .. start+count-1; one row per hand."""
        games = np.arange(start, start + count, dtype=np.int64)
        players, sides = self.players, self.sides
        chance = np.empty(count, np.uint64)
        pkeys = np.empty((count, players), np.uint64)
        K.initial_keys(self.seed, games, players, chance, pkeys)
        seat_policy = self.seat_policies(games)
        totals = np.zeros((count, sides), np.int32)
        active = np.arange(count)
        parts = []
        hand_cap = HAND_CAP if self.multi_hand else 1
        for hand in range(hand_cap):
            hand_out, sides_out, cards_out, progress = self._hand_buffers(active.size)
            ck = chance[active]
            pk = np.ascontiguousarray(pkeys[active])
            first = K.first_seats(games[active], hand, players)
            with raised_in_policy(self.user_policies, PolicyError):
                K.play_hands(self.card_table, self.rules, self.policy_ids, self.policy_params,
                             np.ascontiguousarray(seat_policy[active]), first, ck, pk,
                             hand_out, sides_out, cards_out, progress, *self.policy_functions)
            failed = np.flatnonzero(hand_out[:, K.H_POLICY_ERROR])
            if failed.size:
                seat = hand_out[failed[0], K.H_POLICY_ERROR] - 1
                spec = self.distinct[seat_policy[active[failed[0]], seat]]
                raise PolicyError(f"policy {spec.name!r} (seat {seat}) answered with an index that is not "
                                  f"one of the legal moves (game {games[active[failed[0]]]}, hand {hand} in the "
                                  "records); it must return 0 .. n_moves-1")
            chance[active] = ck
            pkeys[active] = pk
            totals[active] += sides_out[:, :, K.S_SCORE]
            parts.append((active, hand, hand_out, sides_out, cards_out, progress, totals[active].copy(),
                          seat_policy[active]))
            if not self.multi_hand:
                break
            best = totals[active].max(axis=1)
            decided = best >= self.rules[R_GAME_TARGET]
            if self.rules[R_TIED_GAME_PLAYS_ON]:  # a tie for the highest total plays another hand
                decided &= (totals[active] == best[:, None]).sum(axis=1) == 1
            done = (hand_out[:, K.H_CAPPED] == CAPPED_TURNS) | decided
            active = active[~done]
            if active.size == 0:
                break
        return self._frame(games, parts, hand_cap_hit=active if self.multi_hand and active.size else None)

    def _frame(self, games, parts, hand_cap_hit) -> pd.DataFrame:
        d = self.design
        # Rows in game order, hands in order within a game: each hand's rows go
        # straight to their place (a game's rows start at the total of the
        # hands of the games before it).
        hands_per_game = np.bincount(np.concatenate([p[0] for p in parts]), minlength=games.size)
        first_row = np.cumsum(hands_per_game) - hands_per_game
        places = [first_row[p[0]] + p[1] for p in parts]
        n = int(hands_per_game.sum())

        def rows(k):
            out = np.empty((n,) + parts[0][k].shape[1:], parts[0][k].dtype)
            for place, part in zip(places, parts):
                out[place] = part[k]
            return out

        idx = rows(0)
        hands = np.empty(n, np.int32)
        for place, part in zip(places, parts):
            hands[place] = part[1]
        cols: dict[str, np.ndarray] = {"game": games[idx], "hand": hands}
        hand_out, sides_out, cards_out, progress, totals, seat_policy = (rows(k) for k in range(2, 8))
        for j, name in enumerate(K.HAND_COLUMNS):
            cols[name] = hand_out[:, j]
        if hand_cap_hit is not None:  # games still going at the hand cap: 2, not the turn cap's 1
            last = np.isin(idx, hand_cap_hit) & (cols["hand"] == HAND_CAP - 1)
            cols["capped"] = np.where(last, CAPPED_HANDS, cols["capped"]).astype(np.int32)
        for p in range(self.players):
            cols[f"seat{p}_policy"] = seat_policy[:, p].astype(np.int8)
        for s in range(self.sides):
            for j, name in enumerate(SIDE_COLUMNS):
                cols[f"s{s}_{name}"] = sides_out[:, s, j]
            cols[f"s{s}_total"] = totals[:, s]
        # The card statistics and progress columns are whole arrays in C order
        # (side, card, stat) and (side, round): each becomes one block as it is.
        card_names = [f"s{s}_{card.key}_{stat}" for s in range(self.sides) for card in d.cards
                      for stat in CARD_COLUMNS]
        progress_names = [f"s{s}_r{r}" for s in range(self.sides) for r in K.PROGRESS_ROUNDS]
        frame = pd.concat([pd.DataFrame(cols),
                           pd.DataFrame(cards_out.reshape(n, len(card_names)), columns=card_names, copy=False),
                           pd.DataFrame(progress.reshape(n, len(progress_names)), columns=progress_names, copy=False)], axis=1)
        return _add_game_columns(frame, self)


def _add_game_columns(frame: pd.DataFrame, run: RaceRun) -> pd.DataFrame:
    """last_hand, winner_side and game_turns, repeated on every row of a game."""
    by_game = frame.groupby("game", sort=False)
    last = by_game["hand"].transform("max") == frame["hand"]
    frame["last_hand"] = last.astype(np.int8)
    frame["game_turns"] = by_game["turns"].transform("sum").astype(np.int32)
    lasts = frame[last]
    if run.multi_hand:
        totals = lasts[[f"s{s}_total" for s in range(run.sides)]].to_numpy()
        best = totals.max(axis=1)
        unique = (totals == best[:, None]).sum(axis=1) == 1
        winner = np.where(unique & (best >= run.rules[R_GAME_TARGET]), totals.argmax(axis=1), -1)
    else:
        # First to complete the trip; a play-out hand that ends without one
        # goes to the longest distance (a tie: no winner) of a side not
        # disqualified (option overshoot = "disqualify": it can no longer win).
        dist = lasts[[f"s{s}_distance" for s in range(run.sides)]].to_numpy()
        dist = np.where(lasts[[f"s{s}_disqualified" for s in range(run.sides)]].to_numpy() == 0, dist, -1)
        best = dist.max(axis=1)
        unique = (dist == best[:, None]).sum(axis=1) == 1
        winner = np.where(lasts["trip_side"] >= 0, lasts["trip_side"],
                          np.where(unique & (best >= 0), dist.argmax(axis=1), -1))
    winner = np.where(lasts["capped"] > 0, -1, winner)
    per_game = pd.Series(winner.astype(np.int8), index=lasts["game"].to_numpy())
    frame["winner_side"] = frame["game"].map(per_game).astype(np.int8)
    return frame


def iter_chunks(run: RaceRun, games: int, chunk_size: int = DEFAULT_CHUNK, start: int = 0) -> Iterator[tuple[int, pd.DataFrame]]:
    """Yield (chunk index, records) for games start .. start+games-1 in chunks."""
    for index, first in enumerate(range(start, start + games, chunk_size)):
        yield index, run.play(first, min(chunk_size, start + games - first))


def simulate(design: str | Path | Design, players: int = 4, games: int = 1000,
             policies: Sequence[str] | str | None = ("greedy",), seed: int = 0, options: dict | None = None,
             seating: str = "fixed", threads: int | None = None, chunk_size: int = DEFAULT_CHUNK,
             progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Play games 0 .. games-1 of a race design and return their records.

    design: built-in name (stapop, millebornes, touring), a TOML path, or a
        loaded Design (`load_design`).
    players: seats at the table (the design says which counts it plays).
    games: games to play (0: an empty table with every column).
    policies: one spec for every seat (a string or a list of one), one per
        seat, or a list that repeats around the table (A, B at 4 seats:
        A, B, A, B); "random", "greedy", "greedy:attack=3", "lookahead",
        "path/to/file.py:function" (`etappe policies`, docs/policies.md);
        None: greedy.
    seed: root seed (0 to 2**63 - 1); game i depends only on the seed and i.
    options: rule options, {name: value} (docs/designs.md), e.g.
        {"overshoot": "disqualify"}.
    seating: "fixed", or "rotate" to move every policy one seat on each game.
    threads: Numba threads for this call (default: all cores); results do
        not depend on it.
    chunk_size: games played per kernel call.
    progress: progress(done, total) is called once the kernels are ready
        (done 0) and after each chunk, with the games finished so far, as in
        Bremen's and Tape l'étape's `simulate`.

    Returns a DataFrame, one row per hand (columns: docs/records.md), with
    the run's identity in `df.attrs`: game ("race"), design, design_file,
    design_hash, design_text, players, policies, seating, seed, games, options, version,
    wall_seconds and the design's cards and targets: everything to replay a
    game (`replay(df.attrs, game=i)`) or to write a run file
    (`etappe.analysis.runio.write_parquet(df, path, df.attrs)`).

    Raises DesignError (an unknown design, a bad design file, a player count
    the design does not play, an unknown rule option or value), PolicyError
    (an unknown policy or parameter, a user policy that does not compile or
    plays an illegal move), TypeError (a count or seed that is not an int),
    ValueError (games or seed out of range, chunk_size < 1, a policy list
    that does not fit the table, an unknown seating); DesignError and
    PolicyError are ValueErrors. The messages are those the CLI prints.
    """
    games = whole("games", games, -MAX_KEY)  # the type; a negative count keeps its own message
    if games < 0:
        raise ValueError(f"games must be >= 0, not {games}")
    chunk_size = whole("chunk_size", chunk_size, 1)
    run = RaceRun(design, players, policies, seed, options, seating)
    with numba_threads(threads):
        run.load_kernels()  # the compile is not playing time
        if progress:
            progress(0, games)
        started = time.perf_counter()
        frames = []
        for index, frame in iter_chunks(run, games, chunk_size):
            frames.append(frame)
            if progress:
                progress(min(games, (index + 1) * chunk_size), games)
        if not frames:
            frames.append(run.play(0, 0))
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    out.attrs.update(run.metadata(games))
    out.attrs["wall_seconds"] = round(time.perf_counter() - started, 3)
    return out


def replay(design: str | Path | Design | Mapping, game: int, players: int = 4,
           policies: Sequence[str] | str = ("greedy",), seed: int = 0, options: dict | None = None,
           seating: str = "fixed") -> str:
    """Play-by-play of game `game` (from 0), as `etappe replay` prints it.

    Either the run's settings as `simulate` takes them, or a run's metadata
    in place of the design, e.g. `replay(df.attrs, game=17)` for a frame
    `simulate` returned (or `read_parquet(path)[1]` for a run file): its
    design, players, policies, seed, options and seating are then the run's
    and the other arguments are ignored (`run_of`). Raises as `simulate`
    does, and as `run_of` for metadata.
    """
    if isinstance(design, Mapping):
        return run_of(design, game).replay(game)
    _not_a_frame(design, "replay")
    return RaceRun(design, players, policies, seed, options, seating).replay(game)


def _not_a_frame(design, function: str) -> None:
    """The records of a run are not the run: its metadata (their attrs) is."""
    if isinstance(design, pd.DataFrame):
        raise TypeError(f"{function} takes the run's metadata, {function}(df.attrs, game=...), or its design; "
                        "not the records")


def replay_position(design: str | Path | Design | Mapping, game: int, turn: int, hand: int = 1, players: int = 4,
                    policies: Sequence[str] | str = ("greedy",), seed: int = 0, options: dict | None = None,
                    seating: str = "fixed") -> dict:
    """The position at turn `turn` of hand `hand` (from 1, as `replay`
    counts them) of game `game`, after the draw, as the player on turn sees
    it: a dict in docs/positions.md's format, for `legal_moves`,
    `analyze_position` or `play_position_move` (with the run's options).
    The run is given as `replay` takes it. Raises ValueError for a hand or
    turn the game did not reach."""
    if isinstance(design, Mapping):
        return run_of(design, game).position(game, turn, hand)
    _not_a_frame(design, "replay_position")
    return RaceRun(design, players, policies, seed, options, seating).position(game, turn, hand)


def _spec_file(policy) -> str | None:
    """The file of a user policy as the run recorded it (`path.py:function`), else None."""
    name = policy["name"] if isinstance(policy, Mapping) else policy
    file = name.partition(":")[0]
    return file if file.endswith(".py") else None


def run_identity(meta: Mapping) -> dict:
    """What makes a race run's games what they are: a run file, its saved
    chunks, or a comparison's or sweep's checkpoint is resumed only by a
    run whose identity is the same."""
    return {f: meta[f] for f in ("design_hash", "players", "policies", "seating", "seed", "games", "version", "options")}


def run_of(meta: Mapping, game: int | None = None) -> RaceRun:
    """The run a run's metadata describes (a run file's, or a `simulate`
    frame's attrs), once it is sure that its design file and policy files
    are those the run was played with. Raises ValueError for metadata of
    another game, a `game` the run does not hold, a design or policy that
    cannot be loaded now, or one that changed since the run."""
    if not meta:
        raise ValueError("no run metadata: give a run file's (read_parquet's second value) or the attrs of a frame "
                         "simulate returned")
    if meta.get("game") != "race":
        raise ValueError(f"a run of {meta.get('game')}; replay is for the race designs. "
                         + NO_PLAY_BY_PLAY.get(meta.get("game"), ""))
    missing = [f for f in ("design_file", "players", "policies", "seed", "options") if f not in meta]
    if missing:
        raise ValueError(f"the run's metadata lacks {', '.join(missing)}")
    if game is not None:
        game = whole("game", game)
    if game is not None and "games" in meta and not 0 <= game < meta["games"]:
        raise ValueError(f"game {game}: the run has {counted(meta['games'], 'game')} (0 to {meta['games'] - 1})")
    try:
        # the design as the run recorded it; a run file written before etappe kept the text names its file
        design = (parse_design(meta["design_text"], meta["design_file"]) if "design_text" in meta
                  else meta["design_file"].removeprefix("builtin:"))
        run = RaceRun(design, meta["players"], [p["name"] if isinstance(p, Mapping) else p for p in meta["policies"]],
                      meta["seed"], meta["options"], meta.get("seating", "fixed"))
    except ValueError as exc:
        files = ([] if "design_text" in meta else [meta["design_file"]]) + [_spec_file(p) for p in meta["policies"]]
        relative = list(dict.fromkeys(f for f in files if f and not f.startswith("builtin:") and not Path(f).is_absolute()))
        where = (f" ({', '.join(relative)}: paths relative to the folder the run was made in; run the replay "
                 "from there)" if relative else "")
        raise ValueError(f"the run's design or policies cannot be loaded now: {exc}{where}") from None
    # the design as played, too: a design built in Python (a sweep's variant) keeps its file's text
    fields = ("design_hash", "players", "policies", "seating", "seed", "options", "cards", "scoring", "hand_size",
              "target_kind", "stock_exhausted", "start_under_limit", "turn_cap", "target", "extension")
    changed = differences({f: meta[f] for f in fields if f in meta},
                          {f: v for f, v in run.metadata(0).items() if f in fields and f in meta})
    if changed:
        raise ValueError(f"the design or a policy file changed since the run ({'; '.join(changed)}); "
                         "the replay would not be the run's game")
    return run
