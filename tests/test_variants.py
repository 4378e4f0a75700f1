"""Two variants of Bremer Stadtmusikanten or Tape l'étape compared game by
game (`etappe compare bremen|etape --option-b ...`, `etappe report a b`)."""
import re
import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest
from typer.testing import CliRunner

from etappe.analysis import bremen as B
from etappe.analysis import etape as E
from etappe.analysis import variants as V
from etappe.analysis.runio import read_parquet, write_parquet
from etappe.cli.main import app
from etappe.cli.report_cmds import compare_variant_runs
from etappe.kernels.bremen_board import ring_board
from etappe.reports.variant_report import build_variant_report


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def lines(path):
    """The report's Markdown without the lines that hold wall-clock times."""
    return [line for line in path.read_text().splitlines() if "wall time" not in line]


def test_a_turn_cap_of_one_turn_stalls_every_bremen_game(tmp_path):
    # Rules page: the game ends when a player reaches 7 points; a storm (the
    # largest score of a turn) gives one point per animal of a pyramid of at
    # most four, plus one, so no game can be won in its first turn.
    vc = V.compare_variants("bremen", 2, 40, ["greedy", "greedy"], 3, {}, {"max_turns": 1}, tmp_path / "ck.pkl",
                            chunk_size=15)
    table = V.variant_table(vc).set_index("key")
    capped = table.loc["capped"]
    assert (capped["n"], capped["mean_a"], capped["mean_b"], capped["diff"]) == (40, 0.0, 1.0, -1.0)
    # -1 in every one of 40 games: all of one sign, p = 2 / 2^40 by the sign test, before Holm
    assert capped["p_value"] == pytest.approx(2 * 0.5 ** 40) and capped["reject"]
    assert table.loc["turns", "mean_b"] == 1.0
    assert table.loc["won_s0", "mean_b"] == 0.0
    # the first player's win, the winner's deficit and the final gap need a winner in both games of a pair:
    # none here (a stalled game is no loss of the first player's)
    assert not {"first_position_won", "first_player_gap", "winner_deficit", "final_gap"} & set(table.index)


def test_the_comparison_plays_the_games_simulate_plays(tmp_path):
    # Game i of each variant comes from (seed, i) whatever the chunks: the
    # paired means are those of one run of each variant played whole.
    a = B.simulate(3, 30, ["greedy", "random", "greedy"], 5)
    b = B.simulate(3, 30, ["greedy", "random", "greedy"], 5, options={"harder": True})
    heard = []
    vc = V.compare_variants("bremen", 3, 30, ["greedy", "random", "greedy"], 5, {}, {"harder": True},
                            tmp_path / "ck.pkl", chunk_size=7, progress=heard.append)
    assert heard == [7, 14, 21, 28, 30]  # the games played per variant so far, after each chunk
    assert vc.meta_a["games"] == vc.meta_b["games"] == 30 and vc.meta_a["wall_seconds"] > 0
    assert vc.meta_a["first_game"] == vc.meta_b["first_game"] == 0  # games 0 .. 29, as simulate's above
    table = V.variant_table(vc).set_index("key")
    # the first player's distance from the fair share, 1/3 at 3 players (games with a winner)
    for run, mean in ((a, "mean_a"), (b, "mean_b")):
        won = run[run["winner_seat"] >= 0]
        rate = (won["winner_seat"] == won["first_seat"]).mean()
        assert table.loc["first_player_gap", mean] == pytest.approx(abs(rate - 1 / 3))
    for key in ("turns", "storms", "won_s1"):
        column = "winner_seat" if key == "won_s1" else key
        values_a = (a[column] == 1) if key == "won_s1" else a[column]
        values_b = (b[column] == 1) if key == "won_s1" else b[column]
        assert table.loc[key, "mean_a"] == pytest.approx(values_a.mean())
        assert table.loc[key, "mean_b"] == pytest.approx(values_b.mean())
        assert table.loc[key, "diff"] == pytest.approx((values_a.astype(float) - values_b.astype(float)).mean())
    assert table.loc["won_s1", "metric"].startswith("win rate of seat 1 (random")


