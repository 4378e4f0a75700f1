"""An example user policy for Bremer Stadtmusikanten (see docs/bremen.md).

    etappe simulate bremen --policy docs/examples/bremen_nearest_house.py:nearest_house,greedy,greedy,greedy

Plays the move whose destination is nearest the house (fewest steps by
`dist`), the first such move on a tie. Its robber moves are greedy's.
"""
from numba import njit


@njit
def nearest_house(state, dist, moves, n_moves, seat, params, key):
    best = 0
    for i in range(1, n_moves):
        # a move is slot << 24 | animal << 16 | destination field
        if dist[moves[i] & 0xFFFF] < dist[moves[best] & 0xFFFF]:
            best = i
    return best
