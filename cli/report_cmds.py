"""The work behind `etappe report` and `etappe compare` (wired into the typer app in cli/main.py).

Both read records chunk by chunk into mergeable summaries, so memory stays
bounded whatever the number of games.
"""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..analysis.compare import PairedComparison, shared_cards
from ..analysis.race import run_identity
from ..analysis.race_summary import RaceSummarizer, RaceSummary
from ..analysis.runio import BATCH_ROWS, Checkpoint, iter_parquet, read_metadata, row_count
from ..reports.race_report import build_comparison_report, build_report


def summarize_run(run: Path, batch_rows: int = BATCH_ROWS, progress=None) -> tuple[RaceSummary, dict]:
    """(summary, metadata) of a run file, read in chunks of `batch_rows` rows;
    `progress(rows)` is called after each chunk."""
    meta = read_metadata(run)
    acc = RaceSummarizer(meta)
    for chunk in iter_parquet(run, batch_rows=batch_rows):
        acc.add(chunk)
        if progress:
            progress(len(chunk))
    return acc.result(), meta


def report_command(run: Path, out: Path, batch_rows: int = BATCH_ROWS) -> Path:
    """Write the balance report of a Parquet run into `out` (with a progress
    bar over the rows read); return report.html's path."""

    from .common import progress_bar, report_kept

    rows = row_count(run)
    with progress_bar(rows, "reading records", report_kept(out)) as bar:
        summary, meta = summarize_run(Path(run), batch_rows, bar)
        return build_report(summary, meta, on_section=bar.stage, run_file=str(run)).write(out)


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


def compare_summaries(frames_or_chunks_a, meta_a: dict | None, frames_or_chunks_b, meta_b: dict | None,
                      progress=None):
    """Summaries of both runs and their paired comparison, reading the chunks of both.

    Each argument is a DataFrame or an iterable of DataFrame chunks (cut
    anywhere, in game order); metadata defaults to the first chunk's
    ``attrs``. The next chunk is always read from the run that is behind in
    games, so the games waiting for their pair stay within about one chunk
    even where one design's records hold several rows a game and the
    other's one. `progress(rows)` is called after each chunk. Returns
    (summary_a, meta_a, summary_b, meta_b, comparison).
    """
    it_a, meta_a = _first_with_meta(_chunks(frames_or_chunks_a), meta_a)
    it_b, meta_b = _first_with_meta(_chunks(frames_or_chunks_b), meta_b)
    comp = PairedComparison()
    shared = shared_cards(meta_a, meta_b)
    acc_a = RaceSummarizer(meta_a, on_games=comp.add_a, shared_cards=shared)
    acc_b = RaceSummarizer(meta_b, on_games=comp.add_b, shared_cards=shared)
    reading = {"a": (it_a, acc_a), "b": (it_b, acc_b)}
    last_game = {"a": -1, "b": -1}
    while reading:
        side = min(reading, key=last_game.get)
        chunks, acc = reading[side]
        chunk = next(chunks, None)
        if chunk is None:
            del reading[side]
            comp.close(side)
            continue
        acc.add(chunk)
        if len(chunk):
            last_game[side] = int(chunk["game"].iloc[-1])
        if progress:
            progress(len(chunk))
    return acc_a.result(), meta_a, acc_b.result(), meta_b, comp


def fields_differ(meta_a: dict, meta_b: dict, fields) -> list[str]:
    """What differs in `fields` between two runs, A against B: policies by
    their names where those differ, else field by field (where only a policy
    file's hash differs, the names alone would read the same)."""
    from ..analysis.runio import brief_pair, differences

    found = []
    for field in fields:
        a, b = meta_a.get(field), meta_b.get(field)
        if a != b:
            shown = brief_pair(a, b)
            found += ([f"{field} {' against '.join(shown)}"] if shown[0] != shown[1]
                      else differences({field: a}, {field: b}, versus=" against "))
    return found


