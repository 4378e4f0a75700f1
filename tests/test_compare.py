"""Paired comparison of two runs on the same seeds (hand-worked differences)."""
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from etappe.analysis.compare import (
    design_differences,
    design_paired_table,
    PairedComparison,
    card_comparison,
    compare_tables,
    game_metrics,
    headline,
    lacks,
    paired_table,
    seat_bias_strength,
)
from etappe.analysis.race_summary import game_table, summarize
from etappe.analysis.stats import paired_proportion_difference
from by_hand import clustered_wilson, newcombe_p
from etappe.cli.report_cmds import compare_summaries

from test_race_summary import make_records, mb_hands, mb_meta, toy_hands, toy_meta

# Student's t 97.5 % points by degrees of freedom (tables): intervals of means use them
T975 = {1: 12.706205, 2: 4.302653, 3: 3.182446}


def t3_two_sided_p(t):
    """Two-sided p of Student's t with 3 degrees of freedom, from its closed-form
    distribution function F(t) = 1/2 + (u / (1 + u^2) + atan u) / pi, u = t / sqrt 3."""
    u = abs(t) / math.sqrt(3)
    return 2 * (0.5 - (u / (1 + u * u) + math.atan(u)) / math.pi)


def b_hands():
    """Run B on the same four game indices as the toy run A."""
    a = toy_hands()
    b = [dict(h) for h in a]
    b[0].update(turns=6, winner_side=1, trip_side=1, total=[60, 100], max_deficit=[10, 20])
    b[1].update(turns=10)
    b[2].update(turns=10, capped=0)
    b[3].update(turns=16, winner_side=0, trip_side=0, total=[100, 30], max_deficit=[5, 0])
    return b


@pytest.fixture
def runs():
    meta = toy_meta()
    return make_records(toy_hands(), meta), make_records(b_hands(), meta)


def test_paired_differences_by_hand(runs):
    a, b = runs
    comp = compare_tables(game_table(a, a.attrs), game_table(b, b.attrs))
    t = paired_table(comp).set_index("key")
    # turns: d = [10-6, 12-10, 20-10, 8-16] = [4, 2, 10, -8]: mean 2, var 168/3 = 56
    se = math.sqrt(56) / 2
    r = t.loc["game_turns"]
    assert (r["n"], r["mean_a"], r["mean_b"], r["diff"]) == (4, 12.5, 10.5, 2.0)
    assert r["sd"] == pytest.approx(math.sqrt(56))
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((2 - T975[3] * se, 2 + T975[3] * se), abs=1e-5)
    assert r["p_value"] == pytest.approx(t3_two_sided_p(2 / se), rel=1e-6)
    # first player won (games with a winner): A [1, 1, -, 1], B [0, 1, -, 0]: d = [1, 0, 1], var 1/3
    r = t.loc["first_position_won"]
    assert r["n"] == 3 and r["diff"] == pytest.approx(2 / 3) and r["sd"] == pytest.approx(math.sqrt(1 / 3))
    # a rate of 0 or 1 a game: from the discordant games, 2 where only A's first player won and none the
    # other way, Tango's interval and McNemar's exact p: both discordant games one way, 2 x (1/2)^2
    exact = paired_proportion_difference(3, 2, 0)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((exact["ci_low"], exact["ci_high"]))
    assert r["p_value"] == pytest.approx(0.5)
    # capped: A [0, 0, 1, 0], B all 0: mean .25, sd .5
    r = t.loc["capped"]
    assert r["diff"] == 0.25 and r["sd"] == pytest.approx(0.5)
    # no winner in game 2 of both: d = 0 everywhere, so nothing to test (no p-value, not in Holm's m)
    assert t.loc["no_winner", "diff"] == 0 and np.isnan(t.loc["no_winner", "p_value"])
    # winner's deficit: A [10, 25, -, 0], B [20, 25, -, 5]: the pair with no winner is left out
    r = t.loc["winner_deficit"]
    assert r["n"] == 3 and r["diff"] == -5 and r["sd"] == pytest.approx(5.0)
    # final gap 40, 20, 70 in both
    assert t.loc["final_gap", "diff"] == 0
    # only game 0 has turns lost to hazards and a winner: A's winner was the side least hit, B's not
    r = t.loc["hazard_decided"]
    assert (r["n"], r["mean_a"], r["mean_b"]) == (1, 1.0, 0.0)
    # per side win rates: side 0 A [1, 0, 0, 0], B [0, 0, 0, 1]
    r = t.loc["won_s0"]
    assert r["diff"] == 0 and r["mean_a"] == 0.25 and r["metric"].startswith("win rate of side 0 (all games")


def test_holm_across_rows():
    # d = 1 in every game (the sign test: p = 2 / 2^4), d = 0 in every game (no test),
    # d = [2, 3, 1, 2] (t = 2 / se, 3 degrees of freedom)
    a = pd.DataFrame({"x": [1.0, 1, 1, 1], "y": [0.0, 0, 0, 0], "w": [3.0, 5, 4, 6]})
    b = pd.DataFrame({"x": [0.0, 0, 0, 0], "y": [0.0, 0, 0, 0], "w": [1.0, 2, 3, 4]})
    comp = PairedComparison()
    comp.add_pairs(a, b)
    t = paired_table(comp).set_index("key")
    p_w = t3_two_sided_p(2 / (math.sqrt(2 / 3) / 2))
    assert t.loc["w", "p_value"] == pytest.approx(p_w, rel=1e-6)
    assert t.loc["x", "p_value"] == 0.125 and p_w < 0.125 / 2
    # y cannot differ and is left out: m = 2, sorted w * 2, then x * 1 (no lower than w's)
    assert t.loc["w", "p_holm"] == pytest.approx(2 * p_w, rel=1e-6) and t.loc["x", "p_holm"] == 0.125
    assert np.isnan(t.loc["y", "p_value"]) and np.isnan(t.loc["y", "p_holm"])
    assert list(t["reject"]) == [False, False, 2 * p_w <= 0.05]
    # the metrics shown decide m: w alone is not multiplied
    alone = paired_table(comp, metrics=["w"]).set_index("key")
    assert alone.loc["w", "p_holm"] == pytest.approx(p_w, rel=1e-6)


