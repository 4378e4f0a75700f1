"""Long work: bounded memory when reading run files, and what Ctrl-C says and leaves.

Interruptions are faked (KeyboardInterrupt from a monkeypatched step), as in
test_cli_errors.py and test_sweep.py; every run here is tiny.
"""
from __future__ import annotations

import contextlib
import importlib
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from etappe.analysis import runio
from etappe.cli import race_cmds, tournament_cmds
from etappe.cli.main import app
from interrupts import interrupt_play_after

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def said(result) -> str:
    return " ".join(result.stderr.split())


def test_run_files_are_read_one_row_group_at_a_time(tmp_path):
    # iter_batches over the whole file read ahead: 2.8 GB of memory for a 2-million-game run of 530 MB
    path = tmp_path / "run.parquet"
    frames = [pd.DataFrame({"game": range(start, start + 7), "x": range(7)}) for start in (0, 7, 14)]
    with pq.ParquetWriter(path, pa.Table.from_pandas(frames[0], preserve_index=False).schema) as writer:
        for frame in frames:
            writer.write_table(pa.Table.from_pandas(frame, preserve_index=False))
    chunks = list(runio.iter_parquet(path, batch_rows=3))
    assert [len(c) for c in chunks] == [3, 3, 1] * 3  # no chunk spans two row groups
    assert pd.concat(chunks, ignore_index=True).equals(pd.concat(frames, ignore_index=True))


def test_small_row_groups_are_read_together_up_to_the_batch_size(tmp_path):
    # a run of small saved chunks read one at a time costs its summary 40 % more time in per-chunk work
    path = tmp_path / "run.parquet"
    sizes = [2, 2, 2, 5, 1, 3]
    starts = np.cumsum([0] + sizes[:-1])
    frames = [pd.DataFrame({"game": range(start, start + size)}) for start, size in zip(starts, sizes)]
    with pq.ParquetWriter(path, pa.Table.from_pandas(frames[0], preserve_index=False).schema) as writer:
        for frame in frames:
            writer.write_table(pa.Table.from_pandas(frame, preserve_index=False))
    chunks = list(runio.iter_parquet(path, batch_rows=4))
    # 2+2 fill a batch exactly; the third 2 alone (the 5 would pass 4); the 5 in slices of 4 and 1; 1+3 exactly
    assert [len(c) for c in chunks] == [4, 2, 4, 1, 4]
    assert pd.concat(chunks, ignore_index=True).equals(pd.concat(frames, ignore_index=True))


def test_an_interrupted_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    real = type(target).write_bytes

    def half_then_interrupted(self, data):
        real(self, data[:3])
        raise KeyboardInterrupt

    monkeypatch.setattr(type(target), "write_bytes", half_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        runio.write_atomic(target, "<html>a whole page</html>")
    assert list(tmp_path.iterdir()) == []


def test_simulate_without_out_says_nothing_is_kept(monkeypatch):
    interrupt_play_after(monkeypatch, 1)
    result = run("simulate", "stapop", "--games", 40, "--chunk-size", 20)
    assert result.exit_code == 130
    assert "interrupted. Nothing is kept: without --out no records are saved." in said(result)
    assert "resumes" not in result.stderr and "Traceback" not in result.output


def test_simulate_with_out_names_the_kept_chunks_and_resumes(tmp_path, monkeypatch):
    out = tmp_path / "run.parquet"
    args = ("simulate", "stapop", "--games", 40, "--chunk-size", 20, "--seed", 5, "--out", out)
    interrupt_play_after(monkeypatch, 0)  # in the first chunk: nothing saved yet
    result = run(*args)
    assert result.exit_code == 130 and "interrupted. Nothing is kept: no chunk was finished yet" in said(result)
    interrupt_play_after(monkeypatch, 1)  # in the second chunk: the first is saved
    result = run(*args)
    assert result.exit_code == 130
    assert f"interrupted. The finished chunks are kept in {out}.parts: the same command resumes" in said(result)
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))
    monkeypatch.undo()
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert "20 of 40 games already played" in " ".join(result.stderr.split())


