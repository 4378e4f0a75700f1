"""Balance reports of race-game runs, laid out as in design/reports.md.

`build_report(summary, meta)` gives the report of one run: header (all that
is needed to reproduce it), at a glance, outcomes, length, tension, progress,
card balance, anomalies, caveat. `build_comparison_report(...)` puts two runs
played on the same seeds side by side, the headline answers first.
Numbers go in tables, pictures where a reader would rather look. Statistics
come from `etappe.analysis`; this module only lays them out.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pandas as pd

from ..analysis import race_summary as rs
from ..analysis.compare import (PairedComparison, card_comparison, design_differences, design_paired_table, headline,
                                seat_bias_strength)
from ..analysis.race_summary import RaceSummary
from ..analysis.runio import file_hash
from ..analysis.stats import chi_square_caution, counted, p_text, rate, small_expected_note, wilson_interval
from ..kernels.options import option_text, unused_options_text
from ..kernels.race_design import DesignError, parse_design
from . import plots
from .document import Report, Section, percent, percent_ci, percent_text
from .sections import NO_SKILL_MATRIX, command_line, option_b_words, skill_section, tension_figures

__all__ = ["build_report", "build_comparison_report", "reproduce_command"]


# ------------------------------------------------------------------ helpers
def _chi_square_table_note(sec: Section, tests: pd.DataFrame) -> None:
    """Under a table of seat_uniformity tests: the note when some test's p is only approximate."""
    note = small_expected_note(tests.loc[tests["n"] > 0, "expected"])  # a test of no games has no p to caution
    if note:
        sec.text(f"{note[0].upper()}{note[1:]} (column expected: each cell's expected count under a uniform spread).")


def design_name(meta: dict) -> str:
    """The design's title (or name), marked when the deck is a reconstruction (unless the title says so)."""
    name = str(meta.get("design_title") or meta.get("design", "design"))
    marked = meta.get("reconstructed") and "reconstructed" not in name.lower()
    return f"{name} (reconstructed)" if marked else name


def comparison_names(meta_a: dict, meta_b: dict) -> tuple[str, str]:
    """Short names of the two sides: the designs, with the rule options that
    both take and set differently (an option only one design takes, say
    coups fourrés in a design without safeties, is no variant of the rules).
    A redesign that kept its title (a copy of `decks show --toml`) is told
    apart by its design key, `[design] name`; the same name twice by A and B."""
    oa, ob = meta_a.get("options") or {}, meta_b.get("options") or {}
    diff = sorted(k for k in oa.keys() & ob.keys() if oa[k] != ob[k])

    def name(meta, opts):
        changed = option_text({k: opts[k] for k in diff if k in opts})
        base = design_name(meta)
        return f"{base} ({changed})" if changed else base

    a, b = name(meta_a, oa), name(meta_b, ob)
    if a != b:
        return a, b
    key_a, key_b = meta_a.get("design"), meta_b.get("design")
    if key_a and key_b and key_a != key_b:
        return f"{a} ({key_a})", f"{b} ({key_b})"
    return f"A: {a}", f"B: {b}"


def policy_text(p) -> str:
    """A policy with its parameters, "greedy:attack=3 (greedy: attack=3, noise=0)"; a policy of your own with
    its file's hash, which tells the version played; its label where it has neither."""
    if isinstance(p, dict) and p.get("source_hash"):
        return f"{p.get('name')} (file sha256 {p['source_hash']})"
    if isinstance(p, dict) and p.get("params") and "family" in p:
        params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(p["params"].items()))
        return f"{p.get('name')} ({p.get('family')}: {params})"
    return rs.policy_label(p)


def policies_text(meta: dict) -> str:
    return "; ".join(f"seat {i}: {policy_text(p)}" for i, p in enumerate(meta.get("policies") or []))


def deck_argument(meta: dict) -> str:
    """The design as a command names it: a built-in's name, or its file."""
    source = str(meta.get("design_file") or "")
    return str(meta.get("design", "DESIGN") if not source or source.startswith("builtin:") else source)


def _seating_option(meta: dict) -> tuple[str, ...]:
    seating = meta.get("seating", "fixed")
    return () if seating == "fixed" else (f"--seating {seating}",)


def unused_options(meta: dict) -> dict[str, str]:
    """The run's rule options that change nothing in its design at its player
    count, each with the reason (`etappe decks show` lists them too); none
    where the metadata keeps no design to tell."""
    try:
        design = parse_design(meta["design_text"], meta["design_file"])
        return design.unused_options(int(meta["players"]), meta.get("options") or {})
    except (KeyError, TypeError, ValueError, DesignError):
        return {}


def options_in_play(meta: dict) -> dict:
    """The run's rule options less those that change nothing in its design."""
    unused = unused_options(meta)
    return {k: v for k, v in (meta.get("options") or {}).items() if k not in unused}


def reproduce_command(meta: dict) -> str:
    """The `etappe simulate` command line that replays the run (same seed,
    same games), with the rule options that change something in the design."""
    return command_line(["simulate", deck_argument(meta)], meta.get("players"), meta.get("games"),
                        [rs.policy_label(p) for p in meta.get("policies") or []], options_in_play(meta),
                        meta.get("seed"), _seating_option(meta))


def reproduce_comparison(meta_a: dict, meta_b: dict) -> str:
    """How to make the comparison again: the `etappe compare` command where
    one could have played both runs (the same players, games, policies,
    seating and seed); otherwise `etappe report` of the two runs."""
    same = ("players", "games", "policies", "seating", "seed")
    if any(meta_a.get(k) != meta_b.get(k) for k in same):
        return ("`etappe report A.parquet B.parquet` of the two runs that the commands of the Runs section write "
                "(with `--out`)")
    # compare plays both designs under A's options: an option that changes something in either is given
    unused = unused_options(meta_a).keys() & unused_options(meta_b).keys()
    options_a = {k: v for k, v in (meta_a.get("options") or {}).items() if k not in unused}
    options_b = {k: v for k, v in (meta_b.get("options") or {}).items() if k not in unused}
    option_b = shlex.join(option_b_words(options_a, options_b))
    command = command_line(["compare", deck_argument(meta_a), deck_argument(meta_b)], meta_a.get("players"), meta_a.get("games"),
                           [rs.policy_label(p) for p in meta_a.get("policies") or []], options_a,
                           meta_a.get("seed"), ((option_b,) if option_b else ()) + _seating_option(meta_a))
    return f"`{command}`"


