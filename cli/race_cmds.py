"""The race-game commands: decks, simulate, moves, replay, policies."""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import pandas as pd
import typer
from rich.markup import escape
from rich.table import Column, Table

from etappe.analysis.compare import card_rules
from etappe.analysis.race import RaceRun, run_identity, run_of
from etappe.analysis.race_summary import CAPPED_HANDS, CAPPED_TURNS, policy_rate_columns, policy_side_games
from etappe.analysis.stats import counted, wilson_interval
from etappe.analysis.runio import (GAME_NAMES, ChunkedRun, file_hash, finished, iter_parquet, package_version,
                                   read_metadata, row_count)
from etappe.kernels.options import option_text, unused_options_text, value_text
from etappe.kernels.race_design import (MAX_DISTANCE, R_TURN_CAP, Design, DesignError, builtin_names, load_design,
                                       parse_design)
from etappe.kernels.race_policies import GREEDY_PARAMETERS, P_EXTENSION_MARGIN, PRESETS, RANDOM_DESCRIPTION, PolicyError
from etappe.kernels.race_position import (analyze_policy, analyze_position, legal_moves_of, position_toml,
                                         read_position_file)

from .common import (race_designs_only, check_share, chunk_count, console, play_time_text, err_console, fail, in_share, joining_kept, kept_in, folding, RATE_WIDTH, parse_options, print_file_text, progress_bar,
                     resume_in_chunks_of, run_file_game, say_nothing_to_play, say_share_written, say_written, share_games,
                     split_policies)

decks_app = typer.Typer(help="List, show and validate deck designs.", no_args_is_help=True)

DeckArg = Annotated[str, typer.Argument(help="Built-in design (stapop, millebornes, touring) or a TOML file.")]
PlayersOpt = Annotated[int, typer.Option("--players", "-p", help="Number of players.")]
PolicyOpt = Annotated[str, typer.Option("--policy", help="One policy for all seats, or one per seat: greedy,random,...")]
OptionOpt = Annotated[Optional[list[str]], typer.Option("--option", "-o", help="Rule option key=value (repeatable).")]


def design_or_fail(deck: str):
    try:
        return load_design(deck)
    except DesignError as exc:
        fail(str(exc))


def target_text(d) -> str:
    """The target, by player count where it differs, e.g. Mille Bornes'
    "exact sum: 2,3,6 players 700 (extension 1000); 4 players 1000"."""
    by_trip: dict[tuple[int, int], list[int]] = {}
    for n in d.players:
        by_trip.setdefault(d.trip_for(n), []).append(n)
    kind = "exact set" if d.target_kind == "set" else "exact sum"
    parts = [("" if len(by_trip) == 1 else f"{','.join(map(str, ns))} players ") + str(trip)
             + (f" (extension {extension})" if extension else "") for (trip, extension), ns in by_trip.items()]
    if len(by_trip) == 1:
        return f"{kind}{' of' if d.target_kind == 'set' else ''} {parts[0]}"
    return f"{kind}: {'; '.join(parts)}"


@decks_app.command("list")
def decks_list() -> None:
    """List the built-in deck designs."""
    designs = {name: load_design(name) for name in builtin_names()}
    # on a narrow screen the names (what a command takes) and the titles' words are never cut
    longest_word = max(len(word) for d in designs.values() for word in d.title.split())
    table = Table(Column("name", min_width=max(map(len, designs))), Column("title", min_width=longest_word),
                  "players", Column("target", overflow="fold"), "stock", "cards")
    for name, d in designs.items():
        table.add_row(name, d.title, ",".join(map(str, d.players)), target_text(d),
                      "reshuffle" if d.reshuffle else "play out", str(sum(c.count for c in d.cards)))
    console.print(table)


def design_of_run(path: Path):
    """The design a race run file was played with, as its metadata keeps it
    (the file it came from may have changed since, or be gone)."""
    game = run_file_game(path)
    if game != "race":  # Bremen and Tape l'étape have no deck designs; their reports show their rules
        fail(f"{path}: a run of {GAME_NAMES.get(game, game)}, which has no deck design; `etappe report {path}` "
             "shows its rules")
    meta = read_metadata(path)
    try:
        return parse_design(meta["design_text"], meta["design_file"])
    except (KeyError, DesignError) as exc:
        fail(f"{path}: the design it keeps cannot be read ({exc})")


