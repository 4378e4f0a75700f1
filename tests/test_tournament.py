"""Tournaments: seat schedule and bookkeeping on tiny known cases, rating maths on hand-made results."""
import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
import typer

from etappe.analysis.race import simulate
from etappe.analysis.tournament import (
    ELO_PER_NAT, TournamentResult, bradley_terry, elo_from_score, fit_bradley_terry, head_to_head, pair_counts,
    pair_outcomes, pair_table, play_tournament, score_matrix, seat_schedule, side_schedule,
)
from etappe.cli.tournament_cmds import tournament_command
from etappe.reports.tournament_report import _undecided_against, build_tournament_report

ELO_75 = 400 * math.log10(3)  # 190.85: a 75 % score


# ------------------------------------------------------------------ schedule
def test_two_players_alternate_who_starts():
    s = seat_schedule(2, 2, np.arange(6))
    assert s.tolist() == [[0, 1], [1, 0]] * 3


def test_four_individuals_hold_every_seat_equally():
    s = seat_schedule(4, 4, np.arange(8))
    assert s[0].tolist() == [0, 1, 0, 1] and s[1].tolist() == [1, 0, 1, 0]
    assert (s == 0).mean(axis=0).tolist() == [0.5] * 4


def test_teams_keep_partners_together():
    s = seat_schedule(4, 2, np.arange(4))      # Mille Bornes 4 players: seats 0, 2 vs 1, 3
    assert s.tolist() == [[0, 1, 0, 1], [1, 0, 1, 0]] * 2
    s6 = seat_schedule(6, 3, np.arange(6))     # 6 players in 3 teams: seat p plays for side p % 3
    assert (s6[:, :3] == s6[:, 3:]).all()
    assert (s6 == 0).mean(axis=0).tolist() == [0.5] * 6
    # an odd number of sides: the majority alternates between A and B
    assert [int((row[:3] == 0).sum()) for row in s6] == [2, 1] * 3


def test_side_schedule_formula():
    assert side_schedule(3, np.array([0, 1])).tolist() == [[0, 1, 0], [1, 0, 1]]


# ------------------------------------------------------------------ bookkeeping
def _records(rows):
    """Hand-made records: (game, hand, last_hand, winner_side)."""
    return pd.DataFrame(rows, columns=["game", "hand", "last_hand", "winner_side"])


def test_pair_outcomes_on_hand_made_records():
    # game 0: A on side 0; game 1: A on side 1; game 2: A on side 0 (two hands)
    f = _records([(1, 0, 1, 1), (0, 0, 1, 0), (2, 0, 0, 0), (2, 1, 1, 1), (3, 0, 1, -1)])
    games, out = pair_outcomes(f, sides=2)
    assert games.tolist() == [0, 1, 2, 3]
    assert out.tolist() == [1, 1, -1, 0]


def _result(outcomes, policies=("x", "y", "z"), players=2, sides=2):
    pairs = [(i, j) for i in range(len(policies)) for j in range(i + 1, len(policies))]
    o = np.asarray(outcomes, np.int8)
    meta = {"design": "toy", "design_title": "Toy", "players": players, "sides": sides, "seed": 3,
            "games": o.shape[1], "games_total": o.size, "policies": list(policies), "options": {},
            "seating": "paired", "version": "test", "wall_seconds": 1.0}
    return TournamentResult(list(policies), pairs, o, meta)


def test_the_strongest_is_qualified_by_its_undecided_pairings():
    # the round robin below: z beats y in 4 of 4, whose Wilson interval for y, [0, 3.8415 / 7.8415 = .4899],
    # excludes 50 %; against x, z scores 1.5 of 4, [1 - .90811, 1 - .21943] (worked in the next test)
    r = _result([[1, 1, 1, -1], [1, 0, -1, 1], [-1, -1, -1, -1]])
    h2h = head_to_head(r)
    # as the matrix cells read (test_report_of_a_known_round_robin_reads_as_its_games): "37.5 %", not "37.5%"
    assert _undecided_against("z", h2h) == ["x (score 37.5 % [9.2, 78.1])"]
    assert _undecided_against("x", h2h) == ["y (score 75.0 % [30.1, 95.4])", "z (score 62.5 % [21.9, 90.8])"]


def test_the_glance_quotes_a_score_as_the_matrix_shows_it():
    # y scores 1039 of 2000 against x: 51.9 % in the matrix; 1 - 961 / 2000 would print 52.0 %. Wilson's
    # interval for 1039 of 2000 (by_hand.wilson): [.49759, .54134]
    r = _result([[1] * 961 + [-1] * 1039], policies=("x", "y"))
    h2h = head_to_head(r)
    assert _undecided_against("y", h2h) == ["x (score 51.9 % [49.8, 54.1])"]
    matrix = build_tournament_report(r, bootstrap=0).to_markdown().split("## Skill matrix")[1]
    assert "| y | 51.9 % [49.8, 54.1] |  |" in matrix


def test_the_glance_counts_the_decided_pairings_and_says_how_much_skill_matters():
    from etappe.reports.tournament_report import _glance

    ratings = pd.DataFrame({"policy": ["x", "y", "z"], "elo": [120.0, 0.0, -120.0], "elo_low": [60.0, -50.0, -190.0],
                            "elo_high": [190.0, 50.0, -60.0]})
    # x-y decided for x, x-z undecided, y-z decided for z (y's interval [0.15, 0.38]: z's reaches 85 : 15)
    pairs = pd.DataFrame({"policy_a": ["x", "x", "y"], "policy_b": ["y", "z", "z"], "games": [20] * 3,
                          "wins_a": [14, 10, 5], "wins_b": [6, 9, 15], "no_winner": [0, 1, 0],
                          "ci_low": [0.6, 0.45, 0.15], "ci_high": [0.8, 0.6, 0.38]})
    h2h = pd.DataFrame({"policy": ["x", "x"], "opponent": ["y", "z"], "games": [20, 20], "score": [0.7, 0.525],
                        "ci_low": [0.6, 0.45], "ci_high": [0.8, 0.6]})
    lines = _glance(ratings, pairs, h2h, {"turn_cap": 300})
    assert lines[0] == "Strongest: x (Elo +120 [+60, +190]); weakest: z (Elo -120 [-190, -60]). Spread 240 Elo."
    assert lines[1].startswith("x is rated highest, but its own pairing is not decided at 95 % against z (score 52.5 % [45.0, 60.0])")
    assert lines[2].startswith("2 of 3 pairings are decided at 95 %")
    # the intervals reach 85 : 15 at most, beyond 55 : 45 and within 76 : 24 nowhere wholly
    assert lines[3] == ("How much skill matters is not settled by these games: the pairings' intervals reach 85 : 15; "
                        "more games narrow them.")
    # 1 of the 60 games had no winner: 1.7 %
    assert lines[4] == ("1 of 60 games (1.7 %) had no winner (they hit the turn cap of 300 turns a hand or tied); "
                        "each counts half a point for either side, which pulls the scores and ratings towards even.")
    assert len(lines) == 5
    ratings.attrs["regularized"] = True
    lines = _glance(ratings, pairs, h2h, {"turn_cap": 300})
    # the virtual draws set part of the spread, and x's own pairing with z does not show x ahead: no bound
    assert lines[0].endswith("Spread 240 Elo, set partly by the virtual draw that keeps the ratings finite: not "
                             "settled by 20 games a pairing, as x against z scores 52.5 % [45.0, 60.0], which does "
                             "not show x ahead.")
    assert lines[5].startswith("A policy won (or lost) every game against the others")
    assert not any("at least" in line for line in lines)
    # where that pairing's interval excludes 50 %, its low end bounds the spread: 400 log10(.6 / .4) = 70.4 Elo
    h2h["ci_low"] = [0.6, 0.6]
    assert _glance(ratings, pairs, h2h, {})[0].endswith(
        "Spread 240 Elo, set partly by the virtual draw that keeps the ratings finite; the games bound it from below: "
        "x against z alone puts it at 70 Elo or more (the low end of its score's 95 % interval, 60.0 %).")


