"""`etappe bremen ...`: simulate, report and board sweep for Bremer Stadtmusikanten.

simulate_command() is the plain function behind `etappe simulate bremen`.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import pandas as pd
import typer

from etappe.analysis import bremen as A
from etappe.analysis.runio import BATCH_ROWS, ChunkedRun, file_hash, finished, package_version, read_parquet, row_count, write_atomic
from etappe.analysis.stats import counted
from etappe.kernels import bremen as K
from etappe.kernels.bremen_board import BoardError, house_steps, load_board, ring_board
from etappe.kernels.user_policy import is_user_policy

from .common import (MAX_SEED, SeedOpt, around_the_table, check_share, chunk_count, default_chunk, err_console, fail, in_share, joining_kept,
                     kept_in, parse_options, check_policy_list, print_policy_listing, progress_bar, report_kept,
                     resume_in_chunks_of, say_nothing_to_play, say_share_written, say_written, share_games,
                     writable_folder)

app = typer.Typer(help="Bremer Stadtmusikanten (dice and stacking; the board is a reconstruction).",
                  no_args_is_help=True)

CHUNK = 20_000  # games per resumable chunk on disk
# A comparison plays a chunk of each variant, then moves its bar: 2,000 games (about 2 s) a step, where
# 20,000 left the bar still for 20 s (a run's chunk moves its bar as its kernel calls end)
COMPARE_CHUNK = 2_000
LOOKAHEAD_CHUNK = 20  # where a look-ahead seat plays: about 2 s a game with two look-ahead seats
RING_MAX = 200  # fields per sweep ring (the default road has 24): larger boards only play slower


def _checked(items: list[str] | None, players: int) -> dict:
    """--option pairs, refused before any game is played if a name or value is
    wrong or means nothing with the others or this many players."""
    options = parse_options(items)
    try:
        A.options_row(options, players)
    except ValueError as exc:
        fail(str(exc))
    return options


def report_command(run: Path, out_dir: Path, batch_rows: int = BATCH_ROWS) -> Path:
    """`etappe report` for a bremen run file: writes report.html/.md; returns
    the HTML path. The run is read a row group (at most `batch_rows` games) at
    a time into a RunSummary: memory does not grow with the games."""

    from etappe.reports.bremen import build_report

    with progress_bar(row_count(run), "reading records", report_kept(out_dir)) as bar:
        summary = A.summarize_run_file(run, batch_rows, progress=bar)
        return build_report(summary, on_section=bar.stage).write(out_dir)


def run_identity(players: int, games: int, policies: list[str], seed: int, board_hash: str,
                 full_options: dict) -> dict:
    """What determines a run's records, kept in its run file: another run at
    the same --out is refused naming what differs. (The chunk size is not
    in it: the records do not depend on it, so only unfinished chunks carry it.)"""
    identity = {"game": "bremen", "board_hash": board_hash, "players": players, "games": games,
                "policies": [A.parse_policy(p)[2] for p in policies], "options": full_options, "seed": seed,
                "version": package_version(), "record_columns": A.K.N_REC}
    sources = A.policy_sources(policies)
    if sources:  # an edited policy of your own makes another run
        identity["policy_sources"] = sources
    return identity


def warn_capped(df: pd.DataFrame) -> None:
    """One line on stderr when games hit the turn cap: they have no winner,
    and the win rates leave them out."""
    capped, cap = int(df["capped"].sum()), df.attrs["options"]["max_turns"]
    if capped == len(df):
        all_random = all(str(p).split(":")[0] == "random" for p in df.attrs.get("policies") or ["?"])
        advice = ("All-random Bremen play practically never ends (docs/bremen.md): seat greedy or lookahead "
                  "players, or raise -o max_turns." if all_random else
                  f"Nobody reached the target within {cap} turns: raise -o max_turns"
                  + (", or look at what your own policy plays: one that does not bring its animals home may never end a game."
                     if any(is_user_policy(p) for p in df.attrs.get("policies") or [])
                     else "."))
        err_console.print(f"warning: all {counted(capped, 'game')} hit the turn cap of {counted(cap, 'turn')}: none has a winner, so "
                          f"there are no win rates. {advice}",
                          highlight=False)
    elif capped:
        err_console.print(f"warning: {capped} of {counted(len(df), 'game')} hit the turn cap of {counted(cap, 'turn')}: no winner; "
                          f"the win rates are among the other {len(df) - capped}.",
                          highlight=False)


SUMMARY_COLUMNS = ["winner_seat", "turns", "capped"]  # what `simulate` prints and warns about


def simulate_command(players: int, games: int, policies: list[str], seed: int, out: Path | None,
                     board: Path | None, options: dict, chunk_size: int | None = None,
                     share: tuple[int, int] | None = None, on_stop=None) -> pd.DataFrame:
    """Play the games (`policies`: one per seat, as common.around_the_table
    gives them) `chunk_size` at a time (None: CHUNK, or LOOKAHEAD_CHUNK
    where a look-ahead seat plays) and return, one row per game,
    only the columns the printed summary needs (SUMMARY_COLUMNS; run
    metadata in attrs): a long run never holds all its records. With `out`
    the records are written there (Parquet with the run's identity; read
    them back with analysis.bremen.from_run_file), chunk by chunk into
    `<out>.parts/`, so an interrupted run resumes where it stopped. A file
    at `out` that holds another run is refused; one that holds this run is
    not played again (its summary columns are read back from it).
    analysis.bremen.simulate returns whole records in memory.
    `on_stop`: what Ctrl-C says is kept (a callable, as common.kept_in gives;
    default: this run's chunks)."""
    chunk_size = chunk_size or default_chunk(policies, CHUNK, LOOKAHEAD_CHUNK)
    b = load_board(board)
    _, full_options = A.options_row(options, players)
    identity = run_identity(players, games, policies, seed, b.hash, full_options)  # refuses a bad policy
    run = None
    if out is not None and finished(out, identity):
        say_nothing_to_play(out)
        kept, meta = read_parquet(out, SUMMARY_COLUMNS)  # a chunk's worth of memory, not the whole records
        kept.attrs.update(meta)
        warn_capped(kept)
        return kept
    if out is not None:
        run = ChunkedRun(out, identity, chunk_size)
        chunk_size = resume_in_chunks_of(run, chunk_size, games, "games")
    chunks = range(chunk_count(games, chunk_size))
    check_share(share, len(chunks), chunk_size, "games")
    kept, attrs, wall = [], None, 0.0  # wall: playing time of every chunk, earlier sessions' included
    writing = 0.0  # this session's time saving the chunks, said apart from the play
    if on_stop is None:
        on_stop = "Nothing is kept: without --out no records are saved." if run is None else kept_in(run.parts)
    with progress_bar(share_games(share, games, chunk_size), f"bremen x{players}", on_stop, compiles=True) as advance:
        shown = 0

        def progress(done: int) -> None:
            nonlocal shown
            advance(done - shown)
            shown = done

        before = 0  # games of the chunks played (or loaded) before this one
        for index in chunks:
            if not in_share(share, index):
                continue
            lo, hi = index * chunk_size, min(games, (index + 1) * chunk_size)
            if run is not None and run.done(index):
                part = run.load(index)
                wall += run.seconds(index)
            else:
                part = A.simulate(players, hi - lo, policies, seed, b, full_options, first_game=lo,
                                  progress=lambda d, t, before=before: progress(before + d))
                attrs, wall = part.attrs, wall + part.attrs["wall_seconds"]
                if run is not None:
                    started = time.perf_counter()
                    run.save(index, part, part.attrs["wall_seconds"])
                    writing += time.perf_counter() - started
            kept.append(part[SUMMARY_COLUMNS].copy())  # copied: a column subset shares, and keeps, the chunk
            before += hi - lo
            progress(before)
    df = pd.concat(kept, ignore_index=True)
    if attrs is None:  # every chunk was on disk already
        attrs = A.simulate(players, 0, policies, seed, b, full_options).attrs
    df.attrs.update(attrs)
    df.attrs.update(identity, first_game=0, wall_seconds=wall, games_per_s=len(df) / wall if wall else float("nan"))
    if share is not None:
        say_share_written(share, [run], len(chunks))
    elif run is not None:
        started = time.perf_counter()
        with progress_bar(len(chunks), f"joining the chunks into {out}", joining_kept([run])) as joined:
            run.join(len(chunks), dict(df.attrs), joined)  # streamed chunk by chunk into the file
        say_written(f"{out} ({counted(games, 'game')})", writing + time.perf_counter() - started)
    warn_capped(df)
    return df


def policies_command() -> None:
    """`etappe policies bremen`: the policies with their parameters' defaults
    and valid values, then the rule options with their defaults and ranges."""
    from rich.table import Table

    table = Table("policy", "parameters (defaults unless set)", title="Bremer Stadtmusikanten policies (docs/bremen.md)")
    table.add_row("random", "-")
    table.add_row("greedy", ", ".join(f"{k}={v:g}" for k, v in A.GREEDY_DEFAULTS.items()))
    table.add_row("lookahead", ", ".join(f"{k}={v:g}" for k, v in A.LOOKAHEAD_DEFAULTS.items())
                  + " (+ greedy parameters)")
    table.add_row("FILE.py:FUNCTION", "your own policy for the moves (docs/bremen.md); robber paths: greedy's")
    print_policy_listing(table, A.PARAMETER_RANGES, {name: default for name, (default, _) in A.OPTIONS.items()},
                         A.OPTION_RANGES, {name: choices for name, (_, choices) in A.OPTIONS.items() if choices},
                         "docs/bremen.md")


@app.command()
def validate(board: Annotated[Path, typer.Argument(help="board TOML file (docs/bremen.md, Board file format)")]):
    """Check a board file and describe it: its fields by kind, each start field's steps to the house.

    A file that cannot be played is refused naming the file, the field and the problem (exit code 2)."""
    try:
        b = load_board(board)
    except BoardError as exc:
        fail(str(exc))
    kinds = {"start": int((b.kind >= K.K_START).sum())}
    kinds.update({name: int((b.kind == k).sum()) for name, k in (("road", K.K_ROAD), ("forest", K.K_FOREST),
                                                                  ("bridge", K.K_BRIDGE), ("house", K.K_HOUSE))})
    label = "a reconstruction" if b.reconstruction else "not marked a reconstruction"
    typer.echo(f"{board}: a valid board, '{b.name}' ({label}), sha256 {b.hash}")
    typer.echo(f"{len(b.names)} fields (" + ", ".join(f"{n} {k}" for k, n in kinds.items())
               + f"), {int(b.deg.sum()) // 2} links")
    typer.echo("steps from each start field to the house (entering no other colour's start field):")
    for colour in range(4):
        alone, stack = house_steps(b, colour), house_steps(b, colour, carrying=True)
        # a carrying animal never enters a bridge: behind bridges only, a pyramid is built in the forest
        pyramid = f"{stack} as a pyramid" if stack is not None else "none as a pyramid (every way crosses a bridge)"
        typer.echo(f"  colour {colour} ({b.names[b.binfo[K.B_START + colour]]}): {alone} alone, {pyramid}")


PlayersOpt = Annotated[int, typer.Option(min=2, max=4, help="2, 3 (one neutral colour) or 4")]
PoliciesOpt = Annotated[Optional[str], typer.Option(
    "--policy", callback=check_policy_list, help="policies by seat: greedy,random,... repeated around the table (A,B at 4 seats: A,B,A,B); default "
                 "greedy (greedy:knock=3,climb=0 sets parameters; `etappe policies bremen`)")]
GamesOpt = Annotated[int, typer.Option("--games", "-n", min=1, max=MAX_SEED, help="games to play on each board")]
OptionOpt = Annotated[Optional[list[str]], typer.Option("--option", "-o", help="rule option name=value (repeat)")]


def _ints(option: str, text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        fail(f"{option} {text!r}: expected whole numbers separated by commas, e.g. 16,20")


def _sweep_kept(out: Path, done: int, total: int, run: Path):
    """The interruption line of a sweep stopped in board `done` + 1 of `total`:
    the finished boards are kept, and that board's finished chunks."""
    def text() -> str:
        parts = run.with_name(run.name + ".parts")
        kept = [f"the finished boards ({done} of {total}) in {out / 'runs'}"] * (done > 0)
        kept += [f"the finished chunks of the board it stopped in, in {parts}"] * any(parts.glob("chunk-*.parquet"))
        if not kept:
            return "Nothing is kept: no board or chunk was finished yet; the same command starts afresh."
        return "Kept: " + " and ".join(kept) + ": the same command resumes from there."
    return text


@app.command()
def sweep(players: PlayersOpt = 4, games: GamesOpt = 2000, policy: PoliciesOpt = None, seed: SeedOpt = 0,
          out: Annotated[Path, typer.Option(help="folder for boards, runs and the sweep report")] = Path("bremen-sweep"),
          roads: Annotated[str, typer.Option(help="outer ring lengths to try, each on the default board "
                                                  "(multiples of 4, at least 16 with its road-link offset 3)")] = "16,20,28,32",
          middles: Annotated[str, typer.Option(help="middle forest ring lengths to try, each on the default board "
                                                    "(multiples of 4, at least 8)")] = "12,20",
          road_links: Annotated[str, typer.Option(help="road-to-forest link offsets from the corners to try, each on "
                                                       "the default board (which has 3)")] = "2,4",
          house_links: Annotated[str, typer.Option(help="inner-ring offsets of the house links to try, each on the "
                                                        "default board (0 or 1; it has 1)")] = "0",
          option: OptionOpt = None):
    """Run the same study (same seeds) on the default board and on ring boards that change one of its settings
    at a time (each value of --roads, --middles, --road-links, --house-links), and report which conclusions
    hold on every board."""
    from etappe.reports.bremen import build_sweep_report

    options = _checked(option, players)
    links = _ints("--house-links", house_links)
    if any(v not in (0, 1) for v in links):
        fail(f"--house-links {house_links!r}: each offset is 0 or 1")
    rings = {"--roads": _ints("--roads", roads), "--middles": _ints("--middles", middles)}
    for flag, lengths in rings.items():
        if any(n > RING_MAX for n in lengths):
            fail(f"{flag} {', '.join(map(str, lengths))}: a ring has at most {RING_MAX} fields")
    specs = A.sweep_boards({"road": rings["--roads"], "middle": rings["--middles"],
                            "road_links": _ints("--road-links", road_links), "house_links": links})
    policies = around_the_table(policy, players, "bremen")
    try:
        identity = run_identity(players, games, policies, seed, "", A.options_row(options, players)[1])
    except ValueError as exc:
        fail(str(exc))
    boards = []
    for spec in specs:  # every board and every run file is checked before any game is played
        name = f"ring-r{spec['road']}-m{spec['middle']}-l{spec['road_links']}-h{spec['house_links']}"
        try:
            text = ring_board(**spec, name=name)
            run = out / "runs" / f"{name}.parquet"
            done = finished(run, {**identity, "board_hash": file_hash(text)})
        except ValueError as exc:
            fail(f"board {name}: {exc}")
        boards.append((spec, name, text, run, done))
    writable_folder(out)
    (out / "boards").mkdir(parents=True, exist_ok=True)
    results = []
    for spec, name, text, run, done in boards:
        path = out / "boards" / f"{name}.toml"
        write_atomic(path, text)
        if done:  # played by an earlier sweep into this folder, stopped or not, with the same identity
            typer.echo(f"{name}: {counted(games, 'game')}, finished earlier (kept)", err=True)
            results.append((spec, A.summarize_run_file(run)))
            continue
        typer.echo(f"{name}: {counted(games, 'game')}", err=True)
        try:
            simulate_command(players, games, policies, seed, run, path, options,
                             on_stop=_sweep_kept(out, len(results), len(boards), run))
        except ValueError as exc:
            fail(f"board {name}: {exc}")
        results.append((spec, A.summarize_run_file(run)))
    names = {name for _, name, *_ in boards}
    others = sorted({p.stem for folder, ext in (("boards", "toml"), ("runs", "parquet"))
                     for p in (out / folder).glob(f"*.{ext}") if p.stem not in names})
    if others:
        typer.echo(f"{out} also holds {counted(len(others), 'board')} of earlier sweeps, not in this report (kept): "
                   + ", ".join(others), err=True)
    with progress_bar(None, "report", report_kept(out)):
        report_path = build_sweep_report(results).write(out)
    typer.echo(f"wrote {report_path} and {Path(report_path).with_suffix('.md')}")
