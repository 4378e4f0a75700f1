"""The Python API a notebook user gets (docs/python.md): the same conventions
in the three games, errors that name the problem, replay, and `__all__`
covering what the docs import. Small runs only."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import numba
import pytest

from etappe.analysis import bremen as B
from etappe.analysis import etape as E
from etappe.analysis import race as R
from etappe.analysis.runio import read_parquet, write_parquet
from etappe.analysis.variants import compare_variants, variant_table

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).parent / "golden"


# ---- race designs ---------------------------------------------------------------------------

def test_race_zero_games_is_an_empty_table_with_every_column():
    one = R.simulate("stapop", players=2, games=1, seed=1)
    none = R.simulate("stapop", players=2, games=0, seed=1)
    assert len(none) == 0 and list(none.columns) == list(one.columns)
    assert none.attrs["games"] == 0


def test_every_game_defaults_to_the_policy_its_command_line_defaults_to():
    # docs/python.md: greedy for the race designs and Bremen, heuristic for Tape l'étape
    assert [p["name"] for p in R.simulate("stapop", players=2, games=1).attrs["policies"]] == ["greedy"] * 2
    assert B.simulate(players=2, games=1).attrs["policies"] == ["greedy"] * 2
    assert [p.split(":")[0] for p in E.simulate(players=3, races=1)[0].attrs["policies"]] == ["heuristic"] * 3


def test_race_negative_games_is_a_value_error():
    with pytest.raises(ValueError, match="games must be >= 0, not -1"):
        R.simulate("stapop", players=2, games=-1)


def test_race_one_policy_as_a_string_plays_every_seat():
    df = R.simulate("millebornes", players=2, games=3, policies="aggressive", seed=2)
    assert [p["name"] for p in df.attrs["policies"]] == ["aggressive", "aggressive"]
    assert df["game"].nunique() == 3 and df.attrs["games"] == 3 and df.attrs["seed"] == 2


def test_race_options_must_be_a_dict():
    with pytest.raises(TypeError, match="options must be a dict"):
        R.simulate("millebornes", players=2, games=1, options=["overshoot=disqualify"])


def test_race_bad_option_and_policy_name_the_field():
    with pytest.raises(R.DesignError, match="unknown rule option 'overshot'"):
        R.simulate("millebornes", players=2, games=1, options={"overshot": "forbid"})
    with pytest.raises(R.PolicyError, match="unknown policy 'greedyy'"):
        R.simulate("millebornes", players=2, games=1, policies=["greedyy"])


def test_race_simulate_of_another_game_points_to_its_module():
    with pytest.raises(R.DesignError, match=r"etappe\.analysis\.bremen"):
        R.simulate("bremen", games=1)


def test_race_threads_are_given_back():
    before = numba.get_num_threads()
    R.simulate("stapop", players=2, games=2, threads=1)
    assert numba.get_num_threads() == before


def test_replay_matches_the_reviewed_cli_playthrough():
    # the same game `etappe replay millebornes --players 2 --policy greedy,random --seed 7 --game 2` prints
    text = R.replay("millebornes", 2, players=2, policies=["greedy", "random"], seed=7)
    assert text + "\n" == (GOLDEN / "millebornes_2p_seed7_game2.txt").read_text()


def test_replay_from_a_frame_and_from_a_run_file(tmp_path):
    df = R.simulate("millebornes", players=2, games=3, policies=["greedy", "random"], seed=7)
    by_hand = R.replay("millebornes", 2, players=2, policies=["greedy", "random"], seed=7)
    assert R.replay(df.attrs, game=2) == by_hand
    write_parquet(df, tmp_path / "run.parquet", df.attrs)
    _, meta = read_parquet(tmp_path / "run.parquet")
    assert R.replay(meta, game=2) == by_hand
    with pytest.raises(ValueError, match=r"the run has 3 games \(0 to 2\)"):
        R.replay(df.attrs, game=3)


# ---- Bremer Stadtmusikanten ------------------------------------------------------------------

def test_bremen_policies_repeat_around_the_table_as_in_the_race_games():
    assert B.simulate(players=4, games=2, policies=["greedy"]).attrs["policies"] == ["greedy"] * 4
    assert B.simulate(players=3, games=2, policies="random").attrs["policies"] == ["random"] * 3
    df = B.simulate(players=4, games=2, policies=["greedy", "random"])
    assert df.attrs["policies"] == ["greedy", "random", "greedy", "random"]
    with pytest.raises(ValueError, match="not 3"):
        B.simulate(players=4, games=2, policies=["greedy", "random", "greedy"])


def test_bremen_attrs_hold_the_number_of_games():
    df = B.simulate(players=2, games=7, seed=5)
    assert len(df) == 7 and df.attrs["games"] == 7 and df.attrs["seed"] == 5


@pytest.mark.parametrize("kwargs, field", [({"seed": -1}, "seed=-1"), ({"games": -2}, "games=-2")])
def test_bremen_negative_counts_are_value_errors(kwargs, field):
    with pytest.raises(ValueError, match=field):
        B.simulate(players=2, **{"games": 1, **kwargs})


def test_bremen_options_must_be_a_dict():
    with pytest.raises(TypeError, match="options must be a dict"):
        B.simulate(players=2, games=1, options=["harder=true"])


# ---- Tape l'étape ------------------------------------------------------------------------------

def test_etape_policies_repeat_around_the_table():
    races, _ = E.simulate(players=4, races=2, policies=["heuristic", "random"])
    assert [p.split(":")[0] for p in races.attrs["policies"]] == ["heuristic", "random", "heuristic", "random"]
    races, _ = E.simulate(players=3, races=2, policies="random")
    assert [p.split(":")[0] for p in races.attrs["policies"]] == ["random"] * 3
    with pytest.raises(ValueError, match="3 policies for 4 players"):
        E.simulate(players=4, races=2, policies=["heuristic", "random", "high"])


# ---- comparisons -------------------------------------------------------------------------------

def test_compare_variants_needs_no_checkpoint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    vc = compare_variants("bremen", players=2, games=20, policies=["greedy"], seed=1,
                          options_a={}, options_b={"harder": True})
    assert vc.games == 20 and len(variant_table(vc)) > 0
    assert list(tmp_path.iterdir()) == []  # nothing saved
    vc = compare_variants("bremen", 2, 20, ["greedy"], 1, {}, {"harder": True}, str(tmp_path / "ck.pkl"))
    assert vc.games == 20 and (tmp_path / "ck.pkl").exists()


# ---- what the docs import is public ------------------------------------------------------------

def _doc_imports():
    """(module, name) of every `from etappe... import a, b as c` in the Python examples of the docs."""
    texts = [(ROOT / "README.md").read_text()] + [p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))]
    for text in texts:
        for block in re.findall(r"```python\n(.*?)```", text, re.S):
            for module, names in re.findall(r"^from (etappe\.[\w.]+) import (.+)$", block, re.M):
                for name in names.split(","):
                    yield module, name.split(" as ")[0].strip()


def _submodule(package: str, name: str) -> bool:
    try:
        importlib.import_module(f"{package}.{name}")
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("module", sorted({m for m, _ in _doc_imports()}))
def test_every_name_the_docs_import_is_in_all(module):
    mod = importlib.import_module(module)
    names = [n for m, n in _doc_imports() if m == module and not _submodule(module, n)]
    assert [n for n in names if not hasattr(mod, n)] == []
    if hasattr(mod, "__all__"):
        assert [n for n in mod.__all__ if not hasattr(mod, n)] == []
        assert [n for n in names if n not in mod.__all__] == []
