"""Bremer Stadtmusikanten balance report: build_report(df) -> Report.

df is a record table from analysis.bremen.simulate (or read back with
analysis.bremen.from_run_file), its run identity in df.attrs, or the
analysis.bremen.RunSummary of one (summarize_run_file reads a run file a
row group at a time: `etappe report` of a million games holds no record
table). Statistics come from analysis.bremen; this module only lays them out
and draws. Sections in
the order of design/reports.md (run, outcomes, skill matrix, length,
tension, progress, points, robber, card balance, variant comparison,
anomalies, caveat); one that cannot apply says so in one line.
"""
from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from etappe.analysis import bremen as A
from etappe.analysis.stats import chi_square_caution, counted, p_text, wilson_interval
from etappe.kernels.bremen_board import load_board
from etappe.kernels.options import number_text, option_text
from etappe.reports import plots
from etappe.reports.document import Report, percent_ci
from etappe.reports.sections import command_line, policy_files, skill_section, tension_figures

__all__ = ["build_report", "build_sweep_report"]

CAVEAT = (
    "The board is a reconstruction: no source documents the real field counts, links or "
    "bridges, so every number here holds for the board file named above; check a conclusion "
    "across boards with `etappe bremen sweep` before trusting it. Bots are not people: the "
    "numbers hold for the policies named in the header, not for human play."
)
SWEEP_CAVEAT = (
    "The boards are generated ring boards, guesses at the geometry: no source documents the real field counts, "
    "links or bridges, so every number here holds for the {boards} listed under Run only. A conclusion "
    "that holds on every one of them is more trustworthy than one board's number, but the real board may still "
    "differ from all of them. Bots are not people: the numbers hold for the policies named under Run, not for "
    "human play."
)
_FAMILIES = {"random": "random: uniform over the legal moves",
             "greedy": "greedy: a one-step scoring of each move",
             "lookahead": "lookahead: flat Monte Carlo with greedy playouts"}


OWN_BOARD = ("No board here is marked as a reconstruction (`reconstruction = true` in its file, as the default "
             "board has): every number holds for the board file named above only. ")


def _joined(boards: list[str]) -> str:
    """'Board A (x)' or 'Board A (x) and board B (y)': the start of a sentence."""
    text = " and ".join(boards)
    return text[:1].upper() + text[1:]


def reconstructions(boards: list[str]) -> str:
    """'Board A (x) is a reconstruction' or 'Board A (x) and board B (y) are reconstructions'."""
    return _joined(boards) + (" is a reconstruction" if len(boards) == 1 else " are reconstructions")


def board_caveat(boards: dict[str, bool]) -> str:
    """The caveat's words on the board(s): `boards` maps each board, as the
    text names it ('board A (default-reconstruction)'), to whether its file
    says it is a reconstruction; a single entry is the one board of the run
    (or of both variants)."""
    if len(boards) == 1:
        return CAVEAT[: CAVEAT.index("Bots are not people")] if next(iter(boards.values())) else OWN_BOARD
    marked = [name for name, rec in boards.items() if rec]
    own = [name for name, rec in boards.items() if not rec]
    text = "Every number here holds for the two board files named above only. "
    if marked:
        text += (f"{reconstructions(marked)}: no source documents the real field counts, links or bridges; check a "
                 "conclusion across boards with `etappe bremen sweep` before trusting it. ")
    if own:
        text += (f"{_joined(own)} {'is' if len(own) == 1 else 'are'} not marked as a reconstruction "
                 "(`reconstruction = true` in its file, as the default board has). ")
    return text


def caveat_text(policies, boards: dict[str, bool] | bool = True) -> str:
    """The caveat, naming the policies of the run and what their families are.
    `boards`: whether the run's board file says it is a reconstruction
    (`reconstruction = true`, as the default board and the sweep's ring boards
    do; a board file that does not is not called one), or board_caveat's
    dict of two boards."""
    names = list(dict.fromkeys(policies or []))
    families = list(dict.fromkeys(_FAMILIES[p.split(":")[0]] for p in names if p.split(":")[0] in _FAMILIES))
    board = board_caveat(boards if isinstance(boards, dict) else {"the board": boards})
    return (board + "Bots are not people: the numbers hold for these "
            "policies only: " + (", ".join(names) or "?") + (f" ({'; '.join(families)})" if families else "")
            + "; not for human play.")