def design_as_played(meta: dict, run_file: str) -> str:
    """How to get the design a run played from its file, and, for a design
    file, whether the file the reproduce command names still holds it (it
    may have been edited since, or be on another machine)."""
    show = f"etappe decks show {shlex.quote(str(run_file))} --toml"
    source = str(meta.get("design_file") or "")
    if not source or source.startswith("builtin:"):
        return f"kept in the run file: {show}"
    try:
        now = file_hash(Path(source).read_text("utf-8-sig"))  # as the design loader reads it
        state = "" if now == meta.get("design_hash") else f"{source} has changed since the run (now hash {now}); "
    except (OSError, UnicodeDecodeError):
        state = f"{source} is not here; "
    return (f"kept in the run file: {state}{show} > played.toml, then the reproduce command with played.toml in "
            f"place of {source}, plays the run again")


def header_table(summary: RaceSummary, meta: dict, run_file: str | None = None) -> pd.DataFrame:
    """Everything needed to reproduce the run, as (item, value) rows; with
    the run's file, how to get the design it played from it."""
    L = summary.layout
    wall = meta.get("wall_seconds")
    fs = summary.c.get("first_seat_games", np.zeros(L.players))
    seating = ", ".join(f"seat {i} -> {L.side_label(s)}" for i, s in enumerate(L.seat_side)) if L.sides < L.players else "one seat per side"
    first = "; ".join(f"seat {i} in {counted(int(v), 'game')}" for i, v in enumerate(fs))
    run_games = meta.get("games", summary.games)  # the wall time is the whole run's, of these or more games
    rows = [
        ("game", meta.get("game", "race")),
        ("design", design_name(meta)),
        ("design file", meta.get("design_file", "")),
        ("design key", meta.get("design", "")),
        ("design hash", meta.get("design_hash", "")),
        ("rule options", json.dumps(options_in_play(meta), sort_keys=True)),
        ("rule options that change nothing here", unused_options_text(unused_options(meta)) or "none"),
        ("players", L.players),
        ("sides / seating", f"{L.sides} sides; {seating}"),
        ("first player (game start)", first),
        ("policies", policies_text(meta)),
        ("seating of the policies", meta.get("seating", "fixed")),
        ("games", summary.games if run_games == summary.games else f"{summary.games} of the run's {run_games}"),
        ("hands", int(summary.c.get("hands", 0))),
        ("root seed", meta.get("seed", "")),
        ("package version", meta.get("version", "")),
        ("turn cap / hand cap", f"{meta.get('turn_cap', '')} / {meta.get('hand_cap', '')}"),
        ("target", f"{meta.get('target', '')} {L.unit}"),
        ("wall time", f"{wall:.2f} s" if isinstance(wall, (int, float)) else ""),
        ("games per second", f"{run_games / wall:.0f}" if isinstance(wall, (int, float)) and wall > 0 else ""),
        ("reproduce", reproduce_command(meta)),
    ]
    if run_file:
        rows.append(("design as played", design_as_played(meta, run_file)))
    return pd.DataFrame({"item": [r[0] for r in rows], "value": [str(r[1]) for r in rows]})


TRIPS_CAPTION = ("Hands: the side that completed the trip, by its turn-order position in that hand (in games of "
                 "several hands the first player moves round each hand, so this is the edge of playing first "
                 "within a hand; n = hands with a completed trip)")


def _rate_display(frame: pd.DataFrame, keep: list[str]) -> pd.DataFrame:
    out = frame[keep + ["wins", "n", "rate", "ci_low", "ci_high"]].copy()
    return out.rename(columns={"rate": "win rate", "ci_low": "95 % low", "ci_high": "95 % high"})


def glance(summary: RaceSummary) -> list[str]:
    """Short sentences with the main numbers of one run."""
    pos = rs.outcomes_by_position(summary)
    tests = rs.seat_uniformity(summary).set_index("test")
    test = tests.iloc[0]
    multi_hand = summary.layout.multi_hand
    length = rs.length_table(summary).iloc[0]
    rates = rs.game_end_rates(summary).set_index("event")
    cap = rates.loc["games that hit the cap (stall)"]
    lines = []
    if summary.games == int(summary.c["no_winner"]):
        lines.append(NO_WINNER)
    elif len(pos):
        first = pos.iloc[0]
        who = "The side that plays first in the game's first hand" if multi_hand else "The side that plays first"
        lines.append(
            f"{who} wins {percent_ci(first['rate'], first['ci_low'], first['ci_high'])} of the "
            f"{counted(int(first['n']), 'game')} with a winner (fair share {percent_text(first['fair_share'])}); chi-square test of uniform wins over "
            f"turn order: chi2 = {test['chi2']:.2f}, df = {int(test['df'])}, {p_text(test['p_value'])}"
            f"{chi_square_caution(test['expected'])}.")
    trips = rs.trips_by_position(summary).iloc[0] if multi_hand else None
    if trips is not None and trips["n"] > 0:
        # the first player moves round each hand: the edge of playing first shows within the hand
        t = tests.loc["uniform completed trips by turn-order position in the hand"]
        lines.append(
            f"In each hand, the side that plays first in it completes "
            f"{percent_ci(trips['rate'], trips['ci_low'], trips['ci_high'])} of the {int(trips['n'])} completed trips (fair share "
            f"{percent_text(trips['fair_share'])}); chi-square test of uniform trips over turn order in the hand: "
            f"chi2 = {t['chi2']:.2f}, df = {int(t['df'])}, {p_text(t['p_value'])}{chi_square_caution(t['expected'])}.")
    turns = "turn" if length["median"] == 1 else "turns"
    mean = f"mean {length['mean']:.1f}"
    if np.isfinite(length["ci_low"]):
        mean += f", 95 % interval [{length['ci_low']:.1f}, {length['ci_high']:.1f}]"
    lines.append(f"A game lasts {length['median']:g} {turns} (median; 95th percentile {length['p95']:g}; {mean}).")
    lines.append(f"{int(cap['count'])} of {counted(summary.games, 'game')} ({percent_ci(cap['rate'], cap['ci_low'], cap['ci_high'])}) "
                 "hit the cap.")
    flags = rs.worth_playing(summary)
    lines += [flags.attrs["withheld"]] if flags.attrs["withheld"] else flagged_card_lines(flags)
    return lines


