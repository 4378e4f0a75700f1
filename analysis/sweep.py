"""A design sweep: one setting of a design file at several values, each
variant played on the same seeds as the design as written and compared
with it game by game.

`sweep_design` plays them chunk by chunk (the summaries only are kept) and
returns a `Sweep`; `sweep_table` gives every metric of every value as a
paired difference from the design as written, with its 95 % interval and
Holm's correction across the whole sweep (values x metrics).
"""
from __future__ import annotations

import time

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..kernels.options import value_text, whole
from ..kernels.race_design import Design, design_variant, file_setting, load_design
from .compare import PairedComparison, paired_table
from .race import RaceRun, run_identity
from .race_summary import RaceSummarizer, RaceSummary
from .runio import Checkpoint
from .stats import holm

__all__ = ["Sweep", "sweep_design", "sweep_table", "shown_metrics", "SWEEP_METRICS"]

# The metrics a sweep shows, in order: the compare report's headline ones first, then the others that keep
# their scale whatever the value (a swept trip rescales distances and totals: the deficit is a share of the
# trip), less the per-seat win rates.
SWEEP_METRICS = ("game_turns", "first_hand_gap", "first_player_gap", "hazard_decided", "dead_share",
                 "lead_changes", "winner_deficit_share", "hazard_turns", "capped", "no_winner", "hands")


@dataclass
class Sweep:
    path: str
    values: list
    base_value: object                     # the file's own value at `path` (None: not set there)
    base: RaceSummary
    base_meta: dict
    options_given: dict                    # the rule options given for the run (the file's own aside)
    summaries: list[RaceSummary] = field(default_factory=list)   # one per value
    metas: list[dict] = field(default_factory=list)
    comparisons: list[PairedComparison] = field(default_factory=list)
    wall_seconds: float = 0.0              # playing time of every design's games (resumed sessions included)