def test_a_board_of_ones_own_against_the_default_names_the_reconstruction(tmp_path):
    # docs/bremen.md: the default board is marked `reconstruction = true`; a board file marked false is
    # not one. The report said "The board is a reconstruction" and its caveat spoke of "the board".
    files = {}
    for name, marked in (("mine", "false"), ("ring", "true")):  # the default board with other road links
        files[name] = tmp_path / f"{name}.toml"
        files[name].write_text(ring_board(road_links=2, name=name).replace("reconstruction = true",
                                                                           f"reconstruction = {marked}"))
    vc = V.compare_variants("bremen", 2, 20, ["greedy", "greedy"], 1, {}, {}, board_b=str(files["mine"]))
    md = build_variant_report(vc).to_markdown()
    assert "Board A (default-reconstruction) is a reconstruction (see the caveat)." in md
    assert "The board is a reconstruction" not in md
    caveat = md[md.index("## Caveat"):]
    assert "Board A (default-reconstruction) is a reconstruction: no source documents" in caveat
    assert "Board B (mine) is not marked as a reconstruction" in caveat and "the board file" not in caveat
    vc = V.compare_variants("bremen", 2, 20, ["greedy", "greedy"], 1, {}, {}, board_b=str(files["ring"]))
    md = build_variant_report(vc).to_markdown()
    assert "Board A (default-reconstruction) and board B (ring) are reconstructions (see the caveat)." in md


def test_tape_l_etape_labels_name_the_policies_of_seats_and_slots():
    same = V.metric_labels("etape", {"players": 3, "policies": ["heuristic"] * 3})
    assert same["won_seat2"] == ("win share of seat 2 (heuristic)", "share")
    mixed = V.metric_labels("etape", {"players": 3, "policies": ["heuristic", "random", "heuristic"]})
    assert mixed["won_seat0"] == ("win share of seat 0", "share")  # seats rotate through the slots' policies
    assert [mixed[f"won_slot{k}"][0] for k in range(3)] == [
        "win share of policy slot 0 (heuristic)", "win share of policy slot 1 (random)",
        "win share of policy slot 2 (heuristic)"]


def test_tape_l_etape_win_shares_split_a_shared_first_place():
    # Two seats level first share the race: 1/2 each; slots follow the seats' slot columns.
    races = pd.DataFrame({"race": [0, 1], "winner": [-1, 2], "capped_stages": [0, 1], "blocked_stages": [0, 0],
                          "rank_0": [1, 2], "rank_1": [1, 3], "rank_2": [3, 1],
                          "slot_0": [0, 2], "slot_1": [1, 0], "slot_2": [2, 1]})
    races.attrs.update(players=3, policies=["heuristic", "random", "heuristic"])
    stages = pd.DataFrame({"race": [0, 0, 1, 1], "stage": [0, 1, 0, 1], "turns": [10, 12, 9, 30],
                           **{f"cum_{s}": [100, 200, 100, 200] for s in range(3)}})
    stages.attrs.update(players=3, options={})
    got = E.paired_metrics(races, stages)
    assert got["race_turns"].tolist() == [22, 39]
    assert got["shared_first"].tolist() == [1, 0] and got["capped_stages"].tolist() == [0, 1]
    assert got[["won_seat0", "won_seat1", "won_seat2"]].to_numpy().tolist() == [[0.5, 0.5, 0], [0, 0, 1]]
    # race 0: seats 0 and 1 (slots 0 and 1) share; race 1: seat 2 (slot 1) wins
    assert got[["won_slot0", "won_slot1", "won_slot2"]].to_numpy().tolist() == [[0.5, 0.5, 0], [0, 1, 0]]
    # one policy in every slot: the slots are the seats' shares again, and no row of their own
    races.attrs["policies"] = ["heuristic"] * 3
    assert list(E.paired_metrics(races, stages).columns) == [*E.PAIRED_METRICS, "won_seat0", "won_seat1",
                                                             "won_seat2"]


