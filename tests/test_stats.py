"""Statistics on hand-worked examples (answers computed by hand, not by the code)."""
import math

import numpy as np
import pandas as pd
import pytest
from by_hand import clustered_wilson, newcombe_p, wilson
from scipy import stats as st

from etappe.analysis.stats import (
    IntHistogram,
    chisquare_uniform,
    difference_text,
    grouped_wilson,
    hist_ecdf,
    hist_quantile,
    holm,
    p_text,
    mean_curves,
    mean_interval,
    rate,
    paired_difference,
    paired_from_values,
    paired_proportion_difference,
    ratio_difference_interval,
    ratio_interval,
    skill_table,
    small_expected_note,
    t_point,
    two_run_ratio_difference,
    wilson_interval,
    Z95,
)


def test_wilson_8_of_10():
    # p = .8, z^2 = 3.8415: centre .71674, half-width .22658
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_edges_closed_form():
    # k = 0: (0, z^2 / (n + z^2)); k = n: (n / (n + z^2), 1)
    z2 = 1.959964**2
    assert wilson_interval(0, 10) == pytest.approx((0.0, z2 / (10 + z2)), abs=1e-6)
    assert wilson_interval(10, 10) == pytest.approx((10 / (10 + z2), 1.0), abs=1e-6)
    low, high = wilson_interval(0, 0)
    assert math.isnan(low) and math.isnan(high)


def test_wilson_vectorised():
    low, high = wilson_interval(np.array([8, 5]), np.array([10, 10]))
    assert low == pytest.approx([0.4902, 0.2366], abs=1e-4)
    assert high == pytest.approx([0.9433, 0.7634], abs=1e-4)


def test_grouped_wilson_is_wilson_over_the_trials_per_unit():
    # 3 wins in 10 games where the policy held 20 seats: Wilson of 3 of 10 (published: .1078, .6032),
    # each end times 10 / 20
    assert grouped_wilson(3, 20, 10) == pytest.approx((0.1078 / 2, 0.6032 / 2), abs=1e-4)
    assert grouped_wilson(3, 10, 10) == pytest.approx(wilson_interval(3, 10), abs=1e-12)


def test_rate_is_nan_where_there_is_nothing_to_count():
    assert rate(3, 4) == 0.75 and isinstance(rate(3, 4), float)
    assert math.isnan(rate(0, 0))
    out = rate([1, 2], [4, 0])
    assert out[0] == 0.25 and math.isnan(out[1])


