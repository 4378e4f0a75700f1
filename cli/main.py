"""The `etappe` command: simulations, reports and comparisons of tabletop race games."""
from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from etappe.analysis.runio import GAME_NAMES
from etappe.kernels.options import option_text
from etappe.kernels.race_design import builtin_names

from . import race_cmds
from .bremen import app as bremen_app
from .common import (OTHER_GAMES, race_designs_only, MAX_SEED, RACE_CHUNK, RACE_LOOKAHEAD_CHUNK, SeedOpt, ShareOpt, around_the_table, console,
                     default_chunk, fail, parse_options, parse_share,
                     check_policy_list, play_time_text, print_error, print_seat_summary, progress_bar, resumed_text, run_file_game, set_threads, split_policies, writable_run_file,
                     writable_folder)
from .common import INTERRUPTED_ELSEWHERE, interrupt, interruption_told, kept_in, say_interrupted
from .race_cmds import DeckArg, OptionOpt, PlayersOpt

INTERRUPTED_CODE = 130  # typer's exit status on Ctrl-C (128 + SIGINT)

app = typer.Typer(
    help="Monte Carlo strategy analysis for tabletop race games: Stap op, Mille Bornes, Touring "
         "(and any deck design you write), Bremer Stadtmusikanten, Tape l'étape.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(race_cmds.decks_app, name="decks")
app.add_typer(bremen_app, name="bremen", help="Bremer Stadtmusikanten: board sweep (simulate and report are `etappe simulate bremen` and `etappe report`).")


def _print_version(asked: bool) -> None:
    if asked:
        from etappe.analysis.runio import package_version

        print(f"etappe {package_version()}")  # as run files and reports record it
        raise typer.Exit()


@app.callback()
def global_options(version: Annotated[bool, typer.Option(
        "--version", callback=_print_version, is_eager=True,
        help="Print the version (and source hash) that runs record, and exit.")] = False) -> None:
    pass  # the options before any command; the app's help is Typer's `help` above


def check_game_or_design(deck: str) -> None:
    """Fail at once, naming every valid choice and the nearest, if `deck` is
    neither one of the other games, a built-in design nor a file."""
    if Path(deck).is_dir():
        fail(f"{deck}: is a folder; give a design file (TOML), a built-in design ({', '.join(builtin_names())}) "
             f"or {' or '.join(OTHER_GAMES)}")
    if deck in OTHER_GAMES or deck in builtin_names() or Path(deck).exists():
        return
    close = difflib.get_close_matches(deck, [*builtin_names(), *OTHER_GAMES], n=1)
    fail(f"{deck}: not a game (the race designs {', '.join(builtin_names())}; {' and '.join(OTHER_GAMES)}) "
         "and no such design file" + (f"; did you mean {close[0]!r}?" if close else ""))


POLICIES_BY_SEAT = "Policies by seat: greedy,random,... repeated around the table (A,B at 4 seats: A,B,A,B)."
# Help texts are Rich markup: the backslash keeps "[etape|bremen]" from being read as a tag and dropped.
PolicyOpt = Annotated[Optional[str], typer.Option(
    "--policy", callback=check_policy_list, help=f"{POLICIES_BY_SEAT} See `etappe policies \\[etape|bremen]`; defaults: greedy (race games, "
    "Bremen), heuristic (Tape l'étape).")]
ComparePolicyOpt = Annotated[Optional[str], typer.Option(
    "--policy", callback=check_policy_list, help=f"{POLICIES_BY_SEAT} See `etappe policies \\[etape|bremen]`; defaults: greedy (race games, Bremen), "
    "heuristic (Tape l'étape). With --sequential and one design, "
    "A,B plays policy A against B.")]
SweepPolicyOpt = Annotated[Optional[str], typer.Option(
    "--policy", callback=check_policy_list, help=f"{POLICIES_BY_SEAT} See `etappe policies`; default greedy.")]
ReplayPolicyOpt = Annotated[Optional[str], typer.Option(
    "--policy", callback=check_policy_list, help=f"{POLICIES_BY_SEAT} As in the run replayed; default greedy.")]
MAX_CHUNK = 1_000_000  # games held in memory at once; a bigger chunk only costs memory
ChunkOpt = Annotated[Optional[int], typer.Option(
    "--chunk-size", min=1, max=MAX_CHUNK, help="Games per chunk saved to disk as it finishes (default: 50,000 for "
    "the race games, 2,000 races of Tape l'étape, 20,000 Bremen games; where a look-ahead seat plays 500, 200 and 20; "
    "where a policy of your own plays a tenth; at most 1,000,000).")]
SeatingOpt = Annotated[Optional[str], typer.Option("--seating", help="Race games: fixed (default): policies keep their "
                                                    "seats; rotate: they move one seat on each game.")]
SEATING_RACE_ONLY = ("--seating is for the race games: Tape l'étape rotates seats by its rule option rotate_seats, "
                     "and Bremen draws the first player of each game")
ThreadsOpt = Annotated[Optional[int], typer.Option("--threads", min=1, help="Numba threads (default: all cores); results do not depend on it.")]
MAX_TOURNAMENT_GAMES = 10**8


@app.command()
def simulate(
    deck: Annotated[str, typer.Argument(help="stapop, millebornes, touring, a design TOML file; or etape, bremen.")],
    players: Annotated[Optional[int], typer.Option("--players", "-p", help="Number of players (default 4).")] = None,
    games: Annotated[int, typer.Option("--games", "-n", min=1, max=MAX_SEED, help="Games (races) to play.")] = 10_000,
    policy: PolicyOpt = None,
    seed: SeedOpt = 0,
    out: Annotated[Optional[Path], typer.Option("--out", help="Parquet file for the records; an interrupted run resumes.")] = None,
    option: OptionOpt = None,
    seating: SeatingOpt = None,
    threads: ThreadsOpt = None,
    chunk_size: ChunkOpt = None,
    board: Annotated[Optional[Path], typer.Option("--board", help="bremen: board TOML file (default: the reconstruction).")] = None,
    share: ShareOpt = None,
) -> None:
    """Play games and print a summary; with --out, write the records as Parquet."""
    set_threads(threads)
    share_of = parse_share(share)
    if share_of is not None and out is None:
        fail("--share needs --out: a share's chunks are saved beside the run file, to be joined with the others'")
    if board is not None and deck != "bremen":
        fail("--board is for bremen only")
    if deck in OTHER_GAMES and seating is not None:  # --seating fixed too: Tape l'étape rotates by default
        fail(SEATING_RACE_ONLY)
    check_game_or_design(deck)
    if out is not None:
        writable_run_file(out)
    if deck in OTHER_GAMES and players is None:
        players = 4  # the race designs' default is checked against the design (race_cmds.make_run)
    if deck == "etape":
        from .etape import print_summary, simulate_command

        try:
            races, _ = simulate_command(players, games, around_the_table(policy, players, "etape"),
                                        seed, out, parse_options(option), chunk_size, share=share_of)
        except ValueError as exc:
            fail(str(exc))
        print_summary(races)
        return
    if deck == "bremen":
        from .bremen import simulate_command

        try:
            frame = simulate_command(players, games, around_the_table(policy, players, "bremen"),
                                     seed, out, board, parse_options(option), chunk_size, share=share_of)
        except ValueError as exc:
            fail(str(exc))
        wall = frame.attrs["wall_seconds"]
        print_seat_summary(frame["winner_seat"], players, len(frame), "without a winner (turn cap)",
                           f"{frame['turns'].mean():.1f} turns per game; {play_time_text(wall, len(frame), 'games')}; "
                           "compiling or loading the kernel not counted)", frame.attrs["policies"])
        return
    policy = policy or "greedy"
    race_cmds.simulate_race(deck, players, games, policy, seed, out, option, seating or "fixed",
                            chunk_size or default_chunk(split_policies(policy), RACE_CHUNK, RACE_LOOKAHEAD_CHUNK), share_of)


@app.command()
def report(
    run: Annotated[Path, typer.Argument(help="Run file written by `etappe simulate --out`.")],
    run_b: Annotated[Optional[Path], typer.Argument(help="A second run file, played with the same players, policies and seating (and seed, to pair the games on common random numbers; for etape and bremen, the same seed and number of games): the comparison report of the two, as `etappe compare` writes it.")] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for report.html, report.md and figures.")] = Path("report"),
) -> None:
    """Write the balance report of a run, or the comparison report of two runs (HTML and a Markdown twin)."""
    game = run_file_game(run)
    if run_b is not None and run_file_game(run_b) != game:
        fail(f"{run} is a run of {GAME_NAMES.get(game, game)} and {run_b} of {GAME_NAMES.get(run_file_game(run_b))}: the "
             "comparison report is of two runs of the same game")
    writable_folder(out)
    if run_b is not None and game in OTHER_GAMES:
        from .report_cmds import compare_variant_runs as compare_runs
    elif run_b is not None:
        from .report_cmds import compare_runs
    elif game == "etape":
        from .etape import report_command
    elif game == "bremen":
        from .bremen import report_command
    else:
        from .report_cmds import report_command
    try:
        path = compare_runs(run, run_b, out) if run_b is not None else report_command(run, out)
    except ValueError as exc:  # e.g. a run file with no complete game, or two runs that cannot be compared
        fail(str(exc) if run_b is not None else f"{run}: {exc}")
    console.print(f"wrote {path} and {Path(path).with_suffix('.md')}")


@app.command()
def compare(
    deck_a: Annotated[str, typer.Argument(help="First design (built-in name or TOML file); or etape or bremen, to compare two variants of that game (--option-b, and for bremen --board-b).")],
    deck_b: Annotated[Optional[str], typer.Argument(help="Second design (default: the first, with --option-b).")] = None,
    players: Annotated[Optional[int], typer.Option("--players", "-p", help="Number of players (default: 2 for the race designs, 4 for etape and bremen).")] = None,
    games: Annotated[int, typer.Option("--games", "-n", min=1, max=MAX_SEED, help="Games per design (paired on the same seeds); with --sequential, the most games played.")] = 10_000,
    policy: ComparePolicyOpt = None,
    seed: SeedOpt = 0,
    option: Annotated[Optional[list[str]], typer.Option("--option", "-o", help="Rule option key=value for design A (and B unless --option-b).")] = None,
    option_b: Annotated[Optional[list[str]], typer.Option("--option-b", help="Rule option key=value for design B only.")] = None,
    seating: SeatingOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for the comparison report (default: compare; with --sequential, no report unless given).")] = None,
    threads: ThreadsOpt = None,
    chunk_size: Annotated[Optional[int], typer.Option("--chunk-size", min=1, max=MAX_CHUNK, help="Games per design played and summarized at a time (default: 50,000 for the race designs, 2,000 races of Tape l'étape, 2,000 Bremen games; where a look-ahead seat plays 500, 200 and 20, where a policy of your own plays a tenth; at most 1,000,000); the running summaries are saved after each, so an interrupted comparison resumes (not used with --sequential).")] = None,
    sequential: Annotated[bool, typer.Option("--sequential", help="Play until the difference is decided (Sobel-Wald sequential test) instead of a fixed number of games.")] = False,
    # None where not given: without --sequential they are refused, not silently ignored
    metric: Annotated[Optional[str], typer.Option("--metric", help="With --sequential and two designs: the per-game metric compared (a column of the per-game table, e.g. game_turns, lead_changes, hazard_decided; an unknown name lists them all; default game_turns).")] = None,
    alpha: Annotated[Optional[float], typer.Option("--alpha", help="With --sequential: chance of a false 'different', 0 to 1 (default 0.05).")] = None,
    beta: Annotated[Optional[float], typer.Option("--beta", help="With --sequential: chance of missing a difference of delta, 0 to 0.5 (default 0.05).")] = None,
    delta: Annotated[Optional[float], typer.Option("--delta", help="With --sequential: smallest difference in the share of games that matters, 0 to 0.5 (default 0.05).")] = None,
    board: Annotated[Optional[Path], typer.Option("--board", help="bremen: board TOML file of both variants (default: the reconstruction).")] = None,
    board_b: Annotated[Optional[Path], typer.Option("--board-b", help="bremen: board TOML file of variant B only.")] = None,
) -> None:
    """Compare two designs (or one design under two rule options) on the same seeds.

    Writes a side-by-side report with the headline answer first and every
    metric's paired difference with its interval (Holm-corrected). For
    etape and bremen: two variants of the game (rule options, boards)."""
    set_threads(threads)
    given = [flag for flag, value in (("--metric", metric), ("--alpha", alpha), ("--beta", beta), ("--delta", delta))
             if value is not None]
    if given and deck_a in OTHER_GAMES:
        fail(f"{', '.join(given)}: for the race designs' --sequential only; a comparison of two variants of "
             f"{deck_a} reports every metric, Holm-corrected")
    if given and not sequential:
        fail(f"{', '.join(given)}: for --sequential only; a comparison of a fixed number of games reports every "
             "metric, Holm-corrected")
    if deck_a in OTHER_GAMES:
        compare_variants_of(deck_a, deck_b, 4 if players is None else players, games, policy, seed, option, option_b, seating, out,
                            chunk_size, sequential, board, board_b)
        return
    seating = seating or "fixed"
    if board is not None or board_b is not None:
        fail("--board and --board-b are for bremen only")
    if deck_b in OTHER_GAMES:
        fail(f"{deck_b} is another game than {deck_a}: a race design is compared with a race design; two "
             f"variants of {deck_b}: `etappe compare {deck_b} --option-b NAME=VALUE`")
    players = 2 if players is None else players  # not `or`: --players 0 is refused by the design, not read as 2
    two_designs = deck_b is not None or bool(option_b)
    if not two_designs and not sequential:
        fail("give a second design, or --option-b to compare one design under two rule options")
    if sequential and chunk_size is not None:
        fail("--chunk-size is not used with --sequential: it looks at the games one by one until the test decides")
    if sequential and not two_designs and metric is not None:
        fail("--metric is for --sequential with two designs; with one design and --policy A,B it counts the games "
             "A's side won")
    chunk_size = chunk_size or default_chunk(split_policies(policy or "greedy"), RACE_CHUNK, RACE_LOOKAHEAD_CHUNK)
    options_a = parse_options(option)
    options_b = {**options_a, **parse_options(option_b)}
    if not sequential:
        out = out or Path("compare")
    if out is not None:
        writable_folder(out)
    if sequential:
        from .tournament_cmds import sequential_command

        if seating != "fixed":
            fail("--seating rotate is not available with --sequential (its games are paired on the same seats)")
        # One design and two policies (--policy A,B): policy A against B; else design A against B.
        sequential_command(deck_a, policy or "greedy", players, seed, option,
                           deck_b=(deck_b or deck_a) if two_designs else None,
                           option_b=[option_text({k: v}) for k, v in options_b.items()] if two_designs else None,
                           metric=metric or "game_turns", alpha=0.05 if alpha is None else alpha,
                           beta=0.05 if beta is None else beta, delta=0.05 if delta is None else delta,
                           max_games=games, out=out)
        return
    from etappe.analysis.race import DesignError
    from etappe.kernels.race_design import UnusedOptionError
    from etappe.kernels.race_policies import PolicyError

    from .report_cmds import compare_designs

    totals = {"a": 0, "b": 0}
    try:
        on_stop = kept_in(out / ".compare-checkpoint.pkl", what="The summaries of the finished chunks are")
        with progress_bar(2 * games, f"{deck_a} vs {deck_b or deck_a}", on_stop, compiles=True) as bar:
            def progress(side, done):
                bar(done - totals[side])
                totals[side] = done

            path = compare_designs(deck_a, deck_b or deck_a, out, players=players, games=games,
                                   policies=split_policies(policy or "greedy"), seed=seed, options_a=options_a,
                                   options_b=options_b, seating=seating, chunk_size=chunk_size, progress=progress,
                                   on_section=bar.stage,
                                   on_resume=lambda done: bar.say(resumed_text(out, done, games, "games per design")))
    except UnusedOptionError as exc:
        both = exc.key in options_a and two_designs
        fail(f"{exc}{'; --option (-o) applies to both designs, --option-b to design B alone' if both else ''}")
    except (DesignError, PolicyError, ValueError) as exc:
        fail(str(exc))
    console.print(f"wrote {path} and {Path(path).with_suffix('.md')}")


def compare_variants_of(game: str, deck_b: str | None, players: int, games: int, policy: str | None, seed: int,
                        option: list[str] | None, option_b: list[str] | None, seating: str | None, out: Path | None,
                        chunk_size: int | None, sequential: bool, board: Path | None, board_b: Path | None) -> None:
    """`etappe compare etape|bremen`: two variants of the game, paired game by game."""
    if deck_b is not None and deck_b != game:
        fail(f"compare {game} compares two variants of {game}, not two games: give --option-b"
             f"{' or --board-b' if game == 'bremen' else ''} for variant B instead of {deck_b!r}")
    if sequential:
        fail("--sequential is for the race designs")
    if seating is not None:
        fail(SEATING_RACE_ONLY)
    if game == "etape" and (board is not None or board_b is not None):
        fail("--board and --board-b are for bremen only")
    if not option_b and board_b is None:
        fail(f"give --option-b{' or --board-b' if game == 'bremen' else ''}: what variant B changes")
    out = out or Path("compare")
    writable_folder(out)
    from . import bremen, etape
    from .report_cmds import compare_game_variants

    policies = around_the_table(policy, players, game)
    chunks = {"bremen": (bremen.COMPARE_CHUNK, bremen.LOOKAHEAD_CHUNK), "etape": (etape.CHUNK, etape.LOOKAHEAD_CHUNK)}
    options_a = parse_options(option)
    try:
        path = compare_game_variants(game, players, games, policies, seed, options_a,
                                     {**options_a, **parse_options(option_b)}, out,
                                     chunk_size or default_chunk(policies, *chunks[game]), board, board_b)
    except ValueError as exc:
        fail(str(exc))
    console.print(f"wrote {path} and {Path(path).with_suffix('.md')}")


@app.command()
def sweep(
    deck: DeckArg,
    setting: Annotated[list[str], typer.Option("--set", help="The design file's setting and its values: PATH=V1,V2,... with PATH dotted as in the file: cards.KEY.FIELD (cards.stop.count=3,5,8), options.NAME, target.trip, players.N.trip, scoring.NAME, design.hand_size. One setting a sweep.")],
    players: PlayersOpt = 2,
    games: Annotated[int, typer.Option("--games", "-n", min=1, max=MAX_SEED, help="Games per value (and for the design as written), on the same seeds.")] = 10_000,
    policy: SweepPolicyOpt = None,
    seed: SeedOpt = 0,
    option: OptionOpt = None,
    seating: SeatingOpt = None,
    out: Annotated[Path, typer.Option("--out", help="Folder for the sweep report.")] = Path("sweep"),
    threads: ThreadsOpt = None,
    chunk_size: Annotated[Optional[int], typer.Option("--chunk-size", min=1, max=MAX_CHUNK, help="Games per design played and summarized at a time (default: 50,000; 500 where a look-ahead seat plays, 5,000 where a policy of your own plays); the summaries are saved after each, so an interrupted sweep resumes.")] = None,
) -> None:
    """Play one setting of a design file at several values and report what it changes.

    Each value plays the same seeds as the design as written and is compared with it game by game
    (paired differences, Holm-corrected over the whole sweep)."""
    from etappe.analysis.race import DesignError
    from etappe.kernels.race_policies import PolicyError

    from .report_cmds import sweep_command

    set_threads(threads)
    if deck in OTHER_GAMES:
        boards = ", or `etappe bremen sweep` for boards" if deck == "bremen" else ""
        fail(f"sweep is for the race designs, whose settings are data in a design file; not {deck}. A rule "
             f"option of {deck}: `etappe compare {deck} --option-b NAME=VALUE`, one per value{boards}")
    if len(setting) > 1:  # the last would win unseen
        fail(f"--set is given {len(setting)} times ({', '.join(setting)}); a sweep varies one setting: run one sweep "
             "for each")
    writable_folder(out)
    try:
        policies = split_policies(policy or "greedy")
        path = sweep_command(deck, setting[0], players, games, policies, seed, parse_options(option), seating or "fixed", out,
                             chunk_size or default_chunk(policies, RACE_CHUNK, RACE_LOOKAHEAD_CHUNK))
    except (DesignError, PolicyError, ValueError) as exc:
        fail(str(exc))
    console.print(f"wrote {path} and {Path(path).with_suffix('.md')}")


@app.command()
def tournament(
    deck: DeckArg,
    policies: Annotated[str, typer.Option("--policies", callback=check_policy_list, help="Policies, comma separated (at least two).")],
    players: PlayersOpt = 2,
    games: Annotated[int, typer.Option("--games", "-n", min=1, max=MAX_TOURNAMENT_GAMES, help="Games per pairing (at most 10^8: every game's outcome is kept for the bootstrap).")] = 2000,
    seed: SeedOpt = 0,
    option: OptionOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for the report.")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples over game indices for the rating intervals (0: Fisher information, which treats the pairings as independent although they share deals, and can be too narrow).")] = 200,
    anchor: Annotated[Optional[str], typer.Option("--anchor", help="Policy fixed at Elo 0.")] = None,
    threads: ThreadsOpt = None,
) -> None:
    """Round robin of policies on the same seeds: head-to-head matrix and Bradley-Terry / Elo ratings."""
    from .tournament_cmds import tournament_command

    set_threads(threads)
    if deck in OTHER_GAMES:
        fail(f"tournament is for the race designs; {deck}'s reports rate its policies: play them together with "
             f"`etappe simulate {deck} --policy A,B,...` and run `etappe report` on the run file")
    if out is not None:
        writable_folder(out)

    tournament_command(deck, policies, players, games, seed, option, out, bootstrap=bootstrap, anchor=anchor,
                       threads=threads)


