"""Sequential stopping: SPRT boundaries, decisions on synthetic streams, real duels."""
import math

import numpy as np
import pytest
import typer

from by_hand import wilson
from etappe.analysis.compare import game_metrics
from etappe.analysis.race import simulate
from etappe.analysis.race_summary import game_table
from etappe.analysis.sequential import (
    SequentialTest, Sprt, design_outcomes, paired_signs, policy_outcomes, sequential_compare,
)
from etappe.analysis.tournament import play_tournament
from etappe.cli.tournament_cmds import sequential_command


def const(value):
    return lambda start, count: np.full(count, value, np.int8)


def reference(stream: np.ndarray, alpha=0.05, beta=0.05, delta=0.05):
    """Game-by-game Sobel-Wald, written plainly: (decision, games used)."""
    up, low = math.log((1 - beta) / (alpha / 2)), math.log(beta / (1 - alpha / 2))
    steps = {"a": (math.log((0.5 + delta) / 0.5), math.log((0.5 - delta) / 0.5)),
             "b": (math.log((0.5 - delta) / 0.5), math.log((0.5 + delta) / 0.5))}
    llr = {"a": 0.0, "b": 0.0}
    done = {"a": False, "b": False}
    for i, s in enumerate(stream):
        if s == 0:
            continue
        for k in "ab":
            if done[k]:
                continue
            llr[k] += steps[k][0] if s > 0 else steps[k][1]
            if llr[k] >= up - 1e-12:
                return ("A" if k == "a" else "B"), i + 1
            if llr[k] <= low + 1e-12:
                done[k] = True
        if done["a"] and done["b"]:
            return "same", i + 1
    return "undecided", len(stream)


def test_boundaries_follow_wald():
    t = SequentialTest(alpha=0.05, beta=0.1, delta=0.05)
    a = t.test_a
    assert a.upper == pytest.approx(math.log(0.9 / 0.025))
    assert a.lower == pytest.approx(math.log(0.1 / 0.975))
    assert a.win_step == pytest.approx(math.log(1.1)) and a.loss_step == pytest.approx(math.log(0.9))
    assert t.test_b.win_step == pytest.approx(math.log(0.9))
    s = Sprt(0.45, 0.55, 0.05, 0.05)
    assert s.upper == pytest.approx(math.log(19)) and s.lower == pytest.approx(-math.log(19))
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 0\.5\)"):
        SequentialTest(delta=0.6)
    for alpha, beta, message in ((0.0, 0.05, r"alpha must lie in \(0, 1\), not 0\.0"),
                                 (1.0, 0.05, r"alpha must lie in \(0, 1\), not 1\.0"),
                                 (0.05, 0.0, r"beta must lie in \(0, 0\.5\), not 0\.0"),
                                 (0.05, 0.5, r"beta must lie in \(0, 0\.5\), not 0\.5")):
        with pytest.raises(ValueError, match=f"^{message}$"):
            SequentialTest(alpha=alpha, beta=beta)
    for p0, p1 in ((0.5, 0.5), (0.0, 0.5), (0.5, 1.0)):
        with pytest.raises(ValueError, match=r"p0 and p1 must differ and lie in \(0, 1\)"):
            Sprt(p0, p1, 0.05, 0.05)
    for alpha, beta in ((0.0, 0.05), (0.05, 1.0), (0.6, 0.4)):
        with pytest.raises(ValueError, match=r"alpha and beta must lie in \(0, 1\) with alpha \+ beta < 1"):
            Sprt(0.5, 0.6, alpha, beta)


@pytest.mark.parametrize("chunk", [1, 7, 19, 100, 1000])  # 19: the deciding 39th game opens the third chunk
def test_always_a_stops_where_the_formula_says(chunk):
    n = math.ceil(math.log(0.95 / 0.025) / math.log(1.1))     # 39
    assert n == 39
    r = sequential_compare(const(1), chunk=chunk)
    assert r.decision == "A" and r.games_used == n
    assert r.games_played == chunk * math.ceil(n / chunk)
    assert r.plus == n and r.minus == 0 and r.q == 1.0 and r.q_low > 0.9
    b = sequential_compare(const(-1), chunk=chunk, labels=("x", "y"))
    assert b.decision == "B" and b.games_used == n and b.verdict.startswith("y wins more often")


