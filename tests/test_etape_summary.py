"""Tape l'étape's RunSummary (analysis/etape.py): counts, sums and integer
histograms filled chunk by chunk give the tables of the whole record tables,
and `etappe report` reads a run file in batches into one (cli/etape.py
summarize_run). Values known by hand are worked out in the comments."""
import pickle

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402
from matplotlib import cbook  # noqa: E402

from etappe.analysis import etape as E  # noqa: E402
from etappe.analysis.stats import IntHistogram  # noqa: E402
from etappe.cli import etape as C  # noqa: E402
from etappe.reports import etape as R  # noqa: E402

POLICIES = ["heuristic", "random", "blocker", "high"]
FRAMES = ("win_rates", "head_to_head", "side_classifications", "profile_stats", "profile_by_policy", "joker_usage",
          "joker_stage_effect", "anomalies", "length_table", "tension_table", "card_values")


@pytest.fixture(scope="module")
def records():
    # stage places break GC ties and a seat is denied the Vitamine: every branch of the tables is used
    return E.simulate(4, 45, POLICIES, 5, {"mode": "endurance", "endurance_stages": 2, "gc_tie": "stage_places",
                                           "withhold_seat": 2, "withhold_jokers": "vitamine"})


def same_tables(a: E.RunSummary, b: E.RunSummary) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(a, name)(), getattr(b, name)(), check_exact=True, obj=name)
    for by in ("seat", "slot", "policy"):
        pd.testing.assert_frame_equal(a.win_rates(by), b.win_rates(by), check_exact=True)
    for by in ("policy", "seat"):
        for value in ("gap", "cum"):
            pd.testing.assert_frame_equal(a.progress_table(by, value), b.progress_table(by, value), check_exact=True)
    assert a.leader_holds() == b.leader_holds() and a.seat_uniformity() == b.seat_uniformity()
    assert a.stage_times == b.stage_times and a.turns_race == b.turns_race
    assert a.tension["winner_deficit"] == b.tension["winner_deficit"]


def race_chunks(races, stages, cuts):
    """The records split before the races `cuts`: (races, stages) of whole races."""
    bounds = [races["race"].min(), *cuts, races["race"].max() + 1]
    return [(races[races["race"].between(lo, hi - 1)], stages[stages["race"].between(lo, hi - 1)])
            for lo, hi in zip(bounds, bounds[1:])]


def test_chunks_added_or_merged_give_the_tables_of_the_whole(records):
    races, stages = records
    whole = E.summarize(races, stages)
    assert (whole.races, whole.stages) == (45, 45 * 8)  # endurance, 2 stages a player, 4 players
    chunks = race_chunks(races, stages, [7, 8, 30])
    added = E.RunSummary(races.attrs)
    for r, s in chunks:
        added.add(r, s)
    merged = E.summarize(*chunks[0])
    for r, s in chunks[1:]:
        merged = merged.merge(E.summarize(r, s))
    same_tables(added, whole)
    same_tables(merged, whole)
    # the races and the stages need not come in the same chunks
    apart = E.RunSummary(races.attrs).add(races.iloc[:20]).add(stages_df=stages[stages["race"] < 3])
    apart.add(races.iloc[20:]).add(stages_df=stages[stages["race"] >= 3])
    same_tables(apart, whole)
    # a table function is its summary's table
    pd.testing.assert_frame_equal(E.joker_usage(stages), whole.joker_usage(), check_exact=True)
    pd.testing.assert_frame_equal(E.win_rates(races, "policy"), whole.win_rates("policy"), check_exact=True)


def test_the_tables_of_a_chunk_are_not_the_whole_runs(records):
    # the comparison above can fail: a summary of part of the run gives other tables
    races, stages = records
    part = E.summarize(*race_chunks(races, stages, [30])[0])
    with pytest.raises(AssertionError):
        same_tables(part, E.summarize(races, stages))


def test_merging_summaries_of_other_runs_is_refused(records):
    races, stages = records
    other = races.copy()
    other.attrs = {**races.attrs, "policies": ["random"] * 4}
    with pytest.raises(ValueError, match="only summaries of one run"):
        E.summarize(races).merge(E.summarize(other))
    with pytest.raises(ValueError, match="unknown summary part"):
        E.RunSummary(races.attrs, parts=("outcomes", "speed"))


