"""Counter-based random keys for the kernels.

Every game owns a 64-bit key derived from (root seed, game index, stream) by a
splitmix64 hash. Keys are passed by value and returned updated, so a game's
random numbers depend only on its own key: results are identical on 1 or N
threads and with the JIT disabled. Streams keep chance (shuffles, dice) apart
from each seat's policy, so changing one seat's policy never changes the deck.
"""
import numpy as np
from numba import njit

from .jit import allocation_free

# Stream numbers: chance first, then one stream per seat's policy.
STREAM_CHANCE = 0
STREAM_POLICY_BASE = 1

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_U30 = np.uint64(30)
_U27 = np.uint64(27)
_U31 = np.uint64(31)
_U11 = np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, inline="always")
def mix64(z):
    """The splitmix64 finaliser: a bijective scramble of a 64-bit word."""
    z = (z ^ (z >> _U30)) * _MIX1
    z = (z ^ (z >> _U27)) * _MIX2
    return z ^ (z >> _U31)


@allocation_free
def game_key(root_seed, game_index, stream):
    """The starting key of one stream of one game."""
    k = mix64(np.uint64(root_seed) + _GOLDEN)
    k = mix64(k ^ (np.uint64(game_index) * _GOLDEN + _MIX1))
    return mix64(k ^ (np.uint64(stream) * _MIX2 + _GOLDEN))


@njit(cache=True, inline="always")
def next_u64(key):
    """Advance the key; return (random 64-bit word, new key)."""
    key = key + _GOLDEN
    return mix64(key), key


_BRANCH = np.uint64(0x5851F42D4C957F2D)


@njit(cache=True, inline="always")
def branch(key):
    """A key for a stream of its own, branched off `key`: a scrambled word,
    a random starting point unrelated to the keys `key`'s stream goes on
    through, so the two streams share no numbers (but by a chance of about
    one in 2**64 per pair of keys)."""
    return mix64(key ^ _BRANCH)


@njit(cache=True, inline="always")
def randint(key, n):
    """Uniform integer in [0, n) for n >= 1; returns (value, new key).

    Lemire's multiply-shift on the top 32 bits: bias below 2**-32 * n, far
    under any sampling error a simulation can see.
    """
    r, key = next_u64(key)
    return np.int64(((r >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32)), key


@njit(cache=True, inline="always")
def rank(word, item):
    """A random rank of `item` under the random 64-bit `word`: distinct items
    get distinct ranks, uniformly scrambled, so the item of highest rank
    among any set is a uniform choice, whatever order the set is seen in."""
    return mix64(word ^ (np.uint64(item) * _MIX1))


@njit(cache=True, inline="always")
def uniform(key):
    """Uniform float in [0, 1); returns (value, new key)."""
    r, key = next_u64(key)
    return np.float64(r >> _U11) * _TO_UNIT, key


@allocation_free
def shuffle(values, n, key):
    """Fisher-Yates shuffle of values[:n] in place; returns the new key."""
    for i in range(n - 1, 0, -1):
        j, key = randint(key, i + 1)
        a = values[i]
        values[i] = values[j]
        values[j] = a
    return key


@allocation_free
def confident_best(diffs, diff_squares, worlds, baseline, confidence):
    """The look-ahead's choice among candidates compared on common random
    numbers: diffs[i] and diff_squares[i] sum candidate i's paired
    differences with the baseline over `worlds` deals. Returns the candidate
    with the largest mean gain among those whose gain exceeds `confidence`
    standard errors, else the baseline (near ties chosen by noise lose tempo)."""
    best = baseline
    best_gain = 0.0
    for i in range(diffs.shape[0]):
        mean = diffs[i] / worlds
        var = max(diff_squares[i] / worlds - mean * mean, 0.0) / (worlds - 1)
        if mean > confidence * np.sqrt(var) and mean > best_gain:
            best = i
            best_gain = mean
    return best
