"""Bremer Stadtmusikanten: the tables of a run (RunSummary, what `etappe
report` reads a run file into and what win_rates(df) and the other table
functions give) against values worked out by hand, and the same tables
whichever chunks the run is summarized in. More hand-made records:
tests/test_bremen_sim.py (outcomes, tension, progress, skill matrix)."""
import re

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from etappe.analysis import bremen as A  # noqa: E402
from etappe.analysis.runio import write_parquet  # noqa: E402
from etappe.analysis.stats import IntHistogram  # noqa: E402
from etappe.kernels import bremen as K  # noqa: E402
from etappe.reports.bremen import build_report, build_sweep_report  # noqa: E402


@pytest.fixture(scope="module")
def run():
    # a policy on two seats (clustered intervals), some capped games (no winner: NaN deficits and gaps)
    return A.simulate(players=4, games=240, policies=["greedy", "random", "greedy", "random"], seed=5,
                      options={"max_turns": 120})


def _four_games() -> pd.DataFrame:
    """Four games of two players (policies a, b); the last hit the turn cap.
    The record columns not set here are 0."""
    df = A.records_frame(np.zeros((4, K.N_REC), np.int32), 2)
    for column, values in {
        "game": [0, 1, 2, 3], "seed_index": [0, 1, 2, 3], "winner_seat": [0, 1, 0, -1],
        "capped": [False, False, False, True], "turns": [10, 20, 30, 40], "storms": [1, 0, 2, 0]}.items():
        df[column] = values
    df.attrs = {"players": 2, "policies": ["a", "b"]}
    return df


def test_progress_by_seat_and_by_position_are_the_means_of_the_records(run):
    # docs/bremen.md: points_rR_sK, seat K's points at the end of round R; position p (from 1, as
    # the race reports count) is the seat p - 1 places after the starting player
    s = A.summarize(run)
    first = run["first_seat"].to_numpy()
    for by, seat_of in (("seat", lambda k: np.full(len(run), k)), ("position", lambda k: (first + k - 1) % 4)):
        t = s.progress_table(by)
        assert len(t) == 4 * len(K.PROGRESS_ROUNDS)
        numbers = range(1, 5) if by == "position" else range(4)
        assert list(dict.fromkeys(t["group"])) == [f"{by} {k}" + (f": {run.attrs['policies'][k]}" if by == "seat" else "")
                                                   for k in numbers]
        for row in t.itertuples():
            k = int(re.match(r"(?:seat|position) (\d)", row.group)[1])
            seats = seat_of(k)
            x = np.array([run[f"points_r{row.round}_s{seat}"].iloc[g] for g, seat in enumerate(seats)], float)
            assert (row.n, row.mean, row.sd) == (len(run), pytest.approx(x.mean()), pytest.approx(x.std(ddof=1))), row


def test_length_and_cap_by_hand():
    s = A.summarize(_four_games())
    assert (s.games, s.index_min, s.index_max) == (4, 0, 3)
    turns = s.length_stats().set_index("metric").loc["turns"]
    # 10 20 30 40: mean 25, squared deviations 225 + 25 + 25 + 225 over 3; the median is the
    # smallest value with half the games at or below it (inverse ECDF)
    assert tuple(turns[["n", "mean", "median", "p95", "min", "max"]]) == (4, 25, 20, 40, 10, 40)
    assert turns["sd"] == pytest.approx(np.sqrt(500 / 3))
    assert s.length_stats().set_index("metric").loc["storms", "mean"] == 0.75
    assert (s.column_total("storms"), s.column_total("chases")) == (3, 0)
    cap = s.capped_rate()
    assert (cap["capped"], cap["n"], cap["rate"]) == (1, 4, 0.25)
    # Wilson, k = 1, n = 4: (1/4 + z^2 / 8) / (1 + z^2 / 4) -+ z sqrt(3/64 + z^2 / 64) / (1 + z^2 / 4)
    z = 1.959964
    centre, half = (0.25 + z * z / 8) / (1 + z * z / 4), z * np.sqrt(3 / 64 + z * z / 64) / (1 + z * z / 4)
    assert (cap["ci_low"], cap["ci_high"]) == pytest.approx((centre - half, centre + half), abs=1e-6)
    # three decided games: seat 0 won two, seat 1 one; the capped game counts for neither
    assert s.win_rates("seat")[["wins", "n"]].values.tolist() == [[2, 3], [1, 3]]


