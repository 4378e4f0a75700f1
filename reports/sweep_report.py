"""The report of a design sweep (`etappe sweep`): what one setting of a
design file does, value by value, against the design as written.

It lays out what `etappe.analysis.sweep` computed: the run (all that is
needed to reproduce it), at a glance (the compare report's headline
metrics, value by value), a figure of the paired differences, every metric
as a table, and the method. This module computes no statistics of its own.
"""
from __future__ import annotations

import json
import re
import shlex

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..analysis.compare import FAIR_GAPS, PAIRED_METRICS, lacks
from ..analysis.sweep import Sweep, shown_metrics, sweep_table
from ..analysis.stats import alone_text, counted, difference_text, p_text
from ..kernels.options import option_text, value_text
from .document import Report, significant
from .race_report import caveat_section, design_name, policies_text
from .sections import policy_cycle

__all__ = ["build_sweep_report"]

METRIC_LABELS = {**{key: label for key, label, _ in PAIRED_METRICS}, **dict(FAIR_GAPS.values())}
HEADLINE_METRICS = ("game_turns", "first_hand_gap", "first_player_gap", "hazard_decided", "dead_share")


def effect_chart(table: pd.DataFrame, keys: list[str], path: str) -> Figure:
    """One panel per metric: each value's paired difference from the design
    as written, with the 95 % interval of that metric alone (0: no change);
    the point filled where Holm's correction over the sweep rejects, open
    where it does not (an interval clear of 0 can still be open)."""
    fig = Figure(figsize=(3.2 * len(keys), 3.2))
    for i, key in enumerate(keys):
        ax = fig.add_subplot(1, len(keys), i + 1)
        rows = table[table["key"] == key]
        x = np.arange(len(rows))
        err = np.vstack([rows["diff"] - rows["ci_low"], rows["ci_high"] - rows["diff"]])
        bars = ax.errorbar(x, rows["diff"], yerr=err, fmt="o", capsize=3, markerfacecolor="white")
        found = rows["reject"].to_numpy(bool)
        ax.plot(x[found], rows["diff"][found], "o", color=bars.lines[0].get_color(), zorder=3)  # over the open ones
        ax.axhline(0.0, color="#777", linewidth=0.8)
        ax.set_ylabel("value minus as written" if i == 0 else "")
        ax.set_xticks(x, [value_text(v) for v in rows["value"]])
        ax.set_xlabel(path)
        ax.set_title(rows["metric"].iloc[0], fontsize=8, wrap=True)
    fig.suptitle("Difference from the design as written (95 % intervals)")
    fig.tight_layout()
    return fig


