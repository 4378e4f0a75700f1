"""Built-in policies of the race games: names, parameters, presets.

A policy is a kernel id plus a float parameter row (kernels/race.py, P_*).
Presets are parameter settings of the greedy family, so a sweep over
thousands of settings costs no compile. A spec string names a policy and
optionally overrides parameters: `greedy`, `aggressive`,
`greedy:attack=0.5,hold_safeties=0`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit, types

from .jit import optional_part
from .options import did_you_mean, policy_parameters
from .race import (
    N_PARAMS, P_ATTACK, P_CONFIDENCE, P_COUP_FOURRE, P_EXTENSION_MARGIN, P_HOLD_SAFETIES, P_HORIZON, P_PLAYOUTS,
    P_TARGET_LEADER, POLICY_GREEDY, POLICY_LOOKAHEAD, POLICY_RANDOM, POLICY_USER, lookahead_move,
)
from .user_policy import UserPolicyError, source_hash

# name -> (offset in the parameter row, default, meaning)
GREEDY_PARAMETERS = {
    "attack": (P_ATTACK, 1.75, "weight of attacking: an attack scores 40 x attack, against 60-70 for laying "
                               "distance, 80 for a go or remedy, 100 for a safety that clears a hazard; so "
                               "1.75 attacks before laying distance, 3 before anything, 1 only when nothing "
                               "else is useful"),
    "target_leader": (P_TARGET_LEADER, 1.0, "1: attack the side with the most distance; 0: the next side in turn order"),
    "hold_safeties": (P_HOLD_SAFETIES, 1.0, "1: keep safeties for a coup fourré (lay one only when it clears "
                                            "a hazard or limit on us, or when every other move is a discard of a "
                                            "card still of use); 0: lay at once for the extra turn"),
    "extension_margin": (P_EXTENSION_MARGIN, 100.0, "call the extension only when ahead of every opponent by at least this many km"),
    "coup_fourre": (P_COUP_FOURRE, 1.0, "probability of calling a coup fourré when offered"),
}

PRESETS = {
    "greedy": ("balanced heuristic: fix, attack the leader, then lay the longest distance; "
               "holds safeties for coups fourrés", {}),
    "aggressive": ("attacks the leader whenever it can, before anything else", {"attack": 3.0}),
    "builder": ("distance first; attacks only when it has nothing to lay", {"attack": 1.0}),
    "hoarder": ("holds every safety for a coup fourré: greedy's own default, named to set against spender",
                {"hold_safeties": 1.0}),
    "spender": ("lays safeties as soon as it holds them, for the extra turn", {"hold_safeties": 0.0}),
    "cautious": ("never calls the extension", {"extension_margin": float("inf")}),
    "bold": ("always calls the extension", {"extension_margin": -float("inf")}),
    "next_target": ("like greedy, but attacks the next player instead of the leader", {"target_leader": 0.0}),
}

LOOKAHEAD_PARAMETERS = {
    "playouts": (P_PLAYOUTS, 200.0, "playouts per decision: playouts / (legal moves) deals of the unseen "
                                     "cards, each played out after every legal move"),
    "horizon": (P_HORIZON, 30.0, "turns each playout looks ahead"),  # its range says what 0 means
    "confidence": (P_CONFIDENCE, 2.0, "play another move than greedy's only when the playouts show it better "
                                      "by this many standard errors of the paired difference"),
}
LOOKAHEAD_DESCRIPTION = ("flat Monte Carlo over determinizations: deal the cards it cannot see afresh from "
                         "the unseen ones, play each legal move and play on with greedy players (the same "
                         "deals for every move); play greedy's move unless another is clearly better. Takes "
                         "the greedy parameters too (playouts, coup fourré and extension answers)")

RANDOM_DESCRIPTION = "uniform over the legal moves, discards included; coups fourrés and extensions at 50 %"

# name -> (what a value must be, test); a value that fails is refused, never clamped
_WHOLE = float.is_integer
PARAMETER_RANGES = {
    "attack": ("a number >= 0", lambda v: v >= 0 and v < float("inf")),
    "target_leader": ("0 or 1", lambda v: v in (0.0, 1.0)),
    "hold_safeties": ("0 or 1", lambda v: v in (0.0, 1.0)),
    "extension_margin": ("any number of km, inf: never, -inf: always", lambda v: v == v),
    "coup_fourre": ("a probability, 0 to 1", lambda v: 0 <= v <= 1),
    # The kernel takes these two as 64-bit integers; no horizon beyond the longest turn cap can matter.
    "playouts": ("a whole number, 1 to 1000000", lambda v: 1 <= v <= 1_000_000 and _WHOLE(v)),
    "horizon": ("a whole number, 0 to 32767 (0: to the end of the hand)", lambda v: 0 <= v <= 32_767 and _WHOLE(v)),
    "confidence": ("a number >= 0", lambda v: v >= 0 and v < float("inf")),
}


@dataclass(frozen=True)
class PolicySpec:
    name: str          # the spec as written, e.g. "greedy:attack=3"
    kernel_id: int
    params: tuple[float, ...]
    # the compiled user policy (kernel_id >= POLICY_USER); seats of one spec are one policy
    user_function: object = field(default=None, compare=False)

    def row(self) -> np.ndarray:
        return np.asarray(self.params, dtype=np.float64)

    def describe(self) -> dict:
        if self.kernel_id == POLICY_RANDOM:
            return {"name": self.name, "family": "random", "params": {}}
        if self.kernel_id >= POLICY_USER:
            return {"name": self.name, "family": "user", "params": {}, "source_hash": source_hash(self.name)}
        params = {k: self.params[i] for k, (i, _, _) in GREEDY_PARAMETERS.items()}
        if self.kernel_id == POLICY_LOOKAHEAD:
            params |= {k: self.params[i] for k, (i, _, _) in LOOKAHEAD_PARAMETERS.items()}
            return {"name": self.name, "family": "lookahead", "params": params}
        return {"name": self.name, "family": "greedy", "params": params}


class PolicyError(ValueError):
    pass


def user_policy_names(specs: list[PolicySpec]) -> list[str]:
    """The specs of the policies of your own (`FILE.py:FUNCTION`) among `specs`."""
    return [s.name for s in specs if s.kernel_id >= POLICY_USER]


def parse_policy(spec: str) -> PolicySpec:
    """A policy spec: `random`, a greedy preset, `lookahead[:k=v,...]` or a
    user policy `path/to/file.py:function`."""
    if not isinstance(spec, str):
        raise PolicyError(f"a policy is a string such as 'greedy', not {spec!r}")
    name, _, overrides = spec.strip().partition(":")
    if name.endswith(".py"):
        from .race_user import compile_user_policy

        try:
            function = compile_user_policy(spec.strip())
        except UserPolicyError as exc:
            raise PolicyError(str(exc)) from None
        # greedy's default row: the kernel answers the seat's coup fourré and
        # extension questions from it (docs/policies.md), and passes it to the function
        return PolicySpec(spec.strip(), POLICY_USER, parse_policy("greedy").params, function)
    if name == "random":
        if overrides:
            raise PolicyError(f"policy 'random' takes no parameters (got {overrides!r})")
        return PolicySpec("random", POLICY_RANDOM, (0.0,) * N_PARAMS)
    if name not in PRESETS and name != "lookahead":
        raise PolicyError(f"unknown policy {name!r}{did_you_mean(name, ['random', 'lookahead', *PRESETS])}; "
                          f"built-in: random, lookahead, {', '.join(PRESETS)}; or a user policy "
                          "path/to/file.py:function")
    known = dict(GREEDY_PARAMETERS)
    row = [0.0] * N_PARAMS
    if name == "lookahead":
        known |= LOOKAHEAD_PARAMETERS
    for key, (i, default, _) in known.items():
        row[i] = default
    for key, value in PRESETS.get(name, ("", {}))[1].items():
        row[GREEDY_PARAMETERS[key][0]] = value
    try:
        given = policy_parameters(spec, name, overrides, {key: PARAMETER_RANGES[key] for key in known})
    except ValueError as exc:
        raise PolicyError(str(exc)) from None
    for key, number in given.items():
        row[known[key][0]] = number
    kernel_id = POLICY_LOOKAHEAD if name == "lookahead" else POLICY_GREEDY
    return PolicySpec(spec.strip(), kernel_id, tuple(row))


# The look-ahead reaches the kernel as an optional part (kernels/jit.py): a
# run that does not play it compiles the kernel without it (its compile is
# more than half of the kernels').
LOOKAHEAD_SIGNATURE = types.Tuple((types.int64, types.uint64))(
    types.int16[::1], types.int32[:, ::1], types.int32[::1], types.int64, types.int32[::1], types.int64,
    types.float64[::1], types.uint64)


@njit(LOOKAHEAD_SIGNATURE, cache=True, _nrt=False)
def no_lookahead(state, card_table, rules, seat, moves, n_moves, params, key):
    """Holds the look-ahead's place when no seat plays it; never called."""
    return -1, key