def test_chisquare_uniform_hand_example():
    # expected 25 each: (25 + 25 + 0 + 0) / 25 = 2.0 on 3 df
    t = chisquare_uniform([30, 20, 25, 25])
    assert t.statistic == pytest.approx(2.0)
    assert t.df == 3
    assert t.n == 100
    # chi2(3) survival at x: 2(1 - Phi(sqrt x)) + sqrt(2x/pi) e^(-x/2)
    x = 2.0
    p = math.erfc(math.sqrt(x) / math.sqrt(2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)
    assert t.p_value == pytest.approx(p, abs=1e-9)
    assert t.p_value == pytest.approx(0.5724, abs=1e-4)


def test_chisquare_two_cells():
    # [3, 0]: expected 1.5, (2.25 + 2.25) / 1.5 = 3; chi2(1) tail = 2(1 - Phi(sqrt 3)) = 0.0833
    t = chisquare_uniform([3, 0])
    assert t.statistic == pytest.approx(3.0)
    assert t.df == 1
    assert t.p_value == pytest.approx(math.erfc(math.sqrt(3.0 / 2)), abs=1e-12)
    assert math.isnan(chisquare_uniform([0, 0]).statistic)


def test_chisquare_of_one_cell_or_no_count_has_no_statistic():
    for counts, df, n in (([7], 0, 7), ([], 0, 0), ([0, 0, 0], 2, 0)):
        t = chisquare_uniform(counts)
        assert math.isnan(t.statistic) and math.isnan(t.p_value) and (t.df, t.n) == (df, n), counts


def test_chisquare_says_when_its_expected_counts_are_too_small():
    # Cochran's rule: 5 or more expected in every cell. [3, 0] expects 1.5 a cell, [30, 20, 25, 25] 25
    small, large = chisquare_uniform([3, 0]), chisquare_uniform([30, 20, 25, 25])
    assert (small.expected, large.expected) == (1.5, 25.0)
    assert small_expected_note(small.expected) == "expected counts below 5: the chi-square p is only approximate"
    assert small_expected_note(large.expected) == ""
    # 9 wins over 2 positions expect 4.5 each, 10 over 2 expect 5: the edge is 5
    assert small_expected_note([25.0, 4.5]) and not small_expected_note(chisquare_uniform([10, 0]).expected)


def test_paired_difference_hand_example():
    # d = [2, 3, 1, 2]: mean 2, sample var 2/3, se = sqrt(2/3)/2 = 0.40825
    out = paired_from_values([3, 5, 4, 6], [1, 2, 3, 4])
    se = math.sqrt(2 / 3) / 2
    assert out["mean"] == pytest.approx(2.0)
    assert out["sd"] == pytest.approx(math.sqrt(2 / 3))
    assert out["se"] == pytest.approx(se)
    # Student's t with 3 degrees of freedom: 97.5 % point 3.182446 (tables)
    assert out["ci_low"] == pytest.approx(2 - 3.182446 * se, abs=1e-6)
    assert out["ci_high"] == pytest.approx(2 + 3.182446 * se, abs=1e-6)
    assert out["ci_low"] == pytest.approx(0.7008, abs=1e-4)
    # t = 2 / se = 4.898979; for 3 degrees of freedom F(t) = 1/2 + (u / (1 + u^2) + atan u) / pi, u = t / sqrt 3
    u = 2 / se / math.sqrt(3)
    assert out["t"] == pytest.approx(2 / se)
    assert out["p_value"] == pytest.approx(2 * (0.5 - (u / (1 + u * u) + math.atan(u)) / math.pi), rel=1e-6)


def test_paired_difference_from_sums_and_nans():
    # same d as above from n, sum d = 8, sum d^2 = 18
    out = paired_difference(4, 8, 18)
    assert out["mean"] == pytest.approx(2.0) and out["se"] == pytest.approx(math.sqrt(2 / 3) / 2)
    # pairs with a NaN are dropped: d = [1, -1]
    out = paired_from_values([1, np.nan, 0], [0, 5, 1])
    assert out["mean"] == pytest.approx(0.0) and out["p_value"] == pytest.approx(1.0)


def test_paired_difference_constant():
    assert paired_from_values([1, 1, 1], [1, 1, 1])["p_value"] == 1.0
    # equal in every pair: no interval, and the sentence says why (one pair has none either)
    same = paired_from_values([4, 4, 4], [1, 1, 1])
    assert difference_text(same["mean"], same["ci_low"], same["ci_high"], 3) == "+3 (the same in all 3 pairs: no interval)"
    one = paired_from_values([4], [1])
    assert difference_text(one["mean"], one["ci_low"], one["ci_high"], 1) == "+3 (one pair: no interval)"
    # differences that cancel sum to rounding in floats (0.1 + 0.2 - 0.3: 5.6e-17): their mean is 0
    assert paired_from_values([0.1, 0.2, 0], [0, 0, 0.3])["mean"] == 0
    # three differences of one sign: the exact sign test, P(all of one sign) = 2 / 2^3
    assert paired_from_values([2, 2, 2], [1, 1, 1])["p_value"] == pytest.approx(0.25)
    assert paired_from_values([0] * 20, [1] * 20)["p_value"] == pytest.approx(2 / 2**20)


def test_mean_interval():
    # 1, 2, 3: mean 2, sd 1, se 1/sqrt 3
    out = mean_interval(3, 6, 14)
    assert out["mean"] == 2 and out["sd"] == pytest.approx(1.0)
    # Student's t, 2 degrees of freedom: F(q) = 1/2 + q / (2 sqrt(2 + q^2)) = .975 gives q^2 = 1.805 / .0975
    assert out["ci_high"] == pytest.approx(2 + math.sqrt(1.805 / 0.0975) / math.sqrt(3), abs=1e-6)


def test_t_points_from_the_tables():
    # Student's t, 97.5 % points: 1 degree of freedom 12.7062, 10: 2.2281; none for a single value
    assert t_point(2) == pytest.approx(12.7062, abs=1e-4) and t_point(11) == pytest.approx(2.2281, abs=1e-4)
    assert math.isnan(t_point(1)) and math.isnan(t_point(0))


def test_mean_interval_of_one_value_or_none():
    one = mean_interval(1, 5, 25)
    assert one["mean"] == 5 and all(math.isnan(one[k]) for k in ("sd", "se", "ci_low", "ci_high"))
    assert all(math.isnan(v) for v in mean_interval(0, 0, 0).values())


def test_holm_hand_example():
    # sorted .01 <= .05/3 yes; .03 <= .05/2 no -> stop: only the first rejected
    adjusted, reject = holm([0.01, 0.04, 0.03])
    assert list(reject) == [True, False, False]
    # adjusted: 3 * .01 = .03; max(.03, 2 * .03) = .06; max(.06, 1 * .04) = .06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06])


def test_holm_all_and_nan():
    adjusted, reject = holm([0.01, 0.02, 0.03])
    assert list(reject) == [True, True, True]
    assert adjusted == pytest.approx([0.03, 0.04, 0.04])
    adjusted, reject = holm([0.02, np.nan, 0.04])  # m = 2
    assert list(reject) == [True, False, True]
    assert adjusted[0] == pytest.approx(0.04) and math.isnan(adjusted[1])


@pytest.mark.parametrize("k,n,low,high", [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605),
                                           (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)])
