"""Tape l'étape commands, as plain functions the typer app wires up.

Files: the races go to OUT (Parquet), the stages beside it as
`<OUT stem>.stages.parquet`; both carry the run's identity (game, seed,
players, policies, options, version, wall time) in their metadata. A run is
played in chunks saved as they finish, so an interrupted command run again
resumes where it stopped (analysis/runio.py's ChunkedRun), in the chunks it
was started with, whatever --chunk-size is given then.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from etappe.analysis import etape as E
from etappe.analysis.runio import (ChunkedRun, differences, finished, iter_parquet, package_version,
                                   column_names, read_metadata, read_parquet, row_count)
from etappe.analysis.stats import counted
from etappe.kernels.options import policies_by_seat

from .common import (check_share, chunk_count, console, err_console, play_time_text, default_chunk, folding, in_share, RATE_WIDTH, joining_kept, kept_in, print_policy_listing, progress_bar,
                     resume_in_chunks_of, report_kept, say_nothing_to_play, say_share_written, say_written, share_games)

CHUNK = 2_000        # races per saved chunk: a few seconds of play, so an interruption loses little
LOOKAHEAD_CHUNK = 200  # where a look-ahead seat plays (2,000 such races take 25 to 50 s)
# Within a chunk the races are played in kernel calls of `batch` races (the
# same races and keys: the records do not depend on it), so the progress bar
# moves while a slow chunk plays (a look-ahead seat takes tens of ms a race).
# Each call costs a few ms more when other work shares the cores, so the
# batch is sized to the speed seen in the previous chunk.
FIRST_BATCH = 50       # races per call until the run's speed is known
BATCH_SECONDS = 0.5    # then: about this much play per call (a fast run plays whole chunks)


def stages_path(out: Path) -> Path:
    out = Path(out)
    stem = out.name[: -len(".parquet")] if out.name.endswith(".parquet") else out.name
    return out.with_name(stem + ".stages.parquet")


class Summary:
    """What `etappe simulate etape` prints, summed chunk by chunk, so that a
    run of any length holds one chunk's records at a time: race wins per
    seat and per policy (the report's, analysis.etape.RunSummary's: a shared
    first place counts 1/k to each of the k leaders) and the counts of the
    last line. `metadata` needs players and policies; print_summary reads
    stages_per_race and wall_seconds from it too."""

    def __init__(self, metadata: dict):
        self.metadata = dict(metadata)
        self.outcomes = E.RunSummary(self.metadata, parts=("outcomes", "anomalies"))
        self.blocked = self.capped = 0

    @property
    def races(self) -> int:
        return self.outcomes.races

    @property
    def shared(self) -> int:
        return self.outcomes.shared

    def add(self, races_df: pd.DataFrame) -> None:
        self.outcomes.add(races_df)
        self.blocked += int(races_df["blocked_stages"].sum())
        self.capped += int(races_df["capped_stages"].sum())

    def win_rates(self, by: str) -> pd.DataFrame:
        """by, n, wins, mean_time, win_rate, ci_low, ci_high (95 % Wilson), as E.win_rates."""
        return self.outcomes.win_rates(by)


def simulate_command(players: int, races: int, policies: list[str], seed: int, out: Path | None, options: dict,
                     chunk_size: int | None = None, first_batch: int = FIRST_BATCH,
                     share: tuple[int, int] | None = None) -> tuple[Summary, dict]:
    """`etappe simulate etape`: play `races` races and return (summary,
    metadata): the Summary print_summary prints and the run's metadata.
    No records are kept in memory (a long run would not fit): with `out`
    they are written to `out` and `stages_path(out)`, `chunk_size` races at
    a time (None: CHUNK, or LOOKAHEAD_CHUNK where a look-ahead seat plays),
    and load_run reads them back; analysis.etape.simulate returns records in
    memory.

    policies: one spec per seat slot, one for all, or a list that repeats
    around the table (see docs/etape.md), e.g.
    ["heuristic", "random", "blocker:block=5", "high"]; options: rule options
    by name (unknown names are refused). The progress bar moves every
    `first_batch` races, then about every BATCH_SECONDS (the records do not
    depend on it); wall_seconds excludes compiling or loading the kernel."""
    E.check_players(players)
    full = E.resolve_options(options)
    policies = policies_by_seat(policies, players, E.DEFAULT_POLICY)
    chunk_size = chunk_size or default_chunk(policies, CHUNK, LOOKAHEAD_CHUNK)
    canonical = [E.parse_policy(p)[2] for p in policies]
    identity = {"game": E.GAME, "players": players, "races": races, "seed": seed,
                "policies": canonical, "options": full, "version": package_version()}
    wall = 0.0  # playing time of every chunk, those of an interrupted earlier session included
    writing = 0.0  # this session's time saving the chunks, said apart from the play
    summary = Summary(identity)
    runs = None
    # the race file is joined first: with no stages file yet, its chunks are still needed
    if out is not None and stages_path(out).exists() and finished(out, identity) \
            and finished(stages_path(out), identity):
        say_nothing_to_play(out)
        metadata = read_metadata(out)
        check_stages_file(out, metadata)
        for races_df in iter_parquet(out):  # the races only: the stages file is the large one
            summary.add(races_df)
        summary.metadata = dict(metadata)
        return summary, metadata
    if out is not None:
        runs = (ChunkedRun(out, identity, chunk_size), ChunkedRun(stages_path(out), identity, chunk_size))
        chunk_size = resume_in_chunks_of(runs[0], chunk_size, races, "races")
        if runs[1].chunk_size != chunk_size:  # the races and stages of a chunk are saved together
            raise ValueError(f"{runs[1].parts} holds chunks of {runs[1].chunk_size} races, and {runs[0].parts} of "
                             f"{chunk_size}; remove them or write to another --out")
    n_chunks = chunk_count(races, chunk_size)
    check_share(share, n_chunks, chunk_size, "races")
    batch = first_batch
    on_stop = ("Nothing is kept: without --out no records are saved." if not runs
            else kept_in(runs[0].parts, runs[1].parts))
    with progress_bar(share_games(share, races, chunk_size), f"etape x{players}", on_stop, compiles=True) as advance:
        shown = 0  # races on the progress bar

        def show(played: int) -> None:
            nonlocal shown
            advance(played - shown)
            shown = played

        before = 0  # races of the chunks played (or loaded) before this one
        for index in range(n_chunks):
            if not in_share(share, index):
                continue
            lo, hi = index * chunk_size, min(races, (index + 1) * chunk_size)
            if runs and runs[0].done(index) and runs[1].done(index):
                r = runs[0].load(index)
                took = runs[0].seconds(index)
            else:
                # simulate compiles or loads its kernel before its clock starts: took is playing time only
                r, s = E.simulate(players, hi - lo, policies, seed, full, first_race=lo, chunk=batch,
                                  progress=lambda done, _total, before=before: show(before + done))
                took = r.attrs["wall_seconds"]
                batch = max(1, int((hi - lo) / max(took, 1e-6) * BATCH_SECONDS))
                if runs:
                    started = time.perf_counter()
                    runs[1].save(index, s, took)
                    runs[0].save(index, r, took)
                    writing += time.perf_counter() - started
            before += hi - lo
            show(before)
            wall += took
            summary.add(r)
    metadata = {**identity, "stages_per_race": int(E.K.stages_per_race(players, E.option_vector(full))),
                "first_race": 0, "wall_seconds": wall}
    summary.metadata = dict(metadata)
    if share is not None:
        say_share_written(share, runs, n_chunks)
    elif runs:
        started = time.perf_counter()
        with progress_bar(2 * n_chunks, f"joining the chunks into {out}", joining_kept(runs)) as joined:
            # streamed chunk by chunk into the files; the parts are kept until both are joined: a run stopped
            # between the two joins (the stages file is the large one) finds all its chunks, not half of them
            runs[0].join(n_chunks, metadata, joined, drop=False)
            runs[1].join(n_chunks, metadata, joined, drop=False)
            for run in runs:
                run.drop()
        say_written(f"{out} ({counted(races, 'race')}) and its stages {stages_path(out)}",
                    writing + time.perf_counter() - started)
    return summary, metadata


def load_run(out: Path, fields=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a run written by simulate_command back, metadata in df.attrs.

    fields: the per-seat stage fields to read (`<field>_<seat>` columns;
    default all): E.REPORT_STAGE_FIELDS are those the report needs, and the
    stages' other columns of the columns' state (start, coln, lo, hi) are
    then left out too. The whole run is held in memory: iter_run reads it a
    batch of races at a time."""
    races_df, meta = read_parquet(out)
    if meta.get("game") != E.GAME:
        raise ValueError(f"{out} is a {meta.get('game')!r} run, not an etape run")
    check_stages_file(out, meta)
    columns = None if fields is None else _stage_columns(out, fields)
    stages_df, _ = read_parquet(stages_path(out), columns)
    stages_df["profile"] = pd.Categorical(stages_df["profile"].astype(str), E.K.PROFILE_NAMES)
    races_df.attrs = dict(meta)
    stages_df.attrs = dict(meta)
    return races_df, stages_df


