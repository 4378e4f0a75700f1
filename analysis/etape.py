"""Tape l'étape: simulate races and summarise the records (pandas).

`simulate` returns (races_df, stages_df): one row per race, one row per
stage, per-seat values in columns `<field>_<seat>`. Everything needed to
replay a race (seed, policies, options, version) is in `df.attrs`.
The summary functions are pure: record tables in, tidy tables out; every
table is a RunSummary's (`summarize(races_df, stages_df)`), whose counts,
sums and integer histograms add up chunk by chunk, so a run file of any
length is summarised a batch at a time (cli.etape.summarize_run).
"""
from __future__ import annotations

import copy
import math
import time
from typing import Callable

import numpy as np
import pandas as pd

from etappe.analysis.runio import check_game, numba_threads, package_version
from etappe.analysis.stats import (SKILL_MOMENTS, Z95, ChiSquare, IntHistogram, chisquare_uniform, curves_from_sums, holm,
                                   grouped_wilson, paired_from_values, ratio_interval, skill_moments,
                                   skill_table_from_moments, wilson_interval)
from etappe.kernels import etape as K
from etappe.kernels.options import (did_you_mean, number_text, option_value, policies_by_seat, policy_parameters,
                                    run_numbers, whole)

__all__ = [
    "simulate", "joker_value", "resolve_options", "parse_policy", "compact_spec", "short_names",
    "check_players", "win_shares", "win_rates", "seat_uniformity", "RunSummary", "summarize", "PARTS", "profile_stats",
    "profile_by_policy", "joker_holders", "joker_usage", "joker_stage_effect", "side_classifications", "anomalies",
    "race_turns", "length_table", "race_tension", "paired_metrics", "tension_table", "leader_holds", "progress_table",
    "head_to_head", "card_values", "OPTIONS", "POLICIES", "PLAYERS", "PAIRED_METRICS",
]

GAME = "etape"
PLAYERS = (3, 4, 5, 6)
DEFAULT_POLICY = "heuristic"

# Rule options: name -> (kernel index, default). See docs/etape.md.
OPTIONS = {
    "mode": (K.O_MODE, "sprint"),                  # "sprint" | "endurance"
    "endurance_stages": (K.O_ENDURANCE_STAGES, 5),
    "pick_after_deal": (K.O_PICK_AFTER_DEAL, True),
    "column_step": (K.O_COLUMN_STEP, "one"),       # "one" | "free"
    "extreme_start": (K.O_EXTREME_START, "in_play"),  # "in_play" | "dealt"
    "sprint_in_balai": (K.O_SPRINT_IN_BALAI, True),
    "blocked_winner": (K.O_BLOCKED_WINNER, False),
    "crevaison_stack": (K.O_CREV_STACK, True),
    "crevaison_anytime": (K.O_CREV_ANYTIME, True),
    "crevaison_carry": (K.O_CREV_CARRY, True),
    "self_crevaison_in_balai": (K.O_SELF_CREV_BALAI, True),
    "seat_order": (K.O_SEAT_ORDER, "from_picker"),  # "from_picker" | "from_seat_0"
    "gc_tie": (K.O_GC_TIE, "shared"),              # "shared" | "stage_places"
    "joker_refresh": (K.O_JOKER_REFRESH, "race"),  # "race" | "stage"
    "clm_direction": (K.O_CLM_DIRECTION, "both"),  # "both" | "up"
    "turn_cap": (K.O_TURN_CAP, 1000),
    "rotate_seats": (K.O_ROTATE, True),
    "jokers": (K.O_JOKERS, "crevaison,vitamine,braquet"),
    "withhold_seat": (K.O_WITHHOLD_SEAT, -1),
    "withhold_jokers": (K.O_WITHHOLD_MASK, ""),
    "low_card_seconds": (K.O_LOW_SECS, 10),
    "high_card_seconds": (K.O_HIGH_SECS, 30),
    "stage_win_bonus": (K.O_WIN_BONUS, 40),
    "balai_last_bonus": (K.O_BALAI_LAST, 60),
    "balai_second_bonus": (K.O_BALAI_SECOND, 30),
}
# Options that rule the Crevaison joker: they mean nothing in a game without it.
CREVAISON_OPTIONS = ("crevaison_stack", "crevaison_anytime", "crevaison_carry", "self_crevaison_in_balai")
OPTION_CHOICES = {"mode": ("sprint", "endurance"), "column_step": ("one", "free"),
            "extreme_start": ("in_play", "dealt"), "seat_order": ("from_picker", "from_seat_0"),
            "gc_tie": ("shared", "stage_places"), "joker_refresh": ("race", "stage"),
            "clm_direction": ("both", "up")}
# Whole-number options: (lowest, highest). A value beyond them would
# overflow the kernel's 64-bit numbers, or only make a stuck stage run longer.
OPTION_RANGES = {
    "endurance_stages": (1, 5),        # a player has 5 stage cards
    "turn_cap": (1, 100_000),          # a stage ends within about 48 lays plus passes
    "withhold_seat": (-1, max(PLAYERS) - 1),
    "low_card_seconds": (0, 10_000),
    "high_card_seconds": (0, 10_000),
    "stage_win_bonus": (0, 10_000),
    "balai_last_bonus": (0, 10_000),
    "balai_second_bonus": (0, 10_000),
}

# Policy families: name -> (kernel id, parameters). See docs/etape.md.
_RANDOM = {"joker_p": 0.25, "more_p": 0.5}
_HEURISTIC = {"value": 1.0, "own": 1.0, "block": 1.0, "crev_cards": 2, "vita_cards": 2,
              "braq_min": 3, "pick": 0, "balai_w": 0.5}
POLICIES = {
    "random": (K.POL_RANDOM, _RANDOM),
    "heuristic": (K.POL_HEURISTIC, _HEURISTIC),
    "high": (K.POL_HEURISTIC, {**_HEURISTIC, "value": 3.0, "own": 0.5, "block": 0.0}),
    "blocker": (K.POL_HEURISTIC, {**_HEURISTIC, "value": 0.5, "own": 0.5, "block": 3.0}),
    "connector": (K.POL_HEURISTIC, {**_HEURISTIC, "value": 0.5, "own": 3.0, "block": 0.5}),
    # The heuristic's weights drive its playouts and its other decisions.
    "lookahead": (K.POL_LOOKAHEAD, {**_HEURISTIC, "playouts": 200, "horizon": 0, "confidence": 2.0}),
}
# name -> (what a value must be, test); a value that fails is refused, never
# clamped (the race games' pattern, kernels/race_policies.py PARAMETER_RANGES)
_WHOLE = float.is_integer
PARAMETER_RANGES = {
    "joker_p": ("a probability, 0 to 1", lambda v: 0 <= v <= 1),
    "more_p": ("a probability, 0 to 1", lambda v: 0 <= v <= 1),
    "value": ("a number >= 0", lambda v: 0 <= v < math.inf),
    "own": ("a number >= 0", lambda v: 0 <= v < math.inf),
    "block": ("a number >= 0", lambda v: 0 <= v < math.inf),
    "crev_cards": ("a whole number of cards, 0 to 8", lambda v: 0 <= v <= 8 and _WHOLE(v)),
    "vita_cards": ("a whole number of cards, 0 to 8", lambda v: 0 <= v <= 8 and _WHOLE(v)),
    "braq_min": ("a whole number of cards, 1 to 8", lambda v: 1 <= v <= 8 and _WHOLE(v)),
    "pick": ("0 (the profile that fits the hand) or 1 (at random)", lambda v: v in (0.0, 1.0)),
    "balai_w": ("a number >= 0", lambda v: 0 <= v < math.inf),
    # The kernel takes these two as 64-bit integers: beyond 2^63 they would wrap round.
    "playouts": ("a whole number, 1 to 1000000", lambda v: 1 <= v <= 1_000_000 and _WHOLE(v)),
    "horizon": ("a whole number, 0 to 100000 (0: to the stage end)", lambda v: 0 <= v <= 100_000 and _WHOLE(v)),
    "confidence": ("a number >= 0", lambda v: 0 <= v < math.inf),
}
_PARAM_INDEX = {"joker_p": K.P_JOKER_P, "more_p": K.P_MORE_P, "value": K.P_W_VALUE,
                "own": K.P_W_OWN, "block": K.P_W_BLOCK, "crev_cards": K.P_CREV_CARDS,
                "vita_cards": K.P_VITA_CARDS, "braq_min": K.P_BRAQ_MIN, "pick": K.P_PICK,
                "balai_w": K.P_BALAI_W, "playouts": K.P_PLAYOUTS, "horizon": K.P_HORIZON,
                "confidence": K.P_CONFIDENCE}


