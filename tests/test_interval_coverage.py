"""Coverage of the reports' 95 % intervals, by simulation from synthetic data of known truth.

Each test draws `reps` data sets from a model whose true value is known
(by construction, or computed exactly), builds the interval the report would
print, and counts how often it holds the truth. With reps repetitions the
coverage's binomial standard error is se = sqrt(.95 * .05 / reps) (1500:
.0056), so an interval that truly covers 95 % lands within 95 % +- 3 se
(about +- 1.7 points) but for a chance of .003; where an interval is
conservative by design, the upper end of the band is 98.5 % instead.
The statistics functions broadcast, so every repetition is one row of one call.

Regimes marked xfail(strict) are known to undercover (docs/statistics.md,
"Known limits"): each docstring gives the mechanism and a fix to consider;
strict, so a fix that cures one shows up.
tests/test_stats.py::test_clustered_intervals_cover_95_percent covers the
clustered share over 300 games of 1-10 cards (Beta(2, 2)) and the win lift of
two-side games with marks at .7; these are other regimes.
"""
import math
import types

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from etappe.analysis.compare import gap_difference
from etappe.analysis.stats import (
    Z95,
    curves_from_sums,
    grouped_wilson,
    mean_interval,
    paired_difference,
    paired_proportion_difference,
    ratio_difference_interval,
    ratio_interval,
    skill_table_from_moments,
    two_run_ratio_difference,
    wilson_interval,
)
from etappe.analysis.tournament import _profile_interval, _with_virtual_draws, fit_bradley_terry, pair_table

CONSERVATIVE = 0.985  # above this an interval is "very conservative"


def _se(reps):
    return math.sqrt(0.95 * 0.05 / reps)


