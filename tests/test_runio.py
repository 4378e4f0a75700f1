"""Run files (analysis/runio.py): what their metadata says of the code and
the design that made them, and writes that leave a whole file or none.

(Resuming, chunks and refusals of another run are in test_long_runs.py and
test_cli_errors.py.)"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq
import pytest

import etappe.kernels
from etappe.analysis import runio


def test_a_design_hash_is_the_start_of_the_files_sha256():
    # SHA-256 of "abc" (FIPS 180-2, appendix B.1): ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    assert runio.file_hash("abc") == runio.file_hash(b"abc") == "ba7816bf8f01cfea"


def test_the_version_changes_with_any_kernel_or_analysis_source(tmp_path, monkeypatch):
    kernels, analysis = tmp_path / "kernels", tmp_path / "analysis"
    for folder in (kernels, analysis):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (kernels / "rules.py").write_text("TRIP = 1000\n")
    (analysis / "summary.py").write_text("def rate(): ...\n")
    monkeypatch.setattr(etappe.kernels, "__file__", str(kernels / "__init__.py"))
    monkeypatch.setattr(runio, "__file__", str(analysis / "runio.py"))
    version = runio.package_version.__wrapped__  # uncached: the sources change within the test

    first = version()
    assert re.fullmatch(r"[^+]+\+[0-9a-f]{12}", first), first
    (tmp_path / "notes.txt").write_text("not a source")
    (kernels / "README.md").write_text("not a source either")
    assert version() == first
    (kernels / "rules.py").write_text("TRIP = 700\n")
    changed = version()
    assert changed != first
    (analysis / "summary.py").write_text("def rate(): return 1\n")
    third = version()
    assert third not in (first, changed)
    # the same code under another file name is other code (a module renamed is imported by another name)
    (analysis / "summary.py").rename(analysis / "summaries.py")
    assert version() not in (first, changed, third)


def test_writing_a_run_file_leaves_the_callers_frame_as_it_was(tmp_path):
    frame = pd.DataFrame({"game": [0, 1], "turns": [31, 44]})
    frame.attrs = {"seed": 7}
    target = str(tmp_path / "run.parquet")  # a path as a string, as a notebook gives it
    runio.write_parquet(frame, target, {"seed": 8, "games": 2})
    assert frame.attrs == {"seed": 7}
    records, meta = runio.read_parquet(target)
    assert meta == {"seed": 8, "games": 2}
    assert records.equals(frame) and records.attrs == meta


def test_a_file_is_on_disk_before_it_takes_its_name(tmp_path, monkeypatch):
    # after a power cut the final name holds the old file or the whole new one, never a torn one
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.path.getsize(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd")
                       else None))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", os.path.basename(src), os.path.basename(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(runio.os, "fsync", fsync)
    monkeypatch.setattr(runio.os, "replace", replace)
    runio.write_atomic(tmp_path / "report.html", "<html>a whole page</html>")
    assert [e[0] for e in events] == ["fsync", "replace"]
    assert events[0][1] in (None, len("<html>a whole page</html>"))
    # the temporary file is this process's own: two commands writing one file never share one
    mine = f"{socket.gethostname()}.{os.getpid()}.tmp"
    assert events[1][1:] == (f"report.html.{mine}", "report.html")
    events.clear()
    runio.write_parquet(pd.DataFrame({"x": [1, 2]}), tmp_path / "run.parquet", {"seed": 1})
    assert [e[0] for e in events] == ["fsync", "replace"] and events[1][1:] == (f"run.parquet.{mine}", "run.parquet")
    assert pq.read_table(tmp_path / "run.parquet").num_rows == 2
    assert sorted(os.listdir(tmp_path)) == ["report.html", "run.parquet"]


def test_a_checkpoint_makes_its_folder_and_reads_back_its_state(tmp_path):
    saved = runio.Checkpoint(tmp_path / "tour" / ".checkpoint.pkl", {"seed": 1})
    saved.save({"games_done": 40})
    assert saved.load() == {"games_done": 40}
    assert os.listdir(tmp_path / "tour") == [".checkpoint.pkl"]
    saved.remove()
    assert saved.load() is None


def test_ctrl_c_while_the_bytes_go_to_disk_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch):
    # Syncing to disk is the slow part of a small write: Ctrl-C (or a frozen run's SIGINT) comes there most
    runio.write_atomic(tmp_path / "report.html", "old page")
    runio.write_parquet(pd.DataFrame({"x": [1]}), tmp_path / "run.parquet", {"seed": 1})
    runio.Checkpoint(tmp_path / ".checkpoint.pkl", {"seed": 1}).save({"games_done": 1})

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(runio.os, "fsync", interrupted)
    writes = [lambda: runio.write_atomic(tmp_path / "report.html", "new page"),
              lambda: runio.write_parquet(pd.DataFrame({"x": [2]}), tmp_path / "run.parquet", {"seed": 1}),
              lambda: runio.Checkpoint(tmp_path / ".checkpoint.pkl", {"seed": 1}).save({"games_done": 2}),
              lambda: runio.ChunkedRun(tmp_path / "next.parquet", {"seed": 2})]
    for write in writes:
        with pytest.raises(KeyboardInterrupt):
            write()
    monkeypatch.undo()
    # Ctrl-C before the temporary file is made: the interruption itself comes out, not a missing file
    monkeypatch.setattr(runio.pq, "write_table", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runio.write_parquet(pd.DataFrame({"x": [3]}), tmp_path / "run.parquet", {"seed": 1})
    monkeypatch.undo()
    assert (tmp_path / "report.html").read_text() == "old page"
    assert runio.read_parquet(tmp_path / "run.parquet")[0]["x"].tolist() == [1]
    assert runio.Checkpoint(tmp_path / ".checkpoint.pkl", {"seed": 1}).load() == {"games_done": 1}
    assert sorted(os.listdir(tmp_path)) == [".checkpoint.pkl", "next.parquet.parts", "report.html", "run.parquet"]
    assert os.listdir(tmp_path / "next.parquet.parts") == []  # the chunks folder, not stamped yet


def test_chunks_are_joined_in_order_into_the_run_file_one_progress_step_each(tmp_path):
    out = tmp_path / "run.parquet"
    parts = runio.ChunkedRun(out, {"seed": 1}, chunk_size=2)
    for index in (2, 0, 1):  # saved in any order, as threads or machines finish them
        parts.save(index, pd.DataFrame({"game": [2 * index, 2 * index + 1]}), seconds=0.5)
    steps = []
    assert parts.join(3, {"seed": 1, "games": 6}, progress=steps.append) == out
    assert steps == [1, 1, 1]
    records, meta = runio.read_parquet(out)
    assert records["game"].tolist() == [0, 1, 2, 3, 4, 5] and meta == {"seed": 1, "games": 6}
    assert os.listdir(tmp_path) == ["run.parquet"]


def test_chunks_are_not_started_beside_a_finished_run_of_other_games(tmp_path):
    out = tmp_path / "run.parquet"
    runio.write_parquet(pd.DataFrame({"game": [0]}), out, {"seed": 1, "games": 1})
    with pytest.raises(ValueError) as refused:
        runio.ChunkedRun(out, {"seed": 2, "games": 1})
    assert str(refused.value) == f"{out} holds another run (seed 1, not 2); remove it or write to another --out"
    assert os.listdir(tmp_path) == ["run.parquet"]


def test_a_chunk_another_run_put_in_place_since_the_start_is_refused_at_the_join(tmp_path):
    # An audit started two runs of other seeds at once on one --out: the file said seed 1 and held seed 2's
    # first 50,000 games. Each chunk's identity is read again as it is joined.
    out = tmp_path / "run.parquet"
    mine = runio.ChunkedRun(out, {"seed": 1}, chunk_size=2)
    other = runio.ChunkedRun(out, {"seed": 2}, chunk_size=2)  # started at the same moment: no chunk to see yet
    mine.save(0, pd.DataFrame({"game": [0, 1]}))
    other.save(1, pd.DataFrame({"game": [2, 3]}))
    with pytest.raises(ValueError) as refused:
        mine.join(2, {"seed": 1, "games": 4})
    assert str(refused.value) == (f"{out}.parts/chunk-000001.parquet is a chunk of another run (seed 2, not 1); "
                                  "remove it or write to another --out")
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))


def test_a_killed_process_temporary_file_is_removed_when_the_run_starts_again(tmp_path):
    # SIGKILL while the run file was joined left its temporary file (20 MB in an audit; gigabytes in a long run)
    out = tmp_path / "run.parquet"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    left = tmp_path / f"run.parquet.{host}.{int(dead.stdout)}.tmp"
    alive = tmp_path / f"run.parquet.{host}.{os.getpid()}.tmp"  # a process still writing it
    other_host = tmp_path / f"run.parquet.{host}x.{int(dead.stdout)}.tmp"  # another machine's, on a shared disk
    for path in (left, alive, other_host):
        path.write_bytes(b"partial")
    runio.ChunkedRun(out, {"seed": 1})
    assert not left.exists() and alive.exists() and other_host.exists()


def test_records_read_back_carry_the_run_s_metadata_whatever_pyarrow_keeps(tmp_path):
    # pyarrow before 22 does not read a frame's attrs back from pandas' own metadata, and the Bremen
    # report read the player count from a chunk's attrs (KeyError: 'players'): the readers put the
    # file's etappe metadata there. A file as such a pyarrow writes it: no pandas metadata at all.
    from etappe.analysis.runio import iter_parquet, read_parquet

    frame, meta = pd.DataFrame({"game": range(10)}), {"game": "bremen", "players": 3}
    runio.write_parquet(frame, tmp_path / "run.parquet", meta)
    table = pq.read_table(tmp_path / "run.parquet")
    pq.write_table(table.replace_schema_metadata({b"etappe": table.schema.metadata[b"etappe"]}), tmp_path / "old.parquet")
    assert pq.read_table(tmp_path / "old.parquet").to_pandas().attrs == {}
    assert [chunk.attrs for chunk in iter_parquet(tmp_path / "old.parquet", batch_rows=4)] == [meta] * 3
    assert read_parquet(tmp_path / "old.parquet")[0].attrs == meta
