"""Audit of the race balance report against design/reports.md: the numbers
the report prints are recomputed here from the records with plain pandas
(or follow from the rules: who partners whom), never taken from the
report's own code."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from etappe.analysis.race import simulate
from etappe.analysis.race_summary import summarize
from etappe.reports.race_report import build_report


def _markdown(frame: pd.DataFrame) -> str:
    return build_report(summarize(frame), frame.attrs).to_markdown()


def _table(md: str, caption: str) -> pd.DataFrame:
    """The Markdown table under a bold caption (starting with `caption`), as strings."""
    lines = md.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"**{caption}"))
    rows = []
    for line in lines[at + 2:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    header, body = rows[0], rows[2:]
    return pd.DataFrame(body, columns=header)


@pytest.fixture(scope="module")
def stapop2():
    return simulate("stapop", players=2, games=300, seed=11, threads=1)


@pytest.fixture(scope="module")
def stapop4():
    return simulate("stapop", players=4, games=120, seed=3, threads=1)


def test_mixed_teams_have_no_skill_matrix_or_policy_win_rates():
    # Mille Bornes at 6 players: 3 teams of 2, seat p plays for side p % 3 (partners opposite), so
    # --policy random,greedy (random, greedy, random, greedy, random, greedy) gives every team one random
    # and one greedy player: in every game each policy finishes ahead of the other exactly as often as
    # behind, and wins exactly 1/3, whatever their skill. A 50 % head to head with a tight interval
    # would read "random plays as well as greedy".
    frame = simulate("millebornes", players=6, games=30, policies=["random", "greedy"], seed=5, threads=1)
    sides = [frame.attrs["seat_side"][p] for p in range(6)]
    assert sides == [0, 1, 2, 0, 1, 2]
    md = _markdown(frame)
    assert "Head to head: finishing ahead" not in md
    assert "**Win rate per policy" not in md
    assert "No skill matrix: every side holds the same policies" in md
    assert "No win rate per policy: every side holds the same policies" in md
    # the seats still have theirs: one per side, each side's wins counted from the records
    last = frame[frame["last_hand"] == 1]
    seats = _table(md, "Win rate per seat")
    for p in range(6):
        assert int(seats.loc[p, "wins"]) == int((last["winner_side"] == p % 3).sum())


def test_teams_of_one_policy_keep_their_skill_matrix():
    # 4 players, 2 teams (seat p for side p % 2): random,greedy puts both randoms on side 0
    frame = simulate("millebornes", players=4, games=20, policies=["random", "greedy"], seed=5, threads=1)
    md = _markdown(frame)
    assert "Head to head: finishing ahead" in md and "**Win rate per policy" in md
    last = frame[frame["last_hand"] == 1]
    pol = _table(md, "Win rate per policy").set_index("policy")
    decided = last[last["winner_side"] >= 0]
    assert int(pol.loc["greedy", "wins"]) == int((decided["winner_side"] == 1).sum())
    assert int(pol.loc["greedy", "n"]) == len(decided)


def test_winner_share_has_its_interval(stapop2):
    # reports.md: intervals on every rate. The winner's share of a card's plays (games with a winner)
    md = _markdown(stapop2)
    table = _table(md, "Card balance: drawn, played, discarded, in hand").set_index("name")
    assert {"winner_share_low", "winner_share_high"} <= set(table.columns)
    f = stapop2
    won = f[f["winner_side"] >= 0]
    for key, name in (("km10", "10 km naar de plassen"), ("headwind", "Tegenwind (headwind)")):
        by_winner = sum(won.loc[won["winner_side"] == s, f"s{s}_{key}_played"].sum() for s in range(2))
        all_plays = sum(won[f"s{s}_{key}_played"].sum() for s in range(2))
        share = by_winner / all_plays
        row = table.loc[name]
        assert float(row["winner_share"]) == pytest.approx(share, abs=5e-4)
        assert float(row["winner_share_low"]) <= share <= float(row["winner_share_high"])


def test_attack_table_gives_its_denominator(stapop2):
    # the victim's win rate: units game x side hit at least once, in the games with a winner
    md = _markdown(stapop2)
    table = _table(md, "Attacks (hazards, limits, setbacks)").set_index("name")
    f = stapop2
    won = f[f["winner_side"] >= 0]
    for key, name in (("crossing", "Gesloten overweg (closed level crossing)"), ("headwind", "Tegenwind (headwind)")):
        hit = [won[f"s{s}_{key}_received"] > 0 for s in range(2)]
        n = int(sum(h.sum() for h in hit))
        wins = int(sum((h & (won["winner_side"] == s)).sum() for s, h in enumerate(hit)))
        row = table.loc[name]
        assert int(row["n_victims"]) == n
        assert float(row["victim_win_rate"]) == pytest.approx(wins / n, abs=5e-4)


def test_hazards_received_are_those_played_less_the_coups_fourres():
    # Mille Bornes: a hazard answered by a coup fourré never lands (rules page), so the attacks table's
    # received falls short of played by the coups of the safety against it, counted here from the records
    frame = simulate("millebornes", players=2, games=300, seed=4, threads=1)
    md = _markdown(frame)
    assert "Received is played less the coups fourrés made against the card" in md
    table = _table(md, "Attacks (hazards, limits, setbacks)").set_index("name")
    cards = {c["key"]: c for c in frame.attrs["cards"]}
    total = {(key, stat): sum(int(frame[f"s{s}_{key}_{stat}"].sum()) for s in range(2))
             for key in cards for stat in ("played", "received", "coups")}
    gaps = 0
    for key, card in cards.items():
        if card["role"] in ("hazard", "limit"):
            row = table.loc[card["name"]]
            assert int(row["played"]) == total[key, "played"] and int(row["received"]) == total[key, "received"]
            # one safety may answer several hazards: its coups are shared out among them
            gaps += total[key, "played"] - total[key, "received"]
    assert gaps == sum(total[k, "coups"] for k, c in cards.items() if c["role"] == "safety") > 0


def test_progress_says_what_its_rounds_hold(stapop4):
    # the records keep the distance at the end of rounds 1-12, then of sparser rounds up to 200 (a Stap op
    # hand at 4 players lasts about 64 rounds); a hand that has ended carries its final distance forward
    f = stapop4
    R = f.attrs["progress_rounds"]
    assert R[:13] == list(range(1, 13)) + [14] and R[-1] == 200
    longest = int(f["turns"].max())
    assert longest <= 200 * 4, "no hand of the sample outlasts the kept rounds"
    md = _markdown(f)
    assert f"(n = {len(f)} hands; no hand lasted beyond round 200 (the longest took {longest} turns))" in md
    # the curves stop at the first kept round at or after the round by which 99 % of the hands had ended
    last = min(r for r in R if r * 4 >= np.quantile(f["turns"], 0.99, method="inverted_cdf"))
    assert last < R[-1]
    assert "Mean distance laid at the end of rounds 1-12, 14, 16, 18, 20, 25, " in md
    assert f", {last} of a hand (a round is one turn per player" in md
    assert "the curves go on until 99 % of the hands had ended or the kept rounds end" in md
    # the table's rounds: the kept ones nearest to where 25, 50, 75 and 95 % of the hands had ended
    ends = np.quantile(f["turns"].to_numpy() / 4, [0.25, 0.5, 0.75, 0.95], method="inverted_cdf")
    picks = {min(R, key=lambda r: abs(r - e)) for e in ends}
    table = _table(md, "Mean distance (km) by turn-order position at the kept rounds nearest")
    assert set(table["round"].astype(int)) == picks and len(picks) >= 3
    # position 1 at the median's round: the mean over every hand of the first player's distance then
    median_round = min(R, key=lambda r: abs(r - ends[1]))
    firsts = f["first_seat"].to_numpy()
    mean = np.mean([f[f"s{seat}_r{median_round}"].iloc[i] for i, seat in enumerate(firsts)])
    row = table[(table["group"] == "position 1") & (table["round"].astype(int) == median_round)]
    assert float(row["mean"].iloc[0]) == pytest.approx(mean, abs=0.05)


def test_progress_of_a_run_whose_records_stop_early_says_how_many_hands_outlast_them(stapop4):
    # a run that kept rounds only up to 40 (as etappe's records did before): Stap op hands often run past
    # round 40, more than 160 turns at 4 players, and the text says how many
    f = stapop4.drop(columns=[c for c in stapop4.columns if c[3:4] == "r" and c[4:].isdigit() and int(c[4:]) > 40])
    f.attrs = {**stapop4.attrs, "progress_rounds": [r for r in stapop4.attrs["progress_rounds"] if r <= 40]}
    past = int((f["turns"] > 160).sum())
    assert 0 < past < len(f)
    md = _markdown(f)
    assert f"(n = {len(f)} hands; {past} of them ({100 * past / len(f):.1f} %) were still being played after " \
           "round 40 and are not followed further)" in md


def test_final_gap_says_its_unit(stapop4):
    # one hand: totals are distances (km); Mille Bornes scores hands: points
    f = stapop4
    assert (f["s0_total"] == f["s0_distance"]).all()
    md = _markdown(f)
    assert "Final gap: the winner's total minus the best other total (distance, km)." in md
    gap = _table(md, "Tension").set_index("metric").loc["final gap (winner minus runner-up, total)"]
    totals = np.stack([f[f"s{s}_total"] for s in range(4)], axis=1)
    won = f["winner_side"].to_numpy() >= 0
    w = f["winner_side"].to_numpy()[won]
    t = totals[won]
    mine = t[np.arange(len(w)), w]
    t[np.arange(len(w)), w] = -1
    assert float(gap["mean"]) == pytest.approx((mine - t.max(axis=1)).mean(), rel=1e-3)
    mb = simulate("millebornes", players=2, games=10, seed=1, threads=1)
    assert "best other total (cumulative score, points)." in _markdown(mb)
