"""Comparing two designs (or one design under two rule options) on the same seeds.

Game i of run A and game i of run B start from the same random keys (common
random numbers), so per-game metrics are differenced game by game:
d_i = metric_A(i) - metric_B(i). A `PairedComparison` keeps, per metric, the
number of pairs n and the sums of d and d^2 (and of each side's values), so
it aggregates chunk by chunk. `paired_table` turns it
into the mean difference with a 95 % Student t interval (clipped to [-1, 1]
for rates and shares), a two-sided t-test p-value and Holm's correction
across the metrics shown.

Pairs where a metric is undefined on either side (e.g. the winner's deficit
in a game without a winner) are left out of that metric's n.

Card-level rates (played share, dead share) cannot be paired game by game;
`card_comparison` compares them as shares of two independent runs (each
clustered by game, card by card or pooled by role), and says so in its
`method` column.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..kernels.options import value_text
from .race_summary import RaceSummary, layout_from, outcomes_by_position, side_policies
from .stats import (alone_text, counted, holm, p_text, paired_difference, paired_proportion_difference, rate, t_point,
                    two_run_ratio_difference)

__all__ = [
    "PairedComparison", "game_metrics", "compare_tables", "paired_table", "design_paired_table", "design_differences",
    "option_differences", "card_comparison", "headline", "shared_cards", "PAIRED_METRICS",
]

# (column of game_table, label, unit); won_s{s} rows are added per side.
PAIRED_METRICS = (
    ("game_turns", "turns per game", "turns"),
    ("hands", "hands per game", "hands"),
    ("capped", "turn-cap (stall) rate", "rate"),
    ("no_winner", "no-winner rate", "rate"),
    ("first_position_won", "first-player win rate", "rate"),
    ("first_hand_trip_share", "share of the trips completed by the side playing first in the hand", "share"),
    ("lead_changes", "lead changes per game", "changes"),
    ("winner_deficit", "winner's largest deficit", "distance"),
    # in trips, not a bounded share: an extended trip lets the leader pass the trip it is divided by
    ("winner_deficit_share", "winner's largest deficit (share of the trip)", "trips"),
    ("final_gap", "final gap (winner minus runner-up)", "total"),
    ("hazard_turns", "turns lost to hazards per game", "turns"),
    ("hazard_decided", "won by the side least hit by hazards", "rate"),
    ("dead_share", "share of drawn cards wasted (discarded or held)", "share"),
    # designs whose card keys differ: the dead share of the cards both hold (game_table's shared_cards)
    ("dead_share_shared", "share of drawn cards wasted, of the cards both designs hold", "share"),
)
# distances in each design's own unit: compared only between designs of the same unit, trip and hands per
# game, where winner_deficit_share (a share of the trip) stands in for them
SCALED_METRICS = ("winner_deficit", "final_gap")
SUMS = ("n", "differ", "sum_d", "sum_d2", "sum_a", "sum_b", "sum_a2", "sum_b2")  # differ: pairs whose d is not 0
# units of metrics that lie in [0, 1], so that a difference of two of them lies in [-1, 1]
BOUNDED_UNITS = ("rate", "share")
# rate metrics whose distance from the fair share paired_table adds as a row (key, label) after them
FAIR_GAPS = {
    "first_position_won": ("first_player_gap", "first player's distance from the fair share"),
    "first_hand_trip_share": ("first_hand_gap", "hand's first player's distance from the fair share (trips)"),
}


def shared_cards(meta_a: dict, meta_b: dict) -> tuple[str, ...] | None:
    """The card keys both runs' designs hold, where their card keys differ
    (None where they are the same: the dead share is then of the same
    cards in both), for game_table's dead_share_shared."""
    cards_a, cards_b = (layout_from(m).cards for m in (meta_a, meta_b))
    if set(cards_a) == set(cards_b):
        return None
    return tuple(k for k in cards_a if k in cards_b)


def game_metrics(table: pd.DataFrame) -> pd.DataFrame:
    """The per-game metrics used for pairing, indexed by game (from game_table)."""
    t = table.set_index("game")
    out = pd.DataFrame(index=t.index)
    for col, _, _ in PAIRED_METRICS:
        if col == "no_winner":
            out[col] = (t["winner_side"] < 0).astype(float)
        elif col in t:
            out[col] = t[col].astype(float)
    for col in t.columns:
        if col.startswith("won_s"):
            out[col] = t[col].astype(float)
    return out


