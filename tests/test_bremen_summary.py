"""Bremer Stadtmusikanten: a run summarized in chunks (RunSummary, what
`etappe report` reads a run file into) gives the tables of the whole record
table, and the same report."""
import re

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from etappe.analysis import bremen as A  # noqa: E402
from etappe.analysis.runio import write_parquet  # noqa: E402
from etappe.analysis.stats import IntHistogram  # noqa: E402
from etappe.reports.bremen import build_report  # noqa: E402


@pytest.fixture(scope="module")
def run():
    # a policy on two seats (clustered intervals), some capped games (no winner: NaN deficits and gaps)
    return A.simulate(players=4, games=240, policies=["greedy", "random", "greedy", "random"], seed=5,
                      options={"max_turns": 120})


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
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_dtype=False,
                                  check_exact=True)


def test_chunked_summary_gives_the_whole_tables(run):
    assert 0 < int(run["capped"].sum()) < len(run)
    s = _in_chunks(run, [1, 60, 17, 100, 62])
    assert s.games == len(run) and (s.index_min, s.index_max) == (0, len(run) - 1)
    for by in ("seat", "policy"):
        _same(s.win_rates(by), A.win_rates(run, by))
    _same(s.first_seat_advantage(), A.first_seat_advantage(run))
    for by in ("position", "seat"):
        assert s.seat_uniformity(by) == pytest.approx(A.seat_uniformity(run, by), rel=0, abs=0)
    _same(s.points_by_source(), A.points_by_source(run))
    _same(s.length_stats(), A.length_stats(run))
    _same(s.tension_table(), A.tension_table(run))
    assert s.capped_rate() == A.capped_rate(run)
    _same(s.head_to_head(), A.head_to_head(run))
    for by in ("policy", "position", "seat"):
        _same(s.progress_table(by), A.progress_table(run, by))
    t = A.game_tension(run)
    for key in ("lead_changes", "winner_deficit"):
        assert s.tension_hists[key] == IntHistogram.of(t[key].to_numpy(float))
    assert s.column_total("storms") == int(run["storms"].sum())


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
    _same(s.win_rates("policy"), A.win_rates(old, "policy"))
    md = build_report(s).to_markdown()
    assert "no tension columns" in md and "no progress columns" in md
