"""Small, pure statistics used by the race reports.

Everything here works on counts and sums (sufficient statistics), so the same
functions serve one in-memory table and a million-game run aggregated in
chunks. Conventions:

* 95 % intervals by default (``Z95`` = 1.959964, the normal 97.5 % point);
  a function's z names the level by its normal point.
* Proportions: Wilson score interval (never the Wald interval, which collapses
  at 0 and 1).
* Means and paired differences (common random numbers): Student's t
  interval, mean +- t * sd / sqrt(n) with n - 1 degrees of freedom at the
  level z names, and the two-sided p-value of the same t test; over
  hundreds of games it is the normal interval to the third digit, and a
  short run is not made to look surer than it is. Paired differences that
  are all equal and not 0 get the exact sign test's p instead (the t test
  has no spread to go on).
* Shares whose units come in clusters (the cards or sides of one game):
  the ratio estimator's linearized variance, and Wilson's interval at the
  effective sample size it implies, with Korn and Graubard's correction
  for few clusters (ratio_interval); at a share of 0 or 1, where the
  clusters show nothing of how alike their units are, the units of a
  cluster are taken as wholly alike (_clustered_wilson); the difference of two
  such shares from the same clusters by the MOVER interval for correlated
  shares (ratio_difference_interval), and of one share measured in two
  independent runs by Newcombe's combination, tested by the level at which
  that interval reaches 0 (two_run_ratio_difference).
* Pearson's chi-square of uniform counts: its p is only approximate when
  a cell expects fewer than MIN_EXPECTED (5) counts (Cochran's rule), and a
  report says so (small_expected_note).
* Multiple comparisons: Holm's step-down adjustment.
* Quantiles of integer data come from an exact integer histogram: the
  q-quantile is the smallest value whose ECDF reaches q (the inverse ECDF,
  Hyndman-Fan type 1), so the median of 1, 2, 3, 4 is 2.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special as _sp  # not scipy.stats: its import alone takes 0.65 s of every command's start

Z95 = 1.959963984540054


def bonferroni_z(judged: int, alpha: float = 0.05) -> float:
    """The normal point of two-sided intervals for `judged` findings read
    together: Bonferroni's correction, each at the level 1 - alpha / judged,
    so that all of them hold at once with a chance of 1 - alpha at least
    (one finding: 1.96; ten: 2.81)."""
    return float(-_sp.ndtri(alpha / (2 * max(judged, 1))))


# ----------------------------------------------------------------- proportions
def wilson_interval(k, n, z: float = Z95):
    """Wilson score interval for k successes out of n; arrays broadcast.

    Returns (low, high); NaN where n == 0.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        z2 = z * z
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
        # exact ends at k = 0 and k = n (the formula leaves rounding dust there)
        low = np.where(n > 0, np.where(k <= 0, 0.0, np.clip(centre - half, 0.0, 1.0)), np.nan)
        high = np.where(n > 0, np.where(k >= n, 1.0, np.clip(centre + half, 0.0, 1.0)), np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def grouped_wilson(wins, units, trials, z: float = Z95):
    """Interval of the rate wins / units where the units come in `trials`
    independent groups that each hold at most one win (a policy's seats in
    one game: it wins on at most one of them): Wilson's of the wins among
    the trials, times trials / units. One unit a trial: plain Wilson.
    Returns (low, high); NaN where there is no trial."""
    low, high = wilson_interval(wins, trials, z)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_unit = np.asarray(trials, dtype=float) / np.asarray(units, dtype=float)
    return low * per_unit, high * per_unit


def rate(k, n):
    """k / n with NaN for n == 0 (arrays broadcast)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(n > 0, k / np.where(n > 0, n, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------- chi-square
# Cochran's rule: below 5 expected counts in a cell, the statistic is only roughly chi-square
MIN_EXPECTED = 5.0
SMALL_EXPECTED_NOTE = "expected counts below 5: the chi-square p is only approximate"


def small_expected_note(expected) -> str:
    """SMALL_EXPECTED_NOTE when some cell's expected count is below
    MIN_EXPECTED, else "" (expected: one count or an array of them)."""
    expected = np.asarray(expected, dtype=float)
    return SMALL_EXPECTED_NOTE if expected.size and expected.min() < MIN_EXPECTED else ""


def chi_square_caution(expected) -> str:
    """" (expected counts below 5: ...)" to follow a chi-square's p when it is only approximate, else ""."""
    note = small_expected_note(expected)
    return f" ({note})" if note else ""


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    df: int
    p_value: float
    n: int
    expected: float  # each cell's expected count under uniformity, n / cells (see small_expected_note)


def chisquare_uniform(counts) -> ChiSquare:
    """Pearson chi-square test that the counts come from a uniform distribution.

    Statistic sum((o - e)^2 / e) with e = total / k, df = k - 1.
    """
    counts = np.asarray(counts, dtype=float)
    k = counts.size
    total = counts.sum()
    expected = total / k if k else float("nan")
    if k < 2 or total <= 0:
        return ChiSquare(float("nan"), max(k - 1, 0), float("nan"), round(total), expected)
    stat = float(((counts - expected) ** 2 / expected).sum())
    return ChiSquare(stat, k - 1, float(_sp.chdtrc(k - 1, stat)), round(total), expected)  # round: shares of 1/k add up to whole races only nearly


# ------------------------------------------------------------ means and pairs
def t_point(n, z: float = Z95):
    """Student's t point with n - 1 degrees of freedom for the two-sided
    level whose normal point is z (1.959964: 95 %); NaN for n < 2."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(n > 1, -_sp.stdtrit(np.maximum(n - 1, 1), _sp.ndtr(-z)), np.nan)


# The rounding of ss - s^2/n over sums of up to 10^8 values, each summed
# pairwise by chunk, stays far below this share of ss; a real spread of
# values does not (one value of 10^8 off the rest by its own size: 10^-8).
CONSTANT_TOLERANCE = 1e-10


def mean_interval(n, s, ss, z: float = Z95):
    """Mean, sample sd and Student's t interval of the mean (95 % by
    default) from n, sum, sum of squares.

    Returns a dict of arrays: mean, sd, se, ci_low, ci_high. sd is NaN for
    n < 2. Values that are all equal give ss - s^2/n as a rounding error,
    not 0, when they are not binary fractions (1/3, 0.1): a centred sum
    within CONSTANT_TOLERANCE of ss is taken as 0, so that they get sd 0.
    """
    n = np.asarray(n, dtype=float)
    s = np.asarray(s, dtype=float)
    ss = np.asarray(ss, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        # A sum that is rounding (|s| within CONSTANT_TOLERANCE of sqrt(n ss), the size of the values) is 0:
        # differences of shares such as 2/3 - 1/3 that cancel give 4e-17, not 0, summed as floats.
        s = np.where(np.abs(s) <= CONSTANT_TOLERANCE * np.sqrt(n * np.maximum(ss, 0)), 0.0, s)  # NaN stays NaN
        mean = np.where(n > 0, s / np.where(n > 0, n, 1), np.nan)
        centred = ss - s * s / np.where(n > 0, n, 1)
        centred = np.where(centred > CONSTANT_TOLERANCE * ss, centred, 0.0)
        var = np.where(n > 1, centred / np.where(n > 1, n - 1, 1), np.nan)
        sd = np.sqrt(var)
        se = sd / np.sqrt(n)
    half = t_point(n, z) * se
    return _squeeze({"mean": mean, "sd": sd, "se": se, "ci_low": mean - half, "ci_high": mean + half})


def _clustered_wilson(r, var, units, units_sq, clusters, z):
    """Wilson interval of a share r of `units` units from `clusters`
    clusters, whose estimate has the (clustered) variance var: the interval
    of r * n_eff successes in n_eff trials, with the effective sample size
    n_eff = r (1 - r) / var * (z / t)^2, t the Student point with
    clusters - 1 degrees of freedom (Korn and Graubard's interval for
    complex surveys: units that go together count for more or fewer than
    one, and a variance estimated from few clusters counts for less).
    Where r is 0 or 1, or var is 0, var gives no effective size (at 0 or 1
    the clusters cannot show how alike their units are), so the units of a
    cluster are taken as wholly alike, the cautious choice: n_eff =
    units^2 / units_sq (units_sq = sum of the clusters' units squared),
    Kish's effective size, which is the number of clusters when they are
    all of one size, and never more than the units, nor than the clusters
    that hold any."""
    units = np.asarray(units, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = (r > 0) & (r < 1) & (var > 0)
        df_factor = (z / t_point(clusters, z)) ** 2
        alike = units**2 / np.asarray(units_sq, dtype=float)
        n_eff = np.where(inner, r * (1 - r) / np.where(inner, var, 1.0) * df_factor, alike)
        return wilson_interval(r * n_eff, n_eff, z)


def ratio_interval(n, sx, sy, sxx, syy, sxy, z: float = Z95):
    """A share R = sum x / sum y whose units come in clusters (e.g. the cards
    of one game), from the per-cluster sums over n clusters: sx = sum x_g,
    sy = sum y_g, sxx = sum x_g^2, syy = sum y_g^2, sxy = sum x_g y_g.

    Its linearized (ratio-estimator) variance
    var = n / (n - 1) sum ((x_g - R y_g) / sy)^2 counts the units of a
    cluster together rather than as independent trials; the interval is
    Wilson's at the effective sample size R (1 - R) / var (made smaller
    for few clusters), so it stays inside [0, 1] and does not collapse at 0
    or 1, where the units of a cluster are taken as wholly alike
    (_clustered_wilson), as they are where one cluster (n = 1) shows no
    spread at all.
    Returns (R, ci_low, ci_high); NaN where sy is 0.
    """
    r, var, low, high = _clustered_share(n, sx, sy, sxx, syy, sxy, z)
    return r, low, high


def _ratio_variance(n, sx, sy, sxx, syy, sxy):
    """(R, var) of the ratio R = sum x / sum y over n clusters, from the
    per-cluster sums (ratio_interval): the linearized variance
    n / (n - 1) sum ((x_g - R y_g) / sy)^2. NaN where sy is 0 or n < 2."""
    n, sx, sy, sxx, syy, sxy = (np.asarray(v, dtype=float) for v in (n, sx, sy, sxx, syy, sxy))
    with np.errstate(invalid="ignore", divide="ignore"):
        safe_y = np.where(sy > 0, sy, 1.0)
        r = np.where(sy > 0, sx / safe_y, np.nan)
        resid = sxx - 2 * r * sxy + r * r * syy
        # clusters of one share leave 0 or a rounding remainder of the terms: both mean no spread
        resid = np.where(resid > 1e-12 * (sxx + r * r * syy), resid, 0.0)
        var = np.where(n > 1, resid / safe_y**2 * n / np.where(n > 1, n - 1, 1), np.nan)
    return r, var


def _clustered_share(n, sx, sy, sxx, syy, sxy, z):
    """(R, var, ci_low, ci_high) of ratio_interval."""
    r, var = _ratio_variance(n, sx, sy, sxx, syy, sxy)
    return (r, var, *_clustered_wilson(r, var, np.asarray(sy, dtype=float), syy, np.asarray(n, dtype=float), z))


def ratio_difference_interval(n, x1, y1, x2, y2, moments, z: float = Z95):
    """The difference D = R1 - R2 = x1 / y1 - x2 / y2 of two shares whose
    units come in the same clusters (e.g. the sides of one game that played
    a card, and those that did not: when one of them wins, the others lose).

    x1, y1, x2, y2 are sums over n clusters; moments[..., i, j] is the sum
    over the clusters of v_i v_j, v = (x1, y1, x2, y2) of one cluster. Each
    share gets its clustered variance and Wilson interval (ratio_interval),
    and their covariance across clusters gives the correlation rho of the
    two estimates; the interval is the MOVER one for correlated shares
    (Zou and Donner 2008), which is Newcombe's hybrid score interval when
    rho = 0: D - sqrt((R1 - l1)^2 + (u2 - R2)^2 - 2 rho (R1 - l1)(u2 - R2))
    to D + sqrt((u1 - R1)^2 + (R2 - l2)^2 - 2 rho (u1 - R1)(R2 - l2)).
    Returns a dict: diff, ci_low, ci_high; NaN where a y is 0 or n < 2.
    """
    n, x1, y1, x2, y2 = (np.asarray(v, dtype=float) for v in (n, x1, y1, x2, y2))
    moments = np.asarray(moments, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (y1 > 0) & (y2 > 0) & (n > 1)
        s1, s2 = np.where(ok, y1, 1.0), np.where(ok, y2, 1.0)
        r1, r2 = x1 / s1, x2 / s2
        zero = np.zeros_like(r1)
        # each share's residual per cluster, u = (x - R y) / sum y, as a linear form in v
        g1 = np.stack([1 / s1, -r1 / s1, zero, zero], axis=-1)
        g2 = np.stack([zero, zero, 1 / s2, -r2 / s2], axis=-1)
        factor = n / np.where(n > 1, n - 1, 1)
        var1 = factor * np.einsum("...i,...ij,...j->...", g1, moments, g1)
        var2 = factor * np.einsum("...i,...ij,...j->...", g2, moments, g2)
        cov = factor * np.einsum("...i,...ij,...j->...", g1, moments, g2)
        rho = np.where((var1 > 0) & (var2 > 0), cov / np.sqrt(np.maximum(var1 * var2, 1e-300)), 0.0)
        rho = np.clip(rho, -1.0, 1.0)
        l1, u1 = _clustered_wilson(r1, np.maximum(var1, 0.0), y1, moments[..., 1, 1], n, z)
        l2, u2 = _clustered_wilson(r2, np.maximum(var2, 0.0), y2, moments[..., 3, 3], n, z)
        d = np.where(ok, r1 - r2, np.nan)
        low, high = _mover(d, r1, l1, u1, r2, l2, u2, rho)
    return _squeeze({"diff": d, "ci_low": low, "ci_high": high})


def _mover(d, r1, l1, u1, r2, l2, u2, rho):
    """The MOVER interval of d = r1 - r2 from each share's interval and the
    correlation rho of the two estimates (Newcombe's hybrid when rho = 0)."""
    low = d - np.sqrt(np.maximum((r1 - l1) ** 2 + (u2 - r2) ** 2 - 2 * rho * (r1 - l1) * (u2 - r2), 0.0))
    high = d + np.sqrt(np.maximum((u1 - r1) ** 2 + (r2 - l2) ** 2 - 2 * rho * (u1 - r1) * (r2 - l2), 0.0))
    return low, high


def two_run_ratio_difference(a, b, z: float = Z95):
    """The difference R_a - R_b of a share measured in two separate runs,
    each share from clusters (e.g. the cards of a game): a and b are each
    (n, sx, sy, sxx, syy, sxy) as ratio_interval takes them. Each share gets
    its clustered interval (ratio_interval); the two runs are independent, so
    they combine as in Newcombe's interval (MOVER with rho = 0). The p-value
    is that interval's own: the two-sided level at which it just reaches 0
    (`_mover_p`), so that p < 0.05 exactly where the 95 % interval leaves 0
    out. (A Welch t test on the two clustered variances rejected 11 % of
    true nulls between a run of 10 games and one of 1,000, 17 % at a share
    of .1: a short run's estimated variance moves with its share.)
    Returns a dict: diff, ci_low, ci_high, p_value."""
    (r1, _, l1, u1), (r2, _, l2, u2) = (_clustered_share(*sums, z) for sums in (a, b))
    d = r1 - r2
    low, high = _mover(d, r1, l1, u1, r2, l2, u2, 0.0)
    return _squeeze({"diff": d, "ci_low": low, "ci_high": high, "p_value": _mover_p(a, b, d)})


def _mover_p(a, b, d, steps: int = 60):
    """The two-sided p of two_run_ratio_difference: 2 P(Z > z*), z* the
    normal point at which the MOVER interval of d first reaches 0 (the
    intervals widen with z, so bisection finds it); 1 where d is 0, and 0
    where it leaves 0 out even at z = 37.5 (p about 1e-307: the limit of a
    float, as the t test's p underflows to 0)."""
    d = np.asarray(d, dtype=float)
    top = 37.5
    inside, outside = np.zeros_like(d), np.full_like(d, top)
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(steps):
            mid = (inside + outside) / 2
            (r1, _, l1, u1), (r2, _, l2, u2) = (_clustered_share(*sums, mid) for sums in (a, b))
            low, high = _mover(d, r1, l1, u1, r2, l2, u2, 0.0)
            leaves_out = (low > 0) | (high < 0)
            inside, outside = np.where(leaves_out, mid, inside), np.where(leaves_out, outside, mid)
    z_star = (inside + outside) / 2
    p = np.where(outside == top, 0.0, 2 * _sp.ndtr(-z_star))
    return np.where(np.isnan(d), np.nan, np.where(d == 0, 1.0, p))


def _squeeze(d: dict) -> dict:
    """0-d arrays to floats, so scalar inputs give scalar outputs."""
    return {k: (float(v) if np.ndim(v) == 0 else np.asarray(v)) for k, v in d.items()}


def paired_difference(n, sum_d, sum_d2, z: float = Z95, differ=None):
    """Paired difference summary from n, sum of d and sum of d^2 (d = a - b per game).

    Returns a dict of arrays: mean, sd, se, ci_low, ci_high (Student's t
    interval), t (mean / se) and p_value (two-sided t test). The degrees of
    freedom are n - 1, or differ - 1 where `differ`, the number of pairs
    whose d is not 0, is given: on common random numbers most games of two
    variants are often alike, and the spread then rests on the few that
    differ (an option that adds turns in 1 % of 1,000 games: 87 % coverage
    with n - 1, 92 % with differ - 1; docs/statistics.md). When every d is
    equal (se == 0) the t test has nothing to go on: p is 1 for a mean of
    0, else that of the exact two-sided sign test, 2 / 2^n (n differences,
    all of one sign), so that three equal differences are no proof (p =
    0.25) and forty are. Nor has the interval: t's would be the point
    [d, d], a certainty no sample gives (the next game may differ), so it
    is NaN (difference_text says why).
    """
    out = mean_interval(n, sum_d, sum_d2, z)
    mean, se = out["mean"], out["se"]
    units = np.asarray(n if differ is None else np.minimum(differ, n), dtype=float)
    half = t_point(np.maximum(units, 2), z) * se  # one pair that differs: t with 1 degree of freedom
    out["ci_low"] = np.where(se > 0, mean - half, np.nan)
    out["ci_high"] = np.where(se > 0, mean + half, np.nan)
    df = np.maximum(units - 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tstat = np.where(se > 0, mean / np.where(se > 0, se, 1), np.nan)
        sign_test = np.minimum(1.0, 2.0 * 0.5 ** np.asarray(n, dtype=float))
        p = np.where(se > 0, 2 * _sp.stdtr(df, -np.abs(tstat)), np.where(mean == 0, 1.0, sign_test))
        p = np.where(np.isnan(mean) | np.isnan(se), np.nan, p)
    out["t"] = tstat
    out["p_value"] = p
    return _squeeze(out)


def _binomial_half_cdf(k, m):
    """P(X <= k) for X ~ Binomial(m, 1/2), k < m: the regularized incomplete beta I_1/2(m - k, k + 1)."""
    return _sp.betainc(m - k, k + 1, 0.5)


def paired_proportion_difference(n, n10, n01, z: float = Z95):
    """The difference p_a - p_b of two rates measured on the same n games (0 or 1 a game each), from
    the discordant games: n10 where only A's is 1, n01 where only B's. The interval is Tango's score
    interval (Tango 1998): the D where |T(D)| <= z, T(D) = (n10 - n01 - n D) / sqrt(n (2 q + D (1 - D))),
    q the maximum-likelihood P(only B) given D. Unlike the t interval of the paired differences it
    holds its level when few games differ: with none it is +- z^2 / (n + z^2), not [0, 0]. p_value
    is McNemar's exact test, the sign test of the discordant games (NaN where there are none).
    Returns a dict: diff, ci_low, ci_high, p_value."""
    n, b, c = (np.asarray(v, dtype=float) for v in (n, n10, n01))

    def score(delta):
        big_b = -b - c + (2 * n - b + c) * delta
        q = (-big_b + np.sqrt(np.maximum(big_b**2 + 8 * n * c * delta * (1 - delta), 0.0))) / (4 * n)
        return (b - c - n * delta) / np.sqrt(np.maximum(n * (2 * q + delta * (1 - delta)), 1e-300))

    with np.errstate(invalid="ignore", divide="ignore"):
        diff = (b - c) / n
        ends = []
        for target, lo, hi in ((z, np.full_like(diff, -1.0), diff), (-z, diff, np.ones_like(diff))):
            for _ in range(60):  # score(D) falls as D rises: bisect for score(D) = target
                mid = (lo + hi) / 2
                above = score(mid) > target
                lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
            ends.append((lo + hi) / 2)
        m = b + c
        p = np.where(m > 0, np.minimum(1.0, 2 * _binomial_half_cdf(np.minimum(b, c), np.maximum(m, 1))), np.nan)
        bad = ~(n > 0)
    return _squeeze({"diff": np.where(bad, np.nan, diff), "ci_low": np.where(bad, np.nan, ends[0]),
                     "ci_high": np.where(bad, np.nan, ends[1]), "p_value": np.where(bad, np.nan, p)})


def paired_from_values(a, b, z: float = Z95):
    """`paired_difference` of two aligned arrays (pairs with a NaN are dropped)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[~np.isnan(d)]
    return paired_difference(d.size, d.sum(), (d * d).sum(), z, differ=np.count_nonzero(d))


def difference_text(diff: float, low: float, high: float, pairs: int) -> str:
    """A paired difference with its 95 % interval, or why it has none: one
    pair, or the same difference in every pair (paired_difference)."""
    if not np.isfinite(diff):
        return "not measured: too few pairs"
    if not (np.isfinite(low) and np.isfinite(high)):
        why = "one pair" if pairs == 1 else f"the same in all {pairs} pairs"
        return f"{diff:+.4g} ({why}: no interval)"
    return f"{diff:+.4g} [{low:.4g}, {high:.4g}]"


def counted(n: int, noun: str) -> str:
    """A count and its noun for a sentence: "1 game", "2 games"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def p_text(p: float) -> str:
    """A p-value for a sentence, "p = 0.0123", or "p < 1e-300" where it
    underflowed to 0 (a p is never exactly 0)."""
    return "p < 1e-300" if p == 0 else f"p = {p:.3g}"


def alone_text(p_value: float, alpha: float = 0.05) -> str:
    """For a difference that Holm's correction leaves undecided: "p = 0.0123
    alone, not after Holm's correction" where the test alone decides it (its
    95 % interval clears 0), else "" (then the estimate's sign is noise)."""
    return f"{p_text(p_value)} alone, not after Holm's correction" if p_value < alpha else ""


def holm(p_values, alpha: float = 0.05):
    """Holm's step-down adjustment.

    Returns (adjusted p-values in the input order, reject flags). Sorted
    ascending, the i-th (from 0) of m p-values is compared with
    alpha / (m - i); testing stops at the first that fails. Adjusted
    p_(i) = max over j <= i of min(1, (m - j) p_(j)). NaN p-values are left
    out of m and are never rejected.
    """
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    reject = np.zeros(p.shape, dtype=bool)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if m == 0:
        return adjusted, reject
    order = valid[np.argsort(p[valid], kind="stable")]
    running = 0.0
    still = True
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        adjusted[idx] = running
        still = still and p[idx] <= alpha / (m - i)
        reject[idx] = still
    return adjusted, reject


# ---------------------------------------------------------- integer histograms
class IntHistogram:
    """Exact histogram of integer values (counts[i] = how often lo + i occurred).

    Mergeable (`merge` adds two), so quantiles of a million games need only
    one small array per metric.
    """

    __slots__ = ("lo", "counts")

    def __init__(self, lo: int = 0, counts=None):
        self.lo = int(lo)
        self.counts = np.zeros(0, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)

    @classmethod
    def of(cls, values) -> "IntHistogram":
        v = np.asarray(values)
        if v.size and np.issubdtype(v.dtype, np.floating):
            v = v[~np.isnan(v)]
            if (v != np.rint(v)).any():
                raise ValueError("an integer histogram takes whole numbers (NaN left out)")
        v = v.astype(np.int64) if v.size else np.zeros(0, dtype=np.int64)
        if v.size == 0:
            return cls()
        lo = int(v.min())
        return cls(lo, np.bincount(v - lo))

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def values(self) -> np.ndarray:
        return np.arange(self.lo, self.lo + self.counts.size)

    def merge(self, other: "IntHistogram") -> "IntHistogram":
        if other.counts.size == 0:
            return IntHistogram(self.lo, self.counts.copy())
        if self.counts.size == 0:
            return IntHistogram(other.lo, other.counts.copy())
        lo = min(self.lo, other.lo)
        hi = max(self.lo + self.counts.size, other.lo + other.counts.size)
        out = np.zeros(hi - lo, dtype=np.int64)
        out[self.lo - lo : self.lo - lo + self.counts.size] += self.counts
        out[other.lo - lo : other.lo - lo + other.counts.size] += other.counts
        return IntHistogram(lo, out)

    def __eq__(self, other) -> bool:  # same distribution, whatever the padding
        if not isinstance(other, IntHistogram):
            return NotImplemented
        a, b = self.nonzero(), other.nonzero()
        return np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])

    def nonzero(self):
        keep = self.counts > 0
        return self.values[keep], self.counts[keep]

    def frame(self) -> pd.DataFrame:
        """Histogram and ECDF for plotting: value, count, ecdf (values that occur)."""
        vals, counts = self.nonzero()
        _, F = hist_ecdf(vals, counts)
        return pd.DataFrame({"value": vals, "count": counts, "ecdf": F})

    def quantile(self, q: float) -> float:
        return hist_quantile(self.values, self.counts, q)

    def describe(self, label: str, interval: bool = True) -> dict:
        """One row of a report's length or tension table: n, mean, the 95 %
        interval of the mean (ci_low, ci_high: Student's, as `mean_interval`),
        sd, median, 95th percentile, min and max of the values counted.
        Quantiles are the inverse ECDF, as everywhere: the median of 1, 2, 3,
        4 is 2. No interval where every value is the same, nor with
        `interval=False`, for values that are not one per game (turns per hand
        or per stage: those of one game go together)."""
        vals, counts = self.nonzero()
        v = vals.astype(float)
        m = mean_interval(counts.sum(), (v * counts).sum(), (v * v * counts).sum())
        # values equal in every game give no interval, not [x, x]: they do not show that the mean is exactly x
        low, high = (float(m["ci_low"]), float(m["ci_high"])) if interval and m["sd"] > 0 else (np.nan, np.nan)
        return {"metric": label, "n": self.n, "mean": float(m["mean"]), "ci_low": low, "ci_high": high,
                "sd": float(m["sd"]), "median": self.quantile(0.5),
                "p95": self.quantile(0.95), "min": float(vals.min()) if vals.size else np.nan,
                "max": float(vals.max()) if vals.size else np.nan}


