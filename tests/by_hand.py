"""Values the tests work out by hand, written apart from etappe's own statistics."""
import math

Z95 = 1.959963984540054  # the normal quantile of 0.975


def wilson(wins, n, z=Z95):
    """Wilson's score interval, written out: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)."""
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)  # exactly 0 at wins = 0 and 1 at n, but for rounding


def clustered_wilson(r, var, games, z=Z95):
    """Wilson's interval of a share r clustered by game, at the effective size r (1 - r) / var (z / t)^2,
    t Student's point with games - 1 degrees of freedom at the level whose normal point is z."""
    from scipy import stats as st
    n = r * (1 - r) / var * (z / st.t.isf(st.norm.sf(z), games - 1)) ** 2
    return wilson(r * n, n, z)


def newcombe_p(d, interval_a, interval_b):
    """The two-sided p at which Newcombe's combination of two shares' intervals (d = R_a - R_b) just
    reaches 0: interval_x(z) gives (R, low, high) at the level whose normal point is z; brentq finds the
    z at which the combination's end on 0's side is 0, and p = 2 P(Z > z)."""
    from scipy import stats as st
    from scipy.optimize import brentq

    def end(z):
        (ra, la, ua), (rb, lb, ub) = interval_a(z), interval_b(z)
        return d - math.hypot(ra - la, ub - rb) if d > 0 else d + math.hypot(ua - ra, rb - lb)

    return 2 * st.norm.sf(brentq(end, 1e-6, 8))  # p down to 1e-15


def fair_share_sides(values, fair):
    """The sides of the fair share the mean of `values` may lie on (docs/statistics.md, distance from the
    fair share): its own (above when equal), or both where its own 95 % t interval holds the fair share."""
    from scipy import stats as st
    mean = sum(values) / len(values)
    low, high = st.t.interval(0.95, len(values) - 1, loc=mean, scale=st.sem(values))
    estimated = 1.0 if mean >= fair else -1.0
    return [estimated] if not low <= fair <= high else [estimated, -estimated]