def lookahead_decision(state, card_table, rules, seat, moves, n_moves, params, key):
    """The look-ahead's decision (kernels/race.py, lookahead_move), compiled
    to LOOKAHEAD_SIGNATURE on first use."""
    return lookahead_move(state, card_table, rules, seat, moves, n_moves, params, key)


lookahead_argument = optional_part(LOOKAHEAD_SIGNATURE, lookahead_decision, no_lookahead)


def policy_table(specs: list[PolicySpec]) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Kernel arguments for a list of distinct policies: ids [K], params
    [K, N_PARAMS] and the policy functions, two tuples: the look-ahead (a
    stand-in when no policy is the look-ahead) and the user policies (user
    policy k has id POLICY_USER + k)."""
    from .race_user import user_policy_tuple

    users = [s.user_function for s in specs if s.kernel_id >= POLICY_USER]
    ids, k = [], 0
    for s in specs:
        if s.kernel_id >= POLICY_USER:
            ids.append(POLICY_USER + k)
            k += 1
        else:
            ids.append(s.kernel_id)
    params = np.array([s.params for s in specs], dtype=np.float64).reshape(len(specs), N_PARAMS)
    try:
        users_argument = user_policy_tuple(users)
    except UserPolicyError as exc:  # too many of them: the race API's error, as for any other policy mistake
        raise PolicyError(str(exc)) from None
    return np.array(ids, dtype=np.int32), params, (lookahead_argument(POLICY_LOOKAHEAD in ids), users_argument)
