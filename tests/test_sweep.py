"""Design sweeps (`etappe sweep`): a setting of a design file at several
values, each variant checked as a file of its own and played on the same
seeds as the design as written."""
import re
from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from etappe.analysis import sweep as sweep_module
from etappe.analysis.race import RaceRun, simulate
from etappe.analysis.race_summary import game_table, summarize
from etappe.analysis.sweep import SWEEP_METRICS, sweep_design, sweep_table
from etappe.cli.main import app
from interrupts import interrupt_play_after
from etappe.kernels.race_design import DesignError, design_variant, file_setting, load_design

MB = load_design("millebornes")
SO = load_design("stapop")


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_variant_changes_one_setting_and_is_checked_as_a_file_would_be():
    eight = design_variant(MB, "cards.stop.count", 8)
    # the rules page: 2 and 3 players play without one Stop, 4 and 6 with all of them
    assert eight.counts(4)["stop"] == 8 and eight.counts(2)["stop"] == 7
    assert MB.counts(4)["stop"] == 5 and eight.counts(4)["roll"] == MB.counts(4)["roll"]
    assert design_variant(MB, "players.4.trip", 700).trip_for(4) == (700, 0)
    assert design_variant(MB, "options.coup_fourre", False).options["coup_fourre"] is False
    assert eight.text != MB.text  # its own hash: runs of it are not taken for the file's
    # what the file itself says there: 5 Stops (rules page); Stap op's file sets no turn cap
    assert file_setting(MB, "cards.stop.count") == 5
    assert file_setting(SO, "options.turn_cap") is None and file_setting(SO, "options.overshoot") == "forbid"
    for path, value, message in (
            ("cards.stp.count", 3, "builtin:millebornes: cards.stp.count: no card 'stp' in this design"),
            ("cards.stop", 3, "a card's setting is cards.KEY.FIELD"),
            ("target.trip.km", 3, "target.trip is a value, not a table"),
            ("design.players.0", 3, "design.players is a list, not a table"),  # only cards are found by key
            ("cards.stop.count", -1, "with cards.stop.count = -1: cards[9] (stop).count: must not be negative"),
            ("design.hand_size", 0, "with design.hand_size = 0: design.hand_size: must be at least 1")):
        with pytest.raises(DesignError) as err:
            design_variant(MB, path, value)
        assert message in str(err.value), str(err.value)
    # an option that changes nothing in the design is refused in a variant as in a file
    with pytest.raises(DesignError, match="changes nothing in this design: no safety protects from an attack"):
        design_variant(SO, "options.coup_fourre", False)


def test_a_variant_plays_the_games_of_the_same_design_written_as_a_file(tmp_path):
    path = tmp_path / "ten_go.toml"
    path.write_text(SO.text.replace("count = 14", "count = 10", 1), "utf-8")  # the go card, the first card
    assert load_design(path).counts(2)["go"] == 10
    frame = simulate(path, players=2, games=300, seed=5)
    by_file = game_table(frame, frame.attrs)
    sweep = sweep_design("stapop", "cards.go.count", [10], players=2, games=300, seed=5, chunk_size=120)
    row = sweep_table(sweep).set_index("key").loc["game_turns"]
    assert row["variant"] == pytest.approx(by_file["game_turns"].mean())
    as_written = simulate("stapop", players=2, games=300, seed=5)
    assert row["as_written"] == pytest.approx(game_table(as_written, as_written.attrs)["game_turns"].mean())


def test_a_turn_cap_no_game_can_finish_within_caps_every_game():
    # Stap op's target is a set of 16 stage cards: with 2 players, a cap of 20 turns (10 each)
    # ends every game before anyone completes it; the design as written caps none (rules page:
    # games that cannot end are cut off, and only those).
    sweep = sweep_design("stapop", "options.turn_cap", [20, 0], players=2, games=200, seed=3)
    table = sweep_table(sweep).set_index(["key", "value"])
    assert sweep.base_value is None  # the file leaves turn_cap to its default (0)
    capped = table.loc[("capped", 20)]
    assert (capped["variant"], capped["as_written"], capped["diff"]) == (1.0, 0.0, 1.0)
    # the file's own value plays the very same games: no difference, and nothing to test
    same = table.xs(0, level="value")
    assert (same["diff"] == 0).all() and same["p_value"].isna().all() and (same["variant"] == same["as_written"]).all()