def test_intervals_of_rates_and_shares_are_clipped_to_where_a_difference_can_be():
    # 3 games, d = [1, -1, 0] in each metric: mean 0, sd 1; two games differ, so Student's t takes 1 degree
    # of freedom (the spread rests on them), 0 -+ 12.7062 / sqrt 3 = -+7.336; a difference of two rates or
    # shares lies in [-1, 1]
    a = pd.DataFrame({"first_position_won": [1.0, 0, 1], "dead_share": [1.0, 0, 0.5], "lead_changes": [3.0, 1, 2]})
    b = pd.DataFrame({"first_position_won": [0.0, 1, 1], "dead_share": [0.0, 1, 0.5], "lead_changes": [2.0, 2, 2]})
    comp = PairedComparison()
    comp.add_pairs(a, b)
    t = paired_table(comp, fair=0.5).set_index("key")
    half = T975[1] / math.sqrt(3)
    assert half == pytest.approx(7.336, abs=1e-3)
    # the first player's distance from 1/2: A and B both 2/3, g = d: clipped as well
    for key in ("first_player_gap", "dead_share"):
        assert (t.loc[key, "ci_low"], t.loc[key, "ci_high"]) == (-1.0, 1.0)
    # the first player won, 0 or 1 a game: one discordant game each way, Tango's interval, inside [-1, 1]
    exact = paired_proportion_difference(3, 1, 1)
    assert (t.loc["first_position_won", "ci_low"], t.loc["first_position_won", "ci_high"]) == pytest.approx(
        (exact["ci_low"], exact["ci_high"])) and -1 < exact["ci_low"] < 0 < exact["ci_high"] < 1
    # a count is not bounded: its interval stays Student's
    assert (t.loc["lead_changes", "ci_low"], t.loc["lead_changes", "ci_high"]) == pytest.approx((-half, half))


def _pairs(a, b):
    comp = PairedComparison()
    comp.add_pairs(pd.DataFrame({"first_position_won": a}, dtype=float),
                   pd.DataFrame({"first_position_won": b}, dtype=float))
    return paired_table(comp, fair=0.5).set_index("key").loc["first_player_gap"]


def test_first_player_gap_opposite_sides():
    # A .75, B .25: both .25 from 1/2; g = (a - .5) + (b - .5) = [0, 1, 0, -1]: mean 0, var 2/3
    r = _pairs([1, 1, 1, 0], [0, 1, 0, 0])
    assert r["diff"] == pytest.approx(0.0, abs=1e-12)
    assert r["sd"] == pytest.approx(math.sqrt(2 / 3))
    assert (r["mean_a"], r["mean_b"]) == pytest.approx((0.25, 0.25))


def test_first_player_gap_same_side():
    # A 1 in every game (above 1/2 for sure), B .25: g = (a - .5) + (b - .5) = [0, 0, 1, 0]: mean .25, sd .5,
    # t interval .25 -+ t_3 .25 = [-0.546, 1.046], p = .391 (docs/statistics.md's check)
    r = _pairs([1, 1, 1, 1], [0, 0, 1, 0])
    assert r["diff"] == pytest.approx(0.25) and r["sd"] == pytest.approx(0.5)
    assert r["ci_low"] == pytest.approx(0.25 - T975[3] * 0.25, abs=1e-5) and r["ci_high"] == 1.0
    assert r["p_value"] == pytest.approx(0.391, abs=1e-3)


def test_first_player_gap_takes_either_side_of_the_fair_share_where_a_design_is_near_it():
    # A .75 and B .5 over 4 games: neither mean's own interval leaves out 1/2 (A: .75 -+ t_3 .25), so each
    # may lie on either side of it. Signs (+, +): g = a - b = [0, 1, 0, 0], mean .25, sd .5, p .391;
    # (+, -): g = (a - .5) + (b - .5) = [1, 0, 1, -1], mean .25, sd sqrt(2.75 / 3), t = .25 / .4787 = .522,
    # p = .638; (-, +) and (-, -) mirror these at -.25. The row: the estimated signs' mean and sd (B on the
    # share counts as above it), the union of the four intervals, -.25 -+ t_3 .4787 = [-1.773, 1.773]
    # clipped to [-1, 1], and the largest p: nothing here names either design the more biased.
    r = _pairs([1, 1, 1, 0], [1, 0, 1, 0])
    assert r["diff"] == pytest.approx(0.25) and r["sd"] == pytest.approx(0.5)
    assert (r["ci_low"], r["ci_high"]) == (-1.0, 1.0)
    assert r["p_value"] == pytest.approx(0.638, abs=1e-3)


def test_pairing_across_uneven_chunks(runs):
    a, b = runs
    whole = paired_table(compare_tables(game_table(a, a.attrs), game_table(b, b.attrs)))
    comp = PairedComparison()
    comp.add_a(game_table(a.iloc[:3], a.attrs))
    comp.add_b(game_table(b.iloc[:1], b.attrs))
    assert comp.unpaired == 2
    comp.add_b(game_table(b.iloc[1:], b.attrs))
    comp.add_a(game_table(a.iloc[3:], a.attrs))
    assert comp.unpaired == 0
    pd.testing.assert_frame_equal(paired_table(comp), whole)


def test_games_the_other_run_lacks_are_counted_not_held(runs):
    # B ends after games 0 and 1; A goes on to 2 and 3, which can never pair
    a, b = runs
    short_b = b[b["game"] < 2]
    chunks_a = [a[a["game"] == g] for g in sorted(a["game"].unique())]
    comp = compare_summaries(chunks_a, a.attrs, [short_b], b.attrs)[4]
    assert comp.unpaired == 2 and len(comp.pending_a) == 0
    first_two = compare_tables(game_table(a[a["game"] < 2], a.attrs), game_table(short_b, b.attrs))
    pd.testing.assert_frame_equal(paired_table(comp), paired_table(first_two))
    # games of B still waiting when A ends are dropped too, and a later game of B is only counted
    comp = PairedComparison()
    comp.add_b(game_table(b[b["game"] == 1], b.attrs))
    comp.close("a")
    assert comp.unpaired == 1 and len(comp.pending_b) == 0
    comp.add_b(game_table(b[b["game"] == 2], b.attrs))
    assert comp.unpaired == 2 and len(comp.pending_b) == 0