def flagged_card_lines(flags: pd.DataFrame) -> list[str]:
    """The at-a-glance lines of the cards worth_playing flags, by reason; a
    card that goes with losing or winning with the win rates behind it."""
    lines = []
    for start, what in (("dead: almost never played", "Dead cards (held or discarded nine times in ten): "),
                        ("dead: almost never needed", "Answer cards rarely needed (more than the attacks call for): "),
                        ("goes with losing", "Cards that go with losing: "),
                        ("goes with winning", "Cards that go with winning by a wide margin: ")):
        rows = flags[flags["reason"].str.startswith(start)]
        if start.startswith("goes"):
            names = [f"{r['name']} (sides that played it won {percent_text(r['win_when_played'])}, the others "
                     f"{percent_text(r['win_when_not'])})" for _, r in rows.iterrows()]
        else:
            names = list(rows["name"].astype(str))
        if names:
            lines.append(what + ", ".join(names) + ".")
    return lines


FLAGGED_CAPTION = "Dead cards and cards that go with losing or winning"


def _flag_level_text(flags: pd.DataFrame) -> str:
    """How wide the intervals behind the card flags are (worth_playing's attrs): Bonferroni over the cards judged."""
    judged = flags.attrs["judged"]
    if judged <= 1:
        return "The intervals are 95 % intervals."
    return (f"The intervals are widened for the {judged} cards judged (Bonferroni: each at the "
            f"{100 - 5 / judged:.3g} % level, z = {flags.attrs['z']:.3g}), so that a run flags a card of no "
            "effect with a chance of 5 % at most.")


# ------------------------------------------------------------------ sections
NO_WINNER = ("No game had a winner (see how games end: turn cap or tie), so there are no win rates, no "
             "first-player advantage and no seat test.")


def _outcomes(sec: Section, s: RaceSummary, tag: str = "") -> None:
    L = s.layout
    if s.games == int(s.c["no_winner"]):
        sec.text(NO_WINNER)
        sec.table(rs.game_end_rates(s).rename(columns={"ci_low": "95 % low", "ci_high": "95 % high"}),
                  "How games and hands end (draw, stall / turn cap), with 95 % intervals")
        return
    pos = rs.outcomes_by_position(s)
    seats = rs.outcomes_by_seat(s)
    sec.text("Win rates with 95 % Wilson intervals among the games with a winner, so that a fair share is "
             "1/sides (games without one are counted under how games end). For policies, a game counts once "
             "for each side a policy plays; partners who share a policy count once. A policy wins on at most one "
             "of its sides in a game, so its interval is Wilson's of the games it won among the games it played, "
             "per side it plays there.")
    sec.table(_rate_display(pos, ["position", "fair_share"]), "Win rate by turn-order position at the start of the game (1 = plays first)")
    sec.figure(plots.seat_bias(pos).figure, "Win rate by turn-order position with 95 % intervals", name=f"seat_bias{tag}")
    if L.multi_hand:
        sec.table(_rate_display(rs.trips_by_position(s), ["position", "fair_share"])
                  .rename(columns={"wins": "trips", "win rate": "share"}), TRIPS_CAPTION)
    sec.table(_rate_display(seats, ["seat", "side", "policy"]), "Win rate per seat (a seat wins when its side wins)")
    if len(set(L.policies)) == 1:
        sec.text(ONE_POLICY_OUTCOMES.format(policy=L.policies[0], sides=L.sides))
    elif rs.mirrored_policies(L):
        sec.text(MIRRORED_OUTCOMES.format(teams=_side_policy_text(L)))
    else:
        sec.table(_rate_display(rs.outcomes_by_policy(s), ["policy"]),
                  "Win rate per policy" + (" (policies rotate over the seats game by game)" if L.seating != "fixed" else ""))
        if shared := _shared_side_text(L):
            sec.text(shared)
    if L.players > 1:
        sec.figure(plots.win_bars(seats.assign(label=[f"seat {i}: {p}" for i, p in zip(seats["seat"], seats["policy"])]),
                                  "label", fair_share=1.0 / L.sides).figure, "Win rate per seat", name=f"win_bars{tag}")
    tests = rs.seat_uniformity(s)
    sec.table(tests, "Seat uniformity: Pearson chi-square tests (games with a winner"
              + ("; the completed trips: hands with one)" if L.multi_hand else ")"))
    _chi_square_table_note(sec, tests)
    if rs.sides_differ_in_policy(L):
        sec.text("No test of uniform wins by side: the sides hold different policies, so their win rates differ "
                 "by skill (see the skill matrix); the turn-order test stands, as every policy starts equally often.")
    sec.table(rs.game_end_rates(s).rename(columns={"ci_low": "95 % low", "ci_high": "95 % high"}),
              "How games and hands end (draw, stall / turn cap), with 95 % intervals")


ONE_POLICY_OUTCOMES = ("One policy ({policy}) plays every seat, so it wins every game with a winner: its win rate "
                       "per side is 1/{sides} by construction, and no win rate per policy is given. The seats and "
                       "turn-order positions above are what this run measures.")
MIRRORED_OUTCOMES = ("No win rate per policy: every side holds the same policies ({teams}), so every policy "
                     "sits on every side and wins exactly 1/sides of the games with a winner, whatever its skill. "
                     "Give each side a policy of its own to compare them.")


