"""Values the tests work out by hand, written apart from etappe's own statistics."""
import math

Z95 = 1.959963984540054  # the normal quantile of 0.975


def wilson(wins, n, z=Z95):
    """Wilson's score interval, written out: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)."""
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)  # exactly 0 at wins = 0 and 1 at n, but for rounding