def test_compare_summaries_lockstep(runs):
    a, b = runs
    chunks_a = [a.iloc[:1], a.iloc[1:]]
    chunks_b = [b.iloc[:3], b.iloc[3:4], b.iloc[4:]]
    sa, ma, sb, mb, comp = compare_summaries(chunks_a, None, chunks_b, None)
    assert sa.games == 4 and sb.games == 4 and comp.unpaired == 0
    assert ma["design"] == "toy"
    t = paired_table(comp).set_index("key")
    assert t.loc["game_turns", "diff"] == 2.0


def test_compare_summaries_reads_the_run_that_is_behind_in_games(runs):
    # A's records come a game a chunk, B's two games a chunk (as Mille Bornes' rows, a hand
    # each, against Stap op's, a game each): the next chunk read is always the lagging
    # run's, so the games waiting for their pair stay within one chunk.
    a, b = runs
    read = []

    def logged(name, chunks):
        for chunk in chunks:
            read.append(f"{name}{''.join(str(g) for g in chunk['game'].unique())}")
            yield chunk

    a_chunks = [a[a["game"] == g] for g in sorted(a["game"].unique())]
    b_chunks = [b[b["game"].isin(games)] for games in ([0, 1], [2, 3])]
    sa, _, sb, _, comp = compare_summaries(logged("a", a_chunks), a.attrs, logged("b", b_chunks), b.attrs)
    assert read == ["a0", "b01", "a1", "a2", "b23", "a3"]  # zip would read a0 b01 a1 b23 a2 a3
    assert sa.games == sb.games == 4 and comp.unpaired == 0


def test_card_comparison_unpaired(runs):
    a, b = runs
    b = b.copy()
    b["s0_go_played"] -= b["s0_go_played"]  # B's side 0 never plays go ...
    b["s0_go_discarded"] += a["s0_go_played"]  # ... and discards it instead
    cc = card_comparison(summarize(a), summarize(b))
    go = cc[(cc["card"] == "go") & (cc["rate"] == "played share")].iloc[0]
    # A: 8 / 13; B: side 1 only, 1 + 1 + 2 = 4 / 13
    assert (go["a"], go["b"]) == pytest.approx((8 / 13, 4 / 13))
    assert go["diff"] == pytest.approx(4 / 13) and go["method"].startswith("unpaired")
    assert go["n_a"] == 13 and go["n_b"] == 13
    # Each share clustered by game (4 games of go cards drawn 5, 5, 1, 2): A plays 3, 3, 0, 2, variance
    # .0077495, effective size 30.5421 * .379293 (t with 3 degrees of freedom), Wilson [.342181, .831123];
    # B plays 1, 1, 0, 2: residuals -.538462, -.538462, -.307692, 1.384615, variance 2.591716 / 169 * 4 / 3
    # = .020448, effective size 10.41755 * .379293, Wilson [.064860, .740120]. Independent runs: Newcombe's
    # combination, 4/13 - sqrt(.273204^2 + .432428^2), 4/13 + sqrt(.215738^2 + .242832^2); p where that
    # interval reaches 0 (4 games a run), so that p < .05 exactly where the 95 % interval leaves 0 out
    assert (go["ci_low"], go["ci_high"]) == pytest.approx((-0.20381, 0.63252), abs=1e-4)
    p_go = newcombe_p(4 / 13, lambda z: (8 / 13, *clustered_wilson(8 / 13, 0.0077495, 4, z)),
                      lambda z: (4 / 13, *clustered_wilson(4 / 13, 0.020448, 4, z)))
    assert go["p_value"] == pytest.approx(p_go, abs=1e-4) and go["p_value"] > 0.05
    dead = cc[(cc["card"] == "go") & (cc["rate"] == "dead share")].iloc[0]  # 1 - played share: the mirror
    assert (dead["diff"], dead["ci_low"], dead["ci_high"]) == pytest.approx((-4 / 13, -0.63252, 0.20381), abs=1e-4)
    # Holm over the 2 cards, not the 4 rows: a dead-share row is the same test as its played-share row
    p = cc[cc["rate"] == "played share"].set_index("card")["p_value"]
    first, second = sorted(p)
    expect = {k: min(1.0, 2 * first) if v == first else max(min(1.0, 2 * first), second) for k, v in p.items()}
    for rate in ("played share", "dead share"):
        got = cc[cc["rate"] == rate].set_index("card")
        assert got["p_value"].to_dict() == pytest.approx(p.to_dict())
        assert got["p_holm"].to_dict() == pytest.approx(expect)


def test_card_comparison_lists_the_cards_of_one_design_only(runs):
    a, _ = runs
    other = toy_meta()
    other["cards"] = [{"key": "go", "name": "Go", "role": "go"}, {"key": "crash", "name": "Crash", "role": "hazard"}]
    b = a.rename(columns=lambda c: c.replace("_flat_", "_crash_"))
    b.attrs.update(other)
    cc = card_comparison(summarize(a), summarize(b))
    assert set(cc["card"]) == {"go"} and cc.attrs["only_a"] == ["flat"] and cc.attrs["only_b"] == ["crash"]


