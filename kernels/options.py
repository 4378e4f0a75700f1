"""Rule option values, however they arrive (a design file, Python, or
`--option name=value` text), and policy parameters (`name:key=value,...`):
one reading for every game; and what is wrong with a TOML file they come in."""
from __future__ import annotations

import difflib
import math
import re

import numpy as np

SWITCH_WORDS = {"true": True, "on": True, "1": True, "false": False, "off": False, "0": False}


MAX_KEY = 2**63 - 1  # seeds and game numbers become 64-bit signed kernel keys


def policies_by_seat(policies, players: int, default: str) -> list:
    """Policies by seat, in every game: one spec for every seat (a string, or
    a list of one), one per seat, or a list that repeats around the table
    (A, B at 4 seats: A, B, A, B); none, `default` on every seat."""
    if isinstance(policies, str):  # one spec for every seat, not a sequence of one-letter names
        policies = [policies]
    policies = list(policies or [default])
    if players % len(policies):
        raise ValueError(f"{len(policies)} policies for {players} players: give one policy per seat, or a list "
                         f"that repeats around the table (1 or a divisor of {players})")
    return policies * (players // len(policies))


def is_count_text(text: str) -> bool:
    """Whether a key such as a seat ("0") or a player count ("2") is a whole
    number written plainly: ASCII digits, no leading zero, so that "02" or
    a superscript 2 is not read as another way of writing 2."""
    return re.fullmatch("0|[1-9][0-9]*", text) is not None


def whole(name: str, value, low: int = 0, high: int = MAX_KEY) -> int:
    """An argument that must be a whole number from `low` to `high` (a count,
    a seed, a game number, a chunk size), as an int; a TypeError or ValueError
    naming the argument otherwise, not an error from deep inside."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a whole number (an int), not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be {low} to {high}, not {value}")
    return int(value)


def run_numbers(unit: str, count, seed, first) -> tuple[int, int, int]:
    """A run's number of games (races: `unit` "race"), root seed and first
    game number, checked: whole numbers, none negative, and the seed and every
    game number below 2**63, the kernels' 64-bit signed keys."""
    count, seed, first = (whole(name, value, -math.inf, math.inf)  # the type; the ranges have their own messages
                          for name, value in ((f"{unit}s", count), ("seed", seed), (f"first_{unit}", first)))
    if count < 0 or seed < 0 or first < 0:
        raise ValueError(f"{unit}s, seed and first_{unit} must be >= 0, not {unit}s={count}, seed={seed}, "
                         f"first_{unit}={first}")
    if seed > MAX_KEY or first + count > MAX_KEY + 1:
        raise ValueError(f"seed and {unit} numbers must be below 2**63, not seed={seed}, "
                         f"{unit}s {first} to {first + count - 1}")
    return count, seed, first


def option_value(name: str, value, default, choices=None):
    """`value` of rule option `name`, read as the kind of its default: one of
    `choices` when given, else a switch (true/false) or a whole number, else
    text. Raises ValueError that names the option and says what it must be."""
    if choices is not None:
        if value not in choices:
            raise ValueError(f"{name}: {value!r} is not one of {', '.join(map(str, choices))}")
        return value
    if isinstance(default, bool):
        if isinstance(value, str) and value.strip().lower() in SWITCH_WORDS:
            return SWITCH_WORDS[value.strip().lower()]
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise ValueError(f"{name}: must be true or false, not {value!r}")
    if isinstance(default, int):
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            return int(value)
        if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
            return int(value)
        raise ValueError(f"{name}: must be a whole number, not {value!r}")
    return str(value)


def did_you_mean(name: str, known) -> str:
    """A hint for an unknown name close to a known one, " (did you mean 'turn_cap'?)"; or nothing."""
    close = difflib.get_close_matches(str(name), list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def toml_problem(exc: Exception, text: str) -> str:
    """tomllib's message for `text`, with a table or key it names as a TOML
    file writes it (design.cards, not ('design', 'cards')) and the line it
    points at quoted, so that a curly quote or a key given twice shows."""
    message = re.sub(r"\(((?:'[^']*',? ?)+)\)", lambda m: ".".join(re.findall(r"'([^']*)'", m.group(1))), str(exc))
    at = re.search(r"at line (\d+), column \d+", message)
    lines = text.splitlines()
    if at and 1 <= int(at.group(1)) <= len(lines):
        message += f": {lines[int(at.group(1)) - 1].strip()!r}"
    return message


def value_text(value) -> str:
    """A setting's value as a design file and the command line write it (switches true / false)."""
    return str(value).lower() if isinstance(value, (bool, np.bool_)) else str(value)


def option_text(options: dict) -> str:
    """Rule options as they are written on the command line and in design
    files, `name=value, ...`, switches as true / false."""
    return ", ".join(f"{k}={value_text(v)}" for k, v in options.items())


def unused_options_text(unused: dict[str, str]) -> str:
    """Rule options that change nothing, each reason once after the options it holds for:
    "coup_fourre, roll_after_safety (no safety cancels a hazard); shutout (...)"."""
    return "; ".join(f"{', '.join(k for k in unused if unused[k] == why)} ({why})" for why in dict.fromkeys(unused.values()))


def number_text(value: float) -> str:
    """A policy parameter as a canonical spec writes it: short ('1', '0.25'), and exact,
    so that the spec a run records plays it again (6 digits would make 1.4142135 '1.41421')."""
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


def policy_parameters(spec: str, family: str, text: str, ranges: dict) -> dict[str, float]:
    """The `key=value,...` part (`text`) of policy `spec`, read: each key one
    of `ranges` (key -> (what a value must be, test)), given once, a number
    that passes its test; never clamped. Returns {key: value} of those given.
    Raises ValueError naming the policy and the parameter."""
    values: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, value = (part.strip() for part in item.partition("="))
        if key not in ranges:
            raise ValueError(f"policy {spec!r}: bad {family} parameter {item!r}; parameters: {', '.join(ranges)}")
        if key in values:
            raise ValueError(f"policy {spec!r}: {key} is given twice")
        must_be, ok = ranges[key]
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"policy {spec!r}: {key} must be {must_be}, not {value!r}"
                             + ("" if eq else f" (write {key}=NUMBER)")) from None
        if not ok(number):  # NaN fails every comparison, so it is refused too
            raise ValueError(f"policy {spec!r}: {key} must be {must_be}, not {value}")
        values[key] = number
    return values