def test_an_even_stream_is_decided_same():
    def alt(start, count):
        return np.where(np.arange(start, start + count) % 2 == 0, 1, -1)

    r = sequential_compare(alt, chunk=64)
    assert r.decision == "same"
    assert (r.decision, r.games_used) == reference(alt(0, 5000))
    # by hand: after 2m games each LLR is m ln(1.1 * 0.9) = m ln .99, and the lower bound is
    # ln(.05 / .975) = -2.97041. Test B (ln .9 lower after odd games) gets there after game
    # 2 * 286 + 1 = 573, test A (lower after even games) at m = ceil(2.97041 / .0100503) = 296
    assert r.games_used == 592
    assert r.plus - r.minus in (0, 1) and r.llr_a <= r.lower + 1e-9 and r.llr_b <= r.lower + 1e-9


def test_zeros_are_skipped_but_counted_as_games():
    r = sequential_compare(lambda s, c: np.where(np.arange(s, s + c) % 3 == 2, 0, 1), chunk=10)
    assert r.decision == "A" and r.plus == 39 and r.zeros == 19 and r.games_used == 58


def test_games_where_the_metric_is_undefined_are_not_called_even():
    # games 0, 3, 6, ...: the metric missing in one design (NaN); 1, 4, ...: equal (0); 2, 5, ...: A ahead
    def stream(s, c):
        g = np.arange(s, s + c) % 3
        diffs = np.where(g == 0, np.nan, np.where(g == 1, 0.0, 1.0))
        return paired_signs(diffs, np.zeros(c))
    r = sequential_compare(stream, chunk=10)
    # the 39th A-ahead game decides (as in the test above): game 116, so 117 games used, 39 of each kind
    assert (r.decision, r.games_used, r.plus, r.zeros, r.undefined) == ("A", 117, 39, 39, 39)
    assert ("not measured", "39 (the metric is undefined in the game of either)") in r.summary_rows()
    # undefined in every game of the first chunk: stopped there, not played to the cap of 3,000 games
    nothing = sequential_compare(lambda s, c: paired_signs(np.full(c, np.nan), np.zeros(c)), chunk=10,
                                 max_games=3000)
    assert (nothing.zeros, nothing.undefined, nothing.games_played) == (0, 10, 10)
    assert nothing.verdict == ("undecided after 10 games: the metric is undefined in every one of them, so the test "
                               "has nothing to read; stopped instead of playing to the cap")
    # no game to take a share or a mean of: said in words, not "nan [nan, nan]"
    rows = dict(nothing.summary_rows())
    assert rows["share of uneven games to A (q)"] == "no uneven game"
    assert rows["mean difference A - B per game"] == "not measured: too few pairs"


@pytest.mark.parametrize("q,seed", [(0.5, 1), (0.54, 2), (0.47, 3), (0.6, 4)])
def test_chunked_scan_equals_the_plain_reference(q, seed):
    rng = np.random.default_rng(seed)
    stream = rng.choice([1, -1, 0], p=[q * 0.9, (1 - q) * 0.9, 0.1], size=4000).astype(np.int8)
    expect = reference(stream)
    for chunk in (1, 37, 500, 4000):
        r = sequential_compare(lambda s, c: stream[s:s + c], chunk=chunk, max_games=4000)
        assert (r.decision, r.games_used) == expect


