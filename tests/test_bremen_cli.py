"""Bremer Stadtmusikanten CLI and reports: run files, resumable chunks, report
contents, the board sweep."""
import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from etappe.analysis.bremen import from_run_file, simulate  # noqa: E402
from etappe.analysis.runio import read_metadata  # noqa: E402
from etappe.cli import bremen as C  # noqa: E402
from etappe.cli.main import app as main_app  # noqa: E402
from etappe.kernels import bremen as K  # noqa: E402
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
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    same = simulate(4, 30, POLICIES, 5, options=OPTIONS)
    pd.testing.assert_frame_equal(same, df, check_dtype=False)


def test_an_interrupted_run_resumes_from_its_chunks(tmp_path):
    out = tmp_path / "run.parquet"
    whole = C.simulate_command(4, 25, POLICIES, 2, None, None, OPTIONS, chunk_size=10)
    first = C.simulate_command(4, 10, POLICIES, 2, tmp_path / "other.parquet", None, OPTIONS, chunk_size=10)
    # fake an interruption: chunk 0 of the 25-game run is already on disk
    run = C.ChunkedRun(out, {"game": "bremen", "board_hash": first.attrs["board_hash"], "players": 4,
                             "games": 25, "policies": POLICIES, "options": first.attrs["options"], "seed": 2,
                             "chunk": 10, "version": first.attrs["version"], "record_columns": K.N_REC})
    run.save(0, first, seconds=1000.0)
    resumed = C.simulate_command(4, 25, POLICIES, 2, out, None, OPTIONS, chunk_size=10)
    pd.testing.assert_frame_equal(resumed, whole, check_dtype=False)
    assert resumed.attrs["wall_s"] >= 1000.0  # the earlier session's playing time is counted
    assert not (tmp_path / "run.parquet.parts").exists()


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
                   "these policies only: greedy, random"):
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
    assert "12 of 12 games hit the turn cap of 20 turns" in md
    assert "Rules that never fired" in md
    assert "Every seat plays the same policy, so there is no skill matrix" in md
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
