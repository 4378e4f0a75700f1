"""Tape l'étape summaries (analysis/etape.py) against known values: small
record tables made by hand, whose answers are worked out by hand in the
comments, and one value known from the rules (a joker nobody holds is worth
exactly nothing)."""
import pandas as pd
import pytest

from etappe.analysis import etape as E

PROFILES = ("montagne", "descente", "plaine", "contre_la_montre", "voiture_balai")
SEAT_FIELDS = ("slot", "time", "cum", "cards", "secs", "passes", "skipped",
               "laid", "crev", "vita", "braq", "finish", "side", "hand", "dealt", "place")
NO_JOKER = ("crev", "vita", "braq")  # -1: not used in this stage


def race_table():
    """Two 3-player races; the policy slots are rotated by one seat in race 1.

    race 0: times (10, 10, 30), slots (0, 1, 2): seats 0 and 1 share the win.
    race 1: times (20, 40, 50), slots (1, 2, 0): seat 0 wins alone.
    """
    races = pd.DataFrame({"race": [0, 1], "winner": [-1, 0],
                          "time_0": [10, 20], "time_1": [10, 40], "time_2": [30, 50],
                          "slot_0": [0, 1], "slot_1": [1, 2], "slot_2": [2, 0],
                          "rank_0": [1, 1], "rank_1": [1, 2], "rank_2": [3, 3],
                          "mountain_0": [0, 0], "mountain_1": [0, 0], "mountain_2": [0, 0],
                          "sprint_0": [0, 0], "sprint_1": [0, 0], "sprint_2": [0, 0]})
    races.attrs = {"players": 3, "policies": ["A", "B", "C"]}
    return races


def stage_table(rows, policies):
    """A stages table from rows of stage fields plus per-seat lists; seat
    fields not given are 0 (-1 for the jokers) and slot s sits in seat s."""
    n = len(policies)
    cols = {}
    for row in rows:
        for name, default in (("race", 0), ("stage", 0), ("picker", 0), ("profile", "montagne"),
                              ("start", 0), ("winner", -1), ("blocked", False), ("capped", False),
                              ("turns", 0)):
            cols.setdefault(name, []).append(row.get(name, default))
        for field in SEAT_FIELDS:
            default = list(range(n)) if field == "slot" else [-1 if field in NO_JOKER else 0] * n
            values = row.get(field, default)
            assert len(values) == n
            for s in range(n):
                cols.setdefault(f"{field}_{s}", []).append(values[s])
    stages = pd.DataFrame(cols)
    stages["profile"] = pd.Categorical(stages["profile"], PROFILES)
    stages.attrs = {"players": n, "policies": list(policies)}
    return stages


# ------------------------------------------------------------ outcomes
def test_win_rates_share_tied_wins_per_seat_and_policy():
    rates = E.win_rates(race_table(), "seat").set_index("seat")
    # Seat 0: 1/2 (tie in race 0) + 1 = 1.5 of 2; seat 1: 1/2 + 0; seat 2: 0.
    assert rates["n"].tolist() == [2, 2, 2]
    assert rates["wins"].tolist() == pytest.approx([1.5, 0.5, 0.0])
    assert rates["win_rate"].tolist() == pytest.approx([0.75, 0.25, 0.0])
    # Mean race time: seat 0 (10 + 20) / 2, seat 1 (10 + 40) / 2, seat 2 (30 + 50) / 2.
    assert rates["mean_time"].tolist() == pytest.approx([15.0, 25.0, 40.0])
    # Wilson, p = 0.75, n = 2, z = 1.96, z^2 = 3.8416:
    #   centre = (p + z^2/(2n)) / (1 + z^2/n) = (0.75 + 0.9604) / 2.9208 = 0.58559
    #   half = z sqrt(p(1-p)/n + z^2/(4n^2)) / (1 + z^2/n)
    #        = 1.96 sqrt(0.09375 + 0.2401) / 2.9208 = 1.96 * 0.57780 / 2.9208 = 0.38773
    #   low = 0.58559 - 0.38773 = 0.19786
    assert rates.loc[0, "ci_low"] == pytest.approx(0.19786, abs=1e-4)
    # No wins at all: the low end is 0 and the high end z^2 / (n + z^2) = 3.8416 / 5.8416.
    assert rates.loc[2, "ci_low"] == 0.0
    assert rates.loc[2, "ci_high"] == pytest.approx(0.65763, abs=1e-4)

    by_policy = E.win_rates(race_table(), "policy").set_index("policy")
    # A: seat 0 of race 0 (1/2) and seat 2 of race 1 (0); B: seat 1 of race 0
    # (1/2) and seat 0 of race 1 (1); C: seat 2 of race 0, seat 1 of race 1.
    assert by_policy["n"].to_dict() == {"A": 2, "B": 2, "C": 2}
    assert by_policy["win_rate"].to_dict() == pytest.approx({"A": 0.25, "B": 0.75, "C": 0.0})
    # Mean times: A (10 + 50) / 2, B (10 + 20) / 2, C (30 + 40) / 2.
    assert by_policy["mean_time"].to_dict() == pytest.approx({"A": 30.0, "B": 15.0, "C": 35.0})
    # no races: no rows (as a groupby of nothing), not rows of n = 0
    for by in ("seat", "slot", "policy"):
        empty = E.win_rates(race_table().iloc[:0], by)
        assert empty.empty and list(empty.columns) == [by, "n", "wins", "mean_time", "win_rate", "ci_low", "ci_high"]


