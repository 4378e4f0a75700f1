"""Balance statistics of race-game runs as a mergeable summary.

A run (docs/records.md: one row per hand, wide per-side columns, metadata in
``df.attrs`` / the Parquet key ``etappe``) is reduced chunk by chunk to a
`RaceSummary` of sufficient statistics: counts, sums, sums of squares and
exact integer histograms. Two summaries of the same run layout add with
`merge`, so a million-game report never needs a million-row table in memory:

    summary = summarize_chunks(iter_parquet(path), read_metadata(path))

The table functions below (`outcomes_by_seat`, `length_table`,
`card_balance`, ...) turn a summary into tidy DataFrames; every rate carries
n and a 95 % Wilson interval.

Game-level facts come from each game's rows as a whole (the winner and game
turns are on every row, caps and lead changes are summed or or-ed over the
game's hands). `RaceSummarizer` holds back the rows of a game whose last hand
has not arrived yet, so chunks may cut a game anywhere.

Turn order: the "position" of a side in a game is its rank in the turn order
of the game's first hand (the side of ``first_seat`` is position 1). The
first-player advantage is the win rate of position 1; seat uniformity is
tested on the wins per position and, separately, per fixed side.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .runio import check_game
from .stats import (
    IntHistogram,
    bonferroni_z,
    chisquare_uniform,
    grouped_wilson,
    mean_interval,
    rate,
    ratio_difference_interval,
    SKILL_MOMENTS,
    Z95,
    ratio_interval,
    skill_moments,
    skill_table_from_moments,
    wilson_interval,
)

__all__ = [
    "RaceSummary", "RaceSummarizer", "summarize", "summarize_chunks", "game_table", "layout_from", "Layout",
    "head_to_head", "outcomes_by_seat", "outcomes_by_policy", "outcomes_by_position", "trips_by_position",
    "seat_uniformity", "game_end_rates", "length_table", "hist_frame", "tension_table", "progress_table",
    "card_balance", "flag_level", "worth_playing", "anomalies",
]

CARD_STATS = ("drawn", "played", "discarded", "in_hand", "received", "victim_turns", "coups")
HAZARD_ROLES = {"hazard", "limit", "setback", "delay", "attack", "speed_limit"}
RESPONSIVE_ROLES = {"remedy", "end_limit", "end_of_limit", "go"}
EXAMPLES_KEPT = 20
# the records' `capped`: a hand cut off by the turn cap (which ends its game), or a game's last hand where the game
# was cut off by the hand cap; 0 otherwise
CAPPED_TURNS, CAPPED_HANDS = 1, 2

# Thresholds of the rule that flags dead cards and cards that go with losing or winning (see `worth_playing`).
MIN_DRAWN = 50
DEAD_PLAYED_SHARE = 0.10
# No card is judged in a run where more than this share of the games hit the turn cap: the cards of a
# game cut short had no full chance to be played, so "dead" would describe the cap, not the deck.
MAX_CAPPED_FOR_VERDICTS = 0.10
# A comeback from far behind: the eventual winner was behind by at least this share of the trip (of the game
# target, in the score after a hand, in games of several hands). Behind at all says little in a race: a
# four-player Stap op winner is behind by some km at some point in 98 % of games.
FAR_BEHIND_SHARE = 0.25


# ------------------------------------------------------------------ layout
@dataclass(frozen=True)
class Layout:
    """What a run's shape is: sides, seats, cards, rounds (from the metadata)."""

    players: int
    sides: int
    seat_side: tuple[int, ...]
    policies: tuple[str, ...]  # label per seat
    cards: tuple[str, ...]
    card_names: tuple[str, ...]
    card_roles: tuple[str, ...]
    rounds: tuple[int, ...]  # the rounds at whose end the records keep each side's distance
    multi_hand: bool
    unit: str
    policy_names: tuple[str, ...] = ()  # distinct policies; seat{p}_policy indexes them
    seating: str = "fixed"
    target: float = 0.0  # the trip (distance of one hand)
    has_extension: bool = False  # the design lets the trip be extended at this player count
    distance_ceiling: float = np.inf  # the most a side's distance can be: the (extended) trip, unless overshooting is allowed
    game_target: float = 0.0  # the score that ends a game of several hands (0: not in the metadata)

    @property
    def hazard_mask(self) -> np.ndarray:
        return np.array([_role(r) in HAZARD_ROLES or _role(r).startswith("hazard") for r in self.card_roles], bool)

    @property
    def safety_mask(self) -> np.ndarray:
        return np.array([_role(r).startswith("safety") for r in self.card_roles], bool)

    @property
    def roles(self) -> tuple[str, ...]:
        """The card roles, each once, in the order of their first card."""
        return tuple(dict.fromkeys(self.card_roles))

    def side_label(self, side: int) -> str:
        seats = [i for i, s in enumerate(self.seat_side) if s == side]
        if len(seats) == 1:
            return f"seat {seats[0]}"
        return f"side {side} (seats {', '.join(map(str, seats))})"


def _role(role: str) -> str:
    return str(role).strip().lower().replace(" ", "_").replace("-", "_")


def policy_label(policy) -> str:
    """A policy's label: its name as given ({name, family, params} from the engine),
    or 'name(k=v, ...)' for a {name, params} dict without a family; a string as is."""
    if isinstance(policy, str):
        return policy
    name = str(policy.get("name", "?"))
    params = policy.get("params") or {}
    if not params or "family" in policy:
        return name
    return f"{name}({', '.join(f'{k}={v}' for k, v in sorted(params.items()))})"


def layout_from(meta: dict, columns=None) -> Layout:
    """The run layout from its metadata (card keys fall back to the columns)."""
    check_game(meta, "race", "the run is")  # another game's records: their columns are not the race designs'
    players = int(meta.get("players", len(meta.get("seat_side", [])) or 2))
    seat_side = tuple(int(s) for s in meta.get("seat_side", range(players)))
    sides = int(meta.get("sides", max(seat_side) + 1))
    pols = meta.get("policies") or [{"name": "?"}] * players
    policies = tuple(policy_label(p) for p in pols)
    cards_meta = meta.get("cards")
    if cards_meta:
        keys = tuple(str(c["key"]) for c in cards_meta)
        names = tuple(str(c.get("name", c["key"])) for c in cards_meta)
        roles = tuple(str(c.get("role", "")) for c in cards_meta)
    else:
        keys = tuple(c[3:-6] for c in (columns or []) if c.startswith("s0_") and c.endswith("_drawn"))
        names, roles = keys, tuple("" for _ in keys)
    rounds = meta.get("progress_rounds")
    if rounds is None:
        rounds = sorted(int(c[4:]) for c in (columns or []) if c.startswith("s0_r") and c[4:].isdigit())
    elif isinstance(rounds, (int, np.integer)):  # runs written before the records kept sparser rounds: 1 .. N
        rounds = range(1, int(rounds) + 1)
    policy_names = tuple(str(n) for n in meta.get("policy_names") or dict.fromkeys(policies))
    return Layout(
        policy_names=policy_names,
        seating=str(meta.get("seating", "fixed")),
        target=_km(meta.get("target")),
        distance_ceiling=_distance_ceiling(meta),
        game_target=_km((meta.get("scoring") or {}).get("game_target")),
        # runs written before the metadata held it: as then, with the multi-hand designs
        has_extension=bool(meta.get("extension", meta.get("multi_hand", False))),
        players=players,
        sides=sides,
        seat_side=seat_side,
        policies=policies,
        cards=keys,
        card_names=names,
        card_roles=roles,
        rounds=tuple(int(r) for r in rounds),
        multi_hand=bool(meta.get("multi_hand", False)),
        unit=str(meta.get("unit", "km")),
    )