def test_a_report_interrupted_while_reading_writes_nothing_and_says_so(tmp_path, monkeypatch):
    out = tmp_path / "run.parquet"
    assert run("simulate", "stapop", "--games", 30, "--out", out).exit_code == 0
    from etappe.cli import report_cmds

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
        yield  # a generator, as iter_parquet

    monkeypatch.setattr(report_cmds, "iter_parquet", interrupted)
    result = run("report", out, "--out", tmp_path / "rep")
    assert result.exit_code == 130
    assert f"interrupted. The report in {tmp_path / 'rep'} is not (completely) written" in said(result)
    assert not (tmp_path / "rep").exists()


def test_a_tournament_without_out_says_nothing_is_kept(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament_cmds, "play_tournament", interrupted)
    result = run("tournament", "stapop", "--policies", "greedy,random", "--games", 10)
    assert result.exit_code == 130
    assert "Nothing is kept: without --out a tournament saves nothing (with --out it resumes)." in said(result)


def test_ctrl_c_outside_a_bar_still_says_one_line(monkeypatch, capsys):
    # typer turns Ctrl-C into exit 130 without a word; where no bar said what was kept, main() does
    from etappe.cli import main as cli_main

    def interrupted(deck):
        raise KeyboardInterrupt

    monkeypatch.setattr(race_cmds, "policies_command", interrupted)
    monkeypatch.setattr(sys, "argv", ["etappe", "policies"])
    with pytest.raises(SystemExit) as exit_:
        cli_main.main()
    assert exit_.value.code == 130
    err = " ".join(capsys.readouterr().err.split())
    assert err == "interrupted. Every file it wrote is complete: the same command goes on from them."


def test_ctrl_c_while_the_command_starts_is_one_line_not_a_traceback(capsys):
    from etappe import cli

    with pytest.raises(SystemExit) as exit_:
        cli._interrupted_while_starting(2, None)
    assert exit_.value.code == 130
    assert capsys.readouterr().err == "interrupted. Nothing was done: the command was still starting.\n"


def record_bars(monkeypatch, module) -> list:
    """Make `module`'s progress bars record (what, total, completed) as each ends."""
    bars = []
    real = module.progress_bar

    @contextlib.contextmanager
    def recording(total, what, resumable=True, compiles=False):
        with real(total, what, resumable, compiles) as bar:
            yield bar
        bars.append((what, total, bar._progress.tasks[0].completed))

    monkeypatch.setattr(module, "progress_bar", recording)
    return bars


def test_bars_name_the_default_player_count_and_the_reading_of_a_finished_run(tmp_path, monkeypatch):
    bars = record_bars(monkeypatch, race_cmds)
    out = tmp_path / "run.parquet"
    assert run("simulate", "stapop", "--games", 20, "--out", out).exit_code == 0
    # "stapop x4", not "stapop xNone", without --players; the bar counted every game played
    assert bars[0] == ("stapop x4", 20, 20)
    bars.clear()
    result = run("simulate", "stapop", "--games", 20, "--out", out)
    assert result.exit_code == 0 and "already holds this run" in result.stderr
    assert [what for what, _, _ in bars] == [f"reading {out}"]  # millions of games take seconds to read back


def test_the_compare_bar_names_both_designs_and_counts_the_games_of_both(tmp_path, monkeypatch):
    from etappe.cli import main

    bars = record_bars(monkeypatch, main)
    assert run("compare", "stapop", "millebornes", "--games", 30, "--chunk-size", 10,
               "--out", tmp_path / "cmp").exit_code == 0
    assert bars == [("stapop vs millebornes", 60, 60)]


@pytest.mark.parametrize("args, expected", [
    (("sweep", "stapop", "--set", "cards.go.count=12,16", "--players", 2), ("stapop cards.go.count x2", 60, 60)),
    (("compare", "bremen", "--option-b", "harder=true", "--players", 2), ("bremen A and B", 20, 20))])