def sweep_design(deck: str | Design, path: str, values: Sequence, players: int, games: int,
                 policies: Sequence[str] | str = ("greedy",), seed: int = 0, options: dict | None = None,
                 seating: str = "fixed", chunk_size: int = 50_000,
                 progress: Callable[[int], None] | None = None, checkpoint: Path | None = None,
                 on_resume: Callable[[int], None] | None = None) -> Sweep:
    """Play the design as written and each variant (`path` set to each of
    `values`) on games 0 .. games-1 of `seed`; `progress(games)` after each
    chunk of each. `policies` as `simulate` takes them (one spec for every
    seat, or a list by seat). Every variant is checked before any game is
    played: a value that changes nothing that is played at `players` (an
    option unused there, a setting no engine reads such as design.notes)
    is refused, and so is a rule option both swept and given in `options`.

    checkpoint: a file where the summaries are saved atomically after every
    chunk; a sweep started again with the same arguments resumes from it
    (calling on_resume with the games per design already played; the
    caller removes the file once the results are safe elsewhere)."""
    design = deck if isinstance(deck, Design) else load_design(deck)
    if isinstance(values, str):  # its characters otherwise
        raise TypeError(f"values is a list of the setting's values, e.g. [3, 5, 8], not {values!r}")
    games, chunk_size = whole("games", games, 1), whole("chunk_size", chunk_size, 1)
    if not values:
        raise ValueError("give at least one value to sweep")
    if len(set(map(repr, values))) != len(values):
        raise ValueError(f"a value is given twice: {', '.join(map(repr, values))}")
    option = path.removeprefix("options.") if path.startswith("options.") else None
    if option in (options or {}):
        raise ValueError(f"{path} is swept and also given for the run (--option {option}): the run's option would "
                         "override every value; give it in one place")
    base_value = file_setting(design, path)
    variants = [design_variant(design, path, v) for v in values]
    runs = [RaceRun(d, players, policies, seed, options, seating) for d in [design, *variants]]
    unused = [variant.unused_options(players, variant.options).get(option) for variant in variants]
    changed = [why is None and not (np.array_equal(run.card_table, runs[0].card_table)
                                    and np.array_equal(run.rules, runs[0].rules))
               for why, run in zip(unused, runs[1:])]
    for value, why, change in zip(values, unused, changed):
        # The file's own value (or, for a setting the file leaves out, its default) plays the same games and
        # may stand beside values that change them; a sweep in which no value changes anything is refused.
        own = base_value is None or value == base_value
        if not change and not (own and any(changed)):
            raise ValueError(f"{path} = {value_text(value)} changes nothing that is played at {players} players: "
                             + (why or "the game's tables are those of the design as written (a setting no engine "
                                       "reads, such as design.notes, the file's own value or the default, or one "
                                       "overridden, e.g. a trip by players.N.trip)"))
    metas = [run.metadata(games) for run in runs]
    saved = state = None
    if checkpoint is not None:
        identity = {"runs": [run_identity(m) for m in metas],
                    "path": path, "values": [repr(v) for v in values]}  # any chunk size plays the same games
        saved = Checkpoint(Path(checkpoint), identity)
        state = saved.load()
    if state is None:
        state = {"games_done": 0, "summaries": [None] * len(runs), "comparisons": [PairedComparison() for _ in variants],
                 "seconds": 0.0}
    elif on_resume:
        on_resume(state["games_done"])
    comparisons = state["comparisons"]

    def to_all_b(table):
        for comp in comparisons:
            comp.add_b(table)

    summarizers = [RaceSummarizer(metas[0], on_games=to_all_b)]
    summarizers += [RaceSummarizer(meta, on_games=comp.add_a) for meta, comp in zip(metas[1:], comparisons)]
    for acc, summary in zip(summarizers, state["summaries"]):
        acc.summary = summary
    if state["games_done"] < games:
        for run in runs:
            run.load_kernels()  # the compile is not playing time
    if progress:
        progress(state["games_done"] * len(runs))
    for first in range(state["games_done"], games, chunk_size):
        count = min(chunk_size, games - first)
        for run, acc in zip(runs, summarizers):
            started = time.perf_counter()
            frame = run.play(first, count)
            state["seconds"] += time.perf_counter() - started
            acc.add(frame)
            if progress:
                progress(count)
        state["games_done"] = first + count
        state["summaries"] = [acc.summary for acc in summarizers]
        if saved:
            saved.save(state)
    results = [acc.result() for acc in summarizers]
    return Sweep(path, list(values), base_value, results[0], metas[0], dict(options or {}), results[1:], metas[1:],
                 comparisons, round(state["seconds"], 3))


def sweep_table(sweep: Sweep) -> pd.DataFrame:
    """One row per value and metric: the variant's mean, the design as
    written's, their paired difference (variant - as written) with its 95 %
    interval, p and Holm's p across every row of the sweep."""
    fair = 1.0 / sweep.base_meta["sides"]
    keys = shown_metrics(sweep)
    rows = []
    for i, (value, comp) in enumerate(zip(sweep.values, sweep.comparisons)):
        table = paired_table(comp, fair=fair).set_index("key").reindex(keys).dropna(subset=["n"]).reset_index()
        table["value"], table["value_order"] = value, i
        rows.append(table)
    out = pd.concat(rows, ignore_index=True)
    out["key_order"] = out["key"].map(keys.index)
    out = out.sort_values(["key_order", "value_order"], kind="stable").reset_index(drop=True)
    out["n"] = out["n"].astype(np.int64)
    out["p_holm"], out["reject"] = holm(out["p_value"].to_numpy(float))
    return out[["key", "metric", "value", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_value", "p_holm",
                "reject", "n"]].rename(columns={"mean_a": "variant", "mean_b": "as_written"})


def shown_metrics(sweep: Sweep) -> list[str]:
    """SWEEP_METRICS for this design: where it plays several hands the
    first-player question is asked within the hand, as the first player
    moves round (as in the compare report), else of the game."""
    drop = "first_player_gap" if sweep.base_meta["multi_hand"] else "first_hand_gap"
    return [k for k in SWEEP_METRICS if k != drop]