def test_sweep_command_writes_its_report_and_resumes(tmp_path, monkeypatch):
    out = tmp_path / "sweep"
    args = ("sweep", "millebornes", "--set", "cards.stop.count=3,8", "--games", 60, "--chunk-size", 20,
            "--seed", 2, "--out", out)
    real_play = RaceRun.play
    calls = interrupt_play_after(monkeypatch, 4)  # in the second chunk (three designs a chunk)
    assert run(*args).exit_code != 0
    assert (out / ".sweep-checkpoint.pkl").exists() and not (out / "report.md").exists()
    calls["n"] = 0
    monkeypatch.setattr(RaceRun, "play", lambda self, start, count: (calls.__setitem__("n", calls["n"] + 1),
                                                                      real_play(self, start, count))[1])
    result = run(*args[:7], 40, *args[8:])  # resumed in chunks of another size: the same games
    assert result.exit_code == 0, result.stderr
    assert calls["n"] == 3  # the 40 games left, in one chunk of three designs
    assert "resuming the run at" in result.stderr and "20 of 60 games per value already played" in " ".join(
        result.stderr.split())
    md = (out / "report.md").read_text()
    assert [line[3:] for line in md.splitlines() if line.startswith("## ")] == ["Run", "At a glance",
                                                                                  "Every metric", "Method", "Caveat"]
    assert "value in the file | 5" in md and "turns per game: as written" in md
    # two players: the design's [players.2] remove takes one Stop out of each count (the rules page:
    # "2 or 3 players: remove one each of Stop, ...")
    assert "| copies in the deck at 2 players | as written 4; 3: 2, 8: 7 |" in md
    assert "| policies | seat 0: greedy (greedy: attack=1.75," in md
    assert "Bots are not people" in md.split("## Caveat")[1]
    assert ("paired game by game (the 95 % interval of each metric alone; reject: Holm's correction over "
            "the whole sweep)") in md
    # every metric of the compare report that keeps its scale whatever the value (docs/designs.md): the
    # winner's deficit as a share of the trip, not in km; no final gap, no per-seat win rates
    every = md.split("## Every metric")[1].split("## Method")[0]
    for label in ("winner's largest deficit (share of the trip)", "turns lost to hazards per game",
                  "lead changes per game", "turn-cap (stall) rate", "no-winner rate", "hands per game"):
        assert f"| {label} |" in every, label
    assert "| winner's largest deficit |" not in every and "final gap" not in every and "win rate of" not in every
    # one policy for every seat is given once, as in the other reports' commands
    assert ("Reproduce: etappe sweep millebornes --set cards.stop.count=3,8 --players 2 --games 60 --seed 2 "
            "--policy greedy --seating fixed") in md
    assert "![Paired differences from the design as written](sweep_effects.png)" in md
    assert (out / "sweep_effects.png").stat().st_size > 0
    assert "the differences are paired game by game (common random numbers)" in md.split("## Method")[1]
    assert not (out / ".sweep-checkpoint.pkl").exists()
    # the header's speed: 60 games of each of three designs in the wall time it gives
    wall = float(re.search(r"\| wall time \| ([0-9.]+) s of play", md).group(1))  # to 0.01 s
    speed = float(re.search(r"\| games per second \| ([0-9,]+) \|", md).group(1).replace(",", ""))
    assert 180 / (wall + 0.005) - 1 <= speed <= 180 / max(wall - 0.005, 1e-9) + 1
    # the same sweep played in one go gives the same numbers (its time aside)
    monkeypatch.setattr(RaceRun, "play", real_play)
    assert run(*args[:-1], tmp_path / "fresh").exit_code == 0

    def untimed(text):
        return [line for line in text.splitlines() if "| wall time |" not in line and "| games per second |" not in line]
    assert untimed(md) == untimed((tmp_path / "fresh" / "report.md").read_text())


def test_the_reproduce_line_plays_the_sweep_again(tmp_path, monkeypatch):
    # the report's command, run as written, gives the same report; it once left a design path with a
    # space in it unquoted
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my designs").mkdir()
    (tmp_path / "my designs" / "s p.toml").write_text(
        (Path(__file__).parents[1] / "kernels" / "designs" / "stapop.toml").read_text())
    result = run("sweep", "my designs/s p.toml", "--set", "cards.go.count=12,16", "--games", 30, "--seed", 3,
                 "--policy", "random,greedy:attack=3", "--option", "overshoot=disqualify", "--out", "a")
    assert result.exit_code == 0, result.output
    first = (tmp_path / "a" / "report.md").read_text()
    command = re.search(r"^Reproduce: (etappe sweep .*)$", first, re.M).group(1)
    result = run(*shlex.split(command)[1:], "--out", "b")
    assert result.exit_code == 0, result.output

    def untimed(text):
        return [line for line in text.splitlines() if "| wall time |" not in line and "| games per second |" not in line]
    assert untimed((tmp_path / "b" / "report.md").read_text()) == untimed(first)


