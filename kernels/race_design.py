"""Deck designs of the race card family: TOML file -> validated numeric tables.

A design file says everything that differs between Stap op, Mille Bornes,
Touring and any redesign (see docs/designs.md for the format). `load_design`
reads and validates it; `Design.tables(players, options)` turns it into the
two integer arrays the kernels read: a card table (one row per card type) and
a rules vector (named offsets below). Every mistake raises `DesignError` with
the file, the field and the problem.
"""
from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from .options import did_you_mean, is_count_text, option_text, option_value, toml_problem, value_text

MAX_TYPES = 32
MAX_SEATS = 6
MAX_DECK = 400
MAX_SIDES = MAX_SEATS
MAX_HAND_SIZE = 20

ROLES = ("distance", "go", "hazard", "limit", "remedy", "end_limit", "safety", "setback")
# A card's fields beyond key, name, role and count, by the role that takes them (docs/designs.md's card table)
ROLE_FIELDS = {"distance": ("value", "limited", "cap", "target"), "hazard": ("remedy",),
               "safety": ("protects", "acts_as_go"), "setback": ("removes",)}
# The records' columns per side, s{s}_{name} (docs/records.md; kernels/race.py's
# S_* indices, then the running total), and per side and card type,
# s{s}_{card key}_{stat} (race.py's K_* indices): a card key must not make one
# of the first.
SIDE_COLUMNS = ("distance", "score", "safeties", "coups", "hazards_played", "hazards_received",
                "max_deficit", "disqualified")
CARD_COLUMNS = ("drawn", "played", "discarded", "in_hand", "received", "victim_turns", "coups")
(ROLE_DISTANCE, ROLE_GO, ROLE_HAZARD, ROLE_LIMIT, ROLE_REMEDY, ROLE_END_LIMIT,
 ROLE_SAFETY, ROLE_SETBACK) = range(len(ROLES))

# The top of a battle pile: a card type, or one of these.
EMPTY = -1         # nothing played yet
NEEDS_GO = -2      # a safety cancelled the hazard; a go card is still needed
VIRTUAL_GO = -3    # a safety cancelled the hazard and option roll_after_safety is off
BATTLE_TOPS = MAX_TYPES - VIRTUAL_GO  # battle top - VIRTUAL_GO indexes the tables below

# Card table columns.
C_ROLE = 0        # ROLE_*
C_COUNT = 1       # copies in the deck for this player count
C_VALUE = 2       # distance: km; setback: km removed
C_LIMITED = 3     # distance: 1 if it cannot be laid under a limit
C_CAP = 4         # distance: most copies a side may lay in a hand (0: no cap)
C_TARGET = 5      # distance, set targets: copies the set needs
C_REMEDY = 6      # hazard: card type that clears it (the go card for Stop-like hazards)
C_PROTECTED_BY = 7  # hazard, limit, setback: safety type protecting from it, -1 none
C_ACTS_AS_GO = 8  # safety: 1 if it is a permanent go (Right of Way)
C_REMOVES = 9     # setback: distance type it removes
C_CLEARS = 10     # remedy: the hazard type it clears, -1 none, CLEARS_SEVERAL if more than one
C_NCOLS = 11
CLEARS_SEVERAL = -2  # C_CLEARS of a remedy that several hazards name (a user design may)

# Rules vector offsets.
R_NTYPES = 0
R_PLAYERS = 1
R_SIDES = 2
R_HAND_SIZE = 3
R_TARGET_SET = 4          # 1: exact set of stage cards, 0: exact sum
R_TRIP = 5                # sum target (km); set target: its total km
R_EXTENSION = 6           # extended trip (km), 0: no extension
R_RESHUFFLE = 7           # 1: rebuild the stock when it runs out, 0: play out
R_START_LIMITED = 8
R_GO_TYPE = 9
R_OVERSHOOT_DISQUALIFY = 10
R_LIMIT_ON_LIMIT = 11
R_ROLL_AFTER_SAFETY = 12
R_SAFETY_EXTRA_TURN_EMPTY = 13
R_SHUTOUT_FR = 14
R_COUP_FOURRE = 15
R_SCORING = 16            # 1: score hands with the table below, games of hands to R_GAME_TARGET
R_GAME_TARGET = 17
R_PER_SAFETY = 18
R_ALL_SAFETIES = 19
R_COUP_POINTS = 20
R_TRIP_POINTS = 21
R_DELAYED_POINTS = 22
R_SAFE_TRIP_POINTS = 23
R_SAFE_TRIP_TYPE = 24     # -1: no safe-trip bonus
R_EXTENSION_POINTS = 25
R_SHUTOUT_POINTS = 26
R_N_SAFETY_TYPES = 27     # safety types in this player count's deck: "all safeties" means these
R_TURN_CAP = 28           # turns per hand before it is cut off
R_DECK_SIZE = 29
R_SET_TOTAL = 30          # stage cards a set target needs
R_TIED_GAME_PLAYS_ON = 31  # 1: a tie for the highest total at the game target plays another hand
R_GO_WITH_PERMANENT_GO = 32  # 1: a side with a permanent go may still lay a go card
R_COUP_TURN_EMPTY = 33    # 1: a coup fourré on an empty stock still takes the next turn
R_FAILED_EXTENSION_TRIP = 34  # 1: a caller who misses the extended trip still scores the trip points
R_DISCARD_WHEN_NO_PLAY = 35  # 1: a card may be discarded only when no card can be played
R_ROLE_MASKS = 36         # R_ROLE_MASKS + role: bit t set if card type t has that role (as int32 bits)
# Per battle top (index top - VIRTUAL_GO), so that a turn looks them up instead of branching on the top:
R_FITS_AT = R_ROLE_MASKS + len(ROLES)   # bits of the go and remedy types that may be laid on it (no permanent go)
R_MOVING_AT = R_FITS_AT + BATTLE_TOPS    # bit 0: the side may lay distance; bit 1: the same with a permanent go
R_NCOLS = R_MOVING_AT + BATTLE_TOPS

