"""Small pieces every command shares: errors, options, progress bars."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Annotated, Callable, Iterator

import typer
from rich.console import Console
from rich.table import Column
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.text import Text

from etappe.analysis.runio import run_file_name_problem
from etappe.kernels.options import is_count_text, policies_by_seat
from etappe.kernels.user_policy import is_user_policy

MAX_SEED = 2**63 - 1  # seeds and game indices travel as 64-bit signed integers
SeedOpt = Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED,
                                      help="Root seed (0 to 2^63-1); game i uses keys derived from (seed, i).")]

# Soft wrap: a line longer than the screen is left for the terminal to wrap,
# never broken by a newline inside a path or a command to copy. No markup:
# what is printed holds the user's text (a design's title, a path), whose
# "[v2]" markup would drop and whose "[/x]" would stop the command; a line
# that styles its own words says markup=True and escapes what it quotes.
console = Console(soft_wrap=True, markup=False)
err_console = Console(stderr=True, soft_wrap=True, markup=False)


def print_file_text(text: str) -> None:
    """The text of a file on stdout (`decks show --toml`, `replay
    --position`), to redirect into a file that etappe reads back: UTF-8
    whatever the locale, as etappe reads its files (a Latin-1 locale wrote
    "coup fourré" in Latin-1, which `decks validate` then refused)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def folding(*headers: str, min_width: int | None = None) -> list[Column]:
    """Table columns that a narrow terminal wraps, never cuts: a count cut
    to "10…" is unreadable, and so is a policy's name with its parameters.
    `min_width`: what one line must hold (RATE_WIDTH: a rate such as 0.123)."""
    return [Column(header, overflow="fold", min_width=min_width) for header in headers]


RATE_WIDTH = 5  # a win rate or an interval bound, "0.123", is never split across lines


def print_error(message: str) -> None:
    """An error on one line (greppable). The message is plain text: escaped,
    so that "[links]" is not read as markup and dropped."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)


def fail(message: str, code: int = 2) -> None:
    """Print a clear error and exit non-zero."""
    print_error(message)
    raise typer.Exit(code)


def parse_options(items: list[str] | None) -> dict:
    """`--option key=value` pairs into a dict (values stay strings; the
    design validates and converts them)."""
    options = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            fail(f"--option {item!r}: expected name=value, a rule option and its value (e.g. --option turn_cap=500; "
                 "`etappe decks show DECK` lists a design's options, docs/bremen.md and docs/etape.md the others')")
        if key.strip() in options:  # the last would win unseen
            fail(f"--option {key.strip()} is given twice ({options[key.strip()]!r} and {value.strip()!r}); give it once")
        options[key.strip()] = value.strip()
    return options


RACE_CHUNK = 50_000  # race games per chunk
RACE_LOOKAHEAD_CHUNK = 500  # where a look-ahead seat plays: 10 to 50 ms a game


def default_chunk(policies, chunk: int, lookahead_chunk: int) -> int:
    """A game's chunk size when --chunk-size is not given: `lookahead_chunk`
    where a look-ahead seat plays, whose games are hundreds of times slower,
    so that a chunk still ends within about a minute: the progress bar moves
    at each, and an interruption loses at most one. A tenth of `chunk`
    where a policy of your own plays, whose speed nobody knows beforehand."""
    if any(str(p).split(":")[0] == "lookahead" for p in policies):
        return lookahead_chunk
    return chunk // 10 if any(is_user_policy(p) for p in policies) else chunk


def around_the_table(policy: str | None, players: int, game: str) -> list[str]:
    """--policy of Bremen or Tape l'étape (`game`) by seat: one for every
    seat, or a list repeated around the table (A,B at 4 seats: A,B,A,B);
    none, the game's default. The player count is checked first, so that a
    count the game does not take is refused before a list of that many
    seats is made."""
    from ..analysis import bremen, etape

    module = {"bremen": bremen, "etape": etape}[game]
    try:
        module.check_players(players)
        return policies_by_seat(split_policies(policy or module.DEFAULT_POLICY), players, module.DEFAULT_POLICY)
    except ValueError as exc:
        fail(str(exc))


OTHER_GAMES = ("etape", "bremen")


def race_designs_only(deck: str, command: str) -> None:
    """Fail naming the command's games, and what the other game offers instead,
    if `deck` is Bremen or Tape l'étape (it would read as a missing design file)."""
    from etappe.analysis.runio import GAME_NAMES, NO_PLAY_BY_PLAY
    from etappe.kernels.race_design import builtin_names

    if deck in OTHER_GAMES:
        instead = (f"{GAME_NAMES[deck]} has no deck design; `etappe policies {deck}` lists its rule options"
                   if command.startswith("decks") else NO_PLAY_BY_PLAY[deck])
        fail(f"{command} is for the race designs ({', '.join(builtin_names())} or a design file); not {deck}. "
             f"{instead}")