@decks_app.command("show")
def decks_show(deck: Annotated[str, typer.Argument(help="Built-in design name, design file (TOML), or a race run "
                                                        "file (.parquet): the design it was played with.")],
               toml: Annotated[bool, typer.Option("--toml", help="Print the design file itself, to copy and edit "
                                                                  "(etappe decks show stapop --toml > my.toml).")] = False
               ) -> None:
    """Show a design: cards, roles, counts, targets, options."""
    race_designs_only(deck, "decks show")
    d = design_of_run(Path(deck)) if deck.lower().endswith(".parquet") else design_or_fail(deck)
    if toml:
        print_file_text(d.text)  # plain: no markup, no wrapping
        return
    marked = d.reconstructed and "reconstructed" not in d.title.lower()
    console.print(f"[bold]{escape(d.title)}[/] ({escape(str(d.source))}){' [yellow]reconstructed[/]' if marked else ''}",
                  markup=True)
    console.print(f"players {', '.join(map(str, d.players))}, hand {d.hand_size}, stock: "
                  f"{'reshuffle' if d.reshuffle else 'play out'}, start under limit: "
                  f"{'yes' if d.start_under_limit else 'no'}, unit {d.unit}")
    for n in d.players:
        trip, ext = d.trip_for(n)
        console.print(f"  {n} players: {d.sides(n)} sides, trip {trip}{f', extension {ext}' if ext else ''}, "
                      f"deck {sum(d.counts(n).values())} cards")
    table = Table("key", "name", "role", "count", "details")
    table.columns[0].no_wrap = True  # the key is what a user types
    for c in d.cards:
        details = ([f"{c.value} {d.unit}"] if c.role == "distance" else []) + card_rules(asdict(c))
        table.add_row(c.key, c.name, c.role, str(c.count), "; ".join(details))
    console.print(table)
    unused = d.unused_options()
    console.print("options: " + option_text({k: v for k, v in d.options.items() if k not in unused}))
    if unused:
        console.print("options that change nothing here: " + unused_options_text(unused))
    for n in d.players:
        at_n = {k: why for k, why in d.unused_options(n).items() if k not in unused}
        if at_n:
            console.print(f"options that change nothing at {n} players: " + unused_options_text(at_n))
    if d.scoring:
        console.print("scoring: " + ", ".join(f"{k}={v}" for k, v in d.scoring.items()))


@decks_app.command("validate")
def decks_validate(path: Annotated[Path, typer.Argument(help="Design file to check (or a built-in design's name).")]) -> None:
    """Check a design file; exits non-zero with the field and problem if it is wrong."""
    race_designs_only(str(path), "decks validate")
    d = design_or_fail(str(path))
    for n in d.players:
        try:
            d.tables(n)
        except DesignError as exc:
            fail(str(exc))
    console.print(f"{path}: valid design {d.name!r} for {', '.join(map(str, d.players))} players "
                  f"(hash {file_hash(d.text)})")
    for note in idle_cards(d):
        console.print(f"note: {note}", highlight=False)


def idle_cards(d: Design) -> list[str]:
    """The remedies and end-of-limit cards that nothing in the deck calls
    for at some player count (a hazard of count 0, as a sweep down to 0 makes
    it): valid, since a designer may mean it, but dead cards, said so."""
    notes = []
    for card in d.cards:
        if card.role == "remedy":
            needs = [c.key for c in d.cards if c.role == "hazard" and c.remedy == card.key]
        elif card.role == "end_limit":
            needs = [c.key for c in d.cards if c.role == "limit"]
        else:
            continue
        idle = [n for n in d.players if d.counts(n)[card.key] > 0 and not any(d.counts(n)[k] > 0 for k in needs)]
        if idle:
            on = f"only on {' or '.join(needs)}, of which the deck holds none" if needs else "on no card of the deck"
            notes.append(f"cards.{card.key} ({card.role}) is played {on} at {', '.join(map(str, idle))} players: "
                         "its copies there can never be played (dead cards)")
    return notes


DEFAULT_PLAYERS = 4  # simulate's and replay's; compare, sweep and tournament pair two-player games


