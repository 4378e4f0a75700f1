"""Race balance statistics on hand-made record tables (answers worked out by hand).

`make_records` builds tables in the schema of docs/records.md from a few
hand-written values; the other test files import it.
"""
import math

import numpy as np
import pandas as pd
import pytest

from etappe.analysis.race_summary import (
    RaceSummarizer,
    anomalies,
    card_balance,
    game_end_rates,
    game_table,
    head_to_head,
    hist_frame,
    layout_from,
    length_table,
    mirrored_policies,
    outcomes_by_policy,
    outcomes_by_position,
    outcomes_by_seat,
    policy_side_games,
    progress_table,
    seat_uniformity,
    summarize,
    summarize_chunks,
    tension_table,
    trips_by_position,
    worth_playing,
)
from etappe.analysis.stats import Z95

from by_hand import wilson

CARD_STATS = ("drawn", "played", "discarded", "in_hand", "received", "victim_turns", "coups")


def make_meta(players=2, sides=2, seat_side=None, cards=None, rounds=(1, 2, 3), multi_hand=False, **extra):
    meta = {
        "game": "race", "design": "toy", "design_file": "toy.toml", "design_hash": "abc123",
        "players": players, "sides": sides, "seat_side": seat_side or list(range(players)),
        "policies": [{"name": "random", "params": {}}, {"name": "greedy", "params": {"a": 1}}][:players]
        + [{"name": "random", "params": {}}] * max(0, players - 2),
        "seed": 7, "games": 0, "version": "0.1.0", "options": {},
        "cards": cards if cards is not None else [
            {"key": "go", "name": "Go", "role": "go", "value": 0},
            {"key": "flat", "name": "Flat tyre", "role": "hazard", "value": 0},
        ],
        "unit": "km", "turn_cap": 400, "hand_cap": 50, "progress_rounds": list(rounds),
        "target": 100, "multi_hand": multi_hand, "wall_seconds": 2.0,
    }
    meta.update(extra)
    return meta


def make_records(hands, meta):
    """DataFrame from hand dicts; every schema column not given is 0 (-1 for sides).

    Per-side values may be given as lists: {"total": [100, 60]} sets s0_total, s1_total;
    cards as {"cards": {"go": {"drawn": [3, 2]}}}; progress as {"progress": [[...], [...]]}.
    """
    S = meta["sides"]
    keys = [c["key"] for c in meta["cards"]]
    rows = []
    for h in hands:
        row = {"game": h["game"], "hand": h.get("hand", 0), "first_seat": h.get("first_seat", 0),
               "turns": h.get("turns", 0), "stock_exhausted": h.get("stock_exhausted", 0),
               "reshuffles": h.get("reshuffles", 0), "capped": h.get("capped", 0),
               "trip_side": h.get("trip_side", -1), "extension_side": h.get("extension_side", -1),
               "lead_changes": h.get("lead_changes", 0), "last_hand": h.get("last_hand", 1),
               "winner_side": h.get("winner_side", -1), "game_turns": h.get("game_turns", h.get("turns", 0))}
        for stat in ("distance", "score", "total", "safeties", "coups", "hazards_played",
                     "hazards_received", "max_deficit", "disqualified"):
            vals = h.get(stat, [0] * S)
            for s in range(S):
                row[f"s{s}_{stat}"] = vals[s]
        for key in keys:
            for stat in CARD_STATS:
                vals = h.get("cards", {}).get(key, {}).get(stat, [0] * S)
                for s in range(S):
                    row[f"s{s}_{key}_{stat}"] = vals[s]
        prog = h.get("progress", [[0] * len(meta["progress_rounds"])] * S)
        for s in range(S):
            for k, r in enumerate(meta["progress_rounds"]):
                row[f"s{s}_r{r}"] = prog[s][k]
        rows.append(row)
    frame = pd.DataFrame(rows).astype("int64")
    frame.attrs.update(meta)
    return frame


def toy_meta():
    return make_meta()


def toy_hands():
    """Four single-hand games of a two-player toy deck (go, flat)."""
    return [
        dict(game=0, first_seat=0, turns=10, winner_side=0, lead_changes=1, total=[100, 60], distance=[100, 60],
             max_deficit=[10, 40], trip_side=0,
             cards={"go": {"drawn": [3, 2], "played": [2, 1], "discarded": [0, 1], "in_hand": [1, 0]},
                    "flat": {"drawn": [1, 0], "played": [1, 0], "received": [0, 1], "victim_turns": [0, 3]}},
             progress=[[20, 50, 100], [30, 40, 60]]),
        dict(game=1, first_seat=1, turns=12, winner_side=1, lead_changes=3, total=[80, 100], distance=[80, 100],
             max_deficit=[0, 25], trip_side=1,
             cards={"go": {"drawn": [2, 3], "played": [2, 1], "in_hand": [0, 2]},
                    "flat": {"drawn": [1, 0], "discarded": [1, 0]}},
             progress=[[10, 40, 80], [5, 50, 100]]),
        dict(game=2, first_seat=0, turns=20, capped=1, winner_side=-1, lead_changes=0, total=[50, 50],
             distance=[50, 50], max_deficit=[5, 5], stock_exhausted=1,
             cards={"go": {"drawn": [1, 0], "in_hand": [1, 0]},
                    "flat": {"drawn": [0, 2], "played": [0, 2], "received": [2, 0], "victim_turns": [6, 0]}},
             progress=[[10, 30, 50], [10, 30, 50]]),
        dict(game=3, first_seat=1, turns=8, winner_side=1, lead_changes=0, total=[30, 100], distance=[30, 100],
             max_deficit=[70, 0], trip_side=1,
             cards={"go": {"drawn": [0, 2], "played": [0, 2]}},
             progress=[[10, 20, 30], [40, 80, 100]]),
    ]