def test_the_effect_chart_draws_each_metrics_differences_with_their_intervals():
    # one panel per metric: each value's difference (a point) and its 95 % interval (a bar) at that value,
    # filled where Holm's correction rejects; the zero line of no change, the values on the x axis under the
    # setting's name
    from etappe.reports.sweep_report import effect_chart

    table = pd.DataFrame({"key": ["turns", "turns", "dead"], "metric": ["turns per game"] * 2 + ["dead cards"],
                          "value": [3, 8, 3], "diff": [1.5, -2.0, 0.25], "ci_low": [0.5, -3.0, 0.1],
                          "ci_high": [2.5, -1.0, 0.4], "reject": [True, False, False]})
    fig = effect_chart(table, ["turns", "dead"], "cards.stop.count")
    assert len(fig.axes) == 2
    for ax, rows, title in ((fig.axes[0], table[:2], "turns per game"), (fig.axes[1], table[2:], "dead cards")):
        bars = ax.containers[0]
        points, _, (spans,) = bars.lines
        assert list(points.get_ydata()) == list(rows["diff"])
        assert [(seg[0][1], seg[1][1]) for seg in spans.get_segments()] == list(zip(rows["ci_low"], rows["ci_high"]))
        assert points.get_markerfacecolor() == "white"  # every point open ...
        filled = ax.lines[-2]  # ... and the rejected ones drawn again, filled
        assert list(filled.get_ydata()) == list(rows["diff"][rows["reject"]])
        assert filled.get_markerfacecolor() == points.get_color() and filled.get_zorder() > points.get_zorder()
        assert tuple(ax.lines[-1].get_ydata()) == (0.0, 0.0)  # the zero line, after the points and caps
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(v) for v in rows["value"]]
        assert ax.get_xlabel() == "cards.stop.count" and ax.get_title() == title
    assert fig.get_suptitle() == "Difference from the design as written (95 % intervals)"


def test_a_sweep_of_one_game_says_what_one_game_cannot_measure(tmp_path):
    # one paired game has no spread (no interval, no test) and no distance from the fair share (that
    # needs two): the report printed "+2 [nan, nan], Holm p = nan" and "as written nan"
    result = run("sweep", "millebornes", "--set", "cards.stop.count=3,5", "--games", 1, "--out", tmp_path / "s")
    assert result.exit_code == 0, result.output
    md = (tmp_path / "s" / "report.md").read_text()
    assert "nan" not in md and "the same 1 game (the same seeds)" in md
    glance = {line.split(":")[0]: line for line in md.split("## At a glance")[1].split("## Every")[0].splitlines()}
    # 5 is the file's own value: the same game, equal in everything (Method)
    assert re.fullmatch(r"turns per game: as written \d+; 3: \d+ \(([+-]\d+; one game only, so no interval and no "
                        r"test|equal in every game)\); 5: \d+ \(equal in every game\)\.", glance["turns per game"])
    assert glance["hand's first player's distance from the fair share (trips)"].endswith(
        "not measured from 1 game: play more games.")
    every = md.split("## Every metric")[1]
    assert re.search(r"^\| turns per game \| 5 \| (\d+) \| \1 \| \+0 \(one pair: no interval\) \|", every, re.M)
    assert "| hand's first player's distance from the fair share (trips) | 5 |  |  | not measured: too few pairs |" in every


def test_a_sweep_of_a_design_whose_games_all_stall_says_why_nothing_is_measured(tmp_path, monkeypatch):
    # Mille Bornes' trip is 700 km and a distance card goes at most 200: five turns reach no end
    monkeypatch.chdir(tmp_path)
    design = (Path(__file__).parents[1] / "kernels" / "designs" / "millebornes.toml").read_text()
    Path("capped.toml").write_text(design.replace("[options]\n", "[options]\nturn_cap = 5\n", 1))
    result = run("sweep", "capped.toml", "--set", "cards.stop.count=3,8", "--games", 20, "--out", "s")
    assert result.exit_code == 0, result.output
    md = Path("s/report.md").read_text()
    assert ("won by the side least hit by hazards: not measured: no game of the design as written had a winner "
            "(20 hit the turn or hand cap).") in md
    assert "turns per game: as written 5; 3: 5 (equal in every game); 8: 5 (equal in every game)." in md