def test_tables_of_a_known_round_robin():
    # x-y: x wins 3, loses 1; x-z: 2 wins, 1 loss, 1 none; y-z: all lost by y
    r = _result([[1, 1, 1, -1], [1, 0, -1, 1], [-1, -1, -1, -1]])
    pt = pair_table(r)
    assert pt[["wins_a", "wins_b", "no_winner"]].values.tolist() == [[3, 1, 0], [2, 1, 1], [0, 4, 0]]
    assert pt["score_a"].tolist() == [0.75, 0.625, 0.0]
    assert pt["elo_diff"].iloc[0] == pytest.approx(ELO_75)
    # A holds seat 0 in even games, and seat 1 starts games 2 and 3, so A starts games 0 and 3:
    # x-y scores 1, 0 when x starts and 1, 1 when y starts
    assert r.a_starts().tolist() == [True, False, False, True]
    assert pt["score_a_first"].iloc[0] == 0.5 and pt["score_a_second"].iloc[0] == 1.0
    h = head_to_head(r)
    m = score_matrix(h)
    assert list(m.index) == ["x", "y", "z"]
    assert m.loc["x", "y"] == 0.75 and m.loc["y", "x"] == 0.25 and m.loc["z", "y"] == 1.0
    off = ~np.eye(3, dtype=bool)
    assert np.allclose((m.to_numpy() + m.to_numpy().T)[off], 1.0)
    row = h[(h.policy == "x") & (h.opponent == "y")].iloc[0]
    # Wilson at 3 of 4, z^2 = 3.8415: centre (.75 + .48018) / 1.96037 = .62753, half-width
    # 1.96 sqrt(.046875 + .060023) / 1.96037 = .32689
    assert (row.ci_low, row.ci_high) == pytest.approx((0.30064, 0.95442), abs=1e-4)
    # x-z: 2 wins and a game without a winner count 2.5 points of 4: Wilson at p = .625, centre
    # (.625 + .48018) / 1.96037 = .56377, half-width 1.96 sqrt(.058594 + .060023) / 1.96037 = .34434
    row = h[(h.policy == "x") & (h.opponent == "z")].iloc[0]
    assert (row.score, row.ci_low, row.ci_high) == pytest.approx((0.625, 0.21943, 0.90811), abs=1e-4)
    names, W, N = pair_counts(r)
    assert W[0, 2] == 2.5 and W[2, 0] == 1.5 and N[0, 1] == 4


# ------------------------------------------------------------------ ratings
def test_two_players_75_percent_is_ln3():
    f = pd.DataFrame({"policy_a": ["A"], "policy_b": ["B"], "wins_a": [75], "wins_b": [25]})
    bt = bradley_terry(f).set_index("policy")
    assert bt.loc["A", "log_strength"] - bt.loc["B", "log_strength"] == pytest.approx(math.log(3), abs=1e-9)
    assert bt.loc["A", "elo"] - bt.loc["B", "elo"] == pytest.approx(ELO_75, abs=1e-6)
    assert bt.loc["A", "strength"] * bt.loc["B", "strength"] == pytest.approx(1.0)   # geometric mean 1
    assert elo_from_score(0.75) == pytest.approx(ELO_75)
    # Fisher: var(theta_A - theta_B) = 1 / (n p (1 - p)); centred, each se is half of that sd
    sd_diff = 1 / math.sqrt(100 * 0.75 * 0.25)
    assert bt.loc["A", "se"] == pytest.approx(sd_diff / 2)
    anchored = bradley_terry(f, anchor="B").set_index("policy")
    assert anchored.loc["B", "elo"] == 0 and anchored.loc["B", "se"] == 0
    assert anchored.loc["A", "se"] == pytest.approx(sd_diff)
    assert anchored.loc["A", "ci_low"] == pytest.approx(math.log(3) - 1.959964 * sd_diff, abs=1e-5)


def test_known_strengths_are_recovered():
    s = {"x": 1.0, "y": 2.0, "z": 4.0}
    rows = [{"policy_a": a, "policy_b": b, "games": 600,
             "wins_a": 600 * s[a] / (s[a] + s[b]), "wins_b": 600 * s[b] / (s[a] + s[b])}
            for a, b in (("x", "y"), ("x", "z"), ("y", "z"))]
    bt = bradley_terry(pd.DataFrame(rows), anchor="x").set_index("policy")
    assert bt.loc["y", "strength"] == pytest.approx(2.0, rel=1e-8)
    assert bt.loc["z", "strength"] == pytest.approx(4.0, rel=1e-8)
    assert bt.loc["z", "elo"] == pytest.approx(400 * math.log10(4), rel=1e-8)
    assert list(bradley_terry(pd.DataFrame(rows))["policy"]) == ["z", "y", "x"]
    assert bt.attrs["regularized"] is False


def test_no_winner_games_count_half():
    with_ties = pd.DataFrame({"policy_a": ["A"], "policy_b": ["B"], "wins_a": [70], "wins_b": [20], "no_winner": [20]})
    bt = bradley_terry(with_ties).set_index("policy")
    assert bt.loc["A", "log_strength"] - bt.loc["B", "log_strength"] == pytest.approx(math.log(80 / 30), abs=1e-9)
    with pytest.raises(ValueError, match="wins_a \\+ wins_b \\+ no_winner must equal games"):
        bradley_terry(pd.DataFrame({"policy_a": ["A"], "policy_b": ["B"], "wins_a": [1], "wins_b": [1], "games": [3]}))


def test_one_game_without_a_winner_is_enough_for_a_finite_rating():
    # B never won, but its one game without a winner scores half a point: the MLE exists, 9.5 : 0.5
    f = pd.DataFrame({"policy_a": ["A"], "policy_b": ["B"], "wins_a": [9], "wins_b": [0], "no_winner": [1]})
    bt = bradley_terry(f).set_index("policy")
    assert bt.attrs["regularized"] is False and bt.attrs["interval"] == "fisher"
    assert bt.loc["A", "log_strength"] - bt.loc["B", "log_strength"] == pytest.approx(math.log(19), abs=1e-9)
    # the documented columns, and only those
    assert list(bradley_terry(f).columns) == ["policy", "games", "score", "log_strength", "se", "ci_low", "ci_high",
                                              "strength", "elo", "elo_low", "elo_high", "rank"]


def test_a_pairing_of_no_games_has_no_score():
    f = pd.DataFrame({"policy_a": ["A", "A"], "policy_b": ["B", "C"], "wins_a": [3, 0], "wins_b": [1, 0]})
    h = head_to_head(f).set_index(["policy", "opponent"])
    assert h.loc[("A", "B"), "score"] == 0.75 and h.loc[("B", "A"), "score"] == 0.25
    assert np.isnan(h.loc[("A", "C"), "score"]) and np.isnan(h.loc[("C", "A"), "score"])


