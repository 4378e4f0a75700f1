"""Bremer Stadtmusikanten and Tape l'étape under two variants, compared game by game.

A variant is a set of rule options (and, for Bremen, a board). Game i of
both variants is played from the same keys (the root seed and i): common
random numbers, as the race designs' comparison (analysis/compare.py) plays
them. Each game's metrics (`paired_metrics` of analysis/bremen.py and
analysis/etape.py) are differenced game by game into a PairedComparison,
one chunk at a time, so memory does not grow with the number of games.

`compare_variants` plays the two variants (saving the comparison after
every chunk, so that an interrupted one resumes); `etappe report a b`
(compare_variant_runs in cli/report_cmds.py) pairs two run files;
`variant_table` gives every metric's paired
difference with its 95 % interval and Holm's correction.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from etappe.kernels.options import whole

from . import bremen as B
from . import etape as E
from .compare import PairedComparison, option_differences, paired_table
from .runio import Checkpoint

__all__ = ["VariantComparison", "compare_variants", "variant_table", "what_differs", "metric_labels", "GAMES"]

GAMES = ("bremen", "etape")
UNIT = {"bremen": "game", "etape": "race"}
# What two variants of one comparison must share: they differ in rule options
# (and, for Bremen, the board) only; policy_sources: the file of a policy of
# your own is the same file as it was (an edited one is another policy).
SHARED_FIELDS = ("game", "players", "policies", "policy_sources", "seed")


@dataclass
class VariantComparison:
    game: str
    meta_a: dict            # each variant's run metadata (df.attrs of its records)
    meta_b: dict
    comparison: PairedComparison
    games: int


def metric_labels(game: str, meta: dict) -> dict:
    """key -> (label, unit) of every metric of `game`'s comparison, the seats
    (and Tape l'étape's policy slots) named with their policies."""
    policies = meta["policies"]
    if game == "bremen":
        labels = dict(B.PAIRED_METRICS)
        for s, policy in enumerate(policies):
            labels[f"won_s{s}"] = (f"win rate of seat {s} ({policy}; a game without a winner counts as a loss)",
                                   "rate")
        return labels
    labels = dict(E.PAIRED_METRICS)
    names = E.short_names(policies)
    same = len(names) == 1
    for s in range(meta["players"]):
        labels[f"won_seat{s}"] = (f"win share of seat {s}" + (f" ({names[policies[0]]})" if same else ""), "share")
    for s in range(meta["players"]):
        labels[f"won_slot{s}"] = (f"win share of policy slot {s} ({names[policies[s]]})", "share")
    return labels


def variant_table(vc: VariantComparison, alpha: float = 0.05) -> pd.DataFrame:
    """Every metric as a paired difference A - B: n, the two means, the mean
    difference with its 95 % Student t interval (clipped to [-1, 1] for a
    rate or a share), p and Holm's correction over the rows. For Bremen, the first player's win rate is followed by its
    distance from the fair share (1 / players), A - B."""
    labels = metric_labels(vc.game, vc.meta_a)
    fair = 1.0 / vc.meta_a["players"] if vc.game == "bremen" else None
    return paired_table(vc.comparison, metrics=list(labels), alpha=alpha, fair=fair, metric_labels=labels)


def what_differs(meta_a: dict, meta_b: dict) -> pd.DataFrame:
    """The rule options (every one, defaults included) and the board that
    differ between the two variants: rows item, a, b."""
    rows = []
    if meta_a.get("board_hash") != meta_b.get("board_hash"):
        rows.append(("board", f"{meta_a.get('board')} ({meta_a.get('board_hash')})",
                     f"{meta_b.get('board')} ({meta_b.get('board_hash')})"))
    return pd.DataFrame(rows + option_differences(meta_a, meta_b), columns=["item", "a", "b"])


def _play(game: str, players: int, first: int, count: int, policies: list[str], seed: int, options: dict,
          board) -> tuple[pd.DataFrame, dict, float]:
    """Games first .. first + count - 1 of one variant: (metrics, metadata, seconds of play)."""
    if game == "bremen":
        df = B.simulate(players, count, policies, seed, board, options, first_game=first)
        return B.paired_metrics(df), dict(df.attrs), df.attrs["wall_seconds"]
    races, stages = E.simulate(players, count, policies, seed, options, first_race=first)
    return E.paired_metrics(races, stages), dict(races.attrs), races.attrs["wall_seconds"]


def compare_variants(game: str, players: int, games: int, policies: Sequence[str], seed: int, options_a: dict,
                     options_b: dict, checkpoint: str | Path | None = None, chunk_size: int = 20_000, board_a=None, board_b=None,
                     progress: Callable[[int], None] | None = None,
                     on_resume: Callable[[int], None] | None = None) -> VariantComparison:
    """Play games 0 .. games-1 of `seed` under both variants, chunk by chunk,
    and pair them. `progress(games)` is called with the games played per
    variant after each chunk. With `checkpoint` (a file path), the
    comparison is saved atomically there after every chunk; started again
    with the same arguments, it resumes there (calling `on_resume` with the
    games per variant already played). The caller removes the checkpoint
    once the results are safe. None (the default): nothing is saved.

    Returns a VariantComparison: `variant_table(vc)` gives the paired
    differences, `reports.variant_report.build_variant_report(vc)` the
    report. Raises TypeError for games or chunk_size that is not a whole
    number, ValueError for an unknown game, games < 0, chunk_size < 1, bad options, boards or
    policies (the messages of `simulate`), or two variants that are the same."""
    if game not in GAMES:
        raise ValueError(f"{game}: a variant comparison is for {' and '.join(GAMES)}")
    games = whole("games", games)
    chunk_size = whole("chunk_size", chunk_size, low=1)
    policies = [policies] if isinstance(policies, str) else list(policies)
    boards = {"a": B.load_board(board_a), "b": B.load_board(board_b)} if game == "bremen" else {"a": None, "b": None}
    options = {"a": options_a, "b": options_b}
    # The zero-game runs check the options and policies and give each variant's metadata before any game is played.
    metas = {key: _play(game, players, 0, 0, policies, seed, options[key], boards[key])[1] for key in options}
    if not what_differs(metas["a"], metas["b"]).shape[0]:
        raise ValueError(f"the two variants are the same ({game}, every rule option equal"
                         f"{', the same board' if game == 'bremen' else ''}): on the same seeds every paired "
                         "difference would be 0; give option B (--option-b, options_b) a value other than "
                         "option A's (the default, or --option, options_a)"
                         + (", or B another board (--board-b, board_b)" if game == "bremen" else ""))
    # no chunk size: a comparison resumed in chunks of another size plays the same games
    identity = {"game": game, "players": players, "policies": metas["a"]["policies"], "seed": seed, "games": games,
                "version": metas["a"]["version"], "policy_sources": metas["a"].get("policy_sources"),
                "variants": {key: {"options": m["options"], "board_hash": m.get("board_hash")} for key, m in metas.items()}}
    saved = Checkpoint(Path(checkpoint), identity) if checkpoint is not None else None
    state = (saved.load() if saved else None) or {"games_done": 0, "comparison": PairedComparison(), "seconds": {"a": 0.0, "b": 0.0}}
    if on_resume and state["games_done"]:
        on_resume(state["games_done"])
    if progress and state["games_done"]:
        progress(state["games_done"])
    for first in range(state["games_done"], games, chunk_size):
        count = min(chunk_size, games - first)
        played = {}
        for key in options:
            metrics, _, seconds = _play(game, players, first, count, policies, seed, options[key], boards[key])
            played[key] = metrics
            state["seconds"][key] += seconds
        state["comparison"].add_pairs(played["a"], played["b"])
        state["games_done"] = first + count
        if saved:
            saved.save(state)
        if progress:
            progress(first + count)
    for key, meta in metas.items():
        meta.update(games=games, wall_seconds=round(state["seconds"][key], 3))
    return VariantComparison(game, metas["a"], metas["b"], state["comparison"], games)
