"""How the kernels are compiled.

Numba counts the references to every array a function receives, with an
atomic increment and decrement each time, and its pruning pass misses most
of those counts in branchy code (numba issue #2350). Inlined helpers receive
the state, the card table and the rules on every call, so in the race
engine's turn loop the counting took three quarters of the time of move
generation. A kernel that allocates no arrays needs no counting: it is
compiled without Numba's runtime (NRT), and so are the helpers inlined into
it. A kernel that allocates (np.empty, np.zeros, ...) keeps the runtime, and
says so with `allocating` where an `allocation_free` kernel calls it: a
callee that does not say inherits the caller's setting, and the compiler
refuses an allocation without the runtime (whole-array assignment `a[:] = b`
needs it too). An `allocation_free` kernel must not return an array: a caller
with the runtime would release a reference that was never taken. The kernels
return numbers and keys only.
"""
import functools
import warnings

from numba import njit
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.core.extending import overload
from numba.cpython.unsafe.numbers import trailing_zeros

# The look-ahead policies and user policies reach the kernels as first-class
# functions; the feature works as documented, and its warning would only
# alarm users.
warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)

allocation_free = njit(cache=True, _nrt=False)
allocating = njit(cache=True, _nrt=True)


def optional_part(signature, function, stand_in):
    """For a large part of a kernel that only some runs use (a look-ahead
    policy): returns `argument(needed)`, the one-element tuple by which the
    kernel calls the part, `argument[0](...)`. It holds `function` (a
    module-level Python function that calls the part) compiled to
    `signature` on first use, or, when the run does not need the part,
    `stand_in` (compiled to the same signature; never called). One compiled
    kernel serves both, and a run without the part never compiles it. In a
    tuple Numba types a function by its signature alone; a bare function
    argument would be typed by its identity, and every new process would
    compile the kernel anew."""
    compiled = functools.cache(lambda: njit(signature, cache=True)(function))
    return lambda needed: (compiled() if needed else stand_in,)


def lowest_set_bit(x):
    """Index of the lowest set bit of x > 0. One instruction (tzcnt) when
    compiled; this plain-Python form runs when the JIT is off."""
    return int(x & -x).bit_length() - 1


@overload(lowest_set_bit)
def _lowest_set_bit_compiled(x):
    return lambda x: trailing_zeros(x)