def test_wilson_published_values(k, n, low, high):
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (score)
    assert wilson_interval(k, n) == pytest.approx((low, high), abs=5e-5)


def _two_side_games(rng, games, p_mark=0.7, edge=0.15):
    """Games of two sides where each side is marked (played a card, was hit)
    with probability p_mark, and side 0 wins with probability
    .5 + edge (marked 0 - marked 1), else side 1: exactly one side wins, so
    the two units of a game go together. Per game: v = (marked winners,
    marked sides, unmarked winners, unmarked sides)."""
    marked = rng.random((games, 2)) < p_mark
    w0 = rng.random(games) < 0.5 + edge * (marked[:, 0].astype(int) - marked[:, 1])
    won = np.stack([w0, ~w0], axis=1)
    return np.stack([(marked & won).sum(1), marked.sum(1), (~marked & won).sum(1), (~marked).sum(1)], axis=1)


def test_clustered_intervals_cover_95_percent():
    """The clustered intervals must cover the true value 95 % of the time.

    Share: games deal 1 to 10 cards (uniform), each played with the game's
    own probability p_g ~ Beta(2, 2), so the cards of a game go together; the
    true share is E p_g = 1/2. Wilson's interval over the cards, as if they
    were independent, covers it far less often.
    Difference: games of two sides, each marked (played a card) with
    probability .7; side 0 wins with probability .5 + .15 (marked 0 -
    marked 1), else side 1, so the sides of a game go together. From the
    definition: a marked side wins against a marked one (.7) with .5,
    against an unmarked one (.3) with .65, so .545; an unmarked one .395;
    the difference is .15."""
    rng = np.random.default_rng(11)
    reps, games = 1000, 300
    share_hits = naive_hits = lift_hits = 0
    for _ in range(reps):
        cards = rng.integers(1, 11, games)
        played = rng.binomial(cards, rng.beta(2, 2, games))
        _, low, high = ratio_interval(games, played.sum(), cards.sum(), (played**2).sum(), (cards**2).sum(),
                                      (played * cards).sum())
        share_hits += low <= 0.5 <= high
        naive_low, naive_high = wilson_interval(played.sum(), cards.sum())
        naive_hits += naive_low <= 0.5 <= naive_high
        v = _two_side_games(rng, games)
        x1, y1, x2, y2 = v.sum(axis=0)
        lift = ratio_difference_interval(games, x1, y1, x2, y2, v.T @ v)
        lift_hits += lift["ci_low"] <= 0.15 <= lift["ci_high"]
    # 1000 repetitions: the coverage's standard error is .007, so 95 % -+ 2.5 points is over 3 of them
    assert 0.925 <= share_hits / reps <= 0.975
    assert 0.925 <= lift_hits / reps <= 0.975
    # the naive interval: design effect about 1 + (5.5 - 1) / (2 + 2 + 1) = 1.9, so P(|Z| < 1.96 / sqrt 1.9) = .84
    assert naive_hits / reps < 0.9


def test_ratio_difference_without_a_second_share_is_the_ratio_interval():
    """When the second share is a constant 0 (x2 = 0 in every cluster), the
    difference's interval is the first share's clustered interval."""
    rng = np.random.default_rng(3)
    v = _two_side_games(rng, 200)
    v[:, 2] = 0
    x1, y1, x2, y2 = v.sum(axis=0)
    _, low, high = ratio_interval(200, x1, y1, (v[:, 0] ** 2).sum(), (v[:, 1] ** 2).sum(), (v[:, 0] * v[:, 1]).sum())
    lift = ratio_difference_interval(200, x1, y1, x2, y2, v.T @ v)
    assert lift["diff"] == pytest.approx(x1 / y1)
    # the second share (0 of y2) adds its Wilson upper end on the low side only: z^2 / (n + z^2) at
    # n = y2^2 / sum y2_g^2, a game's units taken as wholly alike (nothing shows how alike they are)
    n = y2**2 / (v[:, 3] ** 2).sum()
    assert lift["ci_high"] == pytest.approx(high)
    assert lift["ci_low"] == pytest.approx(x1 / y1 - math.hypot(x1 / y1 - low, Z95**2 / (n + Z95**2)))


