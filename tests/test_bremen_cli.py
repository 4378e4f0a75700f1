"""Bremer Stadtmusikanten CLI and reports: run files, resumable chunks, report
contents, the board sweep."""
import hashlib
import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from by_hand import wilson  # noqa: E402
from etappe.analysis.bremen import from_run_file, simulate  # noqa: E402
from etappe.analysis.runio import read_metadata  # noqa: E402
from etappe.cli import bremen as C  # noqa: E402
from etappe.cli.main import app as main_app  # noqa: E402
from etappe.kernels import bremen as K  # noqa: E402
from etappe.kernels.bremen_board import load_board, ring_board  # noqa: E402
from etappe.reports.bremen import build_report  # noqa: E402

POLICIES = ["greedy", "random", "greedy", "random"]
OPTIONS = {"max_turns": 300}


def test_simulate_command_writes_parquet_with_identity(tmp_path):
    out = tmp_path / "run.parquet"
    df = C.simulate_command(4, 30, POLICIES, 5, out, None, OPTIONS)
    meta = read_metadata(out)
    assert meta["game"] == "bremen" and meta["seed"] == 5 and meta["policies"] == POLICIES
    assert meta["board_reconstruction"] and meta["options"]["max_turns"] == 300
    back = from_run_file(out)
    same = simulate(4, 30, POLICIES, 5, options=OPTIONS)
    pd.testing.assert_frame_equal(same, back, check_dtype=False)
    # the command keeps only the columns its summary prints
    pd.testing.assert_frame_equal(same[["winner_seat", "turns", "capped"]], df, check_dtype=False)
    # docs/bremen.md names every key of the metadata (policy_sources only with a policy of your own)
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "bremen.md").read_text().split())
    listed = text.split("`df.attrs` (the run file's metadata, key `etappe`):")[1].split(". ")[0]
    assert set(meta) == set(re.findall(r"`(\w+)`", listed)) - {"policy_sources"}


def test_an_interrupted_run_resumes_from_its_chunks(tmp_path):
    out = tmp_path / "run.parquet"
    whole = C.simulate_command(4, 25, POLICIES, 2, None, None, OPTIONS, chunk_size=10)
    C.simulate_command(4, 10, POLICIES, 2, tmp_path / "other.parquet", None, OPTIONS, chunk_size=10)
    first = from_run_file(tmp_path / "other.parquet")
    # fake an interruption: chunk 0 of the 25-game run is already on disk
    run = C.ChunkedRun(out, {"game": "bremen", "board_hash": first.attrs["board_hash"], "players": 4,
                             "games": 25, "policies": POLICIES, "options": first.attrs["options"], "seed": 2,
                             "version": first.attrs["version"], "record_columns": K.N_REC}, chunk_size=10)
    run.save(0, first, seconds=1000.0)
    # resumed with another chunk size: in the interrupted run's chunks of 10, chunk 0 reused
    resumed = C.simulate_command(4, 25, POLICIES, 2, out, None, OPTIONS, chunk_size=7)
    pd.testing.assert_frame_equal(resumed, whole, check_dtype=False)
    pd.testing.assert_frame_equal(from_run_file(out), simulate(4, 25, POLICIES, 2, options=OPTIONS),
                                  check_dtype=False)
    assert resumed.attrs["wall_seconds"] >= 1000.0  # the earlier session's playing time is counted
    assert not (tmp_path / "run.parquet.parts").exists()


def test_a_run_shared_over_machines_joins_into_the_run_of_one(tmp_path, monkeypatch):
    out = tmp_path / "run.parquet"  # one folder for both shares, as on a shared disk
    first = C.simulate_command(4, 25, POLICIES, 2, out, None, OPTIONS, chunk_size=10, share=(1, 2))  # games 0-9, 20-24
    assert len(first) == 15 and not out.exists()
    second = C.simulate_command(4, 25, POLICIES, 2, out, None, OPTIONS, chunk_size=10, share=(2, 2))  # games 10-19
    assert len(second) == 10 and not out.exists()
    real = C.A.simulate
    played = []
    monkeypatch.setattr(C.A, "simulate", lambda players, games, *a, **k: played.append(games) or real(players, games, *a, **k))
    C.simulate_command(4, 25, POLICIES, 2, out, None, OPTIONS, chunk_size=10)  # joins them
    assert played == [0]  # no game: only the run's metadata, from an empty run
    monkeypatch.undo()
    pd.testing.assert_frame_equal(from_run_file(out), simulate(4, 25, POLICIES, 2, options=OPTIONS),
                                  check_dtype=False)