def test_compare_bremen_writes_the_report_resumes_and_matches_two_run_files(tmp_path, monkeypatch):
    out = tmp_path / "compare"
    args = ("compare", "bremen", "--option-b", "harder=true", "--players", 3, "--games", 30, "--chunk-size", 10,
            "--seed", 2, "--out", out)
    real_play = V._play
    calls = {"n": 0}

    def flaky_play(*a, **k):
        if a[3] > 0:  # count: the zero-game runs only check the variants
            calls["n"] += 1
            if calls["n"] == 3:  # in the second chunk (two variants a chunk)
                raise KeyboardInterrupt
        return real_play(*a, **k)

    monkeypatch.setattr(V, "_play", flaky_play)
    assert run(*args).exit_code != 0
    assert (out / ".compare-checkpoint.pkl").exists() and not (out / "report.md").exists()
    monkeypatch.setattr(V, "_play", real_play)
    result = run(*args[:9], 4, *args[10:])  # resumed in chunks of another size: the same games
    assert result.exit_code == 0, result.stderr
    assert "10 of 30 games per variant already played" in " ".join(result.stderr.split())
    assert not (out / ".compare-checkpoint.pkl").exists()
    md = (out / "report.md").read_text()
    assert md.startswith("# Bremer Stadtmusikanten: harder=false (A) against harder=true (B), 3 players")
    assert [line[3:] for line in md.splitlines() if line.startswith("## ")] == [
        "Run", "At a glance", "Every metric", "Method", "Caveat"]
    assert "| option harder | false | true |" in md
    assert "| policies by seat | greedy,greedy,greedy |" in md
    board = B.load_board(None)
    assert f"| board A | {board.name} ({board.hash}) |\n| board B | {board.name} ({board.hash}) |" in md
    assert "{" not in md  # every placeholder of the report's text filled in
    assert "The board is a reconstruction (see the caveat)." in md  # both play the default board
    # reports.md: the policies and their parameters; greedy's defaults as docs/bremen.md lists them
    assert ("| policy parameters | greedy:storm=10,chase=4,climb=2,knock=1,own_home=1,progress=0.5,build=0.5,"
            "leader=1,noise=0.01 |") in md
    # the rules: Bremen is played with dice and no cards, so the paired games share no deals
    assert "the first player drawn, the dice and the policies' random choices" in md and "deals" not in md
    assert "paired game by game" in md and "where every game differs by the same non-zero amount" in md
    # what needs a winner, and the first player's edge, as Bremen measures them (docs/bremen.md)
    method = md.split("## Method")[1]
    assert "A metric that needs a winner (the first player's win rate, the winner's deficit, the final gap)" in method
    assert "The first player's distance from the fair share (1 / players) is |rate - fair| of A minus that of B" in method
    assert "![Paired differences in standard-deviation units" in md and (out / "variant_differences.png").exists()
    # every rule option in force, as docs/bremen.md's table gives the defaults: those of both once, then
    # what differs; the reproduce line writes each of A's out, so that a later default cannot change the games
    both = ("both_dice=when_possible, bridge_stack=false, first_to_target=most_points, foreign_onto=direct, "
            "harder_scope=move, max_turns=2000, neutral_storm_point=nobody, one_die=either, robber_field=open, "
            "robber_stop=anywhere, target=7, tie_rule=mover_first, turbulent=false, turbulent_no_fit=fewest")
    assert f"| rule options of both (A's and B's that differ: below) | {both} |" in md
    assert ("Reproduce: etappe compare bremen --players 3 --games 30 --seed 2 --policy greedy,greedy,greedy "
            + " ".join(f"--option {item}" for item in sorted(both.split(", ") + ["harder=false"]))
            + " --option-b harder=true\n") in md
    # the same comparison from two run files, and played in one go
    for name, extra in (("a.parquet", []), ("b.parquet", ["-o", "harder=true"])):
        assert run("simulate", "bremen", "-p", 3, "-n", 30, "--seed", 2, *extra, "--out", tmp_path / name).exit_code == 0
    assert run("report", tmp_path / "a.parquet", tmp_path / "b.parquet", "--out", tmp_path / "files").exit_code == 0
    assert run(*args[:-1], tmp_path / "whole").exit_code == 0
    assert lines(out / "report.md") == lines(tmp_path / "whole" / "report.md") == lines(
        tmp_path / "files" / "report.md")
    # the run files' own playing time (their attrs' wall_seconds), as the comparison played in one go shows it
    files_md = (tmp_path / "files" / "report.md").read_text()
    assert re.search(r"\| wall time A \| [0-9.]+ s of play, [0-9,]+ games/s \|", files_md), files_md
    # games are paired by their number, not by their place in the files: B's games in reverse order
    # and read in batches of 7 give the same report
    records, meta = read_parquet(tmp_path / "b.parquet")
    write_parquet(records.iloc[::-1].reset_index(drop=True), tmp_path / "b_reversed.parquet", meta)
    compare_variant_runs(tmp_path / "a.parquet", tmp_path / "b_reversed.parquet", tmp_path / "reversed", batch_rows=7)
    assert lines(tmp_path / "reversed" / "report.md") == lines(tmp_path / "files" / "report.md")