def test_a_table_whose_part_was_not_kept_is_refused_not_given_as_zeros(records):
    races, stages = records
    outcomes = E.summarize(races, stages, parts=("outcomes",))
    assert outcomes.win_rates("seat")["n"].sum() == 4 * 45
    for table, part in (("head_to_head", "skill"), ("side_classifications", "side"), ("profile_stats", "profiles"),
                        ("profile_by_policy", "profiles"), ("joker_usage", "jokers"),
                        ("joker_stage_effect", "jokers"), ("length_table", "length"), ("tension_table", "tension"),
                        ("leader_holds", "tension"), ("progress_table", "progress"), ("card_values", "cards")):
        with pytest.raises(ValueError, match=f"made without the part.s. {part} that the table reads"):
            getattr(outcomes, table)()
    # the anomalies' last row counts the jokers never used: it needs the jokers' sums too
    with pytest.raises(ValueError, match="without the part.s. jokers"):
        E.summarize(races, stages, parts=("anomalies",)).anomalies()
    with pytest.raises(ValueError, match="without the part.s. outcomes"):
        E.summarize(races, stages, parts=("skill",)).seat_uniformity()
    pd.testing.assert_frame_equal(E.summarize(races, stages, parts=("anomalies", "jokers")).anomalies(),
                                  E.summarize(races, stages).anomalies())


def test_a_summary_holds_no_records():
    # its counts, sums and histograms of whole numbers do not grow with the races (the stage times'
    # and turns' histograms span the values met, which widen a little)
    small, large = (pickle.dumps(E.summarize(*E.simulate(4, races, POLICIES, 2))) for races in (50, 2000))
    assert len(large) < 1.5 * len(small)


def test_a_run_file_read_in_batches_that_split_races(tmp_path, records):
    races, stages = records
    out = tmp_path / "run.parquet"
    C.simulate_command(4, 45, POLICIES, 5, out, races.attrs["options"], chunk_size=10)
    # row groups of 7 stages: races of 8 stages are cut between batches, and are added whole
    table = pq.read_table(C.stages_path(out))
    pq.write_table(table, C.stages_path(out), row_group_size=7)
    added = []
    real = E.RunSummary.add

    def watch(self, races_df=None, stages_df=None):
        added.append(None if stages_df is None else stages_df["race"].to_numpy())
        return real(self, races_df, stages_df)

    E.RunSummary.add = watch
    try:
        read = C.summarize_run(out, batch_rows=7)
    finally:
        E.RunSummary.add = real
    whole = E.summarize(races, stages)
    whole.attrs = read.attrs  # the file's identity holds the wall time of the command's play
    same_tables(read, whole)
    chunks = [race for race in added if race is not None and len(race)]
    assert max(map(len, chunks)) <= 7 + 8  # one batch and the race held back from the one before
    assert sum(map(len, chunks)) == 45 * 8 and all(np.isin(race, race[-1:]).sum() == 8 for race in chunks)


# ---- tables by hand -----------------------------------------------------------------------

def side_races():
    """Two 3-player races, slots rotated by one seat in race 1 (policies A, B, A by slot).

    race 0: slots (0, 1, 2), mountain (3, 3, 0), sprint (0, 0, 0): seats 0 and 1 share the mountain top,
    all three the sprint top. race 1: slots (1, 2, 0), mountain (5, 0, 1), sprint (2, 0, 4).
    """
    races = pd.DataFrame({"race": [0, 1], "slot_0": [0, 1], "slot_1": [1, 2], "slot_2": [2, 0],
                          "mountain_0": [3, 5], "mountain_1": [3, 0], "mountain_2": [0, 1],
                          "sprint_0": [0, 2], "sprint_1": [0, 0], "sprint_2": [0, 4]})
    races.attrs = {"players": 3, "policies": ["A", "B", "A"]}
    return races