# What two run files must share for their comparison report: it compares
# designs, or rule options, under the same players, policies and seating.
PAIRED_RUN_FIELDS = ("game", "players", "policies", "seating")


def compare_runs(run_a: Path, run_b: Path, out: Path, batch_rows: int = BATCH_ROWS) -> Path:
    """Write the comparison report of two run files (`etappe report A B`) into `out`; return report.html's path.

    Game i of run A is paired with game i of run B: on the same seed they
    were played from the same random numbers, as `etappe compare` plays them.
    """

    from .common import err_console, progress_bar, report_kept

    meta_a, meta_b = read_metadata(run_a), read_metadata(run_b)
    differ = fields_differ(meta_a, meta_b, PAIRED_RUN_FIELDS)
    if differ:
        raise ValueError(f"{run_a} and {run_b} cannot be compared: a comparison is of two designs, or two rule "
                         f"option sets, under the same players, policies and seating, and these runs differ in "
                         f"{'; '.join(differ)}")
    if all(meta_a.get(f) == meta_b.get(f) for f in ("design_hash", "options", "seed")):
        raise ValueError(f"{run_a} and {run_b} are runs of the same design under the same rule options and seed: "
                         "every paired difference would be 0")
    if meta_a.get("seed") != meta_b.get("seed"):  # the report says so too; said here before the wait
        err_console.print(f"warning: {run_a} and {run_b} have different root seeds ({meta_a.get('seed')} vs "
                          f"{meta_b.get('seed')}): game i of each is independent, not played on common random "
                          "numbers, so the paired differences hold but their intervals are wider than on one seed.",
                          highlight=False)
    rows = row_count(run_a) + row_count(run_b)
    with progress_bar(rows, "reading records", report_kept(out)) as bar:
        summaries = compare_summaries(iter_parquet(run_a, batch_rows), meta_a, iter_parquet(run_b, batch_rows), meta_b,
                                      progress=bar)
        return build_comparison_report(*summaries, on_section=bar.stage).write(out)


def refuse_same_design(meta_a: dict, meta_b: dict) -> None:
    """ValueError where runs A and B would play the very same games (one design under the same rule options)."""
    if run_identity(meta_a) == run_identity(meta_b):
        raise ValueError(f"A and B are the same design ({meta_a['design']}, hash {meta_a['design_hash']}) under "
                         "the same rule options: on the same seeds every paired difference would be 0; give another "
                         "design or --option-b")


def compare_designs(deck_a, deck_b, out: Path, players: int = 2, games: int = 10_000, policies=("greedy",),
                    seed: int = 0, options_a: dict | None = None, options_b: dict | None = None,
                    seating: str = "fixed", chunk_size: int = 50_000, progress=None, on_section=None,
                    on_resume=None) -> Path:
    """Play both designs (or one design under two option sets) on the same seeds, chunk
    by chunk in lockstep, and write the comparison report into `out`; return report.html's path.

    `progress(side, games_done)` (side "a" or "b") is called after each chunk,
    `on_section(title)` as each section of the report is begun, `on_resume(games)`
    with the games per design already played when an interrupted comparison resumes.
    Only the summaries and the per-game metrics of one chunk pair are in memory at a time.
    After every chunk pair the summaries are saved atomically in `out`, so an
    interrupted comparison run again with the same arguments resumes there.
    """
    import time

    from ..analysis.race import RaceRun
    from ..kernels.options import whole

    games, chunk_size = whole("games", games, 1), whole("chunk_size", chunk_size, 1)
    runs = {"a": RaceRun(deck_a, players, list(policies), seed, options_a, seating),
            "b": RaceRun(deck_b, players, list(policies), seed, options_b, seating)}
    metas = {k: r.metadata(games) for k, r in runs.items()}
    refuse_same_design(metas["a"], metas["b"])
    # no chunk size: a comparison resumed in chunks of another size plays the same games
    identity = {k: run_identity(m) for k, m in metas.items()}
    checkpoint = Checkpoint(Path(out) / ".compare-checkpoint.pkl", identity)
    state = checkpoint.load() or {"games_done": 0, "summaries": {"a": None, "b": None},
                                  "comparison": PairedComparison(), "clock": {"a": 0.0, "b": 0.0}}
    comp = state["comparison"]
    if on_resume and state["games_done"]:
        on_resume(state["games_done"])
    shared = shared_cards(metas["a"], metas["b"])
    accs = {key: RaceSummarizer(metas[key], on_games=add, shared_cards=shared)
            for key, add in (("a", comp.add_a), ("b", comp.add_b))}
    for key, acc in accs.items():
        acc.summary = state["summaries"][key]
    if state["games_done"] < games:
        for run in runs.values():
            run.load_kernels()  # the compile is not playing time
    if progress:
        for key in accs:  # the kernels are ready: the bar stops saying so
            progress(key, state["games_done"])
    for first in range(state["games_done"], games, chunk_size):
        count = min(chunk_size, games - first)
        for key, acc in accs.items():
            started = time.perf_counter()
            frame = runs[key].play(first, count)
            state["clock"][key] += time.perf_counter() - started
            acc.add(frame)
        state["games_done"] = first + count
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