# ------------------------------------------------------------------ summary
@dataclass
class RaceSummary:
    """Sufficient statistics of a run (or of part of one); add with `merge`.

    ``c`` holds additive count/sum arrays, ``h`` integer histograms,
    ``examples`` the smallest game indices showing each anomaly.

    Keys of ``c`` (G = games, H = hands, S = sides, C = cards, R = rounds):
      games, hands, no_winner, capped_games, tie_games, capped_hands (the turn
      cap), hand_capped_games (the hand cap),
      stock_exhausted, reshuffles, extension_called, trip_completed  (scalars)
      side_wins[S], position_wins[S], first_seat_games[P], disqualified[S], safeties[S],
      coups_side[S], hazards_played[S], hazards_received[S]
      policy_side_games[K], policy_wins[K], policy_games[K] (policy_side_games),
      skill_moments[K, K, 8] (stats.skill_moments; finish as in `head_to_head`),
      comeback_games (winner was behind at some point: in distance, or in
      the running score after a hand in games of several hands),
      far_comeback_games (behind by FAR_BEHIND_SHARE of the trip or game
      target, `far_behind`, or more), hazard_decided, hazard_games,
      least_hit_games, least_hit_safety, others_with_safety (the hazard_games with
      one side least hit, and sums over them: game_table)
      card_<stat>[C] for stat in CARD_STATS (sums over sides and hands)
      card_played_by_winner[C], card_played_won_games[C],
      card_units_played[C], card_wins_played[C], card_units_received[C],
      card_wins_received[C] (game-side units of the games with a winner, so
      that their win rates are those of the Outcomes), conservation_breaks,
      and per-game sums of squares and products for the intervals clustered
      by game: card_played_sq, card_drawn_sq, card_played_drawn,
      card_by_winner_sq, card_won_games_sq, card_by_winner_won_games,
      card_wins_received_sq, card_units_received_sq, card_wins_units_received
      [C], card_lift_moments[C, 4, 4]
      role_played, role_drawn and their per-game role_played_sq,
      role_drawn_sq, role_played_drawn [L] (L = Layout.roles: the cards of a
      role summed in each game, for comparing designs role by role)
      prog_side_s1/s2[S, R], prog_pos_s1/s2[S, R] (every hand counts in
      every round, so their n is the hands)
    Histograms: game_turns, hands_per_game, hand_turns, lead_changes,
      winner_deficit, final_gap, winner_score_deficit.
    """

    layout: Layout
    c: dict[str, np.ndarray] = field(default_factory=dict)
    h: dict[str, IntHistogram] = field(default_factory=dict)
    examples: dict[str, list[int]] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return int(self.c.get("games", 0))

    def merge(self, other: "RaceSummary") -> "RaceSummary":
        """A new summary of both parts (the parts are left untouched)."""
        if other.layout != self.layout:
            raise ValueError("cannot merge summaries of runs with different layouts")
        out = RaceSummary(self.layout)
        for key in self.c.keys() | other.c.keys():
            a, b = self.c.get(key), other.c.get(key)
            out.c[key] = copy.copy(b) if a is None else copy.copy(a) if b is None else a + b
        for key in self.h.keys() | other.h.keys():
            out.h[key] = self.h.get(key, IntHistogram()).merge(other.h.get(key, IntHistogram()))
        for key in self.examples.keys() | other.examples.keys():
            both = sorted(set(self.examples.get(key, [])) | set(other.examples.get(key, [])))
            out.examples[key] = both[:EXAMPLES_KEPT]
        return out

    __add__ = merge


# ------------------------------------------------------------- per-game facts
class MissingColumn(ValueError):
    """A record column every race run file holds is not there: read as zeros, it would give a report of
    made-up numbers."""

    def __init__(self, name: str):
        super().__init__(f"the records have no column {name!r}, which every race run holds: the file is "
                         "damaged, or not written by etappe")


def _col(frame: pd.DataFrame, name: str, default: int = 0) -> np.ndarray:
    """Column `name` as int64, `default` where a value is missing."""
    if name in frame.columns:
        return frame[name].to_numpy(dtype=np.int64, na_value=default)
    raise MissingColumn(name)


def _sides(frame: pd.DataFrame, fmt: str, sides: int) -> np.ndarray:
    return np.stack([_col(frame, fmt.format(s=s)) for s in range(sides)], axis=1)


def _side_ranks(first_seat: np.ndarray, L: Layout) -> np.ndarray:
    """(rows, S) turn-order rank of each side given the first seat of the hand."""
    seats = np.arange(L.players)
    pos = (seats[None, :] - first_seat[:, None]) % L.players  # (rows, P)
    side_of = np.asarray(L.seat_side)
    minpos = np.full((len(first_seat), L.sides), L.players, dtype=np.int64)
    for s in range(L.sides):
        cols = np.flatnonzero(side_of == s)
        if cols.size:
            minpos[:, s] = pos[:, cols].min(axis=1)
    return np.argsort(np.argsort(minpos, axis=1, kind="stable"), axis=1, kind="stable")


@dataclass
class _Games:
    """Per-game arrays of one chunk of complete games (internal)."""

    table: pd.DataFrame
    starts: np.ndarray
    winner: np.ndarray
    hand_ranks: np.ndarray  # (hands, sides): each side's turn-order rank in each hand, from 0


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    g = frame["game"].to_numpy()
    h = frame["hand"].to_numpy()
    ordered = len(g) < 2 or bool(np.all((g[1:] > g[:-1]) | ((g[1:] == g[:-1]) & (h[1:] > h[:-1]))))
    return frame if ordered else frame.sort_values(["game", "hand"], kind="stable").reset_index(drop=True)


def game_table(frame: pd.DataFrame, meta: dict, shared_cards=None) -> pd.DataFrame:
    """One row per (complete) game: the per-game metrics used in reports and pairing.

    Columns: game, hands, game_turns, winner_side (-1: none), capped (any
    hand capped), first_seat (of hand 0), winner_position (turn-order rank of
    the winner's side at hand 0, from 0; -1 none), first_position_won (NaN
    without a winner), first_hand_trip_share (share of the game's completed
    trips made by the side that played first in that hand; NaN without
    one: in games of one hand, whether the first player completed the trip),
    lead_changes (summed over hands), winner_deficit (largest gap behind the
    leader, winner's side, over the hands), winner_deficit_share (the same
    as a share of the trip, comparable across designs), final_gap (winner's total minus
    the best other total at the end), winner_score_deficit (multi-hand:
    largest gap in cumulative score behind after a hand), hazard_turns (turns
    lost by all sides to hazards), hazard_decided (winner lost strictly fewer
    turns to hazards than every other side; NaN without a winner or without
    any turn lost to hazards), least_hit_safety (where hazard_decided is
    defined and one side lost strictly fewer of those turns than every
    other: 1 if that side had a safety on its tableau at the end of a hand,
    else 0), others_with_safety (in the same games: how many of the other
    sides had one),
    dead_share (share of drawn cards discarded or left in hand), won_s{s}
    (side s won); with `shared_cards` (card keys), dead_share_shared, the
    dead share of those cards alone (a comparison gives the keys both
    designs hold). NaN where undefined (no winner, no cards drawn).
    """
    L = layout_from(meta, list(frame.columns))
    return _game_facts(_sorted(frame), L, shared_cards).table


