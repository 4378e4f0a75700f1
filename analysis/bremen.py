"""Bremer Stadtmusikanten: simulation API, a scenario API for single positions,
and pure summary functions over the record table.

    df = simulate(players=4, games=10_000, policies=["greedy", "random"] * 2, seed=1)
    win_rates(df, by="policy")

Rule options (defaults in OPTIONS; documented in docs/bremen.md) and policies
("random", "greedy", "greedy:climb=0,knock=3", "lookahead:playouts=100", a policy of
your own "path/to/file.py:function") are named, never numbered, here.
"""
from __future__ import annotations

import copy
import difflib
import math
import time
from typing import Callable

import numpy as np
import pandas as pd

from etappe.analysis.runio import BATCH_ROWS, check_game, numba_threads, package_version
from etappe.analysis.stats import (SKILL_MOMENTS, IntHistogram, bonferroni_z, chisquare_uniform, curves_from_sums, ratio_interval,
                                   skill_moments, skill_table_from_moments, wilson_interval)
from etappe.kernels import bremen as K
from etappe.kernels.bremen_board import Board, BoardError, load_board
from etappe.kernels.options import (did_you_mean, number_text, option_value, policies_by_seat, policy_parameters,
                                    run_numbers, whole)
from etappe.kernels.user_policy import (UserPolicyError, compile_user_policy, is_user_policy, raised_in_policy,
                                        source_hash)

__all__ = [
    "simulate", "check_players", "PLAYERS", "from_run_file", "load_board", "Board", "BoardError", "Game", "options_row", "parse_policy",
    "win_rates", "first_seat_advantage", "seat_uniformity", "points_by_source", "length_stats", "has_tension",
    "game_tension", "tension_table", "paired_metrics", "progress_table", "head_to_head", "capped_rate",
    "conclusions", "sweep_summary", "sweep_boards", "sweep_factor_values", "SWEEP_FACTORS", "RunSummary",
    "summarize", "summarize_run_file", "OPTIONS", "GREEDY_DEFAULTS", "LOOKAHEAD_DEFAULTS", "PAIRED_METRICS",
]

SIZES = {"rooster": 1, "cat": 2, "dog": 3, "donkey": 4}
SIZE_NAMES = {v: k for k, v in SIZES.items()}

# The rule options; options_row puts each in its slot of the kernel's O_* row, by name.
OPTIONS = {  # name: (default, the values it may take; None: any of the default's kind)
    "harder": (False, None),            # variant: extra roll only without sending anyone home
    "turbulent": (False, None),         # variant: mixed start stacks
    "tie_rule": ("mover_first", ("mover_first", "mover_last")),
    "foreign_onto": ("direct", ("direct", "stack")),
    "bridge_stack": (False, None),
    "target": (7, None),
    "max_turns": (2000, None),
    "robber_field": ("open", ("open", "closed")),
    "robber_stop": ("anywhere", ("anywhere", "forest")),  # where a robber move may end
    "harder_scope": ("move", ("move", "roll")),  # the harder variant judged per move or per roll
    "neutral_storm_point": ("nobody", ("nobody", "mover")),  # a stormed neutral animal's point
    "first_to_target": ("most_points", ("most_points", "last_on_turn")),  # reaching the target together
    "turbulent_no_fit": ("fewest", ("fewest", "home")),  # a turbulent return no placement keeps the rule for
    "both_dice": ("when_possible", ("when_possible", "free")),  # must the first move leave a second?
    "one_die": ("either", ("either", "larger")),  # which die when only one can be used
}
# Options that mean something only with another option or player count:
# name -> (test of (full options, players; None: not known yet), why not, in
# which {players} stands for the player count where that is the reason). A
# value other than the default where it means nothing is refused, not
# ignored (as Tape l'étape refuses endurance_stages in sprint mode).
NEEDS = {
    "harder_scope": (lambda full, players: full["harder"],
                     "applies to harder=true only (it says how the harder variant is judged); add harder=true"),
    "turbulent_no_fit": (lambda full, players: full["turbulent"],
                         "applies to turbulent=true only (it says how the turbulent variant puts animals back); "
                         "add turbulent=true"),
    "one_die": (lambda full, players: full["both_dice"] == "when_possible",
                "applies to both_dice=when_possible only (under both_dice=free the first move, and so its die, "
                "is the player's choice whatever the second die can do); drop both_dice=free"),
    "neutral_storm_point": (lambda full, players: players in (None, 3),
                            "applies to 3 players only: with 2 or 4 every colour has a player, so no animal "
                            "is neutral (this game has {players} players)"),
}

# Whole-number options: (lowest, highest). Beyond them a game only runs
# longer (a cap of billions of turns never ends in practice) or overflows
# the kernel's 32-bit counters.
OPTION_RANGES = {"target": (1, 100), "max_turns": (1, 100_000)}

GREEDY_DEFAULTS = {
    "storm": 10.0, "chase": 4.0, "climb": 2.0, "knock": 1.0, "own_home": 1.0,
    "progress": 0.5, "build": 0.5, "leader": 1.0, "noise": 0.01,
}
# the look-ahead: its own parameters on top of the greedy ones (used in its playouts)
LOOKAHEAD_DEFAULTS = {"playouts": 800.0, "horizon": 4.0, "confidence": 2.0}
# name -> (what a value must be, test); a value that fails is refused, never
# clamped (as the race games and Tape l'étape do). Weights may be negative
# (a weight below 0 makes the policy avoid what it scores).
_WEIGHT = ("a number -1000 to 1000", lambda v: -1000 <= v <= 1000)
PARAMETER_RANGES = {
    **{key: _WEIGHT for key in ("storm", "chase", "climb", "knock", "own_home", "progress", "build", "leader")},
    "noise": ("a number 0 to 1000", lambda v: 0 <= v <= 1000),
    "playouts": ("a whole number 1 to 1000000", lambda v: 1 <= v <= 1_000_000 and float(v).is_integer()),
    "horizon": ("a whole number of turns 0 to 100000 (0: to the end of the game)",
                lambda v: 0 <= v <= 100_000 and float(v).is_integer()),
    "confidence": ("a number 0 to 100 (standard errors)", lambda v: 0 <= v <= 100),
}
_PARAM_INDEX = {
    "storm": K.P_STORM, "chase": K.P_CHASE, "climb": K.P_CLIMB, "knock": K.P_KNOCK,
    "own_home": K.P_OWN_HOME, "progress": K.P_PROGRESS, "build": K.P_BUILD,
    "leader": K.P_LEADER, "noise": K.P_NOISE,
    "playouts": K.P_PLAYOUTS, "horizon": K.P_HORIZON, "confidence": K.P_CONFIDENCE,
}
_RECORD_COLUMNS = {
    "winner_seat": K.R_WINNER, "capped": K.R_CAPPED, "turns": K.R_TURNS, "rolls": K.R_ROLLS,
    "robber_moves": K.R_ROBBER_MOVES, "sent_home_by_robber": K.R_SENT_ROBBER,
    "sent_home_by_knock": K.R_SENT_KNOCK, "extra_rolls": K.R_EXTRA_ROLLS,
    "extra_roll_chain_max": K.R_CHAIN_MAX, "storms": K.R_STORMS, "chases": K.R_CHASES,
    "first_seat": K.R_FIRST_SEAT,
}
SOURCES = ("storm", "robber_bonus", "chase")


