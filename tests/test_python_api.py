"""The Python API a notebook user gets (docs/python.md): the same conventions
in the three games, errors that name the problem, replay, and `__all__`
covering what the docs import. Small runs only."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import numba
import pandas as pd
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


def test_rotated_seating_moves_each_policy_one_seat_on_each_game():
    # docs/records.md: with seating "rotate" the k-th policy given sits in seat (k - game) mod players
    given = ["greedy", "random", "aggressive", "spender"]
    df = R.simulate("stapop", players=4, games=6, policies=given, seed=2, seating="rotate")
    names = df.attrs["policy_names"]
    for game, row in df.groupby("game").first().iterrows():
        seated = [names[row[f"seat{p}_policy"]] for p in range(4)]
        assert seated == [given[(p + game) % 4] for p in range(4)], game


def test_progress_hears_the_games_done_and_their_total_in_every_game():
    # the simulate docstrings: progress(done, total) once the kernels are ready and after each chunk,
    # in games (Mille Bornes plays several hands a game, one row each) or races
    heard = []
    df = R.simulate("millebornes", players=2, games=7, seed=3, chunk_size=3, progress=lambda *a: heard.append(a))
    assert heard == [(0, 7), (3, 7), (6, 7), (7, 7)] and len(df) > 7
    heard.clear()
    B.simulate(4, 7, seed=3, chunk=3, progress=lambda *a: heard.append(a))
    assert heard == [(0, 7), (3, 7), (6, 7), (7, 7)]
    heard.clear()
    E.simulate(4, 7, seed=3, chunk=3, progress=lambda *a: heard.append(a))
    assert heard == [(0, 7), (3, 7), (6, 7), (7, 7)]


def test_race_attrs_hold_what_the_docstring_lists_and_the_rules_pages_cards():
    df = R.simulate("stapop", players=2, games=3, seed=4)
    listed = ("game design design_file design_hash design_text players policies seating seed games options "
              "version wall_seconds").split()
    assert set(listed) <= set(df.attrs) and df.attrs["wall_seconds"] >= 0 and df.attrs["games"] == 3
    # each card's count and share of the target, from the rules page (race_games.md): Stap op's
    # 100 km is a set of 8 x 5, 4 x 6, 2 x 8 and 2 x 10 km stages of 24, 12, 8 and 8 cards;
    # Mille Bornes' target is a sum, no card's share, and 2 players remove one of each of 5 hazards from 106
    cards = {c["key"]: (c["count"], c["target"]) for c in df.attrs["cards"]}
    assert [cards[k] for k in ("km5", "km6", "km8", "km10")] == [(24, 8), (12, 4), (8, 2), (8, 2)]
    assert sum(count for count, _ in cards.values()) == 99
    mb = R.simulate("millebornes", players=2, games=0).attrs["cards"]
    assert not any(c["target"] for c in mb) and sum(c["count"] for c in mb) == 101


def test_race_summarize_takes_whole_games_only():
    from etappe.analysis.race_summary import summarize

    df = R.simulate("millebornes", players=2, games=40, seed=1)  # a game is several hands
    assert summarize(df[df.game < 10]).c["games"] == 10  # whole games: a fair subset
    cut = df[df.hand < 1]
    with pytest.raises(ValueError, match=r"incomplete games in the records .*: \[0, 1, 2, "):
        summarize(cut)
    joined = pd.concat([df, R.simulate("millebornes", players=2, games=40, seed=2)], ignore_index=True)
    with pytest.raises(ValueError, match="game 0: a hand is in the records twice .two runs joined"):
        summarize(joined, df.attrs)


def test_records_without_their_run_metadata_are_refused_in_every_game():
    # pd.concat of two runs drops the attrs (their wall times differ): a message, not an IndexError
    no_meta = "no run metadata with these records"
    race = pd.concat([R.simulate("stapop", players=4, games=5, seed=s) for s in (1, 2)], ignore_index=True)
    assert race.attrs == {}
    from etappe.analysis.race_summary import summarize

    with pytest.raises(ValueError, match=no_meta):
        summarize(race)
    bremen = pd.concat([B.simulate(players=2, games=5, seed=s) for s in (1, 2)], ignore_index=True)
    with pytest.raises(ValueError, match=no_meta):
        B.win_rates(bremen, by="policy")
    races = pd.concat([E.simulate(players=4, races=3, seed=s)[0] for s in (1, 2)], ignore_index=True)
    with pytest.raises(ValueError, match=no_meta):
        E.win_rates(races, "policy")


def test_race_unknown_seating_is_refused_by_name():
    with pytest.raises(ValueError, match="seating must be 'fixed' or 'rotate'"):
        R.simulate("stapop", players=2, games=1, seating="rotated")


def test_race_options_must_be_a_dict():
    with pytest.raises(TypeError, match="options must be a dict"):
        R.simulate("millebornes", players=2, games=1, options=["overshoot=disqualify"])


def test_race_bad_option_and_policy_name_the_field():
    with pytest.raises(R.DesignError, match="unknown rule option 'overshot'"):
        R.simulate("millebornes", players=2, games=1, options={"overshot": "forbid"})
    with pytest.raises(R.PolicyError, match="unknown policy 'greedyy' .did you mean 'greedy'.."):
        R.simulate("millebornes", players=2, games=1, policies=["greedyy"])


def test_misspelt_names_get_a_hint_in_every_game():
    with pytest.raises(ValueError, match="unknown etape option.s. 'mod' .did you mean 'mode'.."):
        E.simulate(players=4, races=1, options={"mod": "stage"})
    with pytest.raises(ValueError, match="unknown etape policy 'heuristik' .did you mean 'heuristic'.."):
        E.simulate(players=4, races=1, policies=["heuristik"])


def test_replay_and_simulate_name_what_they_were_given_instead():
    df = R.simulate("stapop", players=2, games=2, seed=1)
    with pytest.raises(TypeError, match=r"replay takes the run's metadata, replay\(df.attrs, game=...\)"):
        R.replay(df, game=1)
    with pytest.raises(TypeError, match=r"replay_position takes the run's metadata"):
        R.replay_position(df, game=1, turn=3)
    with pytest.raises(ValueError, match="no run metadata: give a run file's"):
        R.replay({}, game=1)
    with pytest.raises(TypeError, match="a design is a built-in name .millebornes, stapop, touring., a TOML file's "
                                        "path or a loaded Design, not NoneType"):
        R.simulate(None, players=2, games=1)


def test_race_simulate_of_another_game_points_to_its_module():
    with pytest.raises(R.DesignError, match=r"etappe\.analysis\.bremen"):
        R.simulate("bremen", games=1)


@pytest.mark.parametrize("play", [lambda **kw: R.simulate("stapop", players=2, games=2, **kw),
                                  lambda **kw: B.simulate(players=2, games=2, **kw),
                                  lambda **kw: E.simulate(players=3, races=2, **kw)], ids=["race", "bremen", "etape"])
def test_threads_are_those_asked_for_during_the_run_and_given_back(play):
    before = numba.get_num_threads()
    during = []
    play(threads=1, progress=lambda done, total: during.append(numba.get_num_threads()))
    assert during and set(during) == {1}
    assert numba.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be 1 to"):
        play(threads=0)
    assert numba.get_num_threads() == before


def test_a_tournament_gives_the_threads_back():
    from etappe.analysis.tournament import play_tournament

    before = numba.get_num_threads()
    during = []
    play_tournament("stapop", 2, ["greedy", "random"], games=2, threads=1,
                    progress=lambda count: during.append(numba.get_num_threads()))
    assert during and set(during) == {1}
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
    # the same words in every game
    for play in (lambda p: B.simulate(players=4, games=2, policies=p), lambda p: R.simulate("stapop", 4, 2, p),
                 lambda p: E.simulate(players=4, races=2, policies=p)):
        with pytest.raises(ValueError, match="^3 policies for 4 players: give one policy per seat, or a list that "
                                             r"repeats around the table \(1 or a divisor of 4\)$"):
            play(["random", "random", "random"])


def test_bremen_game_refuses_what_is_no_colour_animal_or_field():
    # docs/bremen.md: four colours (0 to 3) at every player count, four animals, the board's fields;
    # colour 7 wrote over colour 3's donkey's home
    g = B.Game(players=4)
    before = g.state.copy()
    for args, message in (((7, "donkey", "r05"), "colour 7: the colours are 0 to 3"),
                          ((0, "horse", "r05"), "no animal 'horse'; the animals are rooster, cat, dog, donkey"),
                          ((0, "donkey", "r99"), "no field 'r99' on ")):
        with pytest.raises(ValueError, match=message):
            g.place(*args)
    assert (g.state == before).all()


@pytest.mark.parametrize("call, message", [
    # a die beyond the kernel's path buffers crashed the process (a segfault or heap corruption)
    (lambda g: g.first_moves(0, 3), "a die shows a whole number 1 to 6, not 0"),
    (lambda g: g.first_moves(3, 12), "a die shows a whole number 1 to 6, not 12"),
    (lambda g: g.second_moves(7, (0, "donkey")), "a die shows a whole number 1 to 6, not 7"),
    (lambda g: g.robber_paths(20), "a die shows a whole number 1 to 6, not 20"),
    (lambda g: g.rob(2, True), "not path True"),
    # a path that is not there played nothing and answered with the number of paths
    (lambda g: g.rob(2, 999), r"the robber has \d+ paths of 2 fields \(0 to \d+\), not path 999"),
    # the rules page: a field holds one animal of each size, none stands on the house, the robber keeps to
    # the forest fields, the bridges and its house
    (lambda g: (g.place(0, "donkey", "r02"), g.place(1, "donkey", "r02")),
     "'r02' holds colour 0's donkey already: a field holds one animal of each size"),
    (lambda g: g.place(0, "rooster", "house"), "no animal stands on the house 'house'"),
    (lambda g: g.set_robber("r01"), "the robber keeps to the forest fields, the bridges and its house, not 'r01'"),
])
def test_bremen_game_refuses_a_die_a_path_or_a_position_the_rules_do_not_have(call, message):
    g = B.Game(players=4)
    with pytest.raises(ValueError, match=message):
        call(g)
    assert g.errors() == 0  # nothing of the refused call was kept


@pytest.mark.parametrize("players", [0, 5, 4.0])
def test_bremen_game_takes_the_player_counts_simulate_takes(players):
    with pytest.raises((TypeError, ValueError), match="players must be a whole number|takes 2 to 4 players"):
        B.Game(players=players)


def test_bremen_game_plays_one_policy_on_every_seat_as_simulate_does():
    one, four = B.Game(players=4), B.Game(players=4)
    one.play(["greedy"], turns=10, seed=3)  # an IndexError before
    four.play(["greedy"] * 4, turns=10, seed=3)
    assert (one.state == four.state).all() and one.state[B.K.S_TURNS] == 10


def test_bremen_attrs_hold_what_the_docstring_lists():
    df = B.simulate(players=2, games=7, seed=5, first_game=3)
    assert len(df) == 7 and df["game"].tolist() == list(range(3, 10))
    assert set(df.attrs) == {"game", "board", "board_path", "board_hash", "board_reconstruction", "players",
                             "policies", "seed", "games", "first_game", "options", "version", "wall_seconds",
                             "games_per_s", "progress_rounds"}
    assert (df.attrs["game"], df.attrs["games"], df.attrs["seed"], df.attrs["first_game"]) == ("bremen", 7, 5, 3)
    assert df.attrs["games_per_s"] == pytest.approx(7 / df.attrs["wall_seconds"])
    # docs/bremen.md: the rounds of the points_rR_sK columns
    assert df.attrs["progress_rounds"] == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 50]


@pytest.mark.parametrize("players", [1, 5])
def test_bremen_takes_two_to_four_players(players):
    with pytest.raises(ValueError) as refused:
        B.simulate(players=players, games=1)
    assert str(refused.value) == f"Bremer Stadtmusikanten takes 2 to 4 players, got {players}"


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


# ---- conventions docs/python.md states ---------------------------------------------------------

def test_an_empty_policy_list_is_the_default_policy_in_every_game():
    assert [p["name"] for p in R.simulate("stapop", players=2, games=1, policies=[]).attrs["policies"]] == ["greedy"] * 2
    assert B.simulate(players=2, games=1, policies=[]).attrs["policies"] == ["greedy"] * 2
    assert [p.split(":")[0] for p in E.simulate(players=3, races=1, policies=[])[0].attrs["policies"]] == ["heuristic"] * 3


def test_attrs_policies_are_dicts_in_the_race_designs_and_spec_strings_elsewhere():
    race = R.simulate("millebornes", players=2, games=1, policies=["greedy", "random"]).attrs["policies"]
    assert [sorted(p) for p in race] == [["family", "name", "params"]] * 2
    assert [p["name"] for p in race] == ["greedy", "random"]
    assert B.simulate(players=2, games=1, policies="random").attrs["policies"] == ["random", "random"]
    etape = E.simulate(players=3, races=1, policies="random")[0].attrs["policies"]
    assert all(isinstance(p, str) and p.startswith("random:") for p in etape)


def test_option_values_may_be_typed_or_strings_as_on_the_command_line():
    typed = R.simulate("millebornes", players=2, games=1, options={"roll_after_safety": False}).attrs["options"]
    text = R.simulate("millebornes", players=2, games=1, options={"roll_after_safety": "false"}).attrs["options"]
    assert typed == text and typed["roll_after_safety"] is False
    assert B.simulate(players=2, games=1, options={"harder": "true"}).attrs["options"]["harder"] is True
    races, _ = E.simulate(players=3, races=1, options={"mode": "endurance", "endurance_stages": "3"})
    assert races.attrs["options"]["endurance_stages"] == 3


def test_etape_seed_above_the_command_lines_range_is_a_value_error():
    with pytest.raises(ValueError, match="2\\*\\*63"):
        E.simulate(players=3, races=1, seed=2**63)


def test_a_later_bremen_game_or_etape_race_is_played_again_alone():
    # docs/python.md, "replay one game": simulate(games=1, first_game=k) gives game k's record again
    run = B.simulate(players=3, games=4, policies=["greedy", "random", "greedy"], seed=8)
    one = B.simulate(players=3, games=1, policies=["greedy", "random", "greedy"], seed=8, first_game=3)
    assert one["game"].tolist() == [3]
    assert one.reset_index(drop=True).equals(run.iloc[[3]].reset_index(drop=True))
    races, stages = E.simulate(players=4, races=3, seed=8)
    r1, s1 = E.simulate(players=4, races=1, seed=8, first_race=2)
    assert r1["race"].tolist() == [2]
    assert r1.reset_index(drop=True).equals(races.iloc[[2]].reset_index(drop=True))
    assert s1.reset_index(drop=True).equals(stages[stages["race"] == 2].reset_index(drop=True))


def test_report_write_returns_the_html_path_beside_its_markdown(tmp_path):
    from etappe.reports.bremen import build_report

    html = build_report(B.simulate(players=2, games=20, seed=1)).write(tmp_path / "rep")
    assert Path(html) == tmp_path / "rep" / "report.html"
    assert (tmp_path / "rep" / "report.md").exists()


def test_compare_tables_pairs_game_i_with_game_i_and_counts_the_rest_unpaired():
    from etappe.analysis.compare import compare_tables, paired_table
    from etappe.analysis.race_summary import game_table

    a = R.simulate("stapop", players=2, games=3, seed=1)
    b = R.simulate("millebornes", players=2, games=5, seed=1)
    comparison = compare_tables(game_table(a, a.attrs), game_table(b, b.attrs))
    assert comparison.unpaired == 2  # games 3 and 4 of B
    table = paired_table(comparison)
    assert set(table["n"]) <= {1, 2, 3} and table.loc[table["metric"] == "turns per game", "n"].item() == 3


def test_etape_run_files_are_read_back_by_load_run(tmp_path):
    from etappe.cli.etape import load_run

    races, stages = E.simulate(players=3, races=4, seed=2)
    write_parquet(races, tmp_path / "etape.parquet", races.attrs)
    write_parquet(stages, tmp_path / "etape.stages.parquet", stages.attrs)
    r, s = load_run(tmp_path / "etape.parquet")
    assert r.equals(races) and s.equals(stages)
    assert r.attrs["races"] == 4 and r.attrs["game"] == "etape" and s.attrs["game"] == "etape"
    df = R.simulate("stapop", players=2, games=1)
    write_parquet(df, tmp_path / "race.parquet", df.attrs)
    with pytest.raises(ValueError, match="'race' run, not an etape run"):
        load_run(tmp_path / "race.parquet")


# ---- positions (docs/python.md, docs/positions.md) ---------------------------------------------

POSITION = {"players": 2, "on_turn": 0, "stock": 40,
            "hands": {"0": ["km100", "km200", "roll", "stop", "extra_tank", "km25", "km50"]},
            "sides": [{"battle": "roll", "distance": {"km200": 2, "km100": 2}},
                      {"battle": "roll", "limit": "speed_limit", "safeties": ["puncture_proof"]}]}


def test_position_mistakes_and_illegal_moves_are_design_errors_naming_them():
    from etappe.kernels.race_position import analyze_position, legal_moves_of, play_position_move

    design = R.load_design("millebornes")
    bad = {**POSITION, "sides": [{"battle": "roll", "distance": {"km26": 1}}, POSITION["sides"][1]]}
    with pytest.raises(R.DesignError, match=r"sides\[0\]\.distance\.km26: no card 'km26'"):
        legal_moves_of(design, bad)
    # 200 km on top of 600 km overshoots the 700 km trip of two players (and a third 200 km card is one too many)
    assert "play km200" not in legal_moves_of(design, POSITION)
    with pytest.raises(R.DesignError, match="'play km200' is not legal here"):
        play_position_move(design, POSITION, "play km200")
    with pytest.raises(R.DesignError, match="expected 'play CARD'"):
        play_position_move(design, POSITION, "fly")
    with pytest.raises(R.DesignError, match="greedy-family policy, not 'random'"):
        analyze_position(design, POSITION, playouts=1, policy="random")


def test_play_position_move_is_the_same_for_the_same_seed():
    from etappe.kernels.race_position import play_position_move

    design = R.load_design("millebornes")
    after, what = play_position_move(design, POSITION, "play stop on side 1")
    assert (after, what) == play_position_move(design, POSITION, "play stop on side 1")
    assert after["on_turn"] == what["next_seat"] == 1  # two players: seat 1 is next, whatever happens
    assert sorted(what) == sorted(["next_seat", "hand_over", "coup_fourre_by", "extension_called", "trip_side",
                                   "broken_invariant"])


# ---- mistakes a walkthrough made (each gave an undocumented error or a wrong result) ----------
# Each pins what the docs promise: a ValueError (or a TypeError for a wrong type) whose message
# names the argument, never an IndexError, KeyError, AttributeError or a silently wrong result.

@pytest.mark.parametrize("play", [lambda s: R.simulate("stapop", players=2, games=1, seed=s),
                                  lambda s: B.simulate(players=2, games=1, seed=s)], ids=["race", "bremen"])
@pytest.mark.parametrize("seed", [2**63, 2**64])
def test_seed_above_2_63_is_a_value_error(play, seed):
    with pytest.raises(ValueError, match="seed"):
        play(seed)


def test_the_largest_seed_and_game_numbers_play_and_keep_their_numbers():
    # docs/python.md: games (races) are numbered up to 2**63 - 1, the kernels' 64-bit signed keys.
    # Each row keeps its number exactly (an int32 record cut Bremen's from 2**31 on; a float
    # rounded Tape l'étape's), and a game played alone is the same game.
    last = 2**63 - 1
    bremen = B.simulate(players=2, games=2, seed=last, first_game=last - 1)
    assert bremen["game"].tolist() == bremen["seed_index"].tolist() == [last - 1, last]
    alone = B.simulate(players=2, games=1, seed=last, first_game=last)
    pd.testing.assert_frame_equal(alone.drop(columns=["game", "seed_index"]),
                                  bremen.iloc[1:].reset_index(drop=True).drop(columns=["game", "seed_index"]))
    races, stages = E.simulate(players=3, races=2, seed=last, first_race=last - 1)
    assert races["race"].tolist() == [last - 1, last]
    assert stages["race"].unique().tolist() == [last - 1, last]
    assert R.simulate("stapop", players=2, games=1, seed=last).attrs["seed"] == last


def test_race_policies_none_is_the_default():
    assert [p["name"] for p in R.simulate("stapop", players=2, games=1, policies=None).attrs["policies"]] == ["greedy"] * 2


@pytest.mark.parametrize("play", [lambda p: R.simulate("stapop", players=2, games=1, policies=p),
                                  lambda p: B.simulate(players=2, games=1, policies=p),
                                  lambda p: E.simulate(players=3, races=1, policies=p)], ids=["race", "bremen", "etape"])
def test_a_policy_that_is_not_a_string_names_the_problem(play):
    with pytest.raises((TypeError, ValueError), match="polic"):
        play([None])


@pytest.mark.parametrize("play", [lambda n: R.simulate("stapop", players=2, games=n),
                                  lambda n: B.simulate(players=2, games=n),
                                  lambda n: E.simulate(players=3, races=n)], ids=["race", "bremen", "etape"])
@pytest.mark.parametrize("count", ["10", 2.5])
def test_a_count_of_the_wrong_type_names_the_argument(play, count):
    with pytest.raises(TypeError, match="games|races"):
        play(count)


@pytest.mark.parametrize("play", [lambda n: R.simulate("stapop", players=n, games=2),
                                  lambda n: B.simulate(players=n, games=2),
                                  lambda n: E.simulate(players=n, races=2)], ids=["race", "bremen", "etape"])
def test_a_player_count_of_the_wrong_type_names_the_argument(play):
    # docs/python.md: a count that is not an int is a TypeError naming it (Bremen multiplied the policy
    # list by 4.0, Tape l'étape played the races)
    with pytest.raises(TypeError, match="players must be a whole number"):
        play(4.0)


@pytest.mark.parametrize("size", [0, -1])
@pytest.mark.parametrize("play, name", [(lambda n: R.simulate("stapop", players=2, games=3, chunk_size=n), "chunk_size"),
                                        (lambda n: B.simulate(players=2, games=3, chunk=n), "chunk"),
                                        (lambda n: E.simulate(players=3, races=3, chunk=n), "chunk")],
                         ids=["race", "bremen", "etape"])
def test_a_chunk_size_below_one_is_a_value_error(play, name, size):
    with pytest.raises(ValueError) as refused:
        play(size)
    assert str(refused.value) == f"{name} must be 1 to {2**63 - 1}, not {size}"


def test_a_frame_of_another_game_is_refused_by_name():
    from etappe.analysis.race_summary import summarize

    race, bremen = R.simulate("stapop", players=2, games=2), B.simulate(players=2, games=2)
    races = E.simulate(players=3, races=2)[0]
    refusals = [(lambda: summarize(bremen), "the run is from the 'bremen' game, not 'race': read it with "
                                            "etappe.analysis.bremen"),
                (lambda: B.summarize(race), "the frame is from the 'race' game, not 'bremen': read it with "
                                            "etappe.analysis.race_summary"),
                (lambda: E.summarize(bremen), "the frame is from the 'bremen' game, not 'etape': read it with "
                                              "etappe.analysis.bremen"),
                (lambda: B.summarize(races), "the frame is from the 'etape' game, not 'bremen': read it with "
                                             "etappe.analysis.etape")]
    for summarize_other, message in refusals:
        with pytest.raises(ValueError) as refused:
            summarize_other()
        assert str(refused.value) == message


def test_bremen_from_run_file_refuses_another_games_run(tmp_path):
    df = R.simulate("stapop", players=2, games=1)
    write_parquet(df, tmp_path / "race.parquet", df.attrs)
    for read in (B.from_run_file, B.summarize_run_file):
        with pytest.raises(ValueError) as refused:
            read(tmp_path / "race.parquet")
        assert str(refused.value) == (f"{tmp_path / 'race.parquet'} is from the 'race' game, not 'bremen': "
                                      "read it with etappe.analysis.race_summary")


def test_etape_report_of_a_races_frame_needs_its_stages():
    from etappe.reports.etape import build_report

    with pytest.raises((TypeError, ValueError), match="stages"):
        build_report(E.simulate(players=3, races=2)[0])


def test_etape_joker_usage_of_no_races_is_not_an_index_error():
    # as the other tables of no races: an empty table with its columns
    _, stages = E.simulate(players=3, races=0)
    table = E.joker_usage(stages)
    assert len(table) == 0 and "use_rate" in table.columns


def test_a_comparison_of_no_games_is_not_a_key_error():
    from etappe.analysis.compare import compare_tables, paired_table
    from etappe.analysis.race_summary import game_table

    none = R.simulate("stapop", players=2, games=0)
    with pytest.raises(ValueError, match="the comparison holds no paired game"):  # docs/python.md
        paired_table(compare_tables(game_table(none, none.attrs), game_table(none, none.attrs)))


def test_compare_variants_refuses_negative_games():
    with pytest.raises(ValueError, match="games"):
        compare_variants("bremen", players=2, games=-1, policies=["greedy"], seed=1,
                         options_a={}, options_b={"harder": True})


def test_replay_of_incomplete_metadata_names_the_missing_field():
    meta = dict(R.simulate("stapop", players=2, games=1).attrs)
    del meta["seed"]
    with pytest.raises(ValueError, match="seed"):
        R.replay(meta, game=0)


def test_tournament_policies_as_one_string_is_refused_by_name():
    from etappe.analysis.tournament import play_tournament

    with pytest.raises((TypeError, ValueError), match="list"):
        play_tournament("millebornes", players=2, policies="greedy,random", games=1)


@pytest.mark.parametrize("call", ["int_keys", "options_list", "playouts_0", "design_name"])
@pytest.mark.filterwarnings("ignore:invalid value encountered")  # today's 0 / 0 of playouts=0
def test_position_mistakes_from_python_name_the_problem(call):
    from etappe.kernels.race_position import analyze_position, legal_moves_of

    design = R.load_design("millebornes")
    if call == "int_keys":
        position = {**POSITION, "hands": {0: POSITION["hands"]["0"]}}  # read as seat "0" (docs/python.md)
        assert legal_moves_of(design, position) == legal_moves_of(design, POSITION)
    elif call == "options_list":
        with pytest.raises(TypeError, match="options must be a dict"):
            legal_moves_of(design, POSITION, options=["overshoot=disqualify"])
    elif call == "playouts_0":
        with pytest.raises(ValueError, match="playouts"):
            analyze_position(design, POSITION, playouts=0)
    else:  # a design name is loaded (docs/python.md)
        assert legal_moves_of("millebornes", POSITION) == legal_moves_of(design, POSITION)


def test_a_sweep_or_comparison_of_no_games_or_of_a_string_of_values_names_the_problem(tmp_path):
    # sweep_design("3,5") swept the characters '3', ',' and '5'; games=-5 said "the records hold no
    # complete game" after building every variant
    from etappe.analysis.sweep import sweep_design
    from etappe.cli.report_cmds import compare_designs

    with pytest.raises(TypeError, match="values is a list"):
        sweep_design("millebornes", "cards.stop.count", "3,5", players=2, games=10)
    with pytest.raises(ValueError, match="games must be 1 to"):
        sweep_design("millebornes", "cards.stop.count", [3, 5], players=2, games=-5)
    with pytest.raises(ValueError, match="games must be 1 to"):
        compare_designs("stapop", "millebornes", tmp_path, games=-5)