# The per-stage columns (not per seat) that load_run reads with `fields`: the columns' state is left out.
_STAGE_COLUMNS = ("race", "stage", "picker", "profile", "winner", "blocked", "capped", "turns")


def check_stages_file(out: Path, meta: dict) -> None:
    """Refuse a run whose stages file is missing or another run's: a run's
    two files are joined with the same metadata, so any difference (the
    time played aside) means another run's stages."""
    if not stages_path(out).exists():
        raise ValueError(f"its stages file {stages_path(out)} is missing: `etappe simulate etape --out {out}` "
                         f"writes it beside the run file; keep or copy the two together")
    differ = differences(read_metadata(stages_path(out)), {k: v for k, v in meta.items() if k != "wall_seconds"})
    if differ:
        raise ValueError(f"its stages file {stages_path(out)} belongs to another run ({'; '.join(differ)}); "
                         f"run `etappe simulate etape --out {out}` again, or keep each run's two files together")
    # A run written by an older etappe may lack columns this code reads (place_s came later).
    held = set(column_names(stages_path(out)))
    missing = [f"{field}_{s}" for field in E.K.STAGE_SEAT_FIELDS for s in range(meta["players"])
               if f"{field}_{s}" not in held]
    if missing:
        raise ValueError(f"it was written by etappe {meta.get('version')}, whose stage records lack "
                         f"{', '.join(missing)}; play the run again with this etappe ({package_version()})")


