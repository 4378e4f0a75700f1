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
kernel compiles once and is cached (kernels/user_policy.py, shared with
Bremer Stadtmusikanten).
"""
from __future__ import annotations

from numba import njit, types

from . import user_policy
from .user_policy import read_only
from .race import MAX_USER_POLICIES

# The arrays are read-only (user_policy.read_only): a policy reads the game, never changes it.
USER_POLICY_SIGNATURE = types.int64(
    read_only(types.int16[::1]),        # state
    read_only(types.int32[:, ::1]),     # card_table
    read_only(types.int32[::1]),        # rules
    types.int64,                        # seat
    read_only(types.int32[::1]),        # moves
    types.int64,                        # n_moves
    read_only(types.float64[::1]),      # params
    types.uint64,                       # key
)
PARAMETER_NAMES = ("state", "card_table", "rules", "seat", "moves", "n_moves", "params", "key")


@njit(USER_POLICY_SIGNATURE, cache=True)
def no_user_policy(state, card_table, rules, seat, moves, n_moves, params, key):
    """Fills the unused places of the user-policy tuple; never called."""
    return 0


def compile_user_policy(spec: str):
    """`path/to/file.py:function` -> the function compiled to the signature."""
    return user_policy.compile_user_policy(spec, USER_POLICY_SIGNATURE, PARAMETER_NAMES)


def user_policy_tuple(compiled: list) -> tuple:
    """The fixed-length tuple the kernels take; unused places hold no_user_policy."""
    return user_policy.user_policy_tuple(compiled, no_user_policy, MAX_USER_POLICIES)