@pytest.mark.parametrize("args", [
    ("bremen", "--board", "my boards/ring 1.toml", "--option-b", "target=8", "--players", 3,
     "--policy", "greedy:knock=3,random,greedy"),
    ("bremen", "--board-b", "my boards/ring 1.toml", "-o", "harder=true", "--option-b", "target=8", "--players", 3),
    ("etape", "-o", "crevaison_carry=false", "--option-b", "mode=endurance", "--players", 4,
     "--policy", "blocker:block=5,random")])
def test_the_reproduce_line_plays_the_comparison_again(tmp_path, monkeypatch, args):
    # the report's command, run as written, gives the same report, even after a default of a rule option
    # changes (it wrote only the options set away from today's defaults); it once left a board path with
    # a space in it unquoted
    import re
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my boards").mkdir()
    (tmp_path / "my boards" / "ring 1.toml").write_text(
        ring_board(road=16, middle=12, inner=8, road_links=3, middle_links=0, house_links=1, name="ring"))
    result = run("compare", *args, "--games", 12, "--seed", 2, "--out", "a")
    assert result.exit_code == 0, result.output
    command = re.search(r"^Reproduce: (etappe compare .*)$", (tmp_path / "a" / "report.md").read_text(), re.M)
    if "--policy" in args:  # by seat, as given: the parameters at their defaults go without saying
        assert f"--policy {args[args.index('--policy') + 1]}" in command.group(1)
    # a later etappe plays to 6 points, or gives no stage-win bonus, unless told otherwise
    if args[0] == "bremen":
        monkeypatch.setitem(B.OPTIONS, "target", (6, None))
    else:
        monkeypatch.setitem(E.OPTIONS, "stage_win_bonus", (E.OPTIONS["stage_win_bonus"][0], 0))
    result = run(*shlex.split(command.group(1))[1:], "--out", "b")
    assert result.exit_code == 0, result.output
    assert lines(tmp_path / "b" / "report.md") == lines(tmp_path / "a" / "report.md")


def test_compare_etape_variants_from_the_cli_and_from_run_files(tmp_path):
    args = ("--players", 3, "--games", 40, "--seed", 1)
    result = run("compare", "etape", "--option-b", "mode=endurance", *args, "--out", tmp_path / "c")
    assert result.exit_code == 0, result.stderr
    md = (tmp_path / "c" / "report.md").read_text()
    assert "| option mode | sprint | endurance |" in md and "races per variant" in md
    assert "| policies by slot | heuristic,heuristic,heuristic |" in md and "| board A |" not in md
    # every other rule option in force, once (docs/etape.md: stage_win_bonus 40 by default)
    both = re.search(r"^\| rule options of both \(A's and B's that differ: below\) \| (.*) \|$", md, re.M).group(1)
    assert [item.split("=")[0] for item in both.split(", ")] == sorted(set(E.OPTIONS) - {"mode"})
    assert "stage_win_bonus=40" in both.split(", ")
    method = md.split("## Method")[1]
    assert ("A metric that needs a winner (the winner's deficit, the final gap, whether the leader before the last "
            "stage won)") in method and "A shared first place counts 1/k to each of the k seats that share it." in method
    # a variant Holm finds is named in bold: Markdown's ** in the twin, HTML's <b> in the page (it showed **)
    assert "Which variant plays longer races? **mode=endurance**." in md
    page = (tmp_path / "c" / "report.html").read_text()
    assert "Which variant plays longer races? <b>mode=endurance</b>." in page and "**" not in page
    assert "dice" not in md  # each stage is dealt (rules page); nothing is rolled
    # the heuristic's defaults as docs/etape.md (Policies) lists them
    assert "| policy parameters | heuristic:value=1,own=1,block=1,crev_cards=2,vita_cards=2,braq_min=3,pick=0,balai_w=0.5 |" in md
    for name, extra in (("a.parquet", []), ("b.parquet", ["-o", "mode=endurance"])):
        assert run("simulate", "etape", *args, *extra, "--out", tmp_path / name).exit_code == 0
    assert run("report", tmp_path / "a.parquet", tmp_path / "b.parquet", "--out", tmp_path / "r").exit_code == 0
    assert lines(tmp_path / "c" / "report.md") == lines(tmp_path / "r" / "report.md")


