"""`etappe bench`: its speeds are figures, never asserted; what is checked
is that it plays the games it says it times. Its bare-kernel timing sets up
the kernel's inputs itself, so its turns per hand must be those of the same
games played by `simulate`, and its hands per game those of the records.
The start times are of fresh processes on an empty kernel cache; here they
run a stand-in that records the cache it was given, as a real cold start
compiles for a minute."""
import re
from pathlib import Path

from typer.testing import CliRunner

from etappe.analysis.race import simulate
from etappe.cli import bench
from etappe.cli.bench import CASES, LOOKAHEAD_GAMES
from etappe.cli.main import app

from by_hand import wilson

GAMES = 200
CASE_ROW = re.compile(r"^\s*(\w+)\s+(\d)\s+(greedy|random)\s+(\d+)\s+([\d,]+)\s+([\d,]+)\s+(\d+\.\d\d)\s*$")
LOOKAHEAD_ROW = re.compile(r"^\s*(stapop|millebornes)\s+(\d+\.\d\d)\s+(\d\.\d\d) \((\d\.\d\d) to (\d\.\d\d)\)\s*$")


def test_bench_times_the_games_that_simulate_plays(tmp_path, monkeypatch):
    log = tmp_path / "starts.log"
    # the stand-in's n-th start takes (0.5, 0, 1)[n] s more, so that each time printed tells its start
    stand_in = (f"import os, time; log = {str(log)!r}; n = len(open(log).readlines()) if os.path.exists(log) else 0; "
                "time.sleep((0.5, 0, 1)[n]); open(log, 'a').write(os.environ['NUMBA_CACHE_DIR'] + chr(10))")
    monkeypatch.setattr(bench, "_TINY_RUN", stand_in)
    monkeypatch.setattr(bench, "_TINY_LOOKAHEAD_RUN", stand_in)
    result = CliRunner().invoke(app, ["bench", "-n", str(GAMES)])
    assert result.exit_code == 0, result.output
    # cold, warm, then the look-ahead's compile: three processes on one cache, a fresh one of their own
    caches = log.read_text().splitlines()
    assert len(caches) == 3 and len(set(caches)) == 1 and not Path(caches[0]).exists()
    cold, warm, lookahead = map(float, re.search(
        r"cold \(empty cache, compiles\) (\d+\.\d) s, warm \(cached\) (\d+\.\d) s; .* look-ahead: (\d+\.\d) s",
        " ".join(result.stdout.split())).groups())
    assert warm + 0.3 < cold and cold + 0.3 < lookahead
    assert f"games per case: {GAMES}" in result.stdout
    # the bar counts each case, the two look-ahead timings and the starts, and ends full
    steps = len(CASES) + 3
    assert re.search(rf"benchmark cases .* {steps}/{steps} ", result.stderr), result.stderr
    lines = result.stdout.splitlines()
    rows = {(m[1], int(m[2]), m[3]): m for m in map(CASE_ROW.match, lines) if m}
    assert sorted(rows) == sorted(CASES)
    for (design, players, policy), row in rows.items():
        records = simulate(design, players=players, games=GAMES, policies=[policy], seed=1)
        first_hands = records[records["hand"] == 0]
        assert int(row[4]) == round(first_hands["turns"].mean()), (design, players, policy)
        assert row[7] == f"{len(records) / GAMES:.2f}"
        assert int(row[5].replace(",", "")) > 0 and int(row[6].replace(",", "")) > 0
    # Stap op and Touring are one hand a game (their rules: first to the finish wins); a Mille Bornes game
    # is hands until a side has 5,000 points, and a hand scores at most 4,600 (1,000 km, 700 for the
    # four safeties, 1,200 for four coups fourrés, trip 400, delayed action 300, safe trip 300,
    # extension 200, shut-out 500), so it takes two hands at least
    for design in ("stapop", "touring"):
        assert {row[7] for (d, _, _), row in rows.items() if d == design} == {"1.00"}
    assert all(float(row[7]) >= 2 for (d, _, _), row in rows.items() if d == "millebornes")

    assert f"2 players, {LOOKAHEAD_GAMES} games" in result.stdout
    looks = {m[1]: m for m in map(LOOKAHEAD_ROW.match, lines) if m}
    assert sorted(looks) == ["millebornes", "stapop"]
    for design, row in looks.items():
        assert float(row[2]) > 0
        # the share of the games won by the look-ahead against greedy, seats rotated, as the records have it
        records = simulate(design, players=2, games=LOOKAHEAD_GAMES, policies=["lookahead", "greedy"], seed=1,
                           seating="rotate")
        last = records[records["last_hand"] == 1]
        winner = last["winner_side"].to_numpy()
        won = (winner == 0) & (last["seat0_policy"] == 0) | (winner == 1) & (last["seat1_policy"] == 0)
        decided = (winner >= 0).sum()
        low, high = wilson(won.sum(), decided)
        assert row.group(3, 4, 5) == (f"{won.sum() / decided:.2f}", f"{low:.2f}", f"{high:.2f}")