def set_threads(threads: int | None) -> None:
    """--threads: Numba threads for this run (None: all cores)."""
    if threads is None:
        return
    import numba

    most = numba.config.NUMBA_NUM_THREADS
    if not 1 <= threads <= most:
        fail(f"--threads must be 1 to {most} (the cores Numba may use here), not {threads}")
    numba.set_num_threads(threads)


def writable_folder(path: Path, what: str = "--out", report: bool = True) -> None:
    """Fail before any work is done if `path` cannot be a folder we write in.
    Nothing is created here (a command refused later leaves no empty
    folder): the folder, or the nearest folder above it that exists, must
    be writable; writing creates the rest. A `report` folder named like a
    report file (my.html) is refused: it would be a folder of that name."""
    if path.exists() and not path.is_dir():
        fail(f"{what} {path}: exists and is not a folder")
    if report and not path.exists() and path.suffix.lower() in (".html", ".htm", ".md"):
        fail(f"{what} {path}: is the folder the report is written in (report.html, report.md and its figures); "
             f"give a folder name, e.g. {path.with_suffix('')}")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        fail(f"{what} {path}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        fail(f"{what} {path}: {existing} is not writable")
    if existing != path:
        # some places refuse a new folder though they look writable (/proc, a full or read-only mount):
        # make it now and take it away again, rather than fail when the work is done
        try:
            path.mkdir(parents=True)
        except OSError as exc:
            fail(f"{what} {path}: cannot make this folder ({exc.strerror}); write to another {what}")
        made = path
        while made != existing:
            made.rmdir()
            made = made.parent


def writable_run_file(path: Path, what: str = "--out") -> None:
    """Fail before any work is done if a run file cannot be written at `path`."""
    if path.is_dir():
        fail(f"{what} {path}: is a folder; give a file name, e.g. {path / 'run.parquet'}")
    if path.suffix != ".parquet":
        # Not silently Parquet under another name: `report` and pandas go by the suffix.
        fail(f"{what} {path}: run files are Parquet (the records, with the run's seed, version and design "
             f"hash in their metadata); give a name ending in .parquet, e.g. {path.with_suffix('.parquet')}")
    if path.name.endswith(".stages.parquet"):
        fail(f"{what} {path}: names ending in .stages.parquet are the stages files beside Tape l'étape runs; "
             "give another name")
    problem = run_file_name_problem(path)
    if problem:
        fail(f"{what} {path}: {problem}")
    writable_folder(path.parent, what, report=False)


def check_policy_list(value: str | None) -> str | None:
    """typer callback of --policy and --policies: the list must split
    (split_policies), so that a slip is refused before any work."""
    if value is not None:
        try:
            split_policies(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return value


def split_policies(text: str) -> list[str]:
    """`greedy,random` -> ['greedy', 'random']; commas inside `name:k=v,k=v`
    belong to the policy, so policies are separated by commas only before a
    name without '='. An empty name ("", ",,", a comma at the end) or a ':'
    with nothing after it is a slip: a ValueError, not the default."""
    parts: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            raise ValueError(f"{text!r} has an empty policy name; give names separated by commas, e.g. greedy,random")
        if piece.endswith(":"):
            raise ValueError(f"{text!r} has a ':' with no parameters after it; e.g. greedy:attack=1")
        if parts and "=" in piece and ":" not in piece:
            parts[-1] += "," + piece
        else:
            parts.append(piece)
    return parts


class _Count(MofNCompleteColumn):
    """done/total; nothing on the line of a step of unknown length."""

    def render(self, task):
        return Text("") if task.fields.get("stage") else super().render(task)


class _Left(TimeRemainingColumn):
    """Time left; nothing on the line of a step of unknown length."""

    def render(self, task):
        return Text("") if task.fields.get("stage") else super().render(task)


STAGED_WORK = "report"  # the one kind of work done in stages (Bar.stage): a report, section by section


class Bar:
    """What progress_bar yields. `bar(n)`: n more done. `bar.stage(step)`:
    a step of work whose length is not known ahead (building a report,
    section by section), shown as "report: step" with its elapsed time, on
    the bar's own line when the bar has no total, else on a line below it;
    once the bar finishes, that line says "report: done"."""

    def __init__(self, progress: Progress, task, what: str, total: int | None, compiles: bool = False):
        self._progress, self._task, self._what = progress, task, what
        self._stage = task if total is None else None
        self._compiling = compiles
        if compiles:
            progress.update(task, description=f"{what} ({COMPILING})")
        self._lock = threading.Lock()
        self._shown = self._closed = False

    def show(self) -> None:
        """Start drawing (the first progress, or the timer of progress_bar)."""
        with self._lock:
            if not (self._shown or self._closed):
                self._shown = True
                self._progress.start()

    def close(self) -> None:
        with self._lock:
            if self._shown and not self._closed:
                self._progress.stop()
            self._closed = True

    def __call__(self, n: int) -> None:
        _raise_if_signalled()
        self.show()
        if self._compiling:
            self._compiling = False
            self._progress.update(self._task, description=self._what)
        self._progress.advance(self._task, n)

    def done_quietly(self, n: int = 1) -> None:
        """n more done, without making the bar appear: a step over within
        SHOW_BAR_AFTER shows no bar; a longer one, shown by then, ends full."""
        _raise_if_signalled()
        self._progress.advance(self._task, n)

    def stage(self, step: str) -> None:
        self.show()
        text = f"{STAGED_WORK}: {step}"
        if self._stage is None:
            self._stage = self._progress.add_task(text, total=None, stage=True)
        else:
            self._progress.update(self._stage, description=text)

    def say(self, text: str) -> None:
        """A line for the user, above the bar."""
        self._progress.console.print(text, highlight=False)

    def finish(self) -> None:
        """Show the work of unknown length as done (a full bar)."""
        if self._stage is not None:
            self._progress.update(self._stage, description=f"{STAGED_WORK}: done", total=1, completed=1)


SHOW_BAR_AFTER = 0.5  # seconds: a command refused at once (bad policy, option) shows no empty bar
COMPILING = "compiling the kernels"


RESUMES = "A run with --out keeps every finished chunk: the same command resumes it."
NOTHING_KEPT = "Nothing is kept: the same command starts afresh."
# What Ctrl-C outside any bar says (the start, checking the arguments, the last printing): every file is
# written whole (a temporary name, then a rename), so whatever the command wrote before is complete.
INTERRUPTED_ELSEWHERE = "Every file it wrote is complete: the same command goes on from them."
_told = threading.Event()  # set once a bar has said what an interruption kept
_signalled = threading.Event()  # set by the `etappe` command's Ctrl-C / SIGTERM handler


def interrupt(signum, frame) -> None:
    """The `etappe` command's handler of Ctrl-C and SIGTERM: KeyboardInterrupt,
    and a note that it came. Raised while Numba passes a policy to a kernel,
    it comes out as a TypeError or KeyError instead (Numba's unboxing of
    first-class functions, about one interruption in forty that land in a
    kernel call): progress_bar takes those for the interruption they are.
    Raised while pyarrow converts a frame to write it, it is lost (pyarrow
    asks pandas for attributes where any exception means "none"; 3 of 120
    interrupted Tape l'étape runs with --out): a bar raises it again at its
    next step, or as it ends."""
    _signalled.set()
    raise KeyboardInterrupt


def _raise_if_signalled() -> None:
    """KeyboardInterrupt where Ctrl-C came and its exception was lost (`interrupt`)."""
    if _signalled.is_set():
        raise KeyboardInterrupt


def say_interrupted(kept: str) -> None:
    """The one line Ctrl-C prints (on stderr): "interrupted." and what is kept, how to go on."""
    _told.set()
    err_console.print(f"interrupted. {kept}", highlight=False)


def interruption_told(forget: bool = False) -> bool:
    """Whether a bar has printed what an interruption kept (main() prints a
    line otherwise); `forget`: start afresh (a new command)."""
    if forget:
        _told.clear()
        _signalled.clear()
    return _told.is_set()


def kept_in(*where: Path, what: str = "The finished chunks are"):
    """The interruption line of work saved as it goes (in a checkpoint file,
    or chunk files in a folder): where it is and that the same command
    resumes; that nothing is kept where nothing was saved yet (stopped while
    the kernels compiled, or in the first chunk). A callable: progress_bar
    asks it when interrupted."""
    def text() -> str:
        first = Path(where[0])
        if first.is_file() or (first.is_dir() and any(first.glob("chunk-*.parquet"))):
            return f"{what} kept in {' and '.join(map(str, where))}: the same command resumes from there."
        return "Nothing is kept: no chunk was finished yet; the same command starts afresh."
    return text


def report_kept(out) -> str:
    """The interruption line of writing a report: its files are written whole, the HTML last."""
    return f"The report in {out} is not (completely) written: the same command writes it anew."


def joining_kept(runs) -> Callable[[], str]:
    """The interruption line of joining chunks into run files, as things stand when it comes: the chunks
    are all still there, or the files are written whole and only their chunks folders are left."""
    def said() -> str:
        if all(r.out.exists() for r in runs):
            return (f"{' and '.join(str(r.out) for r in runs)} hold the whole run; the same command removes the "
                    "chunks folders left beside them.")
        folders = " and ".join(str(r.parts) for r in runs)
        return (f"The run's chunks are all still in {folders}: the same command joins them into "
                f"{runs[0].out}, playing nothing again.")
    return said


@contextlib.contextmanager
def progress_bar(total: int | None, what: str, resumable: bool | str | Callable[[], str] = True,
                 compiles: bool = False) -> Iterator[Bar]:
    """A progress bar on stderr (total None: of unknown length); yields a
    Bar. It appears at the first progress or after SHOW_BAR_AFTER seconds
    (a cold compile shows it, with its elapsed time; with `compiles` it
    says so until the first progress, which the commands report, as 0,
    once the kernels are loaded: half a minute on a first run, a blink
    once they are cached, when the bar is not yet shown). Ctrl-C ends the
    command with one line: "interrupted." and what was kept, how to go on:
    `resumable` as that text (or what it returns, if callable), or True for the resuming of a run with --out
    (RESUMES), False for nothing kept (NOTHING_KEPT)."""
    progress = Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(), _Count(),
                        TimeElapsedColumn(), _Left(),
                        console=err_console, transient=False)
    task = progress.add_task(what, total=total, stage=total is None)
    _told.clear()
    bar = Bar(progress, task, what, total, compiles=compiles)
    timer = threading.Timer(SHOW_BAR_AFTER, bar.show)
    timer.daemon = True
    timer.start()
    try:
        try:
            yield bar
            _raise_if_signalled()
        except Exception as exc:
            if not _signalled.is_set():
                raise
            raise KeyboardInterrupt from exc  # an interruption Numba turned into another exception (`interrupt`)
        bar.finish()
    except KeyboardInterrupt:
        bar.close()
        if not _told.is_set():  # a bar within this one has said it already
            say_interrupted(resumable() if callable(resumable) else resumable if isinstance(resumable, str)
                            else RESUMES if resumable else NOTHING_KEPT)
        raise
    finally:
        timer.cancel()
        bar.close()


def print_policy_listing(table, parameter_ranges: dict, option_defaults: dict, option_ranges: dict,
                         option_choices: dict, doc: str) -> None:
    """`etappe policies GAME` for the games with their own policies: the
    policy table, each parameter's valid values, then the rule options with
    their defaults written as on the command line, and their (lowest,
    highest) ranges or choices where they have them."""
    from etappe.kernels.options import option_text

    console.print(table)
    console.print("set parameters with name:key=value,...; valid values:")
    for key, (must_be, _) in parameter_ranges.items():
        console.print(f"  {key}: {must_be}", highlight=False)
    console.print(f"rule options (--option name=value), defaults (meanings in {doc}):")
    for name, default in option_defaults.items():
        limits, choices = option_ranges.get(name), option_choices.get(name)
        if isinstance(default, bool):
            choices = (True, False)
        console.print(f"  {option_text({name: default})}" + (f" ({limits[0]} to {limits[1]})" if limits else "")
                      + (f" (or {' | '.join(option_text({'': c})[1:] for c in choices if c != default)})"
                         if choices else ""), highlight=False)


def print_seat_summary(winners, players: int, games: int, undecided: str, extra: str,
                       policies: list[str] | None = None) -> None:
    """The short table `simulate` prints: wins per seat with 95 % intervals,
    among the games with a sole winner (winner >= 0), so that a fair share is
    1 / players; `undecided` says what the others are (e.g. "without a winner (turn cap)").
    With `policies` (by seat; they keep their seats) the seat table names them, and
    where they differ a table by policy follows: a policy on k seats wins at most
    one of them a game, so its interval is Wilson's over the games, divided by k."""
    import numpy as np
    from rich.table import Table

    from etappe.analysis.stats import counted, wilson_interval

    winners = np.asarray(winners)
    decided = int((winners >= 0).sum())

    def rate_cells(wins: int, seats: int) -> list[str]:
        if not decided:  # no decided game: no rate to show
            return ["-", "-"]
        low, high = wilson_interval(wins, decided)
        return [f"{wins / (decided * seats):.3f}", f"{low / seats:.3f} - {high / seats:.3f}"]

    named = ["policy"] if policies else []
    table = Table(*folding("seat", *named, "wins"), *folding("win rate", "95 % interval", min_width=RATE_WIDTH),
                  title=f"summary (among the {counted(decided, 'decided game')})")
    for seat in range(players):
        wins = int((winners == seat).sum())
        table.add_row(str(seat), *([policies[seat]] if policies else []), str(wins), *rate_cells(wins, 1))
    console.print(table)
    if policies and len(set(policies)) > 1:
        by_policy = Table(*folding("policy", "seats", "wins"),
                          *folding("win rate per seat", "95 % interval", min_width=RATE_WIDTH),
                          title="by policy (a policy on k seats wins at most one of them a game)")
        for name in dict.fromkeys(policies):
            seats = [s for s, p in enumerate(policies) if p == name]
            wins = int(np.isin(winners, seats).sum())
            by_policy.add_row(name, ",".join(map(str, seats)), str(wins), *rate_cells(wins, len(seats)))
        console.print(by_policy)
    console.print(f"{counted(games, 'game')}, {games - decided} {undecided}; {extra}", highlight=False)


def play_time_text(seconds: float, count: int, unit: str) -> str:
    """The summaries' playing time and speed: "0.52 s of play (1,923 games/s"
    (left open: each summary says after it what the time leaves out)."""
    return f"{seconds:.2f} s of play ({count / max(seconds, 1e-9):,.0f} {unit}/s"


def say_written(what: str, seconds: float) -> None:
    """The line after a run file is joined: what was written, and the time
    writing took (each chunk as it finished, then the join), which in a long
    run is as long as the games themselves and is not in their speed."""
    console.print(f"wrote {what}; {seconds:.2f} s writing the records (each chunk as it finished, then the "
                  "joined file), not in the speed of play", highlight=False)


def say_nothing_to_play(out) -> None:
    """What `simulate` says when its --out file already holds the run (it then
    prints the run's summary from the file)."""
    err_console.print(f"{out} already holds this run: nothing to play; its summary", highlight=False)


ShareOpt = Annotated[str | None, typer.Option(
    "--share", help="K/M: play only share K of M of the run's chunks (chunks K, K+M, K+2M, ..., counted from 1), "
    "to spread one run over M machines with the same command; needs --out. Once every share's chunks are in "
    "OUT.parts, the command without --share joins them.")]


def parse_share(text: str | None) -> tuple[int, int] | None:
    """--share "K/M" as (K, M), 1 <= K <= M; None without one."""
    if text is None:
        return None
    k, _, m = text.partition("/")
    if not (is_count_text(k.strip()) and is_count_text(m.strip())) or not 1 <= int(k) <= int(m):
        fail(f"--share {text}: give K/M, share K of M machines, with 1 <= K <= M (e.g. 2/4)")
    return int(k), int(m)


def in_share(share: tuple[int, int] | None, index: int) -> bool:
    """Whether chunk `index` (from 0) is this process's to play: every chunk
    without a share; chunks K-1, K-1+M, ... for share K of M."""
    return share is None or index % share[1] == share[0] - 1


def chunk_count(total: int, chunk: int) -> int:
    """Chunks of `chunk` games (races) that a run of `total` is played in."""
    return -(-total // chunk)


def games_in_chunks(total: int, chunk: int, keep) -> int:
    """Games (races) of a run of `total` in chunks of `chunk` held by the
    chunks whose index `keep(index)` is true."""
    return sum(min(chunk, total - first) for index, first in enumerate(range(0, total, chunk)) if keep(index))


def share_games(share: tuple[int, int] | None, total: int, chunk: int) -> int:
    """Games (races) of a run of `total` in chunks of `chunk` that the share plays."""
    return games_in_chunks(total, chunk, lambda index: in_share(share, index))


def check_share(share: tuple[int, int] | None, n_chunks: int, chunk: int, unit: str) -> None:
    """Refuse a share that would hold no chunk of the run."""
    from etappe.analysis.stats import counted

    if share is not None and share[0] > n_chunks:
        fail(f"--share {share[0]}/{share[1]}: the run has {counted(n_chunks, 'chunk')} of {chunk:,} {unit}, so "
             f"share {share[0]} has none; use at most {counted(n_chunks, 'share')}, or a smaller --chunk-size")


def say_share_written(share: tuple[int, int], runs, n_chunks: int) -> None:
    """What a --share run says at its end, instead of joining the run: its
    chunks are saved; how many of the run's chunks are there; how to finish."""
    there = sum(all(r.done(i) for r in runs) for i in range(n_chunks))
    parts = runs[0].parts
    err_console.print(f"share {share[0]}/{share[1]}: its chunks are saved in {parts}; {there} of the run's "
                      f"{n_chunks} chunks are there. Once every share's chunks are in that folder, run the same "
                      f"command without --share: it joins them into {runs[0].out} (and plays any chunk still "
                      "missing).", highlight=False)


def resume_in_chunks_of(run, asked: int, total: int, unit: str) -> int:
    """The chunk size to play a run of `total` games (or races) in: that of
    the interrupted run whose finished chunks `run` (a ChunkedRun) found,
    whatever size was asked for now; it says how much was already played."""
    chunk = run.chunk_size
    done = games_in_chunks(total, chunk, run.done)
    if done:
        other = f", in its chunks of {chunk:,} (not --chunk-size {asked:,}: the records are the same)" \
            if chunk != asked else ""
        err_console.print(resumed_text(run.out, done, total, unit) + other, highlight=False)
    return chunk


def resumed_text(where, done: int, total: int, unit: str) -> str:
    """What a command says when it finds work of an earlier run of it (an
    interrupted run, or another share's chunks) and goes on from there."""
    return f"resuming the run at {where}: {done:,} of {total:,} {unit} already played"


def run_file_game(run: Path) -> str | None:
    """The game of a run file given to `etappe report` or `replay` ("race",
    "etape", "bremen"); fails with what the file is where it is not a run file."""
    from etappe.analysis.runio import read_metadata

    if not run.exists():
        parts = run.with_name(run.name + ".parts")
        if parts.is_dir():  # an interrupted (or shared) run: its chunks are there, not yet joined
            fail(f"{run}: no such run file yet: {parts.name} holds the chunks of an unfinished run; the "
                 f"same `etappe simulate` command finishes the run and joins them into {run.name}")
        fail(f"{run}: no such run file")
    if run.is_dir():
        fail(f"{run}: a folder, not a run file (the Parquet file `etappe simulate --out` writes)")
    if run.parent.name.endswith(".parts"):
        fail(f"{run}: one chunk of an unfinished run; the same `etappe simulate` command finishes the run "
             f"and joins its chunks into {run.parent.name[:-len('.parts')]}")
    try:
        game = read_metadata(run).get("game")
    except (OSError, ValueError) as exc:
        why = str(exc).removeprefix(f"{run}: ")  # the reader names the file too
        fail(f"{run}: not a run file written by `etappe simulate --out` ({why})")
    if game == "etape" and run.name.endswith(".stages.parquet"):
        fail(f"{run}: this is the stages file of a Tape l'étape run; give the run file "
             f"{run.name[:-len('.stages.parquet')]}.parquet (its stages are read beside it)")
    return game