def test_a_comparison_of_one_race_says_it_has_no_interval(tmp_path):
    # One pair of races has no spread: Student's t has no degrees of freedom. The table printed
    # "+170 [nan, nan]"; the headline already said "One pair only, so no interval and no test".
    result = run("compare", "etape", "--option-b", "mode=endurance", "--games", 1, "--out", tmp_path / "c")
    assert result.exit_code == 0, result.stderr
    md = (tmp_path / "c" / "report.md").read_text()
    assert "nan" not in md and "(one pair: no interval)" in md and "the same 1 race (the same seeds)" in md
    # Bremen's first player's distance from the fair share needs two games to have a value at all
    result = run("compare", "bremen", "--option-b", "harder=true", "--games", 1, "--out", tmp_path / "b")
    assert result.exit_code == 0, result.stderr
    md = (tmp_path / "b" / "report.md").read_text()
    assert "nan" not in md
    assert "| first player's distance from the fair share | rate |  |  | not measured: too few pairs |" in md


@pytest.mark.parametrize("args, message", [
    (("compare", "bremen", "--option-b", "harder=false"), "the two variants are the same"),
    (("compare", "bremen"), "give --option-b or --board-b"),
    (("compare", "bremen", "stapop", "--option-b", "harder=true"), "compares two variants of bremen, not two games"),
    (("compare", "etape", "--option-b", "mode=endurance", "--sequential"), "--sequential is for the race designs"),
    (("compare", "etape", "--option-b", "mode=endurance", "--board-b", "x.toml"), "for bremen only"),
    (("compare", "stapop", "millebornes", "--board", "x.toml"), "for bremen only"),
    (("compare", "etape", "--option-b", "mode=endurance", "-p", 2), "3 to 6 players"),
    (("compare", "bremen", "--option-b", "no_such_option=1"), "no_such_option"),
    (("compare", "bremen", "--option-b", "harder=true", "--seating", "rotate"),
     "--seating is for the race games: Tape l'étape rotates seats by its rule option rotate_seats, and Bremen draws "
     "the first player of each game"),
])
def test_compare_refusals_name_the_problem(tmp_path, args, message):
    result = run(*args, "--games", 5, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())
    assert "A and B" not in result.output  # refused before a progress bar is drawn


def test_report_refuses_run_files_that_do_not_pair(tmp_path):
    for name, extra in (("a.parquet", ["-n", 20]), ("b.parquet", ["-n", 30, "-o", "harder=true"]),
                        ("c.parquet", ["-n", 20])):
        assert run("simulate", "bremen", "-p", 2, "--seed", 1, *extra, "--out", tmp_path / name).exit_code == 0
    result = run("report", tmp_path / "a.parquet", tmp_path / "b.parquet", "--out", tmp_path / "r")
    assert result.exit_code == 2 and ("cannot be compared: a comparison is of two variants (rule options, boards) "
                                      "on the same games, and these runs differ in games 20 against 30"
                                      ) in " ".join(result.stderr.split())
    result = run("report", tmp_path / "a.parquet", tmp_path / "c.parquet", "--out", tmp_path / "r")
    assert result.exit_code == 2 and "runs of the same variant" in " ".join(result.stderr.split())


def test_compare_variants_refusals_from_python_name_the_problem():
    def refused(error, **changes):
        args = {"game": "etape", "players": 3, "games": 4, "policies": ["random"], "seed": 1, "options_a": {},
                "options_b": {"mode": "endurance"}, **changes}
        with pytest.raises(error) as caught:
            V.compare_variants(**args)
        return str(caught.value)

    assert refused(ValueError, game="race") == "race: a variant comparison is for bremen and etape"
    assert refused(ValueError, chunk_size=0) == f"chunk_size must be 1 to {2**63 - 1}, not 0"
    assert "chunk_size" in refused(TypeError, chunk_size="5")
    same = ("the two variants are the same ({}, every rule option equal{}): on the same seeds every paired "
            "difference would be 0; give option B (--option-b, options_b) a value other than option A's (the "
            "default, or --option, options_a){}")
    assert refused(ValueError, options_b={"mode": "sprint"}) == same.format("etape", "", "")
    assert refused(ValueError, game="bremen", options_b={"harder": False}) == same.format(
        "bremen", ", the same board", ", or B another board (--board-b, board_b)")


