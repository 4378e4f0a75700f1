"""An example user policy for the race games (see docs/policies.md).

    etappe simulate millebornes --players 2 --policy docs/examples/distance_first.py:distance_first,greedy

Lays the longest distance card it can; otherwise attacks; otherwise plays
any other card on its own tableau; otherwise discards at random.
"""
from numba import njit

from etappe.kernels.race import C_ROLE, C_VALUE, DISCARD
from etappe.kernels.race_design import ROLE_DISTANCE, R_SIDES
from etappe.kernels.rng import randint


@njit
def distance_first(state, card_table, rules, seat, moves, n_moves, params, key):
    own_side = seat % rules[R_SIDES]
    best, best_value = -1, -1
    attack, own_play = -1, -1
    for i in range(n_moves):
        card, target = moves[i] >> 3, moves[i] & 7
        if target == DISCARD:
            continue
        if target != own_side:
            attack = i
        elif card_table[card, C_ROLE] == ROLE_DISTANCE:
            if card_table[card, C_VALUE] > best_value:
                best, best_value = i, card_table[card, C_VALUE]
        else:
            own_play = i
    if best >= 0:
        return best
    if attack >= 0:
        return attack
    if own_play >= 0:
        return own_play
    i, key = randint(key, n_moves)
    return i
