"""The work behind `etappe tournament` and `etappe compare --sequential`:
plain functions, which cli/main.py wires into the typer app with their
options."""
from __future__ import annotations

import shlex
import time
from pathlib import Path

import numpy as np
import pandas as pd
from rich.table import Table

from etappe.analysis.runio import write_atomic
from etappe.analysis.stats import counted
from etappe.analysis.sequential import SequentialResult, design_outcomes, policy_outcomes, sequential_compare
from etappe.analysis.tournament import (DEFAULT_CHUNK, TournamentResult, bradley_terry, check_bootstrap, head_to_head,
                                        play_tournament, score_matrix)
from etappe.kernels.options import option_text
from etappe.kernels.race_design import DesignError, load_design
from etappe.kernels.race_policies import PolicyError
from etappe.kernels.user_policy import is_user_policy
from etappe.reports.document import percent
from etappe.reports.race_report import comparison_names, design_name
from etappe.reports.sections import option_b_words, option_words
from etappe.reports.tournament_report import NO_SCORE, no_winner_causes

from .common import (RACE_LOOKAHEAD_CHUNK, console, default_chunk, fail, kept_in, parse_options, progress_bar,
                     resumed_text, split_policies)
from .race_cmds import warn_no_winner
from .report_cmds import refuse_same_design

__all__ = ["tournament_command", "sequential_command", "print_tournament", "print_sequential"]


def _pct(v: float) -> str:
    return "" if not np.isfinite(v) else percent(v)


def print_tournament(result: TournamentResult, ratings: pd.DataFrame | None) -> None:
    """The skill matrix (score % of row vs column, with 95 % interval) and the ratings, as rich tables;
    ratings None: no game had a winner, so there are none to print."""
    h2h = head_to_head(result)
    m, lo, hi = (score_matrix(h2h, c) for c in ("score", "ci_low", "ci_high"))
    table = Table(title=f"Score % of row vs column ({counted(result.games, 'game')} per pairing, 95 % Wilson interval)")
    table.add_column("policy \\ opponent", overflow="fold")
    for c in m.columns:  # a name with parameters wraps in its header rather than being cut to "greedy:a…"
        table.add_column(str(c), justify="right", overflow="fold")
    for i, r in enumerate(m.index):
        cells = []
        for j in range(len(m.columns)):
            v = m.iat[i, j]
            cells.append("-" if i == j else f"{_pct(v)} [{_pct(lo.iat[i, j])}, {_pct(hi.iat[i, j])}]"
                         if np.isfinite(v) else NO_SCORE)
        table.add_row(str(r), *cells)
    console.print(table)
    if ratings is None:
        return
    interval = ratings.attrs.get("interval", "fisher")
    how = {"fisher": "Fisher information", "bootstrap": "bootstrap", "profile": "likelihood-ratio (profile)",
           "bootstrap+fisher": "bootstrap and Fisher information",
           "bootstrap+profile": "bootstrap and likelihood-ratio"}[interval]
    rt = Table(title=f"Bradley-Terry ratings (Elo = 400 log10 strength; 95 % intervals, {how})")
    for col in ("rank", "policy", "games", "score %", "Elo", "95 % interval", "strength"):
        rt.add_column(col, justify="left" if col == "policy" else "right", overflow="fold")
    for row in ratings.itertuples(index=False):
        rt.add_row(str(row.rank), str(row.policy), str(row.games), _pct(row.score), f"{row.elo:+.1f}",
                   f"[{row.elo_low:+.1f}, {row.elo_high:+.1f}]", f"{row.strength:.3f}")
    console.print(rt)
    if ratings.attrs.get("regularized"):
        console.print("[yellow]note:[/] a policy won or lost every game; one virtual draw per pairing keeps the ratings "
                      "finite.", markup=True)
    if interval.startswith("bootstrap+"):
        console.print("[yellow]note:[/] every game of a pairing ended alike, so each bootstrap resample repeats it and "
                      "cannot show its spread: the intervals are the union of the bootstrap's and the "
                      f"{'Fisher' if interval == 'bootstrap+fisher' else 'likelihood-ratio'} ones.", markup=True)