def test_groups_that_never_met_have_no_common_scale():
    # A-B and C-D only: any shift of C and D together fits the games as well
    f = pd.DataFrame({"policy_a": ["A", "C"], "policy_b": ["B", "D"], "wins_a": [6, 3], "wins_b": [4, 7]})
    with pytest.raises(ValueError, match="never played each other"):
        bradley_terry(f)


def test_a_clean_sweep_is_regularized_with_finite_intervals():
    f = pd.DataFrame({"policy_a": ["A", "B"], "policy_b": ["B", "C"], "wins_a": [10, 6], "wins_b": [0, 4]})
    bt = bradley_terry(f).set_index("policy")
    assert bt.attrs["regularized"] and bt.attrs["interval"] == "profile"
    assert np.isfinite(bt[["elo", "elo_low", "elo_high"]].to_numpy()).all()
    assert (bt["elo_low"] < bt["elo"]).all() and (bt["elo"] < bt["elo_high"]).all()
    assert bt.loc["A", "elo"] > bt.loc["B", "elo"] > bt.loc["C", "elo"]


def _sweep_table():
    """greedy and lookahead split 70 : 130; random loses all its 400 games."""
    return pd.DataFrame({"policy_a": ["greedy", "greedy", "random"], "policy_b": ["random", "lookahead", "lookahead"],
                         "wins_a": [200, 70, 0], "wins_b": [0, 130, 200]})


@pytest.mark.parametrize("anchor", [None, "random", "greedy"])
def test_a_policy_that_loses_every_game_gets_a_finite_rating_and_interval(anchor):
    bt = bradley_terry(_sweep_table(), anchor=anchor)
    assert bt.attrs["regularized"]
    assert list(bt["policy"]) == ["lookahead", "greedy", "random"]
    assert np.isfinite(bt[["elo", "elo_low", "elo_high", "se"]].to_numpy()).all()
    r = bt.set_index("policy")
    for p in ("lookahead", "greedy", "random"):
        if p == anchor:
            assert r.loc[p, "elo_low"] == r.loc[p, "elo"] == r.loc[p, "elo_high"] == 0
        else:
            assert r.loc[p, "elo_low"] < r.loc[p, "elo"] < r.loc[p, "elo_high"]
    # random is below the others with room to spare: its whole interval under theirs
    assert r.loc["random", "elo_high"] < min(r.loc["greedy", "elo_low"], r.loc["lookahead", "elo_low"])


def test_sweep_interval_of_two_policies_is_the_penalized_likelihood_ratio_interval():
    """A loses all n games to B: one virtual draw gives d = ln(0.5 / (n + 0.5)), and
    the 95 % interval is where 0.5 ln sig(d) + (n + 0.5) ln sig(-d) is within 1.92 of its top."""
    from scipy.optimize import brentq
    from scipy.special import log_expit

    n, z = 200, 1.959963984540054
    bt = bradley_terry(pd.DataFrame({"policy_a": ["A"], "policy_b": ["B"], "wins_a": [0], "wins_b": [n]}),
                       anchor="B").set_index("policy")
    d0 = math.log(0.5 / (n + 0.5))
    assert bt.loc["A", "log_strength"] == pytest.approx(d0, abs=1e-8)

    def ll(d):
        return 0.5 * log_expit(d) + (n + 0.5) * log_expit(-d)

    def drop(d):
        return ll(d0) - ll(d) - z * z / 2

    assert bt.loc["A", "ci_low"] == pytest.approx(brentq(drop, d0 - 30, d0), abs=1e-6)
    assert bt.loc["A", "ci_high"] == pytest.approx(brentq(drop, d0, 0.0), abs=1e-6)
    # in score terms the upper bound (1.67 %) lies between Jeffreys' (1.25 %) and Wilson's (1.88 %) for 0 / 200
    top = 1 / (1 + math.exp(-bt.loc["A", "ci_high"]))
    assert 0.0125 < top < 0.0188


def test_profile_intervals_of_three_policies_by_a_search_of_their_own():
    """The sweep table with one virtual draw per pairing; for each policy i the profile
    log-likelihood at theta_i = v (ratings summing to 0) leaves one free rating, maximized
    here by a one-dimensional search; the interval is where it is within z^2 / 2 of the top."""
    from scipy.optimize import brentq, minimize_scalar
    from scipy.special import log_expit

    bt = bradley_terry(_sweep_table()).set_index("policy")
    names = ["greedy", "random", "lookahead"]          # the table's order of first appearance
    # points of row against column (greedy 200 : 0 random, 70 : 130 lookahead; random 0 : 200
    # lookahead), each plus the virtual half point
    W = np.array([[0, 200.5, 70.5], [0.5, 0, 0.5], [130.5, 200.5, 0]])

    def loglik(theta):
        return float((W * log_expit(theta[:, None] - theta[None, :])).sum())

    def profile(i, v):
        j, k = [m for m in range(3) if m != i]

        def ratings(u):
            theta = np.empty(3)
            theta[i], theta[j], theta[k] = v, u, -v - u
            return theta
        return -minimize_scalar(lambda u: -loglik(ratings(u)), bounds=(-30, 30), method="bounded",
                                options={"xatol": 1e-10}).fun

    z = 1.959963984540054
    top = -minimize_scalar(lambda v: -profile(0, v), bounds=(-10, 10), method="bounded",
                           options={"xatol": 1e-10}).fun
    for i, name in enumerate(names):
        est = bt.loc[name, "log_strength"]
        assert profile(i, est) == pytest.approx(top, abs=1e-6)

        def drop(v):
            return top - profile(i, v) - z * z / 2
        assert bt.loc[name, "ci_low"] == pytest.approx(brentq(drop, est - 20, est), abs=1e-4), name
        assert bt.loc[name, "ci_high"] == pytest.approx(brentq(drop, est, est + 20), abs=1e-4), name


def test_bootstrap_of_a_sweep_keeps_a_finite_honest_interval():
    rng = np.random.default_rng(3)
    # pairs (greedy, lookahead), (greedy, random), (lookahead, random): random never scores
    o = np.vstack([np.where(rng.random(200) < 0.35, 1, -1), np.ones(200), np.ones(200)])
    r = _result(o, policies=("greedy", "lookahead", "random"))
    boot = bradley_terry(r, bootstrap=40, seed=1).set_index("policy")
    prof = bradley_terry(r).set_index("policy")
    assert np.isfinite(boot[["elo", "elo_low", "elo_high", "se"]].to_numpy()).all()
    assert boot.attrs["interval"] == "bootstrap+profile"
    # every resample is the same sweep, so the bootstrap alone would pin random to a point;
    # the interval keeps at least the profile interval's width
    assert boot.loc["random", "elo_low"] <= prof.loc["random", "elo_low"]
    assert boot.loc["random", "elo_high"] >= prof.loc["random", "elo_high"]
    assert boot.loc["random", "se"] >= prof.loc["random", "se"]
    assert boot.loc["random", "elo_high"] < boot.loc["greedy", "elo_low"] < boot.loc["lookahead", "elo"]


