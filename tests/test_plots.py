"""The report figures (reports/plots.py) drawn from small hand-made tables:
each bar, point and interval where its table puts it, read back from the
drawn artists. The numbers come from the tables given here, not from
etappe's statistics."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from matplotlib.container import BarContainer  # noqa: E402

from etappe.reports import plots  # noqa: E402


def _bars(ax):
    """The bars of an Axes' bar chart (its error bars are a container of their own)."""
    return next(c for c in ax.containers if isinstance(c, BarContainer))


def _bar_spans(container, axis: int) -> list[tuple[float, float]]:
    """The (low, high) ends of each error bar of an errorbar or bar container."""
    errorbar = getattr(container, "errorbar", container)
    return [tuple(float(v) for v in segment[:, axis]) for segment in errorbar.lines[2][0].get_segments()]


def test_win_bars_draw_each_rate_its_interval_and_the_fair_share():
    table = pd.DataFrame({"seat": ["seat 0", "seat 1"], "rate": [0.6, 0.4], "ci_low": [0.5, 0.3],
                          "ci_high": [0.7, 0.5]})
    ax = plots.win_bars(table, "seat", fair_share=0.5)
    bars = _bars(ax)
    assert [bar.get_width() for bar in bars] == [0.6, 0.4]
    assert _bar_spans(bars, 0) == [(0.5, 0.7), (0.3, 0.5)]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["seat 0", "seat 1"]
    assert ax.yaxis_inverted()  # the first row on top, as in the table
    assert tuple(ax.lines[-1].get_xdata()) == (0.5, 0.5)  # the fair share
    assert ax.get_xlim() == (0.0, 1.0)


def test_seat_bias_draws_each_position_against_its_fair_share():
    positions = pd.DataFrame({"position": [1, 2, 3], "rate": [0.4, 0.35, 0.25], "ci_low": [0.3, 0.25, 0.15],
                              "ci_high": [0.5, 0.45, 0.35], "fair_share": [1 / 3] * 3})
    ax = plots.seat_bias(positions)
    bars = _bars(ax)
    assert [bar.get_height() for bar in bars] == [0.4, 0.35, 0.25]
    assert _bar_spans(bars, 1) == [(0.3, 0.5), (0.25, 0.45), (0.15, 0.35)]
    fair = ax.collections[-1].get_segments()  # one dashed line over each bar
    assert [tuple(segment[:, 1]) for segment in fair] == [(1 / 3, 1 / 3)] * 3
    assert [tuple(segment[:, 0]) for segment in fair] == [(0.6, 1.4), (1.6, 2.4), (2.6, 3.4)]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1.", "2.", "3."]


def test_an_interval_that_ends_on_its_rate_draws_no_negative_bar():
    # a bound equal to the rate (a rate of 0 with its interval [0, x]) gives an error bar of length 0
    table = pd.DataFrame({"rate": [0.0, 1.0], "ci_low": [0.0, 0.8], "ci_high": [0.3, 1.0]})
    np.testing.assert_allclose(plots._errors(table), [[0.0, 0.2], [0.3, 0.0]])


def test_a_histogram_bins_a_wide_range_in_whole_values_and_counts_every_game():
    narrow = pd.DataFrame({"value": [3, 4, 6], "count": [2, 5, 1]})
    ax = plots.histogram(narrow)
    assert [(p.get_x() + p.get_width() / 2, p.get_height()) for p in ax.patches] == [(3, 2), (4, 5), (6, 1)]
    assert ax.get_ylabel() == "games"
    # values 10 to 129, one game each (a span of 119 >= 60): bins of two whole values, 10-11, 12-13,
    # ..., 128-129, so a flat distribution draws flat bars (bins of 119 / 60 = 1.98 values would hold
    # one value or two by turns: a comb that is not in the data); every game is in one bin
    wide = pd.DataFrame({"value": np.arange(10, 130), "count": np.ones(120)})
    ax = plots.histogram(wide, density=True, counted="hands")
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([2 / 120] * 60)
    assert ax.patches[0].get_x() == 9.5 and ax.patches[0].get_width() == 2
    assert ax.patches[-1].get_x() == 127.5
    assert ax.get_ylabel() == "share of hands"
    # scores in steps of 25, 0 to 4975, one game each: bins of 4 steps (100 points), each holding 4 scores
    scores = pd.DataFrame({"value": np.arange(0, 5000, 25), "count": np.ones(200)})
    ax = plots.histogram(scores)
    assert [p.get_height() for p in ax.patches] == [4] * 50
    assert ax.patches[0].get_x() == -12.5 and ax.patches[0].get_width() == 100