def policy_parameters(policies) -> str:
    """Each distinct policy with every parameter it plays with: its family's
    defaults, then the spec's own ('greedy:knock=3' -> 'greedy:storm=10,...,knock=3,...').
    Random has none; a policy file's spec stays as it is."""
    def full(spec: str) -> str:
        family = spec.partition(":")[0]
        if family not in ("greedy", "lookahead"):
            return spec
        keys = A.GREEDY_DEFAULTS | (A.LOOKAHEAD_DEFAULTS if family == "lookahead" else {})
        row = A.parse_policy(spec)[1]  # the parameter row the kernel plays with
        return family + ":" + ",".join(f"{k}={number_text(row[A._PARAM_INDEX[k]])}" for k in keys)

    return "; ".join(full(str(p)) for p in dict.fromkeys(policies))


def _seats(policies) -> str:
    return ", ".join(f"{s}: {p}" for s, p in enumerate(policies))


def build_report(df: pd.DataFrame | A.RunSummary, on_section=None) -> Report:
    """The balance report of a run, from its record table or its
    RunSummary; `on_section(title)` is told each section as it is begun.
    A run of no games is refused (ValueError)."""
    df = df if isinstance(df, A.RunSummary) else A.summarize(df)
    if df.games == 0:  # simulate(games=0) gives an empty table: no number to show
        raise ValueError("a run of no games has nothing to report")
    a = df.attrs
    report = Report(f"Bremer Stadtmusikanten: {a['players']} players, {counted(df.games, 'game')}", on_section=on_section)
    _header(report, df)
    _outcomes(report, df)
    _skill(report, df)
    _length(report, df)
    _tension(report, df)
    _progress(report, df)
    _points(report, df)
    _robber(report, df)
    report.section("Card balance").text("Bremer Stadtmusikanten has no cards: where the points come from and "
                                        "what the robber and knocks do are in the two sections above.")
    report.section("Variant comparison").text(
        "One run compares no variants. `etappe compare bremen --option-b NAME=VALUE` (or `--board-b FILE`) plays "
        "two variants on the same seeds and compares them game by game, and `etappe report a.parquet b.parquet` "
        "does the same for two runs of the same players, policies, seed and games (docs/bremen.md).")
    _anomalies(report, df)
    report.section("Caveat").text(caveat_text(a.get("policies"), bool(a.get("board_reconstruction", True))))
    return report


def _skill(report: Report, df: A.RunSummary) -> None:
    skill_section(report.section("Skill matrix"), df.head_to_head(), "game",
                  "the winner ahead of everyone, then more points; equal points count 1/2",
                  "e.g. random, greedy, lookahead",
                  "Seats are fixed: a policy's seats also carry their turn order.", "skill_matrix")


def _tension(report: Report, df: A.RunSummary) -> None:
    section = report.section("Tension")
    if not df.has_tension():
        section.text("This run file has no tension columns (recorded before they were added): simulate it again.")
        return
    section.text("Measured after every turn. Lead changes: times the sole points leader changed (a tie keeps the "
                 "last leader; the first leader is no change). Deficit: the eventual winner's largest gap in "
                 "points behind the leader (0: never behind). Final gap: the winner's points minus the best "
                 "other seat's (0: decided by the tie rule). Capped games have no deficit or gap.")
    section.table(df.tension_table(), "Tension (per game)")
    hists = df.tension_hists
    values, counts = hists["final_gap"].nonzero()
    ties, decided = int(counts[values == 0].sum()), int(counts.sum())
    if decided:
        low, high = wilson_interval(ties, decided)
        section.text(f"Decided by the tie rule (final gap 0): {ties} of {counted(decided, 'decided game')} "
                     f"({percent_ci(ties / decided, low, high)}, 95 % Wilson interval).")
    tension_figures(section, hists["lead_changes"].frame(), hists["winner_deficit"].frame(),
                    "lead changes per game", "winner's largest deficit (points)", "lead_changes", "winner_deficit")