@pytest.fixture
def toy():
    return make_records(toy_hands(), toy_meta())


def test_outcomes_by_seat_and_policy(toy):
    s = summarize(toy)
    assert s.games == 4
    seats = outcomes_by_seat(s)
    # game 2 has no winner: the rates are among the 3 decided games, fair share 1/2
    assert list(seats["wins"]) == [1, 2] and list(seats["n"]) == [3, 3]
    assert seats["rate"].tolist() == pytest.approx([1 / 3, 2 / 3])
    # Wilson 1/3: centre (.33333 + .64024) / 2.28049 = .42692, half 1.96 sqrt(.074074 + .106710) / 2.28049 = .36542
    assert seats.loc[0, "ci_low"] == pytest.approx(0.0615, abs=1e-4)
    assert seats.loc[0, "ci_high"] == pytest.approx(0.7923, abs=1e-4)
    assert list(seats["policy"]) == ["random", "greedy(a=1)"]
    pol = outcomes_by_policy(s).set_index("policy")
    # like the seats: among the 3 games with a winner, so that a fair share is 1/2
    assert tuple(pol.loc["greedy(a=1)", ["side_games", "wins"]]) == (3, 2)
    assert tuple(pol.loc["random", ["side_games", "wins"]]) == (3, 1)


def test_first_player_advantage_and_chi_square(toy):
    s = summarize(toy)
    pos = outcomes_by_position(s)
    # games 0, 1, 3 were won by the side that played first; game 2 has no winner
    assert list(pos["wins"]) == [3, 0]
    assert list(pos["fair_share"]) == [0.5, 0.5]
    tests = seat_uniformity(s).set_index("test")
    by_pos = tests.loc["uniform wins by turn-order position"]
    # [3, 0] vs 1.5 each: 3.0 on 1 df
    assert by_pos["chi2"] == pytest.approx(3.0) and by_pos["df"] == 1 and by_pos["n"] == 3
    assert by_pos["p_value"] == pytest.approx(math.erfc(math.sqrt(1.5)), abs=1e-9)
    # the sides hold different policies (random, greedy): a test of uniform wins by side would measure skill
    assert "uniform wins by side (fixed seats)" not in tests.index
    same_policy = make_records(toy_hands(), make_meta(policies=[{"name": "random", "params": {}}] * 2))
    by_side = seat_uniformity(summarize(same_policy)).set_index("test").loc["uniform wins by side (fixed seats)"]
    # sides won [1, 2] of 3 games: (1 - 1.5)^2 / 1.5 * 2 = 1/3
    assert by_side["chi2"] == pytest.approx(1 / 3)


def test_game_end_rates(toy):
    rates = game_end_rates(summarize(toy)).set_index("event")
    cap = rates.loc["games that hit the cap (stall)"]
    assert cap["count"] == 1 and cap["n"] == 4 and cap["rate"] == 0.25
    assert (cap["ci_low"], cap["ci_high"]) == pytest.approx(wilson(1, 4))
    assert rates.loc["games without a winner", "count"] == 1
    assert rates.loc["games tied at the end, or with every side disqualified (no winner, not capped)", "count"] == 0
    come = rates.loc["winner was behind at some point (comeback)"]
    assert come["count"] == 2 and come["n"] == 3  # winner deficits 10, 25, 0
    # from far behind: a quarter of the 100 km trip or more, game 1's 25 km only
    far = rates.loc["winner was behind by a quarter of the trip (25 km) or more"]
    assert far["count"] == 1 and far["n"] == 3 and (far["ci_low"], far["ci_high"]) == pytest.approx(wilson(1, 3))
    assert rates.loc["hands where the stock ran out", "count"] == 1


def test_length_and_tension(toy):
    s = summarize(toy)
    length = length_table(s).set_index("metric").loc["turns per game"]
    # turns 8, 10, 12, 20: inverse-ECDF median 10, p95 20, mean 12.5
    assert (length["median"], length["p95"], length["mean"], length["n"]) == (10, 20, 12.5, 4)
    assert length["min"] == 8 and length["max"] == 20
    h = hist_frame(s, "game_turns")
    assert h["value"].tolist() == [8, 10, 12, 20] and h["ecdf"].tolist() == [0.25, 0.5, 0.75, 1.0]
    t = tension_table(s).set_index("metric")
    assert t.loc["lead changes per game", "mean"] == 1.0 and t.loc["lead changes per game", "median"] == 0
    assert t.loc["winner's largest deficit (km)", "median"] == 10  # 0, 10, 25
    assert t.loc["winner's largest deficit (km)", "n"] == 3
    gap = t.loc["final gap (winner minus runner-up, total)"]
    assert gap["median"] == 40 and gap["max"] == 70 and gap["n"] == 3  # 40, 20, 70


def test_progress_bands(toy):
    s = summarize(toy)
    p = progress_table(s, "side")
    side0 = p[p["group"] == "seat 0"].set_index("round")
    assert side0.loc[3, "mean"] == 65.0  # (100 + 80 + 50 + 30) / 4
    assert side0.loc[1, "mean"] == 12.5
    # round 1 side 0: 20, 10, 10, 10: sd = 5, se = 2.5
    assert side0.loc[1, "sd"] == pytest.approx(5.0)
    assert side0.loc[1, "ci_low"] == pytest.approx(12.5 - 3.182446 * 2.5, abs=1e-5)  # Student's t, 3 df
    assert side0.loc[1, "band_high"] == pytest.approx(17.5)
    pos = progress_table(s, "position")
    first = pos[pos["group"] == "position 1"].set_index("round")
    assert first.loc[3, "mean"] == 87.5  # 100, 100, 50, 100
    assert first.loc[3, "sd"] == pytest.approx(25.0)  # sqrt((3 x 12.5² + 37.5²) / 3)
    second = pos[pos["group"] == "position 2"].set_index("round")
    assert second.loc[3, "mean"] == 55.0  # 60, 80, 50, 30
    with pytest.raises(ValueError, match="by must be 'side' or 'position'"):
        progress_table(s, "seat")