def _coverage(low, high, truth):
    """Share of the defined intervals (no NaN) that hold truth."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    ok = ~(np.isnan(low) | np.isnan(high))
    return float(((low <= truth) & (truth <= high))[ok].mean())


def _assert_95(cov, reps, high=None):
    se = _se(reps)
    top = 0.95 + 3 * se if high is None else high
    assert 0.95 - 3 * se <= cov <= top, f"coverage {cov:.4f} outside [{0.95 - 3 * se:.4f}, {top:.4f}] ({reps} reps)"


def _clusters(rng, reps, games, mean, icc, sizes):
    """reps x games clusters of `sizes` units, each unit a success with the
    cluster's own p ~ Beta with the given mean and intra-cluster correlation
    icc = 1 / (a + b + 1); the true share is `mean` (sizes independent of p).
    Returns the per-replicate sums ratio_interval takes."""
    ab = 1 / icc - 1
    x = rng.binomial(sizes, rng.beta(mean * ab, (1 - mean) * ab, sizes.shape))
    y = sizes
    return games, x.sum(1), y.sum(1), (x * x).sum(1), (y * y).sum(1), (x * y).sum(1)


# ------------------------------------------------------------------ Wilson
def test_wilson_exact_coverage_averages_95_percent():
    """Exact coverage (binomial pmf, no simulation) over a grid of p: Wilson's
    averages 95 % for n = 10 .. 1000 (95.4, 95.3, 95.1, 95.0); its known dips
    (to about 84-92 %) sit where about 0.07 to 1 success is expected (n p, or
    n (1 - p), up to 1: k = 1 already puts the lower end above p), so they
    are not asserted (docs/statistics.md, Known limits)."""
    ps = np.linspace(0.02, 0.98, 97)
    for n in (10, 30, 100, 1000):
        k = np.arange(n + 1)
        low, high = wilson_interval(k, n)
        pmf = st.binom.pmf(k[None, :], n, ps[:, None])
        cov = (pmf * ((low <= ps[:, None]) & (ps[:, None] <= high))).sum(1)
        assert 0.945 <= cov.mean() <= 0.96, n
        assert cov.min() >= 0.90, n  # away from the edges: worst about .92 (n = 10, 30, 100)


# ------------------------------------------------------------------ grouped Wilson
@pytest.mark.parametrize("holds, conservative", [((2,), False), ((1, 2, 3), True)])
def test_grouped_wilson_covers_a_policy_on_several_sides(holds, conservative):
    """A policy holds k of a game's 4 sides (k = 2, or 1, 2 or 3 by game) and
    wins on at most one: each side wins with q = .2, so its game with k q.
    The true rate per side-game is q. With k varying, Wilson over the games is
    conservative (the games' wins are Bernoulli of unequal p: less spread
    than a binomial), about 97 %."""
    rng = np.random.default_rng(21)
    reps, games, q = 1500, 150, 0.2
    k = rng.choice(holds, size=(reps, games))
    wins = (rng.random((reps, games)) < k * q).sum(1)
    low, high = grouped_wilson(wins, k.sum(1), games)
    _assert_95(_coverage(low, high, q), reps, CONSERVATIVE if conservative else None)


# ------------------------------------------------------------------ clustered share
@pytest.mark.parametrize("games, mean, icc, sizes, high", [
    (10, 0.5, 0.2, "four", CONSERVATIVE),   # few clusters: Korn-Graubard's t factor makes it about 96.7 %
    (30, 0.1, 0.05, "1-10", None),         # rate near 0, unequal sizes: about 95.5 %
    (30, 0.02, 0.2, "four", CONSERVATIVE),  # R = 0 in some 17 %: the Kish fallback, about 96 %
    (300, 0.98, 0.2, "1-10", None),        # near 1, many clusters: about 94 %
])
def test_clustered_share_covers_in_other_regimes(games, mean, icc, sizes, high):
    rng = np.random.default_rng(22)
    reps = 1500
    y = np.full((reps, games), 4) if sizes == "four" else rng.integers(1, 11, (reps, games))
    _, low, up = ratio_interval(*_clusters(rng, reps, games, mean, icc, y))
    _assert_95(_coverage(low, up, mean), reps, high)


@pytest.mark.xfail(strict=True, reason="rare share clustered in few games: about 85-92 % (see docstring)")
@pytest.mark.parametrize("games, mean, sizes", [(300, 0.005, "geometric"), (1000, 0.002, "1-10")])
def test_clustered_share_rare_and_bursty_undercovers(games, mean, sizes):
    """A rare share that comes in bursts (icc .3: most games have none, a few
    many): true .005 over 300 games of skewed sizes (geometric, mean 12.5),
    coverage about 84-87 % (Wilson over the units: 53 %), and true .002 over
    1000 games of 1-10 cards, about 90-92 % (about 6 games hold a success;
    3000 games, 18: 93-95 %; 10,000 games, 60: 96 %). Only the few games
    with any success (some 15 in the first case, 6 in the second) inform the
    variance, not all n clusters, so it is often too small; Korn-Graubard's
    t factor uses n - 1 degrees of freedom. What governs it is the number of
    games that carry the rare outcome, not the number of games.
    A fix to consider: take the degrees of freedom from the effective number
    of clusters that carry the rarer outcome, min(n, sx^2 / sxx,
    (sy - sx)^2 / sum (y - x)^2) (computable from the sums kept). Measured
    (1500 runs each): 98.5 % and 98.9 % here, and the other regimes above
    95.6-99.3 % (30 games of a .02 share: 99.3 %), small runs of rare shares
    99.6 %: conservative instead of short. It changes every clustered interval
    the reports print, so the report recomputations change with it.
    Milder forms measured too (1500 runs each): t with as many degrees of
    freedom as effective clusters (not one fewer) gives 96.5 % and 99.1 % here,
    and twice as many 91 % and 98.5 %; both double the interval where a small
    run holds a rare share (10 games of 1-10 cards, true .05: median upper end
    .26 now, .56 and .45), whose coverage is 97 % already."""
    rng = np.random.default_rng(23)
    reps = 1500
    y = (np.minimum(rng.geometric(0.08, (reps, games)), 200) if sizes == "geometric"
         else rng.integers(1, 11, (reps, games)))
    _, low, high = ratio_interval(*_clusters(rng, reps, games, mean, 0.3, y))
    _assert_95(_coverage(low, high, mean), reps)


@pytest.mark.xfail(strict=True, reason="few clusters whose residuals hinge on a rare event: about 84 % (see docstring)")
def test_victim_win_rate_with_few_games_undercovers():
    """The victim's win rate (units: the sides of a game hit at least once;
    x: 1 if the hit side won): 10 games of 6 sides, each hit with .9, the
    winner uniform, so the truth is 1/6. In 35 % of the runs the winner was
    hit in every game; then every residual x_g - R y_g is nearly 0, the
    variance tiny (n_eff in the thousands for 55 units), and the interval of
    R = 10 / 55, [.167, .195], misses 1/6: coverage about 84 %
    (30 games: 92 %, 300: 95 %). Capping n_eff at the units (Korn and
    Graubard's deff >= 1) restores it but makes the truly negatively
    correlated shares (one winner per game) 99.5 %; no cheap fix: the
    report could say that the share needs some 30 games."""
    rng = np.random.default_rng(24)
    reps, games, sides = 1500, 10, 6
    hit = rng.random((reps, games, sides)) < 0.9
    won = np.arange(sides) == rng.integers(0, sides, (reps, games))[..., None]
    y, x = hit.sum(2), (hit & won).sum(2)
    _, low, high = ratio_interval(games, x.sum(1), y.sum(1), (x * x).sum(1), (y * y).sum(1), (x * y).sum(1))
    _assert_95(_coverage(low, high, 1 / sides), reps)


# ------------------------------------------------------------------ win lift
def _lift_truth(sides, mark, beta):
    """Exact win when played - win when not: each side marked with `mark`, the
    winner drawn with weight e^beta for a marked side, 1 for the others."""
    e, won_marked, won_not = math.exp(beta), 0.0, 0.0
    for j in range(sides + 1):
        pj = math.comb(sides, j) * mark**j * (1 - mark) ** (sides - j)
        p = j * e / (j * e + sides - j)
        won_marked, won_not = won_marked + pj * p, won_not + pj * (1 - p)
    return won_marked / (sides * mark) - won_not / (sides * (1 - mark))


@pytest.mark.parametrize("sides, mark, games", [(4, 0.05, 30), (6, 0.5, 30), (4, 0.95, 300)])
def test_win_lift_covers_with_several_sides(sides, mark, games):
    """ratio_difference_interval over games of 4 or 6 sides (one winner: the
    sides of a game are negatively correlated), a card played by a side with
    probability .05 (rare), .5 or .95, and a true lift (beta = .7: .149, .095,
    .110). About 95-96 %."""
    rng = np.random.default_rng(25)
    reps, beta = 1500, 0.7
    marked = rng.random((reps, games, sides)) < mark
    w = np.exp(beta * marked)
    cum = np.cumsum(w / w.sum(2, keepdims=True), 2)
    winner = (rng.random((reps, games, 1)) > cum).sum(2)
    won_marked = np.take_along_axis(marked, winner[..., None], 2)[..., 0].astype(int)
    units = marked.sum(2)
    v = np.stack([won_marked, units, 1 - won_marked, sides - units], -1).astype(float)
    s = v.sum(1)
    out = ratio_difference_interval(games, s[:, 0], s[:, 1], s[:, 2], s[:, 3], np.einsum("rgi,rgj->rij", v, v))
    _assert_95(_coverage(out["ci_low"], out["ci_high"], _lift_truth(sides, mark, beta)), reps, CONSERVATIVE)


# ------------------------------------------------------------------ tournament pairings
@pytest.mark.parametrize("n, wins, no_winner", [(10, 0.3, 0.4), (30, 0.2, 0.6), (100, 0.05, 0.9), (100, 0.45, 0.1),
                                                (30, 0.5, 0.0)])
def test_a_pairing_score_covers_with_games_without_a_winner(n, wins, no_winner):
    """Exact coverage (the trinomial pmf of wins, games without a winner and
    losses, no simulation) of a pairing's score interval, truth wins +
    no_winner / 2. Wilson over the games covered 99.4 % (10 games, 40 %
    without a winner), 99.8 % (30, 60 %), 100 % (100, 90 %); the effective
    number of games brings them to 95.2, 95.7, 95.7 %; 100 games with 10 %
    covers 95 %; without such games it is Wilson's as before (95.7 % at 30)."""
    truth, hits = wins + no_winner / 2, 0.0
    for w in range(n + 1):
        d = np.arange(n - w + 1)
        pmf = st.multinomial.pmf(np.stack([np.full_like(d, w), d, n - w - d], 1), n, [wins, no_winner,
                                                                                    1 - wins - no_winner])
        pairs = pd.DataFrame({"policy_a": "a", "policy_b": "b", "games": n, "wins_a": w, "wins_b": n - w - d,
                              "no_winner": d})
        pairs = pairs[(pairs["wins_a"] + pairs["wins_b"]) > 0]  # a pairing without a winner has no score
        t = pair_table(pairs)
        inside = ((t["ci_low"] <= truth) & (truth <= t["ci_high"])).to_numpy()
        hits += (pmf[(w + n - w - d) > 0] * inside).sum()
    assert 0.935 <= hits <= 0.975, hits


# ------------------------------------------------------------------ two runs
@pytest.mark.parametrize("games, shares", [((10, 10), (0.5, 0.4)), ((30, 30), (0.05, 0.02)), ((10, 300), (0.5, 0.5))])
def test_two_run_share_difference_covers(games, shares):
    """Two independent runs of 1-10 cards a game, played share clustered by
    game (icc .2): the Newcombe (MOVER, rho = 0) interval of the difference.
    About 94.5-96 %."""
    rng = np.random.default_rng(26)
    reps = 1500
    runs = [_clusters(rng, reps, g, m, 0.2, rng.integers(1, 11, (reps, g))) for g, m in zip(games, shares)]
    out = two_run_ratio_difference(*runs)
    _assert_95(_coverage(out["ci_low"], out["ci_high"], shares[0] - shares[1]), reps, CONSERVATIVE)


def test_two_run_p_holds_its_level_when_a_share_is_0():
    """The same card, share .02 in both runs (icc .2), runs of 10 and 300
    games: in about half of the runs the short run's share is 0. Its own
    variance is then 0, and a Welch p from it rejected about 48 % of these
    true nulls (the card table's Holm then flagged such cards); the
    interval's p (Kish's size where a share is 0) rejects at most 5 %."""
    rng = np.random.default_rng(27)
    reps = 1500
    runs = [_clusters(rng, reps, g, 0.02, 0.2, rng.integers(1, 11, (reps, g))) for g in (10, 300)]
    p = two_run_ratio_difference(*runs)["p_value"]
    p = p[~np.isnan(p)]
    assert (p < 0.05).mean() <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / p.size)