def _progress(report: Report, df: A.RunSummary) -> None:
    section = report.section("Progress")
    if not df.has_tension():
        section.text("This run file has no progress columns (recorded before they were added): simulate it again.")
        return
    rounds = df.attrs.get("progress_rounds") or list(A.K.PROGRESS_ROUNDS)
    section.text(f"Mean points after rounds {', '.join(map(str, rounds))} (a round is one turn per player from "
                 "the starting player; a finished game keeps its final points), per policy, per position in "
                 "the turn order (1 = the drawn starting player) and per seat. Dark band: 95 % interval of the "
                 "mean; light band: mean +- 1 sd (the spread of games). n counts seat-games.")
    by_policy = df.progress_table("policy")
    for by, caption in (("policy", "policy"), ("position", "position in the turn order"), ("seat", "seat")):
        frame = by_policy if by == "policy" else df.progress_table(by)
        ax = plots.progress_curves(frame, ylabel="points")
        section.figure(ax.figure, f"Mean points by round, per {caption}", f"progress_{by}")
    section.table(by_policy[["group", "round", "n", "mean", "ci_low", "ci_high", "sd"]],
                  "Mean points after each checkpoint round, per policy")


def _reproduce(df: A.RunSummary) -> str:
    """The command line that plays the run's games again; the command plays
    games from index 0, so a run that starts later names the function that can."""
    a = df.attrs
    if df.index_min != 0:
        return f"analysis.bremen.simulate(..., first_game={df.index_min}) with the items above"
    board = () if a["board_hash"] == load_board(None).hash else (f"--board {shlex.quote(str(a['board_path']))}",)
    return command_line(["simulate", "bremen"], a["players"], df.games, list(a["policies"]), a["options"], a["seed"], board)


def _header(report: Report, df: A.RunSummary) -> None:
    a = df.attrs
    label = "RECONSTRUCTION (not the published board)" if a.get("board_reconstruction") else "board file"
    # the built-in board by its name, not by where this install keeps it
    built_in = a["board_hash"] == load_board(None).hash
    board_file = f"built-in {Path(a['board_path']).name}" if built_in else a["board_path"]
    rows = [
        ("game", "bremen (Bremer Stadtmusikanten)"),
        ("board", f"{a['board']}: {label}"),
        ("board file", f"{board_file} (sha256 {a['board_hash']})"),
        ("players", a["players"]),
        ("policies by seat", _seats(a["policies"])),
        ("policy parameters", policy_parameters(a["policies"])),
        *([("policy files", policy_files(a["policy_sources"]))] if a.get("policy_sources") else []),
        ("seat design", "fixed seats, first player drawn each game"),
        ("rule options", option_text(a["options"])),
        ("games", f"{df.games} (game indices {df.index_min}..{df.index_max})"),
        ("root seed", a["seed"]),
        ("package version", a["version"]),
        ("wall time", f"{a['wall_seconds']:.2f} s of play ({a['games_per_s']:,.0f} games/s)" if a.get("wall_seconds") else
                      "not recorded"),
        ("reproduce", _reproduce(df)),
    ]
    section = report.section("Run")
    section.text("Everything needed to reproduce these games: the same board file, options, policies, "
                 "seed and game indices give the same records on any number of threads.")
    section.table(pd.DataFrame(rows, columns=["item", "value"]))