def make_run(deck: str, players: int | None, policy: str, seed: int, option: list[str] | None,
             seating: str) -> RaceRun:
    """The run of these settings; `players` None: the default, which a design
    without a four-player game refuses saying that --players was not given."""
    if players is None:
        design = design_or_fail(deck)
        if DEFAULT_PLAYERS not in design.players:
            fail(f"{design.source}: {design.title} is played by {', '.join(map(str, design.players))} players; "
                 f"give --players (without it, {DEFAULT_PLAYERS})")
        players = DEFAULT_PLAYERS
    try:
        return RaceRun(deck, players, split_policies(policy), seed, parse_options(option), seating)
    except (DesignError, PolicyError, ValueError) as exc:
        fail(str(exc))


def simulate_race(deck: str, players: int | None, games: int, policy: str, seed: int, out: Path | None,
                  option: list[str] | None, seating: str, chunk_size: int,
                  share: tuple[int, int] | None = None) -> None:
    """Play the run chunk by chunk, printing a running summary; with `out`,
    save each chunk and join them into the run file. Records are never held
    beyond their chunk (the Python API's `simulate` returns them all).
    With `share` (K, M), play only that share of the chunks, save them and
    leave the joining to a run without a share (the summary is the share's)."""
    run = make_run(deck, players, policy, seed, option, seating)
    meta = run.metadata(games)
    seconds = 0.0  # playing time of every chunk, those of an interrupted earlier session included
    writing = 0.0  # this session's time saving the chunks: the cost of --out, said apart from the play
    summary = _RunningSummary(run)
    parts = None
    if out is not None:
        identity = run_identity(meta)
        try:
            if finished(out, identity):
                say_nothing_to_play(out)
                read_summary(out, summary)
                summary.print(read_metadata(out), None)
                return
            parts = ChunkedRun(out, identity, chunk_size)
        except ValueError as exc:
            fail(str(exc))
        chunk_size = resume_in_chunks_of(parts, chunk_size, games, "games")
    n_chunks = chunk_count(games, chunk_size)
    check_share(share, n_chunks, chunk_size, "games")
    on_stop = "Nothing is kept: without --out no records are saved." if parts is None else kept_in(parts.parts)
    with progress_bar(share_games(share, games, chunk_size), f"{run.design.name} x{run.players}", on_stop,
                      compiles=True) as advance:
        # Compile or load the kernels first: the run's time is that of its games.
        startup = run.load_kernels() if parts is None or not all(parts.done(i) for i in range(n_chunks) if in_share(share, i)) else None
        advance(0)  # the kernels are ready: the bar stops saying it compiles them
        for index, first in enumerate(range(0, games, chunk_size)):
            if not in_share(share, index):
                continue
            count = min(chunk_size, games - first)
            if parts is not None and parts.done(index):
                frame, took = parts.load(index), parts.seconds(index)  # finished before an interruption
            else:
                started = time.perf_counter()
                try:
                    frame = run.play(first, count)
                except PolicyError as exc:
                    fail(str(exc))
                took = time.perf_counter() - started
                if parts is not None:
                    parts.save(index, frame, took)
                    writing += time.perf_counter() - started - took
            seconds += took
            summary.add(frame)
            advance(count)
    meta["wall_seconds"] = round(seconds, 3)
    if share is not None:
        say_share_written(share, [parts], n_chunks)
    elif parts is not None:
        started = time.perf_counter()
        with progress_bar(n_chunks, f"joining the chunks into {out}", joining_kept([parts])) as joined:
            parts.join(n_chunks, meta, joined)
        say_written(f"{out} ({counted(games, 'game')})", writing + time.perf_counter() - started)
    summary.print(meta, startup)


def read_summary(out: Path, summary: "_RunningSummary") -> None:
    """Add the records of a finished run file to `summary`, with a bar (a run
    of millions of games takes seconds to read)."""

    with progress_bar(row_count(out), f"reading {out}",
                      f"{out} is complete: nothing is lost.") as bar:
        for frame in iter_parquet(out):
            summary.add(frame)
            bar(len(frame))