# ------------------------------------------------------------------ paired t
def _crn_pairs(rng, reps, n, pa, pb, keep):
    """Binary results of the same games under designs A and B on common
    random numbers: a = [u < pa], b = [u' < pb], u' = u with probability keep.
    Returns d = a - b; the true mean difference is pa - pb."""
    u = rng.random((reps, n))
    u2 = np.where(rng.random((reps, n)) < keep, u, rng.random((reps, n)))
    return (u < pa).astype(float) - (u2 < pb).astype(float)


def _clipped_paired(d):
    out = paired_difference(d.shape[1], d.sum(1), (d * d).sum(1))
    return np.maximum(out["ci_low"], -1.0), np.minimum(out["ci_high"], 1.0)  # as compare.paired_table for rates


def test_paired_difference_covers_with_many_games():
    """Normal differences of 5 games (exact t: about 95 %), and binary rates on
    common random numbers over 200 games (.5 vs .45, 90 % of games alike;
    clipped to [-1, 1] as a rate is: clipping never drops the truth)."""
    rng = np.random.default_rng(28)
    reps = 1500
    d = rng.normal(0.3, 1.0, (reps, 5))
    out = paired_difference(5, d.sum(1), (d * d).sum(1))
    _assert_95(_coverage(out["ci_low"], out["ci_high"], 0.3), reps)
    _assert_95(_coverage(*_clipped_paired(_crn_pairs(rng, reps, 200, 0.5, 0.45, 0.9)), 0.05), reps)