def _distance_ceiling(meta: dict) -> float:
    """The longer of the trip and its extension where distance beyond the trip may not be laid (option
    overshoot "forbid", the default); unbounded under "disqualify" or where the metadata lacks the trip."""
    trip, extension = _km(meta.get("target")), _km(meta.get("extension"))
    overshoot = (meta.get("options") or {}).get("overshoot", "forbid")
    return max(trip, extension) if trip > 0 and overshoot == "forbid" else np.inf


def _km(value) -> float:
    """A distance from the metadata (the trip, the extended trip); 0 where it is missing or no number."""
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


def _game_facts(f: pd.DataFrame, L: Layout, shared_cards=None) -> _Games:
    g = f["game"].to_numpy()
    n = len(g)
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if n else np.zeros(0, dtype=np.int64)
    ends = (np.r_[starts[1:], n] - 1) if n else np.zeros(0, dtype=np.int64)
    G = len(starts)

    def gsum(x):
        return np.add.reduceat(x, starts, axis=0) if G else x[:0]

    def gmax(x):
        return np.maximum.reduceat(x, starts, axis=0) if G else x[:0]

    winner = _col(f, "winner_side", -1)[ends]
    has_w = winner >= 0
    wi = np.where(has_w, winner, 0)
    rows_g = np.arange(G)
    first_seat = _col(f, "first_seat")[starts]
    hand_ranks = _side_ranks(_col(f, "first_seat"), L) if n else np.zeros((0, L.sides), dtype=np.int64)
    wpos = np.where(has_w, hand_ranks[starts][rows_g, wi], -1)
    # per hand: was the trip completed, and by the side that played first in that hand
    trip_side = _col(f, "trip_side", -1)
    done = trip_side >= 0
    first_done = done & (hand_ranks[np.arange(n), np.where(done, trip_side, 0)] == 0)
    trips_g, first_trips_g = gsum(done.astype(np.int64)), gsum(first_done.astype(np.int64))

    deficit = gmax(_sides(f, "s{s}_max_deficit", L.sides))
    totals_last = _sides(f, "s{s}_total", L.sides)[ends].astype(float)
    other_best = np.where(np.eye(L.sides, dtype=bool)[wi], -np.inf, totals_last).max(axis=1) if L.sides > 1 else np.zeros(G)
    final_gap = np.where(has_w, totals_last[rows_g, wi] - other_best, np.nan)

    table = {
        "game": g[starts],
        "hands": ends - starts + 1,
        "game_turns": _col(f, "game_turns")[ends],
        "winner_side": winner,
        "capped": (gmax(_col(f, "capped")) > 0).astype(np.int64),
        "first_seat": first_seat,
        "winner_position": wpos,
        "first_position_won": np.where(has_w, (wpos == 0).astype(float), np.nan),
        "first_hand_trip_share": np.where(trips_g > 0, first_trips_g / np.maximum(trips_g, 1), np.nan),
        "lead_changes": gsum(_col(f, "lead_changes")),
        "winner_deficit": np.where(has_w, deficit[rows_g, wi], np.nan),
        "winner_deficit_share": np.where(has_w, deficit[rows_g, wi], np.nan) / L.target if L.target > 0 else np.nan,
        "final_gap": final_gap,
    }
    if L.multi_hand:
        totals = _sides(f, "s{s}_total", L.sides).astype(float)
        hw = np.repeat(wi, ends - starts + 1)
        hrow = np.arange(n)
        mine = totals[hrow, hw]
        others = np.where(np.eye(L.sides, dtype=bool)[hw], -np.inf, totals).max(axis=1) if L.sides > 1 else mine
        behind = np.maximum(others - mine, 0.0)
        table["winner_score_deficit"] = np.where(has_w, gmax(behind), np.nan)

    hz = L.hazard_mask
    hazard_side = np.zeros((G, L.sides), dtype=np.int64)
    drawn_g = np.zeros(G, dtype=np.int64)
    dead_g = np.zeros(G, dtype=np.int64)
    shared_drawn_g = np.zeros(G, dtype=np.int64)
    shared_dead_g = np.zeros(G, dtype=np.int64)
    for ci, key in enumerate(L.cards):
        drawn = gsum(_sides(f, f"s{{s}}_{key}_drawn", L.sides)).sum(axis=1)
        dead = gsum(_sides(f, f"s{{s}}_{key}_discarded", L.sides) + _sides(f, f"s{{s}}_{key}_in_hand", L.sides)).sum(axis=1)
        drawn_g += drawn
        dead_g += dead
        if shared_cards is not None and key in shared_cards:
            shared_drawn_g += drawn
            shared_dead_g += dead
        if hz[ci]:
            hazard_side += gsum(_sides(f, f"s{{s}}_{key}_victim_turns", L.sides))
    table["hazard_turns"] = hazard_side.sum(axis=1)
    measured = has_w & (table["hazard_turns"] > 0)
    if L.sides > 1:
        others_min = np.where(np.eye(L.sides, dtype=bool)[wi], np.iinfo(np.int64).max, hazard_side).min(axis=1)
        decided = hazard_side[rows_g, wi] < others_min
        # the side least hit, where one side lost strictly fewer turns than every other (-1: a tie)
        fewest = hazard_side.min(axis=1, keepdims=True)
        alone = (hazard_side == fewest).sum(axis=1) == 1
        least = np.where(alone, hazard_side.argmin(axis=1), -1)
    else:
        decided = np.zeros(G, bool)
        least = np.full(G, -1)
    table["hazard_decided"] = np.where(measured, decided.astype(float), np.nan)
    # a safety keeps hazards off its side: where the side least hit has played one more often than the
    # other sides of its games, hazard_decided measures the safety as much as the hazards
    safe = gsum(_sides(f, "s{s}_safeties", L.sides)) > 0
    one_least = measured & (least >= 0)  # a tie for least hit has no side least hit
    least_safe = safe[rows_g, np.maximum(least, 0)]
    table["least_hit_safety"] = np.where(one_least, least_safe.astype(float), np.nan)
    table["others_with_safety"] = np.where(one_least, safe.sum(axis=1) - least_safe, np.nan)
    table["dead_share"] = np.where(drawn_g > 0, dead_g / np.maximum(drawn_g, 1), np.nan)
    if shared_cards is not None:
        table["dead_share_shared"] = np.where(shared_drawn_g > 0, shared_dead_g / np.maximum(shared_drawn_g, 1), np.nan)
    for s in range(L.sides):
        table[f"won_s{s}"] = (winner == s).astype(np.int64)
    return _Games(pd.DataFrame(table), starts, winner, hand_ranks)