class _RunningSummary:
    """The short table `simulate` prints: seat wins, length, turn-cap hits."""

    def __init__(self, run: RaceRun):
        self.run = run
        self.games = 0
        self.wins = np.zeros(run.players, np.int64)
        self.no_winner = 0
        self.capped = 0
        self.hand_capped = 0
        self.turns = 0
        self.hands = 0
        self.policy_wins = np.zeros(len(run.distinct), np.int64)
        self.policy_side_games = np.zeros(len(run.distinct), np.int64)
        self.policy_games = np.zeros(len(run.distinct), np.int64)

    def add(self, frame: pd.DataFrame) -> None:
        last = frame[frame["last_hand"] == 1]
        self.games += len(last)
        self.hands += len(frame)
        self.turns += int(last["game_turns"].sum())
        self.capped += int((last["capped"] == CAPPED_TURNS).sum())
        self.hand_capped += int((last["capped"] == CAPPED_HANDS).sum())
        winner = last["winner_side"].to_numpy()
        self.no_winner += int((winner < 0).sum())
        for p in range(self.run.players):
            self.wins[p] += int((winner == p % self.run.sides).sum())
        seat_policy = last[[f"seat{p}_policy" for p in range(self.run.players)]].to_numpy(np.int64)
        side_games, wins, games = policy_side_games(seat_policy, winner, [p % self.run.sides for p in range(self.run.players)],
                                             len(self.run.distinct))
        self.policy_side_games += side_games
        self.policy_wins += wins
        self.policy_games += games

    def print(self, meta: dict, startup: float | None) -> None:
        """The tables and a last line; startup: seconds to compile or load the
        kernels, None when no game was played now."""
        decided = self.games - self.no_winner
        table = Table(*folding("seat", "side", "policy", "wins"), *folding("win rate", "95 % interval", min_width=RATE_WIDTH),
                      title=f"summary (win rates among the {counted(decided, 'game')} with a winner)")
        for p in range(self.run.players):
            table.add_row(str(p), str(p % self.run.sides), self.run.seat_specs[p].name if self.run.seating == "fixed"
                          else "rotated", str(self.wins[p]), *_rate_cells(*_wilson(int(self.wins[p]), decided)))
        console.print(table)
        if len(self.run.distinct) > 1:
            by_policy = Table(*folding("policy", "side-games", "won"),
                              *folding("win rate", "95 % interval", min_width=RATE_WIDTH),
                              title="by policy (games with a winner, once for each side the policy plays)")
            rates = policy_rate_columns(self.policy_wins, self.policy_side_games, self.policy_games)
            for k, spec in enumerate(self.run.distinct):
                by_policy.add_row(spec.name, str(self.policy_side_games[k]), str(self.policy_wins[k]),
                                  *_rate_cells(rates["rate"][k], rates["ci_low"][k], rates["ci_high"][k]))
            console.print(by_policy)
        console.print(f"{counted(self.games, 'game')}, {counted(self.hands, 'hand')}, {self.turns / self.games:.1f} turns per game, "
                      f"no winner {self.no_winner}, turn cap hit {self.capped}"
                      + (f", hand cap ({meta.get('hand_cap')} hands) hit {self.hand_capped}" if self.run.multi_hand else "")
                      + "; "
                      f"{play_time_text(meta['wall_seconds'], self.games, 'games')})"
                      + ("" if startup is None else f", after {startup:.2f} s to compile or load the kernels"))
        self.warn_capped(meta)

    def warn_capped(self, meta: dict) -> None:
        """One line on stderr when games hit a cap: they have no winner, and
        the win rates leave them out."""
        cut = self.capped + self.hand_capped
        if not cut:
            return
        caps = " or ".join(text for count, text in (
            (self.capped, f"the turn cap of {counted(int(self.run.rules[R_TURN_CAP]), 'turn')} a hand"),
            (self.hand_capped, f"the hand cap of {meta.get('hand_cap')} hands")) if count)
        warn_no_winner(cut, self.games, f"hit {caps}", "there are no win rates",
                       "the win rates are among the games with one", bool(self.run.user_policies))


def warn_no_winner(cut: int, games: int, why: str, none_then: str, some_then: str, user_policies: bool) -> None:
    """One line on stderr when `cut` of `games` games have no winner: `why`
    ("hit the turn cap of 5 turns a hand"), what follows when none has one
    (`none_then`, with advice) and when some have one (`some_then`)."""
    if cut == games:
        yours = " a policy of your own may never lay distance;" if user_policies else ""
        err_console.print(f"warning: all {counted(cut, 'game')} {why}: none has a winner, so {none_then}. Replay one "
                          f"(etappe replay) to see where the games stall:{yours} a design whose games cannot end needs "
                          "other cards, a long one a higher -o turn_cap.", highlight=False)
    elif cut:
        err_console.print(f"warning: {cut} of {counted(games, 'game')} {why}: no winner; {some_then}.", highlight=False)