def _side_policy_text(L) -> str:
    return "; ".join(f"{L.side_label(side)}: {' + '.join(pols)}" for side, pols in enumerate(rs.side_policies(L)))


def _shared_side_text(L) -> str:
    """Where partners on a fixed side play different policies (not on every side alike): one side wins or
    loses as a whole, so each of its policies is given the side's result."""
    if L.seating != "fixed" or rs.mirrored_policies(L):
        return ""
    shared = [f"{' and '.join(dict.fromkeys(pols))} share {L.side_label(side)}"
              for side, pols in enumerate(rs.side_policies(L)) if len(set(pols)) > 1]
    if not shared:
        return ""
    return (f"Partners play different policies: {'; '.join(shared)}. Their win rates and head-to-head results "
            "are that side's, not their own; `etappe tournament` measures each policy's own strength.")


def _skill(sec: Section, s: RaceSummary, tag: str = "") -> None:
    L = s.layout
    if rs.mirrored_policies(L):
        # partners of different policies on every side: each policy finishes ahead of each other exactly as
        # often as behind, by the seating alone; a matrix of 50 % with tight intervals would say "no skill"
        sec.text(f"No skill matrix: every side holds the same policies ({_side_policy_text(L)}"
                 f"{', in every seating the rotation plays' if L.seating != 'fixed' else ''}), so in every game "
                 "each policy finishes ahead of each other policy exactly as often as behind, whatever their "
                 "skill. Give each side a policy of its own (one policy per side, repeated round the table: "
                 "--policy A,B for two sides, A,B,C for three) or play `etappe tournament`, which seats each "
                 "pair of policies on the same deals.")
        return
    skill_section(sec, rs.head_to_head(s), "game",
                  "the winner's side ahead of everyone, then the higher total score, or distance in designs of one "
                  "hand; equal counts 1/2; partners are not opponents", "e.g. random, greedy, lookahead",
                  "Seats " + ("rotate game by game." if s.layout.seating != "fixed" else "are fixed: the first seat "
                              "moves round the table, so every policy starts equally often.")
                  + " `etappe tournament` plays each pair of policies on the same deals.", f"skill_matrix{tag}")
    if shared := _shared_side_text(L):
        sec.text(shared)


TURN_TEXT = "A turn is one player's turn, so a round of the table is as many turns as there are players."


def _length(sec: Section, s: RaceSummary, tag: str = "") -> None:
    table = rs.length_table(s)
    sec.text(f"{TURN_TEXT} At {s.layout.players} players, {counted(s.layout.players, 'turn')} make a round.")
    sec.table(table, "Length: the mean with its 95 % interval (ci_low, ci_high; none for turns per hand, as the "
                     "hands of a game go together), median and 95th percentile of this run's games. "
                     "`etappe compare` gives the difference between two designs or options with its interval")
    metrics = [("game_turns", "turns per game")]
    if s.layout.multi_hand:
        metrics += [("hands_per_game", "hands per game"), ("hand_turns", "turns per hand")]
    for key, label in metrics:
        row = table.set_index("metric").loc[label]
        fig = plots.length_panel(rs.hist_frame(s, key), label, row["median"], row["p95"],
                                 counted="hands" if key == "hand_turns" else "games")
        sec.figure(fig, f"Histogram and ECDF of {label}", name=f"length_{key}{tag}")


def _tension(sec: Section, s: RaceSummary, tag: str = "") -> None:
    unit = s.layout.unit
    if s.layout.multi_hand:
        # the hands are races in distance, but the game is decided on the scores after them
        sec.text("Lead changes: times the strict distance leader changed within a hand, summed over the hands "
                 f"of a game. Deficit ({unit}): the largest gap in distance, in any hand, between that hand's "
                 "leader and the game's eventual winner; the game is decided on the scores after its hands, so "
                 "its own deficit is the winner's largest deficit in score after a hand (0: never behind), "
                 "which the figure shows. Final gap: the winner's total minus the best other total "
                 "(cumulative score, points).")
        deficit, deficit_label = "winner_score_deficit", "winner's largest deficit in score after a hand (points)"
    else:
        sec.text("Lead changes: times the strict distance leader changed. Deficit: the largest gap between the "
                 "leader and the eventual winner during the game (0: the winner was never behind). Final gap: "
                 f"the winner's total minus the best other total (distance, {unit}).")
        deficit, deficit_label = "winner_deficit", f"winner's largest deficit ({unit})"
    sec.table(rs.tension_table(s), "Tension")
    tension_figures(sec, rs.hist_frame(s, "lead_changes"), rs.hist_frame(s, deficit), "lead changes per game",
                    deficit_label, f"lead_changes{tag}", f"winner_deficit{tag}")


PROGRESS_BANDS = ("Dark band: 95 % interval of the mean; light band: mean +- 1 sd (the spread of hands), cut at 0 "
                  "and at the trip (extended where it can be), which no side passes.")


def _rounds_followed(s: RaceSummary) -> str:
    """How many hands the progress curves follow, and how many outlast the rounds the records keep."""
    R = s.layout.rounds[-1]
    hands = int(s.c["hands"])
    longest = s.h["hand_turns"].nonzero()[0].max() if s.h["hand_turns"].n else 0
    past = int(np.sum(s.h["hand_turns"].frame().query("value > @R * @s.layout.players")["count"])) \
        if s.h["hand_turns"].n else 0
    return (f"n = {counted(hands, 'hand')}; " + (f"{past} of them ({percent_text(past / hands)}) {'was' if past == 1 else 'were'} still "
                                      f"being played after round {R} and {'is' if past == 1 else 'are'} not followed "
                                      "further" if past else
                                      f"no hand lasted beyond round {R} (the longest took {counted(int(longest), 'turn')})"))


CURVE_ENDED_SHARE = 0.99


def _curve_rounds(s: RaceSummary) -> tuple[int, ...]:
    """The kept rounds a progress curve shows: up to the first at or after the
    round by which 99 % of the hands had ended. The means barely move after
    it, and one long hand would stretch the axis far beyond the rest."""
    rounds, turns = s.layout.rounds, s.h["hand_turns"]
    if not turns.n:
        return rounds
    ended = turns.quantile(CURVE_ENDED_SHARE) / s.layout.players
    return tuple(r for r in rounds if r < ended) + tuple(r for r in rounds if r >= ended)[:1]