def role_hands():
    """The toy games with another deck: roll (a go card) as A's go, but side 0 discards the rolls
    it drew to play; two hazards, crash (as A's flat, but side 1 discards it) and puncture."""
    cards = [
        {"roll": {"drawn": [3, 2], "played": [0, 1], "discarded": [2, 1], "in_hand": [1, 0]},
         "crash": {"drawn": [1, 0], "played": [1, 0]}, "puncture": {"drawn": [0, 2], "played": [0, 2]}},
        {"roll": {"drawn": [2, 3], "played": [0, 1], "discarded": [2, 0], "in_hand": [0, 2]},
         "crash": {"drawn": [1, 0], "discarded": [1, 0]}, "puncture": {"drawn": [1, 0], "discarded": [1, 0]}},
        {"roll": {"drawn": [1, 0], "in_hand": [1, 0]},
         "crash": {"drawn": [0, 2], "discarded": [0, 2]}, "puncture": {"drawn": [0, 1], "in_hand": [0, 1]}},
        {"roll": {"drawn": [0, 2], "played": [0, 2]}, "puncture": {"drawn": [1, 1], "played": [1, 0], "in_hand": [0, 1]}},
    ]
    meta = toy_meta()
    meta["cards"] = [{"key": "roll", "name": "Roll", "role": "go"}, {"key": "crash", "name": "Crash", "role": "hazard"},
                     {"key": "puncture", "name": "Puncture", "role": "hazard"}]
    return make_records([dict(h, cards=c) for h, c in zip(toy_hands(), cards)], meta)


def test_card_comparison_by_role_when_no_common_keys(runs):
    a, _ = runs
    cc = card_comparison(summarize(a), summarize(role_hands()))
    assert "role" in cc and set(cc["role"]) == {"go", "hazard"}
    assert set(cc["method"]) == {"unpaired, clustered by game, pooled by role"}
    cc = cc.set_index(["role", "rate"])
    # go: A's go and B's roll, drawn 5, 5, 1, 2 a game, A plays 3, 3, 0, 2 and B 1, 1, 0, 2: the shares of
    # test_card_comparison_unpaired, with its interval and p
    go = cc.loc[("go", "played share")]
    assert (go["a"], go["b"], go["diff"], go["n_a"], go["n_b"]) == pytest.approx((8 / 13, 4 / 13, 4 / 13, 13, 13))
    assert (go["ci_low"], go["ci_high"]) == pytest.approx((-0.20381, 0.63252), abs=1e-4)
    p_go = newcombe_p(4 / 13, lambda z: (8 / 13, *clustered_wilson(8 / 13, 0.0077495, 4, z)),
                      lambda z: (4 / 13, *clustered_wilson(4 / 13, 0.020448, 4, z)))
    # hazard, the role's cards summed in each game (drawn y, played x): A (flat) (1, 1), (1, 0), (2, 2),
    # (0, 0): R = 3/4, residuals x - R y = .25, -.75, .5, 0, variance 4/3 * .875 / 4^2 = .0729167,
    # effective size .1875 / .0729167 * .379293 (t with 3 degrees of freedom) = .975323, Wilson
    # [.115551, .985691]. B (crash + puncture, played together in game 0) (3, 3), (2, 0), (3, 0), (2, 1):
    # R = 2/5, residuals 1.8, -.8, -1.2, .2, variance 4/3 * 5.36 / 10^2 = .0714667, effective size
    # .24 / .0714667 * .379293 = 1.273743, Wilson [.043964, .906234]. Newcombe's combination:
    # .35 - sqrt(.634449^2 + .506234^2), .35 + sqrt(.235691^2 + .356036^2); the pooled counts 3/4 vs 4/10,
    # as if every card were independent, would give [-.18337, .65907]
    hz = cc.loc[("hazard", "played share")]
    assert (hz["a"], hz["b"], hz["diff"], hz["n_a"], hz["n_b"]) == pytest.approx((3 / 4, 2 / 5, 0.35, 4, 10))
    assert (hz["ci_low"], hz["ci_high"]) == pytest.approx((-0.46166, 0.77698), abs=1e-5)
    # p where that interval reaches 0
    p_hz = newcombe_p(0.35, lambda z: (3 / 4, *clustered_wilson(3 / 4, 0.0729167, 4, z)),
                      lambda z: (2 / 5, *clustered_wilson(2 / 5, 0.0714667, 4, z)))
    assert hz["p_value"] == pytest.approx(p_hz, abs=1e-5)
    # dead: discarded or left in hand, 1 - the played share: the mirror
    dead = cc.loc[("hazard", "dead share")]
    assert (dead["a"], dead["b"], dead["diff"]) == pytest.approx((1 / 4, 3 / 5, -0.35))
    assert (dead["ci_low"], dead["ci_high"]) == pytest.approx((-0.77698, 0.46166), abs=1e-5)
    # Holm over the 2 roles (a dead share is the same test as its played share): 2 p_go, then
    # max(2 p_go, p_hazard), in both rates
    for rate in ("played share", "dead share"):
        assert cc.loc[("go", rate), "p_value"] == pytest.approx(p_go, abs=1e-4)
        assert cc.loc[("go", rate), "p_holm"] == pytest.approx(2 * p_go, abs=1e-4)
        assert cc.loc[("hazard", rate), "p_holm"] == pytest.approx(max(2 * p_go, p_hz), abs=1e-4)


def test_headline(runs):
    a, b = runs
    # 50 copies of each game: differences become clear
    big_a = make_records([dict(h, game=h["game"] + 4 * k) for k in range(50) for h in toy_hands()], toy_meta())
    big_b = make_records([dict(h, game=h["game"] + 4 * k) for k in range(50) for h in b_hands()], toy_meta())
    sa, sb = summarize(big_a), summarize(big_b)
    paired = paired_table(compare_tables(game_table(big_a, big_a.attrs), game_table(big_b, big_b.attrs)), fair=0.5)
    # games of one hand: the report leaves the within-hand row out, and the game's first player answers
    h = headline(sa, sb, paired[paired["key"] != "first_hand_gap"], "Stap op", "Mille Bornes").set_index("question")
    # turns: d repeats [4, 2, 10, -8]: mean 2, sd about 7.5, se about 0.53 (n = 200): z about 3.8
    assert h.loc["Which has longer games?", "answer"] == "Stap op"
    # first player among decided games: A 3 of 3, B 1 of 3; gaps .5 and 1/6, g = a + b - 1 = [0, 1, 0]
    assert seat_bias_strength(sa) == pytest.approx(0.5) and seat_bias_strength(sb) == pytest.approx(1 / 6)
    gap = paired.set_index("key").loc["first_player_gap"]
    assert gap["diff"] == pytest.approx(1 / 3) and gap["n"] == 150
    assert h.loc["Which has the stronger first-player bias?", "answer"] == "Stap op"
    # hazards: only 50 paired games, A's winner always least hit, B's never; of 2 sides, the one least hit would
    # win at most half the games if hazards did not matter
    assert h.loc["Which has more decisive hazards?", "answer"] == "Stap op"
    assert h.loc["Which has more decisive hazards?", "evidence"].endswith(
        "(were hazards no matter, at most 1/2: less where sides tie for least hit)")
    # dead share per game is the same in both runs
    assert h.loc["Which has deader cards?", "answer"] == "no clear difference"
    assert h.loc["Which has longer games?", "evidence"].startswith("turns per game: Stap op 12.5 vs Mille Bornes 10.5; paired difference")