def test_wins_are_printed_whole_when_whole_else_with_one_decimal():
    # A run of 10 000 races with one policy: 10 000 wins, not "1e+04"; shared
    # first places make sums of 1/k: 2438 + 1/6 -> 2438.2, 1/2 -> 0.5.
    assert [E.wins_text(w) for w in (10_000.0, 2438 + 1 / 6, 0.5, 0.0, 99.96)] == [
        "10000", "2438.2", "0.5", "0", "100"]


def test_short_names_name_the_family_and_what_differs_from_its_defaults():
    specs = [E.parse_policy(p)[2] for p in ("heuristic", "random", "heuristic:value=2,pick=1", "lookahead")]
    assert E.short_names(specs) == {specs[0]: "heuristic", specs[1]: "random",
                                    specs[2]: "heuristic:value=2,pick=1", specs[3]: "lookahead"}
    # A lone spec of its family keeps what differs from the defaults (it is not the default heuristic);
    # names that are no etape policy stay as they are.
    assert E.short_names([specs[2], specs[1], "A"]) == {specs[2]: "heuristic:value=2,pick=1", specs[1]: "random",
                                                        "A": "A"}


def test_seat_uniformity_chi_square_by_hand():
    # Wins per seat 1.5, 0.5, 0; expected 2/3 each:
    # chi2 = ((5/6)^2 + (1/6)^2 + (2/3)^2) / (2/3) = (42/36) / (2/3) = 7/4;
    # with 2 degrees of freedom P(X > x) = exp(-x/2) = exp(-0.875) = 0.41686.
    test = E.seat_uniformity(race_table())
    assert test.statistic == pytest.approx(1.75) and test.expected == pytest.approx(2 / 3)
    assert test.p_value == pytest.approx(0.41686, abs=1e-5)


# ------------------------------------------------------------ stage profiles
def profile_table():
    """Three Montagne stages and one Plaine stage, 3 players, seats 0 and 2 play A."""
    return stage_table([
        # Montagne: the picker (seat 0) wins.
        {"race": 0, "stage": 0, "picker": 0, "winner": 0, "turns": 10,
         "time": [-40, 30, 60], "cards": [0, 1, 2]},
        # Montagne: seat 2 wins, not the picker (seat 1).
        {"race": 0, "stage": 1, "picker": 1, "winner": 2, "turns": 12,
         "time": [20, 40, -40], "cards": [2, 1, 0]},
        # Montagne: blocked, no winner.
        {"race": 0, "stage": 2, "picker": 2, "winner": -1, "blocked": True, "turns": 14,
         "time": [10, 30, 50], "cards": [1, 1, 3]},
        # Plaine: seat 1 wins, not the picker (seat 0).
        {"race": 1, "stage": 0, "picker": 0, "profile": "plaine", "winner": 1, "turns": 9,
         "time": [30, -40, 20], "cards": [1, 0, 1]},
    ], ["A", "B", "A"])