# ------------------------------------------------------------- summarizing
def summarize(frame: pd.DataFrame, meta: dict | None = None) -> RaceSummary:
    """Summary of a table of complete games (every hand of each game present).

    `meta` defaults to ``frame.attrs``. Use `RaceSummarizer` (or
    `summarize_chunks`) when chunks may cut a game in two. A table of no
    games (simulate(games=0)) is refused: ValueError.
    """
    if frame.empty:  # no game: no rate, length or card share to give
        raise ValueError("a run of no games has nothing to summarize or report")
    meta = meta if meta is not None else dict(frame.attrs)
    L = layout_from(meta, list(frame.columns))
    frame = _sorted(frame)
    twice = frame.duplicated(["game", "hand"]).to_numpy()
    if twice.any():
        raise ValueError(f"game {frame['game'].to_numpy()[twice][0]}: a hand is in the records twice (two runs "
                         "joined? their games have the same numbers: summarize each run on its own)")
    whole = _whole_games(frame)
    if not whole.all():
        games = sorted(set(frame["game"].to_numpy()[~whole].tolist()))
        raise ValueError(f"incomplete games in the records (a hand missing, or no last hand): {games[:10]}; "
                         "summarize takes whole games (df[df.hand < 2] cuts them short)")
    return _summarize(frame, L)


def _whole_games(frame: pd.DataFrame) -> np.ndarray:
    """Per row of a frame sorted by game and hand: is its game whole, a
    `last_hand` row and one row for each hand before it?"""
    game = frame["game"].to_numpy()
    last = frame["last_hand"].to_numpy() > 0
    count = pd.Series(1, index=game).groupby(level=0).size()
    need = pd.Series(frame["hand"].to_numpy()[last] + 1, index=game[last])
    complete_games = need.index[need.to_numpy() == count.reindex(need.index).to_numpy()]
    return np.isin(game, complete_games.to_numpy())


def _summarize(f: pd.DataFrame, L: Layout, games: _Games | None = None) -> RaceSummary:
    S, C, R = L.sides, len(L.cards), len(L.rounds)
    games = games if games is not None else _game_facts(f, L)
    t = games.table
    G = len(t)
    winner = t["winner_side"].to_numpy()
    has_w = winner >= 0
    wi = np.where(has_w, winner, 0)
    capped = t["capped"].to_numpy() > 0
    out = RaceSummary(L)
    c = out.c

    c["games"] = np.int64(G)
    c["hands"] = np.int64(len(f))
    c["no_winner"] = np.int64((~has_w).sum())
    c["capped_games"] = np.int64(capped.sum())
    c["tie_games"] = np.int64((~has_w & ~capped).sum())
    c["capped_hands"] = np.int64((_col(f, "capped") == CAPPED_TURNS).sum())
    c["hand_capped_games"] = np.int64((_col(f, "capped") == CAPPED_HANDS).sum())
    c["stock_exhausted"] = np.int64((_col(f, "stock_exhausted") > 0).sum())
    c["reshuffles"] = np.int64(_col(f, "reshuffles").sum())
    c["extension_called"] = np.int64((_col(f, "extension_side", -1) >= 0).sum())
    c["trip_completed"] = np.int64((_col(f, "trip_side", -1) >= 0).sum())
    c["side_wins"] = np.bincount(winner[has_w], minlength=S).astype(np.int64)
    wpos = t["winner_position"].to_numpy()
    c["position_wins"] = np.bincount(wpos[wpos >= 0], minlength=S).astype(np.int64)
    # policies: seat{p}_policy (per game, hand 0) indexes policy_names; without
    # the columns every seat keeps the policy of the metadata
    seat_policy = np.zeros((G, L.players), dtype=np.int64)
    for p in range(L.players):
        col = f"seat{p}_policy"
        if col in f.columns:
            seat_policy[:, p] = f[col].to_numpy(dtype=np.int64)[games.starts]
        else:
            seat_policy[:, p] = L.policy_names.index(L.policies[p]) if L.policies[p] in L.policy_names else 0
    c["policy_side_games"], c["policy_wins"], c["policy_games"] = policy_side_games(seat_policy, winner, L.seat_side,
                                                                                    len(L.policy_names))
    c["skill_moments"] = skill_moments(seat_policy.T, list(_finish_keys(f, games, L).T), len(L.policy_names),
                                       L.seat_side)
    c["first_seat_games"] = np.bincount(t["first_seat"].to_numpy() % L.players, minlength=L.players).astype(np.int64)
    for name, col in (("disqualified", "disqualified"), ("safeties", "safeties"), ("coups_side", "coups"),
                      ("hazards_played", "hazards_played"), ("hazards_received", "hazards_received")):
        c[name] = _sides(f, "s{s}_" + col, S).sum(axis=0)
    # A comeback: the winner was behind at some point; in games of several
    # hands, behind in the running score after a hand (in distance, almost
    # every winner is behind in some hand).
    behind = t["winner_score_deficit" if L.multi_hand else "winner_deficit"].to_numpy()
    c["comeback_games"] = np.int64((behind[has_w] > 0).sum())
    far = far_behind(L)
    if far > 0:
        c["far_comeback_games"] = np.int64((behind[has_w] >= far).sum())
    hd = t["hazard_decided"].to_numpy()
    c["hazard_games"] = np.int64((~np.isnan(hd)).sum())
    c["hazard_decided"] = np.int64(np.nansum(hd))
    least_hit = t["least_hit_safety"].to_numpy()
    c["least_hit_games"] = np.int64((~np.isnan(least_hit)).sum())
    c["least_hit_safety"] = np.int64(np.nansum(least_hit))
    c["others_with_safety"] = np.int64(np.nansum(t["others_with_safety"].to_numpy()))

    # cards
    starts = games.starts
    rows_g = np.arange(G)
    for stat in CARD_STATS:
        c[f"card_{stat}"] = np.zeros(C, dtype=np.int64)
    for name in ("played_by_winner", "played_won_games", "units_played", "wins_played",
                 "units_received", "wins_received",
                 # per-game sums of squares and products, for intervals clustered by game
                 "played_sq", "drawn_sq", "played_drawn", "by_winner_sq", "won_games_sq", "by_winner_won_games",
                 "wins_received_sq", "units_received_sq", "wins_units_received"):
        c[f"card_{name}"] = np.zeros(C, dtype=np.int64)
    # per game with a winner, v = (winning sides that played the card, sides that
    # played it, winning sides that did not, sides that did not): sums of v v^T, for
    # the win lift's interval clustered by game (ratio_difference_interval)
    c["card_lift_moments"] = np.zeros((C, 4, 4), dtype=np.int64)
    role_of = [L.roles.index(r) for r in L.card_roles]
    role_played_g = np.zeros((G, len(L.roles)), dtype=np.int64)
    role_drawn_g = np.zeros((G, len(L.roles)), dtype=np.int64)
    breaks = 0
    for ci, key in enumerate(L.cards):
        per = {stat: _sides(f, f"s{{s}}_{key}_{stat}", S) for stat in CARD_STATS}
        for stat in CARD_STATS:
            c[f"card_{stat}"][ci] = per[stat].sum()
        if all(f"s0_{key}_{x}" in f.columns for x in ("drawn", "played", "discarded", "in_hand")):
            breaks += int((per["drawn"] != per["played"] + per["discarded"] + per["in_hand"]).sum())
        if G:
            pg = np.add.reduceat(per["played"], starts, axis=0)  # (G, S)
            rg = np.add.reduceat(per["received"], starts, axis=0)
            won = np.zeros((G, S), bool)
            won[rows_g[has_w], winner[has_w]] = True
            c["card_played_by_winner"][ci] = pg[rows_g, wi][has_w].sum()
            c["card_played_won_games"][ci] = pg[has_w].sum()
            # win rates among the games with a winner, as in the Outcomes: a capped game is no loss
            pg_w, rg_w, won_w = pg[has_w], rg[has_w], won[has_w]
            c["card_units_played"][ci] = (pg_w > 0).sum()
            c["card_wins_played"][ci] = ((pg_w > 0) & won_w).sum()
            c["card_units_received"][ci] = (rg_w > 0).sum()
            c["card_wins_received"][ci] = ((rg_w > 0) & won_w).sum()
            played_g = pg.sum(axis=1)
            drawn_g = np.add.reduceat(per["drawn"], starts, axis=0).sum(axis=1)
            role_played_g[:, role_of[ci]] += played_g
            role_drawn_g[:, role_of[ci]] += drawn_g
            by_winner_g = pg[rows_g, wi][has_w]
            c["card_played_sq"][ci] = (played_g * played_g).sum()
            c["card_drawn_sq"][ci] = (drawn_g * drawn_g).sum()
            c["card_played_drawn"][ci] = (played_g * drawn_g).sum()
            c["card_by_winner_sq"][ci] = (by_winner_g * by_winner_g).sum()
            c["card_won_games_sq"][ci] = (played_g[has_w] ** 2).sum()
            c["card_by_winner_won_games"][ci] = (by_winner_g * played_g[has_w]).sum()
            units_received_g, wins_received_g = (rg_w > 0).sum(axis=1), ((rg_w > 0) & won_w).sum(axis=1)
            c["card_units_received_sq"][ci] = (units_received_g * units_received_g).sum()
            c["card_wins_received_sq"][ci] = (wins_received_g * wins_received_g).sum()
            c["card_wins_units_received"][ci] = (wins_received_g * units_received_g).sum()
            units_g, wins_g = (pg_w > 0).sum(axis=1), ((pg_w > 0) & won_w).sum(axis=1)
            v = np.stack([wins_g, units_g, 1 - wins_g, S - units_g], axis=1)
            c["card_lift_moments"][ci] = v.T @ v
    c["conservation_breaks"] = np.int64(breaks)
    c["role_played"], c["role_drawn"] = role_played_g.sum(axis=0), role_drawn_g.sum(axis=0)
    c["role_played_sq"], c["role_drawn_sq"] = (role_played_g**2).sum(axis=0), (role_drawn_g**2).sum(axis=0)
    c["role_played_drawn"] = (role_played_g * role_drawn_g).sum(axis=0)

    # progress per side and per turn-order position (of the hand)
    ranks = games.hand_ranks
    # the turn-order position, in its hand, of the side that completed the trip
    trip_side = _col(f, "trip_side", -1)
    done = trip_side >= 0
    c["trip_position"] = np.bincount(ranks[done, trip_side[done]], minlength=S).astype(np.int64)
    s1, s2 = np.zeros((S, R)), np.zeros((S, R))
    p1, p2 = np.zeros((S, R)), np.zeros((S, R))
    for s in range(S):
        for k, r in enumerate(L.rounds):
            x = _col(f, f"s{s}_r{r}").astype(float)
            s1[s, k] += x.sum()
            s2[s, k] += (x * x).sum()
            p1[:, k] += np.bincount(ranks[:, s], weights=x, minlength=S)
            p2[:, k] += np.bincount(ranks[:, s], weights=x * x, minlength=S)
    c["prog_side_s1"], c["prog_side_s2"], c["prog_pos_s1"], c["prog_pos_s2"] = s1, s2, p1, p2

    # histograms
    h = out.h
    h["game_turns"] = IntHistogram.of(t["game_turns"].to_numpy())
    h["hands_per_game"] = IntHistogram.of(t["hands"].to_numpy())
    h["hand_turns"] = IntHistogram.of(_col(f, "turns"))
    h["lead_changes"] = IntHistogram.of(t["lead_changes"].to_numpy())
    h["winner_deficit"] = IntHistogram.of(t["winner_deficit"].to_numpy())
    h["final_gap"] = IntHistogram.of(t["final_gap"].to_numpy())
    if "winner_score_deficit" in t:
        h["winner_score_deficit"] = IntHistogram.of(t["winner_score_deficit"].to_numpy())

    gidx = t["game"].to_numpy()
    out.examples["capped"] = sorted(gidx[capped].tolist())[:EXAMPLES_KEPT]
    out.examples["tie"] = sorted(gidx[~has_w & ~capped].tolist())[:EXAMPLES_KEPT]
    return out