def tournament_command(deck: str, policies: str, players: int, games: int, seed: int, option: list[str] | None,
                       out: Path | None, bootstrap: int = 200, anchor: str | None = None,
                       threads: int | None = None) -> TournamentResult:
    """Round robin of the policies on a deck; print the matrix and ratings; write the report to `out`.

    policies: comma separated specs (`random,greedy,greedy:attack=3`), at least two.
    games: games per pairing (every pairing plays game indices 0..games-1).
    bootstrap: resamples for the rating intervals (0: observed Fisher information, too narrow when
      the shared deals make the pairings' results go together).
    anchor: a policy fixed at Elo 0 (default: mean 0).
    Returns the TournamentResult (the typer wrapper may ignore it).
    """
    names = split_policies(policies)
    if len(names) < 2:
        fail("--policies needs at least two policies, e.g. --policies random,greedy,aggressive")
    try:
        check_bootstrap(bootstrap)  # before the games, not after them
    except ValueError as exc:
        fail(f"--{exc}")
    if anchor is not None and anchor not in names:  # checked before the games, not after them
        fail(f"--anchor {anchor!r} is not one of the policies: {', '.join(names)}")
    try:
        design = load_design(deck)
    except DesignError as exc:
        fail(str(exc))
    options = parse_options(option)
    n_pairs = len(names) * (len(names) - 1) // 2
    # With a report folder, finished chunks are saved there: an interrupted
    # tournament run again with the same arguments resumes.
    checkpoint = Path(out) / ".tournament-checkpoint.pkl" if out is not None else None
    on_stop = (kept_in(checkpoint, what="The outcomes of the finished chunks are") if checkpoint is not None else
            "Nothing is kept: without --out a tournament saves nothing (with --out it resumes).")
    try:
        with progress_bar(games * n_pairs, f"tournament {design.name} x{players}, {n_pairs} pairings", on_stop,
                          compiles=True) as advance:
            result = play_tournament(design, players, names, games, seed, options, progress=advance,
                                     chunk_size=default_chunk(names, DEFAULT_CHUNK, RACE_LOOKAHEAD_CHUNK),
                                     threads=threads, checkpoint=checkpoint, on_resume=lambda done: advance.say(
                                         resumed_text(out, done, games * n_pairs, "games (all pairings)")))
        if checkpoint is not None:
            on_stop = kept_in(checkpoint, what="The outcomes of every game are")
        ratings = None  # where no game had a winner there are none (no_winner_text)
        if (result.outcomes != 0).any():
            # one step, shown with its time only when the resamples take a while
            with progress_bar(1, f"ratings ({bootstrap} bootstrap resamples)" if bootstrap else "ratings",
                              on_stop) as rated:
                ratings = bradley_terry(result, anchor=anchor, bootstrap=bootstrap, seed=seed)
                rated.done_quietly()
    except (DesignError, PolicyError, ValueError) as exc:
        fail(str(exc))
    print_tournament(result, ratings)
    warn_no_winner(int((result.outcomes == 0).sum()), result.outcomes.size, no_winner_causes(result.meta),
                   "there are no scores or ratings", "each counts half a point for either policy in the scores "
                   "and ratings", any(is_user_policy(p) for p in names))
    if out is not None:
        import matplotlib

        matplotlib.use("Agg")
        from etappe.reports.tournament_report import build_tournament_report
        from etappe.analysis.tournament import pair_table

        with progress_bar(None, "report", on_stop) as bar:
            # the tables first and the report (its HTML last) after them: a report that is there is whole
            Path(out).mkdir(parents=True, exist_ok=True)
            if ratings is not None:
                write_atomic(Path(out) / "ratings.csv", ratings.to_csv(index=False))
            else:  # not an earlier run's ratings beside this run's report
                (Path(out) / "ratings.csv").unlink(missing_ok=True)
            write_atomic(Path(out) / "pairings.csv", pair_table(result).to_csv(index=False))
            path = build_tournament_report(result, bootstrap=bootstrap, anchor=anchor, ratings=ratings,
                                           on_section=bar.stage).write(out)
        checkpoint.unlink()
        tables = "ratings.csv, pairings.csv" if ratings is not None else "pairings.csv; no ratings"
        console.print(f"wrote {path} and {Path(path).with_suffix('.md')} (and the tables {tables})")
    return result


def print_sequential(res: SequentialResult, title: str) -> None:
    table = Table("item", "value", title=title)
    for k, v in res.summary_rows():
        table.add_row(k, v)
    console.print(table)


def _title(design) -> str:
    return design_name({"design_title": design.title, "reconstructed": design.reconstructed})


