"""Tape l'étape balance report: tables from analysis/etape.py, figures drawn
with matplotlib.figure.Figure (never pyplot), assembled with reports/document.py."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from etappe.analysis import etape as E
from etappe.reports.document import Report

RULES = "../shared/rules/tape_l_etape.md"


def plot_rates(frame: pd.DataFrame, label: str, ax=None, fair: float | None = None):
    """Horizontal bars of `win_rate` with their 95 % intervals."""
    if ax is None:
        ax = Figure(figsize=(7, 0.5 + 0.45 * len(frame))).subplots()
    y = np.arange(len(frame))
    rate = frame["win_rate"].to_numpy()
    err = np.vstack([rate - frame["ci_low"].to_numpy(), frame["ci_high"].to_numpy() - rate])
    ax.barh(y, rate, xerr=err, color="#4a78b0", capsize=3)
    ax.set_yticks(y, [str(v)[:40] for v in frame[label]])
    if fair is not None:
        ax.axvline(fair, color="#888", ls="--", lw=1)
    ax.set_xlabel("win rate (95 % Wilson interval)")
    return ax


def plot_profile_advantage(prof: pd.DataFrame, ax=None):
    """Seconds the picker gains over the others' mean, per profile."""
    if ax is None:
        ax = Figure(figsize=(7, 3)).subplots()
    ax.bar(prof["profile"].astype(str), prof["picker_advantage_s"], color="#c06030")
    ax.axhline(0, color="#444", lw=0.8)
    ax.set_ylabel("picker's advantage (s)")
    ax.tick_params(axis="x", labelrotation=20)
    return ax


def plot_stage_times(long: pd.DataFrame, ax=None):
    """Distribution of stage times per profile (box plot)."""
    if ax is None:
        ax = Figure(figsize=(7, 3.2)).subplots()
    names = [p for p in E.K.PROFILE_NAMES if (long["profile"] == p).any()]
    ax.boxplot([long.loc[long["profile"] == p, "time"] for p in names], showfliers=False)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=20)
    ax.set_ylabel("stage time (s)")
    return ax


def build_report(races_df: pd.DataFrame, stages_df: pd.DataFrame,
                 joker_values: pd.DataFrame | None = None) -> Report:
    """The Tape l'étape report; `joker_values` from analysis.etape.joker_value
    (paired runs) adds the causal joker values when given."""
    meta = races_df.attrs
    n = E._players(races_df)
    rep = Report("Tape l'étape: balance report")

    head = rep.section("Header")
    wall = meta.get("wall_seconds")
    rate = f"{len(races_df) / wall:,.0f} races/s" if wall else "n/a"
    head.table(pd.DataFrame([
        ("game", "Tape l'étape (etape)"), ("rules", RULES),
        ("players", n), ("races", len(races_df)), ("stages", len(stages_df)),
        ("seat design", "policies rotate over seats race by race" if meta.get("options", {}).get("rotate_seats", True)
         else "fixed seats"),
        ("policies (slot: spec)", "; ".join(f"{k}: {p}" for k, p in enumerate(meta.get("policies", [])))),
        ("root seed", meta.get("seed")), ("first race", meta.get("first_race", 0)),
        ("package version", meta.get("version")),
        ("wall time", f"{wall:.2f} s" if wall else "n/a"), ("speed", rate),
        ("rule options", json.dumps(meta.get("options", {}), sort_keys=True)),
    ], columns=["item", "value"]))
    head.text("Reproduce: `etappe simulate etape` with the same players, races, policies, "
              "seed and options; race r uses only keys derived from (seed, r), so any single "
              "race replays alone with simulate(..., first_race=r, races=1).")

    out = rep.section("Outcomes")
    by_policy = E.win_rates(races_df, "policy")
    by_seat = E.win_rates(races_df, "seat")
    out.table(by_policy, "Race win rate per policy (shared first places count 1/k)")
    out.figure(plot_rates(by_policy, "policy", fair=1 / n).figure, "Win rate per policy", "etape_win_policy")
    out.table(by_seat, "Race win rate per seat (seat 0 picks the first stage)")
    chi2, p = E.seat_uniformity(races_df)
    ties = float((races_df["winner"] < 0).mean())
    out.text(f"Seat uniformity: chi-square {chi2:.2f}, p = {p:.3g} (H0: every seat wins 1/{n}). "
             f"Races with a shared first place: {ties:.1%}.")

    prof = E.profile_stats(stages_df)
    long = E.stage_long(stages_df)
    by_prof_pol = E.profile_by_policy(stages_df)
    overview = rep.section("Stage profiles")
    overview.text("Which profile favours whom: the picker's stage-win rate against the fair "
                  f"1/{n}, the picker's mean stage time against the others', and each policy's "
                  "results per profile. A stage blocks when nobody can lay; with 4-6 players "
                  "every card is dealt and no column can stall, so blocking is a 3-player matter.")
    overview.table(prof, "Per profile")
    overview.figure(plot_profile_advantage(prof).figure, "Picker's advantage in seconds per profile",
                    "etape_picker_advantage")
    overview.figure(plot_stage_times(long).figure, "Stage times per profile", "etape_stage_times")
    for row in prof.itertuples():
        sec = rep.section(f"Profile: {row.profile}")
        sec.text(f"Picked in {row.stages} stages ({row.share:.1%}). Blocked {row.blocked_rate:.2%} "
                 f"[{row.blocked_lo:.2%}, {row.blocked_hi:.2%}]; no stage winner in "
                 f"{row.no_winner_rate:.2%}. The picker wins {row.picker_win_rate:.1%} "
                 f"[{row.picker_win_lo:.1%}, {row.picker_win_hi:.1%}] (fair {1 / n:.1%}) and gains "
                 f"{row.picker_advantage_s:.1f} s on the others. Mean {row.mean_turns:.1f} turns, "
                 f"{row.mean_cards_left:.2f} cards left per player.")
        sec.table(by_prof_pol[by_prof_pol["profile"] == row.profile].drop(columns="profile"),
                  "Per policy in this profile")

    jok = rep.section("Jokers")
    jok.table(E.joker_usage(stages_df), "Use and immediate effect (use_rate: per player and race)")
    jok.table(E.joker_stage_effect(stages_df),
              "Stage time with the joker used minus without (observational: confounded by when "
              "the policies choose to play it)")
    if joker_values is not None:
        jok.table(joker_values, f"Worth of each joker in seconds, paired runs on the same deals "
                                f"(seat {joker_values.attrs.get('seat', 0)} with vs without it)")
    else:
        jok.text("For the causal worth of each joker in seconds run analysis.etape.joker_value "
                 "(the same races with and without the joker) and pass it to build_report.")

    side = rep.section("Side classifications")
    side.text("Mountain points come from Montagne stages, sprint points from Plaine stages "
              "(5, 3, 1 for the first three). 'top' is the share of races a policy heads that "
              "classification (shared tops count 1/k).")
    side.table(E.side_classifications(races_df))

    rep.section("Anomalies").table(E.anomalies(races_df, stages_df))
    rep.section("Caveat").text(
        "Bots are not people. These numbers hold for the policies named in the header "
        "(random: uniform legal play, jokers at random; heuristics: fixed scoring rules), "
        "not for human players, who bluff, read hands and time jokers better. No look-ahead "
        "policy is included yet.")
    return rep