def test_profile_stats_picker_and_blocked_rates_by_hand():
    prof = E.profile_stats(profile_table()).set_index("profile")
    assert sorted(prof.index) == ["montagne", "plaine"]
    m, p = prof.loc["montagne"], prof.loc["plaine"]
    assert (m["stages"], p["stages"]) == (3, 1)
    assert (m["share"], p["share"]) == pytest.approx((3 / 4, 1 / 4))
    # Montagne: the picker won 1 of 3 stages, 1 of 3 blocked, 1 of 3 without a winner.
    assert m["picker_win_rate"] == pytest.approx(1 / 3)
    assert m["blocked_rate"] == pytest.approx(1 / 3)
    assert m["no_winner_rate"] == pytest.approx(1 / 3)
    assert m["fair_win_rate"] == pytest.approx(1 / 3)
    # Picker times -40, 40, 50: mean 50/3. The others' 30, 60, 20, -40, 10, 30:
    # mean 110/6. Advantage = others - picker = 110/6 - 100/6 = 5/3 s.
    assert m["picker_time"] == pytest.approx(50 / 3)
    assert m["others_time"] == pytest.approx(110 / 6)
    assert m["picker_advantage_s"] == pytest.approx(5 / 3)
    # Turns (10 + 12 + 14) / 3; cards left (0+1+2 + 2+1+0 + 1+1+3) / 9.
    assert m["mean_turns"] == pytest.approx(12.0)
    assert m["mean_cards_left"] == pytest.approx(11 / 9)
    # Plaine: the picker (time 30) lost to seat 1; others -40 and 20: mean -10.
    assert p["picker_win_rate"] == 0.0 and p["blocked_rate"] == 0.0
    assert p["picker_advantage_s"] == pytest.approx(-10 - 30)
    # Wilson at k = 0, n = 1: low 0, high z^2 / (1 + z^2) = 3.8416 / 4.8416.
    assert p["picker_win_lo"] == 0.0
    assert p["picker_win_hi"] == pytest.approx(0.79345, abs=1e-4)


def test_profile_by_policy_by_hand():
    out = E.profile_by_policy(profile_table()).set_index(["profile", "policy"])
    # Montagne, A (seats 0 and 2): times -40, 60, 20, -40, 10, 50 -> 60 / 6 = 10;
    # wins: seat 0 in stage 0 and seat 2 in stage 1 -> 2 of 6.
    # Montagne, B (seat 1): times 30, 40, 30 -> 100/3, no win.
    # Plaine, A: times 30, 20 -> 25, no win; Plaine, B: -40, won 1 of 1.
    assert out["n"].to_dict() == {("montagne", "A"): 6, ("montagne", "B"): 3,
                                  ("plaine", "A"): 2, ("plaine", "B"): 1}
    assert out["mean_time"].to_dict() == pytest.approx({("montagne", "A"): 10.0, ("montagne", "B"): 100 / 3,
                                                        ("plaine", "A"): 25.0, ("plaine", "B"): -40.0})
    assert out["win_rate"].to_dict() == pytest.approx({("montagne", "A"): 1 / 3, ("montagne", "B"): 0.0,
                                                       ("plaine", "A"): 0.0, ("plaine", "B"): 1.0})


# ------------------------------------------------------------ jokers
def joker_table():
    """Two races of two stages, 3 players: 6 seat-races, stage 1 is the last.

    Crevaison: race 0 stage 0 seat 1 on seat 2; race 0 stage 1 seat 2 on seat 1;
    race 1 stage 1 seat 0 on itself.
    Vitamine: race 0 stage 1 seat 0; race 1 stage 1 seat 1.
    Braquet: race 0 stage 1 seat 1 (5 cards); race 1 stage 0 seat 0 (3 cards).
    """
    return stage_table([
        {"race": 0, "stage": 0, "winner": 0, "time": [10, 20, 30], "crev": [-1, 2, -1]},
        {"race": 0, "stage": 1, "picker": 1, "winner": -1, "blocked": True,
         "time": [40, 10, 20], "crev": [-1, -1, 1], "vita": [2, -1, -1], "braq": [-1, 5, -1]},
        {"race": 1, "stage": 0, "winner": 0, "time": [-40, 30, 50], "braq": [3, -1, -1]},
        {"race": 1, "stage": 1, "picker": 1, "winner": -1, "capped": True,
         "time": [20, 30, 110], "crev": [0, -1, -1], "vita": [-1, 2, -1]},
    ], ["A", "B", "C"])


def test_joker_usage_by_hand():
    usage = E.joker_usage(joker_table()).set_index("joker")
    assert list(usage.index) == ["crevaison", "vitamine", "braquet"]
    # Uses per seat-race (6): crevaison 3/6, vitamine 2/6, braquet 2/6.
    assert usage["uses"].to_dict() == {"crevaison": 3, "vitamine": 2, "braquet": 2}
    assert usage["use_rate"].to_dict() == pytest.approx({"crevaison": 1 / 2, "vitamine": 1 / 3, "braquet": 1 / 3})
    # In the last stage (stage 1): crevaison 2 of 3, vitamine 2 of 2, braquet 1 of 2.
    assert usage["in_last_stage"].to_dict() == pytest.approx({"crevaison": 2 / 3, "vitamine": 1.0,
                                                              "braquet": 1 / 2})
    # One of the three Crevaisons was on the user itself; Braquet laid (5 + 3) / 2 cards.
    assert usage.loc["crevaison", "on_self"] == pytest.approx(1 / 3)
    assert usage.loc["braquet", "cards_per_use"] == pytest.approx(4.0)