def test_cli_simulate_and_report(tmp_path):
    runner = CliRunner()
    out = tmp_path / "run.parquet"
    args = ["simulate", "bremen", "--games", "40", "--seed", "3", "--out", str(out), "--option", "max_turns=300",
            "--policy", "greedy,random"]  # repeated around the table
    result = runner.invoke(main_app, args)
    assert result.exit_code == 0, result.output
    assert read_metadata(out)["policies"] == POLICIES
    result = runner.invoke(main_app, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "rep" / "report.md").read_text()
    for needed in ("RECONSTRUCTION", "default.toml", "root seed", "Win rate per seat", "turn cap",
                   "Bots are not people", "robber", "| lead changes per game | 40 |",
                   "these policies only: greedy, random",
                   "Storms give a point per animal to its owner; the robber bonus is the extra point"):
        assert needed in md
    order = ["Run", "Outcomes", "Skill matrix", "Length", "Tension", "Progress", "Points by source",
             "Robber and knocking", "Card balance", "Variant comparison", "Anomalies", "Caveat"]
    at = [md.index(f"## {title}\n") for title in order]
    assert at == sorted(at)
    assert "Bremer Stadtmusikanten has no cards" in md and "One run compares no variants" in md
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "<h2>Tension</h2>" in html and "<h2>Progress</h2>" in html
    for name in ("length", "skill_matrix", "lead_changes", "progress_policy", "progress_position", "progress_seat"):
        assert (tmp_path / "rep" / f"{name}.png").exists(), name


def test_cli_refuses_unknown_rule_options():
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--games", "1", "--option", "hardr=true"])
    assert result.exit_code == 2 and "hardr" in result.output
    assert "'hardr': did you mean 'harder'?" in " ".join(result.stderr.split())  # the option of docs/bremen.md


def test_cli_refuses_options_that_mean_nothing_here(tmp_path):
    runner = CliRunner()
    for args, message in (
            (["-o", "harder_scope=roll"], "harder_scope=roll applies to harder=true only (it says how the harder "
                                          "variant is judged); add harder=true"),
            (["-o", "turbulent_no_fit=home"], "turbulent_no_fit=home applies to turbulent=true only"),
            (["-o", "neutral_storm_point=mover"], "neutral_storm_point=mover applies to 3 players only: with 2 or "
                                                  "4 every colour has a player, so no animal is neutral (this game "
                                                  "has 4 players)"),
            (["--players", "2", "-o", "neutral_storm_point=mover"], "(this game has 2 players)"),
            (["-o", "both_dice=free", "-o", "one_die=larger"], "one_die=larger applies to both_dice=when_possible "
                                                                "only"),
            (["-o", "both_dice=never"], "both_dice: 'never' is not one of when_possible, free")):
        result = runner.invoke(main_app, ["simulate", "bremen", "--games", "3", *args])
        assert result.exit_code == 2, (args, result.output)
        assert message in " ".join(result.stderr.split()) and "Traceback" not in result.output, result.stderr
        if "neutral_storm_point" not in args[-1]:
            assert "this game has" not in result.stderr  # the player count is no part of the reason
    result = runner.invoke(main_app, ["bremen", "sweep", "--games", "3", "-o", "harder_scope=roll",
                                      "--out", str(tmp_path / "sw")])
    assert result.exit_code == 2 and "applies to harder=true only" in result.stderr
    assert not (tmp_path / "sw").exists()
    for args in (["-o", "harder=true", "-o", "harder_scope=roll"], ["-o", "turbulent=true", "-o", "turbulent_no_fit=home"],
                 ["--players", "3", "-o", "neutral_storm_point=mover"], ["-o", "both_dice=free"],
                 ["-o", "one_die=larger"]):
        result = runner.invoke(main_app, ["simulate", "bremen", "--games", "3", "-o", "max_turns=50", *args])
        assert result.exit_code == 0, (args, result.output)


def test_cli_refuses_bad_files_and_board_lists(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main_app, ["report", str(tmp_path / "none.parquet")])
    assert result.exit_code == 2 and "no such run file" in result.output
    result = runner.invoke(main_app, ["bremen", "sweep", "--house-links", "3", "--out", str(tmp_path / "sw")])
    assert result.exit_code == 2 and "each offset is 0 or 1" in result.output
    result = runner.invoke(main_app, ["bremen", "sweep", "--roads", "abc", "--out", str(tmp_path / "sw")])
    assert result.exit_code == 2 and "--roads 'abc': expected whole numbers" in result.output
    result = runner.invoke(main_app, ["bremen", "sweep", "--roads", "18", "--out", str(tmp_path / "sw")])
    assert result.exit_code == 2 and "board ring-r18" in result.output and "multiple of 4" in result.output
    assert not (tmp_path / "sw").exists()  # refused before anything was written