def test_counts_and_share_of_a_mixed_stream_are_those_of_the_games_used():
    # signs of any size (a difference of points, say): only their sign counts; q and its Wilson interval
    # over the uneven games used (Wilson as the report tests write it out)
    from test_report_recompute import wilson

    rng = np.random.default_rng(5)
    stream = rng.choice([3, 1, -2, -1, 0], p=[0.3, 0.25, 0.2, 0.15, 0.1], size=4000)
    signs = np.sign(stream)
    decision, used = reference(signs)
    steps = []
    r = sequential_compare(lambda s, c: stream[s:s + c], chunk=64, max_games=4000, progress=steps.append)
    plus, minus = int((signs[:used] > 0).sum()), int((signs[:used] < 0).sum())
    assert (r.decision, r.games_used, r.plus, r.minus, r.zeros) == (decision, used, plus, minus, used - plus - minus)
    assert (r.q, r.q_low, r.q_high) == pytest.approx((plus / (plus + minus), *wilson(plus, plus + minus)))
    assert r.mean_diff == pytest.approx(signs[:used].mean())  # without differences, the signs stand for them
    # the progress callback hears of every chunk played
    assert steps == [64] * (r.games_played // 64) and r.games_played == 64 * math.ceil(used / 64)


def test_an_outcome_function_that_returns_other_games_is_refused():
    with pytest.raises(ValueError, match=r"outcomes\(0, 10\) returned 9 games"):
        sequential_compare(lambda s, c: np.ones(c - 1, np.int8), chunk=10)


@pytest.mark.parametrize("chunk", [1, 10, 29, 30, 60, 300])
def test_a_test_that_accepted_its_null_stays_there_across_chunks(chunk):
    # 29 games B ahead, then A ahead in every game. Test A (q = .55 against 1/2) falls to its lower bound
    # ln(.05 / .975) = -2.970 at the 29th game (29 ln .9 = -3.055; 28 ln .9 = -2.950) and accepts that A is
    # not better: it stays there. Test B climbs to 29 ln 1.1 = 2.764, below its upper bound ln(.95 / .025)
    # = 3.638, then falls by ln .9 a game and accepts its null after m A-ahead games, 2.764 + m ln .9 <=
    # -2.970: m = 55. Both nulls accepted: "same" after 29 + 55 = 84 games. Had test A gone on, it would
    # have reached its upper bound (A better) after 71 more.
    stream = np.r_[np.full(29, -1), np.ones(300)].astype(np.int8)
    assert reference(stream) == ("same", 84)
    r = sequential_compare(lambda s, c: stream[s:s + c], chunk=chunk, max_games=len(stream))
    assert (r.decision, r.games_used, r.plus, r.minus) == ("same", 84, 55, 29)
    assert r.llr_a == pytest.approx(29 * math.log(0.9)) and r.llr_b == pytest.approx(29 * math.log(1.1) + 55 * math.log(0.9))
    # "same" rules out a difference of delta or more, not every difference: the verdict says so, with q = 55 / 84
    low, high = wilson(55, 84)
    assert r.verdict == (f"no difference of 0.05 or more in q, the share of uneven games A is ahead in (a smaller one "
                         f"is not ruled out: q 0.6548 [{low:.4f}, {high:.4f}]): decided after 84 games")


def test_cap_gives_undecided():
    def alt(start, count):
        return np.where(np.arange(start, start + count) % 2 == 0, 1, -1)

    r = sequential_compare(alt, chunk=50, max_games=120)
    assert r.decision == "undecided" and not r.decided and r.games_used == r.games_played == 120
    assert r.verdict == "undecided after 120 games (cap reached)"
    # no decision, so no "games after the decision are not used"
    assert ("games played", "120") in r.summary_rows()
    even = sequential_compare(const(0), chunk=50, max_games=120)
    assert even.verdict == ("undecided after 120 games (cap reached): no game had a difference (every game even "
                            "or undefined), and the test reads only the games where A or B is ahead")
    # 120 differences of 0 give no spread: no interval (not the point [0, 0]), and no share of uneven games
    rows = dict(even.summary_rows())
    assert rows["mean difference A - B per game"] == "+0 (the same in all 120 pairs: no interval)"
    assert rows["share of uneven games to A (q)"] == "no uneven game"


def test_error_rates_on_simulated_streams():
    """Design values alpha = beta = delta = 0.05: at q = 1/2 each side is declared better
    with probability at most (alpha / 2) / (1 - beta) = 2.6 %, and at q = 0.55 "A" comes
    with probability about 1 - beta = 95 %. 1000 null runs: a side's share has se 0.5 %,
    so 4 % is 3 se above 2.5 % (a test run at alpha on each side, 5 % a side, fails);
    400 runs at q = 0.55: se 1.1 %, 91 % is 3.5 se below 95 %."""
    rng = np.random.default_rng(11)

    def coin(q):
        return lambda s, c: np.where(rng.random(c) < q, 1, -1)

    null = [sequential_compare(coin(0.5), chunk=2000, max_games=100_000).decision for _ in range(1000)]
    alt = [sequential_compare(coin(0.55), chunk=2000, max_games=100_000).decision for _ in range(400)]
    assert "undecided" not in null + alt
    assert null.count("A") <= 0.04 * len(null) and null.count("B") <= 0.04 * len(null)
    assert alt.count("A") >= 0.91 * len(alt)


def test_paired_signs_and_reported_difference():
    signs, d = paired_signs([3, 1, np.nan, 2], [1, 1, 5, 4])
    assert signs.tolist() == [1, 0, 0, -1] and np.isnan(d[2])
    r = sequential_compare(lambda s, c: (np.ones(c, np.int8), np.full(c, 2.0)), chunk=10)
    assert r.mean_diff == 2.0


def test_reported_difference_of_varying_games_is_the_t_interval_of_the_games_used():
    # A ahead in every game, by 1 and 3 in turn: the test stops where Wald's bound says (reference), and
    # the mean difference is that of the games used, with Student's t interval
    from scipy import stats as st

    r = sequential_compare(lambda start, count: (np.ones(count, np.int8), 1.0 + 2 * ((start + np.arange(count)) % 2)),
                           chunk=7)
    n = reference(np.ones(1000))[1]
    d = 1.0 + 2 * (np.arange(n) % 2)
    half = st.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)
    assert r.games_used == n and r.mean_diff == pytest.approx(d.mean())
    assert (r.diff_low, r.diff_high) == pytest.approx((d.mean() - half, d.mean() + half))