def test_progress_follows_the_rounds_the_records_keep():
    # records keep the distance at the end of some rounds only (here 1 and 5): the table's rounds are those
    meta = make_meta(rounds=(1, 5))
    hands = [dict(game=0, turns=14, winner_side=0, trip_side=0, progress=[[10, 100], [20, 60]]),
             dict(game=1, turns=10, winner_side=1, trip_side=1, progress=[[30, 70], [0, 100]])]
    p = progress_table(summarize(make_records(hands, meta)), "side")
    side0 = p[p["group"] == "seat 0"]
    assert side0["round"].tolist() == [1, 5] and side0["mean"].tolist() == [20.0, 85.0]


def test_runs_that_kept_every_round_up_to_n_say_so_by_a_number(toy):
    # before the records kept sparser rounds, the metadata's progress_rounds was a count: rounds 1 .. N
    old = toy.copy()
    old.attrs = {**toy.attrs, "progress_rounds": 3}
    assert summarize(old).layout.rounds == (1, 2, 3)
    np.testing.assert_array_equal(summarize(old).c["prog_pos_s1"], summarize(toy).c["prog_pos_s1"])


def test_card_balance(toy):
    cb = card_balance(summarize(toy)).set_index("card")
    go, flat = cb.loc["go"], cb.loc["flat"]
    assert (go["drawn"], go["played"], go["discarded"], go["in_hand"]) == (13, 8, 1, 4)
    assert (flat["drawn"], flat["played"], flat["discarded"], flat["in_hand"]) == (4, 3, 1, 0)
    assert go["played_share"] == pytest.approx(8 / 13)
    # interval clustered by game: per game go played x = 3, 3, 0, 2 of drawn y = 5, 5, 1, 2;
    # R = 8/13, sum (x - R y)^2 = 2 (1/13)^2 + (8/13)^2 + (10/13)^2 = 166/169,
    # se = sqrt(166/169 / (4 * 3)) / (13 / 4) = .088031; Wilson's interval at the effective size
    # n = R (1 - R) / se^2 * (z / t)^2 = 30.5421 * .379293 = 11.5844 (t = 3.182446, 3 degrees of freedom
    # for 4 games): centre (R + z^2 / 2n) / (1 + z^2 / n) = .586652,
    # half z sqrt(R (1 - R) / n + z^2 / 4n^2) / (1 + z^2 / n) = .244471
    assert (go["played_share_low"], go["played_share_high"]) == pytest.approx((0.34218, 0.83112), abs=1e-5)
    assert go["dead_share"] == pytest.approx(5 / 13)
    # plays of go in games with a winner: 3 + 3 + 2, by the winner 2 + 1 + 2
    assert go["winner_share"] == pytest.approx(5 / 8)
    # win when played / not: game-side units of the 3 games with a winner (0, 1, 3), as the Outcomes'
    # win rates: capped game 2 is no loss. go played by both sides of games 0 and 1 and by side 1
    # (the winner) of game 3: 5 units, 3 won; not: game 3's side 0, lost
    assert (go["n_played"], go["win_when_played"], go["n_not"], go["win_when_not"]) == (5, 0.6, 1, 0.0)
    assert go["win_lift"] == pytest.approx(0.6)
    # its interval clustered by the 3 games: per game (wins, units) played / not = (1, 2) / (0, 0),
    # (1, 2) / (0, 0), (1, 1) / (0, 1). Played: u = (wins - .6 units) / 5 = -.04, -.04, .08, variance
    # 3 / 2 * .0096 = .0144, effective size .24 / .0144 * (z / t)^2 = 16.6667 * .207503 = 3.45838
    # (t = 4.302653, 2 degrees of freedom), Wilson [.188118, .906635]. Not: 0 of 1, no variance to go
    # on: the units of a game taken as wholly alike, (sum y)^2 / sum y^2 = 1 / 1 game, Wilson
    # [0, z^2 / (1 + z^2)] = [0, .793451]; no covariance. MOVER: .6 - sqrt(.411882^2 + .793451^2), .906635
    assert (go["win_lift_low"], go["win_lift_high"]) == pytest.approx((-0.29399, 0.90663), abs=1e-5)
    # flat: played by (g0, s0), which won; (g2, s1) is in a game without a winner. Not: 5 units, 2 won
    assert (flat["n_played"], flat["win_when_played"], flat["n_not"]) == (1, 1.0, 5)
    assert flat["win_when_not"] == pytest.approx(2 / 5)
    # lift 1 - 2/5; per game played / not = (1, 1) / (0, 1), (0, 0) / (1, 2), (0, 0) / (1, 2).
    # Played: 1 of 1, no variance: Wilson of 1 game, [1 / (1 + z^2), 1] = [.206549, 1]. Not: u = (w - .4 n) / 5
    # = -.08, .04, .04, variance .0144 as above, Wilson [.093365, .811882]; played has no variance, so no
    # covariance. .6 - sqrt(.793451^2 + .411882^2), .6 + (.4 - .093365)
    assert flat["win_lift"] == pytest.approx(0.6)
    assert (flat["win_lift_low"], flat["win_lift_high"]) == pytest.approx((-0.29399, 0.90663), abs=1e-5)
    assert flat["received"] == 3 and flat["victim_turns"] == 9 and flat["turns_lost_per_hazard"] == 3
    # the victims: game 0's side 1, which lost; game 2 had no winner and is left out
    assert flat["victim_win_rate"] == 0.0
    # 0 of 1 unit: Wilson's interval of 0 wins in 1 game, [0, z^2 / (1 + z^2)]
    assert (flat["victim_win_low"], flat["victim_win_high"]) == pytest.approx((0.0, 0.79345), abs=1e-5)
    assert bool(flat["hazard"]) and not bool(go["hazard"])