class RaceSummarizer:
    """Feed chunks of a run (any cut); `result()` is the summary of all complete games.

    Rows of a game whose rows are not all there yet (no ``last_hand`` row, or
    fewer rows than hands) are held back and joined with the next chunk.
    `on_games`, when given, is called with the per-game table of each batch
    of complete games (used by the paired comparison); `shared_cards` is
    game_table's.
    """

    def __init__(self, meta: dict, on_games=None, shared_cards=None):
        self.meta = meta
        self.shared_cards = shared_cards
        self.layout: Layout | None = None
        self.summary: RaceSummary | None = None
        self.pending: pd.DataFrame | None = None
        self.on_games = on_games

    def add(self, frame: pd.DataFrame) -> None:
        if self.pending is not None and len(self.pending):
            frame = pd.concat([self.pending, frame], ignore_index=True)
        if self.layout is None:
            self.layout = layout_from(self.meta, list(frame.columns))
        if len(frame) == 0:
            return
        frame = _sorted(frame)
        done = _whole_games(frame)
        self.pending = frame.loc[~done].reset_index(drop=True)
        ready = frame.loc[done].reset_index(drop=True) if not done.all() else frame
        if len(ready) == 0:
            return
        games = _game_facts(ready, self.layout, self.shared_cards)
        part = _summarize(ready, self.layout, games)
        if self.on_games is not None:
            self.on_games(games.table)
        self.summary = part if self.summary is None else self.summary.merge(part)

    def result(self) -> RaceSummary:
        if self.pending is not None and len(self.pending):
            games = sorted(set(self.pending["game"].tolist()))
            raise ValueError(f"incomplete games in the records (no last hand): {games[:10]}")
        if self.summary is None:
            raise ValueError("the records hold no complete game")
        return self.summary


def summarize_chunks(chunks, meta: dict) -> RaceSummary:
    """Summary of a run given as an iterable of DataFrame chunks (bounded memory)."""
    acc = RaceSummarizer(meta)
    for chunk in chunks:
        acc.add(chunk)
    return acc.result()


# ------------------------------------------------------------------ tables
def _rate_columns(k, n) -> dict:
    lo, hi = wilson_interval(k, n)
    return {"wins": np.asarray(k), "n": np.asarray(n), "rate": rate(k, n), "ci_low": lo, "ci_high": hi}