def _outcomes(report: Report, df: A.RunSummary) -> None:
    section = report.section("Outcomes")
    if not df.decided:  # say so, as the simulate summary does, rather than rates of nothing
        section.text(f"No game was decided: all {counted(df.games, 'game')} hit the turn cap of "
                     f"{counted(df.attrs['options']['max_turns'], 'turn')}, so there are no win rates and no test of "
                     "the turn order or the seats.")
        return
    seats = df.win_rates(by="seat")
    section.table(seats, "Win rate per seat among the decided games (95 % Wilson interval; capped games are "
                  "counted under Anomalies)")
    if len(set(df.attrs["policies"])) > 1:
        section.table(df.win_rates(by="policy"), "Win rate per policy among the decided games (n counts seat-games, "
                      "so a policy on two seats counts each game twice and its fair share is still 1 / players; 95 % "
                      "interval: Wilson's over the games it won, per seat, as its seats' results in a game go "
                      "together)")
    else:  # its rate would be exactly 1 / players, with an interval around a number that cannot vary
        section.text(f"One policy ({df.attrs['policies'][0]}) plays every seat, so it wins every decided game: "
                     "its win rate per seat is 1 / players by construction, and the seats' table is the test.")
    position = df.first_seat_advantage()
    test = df.seat_uniformity()
    section.table(position, "Win rate by position in the turn order (1 = the drawn starting player)")
    section.text(f"Turn-order uniformity among decided games: chi-square {test['chi2']:.2f}, "
                 f"{p_text(test['p_value'])} over {counted(test['games'], 'game')}{chi_square_caution(test['expected'])}.")
    if len(set(df.attrs["policies"])) == 1:  # with one policy on every seat, seats differ only by corners and colours
        test = df.seat_uniformity(by="seat")
        # plural: with 2 players a seat plays two colours from opposite corners
        section.text(f"Seat uniformity (one policy on every seat, so only their corners and colours differ): "
                     f"chi-square {test['chi2']:.2f}, {p_text(test['p_value'])} over {counted(test['games'], 'game')}"
                     f"{chi_square_caution(test['expected'])}.")
    fig = Figure(figsize=(6, 3))
    _rate_bars(fig.add_subplot(), seats, "seat")
    section.figure(fig, "Win rate per seat with 95 % intervals", "win_rate_by_seat")


def _rate_bars(ax, table: pd.DataFrame, label: str):
    x = np.arange(len(table))
    rate = table["win_rate"].to_numpy()
    err = np.clip(np.vstack([rate - table["ci_low"], table["ci_high"] - rate]), 0, None)
    ax.bar(x, rate, yerr=err, capsize=4, color="#4c72b0")
    ax.axhline(1 / len(table), color="#888", ls="--", lw=1, label="fair share")
    ax.set_xticks(x, [f"{r[label]}\n{r['policy']}" for _, r in table.iterrows()], fontsize=8)
    ax.set_xlabel(f"{label} (policy)")
    ax.set_ylabel("win rate among decided games")
    ax.legend(fontsize=8)
    return ax


def _length(report: Report, df: A.RunSummary) -> None:
    section = report.section("Length")
    section.table(df.length_stats(), "Per game: mean with its 95 % interval (ci_low, ci_high; none where every "
                                     "game has the same value), sd, median, 95th percentile, minimum, maximum")
    turns = df.lengths["turns"]  # an IntHistogram, as the race reports' lengths
    row = turns.describe("turns")
    section.figure(plots.length_panel(turns.frame(), "turns", row["median"], row["p95"]),
                   "Game length in turns: histogram and ECDF", "length")


def _points(report: Report, df: A.RunSummary) -> None:
    section = report.section("Points by source")
    section.text("Storms give a point per animal to its owner; the robber bonus is the extra point for "
                 "storming while the robber is at home; a chase is a pyramid landing on the robber.")
    table = df.points_by_source()
    section.table(table)
    fig = Figure(figsize=(5, 3))
    ax = fig.add_subplot()
    ax.bar(table["source"], table["points_per_game"], color=["#4c72b0", "#dd8452", "#55a868"])
    ax.set_ylabel("points per game")
    section.figure(fig, "Mean points per game by source", "points_by_source")


def _robber(report: Report, df: A.RunSummary) -> None:
    section = report.section("Robber and knocking")
    stats = df.length_stats().set_index("metric")
    section.text(
        f"The robber moved {stats.loc['robber_moves', 'mean']:.1f} times per game and sent "
        f"{stats.loc['sent_home_by_robber', 'mean']:.1f} animals home; landings knocked "
        f"{stats.loc['sent_home_by_knock', 'mean']:.1f} animals home. Extra rolls: "
        f"{stats.loc['extra_rolls', 'mean']:.1f} per game, longest chain {int(stats.loc['extra_roll_chain_max', 'max'])}."
    )


def _anomalies(report: Report, df: A.RunSummary) -> None:
    section = report.section("Anomalies")
    cap = df.capped_rate()
    section.text(
        f"{cap['capped']} of {counted(cap['n'], 'game')} ({percent_ci(cap['rate'], cap['ci_low'], cap['ci_high'])}, 95 % "
        f"Wilson interval) hit the turn cap of {counted(df.attrs['options']['max_turns'], 'turn')}; the win rates "
        "are among the decided games, and the other tables keep every game."
    )
    never = [name for name, col in (("storm", "storms"), ("chase", "chases"), ("robber move", "robber_moves"),
                                    ("extra roll", "extra_rolls")) if df.column_total(col) == 0]
    if never:
        section.text("Rules that never fired in these games: " + ", ".join(never) + ".")


