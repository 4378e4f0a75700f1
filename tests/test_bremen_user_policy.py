"""Bremer Stadtmusikanten with a policy of your own (docs/bremen.md, Policies):
FILE.py:FUNCTION through the API and the CLI, its random keys, its errors."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from etappe.analysis.bremen import Game, simulate
from etappe.cli import bremen as C
from etappe.cli.main import app as main_app
from etappe.kernels.user_policy import UserPolicyError

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "bremen_nearest_house.py"
OPTIONS = {"max_turns": 300}
SIGNATURE = "(state, dist, moves, n_moves, seat, params, key)"


def policy_file(tmp_path, body: str, name: str = "mine") -> str:
    """A policy file holding `def mine(state, dist, moves, n_moves, seat, params, key)` with `body`."""
    path = tmp_path / f"{name}.py"
    path.write_text("from etappe.kernels.rng import randint\n\n\n"
                    f"def {name}(state, dist, moves, n_moves, seat, params, key):\n{body}")
    return f"{path}:{name}"


def cli(*args):
    return CliRunner().invoke(main_app, ["simulate", "bremen", *map(str, args)])


def test_a_policy_of_your_own_plays_every_game_to_its_end(tmp_path):
    first = policy_file(tmp_path, "    return 0\n")
    df = simulate(4, 30, [first, "greedy", "random", "greedy"], seed=3, options=OPTIONS)
    assert len(df) == 30 and ((df["winner_seat"] >= 0) | df["capped"]).all()
    assert (df["winner_seat"] >= 0).any()
    assert df.attrs["policies"][0] == first and len(df.attrs["policy_sources"][first]) == 16
    from etappe.reports.bremen import build_report  # which version of the file played

    assert f"| policy files | {first} (file sha256 {df.attrs['policy_sources'][first]}) |" in build_report(df).to_markdown()
    result = cli("--games", 10, "--policy", f"{first},greedy,random,greedy", "-o", "max_turns=300")
    assert result.exit_code == 0, result.output


def test_runs_with_a_user_policy_are_reproducible_on_any_number_of_threads(tmp_path):
    nearest = f"{EXAMPLE}:nearest_house"
    policies = [nearest, "greedy", nearest, "random"]
    one = simulate(4, 40, policies, seed=7, options=OPTIONS, threads=1)
    two = simulate(4, 40, policies, seed=7, options=OPTIONS, threads=2)
    pd.testing.assert_frame_equal(one, two)
    assert not one.equals(simulate(4, 40, policies, seed=8, options=OPTIONS, threads=2))


def test_the_seats_stream_advances_the_same_whatever_the_user_draws(tmp_path):
    # Both play the first move; one draws numbers from its key first. The
    # user's key is branched off the seat's, so the games are the same.
    quiet = policy_file(tmp_path, "    return 0\n", "quiet")
    drawing = policy_file(tmp_path, "    total = 0\n    for _ in range(5):\n"
                                    "        i, key = randint(key, n_moves)\n        total += i\n"
                                    "    return 0 if total >= 0 else 1\n", "drawing")
    # random on the other seats: a wrong key handling would change their draws
    a = simulate(3, 30, [quiet, "random", "greedy:noise=5"], seed=11, options=OPTIONS)
    b = simulate(3, 30, [drawing, "random", "greedy:noise=5"], seed=11, options=OPTIONS)
    pd.testing.assert_frame_equal(a, b)
    # ... and a policy that does use its key plays other games than the first move does
    drawn = policy_file(tmp_path, "    i, key = randint(key, n_moves)\n    return i\n", "drawn")
    assert not a.equals(simulate(3, 30, [drawn, "random", "greedy:noise=5"], seed=11, options=OPTIONS))


def test_an_index_that_is_no_legal_move_stops_the_run_naming_seat_and_policy(tmp_path):
    beyond = policy_file(tmp_path, "    return n_moves\n")
    said = (f"user policy {beyond!r} on seat 1 answered with a move index outside 0 .. n_moves-1 in game 3; "
            "a policy returns the index of one of the n_moves legal moves")
    with pytest.raises(UserPolicyError) as refused:  # as docs/python.md says: the error of a policy of your own
        simulate(2, 5, ["greedy", beyond], seed=1, options=OPTIONS, first_game=3)
    assert str(refused.value) == said
    # the same from the scenario API's play, seat 1 failing at its first turn
    with pytest.raises(UserPolicyError) as refused:
        Game(players=2, options=OPTIONS).play(["greedy", beyond], turns=5, seed=1, game_index=3)
    assert str(refused.value) == said
    result = cli("--players", 2, "--games", 5, "--policy", f"greedy,{beyond}")
    message = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "seat 1" in message and "mine.py:mine" in message
    assert "outside 0 .. n_moves-1" in message


def test_a_policy_that_raises_while_playing_stops_the_run_naming_it_and_its_line(tmp_path):
    raises = policy_file(tmp_path, "    if n_moves > 3:\n        raise ValueError('too many moves')\n    return 0\n")
    said = (rf"user policy '{re.escape(raises)}' raised ValueError: too many moves \(.*mine\.py, line 6\) while "
            "playing; a policy returns the index of its move and must not raise")
    with pytest.raises(UserPolicyError, match=said):
        simulate(2, 20, [raises, "greedy"], seed=1, options=OPTIONS)
    with pytest.raises(UserPolicyError, match=said):
        Game(players=2, options=OPTIONS).play([raises, "greedy"], turns=50, seed=1)
    result = cli("--players", 2, "--games", 20, "--policy", f"{raises},greedy")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert re.search(said, " ".join(result.stderr.split()))


def test_a_policy_that_writes_to_the_game_is_refused(tmp_path):
    # its arguments are read-only (docs/bremen.md): 7 points of its own would win every game unseen
    writes = policy_file(tmp_path, "    state[10 + seat] = 7\n    return 0\n")
    with pytest.raises(UserPolicyError, match="it writes to an argument, and a policy's arguments are read-only"):
        simulate(2, 1, [writes, "greedy"], options=OPTIONS)


def test_a_function_with_the_wrong_parameters_is_refused_naming_the_signature(tmp_path):
    path = tmp_path / "short.py"
    path.write_text("def short(state, moves, n_moves, key):\n    return 0\n")
    with pytest.raises(ValueError, match=r"takes \(state, moves, n_moves, key\)"):
        simulate(2, 1, [f"{path}:short", "greedy"])
    result = cli("--players", 2, "--games", 1, "--policy", f"{path}:short,greedy")
    assert result.exit_code == 2 and SIGNATURE in " ".join(result.stderr.split())


def test_an_edited_policy_file_makes_another_run(tmp_path):
    spec = policy_file(tmp_path, "    return 0\n")
    before = C.run_identity(2, 5, [spec, "greedy"], 0, "", {})
    Path(spec.rpartition(":")[0]).write_text(Path(spec.rpartition(":")[0]).read_text() + "# edited\n")
    after = C.run_identity(2, 5, [spec, "greedy"], 0, "", {})
    assert before["policies"] == after["policies"] and before["policy_sources"] != after["policy_sources"]
    assert "policy_sources" not in C.run_identity(2, 5, ["greedy", "random"], 0, "", {})


def test_the_example_plays(tmp_path):
    policies = [f"{EXAMPLE}:nearest_house", "greedy", "greedy", "greedy"]  # the example's own command line
    df = simulate(4, 20, policies, seed=2, options=OPTIONS)
    assert len(df) == 20 and ((df["winner_seat"] >= 0) | df["capped"]).all()
    # rules page: the first player to reach 7 points wins
    for _, game in df[df["winner_seat"] >= 0].iterrows():
        assert game[f"points_s{game['winner_seat']}"] >= 7
    # seat 0 plays the example's moves, not greedy's: the games are not those of four greedy seats
    assert not df.equals(simulate(4, 20, ["greedy"] * 4, seed=2, options=OPTIONS))
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--games", "5", "--policy", ",".join(policies),
                                           "-o", "max_turns=300"])
    assert result.exit_code == 0, result.output


def test_the_example_picks_the_move_nearest_the_house_first_on_a_tie():
    from etappe.analysis.bremen import user_policy

    nearest = user_policy(f"{EXAMPLE}:nearest_house")
    dist = np.array([0, 5, 2, 7, 2], np.int64)  # field f is dist[f] steps from the house
    # moves to fields 1, 2, 4, 3 (slot << 24 | animal << 16 | field): fields 2 and 4 are both 2 steps away
    moves = np.array([(0 << 24) | (3 << 16) | 1, (1 << 24) | (3 << 16) | 2, (0 << 24) | (7 << 16) | 4,
                      (1 << 24) | (7 << 16) | 3], np.int64)
    state = np.zeros(80, np.int32)
    assert nearest(state, dist, moves, 4, 0, np.zeros(8), np.uint64(1)) == 1
    assert nearest(state, dist, moves[2:], 2, 0, np.zeros(8), np.uint64(1)) == 0  # field 4 before field 3


def test_the_game_an_illegal_answer_is_reported_in_does_not_depend_on_the_chunks(tmp_path):
    # now and then an index one past the last legal move: the first failing game lies in some later chunk
    rare = policy_file(tmp_path, "    i, key = randint(key, 40)\n    return n_moves if i == 0 else 0\n", "rare")
    said = []
    for chunk in (1000, 3, 1):
        with pytest.raises(ValueError) as refused:
            simulate(2, 200, ["greedy", rare], seed=4, options=OPTIONS, chunk=chunk, first_game=10)
        said.append(str(refused.value))
    game = int(said[0].split(" in game ")[1].split(";")[0])
    assert game >= 13 and said == [said[0]] * 3  # beyond the first chunk of 3, the same game each time