def test_game_table(toy):
    t = game_table(toy, toy.attrs).set_index("game")
    assert t["winner_position"].tolist() == [0, 0, -1, 0]
    assert t["hazard_turns"].tolist() == [3, 0, 6, 0]
    assert t.loc[0, "hazard_decided"] == 1.0 and math.isnan(t.loc[2, "hazard_decided"])
    assert math.isnan(t.loc[1, "hazard_decided"])  # no turns lost to hazards: undefined
    # game 0: drawn 4 + 2, discarded or held 1 + 1
    assert t.loc[0, "dead_share"] == pytest.approx(2 / 6)
    assert t["final_gap"].iloc[[0, 1, 3]].tolist() == [40, 20, 70]
    assert t["won_s1"].tolist() == [0, 1, 0, 1]


def test_hazard_decided_counts(toy):
    s = summarize(toy)
    assert int(s.c["hazard_games"]) == 1 and int(s.c["hazard_decided"]) == 1


def test_worth_playing_rule():
    # one card drawn 100 times in 10 games, all 5 of its plays in game 0 (dead); one played often
    meta = make_meta(cards=[{"key": "dud", "name": "Dud", "role": "remedy", "value": 0},
                            {"key": "km5", "name": "5 km", "role": "distance", "value": 5}])
    hands = [dict(game=g, winner_side=g % 2, total=[1, 0] if g % 2 == 0 else [0, 1],
                  cards={"dud": {"drawn": [5, 5], "played": [5 if g < 1 else 0, 0],
                                 "discarded": [0 if g < 1 else 5, 5]},
                         "km5": {"drawn": [5, 5], "played": [5, 5]}})
             for g in range(10)]
    flags = worth_playing(summarize(make_records(hands, meta))).set_index("card")
    # dud: 5 / 100 played, clustered by game: sum (x - .05 y)^2 = 4.5^2 + 9 * .5^2 = 22.5,
    # se = sqrt(22.5 / 90) / 10 = .05, upper end .05 + .098 = .148: not below 10 % ...
    assert not flags.loc["dud", "flag"]
    # ... with a 10x larger run it is (sum 225, se = sqrt(225 / 9900) / 10 = .01508, upper .0795)
    hands10 = [dict(h, game=h["game"] + 10 * k) for k in range(10) for h in hands]
    flags = worth_playing(summarize(make_records(hands10, meta))).set_index("card")
    # a remedy answers an attack: when it is dead, the deck holds more than the attacks call for
    assert flags.loc["dud", "flag"] and flags.loc["dud", "reason"].startswith("dead: almost never needed")
    assert not flags.loc["km5", "flag"]


def one_card_records(role, key, played_by_winner):
    """100 games of two sides in which one side, the winner or the loser, draws and plays the one card `key`
    of the deck, and the other draws none."""
    meta = make_meta(cards=[{"key": key, "name": key.capitalize(), "role": role, "value": 5}])
    hands = []
    for g in range(100):
        winner = g % 2
        player = winner if played_by_winner else 1 - winner
        one = [1 if s == player else 0 for s in (0, 1)]
        hands.append(dict(game=g, winner_side=winner, total=[1 - winner, winner],
                          cards={key: {"drawn": one, "played": one}}))
    return make_records(hands, meta)


def test_goes_with_losing_rule():
    # every play is the loser's (winner share 0, fair share 1/2) and sides that played it never won (lift -1)
    flags = worth_playing(summarize(one_card_records("hazard", "bad", played_by_winner=False))).set_index("card")
    assert flags.loc["bad", "flag"] and flags.loc["bad", "reason"].startswith("goes with losing")
    # a remedy is played because its side was hit: its link with losing says nothing about the card
    flags = worth_playing(summarize(one_card_records("remedy", "bad", played_by_winner=False))).set_index("card")
    assert not flags.loc["bad", "flag"]


@pytest.mark.parametrize("role, flagged", [("safety", True), ("hazard", True), ("distance", False), ("remedy", False)])
def test_goes_with_winning_rule(role, flagged):
    # every play is the winner's (winner share 1) and sides that played it always won (lift +1): a card a
    # designer must see; but every winner lays distance, and a remedy is played because its side was hit
    flags = worth_playing(summarize(one_card_records(role, "key", played_by_winner=True))).set_index("card")
    assert flags.loc["key", "flag"] == flagged
    assert flags.loc["key", "reason"] == ("goes with winning: winners play it more, players of it win far more"
                                          if flagged else "")
    assert (flags.loc["key", "win_when_played"], flags.loc["key", "win_when_not"]) == (1.0, 0.0)


@pytest.mark.parametrize("winner_plays, role", [(True, "safety"), (False, "hazard")])
def test_a_card_that_goes_with_winning_or_losing_a_little_is_not_flagged(winner_plays, role):
    # 400 games, one side plays the card in each: the winner in 260 (65 %) and the loser in 140, or the other
    # way round. Sides that played it won 65 % (35 %), the others 35 % (65 %): a lift of +.30 (-.30), clear of 0
    # but not of the fair share 1/2 (-1/2), as large runs flagged Stap op's Jeugdherberg, whose players win a
    # point less, before "goes with losing" asked for more than the fair share too
    meta = make_meta(cards=[{"key": "key", "name": "Key", "role": role, "value": 0}])
    hands = [dict(game=g, winner_side=g % 2, total=[1, 0] if g % 2 == 0 else [0, 1],
                  cards={"key": {"drawn": [1, 1],
                                 "played": [1, 0] if ((g % 2 == 0) == (g % 20 < 13)) == winner_plays else [0, 1],
                                 "in_hand": [0, 1] if ((g % 2 == 0) == (g % 20 < 13)) == winner_plays else [1, 0]}})
             for g in range(400)]
    flags = worth_playing(summarize(make_records(hands, meta))).set_index("card")
    share = 0.65 if winner_plays else 0.35
    assert flags.loc["key", "win_when_played"] == pytest.approx(share)
    assert flags.loc["key", "win_lift"] == pytest.approx(0.3 if winner_plays else -0.3)
    assert flags.loc["key", "winner_share"] == pytest.approx(share) and not flags.loc["key", "flag"]