def test_fit_matches_mm_algorithm():
    rng = np.random.default_rng(5)
    N = rng.integers(20, 60, (4, 4)).astype(float)
    N = np.triu(N, 1) + np.triu(N, 1).T
    true = np.array([0.0, 0.5, -0.3, 1.0])
    p = 1 / (1 + np.exp(-(true[:, None] - true[None, :])))
    upper = np.triu(rng.binomial(N.astype(int), p), 1).astype(float)
    W = upper + (np.triu(N, 1) - upper).T          # W[j, i] = N[i, j] - W[i, j]
    theta, cov, reg = fit_bradley_terry(W, N)
    s = np.ones(4)                     # Hunter's MM: s_i <- W_i / sum_j N_ij / (s_i + s_j)
    for _ in range(5000):
        s = W.sum(1) / (N / (s[:, None] + s[None, :])).sum(1)
        s /= np.exp(np.log(s).mean())
    assert not reg
    assert np.allclose(theta, np.log(s), atol=1e-7)
    assert np.allclose(cov.sum(axis=0), 0, atol=1e-9)   # centred covariance


def test_bootstrap_intervals_are_seeded():
    rng = np.random.default_rng(2)
    o = np.where(rng.random((3, 400)) < [[0.7], [0.6], [0.45]], 1, -1)
    r = _result(o)
    b1 = bradley_terry(r, bootstrap=50, seed=1)
    b2 = bradley_terry(r, bootstrap=50, seed=1)
    fisher = bradley_terry(r)
    assert b1.attrs["method"] == "bootstrap" and fisher.attrs["method"] == "fisher"
    assert b1.equals(b2)
    assert (b1["elo_low"] <= b1["elo"]).all() and (b1["elo"] <= b1["elo_high"]).all()
    assert np.allclose(b1["elo"], fisher["elo"])
    assert np.allclose(b1["se"], fisher["se"], rtol=0.5)


def test_bootstrap_interval_is_the_percentile_interval_of_the_refits(monkeypatch):
    import etappe.analysis.tournament as T

    # refits given by hand: policy x's resampled ratings 0.0, 0.1, ..., 0.9; y, z the negatives, halved
    fits = np.column_stack([np.arange(10) / 10, -np.arange(10) / 20, -np.arange(10) / 20])
    monkeypatch.setattr(T, "_bootstrap_theta", lambda *a: fits)
    rng = np.random.default_rng(2)
    bt = bradley_terry(_result(np.where(rng.random((3, 400)) < 0.6, 1, -1)), bootstrap=10).set_index("policy")
    # the 2.5 % and 97.5 % points of 0.0 .. 0.9 (linear interpolation): 0.0225 and 0.8775
    assert (bt.loc["x", "ci_low"], bt.loc["x", "ci_high"]) == pytest.approx((0.0225, 0.8775))
    assert bt.loc["x", "se"] == pytest.approx(np.std(np.arange(10) / 10, ddof=1))
    assert bt.attrs["interval"] == "bootstrap"
    # a clean sweep: the union with the profile interval, which is wider on the swept side
    profile = bradley_terry(_result(np.ones((3, 400)))).set_index("policy")
    swept = bradley_terry(_result(np.ones((3, 400))), bootstrap=10).set_index("policy")
    assert swept.attrs["interval"] == "bootstrap+profile"
    assert swept.loc["x", "ci_low"] == pytest.approx(min(profile.loc["x", "ci_low"], 0.0225))
    assert swept.loc["x", "ci_high"] == pytest.approx(max(profile.loc["x", "ci_high"], 0.8775))
    assert swept.loc["x", "se"] == pytest.approx(max(profile.loc["x", "se"], np.std(np.arange(10) / 10, ddof=1)))
    assert (swept.loc["x", "ci_low"], swept.loc["x", "ci_high"]) != (profile.loc["x", "ci_low"],
                                                                     profile.loc["x", "ci_high"])


def test_bootstrap_refits_are_anchored_like_the_ratings():
    from etappe.analysis.tournament import _bootstrap_theta

    rng = np.random.default_rng(4)
    r = _result(np.where(rng.random((3, 300)) < [[0.7], [0.6], [0.45]], 1, -1))
    centred = _bootstrap_theta(r, ["x", "y", "z"], 20, 9, None)
    anchored = _bootstrap_theta(r, ["x", "y", "z"], 20, 9, "y")
    assert np.allclose(centred.sum(axis=1), 0) and (anchored[:, 1] == 0).all()
    np.testing.assert_allclose(anchored, centred - centred[:, [1]], atol=1e-12)


# ------------------------------------------------------------------ real games
def test_a_pairing_score_with_games_without_a_winner_counts_their_half_points_as_less_spread():
    # 100 games: 30 won, 40 without a winner, 30 lost: s = .5; a game's points (1, 1/2, 0) have the variance
    # v = (30 + 40 / 4) / 100 - .25 = .15, less than s (1 - s) = .25, so the effective number of games is
    # 100 * .25 / .15 * (1.959964 / t_99)^2, t_99 = 1.984217 (the tables): 162.617, and the interval
    # Wilson's of 81.31 in 162.62 (Wilson over the 100 games, [.404, .596], covered about 99 % here)
    from by_hand import wilson

    pairs = pd.DataFrame({"policy_a": ["x", "x", "x"], "policy_b": ["y", "z", "w"], "games": [100, 100, 4],
                          "wins_a": [30, 50, 2], "wins_b": [30, 50, 1], "no_winner": [40, 0, 1]})
    t = pair_table(pairs).set_index("policy_b")
    n = 100 * 0.25 / 0.15 * (1.959964 / 1.984217) ** 2
    assert n == pytest.approx(162.617, abs=1e-3)
    assert (t.loc["y", "ci_low"], t.loc["y", "ci_high"]) == pytest.approx(wilson(0.5 * n, n), abs=1e-5)
    # no game without a winner: Wilson over the games, as before
    assert (t.loc["z", "ci_low"], t.loc["z", "ci_high"]) == pytest.approx(wilson(50, 100), abs=1e-9)
    # few games: the t point (t_3 = 3.1824) shrinks the effective size below the games, which it never goes
    # under: 2 wins and a game without a winner of 4 keep Wilson at 2.5 of 4
    assert (t.loc["w", "ci_low"], t.loc["w", "ci_high"]) == pytest.approx(wilson(2.5, 4), abs=1e-9)


def test_pairing_matches_a_rotated_simulation():
    """Pair (A, B) of a tournament plays exactly the games of `simulate` with seats rotated."""
    res = play_tournament("millebornes", 2, ["random", "greedy", "aggressive"], games=12, seed=7, chunk_size=5)
    assert res.outcomes.shape == (3, 12) and res.pairs == [(0, 1), (0, 2), (1, 2)]
    for k, (i, j) in enumerate(res.pairs):
        df = simulate("millebornes", 2, 12, [res.policies[i], res.policies[j]], seed=7, seating="rotate")
        last = df[df.last_hand == 1].sort_values("game")
        w = last["winner_side"].to_numpy()
        holder = last[["seat0_policy", "seat1_policy"]].to_numpy()[np.arange(12), np.clip(w, 0, 1)]
        expect = np.where(w < 0, 0, np.where(holder == 0, 1, -1))
        assert res.outcomes[k].tolist() == expect.tolist()
    again = play_tournament("millebornes", 2, ["random", "greedy", "aggressive"], games=12, seed=7)
    assert np.array_equal(again.outcomes, res.outcomes)
    assert (res.outcomes[0] == -1).sum() > 6           # greedy beats random