def test_sweep_and_variant_bars_count_every_game_they_play(args, expected, tmp_path, monkeypatch):
    # a sweep plays the design as written and each value (3 runs of 20 games); a variant comparison
    # counts its games once for both variants; in chunks of 5, each chunk's games once
    from etappe.cli import common

    bars = record_bars(monkeypatch, common)
    result = run(*args, "--games", 20, "--chunk-size", 5, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert bars == [expected]


@pytest.mark.parametrize("game, joins", [("etape", 2), ("bremen", 1)])
def test_the_bars_of_etape_and_bremen_runs_count_their_games_and_the_chunks_they_join(game, joins, tmp_path,
                                                                                       monkeypatch):
    # 12 games in chunks of 5: 3 chunks; Tape l'étape joins each chunk twice (its races and its stages)
    module = importlib.import_module(f"etappe.cli.{game}")
    bars = record_bars(monkeypatch, module)
    out = tmp_path / "run.parquet"
    result = run("simulate", game, "--games", 12, "--chunk-size", 5, "--out", out)
    assert result.exit_code == 0, result.output
    assert bars == [(f"{game} x4", 12, 12), (f"joining the chunks into {out}", 3 * joins, 3 * joins)]


def test_the_tournament_bar_counts_the_games_of_every_pairing(tmp_path, monkeypatch):
    bars = record_bars(monkeypatch, tournament_cmds)
    result = run("tournament", "stapop", "--policies", "greedy,random,aggressive", "--players", 2, "--games", 10,
                 "--bootstrap", 0)
    assert result.exit_code == 0, result.output
    assert bars[0] == ("tournament stapop x2, 3 pairings", 30, 30)  # 3 pairings of 10 games


def test_a_quick_step_shows_no_bar_and_a_slow_one_ends_full(monkeypatch):
    from etappe.cli import common

    with common.progress_bar(1, "ratings") as quick:
        quick.done_quietly()
    assert not quick._shown
    monkeypatch.setattr(common, "SHOW_BAR_AFTER", 0.0)
    with common.progress_bar(1, "ratings") as slow:
        import time

        time.sleep(0.05)  # the timer shows the bar
        assert slow._progress.live.is_started  # drawn, not only marked as shown
        slow.done_quietly()
        assert slow._shown and slow._progress.tasks[0].completed == 1


@pytest.mark.parametrize("game, module, name", [("bremen", "etappe.cli.bremen", "A"),
                                                ("etape", "etappe.cli.etape", "E")])
def test_bremen_and_etape_name_the_kept_chunks(game, module, name, tmp_path, monkeypatch):
    import importlib

    analysis = getattr(importlib.import_module(module), name)
    real, seen = analysis.simulate, {"n": 0}

    def simulate(*args, **kwargs):
        seen["n"] += 1
        if seen["n"] > 1:  # in the second chunk
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(analysis, "simulate", simulate)
    out = tmp_path / "run.parquet"
    args = ("simulate", game, "--games", 8, "--chunk-size", 4, "--seed", 1, "--out", out)
    result = run(*args)
    assert result.exit_code == 130 and "Traceback" not in result.output
    parts = f"{out}.parts and {tmp_path / 'run.stages.parquet'}.parts" if game == "etape" else f"{out}.parts"
    assert f"interrupted. The finished chunks are kept in {parts}: the same command resumes" in said(result)
    monkeypatch.undo()
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert "4 of 8" in " ".join(result.stderr.split()) and out.exists()


@pytest.mark.parametrize("game, policy, lookahead_chunk", [
    ("stapop", "greedy,lookahead:playouts=1", 500),
    ("etape", "heuristic,lookahead:playouts=1", 200),
    ("bremen", "greedy,lookahead:playouts=1", 20),
])
def test_a_run_with_a_lookahead_seat_is_saved_in_small_chunks(game, policy, lookahead_chunk, tmp_path):
    # A look-ahead game is hundreds of times slower: in the fast policies' chunks (50,000 race games,
    # 2,000 races, 20,000 Bremen games) an interruption lost up to hours of play, with no step of
    # the bar. Share 1 of 2 plays the first chunk only; it holds the look-ahead chunk's games.
    out = tmp_path / "run.parquet"
    result = run("simulate", game, "--policy", policy, "--games", lookahead_chunk + 1, "--share", "1/2",
                 "--out", out)
    assert result.exit_code == 0, result.output
    chunks = sorted((tmp_path / "run.parquet.parts").glob("chunk-*.parquet"))
    assert [pq.read_metadata(c).num_rows for c in chunks] == [lookahead_chunk]  # one row per game (per race)


@pytest.mark.parametrize("game, user_chunk", [("stapop", 5_000), ("bremen", 2_000)])
def test_a_run_with_a_policy_of_your_own_is_saved_in_chunks_of_a_tenth(game, user_chunk, tmp_path):
    # docs/policies.md: nobody knows its speed beforehand, so a slow one still moves the bar and answers
    # Ctrl-C within a tenth of the usual chunk. Share 1 of 2 plays the first chunk only.
    path = tmp_path / "first.py"
    arguments = "state, card_table, rules, seat, moves, n_moves, params, key" if game == "stapop" else \
        "state, dist, moves, n_moves, seat, params, key"
    path.write_text(f"def first({arguments}):\n    return 0\n")
    out = tmp_path / "run.parquet"
    result = run("simulate", game, "--policy", f"{path}:first,greedy", "--games", user_chunk + 1, "--share", "1/2",
                 "--out", out)
    assert result.exit_code == 0, result.output
    chunks = sorted((tmp_path / "run.parquet.parts").glob("chunk-*.parquet"))
    assert [pq.read_metadata(c).num_rows for c in chunks] == [user_chunk]


@pytest.mark.parametrize("game", ["stapop", "etape", "bremen"])
def test_a_stop_after_the_run_file_is_written_leaves_chunks_the_next_command_removes(game, tmp_path, monkeypatch):
    # Stopped between renaming the joined file into place and removing the chunks folder: the file holds the
    # whole run, so Ctrl-C says so, and the same command plays nothing and removes the folder left behind.
    def stop(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(runio.ChunkedRun, "drop", stop)
    out = tmp_path / "run.parquet"
    args = ("simulate", game, "--games", 8, "--chunk-size", 4, "--seed", 1, "--out", out)
    result = run(*args)
    files = [out, tmp_path / "run.stages.parquet"] if game == "etape" else [out]
    assert result.exit_code == 130 and all(f.exists() for f in files)
    assert f"interrupted. {' and '.join(map(str, files))} hold the whole run; the same command removes the chunks " \
           "folders left beside them." in said(result)
    assert all(f.with_name(f.name + ".parts").exists() for f in files)
    monkeypatch.undo()
    result = run(*args)
    assert result.exit_code == 0 and "already holds this run: nothing to play" in " ".join(result.stderr.split())
    assert not any(f.with_name(f.name + ".parts").exists() for f in files)


def test_a_torn_chunk_is_named_with_what_to_do(tmp_path, monkeypatch):
    # a power cut while a chunk was written before chunks were flushed to disk, or a chunk damaged since
    out = tmp_path / "run.parquet"
    args = ("simulate", "stapop", "--games", 40, "--chunk-size", 20, "--seed", 5, "--out", out)
    interrupt_play_after(monkeypatch, 1)
    assert run(*args).exit_code == 130
    monkeypatch.undo()
    chunk = out.with_name(out.name + ".parts") / "chunk-000000.parquet"
    chunk.write_bytes(b"")
    result = run(*args)
    assert result.exit_code == 2
    assert f"{chunk}: not a Parquet run file: remove it, and the same command plays its games again" in said(result)
    chunk.unlink()
    result = run(*args)
    assert result.exit_code == 0 and out.exists()
