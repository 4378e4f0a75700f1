"""The work behind `etappe report` and `etappe compare` (wired into the typer app in cli/main.py).

Both read records chunk by chunk into mergeable summaries, so memory stays
bounded whatever the number of games.
"""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..analysis.compare import PairedComparison
from ..analysis.race_summary import RaceSummarizer, RaceSummary
from ..analysis.runio import Checkpoint, iter_parquet, read_metadata
from ..reports.race_report import build_comparison_report, build_report


def summarize_run(run: Path, batch_rows: int = 200_000, progress=None) -> tuple[RaceSummary, dict]:
    """(summary, metadata) of a run file, read in chunks of `batch_rows` rows;
    `progress(rows)` is called after each chunk."""
    meta = read_metadata(run)
    acc = RaceSummarizer(meta)
    for chunk in iter_parquet(run, batch_rows=batch_rows):
        acc.add(chunk)
        if progress:
            progress(len(chunk))
    return acc.result(), meta


def report_command(run: Path, out: Path, batch_rows: int = 200_000) -> Path:
    """Write the balance report of a Parquet run into `out` (with a progress
    bar over the rows read); return report.html's path."""
    import pyarrow.parquet as pq

    from .common import progress_bar

    rows = pq.ParquetFile(run).metadata.num_rows
    with progress_bar(rows, "reading records", resumable=False) as bar:
        summary, meta = summarize_run(Path(run), batch_rows, bar)
        return build_report(summary, meta, on_section=bar.stage).write(out)


def _chunks(source) -> Iterable[pd.DataFrame]:
    if isinstance(source, pd.DataFrame):
        return iter([source])
    return iter(source)


def _first_with_meta(it, meta):
    """Peek the first chunk when the metadata must come from its attrs."""
    if meta is not None:
        return it, meta
    first = next(it, None)
    if first is None:
        raise ValueError("no records and no metadata")
    return itertools.chain([first], it), dict(first.attrs)


def compare_summaries(frames_or_chunks_a, meta_a: dict | None, frames_or_chunks_b, meta_b: dict | None):
    """Summaries of both runs and their paired comparison, consuming the chunks in lockstep.

    Each argument is a DataFrame or an iterable of DataFrame chunks (cut
    anywhere); metadata defaults to the first chunk's ``attrs``. Returns
    (summary_a, meta_a, summary_b, meta_b, comparison).
    """
    it_a, meta_a = _first_with_meta(_chunks(frames_or_chunks_a), meta_a)
    it_b, meta_b = _first_with_meta(_chunks(frames_or_chunks_b), meta_b)
    comp = PairedComparison()
    acc_a = RaceSummarizer(meta_a, on_games=comp.add_a)
    acc_b = RaceSummarizer(meta_b, on_games=comp.add_b)
    for chunk_a, chunk_b in itertools.zip_longest(it_a, it_b):
        if chunk_a is not None:
            acc_a.add(chunk_a)
        if chunk_b is not None:
            acc_b.add(chunk_b)
    return acc_a.result(), meta_a, acc_b.result(), meta_b, comp


def compare_runs(frames_or_chunks_a, meta_a: dict | None, frames_or_chunks_b, meta_b: dict | None, out: Path) -> Path:
    """Write the side-by-side report of two runs on the same seeds into `out`; return report.html's path.

    Game i of run A is paired with game i of run B (common random numbers).
    """
    sa, ma, sb, mb, comp = compare_summaries(frames_or_chunks_a, meta_a, frames_or_chunks_b, meta_b)
    return build_comparison_report(sa, ma, sb, mb, comp).write(out)


def compare_designs(deck_a, deck_b, out: Path, players: int = 2, games: int = 10_000, policies=("greedy",),
                    seed: int = 0, options_a: dict | None = None, options_b: dict | None = None,
                    seating: str = "fixed", chunk_size: int = 50_000, progress=None, on_section=None) -> Path:
    """Play both designs (or one design under two option sets) on the same seeds, chunk
    by chunk in lockstep, and write the comparison report into `out`; return report.html's path.

    `progress(side, games_done)` (side "a" or "b") is called after each chunk,
    `on_section(title)` as each section of the report is begun.
    Only the summaries and the per-game metrics of one chunk pair are in memory at a time.
    After every chunk pair the summaries are saved atomically in `out`, so an
    interrupted comparison run again with the same arguments resumes there.
    """
    import time

    from ..analysis.race import RaceRun

    runs = {"a": RaceRun(deck_a, players, list(policies), seed, options_a, seating),
            "b": RaceRun(deck_b, players, list(policies), seed, options_b, seating)}
    metas = {k: r.metadata(games) for k, r in runs.items()}
    identity = {k: {f: m[f] for f in ("design_hash", "players", "policies", "seating", "seed", "games", "version",
                                      "options")} for k, m in metas.items()} | {"chunk_size": chunk_size}
    if identity["a"] == identity["b"]:
        raise ValueError(f"A and B are the same design ({metas['a']['design']}, hash {metas['a']['design_hash']}) under "
                         "the same rule options: on the same seeds every paired difference would be 0; give another "
                         "design or --option-b")
    checkpoint = Checkpoint(Path(out) / ".compare-checkpoint.pkl", identity)
    state = checkpoint.load() or {"chunks_done": 0, "summaries": {"a": None, "b": None},
                                  "comparison": PairedComparison(), "clock": {"a": 0.0, "b": 0.0}}
    comp = state["comparison"]
    accs = {"a": RaceSummarizer(metas["a"], on_games=comp.add_a), "b": RaceSummarizer(metas["b"], on_games=comp.add_b)}
    for key, acc in accs.items():
        acc.summary = state["summaries"][key]
    if state["chunks_done"] * chunk_size < games:
        for run in runs.values():
            run.load_kernels()  # the compile is not playing time
        if progress:
            progress("a", state["chunks_done"] * chunk_size)  # the kernels are ready: the bar stops saying so
    for index, first in enumerate(range(0, games, chunk_size)):
        count = min(chunk_size, games - first)
        if index >= state["chunks_done"]:
            for key, acc in accs.items():
                started = time.perf_counter()
                frame = runs[key].play(first, count)
                state["clock"][key] += time.perf_counter() - started
                acc.add(frame)
            state["chunks_done"] = index + 1
            state["summaries"] = {key: acc.summary for key, acc in accs.items()}
            checkpoint.save(state)
        if progress:
            for key in accs:
                progress(key, first + count)
    ma, mb = metas["a"], metas["b"]
    ma["wall_seconds"], mb["wall_seconds"] = round(state["clock"]["a"], 3), round(state["clock"]["b"], 3)
    path = build_comparison_report(accs["a"].result(), ma, accs["b"].result(), mb, comp,
                                   on_section=on_section).write(out)
    checkpoint.remove()
    return path