def test_team_pairing_matches_a_rotated_simulation():
    res = play_tournament("millebornes", 4, ["greedy", "random"], games=6, seed=2)
    df = simulate("millebornes", 4, 6, ["greedy", "random", "greedy", "random"], seed=2, seating="rotate")
    last = df[df.last_hand == 1].sort_values("game")
    w = last["winner_side"].to_numpy()
    holder = last[["seat0_policy", "seat1_policy"]].to_numpy()[np.arange(6), np.clip(w, 0, 1)]
    assert res.outcomes[0].tolist() == np.where(w < 0, 0, np.where(holder == 0, 1, -1)).tolist()
    assert res.meta["sides"] == 2 and res.meta["seat_side"] == [0, 1, 0, 1]


def test_tournament_rejects_bad_pools():
    with pytest.raises(ValueError, match="a tournament needs at least two policies"):
        play_tournament("stapop", 2, ["greedy"], games=4)
    with pytest.raises(ValueError, match="^policy given twice: greedy$"):
        play_tournament("stapop", 2, ["greedy", "greedy"], games=4)


# ------------------------------------------------------------------ report and CLI
def test_report_has_the_heatmap_ratings_and_header(tmp_path):
    rng = np.random.default_rng(4)
    r = _result(np.where(rng.random((3, 200)) < [[0.7], [0.8], [0.6]], 1, -1))
    rep = build_tournament_report(r)
    titles = [s.title for s in rep.sections]
    assert titles == ["Run", "At a glance", "Skill matrix", "Ratings", "Pairings", "Method", "Caveat"]
    html_path = rep.write(tmp_path)
    html = html_path.read_text()
    md = (tmp_path / "report.md").read_text()
    assert (tmp_path / "skill_matrix.png").exists() and (tmp_path / "ratings.png").exists()
    assert "Bots are not people" in html and "etappe tournament" in md and "root seed" in md
    bt = bradley_terry(r)
    assert f"{bt['elo'].iloc[0]:.4g}" in md
    # rated as `etappe tournament` rates it: the bootstrap drawn from the run's seed (3)
    boot = bradley_terry(r, bootstrap=200, seed=3)
    assert f"| {boot['elo_low'].iloc[0]:.4g} | {boot['elo_high'].iloc[0]:.4g} |" in md
    assert rep.title == "Tournament: Toy, 2 players, 3 policies, 200 games per pairing"
    assert "An elo_diff of inf" not in md  # no pairing won outright


def test_the_skill_matrix_keeps_a_small_bound_from_reading_as_certain():
    # x wins all 10,000 games: Wilson's interval of y's score 0 / 10,000 is [0, 1.96^2 / (10,000 + 1.96^2)]
    # = [0, 0.000384], 0.038 %, which one decimal made "0.0" as if the score were certain
    md = build_tournament_report(_result([[1] * 10_000], policies=("x", "y")), bootstrap=0).to_markdown()
    matrix = md.split("## Skill matrix")[1].split("## Ratings")[0]
    assert "| x |  | 100.0 % [99.962, 100.0] |" in matrix and "| y | 0.0 % [0.0, 0.038] |  |" in matrix


def test_report_takes_the_ratings_it_is_given(monkeypatch):
    """`etappe tournament` rates the run once and hands the table on: the report does not fit it again."""
    r = _result([[1, -1, 1, 1], [1, 0, -1, 1], [-1, 1, -1, -1]])
    given = bradley_terry(r, bootstrap=0)
    monkeypatch.setattr("etappe.reports.tournament_report.bradley_terry", lambda *a, **k: pytest.fail("rated again"))
    md = build_tournament_report(r, bootstrap=0, ratings=given).to_markdown()
    assert f"{given['elo'].iloc[0]:.4g}" in md


def test_report_of_a_known_round_robin_reads_as_its_games(tmp_path):
    # x-y: x wins 3 of 4; x-z: 2 wins, 1 loss, 1 game without a winner; y-z: y loses all 4. The scores
    # and Wilson intervals are worked in test_tables_of_a_known_round_robin; y-z: 0 of 4, [0, .4899]
    r = _result([[1, 1, 1, -1], [1, 0, -1, 1], [-1, -1, -1, -1]])
    md = build_tournament_report(r, bootstrap=0, meta={"reconstructed": True}).to_markdown()
    matrix = md.split("## Skill matrix")[1].split("## Ratings")[0]
    assert "Each cell: the row policy's score against the column policy" in matrix
    assert "| x |  | 75.0 % [30.1, 95.4] | 62.5 % [21.9, 90.8] |" in matrix
    assert "| y | 25.0 % [4.6, 69.9] |  | 0.0 % [0.0, 49.0] |" in matrix
    assert "| z | 37.5 % [9.2, 78.1] | 100.0 % [51.0, 100.0] |  |" in matrix
    pairings = md.split("## Pairings")[1].split("## Method")[0]
    assert "| policy_a | policy_b | games | wins_a | wins_b | no_winner | score_a | 95 % low | 95 % high |" in pairings
    # Elo differences 400 log10(s / (1 - s)): x-y 400 log10(3) = 190.8; y-z scores 0, which no finite Elo gives
    assert "| x | y | 4 | 3 | 1 | 0 | 0.75 | 0.3006 | 0.9544 | 190.8 |" in pairings
    assert "| y | z | 4 | 0 | 4 | 0 | 0 | 0 | 0.4899 | -inf |" in pairings
    assert "An elo_diff of inf or -inf: one policy won every game of that pairing" in pairings
    method = md.split("## Method")[1].split("## Caveat")[0]
    assert "game i deals the same cards in every pairing (common random numbers). paired." in method
    assert "Games are not independent across pairings (they share deals)." in method
    caveat = md.split("## Caveat")[1]
    assert "Toy (reconstructed): where the sources are silent its rules are assumptions" in caveat
    assert "No finite maximum-likelihood fit exists" not in md and "Every game of a pairing ended alike" not in md
    # with the bootstrap, y-z (every game alike) cannot show its spread: the intervals say how they are made
    assert "Every game of a pairing ended alike" in build_tournament_report(r, bootstrap=20).to_markdown()
    # x wins every game: no finite fit, the virtual draw
    swept = build_tournament_report(_result([[1] * 10], policies=("x", "y")), bootstrap=0).to_markdown()
    assert "No finite maximum-likelihood fit exists (a policy won or lost every game)" in swept


def test_report_gives_the_weakest_its_interval_and_names_the_se():
    # x beats y in 75 of 100 games: theta_x - theta_y = ln 3; Fisher: var(theta_x - theta_y) =
    # 1 / (100 * .75 * .25), each centred theta's se half its sd; y sits at -ln 3 / 2
    r = _result([[1] * 75 + [-1] * 25], policies=("x", "y"))
    se = 1 / math.sqrt(100 * 0.75 * 0.25) / 2
    elo, low, high = (ELO_PER_NAT * (-math.log(3) / 2 + k * 1.959964 * se) for k in (0, -1, 1))
    md = build_tournament_report(r, bootstrap=0).to_markdown()
    assert f"weakest: y (Elo {elo:+.0f} [{low:+.0f}, {high:+.0f}])." in md
    assert "(Elo -95 [-135, -56])" in md
    assert "| se of log strength (Fisher) |" in md
    # with the bootstrap the column is the sd of the refits
    md = build_tournament_report(r, bootstrap=20).to_markdown()
    assert "| sd of log strength (bootstrap) |" in md and "| se |" not in md