def test_report_counts_capped_games():
    df = simulate(4, 12, ["random"] * 4, 1, options={"max_turns": 20})
    md = build_report(df).to_markdown()
    # Wilson, 12 of 12: the lower bound is n / (n + z^2) = 12 / 15.8415 = 0.7575
    assert "12 of 12 games (100.0 % [75.8, 100.0], 95 % Wilson interval) hit the turn cap of 20 turns" in md
    assert "Rules that never fired" in md
    assert "Every seat plays the same policy, so there is no skill matrix" in md
    # no winner: said plainly, as the simulate summary does, not rates and tests of nothing
    assert "No game was decided: all 12 games hit the turn cap of 20 turns, so there are no win rates" in md
    assert "nan" not in md.split("## Outcomes")[1].split("## Skill matrix")[0]
    assert "Turn-order uniformity" not in md and "Win rate per seat" not in md
    decided = build_report(simulate(4, 12, ["greedy"] * 4, 1, options={"max_turns": 300})).to_markdown()
    assert "Turn-order uniformity among decided games" in decided
    assert "Seat uniformity (one policy on every seat" in decided  # only then do seats differ by board alone
    assert "Capped games have no deficit or gap" in md and "| lead changes per game | 12 |" in md
    # a run recorded before the tension and progress columns still gets a report
    added = re.compile(r"lead_changes|max_deficit_s\d|points_r\d+_s\d")
    old = df.drop(columns=[c for c in df.columns if added.fullmatch(c)])
    assert len(old.columns) == len(df.columns) - 1 - 4 * 17
    old.attrs = dict(df.attrs)
    md = build_report(old).to_markdown()
    assert "no tension columns" in md and "no progress columns" in md


def test_sweep_runs_every_board_and_reports_what_holds(tmp_path):
    args = ["sweep", "--games", "60", "--roads", "16", "--middles", "", "--road-links", "", "--house-links", "",
            "--out", str(tmp_path), "-o", "max_turns=300", "--policy", "greedy,random,greedy,random"]
    result = CliRunner().invoke(main_app, ["bremen", *args])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "boards").iterdir()) == [
        "ring-r16-m16-l3-h1.toml", "ring-r24-m16-l3-h1.toml"]
    md = (tmp_path / "report.md").read_text()
    assert "Which conclusions hold across boards" in md and "2 of 2" in md
    assert "ring-r16-m16-l3-h1" in md


def test_the_report_gives_the_runs_playing_time_and_speed(tmp_path):
    # reports.md's header: wall time and games per second (to 0.01 s: it said "0.0 s" of a short run)
    out = tmp_path / "run.parquet"
    assert CliRunner().invoke(main_app, ["simulate", "bremen", "--games", "40", "--out", str(out)]).exit_code == 0
    assert CliRunner().invoke(main_app, ["report", str(out), "--out", str(tmp_path / "rep")]).exit_code == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    wall, speed = re.search(r"\| wall time \| ([0-9.]+) s of play \(([0-9,]+) games/s\) \|", md).groups()
    assert float(wall) == pytest.approx(read_metadata(out)["wall_seconds"], abs=0.005)
    assert 40 / (float(wall) + 0.005) - 1 <= float(speed.replace(",", "")) <= 40 / max(float(wall) - 0.005, 1e-9) + 1