def test_a_deficit_of_zero_keeps_a_bar_of_its_own_where_the_range_is_binned():
    # winner's deficits 0 to 120 km: 50 games never behind, then one game at each of 1 to 120 (a span of
    # 120: bins of two values); binned from 0, "never behind" would share a bar with 1 km
    hist = pd.DataFrame({"value": np.arange(0, 121), "count": np.r_[50, np.ones(120)]})
    bars = [(p.get_x(), p.get_width(), p.get_height()) for p in plots.histogram(hist, zero_alone=True).patches]
    assert bars[0] == (-0.5, 1, 50)  # 0 alone
    assert bars[1:] == [(0.5 + 2 * i, 2, 2) for i in range(60)]  # 1-2, 3-4, ..., 119-120
    # without it (lead changes, lengths) the first bin holds the two smallest values
    first = plots.histogram(hist).patches[0]
    assert (first.get_x(), first.get_width(), first.get_height()) == (-0.5, 2, 51)


def test_the_ecdf_steps_from_zero_to_each_share_and_marks_the_median():
    hist = pd.DataFrame({"value": [10, 12, 15], "ecdf": [0.25, 0.75, 1.0]})
    ax = plots.ecdf(hist, marks={"median": 12.0})
    step = ax.lines[0]
    assert list(step.get_xdata()) == [10, 10, 12, 15] and list(step.get_ydata()) == [0.0, 0.25, 0.75, 1.0]
    assert step.get_drawstyle() == "steps-post"
    assert tuple(ax.lines[1].get_xdata()) == (12.0, 12.0) and ax.texts[0].get_text() == "median 12"