def test_the_length_figure_is_the_other_reports_panel_with_median_and_p95(run, drawn_panels):
    # as in the race and Tape l'étape reports: histogram and ECDF, the median and 95th percentile marked as the
    # inverse ECDF of the games' turns (the smallest turns with at least that share of the games)
    build_report(run)
    (panel,) = [p for p in drawn_panels if p.axes[0].get_xlabel() == "turns"]  # the tension figures are panels too
    turns = np.sort(run["turns"].to_numpy())
    median, p95 = (turns[int(np.ceil(q * len(turns))) - 1] for q in (0.5, 0.95))
    marks = [t.get_text() for t in panel.axes[1].texts]
    assert marks == [f"median {median:g}", f"p95 {p95:g}"]
    assert panel.axes[0].get_xlabel() == panel.axes[1].get_xlabel() == "turns"


def test_a_summary_of_no_games_has_no_rates():
    s = A.RunSummary({"players": 2, "policies": ["a", "b"]})
    assert s.games == 0 and not s.has_tension()
    assert s.win_rates("policy")["n"].tolist() == [0, 0] and s.win_rates("policy")["win_rate"].isna().all()
    assert s.points_by_source()[["points_per_game", "share"]].isna().all().all()
    assert np.isnan(s.capped_rate()["rate"]) and s.head_to_head().empty
    assert (s.conclusions()["verdict"] == "n/a").all()


def test_a_report_of_no_games_is_refused_with_a_reason():
    # docs/bremen.md (Report): simulate(games=0) gives an empty record table, which has nothing to report;
    # its report stopped on a division by zero in the Length figure
    empty = A.simulate(players=3, games=0, seed=1)
    with pytest.raises(ValueError, match="a run of no games has nothing to report"):
        build_report(empty)


def _in_chunks(df: pd.DataFrame, sizes) -> A.RunSummary:
    """Summaries of uneven chunks, out of order, merged and added."""
    cuts = np.cumsum(sizes)[:-1]
    parts = [df.iloc[lo:hi] for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(df)])][::-1]
    half = len(parts) // 2
    left, right = A.RunSummary(df.attrs), A.RunSummary(df.attrs)
    for part in parts[:half]:
        left.add(part)
    for part in parts[half:]:
        right.add(part)
    return left.merge(right)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_exact=True)


def test_chunked_summary_gives_the_tables_of_the_whole_run(run):
    assert 0 < int(run["capped"].sum()) < len(run)
    s, whole = _in_chunks(run, [1, 60, 17, 100, 62]), A.summarize(run)
    assert (s.games, s.index_min, s.index_max) == (len(run), 0, len(run) - 1)
    for by in ("seat", "policy"):
        _same(s.win_rates(by), whole.win_rates(by))
    _same(s.first_seat_advantage(), whole.first_seat_advantage())
    for by in ("position", "seat"):
        assert s.seat_uniformity(by) == whole.seat_uniformity(by)
    _same(s.points_by_source(), whole.points_by_source())
    _same(s.length_stats(), whole.length_stats())
    _same(s.tension_table(), whole.tension_table())
    assert s.capped_rate() == whole.capped_rate()
    _same(s.head_to_head(), whole.head_to_head())
    for by in ("policy", "position", "seat"):
        _same(s.progress_table(by), whole.progress_table(by))
    _same(s.conclusions(), whole.conclusions())
    # the histograms hold every game's value, from outside the summary too
    t = A.game_tension(run)
    for key in ("lead_changes", "winner_deficit", "final_gap"):
        assert s.tension_hists[key] == IntHistogram.of(t[key].to_numpy(float))
    assert s.lengths["turns"] == IntHistogram.of(run["turns"].to_numpy())
    assert s.column_total("storms") == int(run["storms"].sum())
    # a conclusion's verdict hides small errors: the sums behind the storms' share, per game
    storm = sum(run[f"points_storm_s{p}"].astype(np.int64) for p in range(4))
    points = sum(run[f"points_s{p}"].astype(np.int64) for p in range(4))
    assert s.storm_moments.tolist() == [(storm * storm).sum(), (points * points).sum(), (storm * points).sum()]


def test_report_of_a_run_file_read_in_chunks_is_the_report_of_the_records(run, tmp_path):
    path = tmp_path / "run.parquet"
    write_parquet(run, path, run.attrs)
    chunked = A.summarize_run_file(path, batch_rows=7)  # many batches of the file's one row group
    assert chunked.games == len(run)
    assert build_report(chunked).to_markdown() == build_report(A.from_run_file(path)).to_markdown()


