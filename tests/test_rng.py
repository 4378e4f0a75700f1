"""The kernels' random numbers (kernels/rng.py), against values from outside
the code: the published splitmix64 outputs, the uniform distributions the
draws must follow (chi-square at a fixed seed, so a pass is not luck that
can turn), and the look-ahead's choice worked by hand."""
import itertools

import numpy as np
import pytest

from etappe.kernels.rng import branch, confident_best, game_key, next_u64, randint, rank, shuffle, uniform

# chi-square critical values at p = 0.001 (any statistics table): a biased draw is far above them
CHI2_999 = {5: 20.515, 23: 49.728}


def draw(function, key, *args):
    """(value, key) of a draw from Python: the key back as uint64, as the kernels always hold it (a
    plain int under 2**63 would be typed int64, and int64 + uint64 is a float)."""
    value, key = function(np.uint64(key), *args)
    return value, np.uint64(key)


def chi_square(counts) -> float:
    counts = np.asarray(counts, float)
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


def test_next_u64_is_splitmix64():
    # Vigna's splitmix64.c from state 0 (https://prng.di.unimi.it/splitmix64.c): its first four outputs
    key, words = np.uint64(0), []
    for _ in range(4):
        word, key = draw(next_u64, key)
        words.append(int(word))
    assert words == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F, 0xF88BB8A8724C81EC]


def test_randint_is_uniform_on_0_to_n():
    key, counts = game_key(1, 0, 0), np.zeros(6, int)
    for _ in range(60_000):
        value, key = draw(randint, key, 6)
        counts[value] += 1
    assert chi_square(counts) < CHI2_999[5], counts
    for n in (1, 2**31 + 1):
        values = []
        for _ in range(1000):
            value, key = draw(randint, key, n)
            values.append(value)
        assert 0 <= min(values) and max(values) < n
    assert set(values) != {0}  # the top of a wide range is reached too
    assert max(values) > 2**30


def test_shuffle_gives_every_order_alike_and_leaves_the_rest():
    key = game_key(2, 0, 0)
    orders = {order: 0 for order in itertools.permutations(range(4))}
    values = np.zeros(6, np.int16)
    for _ in range(24_000):
        values[:] = [0, 1, 2, 3, 8, 9]
        key = np.uint64(shuffle(values, 4, np.uint64(key)))
        orders[tuple(values[:4])] += 1
        assert list(values[4:]) == [8, 9]  # only the first n are shuffled
    assert chi_square(list(orders.values())) < CHI2_999[23]


def test_uniform_lies_in_0_1_with_mean_a_half():
    key, draws = game_key(3, 0, 0), []
    for _ in range(20_000):
        value, key = draw(uniform, key)
        draws.append(value)
    draws = np.array(draws)
    assert draws.min() >= 0 and draws.max() < 1
    assert abs(draws.mean() - 0.5) < 4 * np.sqrt(1 / 12 / len(draws))  # within 4 standard errors
    assert chi_square(np.histogram(draws, bins=6, range=(0, 1))[0]) < CHI2_999[5]


def test_rank_is_one_to_one_and_its_highest_item_a_uniform_choice():
    key = game_key(4, 0, 0)
    word, key = draw(next_u64, key)
    assert len({int(rank(np.uint64(word), item)) for item in range(5000)}) == 5000
    highest = np.zeros(6, int)
    for _ in range(30_000):
        word, key = draw(next_u64, key)
        highest[max(range(6), key=lambda item: int(rank(np.uint64(word), item)))] += 1
    assert chi_square(highest) < CHI2_999[5], highest


def test_keys_of_games_and_streams_are_all_different_and_branches_share_no_numbers():
    keys = {int(game_key(seed, game, stream)) for seed in (0, 1) for game in range(500) for stream in range(5)}
    assert len(keys) == 2 * 500 * 5

    def words(key, n=2000):
        out = []
        for _ in range(n):
            word, key = draw(next_u64, key)
            out.append(int(word))
        return out

    key = game_key(5, 0, 1)
    assert not set(words(key)) & set(words(branch(key)))


@pytest.mark.parametrize("confidence, chosen", [(1.5, 1), (1.0, 0), (2.0, 3)])
def test_confident_best_worked_by_hand(confidence, chosen):
    # 4 deals; paired gains over the baseline (candidate 3), mean and standard error of the mean:
    #   0: 5, -1, 5, -1    mean 2, sample variance (52 - 4 * 4) / 3 = 12, se sqrt(12 / 4) = 1.732: 1.15 se
    #   1: 2, 0, 2, 0      mean 1, sample variance (8 - 4 * 1) / 3 = 4 / 3, se sqrt(4 / 3 / 4) = 0.577: 1.73 se
    #   2: -1, -1, -1, -1  mean -1: never better
    # at 1.5 standard errors only 1 is clearly better; at 1 both are, and 0 gains more; at 2 neither is
    diffs = np.array([8.0, 4.0, -4.0, 0.0])
    diff_squares = np.array([52.0, 8.0, 4.0, 0.0])
    assert confident_best(diffs, diff_squares, 4, 3, confidence) == chosen


def test_confident_best_wants_more_than_the_confidence():
    # gains 2.5, 0.5, 0.5, 0.5: mean 1, sample variance (7 - 4) / 3 = 1, se 1 / 2: exactly 2 standard errors
    diffs, diff_squares = np.array([0.0, 4.0]), np.array([0.0, 7.0])
    assert confident_best(diffs, diff_squares, 4, 0, 2.0) == 0
    assert confident_best(diffs, diff_squares, 4, 0, 1.99) == 1