def test_side_classifications_by_hand():
    side = E.side_classifications(side_races()).set_index("policy")
    # A (slots 0 and 2): race 0 seats 0 and 2, race 1 seats 1 and 2 -> 4 seat-races; B: race 0 seat 1,
    # race 1 seat 0 -> 2. Mountain points: A 3 + 0 + 0 + 1 = 4 -> 1; B 3 + 5 = 8 -> 4. Mountain top:
    # A 1/2 (race 0 seat 0) -> 0.5 / 4; B 1/2 + 1 -> 1.5 / 2. Sprint points: A 0 + 0 + 0 + 4 -> 1;
    # B 0 + 2 -> 1. Sprint top: A 1/3 + 1/3 + 1 (race 1 seat 2) -> (5/3) / 4; B 1/3 -> (1/3) / 2.
    assert side["n"].to_dict() == {"A": 4, "B": 2}
    assert side["mountain_points"].to_dict() == pytest.approx({"A": 1.0, "B": 4.0})
    assert side["mountain_top"].to_dict() == pytest.approx({"A": 0.125, "B": 0.75})
    assert side["sprint_points"].to_dict() == pytest.approx({"A": 1.0, "B": 1.0})
    assert side["sprint_top"].to_dict() == pytest.approx({"A": 5 / 12, "B": 1 / 6})
    # Wilson, z = 1.96, z^2 = 3.8416 (win_rates' interval). A holds two slots and tops on at most one of them
    # a race, so its 2 races are the trials: 0.5 of 2, p = 0.25, centre = (0.25 + 0.9604) / 2.9208 = 0.41440,
    # half = 1.96 sqrt(0.09375 + 0.2401) / 2.9208 = 0.38773: [0.02667, 0.80213], per slot (/ 2)
    # [0.01334, 0.40107] (over its 4 seat-races as if independent it would be [0.01319, 0.60423]).
    # B's, 1.5 of 2: p = 0.75, centre = (0.75 + 0.9604) / 2.9208 = 0.58559, half = 0.38773.
    assert side.loc["A", ["mountain_top_low", "mountain_top_high"]].tolist() == pytest.approx([0.01334, 0.40107],
                                                                                                abs=1e-4)
    assert side.loc["B", ["mountain_top_low", "mountain_top_high"]].tolist() == pytest.approx([0.19786, 0.97332],
                                                                                                abs=1e-4)
    # one race a chunk: the same
    races = side_races()
    merged = E.summarize(races.iloc[:1], parts=("side",)).merge(E.summarize(races.iloc[1:], parts=("side",)))
    pd.testing.assert_frame_equal(merged.side_classifications(), E.side_classifications(races), check_exact=True)


def profile_stages(race, picker, profile, winner):
    """3-player stage records of the given stages; times and cards 0, slot s in seat s."""
    n, k = 3, len(race)
    stages = pd.DataFrame({"race": race, "stage": pd.Series(race).groupby(race).cumcount(), "picker": picker,
                           "profile": pd.Categorical(profile, E.K.PROFILE_NAMES), "winner": winner,
                           "blocked": [w < 0 for w in winner], "turns": [9] * k,
                           **{f"{field}_{s}": [s if field == "slot" else 0] * k
                              for field in ("slot", "time", "cards") for s in range(n)}})
    stages.attrs = {"players": n, "policies": ["A"] * n}
    return stages


def test_picker_share_of_the_stages_won_is_what_compares_with_the_fair_share():
    # Four 3-player Montagne stages: the picker (seat 0) wins; two block without a winner (pickers 1
    # and 2); seat 1 wins the picker 0's. The picker won 1 of 4 stages, but 1 of the 2 stages anybody
    # won: 1/2 against the fair 1/3 (3 players, most stages block: the 1/4 is no disadvantage).
    stages = profile_stages([0, 0, 0, 1], [0, 1, 2, 0], ["montagne"] * 4, [0, -1, -1, 1])
    m = E.profile_stats(stages).set_index("profile").loc["montagne"]
    assert (m["picker_win_rate"], m["picker_share_of_wins"], m["fair_win_rate"]) == pytest.approx((1 / 4, 1 / 2, 1 / 3))
    # Wilson, 1 of 2: centre (0.5 + 0.9604) / 2.9208 = 0.5, half 1.96 sqrt(0.125 + 0.2401) / 2.9208 = 0.40547
    assert [m["picker_share_of_wins_lo"], m["picker_share_of_wins_hi"]] == pytest.approx([0.09453, 0.90547], abs=1e-4)


def test_profile_share_interval_counts_the_picks_of_a_race_together():
    # Three Sprint races of 3 stages; Montagne picked 2, 0 and 1 times: share 3/9 = 1/3. Clustered by
    # race (stats.ratio_interval): residuals x - y/3 = 1, -1, 0, var = 3/2 (1 + 1) / 9^2 = 1/27;
    # n_eff = (2/9) / (1/27) (1.96 / t_2)^2 = 6 (1.96 / 4.3027)^2 = 1.2451, Wilson at p = 1/3, n = 1.2451:
    # centre (1/3 + 1.5427) / 4.0854 = 0.45921, half 1.96 sqrt(0.17846 + 0.61955) / 4.0854 = 0.42859.
    profiles = ["montagne", "montagne", "plaine", "plaine", "descente", "plaine", "montagne", "descente", "plaine"]
    stages = profile_stages([0, 0, 0, 1, 1, 1, 2, 2, 2], [0, 1, 2] * 3, profiles, [0] * 9)
    m = E.profile_stats(stages).set_index("profile").loc["montagne"]
    assert m["share"] == pytest.approx(1 / 3)
    assert [m["share_lo"], m["share_hi"]] == pytest.approx([0.03063, 0.88778], abs=1e-4)
    # Endurance, 5 stages a player: every player picks each of their 5 stage cards once, so each
    # profile is a fifth of every race's stages.
    _, stages = E.simulate(4, 20, ["heuristic"], 3, {"mode": "endurance"})
    prof = E.profile_stats(stages)
    assert (prof["share"] == 0.2).all() and (prof["share_lo"] <= 0.2).all() and (prof["share_hi"] >= 0.2).all()