def two_hand_games(share_first_in_hand):
    """40 two-hand games (two players, the first seat moving round each hand and each game). The
    side playing first in hand 0 completes that hand's trip; in hand 1 the side playing first does
    in games where share_first_in_hand(g) says so, else the other. The game's winner is the game's
    first player in games 0-3, 8-11, ..., the other side in the rest: half the games each."""
    hands = []
    for g in range(40):
        first = g % 2
        winner = first if (g // 4) % 2 == 0 else 1 - first
        second_trip = 1 - first if share_first_in_hand(g) else first
        for hand, (seat, trip) in enumerate(((first, first), (1 - first, second_trip))):
            hands.append(dict(game=g, hand=hand, first_seat=seat, trip_side=trip, winner_side=winner,
                              last_hand=hand, total=[100, 50] if winner == 0 else [50, 100]))
    return hands


def test_headline_first_player_bias_within_hands():
    # Mille Bornes-like games of two hands: the game's first player wins half of the games in both
    # runs, but in A the side playing first in a hand completes both trips of games 0, 1, 4, 5, ...
    # (share 1) and one of two in the others (1/2): mean 3/4, 1/4 from the fair share; in B always
    # one of two (1/2, on the fair share). g = a - b = 1/2 or 0 by halves: mean 1/4.

    meta = mb_meta()
    a = make_records(two_hand_games(lambda g: (g // 2) % 2 == 0), meta)
    b = make_records(two_hand_games(lambda g: False), meta)
    paired = paired_table(compare_tables(game_table(a, meta), game_table(b, meta)), fair=0.5).set_index("key")
    game_gap, hand_gap = paired.loc["first_player_gap"], paired.loc["first_hand_gap"]
    assert game_gap["diff"] == 0 and (game_gap["mean_a"], game_gap["mean_b"]) == (0, 0)
    assert (hand_gap["mean_a"], hand_gap["mean_b"], hand_gap["n"]) == (0.25, 0, 40)
    assert hand_gap["diff"] == pytest.approx(0.25) and hand_gap["sd"] == pytest.approx(math.sqrt(0.25 * 40 / 39) / 2)
    h = headline(summarize(a), summarize(b), paired.reset_index(), "A", "B").set_index("question")
    # the answer says which first player it is about, and gives the other: the game's first player wins
    # half of the games in both runs
    assert h.loc["Which has the stronger first-player bias?", "answer"] == (
        "A within a hand; no clear difference over whole games")
    evidence = h.loc["Which has the stronger first-player bias?", "evidence"]
    assert evidence.startswith("the hand's first player's distance") and "the game's first player's distance" in evidence
    # without the within-hand row (games of one hand), the game's first player answers: no difference
    h = headline(summarize(a), summarize(b), paired.drop(index="first_hand_gap").reset_index(), "A", "B")
    assert h.set_index("question").loc["Which has the stronger first-player bias?", "answer"] == "no clear difference"


def test_headline_names_no_design_on_a_difference_it_cannot_tell_from_noise(runs):
    a, b = runs
    paired = paired_table(compare_tables(game_table(a, a.attrs), game_table(b, b.attrs)), fair=0.5)
    h = headline(summarize(a), summarize(b), paired, "Stap op", "Mille Bornes").set_index("question")
    # the same turns differences d = [4, 2, 10, -8] in only 4 games: mean 2, sd sqrt(168 / 3) = 7.48,
    # se 3.74, t = 0.53 on 3 df (p about .63): not decided, not even alone, so no side is named
    turns = paired.set_index("key").loc["game_turns"]
    assert turns["diff"] == pytest.approx(2.0) and not turns["reject"] and turns["p_value"] > 0.6
    assert h.loc["Which has longer games?", "answer"] == "no clear difference"
    # the same difference where the test of game length alone finds it but Holm's correction does not: it leans
    paired.loc[paired["key"] == "game_turns", ["p_value", "p_holm"]] = (0.031, 0.093)
    h = headline(summarize(a), summarize(b), paired, "Stap op", "Mille Bornes").set_index("question")
    assert h.loc["Which has longer games?", "answer"] == (
        "no clear difference (leaning Stap op: p = 0.031 alone, not after Holm's correction)")


def test_what_a_run_lacks_to_measure_a_headline_metric(runs):
    a, _ = runs  # the toy run: 3 games with a winner, flat tyres cost turns in games 0 (a winner) and 2
    s = summarize(a)
    assert lacks("hazard_decided", s, "A") == "" and lacks("first_player_gap", s, "A") == ""
    # no winner lost a turn: the toy run with the victims' turns of game 0 taken away (game 2 has no winner)
    spared = a.copy()
    spared[["s0_flat_victim_turns", "s1_flat_victim_turns"]] = spared[["s0_flat_victim_turns",
                                                                       "s1_flat_victim_turns"]].where(spared["game"] != 0, 0)
    assert lacks("hazard_decided", summarize(spared, a.attrs), "A") == "no game of A with a winner lost a turn to hazards"
    # no hazard in the deck
    meta = dict(a.attrs, cards=[dict(c, role="go" if c["key"] == "go" else "remedy") for c in a.attrs["cards"]])
    assert lacks("hazard_decided", summarize(a, meta), "A") == "A has no hazards, limits or setbacks"
    # no winner: every game capped, as a turn cap cuts them off
    capped = a.assign(winner_side=-1, capped=1)
    assert lacks("first_player_gap", summarize(capped, a.attrs), "A") == "no game of A had a winner (4 hit the turn or hand cap)"
    # games of several hands where no hand's trip was completed (each hand went to the cap or the stock ran
    # out): the first player within the hand cannot be asked about, unless the comparison asks of the game
    multi = summarize(make_records(mb_hands(), mb_meta()))
    assert lacks("first_hand_gap", multi, "A") == "no hand of A completed the trip"
    assert lacks("first_hand_gap", multi, "A", multi_hand=False) == ""


def test_distance_from_the_fair_share_of_two_paired_games():
    # A wins as first player in both games (1, 1: .5 from 1/2), B in one (1, 0: on the fair share, counted
    # above it): g = a - b = [0, 1], mean .5, sd sqrt(.5), interval .5 +- t(1 df) x .5 = 12.71 x .5
    r = _pairs([1, 1], [1, 0])
    assert r["n"] == 2 and r["diff"] == pytest.approx(0.5) and r["sd"] == pytest.approx(math.sqrt(0.5))
    assert (r["ci_low"], r["ci_high"]) == (-1.0, 1.0)  # .5 -+ 6.35, clipped to where a difference of rates can be


def test_headline_of_one_paired_game_says_so(runs):
    a, b = runs
    one_a, one_b = a[a["game"] == 0], b[b["game"] == 0]
    one_b = one_b.assign(game_turns=one_a["game_turns"].to_numpy())  # the same length in the one game
    paired = paired_table(compare_tables(game_table(one_a, a.attrs), game_table(one_b, a.attrs)), fair=0.5)
    h = headline(summarize(one_a, a.attrs), summarize(one_b, a.attrs), paired, "A", "B").set_index("question")
    assert h.loc["Which has longer games?", "evidence"] == "turns per game: A 10 vs B 10, equal in the one paired game"


def test_pairs_of_other_games_are_refused():
    comp = PairedComparison()
    with pytest.raises(ValueError, match="paired metric frames must hold the same games in the same order"):
        comp.add_pairs(pd.DataFrame({"game_turns": [1.0, 2.0]}, index=[0, 1]),
                       pd.DataFrame({"game_turns": [1.0, 2.0]}, index=[1, 0]))


def test_game_metrics_columns(runs):
    a, _ = runs
    m = game_metrics(game_table(a, a.attrs))
    assert list(m.index) == [0, 1, 2, 3]
    assert m["no_winner"].tolist() == [0, 0, 1, 0]
    assert {"game_turns", "first_position_won", "won_s0", "won_s1", "dead_share"} <= set(m.columns)


def test_design_differences_from_the_runs_metadata():
    # the rules page: Stap op 14 Stap op cards, 5-card hands, an exact set of 100 km, reshuffle,
    # everyone under headwind; Mille Bornes at 2 players 4 Stops (5, one removed), 6-card hands,
    # 700 km with an extension to 1000, play-out, no starting limit
    from etappe.analysis.race import RaceRun

    so, mb = (RaceRun(d, 2, ["greedy"], seed=1).metadata(10) for d in ("stapop", "millebornes"))
    rows = design_differences(so, mb).set_index("item")
    assert rows.loc["target (exact sum or set)"].tolist() == ["set", "sum"]
    assert rows.loc["trip"].tolist() == ["100 km", "700 km"]
    assert rows.loc["extended trip (0: none)"].tolist() == ["0", "1000"]
    assert rows.loc["hand size"].tolist() == ["5", "6"]
    assert rows.loc["stock exhausted"].tolist() == ["reshuffle", "play_out"]
    assert rows.loc["start under limit"].tolist() == ["true", "false"]
    assert rows.loc["card Stap op (go)"].tolist() == ["14 x go", "-"]
    # with each card's rules (rules page: Stop cleared by Roll; 200s blocked by Speed Limit, two at most)
    assert rows.loc["card Stop (Feu rouge) (stop)"].tolist() == ["-", "4 x hazard; cleared by roll"]
    assert rows.loc["card 200 km (km200)"].tolist() == ["-", "4 x distance 200 km; blocked by the limit; at most 2"]
    # Right of Way: a safety against Stop and Speed Limit that also acts as a permanent Roll
    assert rows.loc["card Right of Way (Prioritaire) (right_of_way)"].tolist() == [
        "-", "1 x safety; protects stop, speed_limit; permanent go"]
    assert not any(item.startswith("option") for item in rows.index)  # the same options
    # a redesign: only what was changed is listed
    eight = dict(mb, cards=[dict(c, count=7) if c["key"] == "stop" else c for c in mb["cards"]],
                 options=dict(mb["options"], roll_after_safety=False))
    assert design_differences(eight, mb).values.tolist() == [
        ["option roll_after_safety", "false", "true"],
        ["card Stop (Feu rouge) (stop)", "7 x hazard; cleared by roll", "4 x hazard; cleared by roll"]]
    assert design_differences(mb, mb).empty


def test_design_differences_name_scoring_and_card_rules():
    # a redesign that changes only the scoring or a card's rules must still say what it changed
    # (rules page: Mille Bornes plays hands to 5000, at most two 200s per side)
    from etappe.analysis.race import RaceRun
    from etappe.kernels.race_design import design_variant, load_design

    mb = load_design("millebornes")
    meta = RaceRun(mb, 2, ["greedy"], seed=1).metadata(10)
    shorter = RaceRun(design_variant(mb, "scoring.game_target", 3000), 2, ["greedy"], seed=1).metadata(10)
    assert design_differences(shorter, meta).values.tolist() == [["scoring game_target", "3000", "5000"]]
    three = RaceRun(design_variant(mb, "cards.km200.cap", 3), 2, ["greedy"], seed=1).metadata(10)
    assert design_differences(three, meta).values.tolist() == [
        ["card 200 km (km200)", "4 x distance 200 km; blocked by the limit; at most 3",
         "4 x distance 200 km; blocked by the limit; at most 2"]]
    # rules page: Stap op in clubjes (teams) against individual play, 4 players: 2 sides against 4
    clubjes = RaceRun(load_design(str(Path(__file__).parent / "designs" / "stapop_clubjes.toml")), 4, ["greedy"],
                      seed=1).metadata(10)
    four = RaceRun(load_design("stapop"), 4, ["greedy"], seed=1).metadata(10)
    assert design_differences(clubjes, four).values.tolist() == [["sides", "2", "4"]]
    stapop = RaceRun(load_design("stapop"), 2, ["greedy"], seed=1).metadata(10)
    rows = design_differences(stapop, meta).set_index("item")
    assert rows.loc["scoring table (hands to a game target)"].tolist() == ["false", "true"]
    # metadata of runs written before it held the scoring and card rules: nothing claimed
    old = {k: v for k, v in shorter.items() if k != "scoring"}
    old["cards"] = [{k: c[k] for k in ("key", "name", "role", "value", "count")} for c in shorter["cards"]]
    assert design_differences(old, meta).empty


def test_design_paired_table_keeps_what_compares_across_two_designs():
    # docs/records.md: winner_deficit_share "replaces it, with no final gap, in a comparison of two
    # designs that differ in unit, trip, or in playing one hand or several"; the hand's first player
    # repeats the game's in games of one hand
    from etappe.analysis.race import simulate

    so, mb = (simulate(d, players=2, games=60, seed=1) for d in ("stapop", "millebornes"))
    so_b = simulate("stapop", players=2, games=60, seed=1, options={"overshoot": "disqualify"})
    comparison = compare_tables(game_table(so, so.attrs), game_table(mb, mb.attrs))
    keys = set(design_paired_table(comparison, summarize(so), summarize(mb))["key"])
    assert {"winner_deficit_share", "hands", "first_hand_trip_share", "first_player_gap"} <= keys
    assert not keys & {"winner_deficit", "final_gap"}
    same = compare_tables(game_table(so, so.attrs), game_table(so_b, so_b.attrs))
    keys = set(design_paired_table(same, summarize(so), summarize(so_b))["key"])
    assert {"winner_deficit", "final_gap", "first_player_gap"} <= keys
    assert not keys & {"winner_deficit_share", "hands", "first_hand_trip_share"}


def shield_runs():
    """Seven one-hand games of the toy deck (go, flat) and the same games of the toy deck plus a
    safety, shield, one copy. Turns lost to flats (side 0, side 1) and safeties laid:
    game 0: winner 0, lost (0, 3), side 0 laid the shield: the side least hit had played a safety
    game 1: winner 1, lost (2, 2), no safety: a tie, no side least hit
    game 2: winner 0, lost (1, 2), both laid one: the side least hit had one, and so had the other
    game 3: winner 1, no turn lost: not counted
    game 4: no winner (capped), lost (0, 4), side 0 laid one: not counted
    game 5: winner 1, lost (5, 1), side 1 laid it: the side least hit had played a safety
    game 6: winner 0, lost (1, 0), side 0 laid it, but side 1 was least hit
    The run without the shield plays the same games, but its side 0 discards a go it played in
    games 0, 2, 5 and 6."""
    shield = [([1, 0], [1, 0]), ([0, 1], [0, 0]), ([1, 1], [1, 1]), ([0, 0], [0, 0]), ([1, 0], [1, 0]),
              ([0, 1], [0, 1]), ([1, 0], [1, 0])]  # (drawn, played) by side
    games = [
        (0, [0, 3], {"drawn": [3, 2], "played": [2, 1], "discarded": [0, 1], "in_hand": [1, 0]},
         {"drawn": [1, 0], "played": [1, 0]}),
        (1, [2, 2], {"drawn": [2, 3], "played": [2, 1], "in_hand": [0, 2]}, {"drawn": [1, 0], "discarded": [1, 0]}),
        (0, [1, 2], {"drawn": [2, 2], "played": [1, 2], "discarded": [1, 0]}, {"drawn": [0, 1], "played": [0, 1]}),
        (1, [0, 0], {"drawn": [1, 3], "played": [1, 3]}, {}),
        (-1, [0, 4], {"drawn": [2, 1], "in_hand": [2, 1]}, {"drawn": [0, 2], "played": [0, 1], "discarded": [0, 1]}),
        (1, [5, 1], {"drawn": [3, 3], "played": [2, 2], "discarded": [1, 1]}, {"drawn": [1, 1], "played": [1, 1]}),
        (0, [1, 0], {"drawn": [2, 2], "played": [2, 1], "discarded": [0, 1]}, {"drawn": [0, 1], "played": [0, 1]}),
    ]
    meta = toy_meta()
    shielded_meta = dict(meta, design="toy_shield", design_hash="def456",
                         cards=[*meta["cards"], {"key": "shield", "name": "Shield", "role": "safety", "value": 0}])
    plain, shielded = [], []
    for g, (winner, lost, go, flat) in enumerate(games):
        hand = dict(game=g, turns=10, winner_side=winner, capped=int(winner < 0), trip_side=winner,
                    total=[100, 60] if winner == 0 else [60, 100])
        drawn, played = shield[g]
        shielded.append(dict(hand, safeties=played, cards={"go": go, "flat": {**flat, "victim_turns": lost},
                                                           "shield": {"drawn": drawn, "played": played}}))
        if g in (0, 2, 5, 6):
            played, discarded = go["played"], go.get("discarded", [0, 0])
            go = dict(go, played=[played[0] - 1, played[1]], discarded=[discarded[0] + 1, discarded[1]])
        plain.append(dict(hand, cards={"go": go, "flat": {**flat, "victim_turns": lost}}))
    return make_records(plain, meta), make_records(shielded, shielded_meta)


def per_game(frame, keys, stats):
    """Per game (rows) and side (columns) the sum of `stats` of cards `keys`, from the record columns."""
    g = frame.groupby("game")
    return np.stack([sum(g[f"s{s}_{k}_{stat}"].sum() for k in keys for stat in stats).to_numpy()
                     for s in range(frame.attrs["sides"])], axis=1)


def test_headline_says_how_often_the_side_least_hit_had_played_a_safety_against_the_others():
    plain, shielded = shield_runs()
    sa, _, sb, _, comp = compare_summaries(plain, None, shielded, None)
    paired = design_paired_table(comp, sa, sb)
    # from the records: the games with a winner, some turn lost to a hazard and one side that lost strictly
    # fewer such turns than the other; whether that side had a safety on its tableau, and whether the other did
    lost = per_game(shielded, ["flat"], ["victim_turns"])
    winner = shielded.groupby("game")["winner_side"].first().to_numpy()
    alone = lost.min(axis=1) < lost.max(axis=1)  # two sides: one is least hit unless they tie
    counted = (winner >= 0) & (lost.sum(axis=1) > 0) & alone
    safe = shielded.groupby("game")[["s0_safeties", "s1_safeties"]].sum().to_numpy() > 0
    least, other = lost.argmin(axis=1), lost.argmax(axis=1)
    rows = np.arange(len(winner))
    k, n, others = int((counted & safe[rows, least]).sum()), int(counted.sum()), int((counted & safe[rows, other]).sum())
    assert (k, n, others) == (3, 4, 2)  # games 0, 2, 5 of 0, 2, 5, 6 (not the tie, game 1); games 2, 6
    h = headline(sa, sb, paired, "toy", "toy_shield").set_index("question")
    evidence = h.loc["Which has more decisive hazards?", "evidence"]
    # only the design with safety cards is named
    assert evidence.endswith(
        "(were hazards no matter, at most 1/2: less where sides tie for least hit); a safety spares its side the "
        f"hazards it names: in toy_shield, of its {n} games with a winner, some turn lost to hazards and one side "
        f"least hit, that side had played one in {k} ({100 * k / n:.1f} %), the other sides in {100 * others / n:.1f} %")
    assert "in toy," not in evidence
    # the report shows that sentence in its answers
    from etappe.reports.race_report import build_comparison_report
    md = build_comparison_report(sa, plain.attrs, sb, shielded.attrs, comp).to_markdown()
    assert ("in toy_shield, of its 4 games with a winner, some turn lost to hazards and one side least hit, that side "
            "had played one in 3 (75.0 %), the other sides in 50.0 % |") in md


def test_headline_gives_the_dead_share_of_the_cards_both_designs_hold():
    from scipy import stats as st

    plain, shielded = shield_runs()
    sa, _, sb, _, comp = compare_summaries(plain, None, shielded, None)
    paired = design_paired_table(comp, sa, sb)
    p = paired.set_index("key")

    def share(frame, keys):  # per game: (discarded + in hand) / drawn, all sides
        return (per_game(frame, keys, ["discarded", "in_hand"]).sum(axis=1)
                / per_game(frame, keys, ["drawn"]).sum(axis=1))

    def told(a, b, row):  # the paired t of docs/statistics.md, on the games that differ less one
        d = a - b
        se = d.std(ddof=1) / math.sqrt(len(d))
        df = np.count_nonzero(d) - 1
        half = st.t.ppf(0.975, df) * se
        assert row["p_value"] == pytest.approx(2 * st.t.sf(abs(d.mean()) / se, df))
        return (f"toy {a.mean():.4g} vs toy_shield {b.mean():.4g}; paired difference {d.mean():+.4g} (95 % interval "
                f"of this metric alone [{max(d.mean() - half, -1):.4g}, {min(d.mean() + half, 1):.4g}]), Holm "
                f"p = {row['p_holm']:.3g}, n = {len(d)}")

    every = told(share(plain, ["go", "flat"]), share(shielded, ["go", "flat", "shield"]), p.loc["dead_share"])
    # side 0 of the plain run discards one more go in games 0, 2, 5 and 6: d = 1/6, 1/5, 1/8, 1/5 there
    a, b = share(plain, ["go", "flat"]), share(shielded, ["go", "flat"])
    assert (a - b).tolist() == pytest.approx([1 / 6, 0, 1 / 5, 0, 0, 1 / 8, 1 / 5])
    both = told(a, b, p.loc["dead_share_shared"])
    assert p.loc["dead_share_shared", "metric"] == "share of drawn cards wasted, of the cards both designs hold"
    h = headline(sa, sb, paired, "toy", "toy_shield").set_index("question")
    evidence = h.loc["Which has deader cards?", "evidence"]
    assert evidence == (f"share of drawn cards wasted (discarded or held): {every}; the cards both designs hold (by "
                        f"key), without those only in toy_shield (Shield): {both}")
    from etappe.reports.race_report import build_comparison_report
    md = build_comparison_report(sa, plain.attrs, sb, shielded.attrs, comp).to_markdown()
    assert f"| {evidence} |" in md
    # designs of the same cards: no row and no sentence
    same = compare_summaries(plain, None, plain.assign(game_turns=plain["game_turns"] + 1), None)
    same_paired = design_paired_table(same[4], same[0], same[2])
    assert "dead_share_shared" not in set(same_paired["key"])
    assert "both designs hold" not in headline(same[0], same[2], same_paired).set_index("question").loc[
        "Which has deader cards?", "evidence"]


def test_headline_says_when_the_designs_hold_no_card_in_common(runs):
    a, _ = runs
    b = role_hands()  # roll, crash, puncture against go, flat: no key in common
    sa, _, sb, _, comp = compare_summaries(a, None, b, None)
    paired = design_paired_table(comp, sa, sb)
    assert "dead_share_shared" not in set(paired["key"])
    evidence = headline(sa, sb, paired).set_index("question").loc["Which has deader cards?", "evidence"]
    assert evidence.endswith("; the designs hold no card in common (by key), so the shares are of different cards "
                             "(the Card balance section compares them role by role)")