def test_a_paired_difference_that_few_games_have_covers():
    """An option that adds Geometric(0.3) turns (mean 10/3) to 5 % of 100
    games and leaves the rest alike, as common random numbers do: truth
    1/6 turn a game. Student's t on n - 1 degrees of freedom covered about
    84 % (the spread rests on the five or so games that differ); on the
    games that differ, less one, about 96 %. A normal difference, in which
    every game differs, is as before (about 95 %)."""
    rng = np.random.default_rng(34)
    reps, n = 2000, 100
    d = rng.geometric(0.3, (reps, n)) * (rng.random((reps, n)) < 0.05)
    out = paired_difference(n, d.sum(1), (d * d).sum(1), differ=(d != 0).sum(1))
    _assert_95(_coverage(out["ci_low"], out["ci_high"], 0.05 / 0.3), reps, high=0.98)
    d = rng.normal(0.3, 1.0, (reps, 5))
    out = paired_difference(5, d.sum(1), (d * d).sum(1), differ=np.full(reps, 5))
    _assert_95(_coverage(out["ci_low"], out["ci_high"], 0.3), reps)


def test_paired_rate_difference_with_few_discordant_games_covers():
    """A rate (first player won) on common random numbers, .25 vs .2 with 95 %
    of games alike, 30 games; and .02 vs .01 over 200 games. The t interval of
    the paired differences covered about 83 % and 87 % here (10 games: 49 %):
    in 13 % of the runs every d is 0 and it is the point [0, 0], and with one
    or two discordant games a t interval of a three-point d is far too short.
    compare.paired_table gives a rate of 0 or 1 a game Tango's score interval
    of its discordant games (stats.paired_proportion_difference), which is
    conservative with so few of them but never that short."""
    rng = np.random.default_rng(29)
    reps = 1500
    for n, pa, pb, keep in ((30, 0.25, 0.2, 0.95), (200, 0.02, 0.01, 0.5)):
        d = _crn_pairs(rng, reps, n, pa, pb, keep)
        out = paired_proportion_difference(n, (d == 1).sum(1), (d == -1).sum(1))
        _assert_95(_coverage(out["ci_low"], out["ci_high"], pa - pb), reps, high=1.0)