def policy_side_games(seat_policy: np.ndarray, winner: np.ndarray, seat_side, policies: int):
    """(side-games, wins, games) per policy index: one unit for each game
    with a winner and each side in which the policy holds a seat, a win when
    that side won, so that a fair share is 1/sides as for seats (games
    without a winner are counted under how games end). Partners who share a
    policy count once, as they win together. games: the games with a winner
    in which the policy holds a side (policy_rate_columns). seat_policy
    [games, seats] indexes the policies; winner [games] is a side or -1."""
    decided = winner >= 0
    seat_policy, winner = seat_policy[decided], winner[decided]
    seat_side = np.asarray(seat_side, dtype=np.int64)
    games = np.arange(len(winner))
    holds = np.zeros((len(winner), int(seat_side.max()) + 1, policies), dtype=bool)
    holds[games[:, None], seat_side[None, :], seat_policy] = True
    won = holds[games, winner]
    return (holds.sum(axis=(0, 1)).astype(np.int64), won.sum(axis=0).astype(np.int64),
            holds.any(axis=1).sum(axis=0).astype(np.int64))


def policy_rate_columns(wins, side_games, games) -> dict:
    """A policy's win rate per side-game (policy_side_games) with its 95 %
    interval. A policy on several sides of a game wins on at most one of
    them, so its sides of one game are not independent trials; its games
    are (stats.grouped_wilson; the seat schedule fixes how many sides it
    holds in each game). With one side a game, Wilson's over side-games."""
    wins, side_games, games = (np.asarray(v, dtype=np.int64) for v in (wins, side_games, games))
    low, high = grouped_wilson(wins, side_games, games)
    return {"wins": wins, "n": side_games, "rate": rate(wins, side_games), "ci_low": low, "ci_high": high}


def _finish_keys(f: pd.DataFrame, games: _Games, L: Layout) -> np.ndarray:
    """[games, seats] how each seat finished, higher is better: the winner's
    side ahead of everyone, then the side's total score at the end of the
    game (its distance in designs of one hand)."""
    ends = np.r_[games.starts[1:], len(f)] - 1
    side_key = _sides(f, "s{s}_total", L.sides)[ends].astype(float)
    side_key[np.arange(len(ends)), np.maximum(games.winner, 0)] += np.where(games.winner >= 0, 1e12, 0.0)
    return side_key[:, list(L.seat_side)]


def head_to_head(s: RaceSummary) -> pd.DataFrame:
    """Skill matrix of the run (stats.skill_table_from_moments): for every
    ordered pair of different policies on different sides of a game, how
    often the first finished ahead of the second (the winner's side ahead of
    everyone, then the higher total score, or distance in designs of one
    hand; equal is level), with its interval clustered by game. Partners are
    not opponents. Empty when every seat plays the same policy."""
    names = list(s.layout.policy_names)
    moments = s.c.get("skill_moments", np.zeros((len(names), len(names), len(SKILL_MOMENTS)), np.int64))
    return skill_table_from_moments(names, moments, s.games)


def outcomes_by_seat(s: RaceSummary) -> pd.DataFrame:
    """Win rate of each seat (a seat wins when its side wins) among the games
    with a winner, so that a fair share is 1/sides.

    The policy column is the seat's policy, or "rotated" when policies move
    seat by seat from game to game.
    """
    L = s.layout
    wins = np.array([s.c["side_wins"][L.seat_side[i]] for i in range(L.players)])
    n = np.full(L.players, s.games - int(s.c["no_winner"]))
    pol = list(L.policies) if L.seating == "fixed" else ["rotated"] * L.players
    return pd.DataFrame({"seat": np.arange(L.players), "side": list(L.seat_side), "policy": pol,
                         **_rate_columns(wins, n)})


def outcomes_by_policy(s: RaceSummary) -> pd.DataFrame:
    """Win rate per policy over side-games (policy_side_games: a game with a
    winner counts once for each side in which the policy holds a seat;
    partners count once), with its interval over the games it played
    (policy_rate_columns)."""
    L = s.layout
    side_games = s.c["policy_side_games"]
    return pd.DataFrame({"policy": list(L.policy_names), "side_games": side_games,
                         **policy_rate_columns(s.c["policy_wins"], side_games, s.c["policy_games"])})


def outcomes_by_position(s: RaceSummary) -> pd.DataFrame:
    """Win rate by turn-order position at the start of the game (1 = plays first).

    n = games with a winner, so the rates add up to 1 and compare with the
    fair share 1/sides (the chi-square test uses the same games).
    """
    L = s.layout
    n = np.full(L.sides, s.games - int(s.c["no_winner"]))
    return pd.DataFrame({"position": np.arange(1, L.sides + 1), **_rate_columns(s.c["position_wins"], n),
                         "fair_share": np.full(L.sides, 1.0 / L.sides)})


def trips_by_position(s: RaceSummary) -> pd.DataFrame:
    """Hands in which a side completed the trip, by that side's turn-order
    position in the hand (1 = played first in it). In games of several
    hands the first player moves round each hand, so this shows the edge
    of moving first within a hand, which the game's first player
    (outcomes_by_position) dilutes. n = hands with a completed trip."""
    L = s.layout
    trips = s.c["trip_position"]
    n = np.full(L.sides, int(trips.sum()))
    return pd.DataFrame({"position": np.arange(1, L.sides + 1), **_rate_columns(trips, n),
                         "fair_share": np.full(L.sides, 1.0 / L.sides)})


def sides_differ_in_policy(L: Layout) -> bool:
    """Whether the sides hold different policies for the whole run (fixed
    seating), so that their win rates differ by skill, not only by seat."""
    if L.seating != "fixed":
        return False
    held = {tuple(sorted(p for p, side in zip(L.policies, L.seat_side) if side == s)) for s in range(L.sides)}
    return len(held) > 1


def side_policies(L: Layout, shift: int = 0) -> list[tuple[str, ...]]:
    """The policies each side holds (sorted) when the seat policies are
    moved `shift` seats on (rotated seating moves them one seat a game:
    seat p plays the policy of seat (p + shift) mod players)."""
    P = L.players
    return [tuple(sorted(L.policies[(p + shift) % P] for p in range(P) if L.seat_side[p] == s))
            for s in range(L.sides)]


def mirrored_policies(L: Layout) -> bool:
    """Whether, in every seating the run plays, every side holds the same
    policies, and there are at least two of them: partners of different
    policies, e.g. Mille Bornes at 6 players (3 teams of 2) with
    --policy random,greedy puts one random and one greedy in every team.
    Then every policy sits on every side, so it wins exactly 1/sides of the
    games with a winner, and each policy finishes ahead of each other
    exactly as often as behind, whatever their skill: the run cannot
    measure skill, and win rates or a skill matrix of its policies would
    show the seating, not the policies."""
    if len(set(L.policies)) < 2 or L.sides < 2:
        return False
    shifts = range(L.players) if L.seating != "fixed" else (0,)
    return all(len(set(side_policies(L, k))) == 1 for k in shifts)