@app.command()
def moves(
    deck: DeckArg,
    position: Annotated[Path, typer.Argument(help="Position file (TOML or JSON, see docs/positions.md).")],
    option: OptionOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the moves as a JSON list.")] = False,
) -> None:
    """List the legal moves of the player on turn in a position."""
    race_designs_only(deck, "moves")
    race_cmds.moves_command(deck, position, option, as_json)


@app.command()
def analyze(
    deck: DeckArg,
    position: Annotated[Path, typer.Argument(help="Position file (TOML or JSON, see docs/positions.md).")],
    playouts: Annotated[int, typer.Option("--playouts", min=1, max=MAX_SEED, help="Deals of the unseen cards; each is played out after every legal move.")] = 2000,
    policy: Annotated[str, typer.Option("--policy", callback=check_policy_list, help="Greedy-family policy that plays the hands out.")] = "greedy",
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the deals of the unseen cards (0 to 2^63-1): the same seed, the same deals.")] = 0,
    option: OptionOpt = None,
) -> None:
    """Each legal move's chance to win the hand, with its 95 % interval, for the player on turn."""
    race_designs_only(deck, "analyze")
    race_cmds.analyze_command(deck, position, playouts, policy, seed, option)


@app.command()
def replay(
    deck: Annotated[str, typer.Argument(help="Built-in design (stapop, millebornes, touring), a TOML file, or a run file written by `etappe simulate --out` (its design, players, policies, seed, options and seating are the run's).")],
    players: Annotated[Optional[int], typer.Option("--players", "-p", help="Number of players (default 4).")] = None,
    policy: ReplayPolicyOpt = None,
    seed: Annotated[Optional[int], typer.Option("--seed", min=0, max=MAX_SEED, help="Root seed of the run (default 0).")] = None,
    game: Annotated[int, typer.Option("--game", min=0, max=MAX_SEED, help="Game index within the run.")] = 0,
    option: OptionOpt = None,
    seating: SeatingOpt = None,
    position: Annotated[Optional[int], typer.Option("--position", min=1, max=MAX_SEED, help="Print the position at this turn (numbered as in the play-by-play), after the draw, as a position file for `etappe moves` and `etappe analyze` (docs/positions.md), instead of the play-by-play.")] = None,
    hand: Annotated[Optional[int], typer.Option("--hand", min=1, max=MAX_SEED, help="With --position: the hand of the game (from 1; default 1).")] = None,
) -> None:
    """Print a readable play-by-play of one game of a run (or, with --position, the position at one of its turns)."""
    race_designs_only(deck, "replay")
    if hand is not None and position is None:
        fail("--hand: give it with --position (the play-by-play shows every hand)")
    at = None if position is None else (hand or 1, position)
    if deck.lower().endswith(".parquet"):  # RUN.PARQUET, as some systems write names, is a run file too
        given = [name for name, value in (("--players", players), ("--policy", policy), ("--seed", seed),
                                          ("--option", option), ("--seating", seating)) if value is not None]
        if given:
            fail(f"{', '.join(given)}: the run file {deck} says how its games were played; give --game only")
        race_cmds.replay_run_command(Path(deck), game, at)
        return
    race_cmds.replay_command(deck, players, policy or "greedy", seed or 0, game, option, seating or "fixed", at)