def _gap_rows(rng, reps, n, pa, pb, alike):
    """gap_difference of `reps` runs of n paired 0/1 games, A's won with
    probability pa, B's with pb, a share `alike` of the games drawn alike."""
    u = rng.random((reps, n))
    u2 = np.where(rng.random((reps, n)) < alike, u, rng.random((reps, n)))
    a, b = (u < pa).astype(float), (u2 < pb).astype(float)
    rows = []
    for i in range(reps):
        d = a[i] - b[i]
        sums = {k: np.array([v]) for k, v in (("n", n), ("sum_a", a[i].sum()), ("sum_b", b[i].sum()),
                                             ("sum_a2", a[i].sum()), ("sum_b2", b[i].sum()), ("sum_d2", (d * d).sum()))}
        rows.append(gap_difference(types.SimpleNamespace(metrics=["rate"], sums=sums), "rate", 0.5))
    return pd.DataFrame(rows)


def test_fair_share_gap_covers():
    """compare.gap_difference: |mean_A - 1/2| - |mean_B - 1/2| over 200 games, A at
    .55, B at .5 (truth .05), half the games alike. About 96 %. (At the fair
    share itself, .5 vs .5, it is about 100 %: the estimated distances are
    biased up; with 30 games and 90 % alike, sparse d: about 87 %.)"""
    rows = _gap_rows(np.random.default_rng(30), 1000, 200, 0.55, 0.5, 0.5)
    _assert_95(_coverage(rows["ci_low"].clip(-1), rows["ci_high"].clip(upper=1), 0.05), len(rows), high=0.99)


def test_a_design_at_the_fair_share_is_not_named_the_more_biased():
    """B at the fair share, A just off it (.52 vs .5, truth +.02), 1000 games,
    90 % alike: B's estimated sign is a coin toss, and taken as known it gave
    a tight interval of the wrong contrast, which covered about 89 % and put
    B, the fair design, ahead (an interval wholly below 0) in some 5 % of
    runs. With either sign allowed where B's own interval reaches the fair
    share, coverage is about 98 %, and B is almost never named."""
    rows = _gap_rows(np.random.default_rng(33), 600, 1000, 0.52, 0.5, 0.9)
    _assert_95(_coverage(rows["ci_low"], rows["ci_high"], 0.02), len(rows), high=1.0)
    assert (rows["ci_high"] < 0).mean() <= 0.01
    assert ((rows["p_value"] < 0.05) & (rows["mean"] < 0)).mean() <= 0.01


# ------------------------------------------------------------------ means and curves
def test_mean_interval_covers():
    """Normal, 10 values: about 95 %; turns (geometric, mean 20) over 200 hands:
    about 94.5 %. (Strongly skewed values over few units undercover, as any t
    interval: exponential 5 values 89 %, lognormal(0, 1) 30 values 88 %.)"""
    rng = np.random.default_rng(31)
    reps = 1500
    for values, mu in ((rng.normal(2.0, 1.0, (reps, 10)), 2.0), (rng.geometric(0.05, (reps, 200)).astype(float), 20.0)):
        n = values.shape[1]
        out = mean_interval(n, values.sum(1), (values * values).sum(1))
        _assert_95(_coverage(out["ci_low"], out["ci_high"], mu), reps)