def options_row(options: dict | None = None, players: int | None = None) -> tuple[np.ndarray, dict]:
    """(kernel option row, the full option dict with defaults filled in).

    An option set away from its default where it means nothing (NEEDS) is
    refused; `players` None skips the checks that depend on the player count."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS), key=str)
    if unknown:
        close = [f"{u!r}: did you mean {m[0]!r}?" for u in unknown
                 if isinstance(u, str) and (m := difflib.get_close_matches(u, OPTIONS, 1))]
        raise ValueError(f"unknown Bremen rule option(s) {', '.join(map(repr, unknown))}"
                         f"{' (' + '; '.join(close) + ')' if close else ''}; "
                         f"known: {', '.join(OPTIONS)}")
    full = {}
    for name, (default, choices) in OPTIONS.items():
        try:
            full[name] = option_value(name, options.get(name, default), default, choices)
        except ValueError as problem:
            raise ValueError(f"Bremen rule option {problem}") from None
        if name in OPTION_RANGES and not OPTION_RANGES[name][0] <= full[name] <= OPTION_RANGES[name][1]:
            raise ValueError(f"Bremen rule option {name}: must be {OPTION_RANGES[name][0]} to "
                             f"{OPTION_RANGES[name][1]}, not {full[name]}")
    for name, (holds, why_not) in NEEDS.items():
        if full[name] != OPTIONS[name][0] and not holds(full, players):
            raise ValueError(f"Bremen rule option {name}={full[name]} {why_not.format(players=players)}")
    row = np.zeros(K.N_OPT, np.int64)
    row[K.O_HARDER] = full["harder"]
    row[K.O_TURBULENT] = full["turbulent"]
    row[K.O_TIE] = 0 if full["tie_rule"] == "mover_first" else 1
    row[K.O_FOREIGN_STACK] = full["foreign_onto"] == "stack"
    row[K.O_BRIDGE_STACK] = full["bridge_stack"]
    row[K.O_TARGET] = full["target"]
    row[K.O_MAX_TURNS] = full["max_turns"]
    row[K.O_ROBBER_CLOSED] = full["robber_field"] == "closed"
    row[K.O_HARDER_ROLL] = full["harder_scope"] == "roll"
    row[K.O_NEUTRAL_TO_MOVER] = full["neutral_storm_point"] == "mover"
    row[K.O_FIRST_TO_TARGET] = full["first_to_target"] == "last_on_turn"
    row[K.O_TURBULENT_HOME] = full["turbulent_no_fit"] == "home"
    row[K.O_ROBBER_FOREST_STOP] = full["robber_stop"] == "forest"
    row[K.O_BOTH_DICE_FREE] = full["both_dice"] == "free"
    row[K.O_ONE_DIE_LARGER] = full["one_die"] == "larger"
    return row, full


def parse_policy(spec: str) -> tuple[int, np.ndarray, str]:
    """'random' | 'greedy' | 'greedy:knock=3,climb=0' | 'lookahead:playouts=800,horizon=4'
    | 'path/to/file.py:function' -> (id, parameter row, canonical name).

    A policy of your own (docs/bremen.md) has id POL_USER (the run numbers
    its user policies) and greedy's default row, with which greedy answers
    its robber moves; a file that does not compile to the signature is refused."""
    if not isinstance(spec, str):
        raise ValueError(f"a policy is a string such as 'greedy', not {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params = np.zeros(K.N_PARAM)
    if name == "random":
        if rest:
            raise ValueError(f"policy 'random' takes no parameters: {spec!r}")
        return K.POL_RANDOM, params, "random"
    if name.endswith(".py"):
        user_policy(spec.strip())
        for key, value in GREEDY_DEFAULTS.items():
            params[_PARAM_INDEX[key]] = value
        return K.POL_USER, params, spec.strip()
    if name not in ("greedy", "lookahead"):
        raise ValueError(f"unknown Bremen policy {name!r}; known: random, greedy[:name=value,...], "
                         "lookahead[:name=value,...]")
    defaults = dict(GREEDY_DEFAULTS)
    if name == "lookahead":
        defaults.update(LOOKAHEAD_DEFAULTS)
    values = defaults | policy_parameters(spec, name, rest, {key: PARAMETER_RANGES[key] for key in defaults})
    for key, value in values.items():
        params[_PARAM_INDEX[key]] = value
    changed = ",".join(f"{k}={number_text(values[k])}" for k in defaults if values[k] != defaults[k])
    pid = K.POL_GREEDY if name == "greedy" else K.POL_LOOKAHEAD
    return pid, params, name + (f":{changed}" if changed else "")


def user_policy(spec: str):
    """`path/to/file.py:function` compiled to K.USER_POLICY_SIGNATURE (a
    UserPolicyError, a ValueError, says why it cannot be), once per version
    of the file."""
    return compile_user_policy(spec, K.USER_POLICY_SIGNATURE, K.USER_PARAMETER_NAMES)


def policy_sources(policies: list[str]) -> dict:
    """{user policy: hash of its file} for the policies of your own among
    `policies` (as the race games record them): a run's metadata and
    identity notice an edited file."""
    return {p.strip(): source_hash(p.strip()) for p in policies if is_user_policy(p)}


def seat_policies(policies: list[str], players: int) -> tuple[list, np.ndarray, np.ndarray, tuple]:
    """(parse_policy of each seat's spec, kernel ids [4], parameter rows
    [4, N_PARAM], the kernels' `parts` argument). The distinct user policies
    are numbered in order of their first seat: K.POL_USER + k."""
    parsed = [parse_policy(p) for p in policies]
    users = list(dict.fromkeys(name for pid, _, name in parsed if pid == K.POL_USER))
    ids = [K.POL_USER + users.index(name) if pid == K.POL_USER else pid for pid, _, name in parsed]
    pols = np.array(ids + [0] * (4 - players), np.int64)
    params = np.zeros((4, K.N_PARAM))
    for s, p in enumerate(parsed):
        params[s] = p[1]
    return parsed, pols, params, K.lookahead_for(pols, [user_policy(name) for name in users])


def policy_error(policy: str, seat: int, game: int) -> UserPolicyError:
    """A user policy answered with an index that is not a legal move."""
    return UserPolicyError(f"user policy {policy!r} on seat {seat} answered with a move index outside "
                      f"0 .. n_moves-1 in game {game}; a policy returns the index of one of the n_moves legal moves")


def _check_options_type(options) -> None:
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict of rule option name: value, e.g. {{'harder': True}}, "
                        f"not {type(options).__name__}")


def _board(board: Board | str | None) -> Board:
    return board if isinstance(board, Board) else load_board(board)


PLAYERS = (2, 3, 4)
DEFAULT_POLICY = "greedy"


def check_players(players: int) -> int:
    whole("players", players, -math.inf, math.inf)  # the type: 4.0 is refused, as a count of games is
    if players not in PLAYERS:
        raise ValueError(f"Bremer Stadtmusikanten takes 2 to 4 players, got {players}")
    return int(players)


def simulate(players: int = 4, games: int = 1000, policies: list[str] | None = None, seed: int = 0,
             board: Board | str | None = None, options: dict | None = None, threads: int | None = None,
             progress: Callable[[int, int], None] | None = None, first_game: int = 0,
             chunk: int = 5000) -> pd.DataFrame:
    """Play games first_game .. first_game + games - 1; one row per game.

    players: 2 to 4.
    games: games to play (0: an empty table with every column).
    policies: one spec for every seat (a string or a list of one), one per
        seat, or a list that repeats around the table (A, B at 4 seats:
        A, B, A, B); "random", "greedy", "greedy:climb=0,knock=3",
        "lookahead:playouts=100", "path/to/file.py:function" (docs/bremen.md).
        Default: "greedy" on every seat, as on the command line.
    seed: root seed (0 to 2**63 - 1, as the command line's --seed). Game i uses keys derived from (seed,
        first_game + i): any game can be replayed alone, and chunking or
        threads never change a result.
    board: a Board, a board file path, or None for the default board.
    options: rule options, {name: value} (OPTIONS; docs/bremen.md).
    threads: Numba threads for this call (default: all cores).
    progress: progress(done, total) is called after each chunk.
    first_game: the number of the first game (first_game + games <= 2**63).
    chunk: games per kernel call (>= 1); it never changes a result.

    Returns a DataFrame, one row per game (columns: docs/bremen.md), with
    the run's identity in `df.attrs`: game ("bremen"), board, board_path,
    board_hash, board_reconstruction, players, policies (canonical specs
    by seat), seed, games, first_game, options (every option, defaults
    filled in), version, wall_seconds, games_per_s, progress_rounds, and
    policy_sources for policies of your own. Write it as a run file with
    `etappe.analysis.runio.write_parquet(df, path, df.attrs)`; read one
    back with `from_run_file`.

    Raises TypeError for a count or seed that is not a whole number, and
    ValueError naming the problem: players, games, seed or chunk out of
    range, a policy list that does not fit the table, an unknown policy,
    parameter or rule option, a bad value (BoardError, a ValueError, for a
    bad board file; UserPolicyError, a ValueError, for a policy of your own
    that does not compile or plays an illegal move).
    """
    check_players(players)
    games, seed, first_game = run_numbers("game", games, seed, first_game)
    chunk = whole("chunk", chunk, low=1)
    policies = policies_by_seat(policies, players, DEFAULT_POLICY)
    _check_options_type(options)
    b = _board(board)
    opts, full_options = options_row(options, players)
    parsed, pols, params, parts = seat_policies(policies, players)
    out = np.zeros((games, K.N_REC), np.int32)
    with numba_threads(threads):
        # the kernel is compiled or loaded on no games first: the time is that of the games
        K.play_batch(np.uint64(seed), first_game, players, pols, params, b.kind, b.adj, b.deg, b.dist, b.binfo,
                     opts, out[:0], parts)
        if progress:
            progress(0, games)  # the kernel is ready
        start = time.perf_counter()
        for lo in range(0, games, chunk):
            hi = min(games, lo + chunk)
            with raised_in_policy(list(policy_sources(policies)), UserPolicyError):
                K.play_batch(np.uint64(seed), first_game + lo, players, pols, params,
                             b.kind, b.adj, b.deg, b.dist, b.binfo, opts, out[lo:hi], parts)
            failed = np.flatnonzero(out[lo:hi, K.R_POLICY_ERROR])
            if failed.size:
                seat = int(out[lo + failed[0], K.R_POLICY_ERROR]) - 1
                raise policy_error(parsed[seat][2], seat, first_game + lo + int(failed[0]))
            if progress:
                progress(hi, games)
    wall = time.perf_counter() - start
    df = records_frame(out, players, first_game)
    df.attrs.update(
        game="bremen", board=b.name, board_path=b.path, board_hash=b.hash,
        board_reconstruction=b.reconstruction, seed=int(seed), games=int(games), first_game=int(first_game),
        players=players, policies=[p[2] for p in parsed], options=full_options,
        version=package_version(), wall_seconds=wall, games_per_s=games / wall if wall > 0 else float("nan"),
        progress_rounds=list(K.PROGRESS_ROUNDS),
    )
    sources = policy_sources(policies)
    if sources:  # only runs with a policy of your own have them: the others' metadata is as before
        df.attrs["policy_sources"] = sources
    return df


def records_frame(out: np.ndarray, players: int, first_game: int = 0) -> pd.DataFrame:
    """Kernel record rows of games first_game, first_game + 1, ... -> the documented record table."""
    numbers = np.int64(first_game) + np.arange(len(out), dtype=np.int64)
    cols = {"game": numbers, "seed_index": numbers.copy()}
    for name, j in _RECORD_COLUMNS.items():
        cols[name] = out[:, j]
    cols["capped"] = cols["capped"].astype(bool)
    cols["animals_sent_home"] = out[:, K.R_SENT_ROBBER] + out[:, K.R_SENT_KNOCK]
    for s in range(players):
        base = K.R_POINTS + 4 * s
        cols[f"points_s{s}"] = out[:, base]
        for j, source in enumerate(SOURCES):
            cols[f"points_{source}_s{s}"] = out[:, base + 1 + j]
    cols["lead_changes"] = out[:, K.R_LEAD_CHANGES]
    for s in range(players):
        cols[f"max_deficit_s{s}"] = out[:, K.R_MAX_DEFICIT + s]
    for s in range(players):
        for k, r in enumerate(K.PROGRESS_ROUNDS):
            cols[f"points_r{r}_s{s}"] = out[:, K.R_PROGRESS + K.N_PROGRESS * s + k]
    return pd.DataFrame(cols)


def from_run_file(path) -> pd.DataFrame:
    """A run file written by the CLI, with its metadata back in df.attrs."""
    from etappe.analysis.runio import read_parquet

    df, meta = read_parquet(path)
    check_game(meta, "bremen", f"{path} is")
    df.attrs.update(meta)
    return df


# --- summaries: record table in, tidy table out ---------------------------------
# Every table of a run is a RunSummary method, so that a report of millions of
# games adds the run up chunk by chunk; the functions of the same name give it
# for a whole record table. Only what is per game lives outside it.

def has_tension(df: pd.DataFrame) -> bool:
    """Does the record table hold the tension and progress columns (runs
    recorded before they were added do not)?"""
    return "lead_changes" in df.columns and "max_deficit_s0" in df.columns


def game_tension(df: pd.DataFrame) -> pd.DataFrame:
    """Per game: `lead_changes` (times the sole points leader changed, after
    whole turns; a tie keeps the last leader, the first is no change),
    `winner_seat`, `winner_deficit` (the winner's largest gap in points behind
    the leader after any turn; 0: never behind) and `final_gap` (the winner's
    points minus the best other seat's: 0 when the tie rule decided). Games
    without a winner (capped) have no deficit or gap (NaN)."""
    players = df.attrs["players"]
    winner = df["winner_seat"].to_numpy()
    has = winner >= 0
    w = np.where(has, winner, 0)
    rows = np.arange(len(df))
    deficit = df[[f"max_deficit_s{s}" for s in range(players)]].to_numpy()[rows, w]
    points = df[[f"points_s{s}" for s in range(players)]].to_numpy().astype(float)
    others = np.where(np.eye(players, dtype=bool)[w], -np.inf, points).max(axis=1)
    return pd.DataFrame({"game": df["game"].to_numpy(), "lead_changes": df["lead_changes"].to_numpy(),
                         "winner_seat": winner, "winner_deficit": np.where(has, deficit, np.nan),
                         "final_gap": np.where(has, points[rows, w] - others, np.nan)})


# The per-game metrics that a comparison of two variants (analysis/variants.py)
# differences game by game: key -> (label, unit); won_s{s} rows follow per seat.
PAIRED_METRICS = {
    "turns": ("turns per game", "turns"),
    "rolls": ("rolls per game", "rolls"),
    "capped": ("turn-cap (stall) rate", "rate"),
    "first_position_won": ("first player's win rate (games with a winner)", "rate"),
    "lead_changes": ("lead changes per game", "changes"),
    "winner_deficit": ("winner's largest deficit", "points"),
    "final_gap": ("final gap (winner minus the best other seat)", "points"),
    "animals_sent_home": ("animals sent home per game", "animals"),
    "storms": ("houses stormed per game", "storms"),
    "chases": ("robber chases per game", "chases"),
    "extra_rolls": ("extra rolls per game", "rolls"),
}


def paired_metrics(df: pd.DataFrame) -> pd.DataFrame:
    """Per game (indexed by game): the PAIRED_METRICS and `won_s{s}`, 1 when
    seat s won (a game without a winner is a loss for every seat). The
    first player's win, the winner's deficit and the final gap are NaN in a
    game without a winner, so such games leave those metrics' pairs
    (game_tension); runs
    recorded before the tension columns existed have none of the three."""
    winner = df["winner_seat"].to_numpy()
    out = pd.DataFrame(index=pd.Index(df["game"].to_numpy(), name="game"))
    for key in ("turns", "rolls", "capped", "animals_sent_home", "storms", "chases", "extra_rolls"):
        out[key] = df[key].to_numpy(float)
    # among games with a winner, as the race designs count it: stalled games would pull a fair first
    # player's rate below 1 / players, and the distance from the fair share would blame the first seat
    out["first_position_won"] = np.where(winner >= 0, (winner == df["first_seat"].to_numpy()).astype(float), np.nan)
    if has_tension(df):
        tension = game_tension(df)
        for key in ("lead_changes", "winner_deficit", "final_gap"):
            out[key] = tension[key].to_numpy(float)
    for s in range(df.attrs["players"]):
        out[f"won_s{s}"] = (winner == s).astype(float)
    return out


LENGTH_COLUMNS = ("turns", "rolls", "robber_moves", "animals_sent_home", "sent_home_by_robber", "sent_home_by_knock",
                  "extra_rolls", "extra_roll_chain_max", "storms", "chases")
TENSION_LABELS = {"lead_changes": "lead changes per game", "winner_deficit": "winner's largest deficit (points)",
                  "final_gap": "final gap: winner minus the best other (points)"}
PROGRESS_SUMS = ("games", "n", "s", "ss", "tt", "kk", "kt")  # per (group, round): see RunSummary.add


class RunSummary:
    """Every table of a run, from additive counts, sums and exact integer
    histograms (stats.IntHistogram): `add` a chunk of records (any rows of
    the run, in any order), `merge` two summaries of the same run. A run
    file is read a row group at a time (summarize_run_file), so the memory
    of its report does not grow with its games; the module functions of the
    same names (win_rates(df), ...) are these tables of a whole record table.

        s = summarize_run_file("run.parquet")      # or summarize(df)
        s.win_rates("policy"); s.progress_table("position")
    """

    def __init__(self, attrs: dict):
        check_game(attrs, "bremen")
        self.attrs = dict(attrs)
        self.players = int(self.attrs["players"])
        self.policies = list(self.attrs["policies"])
        self.rounds = list(self.attrs.get("progress_rounds") or K.PROGRESS_ROUNDS)
        self.names = list(dict.fromkeys(self.policies))  # policies in order of first seat
        self.games = 0
        self.index_min, self.index_max = None, None
        self.decided = 0
        self.capped = 0
        self.wins_seat = np.zeros(self.players, np.int64)
        self.wins_position = np.zeros(self.players, np.int64)
        self.source_points = np.zeros(len(SOURCES), np.int64)
        # over games of a game's storm points x and all its points y: sum x^2, y^2, x y (conclusions)
        self.storm_moments = np.zeros(3, np.int64)
        self.lengths = {c: IntHistogram() for c in LENGTH_COLUMNS}
        self.tension = None  # None: no chunk yet; then has_tension of every chunk
        self.tension_hists = {k: IntHistogram() for k in TENSION_LABELS}
        self.skill = np.zeros((len(self.names), len(self.names), len(SKILL_MOMENTS)), np.int64)
        self.progress = {by: np.zeros((len(self.groups(by)), len(self.rounds), len(PROGRESS_SUMS)), np.int64)
                         for by in ("seat", "policy", "position")}

    def groups(self, by: str) -> list[str]:
        """The groups of progress_table(by), in its order."""
        if by == "seat":
            return [f"seat {s}: {p}" for s, p in enumerate(self.policies)]
        if by == "policy":
            return list(self.names)
        return [f"position {p + 1}" for p in range(self.players)]  # 1 = the starting player, as the race reports

    def add(self, df: pd.DataFrame) -> "RunSummary":
        """Count in a chunk of the run's records; returns self."""
        if len(df) == 0:
            return self
        players = self.players
        winner = df["winner_seat"].to_numpy().astype(np.int64)
        first = df["first_seat"].to_numpy().astype(np.int64)
        index = df["seed_index"].to_numpy()
        self.games += len(df)
        low, high = int(index.min()), int(index.max())
        self.index_min = low if self.index_min is None else min(self.index_min, low)
        self.index_max = high if self.index_max is None else max(self.index_max, high)
        has = winner >= 0
        self.decided += int(has.sum())
        self.capped += int(df["capped"].to_numpy().sum())
        self.wins_seat += np.bincount(winner[has], minlength=players)[:players]
        self.wins_position += np.bincount((winner[has] - first[has]) % players, minlength=players)[:players]
        # by_source[j, g]: the points of source j in game g, every seat's together
        by_source = np.stack([sum(df[f"points_{src}_s{s}"].to_numpy().astype(np.int64) for s in range(players))
                              for src in SOURCES])
        self.source_points += by_source.sum(axis=1)
        storm, total = by_source[SOURCES.index("storm")], by_source.sum(axis=0)
        self.storm_moments += [storm @ storm, total @ total, storm @ total]
        for c in LENGTH_COLUMNS:
            self.lengths[c] = self.lengths[c].merge(IntHistogram.of(df[c].to_numpy()))
        points = np.stack([df[f"points_s{s}"].to_numpy() for s in range(players)]).astype(np.int64)
        codes = np.array([self.names.index(p) for p in self.policies], np.int64)
        # a seat's finish: the winner ahead of everyone, then more points
        keys = [points[s] + 1000 * (winner == s) for s in range(players)]
        self.skill += skill_moments(np.repeat(codes[:, None], len(df), axis=1), keys, len(self.names))
        tension = has_tension(df)
        self.tension = tension if self.tension is None else self.tension and tension
        if not self.tension:
            return self
        per_game = game_tension(df)
        for key in TENSION_LABELS:
            self.tension_hists[key] = self.tension_hists[key].merge(IntHistogram.of(per_game[key].to_numpy()))
        # y[s, r, g]: seat s's points after round r of game g
        y = np.stack([np.stack([df[f"points_r{r}_s{s}"].to_numpy() for r in self.rounds]) for s in range(players)])
        y = y.astype(np.int64)
        position = (np.arange(players)[:, None] - first[None, :]) % players  # [seat, game]
        for by in self.progress:
            if by == "seat":
                member = np.eye(players, dtype=np.int64)[:, :, None]  # [group, seat, 1]
            elif by == "policy":
                member = (np.arange(len(self.names))[:, None] == codes[None, :]).astype(np.int64)[:, :, None]
            else:
                member = (np.arange(players)[:, None, None] == position[None, :, :]).astype(np.int64)
            member = np.broadcast_to(member, (member.shape[0], players, len(df)))
            k = member.sum(axis=1)                              # [group, game]: the group's seats in a game
            t = np.einsum("pgn,grn->prn", member, y)            # [group, round, game]: their points summed
            yy = np.einsum("pgn,grn->pr", member, y * y)
            present = (k > 0)[:, None, :]
            sums = self.progress[by]
            sums[:, :, 0] += present.sum(axis=2)
            sums[:, :, 1] += k.sum(axis=1)[:, None]
            sums[:, :, 2] += t.sum(axis=2)
            sums[:, :, 3] += yy
            sums[:, :, 4] += (t * t).sum(axis=2)
            sums[:, :, 5] += (k * k).sum(axis=1)[:, None]
            sums[:, :, 6] += (k[:, None, :] * t).sum(axis=2)
        return self

    def merge(self, other: "RunSummary") -> "RunSummary":
        """A new summary of both (two parts of one run)."""
        out = copy.deepcopy(self)
        out.games += other.games
        for name in ("index_min", "index_max"):
            mine, theirs = getattr(self, name), getattr(other, name)
            pick = min if name == "index_min" else max
            setattr(out, name, theirs if mine is None else mine if theirs is None else pick(mine, theirs))
        for name in ("decided", "capped", "wins_seat", "wins_position", "source_points", "storm_moments", "skill"):
            setattr(out, name, getattr(self, name) + getattr(other, name))
        out.lengths = {c: self.lengths[c].merge(other.lengths[c]) for c in LENGTH_COLUMNS}
        out.tension = other.tension if self.tension is None else self.tension if other.tension is None \
            else self.tension and other.tension
        out.tension_hists = {k: self.tension_hists[k].merge(other.tension_hists[k]) for k in TENSION_LABELS}
        out.progress = {by: self.progress[by] + other.progress[by] for by in self.progress}
        return out

    def has_tension(self) -> bool:
        """Did every chunk hold the tension and progress columns (has_tension)?"""
        return bool(self.tension)

    def win_rates(self, by: str = "seat") -> pd.DataFrame:
        """Win rate per seat or per policy among the decided games (capped games
        have no winner and are counted by capped_rate), with n and a 95 % Wilson
        interval, so that a fair share is 1 / players. Per policy, n counts seats
        played (a policy on two seats of a game counts twice, winning at most once);
        the policy keeps its seats in every game, so its win rate is the share of
        games it won over its k seats, and its interval is Wilson's over the games,
        divided by k: its seats' results in one game are not independent trials.
        """
        rows = []
        if by == "seat":
            for s in range(self.players):
                rows.append(_rate_row({"seat": s, "policy": self.policies[s]}, int(self.wins_seat[s]), self.decided))
        elif by == "policy":
            for pol in self.names:
                seats = [s for s, p in enumerate(self.policies) if p == pol]
                rows.append(_rate_row({"policy": pol, "seats": ",".join(map(str, seats))},
                                      int(self.wins_seat[seats].sum()), self.decided, len(seats)))
        else:
            raise ValueError("by must be 'seat' or 'policy'")
        return pd.DataFrame(rows)

    def first_seat_advantage(self) -> pd.DataFrame:
        """Win rate by position in the turn order (1 = the drawn first player)
        among the decided games."""
        return pd.DataFrame([_rate_row({"turn_position": p + 1}, int(self.wins_position[p]), self.decided)
                             for p in range(self.players)])

    def seat_uniformity(self, by: str = "position") -> dict:
        """Chi-square test that decided games are won equally often by each turn
        position, or (by="seat") by each seat: its corner and colour, a fair
        test of the board when every seat plays the same policy. `expected`:
        each position's (seat's) expected wins, for stats.small_expected_note."""
        table = self.first_seat_advantage() if by == "position" else self.win_rates(by="seat")
        test = chisquare_uniform(table["wins"].to_numpy())
        return {"chi2": test.statistic, "p_value": test.p_value, "games": test.n, "expected": test.expected}

    def points_by_source(self) -> pd.DataFrame:
        """Mean points per game and per seat from each source, and its share."""
        total_all = int(self.source_points.sum())
        games = self.games or float("nan")  # no game: no mean
        return pd.DataFrame([{"source": src, "points_per_game": int(total) / games,
                              "points_per_seat_game": int(total) / games / self.players,
                              "share": int(total) / total_all if total_all else float("nan")}
                             for src, total in zip(SOURCES, self.source_points)])

    def length_stats(self) -> pd.DataFrame:
        """Turns, rolls and robber statistics per game: n, mean and its 95 %
        interval, sd, median, 95th percentile, min, max (IntHistogram.describe,
        as in every other report)."""
        return pd.DataFrame([self.lengths[c].describe(c) for c in LENGTH_COLUMNS])

    def column_total(self, column: str) -> int:
        """The sum over the games of a column of length_stats."""
        values, counts = self.lengths[column].nonzero()
        return int((values * counts).sum())

    def tension_table(self) -> pd.DataFrame:
        """Lead changes per game, the winner's largest deficit and the final gap
        (game_tension) as distributions: n, mean and its 95 % interval, sd,
        median, p95, min, max."""
        return pd.DataFrame([self.tension_hists[key].describe(label) for key, label in TENSION_LABELS.items()])

    def capped_rate(self) -> dict:
        """Games that hit the turn cap: count, n, rate and its 95 % Wilson interval."""
        k, n = self.capped, self.games
        lo, hi = wilson_interval(k, n)
        return {"capped": k, "n": n, "rate": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi}

    def head_to_head(self) -> pd.DataFrame:
        """Skill matrix from one run (stats.skill_table_from_moments): for every
        ordered pair of different policies seated in the same game, how often
        the first finished ahead of the second (the winner is ahead of
        everyone; otherwise more points; equal points are level), with its
        interval clustered by game. Empty when every seat plays the same policy."""
        return skill_table_from_moments(self.names, self.skill, self.games)

    def progress_table(self, by: str = "policy") -> pd.DataFrame:
        """Mean points after each checkpoint round (attrs["progress_rounds"];
        a round is one turn per player from the starting player; a finished
        game's final points carry on), per seat, policy or turn position (1 =
        the starting player).

        Columns: group, round, n (seat-games), mean, sd, ci_low, ci_high (95 %
        interval of the mean), band_low/band_high (mean +- 1 sd, the spread of
        games). A policy on several seats pools them, its interval clustered by
        game (stats.curves_from_sums)."""
        if by not in self.progress:
            raise ValueError("by must be 'seat', 'policy' or 'position'")
        sums = self.progress[by].reshape(-1, len(PROGRESS_SUMS))
        games, n, s, ss, tt, kk, kt = (sums[:, j] for j in range(len(PROGRESS_SUMS)))
        keep = games > 0  # a group in no game has no row (as in a groupby)
        groups = np.repeat(np.array(self.groups(by), dtype=object), len(self.rounds))[keep]
        keys = pd.DataFrame({"group": groups,
                             "round": np.tile(np.array(self.rounds, np.int64), len(self.groups(by)))[keep]})
        clusters = {"g": games[keep], "t": s[keep], "k": n[keep], "tt": tt[keep], "kk": kk[keep], "kt": kt[keep]}
        return curves_from_sums(keys, n[keep], s[keep], ss[keep], clusters)

    def conclusions(self) -> pd.DataFrame:
        """The yes/no findings of one run that a board sweep checks on every board:
        each policy's win rate against the fair share (each seat's where one
        policy plays every seat), the starting player's, the storms' share of
        the points, the capped share. The board's findings are read together,
        so their intervals are widened by Bonferroni's correction over them
        (stats.bonferroni_z): a fair board gets a verdict other than
        'undecided' with a chance of 5 % at most, not 5 % a finding."""
        fair = 1 / self.players
        # one policy on every seat wins exactly 1/players: then the seats (corners, colours) are the finding
        by = "seat" if len(self.names) == 1 else "policy"
        groups = self.win_rates(by=by)
        z = bonferroni_z(len(groups) + 3)

        def side(wins, seats=1):
            lo, hi = wilson_interval(wins, self.decided, z)  # over the games, per seat (win_rates)
            if np.isnan(lo):  # no decided game
                return "n/a"
            return "above" if lo / seats > fair else "below" if hi / seats < fair else "undecided"

        rows = [{"finding": f"win rate of {'seat ' * (by == 'seat')}{r[by]} vs 1/{self.players}",
                 "verdict": side(r["wins"], 1 if by == "seat" else len(r["seats"].split(",")))}
                for _, r in groups.iterrows()]
        rows.append({"finding": f"win rate of the starting player vs 1/{self.players}",
                     "verdict": side(int(self.wins_position[0]))})
        # shares with their intervals: "yes" or "no" only when the interval says so
        storm, total = self.source_points[SOURCES.index("storm")], self.source_points.sum()
        _, lo, hi = ratio_interval(self.games, storm, total, *self.storm_moments, z=z)  # a game's points together
        rows.append({"finding": "storms give more than half the points", "verdict": yes_no(lo, hi, 0.5)})
        lo, hi = wilson_interval(self.capped, self.games, z)
        above = yes_no(lo, hi, 0.01)
        rows.append({"finding": "under 1 % of games capped", "verdict": {"yes": "no", "no": "yes"}.get(above, above)})
        return pd.DataFrame(rows)


def _rate_row(label: dict, wins: int, games: int, seats: int = 1) -> dict:
    """A win rate over `seats` seats in each of `games` games (n = seat-games),
    with its interval: Wilson's of the games won, per seat."""
    lo, hi = wilson_interval(wins, games)
    n = games * seats
    return {**label, "n": n, "wins": wins, "win_rate": wins / n if n else float("nan"), "ci_low": lo / seats,
            "ci_high": hi / seats}


def summarize(df: pd.DataFrame) -> RunSummary:
    """The RunSummary of a record table (its run identity in df.attrs)."""
    return RunSummary(df.attrs).add(df)


def summarize_run_file(path, batch_rows: int = BATCH_ROWS, progress: Callable[[int], None] | None = None) -> RunSummary:
    """The RunSummary of a run file, read a row group (at most `batch_rows`
    games) at a time; `progress(games)` is called after each."""
    from etappe.analysis.runio import iter_parquet, read_metadata

    meta = read_metadata(path)
    check_game(meta, "bremen", f"{path} is")
    summary = RunSummary(meta)
    for chunk in iter_parquet(path, batch_rows):
        summary.add(chunk)
        if progress:
            progress(len(chunk))
    return summary


# The tables of a whole record table: RunSummary's, which says what each holds.

def win_rates(df: pd.DataFrame, by: str = "seat") -> pd.DataFrame:
    """RunSummary.win_rates: per seat or policy, among the decided games."""
    return summarize(df).win_rates(by)


def first_seat_advantage(df: pd.DataFrame) -> pd.DataFrame:
    """RunSummary.first_seat_advantage: win rate by position in the turn order."""
    return summarize(df).first_seat_advantage()


def seat_uniformity(df: pd.DataFrame, by: str = "position") -> dict:
    """RunSummary.seat_uniformity: chi-square of the wins by turn position or seat."""
    return summarize(df).seat_uniformity(by)


def points_by_source(df: pd.DataFrame) -> pd.DataFrame:
    """RunSummary.points_by_source: mean points per game and seat from each source."""
    return summarize(df).points_by_source()


def length_stats(df: pd.DataFrame) -> pd.DataFrame:
    """RunSummary.length_stats: turns, rolls and robber statistics per game."""
    return summarize(df).length_stats()


def tension_table(df: pd.DataFrame) -> pd.DataFrame:
    """RunSummary.tension_table: the distributions of game_tension."""
    return summarize(df).tension_table()


def progress_table(df: pd.DataFrame, by: str = "policy") -> pd.DataFrame:
    """RunSummary.progress_table: mean points after each checkpoint round."""
    return summarize(df).progress_table(by)


def head_to_head(df: pd.DataFrame) -> pd.DataFrame:
    """RunSummary.head_to_head: the skill matrix of the policies at the table."""
    return summarize(df).head_to_head()


def capped_rate(df: pd.DataFrame) -> dict:
    """RunSummary.capped_rate: games that hit the turn cap."""
    return summarize(df).capped_rate()


def conclusions(df: pd.DataFrame) -> pd.DataFrame:
    """RunSummary.conclusions: the yes/no findings that a board sweep checks."""
    return summarize(df).conclusions()


def yes_no(low: float, high: float, threshold: float) -> str:
    """'yes' if the interval [low, high] lies above the threshold, 'no' if
    below, 'undecided' if it holds it, 'n/a' without an interval."""
    if np.isnan(low) or np.isnan(high) or np.isnan(threshold):
        return "n/a"
    return "yes" if low > threshold else "no" if high < threshold else "undecided"


# `etappe bremen sweep`: each factor of the ring boards (a ring_board parameter) -> the option that lists its values
SWEEP_FACTORS = {"road": "--roads", "middle": "--middles", "road_links": "--road-links", "house_links": "--house-links"}
SWEEP_BASE = dict(road=24, middle=16, inner=8, road_links=3, middle_links=0, house_links=1)  # the reconstruction


def sweep_boards(values: dict[str, list[int]]) -> list[dict]:
    """The ring_board parameters of a board sweep's boards: the default
    reconstruction, then one factor at a time, each of its listed values
    (a board already in the list is not played twice)."""
    boards = [dict(SWEEP_BASE)]
    for key in SWEEP_FACTORS:
        for value in values.get(key, []):
            variant = {**SWEEP_BASE, key: value}
            if variant not in boards:
                boards.append(variant)
    return boards


def sweep_factor_values(boards: list[dict]) -> dict[str, list[int]] | None:
    """The factor values whose sweep plays exactly these boards, in this
    order (sweep_boards' inverse); None when no sweep plays them."""
    values = {key: [board[key] for board in boards if board.get(key, SWEEP_BASE[key]) != SWEEP_BASE[key]]
              for key in SWEEP_FACTORS}
    return values if sweep_boards(values) == boards else None


def sweep_summary(runs: list[RunSummary | pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(finding x board verdict table with how many boards agree, per-board
    key numbers) of the runs of a board sweep: summaries (summarize_run_file)
    or record tables."""
    summaries = [run if isinstance(run, RunSummary) else summarize(run) for run in runs]
    verdicts = pd.concat([s.conclusions().set_index("finding")["verdict"].rename(s.attrs["board"])
                          for s in summaries], axis=1)
    modal = verdicts.mode(axis=1)[0]
    verdicts.insert(0, "boards_agreeing", (verdicts.eq(modal, axis=0)).sum(axis=1).astype(str)
                    + f" of {len(runs)}")
    verdicts.insert(0, "most_common", modal)
    verdicts.insert(0, "holds_everywhere", verdicts.iloc[:, 2:].nunique(axis=1) == 1)
    numbers = []
    for s in summaries:
        row = {"board": s.attrs["board"], "board_hash": s.attrs["board_hash"], "games": s.games,
               "mean_turns": s.length_stats().set_index("metric").loc["turns", "mean"],
               "capped_rate": s.capped_rate()["rate"]}
        by = "seat" if len(s.names) == 1 else "policy"  # as in conclusions
        for _, r in s.win_rates(by=by).iterrows():
            row[f"win_{'seat ' * (by == 'seat')}{r[by]}"] = r["win_rate"]
        row["storm_share"] = s.points_by_source().set_index("source").loc["storm", "share"]
        numbers.append(row)
    return verdicts.reset_index(), pd.DataFrame(numbers)


# --- scenario API: one position, for tests, replays and examples ----------------

class Game:
    """One game state with named animals and fields.

        g = Game(players=4); g.place(0, "donkey", "r05") ...
        g.first_moves(3, 2) -> {(die, colour, animal, field), ...}

    Dice are whole numbers 1 to 6 (the robber die's R is `robber_paths` and
    `rob` with the normal die). A position that breaks the rules (two animals
    of one size on a field, an animal on the house, the robber off the forest,
    bridges and house) is refused with a ValueError.
    """

    def __init__(self, board: Board | str | None = None, players: int = 4, options: dict | None = None,
                 seed: int = 0, game_index: int = 0):
        from etappe.kernels.rng import STREAM_CHANCE, game_key

        players = check_players(players)
        self.board = _board(board)
        self.opts, self.options = options_row(options, players)
        self.state = np.zeros(K.S_OCC + 4 * int(self.board.binfo[K.B_N]), np.int32)
        key = np.uint64(game_key(np.uint64(seed), game_index, STREAM_CHANCE))  # a Python int would retype the kernel
        K.init_game(self.state, players, self.board.binfo, self.opts, key)
        n = int(self.board.binfo[K.B_N])
        self._path = np.zeros(8, np.int64)
        self._it = np.zeros(8, np.int64)
        self._vis = np.zeros(n, np.int8)
        self._moves = np.zeros(32 * n, np.int64)
        self._buf = np.zeros(32 * n, np.int64)

    # positions
    def field(self, name: str) -> int:
        if name not in self.board.names:
            raise ValueError(f"no field {name!r} on {self.board.name}{did_you_mean(name, self.board.names)}")
        return self.board.index(name)

    def animal(self, colour: int, animal: str) -> int:
        """The animal's slot; colours 0 to 3 are always on the board (with fewer players, some seats hold two)."""
        if isinstance(colour, bool) or colour not in range(4):
            raise ValueError(f"colour {colour!r}: the colours are 0 to 3")
        if animal not in SIZES:
            raise ValueError(f"no animal {animal!r}; the animals are {', '.join(SIZES)}")
        return 4 * colour + SIZES[animal] - 1

    def pos(self, colour: int, animal: str) -> str:
        return self.board.names[self.state[K.S_POS + self.animal(colour, animal)]]

    def stack(self, field: str) -> list[tuple[int, str]]:
        """Animals on a field, bottom first, as (colour, animal)."""
        f = self.field(field)
        ids = [int(self.state[K.S_OCC + 4 * f + t]) for t in range(3, -1, -1)]
        return [(a >> 2, SIZE_NAMES[(a & 3) + 1]) for a in ids if a >= 0]

    def place(self, colour: int, animal: str, field: str) -> None:
        a, f = self.animal(colour, animal), self.field(field)
        if self.board.kind[f] == K.K_HOUSE:
            raise ValueError(f"no animal stands on the house {field!r}: storming it scores the stack and sends it home")
        there = int(self.state[K.S_OCC + 4 * f + (a & 3)])
        if there not in (-1, a):
            raise ValueError(f"{field!r} holds colour {there >> 2}'s {animal} already: a field holds one animal "
                             "of each size, the largest at the bottom")
        self.state[K.S_POS + a] = f
        K.rebuild_occ(self.state, self.board.binfo[K.B_N])

    def set_robber(self, field: str) -> None:
        f = self.field(field)
        if self.board.kind[f] not in (K.K_FOREST, K.K_BRIDGE, K.K_HOUSE):
            raise ValueError(f"the robber keeps to the forest fields, the bridges and its house, not {field!r}")
        self.state[K.S_ROBBER] = f

    @property
    def robber(self) -> str:
        return self.board.names[self.state[K.S_ROBBER]]

    @property
    def seat(self) -> int:
        return int(self.state[K.S_SEAT])

    @seat.setter
    def seat(self, value: int) -> None:
        self.state[K.S_SEAT] = value

    def points(self, seat: int) -> int:
        return int(self.state[K.S_POINTS + seat])

    # moves
    def _decode(self, m: int, dice: tuple[int, int]) -> tuple[int, int, str, str]:
        a = (m >> 16) & 0xFF
        return dice[m >> 24], a >> 2, SIZE_NAMES[(a & 3) + 1], self.board.names[m & 0xFFFF]

    @staticmethod
    def _die(d: int) -> int:
        """A die's face; the kernel's path buffers hold the steps of one die, so
        a larger number would write past them."""
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 6:
            raise ValueError(f"a die shows a whole number 1 to 6, not {d!r}")
        return int(d)

    def first_moves(self, d0: int, d1: int) -> set[tuple[int, int, str, str]]:
        """Legal first moves as (die, colour, animal, destination)."""
        d0, d1 = self._die(d0), self._die(d1)
        b = self.board
        tmp = np.empty_like(self.state)
        n = K.first_moves(self.state, d0, d1, self.seat, b.kind, b.adj, b.deg, self.opts, b.binfo,
                          self._moves, tmp, self._buf, self._path, self._it, self._vis)
        return {self._decode(int(m), (d0, d1)) for m in self._moves[:n]}

    def second_moves(self, d: int, first: tuple[int, str], first_field: str | None = None) -> set:
        """Legal second moves with die d after `first` = (colour, animal) moved
        (first_field: the own start field it landed on, if it did)."""
        d = self._die(d)
        b = self.board
        ff = self.field(first_field) if first_field else -1
        n = K.second_moves(self.state, d, 1, self.seat, self.animal(*first), ff, b.kind, b.adj, b.deg,
                           self.opts, self._moves, self._path, self._it, self._vis, len(self._moves))
        return {self._decode(int(m), (d, d)) for m in self._moves[:n]}

    def move(self, colour: int, animal: str, field: str) -> dict:
        """Play a move without checking legality; return what it did (`effects`: apply_move's bits)."""
        m = (self.animal(colour, animal) << 16) | self.field(field)
        eff = int(K.apply_move(self.state, self.seat, m, self.board.binfo, self.opts))
        K.check_end(self.state, self.seat, self.opts)
        return {"effects": eff, "climbed": bool(eff & K.E_CLIMB), "storm": bool(eff & K.E_STORM),
                "chase": bool(eff & K.E_CHASE), "sent_home": eff >> 8,
                "extra_roll": K.roll_earns(0, eff, self.opts) == 1 and not eff & K.E_STORM}

    def robber_paths(self, d: int) -> int:
        """How many robber moves of d fields there are."""
        d = self._die(d)
        b = self.board
        n, _ = K.robber_paths(self.state, d, self.seat, 0, 0, np.zeros(K.N_PARAM), b.kind, b.adj, b.deg,
                              b.dist, self._path, self._it, self._vis, np.uint64(0), self.opts[K.O_ROBBER_FOREST_STOP])
        return int(n)

    def rob(self, d: int, pick: int) -> int:
        """Play robber path number `pick` (0 to robber_paths(d) - 1) of length d;
        return animals sent home."""
        paths = self.robber_paths(d)
        if isinstance(pick, (bool, np.bool_)) or not isinstance(pick, (int, np.integer)) or not 0 <= pick < paths:
            has = f"{paths} paths of {d} fields (0 to {paths - 1})" if paths else f"no path of {d} fields"
            raise ValueError(f"the robber has {has}, not path {pick!r}")
        b = self.board
        sent, _ = K.robber_paths(self.state, d, self.seat, 1, pick, np.zeros(K.N_PARAM), b.kind, b.adj,
                                 b.deg, b.dist, self._path, self._it, self._vis, np.uint64(0),
                                 self.opts[K.O_ROBBER_FOREST_STOP])
        return int(sent)

    @property
    def winner(self) -> int:
        return int(self.state[K.S_WINNER])

    def errors(self) -> int:
        """kernels.bremen.state_errors of this position (0 = consistent)."""
        return int(K.state_errors(self.state, self.board.kind, self.board.binfo[K.B_N]))

    def play(self, policies: list[str], turns: int, seed: int = 0, game_index: int = 0, check=None):
        """Play up to `turns` turns (fewer if the game ends) with the batch
        driver's turn function, calling check(self) after each turn. The
        policies are those of `simulate` (one for every seat, one per seat, or
        a list that repeats around the table). The dice and the policies'
        choices are drawn afresh from the keys of (seed, game_index), from
        this position on: not game game_index of a run (for that record,
        `simulate(games=1, first_game=game_index, seed=seed, ...)`)."""
        from etappe.kernels.rng import STREAM_CHANCE, STREAM_POLICY_BASE, game_key

        b = self.board
        players = int(self.state[K.S_NPLAYERS])
        parsed, pols, params, parts = seat_policies(policies_by_seat(policies, players, DEFAULT_POLICY), players)
        key = np.uint64(game_key(np.uint64(seed), game_index, STREAM_CHANCE))
        pkeys = np.array([game_key(np.uint64(seed), game_index, STREAM_POLICY_BASE + s) for s in range(4)],
                         np.uint64)
        tmp = np.empty_like(self.state)
        for _ in range(turns):
            if self.winner >= 0:
                break
            self.state[K.S_TURNS] += 1
            with raised_in_policy(list(policy_sources([p[2] for p in parsed])), UserPolicyError):
                key = np.uint64(K.play_turn(self.state, self.seat, pols, params, pkeys, b.kind, b.adj, b.deg,
                                            b.dist, b.binfo, self.opts, self._moves, self._buf, tmp, self._path,
                                            self._it, self._vis, key, parts))
            if self.state[K.S_POLICY_ERROR]:
                seat = int(self.state[K.S_POLICY_ERROR]) - 1
                raise policy_error(parsed[seat][2], seat, game_index)
            if check is not None:
                check(self)
            if self.winner < 0:
                self.seat = (self.seat + 1) % players