@app.command()
def policies(deck: Annotated[Optional[str], typer.Argument(help="A race design, or etape, or bremen (default: the race games).")] = None) -> None:
    """List the built-in policies with their parameters and defaults (for etape and bremen, their rule options too)."""
    if deck is not None:
        check_game_or_design(deck)
    race_cmds.policies_command(deck)


@app.command()
def bench(
    games: Annotated[int, typer.Option("--games", "-n", min=1, help="Games per case (the look-ahead table "
                                                                    "plays its own 40 games).")] = 100_000,
    threads: Annotated[Optional[int], typer.Option("--threads", min=1, help="Numba threads (default: all cores); "
                                                   "the speeds scale with it.")] = None,
    starts: Annotated[bool, typer.Option("--starts/--no-starts", help="Also time cold and warm process starts.")] = True,
) -> None:
    """Print games per second per design, player count and policy, and start-up times."""
    from .bench import bench as run_bench

    set_threads(threads)
    run_bench(games, starts)


def main() -> None:
    """The `etappe` command. A file the system will not let us read or write
    is the user's to fix: it is reported in one line, not as a traceback."""
    import signal

    from etappe import cli as starting  # Ctrl-C while starting: see cli/__init__.py

    if starting.interrupted:  # said already, and raised where a compile callback swallowed it
        raise SystemExit(INTERRUPTED_CODE)
    if signal.getsignal(signal.SIGINT) in (starting._interrupted_while_starting, signal.default_int_handler):
        signal.signal(signal.SIGINT, interrupt)  # not where SIGINT is ignored
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        # `kill`, a job scheduler's stop: as Ctrl-C, so that the command cleans up its temporary files and says
        # what it kept (by default SIGTERM ends the process at once, leaving a partly joined run file behind)
        signal.signal(signal.SIGTERM, interrupt)
    interruption_told(forget=True)
    # A locale that cannot write "Tape l'étape" (ASCII, Latin-1 and a "–") prints "?" for it, not a traceback
    # (stderr does so already: Python gives it backslashreplace); the files to read back are UTF-8 (print_file_text)
    sys.stdout.reconfigure(errors="replace")
    try:
        app(prog_name="etappe")
    except OSError as exc:
        print_error(str(exc))
        raise SystemExit(2) from None
    except SystemExit as exc:
        # Ctrl-C (typer exits 130) outside a progress bar, which would have said what was kept: a line all
        # the same, not a silent stop
        if exc.code == INTERRUPTED_CODE and not interruption_told():
            say_interrupted(INTERRUPTED_ELSEWHERE)
        raise
