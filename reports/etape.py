"""Tape l'étape balance report: tables from analysis/etape.py's RunSummary of
the run (of its records, or of its files read a batch at a time), figures drawn
with matplotlib.figure.Figure (never pyplot), assembled with reports/document.py.

Sections in the order of design/reports.md: header, outcomes, skill matrix,
length, tension, progress, the stage profiles, card balance (numbered cards,
jokers), side classifications, variant comparison, anomalies, caveat. A
section that cannot apply to one run says so in one line."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from etappe.analysis import etape as E
from etappe.analysis.stats import IntHistogram, counted, p_text, small_expected_note, wilson_interval
from etappe.reports import plots
from etappe.reports.document import Report, Section, percent_ci, percent_text
from etappe.reports.sections import command_line, skill_section, tension_figures

__all__ = ["build_report"]

# the rules are not read from a file: the kernel plays them, fixed for a package version, as docs/etape.md
# states them; the rule options below are all that varies
# what the tables' mean_time is: a player's seconds, less the bonuses it won
TIME_NOTE = "mean_time: seconds, bonuses subtracted, so below 0 where the bonuses outweigh the cards left"
RULES = "built into etappe (docs/etape.md: the rules, each decision and what is not implemented)"


def plot_rates(frame: pd.DataFrame, label: str, ax=None, fair: float | None = None):
    """Horizontal bars of `win_rate` with their 95 % intervals; policies are
    labelled by their short names (E.short_names), wrapped at commas."""
    names = [str(v) for v in frame[label]]
    if label == "policy":
        short = E.short_names(names)
        names = [textwrap.fill(short[v].replace(",", ", "), 28) for v in names]
    lines = sum(name.count("\n") + 1 for name in names)
    if ax is None:
        ax = Figure(figsize=(7, 0.5 + 0.3 * lines + 0.15 * len(frame))).subplots()
    y = np.arange(len(frame))
    rate = frame["win_rate"].to_numpy()
    err = np.vstack([rate - frame["ci_low"].to_numpy(), frame["ci_high"].to_numpy() - rate])
    ax.barh(y, rate, xerr=err, color="#4a78b0", capsize=3)
    ax.set_yticks(y, names)
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


def plot_stage_times(times: list[IntHistogram], ax=None):
    """Distribution of stage times per profile (box plot), from their
    histograms in the order of K.PROFILE_NAMES (RunSummary.stage_times)."""
    if ax is None:
        ax = Figure(figsize=(7, 3.2)).subplots()
    names = [p for p, hist in zip(E.K.PROFILE_NAMES, times) if hist.n]
    ax.bxp([_box(hist) for hist in times if hist.n], showfliers=False)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=20)
    ax.set_ylabel("stage time (s)")
    return ax


def _box(hist: IntHistogram) -> dict:
    """matplotlib.cbook.boxplot_stats of the values a histogram counts (the
    parts a box plot without fliers draws): quartiles by linear
    interpolation, as numpy's percentile, and whiskers at the furthest
    values within 1.5 IQR of the box."""
    values, counts = hist.nonzero()
    ends = np.cumsum(counts)  # values[i] holds the sorted positions ends[i - 1] .. ends[i] - 1

    def at(q: float) -> float:
        h = (ends[-1] - 1) * q
        low, high = (values[np.searchsorted(ends, i, side="right")] for i in (int(np.floor(h)), int(np.ceil(h))))
        return low + (high - low) * (h - np.floor(h))

    q1, med, q3 = at(0.25), at(0.5), at(0.75)
    iqr = q3 - q1
    inside = values[(values >= q1 - 1.5 * iqr) & (values <= q3 + 1.5 * iqr)]
    return {"med": med, "q1": q1, "q3": q3, "whislo": min(inside.min(), q1), "whishi": max(inside.max(), q3)}


def plot_left_share(values: pd.DataFrame, ax=None):
    """Share of the dealt cards of each value still in hand at the stage end
    (card_values), with 95 % intervals."""
    if ax is None:
        ax = Figure(figsize=(7, 3)).subplots()
    share = values["left_share"].to_numpy(float)
    err = np.clip(np.vstack([share - values["left_low"].to_numpy(float),
                             values["left_high"].to_numpy(float) - share]), 0, None)
    ax.bar(values["value"].astype(int), share, yerr=err, capsize=3, color="#7a5195")
    ax.set_xticks(values["value"].astype(int))
    ax.set_xlabel("card value")
    ax.set_ylabel("left in hand / dealt")
    return ax


_FAMILY_TEXT = {
    E.K.POL_RANDOM: "random: uniform legal play, jokers at random",
    E.K.POL_HEURISTIC: "heuristics: fixed scoring rules",
    E.K.POL_LOOKAHEAD: "look-ahead: playouts by heuristic players for the first card of a turn, every "
                       "other decision heuristic",
}


def caveat_text(meta: dict) -> str:
    """The caveat naming the policies of the run (and what each family is)."""
    specs = list(dict.fromkeys(meta.get("policies") or []))
    families = []
    for spec in specs:
        pid = E.POLICIES.get(str(spec).split(":")[0], (None,))[0]
        if pid in _FAMILY_TEXT and _FAMILY_TEXT[pid] not in families:
            families.append(_FAMILY_TEXT[pid])
    kinds = f" ({'; '.join(families)})" if families else ""
    return ("Bots are not people. Every number here holds for these policies only: "
            + (", ".join(map(str, specs)) or "?") + kinds + "; not for human players, who bluff, read "
            "hands and time jokers better. Stronger or weaker play can move the win rates, the profiles' "
            "and the jokers' worth and the length of a stage.")


def _skill(sec: Section, s: E.RunSummary) -> None:
    h2h = s.head_to_head()
    names = E.short_names(list(h2h["policy"]) + list(h2h["opponent"]))  # policies as in the header
    skill_section(sec, h2h.assign(policy=h2h["policy"].map(names), opponent=h2h["opponent"].map(names)), "race",
                  "in the general classification, when both were in the race; level finishes count 1/2",
                  "e.g. random, heuristic, lookahead",
                  "Matches of two policies on the same deals (a tournament) exist for the race games only.",
                  "etape_skill_matrix")


def _length(sec: Section, s: E.RunSummary) -> None:
    stages = s.stages_per_race.nonzero()[0].tolist()
    mode = s.attrs.get("options", {}).get("mode", "sprint")
    sec.text(f"Every race has {', '.join(map(str, stages))} stages ({mode} mode: fixed by the rules and the "
             "player count), so stages per race has no spread. A turn is one player's turn, skipped "
             "(Crevaison) and passing turns included.")
    table = s.length_table()
    sec.table(table, "Length: mean, median and 95th percentile (inverse ECDF), per stage, per race and per "
                     "profile; the 95 % interval of the mean (ci_low, ci_high) for turns per race only, as the "
                     "stages of a race go together")
    rows = table.set_index("metric")
    for key, label, hist in (("stage", "turns per stage", s.turns_stage), ("race", "turns per race", s.turns_race)):
        fig = plots.length_panel(hist.frame(), label, rows.loc[label, "median"], rows.loc[label, "p95"],
                                 counted=f"{key}s")
        sec.figure(fig, f"Histogram and ECDF of {label}", f"etape_length_{key}")


def _tension(sec: Section, s: E.RunSummary) -> None:
    sec.text("From the general classification (GC: cumulative times; a tie broken on stage places where the rule "
             "option gc_tie is stage_places) after each stage. Lead changes: times the "
             "sole GC leader changed (a tie keeps the earlier leader; the first leader is no change). "
             "Deficit: the eventual winner's largest gap behind the GC leader after any stage (0: never "
             "behind). Final gap: the runner-up's time minus the winner's. Races with a shared first place "
             "have no deficit or gap.")
    sec.table(s.tension_table(), "Tension (per race)")
    hold = s.leader_holds()
    if hold["n"]:
        sec.text(f"The GC leader before the last stage won "
                 f"{percent_ci(hold['rate'], hold['ci_low'], hold['ci_high'])} of the {counted(hold['n'], 'race')} with a sole leader then and a sole winner.")
    tension_figures(sec, s.tension["lead_changes"].frame(), s.tension["winner_deficit"].frame(),
                    "GC lead changes per race", "winner's largest deficit (s)", "etape_lead_changes",
                    "etape_winner_deficit", counted="races")


def _progress(sec: Section, s: E.RunSummary) -> None:
    by_policy = s.progress_table("policy", "gap")
    by_seat = s.progress_table("seat", "gap")
    sec.text("Mean gap to the GC leader (own cumulative time minus the lowest, in seconds; lower is better) "
             "after each stage, per policy and per seat. Dark band: 95 % interval of the mean; light band: "
             "mean +- 1 sd (the spread of races). n counts seat-races.")
    by_policy = by_policy.assign(group=by_policy["group"].map(E.short_names(by_policy["group"])))
    for frame, key, what in ((by_policy, "policy", "policy"), (by_seat, "seat", "seat")):
        ax = plots.progress_curves(frame.rename(columns={"after_stage": "round"}),
                                   ylabel="gap to the GC leader (s)", xlabel="after stage")
        sec.figure(ax.figure, f"Gap to the GC leader after each stage, per {what}", f"etape_progress_{key}")
    sec.table(by_policy[["group", "after_stage", "n", "mean", "ci_low", "ci_high", "sd"]],
              "Mean gap to the GC leader (s) after each stage, per policy")


def _cards(sec: Section, s: E.RunSummary) -> None:
    values = s.card_values()
    sec.text("Numbered cards by value (all colours): dealt, laid and left in hand at the stage end, where "
             "they cost seconds. Which values end up dead? The jokers, the game's special cards, follow in "
             "the next section. The share laid by the eventual winner is not given: a Vitamine swap moves "
             "cards between hands and the records do not say who laid which card.")
    sec.table(values, "Numbered cards by value (left share: 95 % interval clustered by race)")
    sec.figure(plot_left_share(values).figure, "Share of the dealt cards left in hand, by value",
               "etape_cards_left")


def capped_text(capped: int, stages: int, cap: int) -> str:
    """The warning at the head of Outcomes when the turn cap cut stages off:
    every number after it counts those stages as they stood at the cut."""
    hit = f"hit the turn cap of {counted(cap, 'turn')} (rule option turn_cap)"
    if 2 * capped > stages:
        head = (f"Every stage was cut off: all {stages} stages {hit}" if capped == stages else
                f"Most stages were cut off: {capped} of {stages} ({percent_text(capped / stages)}) {hit}")
        return (f"{head}. They were timed on the cards left in hand then, not played to their end, so the win "
                "rates and every table below measure the cap more than the game; raise turn_cap to play the "
                "stages out.")
    was, it, its = ("was", "it", "its") if capped == 1 else ("were", "they", "their")
    return (f"{capped} of {counted(stages, 'stage')} ({percent_text(capped / stages)}) {hit} and {was} cut off: "
            f"{it} {was} timed on the cards left in hand then, not played to {its} end, and the tables below "
            f"count {'it' if capped == 1 else 'them'} so (Anomalies).")


def one_policy_text(policy: str, does: str) -> str:
    """The start of the sentence that stands for a per-policy rate when one
    policy plays every seat: what it therefore `does`."""
    return f"One policy ({E.compact_spec(policy)}) plays every seat, so it {does}"


def _printed_wins(rates: pd.DataFrame) -> pd.DataFrame:
    """A win_rates table for print: wins (sums of 1/k shares) as E.wins_text."""
    return rates.assign(wins=rates["wins"].map(E.wins_text))


def build_report(races_df: pd.DataFrame | E.RunSummary, stages_df: pd.DataFrame | None = None,
                 joker_values: pd.DataFrame | None = None, on_section=None) -> Report:
    """The Tape l'étape report of a run, from its records (races_df,
    stages_df) or their analysis.etape.RunSummary (stages_df then None:
    cli.etape.summarize_run reads a run file a chunk at a time into one);
    `joker_values` from analysis.etape.joker_value (paired runs) adds the
    causal joker values when given. `on_section(title)` is told each section
    as it is begun. A run of no races is refused (ValueError)."""
    s = races_df if isinstance(races_df, E.RunSummary) else E.summarize(races_df, stages_df)
    if s.races == 0:  # simulate(races=0) gives empty tables: no number to show
        raise ValueError("a run of no races has nothing to report")
    if s.stages == 0:  # the profiles, jokers, lengths and tension are per stage
        raise ValueError("a races frame needs its stages frame: build_report(races_df, stages_df)")
    meta = s.attrs
    n = s.players
    rep = Report("Tape l'étape: balance report", on_section=on_section)
    head = rep.section("Header")
    wall = meta.get("wall_seconds")
    run_races = meta.get("races", s.races)  # the wall time is the whole run's, of these or more races
    rate = f"{run_races / wall:,.0f} races/s" if wall else "n/a"
    head.table(pd.DataFrame([
        ("game", "Tape l'étape (etape)"), ("rules", RULES),
        ("players", n), ("races", s.races if run_races == s.races else f"{s.races} of the run's {run_races}"),
        ("stages", s.stages),
        ("seat design", "policies rotate over seats race by race" if meta.get("options", {}).get("rotate_seats", True)
         else "fixed seats"),
        ("policies (slot: spec)", "; ".join(f"{k}: {p}" for k, p in enumerate(meta.get("policies", [])))),
        ("root seed", meta.get("seed")), ("first race", meta.get("first_race", 0)),
        ("package version", meta.get("version")),
        ("wall time", f"{wall:.2f} s" if wall else "n/a"), ("speed", rate),
        ("rule options", json.dumps(meta.get("options", {}), sort_keys=True)),
        ("reproduce", command_line(["simulate", "etape"], n, s.races, list(meta.get("policies", [])),
                                   meta.get("options", {}), meta.get("seed"))
         if meta.get("first_race", 0) == 0 else
         f"analysis.etape.simulate(..., first_race={meta['first_race']}) with the items above"),
    ], columns=["item", "value"]))
    head.text("Race r uses only keys derived from (seed, r), so any single race replays alone with "
              "simulate(..., first_race=r, races=1).")

    out = rep.section("Outcomes")
    if s.capped:  # said first: the rates below count those stages as cut off
        out.text(capped_text(s.capped, s.stages, meta.get("options", {}).get("turn_cap", E.OPTIONS["turn_cap"][1])))
    by_policy = s.win_rates("policy")
    by_seat = s.win_rates("seat")
    # one policy: its per-policy rates are 1/n by construction, intervals around a number that cannot vary
    one = meta["policies"][0] if len(set(meta["policies"])) == 1 else None
    if one is None:
        out.table(_printed_wins(by_policy), f"Race win rate per policy (n: seat-races; shared first places count 1/k; "
                                            f"{TIME_NOTE} in a race)")
        out.figure(plot_rates(by_policy, "policy", fair=1 / n).figure, "Win rate per policy", "etape_win_policy")
    else:
        out.text(f"{one_policy_text(one, 'wins every race')}: its win rate per seat is 1/{n} by construction, and the seats' "
                 "table is the test.")
    out.table(_printed_wins(by_seat), "Race win rate per seat (seat 0 picks the first stage; shared first places "
                                      f"count 1/k; {TIME_NOTE} in a race)")
    test = s.seat_uniformity()
    note = small_expected_note(test.expected)
    if not meta.get("options", {}).get("rotate_seats", True) and len(set(meta.get("policies", []))) > 1:
        mixed = ("seats keep their policies (rotate_seats=false), so the seats' win rates mix seat and "
                 "policy: this tests both")
        note = f"{note}; {mixed}" if note else mixed
    shared = s.shared
    lo, hi = wilson_interval(shared, s.races)
    out.text(f"Seat uniformity: chi-square {test.statistic:.2f}, {p_text(test.p_value)} (H0: every seat wins 1/{n}"
             + (f"; {note}" if note else "") + f"). Races with a shared first place: "
             f"{percent_ci(shared / s.races, lo, hi)} (95 % Wilson interval).")

    _skill(rep.section("Skill matrix"), s)
    _length(rep.section("Length"), s)
    _tension(rep.section("Tension"), s)
    _progress(rep.section("Progress"), s)

    prof = s.profile_stats()
    by_prof_pol = s.profile_by_policy() if one is None else None
    overview = rep.section("Stage profiles")
    free = meta.get("options", {}).get("column_step") == "free"
    overview.text("Which profile favours whom: the picker's share of the stages with a winner against the fair "
                  f"1/{n} (picker_share_of_wins; a blocked stage has no winner), the picker's mean stage time "
                  "against the others', and each policy's results per profile. A stage blocks when nobody can lay"
                  + ("; under column_step=free a column that jumps past values strands them, so most stages "
                     "block with any player count: see the blocked rates below and docs/etape.md." if free else
                     "; with 4-6 players every card is dealt and no column can stall. ")
                  + ("With 3 players the 8 cards left out break the columns (a column grows one value at a "
                     "time, and cannot pass a card nobody holds), so most stages block, in every profile, and "
                     "end without a winner: see the blocked rates below and docs/etape.md."
                     if n == 3 and not free else ""))
    overview.table(prof, "Per profile")
    overview.figure(plot_profile_advantage(prof).figure, "Picker's advantage in seconds per profile",
                    "etape_picker_advantage")
    overview.figure(plot_stage_times(s.stage_times).figure, "Stage times per profile", "etape_stage_times")
    for row in prof.itertuples():
        sec = rep.section(f"Profile: {row.profile}")
        if np.isnan(row.picker_share_of_wins):
            won = "none of them had a winner"
        else:
            won = (f"{percent_ci(row.picker_share_of_wins, row.picker_share_of_wins_lo, row.picker_share_of_wins_hi)} "
                   f"of those with a winner (fair {percent_text(1 / n)})")
        sec.text(f"Picked in {counted(row.stages, 'stage')} ({percent_text(row.share)}). Blocked "
                 f"{percent_ci(row.blocked_rate, row.blocked_lo, row.blocked_hi, 2)}; no stage winner in "
                 f"{percent_ci(row.no_winner_rate, row.no_winner_lo, row.no_winner_hi, 2)}. The picker wins "
                 f"{percent_ci(row.picker_win_rate, row.picker_win_lo, row.picker_win_hi)} of the stages, "
                 f"{won}, and {'gains' if row.picker_advantage_s >= 0 else 'loses'} "
                 f"{abs(row.picker_advantage_s):.1f} s on the others. Mean {row.mean_turns:.1f} turns, "
                 f"{row.mean_cards_left:.2f} cards left per player.")
        if one is None:
            sec.table(by_prof_pol[by_prof_pol["profile"] == row.profile].drop(columns="profile"),
                      f"Per policy in this profile ({TIME_NOTE} in a stage)")
        else:
            sec.text(f"{one_policy_text(one, 'wins every stage with a winner')}: its win rate per seat is 1/{n} of those by "
                     "construction, and the picker's share above is the test.")

    _cards(rep.section("Card balance"), s)

    jok = rep.section("Jokers")
    holders = s.holders
    absent = [j for j in E.K.JOKER_NAMES if j not in holders]
    denied = {j: seats for j, seats in holders.items() if len(seats) < n}
    if absent:
        jok.text(f"Not in this game (rule option jokers): {', '.join(absent)}; "
                 + ("no joker is played." if not holders else "the tables below cover the others."))
    for joker, seats in denied.items():
        missing = sorted(set(range(n)) - set(seats))
        jok.text(f"{joker} is withheld from seat {', '.join(map(str, missing))} (rule options withhold_seat, "
                 "withhold_jokers): its rates count the seats that hold it.")
    if holders and meta.get("options", {}).get("joker_refresh") == "stage":
        jok.text("Every stage deals the jokers again (rule option joker_refresh=stage): a player may use each "
                 "once a stage, so use_rate, uses per player and race, may exceed 1.")
    if holders:
        jok.table(s.joker_usage(), "Use and immediate effect (use_rate: per player and race; 95 % "
                                   "intervals clustered by race, as the players of a race share its deals)")
        jok.table(s.joker_stage_effect(),
                  "Stage time with the joker used minus without (observational: confounded by when "
                  "the policies choose to play it; 95 % interval of two independent means, the stages "
                  "taken as independent)")
    if joker_values is not None:
        jok.table(joker_values, f"Worth of each joker in seconds, paired runs on the same deals "
                                f"(seat {joker_values.attrs.get('seat', 0)} with vs without it); "
                                "p_holm: Holm's correction over the jokers")
    elif holders:
        jok.text("For the causal worth of each joker in seconds run analysis.etape.joker_value "
                 "(the same races with and without the joker) and pass it to build_report.")

    side = rep.section("Side classifications")
    sides = s.side_classifications()
    if one is None:
        side.text("Mountain points come from Montagne stages, sprint points from Plaine stages "
                  "(5, 3, 1 for the first three). 'top' is the share of races a policy heads that "
                  "classification (shared tops count 1/k).")
    else:
        side.text("Mountain points come from Montagne stages, sprint points from Plaine stages "
                  f"(5, 3, 1 for the first three), per seat-race. {one_policy_text(one, 'heads both in every race')}: "
                  f"its share of their tops per seat is 1/{n} by construction, so it is left out.")
        sides = sides.drop(columns=[c for c in sides.columns if "_top" in c])
    side.table(sides)

    rep.section("Variant comparison").text(
        "One run compares no variants. `etappe compare etape --option-b NAME=VALUE` plays two rule variants on "
        "the same seeds and compares them race by race, and `etappe report a.parquet b.parquet` does the same "
        "for two runs of the same players, policies, seed and races (docs/etape.md); "
        "analysis.etape.joker_value pairs races for the jokers (Jokers above).")
    rep.section("Anomalies").table(s.anomalies(), "Anomalies (rates of stages or races with 95 % Wilson intervals; the jokers "
                                                   "never used are a count, without one)")
    rep.section("Caveat").text(caveat_text(meta))
    return rep