@pytest.mark.parametrize("kwargs, message", [({"chunk": 0}, "chunk must be 1 to"), ({"max_games": 0}, "max_games must be 1 to"),
                                             ({"chunk": 2.5}, "chunk must be a whole number")])
def test_chunk_and_cap_must_be_whole_numbers_of_games(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        sequential_compare(const(1), **kwargs)


def test_policy_duel_uses_the_tournament_games():
    fn = policy_outcomes("millebornes", 2, "greedy", "random", seed=3)
    t = play_tournament("millebornes", 2, ["greedy", "random"], games=20, seed=3)
    assert fn(0, 20).tolist() == t.outcomes[0].tolist()
    r = sequential_compare(fn, chunk=50, max_games=400)
    assert r.decision == "A" and r.games_used < 100


def test_design_duel_signs_match_the_records():
    fn = design_outcomes("stapop", "touring", 4, ["greedy"], seed=5, metric="game_turns")
    signs, diffs = fn(0, 15)
    per = []
    for deck in ("stapop", "touring"):
        df = simulate(deck, 4, 15, ["greedy"], seed=5)
        per.append(game_metrics(game_table(df, df.attrs))["game_turns"].to_numpy(float))
    assert diffs.tolist() == (per[0] - per[1]).tolist()
    assert signs.tolist() == np.sign(per[0] - per[1]).astype(int).tolist()
    # four players, each a side of their own in both designs (neither has teams at 4): won_s0 to won_s3
    with pytest.raises(ValueError, match=r"^unknown metric 'nonsense'; one of: game_turns, .*, dead_share, or won_s0 "
                                         r"to won_s3 \(side 0 won, \.\.\.: 4 sides at 4 players\)$"):
        design_outcomes("stapop", "touring", 4, metric="nonsense")
    # the Python API words the verdict as the sign test it is, as the CLI does, not as wins
    result = sequential_compare(fn, chunk=15, max_games=30, labels=("stapop", "touring"))
    assert result.what == "has the higher game_turns in more games"


def test_sequential_command_both_modes(capsys):
    r = sequential_command("millebornes", "greedy,random", 2, 1, chunk=40, max_games=200)
    assert r.decision == "A" and "greedy wins more often" in capsys.readouterr().out
    d = sequential_command("stapop", "greedy", 4, 1, deck_b="touring", metric="game_turns", chunk=100, max_games=300)
    assert d.decided and d.labels == ("Stap op", "Touring (reconstructed)")  # by title, as the reports name them
    with pytest.raises(typer.Exit) as stop:
        sequential_command("stapop", "greedy,random,bold", 2, 1)
    assert stop.value.exit_code == 2  # refused (typer.Exit(0) would be a normal end)
    assert "a sequential policy comparison needs exactly two policies" in capsys.readouterr().err


def test_the_mean_difference_of_who_won_has_tango_s_interval():
    # Fagerland, Lydersen and Laake's example (test_stats): 21 games, A ahead in 1, B in 7, 13 even, of a
    # 0-or-1 metric (binary): the mean difference -6/21 with Tango's published interval (-0.517, -0.026),
    # as compare's paired table gives it, not Student's t of the signs on 7 degrees of freedom ([-0.575, 0.004])
    signs = np.array([1] + [-1] * 7 + [0] * 13, dtype=np.int8)

    def who_won(start, count):
        return signs[start:start + count]

    who_won.binary = True
    r = sequential_compare(who_won, chunk=21, max_games=21)
    assert r.decision == "undecided" and r.mean_diff == pytest.approx(-6 / 21)
    assert (r.diff_low, r.diff_high) == pytest.approx((-0.517, -0.026), abs=5e-4)
    t = sequential_compare(lambda start, count: signs[start:start + count], chunk=21, max_games=21)
    assert (t.diff_low, t.diff_high) != pytest.approx((r.diff_low, r.diff_high), abs=5e-3)


def test_the_binary_metrics_are_the_rates_of_the_paired_table():
    from etappe.analysis.compare import PAIRED_METRICS
    from etappe.analysis.sequential import BINARY_METRICS
    assert set(BINARY_METRICS) == {key for key, _, unit in PAIRED_METRICS if unit == "rate"}