def iter_run(out: Path, fields=None, batch_rows: int = 25_000):
    """A run written by simulate_command, a batch of whole races at a time:
    (races, stages) of the same races, metadata in df.attrs, at most about
    `batch_rows` stage rows a batch (runio.iter_parquet; 25,000: larger
    batches save little time and cost memory), so that memory does not grow
    with the races. fields: the per-seat stage fields to read, as load_run.
    Both files hold their races in order."""
    meta = read_metadata(out)
    if meta.get("game") != E.GAME:
        raise ValueError(f"{out} is a {meta.get('game')!r} run, not an etape run")
    check_stages_file(out, meta)
    races_batches = iter_parquet(out, batch_rows)
    races_left = None  # races read but not yet given: their stages are in the next batch

    def races_up_to(last: int) -> pd.DataFrame:
        nonlocal races_left
        parts = [] if races_left is None else [races_left]
        while not parts or not len(parts[-1]) or parts[-1]["race"].iloc[-1] < last:
            more = next(races_batches, None)
            if more is None:  # the same metadata, yet fewer races: a file changed by hand
                raise ValueError(f"{out} ends before race {last} of its stages file {stages_path(out)}; "
                                 "play the run again")
            parts.append(more)
        races = pd.concat(parts, ignore_index=True)
        cut = int(np.searchsorted(races["race"].to_numpy(), last, side="right"))
        races_left = races.iloc[cut:]
        return _with_meta(races.iloc[:cut], meta)

    columns = None if fields is None else _stage_columns(out, fields)
    held = None  # the rows of a batch's last race, which may go on in the next batch
    for stages_df in iter_parquet(stages_path(out), batch_rows, columns):
        if held is not None:
            stages_df = pd.concat([held, stages_df], ignore_index=True)
        race = stages_df["race"].to_numpy()
        cut = int(np.searchsorted(race, race[-1]))
        held = stages_df.iloc[cut:]
        if cut:
            yield races_up_to(int(race[cut - 1])), _with_meta(stages_df.iloc[:cut], meta)
    if held is not None:
        yield races_up_to(int(held["race"].iloc[-1])), _with_meta(held, meta)


def _with_meta(frame: pd.DataFrame, meta: dict) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    frame.attrs = dict(meta)
    return frame