def sweep_values(text: str) -> tuple[str, list]:
    """`--set PATH=V1,V2,...`: the setting's dotted path and its values, each
    read as a TOML value (3, 0.5, true) or else as a bare word (disqualify)."""
    import tomllib

    path, sep, values = text.partition("=")
    path = path.strip()
    if not sep or not path or not values.strip():
        raise ValueError(f"--set {text!r}: write the setting and its values, e.g. --set cards.stop.count=3,5,8")

    def value(word: str):
        if not word:
            raise ValueError(f"--set {text!r} has an empty value; give the values separated by commas, e.g. "
                             "--set cards.stop.count=3,5,8")
        try:
            return tomllib.loads(f"v = {word}")["v"]
        except tomllib.TOMLDecodeError:
            if any(c in word for c in "[]{}\"'"):
                raise ValueError(f"--set {text!r}: {word!r} is not a value: the values are separated by commas, "
                                 "so a list, a table or a quoted text with a comma cannot be swept") from None
            return word

    return path, [value(word.strip()) for word in values.split(",")]


def sweep_command(deck: str, setting: str, players: int, games: int, policies, seed: int, options: dict,
                  seating: str, out: Path, chunk_size: int) -> Path:
    """`etappe sweep`: play the sweep with a progress bar, resuming from its
    checkpoint in `out`, and write its report there; return report.html's path."""
    from ..analysis.sweep import sweep_design
    from ..reports.sweep_report import build_sweep_report
    from .common import kept_in, progress_bar, resumed_text

    path, values = sweep_values(setting)
    checkpoint = Path(out) / ".sweep-checkpoint.pkl"
    runs = len(values) + 1
    with progress_bar(games * runs, f"{deck} {path} x{len(values)}",
                      kept_in(checkpoint, what="The summaries of the finished chunks are"), compiles=True) as bar:
        sweep = sweep_design(deck, path, values, players, games, policies, seed, options, seating, chunk_size,
                             progress=bar, checkpoint=checkpoint,
                             on_resume=lambda done: bar.say(resumed_text(out, done, games, "games per value")))
        report = build_sweep_report(sweep, on_section=bar.stage).write(out)
    checkpoint.unlink(missing_ok=True)
    return report