def build_sweep_report(sweep: Sweep, on_section=None) -> Report:
    meta = sweep.base_meta
    table = sweep_table(sweep)
    keys = shown_metrics(sweep)
    name = design_name(meta)
    as_written = "not set in the file (its default)" if sweep.base_value is None else value_text(sweep.base_value)
    rep = Report(f"Sweep: {name}, {sweep.path}, {meta['players']} players", on_section=on_section)

    sec = rep.section("Run")
    games_played = meta["games"] * (len(sweep.values) + 1)  # the design as written and each value
    rows = [("design", name), ("design file", meta.get("design_file", "")), ("design hash", meta.get("design_hash")),
            ("setting swept", sweep.path), ("value in the file", as_written),
            ("values played", ", ".join(map(value_text, sweep.values))),
            *_dealt_rows(sweep), ("players", meta["players"]),
            ("policies", policies_text(meta)), ("seating", meta["seating"]),
            ("seed", meta["seed"]), ("games per value", meta["games"]),
            ("rule options", json.dumps(meta["options"], sort_keys=True)),
            ("etappe version", meta.get("version")),
            ("wall time", f"{sweep.wall_seconds:.2f} s of play, every design's games"),
            ("games per second", f"{games_played / sweep.wall_seconds:,.0f}" if sweep.wall_seconds > 0 else "")]
    sec.table(pd.DataFrame(rows, columns=["item", "value"]).astype(str), "Everything needed to reproduce the sweep")
    sec.text("Reproduce: etappe sweep " + shlex.join([
        meta.get("design_file", "").removeprefix("builtin:"), "--set", f"{sweep.path}=" + ",".join(map(value_text, sweep.values)),
        "--players", str(meta["players"]), "--games", str(meta["games"]), "--seed", str(meta["seed"]),
        "--policy", policy_cycle([p["name"] for p in meta["policies"]]), "--seating", meta["seating"],
        *(word for k, v in sweep.options_given.items() for word in ("-o", option_text({k: v})))]))

    sec = rep.section("At a glance")
    sec.text(f"Each value of {sweep.path} is played on the same {counted(meta['games'], 'game')} (the same seeds) as the "
             f"design as written ({sweep.path} = {as_written}), and compared with it game by game. A change is "
             "named only where Holm's correction over every value and metric of the sweep still finds it.")
    for key in [k for k in HEADLINE_METRICS if k in keys]:
        rows = table[table["key"] == key]
        measured = {repr(v) for v in rows["value"]}
        # a value with no pair of games to compare on this metric (no winner, no hazards): say why
        base_lacks = lacks(key, sweep.base, "the design as written")
        if rows.empty and base_lacks:
            sec.text(f"{METRIC_LABELS.get(key, key)}: not measured: {base_lacks}.")
            continue
        missing = [f"{value_text(v)}: not measured: {lacks(key, summary, f'{sweep.path} = {value_text(v)}', sweep.base.layout.multi_hand) or base_lacks or 'no pair of games'}"
                   for v, summary in zip(sweep.values, sweep.summaries) if repr(v) not in measured]
        if rows.empty:
            sec.text(f"{METRIC_LABELS.get(key, key)}: " + "; ".join(missing) + ".")
            continue
        finite = rows[np.isfinite(rows["diff"])]  # a distance from the fair share needs two games
        if finite.empty:
            sec.text(f"{rows['metric'].iloc[0]}: not measured from {counted(int(rows['n'].max()), 'game')}: "
                     "play more games.")
            continue
        # the design as written is quoted on the most games that pair; a value paired on fewer (a game
        # without a winner or a hazard on either side drops out) names its own, so that the
        # difference shown is that of the two numbers beside it
        widest = finite.loc[finite["n"].idxmax()]
        parts = []
        for _, r in rows.iterrows():
            if not np.isfinite(r["diff"]):
                parts.append(f"{value_text(r['value'])}: not measured from {counted(int(r['n']), 'game')}")
                continue
            own = (f" against {significant(r['as_written'])} as written on the same {counted(int(r['n']), 'game')}"
                   if r["n"] != widest["n"] else "")
            if r["diff"] == 0 and pd.isna(r["p_value"]):  # nothing to test
                room = (f"; 95 % interval of the difference [{significant(r['ci_low'])}, {significant(r['ci_high'])}]"
                        if r["ci_low"] < r["ci_high"] else "")
                parts.append(f"{value_text(r['value'])}: {significant(r['variant'])}{own} (equal in every game{room})")
            elif r["n"] == 1:
                parts.append(f"{value_text(r['value'])}: {significant(r['variant'])}{own} ({r['diff']:+.3g}; one game only, so no "
                             "interval and no test)")
            else:
                alone = alone_text(r["p_value"])
                verdict = "" if r["reject"] else f", no clear change ({alone})" if alone else ", no clear change"
                spread = ("in every game" if pd.isna(r["ci_low"])  # the same in every game: the sign test, no interval
                          else f"[{significant(r['ci_low'])}, {significant(r['ci_high'])}]")
                parts.append(f"{value_text(r['value'])}: {significant(r['variant'])}{own} ({r['diff']:+.3g} {spread}, "
                             f"Holm {p_text(r['p_holm'])}{verdict})")
        sec.text(f"{rows['metric'].iloc[0]}: as written {significant(widest['as_written'])}"
                 + (f" ({counted(int(widest['n']), 'game')})" if widest["n"] != meta["games"] else "") + "; "
                 + "; ".join(parts + missing) + ".")
    shown = [k for k in HEADLINE_METRICS if k in keys and (table["key"] == k).any()]
    sec.figure(effect_chart(table, shown, sweep.path), "Paired differences from the design as written",
               name="sweep_effects")
    sec.text("Each bar is the 95 % interval of that metric alone; a filled point is a change that Holm's correction "
             "over the whole sweep finds, an open one is not (its interval may still clear 0).")

    sec = rep.section("Every metric")
    out = table.copy()
    out["value"] = out["value"].map(value_text)
    out["diff [95 % interval]"] = [difference_text(d, lo, hi, n) for d, lo, hi, n
                                   in zip(out["diff"], out["ci_low"], out["ci_high"], out["n"])]
    sec.table(out[["metric", "value", "variant", "as_written", "diff [95 % interval]", "p_value", "p_holm",
                   "reject", "n"]], "Each value against the design as written, paired game by game (the 95 % "
              "interval of each metric alone; reject: Holm's correction over the whole sweep)")

    sec = rep.section("Method")
    sec.text("Game i of every variant and of the design as written starts from the same keys (root seed and game "
             "index), so the deals and the policies' random choices are shared as far as the variant lets them "
             "be: the differences are paired game by game (common random numbers). That makes them more precise "
             "than two independent runs as far as the games stay alike: a rule option that seldom comes into play "
             "keeps most games as they were, while a change of card counts deals other cards from the first draw "
             "and pairing then gains little. The intervals come from the paired differences, so they hold either "
             "way. Each row is the mean of the per-game differences (variant minus "
             "as written) with a 95 % Student t interval (on the games in which the two differ, less one, as degrees "
             "of freedom; for a rate or a share, clipped to [-1, 1]); p is the "
             "two-sided t-test (where every game differs by the same non-zero amount, the exact sign test); a rate "
             "of 0 or 1 a game takes instead Tango's score interval and McNemar's exact test of the games in which "
             "the two differ (docs/statistics.md); and "
             "Holm's step-down "
             "correction runs over every value and metric of the sweep at once (a value equal to the file's own "
             "plays the same games, and a variant that changes no game shows no difference: no test). The first "
             "player's distance from the fair share is asked of the side that plays first in each hand where the "
             "design plays several hands (the first player moves round), else of the game's first player. The metrics are "
             "those of the compare report (docs/records.md) less the per-seat win rates and the distances and "
             "totals a swept setting could rescale (the winner's deficit is given as a share of the trip); a "
             "variant is validated as a design file of its own would be.")

    caveat_section(rep.section("Caveat"), [meta])
    return rep


def _dealt_rows(sweep: Sweep) -> list[tuple[str, str]]:
    """For a card count swept: the copies in the deck as played at the run's
    player count, which a `remove` of that player count makes fewer than
    the file's count."""
    m = re.fullmatch(r"cards\.([^.]+)\.count", sweep.path)
    if not m:
        return []

    def dealt(meta: dict) -> int:
        return next(c["count"] for c in meta["cards"] if c["key"] == m[1])

    return [(f"copies in the deck at {sweep.base_meta['players']} players",
             f"as written {dealt(sweep.base_meta)}; "
             + ", ".join(f"{value_text(v)}: {dealt(meta)}" for v, meta in zip(sweep.values, sweep.metas)))]
