"""Figures the reports share (the race reports draw all of theirs here, the
others some).

Every function draws tidy tables made by `etappe.analysis` (it computes no
statistics) and, but `length_panel` (which makes a figure of its own), takes
``ax=None`` and returns the Axes it drew on. Without an Axes a new
`matplotlib.figure.Figure` is made (never pyplot, so no global state):
``ax.figure`` is what goes into a report.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")


def new_axes(figsize=(6.4, 3.6)) -> Axes:
    """A fresh Axes on its own Figure (no pyplot)."""
    fig = Figure(figsize=figsize)
    return fig.add_subplot()


def _ax(ax, figsize=(6.4, 3.6)) -> Axes:
    return new_axes(figsize) if ax is None else ax


def _errors(frame: pd.DataFrame, value="rate", low="ci_low", high="ci_high") -> np.ndarray:
    v = frame[value].to_numpy(float)
    return np.vstack([np.maximum(v - frame[low].to_numpy(float), 0), np.maximum(frame[high].to_numpy(float) - v, 0)])


def win_bars(table: pd.DataFrame, label: str, ax=None, fair_share: float | None = None, title: str = "") -> Axes:
    """Horizontal bars of win rates with 95 % interval error bars.

    `table` has columns `label`, rate, ci_low, ci_high (e.g. outcomes_by_seat).
    """
    ax = _ax(ax, (6.4, 0.5 + 0.45 * max(len(table), 2)))
    y = np.arange(len(table))
    ax.barh(y, table["rate"].to_numpy(float), xerr=_errors(table), color=COLORS[0], alpha=0.8, capsize=3)
    ax.set_yticks(y, [str(v) for v in table[label]])
    ax.invert_yaxis()
    if fair_share is not None:
        ax.axvline(fair_share, color="k", ls="--", lw=1, label=f"fair share {fair_share:.3g}")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("win rate (95 % Wilson interval)")
    if title:
        ax.set_title(title)
    return ax


def seat_bias(positions: pd.DataFrame, ax=None, title: str = "Win rate by turn order") -> Axes:
    """Win rate by turn-order position (outcomes_by_position) against the fair share."""
    ax = _ax(ax)
    x = positions["position"].to_numpy()
    ax.bar(x, positions["rate"].to_numpy(float), yerr=_errors(positions), color=COLORS[0], alpha=0.8, capsize=4)
    fair = positions["fair_share"].to_numpy(float)
    ax.hlines(fair, x - 0.4, x + 0.4, colors="k", linestyles="--", lw=1, label="fair share")
    ax.set_xticks(x, [f"{p}." for p in x])
    ax.set_xlabel("turn-order position at the start of the game")
    ax.set_ylabel("win rate")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(title)
    return ax


def histogram(hist: pd.DataFrame, ax=None, xlabel: str = "", label: str | None = None, color=None,
              density: bool = False, counted: str = "games", zero_alone: bool = False) -> Axes:
    """Bars of an integer histogram (hist_frame: value, count); `counted`
    names what the counts are (games, hands, races) for the y axis.
    `zero_alone`: where a wide range is binned, the value 0 keeps a bar of
    its own (a deficit of 0 is "never behind", not a small deficit)."""
    ax = _ax(ax)
    v = hist["value"].to_numpy(float)
    c = hist["count"].to_numpy(float)
    if density and c.sum() > 0:
        c = c / c.sum()
    span = (v.max() - v.min()) if v.size else 0
    # the values lie on a grid (scores in steps of 25 points, say): a wide range goes in bins of a whole
    # number of grid steps each, so that no bin holds one value more than its neighbour (a comb that is
    # not in the data)
    step = int(np.gcd.reduce(np.diff(v).astype(np.int64))) if v.size > 1 else 1
    width = step * max(1, int(np.ceil(span / step / 60)))
    widths = width
    if width > step:
        start = v.min() - step / 2
        alone = zero_alone and v.min() == 0
        edges = np.arange(start + step if alone else start, v.max() + width, width)
        if alone:
            edges = np.r_[start, edges]
        c, edges = np.histogram(v, bins=edges, weights=c)
        v = (edges[:-1] + edges[1:]) / 2
        widths = np.diff(edges)
    ax.bar(v, c, width=widths, color=color or COLORS[0], alpha=0.6 if label else 0.85, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"share of {counted}" if density else counted)
    if label:
        ax.legend(fontsize=8)
    return ax


def ecdf(hist: pd.DataFrame, ax=None, xlabel: str = "", label: str | None = None, color=None,
         marks: dict | None = None) -> Axes:
    """Step ECDF of an integer histogram (hist_frame: value, ecdf); `marks` = {name: x} lines."""
    ax = _ax(ax)
    x = hist["value"].to_numpy(float)
    F = hist["ecdf"].to_numpy(float)
    ax.step(np.r_[x[:1], x], np.r_[0.0, F], where="post", color=color or COLORS[0], label=label)
    for i, (name, value) in enumerate((marks or {}).items()):
        ax.axvline(value, color="grey", ls=(":" if i else "--"), lw=1)
        ax.annotate(f"{name} {value:g}", (value, 0.05 + 0.1 * i), fontsize=8, xytext=(3, 0), textcoords="offset points")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("ECDF")
    if label:
        ax.legend(fontsize=8)
    return ax


def length_panel(hist: pd.DataFrame, xlabel: str, median: float | None = None, p95: float | None = None,
                 counted: str = "games", zero_alone: bool = False) -> Figure:
    """Histogram and ECDF side by side (one Figure, two Axes); `counted` and `zero_alone` as in histogram."""
    fig = Figure(figsize=(9, 3.2))
    a, b = fig.subplots(1, 2)
    histogram(hist, a, xlabel, counted=counted, zero_alone=zero_alone)
    marks = {k: v for k, v in (("median", median), ("p95", p95)) if v is not None and np.isfinite(v)}
    ecdf(hist, b, xlabel, marks=marks)
    fig.tight_layout()
    return fig


def progress_curves(progress: pd.DataFrame, ax=None, ylabel: str = "distance", title: str = "",
                    xlabel: str = "round (one turn per player)", ceiling: float = np.inf) -> Axes:
    """Mean progress by round per group (progress_table) with bands; rounds on whole-number ticks.

    Light band: mean +- 1 sd (spread of hands); dark band: 95 % interval of
    the mean (a t interval: at early rounds of Bremen, where nearly every
    seat still has 0 points, it reached below 0). Both are cut at 0, as
    every curve drawn here (distance, points, a time gap) is never negative,
    and at `ceiling`, the most a value can reach (a race design's longest
    trip: late in a hand mean + sd went past it).
    """
    ax = _ax(ax)
    for i, (group, g) in enumerate(progress.groupby("group", sort=False)):
        color = COLORS[i % len(COLORS)]
        r = g["round"].to_numpy(float)
        band_low, band_high, ci_low, ci_high = (np.clip(g[c].to_numpy(float), 0.0, ceiling)
                                                for c in ("band_low", "band_high", "ci_low", "ci_high"))
        ax.fill_between(r, band_low, band_high, color=color, alpha=0.12, lw=0)
        ax.fill_between(r, ci_low, ci_high, color=color, alpha=0.35, lw=0)
        ax.plot(r, g["mean"].to_numpy(float), color=color, label=str(group))
    ax.set_xlabel(xlabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(f"mean {ylabel}")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def card_balance_chart(cards: pd.DataFrame, ax=None, title: str = "What happens to each card drawn") -> Axes:
    """Stacked shares of drawn cards played / discarded / still in hand (card_balance)."""
    ax = _ax(ax, (6.4, 0.6 + 0.32 * max(len(cards), 3)))
    drawn = cards["drawn"].to_numpy(float)
    safe = np.where(drawn > 0, drawn, 1)
    parts = [("played", COLORS[2]), ("discarded", COLORS[1]), ("in_hand", COLORS[7])]
    y = np.arange(len(cards))
    left = np.zeros(len(cards))
    for col, color in parts:
        share = cards[col].to_numpy(float) / safe
        ax.barh(y, share, left=left, color=color, label=col.replace("_", " "))
        left += share
    ax.set_yticks(y, [str(v) for v in cards["name"]])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the cards drawn")
    ax.legend(fontsize=8, ncols=3, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    if title:
        ax.set_title(title, pad=22)
    return ax


def forest(diffs: pd.DataFrame, ax=None, title: str = "Paired differences (A - B)") -> Axes:
    """Forest plot of paired differences in standard-deviation units.

    `diffs` has metric, diff, sd, ci_low, ci_high and reject (Holm); each
    difference and its interval are divided by the sd of the per-game
    differences so metrics of different units share one axis. Filled
    markers: significant after Holm.
    """
    ax = _ax(ax, (6.4, 0.6 + 0.4 * max(len(diffs), 3)))
    sd = diffs["sd"].to_numpy(float)
    sd = np.where((sd > 0) & np.isfinite(sd), sd, np.nan)
    m = diffs["diff"].to_numpy(float) / sd
    lo = diffs["ci_low"].to_numpy(float) / sd
    hi = diffs["ci_high"].to_numpy(float) / sd
    y = np.arange(len(diffs))
    reject = diffs["reject"].to_numpy(bool) if "reject" in diffs else np.zeros(len(diffs), bool)
    ax.hlines(y, lo, hi, color=COLORS[0])
    ax.scatter(m[reject], y[reject], color=COLORS[1], zorder=3, label="Holm-significant")
    ax.scatter(m[~reject], y[~reject], facecolors="white", edgecolors=COLORS[0], zorder=3, label="not significant")
    ax.axvline(0, color="k", lw=1)
    ax.set_yticks(y, [str(v) for v in diffs["metric"]])
    ax.invert_yaxis()
    ax.set_xlabel("difference / sd of the per-game differences (95 % interval)")
    ax.legend(fontsize=8, loc="best")
    if title:
        ax.set_title(title)
    return ax