def test_a_run_without_tension_columns_is_summarized_without_them(run):
    added = re.compile(r"lead_changes|max_deficit_s\d|points_r\d+_s\d")
    old = run.drop(columns=[c for c in run.columns if added.fullmatch(c)])
    old.attrs = dict(run.attrs)
    s = _in_chunks(old, [100, 140])
    assert not s.has_tension()
    _same(s.win_rates("policy"), A.win_rates(run, "policy"))  # the columns it lacks do not count in them
    md = build_report(s).to_markdown()
    assert "no tension columns" in md and "no progress columns" in md


def test_with_one_policy_the_sweep_findings_are_the_seats():
    # One policy on every seat wins exactly a quarter of its seat-games, so "win rate of g vs 1/4" was
    # always undecided and the corners' balance, what a board sweep is for, was not asked.
    df = A.records_frame(np.zeros((100, K.N_REC), np.int32), 4)
    df["seed_index"] = range(100)
    df["winner_seat"] = [0] * 70 + [1] * 10 + [2] * 10 + [3] * 10
    df.attrs = {"players": 4, "policies": ["g"] * 4, "board": "b", "board_hash": "h"}
    found = A.conclusions(df).set_index("finding")["verdict"]
    # Wilson, at the level of 7 findings (z = 2.6901): 70 of 100 is (0.567, 0.806), above 1/4; 10 of 100 is
    # (0.045, 0.209), below
    assert found["win rate of seat 0 vs 1/4"] == "above"
    assert [found[f"win rate of seat {s} vs 1/4"] for s in (1, 2, 3)] == ["below"] * 3
    assert "win rate of g vs 1/4" not in found
    df["points_storm_s0"], df["points_chase_s1"] = 3, 1   # storms: 300 of the 400 points
    _, numbers = A.sweep_summary([df])
    assert numbers.loc[0, ["win_seat 0", "win_seat 1", "storm_share"]].tolist() == [0.7, 0.1, 0.75]


def test_a_board_sweep_says_which_findings_hold_on_every_board():
    def board_run(board, wins):
        df = A.records_frame(np.zeros((100, K.N_REC), np.int32), 4)
        df["seed_index"] = range(100)
        df["winner_seat"] = np.repeat(np.arange(4), wins)
        df["points_storm_s0"] = 1
        df.attrs = {"players": 4, "policies": ["g"] * 4, "board": board, "board_hash": board * 2}
        return df

    # Wilson against 1/4, each of a board's 7 findings at the level 1 - 0.05 / 7 (z = 2.6901, Bonferroni's
    # correction): 70 of 100 (0.567, 0.806) above; 10 (0.045, 0.209) and 5 (0.016, 0.145) below; 25 (0.153,
    # 0.381) holds it; 40 (0.279, 0.534) above; 35 (0.236, 0.484) holds it too, though the 95 % interval of a
    # finding alone (0.264, 0.447) would call it above
    runs = [board_run("a", [70, 10, 10, 10]), board_run("b", [70, 10, 10, 10]), board_run("c", [25, 5, 40, 30])]
    verdicts, numbers = A.sweep_summary(runs)
    table = verdicts.set_index("finding")
    assert list(verdicts.columns) == ["finding", "holds_everywhere", "most_common", "boards_agreeing", "a", "b", "c"]
    assert table.loc["win rate of seat 0 vs 1/4"].tolist() == [False, "above", "2 of 3", "above", "above",
                                                                "undecided"]
    assert table.loc["win rate of seat 1 vs 1/4"].tolist() == [True, "below", "3 of 3", "below", "below", "below"]
    assert table.loc["win rate of seat 2 vs 1/4"].tolist() == [False, "below", "2 of 3", "below", "below", "above"]
    assert numbers["board"].tolist() == ["a", "b", "c"] and numbers["board_hash"].tolist() == ["aa", "bb", "cc"]
    assert numbers["win_seat 2"].tolist() == [0.1, 0.1, 0.4] and numbers["games"].tolist() == [100] * 3
    widened = A.sweep_summary([board_run("d", [25, 5, 35, 35])])[0].set_index("finding")
    assert widened.loc["win rate of seat 2 vs 1/4", "d"] == "undecided"
    # the same from summaries as from record tables
    again, numbers_again = A.sweep_summary([A.summarize(df) for df in runs])
    assert again.equals(verdicts) and numbers_again.equals(numbers)


def test_a_verdict_on_an_interval_needs_both_ends_and_the_threshold():
    assert [A.yes_no(*bounds, 0.5) for bounds in ((0.6, 0.7), (0.2, 0.4), (0.4, 0.6), (0.5, 0.6))] == [
        "yes", "no", "undecided", "undecided"]
    nan = float("nan")
    assert [A.yes_no(*args) for args in ((nan, 0.4, 0.5), (0.6, nan, 0.5), (0.6, 0.7, nan))] == ["n/a"] * 3