def test_card_fates_stack_to_the_share_of_the_cards_drawn():
    cards = pd.DataFrame({"name": ["go", "stop"], "drawn": [10, 0], "played": [6, 0], "discarded": [3, 0],
                          "in_hand": [1, 0]})
    ax = plots.card_balance_chart(cards)
    played, discarded, held = (c for c in ax.containers if isinstance(c, BarContainer))
    assert [bar.get_width() for bar in played] == [0.6, 0.0]  # a card never drawn: no bar, no division by 0
    assert [(bar.get_x(), bar.get_width()) for bar in discarded] == [(0.6, pytest.approx(0.3)), (0.0, 0.0)]
    assert [(bar.get_x(), bar.get_width()) for bar in held] == [(pytest.approx(0.9), pytest.approx(0.1)), (0.0, 0.0)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["played", "discarded", "in hand"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["go", "stop"] and ax.yaxis_inverted()
    assert ax.get_xlim() == (0.0, 1.0)


def test_the_forest_puts_each_difference_in_sd_units_and_fills_the_significant():
    # a metric with no spread (sd 0) has no sd units: it is not placed
    diffs = pd.DataFrame({"metric": ["turns", "gap", "caps"], "diff": [-4.0, 0.1, 1.0], "sd": [8.0, 0.5, 0.0],
                          "ci_low": [-6.0, -0.1, 1.0], "ci_high": [-2.0, 0.3, 1.0], "reject": [True, False, False]})
    ax = plots.forest(diffs)
    significant, other = ax.collections[1], ax.collections[2]
    assert significant.get_offsets().tolist() == [[-0.5, 0.0]]  # -4 / 8, on the first row
    placed = other.get_offsets()
    assert placed[0].tolist() == [pytest.approx(0.2), 1.0] and placed.mask[1].all()  # 0.1 / 0.5; none
    spans = [tuple(segment[:, 0]) for segment in ax.collections[0].get_segments()[:2]]  # the third: no line
    assert spans == [(-0.75, -0.25), (pytest.approx(-0.2), pytest.approx(0.6))]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["turns", "gap", "caps"] and ax.yaxis_inverted()
    assert tuple(ax.lines[-1].get_xdata()) == (0, 0)  # no difference


def test_the_length_panel_is_the_histogram_beside_the_ecdf_with_its_marks():
    hist = pd.DataFrame({"value": [10, 12, 15], "count": [1, 2, 1], "ecdf": [0.25, 0.75, 1.0]})
    fig = plots.length_panel(hist, "turns", median=12.0, p95=float("nan"))
    left, right = fig.axes
    assert [p.get_height() for p in left.patches] == [1, 2, 1] and left.get_xlabel() == "turns"
    assert list(right.lines[0].get_ydata()) == [0.0, 0.25, 0.75, 1.0] and right.get_xlabel() == "turns"
    assert [t.get_text() for t in right.texts] == ["median 12"]  # no 95th percentile to mark


def test_progress_curves_draw_each_groups_mean_with_its_interval():
    curve = pd.DataFrame({"group": ["a", "a", "b", "b"], "round": [1, 2, 1, 2], "mean": [2.0, 4.0, 1.0, 3.0],
                          "ci_low": [1.5, 3.5, 0.5, 2.5], "ci_high": [2.5, 4.5, 1.5, 3.5],
                          "band_low": [0.0, 1.0, 0.0, 1.0], "band_high": [4.0, 7.0, 2.0, 5.0]})
    ax = plots.progress_curves(curve, ylabel="distance")
    assert [(list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines] == [
        ([1, 2], [2.0, 4.0]), ([1, 2], [1.0, 3.0])]
    assert [line.get_label() for line in ax.lines] == ["a", "b"]
    # per group: the spread band, then the interval of the mean
    interval = ax.collections[1].get_paths()[0].vertices
    assert interval[:, 1].min() == 1.5 and interval[:, 1].max() == 4.5
    assert ax.get_ylabel() == "mean distance" and ax.get_xlabel() == "round (one turn per player)"


def test_progress_bands_stop_at_what_a_value_can_reach():
    # a 1000 km trip: late in a hand mean + sd passed 1000 (about 1,130 km drawn in a Mille Bornes report),
    # and a mean's interval near 0 reached below it; both bands are cut at the trip and at 0
    curve = pd.DataFrame({"group": ["a", "a"], "round": [1, 2], "mean": [5.0, 900.0], "ci_low": [-2.0, 880.0],
                          "ci_high": [12.0, 1010.0], "band_low": [-20.0, 770.0], "band_high": [30.0, 1130.0]})
    ax = plots.progress_curves(curve, ceiling=1000)
    spread, interval = (ax.collections[k].get_paths()[0].vertices[:, 1] for k in (0, 1))
    assert (spread.min(), spread.max()) == (0.0, 1000.0) and (interval.min(), interval.max()) == (0.0, 1000.0)


def test_matplotlib_gets_a_folder_it_can_write(tmp_path):
    # Without a config folder it can write (a shared install's user with no home of their own), matplotlib
    # warned on every report and built its font cache anew each time; it gets one beside the kernel cache
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "a_file").write_text("")  # a folder inside a file cannot be made, not even by root
    env = {k: v for k, v in os.environ.items() if k != "MPLCONFIGDIR"}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "a_file" / "config"), "ETAPPE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", "import etappe.reports.plots, matplotlib, numba; "
                           "print(matplotlib.get_configdir()); print(numba.config.CACHE_DIR)"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    config, cache = done.stdout.split()
    assert config == str(Path(cache) / "matplotlib") and "matplotlib" not in done.stderr.lower()