def _round_list(rounds: tuple[int, ...]) -> str:
    """Rounds as read aloud, a run of consecutive ones as a range: 1-12, 14, 16."""
    runs: list[list[int]] = []
    for r in rounds:
        if runs and r == runs[-1][-1] + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs)


def _progress_curve(s: RaceSummary, by: str, last: int) -> pd.DataFrame:
    """progress_table up to round `last`."""
    table = rs.progress_table(s, by)
    return table[table["round"] <= last]


def _progress(sec: Section, s: RaceSummary, tag: str = "") -> None:
    if not s.layout.rounds:
        sec.text("The run has no progress columns.")
        return
    unit = s.layout.unit
    shown = _curve_rounds(s)
    by_pos = _progress_curve(s, "position", shown[-1])
    by_side = _progress_curve(s, "side", shown[-1])
    sec.text(f"Mean distance laid at the end of rounds {_round_list(shown)} of a hand (a round is one "
             "turn per player; the records keep the distance at the end of these rounds, and the curves go on "
             f"until {percent(CURVE_ENDED_SHARE, 0)} % of the hands had ended or the kept rounds end), per "
             "turn-order position of the hand and per seat. A hand that has ended keeps its final distance in the later rounds, so every round "
             f"counts every hand ({_rounds_followed(s)}). {PROGRESS_BANDS}")
    sec.figure(plots.progress_curves(by_pos, ylabel=f"distance ({unit})", ceiling=s.layout.distance_ceiling).figure,
               "Progress by turn-order position", name=f"progress_position{tag}")
    sec.figure(plots.progress_curves(by_side, ylabel=f"distance ({unit})", ceiling=s.layout.distance_ceiling).figure,
               "Progress by seat / side", name=f"progress_side{tag}")
    turns = s.h["hand_turns"]
    picks = {min(s.layout.rounds, key=lambda r: abs(r - turns.quantile(q) / s.layout.players))
             for q in (0.25, 0.5, 0.75, 0.95)} if turns.n else set()
    show = by_pos[by_pos["round"].isin(picks)][["group", "round", "n", "mean", "ci_low", "ci_high", "sd"]]
    sec.table(show, f"Mean distance ({unit}) by turn-order position at the kept rounds nearest to where 25, 50, 75 "
                    "and 95 % of hands had ended")


def _attacks(sec: Section, s: RaceSummary, cb: pd.DataFrame, name: str = "") -> bool:
    """The attack cards' table (turns the victim lost, the victim's win rate), with its notes, for the
    design of `s` (`name` in a comparison); False where the design has none."""
    hz = cb[cb["hazard"]].copy()
    if not len(hz):
        return False
    # a setback blocks no one: its turns lost are not a measure of it (they are always 0)
    setback = hz["role"].astype(str).str.lower().eq("setback").to_numpy()
    hz["victim_turns"] = hz["victim_turns"].astype(object).where(~setback, "")
    hz.loc[setback, "turns_lost_per_hazard"] = np.nan
    hz["n_victims"] = s.c["card_units_received"][hz.index.to_numpy()]
    sec.table(hz[["name", "played", "received", "victim_turns", "turns_lost_per_hazard", "n_victims",
                  "victim_win_rate", "victim_win_low", "victim_win_high"]],
              (f"{name}: a" if name else "A") + "ttacks (hazards, limits, setbacks): turns the victim lost, and the "
              "victim's win rate when hit at least once (n_victims: game x side units hit at least once, in the "
              "games with a winner)")
    if cb["safety"].any():
        sec.text("Received is played less the coups fourrés made against the card: a hazard answered by a coup "
                 "fourré never lands.")
    if (hz["role"].astype(str).str.lower() == "limit").any():
        # a limit stops only the distance cards it blocks, yet each turn under it is counted
        sec.text("Turns lost (victim_turns) are the turns a victim began under the card: for a hazard, turns "
                 "it could lay no distance; for a limit, turns it could lay only the distances the limit "
                 "leaves open. The turns lost to hazards below, and in comparisons, count both. The limit a design "
                 "may start every side under (Stap op's headwind start) shows no card and is not counted: a side's "
                 "turns before its first end-of-limit card are not turns lost.")
    if setback.any():
        sec.text("A setback stops nobody: it takes one laid card of the distance it names from its victim "
                 "(received: the cards taken), so it costs distance, not turns, and its turns lost are left "
                 "blank.")
    return True


def _safeties(sec: Section, cb: pd.DataFrame, name: str = "") -> None:
    """The safeties' table: how many were coups fourrés (`name`: the design's, in a comparison)."""
    sf = cb[cb["safety"]]
    if len(sf):
        sec.table(sf[["name", "drawn", "played", "coups", "in_hand"]].assign(
            coup_share=rate(sf["coups"].to_numpy(), sf["played"].to_numpy())),
            (f"{name}: s" if name else "S") + "afeties: coups fourrés (coup share = coups / played)")