def _wilson(wins: int, n: int) -> tuple[float, float, float]:
    """A win rate and its 95 % Wilson interval; NaN without games."""
    low, high = wilson_interval(wins, n)
    return (wins / n if n else np.nan), low, high


def _rate_cells(rate: float, low: float, high: float) -> tuple[str, str]:
    """A win rate and its 95 % interval as table cells; '-' without games."""
    if np.isnan(rate):
        return "-", "-"
    return f"{rate:.3f}", f"{low:.3f} - {high:.3f}"


def moves_command(deck: str, position_file: Path, option: list[str] | None, as_json: bool) -> None:
    d = design_or_fail(deck)
    try:
        position = read_position_file(position_file)
        moves = legal_moves_of(d, position, str(position_file), parse_options(option))
    except (DesignError, OSError) as exc:
        fail(str(exc))
    if as_json:
        console.print_json(json.dumps(moves))
    else:
        for m in moves:
            console.print(m, highlight=False)


def analyze_command(deck: str, position_file: Path, playouts: int, policy: str, seed: int,
                    option: list[str] | None) -> None:
    d = design_or_fail(deck)
    if len(split_policies(policy)) > 1:
        fail(f"--policy {policy}: analyze plays the hand out with one policy for every seat")
    try:
        position = read_position_file(position_file)
        analyze_policy(policy)  # refused before the bar says the kernels compile
        with progress_bar(playouts, "deals played out", resumable=False, compiles=True) as advance:
            rows = analyze_position(d, position, playouts, policy, parse_options(option), seed, str(position_file),
                                    advance)
    except (DesignError, PolicyError, OSError) as exc:
        fail(str(exc))
    scored = d.scoring is not None
    table = Table("move", "P(best hand score)" if scored else "P(win the hand)", "95 % interval", "playouts",
                  title=f"{d.title}: seat {position.get('on_turn', 0)} to play")
    ranked = sorted(rows, key=lambda r: -r["probability"])
    best_low = wilson_interval(ranked[0]["wins"], ranked[0]["playouts"])[0] if ranked else 0.0
    near = 0  # moves other than the best whose interval reaches the best one's
    for row in ranked:
        low, high = wilson_interval(row["wins"], row["playouts"])
        near += row is not ranked[0] and high >= best_low
        table.add_row(row["move"], f"{row['probability']:.3f}", f"{low:.3f} - {high:.3f}", str(row["playouts"]))
    console.print(table)
    console.print("The unseen cards are dealt afresh for each playout; every move is tried on the same deals, "
                  f"then the hand is played out by {policy} players."
                  + (" A side wins the hand with the strictly highest hand score (a tie is no win); the game's "
                     "running totals are not part of a position." if scored else ""), highlight=False)
    if len({row["probability"] for row in rows}) == 1 and ranked[0]["probability"] in (0.0, 1.0):
        console.print(f"Every move {'wins' if ranked[0]['probability'] else 'loses'} the hand in every playout: "
                      "by the chance to win it, no move is better than another here.", highlight=False)
    elif near:
        console.print(f"{counted(near, 'other move')} {'reaches' if near == 1 else 'reach'} the best move's interval: "
                      "these playouts do not tell them apart (more --playouts narrow every interval).", highlight=False)
    if any(row["asks_extension"] for row in rows):
        margin = analyze_policy(policy).params[P_EXTENSION_MARGIN]
        answer = ("never calls it" if margin > MAX_DISTANCE else "always calls it" if margin < -MAX_DISTANCE
                  else f"calls it when ahead of every other side by at least {margin:g} {d.unit}")
        console.print(f"A move that completes the trip is valued with {policy}'s own answer to the extension "
                      f"({policy} {answer}): --policy cautious values stopping there, --policy bold going on.",
                      highlight=False)


def replay_command(deck: str, players: int | None, policy: str, seed: int, game: int, option: list[str] | None,
                   seating: str, at: tuple[int, int] | None) -> None:
    """`etappe replay DECK ...`: the play-by-play of game `game`, or with `at`
    (hand, turn) the position file of that turn."""
    run = make_run(deck, players, policy, seed, option, seating)
    if at is None:
        typer.echo(run.replay(game))
    else:
        print_file_text(position_file_text(run, deck, game, *at) + "\n")


