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


def test_progress_says_what_its_rounds_hold(stapop4):
    # the records keep 40 rounds; a hand that has ended carries its final distance forward, and Stap op
    # hands often run past round 40 (more than 160 turns at 4 players): the text says how many
    f = stapop4
    R = f.attrs["progress_rounds"]
    ended = f[f["turns"] <= R * 4]
    assert (ended["s0_r40"] == ended["s0_distance"]).all()  # carried forward
    past = int((f["turns"] > R * 4).sum())
    assert 0 < past < len(f)
    md = _markdown(f)
    assert "A hand that has ended keeps its final distance" in md
    assert f"(n = {len(f)} hands; {past} of them" in md
    assert f"still being played after round {R}" in md


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