def test_the_sweep_reports_its_speed_and_a_command_that_plays_it_again(tmp_path, monkeypatch):
    # reports.md's header: wall time and games per second, and all that is needed to reproduce the
    # sweep; the command, run as written, plays the same boards and gives the same report
    import shlex

    monkeypatch.chdir(tmp_path)
    args = ["bremen", "sweep", "--games", "12", "--players", "3", "--roads", "16,24", "--middles", "",
            "--road-links", "2", "--house-links", "", "-o", "target=8", "--policy", "greedy:knock=3,random,greedy",
            "--seed", "5"]
    assert CliRunner().invoke(main_app, [*args, "--out", "a"]).exit_code == 0
    md = (tmp_path / "a" / "report.md").read_text()
    wall, speed = re.search(r"Wall time ([0-9.]+) s of play over every board \(([0-9,]+) games/s\)", md).groups()
    # three boards (the reconstruction, road 16, road link 2: road 24 is the reconstruction's) of 12 games
    assert 36 / (float(wall) + 0.05) - 1 <= float(speed.replace(",", "")) <= 36 / max(float(wall) - 0.05, 1e-9) + 1
    command = re.search(r"^Reproduce: (etappe bremen sweep .*)$", md, re.M).group(1)
    assert "--roads 16 --middles '' --road-links 2 --house-links ''" in command
    result = CliRunner().invoke(main_app, [*shlex.split(command)[1:], "--out", "b"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "b" / "boards").iterdir()) == [
        "ring-r16-m16-l3-h1.toml", "ring-r24-m16-l2-h1.toml", "ring-r24-m16-l3-h1.toml"]

    def untimed(folder):
        return [line.replace(f"{folder}/boards/", "boards/") for line in (tmp_path / folder / "report.md").read_text()
                .splitlines() if not line.startswith("Wall time")]
    assert untimed("b") == untimed("a")


def test_boards_no_sweep_plays_have_no_command():
    from etappe.analysis.bremen import sweep_factor_values

    base = dict(road=24, middle=16, inner=8, road_links=3, middle_links=0, house_links=1)
    assert sweep_factor_values([base, {**base, "road": 16}]) == {"road": [16], "middle": [], "road_links": [],
                                                                 "house_links": []}
    assert sweep_factor_values([{**base, "road": 16}, {**base, "road": 20}]) is None  # no reconstruction
    assert sweep_factor_values([base, {**base, "road": 16, "middle": 12}]) is None  # two factors at once


def _rows(path):
    return len(pd.read_parquet(path))


def test_simulate_out_refuses_another_run_and_does_not_play_the_same_run_again(tmp_path):
    runner = CliRunner()
    out = tmp_path / "f.parquet"
    base = ["simulate", "bremen", "--seed", "3", "--out", str(out), "-o", "max_turns=300"]
    result = runner.invoke(main_app, [*base, "--games", "20", "--chunk-size", "10"])
    assert result.exit_code == 0, result.output
    meta = read_metadata(out)
    assert meta["games"] == 20 and meta["record_columns"] == K.N_REC and "chunk" not in meta
    for other, differs in ((["--games", "10"], "games 20, not 10"),
                           (["--games", "20", "--seed", "4"], "seed 3, not 4"),
                           (["--games", "20", "--policy", "random"], "policies")):
        result = runner.invoke(main_app, [*base, *other])  # the later --seed wins
        assert result.exit_code == 2, result.output
        assert "holds another run" in result.output and differs in result.output, result.output
        assert _rows(out) == 20
    # the same run (the chunk size does not change the records) is not played again
    before = out.stat().st_mtime_ns
    result = runner.invoke(main_app, [*base, "--games", "20"])
    assert result.exit_code == 0, result.output
    assert "already holds this run: nothing to play" in result.output
    assert _rows(out) == 20 and out.stat().st_mtime_ns == before


def test_board_file_errors_keep_their_square_brackets(tmp_path):
    # needs cli/common.py's fail() to print its message without rich markup
    runner = CliRunner()
    text = ring_board()
    no_links = tmp_path / "b.toml"
    no_links.write_text(text[:text.index("[links]")])
    empty = tmp_path / "e.toml"
    empty.write_text("")
    for board, problem in ((no_links, "no [links] chains"), (empty, "no [fields] table")):
        result = runner.invoke(main_app, ["simulate", "bremen", "--games", "1", "--board", str(board)])
        assert result.exit_code == 2 and problem in result.output, result.output


def test_sweep_refuses_road_links_out_of_range(tmp_path):
    runner = CliRunner()
    for links, valid in (("99", "1 to 5"), ("-1", "1 to 5"), ("0", "1 to 5"), ("6", "1 to 5")):
        result = runner.invoke(main_app, ["bremen", "sweep", "--road-links", links, "--out", str(tmp_path / "sw")])
        assert result.exit_code == 2, result.output
        assert f"road_links {links}:" in result.output and valid in result.output, result.output
    # a road of 12 has corners 3 apart: the default offset 3 would link the start fields
    result = runner.invoke(main_app, ["bremen", "sweep", "--roads", "12", "--out", str(tmp_path / "sw")])
    assert result.exit_code == 2 and "board ring-r12-m16-l3-h1: road_links 3:" in result.output
    assert "1 to 2" in result.output
    assert not (tmp_path / "sw").exists()