def _hand_run(games: int, policies: list[str], board: str = "b") -> pd.DataFrame:
    """`games` decided games of ten turns, seat 0 winning each; the run identity a report reads."""
    df = A.records_frame(np.zeros((games, K.N_REC), np.int32), len(policies))
    df["seed_index"] = range(games)
    df["turns"] = 10
    df.attrs = {"players": len(policies), "policies": policies, "board": board, "board_path": f"{board}.toml",
                "board_hash": board, "options": A.options_row()[1], "seed": 1, "version": "x"}
    return df


def test_no_capped_game_in_20000_still_shows_the_upper_bound():
    # Wilson, 0 of n: the upper bound is z^2 / (n + z^2) = 3.8415 / 20003.84 = 0.000192, 0.019 %; printed
    # with 3 decimals it read "0.000-0.000", as if no game could ever be capped
    md = build_report(_hand_run(20_000, ["greedy", "greedy"])).to_markdown()
    assert "0 of 20000 games (0.0 % [0.0, 0.019], 95 % Wilson interval) hit the turn cap of 2000 turns;" in md


def test_the_header_gives_every_parameter_of_each_policy():
    # reports.md: the header holds the policies and their parameters; the defaults are those of
    # docs/bremen.md (Policies), the spec's own replace them, and a policy file is named as given
    md = build_report(_hand_run(40, ["greedy", "greedy:knock=3,climb=0", "lookahead:playouts=400", "mine.py:pick"]
                                )).to_markdown()
    weights = "storm=10,chase=4,climb={climb},knock={knock},own_home=1,progress=0.5,build=0.5,leader=1,noise=0.01"
    assert ("| policy parameters | greedy:" + weights.format(climb=2, knock=1)
            + "; greedy:" + weights.format(climb=0, knock=3)
            + "; lookahead:" + weights.format(climb=2, knock=1) + ",playouts=400,horizon=4,confidence=2"
            + "; mine.py:pick |") in md


def test_the_progress_text_names_each_of_its_figures():
    md = build_report(_hand_run(40, ["greedy", "random"])).to_markdown()
    section = md[md.index("## Progress"):md.index("## Points by source")]
    assert "per seat" in section.split("Dark band")[0]  # the third figure is per seat


def test_the_sweep_figure_says_whether_it_plots_seats_or_policies():
    # One policy on every seat: the sweep's win rates are the seats' (key numbers `win_seat 0` ...)
    one = build_sweep_report([({"road": r}, A.summarize(_hand_run(40, ["greedy"] * 4, f"b{r}"))) for r in (16, 20)])
    md = one.to_markdown()
    assert "*Win rate per seat on each board" in md and "Win rate per policy" not in md
    two = build_sweep_report([({"road": 16}, A.summarize(_hand_run(40, ["greedy", "random"] * 2)))]).to_markdown()
    assert "*Win rate per policy on each board" in two and "Win rate per seat" not in two
    # the run is told as the Bremen report's header tells it, not as Python's lists and dicts
    assert "['greedy'" not in md and "{'" not in md
    assert "policies by seat 0: greedy, 1: greedy, 2: greedy, 3: greedy" in md and "harder=false" in md
    assert "greedy:storm=10,chase=4" in md


def test_seat_uniformity_speaks_of_each_seats_corners_and_colours():
    # rules: with 2 players each plays the two diagonally opposite colours, so a seat has two corners
    md = build_report(_hand_run(40, ["greedy", "greedy"])).to_markdown()
    assert "one policy on every seat, so only their corners and colours differ" in md


def test_the_policy_win_rates_say_what_n_counts():
    # 40 decided games, a policy on two of the four seats: n = 80 seat-games, not 80 games
    md = build_report(_hand_run(40, ["greedy", "random"] * 2)).to_markdown()
    assert "n counts seat-games" in md and "| greedy | 0,2 | 80 |" in md


def test_the_sweep_says_an_undecided_finding_on_every_board_is_no_conclusion():
    report = build_sweep_report([({"road": r}, A.summarize(_hand_run(40, ["greedy"] * 4, f"b{r}"))) for r in (16, 20)])
    md = report.to_markdown()
    # 0 capped of 40: Wilson's upper bound 3.8415 / 43.84 = 0.088 holds 1 %, so 'undecided' on both boards,
    # and the table says it holds everywhere
    assert "| under 1 % of games capped | True | undecided |" in md
    assert "'undecided' on every board means no board decided it, which is no conclusion" in md