def seat_uniformity(s: RaceSummary) -> pd.DataFrame:
    """Chi-square tests of uniform wins over turn-order positions and over fixed sides.

    Only games with a winner count; df = sides - 1; expected is each cell's
    expected count (stats.small_expected_note says when it is too small for
    the p to be more than approximate). The test over sides is left out
    when the sides hold different policies (sides_differ_in_policy): it
    would measure skill. The one over positions stays, as the first seat
    moves round the table and every policy starts equally often.
    """
    rows = []
    tests = [("wins by turn-order position", s.c["position_wins"])]
    if not sides_differ_in_policy(s.layout):
        tests.append(("wins by side (fixed seats)", s.c["side_wins"]))
    if s.layout.multi_hand:
        tests.append(("completed trips by turn-order position in the hand", s.c["trip_position"]))
    for name, counts in tests:
        t = chisquare_uniform(counts)
        rows.append({"test": f"uniform {name}", "chi2": t.statistic, "df": t.df, "p_value": t.p_value, "n": t.n,
                     "expected": t.expected})
    return pd.DataFrame(rows)


def far_behind(L: Layout) -> float:
    """The deficit from which a winner came back from far behind: FAR_BEHIND_SHARE of the trip (of the
    game target, in games of several hands); 0 where the metadata lacks it."""
    return FAR_BEHIND_SHARE * (L.game_target if L.multi_hand else L.target)


def game_end_rates(s: RaceSummary) -> pd.DataFrame:
    """Rates of how games and hands end, each with n and a Wilson interval."""
    G, H = s.games, int(s.c["hands"])
    L = s.layout
    won = G - int(s.c["no_winner"])
    rows = [
        ("games without a winner", int(s.c["no_winner"]), G),
        ("games that hit the cap (stall)", int(s.c["capped_games"]), G),
        ("games tied at the end, or with every side disqualified (no winner, not capped)", int(s.c["tie_games"]), G),
        ("winner was behind in the score after some hand (comeback)" if L.multi_hand
         else "winner was behind at some point (comeback)", int(s.c["comeback_games"]), won),
    ]
    if "far_comeback_games" in s.c:
        far = f"{far_behind(L):g} {'points' if L.multi_hand else L.unit}"
        rows.append((f"winner was behind in the score after some hand by a quarter of the game target ({far}) or more"
                     if L.multi_hand else f"winner was behind by a quarter of the trip ({far}) or more",
                     int(s.c["far_comeback_games"]), won))
    rows += [
        ("hands where the stock ran out", int(s.c["stock_exhausted"]), H),
        ("hands where a side completed the trip", int(s.c["trip_completed"]), H),
    ]
    if s.layout.has_extension:
        rows.append(("hands with an extension called", int(s.c["extension_called"]), H))
    k = np.array([r[1] for r in rows])
    n = np.array([r[2] for r in rows])
    lo, hi = wilson_interval(k, n)
    return pd.DataFrame({"event": [r[0] for r in rows], "count": k, "n": n, "rate": rate(k, n), "ci_low": lo, "ci_high": hi})


def length_table(s: RaceSummary) -> pd.DataFrame:
    """Turns per game (and hands per game, turns per hand for multi-hand
    games); the mean of turns per hand has no interval (the hands of a game
    go together)."""
    rows = [s.h["game_turns"].describe("turns per game")]
    if s.layout.multi_hand:
        rows += [s.h["hands_per_game"].describe("hands per game"),
                 s.h["hand_turns"].describe("turns per hand", interval=False)]
    return pd.DataFrame(rows)


def hist_frame(s: RaceSummary, metric: str) -> pd.DataFrame:
    """Histogram and ECDF data of one integer metric: value, count, ecdf."""
    return s.h[metric].frame()


def tension_table(s: RaceSummary) -> pd.DataFrame:
    """Lead changes per game, the winner's largest deficit, the final gap."""
    u = s.layout.unit
    rows = [s.h["lead_changes"].describe("lead changes per game"),
            s.h["winner_deficit"].describe(f"winner's largest deficit ({u})"),
            s.h["final_gap"].describe("final gap (winner minus runner-up, total)")]
    if "winner_score_deficit" in s.h:
        rows.append(s.h["winner_score_deficit"].describe("winner's largest deficit in score after a hand"))
    return pd.DataFrame(rows)