@dataclass
class PairedComparison:
    """Running sums of paired per-game differences, metric by metric."""

    metrics: list[str] = field(default_factory=list)
    sums: dict[str, np.ndarray] = field(default_factory=dict)  # SUMS -> array over metrics
    pending_a: pd.DataFrame | None = None
    pending_b: pd.DataFrame | None = None
    closed: frozenset = frozenset()  # runs that have given all their games
    one_sided: int = 0  # games of one run that the other, closed, run does not hold

    def _ensure(self, columns) -> None:
        for col in columns:
            if col not in self.metrics:
                self.metrics.append(col)
                for key in SUMS:
                    self.sums[key] = np.append(self.sums.get(key, np.zeros(0)), 0.0)

    def add_a(self, table: pd.DataFrame) -> None:
        """Per-game table (game_table) of games of run A; pairs as soon as B has them."""
        self.add_metrics("a", game_metrics(table))

    def add_b(self, table: pd.DataFrame) -> None:
        self.add_metrics("b", game_metrics(table))

    def add_metrics(self, run: str, metrics: pd.DataFrame) -> None:
        """Per-game metric frame (indexed by game) of some games of run "a" or
        "b"; each game pairs as soon as the other run has it, whatever order
        the two runs' games come in."""
        if run == "a":
            self.pending_a = _stack(self.pending_a, metrics)
        else:
            self.pending_b = _stack(self.pending_b, metrics)
        self._pair()

    def add_pairs(self, a: pd.DataFrame, b: pd.DataFrame) -> None:
        """Accumulate aligned per-game metric frames (same index = same games)."""
        if not a.index.equals(b.index):
            raise ValueError("paired metric frames must hold the same games in the same order")
        cols = [c for c in a.columns if c in b.columns]
        self._ensure(cols)
        for col in cols:
            x = a[col].to_numpy(float)
            y = b[col].to_numpy(float)
            ok = ~(np.isnan(x) | np.isnan(y))
            d = x[ok] - y[ok]
            i = self.metrics.index(col)
            self.sums["n"][i] += ok.sum()
            self.sums["differ"][i] += np.count_nonzero(d)
            self.sums["sum_d"][i] += d.sum()
            self.sums["sum_d2"][i] += (d * d).sum()
            self.sums["sum_a"][i] += x[ok].sum()
            self.sums["sum_b"][i] += y[ok].sum()
            self.sums["sum_a2"][i] += (x[ok] ** 2).sum()
            self.sums["sum_b2"][i] += (y[ok] ** 2).sum()

    def _pair(self) -> None:
        if self.pending_a is None or self.pending_b is None:
            self._drop_one_sided()
            return
        common = self.pending_a.index.intersection(self.pending_b.index)
        if len(common):
            self.add_pairs(self.pending_a.loc[common], self.pending_b.loc[common])
            self.pending_a = self.pending_a.drop(common)
            self.pending_b = self.pending_b.drop(common)
        self._drop_one_sided()

    def close(self, run: str) -> None:
        """Run "a" or "b" has given all its games: from now on the other
        run's games it lacks are only counted, not held (a run of 2 million
        games against one of 200,000 would otherwise keep 1.8 million rows)."""
        self.closed = self.closed | {run}
        self._drop_one_sided()

    def _drop_one_sided(self) -> None:
        for run, other in (("a", "b"), ("b", "a")):
            pending = self.pending_a if run == "a" else self.pending_b
            if other in self.closed and pending is not None and len(pending):
                self.one_sided += len(pending)
                if run == "a":
                    self.pending_a = pending.iloc[:0]
                else:
                    self.pending_b = pending.iloc[:0]

    @property
    def unpaired(self) -> int:
        """Games seen in one run only (should be 0 when both runs are complete)."""
        return self.one_sided + sum(len(p) for p in (self.pending_a, self.pending_b) if p is not None)