def test_curves_clustered_by_game_cover():
    """curves_from_sums with clusters: a policy holds 1-3 seats of each of 30
    games; a seat's value is 3 + the game's effect (sd 1, shared by its seats)
    + its own (sd .5). About 95 % (the rows taken as independent: 83 %)."""
    rng = np.random.default_rng(32)
    reps, games, mu = 1500, 30, 3.0
    k = rng.integers(1, 4, (reps, games))
    seat = np.arange(3) < k[..., None]
    y = (mu + rng.normal(0, 1, (reps, games, 1)) + rng.normal(0, 0.5, (reps, games, 3))) * seat
    t = y.sum(2)
    n, s = k.sum(1), t.sum(1)
    clusters = {"g": np.full(reps, games), "t": s, "k": n, "tt": (t * t).sum(1), "kk": (k * k).sum(1),
                "kt": (k * t).sum(1)}
    out = curves_from_sums(pd.DataFrame({"group": np.zeros(reps), "x": np.arange(reps)}), n, s, (y * y).sum((1, 2)),
                           clusters)
    _assert_95(_coverage(out["ci_low"], out["ci_high"], mu), reps)


# ------------------------------------------------------------------ skill matrix
def test_skill_score_clustered_by_game_covers():
    """Games of 4 single-seat sides; A holds 1-3 seats, B the rest. A seat's
    finish is delta (.5, A only) + the game's luck for A (sd 1, shared by A's
    seats, so A's pairs go together) + its own N(0, 1); the true score (any A-B
    pair ahead) is Phi(delta / sqrt(2 + 1)) = .6136. 30 games: about 96 %."""
    rng = np.random.default_rng(33)
    reps, games, delta = 1500, 30, 0.5
    truth = st.norm.cdf(delta / math.sqrt(3))
    hits = 0
    for _ in range(reps):
        is_a = np.arange(4) < rng.integers(1, 4, games)[:, None]
        key = (delta + rng.normal(0, 1, (games, 1))) * is_a + rng.normal(0, 1, (games, 4))
        pairs = is_a[:, :, None] & ~is_a[:, None, :]
        h = (2 * (key[:, :, None] > key[:, None, :]) * pairs).sum((1, 2))
        p = pairs.sum((1, 2))
        m = np.zeros((2, 2, 8))
        m[0, 1, 3:] = h.sum(), p.sum(), (h * h).sum(), (p * p).sum(), (h * p).sum()
        m[0, 1, 0] = m[0, 1, 3] / 2
        row = skill_table_from_moments(["A", "B"], m, games).iloc[0]
        hits += row.ci_low <= truth <= row.ci_high
    _assert_95(hits / reps, reps, CONSERVATIVE)


# ------------------------------------------------------------------ Bradley-Terry
def _bt_interval(wins, games):
    """The theta_A interval bradley_terry gives for a two-policy pool: Fisher's,
    or the profile one when a sweep needs the virtual draws."""
    W = np.array([[0.0, wins], [games - wins, 0.0]])
    N = np.array([[0.0, games], [games, 0.0]])
    theta, cov, regularized = fit_bradley_terry(W, N)
    se = math.sqrt(max(cov[0, 0], 0.0))
    if regularized:
        Wp, Np = _with_virtual_draws(W, N)
        return _profile_interval(Wp, Np, theta, np.array([0.5, -0.5]), Z95, se)
    return theta[0] - Z95 * se, theta[0] + Z95 * se


@pytest.mark.parametrize("games", [30, 100])
def test_bradley_terry_two_policies_exact_coverage(games):
    """Exact coverage (sum of the binomial pmf over the wins whose interval
    holds theta_A = logit(p) / 2): 94-97.5 % for p = .5, .7, .9 (and .97 at 100
    games). At p = .995 over 100 games it dips to 91 % (discreteness at a
    near-sweep, as Wilson's), not asserted."""
    intervals = np.array([_bt_interval(w, games) for w in range(games + 1)])
    for p in (0.5, 0.7, 0.9) + ((0.97,) if games == 100 else ()):
        truth = math.log(p / (1 - p)) / 2
        pmf = st.binom.pmf(np.arange(games + 1), games, p)
        cov = pmf[(intervals[:, 0] <= truth) & (truth <= intervals[:, 1])].sum()
        assert 0.93 <= cov <= CONSERVATIVE, (games, p, cov)