def summarize_run(out: Path, progress=None, batch_rows: int = 25_000) -> E.RunSummary:
    """The analysis.etape.RunSummary of a run written by simulate_command
    (every table of its report), read by iter_run with the stage fields the
    report uses only (E.REPORT_STAGE_FIELDS). `progress(rows)` is told the
    rows of each batch read, of both files."""
    summary = E.RunSummary(read_metadata(out))
    for races_df, stages_df in iter_run(out, E.REPORT_STAGE_FIELDS, batch_rows):
        summary.add(races_df, stages_df)
        if progress:
            progress(len(races_df) + len(stages_df))
    return summary


def _stage_columns(out: Path, fields) -> list[str]:
    """The columns of the stages file that hold the per-seat `fields` and the per-stage _STAGE_COLUMNS."""
    kept, seat_fields = set(fields), set(E.K.STAGE_SEAT_FIELDS)
    return [name for name in column_names(stages_path(out))
            if (name.rpartition("_")[0] in kept if name.rpartition("_")[0] in seat_fields else name in _STAGE_COLUMNS)]


def report_command(run: Path, out_dir: Path) -> Path:
    """`etappe report` for an etape run file: writes report.html/.md; returns the HTML path."""
    from etappe.reports.etape import build_report

    rows = sum(row_count(path) for path in (run, stages_path(run)) if path.exists())
    with progress_bar(rows, "reading records", report_kept(out_dir)) as bar:
        return build_report(summarize_run(run, progress=bar), on_section=bar.stage).write(out_dir)


def print_summary(summary: Summary) -> None:
    """The short table `etappe simulate etape` prints: race wins per seat and,
    when the seats play different policies, per policy, with 95 % intervals.
    A shared first place counts 1/k to each of the k leaders, as in the
    report (analysis.etape.win_rates), so every race counts and a fair share
    is 1 / players."""
    from rich.table import Table

    meta = summary.metadata
    n = meta["players"]
    tables = [("seat", f"summary: race wins per seat (shared first places count 1/k; fair share 1/{n})")]
    if len(set(meta["policies"])) > 1:
        tables.append(("policy", "race wins per policy (n: seat-races; shared first places count 1/k)"))
    names = E.short_names(meta["policies"])
    for by, title in tables:
        table = Table(*folding(by, "n", "wins"), *folding("win rate", "95 % interval", min_width=RATE_WIDTH),
                      title=title)
        for row in summary.win_rates(by).itertuples():
            label = names[getattr(row, by)] if by == "policy" else str(row.seat)
            table.add_row(label, str(row.n), E.wins_text(row.wins), f"{row.win_rate:.3f}",
                          f"{row.ci_low:.3f} - {row.ci_high:.3f}")
        console.print(table)
    wall = meta["wall_seconds"]
    console.print(f"{counted(summary.races, 'race')}, {summary.shared} with a shared first place; "
                  f"of the {counted(summary.races * meta['stages_per_race'], 'stage')} {summary.blocked} blocked, "
                  f"{summary.capped} cut off by the turn cap; {play_time_text(wall, summary.races, 'races')}; "
                  "compiling or loading the kernel not counted)", highlight=False)
    if summary.capped:  # as the race games and Bremen warn of theirs
        cap = counted(meta["options"]["turn_cap"], "turn")
        err_console.print(f"warning: {summary.capped} of {counted(summary.races * meta['stages_per_race'], 'stage')} "
                          f"hit the turn cap of {cap}: each was cut off and timed on the cards left in the hands "
                          "then; a cap this low changes the results (-o turn_cap=1000 is the default).",
                          highlight=False)


def policies_command() -> None:
    """`etappe policies etape`: the policies with their parameters' defaults
    and valid values, then the rule options with their defaults and ranges."""
    from rich.table import Table

    table = Table("policy", "parameters (defaults unless set)", title="Tape l'étape policies (docs/etape.md)")
    for name, (_, params) in E.POLICIES.items():
        table.add_row(name, ", ".join(f"{k}={v:g}" for k, v in params.items()))
    print_policy_listing(table, E.PARAMETER_RANGES, {name: default for name, (_, default) in E.OPTIONS.items()},
                         E.OPTION_RANGES, E.OPTION_CHOICES, "docs/etape.md")
