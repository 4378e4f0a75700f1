"""Deal probabilities of the rules page, computed exactly and matched by the engine's deals.

The exact values come from math.comb (hypergeometric), the simulated ones
from the EV_DEAL / EV_DRAW events of replayed hands (the same keys and code
as a batch run). Agreement within 4 standard errors.
"""
import math

import numpy as np
import pytest

from etappe.kernels import race as K
from etappe.kernels.race_design import load_design
from etappe.kernels.race_policies import parse_policy
from etappe.kernels.race_replay import replay_hands

MB = load_design("millebornes")
ROLLS = 14


def p_roll_in_6(deck):
    return 1 - math.comb(deck - ROLLS, 6) / math.comb(deck, 6)


def p_no_roll_no_row_in_7(deck):
    return math.comb(deck - ROLLS - 1, 7) / math.comb(deck, 7)


def test_exact_values_are_the_rules_page_values():
    assert round(p_roll_in_6(106), 4) == 0.5820
    assert round(p_roll_in_6(101), 4) == 0.6015
    assert round(p_no_roll_no_row_in_7(106), 4) == 0.3321
    assert round(p_no_roll_no_row_in_7(101), 4) == 0.3124


def opening_hands(players, games, seed, max_hands=3):
    """[(dealt hand of each seat as a list of card types, first 7 cards of the first seat)] per hand."""
    ct, rules = MB.tables(players)
    specs = [parse_policy("greedy")] * players
    hands6, firsts7 = [], []
    for game in range(games):
        for hand, log, _, hand_out, _ in replay_hands(MB, ct, rules, specs, seed, game):
            dealt = {}
            first_draw = None
            for turn, seat, event, card, side, value in log:
                if event == K.EV_DEAL:
                    dealt.setdefault(int(seat), []).append(int(card))
                elif event == K.EV_DRAW:
                    assert seat == hand_out[K.H_FIRST_SEAT]  # the first seat draws first
                    first_draw = int(card)
                    break
            assert sorted(dealt) == list(range(players))
            assert all(len(h) == 6 for h in dealt.values())
            hands6.extend(dealt.values())
            firsts7.append(dealt[int(hand_out[K.H_FIRST_SEAT])] + [first_draw])
            if hand + 1 >= max_hands:
                break
    return hands6, firsts7


def within(p_hat, p, n, k=4.0):
    se = math.sqrt(p * (1 - p) / n)
    return abs(p_hat - p) <= k * se, f"{p_hat:.4f} vs {p:.4f} (n={n}, se={se:.4f})"


@pytest.mark.parametrize("players,deck,games", [(4, 106, 700), (2, 101, 1200)])
def test_deal_frequencies_match_the_exact_probabilities(players, deck, games):
    ct, _ = MB.tables(players)
    assert int(ct[:, 1].sum()) == deck
    roll = MB.card_index("roll")
    row = MB.card_index("right_of_way")
    hands6, firsts7 = opening_hands(players, games, seed=20240 + players)
    with_roll = np.mean([roll in h for h in hands6])
    ok, msg = within(with_roll, p_roll_in_6(deck), len(hands6))
    assert ok, "P(at least one Roll in 6): " + msg
    blank = np.mean([roll not in h and row not in h for h in firsts7])
    ok, msg = within(blank, p_no_roll_no_row_in_7(deck), len(firsts7))
    assert ok, "P(no Roll, no Right of Way in 7): " + msg


def test_deal_gives_every_card_of_the_deck_once():
    # with the whole deck drawn out (a play-out hand that ends on an empty stock), each card type
    # was dealt or drawn exactly as often as the deck holds it: in every hand of a game, each dealt afresh
    ct, rules = MB.tables(2)
    specs = [parse_policy("random")] * 2
    seen = set()
    for game in range(40):
        for hand, log, _, hand_out, _ in replay_hands(MB, ct, rules, specs, 99, game):
            if hand_out[K.H_STOCK_EXHAUSTED]:
                counts = np.bincount(log[np.isin(log[:, 2], (K.EV_DEAL, K.EV_DRAW)), 3], minlength=len(MB.cards))
                assert (counts == ct[:, 1]).all(), (game, hand)
                seen.add((game, hand))
    assert sum(hand == 0 for _, hand in seen) > 20 and sum(hand > 0 for _, hand in seen) > 100