def test_flags_judge_on_intervals_widened_for_the_cards_judged(monkeypatch):
    # Bonferroni over the cards drawn at least MIN_DRAWN times: two cards, each interval at 1 - 0.05 / 2,
    # whose normal point is z(0.0125) = 2.2414 (normal tables); one card, the 95 % interval
    from etappe.analysis import race_summary

    assert race_summary.flag_level(1) == pytest.approx(1.95996, abs=1e-5)
    assert race_summary.flag_level(10) == pytest.approx(2.8070, abs=1e-4)  # z(0.0025)
    levels = []
    balance = race_summary.card_balance
    monkeypatch.setattr(race_summary, "card_balance", lambda s, z=race_summary.Z95: levels.append(z) or balance(s, z))
    meta = make_meta(cards=[{"key": "dud", "name": "Dud", "role": "remedy", "value": 0},
                            {"key": "km5", "name": "5 km", "role": "distance", "value": 5}])
    hands = [dict(game=g, winner_side=g % 2, total=[1, 0] if g % 2 == 0 else [0, 1],
                  cards={"dud": {"drawn": [5, 5], "discarded": [5, 5]}, "km5": {"drawn": [5, 5], "played": [5, 5]}})
             for g in range(10)]
    frame = make_records(hands, meta)
    flags = worth_playing(summarize(frame))
    assert levels == [pytest.approx(2.2414, abs=1e-4)]
    assert flags.attrs["judged"] == 2 and flags.attrs["z"] == pytest.approx(2.2414, abs=1e-4)
    # the report says so: each interval at the 1 - 0.05 / 2 level
    from etappe.reports.race_report import build_report

    md = " ".join(build_report(summarize(frame), frame.attrs).to_markdown().split())
    assert ("The intervals are widened for the 2 cards judged (Bonferroni: each at the 97.5 % level, z = 2.24), "
            "so that a run flags a card of no effect with a chance of 5 % at most.") in md


def test_anomalies(toy):
    a = anomalies(summarize(toy)).set_index("check")
    # every check of the toy run: 4 games of one hand, 2 sides, 2 card types (game 2 capped), no safety,
    # nobody disqualified, no extension; each card's drawn = played + discarded + in hand, in 4 x 2 x 2 counts
    assert {check: (row["count"], row["of"], row["detail"]) for check, row in a.iterrows()} == {
        "games that hit the turn / hand cap": (1, 4, "games 2"),
        "games with no winner and no cap (a tie, or every side disqualified)": (0, 4, ""),
        "hands that hit the turn cap": (1, 4, ""),
        "card types drawn but never played": (0, 2, ""),
        "card types never drawn": (0, 2, ""),
        "card accounting breaks (drawn != played + discarded + in hand)": (0, 16, ""),
    }
    broken = toy.copy()
    broken.loc[0, "s0_go_drawn"] = 9
    a = anomalies(summarize(broken, toy.attrs)).set_index("check")
    assert a.loc["card accounting breaks (drawn != played + discarded + in hand)", "count"] == 1


def test_anomalies_say_when_they_list_only_the_first_games():
    # 50 games, every other one the toy's capped game (2): 25 capped, and the report keeps the first 20
    hands = [dict(toy_hands()[2 if g % 2 == 0 else 0], game=g) for g in range(50)]
    meta = toy_meta()
    meta["games"] = len(hands)
    frame = make_records(hands, meta)
    capped = sorted(frame.loc[frame["capped"] == 1, "game"].tolist())
    detail = anomalies(summarize(frame)).set_index("check").loc["games that hit the turn / hand cap", "detail"]
    assert detail == f"first 20 of {len(capped)}: games " + ", ".join(map(str, capped[:20]))
    # all of them listed: no "first"
    hands = hands[:10]
    meta["games"] = len(hands)
    frame = make_records(hands, meta)
    detail = anomalies(summarize(frame)).set_index("check").loc["games that hit the turn / hand cap", "detail"]
    assert detail == "games 0, 2, 4, 6, 8"


def _assert_same(a, b):
    assert a.c.keys() == b.c.keys() and a.h.keys() == b.h.keys()
    for k in a.c:
        np.testing.assert_allclose(a.c[k], b.c[k], err_msg=k)
    for k in a.h:
        assert a.h[k] == b.h[k], k
    assert a.examples == b.examples


def test_metadata_without_sides_cards_or_rounds_is_read_from_the_columns(toy):
    # run files of early etappe versions lack them: the sides follow the seats, the card keys and the
    # progress rounds the record columns (s0_<key>_drawn, s0_r<round>); the roles are unknown
    meta = {k: v for k, v in toy.attrs.items() if k not in ("sides", "cards", "progress_rounds")}
    bare, full = summarize(toy, meta), summarize(toy)
    L = bare.layout
    assert (L.sides, L.cards, L.card_names, L.card_roles, L.rounds) == (2, ("go", "flat"), ("go", "flat"), ("", ""), (1, 2, 3))
    for key in ("card_drawn", "card_played", "side_wins", "prog_side_s1", "prog_pos_s2"):
        np.testing.assert_array_equal(bare.c[key], full.c[key], err_msg=key)