def progress_table(s: RaceSummary, by: str = "side") -> pd.DataFrame:
    """Mean distance at the end of each round the records keep (Layout.rounds), per side or per turn-order position.

    Columns: group, round, n (hands), mean, sd, ci_low, ci_high (95 % interval
    of the mean), band_low/band_high (mean +- 1 sd, the spread of hands).
    """
    L = s.layout
    if by not in ("side", "position"):
        raise ValueError("by must be 'side' or 'position'")
    key = "side" if by == "side" else "pos"
    s1, s2 = s.c[f"prog_{key}_s1"], s.c[f"prog_{key}_s2"]
    n = int(s.c["hands"])
    rows = []
    for g in range(L.sides):
        m = mean_interval(np.full(len(L.rounds), n), s1[g], s2[g])
        label = L.side_label(g) if by == "side" else f"position {g + 1}"
        rows.append(pd.DataFrame({"group": label, "round": np.array(L.rounds, int), "n": n,
                                  "mean": m["mean"], "sd": m["sd"], "ci_low": m["ci_low"], "ci_high": m["ci_high"],
                                  "band_low": m["mean"] - m["sd"], "band_high": m["mean"] + m["sd"]}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def card_balance(s: RaceSummary, z: float = Z95) -> pd.DataFrame:
    """Per card type: drawn, played, discarded, in hand; shares and win rates.

    played_share = played / drawn; winner_share = share of the plays in
    games with a winner made by the eventual winner's side (fair share is
    1/sides). Their intervals count the cards of a game together, not as
    independent trials (ratio_interval, clustered by game).
    win_when_played / win_when_not: win rate of a side in games in which it
    played the card at least once vs not (units: game x side, in the games
    with a winner, as the win rates of outcomes_by_seat: a game without one
    is no loss), and win_lift their difference, with an interval clustered
    by game as well (the sides of a game go together: when one wins the
    others lose; ratio_difference_interval): an association, not an effect.
    Hazards: received, victim_turns, turns lost per hazard, the victim's win
    rate when hit (games with a winner, clustered by game). Safeties: coups
    fourrés. Intervals at the level whose normal point is z (95 %).
    """
    L = s.layout
    c = s.c
    wins_total = s.games - int(c["no_winner"])
    units = wins_total * L.sides
    drawn, played = c["card_drawn"], c["card_played"]
    _, pl, ph = ratio_interval(s.games, played, drawn, c["card_played_sq"], c["card_drawn_sq"],
                               c["card_played_drawn"], z)
    _, wl, wh = ratio_interval(wins_total, c["card_played_by_winner"], c["card_played_won_games"],
                               c["card_by_winner_sq"], c["card_won_games_sq"], c["card_by_winner_won_games"], z)
    up, wp = c["card_units_played"], c["card_wins_played"]
    un, wn = units - up, wins_total - wp
    lift = ratio_difference_interval(wins_total, wp, up, wn, un, c["card_lift_moments"], z)
    _, rl, rh = ratio_interval(wins_total, c["card_wins_received"], c["card_units_received"], c["card_wins_received_sq"],
                               c["card_units_received_sq"], c["card_wins_units_received"], z)
    frame = pd.DataFrame({
        "card": list(L.cards), "name": list(L.card_names), "role": list(L.card_roles),
        "drawn": drawn, "played": played, "discarded": c["card_discarded"], "in_hand": c["card_in_hand"],
        "played_per_game": rate(played, s.games),
        "played_share": rate(played, drawn), "played_share_low": pl, "played_share_high": ph,
        "dead_share": rate(c["card_discarded"] + c["card_in_hand"], drawn),
        "winner_share": rate(c["card_played_by_winner"], c["card_played_won_games"]),
        "winner_share_low": wl, "winner_share_high": wh,
        "n_played": up, "win_when_played": rate(wp, up), "n_not": un, "win_when_not": rate(wn, un),
        "win_lift": lift["diff"], "win_lift_low": lift["ci_low"], "win_lift_high": lift["ci_high"],
        "received": c["card_received"], "victim_turns": c["card_victim_turns"],
        "turns_lost_per_hazard": rate(c["card_victim_turns"], c["card_received"]),
        "victim_win_rate": rate(c["card_wins_received"], c["card_units_received"]),
        "victim_win_low": rl, "victim_win_high": rh,
        "coups": c["card_coups"],
    })
    frame["hazard"] = L.hazard_mask if len(L.cards) else np.zeros(0, bool)
    frame["safety"] = L.safety_mask if len(L.cards) else np.zeros(0, bool)
    return frame


def flag_level(cards_judged: int, alpha: float = 0.05) -> float:
    """The normal point of the intervals `worth_playing` judges by: Bonferroni's
    correction over the cards judged, so that a run flags a card of no
    effect with a chance of at most `alpha` however many cards its deck holds (one
    card: 1.96, the 95 % interval; ten: 2.81)."""
    return bonferroni_z(cards_judged, alpha)


def worth_playing(s: RaceSummary, min_drawn: int = MIN_DRAWN, dead_share: float = DEAD_PLAYED_SHARE) -> pd.DataFrame:
    """Cards that are almost never worth playing, or that go with losing or
    winning, with the reason.

    The rule (documented in the report): a card drawn at least `min_drawn`
    times is judged, on intervals widened for the number of cards judged
    (`flag_level`), and flagged
      * "dead": the upper end of the interval of played / drawn is below
        `dead_share` (held or thrown away nine times in ten, or more), or
      * "goes with losing" (only cards played by choice: distance, hazards,
        limits, setbacks, safeties): in the games with a winner, the winner
        makes fewer than its fair share (1/sides) of the plays AND sides
        that played it won less often than sides that did not by more than
        the fair share (the win lift's interval entirely below -1/sides: a
        card that all but loses the game, as "goes with winning" asks of a
        card that all but decides it; with no such floor, a large run
        flagged a card whose players win a point less), or
      * "goes with winning" (cards played by choice but distance, which
        every winner lays): the winner makes more than its fair share of
        the plays AND sides that played it won more often than sides that
        did not by more than the fair share (the win lift's interval
        entirely above 1/sides: a card that all but decides the game, not
        one of the many that go with winning a little).
        Remedies, end-of-limit and go cards answer a hazard: a side plays
        them because it was hit, so their link with losing says nothing
        about the card and they are judged by the "dead" rule only.
    All are associations under the policies of the run, not effects. The
    table's attrs hold `judged` (the cards judged) and `z`, the normal point
    of the intervals it judged them by. Where more than a tenth of the games
    hit the turn cap (MAX_CAPPED_FOR_VERDICTS) no card is judged, and attrs
    `withheld` says why (else it is "").
    """
    capped = int(s.c["capped_games"])
    withheld = (f"No card is judged: {capped} of the {s.games} games hit the turn cap, more than "
                f"{MAX_CAPPED_FOR_VERDICTS * 100:g} %, and the cards of a game cut short had no full chance to be played "
                "(raise the turn cap to judge them)." if capped > MAX_CAPPED_FOR_VERDICTS * s.games else "")
    judged = 0 if withheld else int((np.asarray(s.c["card_drawn"]) >= min_drawn).sum())
    z = flag_level(judged)
    cb = card_balance(s, z)
    enough = (cb["drawn"] >= min_drawn) & (not withheld)
    fair = 1.0 / s.layout.sides
    dead = enough & (cb["played_share_high"] < dead_share)
    roles = cb["role"].map(_role)
    chosen = ~roles.isin(RESPONSIVE_ROLES)
    losing = enough & chosen & (cb["winner_share_high"] < fair) & (cb["win_lift_high"] < -fair)
    winning = enough & chosen & (roles != "distance") & (cb["winner_share_low"] > fair) & (cb["win_lift_low"] > fair)
    reason = np.select([dead & chosen, dead, losing, winning],
                       ["dead: almost never played when held",
                        "dead: almost never needed: it answers attacks, which call for fewer",
                        "goes with losing: winners play it less, players of it win far less",
                        "goes with winning: winners play it more, players of it win far more"], "")
    out = cb[["card", "name", "role", "drawn", "played_share", "winner_share", "win_when_played", "win_when_not",
              "win_lift"]].copy()
    out["flag"] = dead | losing | winning
    out["reason"] = reason
    out.attrs.update(judged=judged, z=z, withheld=withheld)
    return out


def anomalies(s: RaceSummary) -> pd.DataFrame:
    """Things a designer should look at: caps, ties, rules that never fire, accounting breaks."""
    L = s.layout
    c = s.c
    rows = []

    def add(check, count, of, detail=""):
        rows.append({"check": check, "count": int(count), "of": int(of), "detail": detail})

    def games(key: str, count: int) -> str:
        # the summary keeps only the first EXAMPLES_KEPT games of each: a shorter list says it is not all
        if not count:
            return ""
        shown = s.examples.get(key, [])
        listed = "games " + ", ".join(map(str, shown))
        return f"first {len(shown)} of {count}: {listed}" if len(shown) < count else listed

    add("games that hit the turn / hand cap", c["capped_games"], s.games, games("capped", int(c["capped_games"])))
    add("games with no winner and no cap (a tie, or every side disqualified)", c["tie_games"], s.games,
        games("tie", int(c["tie_games"])))
    add("hands that hit the turn cap", c["capped_hands"], c["hands"])
    if L.multi_hand:
        add("games that hit the hand cap (no side reached the game target)", c.get("hand_capped_games", 0), s.games)
    # cards by name, as every table of the report shows them (docs/designs.md)
    never = [k for k, d, p in zip(L.card_names, c["card_drawn"], c["card_played"]) if d > 0 and p == 0]
    add("card types drawn but never played", len(never), len(L.cards), ", ".join(never))
    undrawn = [k for k, d in zip(L.card_names, c["card_drawn"]) if d == 0]
    add("card types never drawn", len(undrawn), len(L.cards), ", ".join(undrawn))
    safeties = [k for k, m in zip(L.card_names, L.safety_mask) if m]
    if safeties:
        nocoup = [k for k, m, v in zip(L.card_names, L.safety_mask, c["card_coups"]) if m and v == 0]
        add("safeties never played as a coup fourré", len(nocoup), len(safeties), ", ".join(nocoup))
    add("card accounting breaks (drawn != played + discarded + in hand)", c["conservation_breaks"],
        int(c["hands"]) * L.sides * len(L.cards))
    if int(np.sum(c["disqualified"])):
        add("sides disqualified (overshoot)", int(np.sum(c["disqualified"])), int(c["hands"]) * L.sides)
    if L.has_extension:
        add("hands with an extension called", c["extension_called"], c["hands"])
    return pd.DataFrame(rows)