def _cards(sec: Section, s: RaceSummary, tag: str = "") -> None:
    cb = rs.card_balance(s)
    if not len(cb):
        sec.text("The run has no card columns.")
        return
    sec.text("Per card type over all sides and hands. played share = played / drawn; dead = discarded or "
             "still in hand at the end. winner share: share of the plays (in games with a winner) made by the "
             "eventual winner's side; fair share is 1 / sides. Win when played / not: win rate of a side in "
             "games in which it played the card at least once, vs not (units: game x side, among the games with "
             "a winner, as the win rates under Outcomes: a game without one is no loss); the lift is their "
             "difference, an association under these policies, not an effect. Every interval here counts the "
             "cards and sides of one game together (clustered by game), as they are not independent trials: "
             "when one side wins, the others lose. Shares get Wilson's interval at their effective sample size, "
             "the lift the MOVER interval for two correlated shares (analysis/stats.py).")
    main = cb[["name", "role", "drawn", "played", "discarded", "in_hand", "played_per_game", "played_share",
               "played_share_low", "played_share_high", "dead_share", "winner_share", "winner_share_low",
               "winner_share_high"]]
    sec.table(main, "Card balance: drawn, played, discarded, in hand")
    sec.figure(plots.card_balance_chart(cb).figure, "What happens to each card drawn", name=f"card_balance{tag}")
    sec.table(cb[["name", "n_played", "win_when_played", "n_not", "win_when_not", "win_lift", "win_lift_low",
                  "win_lift_high"]], "Win rate of a side when it played the card vs not")
    if _attacks(sec, s, cb):
        decided, games = int(s.c["hazard_decided"]), int(s.c["hazard_games"])
        if games:
            lo, hi = wilson_interval(decided, games)
            sec.text(f"In {percent_ci(decided / games, lo, hi)} of the {counted(games, 'game')} with a winner and some turns "
                     "lost to hazards, the winner was the side that lost strictly the fewest turns to hazards.")
    _safeties(sec, cb)
    flags = rs.worth_playing(s)
    sec.text(f"Which cards are never worth playing, and which go with losing or winning? Rule (cards drawn at least "
             f"{rs.MIN_DRAWN} times): dead if the upper end of the interval of played / drawn is below "
             f"{percent(rs.DEAD_PLAYED_SHARE, 0)} % (for go, remedy "
             "and end-of-limit cards, which answer attacks, that says the deck holds more of them than the attacks "
             "call for); goes with losing (cards played by choice only) if, in the games with a winner, the winner "
             "makes less than its fair share of the plays and sides that played it won less often than sides that "
             "did not by more than the fair share (both intervals entirely below); goes with winning (cards played "
             "by choice but distance, which every winner lays) if the winner makes more than its fair share of the "
             "plays and sides that played it won more often than sides that did not by more than the fair share "
             f"(both intervals entirely above). {_flag_level_text(flags)}")
    flagged = flags[flags["flag"]]
    if flags.attrs["withheld"]:
        sec.text(flags.attrs["withheld"])
    elif len(flagged):
        sec.table(flagged[["name", "role", "drawn", "played_share", "winner_share", "win_when_played", "win_when_not",
                           "win_lift", "reason"]], FLAGGED_CAPTION)
    else:
        sec.text("No card is flagged as dead or as going with losing or winning.")


def caveat_section(sec: Section, metas: list[dict]) -> None:
    pols = sorted({rs.policy_label(p) for m in metas for p in (m.get("policies") or [])})
    for m in metas:
        if m.get("reconstructed"):
            # design_name marks it "(reconstructed)": the sentence need not say it again
            sec.text(f"{design_name(m)}: where the sources are silent its rules are assumptions (see its "
                     "design file), so its numbers describe that reading of the rules.")
    sec.text("Bots are not people. Every number here holds for these policies only: " + (", ".join(pols) or "?")
             + ". Stronger or weaker play can move win rates, game length and which cards are worth playing; "
             "card-level associations (win when played) are not effects of playing the card.")


# ------------------------------------------------------------------ reports
def build_report(summary: RaceSummary, meta: dict, on_section=None, run_file: str | None = None) -> Report:
    """The balance report of one run (summary of all its games; meta of the
    run; `run_file`, where it is kept). `on_section(title)` is told each
    section as it is begun."""
    rep = Report(f"Balance report: {design_name(meta)}, {summary.layout.players} players, {counted(summary.games, 'game')}",
                 on_section=on_section)
    rep.section("Run").table(header_table(summary, meta, run_file))
    at = rep.section("At a glance")
    for line in glance(summary):
        at.text(line)
    _outcomes(rep.section("Outcomes"), summary)
    _skill(rep.section("Skill matrix"), summary)
    _length(rep.section("Length"), summary)
    _tension(rep.section("Tension"), summary)
    _progress(rep.section("Progress"), summary)
    _cards(rep.section("Card balance"), summary)
    rep.section("Anomalies").table(rs.anomalies(summary), "Caps, ties, rules that never fire, accounting")
    caveat_section(rep.section("Caveat"), [meta])
    return rep


def _side_by_side(fn, a: RaceSummary, b: RaceSummary, name_a: str, name_b: str, key: str) -> pd.DataFrame:
    ta, tb = fn(a), fn(b)
    return pd.concat([ta.assign(design=name_a), tb.assign(design=name_b)], ignore_index=True).set_index(
        [key, "design"]).sort_index(level=0, sort_remaining=False).reset_index()


# what a comparison shows of a card that only one of the designs has
ONLY_COLUMNS = ["name", "role", "drawn", "played", "played_per_game", "played_share", "played_share_low", "played_share_high",
                "winner_share", "win_lift", "win_lift_low", "win_lift_high"]  # and received (attacks), coups (safeties)


