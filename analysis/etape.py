"""Tape l'étape: simulate races and summarise the records (pandas).

`simulate` returns (races_df, stages_df): one row per race, one row per
stage, per-seat values in columns `<field>_<seat>`. Everything needed to
replay a race (seed, policies, options, version) is in `df.attrs`.
The summary functions are pure: record tables in, tidy tables out.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numba
import numpy as np
import pandas as pd

from etappe.analysis.runio import package_version
from etappe.analysis.stats import (ChiSquare, chisquare_uniform, curves_from_sums, distribution_row, holm, mean_curves,
                                   paired_from_values, ratio_interval, skill_table, wilson_interval)
from etappe.kernels import etape as K
from etappe.kernels.options import option_value, policy_parameters

__all__ = [
    "simulate", "joker_value", "resolve_options", "parse_policy", "compact_spec", "short_names", "check_players",
    "win_shares", "win_rates", "seat_uniformity", "stage_long", "profile_stats", "profile_by_policy",
    "joker_holders", "joker_usage", "joker_stage_effect", "side_classifications", "anomalies", "race_turns",
    "length_table", "race_tension", "paired_metrics", "tension_table", "leader_holds", "progress_table",
    "head_to_head", "card_values", "OPTIONS", "POLICIES", "PLAYERS", "PAIRED_METRICS",
]

GAME = "etape"
PLAYERS = (3, 4, 5, 6)

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
_CHOICES = {"mode": ("sprint", "endurance"), "column_step": ("one", "free"),
            "extreme_start": ("in_play", "dealt"), "seat_order": ("from_picker", "from_seat_0"),
            "gc_tie": ("shared", "stage_places")}
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
        raise ValueError(f"unknown etape option(s) {sorted(unknown)}; known: {sorted(OPTIONS)}")
    full = {}
    for name, (_, default) in OPTIONS.items():
        try:
            full[name] = option_value(name, options.get(name, default), default, _CHOICES.get(name))
        except ValueError as problem:
            raise ValueError(f"etape rule option {problem}") from None
    for name, (lowest, highest) in OPTION_RANGES.items():
        if not lowest <= full[name] <= highest:
            raise ValueError(f"etape rule option {name} must be {lowest} to {highest}, not {full[name]}")
    # Options that mean nothing without another are refused, not ignored.
    if full["mode"] == "sprint" and full["endurance_stages"] != OPTIONS["endurance_stages"][1]:
        raise ValueError(f"endurance_stages={full['endurance_stages']} applies to mode=endurance only "
                         "(sprint mode plays one stage per player); add mode=endurance")
    if (full["withhold_seat"] == -1) != (_jokers_mask(full["withhold_jokers"]) == 0):
        raise ValueError("withhold_seat and withhold_jokers go together: give both (e.g. withhold_seat=0, "
                         f"withhold_jokers=vitamine), not withhold_seat={full['withhold_seat']} with "
                         f"withhold_jokers={full['withhold_jokers']!r}")
    return full


def option_vector(options: dict) -> np.ndarray:
    vec = np.zeros(K.N_OPTIONS, np.int64)
    for name, value in resolve_options(options).items():
        index = OPTIONS[name][0]
        if name in _CHOICES:
            value = _CHOICES[name].index(value)
        elif name in ("jokers", "withhold_jokers"):
            value = _jokers_mask(value)
        vec[index] = int(value)
    return vec


def parse_policy(spec: str) -> tuple[int, np.ndarray, str]:
    """'heuristic' or 'blocker:crev_cards=1,value=2' -> (id, params, canonical spec)."""
    name, _, rest = spec.partition(":")
    if name.endswith(".py"):
        raise ValueError(f"policy {spec!r}: a policy of your own (FILE.py:FUNCTION) plays the race games and Bremen only; "
                         f"Tape l'étape takes {', '.join(POLICIES)} with their parameters (docs/etape.md)")
    if name not in POLICIES:
        raise ValueError(f"unknown etape policy {name!r}; known: {', '.join(POLICIES)}")
    pid, defaults = POLICIES[name]
    params = defaults | policy_parameters(spec, name, rest, {key: PARAMETER_RANGES[key] for key in defaults})
    row = np.zeros(K.N_PARAMS, np.float64)
    for key, value in params.items():
        row[_PARAM_INDEX[key]] = value
    canonical = name + ":" + ",".join(f"{k}={v:g}" for k, v in params.items())
    return pid, row, canonical


def compact_spec(spec: str) -> str:
    """A canonical policy spec without the parameters at their family's
    defaults ('heuristic:value=2'); parse_policy reads it as the same policy."""
    family = spec.split(":")[0]
    if family not in POLICIES:
        return spec
    defaults = {key: f"{value:g}" for key, value in POLICIES[family][1].items()}  # as parse_policy writes them
    changed = [item for item in spec.partition(":")[2].split(",")
               if item and defaults.get(item.partition("=")[0]) != item.partition("=")[2]]
    return family + (":" + ",".join(changed) if changed else "")


def short_names(specs) -> dict:
    """Policy spec -> a short label for tables and figures: the family name
    ('heuristic', 'blocker', ...) when no other spec in `specs` shares it,
    else the compact spec ('heuristic:value=2'); labels stay distinct for canonical specs."""
    specs = list(dict.fromkeys(map(str, specs)))
    families = [spec.split(":")[0] for spec in specs]
    return {spec: family if families.count(family) == 1 and family in POLICIES else compact_spec(spec)
            for spec, family in zip(specs, families)}


def _frames(race_out, stage_out, n, first_race, n_stages):
    races = {"race": np.arange(first_race, first_race + len(race_out))}
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
    seed: root seed (>= 0).
    options: rule options, {name: value} (OPTIONS; docs/etape.md).
    threads: Numba threads for this call (default: all cores).
    progress: progress(done, total) is called per chunk.

    Returns (races_df, stages_df): one row per race and one per stage
    (columns: docs/etape.md), both with the run's identity in `.attrs`:
    game ("etape"), players, policies (canonical specs by slot), seed,
    races, first_race, stages_per_race, options (every option, defaults
    filled in), version, wall_seconds.

    Raises ValueError naming the problem: players, races or seed out of
    range, a policy list that does not fit the table, an unknown policy,
    parameter or rule option, a bad value.
    """
    n = check_players(players)
    if isinstance(policies, str):  # one spec for every slot, not a sequence of one-letter names
        policies = [policies]
    policies = list(policies or ["heuristic"])
    if n % len(policies):
        raise ValueError(f"{len(policies)} policies for {n} players: give one per seat slot, or a list that "
                         f"repeats around the table (1 or a divisor of {n})")
    policies = policies * (n // len(policies))
    if races < 0 or seed < 0:
        raise ValueError(f"races and seed must be >= 0, not races={races}, seed={seed}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"options must be a dict of rule option name: value, e.g. {{'mode': 'endurance'}}, "
                        f"not {type(options).__name__}")
    parsed = [parse_policy(p) for p in policies]
    pids = np.array([p[0] for p in parsed], np.int64)
    prm = np.stack([p[1] for p in parsed])
    full = resolve_options(options)
    opts = option_vector(full)
    if not -1 <= opts[K.O_WITHHOLD_SEAT] < n:
        raise ValueError(f"withhold_seat must be -1 or a seat 0-{n - 1}")
    n_stages = int(K.stages_per_race(n, opts))
    race_out = np.zeros((races, K.RACE_COLS), np.int64)
    stage_out = np.zeros((races * n_stages, K.STAGE_COLS), np.int64)
    before = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(threads)
    try:
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
    finally:
        numba.set_num_threads(before)
    wall = time.perf_counter() - started
    races_df, stages_df = _frames(race_out, stage_out, n, first_race, n_stages)
    attrs = {"game": GAME, "seed": int(seed), "version": package_version(), "players": n,
             "policies": [p[2] for p in parsed], "options": full, "first_race": int(first_race),
             "races": int(races), "stages_per_race": n_stages, "wall_seconds": wall}
    races_df.attrs = dict(attrs)
    stages_df.attrs = dict(attrs)
    return races_df, stages_df


# ---------------------------------------------------------------- summaries
def _players(df: pd.DataFrame) -> int:
    return int(df.attrs.get("players") or sum(c.startswith("time_") for c in df.columns))


def win_shares(races_df: pd.DataFrame) -> pd.DataFrame:
    """Long table race x seat: slot, policy, time, win share (1/k to each of
    the k seats ranked first: level on time, and under gc_tie=stage_places
    on the tie-break too)."""
    n = _players(races_df)
    policies = races_df.attrs.get("policies", [str(k) for k in range(n)])
    times = races_df[[f"time_{s}" for s in range(n)]].to_numpy()
    lead = races_df[[f"rank_{s}" for s in range(n)]].to_numpy() == 1
    share = lead / lead.sum(axis=1, keepdims=True)
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


def win_rates(races_df: pd.DataFrame, by: str = "seat") -> pd.DataFrame:
    """Win rate per seat, slot or policy with n and a 95 % Wilson interval.
    A shared first place counts 1/k to each of the k leaders."""
    long = win_shares(races_df)
    out = long.groupby(by, sort=True).agg(n=("win", "size"), wins=("win", "sum"),
                                          mean_time=("time", "mean")).reset_index()
    out["win_rate"] = out["wins"] / out["n"]
    out["ci_low"], out["ci_high"] = wilson_interval(out["wins"], out["n"])
    return out


def wins_text(wins: float) -> str:
    """Wins for print: shared first places make them sums of 1/k, so a whole
    number when whole ("10000", not "1e+04"), else one decimal ("2438.2")."""
    text = f"{wins:.1f}"
    return text[:-2] if text.endswith(".0") else text


def seat_uniformity(races_df: pd.DataFrame) -> ChiSquare:
    """Chi-square test that wins are spread evenly over seats.
    Shared first places count 1/k to each leader (about 5 % of four-player
    races), which spreads wins more evenly than whole wins would: the test
    is then slightly conservative, never too eager."""
    return chisquare_uniform(win_rates(races_df, "seat")["wins"].to_numpy())


# The per-seat stage fields the report reads (cli.etape.load_run(..., fields=...)
# reads only these of a run file): the others (secs, passes, skipped, laid,
# finish, side) and the columns' state (start, coln, lo, hi) it never uses.
REPORT_STAGE_FIELDS = ("slot", "time", "cum", "cards", "crev", "vita", "braq", "hand", "dealt", "place")
# The per-seat stage fields paired_metrics reads (race_tension's GC: cum, and place under gc_tie=stage_places).
PAIRED_STAGE_FIELDS = ("cum", "place")
# The per-seat fields stage_long needs for the report's long table (profile_stats,
# profile_by_policy, joker_usage, joker_stage_effect, the stage-time figure).
LONG_REPORT_FIELDS = ("slot", "time", "cards", "crev", "vita", "braq")


def stage_long(stages_df: pd.DataFrame, fields=None) -> pd.DataFrame:
    """Long table stage x seat with the per-seat fields and the policy.

    fields: the per-seat fields to include (default: every field of
    K.STAGE_SEAT_FIELDS the table holds). With `fields` the table is
    compact, for the report: `slot` is always included, as the policy needs
    it; `seat` is int8 and `policy` a categorical of the policies' names in
    sorted order (not a string per row: canonical specs are long); the other
    columns keep their dtypes, so a table read compactly
    (cli.etape.load_run(..., compact=True)) gives a compact long table. Build
    it once and pass it as `long=` to profile_stats, profile_by_policy,
    joker_usage, joker_stage_effect and anomalies: a report of a million races
    then holds one long table, not one per summary."""
    n = _players(stages_df)
    policies = np.asarray(stages_df.attrs.get("policies", [str(k) for k in range(n)]), dtype=object)
    compact = fields is not None
    if fields is None:
        fields = [f for f in K.STAGE_SEAT_FIELDS if f"{f}_0" in stages_df.columns]
    fields = ["slot"] + [f for f in fields if f != "slot"]
    rows = len(stages_df)
    cols = {}
    for name in ("race", "stage", "picker", "profile", "winner", "blocked"):
        values = stages_df[name]
        if isinstance(values.dtype, pd.CategoricalDtype):
            cols[name] = pd.Categorical.from_codes(np.tile(values.cat.codes.to_numpy(), n), values.cat.categories,
                                                   ordered=values.cat.ordered)
        else:
            cols[name] = np.tile(values.to_numpy(), n)
    cols["seat"] = np.repeat(np.arange(n, dtype=np.int8 if compact else np.int64), rows)
    for field in fields:
        cols[field] = np.concatenate([stages_df[f"{field}_{s}"].to_numpy() for s in range(n)]) if n else np.zeros(0)
    if compact:
        names = sorted(set(policies))
        cols["policy"] = pd.Categorical.from_codes(
            np.array([names.index(p) for p in policies], np.int8)[cols["slot"]], names)
    else:
        cols["policy"] = policies[cols["slot"]]
    long = pd.DataFrame(cols, copy=False)
    long["is_picker"] = long["seat"] == long["picker"]
    long["won"] = long["seat"] == long["winner"]
    return long


def profile_stats(stages_df: pd.DataFrame, long: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per profile: how often picked, blocked and without a winner (with
    95 % Wilson intervals), the picker's stage-win rate (with interval) and
    advantage in seconds over the others. long: stage_long(stages_df), if
    already built."""
    n = _players(stages_df)
    long = stage_long(stages_df, LONG_REPORT_FIELDS) if long is None else long
    rows = []
    for profile, grp in long[["profile", "is_picker", "won", "time", "cards"]].groupby("profile", observed=True):
        stages = stages_df[stages_df["profile"] == profile]
        k = len(stages)
        picker = grp[grp["is_picker"]]
        others = grp[~grp["is_picker"]]
        blocked = int(stages["blocked"].sum())
        pw = int(picker["won"].sum())
        no_winner = int((stages["winner"] < 0).sum())
        b_lo, b_hi = wilson_interval(blocked, k)
        n_lo, n_hi = wilson_interval(no_winner, k)
        w_lo, w_hi = wilson_interval(pw, k)
        rows.append({"profile": profile, "stages": k, "share": k / len(stages_df),
                     "blocked_rate": blocked / k, "blocked_lo": b_lo, "blocked_hi": b_hi,
                     "no_winner_rate": no_winner / k, "no_winner_lo": n_lo, "no_winner_hi": n_hi,
                     "picker_win_rate": pw / k, "picker_win_lo": w_lo, "picker_win_hi": w_hi,
                     "fair_win_rate": 1 / n,
                     "picker_time": picker["time"].mean(), "others_time": others["time"].mean(),
                     "picker_advantage_s": others["time"].mean() - picker["time"].mean(),
                     "mean_turns": stages["turns"].mean(),
                     "mean_cards_left": grp["cards"].mean()})
    return pd.DataFrame(rows)


def profile_by_policy(stages_df: pd.DataFrame, long: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean stage time and stage-win rate per profile and policy: who each
    profile favours. long: stage_long(stages_df), if already built."""
    long = stage_long(stages_df, LONG_REPORT_FIELDS) if long is None else long
    out = long.groupby(["profile", "policy"], observed=True).agg(
        n=("time", "size"), mean_time=("time", "mean"), wins=("won", "sum")).reset_index()
    if isinstance(out["policy"].dtype, pd.CategoricalDtype):  # a compact long table's: the names, as from strings
        out["policy"] = pd.Series(np.asarray(out["policy"], dtype=object), index=out.index)
    out["win_rate"] = out["wins"] / out["n"]
    out["ci_low"], out["ci_high"] = wilson_interval(out["wins"], out["n"])
    return out


def joker_holders(stages_df: pd.DataFrame) -> dict[str, list[int]]:
    """The seats that hold each joker in this run: every seat for a joker of
    the game (rule option `jokers`), less `withhold_seat` for the jokers in
    `withhold_jokers`. A joker of no seat is left out."""
    options = stages_df.attrs.get("options", {})
    dealt = _jokers_mask(options.get("jokers", OPTIONS["jokers"][1]))
    withheld = _jokers_mask(options.get("withhold_jokers", ""))
    seat = int(options.get("withhold_seat", -1))
    out = {}
    for k, joker in enumerate(K.JOKER_NAMES):
        seats = [s for s in range(_players(stages_df))
                 if dealt >> k & 1 and not (s == seat and withheld >> k & 1)]
        if seats:
            out[joker] = seats
    return out


JOKER_COLUMNS = (("crevaison", "crev"), ("vitamine", "vita"), ("braquet", "braq"))


def joker_usage(stages_df: pd.DataFrame, long: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per joker of the game (`joker_holders`: a joker that no seat holds
    has no row): uses per race and player, share used in the last stage, and
    the immediate effect (turns skipped by Crevaison targets, cards laid in a
    Braquet turn, self-targeted Crevaisons). The shares (use_rate of the
    player-races in which the player held the joker: a player holds each
    joker once a race, unless `withhold_seat` denies it; in_last_stage and,
    for Crevaison, on_self of the uses) come with 95 % intervals clustered
    by race (`_low`, `_high`). long: stage_long(stages_df), if already built."""
    long = stage_long(stages_df, LONG_REPORT_FIELDS) if long is None else long
    last = (long["stage"] == long["stage"].max()).to_numpy()
    holders = joker_holders(stages_df)
    # Per-race sums by one factorization of the race ids (races in order), not a groupby per sum.
    race_codes, race_ids = pd.factorize(long["race"].to_numpy(), sort=True)
    seats = long["seat"].to_numpy()

    def per_race(flags: np.ndarray) -> pd.Series:
        return pd.Series(np.bincount(race_codes, weights=flags, minlength=len(race_ids)).astype(np.int64),
                         index=race_ids)

    rows = []
    for joker, col in JOKER_COLUMNS:
        if joker not in holders:
            continue
        held = np.isin(seats, holders[joker])
        # the (race, seat) pairs that held the joker, and per race the seats that did
        pairs = np.zeros((len(race_ids), int(seats.max(initial=0)) + 1), bool)
        pairs[race_codes[held], seats[held]] = True
        seat_races = int(pairs.sum())
        players = pd.Series(pairs.sum(axis=1), index=race_ids)
        used = (long[col].to_numpy() >= 0) & held
        row = {"joker": joker, "uses": int(used.sum()), "use_rate": used.sum() / seat_races,
               "in_last_stage": float((used & last).sum() / max(used.sum(), 1))}
        shares = {"use_rate": (per_race(used), players), "in_last_stage": (per_race(used & last), per_race(used))}
        if joker == "crevaison":
            on_self = long["crev"].to_numpy() == seats
            row["on_self"] = float(on_self[used].sum() / used.sum()) if used.any() else float("nan")
            shares["on_self"] = (per_race(used & on_self), per_race(used))
        if joker == "braquet":
            row["cards_per_use"] = float(long.loc[used, "braq"].mean())
        for key, (x, y) in shares.items():
            row[f"{key}_low"], row[f"{key}_high"] = _share_by_race(x.to_numpy(float), y.to_numpy(float))
        rows.append(row)
    order = ["joker", "uses"]
    for key in ("use_rate", "in_last_stage", "on_self"):
        order += [key, f"{key}_low", f"{key}_high"]
    return pd.DataFrame(rows).reindex(columns=order + ["cards_per_use"])


def _share_by_race(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """95 % interval of the share sum(x) / sum(y), clustered by race (x, y:
    per race): the players of a race share its deals, so what they do is
    not a set of independent trials."""
    _, low, high = ratio_interval(len(x), x.sum(), y.sum(), (x * x).sum(), (y * y).sum(), (x * y).sum())
    return low, high


def joker_stage_effect(stages_df: pd.DataFrame, long: pd.DataFrame | None = None) -> pd.DataFrame:
    """Observational: mean stage time of a player in stages where they used a
    joker minus in their other stages, over the seats dealt it (same policy
    and profile mix); one row per joker of the game (`joker_holders`).
    Confounded by when policies choose to play it; see joker_value for the
    paired causal estimate. long: stage_long(stages_df), if already built."""
    long = stage_long(stages_df, LONG_REPORT_FIELDS) if long is None else long
    holders = joker_holders(stages_df)
    rows = []
    for joker, col in JOKER_COLUMNS:
        if joker not in holders:  # not in the game: no stage "without" it to compare with
            continue
        held = long[long["seat"].isin(holders[joker])]  # a seat denied the joker could not use it
        used = held[col] >= 0
        a, b = held.loc[used, "time"], held.loc[~used, "time"]
        diff = a.mean() - b.mean() if len(a) and len(b) else float("nan")
        se = math.sqrt(a.var() / len(a) + b.var() / len(b)) if len(a) > 1 and len(b) > 1 else float("nan")
        rows.append({"joker": joker, "stages_used": len(a), "time_used": a.mean(),
                     "time_not_used": b.mean(), "difference_s": diff,
                     "ci_low": diff - 1.96 * se, "ci_high": diff + 1.96 * se})
    return pd.DataFrame(rows).reindex(columns=["joker", "stages_used", "time_used", "time_not_used",
                                               "difference_s", "ci_low", "ci_high"])


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


def side_classifications(races_df: pd.DataFrame) -> pd.DataFrame:
    """Per policy: mean mountain and sprint points and the share of races in
    which it tops each side classification (shared tops count 1/k)."""
    n = _players(races_df)
    long = win_shares(races_df)
    for side in ("mountain", "sprint"):
        pts = races_df[[f"{side}_{s}" for s in range(n)]].to_numpy()
        top = pts == pts.max(axis=1, keepdims=True)
        top = top / top.sum(axis=1, keepdims=True)
        long[f"{side}_top"] = top.T.reshape(-1)
    return long.groupby("policy").agg(
        n=("race", "size"), mountain_points=("mountain", "mean"), mountain_top=("mountain_top", "mean"),
        sprint_points=("sprint", "mean"), sprint_top=("sprint_top", "mean")).reset_index()


def anomalies(races_df: pd.DataFrame, stages_df: pd.DataFrame, long: pd.DataFrame | None = None,
              usage: pd.DataFrame | None = None) -> pd.DataFrame:
    """Counts of stages cut off by the turn cap, blocked stages, stages with
    no winner, shared race wins (each rate with its 95 % Wilson interval),
    and the jokers in the game (rule option `jokers`) that nobody used,
    named in `detail`. long, usage: stage_long(stages_df) and
    joker_usage(stages_df), if already built."""
    usage = joker_usage(stages_df, long) if usage is None else usage  # the jokers of the game only
    dealt = _jokers_mask(stages_df.attrs.get("options", {}).get("jokers", OPTIONS["jokers"][1]))
    in_game = [r for r in usage.itertuples() if dealt >> K.JOKER_NAMES.index(r.joker) & 1]
    unused = [r.joker for r in in_game if r.uses == 0]
    rows = [
        ("stages cut off by the turn cap", int(stages_df["capped"].sum()), len(stages_df), ""),
        ("stages blocked (nobody can lay)", int(stages_df["blocked"].sum()), len(stages_df), ""),
        ("stages without a winner", int((stages_df["winner"] < 0).sum()), len(stages_df), ""),
        ("races with a shared first place", int((races_df["winner"] < 0).sum()), len(races_df), ""),
        ("jokers in the game never used", len(unused), len(in_game), ", ".join(unused)),
    ]
    out = pd.DataFrame(rows, columns=["what", "count", "out_of", "detail"])
    out.insert(3, "rate", out["count"] / out["out_of"])
    # the jokers never used are a count of the game's few jokers, not a rate of events: no interval
    events = np.arange(len(out)) < len(out) - 1
    low, high = wilson_interval(out["count"], out["out_of"])
    out.insert(4, "ci_low", np.where(events, low, np.nan))
    out.insert(5, "ci_high", np.where(events, high, np.nan))
    return out


# ------------------------------------------- length, tension, progress, cards
def race_turns(stages_df: pd.DataFrame) -> pd.Series:
    """Turns per race (the stages' turns summed; skips and passes included)."""
    return stages_df.groupby("race", sort=True)["turns"].sum()


def length_table(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Turns per stage (all stages, then per profile) and turns per race:
    n, mean, sd, median, 95th percentile, min, max. A turn is one player's
    turn, skipped (Crevaison) and passing turns included."""
    rows = [distribution_row("turns per stage", stages_df["turns"]),
            distribution_row("turns per race", race_turns(stages_df))]
    profiles = stages_df["profile"].astype(str)
    for name in K.PROFILE_NAMES:
        if (profiles == name).any():
            rows.append(distribution_row(f"turns per stage: {name}", stages_df.loc[profiles == name, "turns"]))
    return pd.DataFrame(rows)


def _per_stage(stages_df: pd.DataFrame, field: str = "cum") -> tuple[np.ndarray, np.ndarray]:
    """(race ids (R,), the per-seat `field` (R, stages, n)) with the stages in order."""
    n = _players(stages_df)
    order = _stage_order(stages_df)
    races = stages_df["race"].to_numpy()
    if order is not None:
        races = races[order]
    ids, counts = np.unique(races, return_counts=True)
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
    lead = races_df[[f"rank_{s}" for s in range(n)]].to_numpy() == 1
    share = lead / lead.sum(axis=1, keepdims=True)
    for s in range(n):
        out[f"won_seat{s}"] = share[:, s]
    policies = races_df.attrs.get("policies", [])
    if len(set(policies)) > 1:
        slots = races_df[[f"slot_{s}" for s in range(n)]].to_numpy()
        for k in range(n):
            out[f"won_slot{k}"] = (share * (slots == k)).sum(axis=1)
    return out


def tension_table(stages_df: pd.DataFrame, tension: pd.DataFrame | None = None) -> pd.DataFrame:
    """Lead changes per race, the winner's largest deficit and the final gap
    (race_tension), as distributions: n, mean, sd, median, p95, min, max.
    tension: race_tension(stages_df), if already computed."""
    t = race_tension(stages_df) if tension is None else tension
    return pd.DataFrame([distribution_row("GC lead changes per race", t["lead_changes"]),
                         distribution_row("winner's largest deficit after a stage (s)", t["winner_deficit"]),
                         distribution_row("final gap: runner-up's time minus the winner's (s)", t["final_gap"])])


def leader_holds(stages_df: pd.DataFrame, tension: pd.DataFrame | None = None) -> dict:
    """How often the GC leader before the last stage went on to win: wins, n
    (races with such a leader and a sole winner), rate and 95 % Wilson interval.
    tension: race_tension(stages_df), if already computed."""
    won = (race_tension(stages_df) if tension is None else tension)["leader_before_last_won"].dropna()
    k, n = int(won.sum()), len(won)
    lo, hi = wilson_interval(k, n)
    return {"wins": k, "n": n, "rate": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi}


def progress_table(stages_df: pd.DataFrame, by: str = "policy", value: str = "gap") -> pd.DataFrame:
    """Mean cumulative time (value="cum") or gap to the GC leader (value="gap":
    own cumulative time minus the lowest) after each stage, per policy or seat.

    Columns: group, after_stage (1 = after the first stage), n (seat-races),
    mean, sd, ci_low, ci_high (95 % interval of the mean), band_low/band_high
    (mean +- 1 sd, the spread of races). A policy on several seats pools
    them, its interval clustered by race (stats.mean_curves)."""
    if by not in ("policy", "seat"):
        raise ValueError("by must be 'policy' or 'seat'")
    if value not in ("gap", "cum"):
        raise ValueError("value must be 'gap' or 'cum'")
    n = _players(stages_df)
    policies = np.asarray(stages_df.attrs.get("policies", [str(k) for k in range(n)]), dtype=object)
    cum = stages_df[[f"cum_{s}" for s in range(n)]].to_numpy(np.int64)
    y = cum - cum.min(axis=1, keepdims=True) if value == "gap" else cum
    stage = stages_df["stage"].to_numpy().astype(np.int64) + 1
    if _one_row_per_stage(stages_df):
        if by == "policy":  # the policies' codes in the order of their names, as mean_curves sorts the groups
            names = sorted(set(policies))
            codes = np.array([names.index(p) for p in policies], np.int8)[
                stages_df[[f"slot_{s}" for s in range(n)]].to_numpy()]
        else:
            names = [f"seat {s}" for s in range(n)]
            order = sorted(range(n), key=names.__getitem__)
            names = [names[s] for s in order]
            codes = np.broadcast_to(np.argsort(order), cum.shape)
        return _stage_curves(codes, names, stage, y)
    parts = []
    for s in range(n):
        group = policies[stages_df[f"slot_{s}"].to_numpy()] if by == "policy" else np.full(len(cum), f"seat {s}", object)
        parts.append(pd.DataFrame({"group": group, "after_stage": stage, "race": stages_df["race"].to_numpy(),
                                   "y": y[:, s].astype(float)}))
    return mean_curves(pd.concat(parts, ignore_index=True), "after_stage", cluster="race")


def _one_row_per_stage(stages_df: pd.DataFrame) -> bool:
    """Whether no (race, stage) pair has two rows (a stage table's rows are its stages)."""
    order = _stage_order(stages_df)
    race, stage = stages_df["race"].to_numpy(), stages_df["stage"].to_numpy()
    if order is not None:
        race, stage = race[order], stage[order]
    return not ((np.diff(race) == 0) & (np.diff(stage) == 0)).any()


def _stage_curves(codes: np.ndarray, names: list, stage: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    """stats.mean_curves(long, "after_stage", cluster="race") of the long
    table (group, after_stage, race, y) that the rows x seats of a stage
    table make (names[codes[i, s]], stage[i], the race of row i, y[i, s]; names
    sorted), with
    one row per (race, stage): the per-race cluster of a (group, stage) is
    then the seats of that group in one row, so every sum is taken over the
    rows with numpy, without the long table of rows x seats or its groupby
    by race. The sums are of whole numbers, so they are exact and the
    table equals mean_curves' (tests/test_etape_report.py checks it)."""
    y = y.astype(float)
    xs = np.unique(stage)
    x_index = np.searchsorted(xs, stage)
    size = len(xs)
    frames = []
    for g in range(len(names)):
        member = codes == g
        k = member.sum(axis=1)                   # seats of the group in the row (its race's cluster at that stage)
        t = np.where(member, y, 0.0).sum(axis=1)  # their summed y
        t2 = np.where(member, y * y, 0.0).sum(axis=1)
        sums = {key: np.bincount(x_index, weights=w, minlength=size)
                for key, w in (("n", k), ("s", t), ("ss", t2), ("g", k > 0), ("kk", k * k), ("tt", t * t),
                               ("kt", k * t))}
        keep = sums["n"] > 0
        frames.append(pd.DataFrame({"group": np.full(int(keep.sum()), names[g], dtype=object), "after_stage": xs[keep],
                                    **{key: value[keep] for key, value in sums.items()}}))
    agg = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["group", "after_stage", "n", "s", "ss", "g", "kk", "tt", "kt"])
    for key in ("n", "g", "kk"):
        agg[key] = agg[key].astype(np.int64)
    agg["after_stage"] = agg["after_stage"].astype(np.int64)
    clusters = {"g": agg["g"].to_numpy(), "t": agg["s"].to_numpy(), "k": agg["n"].to_numpy(),
                **{key: agg[key].to_numpy() for key in ("tt", "kk", "kt")}}
    return curves_from_sums(agg[["group", "after_stage"]], agg["n"].to_numpy(), agg["s"].to_numpy(),
                            agg["ss"].to_numpy(), clusters)


def head_to_head(races_df: pd.DataFrame) -> pd.DataFrame:
    """Skill matrix from one run with mixed seats (stats.skill_table): for
    every ordered pair of different policies met in the same race, how often
    the first finished the race ahead of the second in the general
    classification (`rank`; equal ranks are level), with its interval
    clustered by race. Empty when every seat plays the same policy."""
    n = _players(races_df)
    policies = np.asarray(races_df.attrs.get("policies", [str(k) for k in range(n)]), dtype=object)
    names = [policies[races_df[f"slot_{s}"].to_numpy()] for s in range(n)]
    return skill_table(names, [-races_df[f"rank_{s}"].to_numpy() for s in range(n)])


def card_values(stages_df: pd.DataFrame) -> pd.DataFrame:
    """Numbered cards by value, over all colours, seats and stages: dealt,
    laid (dealt minus left: a Vitamine swap moves a card between hands, never
    out of them), left in hand at the stage end (dead: they cost seconds),
    the left share with its 95 % Wilson interval, and the seconds a card left
    costs. Values out of play (3-5 players) are not listed."""
    n = _players(stages_df)
    opts = option_vector(stages_df.attrs.get("options", {}))
    vmin, vmax = K.value_range(n)
    dealt = [stages_df[f"dealt_{s}"].to_numpy(np.int64) for s in range(n)]
    hand = [stages_df[f"hand_{s}"].to_numpy(np.int64) for s in range(n)]
    rows = []
    for v in range(vmin, vmax + 1):
        got = left = 0
        for colour in range(4):
            shift = np.int64(colour * 12 + v - 1)
            for s in range(n):
                got += int(((dealt[s] >> shift) & 1).sum())
                left += int(((hand[s] >> shift) & 1).sum())
        lo, hi = wilson_interval(left, got)
        seconds = opts[K.O_LOW_SECS] if v <= 6 else opts[K.O_HIGH_SECS]
        rows.append({"value": v, "seconds_if_left": int(seconds), "dealt": got,
                     "laid": got - left, "left": left, "left_share": left / got if got else float("nan"),
                     "left_low": lo, "left_high": hi})
    return pd.DataFrame(rows)