def test_the_header_gives_the_rule_options_in_play_and_the_others_apart():
    # Stap op has no safety and plays one hand: of the twelve rule options, four change something
    from etappe.kernels.race_design import DEFAULT_OPTIONS, load_design
    from etappe.reports.tournament_report import tournament_header

    stapop = load_design("stapop")
    meta = {"design": "stapop", "design_file": "builtin:stapop", "design_text": stapop.text, "players": 2,
            "policies": ["random", "greedy"], "options": stapop.resolved_options({})}
    assert len(meta["options"]) == len(DEFAULT_OPTIONS) == 12
    header = tournament_header(meta).set_index("item")["value"]
    assert header["rule options"] == '{"discard": "always", "limit_on_limit": false, "overshoot": "forbid", "turn_cap": 0}'
    assert "coup_fourre, coup_fourre_turn_after_stock_empty (no safety protects from an attack)" in \
        header["rule options that change nothing here"]

def test_a_reconstructed_design_is_marked_once_in_the_header():
    from etappe.reports.tournament_report import tournament_header

    header = tournament_header({"design_title": "Touring (reconstructed)", "reconstructed": True}).set_index("item")
    assert header.loc["design", "value"] == "Touring (reconstructed)"


def test_the_header_gives_the_policies_the_options_and_the_speed():
    from etappe.reports.tournament_report import tournament_header

    meta = {"design": "stapop", "policies": ["random", "greedy"], "players": 2, "games": 500, "games_total": 500,
            "wall_seconds": 0.25, "seed": 1, "options": {"turn_cap": 0, "overshoot": "forbid"}}
    header = tournament_header(meta).set_index("item")["value"]
    assert header["wall time"] == "0.25 s" and header["games per second"] == "2000"
    assert header["policies"] == "random, greedy"  # without the policies' details: their names
    assert header["rule options"] == '{"overshoot": "forbid", "turn_cap": 0}'
    meta["policy_details"] = [{"name": "greedy:attack=3", "family": "greedy", "params": {"attack": 3.0, "noise": 0}}]
    assert tournament_header(meta).set_index("item")["value"]["policies"] == "greedy:attack=3 (greedy: attack=3, noise=0)"


def test_tournament_command_prints_and_writes(tmp_path, capsys):
    res = tournament_command("stapop", "random,greedy", 2, 10, 1, None, tmp_path / "out")
    out = capsys.readouterr().out
    assert "Bradley-Terry" in out and "greedy" in out
    assert "95 % intervals, bootstrap" in " ".join(out.split())  # the pairings share deals: Fisher is too narrow
    assert "bootstrap over game indices (200 resamples" in (tmp_path / "out" / "report.md").read_text()
    assert (tmp_path / "out" / "report.html").exists() and (tmp_path / "out" / "ratings.csv").exists()
    assert res.games == 10
    # refused with exit code 2 and the reason (typer.Exit(0) would be a normal end)
    for policies, reason in (("greedy", "--policies needs at least two policies"),
                             ("greedy,nonsense", "unknown policy 'nonsense'")):
        with pytest.raises(typer.Exit) as stop:
            tournament_command("stapop", policies, 2, 10, 1, None, None)
        assert stop.value.exit_code == 2 and reason in capsys.readouterr().err



def test_the_printed_matrix_and_ratings_of_two_policies_worked_by_hand(tmp_path, capsys):
    import re

    from by_hand import wilson

    tournament_command("stapop", "random,greedy", 2, 20, 1, None, tmp_path / "t", bootstrap=0)
    out = capsys.readouterr().out
    pair = pd.read_csv(tmp_path / "t" / "pairings.csv").iloc[0]
    ratings = pd.read_csv(tmp_path / "t" / "ratings.csv")
    assert list(ratings.columns[:2]) == ["policy", "games"] and list(pair.index[:2]) == ["policy_a", "policy_b"]
    assert re.search(r"┃ policy \\ opponent ┃ +random ┃ +greedy ┃", out), out
    assert (pair.policy_a, pair.policy_b, pair.no_winner) == ("random", "greedy", 0)
    won, n = int(pair.wins_a), 20  # random's wins; greedy won the others

    def cell(wins):
        low, high = wilson(wins, n)
        return re.escape(f"{100 * wins / n:.1f} [{100 * low:.1f}, {100 * high:.1f}]")

    assert re.search(rf"│ random +│ +- +│ +{cell(won)} +│", out), out
    assert re.search(rf"│ greedy +│ +{cell(n - won)} +│ +- +│", out), out
    # Bradley-Terry of two policies: the strength ratio is greedy's wins to random's, with one virtual
    # draw (half a win each) where a policy won every game; Elo = 400 log10(strength), mean 0
    half = 0.5 if won in (0, n) else 0.0
    elo = 400 * math.log10((n - won + half) / (won + half)) / 2
    assert re.search(rf"│ +1 │ greedy │ +{n} │ +{100 * (n - won) / n:.1f} │ +{re.escape(f'{elo:+.1f}')} │", out), out
    assert re.search(rf"│ +2 │ random │ +{n} │ +{100 * won / n:.1f} │ +{re.escape(f'{-elo:+.1f}')} │", out), out


def test_an_unknown_anchor_is_refused_before_any_game_is_played(monkeypatch, capsys):
    import etappe.analysis.tournament as T

    def no_games(*a, **k):
        raise AssertionError("a game was played")

    monkeypatch.setattr(T, "play_pair", no_games)
    with pytest.raises(typer.Exit) as stop:
        tournament_command("stapop", "greedy,random", 2, 100, 0, None, None, anchor="foo")
    assert stop.value.exit_code != 0
    assert "--anchor 'foo' is not one of the policies: greedy, random" in capsys.readouterr().err


def test_interrupted_tournament_resumes_from_its_checkpoint(tmp_path, monkeypatch, capsys):
    import etappe.analysis.tournament as T

    out = tmp_path / "out"
    args = ("millebornes", "random,greedy,aggressive", 2, 12, 3, None, out)
    calls = {"n": 0}
    real_play_pair = T.play_pair

    def counted(*a, **k):
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise KeyboardInterrupt
        return real_play_pair(*a, **k)

    monkeypatch.setattr(T, "play_pair", counted)
    # Interrupted in the third of three pairings: the first two are saved ...
    fail_at = 3
    with pytest.raises(KeyboardInterrupt):
        tournament_command(*args)
    assert (out / ".tournament-checkpoint.pkl").exists() and not (out / "report.html").exists()
    # ... so running it again plays only the third, and ends like a tournament played in one go.
    calls["n"], fail_at = 0, None
    capsys.readouterr()
    resumed = tournament_command(*args)
    assert calls["n"] == 1
    said = " ".join(capsys.readouterr().err.split())
    assert f"resuming the run at {out}: 24 of 36 games (all pairings) already played" in said
    assert not (out / ".tournament-checkpoint.pkl").exists() and (out / "report.html").exists()
    whole = play_tournament("millebornes", 2, ["random", "greedy", "aggressive"], games=12, seed=3)
    np.testing.assert_array_equal(resumed.outcomes, whole.outcomes)
    # A checkpoint of another tournament is refused, not mixed in.
    T.Checkpoint(out / ".tournament-checkpoint.pkl", {"other": 1}).save({})
    capsys.readouterr()
    with pytest.raises(typer.Exit) as stop:
        tournament_command(*args)
    assert stop.value.exit_code == 2 and "belongs to a different run" in capsys.readouterr().err