def test_capped_games_are_warned_about(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main_app, ["simulate", "bremen", "--policy", "random", "--games", "3", "-o", "max_turns=5"])
    assert result.exit_code == 0, result.output
    assert "warning: all 3 games hit the turn cap of 5 turns" in result.output
    result = runner.invoke(main_app, ["simulate", "bremen", "--games", "20", "-o", "max_turns=30"])
    assert result.exit_code == 0, result.output
    capped = int(simulate(4, 20, ["greedy"] * 4, 0, options={"max_turns": 30})["capped"].sum())
    assert 0 < capped < 20  # some games, not all: the warning counts them
    assert f"warning: {capped} of 20 games hit the turn cap of 30 turns" in result.output
    result = runner.invoke(main_app, ["simulate", "bremen", "--games", "5", "-o", "max_turns=300"])
    assert result.exit_code == 0 and "warning" not in result.output


def test_summary_without_decided_games_shows_no_nan():
    # needs cli/common.py's print_seat_summary to show "-" for a rate of no decided games
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--policy", "random", "--games", "3",
                                           "-o", "max_turns=5"])
    assert result.exit_code == 0, result.output
    assert "nan" not in result.output
    assert "summary (among the 0 decided games)" in result.stdout
    for seat in range(4):
        assert re.search(rf"│ {seat} +│ random +│ 0 +│ - +│ - +│", result.stdout), result.stdout
    assert "3 games, 3 without a winner (turn cap); 5.0 turns per game" in result.stdout


def test_simulate_summary_counts_each_seats_wins_among_the_decided_games():
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--players", "3", "--games", "40", "--seed", "7",
                                           "-o", "max_turns=60"])
    assert result.exit_code == 0, result.output
    df = simulate(3, 40, ["greedy"] * 3, 7, options={"max_turns": 60})
    decided = int((df["winner_seat"] >= 0).sum())
    assert 0 < decided < 40  # some games capped: the rates are among the others, a fair share 1/3
    assert f"summary (among the {decided} decided games)" in result.stdout
    for seat in range(3):
        wins = int((df["winner_seat"] == seat).sum())
        low, high = wilson(wins, decided)
        row = rf"│ {seat} +│ greedy +│ {wins} +│ {wins / decided:.3f} +│ {low:.3f} - {high:.3f} +│"
        assert re.search(row, result.stdout), (row, result.stdout)
    assert (f"40 games, {40 - decided} without a winner (turn cap); {df['turns'].mean():.1f} turns per game"
            in result.stdout)


def test_sweep_resumes_refuses_another_study_and_reports_only_its_boards(tmp_path):
    runner = CliRunner()
    base = ["bremen", "sweep", "--games", "20", "--middles", "", "--road-links", "", "--house-links", "",
            "--out", str(tmp_path), "-o", "max_turns=300"]
    result = runner.invoke(main_app, [*base, "--roads", "16"])
    assert result.exit_code == 0, result.output
    runs = sorted((tmp_path / "runs").glob("*.parquet"))
    assert [p.stem for p in runs] == ["ring-r16-m16-l3-h1", "ring-r24-m16-l3-h1"]
    stamps = [p.stat().st_mtime_ns for p in runs]
    md = (tmp_path / "report.md").read_text()
    assert "board file named above" not in md and "holds for the 2 boards listed under Run only" in md
    # the boards under Run, one row each with its file, and their key numbers
    boards = md.split("**Boards**")[1].split("\n\n")[1].splitlines()
    assert boards[0].startswith("| board | road | middle |") and len(boards) == 4
    assert [row.split(" | ")[0] for row in boards[2:]] == ["| ring-r24-m16-l3-h1", "| ring-r16-m16-l3-h1"]
    assert "## Key numbers per board" in md
    # the same sweep again: its finished boards are kept, not played again
    result = runner.invoke(main_app, [*base, "--roads", "16"])
    assert result.exit_code == 0, result.output
    assert result.output.count("finished earlier (kept)") == 2
    assert [p.stat().st_mtime_ns for p in runs] == stamps
    # another study into the same folder is refused before anything is written
    result = runner.invoke(main_app, [*base, "--roads", "16", "--games", "10"])
    assert result.exit_code == 2 and "holds another run (games 20, not 10)" in result.output, result.output
    assert [p.stat().st_mtime_ns for p in runs] == stamps and all(_rows(p) == 20 for p in runs)
    # other boards, same study: the shared board is kept, the old one stays on disk but not in the report
    result = runner.invoke(main_app, [*base, "--roads", "20"])
    assert result.exit_code == 0, result.output
    assert "ring-r24-m16-l3-h1: 20 games, finished earlier (kept)" in result.output
    assert "also holds 1 board of earlier sweeps, not in this report (kept): ring-r16-m16-l3-h1" in result.output
    md = (tmp_path / "report.md").read_text()
    assert "ring-r20-m16-l3-h1" in md and "ring-r16" not in md
    assert (tmp_path / "runs" / "ring-r16-m16-l3-h1.parquet").exists()