def check_players(players: int) -> int:
    whole("players", players, -math.inf, math.inf)  # the type: 4.0 is refused, as a count of games is
    if players not in PLAYERS:
        raise ValueError(f"Tape l'étape is played by 3 to 6 players, not {players!r}")
    return int(players)


def _jokers_mask(text: str) -> int:
    mask = 0
    for name in filter(None, (p.strip() for p in str(text).split(","))):
        if name not in K.JOKER_NAMES:
            raise ValueError(f"unknown joker {name!r}; jokers are {', '.join(K.JOKER_NAMES)}")
        mask |= 1 << K.JOKER_NAMES.index(name)
    return mask


def resolve_options(options: dict | None) -> dict:
    """All options with defaults filled in; unknown names or values refused."""
    options = dict(options or {})
    unknown = set(options) - set(OPTIONS)
    if unknown:
        first = sorted(unknown)[0]
        raise ValueError(f"unknown etape option(s) {', '.join(sorted(map(repr, unknown)))}"
                         f"{did_you_mean(first, OPTIONS)}; known: {', '.join(sorted(OPTIONS))}")
    full = {}
    for name, (_, default) in OPTIONS.items():
        try:
            full[name] = option_value(name, options.get(name, default), default, OPTION_CHOICES.get(name))
        except ValueError as problem:
            raise ValueError(f"etape rule option {problem}") from None
    for name, (lowest, highest) in OPTION_RANGES.items():
        if not lowest <= full[name] <= highest:
            raise ValueError(f"etape rule option {name} must be {lowest} to {highest}, not {full[name]}")
    for name in ("jokers", "withhold_jokers"):
        try:
            mask = _jokers_mask(full[name])
        except ValueError as problem:
            raise ValueError(f"etape rule option {name}: {problem}") from None
        # one spelling per set of jokers (the run's identity): the order written and repeats change nothing
        full[name] = ",".join(joker for k, joker in enumerate(K.JOKER_NAMES) if mask >> k & 1)
    # Options that mean nothing without another are refused, not ignored.
    if full["mode"] == "sprint" and full["endurance_stages"] != OPTIONS["endurance_stages"][1]:
        raise ValueError(f"endurance_stages={full['endurance_stages']} applies to mode=endurance only "
                         "(sprint mode plays one stage per player); add mode=endurance")
    if (full["withhold_seat"] == -1) != (_jokers_mask(full["withhold_jokers"]) == 0):
        raise ValueError("withhold_seat and withhold_jokers go together: give both (e.g. withhold_seat=0, "
                         f"withhold_jokers=vitamine), not withhold_seat={full['withhold_seat']} with "
                         f"withhold_jokers={full['withhold_jokers']!r}")
    if not _jokers_mask(full["jokers"]) & K.J_CREVAISON:
        changed = [f"{name}={str(full[name]).lower()}" for name in CREVAISON_OPTIONS
                   if full[name] != OPTIONS[name][1]]
        if changed:
            raise ValueError(f"{', '.join(changed)} rule{'s' if len(changed) == 1 else ''} the Crevaison joker, "
                             f"which is not in the game (jokers={full['jokers']!r}); add crevaison to jokers")
    if not full["jokers"] and full["joker_refresh"] != OPTIONS["joker_refresh"][1]:
        raise ValueError(f"joker_refresh={full['joker_refresh']} rules the jokers, and none is in the game "
                         "(jokers=''); add jokers")
    return full


def option_vector(options: dict) -> np.ndarray:
    vec = np.zeros(K.N_OPTIONS, np.int64)
    for name, value in resolve_options(options).items():
        index = OPTIONS[name][0]
        if name in OPTION_CHOICES:
            value = OPTION_CHOICES[name].index(value)
        elif name in ("jokers", "withhold_jokers"):
            value = _jokers_mask(value)
        vec[index] = int(value)
    return vec


def parse_policy(spec: str) -> tuple[int, np.ndarray, str]:
    """'heuristic' or 'blocker:crev_cards=1,value=2' -> (id, params, canonical spec)."""
    if not isinstance(spec, str):
        raise ValueError(f"a policy is a string such as 'heuristic', not {spec!r}")
    name, _, rest = spec.partition(":")
    if name.endswith(".py"):
        raise ValueError(f"policy {spec!r}: a policy of your own (FILE.py:FUNCTION) plays the race games and Bremen only; "
                         f"Tape l'étape takes {', '.join(POLICIES)} with their parameters (docs/etape.md)")
    if name not in POLICIES:
        raise ValueError(f"unknown etape policy {name!r}{did_you_mean(name, POLICIES)}; known: {', '.join(POLICIES)}")
    pid, defaults = POLICIES[name]
    params = defaults | policy_parameters(spec, name, rest, {key: PARAMETER_RANGES[key] for key in defaults})
    row = np.zeros(K.N_PARAMS, np.float64)
    for key, value in params.items():
        row[_PARAM_INDEX[key]] = value
    canonical = name + ":" + ",".join(f"{k}={number_text(v)}" for k, v in params.items())
    return pid, row, canonical


def compact_spec(spec: str) -> str:
    """A canonical policy spec without the parameters at their family's
    defaults ('heuristic:value=2'); parse_policy reads it as the same policy."""
    family = spec.split(":")[0]
    if family not in POLICIES:
        return spec
    defaults = {key: number_text(value) for key, value in POLICIES[family][1].items()}  # as parse_policy writes them
    changed = [item for item in spec.partition(":")[2].split(",")
               if item and defaults.get(item.partition("=")[0]) != item.partition("=")[2]]
    return family + (":" + ",".join(changed) if changed else "")


def short_names(specs) -> dict:
    """Policy spec -> its label in tables and figures: the family and the
    parameters that differ from its defaults (compact_spec: 'heuristic',
    'heuristic:value=2'), so that a lone policy with other parameters is not
    shown as its family's defaults; labels stay distinct for canonical specs."""
    return {spec: compact_spec(spec) for spec in map(str, specs)}


def _frames(race_out, stage_out, n, first_race, n_stages):
    races = {"race": np.int64(first_race) + np.arange(len(race_out), dtype=np.int64)}  # int64 to 2**63 - 1
    races["winner"] = race_out[:, K.R_WINNER]
    races["capped_stages"] = race_out[:, K.R_CAPPED]
    races["blocked_stages"] = race_out[:, K.R_BLOCKED]
    for f, field in enumerate(K.RACE_SEAT_FIELDS):
        for s in range(n):
            races[f"{field}_{s}"] = race_out[:, K.seat_col(K.R_SEAT, f, s)]
    stages = {"race": np.repeat(races["race"], n_stages)}
    for name, col in (("stage", K.C_STAGE), ("picker", K.C_PICKER), ("profile", K.C_PROFILE),
                      ("start", K.C_START), ("winner", K.C_WINNER), ("blocked", K.C_BLOCKED),
                      ("capped", K.C_CAPPED), ("turns", K.C_TURNS)):
        stages[name] = stage_out[:, col]
    for c in range(4):
        stages[f"coln_{c}"] = stage_out[:, K.C_COLN + c]
        stages[f"lo_{c}"] = stage_out[:, K.C_LO + c]
        stages[f"hi_{c}"] = stage_out[:, K.C_HI + c]
    for f, field in enumerate(K.STAGE_SEAT_FIELDS):
        for s in range(n):
            stages[f"{field}_{s}"] = stage_out[:, K.seat_col(K.C_SEAT, f, s)]
    races_df = pd.DataFrame(races)
    stages_df = pd.DataFrame(stages)
    stages_df["profile"] = pd.Categorical.from_codes(stages_df["profile"], K.PROFILE_NAMES)
    for col in ("blocked", "capped"):
        stages_df[col] = stages_df[col].astype(bool)
    return races_df, stages_df