def build_comparison_report(summary_a: RaceSummary, meta_a: dict, summary_b: RaceSummary, meta_b: dict,
                            comparison: PairedComparison, alpha: float = 0.05, on_section=None) -> Report:
    """Two runs on the same seeds side by side; the headline answers first.
    `on_section(title)` is told each section as it is begun.

    Paired differences are A - B per game with 95 % intervals and Holm's
    correction across the metrics in the table.
    """
    name_a, name_b = comparison_names(meta_a, meta_b)
    La = summary_a.layout
    Lb = summary_b.layout
    multi = La.multi_hand or Lb.multi_hand
    paired = design_paired_table(comparison, summary_a, summary_b, alpha)
    rep = Report(f"Comparison: {name_a} vs {name_b}, {La.players} players", on_section=on_section)

    sec = rep.section("Headline")
    heads = headline(summary_a, summary_b, paired, name_a, name_b)
    for q, a in zip(heads["question"], heads["answer"]):
        sec.text(f"{q} {a}.")
    unequal = [f"{name}: {_side_policy_text(s.layout)}" for s, name in ((summary_a, name_a), (summary_b, name_b))
               if rs.sides_differ_in_policy(s.layout)]
    if unequal:
        sec.text(f"These answers are read under unequal play: the sides hold different policies ({'; '.join(unequal)}), "
                 "so who wins, and what goes with winning (the first player, the hazards), measures the policies' "
                 "skill as well as the design (win rates per policy under Outcomes).")
    same_seed = meta_a.get("seed") == meta_b.get("seed")
    sec.table(heads, f"Answers with their evidence (paired {'on the same seeds' if same_seed else 'game by game'}, "
                     "Holm-corrected)")
    sec.text(f"Paired on common random numbers: game i of both runs started from the same root seed "
             f"{meta_a.get('seed')} and game index; {counted(int(paired['n'].max()) if len(paired) else 0, 'game')} paired."
             if same_seed else
             f"Warning: the runs have different root seeds ({meta_a.get('seed')} vs {meta_b.get('seed')}), so game i "
             "of one and game i of the other are independent, not played from common random numbers: the paired "
             "differences and their intervals still hold, but are wider than on one seed.")
    # where a reader starts: the command that plays it again (the Runs section gives every setting of each run)
    sec.text(f"Reproduce the comparison: {reproduce_comparison(meta_a, meta_b)}.")
    if comparison.unpaired:
        sec.text(f"{counted(comparison.unpaired, 'game')} {'appears' if comparison.unpaired == 1 else 'appear'} in one run only "
                     f"and {'is' if comparison.unpaired == 1 else 'are'} left out.")

    sec = rep.section("Paired differences")
    tested = int(paired["p_value"].notna().sum())  # Holm's m: a metric equal in every game has no p-value
    sec.text("Per game d = A - B; mean difference with a 95 % Student t interval (on the games in which d is not 0, "
             "less one, as degrees of freedom: where most games are alike the spread rests on the few that differ; "
             "of each metric on its own; "
             "for a rate or a share clipped to [-1, 1], where a difference of two of them lies: the clipped "
             "interval holds the true difference as often), two-sided t-test p-value (where every game differs by "
             "the same non-zero amount, the exact sign test, p = 2/2^n, and no interval: the games give no spread "
             "to build one from, and the point [d, d] would claim a certainty they do not); a rate of 0 or 1 a game (who won, a "
             "stall) takes instead Tango's score interval and McNemar's exact test of the games in which the two "
             "differ, which hold their level when few games differ (docs/statistics.md); and Holm's step-down "
             f"correction of the p-values across the {tested} metrics below that have one (alpha {alpha}; a "
             "metric equal in every game has nothing to test): p_holm and reject are what a headline answer uses."
             + (" Lead changes and the winner's deficit are of distance within the hands, over all the hands of a "
                "game: a game of several hands is decided on the scores after them, so these count the races "
                "within its hands, more of them the more hands it has (each design's own report gives the "
                "winner's largest deficit in score after a hand)." if multi else ""))
    sec.table(paired.drop(columns=["key"]).rename(columns={"mean_a": name_a, "mean_b": name_b}),
              "Every metric with its interval")
    spread = paired[paired["sd"] > 0]  # in sd units: a constant difference (or one pair) has none
    if len(spread):
        sec.figure(plots.forest(spread, title=f"Paired differences ({name_a} - {name_b})").figure,
                   "Paired differences in sd units; metrics that "
                   "differ by the same amount in every game have no sd and are not drawn", name="forest")
    else:
        sec.text("No figure of the differences: no metric varies from game to game here (one paired game, or "
                 "the same difference in every game), so none has a standard deviation to draw them in.")

    sec = rep.section("Runs")
    differ = design_differences(meta_a, meta_b)
    if len(differ):
        sec.table(differ.rename(columns={"a": name_a, "b": name_b}),
                  f"What differs between the designs as played by {La.players} players (cards: count, role, rules)")
    header = header_table(summary_a, meta_a).rename(columns={"value": name_a})
    header[name_b] = header_table(summary_b, meta_b)["value"]
    sec.table(header, "Everything needed to reproduce each run")

    sec = rep.section("Outcomes")
    bias = pd.DataFrame({"design": [name_a, name_b],
                         "largest gap from the fair share": [seat_bias_strength(summary_a), seat_bias_strength(summary_b)]})
    sec.table(_side_by_side(rs.outcomes_by_position, summary_a, summary_b, name_a, name_b, "position")
              .rename(columns={"rate": "win rate", "ci_low": "95 % low", "ci_high": "95 % high"}),
              "Win rate by turn-order position, both designs")
    if La.multi_hand or Lb.multi_hand:
        sec.table(_side_by_side(rs.trips_by_position, summary_a, summary_b, name_a, name_b, "position")
                  .rename(columns={"wins": "trips", "rate": "share", "ci_low": "95 % low", "ci_high": "95 % high"}),
                  TRIPS_CAPTION)
    sec.table(bias, "Seat bias")
    designs = ((summary_a, name_a, "_a"), (summary_b, name_b, "_b"))
    one_policy = [name for s, name, _ in designs if len(set(s.layout.policies)) == 1]
    if one_policy:
        sec.text(("" if len(one_policy) == 2 else f"{one_policy[0]}: ")
                 + NO_SKILL_MATRIX.format(policies="--policy greedy,random, for example"))
    mixed = [(s, name, tag) for s, name, tag in designs if len(set(s.layout.policies)) > 1]
    for s, name, _ in mixed:
        if rs.mirrored_policies(s.layout):
            sec.text(f"{name}: {MIRRORED_OUTCOMES.format(teams=_side_policy_text(s.layout))}")
        else:
            sec.table(_rate_display(rs.outcomes_by_policy(s), ["policy"]), f"Win rate per policy: {name}")
            if shared := _shared_side_text(s.layout):
                sec.text(f"{name}: {shared}")
    for s, name in ((summary_a, name_a), (summary_b, name_b)):
        if s.games == int(s.c["no_winner"]):
            sec.text(f"{name}: {NO_WINNER}")
    tests = pd.concat([rs.seat_uniformity(summary_a).assign(design=name_a),
                       rs.seat_uniformity(summary_b).assign(design=name_b)], ignore_index=True)
    sec.table(tests, "Seat uniformity (chi-square)")
    _chi_square_table_note(sec, tests)
    sec.table(_side_by_side(rs.game_end_rates, summary_a, summary_b, name_a, name_b, "event"), "How games end")
    ax = plots.seat_bias(rs.outcomes_by_position(summary_a), title=name_a)
    sec.figure(ax.figure, f"Win rate by turn order: {name_a}", name="seat_bias_a")
    ax = plots.seat_bias(rs.outcomes_by_position(summary_b), title=name_b)
    sec.figure(ax.figure, f"Win rate by turn order: {name_b}", name="seat_bias_b")
    skilled = [(s, name, tag) for s, name, tag in mixed if not rs.mirrored_policies(s.layout)]
    if skilled:  # does skill matter in each design: its own run's head to head
        sec = rep.section("Skill matrix")
        for s, name, tag in skilled:
            sec.text(f"**{name}**")
            _skill(sec, s, tag)

    sec = rep.section("Length")
    sec.text(TURN_TEXT)
    sec.table(_side_by_side(rs.length_table, summary_a, summary_b, name_a, name_b, "metric"), "Length")
    ax = plots.ecdf(rs.hist_frame(summary_a, "game_turns"), xlabel="turns per game", label=name_a, color=plots.COLORS[0])
    plots.ecdf(rs.hist_frame(summary_b, "game_turns"), ax=ax, xlabel="turns per game", label=name_b, color=plots.COLORS[1])
    sec.figure(ax.figure, "ECDF of turns per game, both designs", name="length_ecdf")

    sec = rep.section("Tension")
    sec.table(_side_by_side(rs.tension_table, summary_a, summary_b, name_a, name_b, "metric"), "Tension")

    sec = rep.section("Progress")
    kept = [(s, name, tag) for s, name, tag in ((summary_a, name_a, "a"), (summary_b, name_b, "b")) if s.layout.rounds]
    if kept:
        # both figures end at one round, so that they can be read side by side
        last = max(_curve_rounds(s)[-1] for s, _, _ in kept)
        followed = [f"{name}: rounds {_round_list(tuple(r for r in s.layout.rounds if r <= last))}, "
                    f"{_rounds_followed(s)}" for s, name, _ in kept]
        sec.text("Mean distance laid at the end of a round of a hand (one turn per player), per turn-order "
                 "position of the hand, for the rounds the records keep until "
                 f"{percent(CURVE_ENDED_SHARE, 0)} % of the hands of the design whose hands last longer had ended; a "
                 f"hand that has ended keeps its final distance in the later rounds. {'; '.join(followed)}. "
                 f"{PROGRESS_BANDS}")
    for s, name, tag in kept:
        ax = plots.progress_curves(_progress_curve(s, "position", last), ylabel=f"distance ({s.layout.unit})", title=name,
                                   ceiling=s.layout.distance_ceiling)
        sec.figure(ax.figure, f"Progress by turn-order position: {name}", name=f"progress_{tag}")

    sec = rep.section("Card balance")
    cc = card_comparison(summary_a, summary_b)
    if len(cc) and "role" in cc:
        sec.text("Card rates cannot be paired game by game: these are unpaired comparisons, A - B, pooled by card "
                 "role since the decks share no card keys; each design's share counts the cards of one game "
                 "together (clustered by game), and p_holm corrects for the many roles (a dead share repeats its "
                 "played share's test).")
    elif len(cc):
        sec.text("Card rates cannot be paired game by game: these are unpaired comparisons, A - B, of the cards "
                 "both designs have; each design's share counts the cards of one game together (clustered by "
                 "game), and p_holm corrects for the many cards (a dead share repeats its played share's test).")
    if len(cc):
        if "card" in cc:  # by name, as every other card table (design A's name; the key is the same in both)
            names = dict(zip(summary_a.layout.cards, summary_a.layout.card_names))
            cc.insert(0, "name", cc["card"].map(names))
        sec.table(cc.rename(columns={"a": name_a, "b": name_b}), "Played and dead shares (unpaired)")
    balances = (rs.card_balance(summary_a), rs.card_balance(summary_b))
    for cb, name, only in zip(balances, (name_a, name_b), (cc.attrs.get("only_a"), cc.attrs.get("only_b"))):
        if only:
            cb = cb[cb["card"].isin(only)]
            columns = ONLY_COLUMNS + ["received"] * bool(cb["hazard"].any()) + ["coups"] * bool(cb["safety"].any())
            sec.table(cb[columns],
                      f"Cards only in {name}: nothing to pair them with, so their own numbers (as in `etappe "
                      "report`: shares clustered by game, the win lift an association, not an effect)")
    for cb, name, tag, s in zip(balances, (name_a, name_b), ("a", "b"), (summary_a, summary_b)):
        if len(cb):
            sec.figure(plots.card_balance_chart(cb, title=name).figure, f"What happens to each card drawn: {name}",
                       name=f"card_balance_{tag}")
            _attacks(sec, s, cb, name)
            _safeties(sec, cb, name)
    both = [rs.worth_playing(summary_a).assign(design=name_a), rs.worth_playing(summary_b).assign(design=name_b)]
    for flags, name in zip(both, (name_a, name_b)):
        if flags.attrs["withheld"]:
            sec.text(f"{name}: {flags.attrs['withheld']}")
    flags = pd.concat(both)
    flags = flags[flags["flag"]]
    sec.table(flags[["design", "name", "role", "drawn", "played_share", "winner_share", "reason"]], FLAGGED_CAPTION) \
        if len(flags) else sec.text("No card is flagged as dead or as going with losing or winning in either design.")

    sec = rep.section("Anomalies")
    sec.table(pd.concat([rs.anomalies(summary_a).assign(design=name_a), rs.anomalies(summary_b).assign(design=name_b)],
                        ignore_index=True), "Anomalies, both designs")
    caveat_section(rep.section("Caveat"), [meta_a, meta_b])
    return rep
