"""Small pieces every command shares: errors, options, progress bars."""
from __future__ import annotations

import contextlib
from typing import Iterator

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> None:
    """Print a clear error and exit non-zero."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def parse_options(items: list[str] | None) -> dict:
    """`--option key=value` pairs into a dict (values stay strings; the
    design validates and converts them)."""
    options = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            fail(f"--option {item!r}: expected key=value, e.g. --option overshoot=disqualify")
        options[key.strip()] = value.strip()
    return options


def split_policies(text: str) -> list[str]:
    """`greedy,random` -> ['greedy', 'random']; commas inside `name:k=v,k=v`
    belong to the policy, so policies are separated by commas only before a
    name without '='."""
    parts: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if parts and "=" in piece and ":" not in piece:
            parts[-1] += "," + piece
        elif piece:
            parts.append(piece)
    return parts


@contextlib.contextmanager
def progress_bar(total: int, what: str) -> Iterator:
    """A progress bar on stderr; yields a function `advance(n)`."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err_console, transient=False) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)


def print_seat_summary(winners, players: int, games: int, extra: str) -> None:
    """The short table `simulate` prints: wins per seat with 95 % intervals."""
    import numpy as np
    from rich.table import Table

    from etappe.analysis.stats import wilson_interval

    winners = np.asarray(winners)
    table = Table("seat", "wins", "win rate", "95 % interval", title="summary")
    for seat in range(players):
        wins = int((winners == seat).sum())
        low, high = wilson_interval(wins, games)
        table.add_row(str(seat), str(wins), f"{wins / games:.3f}", f"{low:.3f} - {high:.3f}")
    console.print(table)
    console.print(f"{games} games, no winner {int((winners < 0).sum())}; {extra}", highlight=False)
