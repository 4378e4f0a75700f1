"""Determinism of race runs: a run is a function of (design, players, policies, seed, options).

Same seed, same records; 1 or 2 Numba threads; any chunking; the replay of a
game equals its batch record; and a small batch with the JIT disabled (in a
subprocess, pure Python) gives the same records as the compiled kernels.
"""
import os
import subprocess
import sys

import numba
import numpy as np
import pandas as pd
import pytest

from etappe.analysis.race import RaceRun, simulate
from etappe.kernels import race as K
from etappe.kernels import race_replay
from etappe.kernels.race_policies import parse_policy
from etappe.kernels.race_replay import replay_hands

CASES = [("stapop", 3, ["random", "greedy", "aggressive"]), ("touring", 2, ["greedy", "random"]),
         ("millebornes", 2, ["random", "spender"]), ("millebornes", 4, ["greedy"])]


@pytest.mark.parametrize("design,players,policies", CASES)
def test_same_seed_same_records(design, players, policies):
    a = RaceRun(design, players, policies, seed=42).play(0, 24)
    b = RaceRun(design, players, policies, seed=42).play(0, 24)
    pd.testing.assert_frame_equal(a, b)
    c = RaceRun(design, players, policies, seed=43).play(0, 24)
    assert not a.drop(columns=["game"]).equals(c.drop(columns=["game"]))  # the seed matters


@pytest.mark.parametrize("design,players,policies", CASES)
def test_one_thread_or_two_and_any_chunking(design, players, policies):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one Numba thread only")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = RaceRun(design, players, policies, seed=9).play(0, 40)
        numba.set_num_threads(2)
        two = RaceRun(design, players, policies, seed=9).play(0, 40)
    finally:
        numba.set_num_threads(before)
    pd.testing.assert_frame_equal(one, two)
    run = RaceRun(design, players, policies, seed=9)
    parts = pd.concat([run.play(0, 13), run.play(13, 27)], ignore_index=True)
    pd.testing.assert_frame_equal(one, parts)


def test_simulate_threads_argument_does_not_change_results():
    a = simulate("millebornes", players=3, games=20, policies=["greedy", "random", "bold"], seed=5, threads=1)
    b = simulate("millebornes", players=3, games=20, policies=["greedy", "random", "bold"], seed=5, threads=2,
                 chunk_size=7)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("design,players,policies", CASES)
def test_replay_equals_the_batch_record(design, players, policies):
    run = RaceRun(design, players, policies, seed=11)
    df = run.play(0, 6)
    specs = [parse_policy(p) for p in policies] * (players if len(policies) == 1 else 1)
    for game in range(6):
        rows = df[df["game"] == game].sort_values("hand")
        hands = list(replay_hands(run.design, run.card_table, run.rules, specs, 11, game))
        assert len(hands) == len(rows)
        for (hand, log, sides_out, hand_out, totals), (_, row) in zip(hands, rows.iterrows()):
            assert hand_out[K.H_TURNS] == row["turns"] and hand_out[K.H_TRIP_SIDE] == row["trip_side"]
            for s in range(run.sides):
                assert sides_out[s, K.S_DISTANCE] == row[f"s{s}_distance"]
                assert sides_out[s, K.S_SCORE] == row[f"s{s}_score"]
                assert totals[s] == row[f"s{s}_total"]
            assert not (log[:, 2] == K.EV_BROKEN_INVARIANT).any()


NOJIT_SCRIPT = """
import sys
from etappe.analysis.race import RaceRun
from etappe.kernels import race as K
assert not hasattr(K.play_hands, "py_func"), "the JIT is still on"
design, players, games, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
policies = sys.argv[5].split(",")
RaceRun(design, players, policies, seed=2024).play(0, games).to_pickle(out)
"""


@pytest.mark.parametrize("design,players,policies,games", [("stapop", 2, "greedy,random", 2),
                                                             ("millebornes", 2, "greedy,spender", 1),
                                                             ("touring", 3, "random", 1)])
def test_jit_off_gives_the_same_records(tmp_path, design, players, policies, games):
    out = tmp_path / "nojit.pkl"
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", NOJIT_SCRIPT, design, str(players), str(games), str(out), policies],
                          env=env, capture_output=True, text=True, timeout=170)
    assert proc.returncode == 0, proc.stderr[-3000:]
    nojit = pd.read_pickle(out)
    jit = RaceRun(design, players, policies.split(","), seed=2024).play(0, games)
    pd.testing.assert_frame_equal(jit, nojit, check_dtype=False)


def test_the_kernel_gets_the_same_array_types_for_any_number_of_games():
    """load_kernels compiles the kernel on no games before a run's clock
    starts; Numba compiles anew for a read-only array, so the seat table must
    be a writable C array for 0, 1 or many games, or a run pays the compile
    inside its timed games (a 2-player compare once reported 8,700 games/s)."""
    for seating in ("fixed", "rotate"):
        run = RaceRun("stapop", 4, ["greedy", "random"], 1, seating=seating)
        for count in (0, 1, 5):
            table = run.seat_policies(np.arange(count, dtype=np.int64))
            assert table.flags.writeable and table.flags.c_contiguous and table.dtype == np.int8


def test_a_replay_whose_log_fills_up_stops_rather_than_drop_events(monkeypatch):
    # room for the deal only (no event a turn): the first hand's play cannot fit, and the replay must say so
    # rather than print a play-by-play with its end missing
    run = RaceRun("stapop", 4, ["greedy"], seed=11)
    monkeypatch.setattr(race_replay, "EVENTS_PER_TURN", 1 - 4)
    with pytest.raises(RuntimeError, match="game 0, hand 0: the play-by-play filled its 20 rows"):
        list(replay_hands(run.design, run.card_table, run.rules, [parse_policy("greedy")] * 4, 11, 0))