def test_progress_counts_every_game_once_and_a_resume_needs_no_progress(tmp_path, monkeypatch):
    import etappe.analysis.tournament as T

    args = ("millebornes", 2, ["random", "greedy", "aggressive"])
    calls = []
    whole = play_tournament(*args, games=5, seed=4, chunk_size=2, progress=calls.append)
    assert sum(calls) == 15 and all(c in (0, 1, 2) for c in calls)   # 3 pairings of 5 games, chunks of 2
    real_play_pair = T.play_pair

    def interrupted_at(n):
        played = {"n": 0}

        def play(*a, **k):
            played["n"] += 1
            if played["n"] == n:
                raise KeyboardInterrupt
            return real_play_pair(*a, **k)
        return play

    for resumed_calls in ([], None):   # a resume reporting progress, and one without a progress callback
        progress = resumed_calls.append if resumed_calls is not None else None
        checkpoint = tmp_path / f"checkpoint-{progress is None}.pkl"
        monkeypatch.setattr(T, "play_pair", interrupted_at(5))   # in the second pairing, after 4 chunks
        with pytest.raises(KeyboardInterrupt):
            play_tournament(*args, games=5, seed=4, chunk_size=2, checkpoint=checkpoint)
        monkeypatch.setattr(T, "play_pair", real_play_pair)
        resumed_from = []
        again = play_tournament(*args, games=5, seed=4, chunk_size=2, checkpoint=checkpoint, progress=progress,
                                on_resume=resumed_from.append)
        assert resumed_from == [7]   # 5 games of the first pairing, 2 of the second
        np.testing.assert_array_equal(again.outcomes, whole.outcomes)
        if resumed_calls is not None:
            assert sum(resumed_calls) == 15   # the 7 already played, once, and the 8 played now


def test_a_chunk_that_comes_back_incomplete_is_refused(monkeypatch):
    import etappe.analysis.tournament as T

    run = T.PairRun("millebornes", 2, "random", "greedy", seed=1)
    real_play = T.PairRun.play
    monkeypatch.setattr(T.PairRun, "play", lambda self, start, count: real_play(self, start, count).iloc[:-1])
    with pytest.raises(RuntimeError, match="a chunk of the pairing came back incomplete"):
        T.play_pair(run, 0, 3)


def test_elo_scale_constant():
    assert ELO_PER_NAT == pytest.approx(400 / math.log(10))


def test_skill_verdict_reads_the_intervals_not_the_point_estimates():
    from etappe.reports.tournament_report import skill_verdict

    def pairs(*intervals):
        return pd.DataFrame({"ci_low": [lo for lo, _ in intervals], "ci_high": [hi for _, hi in intervals]})

    # 76 : 24 is 200 Elo (400 log10(.76 / .24) = 200.2): a whole interval beyond it, either way round
    assert "matters a lot" in skill_verdict(pairs((0.45, 0.55), (0.80, 0.90)))
    assert "matters a lot" in skill_verdict(pairs((0.10, 0.20)))
    # 55 : 45 is 35 Elo: every interval inside it
    assert "matters little" in skill_verdict(pairs((0.46, 0.54), (0.47, 0.53)))
    # a point estimate near 50 % with a wide interval settles nothing (11 : 9 in 20 games)
    verdict = skill_verdict(pairs((0.34, 0.74)))
    assert "not settled" in verdict and "74 : 26" in verdict


