"""Tape l'étape commands, as plain functions the typer app wires up.

Files: the races go to OUT (Parquet), the stages beside it as
`<OUT stem>.stages.parquet`; both carry the run's identity (game, seed,
players, policies, options, version, wall time) in their metadata. A run is
played in chunks saved as they finish, so an interrupted command run again
resumes where it stopped (analysis/runio.py's ChunkedRun).
"""
from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from etappe.analysis import etape as E
from etappe.analysis.runio import ChunkedRun, package_version, read_parquet

from .common import progress_bar

CHUNK = 2_000        # races per saved chunk: a few seconds of play, so an interruption loses little


def stages_path(out: Path) -> Path:
    out = Path(out)
    stem = out.name[: -len(".parquet")] if out.name.endswith(".parquet") else out.name
    return out.with_name(stem + ".stages.parquet")


def simulate_command(players: int, races: int, policies: list[str], seed: int,
                     out: Path | None, options: dict, chunk_size: int = CHUNK) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`etappe simulate etape`: play `races` races and return (races_df, stages_df).

    policies: one spec per seat slot or one for all (see docs/etape.md), e.g.
    ["heuristic", "random", "blocker:block=5", "high"]; options: rule options
    by name (unknown names are refused). With `out`, the records are written
    to `out` and `stages_path(out)`, `chunk_size` races at a time."""
    E.check_players(players)
    full = E.resolve_options(options)
    policies = list(policies or ["heuristic"])
    if len(policies) == 1:
        policies = policies * players
    canonical = [E.parse_policy(p)[2] for p in policies]
    identity = {"game": E.GAME, "players": players, "races": races, "seed": seed,
                "policies": canonical, "options": full, "chunk": chunk_size, "version": package_version()}
    wall = 0.0  # playing time of every chunk, those of an interrupted earlier session included
    race_parts, stage_parts = [], []
    runs = None
    if out is not None:
        runs = (ChunkedRun(out, identity), ChunkedRun(stages_path(out), identity))
    n_chunks = max(1, -(-races // chunk_size))
    with progress_bar(races, f"etape x{players}") as advance:
        for index in range(n_chunks):
            lo, hi = index * chunk_size, min(races, (index + 1) * chunk_size)
            if runs and runs[0].done(index) and runs[1].done(index):
                r, s = runs[0].load(index), runs[1].load(index)
                wall += runs[0].seconds(index)
            else:
                started = time.perf_counter()
                r, s = E.simulate(players, hi - lo, policies, seed, full, first_race=lo)
                took = time.perf_counter() - started
                wall += took
                if runs:
                    runs[1].save(index, s, took)
                    runs[0].save(index, r, took)
            race_parts.append(r)
            stage_parts.append(s)
            advance(hi - lo)
    races_df = pd.concat(race_parts, ignore_index=True)
    stages_df = pd.concat(stage_parts, ignore_index=True)
    stages_df["profile"] = pd.Categorical(stages_df["profile"].astype(str), E.K.PROFILE_NAMES)
    metadata = {**identity, "stages_per_race": len(stages_df) // max(races, 1),
                "first_race": 0, "wall_seconds": wall}
    races_df.attrs = dict(metadata)
    stages_df.attrs = dict(metadata)
    if runs:
        runs[0].join(n_chunks, metadata)
        runs[1].join(n_chunks, metadata)
    return races_df, stages_df


def load_run(out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a run written by simulate_command back, metadata in df.attrs."""
    races_df, meta = read_parquet(out)
    stages_df, _ = read_parquet(stages_path(out))
    if meta.get("game") != E.GAME:
        raise ValueError(f"{out} is a {meta.get('game')!r} run, not an etape run")
    stages_df["profile"] = pd.Categorical(stages_df["profile"].astype(str), E.K.PROFILE_NAMES)
    races_df.attrs = dict(meta)
    stages_df.attrs = dict(meta)
    return races_df, stages_df


def report_command(run: Path, out_dir: Path) -> Path:
    """`etappe report` for an etape run file: writes report.html/.md; returns the HTML path."""
    from etappe.reports.etape import build_report

    with progress_bar(None, "report") as bar:
        return build_report(*load_run(run), on_section=bar.stage).write(out_dir)
