"""kernels/jit.py: the bit helper the move generators iterate hands with,
plain and compiled, and the optional part that keeps the look-ahead out of
runs that do not play it."""
import numpy as np
from numba import njit, types

from etappe.kernels.jit import lowest_set_bit, optional_part


@njit
def _compiled_lowest_set_bit(x):
    return lowest_set_bit(x)


def test_lowest_set_bit_plain_and_compiled():
    # the index of the lowest 1 bit: 1 -> 0, 0b1000 -> 3, 0b1100 -> 2, 2**40 + 2**41 -> 40, the sign bit -> 63
    cases = {1: 0, 0b1000: 3, 0b1100: 2, 2**40 + 2**41: 40, 2**62 + 1: 0}
    for x, index in cases.items():
        assert lowest_set_bit(x) == index
        assert _compiled_lowest_set_bit(np.int64(x)) == index
    assert _compiled_lowest_set_bit(np.uint64(2**63)) == 63


def test_an_optional_part_is_compiled_only_when_a_run_needs_it():
    signature = types.int64(types.int64)

    def part(x):
        return x + 1

    @njit(signature)
    def stand_in(x):
        return -1

    argument = optional_part(signature, part, stand_in)
    assert argument(False) == (stand_in,)  # nothing compiled for a run without the part
    (compiled,) = argument(True)
    assert compiled(41) == 42 and compiled is argument(True)[0]  # compiled once, then the same function
    assert compiled.signatures == [signature.args]