def build_sweep_report(results: list[tuple[dict, A.RunSummary]]) -> Report:
    """Report of a board sweep: results = [(generator parameters, the run's summary), ...]."""
    runs = [summary for _, summary in results]
    first = runs[0].attrs
    report = Report(f"Bremer Stadtmusikanten board sweep: {counted(len(runs), 'board')}, {counted(runs[0].games, 'game')} each")
    section = report.section("Run")
    section.text(f"Players {first['players']}; policies by seat {_seats(first['policies'])} (with every parameter: "
                 f"{policy_parameters(first['policies'])}"
                 + (f"; {policy_files(first['policy_sources'])}" if first.get("policy_sources") else "")
                 + f"); root seed {first['seed']} "
                 f"(the same game indices on every board); rule options {option_text(first['options'])}; "
                 f"package version {first['version']}. Every board is a generated ring board "
                 "(kernels.bremen_board.ring_board), varied one factor at a time around the default "
                 "reconstruction; the files of the boards below are in boards/ beside this report (boards "
                 "of earlier sweeps into the same folder may be there too: they are not part of this report).")
    wall = sum(run.attrs.get("wall_seconds", float("nan")) for run in runs)
    games = sum(run.games for run in runs)
    section.text(f"Wall time {wall:.2f} s of play over every board ({games / wall:,.0f} games/s)." if wall > 0 else
                 "Wall time not recorded.")
    values = A.sweep_factor_values([spec for spec, _ in results])
    if values is not None:
        factors = tuple(f"{A.SWEEP_FACTORS[key]} {shlex.quote(','.join(map(str, v)))}" for key, v in values.items())
        section.text("Reproduce: " + command_line(["bremen", "sweep"], first["players"], runs[0].games,
                                                  list(first["policies"]), first["options"], first["seed"], factors))
    boards = pd.DataFrame([{"board": run.attrs["board"], **spec, "file": run.attrs["board_path"],
                            "sha256": run.attrs["board_hash"]} for spec, run in results])
    section.table(boards, "Boards")
    verdicts, numbers = A.sweep_summary(runs)
    section = report.section("Which conclusions hold across boards")
    section.text("A win-rate verdict is 'above' or 'below' the fair share when the Wilson interval "
                 "excludes it, else 'undecided'; a yes/no finding is 'yes' or 'no' only when its interval "
                 "lies wholly on one side (the storms' share of the points clustered by game, the capped share "
                 "Wilson's), else 'undecided'. A board's findings are read together, so each interval is widened "
                 "by Bonferroni's correction over them (docs/statistics.md): a fair board gets a verdict other "
                 "than 'undecided' with a chance of 5 % at most. A finding holds everywhere when every board gives "
                 "the same verdict; 'undecided' on every board means no board decided it, which is no conclusion.")
    section.table(verdicts)
    section = report.section("Key numbers per board")
    section.table(numbers)
    fig = Figure(figsize=(7, 3))
    ax = fig.add_subplot()
    x = np.arange(len(numbers))
    for col in [c for c in numbers.columns if c.startswith("win_")]:
        ax.plot(x, numbers[col], marker="o", label=col[4:])
    ax.axhline(1 / first["players"], color="grey", linestyle=":", label="fair share")
    ax.set_xticks(x, numbers["board"], rotation=45, ha="right", fontsize=7)
    # sweep_summary's groups: the seats when one policy plays every seat (it then wins exactly its fair share)
    by = "seat" if len(runs[0].names) == 1 else "policy"
    ax.set_ylabel("win rate" if by == "seat" else "win rate per seat-game")
    ax.legend(fontsize=7)
    caption = ("Win rate per seat on each board (one policy plays every seat, so the seats differ only by their "
               "corners and colours)" if by == "seat" else "Win rate per policy on each board (wins per seat-game)")
    section.figure(fig, caption, "sweep_win_rates")
    report.section("Caveat").text(SWEEP_CAVEAT.format(boards=counted(len(runs), "board")))
    return report