def test_a_clustered_share_of_0_or_1_counts_the_clusters_not_their_units():
    """At a share of 1 (or 0) the clusters show nothing of how alike their units are: the
    interval takes them as wholly alike, Wilson's over the clusters, not over the units.
    5000 games of 4 seat pairs, all won by A: Wilson of 5000 of 5000, [5000 / (5000 + z^2), 1]
    = [.999232, 1], not that of 20000 of 20000 (low .999808)."""
    r, low, high = ratio_interval(5000, 20000, 20000, 5000 * 16, 5000 * 16, 5000 * 16)
    assert (r, low, high) == pytest.approx((1.0, 5000 / (5000 + Z95**2), 1.0), abs=1e-9)
    assert low == pytest.approx(0.999232, abs=1e-6)
    # 0 of the cards of 10 games, drawn 2, 2, 2 and 1 times in 4 of them and never in the others:
    # n = 7^2 / (4 + 4 + 4 + 1) = 3.7692, at most the 4 games that dealt any (not the 10 games, nor
    # the 7 cards): upper end z^2 / (n + z^2)
    r, low, high = ratio_interval(10, 0, 7, 0, 13, 0)
    assert (r, low) == (0.0, 0.0) and high == pytest.approx(Z95**2 / (49 / 13 + Z95**2), abs=1e-12)


def test_a_clustered_share_of_few_clusters_takes_student_s_t():
    # Three games of 3 cards, 2, 0 and 1 played: R = 3/9 = 1/3, residuals x - R y = 1, -1, 0,
    # var = 3/2 (1 + 1) / 9^2 = 1/27; n_eff = (2/9) / (1/27) (z / t_2)^2, t_2 = 4.302653 (tables),
    # = 1.24512; Wilson at p = 1/3, n = 1.24512: centre (1/3 + 1.54272) / 4.08544 = 0.45921,
    # half 1.96 sqrt(0.17846 + 0.61955) / 4.08544 = 0.42859
    r, low, high = ratio_interval(3, 3, 9, 5, 27, 9)
    assert r == pytest.approx(1 / 3) and (low, high) == pytest.approx((0.03062, 0.88780), abs=1e-4)
    n_eff = 6 * (Z95 / 4.302653) ** 2
    assert (low, high) == pytest.approx(wilson_interval(n_eff / 3, n_eff), abs=1e-6)


def test_a_clustered_share_of_one_game_counts_it_as_one_trial():
    # one game, 1 of its 3 cards played: nothing shows how alike a game's cards are, so they count
    # as one trial: Wilson's interval of 1/3 of 1
    r, low, high = ratio_interval(1, 1, 3, 1, 9, 3)
    assert r == pytest.approx(1 / 3) and (low, high) == pytest.approx(wilson_interval(1 / 3, 1), abs=1e-12)
    assert all(math.isnan(v) for v in ratio_interval(3, 0, 0, 0, 0, 0))


def test_a_difference_of_one_game_or_without_a_second_unit_has_no_interval():
    one_game = ratio_difference_interval(1, 1, 2, 0, 2, np.outer([1, 2, 0, 2], [1, 2, 0, 2]))
    no_second = ratio_difference_interval(2, 1, 2, 0, 0, np.diag([1.0, 2, 0, 0]))
    for out in (one_game, no_second):
        assert all(math.isnan(out[k]) for k in ("diff", "ci_low", "ci_high"))


def test_a_difference_whose_first_share_is_0_takes_its_units_as_wholly_alike():
    """Three games, (x1, y1, x2, y2) = (0, 1, 1, 1), (0, 2, 0, 2), (0, 1, 1, 2): share 1 is 0 of 4,
    whose Wilson upper end is taken at Kish's n = 4^2 / 6 (no residual shows how alike a game's
    units are), u1 = z^2 / (n + z^2); share 2, 2 of 5, has its clustered interval (l2, u2). Its
    variance is 0, so rho is 0: Newcombe's D - (u2 - R2) to D + sqrt(u1^2 + (R2 - l2)^2)."""
    v = np.array([[0, 1, 1, 1], [0, 2, 0, 2], [0, 1, 1, 2]], dtype=float)
    x1, y1, x2, y2 = v.sum(axis=0)
    out = ratio_difference_interval(3, x1, y1, x2, y2, v.T @ v)
    r2, l2, u2 = ratio_interval(3, 2, 5, 2, 9, 3)
    u1 = Z95**2 / (16 / 6 + Z95**2)
    assert out["diff"] == pytest.approx(-0.4)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((-0.4 - (u2 - r2), -0.4 + math.hypot(u1, r2 - l2)))