def test_compare_variants_counts_playing_time_across_a_resume(tmp_path, monkeypatch):
    # each variant's wall_seconds is the playing time of its chunks, those played before a resume included
    real_play, calls = V._play, {"n": 0}

    def timed_play(*args):
        metrics, meta, _ = real_play(*args)
        if args[3] > 0:  # a chunk of games, not the zero-game check
            calls["n"] += 1
            if calls["n"] == 3:  # in the second chunk (two variants a chunk)
                raise KeyboardInterrupt
        return metrics, meta, 0.25

    monkeypatch.setattr(V, "_play", timed_play)
    args = ("etape", 3, 6, "random", 1, {}, {"mode": "endurance"}, tmp_path / "ck.pkl")
    heard = []
    with pytest.raises(KeyboardInterrupt):
        V.compare_variants(*args, chunk_size=2, on_resume=heard.append)
    assert heard == []  # a fresh start resumes nothing
    vc = V.compare_variants(*args, chunk_size=2, on_resume=heard.append)
    assert heard == [2]  # the first chunk was kept
    # one spec for every seat, with random's defaults (docs/etape.md: joker_p 0.25, more_p 0.5)
    assert vc.meta_a["policies"] == vc.meta_b["policies"] == ["random:joker_p=0.25,more_p=0.5"] * 3
    assert vc.meta_a["wall_seconds"] == vc.meta_b["wall_seconds"] == 0.75  # 3 chunks of 0.25 s
    # started again on its last checkpoint (every chunk played) without an on_resume to tell: nothing played
    calls["n"] = -100
    again = V.compare_variants(*args, chunk_size=2)
    assert calls["n"] == -100 and again.meta_a["wall_seconds"] == 0.75
    # the report's header: each variant's playing time and speed (6 races in 0.75 s), and the version
    md = build_variant_report(again).to_markdown()
    assert "| wall time A | 0.75 s of play, 8 races/s |\n| wall time B | 0.75 s of play, 8 races/s |" in md
    assert f"| etappe version | {again.meta_a['version']} |" in md and again.meta_a["version"]


def test_an_edited_policy_file_is_another_comparison_and_another_run(tmp_path, monkeypatch):
    # docs/bremen.md: a run of an edited policy file is another run. An audit edited its policy between an
    # interrupted `compare bremen` and its resume, and got one report of games of two policies; `report A B`
    # took two runs of two versions and put the whole difference on the rule option.
    real_play, calls = V._play, {"n": 0}

    def played_with(source):
        def play(*args):
            metrics, meta, seconds = real_play(*args)
            calls["n"] += 1
            if calls["n"] == 5:  # in the second chunk (calls 1 and 2 are the zero-game checks)
                raise KeyboardInterrupt
            return metrics, {**meta, "policy_sources": {"pol.py": source}}, seconds
        return play

    args = ("bremen", 2, 4, "greedy", 1, {}, {"harder": True}, tmp_path / "ck.pkl")
    monkeypatch.setattr(V, "_play", played_with("aaaa"))
    with pytest.raises(KeyboardInterrupt):
        V.compare_variants(*args, chunk_size=2)
    monkeypatch.setattr(V, "_play", played_with("bbbb"))
    with pytest.raises(ValueError, match=r'belongs to a different run \(policy_sources.pol.py "aaaa", not "bbbb"\)'):
        V.compare_variants(*args, chunk_size=2)
    monkeypatch.undo()
    # two run files of the two versions
    for name, options, source in (("a", {}, "aaaa"), ("b", {"harder": True}, "bbbb")):
        df = B.simulate(players=2, games=3, seed=1, options=options)
        write_parquet(df, tmp_path / f"{name}.parquet", {**df.attrs, "policy_sources": {"pol.py": source}})
    with pytest.raises(ValueError, match=r'differ in policy_sources \{"pol.py": "aaaa"\} against \{"pol.py": "bbbb"\}'):
        compare_variant_runs(tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "r")


def test_compare_bremen_moves_its_bar_every_two_thousand_games_a_variant(tmp_path, monkeypatch):
    # The bar moves once a chunk pair; 20,000-game chunks (the run's chunk size) left it still for 20 s.
    real_play, counts = V._play, []

    def counted(*args):
        counts.append(args[3])
        return real_play(*args)

    monkeypatch.setattr(V, "_play", counted)
    result = run("compare", "bremen", "--option-b", "harder=true", "--players", 2, "--games", 4100,
                 "--out", tmp_path / "c")
    assert result.exit_code == 0, result.stderr
    played = [n for n in counts if n]  # after the zero-game checks of the variants
    assert played == [2000, 2000, 2000, 2000, 100, 100]  # chunk pairs
