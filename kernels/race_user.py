"""User policies: your own jitted function, used from the CLI and the API.

Write, in a file of your own::

    from numba import njit
    from etappe.kernels.rng import randint

    @njit
    def my_policy(state, card_table, rules, seat, moves, n_moves, params, key):
        # return the index (0 .. n_moves-1) of the move to play
        i, key = randint(key, n_moves)
        return i

and run `etappe simulate millebornes --policy my_file.py:my_policy`.
Arguments (see docs/policies.md): the state row (int16; offsets in
etappe.kernels.race), the design's card table and rules vector, your seat,
the legal moves (`card_type * 8 + target`, target = side or 7 for discard)
and how many there are, your parameter row, and a fresh random key. A fair
policy reads only what its seat can see: its own hand, the tableaux, the
discard pile and the counts, never the stock or other hands.

Every user function is compiled against one published signature and passed
to the kernel in a tuple of first-class functions of fixed length, so the
kernel compiles once and is cached.
"""
from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path

from numba import njit, types
from numba.core.errors import NumbaError

from .race import MAX_USER_POLICIES

USER_POLICY_SIGNATURE = types.int64(
    types.int16[::1],        # state
    types.int32[:, ::1],     # card_table
    types.int32[::1],        # rules
    types.int64,             # seat
    types.int32[::1],        # moves
    types.int64,             # n_moves
    types.float64[::1],      # params
    types.uint64,            # key
)
PARAMETER_NAMES = ("state", "card_table", "rules", "seat", "moves", "n_moves", "params", "key")


class UserPolicyError(ValueError):
    pass


@njit(USER_POLICY_SIGNATURE, cache=True)
def no_user_policy(state, card_table, rules, seat, moves, n_moves, params, key):
    """Fills the unused places of the user-policy tuple; never called."""
    return 0


def compile_user_policy(spec: str):
    """`path/to/file.py:function` -> the function compiled to the signature."""
    path_text, _, name = spec.rpartition(":")
    path = Path(path_text)
    if not path_text.endswith(".py") or not name:
        raise UserPolicyError(f"user policy {spec!r}: expected path/to/file.py:function")
    if not path.exists():
        raise UserPolicyError(f"user policy {spec!r}: no file {path}")
    module_name = f"etappe_user_policy_{abs(hash(str(path.resolve())))}"
    loader = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # the user's file: report whatever it raised
        raise UserPolicyError(f"user policy {spec!r}: importing {path} failed: {exc}") from None
    function = getattr(module, name, None)
    if function is None:
        raise UserPolicyError(f"user policy {spec!r}: {path} has no function {name!r}")
    python_function = getattr(function, "py_func", function)
    if not callable(python_function):
        raise UserPolicyError(f"user policy {spec!r}: {name!r} is not a function")
    parameters = list(inspect.signature(python_function).parameters)
    if len(parameters) != len(PARAMETER_NAMES):
        raise UserPolicyError(
            f"user policy {spec!r}: takes ({', '.join(parameters)}), but a policy takes "
            f"({', '.join(PARAMETER_NAMES)}) and returns the index of its move")
    signature = f"int64 {name}({', '.join(PARAMETER_NAMES)})"
    try:
        compiled = njit(USER_POLICY_SIGNATURE)(python_function)
    except NumbaError as exc:
        first = str(exc).strip().splitlines()
        raise UserPolicyError(
            f"user policy {spec!r} does not compile to the policy signature {signature}: {' '.join(first[:6])}") from None
    # Numba keeps the return type it infers when no path returns (a body that
    # only raises gives none), and the kernel cannot call that in its tuple.
    returns = compiled.nopython_signatures[0].return_type
    if returns != types.int64:
        raise UserPolicyError(
            f"user policy {spec!r} does not compile to the policy signature {signature}: it returns {returns}, "
            "never a move index (does every path raise?)")
    # The signature casts whatever is returned to int64, silently: 0.9 would
    # become move 0. So each value returned must already be a whole number.
    for returned in _returned_types(compiled):
        if not isinstance(returned, types.Integer):
            raise UserPolicyError(
                f"user policy {spec!r} returns a {returned} on some path; a policy returns the index of its move, "
                "a whole number (int(...) if it is computed as a float)")
    return compiled


def _returned_types(compiled) -> list:
    """The types the function's return statements have before the cast to
    the signature's int64 (from Numba's typed IR)."""
    from numba.core import ir

    annotation = compiled.overloads[compiled.signatures[0]].type_annotation
    return [annotation.typemap[statement.value.value.name]
            for block in annotation.blocks.values() for statement in block.body
            if isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Expr)
            and statement.value.op == "cast"]


def user_policy_tuple(compiled: list) -> tuple:
    """The fixed-length tuple the kernels take; unused places hold no_user_policy."""
    if len(compiled) > MAX_USER_POLICIES:
        raise UserPolicyError(f"at most {MAX_USER_POLICIES} different user policies in one run")
    return tuple(compiled) + (no_user_policy,) * (MAX_USER_POLICIES - len(compiled))