def test_a_share_of_a_single_unit_is_wilson_of_one():
    # two games, one card dealt in one of them, and played: R = 1, Wilson of 1 of 1, [1 / (1 + z^2), 1]
    assert ratio_interval(2, 1, 1, 1, 1, 1) == pytest.approx((1.0, 1 / (1 + Z95**2), 1.0), abs=1e-12)


@pytest.mark.parametrize("per_cluster", [4, 5, 10, 3])
def test_clusters_of_one_share_get_the_same_interval_whether_or_not_it_rounds(per_cluster):
    """100 races that each pick a profile once in `per_cluster` stages (1/5 in Tape l'étape's
    Endurance): no spread between the clusters, so the units of a race count as one: Wilson's
    interval of the share over the 100 races. A share of 1/4 leaves an exact 0 in the variance's
    sums, 1/5, 1/10 and 1/3 a rounding remainder; both mean no spread.
    Wilson, 20 of 100: [0.1334, 0.2888]."""
    n, y = 100, per_cluster
    r, low, high = ratio_interval(n, n, n * y, n, n * y * y, n * y)
    assert (low, high) == pytest.approx(wilson_interval(n / y, n), abs=1e-12)
    if per_cluster == 5:
        assert (low, high) == pytest.approx((0.1334, 0.2888), abs=1e-4)


def test_a_clean_sweep_in_the_skill_matrix_is_as_sure_as_its_games():
    """Four seats, A, B, A, B on sides 0, 1, 0, 1 (A's seats partners), A ahead in all 50 games: 4 seat
    pairs a game, score 1 with the interval of 50 games, [50 / (50 + z^2), 1]; B's row its mirror."""
    keys = [np.full(50, 2.0), np.zeros(50), np.full(50, 2.0), np.zeros(50)]
    table = skill_table(["A", "B", "A", "B"], keys, seat_side=[0, 1, 0, 1]).set_index("policy")
    a, b = table.loc["A"], table.loc["B"]
    assert (a["pairs"], a["ahead"], a["score"], a["ci_high"]) == (200, 200, 1.0, 1.0)
    assert a["ci_low"] == pytest.approx(50 / (50 + Z95**2), abs=1e-12)
    assert (b["score"], b["ci_low"]) == (0.0, 0.0) and b["ci_high"] == pytest.approx(Z95**2 / (50 + Z95**2), abs=1e-12)


def test_a_skill_table_leaves_partners_out_and_counts_level_finishes_as_half():
    """Seats A, B, B, A on sides 0, 1, 0, 1: seats 0 and 2 (A and B) are partners, not opponents;
    A meets B on the pairs (seat 0, seat 1) and (seat 3, seat 2). Game 1 finishes 3, 1, 2, 2: A ahead,
    then level; game 2 finishes 1, 1, 1, 3: level, then A ahead. A against B: 2 ahead, 2 level of 4
    pairs, score (2 + 2/2) / 4 = .75. Each game gives the same half points (3 of 4): no spread, so the
    pairs of a game count as one: Wilson's interval of 1.5 of 2 (Kish's n = 4^2 / (2^2 + 2^2))."""
    keys = [np.array([3, 1]), np.array([1, 1]), np.array([2, 1]), np.array([2, 3])]
    table = skill_table(["A", "B", "B", "A"], keys, seat_side=[0, 1, 0, 1]).set_index("policy")
    a, b = table.loc["A"], table.loc["B"]
    assert (a["pairs"], a["ahead"], a["behind"], a["level"], a["score"]) == (4, 2, 0, 2, 0.75)
    assert (b["ahead"], b["behind"], b["level"], b["score"]) == (0, 2, 2, 0.25)
    assert (a["ci_low"], a["ci_high"]) == pytest.approx(wilson_interval(1.5, 2), abs=1e-12)
    # seat 0 plays A in game 1 and C in game 2, seat 1 B in both: A and C never meet, so they have no
    # row; A and B meet on one pair, A ahead: score 1, Wilson's interval of 1 of 1
    table = skill_table([np.array(["A", "C"]), "B"], [np.array([2, 1]), np.array([1, 2])])
    assert sorted(zip(table["policy"], table["opponent"])) == [("A", "B"), ("B", "A"), ("B", "C"), ("C", "B")]
    a = table.set_index(["policy", "opponent"]).loc[("A", "B")]
    assert (a["pairs"], a["ahead"], a["score"]) == (1, 1, 1.0)
    assert (a["ci_low"], a["ci_high"]) == pytest.approx(wilson_interval(1, 1), abs=1e-12)