def test_simulate_command_holds_one_chunk_of_records_at_a_time(tmp_path, monkeypatch):
    # Memory must not grow with the games: when a chunk is played, the records
    # of every chunk before the previous one are gone (with and without --out),
    # their memory too (pandas' copy-on-write lets a column subset share it).
    import gc
    import weakref

    real, chunks = C.A.simulate, []

    def owner(array):
        while isinstance(array.base, type(array)):
            array = array.base
        return array

    def watched(*args, **kwargs):
        gc.collect()
        assert all(ref() is None for pair in chunks[:-1] for ref in pair), "records of earlier chunks are held"
        df = real(*args, **kwargs)
        chunks.append((weakref.ref(df), weakref.ref(owner(df["winner_seat"].to_numpy()))))
        return df

    monkeypatch.setattr(C.A, "simulate", watched)
    for out in (None, tmp_path / "r.parquet"):
        chunks.clear()
        df = C.simulate_command(4, 40, POLICIES, 2, out, None, OPTIONS, chunk_size=10)
        assert len(chunks) == 4 and len(df) == 40


def test_simulate_out_says_what_it_wrote(tmp_path):
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--games", "12", "--out", str(out),
                                           "-o", "max_turns=300"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert f"wrote {out} (12 games)" in said
    # the playing time the run file keeps, and its games per second, as the race and etape summaries give them
    wall = read_metadata(out)["wall_seconds"]
    assert f"; {wall:.2f} s of play ({12 / wall:,.0f} games/s; compiling or loading the kernel not counted)" in said
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--games", "12", "-o", "max_turns=300"])
    assert "wrote" not in result.stdout


def test_out_of_range_options_and_ring_lengths_are_refused(tmp_path):
    runner = CliRunner()
    for option, message in (("max_turns=99999999999999999999", "max_turns: must be 1 to 100000, not 99999999999999999999"),
                            ("max_turns=4294967297", "max_turns: must be 1 to 100000, not 4294967297"),
                            ("max_turns=0", "max_turns: must be 1 to 100000, not 0"),
                            ("target=100000", "target: must be 1 to 100, not 100000")):
        result = runner.invoke(main_app, ["simulate", "bremen", "--games", "1", "--option", option])
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.stderr.split()) and "Traceback" not in result.output
    for flag in ("--roads", "--middles"):
        result = runner.invoke(main_app, ["bremen", "sweep", flag, "4000000", "--out", str(tmp_path / "sw")])
        assert result.exit_code == 2, result.output
        assert f"{flag} 4000000: a ring has at most 200 fields" in result.stderr
    assert not (tmp_path / "sw").exists()


def test_policy_parameters_out_of_range_are_refused_by_name():
    runner = CliRunner()
    for spec, message in (
            ("greedy:storm=abc", "policy 'greedy:storm=abc': storm must be a number -1000 to 1000, not 'abc'"),
            ("greedy:noise=nan", "noise must be a number 0 to 1000, not nan"),
            ("greedy:noise=-1", "noise must be a number 0 to 1000, not -1"),
            ("greedy:storm=1e400", "storm must be a number -1000 to 1000, not 1e400"),
            ("lookahead:playouts=2.5", "playouts must be a whole number 1 to 1000000, not 2.5"),
            ("lookahead:playouts=9300000000000000000", "not 9300000000000000000"),
            ("lookahead:horizon=-1", "horizon must be a whole number of turns 0 to 100000"),
            ("lookahead:confidence=inf", "confidence must be a number 0 to 100"),
            ("greedy:noise=1,noise=2", "policy 'greedy:noise=1,noise=2': noise is given twice")):
        result = runner.invoke(main_app, ["simulate", "bremen", "--games", "1", "--policy", spec])
        assert result.exit_code == 2, (spec, result.output)
        assert message in " ".join(result.stderr.split()), (spec, result.stderr)
    # values at the ends of their ranges are accepted
    assert C.A.parse_policy("lookahead:playouts=1,horizon=0,confidence=0,noise=0,storm=-1000")[2] == \
        "lookahead:storm=-1000,noise=0,playouts=1,horizon=0,confidence=0"