def replay_run_command(path: Path, game: int, at: tuple[int, int] | None) -> None:
    """`etappe replay RUN.parquet --game I`: game I of that run, played again
    from what its metadata says (`analysis.race.run_of`); with `at`, the
    position file of that hand and turn."""
    run_file_game(path)  # refuses what is no run file; `replay` refuses another game's run
    meta = read_metadata(path)
    try:
        run = run_of(meta, game)
        builtin = meta["design_file"].removeprefix("builtin:") if meta["design_file"].startswith("builtin:") else None
        written = None if builtin else f"DESIGN.toml: the run's design, as etappe decks show {path} --toml > DESIGN.toml writes it"
        text = run.replay(game) if at is None else position_file_text(run, builtin or "DESIGN.toml", game, *at, written)
    except ValueError as exc:
        fail(f"{path}: {exc}")
    if meta.get("version") != package_version():
        err_console.print(f"note: the run was played by etappe {meta.get('version')}, this is {package_version()}; "
                          "where the code that plays games changed between them, the replay may differ from the run's game",
                          highlight=False)
    if at is None:
        typer.echo(text)
    else:
        print_file_text(text + "\n")


def position_file_text(run: RaceRun, deck: str, game: int, hand: int, turn: int, deck_note: str | None = None) -> str:
    """The position at that hand and turn of game `game`, as a position file
    whose comments say where it comes from and how to ask about it (with
    `deck_note`, a line on where the `deck` its commands name comes from)."""
    try:
        position = run.position(game, turn, hand)
    except ValueError as exc:
        fail(str(exc))
    designs_own = run.design.resolved_options()
    flags = "".join(f" -o {k}={value_text(v)}" for k, v in run.options.items() if designs_own[k] != v)
    seat = position["on_turn"]
    header = (f"{run.design.title}, {run.players} players, seed {run.seed}, game {game}: hand {hand}, turn {turn}, "
              f"seat {seat} on turn after its draw (etappe replay --position)\n"
              f"what seat {seat} sees: its own hand, the others' hand sizes, every tableau and the discard pile\n"
              f"legal moves: etappe moves {deck} FILE{flags}\n"
              f"each move's chance to win the hand: etappe analyze {deck} FILE{flags}"
              + (f"\n{deck_note}" if deck_note else ""))
    return position_toml(position, header)


def policies_command(deck: str | None) -> None:
    from etappe.kernels.race_policies import LOOKAHEAD_DESCRIPTION, LOOKAHEAD_PARAMETERS, PARAMETER_RANGES

    if deck == "etape":
        from .etape import policies_command as etape_policies

        etape_policies()
        return
    if deck == "bremen":
        from .bremen import policies_command as bremen_policies

        bremen_policies()
        return
    if deck:
        d = design_or_fail(deck)
        console.print(f"policies for {d.title} (every race design uses the same ones):")
    table = Table("policy", "family", "what it does", "parameters (defaults unless set)")
    table.columns[3].overflow = "fold"  # values are what users type: wrapped, never cut
    table.add_row("random", "random", RANDOM_DESCRIPTION, "-")
    for name, (text, overrides) in PRESETS.items():
        params = ", ".join(f"{k}={overrides.get(k, default):g}" for k, (_, default, _) in GREEDY_PARAMETERS.items())
        table.add_row(name, "greedy", text, params)
    look = ", ".join(f"{k}={d:g}" for k, (_, d, _) in LOOKAHEAD_PARAMETERS.items())
    table.add_row("lookahead", "lookahead", LOOKAHEAD_DESCRIPTION, look + " (+ greedy parameters)")
    table.add_row("FILE.py:FUNCTION", "user", "your own jitted policy (docs/policies.md)", "-")
    console.print(table)
    console.print("lookahead parameters:")
    for key, (_, default, text) in LOOKAHEAD_PARAMETERS.items():
        console.print(f"  {key} (default {default:g}; {PARAMETER_RANGES[key][0]}): {text}", highlight=False)
    console.print("greedy parameters (override with name:key=value,...):")
    for key, (_, default, text) in GREEDY_PARAMETERS.items():
        console.print(f"  {key} (default {default:g}; {PARAMETER_RANGES[key][0]}): {text}", highlight=False)
