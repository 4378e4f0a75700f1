"""Built-in policies of the race games: names, parameters, presets.

A policy is a kernel id plus a float parameter row (kernels/race.py, P_*).
Presets are parameter settings of the greedy family, so a sweep over
thousands of settings costs no compile. A spec string names a policy and
optionally overrides parameters: `greedy`, `aggressive`,
`greedy:attack=0.5,hold_safeties=0`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .race import (
    N_PARAMS, P_ATTACK, P_COUP_FOURRE, P_EXTENSION_MARGIN, P_HOLD_SAFETIES, P_TARGET_LEADER,
    POLICY_GREEDY, POLICY_RANDOM,
)

# name -> (offset in the parameter row, default, meaning)
GREEDY_PARAMETERS = {
    "attack": (P_ATTACK, 1.75, "weight of attacking against building: above 1.5 attacks before laying "
                               "distance, below 1.5 lays distance first, below 1.25 also fixes nothing "
                               "for it (go and remedies always come first)"),
    "target_leader": (P_TARGET_LEADER, 1.0, "1: attack the side with the most distance; 0: the next side in turn order"),
    "hold_safeties": (P_HOLD_SAFETIES, 1.0, "1: keep safeties for a coup fourré (lay one only when it clears "
                                            "a hazard on us or instead of a discard); 0: lay at once for the extra turn"),
    "extension_margin": (P_EXTENSION_MARGIN, 100.0, "call the extension only when ahead of every opponent by at least this many km"),
    "coup_fourre": (P_COUP_FOURRE, 1.0, "probability of calling a coup fourré when offered"),
}

PRESETS = {
    "greedy": ("balanced heuristic: fix, attack the leader, then lay the longest distance; "
               "holds safeties for coups fourrés", {}),
    "aggressive": ("attacks the leader whenever it can, before anything but fixing itself", {"attack": 3.0}),
    "builder": ("distance first; attacks only when it has nothing to lay", {"attack": 1.0}),
    "hoarder": ("holds every safety for a coup fourré", {"hold_safeties": 1.0}),
    "spender": ("lays safeties as soon as it holds them, for the extra turn", {"hold_safeties": 0.0}),
    "cautious": ("never calls the extension", {"extension_margin": 1e9}),
    "bold": ("always calls the extension", {"extension_margin": -1e9}),
    "next_target": ("like greedy, but attacks the next player instead of the leader", {"target_leader": 0.0}),
}

RANDOM_DESCRIPTION = "uniform over the legal moves, discards included; coups fourrés and extensions at 50 %"


@dataclass(frozen=True)
class PolicySpec:
    name: str          # the spec as written, e.g. "greedy:attack=3"
    kernel_id: int
    params: tuple[float, ...]

    def row(self) -> np.ndarray:
        return np.asarray(self.params, dtype=np.float64)

    def describe(self) -> dict:
        if self.kernel_id == POLICY_RANDOM:
            return {"name": self.name, "family": "random", "params": {}}
        return {"name": self.name, "family": "greedy",
                "params": {k: self.params[i] for k, (i, _, _) in GREEDY_PARAMETERS.items()}}


class PolicyError(ValueError):
    pass


def parse_policy(spec: str) -> PolicySpec:
    name, _, overrides = spec.strip().partition(":")
    if name == "random":
        if overrides:
            raise PolicyError(f"policy 'random' takes no parameters (got {overrides!r})")
        return PolicySpec("random", POLICY_RANDOM, (0.0,) * N_PARAMS)
    if name not in PRESETS:
        raise PolicyError(f"unknown policy {name!r}; built-in: random, {', '.join(PRESETS)}")
    row = [0.0] * N_PARAMS
    for key, (i, default, _) in GREEDY_PARAMETERS.items():
        row[i] = default
    for key, value in PRESETS[name][1].items():
        row[GREEDY_PARAMETERS[key][0]] = value
    for item in filter(None, overrides.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if key not in GREEDY_PARAMETERS or not eq:
            raise PolicyError(f"policy {spec!r}: bad parameter {item!r}; parameters: {', '.join(GREEDY_PARAMETERS)}")
        try:
            row[GREEDY_PARAMETERS[key][0]] = float(value)
        except ValueError:
            raise PolicyError(f"policy {spec!r}: {key} must be a number, not {value!r}") from None
    return PolicySpec(spec.strip(), POLICY_GREEDY, tuple(row))


def policy_table(specs: list[PolicySpec]) -> tuple[np.ndarray, np.ndarray]:
    """Kernel arrays for a list of distinct policies: ids [K], params [K, N_PARAMS]."""
    ids = np.array([s.kernel_id for s in specs], dtype=np.int32)
    params = np.array([s.params for s in specs], dtype=np.float64).reshape(len(specs), N_PARAMS)
    return ids, params