def simulate(players: int = 4, races: int = 1000, policies: list[str] | None = None,
             seed: int = 0, options: dict | None = None, threads: int | None = None,
             progress: Callable[[int, int], None] | None = None, first_race: int = 0,
             chunk: int = 20_000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Play races first_race .. first_race + races - 1 of the run `seed`.

    players: 3 to 6.
    races: races to play (0: empty tables with every column; the CLI's
        --games of Tape l'étape counts races).
    policies: one spec for every seat slot (a string or a list of one), one
        per slot, or a list that repeats around the table (A, B at 4 seats:
        A, B, A, B), e.g. ["heuristic", "random", "blocker:block=5"]
        (`etappe policies etape`); default "heuristic". With rotate_seats
        (default) slot k plays seat (k - race) mod players.
    seed: root seed (0 to 2**63 - 1, as the command line's --seed).
    options: rule options, {name: value} (OPTIONS; docs/etape.md).
    threads: Numba threads for this call (default: all cores).
    progress: progress(done, total) is called per chunk.
    first_race: the number of the first race (first_race + races <= 2**63).
    chunk: races per kernel call (>= 1); it never changes a result.

    Returns (races_df, stages_df): one row per race and one per stage
    (columns: docs/etape.md), both with the run's identity in `.attrs`:
    game ("etape"), players, policies (canonical specs by slot), seed,
    races, first_race, stages_per_race, options (every option, defaults
    filled in), version, wall_seconds.

    Raises TypeError for a count or seed that is not a whole number, and
    ValueError naming the problem: players, races, seed or chunk out of
    range, a policy list that does not fit the table, an unknown policy,
    parameter or rule option, a bad value.
    """
    n = check_players(players)
    policies = policies_by_seat(policies, n, DEFAULT_POLICY)
    races, seed, first_race = run_numbers("race", races, seed, first_race)
    chunk = whole("chunk", chunk, low=1)
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict of rule option name: value, e.g. {{'mode': 'endurance'}}, "
                        f"not {type(options).__name__}")
    parsed = [parse_policy(p) for p in policies]
    pids = np.array([p[0] for p in parsed], np.int64)
    prm = np.stack([p[1] for p in parsed])
    full = resolve_options(options)
    opts = option_vector(full)
    if not -1 <= opts[K.O_WITHHOLD_SEAT] < n:
        raise ValueError(f"etape rule option withhold_seat must be -1 or a seat 0-{n - 1} ({n} players), "
                         f"not {opts[K.O_WITHHOLD_SEAT]}")
    n_stages = int(K.stages_per_race(n, opts))
    race_out = np.zeros((races, K.RACE_COLS), np.int64)
    stage_out = np.zeros((races * n_stages, K.STAGE_COLS), np.int64)
    with numba_threads(threads):
        # the kernel is compiled or loaded on no races first: the time is that of the races
        lookahead = K.lookahead_for(pids)
        K.run_batch(np.int64(seed), np.int64(first_race), n, opts, pids, prm, race_out[:0], stage_out[:0], lookahead)
        if progress is not None:
            progress(0, races)  # the kernel is ready
        started = time.perf_counter()
        for lo in range(0, races, chunk):
            hi = min(races, lo + chunk)
            K.run_batch(np.int64(seed), np.int64(first_race + lo), n, opts, pids, prm,
                        race_out[lo:hi], stage_out[lo * n_stages:hi * n_stages], lookahead)
            if progress is not None:
                progress(hi, races)
    wall = time.perf_counter() - started
    races_df, stages_df = _frames(race_out, stage_out, n, first_race, n_stages)
    attrs = {"game": GAME, "seed": int(seed), "version": package_version(), "players": n,
             "policies": [p[2] for p in parsed], "options": full, "first_race": int(first_race),
             "races": int(races), "stages_per_race": n_stages, "wall_seconds": wall}
    races_df.attrs = dict(attrs)
    stages_df.attrs = dict(attrs)
    return races_df, stages_df




# ---------------------------------------------------------------- records per race
def _players(df: pd.DataFrame) -> int:
    return int(df.attrs.get("players") or sum(c.startswith("time_") for c in df.columns))


def _seats(df: pd.DataFrame, field: str, n: int) -> np.ndarray:
    """The per-seat columns `<field>_<seat>` as an int64 array (rows x seats)."""
    return np.stack([df[f"{field}_{s}"].to_numpy(np.int64) for s in range(n)], axis=1)


def _first_places(races_df: pd.DataFrame, n: int) -> np.ndarray:
    """k[r, s]: the seats ranked first in race r if seat s is one of them (it
    has 1/k of the win: level on time, and under gc_tie=stage_places on the
    tie-break too), else 0."""
    lead = _seats(races_df, "rank", n) == 1
    return np.where(lead, lead.sum(axis=1, keepdims=True), 0)


def _win_share(races_df: pd.DataFrame, n: int) -> np.ndarray:
    """share[r, s]: seat s's share of the win of race r (1/k, _first_places)."""
    k = _first_places(races_df, n)
    return np.where(k > 0, 1 / np.maximum(k, 1), 0.0)


def win_shares(races_df: pd.DataFrame) -> pd.DataFrame:
    """Long table race x seat: slot, policy, time, win share (1/k to each of
    the k seats ranked first: level on time, and under gc_tie=stage_places
    on the tie-break too)."""
    n = _players(races_df)
    policies = races_df.attrs.get("policies", [str(k) for k in range(n)])
    times = races_df[[f"time_{s}" for s in range(n)]].to_numpy()
    share = _win_share(races_df, n)
    rows = []
    for s in range(n):
        slot = races_df[f"slot_{s}"].to_numpy()
        rows.append(pd.DataFrame({
            "race": races_df["race"].to_numpy(), "seat": s, "slot": slot,
            "policy": np.asarray(policies, dtype=object)[slot], "time": times[:, s],
            "win": share[:, s], "rank": races_df[f"rank_{s}"].to_numpy(),
            "mountain": races_df[f"mountain_{s}"].to_numpy(),
            "sprint": races_df[f"sprint_{s}"].to_numpy()}))
    return pd.concat(rows, ignore_index=True)


def wins_text(wins: float) -> str:
    """Wins for print: shared first places make them sums of 1/k, so a whole
    number when whole ("10000", not "1e+04"), else one decimal ("2438.2")."""
    text = f"{wins:.1f}"
    return text[:-2] if text.endswith(".0") else text


# The per-seat stage fields the report reads (cli.etape.summarize_run reads only
# these of a run file): the others (secs, passes, skipped, laid, finish, side) and
# the columns' state (start, coln, lo, hi) it never uses.
REPORT_STAGE_FIELDS = ("slot", "time", "cum", "cards", "crev", "vita", "braq", "hand", "dealt", "place")
# The per-seat stage fields paired_metrics reads (race_tension's GC: cum, and place under gc_tie=stage_places).
PAIRED_STAGE_FIELDS = ("cum", "place")


def _joker_holders(options: dict, n: int) -> dict[str, list[int]]:
    dealt = _jokers_mask(options.get("jokers", OPTIONS["jokers"][1]))
    withheld = _jokers_mask(options.get("withhold_jokers", ""))
    seat = int(options.get("withhold_seat", -1))
    out = {}
    for k, joker in enumerate(K.JOKER_NAMES):
        seats = [s for s in range(n) if dealt >> k & 1 and not (s == seat and withheld >> k & 1)]
        if seats:
            out[joker] = seats
    return out


def joker_holders(stages_df: pd.DataFrame) -> dict[str, list[int]]:
    """The seats that hold each joker in this run: every seat for a joker of
    the game (rule option `jokers`), less `withhold_seat` for the jokers in
    `withhold_jokers`. A joker of no seat is left out."""
    return _joker_holders(stages_df.attrs.get("options", {}), _players(stages_df))


JOKER_COLUMNS = (("crevaison", "crev"), ("vitamine", "vita"), ("braquet", "braq"))


def joker_value(players: int = 4, races: int = 2000, policies: list[str] | None = None,
                seed: int = 0, options: dict | None = None, threads: int | None = None,
                seat: int = 0) -> pd.DataFrame:
    """What each joker is worth in seconds, paired on common random numbers:
    the same races (same deals) played with and without that joker in
    `seat`'s hand; value = mean final time without minus with, with the 95 %
    interval and p-value of the paired difference (p_holm: Holm's correction
    over the jokers), and the change in that seat's win rate."""
    base, _ = simulate(players, races, policies, seed, options, threads)
    wins_with = win_shares(base).query("seat == @seat")["win"].to_numpy()
    rows = []
    for joker in K.JOKER_NAMES:
        opts = {**(options or {}), "withhold_seat": seat, "withhold_jokers": joker}
        without, _ = simulate(players, races, policies, seed, opts, threads)
        value = paired_from_values(without[f"time_{seat}"], base[f"time_{seat}"])
        gain = paired_from_values(wins_with, win_shares(without).query("seat == @seat")["win"].to_numpy())
        rows.append({"joker": joker, "races": len(base), "value_s": value["mean"],
                     "ci_low": value["ci_low"], "ci_high": value["ci_high"], "p_value": value["p_value"],
                     "win_rate_gain": gain["mean"], "win_gain_low": gain["ci_low"], "win_gain_high": gain["ci_high"]})
    out = pd.DataFrame(rows)
    out.insert(list(out.columns).index("p_value") + 1, "p_holm", holm(out["p_value"].to_numpy())[0])
    out.attrs = {"seat": seat, "seed": seed, "policies": base.attrs["policies"],
                 "options": base.attrs["options"]}
    return out


def race_turns(stages_df: pd.DataFrame) -> pd.Series:
    """Turns per race (the stages' turns summed; skips and passes included)."""
    return stages_df.groupby("race", sort=True)["turns"].sum()


def _per_stage(stages_df: pd.DataFrame, field: str = "cum") -> tuple[np.ndarray, np.ndarray]:
    """(race ids (R,), the per-seat `field` (R, stages, n)) with the stages in order."""
    n = _players(stages_df)
    order = _stage_order(stages_df)
    ids, counts = np.unique(stages_df["race"].to_numpy(), return_counts=True)
    if len(ids) and (counts != counts[0]).any():
        raise ValueError("every race must have all its stages in the table")
    per = int(counts[0]) if len(ids) else 0
    values = stages_df[[f"{field}_{s}" for s in range(n)]].to_numpy(np.int64)
    if order is not None:
        values = values[order]
    return ids, values.reshape(len(ids), per, n)


def _stage_order(stages_df: pd.DataFrame) -> np.ndarray | None:
    """The row order that sorts the stages by race, then stage (stable), or
    None when they are in that order already (as simulate and a run file
    hold them): no sorted copy of a table of millions of stages."""
    race = stages_df["race"].to_numpy()
    stage = stages_df["stage"].to_numpy()
    step = np.diff(race)
    if ((step > 0) | ((step == 0) & (np.diff(stage) >= 0))).all():
        return None
    return np.lexsort((stage, race))


def race_tension(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Per race, from the general classification (GC: cumulative times; on a
    tie under gc_tie=stage_places, the lower sum of stage places so far, then
    the better place in that stage) after each stage:

    - `lead_changes`: times the strict GC leader (sole first in the GC)
      changed from one stage to a later one; a tie for the lead keeps the
      earlier leader, the first leader is not a change (the race engine's rule);
    - `winner`: sole first in the final GC (-1: a shared first place), the
      race record's `winner`;
    - `winner_deficit`: the winner's largest gap (s) behind the lowest
      cumulative time after any stage, 0 if never behind (NaN without a sole
      winner);
    - `final_gap`: runner-up's final time minus the winner's (s; NaN without
      a sole winner);
    - `leader_before_last`: strict GC leader before the last stage (-1 none
      or a one-stage race); `leader_before_last_won` (1/0, NaN when there is
      no such leader or no sole winner)."""
    ids, cum = _per_stage(stages_df)
    R, S, n = cum.shape
    best = cum.min(axis=2)
    first = cum == best[:, :, None]
    if stages_df.attrs.get("options", {}).get("gc_tie") == "stage_places":
        places = _per_stage(stages_df, "place")[1]
        for key in (places.cumsum(axis=1), places):
            key = np.where(first, key, np.iinfo(np.int64).max)
            first &= key == key.min(axis=2, keepdims=True)
    leader = np.where(first.sum(axis=2) == 1, first.argmax(axis=2), -1)
    changes = np.zeros(R, np.int64)
    previous = np.full(R, -1)
    for g in range(S):
        current = leader[:, g]
        changes += (current >= 0) & (previous >= 0) & (current != previous)
        previous = np.where(current >= 0, current, previous)
    winner = leader[:, -1] if S else np.full(R, -1)
    has = winner >= 0
    w = np.where(has, winner, 0)
    behind = cum - best[:, :, None]
    deficit = behind[np.arange(R), :, w].max(axis=1) if S else np.zeros(R)
    final = np.sort(cum[:, -1, :], axis=1) if S else np.zeros((R, 2))
    before = leader[:, -2] if S >= 2 else np.full(R, -1)
    known = has & (before >= 0)
    return pd.DataFrame({
        "race": ids, "stages": S, "lead_changes": changes, "winner": winner,
        "winner_deficit": np.where(has, deficit, np.nan),
        "final_gap": np.where(has, final[:, 1] - final[:, 0] if n > 1 else 0, np.nan),
        "leader_before_last": before,
        "leader_before_last_won": np.where(known, (before == winner).astype(float), np.nan)})


# The per-race metrics that a comparison of two variants (analysis/variants.py)
# differences race by race: key -> (label, unit); won_seat{s} rows follow per
# seat, and won_slot{k} per policy slot where the slots' policies differ.
PAIRED_METRICS = {
    "race_turns": ("turns per race", "turns"),
    "capped_stages": ("stages cut off by the turn cap per race", "stages"),
    "blocked_stages": ("blocked stages per race", "stages"),
    "shared_first": ("races with a shared first place", "rate"),
    "lead_changes": ("GC lead changes per race", "changes"),
    "winner_deficit": ("winner's largest deficit after a stage", "s"),
    "final_gap": ("final gap: runner-up's time minus the winner's", "s"),
    "leader_before_last_won": ("GC leader before the last stage wins the race", "rate"),
}


def paired_metrics(races_df: pd.DataFrame, stages_df: pd.DataFrame) -> pd.DataFrame:
    """Per race (indexed by race): the PAIRED_METRICS, `won_seat{s}` (seat
    s's share of the race win: 1/k to each of k leaders, as win_rates counts
    it) and, where the policy slots differ in policy, `won_slot{k}` (slot
    k's share). Tension metrics without a sole winner are NaN (race_tension),
    so such races leave those metrics' pairs."""
    n = _players(races_df)
    out = pd.DataFrame(index=pd.Index(races_df["race"].to_numpy(), name="race"))
    out["race_turns"] = race_turns(stages_df).reindex(out.index).to_numpy(float)
    for key in ("capped_stages", "blocked_stages"):
        out[key] = races_df[key].to_numpy(float)
    out["shared_first"] = (races_df["winner"].to_numpy() < 0).astype(float)
    tension = race_tension(stages_df).set_index("race").reindex(out.index)
    for key in ("lead_changes", "winner_deficit", "final_gap", "leader_before_last_won"):
        out[key] = tension[key].to_numpy(float)
    share = _win_share(races_df, n)
    for s in range(n):
        out[f"won_seat{s}"] = share[:, s]
    policies = races_df.attrs.get("policies", [])
    if len(set(policies)) > 1:
        slots = races_df[[f"slot_{s}" for s in range(n)]].to_numpy()
        for k in range(n):
            out[f"won_slot{k}"] = (share * (slots == k)).sum(axis=1)
    return out


# ---------------------------------------------------------------- run summary
# The parts of a RunSummary, each the tables of one kind and read from its own columns.
PARTS = ("outcomes", "skill", "side", "anomalies", "profiles", "jokers", "length", "tension", "progress", "cards")
TENSION_LABELS = {"lead_changes": "GC lead changes per race",
                  "winner_deficit": "winner's largest deficit after a stage (s)",
                  "final_gap": "final gap: runner-up's time minus the winner's (s)"}
# progress_table's sums per group and stage (stats.curves_from_sums): n seat-rows, their sum s and sum of
# squares ss of y; over the clusters (one race's rows of that stage) g (1 each), kk, tt, kt (rows k and
# sum t of each, squared and multiplied)
_CURVE_SUMS = ("n", "s", "ss", "g", "kk", "tt", "kt")
# the race sums (x: a race's stages of the profile, y: its stages): xx, xy, yy (the same in every profile)
_PROFILE_SUMS = ("stages", "blocked", "no_winner", "picker_wins", "turns", "picker_n", "picker_time",
                 "others_n", "others_time", "seat_stages", "cards", "race_xx", "race_xy", "race_yy")
_JOKER_SUMS = ("uses", "uses_sq", "on_self", "on_self_sq", "on_self_uses", "cards")


class RunSummary:
    """What the report of a run needs, as additive counts, sums and exact
    integer histograms (stats.IntHistogram): `add` chunks of the records,
    `merge` the summaries of two parts of one run; the table methods give
    what the functions of the same name give over the whole record tables
    (win_rates, seat_uniformity, head_to_head, side_classifications,
    profile_stats, profile_by_policy, joker_usage, joker_stage_effect,
    anomalies, length_table, tension_table, leader_holds, progress_table,
    card_values: each of those is `summarize(...).<table>()`). `etappe
    report` reads a run a saved chunk at a time into one
    (cli.etape.summarize_run): its memory does not grow with the races.

    The races and the stages may come in separate chunks, but a chunk of
    stages must hold every stage of each race it holds (lengths, tension and
    the jokers' intervals are per race). `parts` (PARTS, default all): the
    tables to keep; each reads only its own columns, and a table whose part
    was not kept is refused (the anomalies need the jokers part too).

        s = summarize(races_df, stages_df)     # or cli.etape.summarize_run("run.parquet")
        s.win_rates("policy"); s.profile_stats()
    """

    def __init__(self, attrs: dict, parts=PARTS):
        unknown = set(parts) - set(PARTS)
        if unknown:
            raise ValueError(f"unknown summary part(s) {sorted(unknown)}; known: {', '.join(PARTS)}")
        check_game(attrs, GAME)
        self.attrs = dict(attrs)
        self.parts = tuple(parts)
        n = self.players = int(self.attrs["players"])
        self.policies = list(self.attrs.get("policies") or [str(k) for k in range(n)])
        self.names = sorted(set(self.policies))  # the policy groups, in a groupby's order
        self.policy_of_slot = np.array([self.names.index(p) for p in self.policies], np.int64)
        self.holders = _joker_holders(self.attrs.get("options", {}), n)
        p, profiles = len(self.names), len(K.PROFILE_NAMES)
        self.races = self.stages = 0     # rows added
        self.stage_races = 0             # races of the stage rows added
        # outcomes, per seat and per slot: [group, k] seat-races with 1/k of the win (k = 0: none); race times
        self.shares = {by: np.zeros((n, n + 1), np.int64) for by in ("seat", "slot")}
        self.times = {by: np.zeros(n, np.int64) for by in ("seat", "slot")}
        # skill: stats.skill_moments by policy, and where each policy is first seen (seat, race row): the
        # order of skill_table's policies
        self.skill = np.zeros((p, p, len(SKILL_MOMENTS)), np.int64)
        self.first_seen: dict[int, tuple[int, int]] = {}
        # side classifications, mountain then sprint, per slot: points and [slot, k] shares of the top
        self.side_points = np.zeros((2, n), np.int64)
        self.side_tops = np.zeros((2, n, n + 1), np.int64)
        # anomalies
        self.shared = self.capped = self.blocked = self.no_winner = 0
        # profiles: per profile (K.PROFILE_NAMES), per profile and policy, stage times per profile
        self.profile = {key: np.zeros(profiles, np.int64) for key in _PROFILE_SUMS}
        self.profile_policy = {key: np.zeros((profiles, p), np.int64) for key in ("n", "time", "wins")}
        self.stage_times = [IntHistogram() for _ in K.PROFILE_NAMES]
        # jokers of the game: counts, per-race sums for the intervals clustered by race, and per stage
        # (the last stage is known at the end) the uses x, x^2 and x times the race's uses, summed over races;
        # the stage times of the seats that hold it, with it used and not: n, sum, sum of squares
        self.max_stage = -1
        self.jokers = {joker: {**{key: 0 for key in _JOKER_SUMS},
                               **{key: np.zeros(0, np.int64) for key in ("by_stage", "by_stage_sq", "by_stage_uses")},
                               "used": np.zeros(3, np.int64), "not_used": np.zeros(3, np.int64)}
                       for joker in self.holders}
        # length
        self.turns_stage, self.turns_race, self.stages_per_race = IntHistogram(), IntHistogram(), IntHistogram()
        self.turns_profile = [IntHistogram() for _ in K.PROFILE_NAMES]
        # tension
        self.tension = {key: IntHistogram() for key in TENSION_LABELS}
        self.leader_wins = self.leader_n = 0
        # progress: per (by, value), [sum, group, stage]
        self.progress = {(by, value): np.zeros((len(_CURVE_SUMS), len(self._groups(by)), 0), np.int64)
                         for by in ("policy", "seat") for value in ("gap", "cum")}
        # numbered cards: per card (colour * 12 + value - 1), dealt and left in hand; per value (index
        # value - 1), the sums over the races of left^2, dealt^2 and left * dealt (the left share's interval)
        self.dealt = np.zeros(64, np.int64)
        self.left = np.zeros(64, np.int64)
        self.value_moments = np.zeros((12, 3), np.int64)

    def _groups(self, by: str) -> list[str]:
        # seat names sort as the seats do: at most 6 players
        return list(self.names) if by == "policy" else [f"seat {s}" for s in range(self.players)]

    # ------------------------------------------------------------ filling
    def add(self, races_df: pd.DataFrame | None = None, stages_df: pd.DataFrame | None = None) -> "RunSummary":
        """Count in a chunk of races and/or of stages; returns self."""
        for df, add in ((races_df, self._add_races), (stages_df, self._add_stages)):
            if df is not None and len(df):
                df = df.copy(deep=False)
                df.attrs = {}  # the run's are self.attrs; pandas copies a frame's into every column read from it
                add(df)
        return self

    def _add_races(self, df: pd.DataFrame) -> None:
        n, parts = self.players, self.parts
        if "anomalies" in parts:
            self.shared += int((df["winner"].to_numpy() < 0).sum())
        if {"outcomes", "skill", "side"} & set(parts):
            slots = _seats(df, "slot", n)
        if "outcomes" in parts:
            k = _first_places(df, n)
            times = _seats(df, "time", n)
            for by, group in (("seat", np.broadcast_to(np.arange(n), slots.shape)), ("slot", slots)):
                self.shares[by] += _counts(group * (n + 1) + k, n * (n + 1)).reshape(n, n + 1)
                self.times[by] += _counts(group, n, times)
        if "skill" in parts:
            codes = self.policy_of_slot[slots]
            ranks = _seats(df, "rank", n)
            self.skill += skill_moments(codes.T, [-ranks[:, s] for s in range(n)], len(self.names))
            for s in range(n):
                found, rows = np.unique(codes[:, s], return_index=True)
                for code, row in zip(found.tolist(), rows.tolist()):
                    self._seen(code, (s, self.races + row))
        if "side" in parts:
            for j, side in enumerate(("mountain", "sprint")):
                points = _seats(df, side, n)
                top = points == points.max(axis=1, keepdims=True)
                k = np.where(top, top.sum(axis=1, keepdims=True), 0)
                self.side_tops[j] += _counts(slots * (n + 1) + k, n * (n + 1)).reshape(n, n + 1)
                self.side_points[j] += _counts(slots, n, points)
        self.races += len(df)

    def _seen(self, code: int, where: tuple[int, int]) -> None:
        if code not in self.first_seen or where < self.first_seen[code]:
            self.first_seen[code] = where

    def _add_stages(self, df: pd.DataFrame) -> None:
        stage = df["stage"].to_numpy(np.int64)
        race, ids = pd.factorize(df["race"].to_numpy())
        races = len(ids)
        parts = self.parts
        if "anomalies" in parts:
            self.capped += int(df["capped"].sum())
            self.blocked += int(df["blocked"].sum())
            self.no_winner += int((df["winner"].to_numpy() < 0).sum())
        if {"profiles", "length"} & set(parts):
            profile = _profile_codes(df["profile"])
        if "profiles" in parts:
            self._add_profiles(df, profile, race, races)
        if "jokers" in parts:
            self._add_jokers(df, stage, race, races)
        if "length" in parts:
            turns = df["turns"].to_numpy(np.int64)
            self.turns_stage = self.turns_stage.merge(IntHistogram.of(turns))
            for c in np.unique(profile):
                self.turns_profile[c] = self.turns_profile[c].merge(IntHistogram.of(turns[profile == c]))
            self.turns_race = self.turns_race.merge(IntHistogram.of(race_turns(df).to_numpy()))
            self.stages_per_race = self.stages_per_race.merge(IntHistogram.of(np.bincount(race)))
        if "tension" in parts:
            with_attrs = df.copy(deep=False)
            with_attrs.attrs = self.attrs  # race_tension reads the players and options from them
            t = race_tension(with_attrs)
            for key in TENSION_LABELS:
                self.tension[key] = self.tension[key].merge(IntHistogram.of(t[key].to_numpy(float)))
            won = t["leader_before_last_won"].dropna()
            self.leader_wins += int(won.sum())
            self.leader_n += len(won)
        if "progress" in parts:
            self._add_progress(df, stage, race)
        if "cards" in parts:
            dealt, left = (_bits_by_row(_seats(df, field, self.players)) for field in ("dealt", "hand"))
            self.dealt += dealt.sum(axis=0)
            self.left += left.sum(axis=0)
            # a race's cards go together (a blocked stage leaves many): the interval is clustered by race
            y, x = (_by_race_and_value(bits, race, races) for bits in (dealt, left))
            self.value_moments += np.stack([(x * x).sum(axis=0), (y * y).sum(axis=0), (x * y).sum(axis=0)], axis=1)
        self.stages += len(df)
        self.stage_races += races

    def _add_profiles(self, df: pd.DataFrame, profile: np.ndarray, race: np.ndarray, races: int) -> None:
        n, size, p = self.players, len(K.PROFILE_NAMES), len(self.names)
        picker = df["picker"].to_numpy(np.int64)
        winner = df["winner"].to_numpy(np.int64)
        time, cards = _seats(df, "time", n), _seats(df, "cards", n)
        is_picker = np.arange(n) == picker[:, None]
        won = np.arange(n) == winner[:, None]
        rows = np.broadcast_to(profile[:, None], time.shape)  # each seat-stage's profile
        sums = self.profile
        sums["stages"] += _counts(profile, size)
        x = _counts(race * size + profile, races * size).reshape(races, size)  # a race's picks are not independent
        y = x.sum(axis=1)
        sums["race_xx"] += (x * x).sum(axis=0)
        sums["race_xy"] += (x * y[:, None]).sum(axis=0)
        sums["race_yy"] += int((y * y).sum())
        sums["blocked"] += _counts(profile, size, df["blocked"].to_numpy())
        sums["no_winner"] += _counts(profile, size, winner < 0)
        sums["picker_wins"] += _counts(profile, size, (is_picker & won).sum(axis=1))
        sums["turns"] += _counts(profile, size, df["turns"].to_numpy())
        for key, seats in (("picker", is_picker), ("others", ~is_picker)):
            sums[f"{key}_n"] += _counts(rows[seats], size)
            sums[f"{key}_time"] += _counts(rows[seats], size, time[seats])
        sums["seat_stages"] += _counts(rows, size)
        sums["cards"] += _counts(rows, size, cards)
        cell = rows * p + self.policy_of_slot[_seats(df, "slot", n)]
        for key, weights in (("n", None), ("time", time), ("wins", won)):
            self.profile_policy[key] += _counts(cell, size * p, weights).reshape(size, p)
        for c in np.unique(profile):
            self.stage_times[c] = self.stage_times[c].merge(IntHistogram.of(time[profile == c].ravel()))

    def _add_jokers(self, df: pd.DataFrame, stage: np.ndarray, race: np.ndarray, races: int) -> None:
        n = self.players
        width = int(stage.max()) + 1
        self.max_stage = max(self.max_stage, width - 1)
        time = _seats(df, "time", n)
        cell = np.broadcast_to((race * width + stage)[:, None], time.shape)  # each seat-stage's (race, stage)
        for joker, column in JOKER_COLUMNS:
            if joker not in self.jokers:
                continue
            sums = self.jokers[joker]
            held = np.isin(np.arange(n), self.holders[joker])
            target = _seats(df, column, n)
            used = (target >= 0) & held
            x = _counts(cell[used], races * width).reshape(races, width)  # uses per race and stage
            uses = x.sum(axis=1)
            sums["uses"] += int(uses.sum())
            sums["uses_sq"] += int((uses * uses).sum())
            for key, value in (("by_stage", x), ("by_stage_sq", x * x), ("by_stage_uses", x * uses[:, None])):
                sums[key] = _plus(sums[key], value.sum(axis=0))
            if joker == "crevaison":
                mine = _counts(cell[used & (target == np.arange(n))] // width, races)  # on oneself, per race
                sums["on_self"] += int(mine.sum())
                sums["on_self_sq"] += int((mine * mine).sum())
                sums["on_self_uses"] += int((mine * uses).sum())
            if joker == "braquet":
                sums["cards"] += int(target[used].sum())
            for key, seats in (("used", used), ("not_used", held & ~used)):
                values = time[seats]
                sums[key] += np.array([len(values), values.sum(), (values * values).sum()], np.int64)

    def _add_progress(self, df: pd.DataFrame, stage: np.ndarray, race: np.ndarray) -> None:
        n = self.players
        width = int(stage.max()) + 1
        # the clusters: one race's rows of one stage (one row in a stage table; a table may pool several)
        cells, cluster = np.unique(race * width + stage, return_inverse=True)
        cluster_stage = cells % width
        cum = _seats(df, "cum", n)
        for by in ("policy", "seat"):
            codes = self.policy_of_slot[_seats(df, "slot", n)] if by == "policy" else np.arange(n)
            for value in ("gap", "cum"):
                y = cum - cum.min(axis=1, keepdims=True) if value == "gap" else cum
                sums = np.zeros((len(_CURVE_SUMS), len(self._groups(by)), width), np.int64)
                for g in range(sums.shape[1]):
                    member = codes == g
                    k = np.broadcast_to(member, y.shape).sum(axis=1)  # the group's seats in the row
                    t = np.where(member, y, 0).sum(axis=1)            # their y summed
                    kc, tc = _counts(cluster, len(cells), k), _counts(cluster, len(cells), t)
                    sums[:, g] = [_counts(stage, width, k), _counts(stage, width, t),
                                  _counts(stage, width, np.where(member, y * y, 0).sum(axis=1)),
                                  _counts(cluster_stage, width, kc > 0), _counts(cluster_stage, width, kc * kc),
                                  _counts(cluster_stage, width, tc * tc), _counts(cluster_stage, width, kc * tc)]
                self.progress[(by, value)] = _plus(self.progress[(by, value)], sums)

    def merge(self, other: "RunSummary") -> "RunSummary":
        """A new summary of both (two parts of one run, `other`'s races after this one's)."""
        if (self.attrs.get("players"), self.policies, self.holders, self.parts) != \
                (other.attrs.get("players"), other.policies, other.holders, other.parts):
            raise ValueError("only summaries of one run (players, policies, jokers) with the same parts merge")
        out = copy.copy(self)
        for name, mine in vars(self).items():
            if name not in ("attrs", "parts", "players", "policies", "names", "policy_of_slot", "holders",
                            "first_seen", "max_stage"):
                setattr(out, name, _merged(mine, getattr(other, name)))
        out.max_stage = max(self.max_stage, other.max_stage)
        out.first_seen = dict(self.first_seen)
        for code, (seat, row) in other.first_seen.items():
            out._seen(code, (seat, self.races + row))
        return out

    # ------------------------------------------------------------ tables
    def _need(self, *parts: str) -> None:
        """Refuse a table whose sums this summary did not keep (its `parts`), rather than give zeros."""
        missing = [part for part in parts if part not in self.parts]
        if missing:
            raise ValueError(f"this summary was made without the part(s) {', '.join(missing)} that the table "
                             f"reads; make it with parts including them (known: {', '.join(PARTS)})")

    def win_rates(self, by: str = "seat") -> pd.DataFrame:
        """win_rates(races_df, by): by, n, wins, mean_time, win_rate, ci_low, ci_high."""
        self._need("outcomes")
        if by == "policy":
            groups = np.array(self.names, dtype=object)
            shares = np.zeros((len(groups), self.players + 1), np.int64)
            times = np.zeros(len(groups), np.int64)
            np.add.at(shares, self.policy_of_slot, self.shares["slot"])
            np.add.at(times, self.policy_of_slot, self.times["slot"])
            slots = self.slots_of_policy()
        elif by in ("seat", "slot"):
            groups, shares, times = np.arange(self.players), self.shares[by], self.times[by]
            slots = np.ones(self.players, np.int64)
        else:
            raise ValueError("by must be 'seat', 'slot' or 'policy'")
        n = shares.sum(axis=1)
        keep = n > 0  # a group of no seat-race has no row, as in a groupby
        wins = (shares[:, 1:] / np.arange(1, self.players + 1)).sum(axis=1)
        out = pd.DataFrame({by: groups[keep], "n": n[keep], "wins": wins[keep], "mean_time": times[keep] / n[keep]})
        out["win_rate"] = out["wins"] / out["n"]
        # a policy in several slots wins at most one race's worth: its races are the trials
        out["ci_low"], out["ci_high"] = grouped_wilson(out["wins"], out["n"], out["n"] / slots[keep])
        return out

    def slots_of_policy(self) -> np.ndarray:
        """How many slots (seats of the run's policy list) each policy holds, in every race."""
        return np.bincount(self.policy_of_slot, minlength=len(self.names))

    def seat_uniformity(self) -> ChiSquare:
        return chisquare_uniform(self.win_rates("seat")["wins"].to_numpy())

    def head_to_head(self) -> pd.DataFrame:
        self._need("skill")
        order = sorted(self.first_seen, key=self.first_seen.get)  # skill_table's: policies in order of first seat
        return skill_table_from_moments([self.names[c] for c in order], self.skill[np.ix_(order, order)], self.races)

    def side_classifications(self) -> pd.DataFrame:
        self._need("side")
        policy = np.zeros((len(self.names), self.players), np.int64)  # [policy, slot]: 1 where the slot plays it
        policy[self.policy_of_slot, np.arange(self.players)] = 1
        n = policy @ self.side_tops[0].sum(axis=1)
        share = 1 / np.arange(1, self.players + 1)
        out = {"policy": np.array(self.names, dtype=object), "n": n}
        for j, side in enumerate(("mountain", "sprint")):
            out[f"{side}_points"] = policy @ self.side_points[j] / n
            tops = policy @ (self.side_tops[j][:, 1:] * share).sum(axis=1)
            out[f"{side}_top"] = tops / n
            out[f"{side}_top_low"], out[f"{side}_top_high"] = grouped_wilson(tops, n, n / self.slots_of_policy())
        return pd.DataFrame(out)[n > 0].reset_index(drop=True)

    def profile_stats(self) -> pd.DataFrame:
        self._need("profiles")
        s, rows = self.profile, []
        for c, profile in enumerate(K.PROFILE_NAMES):
            k = int(s["stages"][c])
            if not k:
                continue
            blocked, no_winner, pw = int(s["blocked"][c]), int(s["no_winner"][c]), int(s["picker_wins"][c])
            b_lo, b_hi = wilson_interval(blocked, k)
            n_lo, n_hi = wilson_interval(no_winner, k)
            w_lo, w_hi = wilson_interval(pw, k)
            _, share_lo, share_hi = ratio_interval(self.stage_races, k, self.stages, *(
                float(s[key][c]) for key in ("race_xx", "race_yy", "race_xy")))
            won = k - no_winner  # the fair 1/players is a share of these: blocked stages have no winner
            s_lo, s_hi = wilson_interval(pw, won)
            picker = _mean(s["picker_time"][c], s["picker_n"][c])
            others = _mean(s["others_time"][c], s["others_n"][c])
            rows.append({"profile": profile, "stages": k, "share": k / self.stages, "share_lo": share_lo,
                         "share_hi": share_hi,
                         "blocked_rate": blocked / k, "blocked_lo": b_lo, "blocked_hi": b_hi,
                         "no_winner_rate": no_winner / k, "no_winner_lo": n_lo, "no_winner_hi": n_hi,
                         "picker_win_rate": pw / k, "picker_win_lo": w_lo, "picker_win_hi": w_hi,
                         "picker_share_of_wins": pw / won if won else np.nan, "picker_share_of_wins_lo": s_lo,
                         "picker_share_of_wins_hi": s_hi,
                         "fair_win_rate": 1 / self.players, "picker_time": picker, "others_time": others,
                         "picker_advantage_s": others - picker, "mean_turns": _mean(s["turns"][c], k),
                         "mean_cards_left": _mean(s["cards"][c], s["seat_stages"][c])})
        return pd.DataFrame(rows)

    def profile_by_policy(self) -> pd.DataFrame:
        self._need("profiles")
        s = self.profile_policy
        profile, policy = np.nonzero(s["n"])  # profiles in their order, policies by name
        out = pd.DataFrame({
            "profile": pd.Categorical.from_codes(profile, K.PROFILE_NAMES),
            "policy": np.array(self.names, dtype=object)[policy], "n": s["n"][profile, policy],
            "mean_time": s["time"][profile, policy] / s["n"][profile, policy], "wins": s["wins"][profile, policy]})
        out["win_rate"] = out["wins"] / out["n"]
        out["ci_low"], out["ci_high"] = grouped_wilson(out["wins"], out["n"],
                                                       out["n"] / self.slots_of_policy()[policy])
        return out

    def joker_usage(self) -> pd.DataFrame:
        self._need("jokers")
        rows = []
        for joker, _ in JOKER_COLUMNS:
            if joker not in self.jokers or not self.stage_races:  # no races: no uses to share out, no row
                continue
            s = self.jokers[joker]
            holders = len(self.holders[joker])  # a race's holders: every stage row holds every seat
            seat_races = self.stage_races * holders
            uses = s["uses"]
            last = [int(s[key][self.max_stage]) for key in ("by_stage", "by_stage_sq", "by_stage_uses")]
            row = {"joker": joker, "uses": uses, "use_rate": uses / seat_races if seat_races else np.nan,
                   "in_last_stage": last[0] / uses if uses else np.nan}
            # per race: x and y of each share, as the sums (x, y, x^2, y^2, xy) over the races
            shares = {"use_rate": (uses, seat_races, s["uses_sq"], self.stage_races * holders ** 2, holders * uses),
                      "in_last_stage": (last[0], uses, last[1], s["uses_sq"], last[2])}
            if joker == "crevaison":
                row["on_self"] = s["on_self"] / uses if uses else np.nan
                shares["on_self"] = (s["on_self"], uses, s["on_self_sq"], s["uses_sq"], s["on_self_uses"])
            if joker == "braquet":
                row["cards_per_use"] = s["cards"] / uses if uses else np.nan
            for key, sums in shares.items():
                _, row[f"{key}_low"], row[f"{key}_high"] = ratio_interval(self.stage_races, *map(float, sums))
            rows.append(row)
        order = ["joker", "uses"]
        for key in ("use_rate", "in_last_stage", "on_self"):
            order += [key, f"{key}_low", f"{key}_high"]
        return pd.DataFrame(rows).reindex(columns=order + ["cards_per_use"])

    def joker_stage_effect(self) -> pd.DataFrame:
        self._need("jokers")
        rows = []
        for joker, _ in JOKER_COLUMNS:
            if joker not in self.jokers:  # not in the game: no stage "without" it to compare with
                continue
            (a_n, a_s, a_ss), (b_n, b_s, b_ss) = (map(int, self.jokers[joker][key]) for key in ("used", "not_used"))
            a, b = _mean(a_s, a_n), _mean(b_s, b_n)
            diff = a - b if a_n and b_n else np.nan
            se = math.sqrt(_variance(a_n, a_s, a_ss) / a_n + _variance(b_n, b_s, b_ss) / b_n) \
                if a_n > 1 and b_n > 1 else np.nan
            rows.append({"joker": joker, "stages_used": a_n, "time_used": a, "time_not_used": b,
                         "difference_s": diff, "ci_low": diff - Z95 * se, "ci_high": diff + Z95 * se})
        return pd.DataFrame(rows).reindex(columns=["joker", "stages_used", "time_used", "time_not_used",
                                                   "difference_s", "ci_low", "ci_high"])

    def anomalies(self) -> pd.DataFrame:
        self._need("anomalies", "jokers")
        usage = self.joker_usage()  # the jokers of the game only
        unused = list(usage.loc[usage["uses"] == 0, "joker"])
        rows = [
            ("stages cut off by the turn cap", self.capped, self.stages, ""),
            ("stages blocked (nobody can lay)", self.blocked, self.stages, ""),
            ("stages without a winner", self.no_winner, self.stages, ""),
            ("races with a shared first place", self.shared, self.races, ""),
            ("jokers in the game never used", len(unused), len(usage), ", ".join(unused)),
        ]
        out = pd.DataFrame(rows, columns=["what", "count", "out_of", "detail"])
        out.insert(3, "rate", out["count"] / out["out_of"])
        # the jokers never used are a count of the game's few jokers, not a rate of events: no interval
        events = np.arange(len(out)) < len(out) - 1
        low, high = wilson_interval(out["count"], out["out_of"])
        out.insert(4, "ci_low", np.where(events, low, np.nan))
        out.insert(5, "ci_high", np.where(events, high, np.nan))
        return out

    def length_table(self) -> pd.DataFrame:
        self._need("length")
        # the stages of a race go together: only turns per race, one value a race, get an interval of the mean
        rows = [self.turns_stage.describe("turns per stage", interval=False), self.turns_race.describe("turns per race")]
        rows += [hist.describe(f"turns per stage: {name}", interval=False)
                 for name, hist in zip(K.PROFILE_NAMES, self.turns_profile) if hist.n]
        return pd.DataFrame(rows)

    def tension_table(self) -> pd.DataFrame:
        self._need("tension")
        return pd.DataFrame([self.tension[key].describe(label) for key, label in TENSION_LABELS.items()])

    def leader_holds(self) -> dict:
        self._need("tension")
        k, n = self.leader_wins, self.leader_n
        lo, hi = wilson_interval(k, n)
        return {"wins": k, "n": n, "rate": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi}

    def progress_table(self, by: str = "policy", value: str = "gap") -> pd.DataFrame:
        self._need("progress")
        if by not in ("policy", "seat"):
            raise ValueError("by must be 'policy' or 'seat'")
        if value not in ("gap", "cum"):
            raise ValueError("value must be 'gap' or 'cum'")
        sums = self.progress[(by, value)]
        groups, width = len(self._groups(by)), sums.shape[2]
        keep = (sums[0] > 0).ravel()  # the (group, stage) pairs with rows, groups in order, stages ascending
        n, s, ss, g, kk, tt, kt = (part.ravel()[keep] for part in sums)
        keys = pd.DataFrame({"group": np.repeat(np.array(self._groups(by), dtype=object), width)[keep],
                             "after_stage": np.tile(np.arange(1, width + 1, dtype=np.int64), groups)[keep]})
        clusters = {"g": g, "t": s.astype(float), "k": n, "tt": tt.astype(float), "kk": kk, "kt": kt.astype(float)}
        return curves_from_sums(keys, n, s.astype(float), ss.astype(float), clusters)

    def card_values(self) -> pd.DataFrame:
        self._need("cards")
        opts = option_vector(self.attrs.get("options", {}))
        vmin, vmax = K.value_range(self.players)
        rows = []
        for v in range(vmin, vmax + 1):
            cards = [colour * 12 + v - 1 for colour in range(4)]
            got, left = int(self.dealt[cards].sum()), int(self.left[cards].sum())
            _, lo, hi = ratio_interval(self.stage_races, left, got, *map(float, self.value_moments[v - 1]))
            seconds = opts[K.O_LOW_SECS] if v <= 6 else opts[K.O_HIGH_SECS]
            rows.append({"value": v, "seconds_if_left": int(seconds), "dealt": got,
                         "laid": got - left, "left": left, "left_share": left / got if got else float("nan"),
                         "left_low": lo, "left_high": hi})
        return pd.DataFrame(rows)


def summarize(races_df: pd.DataFrame | None = None, stages_df: pd.DataFrame | None = None,
              parts=PARTS) -> RunSummary:
    """The RunSummary of record tables (the races, the stages or both; the
    run's identity in their attrs), of `parts` (default all)."""
    frames = [df for df in (stages_df, races_df) if df is not None]
    attrs = {key: value for df in frames for key, value in df.attrs.items()}  # the races' last: the report's header
    check_game(attrs, GAME)
    attrs["players"] = int(attrs.get("players") or max(_players(df) for df in frames))
    return RunSummary(attrs, parts).add(races_df, stages_df)


def _counts(index, size: int, weights=None) -> np.ndarray:
    """Per index 0 .. size-1: how many (or the sum of `weights`), as int64;
    exact, as a chunk's sums of whole numbers stay far below 2^53."""
    return np.rint(np.bincount(np.ravel(index), None if weights is None else np.ravel(weights),
                               minlength=size)).astype(np.int64)


def _plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b, the one with fewer stages (last axis) padded with zeros."""
    if a.shape[-1] < b.shape[-1]:
        a, b = b, a
    out = a.copy()
    out[..., :b.shape[-1]] += b
    return out


def _merged(a, b):
    """Two summaries' values of one kind, added up."""
    if isinstance(a, dict):
        return {key: _merged(a[key], b[key]) for key in a}
    if isinstance(a, list):
        return [_merged(x, y) for x, y in zip(a, b)]
    if isinstance(a, IntHistogram):
        return a.merge(b)
    return _plus(a, b) if isinstance(a, np.ndarray) else a + b


def _profile_codes(profile: pd.Series) -> np.ndarray:
    """Each stage's profile as its index in K.PROFILE_NAMES (from a categorical or the names)."""
    return pd.Categorical(profile, categories=K.PROFILE_NAMES).codes.astype(np.int64)


def _by_race_and_value(bits: np.ndarray, race: np.ndarray, races: int) -> np.ndarray:
    """[race, value - 1]: the numbered cards of each value among bits ([row, card] counts, card =
    colour * 12 + value - 1), summed over each race's rows."""
    out = np.zeros((races, 12), np.int64)
    np.add.at(out, race, bits[:, :48].reshape(-1, 4, 12).sum(axis=1))
    return out


def _bits_by_row(masks: np.ndarray) -> np.ndarray:
    """[row, bit]: how many of a row's 64-bit masks (rows x seats) have the bit set (bit 0 first)."""
    octets = np.ascontiguousarray(masks, dtype="<i8").view(np.uint8).reshape(*masks.shape, 8)
    return np.unpackbits(octets, axis=-1, bitorder="little").sum(axis=1, dtype=np.int64)


def _mean(total, n) -> float:
    return total / n if n else float("nan")


def _variance(n: int, s: int, ss: int) -> float:
    """Sample variance of n whole numbers from their sum and sum of squares, exact until the one division."""
    return (n * ss - s * s) / (n * (n - 1))


# ------------------------------------------- the tables of record tables (summarize(...).<table>())
def win_rates(races_df: pd.DataFrame, by: str = "seat") -> pd.DataFrame:
    """Win rate per seat, slot or policy with n, the mean race time and a 95 %
    Wilson interval. A shared first place counts 1/k to each of the k leaders.
    A policy in several slots wins at most one race's worth, so its races are
    the trials: Wilson's over races, per slot it holds (stats.grouped_wilson)."""
    return summarize(races_df, parts=("outcomes",)).win_rates(by)


def seat_uniformity(races_df: pd.DataFrame) -> ChiSquare:
    """Chi-square test that wins are spread evenly over seats.
    Shared first places count 1/k to each leader (about 5 % of four-player
    races), which spreads wins more evenly than whole wins would: the test
    is then slightly conservative, never too eager."""
    return summarize(races_df, parts=("outcomes",)).seat_uniformity()


def head_to_head(races_df: pd.DataFrame) -> pd.DataFrame:
    """Skill matrix from one run with mixed seats (stats.skill_table): for
    every ordered pair of different policies met in the same race, how often
    the first finished the race ahead of the second in the general
    classification (`rank`; equal ranks are level), with its interval
    clustered by race. Empty when every seat plays the same policy."""
    return summarize(races_df, parts=("skill",)).head_to_head()


def side_classifications(races_df: pd.DataFrame) -> pd.DataFrame:
    """Per policy: mean mountain and sprint points and the share of races in
    which it tops each side classification (shared tops count 1/k), with its
    95 % Wilson interval (n: seat-races, as win_rates)."""
    return summarize(races_df, parts=("side",)).side_classifications()


def profile_stats(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Per profile: how often picked (95 % interval clustered by race: the
    picks of a race hang together), blocked and without a winner (with
    95 % Wilson intervals), the picker's stage-win rate and its share of the
    stages that had a winner (fair: fair_win_rate, 1/players; with
    intervals) and advantage in seconds over the others."""
    return summarize(stages_df=stages_df, parts=("profiles",)).profile_stats()


def profile_by_policy(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Mean stage time and stage-win rate per profile and policy: who each
    profile favours."""
    return summarize(stages_df=stages_df, parts=("profiles",)).profile_by_policy()


def joker_usage(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Per joker of the game (`joker_holders`: a joker that no seat holds
    has no row): uses per race and player, share used in the last stage, and
    the immediate effect (cards laid in a Braquet turn, self-targeted
    Crevaisons). The shares (use_rate of the player-races in which the
    player held the joker: a player holds each joker once a race, unless
    `withhold_seat` denies it; in_last_stage and, for Crevaison, on_self of
    the uses) come with 95 % intervals clustered by race (`_low`, `_high`):
    the players of a race share its deals, so what they do is not a set of
    independent trials."""
    return summarize(stages_df=stages_df, parts=("jokers",)).joker_usage()


def joker_stage_effect(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Observational: mean stage time of a player in stages where they used a
    joker minus in their other stages, over the seats dealt it (same policy
    and profile mix); one row per joker of the game (`joker_holders`).
    Confounded by when policies choose to play it; see joker_value for the
    paired causal estimate."""
    return summarize(stages_df=stages_df, parts=("jokers",)).joker_stage_effect()


def anomalies(races_df: pd.DataFrame, stages_df: pd.DataFrame) -> pd.DataFrame:
    """Counts of stages cut off by the turn cap, blocked stages, stages with
    no winner, shared race wins (each rate with its 95 % Wilson interval),
    and the jokers in the game (rule option `jokers`) that nobody used,
    named in `detail`."""
    return summarize(races_df, stages_df, parts=("anomalies", "jokers")).anomalies()


def length_table(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Turns per stage (all stages, then per profile) and turns per race:
    n, mean (its 95 % interval for turns per race), sd, median, 95th
    percentile, min, max. A turn is one player's turn, skipped (Crevaison)
    and passing turns included."""
    return summarize(stages_df=stages_df, parts=("length",)).length_table()


def tension_table(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Lead changes per race, the winner's largest deficit and the final gap
    (race_tension), as distributions: n, mean and its 95 % interval, sd,
    median, p95, min, max."""
    return summarize(stages_df=stages_df, parts=("tension",)).tension_table()


def leader_holds(stages_df: pd.DataFrame) -> dict:
    """How often the GC leader before the last stage went on to win: wins, n
    (races with such a leader and a sole winner), rate and 95 % Wilson interval."""
    return summarize(stages_df=stages_df, parts=("tension",)).leader_holds()


def progress_table(stages_df: pd.DataFrame, by: str = "policy", value: str = "gap") -> pd.DataFrame:
    """Mean cumulative time (value="cum") or gap to the GC leader (value="gap":
    own cumulative time minus the lowest) after each stage, per policy or seat.

    Columns: group, after_stage (1 = after the first stage), n (seat-races),
    mean, sd, ci_low, ci_high (95 % interval of the mean), band_low/band_high
    (mean +- 1 sd, the spread of races). A policy on several seats pools
    them, its interval clustered by race: stats.mean_curves of the long
    table stage x seat, from its sums (stats.curves_from_sums)."""
    return summarize(stages_df=stages_df, parts=("progress",)).progress_table(by, value)


def card_values(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Numbered cards by value, over all colours, seats and stages: dealt,
    laid (dealt minus left: a Vitamine swap moves a card between hands, never
    out of them), left in hand at the stage end (dead: they cost seconds),
    the left share with its 95 % interval clustered by race, and the seconds a card left
    costs. Values out of play (3-5 players) are not listed."""
    return summarize(stages_df=stages_df, parts=("cards",)).card_values()