def test_merge_equals_whole(toy):
    whole = summarize(toy)
    parts = summarize(toy.iloc[:1], toy.attrs).merge(summarize(toy.iloc[1:], toy.attrs))
    _assert_same(whole, parts)
    one_by_one = summarize_chunks([toy.iloc[[i]] for i in range(4)], toy.attrs)
    _assert_same(whole, one_by_one)
    # order within the table does not matter
    _assert_same(whole, summarize(toy.iloc[::-1], toy.attrs))


def mb_meta():
    return make_meta(cards=[{"key": "roll", "name": "Roll", "role": "go", "value": 0},
                            {"key": "extra_tank", "name": "Extra Tank", "role": "safety", "value": 0}],
                     multi_hand=True, unit="km", target=700)


def mb_hands():
    """Two Mille Bornes-like games: three hands, then one hand."""
    g0 = dict(game=0, winner_side=1, game_turns=90)
    return [
        dict(g0, hand=0, first_seat=0, turns=30, lead_changes=2, last_hand=0, total=[1000, 600],
             max_deficit=[0, 300], cards={"extra_tank": {"drawn": [1, 0], "played": [1, 0], "coups": [1, 0]}}),
        dict(g0, hand=1, first_seat=1, turns=40, lead_changes=1, last_hand=0, total=[1500, 1700],
             max_deficit=[50, 100], capped=1),
        dict(g0, hand=2, first_seat=0, turns=20, lead_changes=0, last_hand=1, total=[2000, 5100],
             max_deficit=[200, 0], extension_side=1),
        dict(game=1, hand=0, first_seat=1, turns=25, winner_side=0, game_turns=25, lead_changes=0,
             total=[5000, 100], max_deficit=[50, 500]),
    ]


def test_multi_hand_games():
    frame = make_records(mb_hands(), mb_meta())
    s = summarize(frame)
    assert s.games == 2 and int(s.c["hands"]) == 4
    length = length_table(s).set_index("metric")
    assert length.loc["hands per game", "median"] == 1 and length.loc["hands per game", "max"] == 3
    assert length.loc["turns per hand", "median"] == 25  # 20, 25, 30, 40
    assert length.loc["turns per game", "max"] == 90
    t = game_table(frame, frame.attrs).set_index("game")
    assert t.loc[0, "lead_changes"] == 3 and t.loc[0, "capped"] == 1
    assert t.loc[0, "winner_deficit"] == 300 and t.loc[0, "final_gap"] == 3100
    assert t.loc[0, "winner_score_deficit"] == 400 and t.loc[1, "winner_score_deficit"] == 0
    # a comeback in games of several hands: behind in the score after a hand (game 0: 600 to
    # 1000), not merely behind in distance within a hand (game 1's winner, 50 km once)
    come = game_end_rates(s).set_index("event").loc["winner was behind in the score after some hand (comeback)"]
    assert (come["count"], come["n"]) == (1, 2)
    # from far behind, by a quarter of the game target: the metadata of these records has none, so no row;
    # with a target of 1600, game 0's 400 points behind is a quarter (a target of 2000 would need 500)
    assert not game_end_rates(s)["event"].str.contains("quarter").any()
    for target, count in ((1600, 1), (2000, 0)):
        meta = dict(mb_meta(), scoring={"game_target": target})
        rates = game_end_rates(summarize(make_records(mb_hands(), meta))).set_index("event")
        far = rates.loc[f"winner was behind in the score after some hand by a quarter of the game target "
                        f"({target // 4} points) or more"]
        assert (far["count"], far["n"]) == (count, 2)
    # game 0 starts with seat 0, game 1 with seat 1: both won by the side that played second
    assert list(outcomes_by_position(s)["wins"]) == [0, 2]
    assert int(s.c["extension_called"]) == 1 and int(s.c["capped_games"]) == 1
    # game 0's hand 1 hit the turn cap; neither game hit the hand cap
    checks = anomalies(s).set_index("check")
    assert tuple(checks.loc["games that hit the hand cap (no side reached the game target)", ["count", "of"]]) == (0, 2)
    assert tuple(checks.loc["hands that hit the turn cap", ["count", "of"]]) == (1, 4)
    # Extra Tank was drawn once, the Roll never
    assert tuple(checks.loc["card types never drawn", ["count", "of", "detail"]]) == (1, 2, "Roll")
    cb = card_balance(s).set_index("card")
    assert cb.loc["extra_tank", "coups"] == 1 and bool(cb.loc["extra_tank", "safety"])
    tt = tension_table(s).set_index("metric")
    assert tt.loc["winner's largest deficit in score after a hand", "max"] == 400
    # in distance, within a hand: game 0's winner (side 1) 300, 100, 0 km; game 1's (side 0) 50 km
    assert tuple(tt.loc["winner's largest deficit (km)", ["n", "min", "max"]]) == (2, 50, 300)


def test_hands_with_the_extension_called_or_the_trip_completed_count_every_side():
    hands = mb_hands()  # side 1 calls the extension in hand 2 of game 0
    hands[2] = dict(hands[2], trip_side=1)
    hands[3] = dict(hands[3], trip_side=0, extension_side=0)  # side 0 too, as the one hand of game 1
    rows = game_end_rates(summarize(make_records(hands, mb_meta()))).set_index("event")
    assert tuple(rows.loc["hands with an extension called", ["count", "n"]]) == (2, 4)
    assert tuple(rows.loc["hands where a side completed the trip", ["count", "n"]]) == (2, 4)


