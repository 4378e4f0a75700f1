"""The `etappe` command: simulations, reports and comparisons of tabletop race games."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from . import race_cmds
from .common import fail
from .race_cmds import DeckArg, OptionOpt, PlayersOpt, PolicyOpt, SeedOpt

app = typer.Typer(
    help="Monte Carlo strategy analysis for tabletop race games: Stap op, Mille Bornes, Touring, "
         "Bremer Stadtmusikanten, Tape l'étape.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(race_cmds.decks_app, name="decks")

SeatingOpt = Annotated[str, typer.Option("--seating", help="fixed: policies keep their seats; rotate: they move one seat on each game.")]


@app.command()
def simulate(
    deck: DeckArg,
    players: PlayersOpt = 4,
    games: Annotated[int, typer.Option("--games", "-n", help="Games to play.")] = 10_000,
    policy: PolicyOpt = "greedy",
    seed: SeedOpt = 0,
    out: Annotated[Optional[Path], typer.Option("--out", help="Parquet file for the records; an interrupted run resumes.")] = None,
    option: OptionOpt = None,
    seating: SeatingOpt = "fixed",
    threads: Annotated[Optional[int], typer.Option("--threads", help="Numba threads (default: all cores).")] = None,
    chunk_size: Annotated[int, typer.Option("--chunk-size", help="Games per chunk written to disk.")] = 50_000,
) -> None:
    """Play games of a design and print a summary; with --out, write the records as Parquet."""
    race_cmds.simulate_race(deck, players, games, policy, seed, out, option, seating, threads, chunk_size)


@app.command()
def moves(
    deck: DeckArg,
    position: Annotated[Path, typer.Argument(help="Position file (TOML or JSON, see docs/positions.md).")],
    option: OptionOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the moves as a JSON list.")] = False,
) -> None:
    """List the legal moves of the player on turn in a position."""
    race_cmds.moves_command(deck, position, option, as_json)


@app.command()
def replay(
    deck: DeckArg,
    players: PlayersOpt = 4,
    policy: PolicyOpt = "greedy",
    seed: SeedOpt = 0,
    game: Annotated[int, typer.Option("--game", help="Game index within the run.")] = 0,
    option: OptionOpt = None,
    seating: SeatingOpt = "fixed",
) -> None:
    """Print a readable play-by-play of one game of a run."""
    race_cmds.replay_command(deck, players, policy, seed, game, option, seating)


@app.command()
def policies(deck: Annotated[Optional[str], typer.Argument(help="Design (optional).")] = None) -> None:
    """List the built-in policies with their parameters and defaults."""
    race_cmds.policies_command(deck)


@app.command()
def bench(
    games: Annotated[int, typer.Option("--games", "-n", help="Games per case.")] = 100_000,
    threads: Annotated[Optional[int], typer.Option("--threads", help="Numba threads (default: all cores).")] = None,
    starts: Annotated[bool, typer.Option("--starts/--no-starts", help="Also time cold and warm process starts.")] = True,
) -> None:
    """Print games per second per design, player count and policy, and start-up times."""
    from .bench import bench as run_bench

    run_bench(games, threads, starts)


def main() -> None:  # pragma: no cover - console entry point
    app()