def _run_sums(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    return (x.size, x.sum(), y.sum(), (x * x).sum(), (y * y).sum(), (x * y).sum())


def test_two_run_difference_p_value_is_where_its_interval_reaches_0():
    """Run a: clusters (x, y) = (1, 2), (2, 2), (0, 1): R = 3/5, residuals x - R y = -.2, .8, -.6,
    var = 3/2 * 1.04 / 25 = .0624. Run b: (0, 2), (1, 3), (0, 1), (1, 2): R = 1/4, residuals
    -.5, .25, -.25, .5, var = 4/3 * .625 / 64 = .01302083. d = .35; its p is the level at which
    Newcombe's combination of the two clustered Wilson intervals just reaches 0, so that the test
    and the interval printed beside it never disagree (Welch's t on the two variances did: it
    rejected 11 % of true nulls between a run of 10 games and one of 1,000)."""
    a, b = _run_sums([1, 2, 0], [2, 2, 1]), _run_sums([0, 1, 0, 1], [2, 3, 1, 2])
    out = two_run_ratio_difference(a, b)
    assert out["diff"] == pytest.approx(0.35)
    p = newcombe_p(0.35, lambda z: (0.6, *clustered_wilson(0.6, 0.0624, 3, z)),
                   lambda z: (0.25, *clustered_wilson(0.25, 0.625 / 48, 4, z)))
    assert out["p_value"] == pytest.approx(p, rel=1e-6)
    # at the level 1 - p the interval's lower end is 0; at 95 % it holds 0 exactly when p >= .05
    low = two_run_ratio_difference(a, b, z=float(st.norm.isf(p / 2)))["ci_low"]
    assert low == pytest.approx(0.0, abs=1e-6) and (out["ci_low"] <= 0) == (out["p_value"] >= 0.05)


@pytest.mark.parametrize("x, share", [([0, 0], 0.0), ([2, 3], 1.0), ([1, 1.5], 0.5)])
def test_two_run_difference_where_a_run_shows_no_spread_tests_with_kish_s_size(x, share):
    """Run a: clusters (x, y) with y = 2, 3 and one share in both (0, 1 or 1/2), so no residual to go
    on: its interval is Wilson's at Kish's size 5^2 / 13 (its units taken as wholly alike), and a run
    whose share is 0 is not taken for a run without doubt. Run b as above: R = 3/5, var .0624."""
    out = two_run_ratio_difference(_run_sums(x, [2, 3]), _run_sums([1, 2, 0], [2, 2, 1]))
    kish = 25 / 13
    p = newcombe_p(share - 0.6, lambda z: (share, *wilson(share * kish, kish, z)),
                   lambda z: (0.6, *clustered_wilson(0.6, 0.0624, 3, z)))
    assert out["diff"] == pytest.approx(share - 0.6)
    assert out["p_value"] == pytest.approx(p, rel=1e-6)


def test_two_run_difference_p_value_holds_its_level_with_few_clusters():
    """Two runs of 5 games each of the same share (cards 1 to 10 a game, each played with the
    game's own probability p_g ~ Beta(2, 2)): p < .05 should happen at most about 5 % of the time.
    A normal test on the ratio variances rejected 11 % (seed 2, 2000 repetitions: se .5 %), Welch's
    t 6 %; the interval's own p rejects where the interval misses, about 3 % here (the 95 %
    interval of 5 games is cautious). Nor may it be far more cautious than that: 2 %."""
    rng = np.random.default_rng(2)
    reps, games = 2000, 5

    def runs():
        cards = rng.integers(1, 11, (reps, games))
        x, y = rng.binomial(cards, rng.beta(2, 2, (reps, games))).astype(float), cards.astype(float)
        return (np.full(reps, games), x.sum(1), y.sum(1), (x * x).sum(1), (y * y).sum(1), (x * y).sum(1))

    rejected = (two_run_ratio_difference(runs(), runs())["p_value"] < 0.05).mean()
    assert 0.02 <= rejected <= 0.065


def test_histogram_quantiles_and_ecdf():
    # inverse ECDF: median of 1, 2, 3, 4 is 2; p95 is 4
    assert hist_quantile([1, 2, 3, 4], [1, 1, 1, 1], 0.5) == 2
    assert hist_quantile([1, 2, 3, 4], [1, 1, 1, 1], 0.95) == 4
    assert hist_quantile([1, 2, 3, 4], [1, 1, 1, 1], 0.26) == 2
    # 10 x "5", 90 x "7": median 7, 10 % quantile 5
    assert hist_quantile([5, 6, 7], [10, 0, 90], 0.5) == 7
    assert hist_quantile([5, 6, 7], [10, 0, 90], 0.10) == 5
    x, F = hist_ecdf([5, 6, 7], [10, 0, 90])
    assert list(x) == [5, 7] and F == pytest.approx([0.1, 1.0])
    assert math.isnan(hist_quantile([], [], 0.5))
    x, F = hist_ecdf([], [])
    assert x.size == F.size == 0


def test_a_histogram_of_one_value():
    h = IntHistogram.of([7])
    assert (h.n, h.quantile(0.5), h.quantile(0.95)) == (1, 7, 7)
    row = h.describe("turns")
    assert row["mean"] == 7 and all(math.isnan(row[k]) for k in ("sd", "ci_low", "ci_high"))


def test_describe_worked_by_hand():
    # 1, 2, 3, 4: mean 2.5, sample sd sqrt(5/3); the inverse ECDF puts the median at 2 and p95 at 4;
    # the mean's interval is 2.5 -+ t_3 sd / 2 with Student's t_3 = 3.1824 (the tables' 97.5 % point)
    row = IntHistogram.of(np.array([4, 1, 3, 2, np.nan])).describe("turns")
    half = 3.182446 * math.sqrt(5 / 3) / 2
    assert row == {"metric": "turns", "n": 4, "mean": 2.5, "ci_low": pytest.approx(2.5 - half),
                   "ci_high": pytest.approx(2.5 + half), "sd": pytest.approx(math.sqrt(5 / 3)), "median": 2,
                   "p95": 4, "min": 1.0, "max": 4.0}
    # turns per hand: the hands of a game go together, so they get no interval of independent values
    within = IntHistogram.of([4, 1, 3, 2]).describe("turns per hand", interval=False)
    assert within["mean"] == 2.5 and math.isnan(within["ci_low"]) and math.isnan(within["ci_high"])
    # the same value in every game: no interval, not [7, 7], which would claim the mean is exactly 7
    same = IntHistogram.of([7, 7, 7]).describe("turns")
    assert same["sd"] == 0 and math.isnan(same["ci_low"]) and math.isnan(same["ci_high"])
    # 1 .. 20: the 95th percentile is 19 (its ECDF is .95), not the maximum
    row = IntHistogram.of(range(1, 21)).describe("turns")
    assert (row["median"], row["p95"], row["max"]) == (10, 19, 20.0)
    empty = IntHistogram().describe("none")
    assert empty["n"] == 0 and all(math.isnan(empty[k]) for k in ("mean", "ci_low", "ci_high", "sd", "median", "p95",
                                                                   "min", "max"))


def test_int_histogram_merge():
    a = IntHistogram.of([3, 5, 5])
    b = IntHistogram.of([-1, 5, 9])
    m = a.merge(b)
    assert m == IntHistogram.of([3, 5, 5, -1, 5, 9])
    assert m.n == 6
    vals, counts = m.nonzero()
    assert list(vals) == [-1, 3, 5, 9] and list(counts) == [1, 1, 3, 1]
    assert m.quantile(0.5) == 5
    row = IntHistogram.of([1, 2, 3]).describe("x")
    assert row["mean"] == 2 and row["sd"] == pytest.approx(1.0)
    assert IntHistogram().merge(a) == a
    assert b.merge(a) == m  # the first one reaching the higher values
    assert a.merge(IntHistogram.of([4])) == IntHistogram.of([3, 4, 5, 5])
    # values that repeat: 1, 1, 3 has mean 5/3 and sample sd sqrt(((2/3)^2 2 + (4/3)^2) / 2) = sqrt(4/3)
    row = IntHistogram.of([1, 3, 1]).describe("x")
    assert (row["mean"], row["sd"]) == pytest.approx((5 / 3, math.sqrt(4 / 3)))
    frame = IntHistogram.of([5, 7, 5]).frame()
    assert frame.to_dict("list") == {"value": [5, 7], "count": [2, 1], "ecdf": [pytest.approx(2 / 3), 1.0]}
    assert IntHistogram.of([np.nan, 2.0]) == IntHistogram.of([2])
    with pytest.raises(ValueError, match="whole numbers"):
        IntHistogram.of([1.0, 2.5])  # not rounded in silence


def test_mean_curves_clusters_the_rows_of_one_game():
    # Three games, each with two seats of one policy scoring alike: 1 1, 3 3, 5 5. The
    # seats tell no more than the game means 1, 3, 5: mean 3, sd of the means 2, so the
    # interval is 3 +- t(2 degrees of freedom) 2 / sqrt(3) = 3 +- 4.302653 * 1.154701.
    long = pd.DataFrame({"group": "g", "x": 1, "game": [0, 0, 1, 1, 2, 2], "y": [1.0, 1, 3, 3, 5, 5]})
    row = mean_curves(long, "x", cluster="game").iloc[0]
    assert (row["n"], row["mean"]) == (6, 3)
    assert row["sd"] == pytest.approx(math.sqrt(16 / 5))  # the spread of single results
    assert (row["band_low"], row["band_high"]) == pytest.approx((3 - math.sqrt(16 / 5), 3 + math.sqrt(16 / 5)))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((3 - 4.968275, 3 + 4.968275), abs=1e-5)
    # the six rows as independent results would give 3 +- t(5) sqrt(16 / 5 / 6) = 3 +- 2.570582 * 0.730297
    unclustered = mean_curves(long, "x").iloc[0]
    assert unclustered["ci_high"] == pytest.approx(3 + 1.877288, abs=1e-5)
    # groups come out sorted by name, each with its own numbers, whatever the order of the rows
    two = pd.concat([long.assign(group="h", y=long["y"] + 10), long])
    rows = mean_curves(two, "x", cluster="game")
    assert list(rows["group"]) == ["g", "h"] and list(rows["mean"]) == [3, 13]
    assert list(rows["ci_high"] - rows["mean"]) == pytest.approx([4.968275] * 2, abs=1e-5)
    # one row per game: the same interval as without clusters
    single = long.assign(game=range(6))
    assert mean_curves(single, "x", cluster="game").iloc[0]["ci_high"] == pytest.approx(unclustered["ci_high"])


@pytest.mark.parametrize("value", [1 / 3, 0.1, -2 / 7])
def test_equal_differences_that_are_not_binary_fractions_get_the_sign_test(value):
    # Five pairs all differing by the same value: no spread, so the exact two-sided sign test, 2 / 2^5,
    # not a t test on the rounding left in ss - s^2/n (it gave p = 1.5e-32 for 1/3)
    out = paired_from_values([value] * 5, [0.0] * 5)
    assert out["sd"] == 0 and out["p_value"] == pytest.approx(2 / 2 ** 5)
    assert out["mean"] == pytest.approx(value)
    # and no interval: the point [value, value] would claim a certainty five games do not give
    assert np.isnan(out["ci_low"]) and np.isnan(out["ci_high"])


def test_a_p_value_that_underflowed_is_not_written_as_zero():
    # a normal tail at z = 40 is about 1e-350, below the smallest double: the p computes as 0
    assert p_text(0.0) == "p < 1e-300"
    assert p_text(0.012345) == "p = 0.0123" and p_text(1.0) == "p = 1"


def test_paired_proportion_difference_matches_published_values():
    # Fagerland, Lydersen and Laake (2014, Stat Methods Med Res 23: 99), airway reactivity in 21 children
    # before and after stem cell transplantation: 1 both, 1 before only, 7 after only, 12 neither. Their
    # Tango asymptotic score interval of the difference -0.286 is (-0.517, -0.026); McNemar's exact p 0.070.
    out = paired_proportion_difference(21, 1, 7)
    assert out["diff"] == pytest.approx(-6 / 21)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx((-0.517, -0.026), abs=5e-4)
    assert out["p_value"] == pytest.approx(2 * 9 / 256)  # 2 P(X <= 1), X ~ Bin(8, 1/2): 0.0703
    # no discordant game: nothing to test, and the interval is Wilson's 0-of-n bound either way, z^2 / (n + z^2)
    # as many games only A's as only B's: McNemar's p is 1 (twice P(X <= 3), X ~ Bin(6, 1/2), is 1.3125)
    assert paired_proportion_difference(20, 3, 3)["p_value"] == 1.0
    out = paired_proportion_difference(30, 0, 0)
    bound = 1.959964**2 / (30 + 1.959964**2)
    assert np.isnan(out["p_value"]) and (out["ci_low"], out["ci_high"]) == pytest.approx((-bound, bound))