def test_policies_listing_gives_the_valid_values(capsys):
    C.policies_command()
    out = " ".join(capsys.readouterr().out.split())
    assert "noise: a number 0 to 1000" in out and "playouts: a whole number 1 to 1000000" in out
    assert "max_turns=2000 (1 to 100000)" in out and "target=7 (1 to 100)" in out
    # as given on the command line (harder=true), with the values docs/bremen.md's options table lists
    assert "harder=false (or true)" in out and "tie_rule=mover_first (or mover_last)" in out
    assert "one_die=either (or larger)" in out
    # each policy with the defaults docs/bremen.md gives, and the user's own
    assert "greedy │ storm=10, chase=4, climb=2, knock=1, own_home=1," in out
    assert "progress=0.5, build=0.5, leader=1, noise=0.01" in out
    assert "lookahead │ playouts=800, horizon=4, confidence=2 (+ greedy" in out
    assert "FILE.py:FUNCTION │ your own policy for the moves" in out


def test_an_option_given_twice_is_refused():
    # the last value would be played unseen, as a policy parameter given twice is refused
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--games", "1", "-o", "target=7", "-o", "target=8"])
    assert result.exit_code == 2
    assert "--option target is given twice ('7' and '8'); give it once" in " ".join(result.stderr.split())


def _said(result) -> str:
    return " ".join(result.stderr.split())


def test_validate_describes_a_board_and_refuses_a_bad_one(tmp_path):
    # There was no command to check a board file (`etappe decks validate` says "design: missing table").
    # Steps counted on the rules page's board: r00 r23 r22 r21 (3), m14 m13 m12 (6), i06 i07 (8), house (9).
    runner = CliRunner()
    path = tmp_path / "b.toml"
    path.write_text(ring_board(), encoding="utf-8-sig")  # a byte-order mark, as some editors write, is read through
    result = runner.invoke(main_app, ["bremen", "validate", str(path)])
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert out.startswith(f"{path}: a valid board, 'ring-r24-m16-i8-l301' (a reconstruction), sha256 ")
    assert "51 fields (4 start, 20 road, 24 forest, 2 bridge, 1 house), 62 links" in out  # 24+16+8 rings, 2 bridges
    assert "steps from each start field to the house (entering no other colour's start field): colour 0" in out
    assert "colour 0 (r00): 9 alone, 9 as a pyramid" in out and "colour 3 (r18): 9 alone, 9 as a pyramid" in out
    # one board whatever its line ends or mark: the hash is that of the text (a copy with CRLF line ends, as a
    # Windows checkout writes, was "a different run" and could not resume or join a --share)
    plain = tmp_path / "plain.toml"
    plain.write_text(ring_board(), encoding="utf-8")
    crlf = tmp_path / "crlf.toml"
    crlf.write_bytes(ring_board().replace("\n", "\r\n").encode("utf-8"))
    hashes = {load_board(p).hash for p in (path, plain, crlf)}
    assert hashes == {hashlib.sha256(ring_board().encode("utf-8")).hexdigest()[:16]}
    # the race games' check, given a board file, says which command checks it
    result = runner.invoke(main_app, ["decks", "validate", str(path)])
    assert result.exit_code == 2
    assert "design: missing table: this is a Bremen board file, not a deck design; `etappe bremen validate` " \
           "checks it" in _said(result)
    # without the direct links only the bridges lead into the forest, which a pyramid never enters;
    # alone: r00 .. r03 (3), b0 (4), m02 m01 m00 (7), i00 i01 (9), house (10)
    path.write_text(ring_board().replace('  ["r09", "m06"],\n', "").replace('  ["r21", "m14"],\n', ""))
    out = " ".join(runner.invoke(main_app, ["bremen", "validate", str(path)]).stdout.split())
    assert "colour 0 (r00): 10 alone, none as a pyramid (every way crosses a bridge)" in out
    path.write_text(ring_board().replace('r05 = "road"', 'r05 = "raod"'))
    result = runner.invoke(main_app, ["bremen", "validate", str(path)])
    assert result.exit_code == 2 and "field 'r05': unknown kind 'raod'" in _said(result)
    assert "Traceback" not in result.output