def sequential_command(deck: str, policies: str, players: int, seed: int, option: list[str] | None = None,
                       deck_b: str | None = None, option_b: list[str] | None = None, metric: str = "game_turns",
                       alpha: float = 0.05, beta: float = 0.05, delta: float = 0.05, chunk: int = 500,
                       max_games: int = 100_000, out: Path | None = None) -> SequentialResult:
    """Play until the difference between A and B is decided (Sobel-Wald sequential test).

    Two modes:
    * policies "A,B" (two specs) and no deck_b / option_b: policy A vs
      policy B on `deck`, seats paired as in a tournament; a +1 is a game
      A's side won.
    * deck_b and/or option_b given: design A = (deck, option) vs design B =
      (deck_b or deck, option_b or option), the same `policies` (one for all
      seats, or one per seat) on the same seeds; a +1 is a game where
      `metric` (a per-game metric: game_turns, first_position_won, ...) is
      higher under A.
    alpha: chance of a false "different" (both directions); beta: chance of
    missing a difference of delta in q (share of uneven games going to A);
    chunk: games simulated between looks (the decision is still taken at
    the exact game); max_games: cap ("undecided"); out: folder for a
    report of the test (HTML and Markdown), if given.
    `etappe compare --sequential` calls it: its second design is deck_b,
    --option-b gives option_b, --games gives max_games.
    Returns the SequentialResult.
    """
    names = split_policies(policies)
    options = parse_options(option)
    design_mode = deck_b is not None or option_b is not None
    try:
        if not design_mode:
            if len(names) != 2:
                fail("a sequential policy comparison needs exactly two policies, e.g. --policy greedy,aggressive "
                     "(or give a second design or --option-b to compare two designs)")
            design = load_design(deck)
            fn = policy_outcomes(design, players, names[0], names[1], seed, options)
            labels = (names[0], names[1])
            title = f"Sequential test: {names[0]} vs {names[1]} on {_title(design)}, {players} players, seed {seed}"
        else:
            options_b = parse_options(option_b) if option_b is not None else options
            design_a, design_b = load_design(deck), load_design(deck_b or deck)
            fn = design_outcomes(design_a, design_b, players, names, seed, options, options_b, metric)
            metas = [run.metadata(max_games) for run in fn.runs]
            refuse_same_design(*metas)
            labels = la, lb = comparison_names(*metas)  # as the comparison report names them
            title = f"Sequential test: {la} vs {lb}, {metric}, {players} players, seed {seed}"
        started = time.perf_counter()
        with progress_bar(max_games, "sequential", resumable=False, compiles=True) as advance:
            res = sequential_compare(fn, alpha, beta, delta, chunk, max_games, labels, progress=advance)
        wall = time.perf_counter() - started
    except (DesignError, PolicyError, ValueError) as exc:
        fail(str(exc))
    print_sequential(res, title)
    if out is not None:
        from etappe.analysis.runio import file_hash, package_version
        from etappe.reports.document import Report

        # every rule option in force, defaults written out: a later change of a default does not change the test
        in_force_a = (design_a if design_mode else design).resolved_options(options)

        def played(design, in_force: dict) -> str:
            return f"{_title(design)}: {design.source} (hash {file_hash(design.text)}); rule options {option_text(in_force)}"

        rows = ([("design", played(design, in_force_a))] if not design_mode else
                [("design A", played(design_a, in_force_a)),
                 ("design B", played(design_b, in_force_b := design_b.resolved_options(options_b)))])
        words = ["compare", deck, *([deck_b] if design_mode and deck_b != deck else []), "--sequential",
                 "--players", str(players), "--games", str(max_games), "--seed", str(seed),
                 "--policy", ",".join(names) or "greedy",
                 *option_words(in_force_a)]
        if design_mode:
            words += option_b_words(in_force_a, in_force_b) + ["--metric", metric]
            rows.append(("metric", f"{metric}: A is ahead in a game where its {metric} is higher"))
        words += ["--alpha", f"{alpha:g}", "--beta", f"{beta:g}", "--delta", f"{delta:g}"]
        rows += [("policies", ", ".join(names) or "greedy"), ("players", players),
                 ("seat design", "as in a tournament pairing: side s of game g to A when s + g is even"
                  if not design_mode else "the same policies on the same seats in A and B"),
                 ("most games", max_games), ("root seed", seed), ("etappe version", package_version()),
                 ("wall time", f"{wall:.2f} s, loading the kernels included ({res.games_played / wall:,.0f} "
                               f"{'paired ' if design_mode else ''}games/s)" if wall > 0 else ""),
                 ("reproduce", "etappe " + shlex.join(words))]
        report = Report(title)
        header = report.section("Header")
        header.table(pd.DataFrame(rows, columns=["item", "value"]).astype(str), "Everything needed to reproduce the test")
        header.text("Games are played in order on the same seeds for A and B until the test decides.")
        report.section("Sequential test").table(pd.DataFrame(res.summary_rows(), columns=["item", "value"]))
        report.section("Caveat").text("Bots are not people: the result holds for the policies named above.")
        path = report.write(out)
        console.print(f"wrote {path} and {Path(path).with_suffix('.md')}")
    return res