def test_the_skill_heatmap_shows_each_cell_with_its_interval():
    # cell (row, column): the row's score against the column, its 95 % interval under it; "-" on the
    # diagonal; white text where the cell's colour is dark (more than 0.3 from an even score)
    from etappe.reports.tournament_report import skill_heatmap

    h2h = pd.DataFrame({"policy": ["A", "A", "B", "B", "C", "C"], "opponent": ["B", "C", "A", "C", "A", "B"],
                        "score": [0.9, 0.6, 0.1, 0.55, 0.4, 0.45], "ci_low": [0.8, 0.5, 0.05, 0.45, 0.3, 0.35],
                        "ci_high": [0.95, 0.7, 0.2, 0.65, 0.5, 0.55]})
    ax = skill_heatmap(h2h)
    image = ax.images[0]
    np.testing.assert_array_equal(image.get_array().filled(np.nan),
                                  [[np.nan, 0.9, 0.6], [0.1, np.nan, 0.55], [0.4, 0.45, np.nan]])
    assert image.get_clim() == (0.0, 1.0)  # 0.5 in the middle of the colour map: white
    cells = {(round(t.get_position()[1]), round(t.get_position()[0])): (t.get_text(), t.get_color()) for t in ax.texts}
    assert cells[(0, 0)] == cells[(1, 1)] == cells[(2, 2)] == ("-", "#777")
    assert cells[(0, 1)] == ("90.0 %\n[80.0, 95.0]", "white") and cells[(1, 0)] == ("10.0 %\n[5.0, 20.0]", "white")
    assert cells[(0, 2)] == ("60.0 %\n[50.0, 70.0]", "black") and cells[(2, 1)] == ("45.0 %\n[35.0, 55.0]", "black")
    assert [t.get_text() for t in ax.get_xticklabels()] == [t.get_text() for t in ax.get_yticklabels()] == ["A", "B", "C"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("opponent", "policy")
    colour_bar = ax.figure.axes[1]  # its scale in % like the cells
    assert colour_bar.yaxis.get_major_formatter()(0.5, 0) == "50 %"


def test_the_rating_chart_draws_each_rating_with_its_interval():
    from etappe.reports.tournament_report import rating_chart

    ratings = pd.DataFrame({"policy": ["greedy", "random"], "elo": [150.0, -150.0], "elo_low": [100.0, -220.0],
                            "elo_high": [210.0, -90.0]})
    ax = rating_chart(ratings)
    points, _, (bars,) = ax.containers[0].lines
    # the strongest at the top: drawn last, at the largest y
    assert list(points.get_xdata()) == [-150.0, 150.0] and list(points.get_ydata()) == [0, 1]
    assert [tuple(seg[:, 0]) for seg in bars.get_segments()] == [(-220.0, -90.0), (100.0, 210.0)]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["random", "greedy"]
    assert tuple(ax.lines[-1].get_xdata()) == (0.0, 0.0) and ax.get_xlabel() == "Elo"  # the mean (or anchor) at 0


# ------------------------------------------------------------------ what the report may claim
def _glance_of(md: str) -> str:
    return md.split("## At a glance")[1].split("## Skill matrix")[0]


@pytest.mark.parametrize("games", [1, 3])
def test_a_sweep_of_a_few_games_leaves_the_spread_unsettled(tmp_path, games):
    from by_hand import wilson

    tournament_command("stapop", "random,greedy", 2, games, 1, None, tmp_path / "t")
    pair = pd.read_csv(tmp_path / "t" / "pairings.csv").iloc[0]
    assert (pair.wins_a, pair.wins_b, pair.no_winner) == (0, games, 0)  # greedy won every game
    # with the virtual draw greedy's strength is (games + 1/2) / (1/2) times random's: 400 log10 3 = 191 Elo
    # for 1 game, 400 log10 7 = 338 for 3; Wilson's interval for games of games, [.207, 1] and [.438, 1],
    # holds 50 %, so these games do not even show greedy ahead
    spread = 400 * math.log10((games + 0.5) / 0.5)
    low = wilson(games, games)[0]
    glance = " ".join(_glance_of((tmp_path / "t" / "report.md").read_text()).split())
    assert (f"Spread {spread:.0f} Elo, set partly by the virtual draw that keeps the ratings finite: not settled by "
            f"{games} game{'s' if games > 1 else ''} a pairing, as greedy against random scores 100.0 % "
            f"[{100 * low:.1f}, 100.0], which does not show greedy ahead.") in glance
    assert "at least" not in glance


def test_a_sweep_bounds_the_spread_by_its_own_pairing_only():
    # y wins all 10 games: with the virtual draw y is 10.5 / 0.5 = 21 times as strong, 400 log10 21 = 529 Elo;
    # the games alone bound the spread by Wilson's low end for 10 of 10, 10 / (10 + z^2) = .7225, which is
    # 400 log10(.7225 / .2775) = 166 Elo: far below the 529 the report once called "at least"
    from by_hand import Z95

    low = 10 / (10 + Z95 ** 2)
    md = build_tournament_report(_result([[-1] * 10], policies=("x", "y")), bootstrap=0).to_markdown()
    glance = " ".join(_glance_of(md).split())
    assert (f"Spread {400 * math.log10(21):.0f} Elo, set partly by the virtual draw that keeps the ratings finite; "
            f"the games bound it from below: y against x alone puts it at {400 * math.log10(low / (1 - low)):.0f} "
            f"Elo or more (the low end of its score's 95 % interval, {100 * low:.1f} %).") in glance
    assert "Spread 529 Elo" in glance and "166 Elo or more" in glance and "at least" not in glance


def test_a_tournament_without_a_winner_has_no_scores_and_no_ratings(tmp_path, capsys):
    out = tmp_path / "t"
    (out).mkdir()
    (out / "ratings.csv").write_text("an earlier run's\n")
    res = tournament_command("stapop", "random,greedy,aggressive", 2, 4, 1, ["turn_cap=1"], out)
    printed = capsys.readouterr()
    assert (res.outcomes == 0).all()
    # 3 pairings of 4 games: 12 games, none with a winner
    assert ("warning: all 12 games hit the turn cap of 1 turn a hand or tied: none has a winner, so there are no "
            "scores or ratings.") in " ".join(printed.err.split())
    assert "no winner" in printed.out and "Bradley-Terry" not in printed.out and "[35" not in printed.out
    pairs = pd.read_csv(out / "pairings.csv")
    assert (pairs["no_winner"] == 4).all() and pairs[["score_a", "ci_low", "ci_high", "elo_diff"]].isna().all().all()
    assert not (out / "ratings.csv").exists()
    md = (out / "report.md").read_text()
    glance = " ".join(_glance_of(md).split())
    assert glance.startswith("No game had a winner (all 12 games hit the turn cap of 1 turn a hand or tied), so there "
                             "are no scores and no ratings")
    for claim in ("Strongest", "weakest", "Spread", "Elo", "Skill matters", "pairings are decided"):
        assert claim not in glance, claim
    assert "| random |  | no winner | no winner |" in md
    ratings = md.split("## Ratings")[1].split("## Pairings")[0]
    assert "No game had a winner" in ratings and "Bradley-Terry" not in ratings and "ratings.png" not in ratings
    assert "These ratings hold" not in md.split("## Caveat")[1]  # there are none
    with pytest.raises(ValueError, match="no game had a winner \\(12 games"):
        bradley_terry(res)


def test_games_without_a_winner_are_counted_at_a_glance_and_in_a_warning(tmp_path, monkeypatch, capsys):
    import etappe.analysis.tournament as T

    # the first pairing has no winner in any of its 4 games, the others one win for A in 4
    calls = iter([[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]])
    monkeypatch.setattr(T, "play_pair", lambda run, start, count: np.array(next(calls), np.int8))
    tournament_command("stapop", "random,greedy,aggressive", 2, 4, 1, ["turn_cap=50"], tmp_path / "t", bootstrap=0)
    err = " ".join(capsys.readouterr().err.split())
    # 4 + 3 + 3 = 10 of the 12 games without a winner
    assert ("warning: 10 of 12 games hit the turn cap of 50 turns a hand or tied: no winner; each counts half a point "
            "for either policy in the scores and ratings.") in err
    md = (tmp_path / "t" / "report.md").read_text()
    assert ("10 of 12 games (83.3 %) had no winner (they hit the turn cap of 50 turns a hand or tied); each counts half "
            "a point for either side, which pulls the scores and ratings towards even. 1 of 3 pairings had no game "
            "with a winner: they have no score, and count in the ratings only as drawn.") in " ".join(_glance_of(md).split())
    # random-greedy has no score; random-aggressive scores (1 + 3/2) / 4 = 62.5 %
    assert "| random |  | no winner | 62.5 % [" in md
    assert "A blank score: no game of that pairing had a winner" in md


def test_a_pairing_without_a_winner_keeps_a_fisher_wide_interval():
    # x-y: 20 games without a winner; x and y each beat z 15 times in 20. By symmetry theta_x = theta_y = a,
    # theta_z = -2a with sigma(3a) = 3/4; information of the log-strengths, by hand: off the diagonal
    # -20 p (1 - p), .25 for x-y and .1875 with z
    r = _result([[0] * 20, [1] * 15 + [-1] * 5, [1] * 15 + [-1] * 5])
    info = np.array([[8.75, -5.0, -3.75], [-5.0, 8.75, -3.75], [-3.75, -3.75, 7.5]])
    se = np.sqrt(np.diag(np.linalg.pinv(info)))
    boot = bradley_terry(r, bootstrap=30, seed=1).set_index("policy").loc[["x", "y", "z"]]
    assert boot.attrs["interval"] == "bootstrap+fisher"
    centre = np.array([1, 1, -2]) * math.log(3) / 3
    assert boot["log_strength"].to_numpy() == pytest.approx(centre, abs=1e-8)
    # the union holds the Fisher interval: x-y repeats itself in every resample and cannot show its spread
    assert (boot["ci_low"].to_numpy() <= centre - 1.959964 * se + 1e-6).all()
    assert (boot["ci_high"].to_numpy() >= centre + 1.959964 * se - 1e-6).all()


@pytest.mark.parametrize("width", [50, 80])
def test_the_printed_matrix_folds_long_policy_names_rather_than_cutting_them(monkeypatch, capsys, width):
    from etappe.cli import tournament_cmds

    r = _result([[1, -1, 0, 1], [1, 1, 1, -1], [-1, -1, -1, 1]],
                policies=("greedy:attack=2.5,target_leader=1", "aggressive", "random"))
    # the console reads COLUMNS at each print (setting its width instead left it fixed for later tests)
    monkeypatch.setenv("COLUMNS", str(width))
    assert tournament_cmds.console.width == width
    tournament_cmds.print_tournament(r, bradley_terry(r))
    out = capsys.readouterr().out
    assert "…" not in out
    # the first opponent's header, read down its column: the whole name, folded over lines
    rows = [line.split("┃") for line in out.split("┡")[0].splitlines() if line.startswith("┃")]
    assert "".join(row[2].strip() for row in rows) == "greedy:attack=2.5,target_leader=1"