def test_chunks_that_split_a_game_of_several_hands_sum_up_as_the_whole():
    # a chunk of records can end inside a game (hands 0 and 1 of game 0 here, hand 2 in the next): its
    # rows wait for the rest of the game, which is summarized whole
    frame = make_records(mb_hands(), mb_meta())
    whole = summarize(frame)
    for cut in (1, 2, 3):
        _assert_same(whole, summarize_chunks([frame.iloc[:cut], frame.iloc[cut:]], frame.attrs))
    _assert_same(whole, summarize_chunks([frame.iloc[[i]] for i in range(len(frame))], frame.attrs))


def test_a_run_of_no_games_has_an_empty_game_table(toy):
    table = game_table(toy.iloc[:0], toy.attrs)
    assert len(table) == 0 and list(table.columns) == list(game_table(toy, toy.attrs).columns)


def test_records_out_of_order_are_summarized_as_in_order():
    # a game's hands given last first (two rows, and the whole run): the game's end is its last hand
    frame = make_records(mb_hands(), mb_meta())
    two = frame.iloc[:2].copy()
    two["last_hand"] = [0, 1]  # game 0 cut to its first two hands
    for rows in (two, frame):
        ordered = game_table(rows, frame.attrs)
        pd.testing.assert_frame_equal(game_table(rows.iloc[::-1], frame.attrs), ordered)
    assert game_table(two.iloc[::-1], frame.attrs)["final_gap"].tolist() == [1700 - 1500]


def test_extension_rows_only_where_the_design_has_an_extension():
    # Mille Bornes at 4 players races 1000 with no extension: "hands with an extension called,
    # 0 of N" would read as a rule nobody used; a one-hand design with an extension shows it.
    row = "hands with an extension called"
    for meta, shown in ((mb_meta(), True),  # a run written before the metadata said: as before
                        (dict(mb_meta(), extension=1000), True), (dict(mb_meta(), extension=0), False),
                        (dict(mb_meta(), extension=1000, multi_hand=False), True)):
        s = summarize(make_records(mb_hands(), meta))
        assert (row in set(game_end_rates(s)["event"])) == shown, meta
        assert (row in set(anomalies(s)["check"])) == shown, meta


def test_trips_by_turn_order_position_of_the_hand():
    # hands of two games, (first seat of the hand, side that completed the trip): (0, 1), (1, 1),
    # (0, -), (1, 0): side 1 completed it playing second, then first; side 0 playing second.
    # By position in the hand: first 1, second 2, of 3 completed trips.
    hands = [dict(h, trip_side=t) for h, t in zip(mb_hands(), (1, 1, -1, 0))]
    s = summarize(make_records(hands, mb_meta()))
    t = trips_by_position(s)
    assert t["wins"].tolist() == [1, 2] and t["n"].tolist() == [3, 3] and t["fair_share"].tolist() == [0.5, 0.5]
    test = seat_uniformity(s).set_index("test").loc["uniform completed trips by turn-order position in the hand"]
    assert test["n"] == 3 and test["chi2"] == pytest.approx((1 - 1.5) ** 2 / 1.5 + (2 - 1.5) ** 2 / 1.5)
    # chunks add up, cut anywhere
    assert summarize_chunks([make_records(hands[:2], mb_meta()), make_records(hands[2:], mb_meta())],
                            mb_meta()).c["trip_position"].tolist() == [1, 2]
    # per game, for pairing: game 0 completed trips in hands 0 and 1, by the hand's first side in
    # hand 1 only (1/2); game 1 in its one hand, by the side playing second (0)
    t = game_table(make_records(hands, mb_meta()), mb_meta()).set_index("game")
    assert t["first_hand_trip_share"].tolist() == [0.5, 0.0]
    # a game with no completed trip has no share
    none = [dict(h, trip_side=-1) for h in mb_hands()]
    assert np.isnan(game_table(make_records(none, mb_meta()), mb_meta())["first_hand_trip_share"]).all()


def test_chunks_may_cut_a_game():
    frame = make_records(mb_hands(), mb_meta())
    whole = summarize(frame)
    for cut in range(1, 4):
        _assert_same(whole, summarize_chunks([frame.iloc[:cut], frame.iloc[cut:]], frame.attrs))
    acc = RaceSummarizer(frame.attrs)
    acc.add(frame.iloc[:2])
    with pytest.raises(ValueError, match="incomplete"):
        acc.result()


def test_no_complete_game_is_an_error(toy):
    with pytest.raises(ValueError, match="no complete game"):
        summarize_chunks([], toy.attrs)
    with pytest.raises(ValueError, match="no complete game"):
        summarize_chunks([toy.iloc[:0]], toy.attrs)


def test_merge_refuses_other_layout(toy):
    other = make_records(mb_hands(), mb_meta())
    with pytest.raises(ValueError, match="cannot merge summaries of runs with different layouts"):
        summarize(toy).merge(summarize(other))