def test_a_value_equal_in_every_game_shows_no_test_but_keeps_its_interval(tmp_path):
    # a rate equal in every paired game has nothing to test, but Tango's interval of the difference
    # is not a point: the glance said "Holm p = nan"
    result = run("sweep", "millebornes", "--set", "cards.stop.count=3,5", "--games", 50, "--out", tmp_path / "s")
    assert result.exit_code == 0, result.output
    md = (tmp_path / "s" / "report.md").read_text()
    line = next(t for t in md.splitlines() if t.startswith("won by the side least hit by hazards:"))
    assert re.search(r"; 5: [0-9.]+ \(equal in every game; 95 % interval of the difference \[-(0\.\d+), \1\]\)\.$",
                     line), line


def test_a_swept_switch_reads_true_and_false_as_the_design_file_writes_it(tmp_path):
    # the report said "True" and "False" (Python's spelling), not the file's and --set's true / false
    result = run("sweep", "millebornes", "--set", "options.limit_on_limit=true", "--games", 10, "--out", tmp_path / "s")
    assert result.exit_code == 0, result.output
    md = (tmp_path / "s" / "report.md").read_text()
    assert "| value in the file | false |" in md and "| values played | true |" in md
    assert "--set options.limit_on_limit=true " in md and "(options.limit_on_limit = false)" in md
    assert "; true: " in md and "| turns per game | true |" in md
    assert "True" not in md and "False" not in md.replace("| False |", "")  # the reject column is Python's


def test_sweep_refusals_name_the_problem(tmp_path):
    for args, message in (
            (("stapop", "--set", "cards.go.count"), "write the setting and its values"),
            (("stapop", "--set", "cards.goo.count=3"), "no card 'goo' in this design"),
            (("stapop", "--set", "cards.go.count=3,3"), "a value is given twice"),
            (("stapop", "--set", "options.overshoot=maybe"), "options.overshoot"),
            # Mille Bornes' 2-player table sets its own trip (700, rules page): target.trip is not played there
            (("millebornes", "--set", "target.trip=800"), "target.trip = 800 changes nothing that is played at 2 players"),
            # the file's own value alone is the design against itself (the rules page: 14 Stap op cards)
            (("stapop", "--set", "cards.go.count=14"), "cards.go.count = 14 changes nothing that is played at 2 "
                                                       "players: the game's tables are those of the design as written"),
            (("etape", "--set", "x=1"), "sweep is for the race designs"),
            # and what sweeps a rule option of the other games
            (("bremen", "--set", "target=5,7"), "`etappe compare bremen --option-b NAME=VALUE`, one per value, "
                                                 "or `etappe bremen sweep` for boards")):
        result = run("sweep", *args, "--games", 10, "--out", tmp_path / "s")
        assert result.exit_code == 2 and message in " ".join(result.stderr.split()), (args, result.stderr)
    assert not (tmp_path / "s").exists()
    assert "bremen sweep" not in run("sweep", "etape", "--set", "x=1").stderr  # boards are Bremen's only


def _same_summary(a, b):
    return (a.layout == b.layout and a.c.keys() == b.c.keys()
            and all(np.array_equal(a.c[k], b.c[k]) for k in a.c))


def test_a_setting_and_its_values_are_read_as_written_with_spaces_or_without():
    from etappe.cli.report_cmds import sweep_values

    # each value as TOML reads it (3, 0.5, true), else a bare word (docs/designs.md: `--set`)
    assert sweep_values(" cards.stop.count = 3, 5 ,8") == ("cards.stop.count", [3, 5, 8])
    assert sweep_values("options.overshoot=forbid,disqualify") == ("options.overshoot", ["forbid", "disqualify"])
    assert sweep_values("options.limit_on_limit=true,false") == ("options.limit_on_limit", [True, False])


def test_each_value_is_summarized_as_a_run_of_its_own_design_would_be(tmp_path):
    sweep = sweep_design("millebornes", "cards.stop.count", [3, 8], players=2, games=40, seed=4, chunk_size=15)
    assert sweep.values == [3, 8] and sweep.base_value == 5 and sweep.path == "cards.stop.count"
    for design, summary, meta in [(MB, sweep.base, sweep.base_meta),
                                  *((design_variant(MB, "cards.stop.count", v), s, m)
                                    for v, s, m in zip([3, 8], sweep.summaries, sweep.metas))]:
        alone = simulate(design, players=2, games=40, seed=4)
        assert _same_summary(summary, summarize(alone))
        assert meta["design_hash"] == alone.attrs["design_hash"] and meta["games"] == 40
    assert len(sweep.comparisons) == 2
    # a swept trip: each design's deficits are shares of its own trip (700 km at 2 players, rules page)
    trips = sweep_table(sweep_design("millebornes", "players.2.trip", [600], players=2, games=40, seed=4))
    share = trips.set_index("key").loc["winner_deficit_share"]
    for design, column in ((design_variant(MB, "players.2.trip", 600), "variant"), (MB, "as_written")):
        frame = simulate(design, players=2, games=40, seed=4)
        games = game_table(frame, frame.attrs)
        assert share[column] == pytest.approx(games["winner_deficit_share"].mean())