def test_win_shares_of_one_race_chunks_add_up_by_hand():
    # race 0: seats 0 and 1 share first place (1/2 each); race 1: seats 0, 1 and 2 share it (1/3 each);
    # race 2: seat 2 alone. Seat 0: 1/2 + 1/3 = 5/6, seat 1: 5/6, seat 2: 1/3 + 1 = 4/3, of 3 races each.
    races = pd.DataFrame({"race": [0, 1, 2], "slot_0": [0] * 3, "slot_1": [1] * 3, "slot_2": [2] * 3,
                          "rank_0": [1, 1, 2], "rank_1": [1, 1, 3], "rank_2": [3, 1, 1],
                          "time_0": [10, 20, 40], "time_1": [10, 20, 50], "time_2": [30, 20, 30]})
    races.attrs = {"players": 3, "policies": ["x", "y", "x"]}
    summary = E.RunSummary(races.attrs, parts=("outcomes",))
    for r in range(3):
        summary.add(races.iloc[r:r + 1])
    seat = summary.win_rates("seat").set_index("seat")
    assert seat["wins"].to_numpy() == pytest.approx([5 / 6, 5 / 6, 4 / 3])
    assert seat["n"].tolist() == [3, 3, 3] and seat["mean_time"].tolist() == pytest.approx([70 / 3, 80 / 3, 80 / 3])
    policy = summary.win_rates("policy").set_index("policy")
    # x: seats 0 and 2, 6 seat-races, 5/6 + 4/3 = 13/6 wins; y: seat 1
    assert policy["n"].to_dict() == {"x": 6, "y": 3}
    assert policy["win_rate"].to_dict() == pytest.approx({"x": 13 / 36, "y": 5 / 18})


def test_skill_matrix_lists_the_policies_in_order_of_first_seat_across_chunks():
    # slots rotate (seat s plays slot (s + race) mod 3): seat 0 plays b, a, c in races 0, 1, 2, so
    # stats.skill_table lists b, a, c; a summary of races 1 and 2 alone would list a, c, b.
    # b against a: race 0 (seats 0, 1) ranks 1, 2: ahead; race 1 (seats 2, 0) 3, 1: behind;
    # race 2 (seats 1, 2) 1, 2: ahead -> 3 pairs, 2 ahead, score 2/3
    races = pd.DataFrame({"race": [0, 1, 2], "slot_0": [0, 1, 2], "slot_1": [1, 2, 0], "slot_2": [2, 0, 1],
                          "rank_0": [1, 1, 3], "rank_1": [2, 2, 1], "rank_2": [3, 3, 2]})
    races.attrs = {"players": 3, "policies": ["b", "a", "c"]}
    merged = E.summarize(races.iloc[:2], parts=("skill",)).merge(E.summarize(races.iloc[2:], parts=("skill",)))
    h2h = merged.head_to_head()
    assert list(dict.fromkeys(h2h["policy"])) == ["b", "a", "c"]
    assert list(dict.fromkeys(E.head_to_head(races.iloc[1:])["policy"])) == ["a", "c", "b"]
    row = h2h.set_index(["policy", "opponent"]).loc[("b", "a")]
    assert (row["pairs"], row["ahead"], row["behind"], row["score"]) == (3, 2, 1, 2 / 3)


def test_box_plot_of_a_histogram_is_matplotlibs_of_its_values():
    # 1 2 3 4 100: quartiles at positions 1, 2, 3 (2, 3, 4), IQR 2, whiskers within 4 - 3 .. 4 + 3: 1 and 4
    # 1 2 3 4: positions 0.75, 1.5, 2.25 -> 1.75, 2.5, 3.25; whiskers at 1 and 4
    for values, known in (([1, 2, 3, 4, 100], (2, 3, 4, 1, 4)), ([4, 1, 3, 2], (1.75, 2.5, 3.25, 1, 4)),
                          ([7, 7, 7], (7, 7, 7, 7, 7))):
        box = R._box(IntHistogram.of(values))
        assert tuple(box[k] for k in ("q1", "med", "q3", "whislo", "whishi")) == known
        reference = cbook.boxplot_stats(np.array(values, float))[0]
        assert {k: reference[k] for k in box} == box