def test_team_sides():
    # 4 players, partners opposite: seats 0, 2 = side 0; 1, 3 = side 1
    meta = make_meta(players=4, sides=2, seat_side=[0, 1, 0, 1])
    hands = [dict(game=0, first_seat=3, winner_side=1, total=[10, 20]),
             dict(game=1, first_seat=2, winner_side=1, total=[10, 20]),
             dict(game=2, first_seat=1, winner_side=0, total=[20, 10])]
    s = summarize(make_records(hands, meta))
    seats = outcomes_by_seat(s)
    assert list(seats["wins"]) == [1, 2, 1, 2]
    # first seat 3 (side 1) -> winner side 1 first; first seat 2 (side 0) -> side 1 second;
    # first seat 1 (side 1) -> side 0 second
    assert list(outcomes_by_position(s)["wins"]) == [1, 2]
    assert s.layout.side_label(1) == "side 1 (seats 1, 3)"
    # random holds seats 0, 2 (side 0) and 3 (side 1): both sides of every game, one unit each,
    # and one of them wins every game; greedy holds seat 1 (side 1), which won games 0 and 1
    pol = outcomes_by_policy(s).set_index("policy")
    assert tuple(pol.loc["random", ["side_games", "wins"]]) == (6, 3)
    assert tuple(pol.loc["greedy(a=1)", ["side_games", "wins"]]) == (3, 2)
    # A policy wins on at most one of its sides in a game: the games are the trials. random won 3 of the
    # 3 games it played, on 2 sides each: Wilson's 3 of 3 is [3 / (3 + 1.96^2), 1] = [.43850, 1], per side
    # [.21925, .5] (over 6 side-games as if independent it would be [.1876, .8124], past the .5 it cannot pass).
    assert pol.loc["random", "ci_low"] == pytest.approx(0.21925, abs=1e-5)
    assert pol.loc["random", "ci_high"] == pytest.approx(0.5)
    # greedy holds one side a game: Wilson's 2 of 3, (2 + 1.92 -+ 1.96 sqrt(2 / 3 + .9604)) / 4.8416
    assert pol.loc["greedy(a=1)", "ci_low"] == pytest.approx(0.20766, abs=1e-5)
    assert pol.loc["greedy(a=1)", "ci_high"] == pytest.approx(0.93851, abs=1e-5)


def test_partners_sharing_a_policy_count_once():
    # 4 players in teams, policies A B A B: A is side 0, B side 1, one unit each per game
    seat_policy = np.array([[0, 1, 0, 1]] * 3)
    side_games, wins, games = policy_side_games(seat_policy, np.array([0, 1, -1]), [0, 1, 0, 1], 2)
    # the third game has no winner and is left out, as in the per-seat rates
    assert side_games.tolist() == [2, 2] and wins.tolist() == [1, 1] and games.tolist() == [2, 2]


def test_skill_matrix(toy):
    h = head_to_head(summarize(toy)).set_index(["policy", "opponent"])
    # random (seat 0) against greedy (seat 1): won game 0, lost 1 and 3, level in game 2 (no winner, 50 to 50)
    row = h.loc[("random", "greedy(a=1)")]
    assert (row["pairs"], row["ahead"], row["behind"], row["level"]) == (4, 1, 2, 1)
    assert row["score"] == pytest.approx(1.5 / 4)
    assert h.loc[("greedy(a=1)", "random"), "score"] == pytest.approx(2.5 / 4)
    # one pair a game: the interval clusters the points x = 1, 0, 1/2, 0 over pairs y = 1, 1, 1, 1 (docs/statistics.md):
    # residuals x - R y with R = 3/8, variance 4/3 sum(residual^2) / 4^2, Wilson's interval at the effective size
    # R (1 - R) / variance, made smaller by (z / t)^2 with t = 3.182446, Student's 97.5 % point on 3 df
    residuals = np.array([1, 0, 0.5, 0]) - 0.375
    variance = 4 / 3 * (residuals**2).sum() / 16
    n_eff = 0.375 * 0.625 / variance * (Z95 / 3.182446) ** 2
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson(0.375 * n_eff, n_eff), abs=1e-6)


def test_skill_matrix_leaves_out_partners():
    # teams: seats 0, 2 (random, random) against seats 1, 3 (greedy, random); side 1 won games 0 and 1
    meta = make_meta(players=4, sides=2, seat_side=[0, 1, 0, 1])
    hands = [dict(game=0, winner_side=1, total=[10, 20]), dict(game=1, winner_side=1, total=[10, 20]),
             dict(game=2, winner_side=0, total=[20, 10])]
    h = head_to_head(summarize(make_records(hands, meta))).set_index(["policy", "opponent"])
    # random meets greedy in the pairs (0, 1) and (2, 1) of each game; greedy's partner (seat 3, random) is
    # not its opponent, and random against random is no pairing
    row = h.loc[("random", "greedy(a=1)")]
    assert (row["pairs"], row["ahead"], row["behind"], row["level"]) == (6, 2, 4, 0)
    assert len(h) == 2


def test_skill_matrix_puts_the_winner_ahead_of_a_side_that_went_further():
    # docs/designs.md: a side past the trip under overshoot = "disqualify" cannot win, though it went
    # furthest; the winner finishes ahead of everyone, then the total decides
    hands = [dict(game=0, winner_side=1, total=[120, 100], distance=[120, 100], disqualified=[1, 0])]
    h = head_to_head(summarize(make_records(hands, make_meta()))).set_index(["policy", "opponent"])
    row = h.loc[("random", "greedy(a=1)")]
    assert (row["pairs"], row["ahead"], row["behind"], row["level"]) == (1, 0, 1, 0)


@pytest.mark.parametrize("policies, seating, mirrored", [
    ("AABB", "fixed", True),  # side 0 (seats 0, 2): A + B, side 1 (seats 1, 3): A + B
    ("ABAB", "fixed", False),  # side 0: A + A, side 1: B + B
    ("AABB", "rotate", True),  # moved one seat on: B + A and A + B, still the same
    ("AAAB", "fixed", False),
    ("AAAA", "fixed", False),  # one policy: nothing to measure, nothing hidden
])
def test_two_teams_holding_the_same_policies_are_mirrored(policies, seating, mirrored):
    # 4 players in 2 teams, partners opposite: a team of A and B against a team of A and B cannot show
    # which of A and B is stronger
    meta = make_meta(players=4, sides=2, seat_side=[0, 1, 0, 1], seating=seating,
                     policies=[{"name": p, "params": {}} for p in policies])
    assert mirrored_policies(layout_from(meta)) == mirrored


def test_no_skill_matrix_when_every_seat_plays_the_same_policy():
    meta = make_meta(policies=[{"name": "random", "params": {}}] * 2)
    assert head_to_head(summarize(make_records(toy_hands(), meta))).empty