def test_the_table_orders_metrics_then_values_with_holm_across_the_whole_sweep():
    sweep = sweep_design("stapop", "cards.go.count", [8, 10, 12], players=2, games=200, seed=6)
    table = sweep_table(sweep)
    keys = [k for k in SWEEP_METRICS if k != "first_hand_gap"]  # one hand a game: the game's first player
    assert list(dict.fromkeys(table["key"])) == [k for k in keys if k in set(table["key"])]
    assert "first_player_gap" in set(table["key"])
    assert table["value"].tolist() == [8, 10, 12] * (len(table) // 3)  # each metric's values together
    assert table["n"].dtype == np.int64 and (table["n"] == 200).all()
    # Holm over every row of the sweep (values x metrics), not within one value: the smallest p times m
    tested = table.dropna(subset=["p_value"])
    smallest = tested["p_value"].idxmin()
    assert table.loc[smallest, "p_holm"] == pytest.approx(min(1.0, len(tested) * tested["p_value"].min()))
    # the first player's distance from the fair share, 1/2 at 2 players, from each design's own games
    gap = table.set_index(["key", "value"]).loc[("first_player_gap", 10)]
    for design, column in ((design_variant(SO, "cards.go.count", 10), "variant"), (SO, "as_written")):
        frame = simulate(design, players=2, games=200, seed=6)
        won = game_table(frame, frame.attrs)["first_position_won"].dropna()
        assert gap[column] == pytest.approx(abs(won.mean() - 0.5))


def test_progress_playing_time_and_a_resume_give_the_sweep_played_in_one_go(tmp_path, monkeypatch):
    args = ("millebornes", "cards.stop.count", [3, 8])
    kwargs = {"players": 2, "games": 50, "seed": 9, "chunk_size": 20, "checkpoint": tmp_path / "ck.pkl"}
    whole = sweep_design(*args, players=2, games=50, seed=9, chunk_size=20)
    clock = {"t": 0.0}

    def perf_counter():  # every play takes 0.25 s
        clock["t"] += 0.25
        return clock["t"]

    monkeypatch.setattr(sweep_module, "time", SimpleNamespace(perf_counter=perf_counter))  # the sweep's clock only
    real_play = RaceRun.play
    interrupt_play_after(monkeypatch, 4)  # in the second chunk (three designs a chunk)
    heard, resumed = [], []
    with pytest.raises(KeyboardInterrupt):
        sweep_design(*args, progress=heard.append, on_resume=resumed.append, **kwargs)
    monkeypatch.setattr(RaceRun, "play", real_play)
    assert heard == [0, 20, 20, 20, 20] and resumed == []  # games of all three designs; the fourth play is kept
    heard.clear()
    again = sweep_design(*args, progress=heard.append, on_resume=resumed.append, **kwargs)
    assert resumed == [20] and heard == [60, 20, 20, 20, 10, 10, 10]  # 20 games of each design were kept
    assert again.wall_seconds == 9 * 0.25  # the three plays before the interruption count too
    assert _same_summary(again.base, whole.base)
    assert all(_same_summary(a, b) for a, b in zip(again.summaries, whole.summaries))
    untimed = ["p_holm", "p_value", "diff", "ci_low", "ci_high", "variant", "as_written"]
    pd.testing.assert_frame_equal(sweep_table(again)[untimed], sweep_table(whole)[untimed])


def test_sweep_design_refusals_from_python_name_the_problem():
    def refused(error, values=(3, 8), **changes):
        with pytest.raises(error) as caught:
            sweep_design("millebornes", changes.pop("path", "cards.stop.count"), values,
                         **{"players": 2, "games": 10, **changes})
        return str(caught.value)

    assert refused(TypeError, values="3,8") == "values is a list of the setting's values, e.g. [3, 5, 8], not '3,8'"
    assert refused(ValueError, values=[]) == "give at least one value to sweep"
    assert refused(ValueError, values=[3, 3]) == "a value is given twice: 3, 3"
    assert refused(ValueError, games=0) == f"games must be 1 to {2**63 - 1}, not 0"
    assert refused(ValueError, chunk_size=0) == f"chunk_size must be 1 to {2**63 - 1}, not 0"
    assert refused(ValueError, path="options.turn_cap", values=[50, 100], options={"turn_cap": 80}) == (
        "options.turn_cap is swept and also given for the run (--option turn_cap): the run's option would override "
        "every value; give it in one place")