def test_joker_stage_effect_by_hand():
    effect = E.joker_stage_effect(joker_table()).set_index("joker")
    crev = effect.loc["crevaison"]
    # Seat-stages with a Crevaison used: 20, 20, 20 (mean 20, variance 0). The
    # other nine: 10, 30, 40, 10, -40, 30, 50, 30, 110: mean 270/9 = 30; squared
    # deviations 400, 0, 100, 400, 4900, 0, 400, 0, 6400 sum to 12600, variance
    # 12600/8 = 1575. Difference 20 - 30 = -10; se = sqrt(0/3 + 1575/9) =
    # sqrt(175) = 13.2288; interval -10 -+ 1.96 * 13.2288 = (-35.928, 15.928).
    assert crev["stages_used"] == 3
    assert crev["time_used"] == pytest.approx(20.0) and crev["time_not_used"] == pytest.approx(30.0)
    assert crev["difference_s"] == pytest.approx(-10.0)
    assert (crev["ci_low"], crev["ci_high"]) == pytest.approx((-35.928, 15.928), abs=1e-3)
    # Braquet used at 10 (race 0 stage 1 seat 1) and -40: mean -15. All twelve
    # times sum to 60 + 70 + 40 + 160 = 330, so the other ten sum to 360: mean
    # 36; difference -15 - 36 = -51.
    assert effect.loc["braquet", "stages_used"] == 2
    assert effect.loc["braquet", "difference_s"] == pytest.approx(-51.0)


def test_anomalies_by_hand():
    stages = joker_table()
    for s in range(3):
        stages[f"vita_{s}"] = -1  # nobody plays Vitamine
    stages["braq_1"] = -1  # Braquet played once (race 1 stage 0 seat 0)
    stages.loc[2, ["blocked", "winner"]] = (True, -1)  # race 1 stage 0 blocks too
    races = pd.DataFrame({"race": [0, 1], "winner": [-1, 2]})
    out = E.anomalies(races, stages).set_index("what")
    # 4 stages: 1 capped (race 1 stage 1), 2 blocked (race 0 stage 1, race 1
    # stage 0), so 3 without a winner; race 0 has a shared first place;
    # of the three jokers in the game (the default), Vitamine was never used.
    assert out[["count", "out_of", "detail"]].to_dict("index") == {
        "stages cut off by the turn cap": {"count": 1, "out_of": 4, "detail": ""},
        "stages blocked (nobody can lay)": {"count": 2, "out_of": 4, "detail": ""},
        "stages without a winner": {"count": 3, "out_of": 4, "detail": ""},
        "races with a shared first place": {"count": 1, "out_of": 2, "detail": ""},
        "jokers in the game never used": {"count": 1, "out_of": 3, "detail": "vitamine"},
    }
    assert out["rate"].tolist() == pytest.approx([0.25, 0.5, 0.75, 0.5, 1 / 3])
    # A joker left out of the game (rule option jokers) is not an unused one:
    # of the two dealt, none went unused.
    stages.attrs["options"] = {"jokers": "crevaison,braquet"}
    row = E.anomalies(races, stages).set_index("what").loc["jokers in the game never used"]
    assert (row["count"], row["out_of"], row["detail"]) == (0, 2, "")


def test_joker_value_is_zero_when_nobody_holds_jokers():
    # With no jokers in the game, withholding one from seat 0 changes nothing:
    # the paired runs deal the same races and play them the same way, so every
    # race's time difference is exactly 0 (value 0; no interval, as 60 equal differences have no spread).
    value = E.joker_value(4, 60, ["heuristic", "random"] * 2, seed=9, options={"jokers": ""})
    assert list(value["joker"]) == ["crevaison", "vitamine", "braquet"]
    assert (value["races"] == 60).all()
    for col in ("ci_low", "ci_high", "win_gain_low", "win_gain_high"):
        assert value[col].isna().all(), col
    assert (value["value_s"] == 0).all() and (value["win_rate_gain"] == 0).all()
    assert (value["p_value"] == 1).all() and (value["p_holm"] == 1).all()  # no difference at all: p = 1