def _stack(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return pd.concat([a, b])


def compare_tables(table_a: pd.DataFrame, table_b: pd.DataFrame) -> PairedComparison:
    """PairedComparison of two per-game tables (game_table) held in memory."""
    comp = PairedComparison()
    comp.add_a(table_a)
    comp.add_b(table_b)
    return comp


def _label(metric: str, sides_labels: dict | None, labels: dict | None = None) -> tuple[str, str]:
    if labels and metric in labels:
        return labels[metric]
    for col, label, unit in PAIRED_METRICS:
        if col == metric:
            return label, unit
    if metric.startswith("won_s"):
        s = int(metric[5:])
        name = (sides_labels or {}).get(s, f"side {s}")
        return f"win rate of {name} (all games: one without a winner counts as a loss)", "rate"
    return metric, ""


def gap_difference(comp: PairedComparison, metric: str, fair: float) -> dict:
    """|mean_A - fair| - |mean_B - fair| of a rate metric, paired game by game.

    Per game g = s_A (a - fair) - s_B (b - fair), s_A and s_B the signs of
    mean_A - fair and mean_B - fair: its mean is the difference of the two
    distances from the fair share, its variance var(a) + var(b) - 2 s_A s_B
    cov(a, b) comes from the kept sums (sum a b = (sum a^2 + sum b^2 -
    sum d^2) / 2), and paired_difference gives its interval and p. A sign
    is known only where the design's own 95 % interval of its mean leaves
    out the fair share; for a design at or near it, either sign is taken:
    the interval is the union of the intervals of every sign allowed and p
    the largest of their p (an intersection-union test), so that the
    chance sign of a fair design cannot name it the more biased one.
    Returns a dict: n, mean_a and mean_b (the distances), mean, sd (those
    of the estimated signs), ci_low, ci_high, p_value.
    """
    i = comp.metrics.index(metric)
    n = comp.sums["n"][i]
    if n < 2:
        return {"n": n, **dict.fromkeys(("mean_a", "mean_b", "mean", "sd", "ci_low", "ci_high", "p_value"), np.nan)}
    sa_, sb_ = comp.sums["sum_a"][i], comp.sums["sum_b"][i]
    saa, sbb, sdd = comp.sums["sum_a2"][i], comp.sums["sum_b2"][i], comp.sums["sum_d2"][i]
    ma, mb = sa_ / n, sb_ / n
    var_a = (saa - n * ma * ma) / (n - 1)
    var_b = (sbb - n * mb * mb) / (n - 1)
    cov = ((saa + sbb - sdd) / 2 - n * ma * mb) / (n - 1)

    def signs(mean, var):
        estimated = 1.0 if mean >= fair else -1.0
        known = abs(mean - fair) > t_point(n) * np.sqrt(max(var, 0.0) / n)
        return [estimated] if known else [estimated, -estimated]

    tried = []
    for sga in signs(ma, var_a):
        for sgb in signs(mb, var_b):
            var_g = max(var_a + var_b - 2 * sga * sgb * cov, 0.0)
            mean_g = sga * (ma - fair) - sgb * (mb - fair)
            tried.append(paired_difference(n, n * mean_g, (n - 1) * var_g + n * mean_g * mean_g))
    estimated = tried[0]
    return {"n": n, "mean_a": abs(ma - fair), "mean_b": abs(mb - fair), "mean": estimated["mean"],
            "sd": estimated["sd"], "ci_low": np.min([t["ci_low"] for t in tried]),
            "ci_high": np.max([t["ci_high"] for t in tried]), "p_value": np.max([t["p_value"] for t in tried])}


def paired_table(comp: PairedComparison, metrics=None, alpha: float = 0.05, side_labels: dict | None = None,
                 fair: float | None = None, metric_labels: dict | None = None) -> pd.DataFrame:
    """One row per metric: n, mean_a, mean_b, diff (A - B), sd, 95 % interval, p, Holm.

    The interval of a rate or a share (BOUNDED_UNITS) is clipped to
    [-1, 1], where its difference lies: with few games Student's t reaches
    beyond, and the clipped interval holds the true difference as often. A
    rate of 0 or 1 a game in both runs (who won, a stall) gets Tango's score
    interval and McNemar's exact p from its discordant games instead
    (stats.paired_proportion_difference).

    Holm's correction runs across the rows of this table (the metrics shown)
    whose paired differences vary: a metric whose paired difference is 0
    in every game (e.g. one hand per game in both designs) shows no
    difference to test, gets no p-value and is left out of Holm's m.
    `metrics` selects and orders them (default: all with n > 0). With
    `fair` (1/sides), each metric of FAIR_GAPS shown is followed by its
    distance from the fair share, |rate - fair|, A - B (see `gap_difference`):
    "first_player_gap" (the game's first player) and "first_hand_gap"
    (the side that plays first in a hand, share of the trips completed).
    `metric_labels` (key -> (label, unit)) names metrics that are not the race
    designs' (the other games' comparisons, analysis/variants.py).
    Raises ValueError when the comparison holds no paired game.
    """
    if not comp.metrics:  # no game was ever paired: no metric, no sums
        raise ValueError("the comparison holds no paired game")
    names = [m for m in (metrics or comp.metrics) if m in comp.metrics]
    idx = [comp.metrics.index(m) for m in names]
    n = comp.sums["n"][idx] if idx else np.zeros(0)
    keep = n > 0
    names = [m for m, k in zip(names, keep) if k]
    idx = [i for i, k in zip(idx, keep) if k]
    n = comp.sums["n"][idx]
    sum_d, sum_d2, differ = comp.sums["sum_d"][idx], comp.sums["sum_d2"][idx], comp.sums["differ"][idx]
    mean_a, mean_b = rate(comp.sums["sum_a"][idx], n), rate(comp.sums["sum_b"][idx], n)
    labels = [_label(m, side_labels, metric_labels) for m in names]
    gaps = {}
    for metric, (gap_key, gap_label) in FAIR_GAPS.items():
        if fair is None or metric not in names:
            continue
        gap = gaps[gap_key] = gap_difference(comp, metric, fair)
        at = names.index(metric) + 1
        names.insert(at, gap_key)
        labels.insert(at, (gap_label, labels[at - 1][1]))
        n, sum_d, sum_d2, differ = (np.insert(v, at, x) for v, x in
                                    ((n, gap["n"]), (sum_d, np.nan), (sum_d2, np.nan), (differ, gap["n"])))
        mean_a, mean_b = np.insert(mean_a, at, gap["mean_a"]), np.insert(mean_b, at, gap["mean_b"])
    d = paired_difference(n, sum_d, sum_d2, differ=differ)
    d = {k: np.array(v, dtype=float, ndmin=1) for k, v in d.items()}
    for key, gap in gaps.items():
        for column in ("mean", "sd", "ci_low", "ci_high", "p_value"):
            d[column][names.index(key)] = gap[column]
    bounded = np.array([unit in BOUNDED_UNITS for _, unit in labels], dtype=bool)
    d["ci_low"] = np.where(bounded, np.maximum(d["ci_low"], -1.0), d["ci_low"])
    d["ci_high"] = np.where(bounded, np.minimum(d["ci_high"], 1.0), d["ci_high"])
    # A rate of 0 or 1 a game on both sides (a^2 sums to a): the discordant games give Tango's interval
    # and McNemar's exact p, which hold their level when few games differ, where the t interval does not.
    binary = np.array([unit == "rate" and key in comp.metrics and all(
        comp.sums[f"sum_{r}2"][comp.metrics.index(key)] == comp.sums[f"sum_{r}"][comp.metrics.index(key)]
        for r in "ab") for key, (_, unit) in zip(names, labels)], dtype=bool) & (n > 1)  # one pair: no spread
    if binary.any():
        exact = paired_proportion_difference(n[binary], (sum_d2[binary] + sum_d[binary]) / 2,
                                             (sum_d2[binary] - sum_d[binary]) / 2)
        for key in ("ci_low", "ci_high", "p_value"):
            d[key][binary] = exact[key]
    constant = (d["sd"] == 0) & (d["mean"] == 0)
    d["p_value"] = np.where(constant, np.nan, d["p_value"])
    adjusted, reject = holm(d["p_value"], alpha)
    return pd.DataFrame({
        "metric": [label for label, _ in labels], "key": names, "unit": [u for _, u in labels],
        "n": np.asarray(n).astype(np.int64),
        "mean_a": mean_a, "mean_b": mean_b,
        "diff": d["mean"], "sd": d["sd"], "ci_low": d["ci_low"], "ci_high": d["ci_high"],
        "p_value": d["p_value"], "p_holm": adjusted, "reject": reject,
    })


def design_paired_table(comp: PairedComparison, a: RaceSummary, b: RaceSummary,
                        alpha: float = 0.05) -> pd.DataFrame:
    """The paired table of a comparison report (paired_table, its Holm
    family): the metrics that mean the same in both runs, each with its
    fair-share distance (1/sides). A hand's first player's rows stand only
    in games of several hands (in games of one they repeat the game's), and
    distances and totals only on the same scale (unit, target, hands a
    game); otherwise the deficit as a share of the trip stands in for them
    and the final gap is left out."""
    La, Lb = a.layout, b.layout
    multi = La.multi_hand or Lb.multi_hand
    same_scale = (La.unit, La.target, La.multi_hand) == (Lb.unit, Lb.target, Lb.multi_hand)
    skip = {"hands", "first_hand_trip_share"} if not multi else set()
    skip |= {"winner_deficit_share"} if same_scale else set(SCALED_METRICS)
    shown = [m for m in comp.metrics if m not in skip]
    # a side's policies in its label where both runs seat the same ones there for the whole run
    held = side_policies(La)
    named = (La.seating == Lb.seating == "fixed" and len(set(La.policies)) > 1 and held == side_policies(Lb))
    labels = {s: La.side_label(s) + (f" playing {' + '.join(held[s])}" if named else "") for s in range(La.sides)}
    return paired_table(comp, metrics=shown, alpha=alpha, side_labels=labels, fair=1.0 / La.sides)


def setting_text(value) -> str:
    """A setting's value in the table of what differs: as design files and the command line write it
    (value_text: true, not True), "-" where it is not set."""
    return "-" if value is None else value_text(value)


def option_differences(meta_a: dict, meta_b: dict) -> list[tuple[str, str, str]]:
    """Rows (item, a, b) of the rule options that differ between two runs' metadata."""
    options_a, options_b = meta_a.get("options") or {}, meta_b.get("options") or {}
    return [(f"option {key}", setting_text(options_a.get(key)), setting_text(options_b.get(key)))
            for key in sorted(set(options_a) | set(options_b)) if options_a.get(key) != options_b.get(key)]


def card_rules(c: dict) -> list[str]:
    """A card's rules (a card of the run metadata, or a design's Card as a
    dict), in the words of `etappe decks show`."""
    rules = ["blocked by the limit"] if c.get("limited") else []
    rules += [f"at most {c['cap']}"] if c.get("cap") else []
    rules += [f"set needs {c['target']}"] if c.get("target") else []
    rules += [f"cleared by {c['remedy']}"] if c.get("remedy") else []
    rules += ["protects " + ", ".join(c["protects"])] if c.get("protects") else []
    rules += ["permanent go"] if c.get("acts_as_go") else []
    return rules + ([f"removes a laid {c['removes']}"] if c.get("removes") else [])


def design_differences(meta_a: dict, meta_b: dict) -> pd.DataFrame:
    """What differs between the two runs' designs as played (rows: item, a, b):
    the trip and its extension, the sides, the hand size, the rule options,
    the scoring table, and each card's count, role or value at this player
    count ("-": not in that design) with its rules (remedy, protection,
    limit, cap, set target). Runs written before their metadata held the
    card counts, rules, scoring and hand size show only what it held."""
    rows = []

    def differ(item, a, b):
        if a != b:
            rows.append((item, setting_text(a), setting_text(b)))

    differ("target (exact sum or set)", meta_a.get("target_kind"), meta_b.get("target_kind"))
    differ("trip", f"{meta_a.get('target')} {meta_a.get('unit', 'km')}", f"{meta_b.get('target')} {meta_b.get('unit', 'km')}")
    differ("extended trip (0: none)", meta_a.get("extension"), meta_b.get("extension"))
    for key in ("sides", "hand_size", "stock_exhausted", "start_under_limit"):
        differ(key.replace("_", " "), meta_a.get(key), meta_b.get(key))
    rows += option_differences(meta_a, meta_b)
    if "scoring" in meta_a and "scoring" in meta_b:  # runs written before the metadata held it: not known
        score_a, score_b = meta_a["scoring"] or {}, meta_b["scoring"] or {}
        differ("scoring table (hands to a game target)", bool(score_a), bool(score_b))
        for key in [k for k in score_a if k in score_b]:
            differ(f"scoring {key}", score_a[key], score_b[key])

    cards_a = {c["key"]: c for c in meta_a.get("cards") or []}
    cards_b = {c["key"]: c for c in meta_b.get("cards") or []}
    # a card's rules only where both runs' metadata hold them (older runs' do not)
    with_rules = all("remedy" in c for c in [*cards_a.values(), *cards_b.values()])

    def card(c, unit):  # "8 x hazard; cleared by roll", "4 x distance 200 km; blocked by the limit; at most 2"
        if c is None:
            return None
        what = f"{c['role']} {c['value']} {unit}" if c.get("role") == "distance" else c.get("role", "")
        text = f"{c['count']} x {what}" if "count" in c else what
        return "; ".join([text, *card_rules(c)]) if with_rules else text

    for key in list(cards_a) + [k for k in cards_b if k not in cards_a]:
        a, b = cards_a.get(key), cards_b.get(key)
        differ(f"card {(a or b).get('name', key)} ({key})", card(a, meta_a.get("unit", "km")),
               card(b, meta_b.get("unit", "km")))
    return pd.DataFrame(rows, columns=["item", "a", "b"])


def card_comparison(a: RaceSummary, b: RaceSummary) -> pd.DataFrame:
    """Unpaired comparison of card rates (played share, dead share) between two runs.

    Card keys present in both runs are compared card by card, with each
    run's share clustered by game (the cards of one game go together:
    stats.two_run_ratio_difference); attrs["only_a"] and attrs["only_b"]
    list the cards of one design only. When the decks share no keys, the
    cards are pooled by role (column "role" instead of "card"), each role's
    share clustered by game in the same way (the summaries keep each role's
    per-game sums), and only_a / only_b list the cards whose role the other
    design lacks.
    Differences A - B; the dead share is 1 - the played share (every card
    drawn is played, discarded or still held), so its interval is the
    mirror of the played share's. Holm's correction (p_holm, reject) runs
    over the cards (or roles): a dead-share row tests the same hypothesis as
    its played-share row, with the same p-value, and shares its result.
    """
    by_role = not (set(a.layout.cards) & set(b.layout.cards))
    if by_role:
        keys = [r for r in a.layout.roles if r in b.layout.roles]
        sa, sb = _role_sums(a, keys), _role_sums(b, keys)
    else:
        keys = [k for k in a.layout.cards if k in b.layout.cards]
        sa, sb = _card_sums(a, keys), _card_sums(b, keys)
    table = pd.DataFrame()
    if keys:
        diff = two_run_ratio_difference(sa, sb)
        played_a, played_b = rate(sa[1], sa[2]), rate(sb[1], sb[2])
        key_column = "role" if by_role else "card"
        method = "unpaired, clustered by game" + (", pooled by role" if by_role else "")
        rows = []
        for what, sign in (("played share", 1.0), ("dead share", -1.0)):
            share_a, share_b = (played_a, played_b) if sign > 0 else (1 - played_a, 1 - played_b)
            low, high = (diff["ci_low"], diff["ci_high"]) if sign > 0 else (-diff["ci_high"], -diff["ci_low"])
            rows.append(pd.DataFrame({
                key_column: keys, "rate": what, "a": share_a, "n_a": sa[2], "b": share_b, "n_b": sb[2],
                "diff": sign * diff["diff"] + 0.0, "ci_low": low, "ci_high": high, "p_value": diff["p_value"],
                "method": method,
            }))
        table = pd.concat(rows, ignore_index=True)
        # rows: every key's played share, then the same keys' dead share (its complement,
        # the same test); counting both in Holm's m would double every multiplier
        played = (table["rate"] == "played share").to_numpy()
        adjusted, reject = holm(table.loc[played, "p_value"].to_numpy())
        table["p_holm"], table["reject"] = np.tile(adjusted, 2), np.tile(reject, 2)
    # a card the other design has no match for: by key, or (pooled) by role, as Mille Bornes' safeties
    own_a, own_b = (a.layout.card_roles, b.layout.card_roles) if by_role else (a.layout.cards, b.layout.cards)
    table.attrs["only_a"] = [k for k, own in zip(a.layout.cards, own_a) if own not in own_b]
    table.attrs["only_b"] = [k for k, own in zip(b.layout.cards, own_b) if own not in own_a]
    return table


def _card_sums(s: RaceSummary, keys: list[str]) -> tuple:
    """(games, played, drawn and their per-game moments) of the cards `keys`, as ratio_interval takes them."""
    idx = [s.layout.cards.index(k) for k in keys]
    c = s.c
    return (s.games, c["card_played"][idx], c["card_drawn"][idx], c["card_played_sq"][idx], c["card_drawn_sq"][idx],
            c["card_played_drawn"][idx])


def _role_sums(s: RaceSummary, roles: list[str]) -> tuple:
    """_card_sums of the roles `roles`, each role's cards summed game by game."""
    idx = [s.layout.roles.index(r) for r in roles]
    c = s.c
    return (s.games, c["role_played"][idx], c["role_drawn"][idx], c["role_played_sq"][idx], c["role_drawn_sq"][idx],
            c["role_played_drawn"][idx])


def seat_bias_strength(s: RaceSummary) -> float:
    """Largest distance of a turn-order position's win rate from the fair share 1/sides
    (NaN where no game had a winner)."""
    pos = outcomes_by_position(s)
    gaps = np.abs(pos["rate"] - pos["fair_share"]).to_numpy(float) if len(pos) else np.zeros(0)
    return float(np.nanmax(gaps)) if np.isfinite(gaps).any() else float("nan")


def _no_winner_text(s: RaceSummary, name: str) -> str:
    capped, ties = int(s.c["capped_games"]), int(s.c["tie_games"])
    how = ", ".join(part for part in (f"{capped} hit the turn or hand cap" if capped else "",
                                      f"{ties} ended in a tie or with every side disqualified" if ties else "") if part)
    return f"no game of {name} had a winner ({how})" if how else f"no game of {name} had a winner"


def lacks(key: str, s: RaceSummary, name: str, multi_hand: bool | None = None) -> str:
    """What run `s` (called `name`) lacks to measure headline metric `key`
    ("" if nothing: it has games to pair). `multi_hand`: whether the
    comparison asks the first-player question within the hand (default: s's)."""
    games = int(s.c["games"])
    multi = s.layout.multi_hand if multi_hand is None else multi_hand
    if key in ("first_hand_gap", "first_player_gap"):
        if int(s.c["no_winner"]) == games:
            return _no_winner_text(s, name)
        if multi and int(s.c.get("trip_completed", 0)) == 0:
            return f"no hand of {name} completed the trip"
    elif key == "hazard_decided":
        if not s.layout.hazard_mask.any():
            return f"{name} has no hazards, limits or setbacks"
        if int(s.c["no_winner"]) == games:
            return _no_winner_text(s, name)
        if int(s.c.get("hazard_games", 0)) == 0:
            return f"no game of {name} with a winner lost a turn to hazards"
    return ""


def not_measured(key: str, a: RaceSummary, b: RaceSummary, name_a: str, name_b: str) -> str:
    """Why a headline metric has no pair of games to compare: what each run lacks."""
    multi = a.layout.multi_hand or b.layout.multi_hand
    reasons = [r for r in (lacks(key, a, name_a, multi), lacks(key, b, name_b, multi)) if r]
    return "not measured in both runs" + (f": {'; '.join(reasons)}" if reasons else "")


def shielded_text(a: RaceSummary, b: RaceSummary, name_a: str, name_b: str) -> str:
    """For the decisive-hazards answer, of each design that has safety cards: of its games that
    hazard_decided counts and that have one side least hit, in how many that side had played a safety,
    against the share of the other sides that had, in the same games ("" where neither design has one).
    A safety spares its side the hazards it names, so where the side least hit holds one more often than
    the others, the winner least hit may have won by holding it."""
    parts = []
    for s, name in ((a, name_a), (b, name_b)):
        games = int(s.c["least_hit_games"])
        if s.layout.safety_mask.any() and games:
            k = int(s.c["least_hit_safety"])
            others = int(s.c["others_with_safety"]) / (games * (s.layout.sides - 1))
            parts.append(f"in {name}, of its {counted(games, 'game')} with a winner, some turn lost to hazards and "
                         f"one side least hit, that side had played one in {k} ({100 * k / games:.1f} %), the other "
                         f"sides in {100 * others:.1f} %")
    return "; a safety spares its side the hazards it names: " + "; ".join(parts) if parts else ""


def left_out_text(La, Lb, name_a: str, name_b: str) -> str:
    """The cards of one design only, by name: "those only in B (Extra Tank, Right of Way)"."""
    return " and ".join(f"those only in {name} ({', '.join(n for k, n in zip(L.cards, L.card_names) if k not in other.cards)})"
                        for L, other, name in ((La, Lb, name_a), (Lb, La, name_b)) if set(L.cards) - set(other.cards))


# question, the paired_table rows that answer it in order of preference (the first one shown)
HEADLINE = (
    ("the stronger first-player bias", ("first_hand_gap", "first_player_gap")),
    ("longer games", ("game_turns",)),
    ("more decisive hazards", ("hazard_decided",)),
    ("deader cards", ("dead_share",)),
)


def headline(a: RaceSummary, b: RaceSummary, paired: pd.DataFrame, name_a: str = "A", name_b: str = "B") -> pd.DataFrame:
    """The first-screen answers: which design has more of each, and how sure.

    Columns question, answer (name_a / name_b / "no clear difference ..." /
    "n/a") and evidence (both values, the paired difference with its
    interval and the Holm-adjusted p-value from `paired`, the table shown;
    make it with `fair=1/sides` for the seat-bias row).
    * the stronger first-player bias: where `paired` holds the row
      "first_hand_gap" (the compare report shows it when a design plays
      several hands), the distance from the fair share of the side that
      plays first in a hand, |its share of the completed trips - 1/sides|
      (per game, games with a completed trip): the first player moves
      round each hand, and the game's first player would dilute that edge;
      the answer says "within a hand" and gives the game's first player's
      answer beside it ("A within a hand; no clear difference over whole
      games"), and so does the evidence. Otherwise (games of
      one hand) the first player's distance from the fair share,
      |P(first player wins) - 1/sides| (games with a winner). The evidence
      also gives the largest gap of any turn-order position in winning the
      game, the measure of the report's seat-bias section, which may lean
      the other way;
    * longer games: mean turns per game;
    * more decisive hazards: share of games (with a winner and some turns
      lost to hazards) won by the side that lost the fewest turns to hazards;
      for each design with safety cards the evidence adds, of its own such
      games with one side least hit, in how many that side had played a
      safety, against the share of the other sides that had (a safety
      spares its side the hazards it names: where the side least hit holds
      one more often, the share measures the safety as well);
    * deader cards: share of drawn cards discarded or left in hand; where
      the designs' card keys differ, the evidence adds the paired row
      dead_share_shared (the cards both hold) and names the cards left out,
      or says that the designs hold no card in common.
    An answer names a design only when the Holm-corrected paired difference
    rejects; otherwise it says which way the estimate leans where the test
    of that metric alone rejects.
    """
    rows = []
    p = paired.set_index("key")
    def evidence(r) -> str:
        # as the variant report words them (reports/variant_report.py): a metric equal in every game, or
        # one pair of games, has no interval and no test
        numbers = f"{name_a} {r['mean_a']:.4g} vs {name_b} {r['mean_b']:.4g}"
        n = int(r["n"])
        if r["diff"] == 0 and (r["sd"] == 0 or n == 1):
            # a rate of 0 or 1 a game keeps an interval (paired_table): so few games leave room for a difference
            room = (f" (95 % interval of this metric alone [{r['ci_low']:.4g}, {r['ci_high']:.4g}])"
                    if r["ci_low"] < r["ci_high"] else "")
            return f"{numbers}, equal in " + ("the one paired game" if n == 1 else
                                               f"every one of the {n} paired games{room}")
        if n == 1 and pd.isna(r["diff"]):  # a distance from the fair share needs two pairs
            return "not measured from one paired game: play more games"
        if n == 1:
            return f"{numbers}; one paired game only, so no interval and no test: play more games"
        spread = (f"in every one of the {n} paired games" if r["sd"] == 0  # the sign test; no interval
                  else f"(95 % interval of this metric alone [{r['ci_low']:.4g}, {r['ci_high']:.4g}])")
        return f"{numbers}; paired difference {r['diff']:+.4g} {spread}, Holm {p_text(r['p_holm'])}, n = {n}"

    def which(r) -> str:
        # the design with more where the Holm-corrected difference rejects; which way it leans where only
        # the test alone rejects
        larger = name_a if r["diff"] > 0 else name_b
        if bool(r["reject"]):
            return larger
        alone = alone_text(r["p_value"]) if r["diff"] != 0 and np.isfinite(r["diff"]) else ""
        return f"no clear difference (leaning {larger}: {alone})" if alone else "no clear difference"

    def bias(s: RaceSummary) -> str:
        gap = seat_bias_strength(s)
        return f"{gap:.3g}" if np.isfinite(gap) else "none (no game with a winner)"

    # the first player's values say their games: the paired ones (a winner in both designs) are not each
    # design's own, which the seat-bias parenthesis counts
    won_both = (f"over the {counted(int(p.loc['first_player_gap', 'n']), 'game')} with a winner in both"
                if "first_player_gap" in p.index else "")
    for question, keys in HEADLINE:
        q = f"Which has {question}?"
        key = next((k for k in keys if k in p.index), None)
        if key is None:
            rows.append({"question": q, "answer": "n/a", "evidence": not_measured(keys[0], a, b, name_a, name_b)})
            continue
        r = p.loc[key]
        ev = evidence(r)
        if key == "first_hand_gap":
            ev = (f"the hand's first player's distance from the fair share of completed trips, over the "
                  f"{counted(int(r['n']), 'game')} with a completed trip in both: {ev}")
            if "first_player_gap" in p.index:
                ev += (f"; the game's first player's distance from the fair share of wins, {won_both}: "
                       f"{evidence(p.loc['first_player_gap'])}")
        if key == "first_player_gap":
            ev = f"first player's distance from the fair share, {won_both}: {ev}"
        elif key != "first_hand_gap":  # what the numbers measure, as the paired table names it
            ev = f"{r['metric']}: {ev}"
        if key == "hazard_decided":
            if a.layout.sides == b.layout.sides:
                # where hazards did not matter, the winner would be the one side least hit 1/sides of the time at most
                ev += f" (were hazards no matter, at most 1/{a.layout.sides}: less where sides tie for least hit)"
            ev += shielded_text(a, b, name_a, name_b)
        if key == "dead_share" and set(a.layout.cards) != set(b.layout.cards):
            # a card of one design only (as a safety, nearly always played) moves that design's share alone
            if "dead_share_shared" in p.index:
                ev += (f"; the cards both designs hold (by key), without {left_out_text(a.layout, b.layout, name_a, name_b)}"
                       f": {evidence(p.loc['dead_share_shared'])}")
            elif not set(a.layout.cards) & set(b.layout.cards):
                ev += ("; the designs hold no card in common (by key), so the shares are of different cards"
                       + (" (the Card balance section compares them role by role)"
                          if set(a.layout.roles) & set(b.layout.roles) else ""))
        if key in ("first_hand_gap", "first_player_gap"):
            own = [x.games - int(x.c["no_winner"]) for x in (a, b)]
            ev += (f"; (the largest gap of any turn-order position in winning the game, over each design's own games "
                   f"with a winner, {own[0]} and {own[1]}: {name_a} {bias(a)} vs {name_b} {bias(b)})")
        answer = which(r)
        if key == "first_hand_gap":
            # the side playing first in a hand moves round, so an edge within the hand may be gone over a
            # game: the answer says which of the two it is about, and the other, which may differ
            game = which(p.loc["first_player_gap"]) if "first_player_gap" in p.index else "not measured"
            answer = f"{answer} within a hand; {game} over whole games"
        rows.append({"question": q, "answer": answer, "evidence": ev})
    return pd.DataFrame(rows)