def hist_quantile(values, counts, q: float) -> float:
    """Smallest value whose ECDF is >= q (inverse ECDF); NaN when empty."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    if total <= 0:
        return float("nan")
    cdf = np.cumsum(counts) / total
    idx = int(np.searchsorted(cdf, q - 1e-12, side="left"))
    return float(np.asarray(values)[min(idx, len(cdf) - 1)])


def hist_ecdf(values, counts):
    """ECDF points of a histogram: (x, F(x)) at the values that occur."""
    v = np.asarray(values)
    c = np.asarray(counts, dtype=float)
    keep = c > 0
    total = c.sum()
    if total <= 0:
        return np.zeros(0), np.zeros(0)
    return v[keep], np.cumsum(c[keep]) / total


SKILL_MOMENTS = ("ahead", "behind", "level", "half_points", "pairs", "half_points_sq", "pairs_sq", "half_points_pairs")


def skill_moments(codes: np.ndarray, keys: list, policies: int, seat_side=None) -> np.ndarray:
    """The additive sums behind a skill matrix (skill_table_from_moments), so
    that a run read chunk by chunk can add them up.

    codes[s, g]: the policy index (0 .. policies-1) of seat s in game g;
    keys[s]: seat s's finish in each game, higher is better, equal keys are
    level. seat_side[s]: the side of seat s where seats play in teams
    (partners are not opponents: their pairs are left out). Returns an int64
    array [policies, policies, len(SKILL_MOMENTS)]: for the ordered pairing
    (a, b), the seat pairs where a finished ahead, behind, level, and the
    per-game sums of half points h_g = 2 ahead + level and of seat pairs p_g,
    with their squares and product over games (for the interval clustered by
    game)."""
    seats, games = len(keys), len(keys[0])
    side = np.arange(seats) if seat_side is None else np.asarray(seat_side)
    every_game = np.arange(games)
    # per pairing a * policies + b and game
    half_points = np.zeros((policies * policies, games), np.int64)
    pairs = np.zeros((policies * policies, games), np.int64)
    out = np.zeros((policies * policies, len(SKILL_MOMENTS)), np.int64)
    for i in range(seats):
        for j in range(seats):
            if side[i] == side[j]:
                continue
            ahead, behind = keys[i] > keys[j], keys[i] < keys[j]
            level = ~(ahead | behind)
            pairing = codes[i] * policies + codes[j]
            half_points[pairing, every_game] += 2 * ahead + level  # one pairing per game: no repeated index
            pairs[pairing, every_game] += 1
            for t, happened in enumerate((ahead, behind, level)):
                out[:, t] += np.bincount(pairing, weights=happened, minlength=policies * policies).astype(np.int64)
    out[:, 3], out[:, 4] = half_points.sum(axis=1), pairs.sum(axis=1)
    out[:, 5], out[:, 6] = (half_points**2).sum(axis=1), (pairs**2).sum(axis=1)
    out[:, 7] = (half_points * pairs).sum(axis=1)
    return out.reshape(policies, policies, -1)


def skill_table_from_moments(names: list, moments: np.ndarray, games: int) -> pd.DataFrame:
    """The skill matrix as a long table, both directions, from skill_moments
    over `games` games (names[k]: policy k's name): policy, opponent, pairs
    (seat pairs: a game with two seats of A and two of B gives four), ahead,
    behind, level, score = (ahead + level / 2) / pairs and its 95 % interval,
    which counts the seat pairs of one game together (ratio_interval,
    clustered by game). Pairings that never met, and a policy against
    itself, are left out: empty when every seat plays the same policy."""
    columns = ["policy", "opponent", "pairs", "ahead", "behind", "level", "score", "ci_low", "ci_high"]
    rows = []
    for a in range(len(names)):
        for b in range(len(names)):
            m = moments[a, b]
            if a == b or m[4] == 0:
                continue
            score, low, high = ratio_interval(games, m[3] / 2, m[4], m[5] / 4, m[6], m[7] / 2)
            rows.append({"policy": names[a], "opponent": names[b], "pairs": int(m[4]), "ahead": int(m[0]),
                         "behind": int(m[1]), "level": int(m[2]), "score": float(score), "ci_low": float(low),
                         "ci_high": float(high)})
    return pd.DataFrame(rows, columns=columns)


def skill_table(names: list, keys: list, seat_side=None) -> pd.DataFrame:
    """Skill matrix of one run with different policies at the table: for
    every ordered pair of different policies seated in the same game on
    different sides, how often the first finished ahead of the second
    (skill_table_from_moments).

    names[s]: the policy of seat s, one name for every game or an array of
    one per game (seats that rotate); keys[s]: seat s's finish in each game
    (skill_moments), seat_side as there. Policies in order of first seat."""
    seats, games = len(keys), len(keys[0])
    flat = np.concatenate([np.broadcast_to(np.asarray(n, dtype=object), (games,)) for n in names])
    codes, uniques = pd.factorize(flat)
    moments = skill_moments(codes.reshape(seats, games), keys, len(uniques), seat_side)
    return skill_table_from_moments(list(uniques), moments, games)


def mean_curves(long: pd.DataFrame, x: str, cluster: str | None = None) -> pd.DataFrame:
    """Mean of y by (group, x) from a long table with columns group, x, y:
    n, mean, sd, a 95 % interval of the mean (ci_low, ci_high) and the
    mean +- 1 sd band (band_low, band_high); groups sorted by name, x ascending.

    With `cluster` (a column naming each row's game), a group that holds
    several rows of one game (a policy on two seats) gets the interval of
    a mean over clusters: the ratio estimator's variance over the games
    (_ratio_variance) and Student's t with games - 1 degrees of freedom, as
    the rows of one game are not independent. n and sd stay those of the
    rows, the spread of single results."""
    long = long.assign(y2=long["y"] ** 2)
    agg = long.groupby(["group", x], sort=True).agg(n=("y", "size"), s=("y", "sum"), ss=("y2", "sum")).reset_index()
    clusters = None
    if cluster is not None:
        per = long.groupby(["group", x, cluster], sort=True).agg(k=("y", "size"), t=("y", "sum")).reset_index()
        per = per.assign(kk=per["k"] ** 2, tt=per["t"] ** 2, kt=per["k"] * per["t"])
        c = per.groupby(["group", x], sort=True).agg(
            g=("k", "size"), k=("k", "sum"), t=("t", "sum"), kk=("kk", "sum"), tt=("tt", "sum"), kt=("kt", "sum"))
        clusters = {key: c[key].to_numpy() for key in ("g", "t", "k", "tt", "kk", "kt")}
    return curves_from_sums(agg[["group", x]], agg["n"].to_numpy(), agg["s"].to_numpy(), agg["ss"].to_numpy(),
                            clusters)


def curves_from_sums(keys: pd.DataFrame, n, s, ss, clusters: dict | None = None) -> pd.DataFrame:
    """mean_curves' table from the sums of each of its rows (`keys`: group
    and x): n rows, s their sum of y, ss of y squared; `clusters`, for the
    interval over clusters, the sums over the row's clusters (games) of g
    (1 each), t and k (each cluster's sum of y and its rows), tt, kk and kt
    (their squares and product). So a summary kept as running sums (a run
    read chunk by chunk) gives the very table of its long records."""
    m = mean_interval(n, s, ss)
    out = keys.reset_index(drop=True).copy()
    out["n"] = n
    for key in ("mean", "sd", "ci_low", "ci_high"):
        out[key] = m[key]
    if clusters is not None:
        c = clusters
        _, var = _ratio_variance(c["g"], c["t"], c["k"], c["tt"], c["kk"], c["kt"])
        half = t_point(np.asarray(c["g"], float)) * np.sqrt(var)
        out["ci_low"] = out["mean"].to_numpy() - half
        out["ci_high"] = out["mean"].to_numpy() + half
    out["band_low"] = out["mean"] - out["sd"]
    out["band_high"] = out["mean"] + out["sd"]
    return out