DEFAULT_OPTIONS = {
    "overshoot": "forbid",
    "limit_on_limit": False,
    "roll_after_safety": True,
    "safety_extra_turn_after_stock_empty": False,
    "coup_fourre_turn_after_stock_empty": True,
    "failed_extension_trip_points": False,
    "shutout": "parker",
    "coup_fourre": True,
    "go_with_permanent_go": False,
    "tied_game": "no_winner",
    "discard": "always",
    "turn_cap": 0,            # 0: derived from the deck (see `turn_cap`)
}
OPTION_CHOICES = {"overshoot": ("forbid", "disqualify"), "shutout": ("parker", "fr"),
                  "tied_game": ("no_winner", "play_on"), "discard": ("always", "when_no_play")}
MAX_DISTANCE = 30_000  # the state stores distances as 16-bit integers
# A side's distance in the state: a trip is at most MAX_DISTANCE, so only a side laying beyond its
# trip (option overshoot = "disqualify") could pass it; a card that would take it beyond is not laid.
MAX_LAID = 32_767
HAND_CAP = 60  # hands per game before a multi-hand game is cut off (reported as capped)
MAX_TURN_CAP = 32_767  # the state counts a hand's turns as a 16-bit integer
# Scores and game totals are 32-bit. A hand scores at most the distance plus
# points for MAX_TYPES safeties, all of them, MAX_DECK coups fourrés, trip,
# delayed action, safe trip, extension and MAX_SIDES - 1 shut-outs: with
# MAX_POINTS per field MAX_LAID + 50 000 x 442 = 22 132 767, and HAND_CAP hands
# 1 327 966 020, below 2**31 - 1.
MAX_POINTS = 50_000
MAX_GAME_TARGET = 1_000_000


class DesignError(ValueError):
    """A deck design (or a player count / option for it) that cannot be played."""