def compare_game_variants(game: str, players: int, games: int, policies: list[str], seed: int, options_a: dict,
                          options_b: dict, out: Path, chunk_size: int, board: Path | None = None,
                          board_b: Path | None = None) -> Path:
    """`etappe compare bremen|etape`: play both variants with a progress bar,
    resuming from the checkpoint in `out`, and write the report there; return report.html's path."""
    from ..analysis import bremen as B
    from ..analysis import etape as E
    from ..analysis.variants import UNIT, compare_variants
    from ..reports.variant_report import build_variant_report
    from .common import kept_in, progress_bar, resumed_text

    checkpoint = Path(out) / ".compare-checkpoint.pkl"
    board_b = board_b if board_b is not None else board
    # no games: the options, boards and policies checked (ValueError) before a progress bar is drawn
    compare_variants(game, players, 0, policies, seed, options_a, options_b, None, chunk_size, board, board_b)
    with progress_bar(games, f"{game} A and B", kept_in(checkpoint, what="The comparison of the finished chunks is"),
                      compiles=True) as bar:
        shown = 0

        def progress(done: int) -> None:
            nonlocal shown
            bar(done - shown)
            shown = done

        # Compile or load the kernels on one game, so that the bar stops saying it compiles them: a
        # chunk pair of Bremen plays for tens of seconds before the bar's first step.
        if game == "bremen":
            B.simulate(players, 1, policies, seed, board, options_a, first_game=0)
        else:
            E.simulate(players, 1, policies, seed, options_a, first_race=0)
        bar(0)
        comparison = compare_variants(game, players, games, policies, seed, options_a, options_b, checkpoint,
                                      chunk_size, board, board_b, progress=progress,
                                      on_resume=lambda done: bar.say(resumed_text(out, done, games,
                                                                                  f"{UNIT[game]}s per variant")))
        path = build_variant_report(comparison, on_section=bar.stage).write(out)
    checkpoint.unlink(missing_ok=True)
    return path


def compare_variant_runs(run_a: Path, run_b: Path, out: Path, batch_rows: int = BATCH_ROWS) -> Path:
    """`etappe report A B` for two Bremen or two Tape l'étape run files: the
    comparison report of their variants, game i of A paired with game i of B."""
    from ..analysis import bremen as B
    from ..analysis import etape as E
    from ..analysis.variants import SHARED_FIELDS, VariantComparison, what_differs
    from ..reports.variant_report import build_variant_report
    from .common import progress_bar, report_kept
    from .etape import iter_run

    meta_a, meta_b = read_metadata(run_a), read_metadata(run_b)
    count = "games" if meta_a.get("game") == "bremen" else "races"
    differ = fields_differ(meta_a, meta_b, (*SHARED_FIELDS, count))
    if differ:
        raise ValueError(f"{run_a} and {run_b} cannot be compared: a comparison is of two variants (rule options"
                         f"{', boards' if count == 'games' else ''}) on the same {count}, and these runs differ in "
                         f"{'; '.join(differ)}")
    if what_differs(meta_a, meta_b).empty:
        raise ValueError(f"{run_a} and {run_b} are runs of the same variant (every rule option"
                         f"{' and the board' if count == 'games' else ''} equal): every paired difference would be 0")
    if count == "games":
        def per_game(run, meta):
            for batch in iter_parquet(run, batch_rows):
                batch.attrs = dict(meta)
                yield B.paired_metrics(batch)
    else:
        def per_game(run, meta):  # only the stage fields paired_metrics reads
            for races, stages in iter_run(run, E.PAIRED_STAGE_FIELDS):
                yield E.paired_metrics(races, stages)
    comparison = PairedComparison()
    with progress_bar(meta_a[count], f"reading {count}", report_kept(out)) as bar:
        # paired by game number: the two files' batches need not line up (runs saved in other chunk sizes)
        for a, b in itertools.zip_longest(per_game(run_a, meta_a), per_game(run_b, meta_b)):
            for run, metrics in (("a", a), ("b", b)):
                if metrics is not None:
                    comparison.add_metrics(run, metrics)
            bar(0 if a is None else len(a))
        if comparison.unpaired:
            raise ValueError(f"{run_a} and {run_b} do not hold the same {count}: {comparison.unpaired} "
                             "have no pair")
        variants = VariantComparison(meta_a["game"], meta_a, meta_b, comparison, meta_a[count])
        return build_variant_report(variants, on_section=bar.stage).write(out)