def test_board_errors_show_where_the_bad_name_is(tmp_path):
    runner = CliRunner()
    path = tmp_path / "b.toml"
    # a field left out of [fields]: the message showed the chain's first three names, which missed it
    path.write_text(ring_board().replace('m05 = "forest"\n', ""))
    result = runner.invoke(main_app, ["bremen", "validate", str(path)])
    assert result.exit_code == 2
    assert "field 'm05': link to unknown field: not in [fields] (chain [..., 'm04', 'm05', 'm06', ...])" in _said(result)
    # the road cut off from the forest: colour 0 (r00) walks r01 .. r05 and r23 .. r19, up to the start
    # fields of colours 1 (r06) and 3 (r18), which it may not enter
    text = ring_board()
    for link in ('["r03", "b0", "m02"]', '["r09", "m06"]', '["r15", "b2", "m10"]', '["r21", "m14"]'):
        text = text.replace(f"  {link},\n", "")
    path.write_text(text.replace('b0 = "bridge"\n', "").replace('b2 = "bridge"\n', ""))
    result = runner.invoke(main_app, ["bremen", "validate", str(path)])
    assert result.exit_code == 2
    assert ("field 'r00': house unreachable from the start field of colour 0: the walk from it ends at r06, r18, "
            "start field(s) of other colours, which animals never enter") in _said(result)


@pytest.mark.parametrize("stop_in_call, kept", [
    (1, "Nothing is kept: no board or chunk was finished yet; the same command starts afresh."),
    (2, "Kept: the finished chunks of the board it stopped in, in {parts}: the same command resumes from there.")])
def test_a_sweep_stopped_in_its_first_board_says_what_is_kept(tmp_path, monkeypatch, stop_in_call, kept):
    # 5 games in chunks of 3: stopped in the first chunk nothing is kept; in the second, the first chunk
    monkeypatch.setattr(C, "CHUNK", 3)
    real, calls = C.A.simulate, []

    def stopped(*a, **k):
        calls.append(1)
        if len(calls) == stop_in_call:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(C.A, "simulate", stopped)
    result = CliRunner().invoke(main_app, ["bremen", "sweep", "--games", "5", "--roads", "20", "--middles", "",
                                           "--road-links", "", "--house-links", "", "--out", str(tmp_path),
                                           "-o", "max_turns=300"])
    assert result.exit_code == 130
    assert "ring-r24-m16-l3-h1: 5 games" in result.output  # the board it plays, named as it starts
    parts = tmp_path / "runs" / "ring-r24-m16-l3-h1.parquet.parts"
    assert f"interrupted. {kept.format(parts=parts)}" in _said(result)


def test_an_interrupted_sweep_says_its_finished_boards_are_kept(tmp_path, monkeypatch):
    # it said "Nothing is kept: ... the same command starts afresh" while the boards before were kept
    runner = CliRunner()
    args = ["bremen", "sweep", "--games", "5", "--roads", "20", "--middles", "", "--road-links", "",
            "--house-links", "", "--out", str(tmp_path), "-o", "max_turns=300"]
    real, calls = C.A.simulate, []

    def stopped_at_the_second_board(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(C.A, "simulate", stopped_at_the_second_board)
    result = runner.invoke(main_app, args)
    assert result.exit_code == 130
    assert (f"interrupted. Kept: the finished boards (1 of 2) in {tmp_path / 'runs'}: the same command resumes "
            "from there.") in _said(result)
    monkeypatch.undo()
    result = runner.invoke(main_app, args)
    assert result.exit_code == 0 and "ring-r24-m16-l3-h1: 5 games, finished earlier (kept)" in result.output


def test_simulate_summary_names_each_seats_policy_and_rates_each_policy(tmp_path):
    # the race games' summary has a policy column and a table by policy; Bremen's had neither, even with two
    # policies. A policy on k seats wins at most one of them a game: rate wins / (k x decided games), and
    # Wilson's interval over the games, divided by k (as the report's table, docs/bremen.md)
    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(main_app, ["simulate", "bremen", "--games", "60", "--seed", "1",
                                           "--policy", "greedy,random,greedy,random", "--out", str(out)])
    assert result.exit_code == 0, result.output
    df = from_run_file(out)
    decided = int((df["winner_seat"] >= 0).sum())
    for name, seats in (("greedy", [0, 2]), ("random", [1, 3])):
        wins = int(df["winner_seat"].isin(seats).sum())
        low, high = wilson(wins, decided)
        row = rf"│ {name} +│ {seats[0]},{seats[1]} +│ {wins} +│ {wins / (2 * decided):.3f} +│ {low / 2:.3f} - {high / 2:.3f} │"
        assert re.search(row, result.stdout), (row, result.stdout)
    assert re.search(r"│ 1 +│ random +│", result.stdout)  # the seat table names the seat's policy