class UnusedOptionError(DesignError):
    """A rule option given for a run that changes nothing in the design (`key`)."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


@dataclass
class Card:
    key: str
    name: str
    role: str
    count: int
    value: int = 0
    limited: bool = False
    cap: int = 0
    target: int = 0
    remedy: str | None = None
    protects: list[str] = field(default_factory=list)
    acts_as_go: bool = False
    removes: str | None = None


@dataclass
class Design:
    name: str
    title: str
    source: str            # file path or "builtin:<name>"
    text: str              # the file's text, for hashing and the report header
    unit: str
    players: list[int]
    hand_size: int
    reshuffle: bool
    start_under_limit: bool
    reconstructed: bool
    target_kind: str
    trip: int
    cards: list[Card]
    per_players: dict[int, dict]
    scoring: dict | None
    options: dict

    def card_index(self, key: str) -> int:
        return [c.key for c in self.cards].index(key)

    def sides(self, players: int) -> int:
        return players // self.per_players.get(players, {}).get("team_size", 1)

    def counts(self, players: int) -> dict[str, int]:
        removed = self.per_players.get(players, {}).get("remove", {})
        return {c.key: c.count - removed.get(c.key, 0) for c in self.cards}

    def set_target(self, players: int) -> dict[str, int]:
        override = self.per_players.get(players, {}).get("target")
        if override is not None:
            return {c.key: override.get(c.key, 0) for c in self.cards}
        return {c.key: c.target for c in self.cards}

    def trip_for(self, players: int) -> tuple[int, int]:
        """(trip, extension) in km for a player count; extension 0 if none."""
        spec = self.per_players.get(players, {})
        if self.target_kind == "set":
            target = self.set_target(players)
            return sum(c.value * target[c.key] for c in self.cards if c.role == "distance"), 0
        return spec.get("trip", self.trip), spec.get("extension", 0)

    def resolved_options(self, overrides: dict | None = None) -> dict:
        options = dict(self.options)
        for key, value in (overrides or {}).items():
            if key not in DEFAULT_OPTIONS:
                raise DesignError(f"{self.source}: unknown rule option {key!r} given for this run, not in the design "
                                  f"file{did_you_mean(key, DEFAULT_OPTIONS)}; known: {', '.join(sorted(DEFAULT_OPTIONS))}")
            try:
                options[key] = _check_option(self.source, key, value)
            except DesignError as problem:
                raise DesignError(f"{problem} (given for this run, not in the design file)") from None
        return options

    def unused_options(self, players: int | None = None, options: dict | None = None) -> dict[str, str]:
        """The rule options that change nothing in this design (at `players`;
        None: at every player count it has), each with the reason. `options`
        (default: the design's) matter where one option needs another."""
        opts = options or self.options
        counts = [players] if players is not None else self.players
        # Cards with count 0 (or removed for these player counts) never reach a game.
        dealt = {key for n in counts for key, count in self.counts(n).items() if count > 0}
        roles = {c.key: c.role for c in self.cards if c.key in dealt}
        safeties = [c for c in self.cards if c.role == "safety" and c.key in dealt]
        cancels_hazard = any(roles.get(k) == "hazard" for c in safeties for k in c.protects)
        coup_possible = any(roles.get(k) in ("hazard", "limit", "setback") for c in safeties for k in c.protects)
        why = {}
        if "limit" not in roles.values():
            why["limit_on_limit"] = "its deck has no limit card"
        if not cancels_hazard:
            why["roll_after_safety"] = "no safety cancels a hazard"
        if not any(c.acts_as_go for c in safeties):
            why["go_with_permanent_go"] = "no safety acts as a permanent go"
        if not coup_possible:
            why["coup_fourre"] = why["coup_fourre_turn_after_stock_empty"] = "no safety protects from an attack"
        elif not opts["coup_fourre"]:
            why["coup_fourre_turn_after_stock_empty"] = "coup_fourre is false"
        if not safeties:
            why["safety_extra_turn_after_stock_empty"] = "its deck has no safety"
        for key in ("safety_extra_turn_after_stock_empty", "coup_fourre_turn_after_stock_empty"):
            if self.reshuffle:
                why.setdefault(key, "its stock is rebuilt when it runs out, so it is never empty")
        if self.scoring is None:
            for key in ("shutout", "tied_game", "failed_extension_trip_points"):
                why[key] = "it has no scoring table: a game is one hand, won by the trip"
        elif not any(self.trip_for(n)[1] for n in counts):
            why["failed_extension_trip_points"] = ("it has no extension" if players is None
                                                   else f"it has no extension at {players} players")
        return why

    def tables(self, players: int, options: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' card table (int32 [types, C_NCOLS]) and rules vector (int32 [R_NCOLS])."""
        if players not in self.players:
            raise DesignError(
                f"{self.source}: {self.title} is played by {_plural(self.players)} players, not {players}"
            )
        opts = self.resolved_options(options)
        for key, why in self.unused_options(players, opts).items():
            # Refused, not ignored: the user meant it to change the game. The design file's own
            # options were checked at load time, for all its player counts.
            if opts[key] != DEFAULT_OPTIONS[key] and key in (options or {}):
                raise UnusedOptionError(f"{self.source}: option {option_text({key: opts[key]})} given for this "
                                        f"run changes nothing in {self.title}: {why}", key)
        index = {c.key: i for i, c in enumerate(self.cards)}
        counts = self.counts(players)
        target = self.set_target(players)
        table = np.zeros((len(self.cards), C_NCOLS), dtype=np.int32)
        table[:, C_PROTECTED_BY] = -1
        table[:, C_REMEDY] = -1
        table[:, C_REMOVES] = -1
        table[:, C_CLEARS] = -1
        for i, c in enumerate(self.cards):
            table[i, C_ROLE] = ROLES.index(c.role)
            table[i, C_COUNT] = counts[c.key]
            table[i, C_VALUE] = c.value if c.role != "setback" else self.cards[index[c.removes]].value
            table[i, C_LIMITED] = int(c.limited)
            table[i, C_CAP] = c.cap
            table[i, C_TARGET] = target[c.key] if self.target_kind == "set" else 0
            if c.remedy is not None:
                table[i, C_REMEDY] = index[c.remedy]
                if c.role == "hazard" and self.cards[index[c.remedy]].role == "remedy":
                    cleared = table[index[c.remedy], C_CLEARS]
                    table[index[c.remedy], C_CLEARS] = i if cleared == -1 else CLEARS_SEVERAL
            if c.removes is not None:
                table[i, C_REMOVES] = index[c.removes]
            table[i, C_ACTS_AS_GO] = int(c.acts_as_go)
            for protected in c.protects:
                table[index[protected], C_PROTECTED_BY] = i
        trip, extension = self.trip_for(players)
        sc = self.scoring or {}
        rules = np.zeros(R_NCOLS, dtype=np.int32)
        rules[R_NTYPES] = len(self.cards)
        rules[R_PLAYERS] = players
        rules[R_SIDES] = self.sides(players)
        rules[R_HAND_SIZE] = self.hand_size
        rules[R_TARGET_SET] = int(self.target_kind == "set")
        rules[R_TRIP] = trip
        rules[R_EXTENSION] = extension
        rules[R_RESHUFFLE] = int(self.reshuffle)
        rules[R_START_LIMITED] = int(self.start_under_limit)
        rules[R_GO_TYPE] = next(i for i, c in enumerate(self.cards) if c.role == "go")
        rules[R_OVERSHOOT_DISQUALIFY] = int(opts["overshoot"] == "disqualify")
        rules[R_LIMIT_ON_LIMIT] = int(opts["limit_on_limit"])
        rules[R_ROLL_AFTER_SAFETY] = int(opts["roll_after_safety"])
        rules[R_SAFETY_EXTRA_TURN_EMPTY] = int(opts["safety_extra_turn_after_stock_empty"])
        rules[R_COUP_TURN_EMPTY] = int(opts["coup_fourre_turn_after_stock_empty"])
        rules[R_FAILED_EXTENSION_TRIP] = int(opts["failed_extension_trip_points"])
        rules[R_SHUTOUT_FR] = int(opts["shutout"] == "fr")
        rules[R_COUP_FOURRE] = int(opts["coup_fourre"])
        rules[R_GO_WITH_PERMANENT_GO] = int(opts["go_with_permanent_go"])
        rules[R_TIED_GAME_PLAYS_ON] = int(opts["tied_game"] == "play_on")
        rules[R_DISCARD_WHEN_NO_PLAY] = int(opts["discard"] == "when_no_play")
        rules[R_SCORING] = int(self.scoring is not None)
        rules[R_GAME_TARGET] = sc.get("game_target", 0)
        rules[R_PER_SAFETY] = sc.get("per_safety", 0)
        rules[R_ALL_SAFETIES] = sc.get("all_safeties", 0)
        rules[R_COUP_POINTS] = sc.get("coup_fourre", 0)
        rules[R_TRIP_POINTS] = sc.get("trip_completed", 0)
        rules[R_DELAYED_POINTS] = sc.get("delayed_action", 0)
        rules[R_SAFE_TRIP_POINTS] = sc.get("safe_trip", 0)
        rules[R_SAFE_TRIP_TYPE] = index[sc["safe_trip_card"]] if "safe_trip_card" in sc else -1
        rules[R_EXTENSION_POINTS] = sc.get("extension", 0)
        rules[R_SHUTOUT_POINTS] = sc.get("shutout", 0)
        rules[R_N_SAFETY_TYPES] = sum(1 for c in self.cards if c.role == "safety" and counts[c.key] > 0)
        rules[R_DECK_SIZE] = sum(counts.values())
        rules[R_TURN_CAP] = opts["turn_cap"] or turn_cap(self, players)
        rules[R_SET_TOTAL] = sum(target[c.key] for c in self.cards if c.role == "distance")
        for r, role in enumerate(ROLES):
            rules[R_ROLE_MASKS + r] = _int32_bits(sum(1 << i for i, c in enumerate(self.cards) if c.role == role))
        # By battle top: a hazard takes its remedy (the go card for a
        # Stop-like hazard); a remedy, an empty pile or a cancelled hazard
        # still needing a go card take the go card; a go card, or a hazard
        # cancelled with no go card needed (VIRTUAL_GO), take neither. A
        # side may lay distance under a go card or VIRTUAL_GO; with a
        # permanent go, under anything but a hazard.
        go = 1 << rules[R_GO_TYPE]
        for top in range(VIRTUAL_GO, len(self.cards)):
            top_role = self.cards[top].role if top >= 0 else None
            if top_role == "hazard":
                fits = 1 << table[top, C_REMEDY]  # its remedy, or the go card for Stop-like hazards
            elif top_role == "remedy" or top in (EMPTY, NEEDS_GO):
                fits = go
            else:
                fits = 0  # a go card already, or VIRTUAL_GO
            moving = int(top == VIRTUAL_GO or top_role == "go") | int(top_role != "hazard") << 1
            rules[R_FITS_AT + top - VIRTUAL_GO] = _int32_bits(fits)
            rules[R_MOVING_AT + top - VIRTUAL_GO] = moving
        return table, rules


def _int32_bits(mask: int) -> int:
    """A 32-bit mask as the int32 with the same bits."""
    return mask - (1 << 32) if mask >= 1 << 31 else mask


def turn_cap(design: Design, players: int) -> int:
    """Default turns per hand before a hand is cut off.

    A play-out hand cannot last longer than the deck (every turn moves one card
    out of a hand), so its cap is never reached by a legal hand. A reshuffle
    hand can cycle for ever; 40 turns per card of the deck is far beyond any
    game seen, so only games that really cannot end hit it.
    """
    deck = sum(design.counts(players).values())
    return deck + players + 1 if not design.reshuffle else 40 * deck


def builtin_names() -> list[str]:
    folder = resources.files("etappe.kernels") / "designs"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_design(name_or_path: str | Path) -> Design:
    """Load a built-in design by name (`stapop`, `millebornes`, `touring`) or a TOML file."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"a design is a built-in name ({', '.join(builtin_names())}), a TOML file's path or a "
                        f"loaded Design, not {type(name_or_path).__name__}")
    text_name = str(name_or_path)
    if text_name in builtin_names():
        text = (resources.files("etappe.kernels") / "designs" / f"{text_name}.toml").read_text("utf-8")
        return parse_design(text, f"builtin:{text_name}")
    path = Path(name_or_path)
    if not path.exists():
        close = difflib.get_close_matches(text_name, builtin_names(), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise DesignError(
            f"{text_name}: no such design file, and not a built-in design ({', '.join(builtin_names())}){hint}"
        )
    if path.is_dir():
        raise DesignError(f"{path}: a folder, not a design file (TOML)")
    if path.suffix.lower() == ".parquet":
        raise DesignError(f"{path}: a run file, not a design; `etappe report {path}` reports on it, and "
                          f"`etappe decks show {path} --toml` prints the design it was played with")
    try:
        text = path.read_text("utf-8-sig")  # a byte-order mark, as some editors write, is not TOML
    except UnicodeDecodeError:
        raise DesignError(f"{path}: not a design file (a design is TOML text, UTF-8)") from None
    return parse_design(text, str(path))


def parse_design(text: str, source: str) -> Design:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DesignError(f"{source}: not valid TOML: {toml_problem(exc, text)}") from None
    return _design_from_tables(raw, text, source)


def design_variant(design: Design, path: str, value) -> Design:
    """The design with one setting of its file changed: `path` is the
    setting's place in the file, dotted (`cards.stop.count`, a card by its
    key; `options.coup_fourre`; `target.trip`; `players.4.trip`;
    `scoring.safe_trip`), `value` a TOML value. The variant is validated as
    a file of its own would be; its text (and so its hash) is the file's
    with a comment naming the change."""
    raw = tomllib.loads(design.text)
    table, key = _setting_place(raw, path, design.source, create=True)
    table[key] = value
    text = f"{design.text.rstrip()}\n# etappe variant: {path} = {value!r}\n"
    return _design_from_tables(raw, text, f"{design.source} with {path} = {value_text(value)}")


def file_setting(design: Design, path: str):
    """The value the design's file sets at `path` (as design_variant names
    it), or None where the file leaves it to its default."""
    table, key = _setting_place(tomllib.loads(design.text), path, design.source, create=False)
    return None if table is None else table.get(key)


def _setting_place(raw: dict, path: str, source: str, create: bool) -> tuple[dict | None, str]:
    """(the table of the parsed file that holds setting `path`, its key):
    tables on the way are made where missing with `create`, else the table
    is None."""
    parts = path.split(".")
    if parts[0] == "cards" and len(parts) != 3:
        raise DesignError(f"{source}: {path}: a card's setting is cards.KEY.FIELD, e.g. cards.stop.count")
    table = raw
    for i, part in enumerate(parts[:-1]):
        if i == 1 and parts[0] == "cards":
            found = [card for card in table if isinstance(card, dict) and card.get("key") == part]
            if not found:
                keys = ", ".join(str(card.get("key")) for card in table if isinstance(card, dict))
                raise DesignError(f"{source}: {path}: no card {part!r} in this design (cards: {keys})")
            table = found[0]
        elif part not in table and not create:
            return None, parts[-1]
        else:
            table = table.setdefault(part, {})
            if not isinstance(table, dict) and not (i == 0 and part == "cards"):  # cards: a list, by key above
                kind = "a list" if isinstance(table, list) else "a value"
                raise DesignError(f"{source}: {path}: {'.'.join(parts[:i + 1])} is {kind}, not a table")
    return table, parts[-1]


def _design_from_tables(raw: dict, text: str, source: str) -> Design:
    v = _Validator(source)
    head = v.table(raw, "design")
    target = v.table(raw, "target")
    cards = [_parse_card(v, i, c) for i, c in enumerate(v.array_of_tables(raw, "cards"))]
    for key in ("name", "title", "unit"):
        if not str(head.get(key, "x")).strip():
            v.fail(f"design.{key}", "must not be empty" + ("" if key == "name" else " (leave it out for its default)"))
    design = Design(
        name=v.string(head, "design.name"),
        title=v.string(head, "design.title", default=None) or v.string(head, "design.name"),
        source=source,
        text=text,
        unit=v.string(head, "design.unit", default="km"),
        players=v.player_list(head, "design.players"),
        hand_size=v.integer(head, "design.hand_size", low=1, high=MAX_HAND_SIZE),
        reshuffle=v.choice(head, "design.stock_exhausted", ("reshuffle", "play_out")) == "reshuffle",
        start_under_limit=v.boolean(head, "design.start_under_limit", default=False),
        reconstructed=v.boolean(head, "design.reconstructed", default=False),
        target_kind=v.choice(target, "target.kind", ("sum", "set")),
        trip=0,
        cards=cards,
        per_players={},
        scoring=None,
        options={},
    )
    v.no_unknown(head, "design", {"name", "title", "unit", "players", "hand_size", "stock_exhausted",
                                  "start_under_limit", "reconstructed", "notes"})
    v.no_unknown(raw, "", {"design", "target", "cards", "players", "scoring", "options"})
    if design.target_kind == "sum":
        if "trip" not in target and not difflib.get_close_matches("trip", [str(k) for k in target], n=1):
            per = raw.get("players") if isinstance(raw.get("players"), dict) else {}
            own = {n for n in design.players if isinstance(per.get(str(n)), dict) and "trip" in per[str(n)]}
            without = [n for n in design.players if n not in own]
            v.fail("target.trip", f"missing: a sum target needs its trip in {design.unit}, even where every player "
                   "count has a [players.N] trip, which replaces it for that count" + (f" ({_plural(without)} "
                   f"players: no {', '.join(f'players.{n}.trip' for n in without)})" if own and without else ""))
        design.trip = v.integer(target, "target.trip", low=1, high=MAX_DISTANCE)
        v.no_unknown(target, "target", {"kind", "trip"})
    else:
        if "trip" in target:  # a designer's first guess at the length of a Stap op stage
            v.fail("target.trip", "a set target has no trip: the distance cards' own `target` counts make it "
                   "(cards.KEY.target; a sum target, kind = \"sum\", has a trip)")
        v.no_unknown(target, "target", {"kind"})
    _check_cards(v, design)
    design.per_players = _parse_players(v, raw.get("players", {}), design)
    design.scoring = _parse_scoring(v, raw.get("scoring"), design)
    options = raw.get("options", {})
    if not isinstance(options, dict):
        v.fail("options", "must be a table")
    design.options = dict(DEFAULT_OPTIONS)
    for key, value in options.items():
        if key not in DEFAULT_OPTIONS:
            v.fail(f"options.{key}", f"unknown rule option{did_you_mean(key, DEFAULT_OPTIONS)}; known: {', '.join(sorted(DEFAULT_OPTIONS))}")
        default = DEFAULT_OPTIONS[key]
        if isinstance(value, str) and isinstance(default, int) and key not in OPTION_CHOICES:
            # text is how --option writes a value; a file writes it as TOML does
            kind, example = ("true or false", "false") if isinstance(default, bool) else ("a whole number", "500")
            v.fail(f"options.{key}", f"must be {kind}, written without quotes ({key} = {example}), not {value!r}")
        design.options[key] = _check_option(source, key, value)
    for key, why in design.unused_options().items():
        if key in options and design.options[key] != DEFAULT_OPTIONS[key]:
            v.fail(f"options.{key}", f"{option_text({key: design.options[key]})} changes nothing in this design: "
                   f"{why}; leave it out")
    _check_reachable(v, design)
    return design


def _check_option(source: str, key: str, value):
    try:
        value = option_value(key, value, DEFAULT_OPTIONS[key], OPTION_CHOICES.get(key))
    except ValueError as problem:
        raise DesignError(f"{source}: options.{problem}") from None
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        raise DesignError(f"{source}: options.{key}: must not be negative")
    if key == "turn_cap" and value > MAX_TURN_CAP:
        raise DesignError(f"{source}: options.turn_cap: must be at most {MAX_TURN_CAP}, not {value}")
    return value


def _parse_card(v: "_Validator", i: int, raw: dict) -> Card:
    where = f"cards[{i}]"
    key = v.string(raw, f"{where}.key")
    where = f"cards[{i}] ({key})"
    if not key.replace("_", "a").isalnum() or not key.isascii() or key[0].isdigit():  # "_" alone is a key too
        v.fail(f"{where}.key", "must be letters, digits and _ , not starting with a digit")
    for stat in CARD_COLUMNS:
        if f"{key}_{stat}" in SIDE_COLUMNS + ("total",):
            v.fail(f"{where}.key", f"the card's {stat} column would be named s0_{key}_{stat}, which is already "
                   "a column of the side (docs/records.md); choose another key")
    role = v.choice(raw, f"{where}.role", ROLES)
    allowed = {"key", "name", "role", "count", *ROLE_FIELDS.get(role, ())}
    for name in raw:
        # another role's field is no misspelling: say whose it is rather than list this role's
        owner = next((r for r, names in ROLE_FIELDS.items() if name in names), role)
        if owner != role:
            v.fail(f"{where}.{name}", f"belongs to {owner} cards; this card's role is {role!r} (leave the field "
                   f"out, or make the card a {owner} card)")
        elif name not in allowed:
            # a misspelt field of another role ("protect") would only list this role's
            other = {f: r for r, names in ROLE_FIELDS.items() if r != role for f in names}
            close = difflib.get_close_matches(str(name), [*allowed, *other], n=1)
            if close and close[0] in other:
                v.fail(f"{where}.{name}", f"unknown field; did you mean {close[0]!r}? It belongs to {other[close[0]]} "
                       f"cards, and this card's role is {role!r}")
    card = Card(key=key, name=v.string(raw, f"{where}.name", default=key), role=role,
                count=v.integer(raw, f"{where}.count", low=0, high=MAX_DECK))
    if role == "distance":
        card.value = v.integer(raw, f"{where}.value", low=1, high=10_000)
        card.limited = v.boolean(raw, f"{where}.limited", default=False)
        card.cap = v.integer(raw, f"{where}.cap", low=1, high=MAX_DECK, default=0)
        card.target = v.integer(raw, f"{where}.target", low=0, high=MAX_DECK, default=0)
    elif role == "hazard":
        card.remedy = v.string(raw, f"{where}.remedy", why="a hazard names the card that clears it")
    elif role == "safety":
        card.protects = v.string_list(raw, f"{where}.protects",
                                      why="a safety names the hazards, limits or setbacks it protects from")
        card.acts_as_go = v.boolean(raw, f"{where}.acts_as_go", default=False)
    elif role == "setback":
        card.removes = v.string(raw, f"{where}.removes", why="a setback names the distance card type it takes back")
    v.no_unknown(raw, where, allowed)
    return card


def _check_cards(v: "_Validator", d: Design) -> None:
    if not d.cards:
        v.fail("cards", "a design needs cards")
    if len(d.cards) > MAX_TYPES:
        v.fail("cards", f"{len(d.cards)} card types; at most {MAX_TYPES}")
    keys = [c.key for c in d.cards]
    roles = {c.key: c.role for c in d.cards}
    for key in keys:
        if keys.count(key) > 1:
            where = " and ".join(f"cards[{i}]" for i, k in enumerate(keys) if k == key)
            v.fail("cards", f"card key {key!r} appears more than once ({where}: [[cards]] tables counted from 0)")
    named: dict[str, int] = {}
    for i, c in enumerate(d.cards):
        if not c.name.strip() or not c.name.isprintable():
            v.fail(f"cards[{i}] ({c.key}).name", f"{c.name!r}: reports show cards by name, so a name is text on "
                   "one line (leave it out to show the key)")
        shown = " ".join(c.name.split())  # as a report's table shows it
        if shown in named:
            j = named[shown]
            v.fail(f"cards[{i}] ({c.key}).name", f"{c.name!r} is also the name of cards[{j}] ({d.cards[j].key}); "
                   "reports show cards by name, so give each card its own")
        named[shown] = i
    for role in ("go", "distance"):
        if role not in roles.values():
            v.fail("cards", f"no card with role {role!r}; every design needs one")
    if list(roles.values()).count("go") > 1:
        v.fail("cards", "more than one card type with role 'go'; a design has one go card")
    for i, c in enumerate(d.cards):
        if c.role == "go" and c.count == 0:
            v.fail(f"cards[{i}] ({c.key}).count", "the go card has count 0: no side could ever start moving")
    if "limit" in roles.values() or d.start_under_limit:
        if "end_limit" not in roles.values():
            v.fail("cards", "a limit (or start_under_limit) needs a card with role 'end_limit' to lift it")
    protected_by: dict[str, str] = {}
    for i, c in enumerate(d.cards):
        where = f"cards[{i}] ({c.key})"
        if c.role == "hazard":
            if c.remedy not in roles:
                v.fail(f"{where}.remedy", f"no card {c.remedy!r} in this design")
            if roles[c.remedy] not in ("remedy", "go"):
                v.fail(f"{where}.remedy", f"{c.remedy!r} has role {roles[c.remedy]!r}; a remedy must be a 'remedy' or the 'go' card")
            if c.count > 0 and next(r.count for r in d.cards if r.key == c.remedy) == 0:
                v.fail(f"{where}.remedy", f"{c.remedy!r} has count 0: a side hit by {c.key!r} could never move again")
        if c.role == "safety":
            if not c.protects:
                v.fail(f"{where}.protects", "a safety must protect at least one hazard, limit or setback")
            for p in c.protects:
                if p not in roles:
                    v.fail(f"{where}.protects", f"no card {p!r} in this design")
                if roles[p] not in ("hazard", "limit", "setback"):
                    v.fail(f"{where}.protects", f"{p!r} has role {roles[p]!r}; a safety protects hazards, limits or setbacks")
                if p in protected_by:
                    v.fail(f"{where}.protects", f"{p!r} is listed twice" if protected_by[p] == c.key
                           else f"{p!r} is already protected by {protected_by[p]!r}")
                protected_by[p] = c.key
        if c.role == "setback":
            if c.removes not in roles or roles[c.removes] != "distance":
                v.fail(f"{where}.removes", f"{c.removes!r} is not a distance card of this design")
        if c.role == "distance" and d.target_kind == "sum" and c.target:
            v.fail(f"{where}.target", "per-card targets belong to set targets; this design's target is a sum")
    for i, c in enumerate(d.cards):
        if c.role == "remedy" and not any(h.remedy == c.key for h in d.cards if h.role == "hazard"):
            v.fail(f"cards[{i}] ({c.key})", "a remedy for no hazard: no hazard names it as its remedy")
    total = sum(c.count for c in d.cards)
    if d.hand_size * max(d.players) >= total:
        v.fail("design.hand_size", f"{d.hand_size} cards to each of {max(d.players)} players take "
               f"{d.hand_size * max(d.players)} of the deck's {total}: none would be left to draw")
    if sum(c.count for c in d.cards) > MAX_DECK:
        v.fail("cards", f"{sum(c.count for c in d.cards)} cards; at most {MAX_DECK}")


def _parse_players(v: "_Validator", raw: dict, d: Design) -> dict[int, dict]:
    if not isinstance(raw, dict):
        v.fail("players", "must be a table of player counts")
    keys = {c.key for c in d.cards}
    roles = {c.key: c.role for c in d.cards}
    distance = {c.key for c in d.cards if c.role == "distance"}
    result = {}
    for name, spec in raw.items():
        where = f"players.{name}"
        if not is_count_text(name):  # players.02 or a superscript 2 would be a second [players.2]
            v.fail(where, "not a player count as digits write it, such as [players.2]")
        if int(name) not in d.players:
            v.fail(where, f"not one of design.players ({_plural(d.players)})")
        n = int(name)
        if not isinstance(spec, dict):
            v.fail(where, "must be a table")
        v.no_unknown(spec, where, {"team_size", "trip", "extension", "remove", "target"})
        out: dict = {}
        if "team_size" in spec:
            size = v.integer(spec, f"{where}.team_size", low=1, high=3)
            if n % size:
                v.fail(f"{where}.team_size", f"{n} players cannot form teams of {size}")
            if n // size < 2:
                v.fail(f"{where}.team_size", "a game needs at least two sides")
            out["team_size"] = size
        for key in ("trip", "extension"):
            if key in spec:
                if d.target_kind != "sum":
                    v.fail(f"{where}.{key}", "trip lengths belong to sum targets; this design's target is a set")
                out[key] = v.integer(spec, f"{where}.{key}", low=1, high=MAX_DISTANCE)
        if out.get("extension") and out["extension"] <= out.get("trip", d.trip):
            v.fail(f"{where}.extension", "the extension must be longer than the trip")
        for key in ("remove", "target"):
            if key in spec:
                table = spec[key]
                if not isinstance(table, dict):
                    v.fail(f"{where}.{key}", "must be a table of card key = count")
                for card, count in table.items():
                    if card not in keys:
                        v.fail(f"{where}.{key}.{card}", "no such card in this design")
                    if key == "target" and card not in distance:
                        v.fail(f"{where}.target.{card}", f"{card!r} is a {roles[card]} card; a set target counts "
                               "distance cards")
                    v.integer(table, f"{where}.{key}.{card}", low=0, high=MAX_DECK)
                out[key] = dict(table)
        if "target" in out and d.target_kind != "set":
            v.fail(f"{where}.target", "per-card targets belong to set targets")
        for card, count in out.get("remove", {}).items():
            have = next(c.count for c in d.cards if c.key == card)
            if count > have:
                v.fail(f"{where}.remove.{card}", f"removes {count} but the deck has {have}")
        result[n] = out
    return result


def _parse_scoring(v: "_Validator", raw, d: Design) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        v.fail("scoring", "must be a table")
    numbers = ("game_target", "per_safety", "all_safeties", "coup_fourre", "trip_completed",
               "delayed_action", "safe_trip", "extension", "shutout")
    v.no_unknown(raw, "scoring", set(numbers) | {"safe_trip_card"})
    out = {k: v.integer(raw, f"scoring.{k}", low=1, high=MAX_GAME_TARGET) if k == "game_target"
           else v.integer(raw, f"scoring.{k}", low=0, high=MAX_POINTS, default=0) for k in numbers}
    if "safe_trip_card" in raw:
        card = v.string(raw, "scoring.safe_trip_card")
        if card not in {c.key for c in d.cards if c.role == "distance"}:
            v.fail("scoring.safe_trip_card", f"{card!r} is not a distance card of this design")
        out["safe_trip_card"] = card
    elif out["safe_trip"]:
        v.fail("scoring.safe_trip", f"{out['safe_trip']} points for a trip completed without laying a card, but no "
               "safe_trip_card says which (a distance card's key; Mille Bornes: \"km200\"): the bonus could "
               "never be scored")
    if out["delayed_action"] and d.reshuffle:
        v.fail("scoring.delayed_action", f"{out['delayed_action']} points for a trip completed after the stock ran "
               "out, but stock_exhausted = \"reshuffle\" rebuilds the stock, so it never runs out: the bonus "
               "could never be scored")
    return out


def _check_reachable(v: "_Validator", d: Design) -> None:
    """Every player count must have a target the deck can actually reach."""
    distances = [c for c in d.cards if c.role == "distance"]
    for n in d.players:
        counts = d.counts(n)
        if d.target_kind == "set":
            target = d.set_target(n)
            if sum(target[c.key] for c in distances) == 0:
                v.fail("cards", f"the set target is empty for {n} players: give distance cards a `target`")
            total = sum(c.value * target[c.key] for c in distances)
            if total > MAX_DISTANCE:
                v.fail("cards", f"the set target is {total} {d.unit} for {n} players; at most {MAX_DISTANCE}")
            spec = d.per_players.get(n, {})
            for c in distances:
                where = (f"players.{n}.target.{c.key}" if c.key in spec.get("target", {})
                         else f"cards[{d.cards.index(c)}] ({c.key}).target")
                if target[c.key] > counts[c.key]:
                    # the file's count holds for every player count; only a removal makes it one count's
                    removed = spec.get("remove", {}).get(c.key, 0)
                    has = (f"the deck has {counts[c.key]} for {n} players: players.{n}.remove takes {removed} of "
                           f"its {c.count}" if removed else f"its count is {c.count}")
                    v.fail(where, f"needs {target[c.key]} but {has}")
                if c.cap and target[c.key] > c.cap:
                    v.fail(where, f"needs {target[c.key]} but cap is {c.cap}")
        else:
            trip, extension = d.trip_for(n)
            for goal, what in ((trip, "trip"), (extension, "extension")):
                where = f"players.{n}.{what}" if what in d.per_players.get(n, {}) else f"target.{what}"
                if goal and not _sum_reachable(goal, [(c.value, min(counts[c.key], c.cap or counts[c.key])) for c in distances]):
                    v.fail(where, f"{goal} {d.unit} cannot be laid exactly with this deck's distance cards")
        _check_removals_keep_answers(v, d, n)
        _check_limit_lifts(v, d, n)


def _check_removals_keep_answers(v: "_Validator", d: Design, n: int) -> None:
    """The checks of _check_cards on a go card or remedy of count 0, for the
    deck of n players after its `remove`."""
    counts = d.counts(n)
    deck, removed = sum(counts.values()), sum(d.per_players.get(n, {}).get("remove", {}).values())
    if removed and d.hand_size * n >= deck:
        # _check_cards checked the whole deck; a player count's `remove` can leave too few to deal
        v.fail(f"players.{n}.remove", f"leaves {deck} cards for {n} players, but {d.hand_size} cards to each "
               f"of them take {d.hand_size * n}: none would be left to draw")
    for c in d.cards:
        if c.role == "go" and c.count > 0 and counts[c.key] == 0:
            v.fail(f"players.{n}.remove.{c.key}", f"removes every {c.key!r} for {n} players: no side could ever "
                   "start moving")
    for c in d.cards:
        if c.role == "hazard" and counts[c.key] > 0 and counts[c.remedy] == 0 and d.cards[d.card_index(c.remedy)].count > 0:
            v.fail(f"players.{n}.remove.{c.remedy}", f"removes every {c.remedy!r} for {n} players, but {c.key!r} "
                   "stays in the deck: a side hit by it could never move again")


def _check_limit_lifts(v: "_Validator", d: Design, n: int) -> None:
    """A side that is (or can be) limited must be able to lift the limit if
    the target needs limited distance cards; otherwise no game could end."""
    counts = d.counts(n)
    limits = {c.key for c in d.cards if c.role == "limit" and counts[c.key] > 0}
    if not (d.start_under_limit or limits):
        return
    if any(c.role == "end_limit" and counts[c.key] > 0 for c in d.cards):
        return
    if any(c.role == "safety" and counts[c.key] > 0 and any(d.cards[d.card_index(p)].role == "limit" for p in c.protects)
           for c in d.cards):
        return
    distances = [c for c in d.cards if c.role == "distance"]
    if d.target_kind == "set":
        target = d.set_target(n)
        needed = [c.key for c in distances if c.limited and target[c.key] > 0]
    else:
        free = [(c.value, min(counts[c.key], c.cap or counts[c.key])) for c in distances if not c.limited]
        needed = [c.key for c in distances if c.limited] if not _sum_reachable(d.trip_for(n)[0], free) else []  # the extension is optional
    if not needed:
        return
    end = next(c for c in d.cards if c.role == "end_limit")  # _check_cards makes sure there is one
    where = (f"players.{n}.remove.{end.key}" if end.count > 0
             else f"cards[{d.cards.index(end)}] ({end.key}).count")
    why = "every side starts under the limit" if d.start_under_limit else f"{', '.join(sorted(limits))} can limit a side"
    # a count of 0 in the file holds for every player count; the target, and a removal, are one count's
    none_left = f"has count 0 for {n} players" if end.count > 0 else "has count 0"
    v.fail(where, f"{end.key!r} {none_left} and no safety protects from the limit, but {why} and the target for {n} "
                  f"players needs {', '.join(needed)}, which a limited side cannot lay: no game could end")


def _sum_reachable(goal: int, cards: list[tuple[int, int]]) -> bool:
    reachable = np.zeros(goal + 1, dtype=bool)
    reachable[0] = True
    for value, count in cards:
        for _ in range(count):
            reachable[value:] |= reachable[:-value].copy() if value <= goal else False
    return bool(reachable[goal])


def _plural(items) -> str:
    return ", ".join(str(i) for i in items)


class _Validator:
    """Typed field access that names the file and field in every error."""

    _MISSING = object()

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, problem: str):
        raise DesignError(f"{self.source}: {where}: {problem}")

    def _get(self, raw: dict, path: str, default, why: str = ""):
        """raw's field at the end of `path`; where it is missing and has no
        default, a failure that says `why` the field is needed."""
        key = path.rsplit(".", 1)[-1]
        if key in raw:
            return raw[key]
        if default is self._MISSING:
            close = difflib.get_close_matches(key, [k for k in raw if isinstance(k, str)], n=1)
            self.fail(path, "missing" + (f": {why}" if why else "")
                      + (f" (there is a field {close[0]!r}: misspelt?)" if close else ""))
        return default

    def table(self, raw: dict, key: str) -> dict:
        value = raw.get(key)
        if value is None:
            inside = [name for name, sub in raw.items() if isinstance(sub, dict) and key in sub]
            if inside:
                self.fail(key, f"missing table (there is a field {key!r} in [{inside[0]}]: a [{key}] header before it?)")
            if {"board", "fields"} <= set(raw):  # the tables of a Bremen board file (docs/bremen.md)
                self.fail(key, "missing table: this is a Bremen board file, not a deck design; "
                               "`etappe bremen validate` checks it, `--board` plays it")
            if {"on_turn", "sides"} <= set(raw):  # the fields of a position (docs/positions.md)
                self.fail(key, "missing table: this is a position, not a deck design; `etappe moves DESIGN "
                               "POSITION_FILE` lists its legal moves (the design first)")
            self.fail(key, "missing table")
        if not isinstance(value, dict):
            self.fail(key, "must be a table")
        return value

    def array_of_tables(self, raw: dict, key: str) -> list:
        value = raw.get(key)
        if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
            self.fail(key, "missing [[cards]] entries" if value is None else "must be an array of tables")
        return value

    def string(self, raw, path, default=_MISSING, why=""):
        value = self._get(raw, path, default, why)
        if value is not None and not isinstance(value, str):
            self.fail(path, f"must be a string, not {value!r}")
        return value

    def string_list(self, raw, path, why=""):
        value = self._get(raw, path, self._MISSING, why)
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            self.fail(path, "must be a list of card keys")
        return value

    def boolean(self, raw, path, default=_MISSING):
        value = self._get(raw, path, default)
        if not isinstance(value, bool):
            self.fail(path, f"must be true or false, not {value!r}")
        return value

    def integer(self, raw, path, low=None, high=None, default=_MISSING):
        if default is not self._MISSING and path.rsplit(".", 1)[-1] not in raw:
            return default
        value = self._get(raw, path, default)
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(path, f"must be a whole number, not {value!r}")
        if low is not None and value < low:
            self.fail(path, f"must be at least {low}, not {value}" if low > 0 else f"must not be negative ({value})")
        if high is not None and value > high:
            self.fail(path, f"must be at most {high}, not {value}")
        return value

    def choice(self, raw, path, choices):
        value = self._get(raw, path, self._MISSING)
        if value not in choices:
            self.fail(path, f"{value!r} is not one of: {', '.join(choices)}")
        return value

    def player_list(self, raw, path):
        value = self._get(raw, path, self._MISSING)
        if not isinstance(value, list) or not value or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
            self.fail(path, "must be a non-empty list of player counts")
        for n in value:
            if not 2 <= n <= MAX_SEATS:
                self.fail(path, f"bad player count {n}: between 2 and {MAX_SEATS}")
            if value.count(n) > 1:
                self.fail(path, f"player count {n} is listed {value.count(n)} times")
        return sorted(value)

    def no_unknown(self, raw: dict, where: str, allowed: set):
        for key in raw:
            if key not in allowed:
                self.fail(f"{where}.{key}" if where else key, f"unknown field; expected one of: {', '.join(sorted(allowed))}")
