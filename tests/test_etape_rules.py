"""Tape l'étape rule scenarios, from ../shared/rules/tape_l_etape.md.

Each test builds a position by hand, plays one kernel step and checks the
effect the rules page prescribes."""
import re

import numpy as np
import pytest

from etappe.analysis import etape as E
from etappe.kernels import etape as K

RED, BLUE, GREEN, YELLOW = range(4)


def card(colour, value):
    return colour * 12 + value - 1


def mask(*cards):
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(m):
    return sorted(c for c in range(48) if (int(m) >> c) & 1)


def position(n=4, profile=K.MONTAGNE, hands=(), start=None, options=None, jokers=None):
    opts = E.option_vector(options or {})
    st = np.zeros(K.S_SIZE, np.int64)
    K.init_race(st, n, opts)
    for s, hand in enumerate(hands):
        st[K.S_HAND + s] = mask(*hand)
    K.start_stage(st, opts, profile, K.profile_start(st, opts, profile) if start is None else start)
    if jokers is not None:  # after the stage start, which deals them again under joker_refresh=stage
        for s in range(n):
            st[K.S_JOKERS + s] = jokers[s] if s < len(jokers) else 0
    return st, opts


def lay_all(st, seat, *cards):
    for c in cards:
        st[K.S_HAND + seat] |= 1 << c
        K.lay(st, seat, c)


def policies(n, spec="heuristic"):
    parsed = [E.parse_policy(spec if isinstance(spec, str) else spec[s]) for s in range(n)]
    return np.array([p[0] for p in parsed], np.int64), np.stack([p[1] for p in parsed])


def new_record():
    rec = np.zeros(K.STAGE_COLS, np.int64)
    for s in range(K.MAX_P):
        for f in (K.F_CREV, K.F_VITA, K.F_BRAQ):
            rec[K.seat_col(K.C_SEAT, f, s)] = -1
    return rec


def turn(st, opts, seat, spec="heuristic", ckey=7, pkeys=None):
    n = int(st[K.S_N])
    pids, prm = policies(n, spec)
    st[K.S_TURN] = seat
    rec = new_record()
    pkeys = np.arange(1, n + 1) if pkeys is None else np.array(pkeys)
    K.play_turn(st, opts, pids, prm, np.uint64(ckey), pkeys.astype(np.uint64), rec)
    return rec


def field(rec, f, seat):
    return int(rec[K.seat_col(K.C_SEAT, f, seat)])


def legal(st, opts):
    return cards_of(K.legal_mask(st, opts))


# ------------------------------------------------------------ set-up
@pytest.mark.parametrize("n, lo, hi", [(3, 3, 10), (4, 3, 10), (5, 2, 11), (6, 1, 12)])
def test_cards_in_play_by_player_count(n, lo, hi):
    st, _ = position(n)
    assert cards_of(K.in_play(st)) == sorted(card(c, v) for c in range(4) for v in range(lo, hi + 1))


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_deal_gives_eight_cards_each_from_the_cards_in_play(n):
    st, _ = position(n)
    K.deal(st, np.uint64(12345))
    hands = [int(st[K.S_HAND + s]) for s in range(n)]
    assert all(len(cards_of(h)) == 8 for h in hands)
    union = 0
    for h in hands:
        assert union & h == 0
        union |= h
    assert union & ~int(K.in_play(st)) == 0
    # 3 players: 8 of the 32 cards stay out of play; otherwise all are dealt.
    assert len(cards_of(K.in_play(st))) - len(cards_of(union)) == (8 if n == 3 else 0)


def test_each_stage_is_dealt_afresh():
    # "Each stage is dealt afresh": in every race no two stages share a deal,
    # and the deal of stage g + 1 does not depend on stage g's. Count, over
    # every card and every pair of consecutive stages, the seat holding it in
    # stage g against the seat holding it in stage g + 1 (4 players: every
    # card dealt). Independent deals: each cell of the 4 x 4 table gets per
    # pair a hypergeometric count (32 cards, 8 and 8: mean 2, variance 1.16,
    # within [0, 8]), so over 50 races x 3 pairs mean 300, sd 13.2; by
    # Bernstein's inequality a cell strays 120 from 300 with probability
    # below 6e-8, under 1e-6 for the 16 cells. The same deal every stage puts
    # 1200 on the diagonal and 0 elsewhere; a deal passed round the table, 0
    # on the diagonal.
    n, races = 4, 50
    _, stages = E.simulate(players=n, races=races, seed=8)
    dealt = stages[[f"dealt_{s}" for s in range(n)]].to_numpy().reshape(races, n, n)  # race, stage, seat
    table = np.zeros((n, n), np.int64)
    for race in dealt:
        assert len({tuple(deal) for deal in race}) == n
        held = cards_of(np.bitwise_or.reduce(race[0]))
        seat_of = np.array([[next(s for s in range(n) if (int(deal[s]) >> c) & 1) for c in held]
                            for deal in race])  # stage, card
        for g in range(n - 1):
            np.add.at(table, (seat_of[g], seat_of[g + 1]), 1)
    assert table.sum() == races * (n - 1) * 32
    assert (abs(table - races * (n - 1) * 2) <= 120).all(), table


@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
def test_other_player_counts_are_refused(n):
    with pytest.raises(ValueError, match="3 to 6 players"):
        E.simulate(players=n, races=1)


def test_unknown_option_and_policy_are_refused():
    # named as words, not as a Python list
    with pytest.raises(ValueError, match=r"unknown etape option\(s\) 'no_such_rule'; known: balai_last_bonus, "):
        E.simulate(players=4, races=1, options={"no_such_rule": 1})
    with pytest.raises(ValueError, match="unknown etape policy"):
        E.simulate(players=4, races=1, policies=["genius"])
    with pytest.raises(ValueError, match="column_step"):
        E.simulate(players=4, races=1, options={"column_step": "diagonal"})
    with pytest.raises(ValueError, match="low_card_seconds must be 0 to 10000, not -10"):
        E.simulate(players=4, races=1, options={"low_card_seconds": -10})


@pytest.mark.parametrize("name, value, known", [
    ("gc_tie", "photo_finish", "shared, stage_places"), ("gc_tie", True, "shared, stage_places"),
    ("seat_order", "from_seat_1", "from_picker, from_seat_0"), ("seat_order", 0, "from_picker, from_seat_0")])
def test_tie_options_refuse_other_values(name, value, known):
    with pytest.raises(ValueError, match=f"etape rule option {name}: .* is not one of {known}"):
        E.simulate(players=4, races=1, options={name: value})


@pytest.mark.parametrize("options, message", [
    ({"joker_refresh": "match"}, "etape rule option joker_refresh: 'match' is not one of race, stage"),
    ({"clm_direction": "down"}, "etape rule option clm_direction: 'down' is not one of both, up"),
    # like the Crevaison options without the Crevaison: a rule of nothing in the game is refused, not ignored
    ({"jokers": "", "joker_refresh": "stage"}, "joker_refresh=stage rules the jokers, and none is in the game")])
def test_joker_refresh_and_clm_direction_refuse_what_they_cannot_mean(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        E.simulate(players=4, races=1, options=options)
    assert E.resolve_options({"jokers": "", "joker_refresh": "race"})["joker_refresh"] == "race"


def test_switch_options_typed_as_text_mean_true_and_false():
    # `--option blocked_winner=true` reaches the game as the text "true".
    default, on = E.option_vector({}), E.option_vector({"blocked_winner": True})
    assert (E.option_vector({"blocked_winner": "true"}) == on).all() and not (on == default).all()
    assert (E.option_vector({"blocked_winner": "false"}) == default).all()
    with pytest.raises(ValueError, match="sprint_in_balai: must be true or false, not 2"):
        E.simulate(players=4, races=1, options={"sprint_in_balai": 2})


# ------------------------------------------------------------ profiles
def test_montagne_starts_at_lowest_value_in_play_and_climbs_by_one():
    st, opts = position(4, K.MONTAGNE)
    assert legal(st, opts) == [card(c, 3) for c in range(4)]
    lay_all(st, 0, card(RED, 3))
    assert legal(st, opts) == sorted([card(RED, 4)] + [card(c, 3) for c in (BLUE, GREEN, YELLOW)])
    st6, opts6 = position(6, K.MONTAGNE)
    assert legal(st6, opts6) == [card(c, 1) for c in range(4)]


def test_descente_starts_at_highest_value_in_play_and_falls_by_one():
    st, opts = position(5, K.DESCENTE)
    assert legal(st, opts) == [card(c, 11) for c in range(4)]
    lay_all(st, 0, card(BLUE, 11), card(BLUE, 10))
    # the blue column goes on down only (its 11 cannot be followed by the 12, out of play with 5 players,
    # nor grow up again from its top); the other columns still wait for their 11
    assert legal(st, opts) == sorted([card(BLUE, 9)] + [card(c, 11) for c in (RED, GREEN, YELLOW)])
    # with the start at the highest value dealt (option extreme_start), a value above the column is in
    # play: still the column only falls
    hands = [[card(RED, 8), card(RED, 9)], [card(BLUE, 5)], [card(GREEN, 4)]]
    st, opts = position(4, K.DESCENTE, hands, options={"extreme_start": "dealt"})
    assert st[K.S_START] == 9  # the 10s are in play (values 3-10), but nobody holds one
    lay_all(st, 0, card(RED, 9), card(RED, 8))
    assert [c for c in legal(st, opts) if c // 12 == RED] == [card(RED, 7)]  # not the red 10


def test_plaine_starts_with_a_six_and_grows_from_both_ends():
    st, opts = position(4, K.PLAINE)
    assert legal(st, opts) == [card(c, 6) for c in range(4)]
    lay_all(st, 0, card(GREEN, 6), card(GREEN, 5))
    greens = [c for c in legal(st, opts) if c // 12 == GREEN]
    assert greens == [card(GREEN, 4), card(GREEN, 7)]


def test_contre_la_montre_columns_start_at_the_named_value():
    st, opts = position(4, K.CLM, start=9)
    assert legal(st, opts) == [card(c, 9) for c in range(4)]
    lay_all(st, 0, card(RED, 9))
    assert [c for c in legal(st, opts) if c // 12 == RED] == [card(RED, 8), card(RED, 10)]


@pytest.mark.parametrize("options, up_only", [({}, False), ({"clm_direction": "both"}, False),
                                              ({"clm_direction": "up"}, True)])
def test_option_clm_direction(options, up_only):
    # "Contre la montre : le joueur qui choisit l'étape définit la valeur de
    # départ" names no direction, where "Montagne : colonnes croissantes",
    # "Descente : colonnes décroissantes" and "Plaine : on peut monter ou
    # descendre" do. both (the rules page): up or down as in Plaine; up: only
    # upwards from the start named, as a Montagne column.
    st, opts = position(4, K.CLM, start=9, options=options)
    assert legal(st, opts) == [card(c, 9) for c in range(4)]
    lay_all(st, 0, card(RED, 9))
    reds = [card(RED, 10)] if up_only else [card(RED, 8), card(RED, 10)]
    assert [c for c in legal(st, opts) if c // 12 == RED] == reds
    # a value below the start can never go under up (no column will reach it)
    assert K.depth(st, opts, card(BLUE, 8)) == (K.NEVER if up_only else 2)
    # the option rules Contre-la-montre only: Plaine still goes both ways, Montagne and Descente one way
    for profile, start, after in ((K.PLAINE, 6, [5, 7]), (K.MONTAGNE, 3, [4]), (K.DESCENTE, 10, [9])):
        st, opts = position(4, profile, options=options)
        lay_all(st, 0, card(RED, start))
        assert [c for c in legal(st, opts) if c // 12 == RED] == [card(RED, v) for v in after]


@pytest.mark.parametrize("options, up_only", [({}, False), ({"clm_direction": "up"}, True)])
def test_contre_la_montre_start_lets_the_picker_lay_its_hand_in_one_turn(options, up_only):
    # "Chacun peut poser autant de cartes qu'il veut à son tour", each card
    # legal when laid. The picker holds the 8s and 9s of every colour: from a
    # start of 8 it lays 8 then 9 in each column; from 9, 9 then 8, but only
    # when columns may grow down. The heuristic names a start that empties
    # its hand on the first turn (under up: 8, the 9 would leave its 8s dead).
    hand = [card(c, v) for c in range(4) for v in (8, 9)]
    rest = [[card(RED, 3), card(RED, 4)], [card(BLUE, 3)], [card(GREEN, 3)]]
    st, opts = position(4, K.CLM, [hand] + rest, jokers=[0] * 4, options=options)
    _, prm = policies(4)
    start = int(K.choose_start(st, opts, 0, K.POL_HEURISTIC, prm[0], np.uint64(1))[0])
    assert start == 8 if up_only else start in (8, 9)
    st[K.S_START] = start
    rec = turn(st, opts, 0)
    assert st[K.S_HAND] == 0 and field(rec, K.F_LAID, 0) == 8 and K.stage_status(st, opts) == 1
    # named 9, the same hand lays only its four 9s under up
    st, opts = position(4, K.CLM, [hand] + rest, start=9, jokers=[0] * 4, options=options)
    turn(st, opts, 0)
    assert cards_of(st[K.S_HAND]) == ([card(c, 8) for c in range(4)] if up_only else [])


def test_voiture_balai_columns_are_plaine_columns():
    st, opts = position(4, K.BALAI)
    assert legal(st, opts) == [card(c, 6) for c in range(4)]


def test_option_free_columns_accept_any_higher_value():
    st, opts = position(4, K.MONTAGNE, options={"column_step": "free"})
    lay_all(st, 0, card(RED, 3))
    assert [c for c in legal(st, opts) if c // 12 == RED] == [card(RED, v) for v in range(4, 11)]


def test_option_extreme_start_dealt_uses_lowest_value_dealt():
    hands = [[card(RED, 5), card(BLUE, 9)], [card(GREEN, 4)], [card(YELLOW, 10)]]
    st, opts = position(3, K.MONTAGNE, hands, options={"extreme_start": "dealt"})
    assert st[K.S_START] == 4
    st, opts = position(3, K.DESCENTE, hands, options={"extreme_start": "dealt"})
    assert st[K.S_START] == 10


# ------------------------------------------------------------ turns
def test_must_lay_exactly_one_card_when_able():
    hands = [[card(RED, 3), card(RED, 4), card(BLUE, 9)], [card(GREEN, 8)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[0, 0, 0, 0])
    rec = turn(st, opts, 0, "random")
    assert cards_of(st[K.S_HAND]) == [card(RED, 4), card(BLUE, 9)]
    assert field(rec, K.F_LAID, 0) == 1 and field(rec, K.F_PASSES, 0) == 0


def test_a_player_who_cannot_lay_passes():
    hands = [[card(RED, 3)], [card(GREEN, 8), card(BLUE, 5)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[0, 0, 0, 0])
    rec = turn(st, opts, 1)
    assert cards_of(st[K.S_HAND + 1]) == [card(BLUE, 5), card(GREEN, 8)]
    assert field(rec, K.F_PASSES, 1) == 1 and field(rec, K.F_LAID, 1) == 0


def test_plaine_sprint_lays_the_last_two_cards_in_one_turn():
    hands = [[card(RED, 7), card(RED, 8)], [card(BLUE, 3)]]
    st, opts = position(4, K.PLAINE, hands, jokers=[0, 0, 0, 0])
    lay_all(st, 2, card(RED, 6))
    turn(st, opts, 0)
    assert st[K.S_HAND] == 0 and st[K.S_FINISH] == 1
    assert K.stage_status(st, opts) == 1


def test_plaine_without_sprint_lays_one_card_with_three_in_hand():
    hands = [[card(RED, 7), card(RED, 8), card(RED, 9)], [card(BLUE, 3)]]
    st, opts = position(4, K.PLAINE, hands, jokers=[0, 0, 0, 0])
    lay_all(st, 2, card(RED, 6))
    turn(st, opts, 0)
    assert len(cards_of(st[K.S_HAND])) == 2


def test_no_sprint_in_montagne():
    hands = [[card(RED, 4), card(RED, 5)], [card(BLUE, 3)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[0, 0, 0, 0])
    lay_all(st, 2, card(RED, 3))
    turn(st, opts, 0)
    assert cards_of(st[K.S_HAND]) == [card(RED, 5)]


def test_contre_la_montre_lays_many_cards_in_one_turn():
    hands = [[card(RED, 8), card(RED, 9), card(RED, 10), card(BLUE, 3)], [card(BLUE, 4)]]
    st, opts = position(4, K.CLM, hands, start=8, jokers=[0, 0, 0, 0])
    rec = turn(st, opts, 0)
    assert cards_of(st[K.S_HAND]) == [card(BLUE, 3)]
    assert field(rec, K.F_LAID, 0) == 3


def test_stage_ends_when_a_player_lays_the_last_card():
    hands = [[card(RED, 3)], [card(BLUE, 3), card(BLUE, 4)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[0, 0, 0, 0])
    assert K.stage_status(st, opts) == 0
    turn(st, opts, 0)
    assert K.stage_status(st, opts) == 1


def test_voiture_balai_goes_on_after_the_first_empties():
    hands = [[card(RED, 6)], [card(BLUE, 6), card(BLUE, 7)]]
    st, opts = position(4, K.BALAI, hands, jokers=[0, 0, 0, 0])
    turn(st, opts, 0)
    assert st[K.S_FINISH] == 1
    assert K.stage_status(st, opts) == 0
    turn(st, opts, 1)
    turn(st, opts, 1)
    assert K.stage_status(st, opts) == 3  # every hand empty


def test_stage_blocks_when_nobody_can_lay():
    # 3 players: the red 3 is one of the 8 cards nobody was dealt, so no red
    # card can ever go in Montagne; every hand holds only red cards.
    hands = [[card(RED, 4)], [card(RED, 5)], [card(RED, 6)]]
    st, opts = position(3, K.MONTAGNE, hands)
    for c in range(1, 4):
        lay_all(st, 2, card(c, 3))
    assert K.stage_status(st, opts) == 2


# ------------------------------------------------------------ jokers
def test_crevaison_out_of_turn_makes_the_player_on_turn_skip():
    hands = [[card(RED, 9), card(BLUE, 9)], [card(GREEN, 3)], [card(RED, 10)], [card(BLUE, 10)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_CREVAISON, 0, 0, 0])
    rec = turn(st, opts, 1)  # seat 1 could win now; seat 0 punctures its tyre
    assert cards_of(st[K.S_HAND + 1]) == [card(GREEN, 3)]
    assert field(rec, K.F_CREV, 0) == 1 and field(rec, K.F_SKIPPED, 1) == 1
    assert st[K.S_JOKERS] == 0 and st[K.S_SKIP + 1] == 0


def test_crevaison_only_on_own_turn_when_not_anytime():
    hands = [[card(RED, 9)], [card(GREEN, 3)], [card(RED, 10)], [card(BLUE, 10)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_CREVAISON, 0, 0, 0],
                        options={"crevaison_anytime": False})
    turn(st, opts, 1)
    assert st[K.S_HAND + 1] == 0  # seat 1 laid its last card
    assert st[K.S_JOKERS] == K.J_CREVAISON


@pytest.mark.parametrize("options, allowed", [
    ({}, True), ({"self_crevaison_in_balai": True}, True), ({"self_crevaison_in_balai": False}, False)])
def test_option_self_crevaison_in_voiture_balai(options, allowed):
    # Crevaison: "on peut se cibler soi-même"; Voiture balai: "Il n'est pas
    # possible de passer son tour si l'on peut jouer". Seat 0 can lay its last
    # card, which would empty its hand first. Allowed (the default): it
    # punctures its own tyre and skips the turn. Not allowed: it must lay.
    hands = [[card(RED, 6)], [card(BLUE, 9), card(BLUE, 10)]]
    st, opts = position(4, K.BALAI, hands, jokers=[K.J_CREVAISON, 0, 0, 0], options=options)
    rec = turn(st, opts, 0)
    if allowed:
        assert field(rec, K.F_CREV, 0) == 0 and field(rec, K.F_SKIPPED, 0) == 1
        assert cards_of(st[K.S_HAND]) == [card(RED, 6)] and st[K.S_JOKERS] == 0
    else:
        assert field(rec, K.F_CREV, 0) == -1 and field(rec, K.F_SKIPPED, 0) == 0
        assert field(rec, K.F_LAID, 0) == 1 and st[K.S_HAND] == 0 and st[K.S_FINISH] == 1
        assert st[K.S_JOKERS] == K.J_CREVAISON


@pytest.mark.parametrize("profile, options, on_self", [
    (K.BALAI, {}, True), (K.BALAI, {"self_crevaison_in_balai": False}, False),
    (K.PLAINE, {"self_crevaison_in_balai": False}, True), (K.MONTAGNE, {"self_crevaison_in_balai": False}, True)])
def test_random_crevaison_targets_oneself_only_where_the_option_allows(profile, options, on_self):
    # Any seat may be punctured, oneself included, in the window before any
    # turn; without self_crevaison_in_balai oneself is no target in Voiture
    # balai only.
    hands = [[card(RED, 6), card(RED, 9)], [card(BLUE, 6)], [card(GREEN, 6)], [card(YELLOW, 6)]]
    st, opts = position(4, profile, hands, jokers=[K.J_CREVAISON] * 4, options=options)
    _, prm = policies(4, "random:joker_p=1")
    for on_turn in range(4):
        targets = {int(K.choose_crevaison(st, opts, 0, on_turn, K.POL_RANDOM, prm[0], np.uint64(key))[0])
                   for key in range(1, 200)}
        assert targets == ({0, 1, 2, 3} if on_self else {1, 2, 3})


def test_voiture_balai_an_emptied_hand_takes_no_turn_but_keeps_the_crevaison_window():
    # Documented decision (docs/etape.md): "Players who emptied their hand in
    # Voiture balai take no more turns but may still play Crevaison in the
    # window". Seat 0 has laid its last card and still holds its Crevaison;
    # it is seat 1's turn, and seat 0 plays every joker it can (joker_p=1)
    # at a random target (any seat, itself included, by default).
    hands = [[], [card(RED, 7), card(BLUE, 9)], [card(GREEN, 6), card(GREEN, 10)],
             [card(YELLOW, 6), card(YELLOW, 9)]]
    spec = ["random:joker_p=1", "heuristic", "heuristic", "heuristic"]
    targets = set()
    for key in range(1, 41):
        st, opts = position(4, K.BALAI, hands, jokers=[K.J_CREVAISON, 0, 0, 0])
        lay_all(st, 0, card(RED, 6))
        st[K.S_NFIN], st[K.S_FINISH] = 1, 1
        st[K.S_TURN] = 3
        K.next_turn(st)
        assert st[K.S_TURN] == 1  # seat 0 takes no more turns
        rec = turn(st, opts, 1, spec, pkeys=[key, 2, 3, 4])
        target = field(rec, K.F_CREV, 0)
        assert target in (0, 1, 2, 3) and st[K.S_JOKERS] == 0
        if target == 1:  # seat 1 on turn skips it
            assert field(rec, K.F_SKIPPED, 1) == 1 and field(rec, K.F_LAID, 1) == 0
            assert cards_of(st[K.S_HAND + 1]) == [card(RED, 7), card(BLUE, 9)]
        else:
            assert st[K.S_SKIP + target] == 1
            assert field(rec, K.F_SKIPPED, 1) == 0 and cards_of(st[K.S_HAND + 1]) == [card(BLUE, 9)]
        assert st[K.S_HAND] == 0 and field(rec, K.F_LAID, 0) == 0
        targets.add(target)
    assert 1 in targets


@pytest.mark.parametrize("stack, skips", [(True, 2), (False, 1)])
def test_two_crevaisons_on_one_player(stack, skips):
    st, opts = position(4, K.MONTAGNE, [[card(RED, 9)], [card(GREEN, 3)]],
                        jokers=[K.J_CREVAISON, 0, K.J_CREVAISON, 0], options={"crevaison_stack": stack})
    K.apply_crevaison(st, opts, 0, 1)
    K.apply_crevaison(st, opts, 2, 1)
    assert st[K.S_SKIP + 1] == skips
    assert st[K.S_JOKERS] == 0 and st[K.S_JOKERS + 2] == 0


@pytest.mark.parametrize("a", [0, 2])  # the drawer's seat: the bar holds between any two seats
def test_vitamine_swaps_a_card_and_bars_retaliation(a):
    b, c, d = (a + 1) % 4, (a + 2) % 4, (a + 3) % 4
    hands = {a: [card(RED, 10), card(BLUE, 3)], b: [card(GREEN, 3)], c: [card(YELLOW, 4), card(YELLOW, 5)],
             d: [card(YELLOW, 6), card(YELLOW, 7)]}
    jokers = {a: K.J_VITAMINE, b: K.J_VITAMINE, c: 0, d: 0}
    st, opts = position(4, K.MONTAGNE, [hands[s] for s in range(4)], jokers=[jokers[s] for s in range(4)])
    rec = turn(st, opts, a)
    # Seat a gave its slowest card (red 10) and drew seat b's only card,
    # then laid a 3 as usual.
    assert cards_of(st[K.S_HAND + b]) == [card(RED, 10)]
    assert field(rec, K.F_VITA, a) == b and field(rec, K.F_LAID, a) == 1
    assert len(cards_of(st[K.S_HAND + a])) == 1
    assert st[K.S_JOKERS + a] == 0
    targets = K.vitamine_targets(st, b)  # seat b may not answer against seat a, against the others it may
    assert not (targets >> a) & 1 and (targets >> c) & 1 and (targets >> d) & 1


def test_vitamine_bar_on_retaliation_lifts_in_the_next_stage():
    # "Celui-ci ne peut pas riposter par une Vitamine contre le même joueur
    # pendant la même étape" (rules page: "in the same stage"). Seat 0 draws
    # from seat 1 as above; in that stage seat 1's own Vitamine may not go
    # against seat 0; in the next stage it may.
    hands = [[card(RED, 10), card(BLUE, 3)], [card(GREEN, 3)], [card(YELLOW, 4), card(YELLOW, 5)],
             [card(YELLOW, 6), card(YELLOW, 7)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_VITAMINE, K.J_VITAMINE, 0, 0])
    assert field(turn(st, opts, 0), K.F_VITA, 0) == 1
    same = st.copy()
    hand0 = int(same[K.S_HAND])
    rec = turn(same, opts, 1)
    assert field(rec, K.F_VITA, 1) not in (-1, 0)  # seat 1 uses it, but not against seat 0
    assert same[K.S_HAND] == hand0
    # The next stage (Plaine): seat 0 holds a single card, the green 9; seat 1
    # still holds its Vitamine and a card it cannot lay (blue 10).
    st[K.S_STAGE] += 1
    K.start_stage(st, opts, K.PLAINE, 6)
    new = [[card(GREEN, 9)], [card(RED, 6), card(BLUE, 10), card(YELLOW, 9)],
           [card(YELLOW, 3), card(YELLOW, 4), card(YELLOW, 5)], [card(BLUE, 3), card(BLUE, 4), card(BLUE, 5)]]
    for s, hand in enumerate(new):
        st[K.S_HAND + s] = mask(*hand)
    assert (K.vitamine_targets(st, 1) >> 0) & 1
    rec = turn(st, opts, 1)
    assert field(rec, K.F_VITA, 1) == 0 and st[K.S_JOKERS + 1] == 0
    assert card(GREEN, 9) in cards_of(st[K.S_HAND + 1])  # the only card seat 0 held
    got = cards_of(st[K.S_HAND])
    assert len(got) == 1 and got[0] in (card(RED, 6), card(BLUE, 10), card(YELLOW, 9))  # one of seat 1's


def test_vitamine_draws_the_card_at_random_from_the_opponents_hand():
    # "a card drawn at random from an opponent's hand": seat 1 holds four
    # cards; seat 0 (heuristic, Vitamine against a hand of up to 4 cards)
    # gives its blue 10 to seat 1 and draws one of them, by the chance key.
    # Over 600 chance keys each card is drawn, and the counts fit a uniform
    # draw: Pearson's chi-square (3 degrees of freedom) exceeds 30 with
    # probability 1.4e-6 under a uniform draw; always the same card gives 1800.
    theirs = [card(GREEN, 5), card(GREEN, 8), card(YELLOW, 7), card(RED, 9)]
    hands = [[card(RED, 3), card(BLUE, 10)], theirs,
             [card(YELLOW, 4), card(YELLOW, 5), card(YELLOW, 6), card(BLUE, 7), card(BLUE, 8)],
             [card(RED, 4), card(RED, 5), card(RED, 6), card(GREEN, 9), card(GREEN, 10)]]
    drawn = {c: 0 for c in theirs}
    for key in range(1, 601):
        st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_VITAMINE, 0, 0, 0])
        rec = turn(st, opts, 0, "heuristic:vita_cards=4", ckey=key)
        assert field(rec, K.F_VITA, 0) == 1
        left = cards_of(st[K.S_HAND + 1])
        (got,) = set(theirs) - set(left)
        assert sorted(left) == sorted(set(theirs) - {got} | {card(BLUE, 10)})
        assert got in cards_of(st[K.S_HAND])  # none of seat 1's cards can be laid
        drawn[got] += 1
    counts = np.array(list(drawn.values()))
    assert (counts > 0).all(), drawn
    assert ((counts - 150) ** 2 / 150).sum() < 30, drawn


def test_the_heuristic_never_gives_away_a_card_it_can_lay_now():
    # Every card of seat 0 can go on a column now (Montagne starts at 3): Vitamine
    # would hand seat 1 a card seat 0 could lay, so the heuristic keeps its joker.
    hands = [[card(RED, 3), card(BLUE, 3)], [card(GREEN, 9)], [card(YELLOW, 4), card(YELLOW, 5)],
             [card(YELLOW, 6), card(YELLOW, 7)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_VITAMINE, 0, 0, 0])
    rec = turn(st, opts, 0)
    assert cards_of(st[K.S_HAND + 1]) == [card(GREEN, 9)]  # nothing given, nothing taken
    # not against seat 1, nor against seats 2 and 3 either: the joker is kept (-1: not used)
    assert field(rec, K.F_VITA, 0) == -1 and st[K.S_JOKERS] == K.J_VITAMINE
    assert field(rec, K.F_LAID, 0) == 1 and len(cards_of(st[K.S_HAND])) == 1


def test_changement_de_braquet_lays_a_run_in_one_turn():
    hands = [[card(RED, 4), card(RED, 5), card(RED, 6), card(BLUE, 10)], [card(GREEN, 9)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_BRAQUET, 0, 0, 0])
    lay_all(st, 2, card(RED, 3))
    rec = turn(st, opts, 0)
    assert cards_of(st[K.S_HAND]) == [card(BLUE, 10)]
    assert field(rec, K.F_BRAQ, 0) == 3 and st[K.S_JOKERS] == 0


# ------------------------------------------------------------ scoring
def score(st, opts, status=1, picker=0, rec=None):
    """Score the stage as it stands: (winner, stage times, side points); the
    stage record goes to `rec` when given."""
    st[K.S_PICKER] = picker
    rec = new_record() if rec is None else rec
    winner = K.score_stage(st, opts, rec, status)
    times = [field(rec, K.F_TIME, s) for s in range(int(st[K.S_N]))]
    side = [field(rec, K.F_SIDE, s) for s in range(int(st[K.S_N]))]
    return winner, times, side


def places(rec, n):
    return [field(rec, K.F_PLACE, s) for s in range(n)]


def test_montagne_stage_times_bonus_and_mountain_points():
    hands = [[], [card(RED, 3), card(BLUE, 9)], [card(RED, 4), card(RED, 5), card(RED, 6)],
             [card(GREEN, 7), card(GREEN, 8)]]
    st, opts = position(4, K.MONTAGNE, hands)
    st[K.S_NFIN], st[K.S_FINISH] = 1, 1
    winner, times, side = score(st, opts)
    # 10 s a card 1-6, 30 s a card 7-12, 40 s bonus for the winner.
    assert winner == 0 and times == [-40, 40, 30, 60]
    assert side == [5, 1, 3, 0]
    assert list(st[K.S_MOUNT:K.S_MOUNT + 4]) == [5, 1, 3, 0]
    assert list(st[K.S_TIME:K.S_TIME + 4]) == [-40, 40, 30, 60]


@pytest.mark.parametrize("options, side_points", [
    ({}, [0, 5, 1, 3]), ({"seat_order": "from_picker"}, [0, 5, 1, 3]), ({"seat_order": "from_seat_0"}, [0, 5, 3, 1])])
def test_option_seat_order_in_the_side_classification(options, side_points):
    # Plaine, no winner (blocked), seat 3 picked. Seats 1-3 hold 30 s each:
    # seat 1 in one card is first (5 points); seats 2 and 3 tie on cards too,
    # and seat order decides who gets 3 and who 1: from the picker (the
    # default) 3, 0, 1, 2 puts seat 3 first; from seat 0, seat 2. Seat 0 with
    # 40 s is last either way. The stage place ignores seat order: seats 2
    # and 3 share 2nd.
    hands = [[card(RED, 3), card(BLUE, 9)], [card(RED, 7)],
             [card(RED, 4), card(RED, 5), card(RED, 6)], [card(BLUE, 4), card(BLUE, 5), card(BLUE, 6)]]
    st, opts = position(4, K.PLAINE, hands, options=options)
    rec = new_record()
    winner, times, side = score(st, opts, status=2, picker=3, rec=rec)
    assert winner == -1 and times == [40, 30, 30, 30]
    assert side == side_points
    assert list(st[K.S_SPRINT:K.S_SPRINT + 4]) == side_points
    assert places(rec, 4) == [4, 1, 2, 2]


@pytest.mark.parametrize("options, winner", [
    ({}, 3), ({"seat_order": "from_picker"}, 3), ({"seat_order": "from_seat_0"}, 1)])
def test_option_seat_order_for_the_blocked_winner(options, winner):
    # blocked_winner: the best placed of a blocked stage gets the 40 s, "the
    # winner, then fewest seconds, fewer cards, then seat order". Seats 1 and
    # 3 both hold 20 s in two cards; seat 2 picked, so from the picker seat 3
    # comes before seat 1, from seat 0 seat 1 does.
    hands = [[card(RED, 3), card(BLUE, 9)], [card(RED, 4), card(RED, 5)], [card(RED, 7)],
             [card(BLUE, 4), card(BLUE, 5)]]
    st, opts = position(4, K.DESCENTE, hands, options={"blocked_winner": True, **options})
    got, times, _ = score(st, opts, status=2, picker=2)
    expect = [40, 20, 30, 20]
    expect[winner] -= 40
    assert got == winner and times == expect


def test_option_blocked_winner_gives_the_bonus_to_the_best_placed():
    hands = [[card(RED, 3), card(BLUE, 9)], [card(RED, 7)], [card(RED, 4), card(RED, 5)], [card(BLUE, 4)]]
    st, opts = position(4, K.DESCENTE, hands, options={"blocked_winner": True})
    winner, times, side = score(st, opts, status=2)
    assert winner == 3 and times == [40, 30, 20, -30]
    assert side == [0, 0, 0, 0]  # Descente feeds no side classification


def test_voiture_balai_bonuses_for_last_and_second_to_last():
    hands = [[], [], [], [card(RED, 2), card(RED, 11)]]
    st, opts = position(5, K.BALAI, hands + [[]])
    for seat, order in ((2, 1), (0, 2), (1, 3), (4, 4)):
        st[K.S_FINISH + seat] = order
    st[K.S_NFIN] = 4
    rec = new_record()
    winner, times, side = score(st, opts, status=2, rec=rec)
    # Seat 4 emptied last (60 s), seat 1 before it (30 s); seat 3 pays 10 + 30.
    assert winner == 4 and times == [0, -30, 0, 40, -60]
    assert side == [0] * 5
    # Stage places: the aim is to empty last, so the later to empty places
    # higher (seats 4, 1, 0, 2), then those still holding cards (seat 3).
    assert places(rec, 5) == [3, 2, 4, 5, 1]


@pytest.mark.parametrize("emptied, times", [
    ({2: 1, 1: 2}, [10, -60, -30, 30]),  # two emptied: the last 60 s, the one before it 30 s
    ({1: 1}, [10, -60, 10, 30]),          # one emptied: 60 s, and nobody before it to get 30 s
])
def test_voiture_balai_bonuses_when_few_riders_emptied_their_hands(emptied, times):
    # Rules page: "the last to lay their last card gets a 60 s bonus, the one before them 30 s; ...
    # players left holding cards ... still pay for their cards" (+10 s for a 1-6, +30 s for a 7-12).
    hands = [[card(RED, 3)], [], [card(GREEN, 4)], [card(BLUE, 8)]]
    for seat in emptied:
        hands[seat] = []
    st, opts = position(4, K.BALAI, hands)
    for seat, order in emptied.items():
        st[K.S_FINISH + seat] = order
    st[K.S_NFIN] = len(emptied)
    winner, got, _ = score(st, opts, status=2)
    assert winner == 1 and got == times


def test_race_time_is_the_sum_of_stage_times_and_lowest_wins():
    races, stages = E.simulate(players=4, races=5, seed=3)
    for s in range(4):
        per_race = stages.groupby("race")[f"time_{s}"].sum()
        assert (per_race.to_numpy() == races[f"time_{s}"].to_numpy()).all()
    times = races[[f"time_{s}" for s in range(4)]].to_numpy()
    unique = (times == times.min(axis=1, keepdims=True)).sum(axis=1) == 1
    assert (races.loc[unique, "winner"].to_numpy() == times[unique].argmin(axis=1)).all()
    assert (races.loc[~unique, "winner"] == -1).all()


def scored_race(stages, options):
    """A four-player race of hand-scored stages, each (profile, the hands at
    its end, the seat that emptied its hand); returns the race row's winner
    and ranks, and each stage's places."""
    st, opts = position(4, options=options)
    st[K.S_NSTAGES] = len(stages)
    srows = np.zeros((len(stages), K.STAGE_COLS), np.int64)
    for g, (profile, hands, emptied) in enumerate(stages):
        st[K.S_STAGE] = g
        K.start_stage(st, opts, profile, K.profile_start(st, opts, profile))
        for s, hand in enumerate(hands):
            st[K.S_HAND + s] = mask(*hand)
        st[K.S_NFIN], st[K.S_FINISH + emptied] = 1, 1
        srows[g] = new_record()
        score(st, opts, picker=g, rec=srows[g])
    row = np.zeros(K.RACE_COLS, np.int64)
    K.classify_race(st, opts, srows, row)
    ranks = [int(row[K.seat_col(K.R_SEAT, K.RF_RANK, s)]) for s in range(4)]
    return int(row[K.R_WINNER]), ranks, [places(rec, 4) for rec in srows]


# Seats 1 and 2 finish level on -10 s in each race. By the sum of stage places
# seat 2 wins the first (1 + 2 against 3 + 1), though seat 1 won the last
# stage; in the second the sums are level (3 each) and the last stage goes to
# seat 2; in the third seats 1 and 2 shared 2nd place in both stages, so they
# stay level, while seats 0 and 3, level on 80 s and on places (5 each), are
# separated by the last stage, which seat 3 won.
R7, B7, G7, Y7 = (card(c, 7) for c in range(4))
HIGH = [card(c, v) for c in (RED, BLUE) for v in (9, 10)]  # four 30 s cards
GC_RACES = {
    "sum of places": ([
        (K.MONTAGNE, [[R7], [card(RED, 3), card(RED, 4), card(RED, 5)], [], [G7, card(GREEN, 8)]], 2),
        (K.PLAINE, [[card(BLUE, 9), card(BLUE, 10)], [], [card(YELLOW, 9)], [card(GREEN, 9), card(GREEN, 10)]], 1)],
        [[2, 3, 1, 4], [3, 1, 2, 3]], [3, 1, 1, 4], (2, [3, 2, 1, 4])),
    "last stage": ([
        (K.MONTAGNE, [[G7, card(GREEN, 8)], [], [R7], [Y7, card(YELLOW, 8)]], 1),
        (K.PLAINE, [[card(GREEN, 9), card(GREEN, 10)], [B7], [], [card(YELLOW, 9), card(YELLOW, 10)]], 2)],
        [[3, 1, 2, 3], [3, 2, 1, 3]], [3, 1, 1, 3], (2, [3, 2, 1, 3])),
    "still shared": ([
        (K.MONTAGNE, [[], [R7], [B7], HIGH], 0),
        (K.PLAINE, [HIGH, [G7], [Y7], []], 3)],
        [[1, 2, 2, 4], [4, 2, 2, 1]], [3, 1, 1, 3], (-1, [4, 1, 1, 3])),
}


@pytest.mark.parametrize("race", GC_RACES)
def test_option_gc_tie(race):
    # "Lowest cumulative time wins". gc_tie=shared (the default): riders level
    # on time share first place (winner -1) and rank alike; stage_places:
    # the lower sum of stage places, then the better place in the last stage.
    stages, stage_places, shared_ranks, (winner, ranks) = GC_RACES[race]
    for options in ({}, {"gc_tie": "shared"}):
        got_winner, got_ranks, got_places = scored_race(stages, options)
        assert got_places == stage_places
        assert (got_winner, got_ranks) == (-1, shared_ranks)
    got_winner, got_ranks, got_places = scored_race(stages, {"gc_tie": "stage_places"})
    assert got_places == stage_places
    assert (got_winner, got_ranks) == (winner, ranks)


@pytest.mark.parametrize("mode, k, per_player", [("sprint", 5, 1), ("endurance", 5, 5), ("endurance", 2, 2)])
def test_stage_count_and_picker_rotation(mode, k, per_player):
    races, stages = E.simulate(players=3, races=4, seed=9,
                               options={"mode": mode, "endurance_stages": k})
    assert len(stages) == 4 * 3 * per_player
    for _, race in stages.groupby("race"):
        assert list(race["picker"]) == [g % 3 for g in range(3 * per_player)]
        # each player picks among their own stage cards: never a profile twice
        for _, picks in race.groupby("picker"):
            assert picks["profile"].is_unique



# ------------------------------------------------------------ audit: untested rules and options
@pytest.mark.parametrize("cap", [1, 2])
def test_the_active_player_plays_first_then_play_goes_round(cap):
    # "The active player picks a profile ...; the active player plays first."
    # Stages cut after one (two) turns: only the picker (then the next seat)
    # has acted, whoever picks.
    _, stages = E.simulate(players=4, races=3, policies=["random"], seed=5,
                           options={"turn_cap": cap})
    assert set(stages["picker"]) == {0, 1, 2, 3}
    for _, row in stages.iterrows():
        acted = {s for s in range(4)
                 if row[f"laid_{s}"] + row[f"passes_{s}"] + row[f"skipped_{s}"] > 0}
        expected = {(row["picker"] + j) % 4 for j in range(row["turns"])}
        assert row["turns"] == cap or row["winner"] == row["picker"]
        assert acted == expected


def test_several_jokers_chained_before_a_card():
    # A joker is not a turn: Vitamine, then Changement de braquet, then the
    # cards, all in seat 0's one turn. Seat 1 holds one card, so the card
    # Vitamine draws is certain (green 3); seat 0 gives its blue 10.
    hands = [[card(RED, 3), card(RED, 4), card(RED, 5), card(BLUE, 10)], [card(GREEN, 3)],
             [card(YELLOW, 7), card(YELLOW, 8), card(YELLOW, 9)],
             [card(BLUE, 7), card(BLUE, 8), card(BLUE, 9)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_VITAMINE | K.J_BRAQUET, 0, 0, 0])
    rec = turn(st, opts, 0)
    assert field(rec, K.F_VITA, 0) == 1 and field(rec, K.F_BRAQ, 0) == 4
    assert field(rec, K.F_LAID, 0) == 4 and field(rec, K.F_PASSES, 0) == 0
    assert cards_of(st[K.S_HAND + 1]) == [card(BLUE, 10)]
    assert st[K.S_HAND] == 0 and st[K.S_FINISH] == 1 and st[K.S_JOKERS] == 0


@pytest.mark.parametrize("on_turn, holders, first", [(1, (0, 3), 3), (2, (1, 3), 3), (3, (0, 2), 0)])
def test_crevaison_window_goes_in_seat_order_from_the_player_on_turn(on_turn, holders, first):
    # The player on turn holds one card: every holder wants to puncture them,
    # and the first holder in seat order from the player on turn decides
    # first; the tyre is flat, so the later holder keeps their joker.
    hands = [[card(BLUE, 9), card(BLUE, 10), card(RED, 9)] for _ in range(4)]
    hands[on_turn] = [card(GREEN, 3)]
    jokers = [K.J_CREVAISON if s in holders else 0 for s in range(4)]
    st, opts = position(4, K.MONTAGNE, hands, jokers=jokers)
    rec = turn(st, opts, on_turn)
    (later,) = set(holders) - {first}
    assert field(rec, K.F_CREV, first) == on_turn and st[K.S_JOKERS + first] == 0
    assert field(rec, K.F_CREV, later) == -1 and st[K.S_JOKERS + later] == K.J_CREVAISON
    assert field(rec, K.F_SKIPPED, on_turn) == 1
    assert cards_of(st[K.S_HAND + on_turn]) == [card(GREEN, 3)]


def test_endurance_mode_defaults_to_five_stages_each():
    assert E.resolve_options({"mode": "endurance"})["endurance_stages"] == 5
    _, stages = E.simulate(players=3, races=2, seed=4, options={"mode": "endurance"})
    assert len(stages) == 2 * 3 * 5 and stages.attrs["stages_per_race"] == 15
    for _, race in stages.groupby("race"):
        for _, picks in race.groupby("picker"):
            assert sorted(picks["profile"].cat.codes) == [0, 1, 2, 3, 4]  # all 5 stage cards


@pytest.mark.parametrize("options, more_p, left", [
    ({}, 1, 0), ({"sprint_in_balai": True}, 1, 0), ({"sprint_in_balai": False}, 1, 1),
    ({}, 0, 1)])
def test_option_sprint_in_balai(options, more_p, left):
    # Voiture balai "as Plaine": with the option (the default) the last two
    # cards may go in one turn (a player who wants to stay in declines:
    # more_p=0); without it, one card a turn.
    hands = [[card(RED, 7), card(RED, 8)], [card(BLUE, 3), card(BLUE, 4)]]
    st, opts = position(4, K.BALAI, hands, jokers=[0] * 4, options=options)
    lay_all(st, 2, card(RED, 6))
    rec = turn(st, opts, 0, f"random:more_p={more_p},joker_p=0")
    assert len(cards_of(st[K.S_HAND])) == left and field(rec, K.F_LAID, 0) == 2 - left
    assert st[K.S_FINISH] == (1 if left == 0 else 0)


@pytest.mark.parametrize("options, carry", [
    ({}, True), ({"crevaison_carry": True}, True), ({"crevaison_carry": False}, False)])
def test_option_crevaison_carry(options, carry):
    # Seat 0 punctures seat 1 and then ends the stage before seat 1 plays.
    # "Their next turn" is then in the next stage (carry, the default), or the
    # skip lapses.
    hands = [[card(RED, 3)], [card(GREEN, 8), card(BLUE, 9)], [card(YELLOW, 9)], [card(BLUE, 10)]]
    st, opts = position(4, K.MONTAGNE, hands, jokers=[K.J_CREVAISON, 0, 0, 0], options=options)
    K.apply_crevaison(st, opts, 0, 1)
    turn(st, opts, 0)
    assert K.stage_status(st, opts) == 1 and st[K.S_SKIP + 1] == 1
    K.start_stage(st, opts, K.PLAINE, 6)
    new = [[card(RED, 9)], [card(GREEN, 6), card(GREEN, 7), card(BLUE, 9)], [card(YELLOW, 3)], [card(BLUE, 4)]]
    for s, hand in enumerate(new):
        st[K.S_HAND + s] = mask(*hand)
    rec = turn(st, opts, 1)
    assert field(rec, K.F_SKIPPED, 1) == (1 if carry else 0)
    assert field(rec, K.F_LAID, 1) == (0 if carry else 1)
    assert len(cards_of(st[K.S_HAND + 1])) == (3 if carry else 2)
    assert st[K.S_SKIP + 1] == 0


def heuristic_pick(n, opts, hands, picker):
    """The heuristic's stage pick with these hands in sight (all 5 stage cards left)."""
    st = np.zeros(K.S_SIZE, np.int64)
    K.init_race(st, n, opts)
    for s, h in enumerate(hands):
        st[K.S_HAND + s] = h
    K.start_stage(st, opts, -1, 0)
    _, prm = policies(n)
    return int(K.choose_profile(st, opts, picker, K.POL_HEURISTIC, prm[picker], np.uint64(1))[0])


@pytest.mark.parametrize("options, after", [
    ({}, True), ({"pick_after_deal": True}, True), ({"pick_after_deal": False}, False)])
def test_option_pick_after_deal(options, after):
    # True (the default): the picker sees the new hand, then picks (the
    # heuristic picks the profile fitting the hand dealt); False: picks blind,
    # before the deal, so the pick cannot depend on the cards.
    n = 4
    opts = E.option_vector(options)
    _, stages = E.simulate(players=n, races=6, seed=2, options=options)
    _, other = E.simulate(players=n, races=6, seed=2, options={"pick_after_deal": not after})
    dealt = [f"dealt_{s}" for s in range(n)]
    assert (stages[dealt].to_numpy() == other[dealt].to_numpy()).all()  # same deals, paired
    seen, blind = [], []
    for _, row in stages.iterrows():
        hands = [int(row[c]) for c in dealt]
        seen.append(heuristic_pick(n, opts, hands, int(row["picker"])))
        blind.append(heuristic_pick(n, opts, [0] * n, int(row["picker"])))
    assert seen != blind  # the deal matters to a picker who sees it
    assert list(stages["profile"].cat.codes) == (seen if after else blind)


@pytest.mark.parametrize("seat", [0, 2])
def test_option_withhold_denies_the_jokers_to_that_seat_only(seat):
    # docs/etape.md: withhold_seat, withhold_jokers "deny one seat some jokers"; the others keep all three.
    st, _ = position(4, options={"withhold_seat": seat, "withhold_jokers": "vitamine,braquet"})
    every = K.J_CREVAISON | K.J_VITAMINE | K.J_BRAQUET
    assert list(st[K.S_JOKERS:K.S_JOKERS + 4]) == [K.J_CREVAISON if s == seat else every for s in range(4)]


@pytest.mark.parametrize("options, again", [({}, False), ({"joker_refresh": "race"}, False),
                                            ({"joker_refresh": "stage"}, True)])
def test_option_joker_refresh(options, again):
    # "LES JOKERS (une seule utilisation chacun)": once per race (the rules
    # page, the default), or once per stage, the set-up's 8 cards, 3 jokers
    # and 5 stage cards being dealt again with every stage's new hand. Every
    # seat holds the Crevaison only. Stage 1: seat 3, on turn, can lay its
    # last card; seat 0, first in the window after it, punctures it.
    st, opts = position(4, K.MONTAGNE, [[card(RED, 9)], [card(RED, 10)], [card(BLUE, 10)], [card(GREEN, 3)]],
                        options={"jokers": "crevaison", **options})
    rec = turn(st, opts, 3)
    assert field(rec, K.F_CREV, 0) == 3 and field(rec, K.F_SKIPPED, 3) == 1
    assert list(st[K.S_JOKERS:K.S_JOKERS + 4]) == [0] + [K.J_CREVAISON] * 3
    # Stage 2, the same position: seat 0 punctures again only if the stage gave its Crevaison back;
    # otherwise seat 1, next in the window, does.
    K.start_stage(st, opts, K.PLAINE, 6)
    for s, hand in enumerate([[card(RED, 9)], [card(RED, 10)], [card(BLUE, 10)], [card(GREEN, 6)]]):
        st[K.S_HAND + s] = mask(*hand)
    assert st[K.S_JOKERS] == (K.J_CREVAISON if again else 0)
    rec = turn(st, opts, 3)
    assert field(rec, K.F_CREV, 0) == (3 if again else -1) and field(rec, K.F_CREV, 1) == (-1 if again else 3)
    assert field(rec, K.F_SKIPPED, 3) == 1 and cards_of(st[K.S_HAND + 3]) == [card(GREEN, 6)]


@pytest.mark.parametrize("options, relaxed", [({}, False), ({"joker_refresh": "stage"}, True)])
def test_heuristic_spends_jokers_more_freely_where_they_lapse_with_the_stage(options, relaxed):
    # docs/etape.md, Policies: the heuristic punctures an opponent on turn who holds <= crev_cards (2)
    # cards, two more where unused jokers lapse at the stage end: the race's last stage, and every
    # stage under joker_refresh=stage. Stage 1 of 4; seat 1, on turn, holds 4 cards.
    st, opts = position(4, K.MONTAGNE, [[card(RED, 9)], [card(GREEN, 3), card(GREEN, 4), card(BLUE, 8), card(RED, 8)]],
                        jokers=[K.J_CREVAISON, 0, 0, 0], options=options)
    assert st[K.S_STAGE] < st[K.S_NSTAGES] - 1
    _, prm = policies(4)
    target = K.choose_crevaison(st, opts, 0, 1, K.POL_HEURISTIC, prm[0], np.uint64(1))[0]
    assert target == (1 if relaxed else -1)
    st[K.S_STAGE] = st[K.S_NSTAGES] - 1  # the last stage: relaxed under both
    assert K.choose_crevaison(st, opts, 0, 1, K.POL_HEURISTIC, prm[0], np.uint64(1))[0] == 1


def test_option_joker_refresh_keeps_the_withheld_jokers_withheld():
    # Every stage starts with the jokers of the game again, less those withheld from withhold_seat.
    st, opts = position(4, options={"joker_refresh": "stage", "withhold_seat": 1, "withhold_jokers": "vitamine"})
    st[K.S_JOKERS:K.S_JOKERS + 4] = 0  # all spent in the first stage
    K.start_stage(st, opts, K.PLAINE, 6)
    every = K.J_CREVAISON | K.J_VITAMINE | K.J_BRAQUET
    assert list(st[K.S_JOKERS:K.S_JOKERS + 4]) == [every, every & ~K.J_VITAMINE, every, every]


@pytest.mark.parametrize("refresh", ["race", "stage"])
def test_option_joker_refresh_under_play(refresh):
    # Players who use a joker at every chance: the Crevaison goes in the
    # window before each stage's first turn, every holder in turn, so each
    # seat uses it once a race (race) or in every stage (stage).
    _, stages = E.simulate(players=4, races=3, policies=["random:joker_p=1"], seed=6,
                           options={"joker_refresh": refresh, "mode": "endurance", "endurance_stages": 2})
    used = (stages[[f"crev_{s}" for s in range(4)]].to_numpy() >= 0).reshape(3, 8, 4)  # races, stages, seats
    assert (used.sum(axis=1) == (1 if refresh == "race" else 8)).all()
    assert used[:, 0].all()


@pytest.mark.parametrize("jokers, dealt", [
    (None, K.J_CREVAISON | K.J_VITAMINE | K.J_BRAQUET), ("vitamine", K.J_VITAMINE),
    ("braquet,crevaison", K.J_BRAQUET | K.J_CREVAISON), ("", 0)])
def test_option_jokers_sets_the_jokers_dealt(jokers, dealt):
    options = {} if jokers is None else {"jokers": jokers}
    st, _ = position(4, options=options)
    assert list(st[K.S_JOKERS:K.S_JOKERS + 4]) == [dealt] * 4
    # Players who use every joker at the first chance: each joker dealt is
    # used, once per player and race; one not dealt never is.
    _, stages = E.simulate(players=4, races=3, policies=["random:joker_p=1"], seed=6, options=options)
    for bit_, f in ((K.J_CREVAISON, "crev"), (K.J_VITAMINE, "vita"), (K.J_BRAQUET, "braq")):
        used = stages[[f"{f}_{s}" for s in range(4)]].to_numpy() >= 0
        per_race = used.reshape(3, 4, 4).sum(axis=1)  # races x seats
        assert (per_race == (1 if dealt & bit_ else 0)).all(), f


def test_huge_heuristic_weights_still_lay_a_legal_card():
    # docs/etape.md, Policies: a weight is any number >= 0 (inf and nan refused), and
    # "must play": a player who can lay must lay. At value=1e308, block=1e308 every 6
    # of an empty Plaine scores inf (30 s x 1e308) - inf (two cards opened x 1e308).
    hand = [card(RED, 6), card(BLUE, 6), card(GREEN, 9), card(YELLOW, 3)]
    st, opts = position(4, K.PLAINE, [hand])
    legal_cards = st[K.S_HAND] & K.legal_mask(st, opts)
    _, prm = policies(4, "heuristic:value=1e308,block=1e308")
    got, _ = K.choose_card(st, opts, 0, legal_cards, K.POL_HEURISTIC, prm[0], np.uint64(1))
    assert got in (card(RED, 6), card(BLUE, 6))


def test_huge_balai_weight_still_picks_the_last_stage_card():
    # Endurance with 5 stages each: the last pick is the one stage card left. A hand of
    # 6s fits Voiture balai badly, and balai_w=1e20 (any number >= 0) scores it -1e20 x
    # its fit; it is still the profile picked.
    n = 4
    st, opts = position(n, K.BALAI, [[card(c, 6) for c in range(4)] + [card(RED, 7), card(BLUE, 5)]])
    st[K.S_STAGECARDS] = 1 << K.BALAI
    K.start_stage(st, opts, -1, 0)
    _, prm = policies(n, "heuristic:balai_w=1e20")
    assert K.choose_profile(st, opts, 0, K.POL_HEURISTIC, prm[0], np.uint64(1))[0] == K.BALAI


# ------------------------------------------------------------ look-ahead
def lookahead(st, opts, seat, spec, key):
    """The look-ahead's first card for `seat` on turn (no jokers declared)."""
    _, prm = policies(int(st[K.S_N]), spec)
    st[K.S_TURN] = seat
    lg = st[K.S_HAND + seat] & K.legal_mask(st, opts)
    before = st.copy()
    got, _ = K.lookahead_card(st, opts, seat, lg, False, False, prm[seat], np.uint64(key))
    assert (st == before).all()  # decides on copies only
    return int(got)


def public_position(n):
    """Plaine, columns empty; seat 0 holds three sixes (three choices)."""
    mine = [card(RED, 6), card(BLUE, 6), card(GREEN, 6), card(YELLOW, 5), card(YELLOW, 9),
            card(RED, 3), card(BLUE, 10), card(GREEN, 8)]
    rest = [c for c in range(48) if c % 12 + 1 in range(3, 11) and c not in mine]
    st, opts = position(n, K.PLAINE, [mine], jokers=[0] * n)
    return st, opts, rest


def redeal(st, rest, n, rng):
    """The same public position with the hidden cards dealt otherwise: the
    other hands (and, with 3 players, the cards out of play) reshuffled."""
    st = st.copy()
    cards = list(rng.permutation(rest))
    for s in range(1, n):
        st[K.S_HAND + s] = mask(*cards[(s - 1) * 8:s * 8])
    return st


@pytest.mark.parametrize("n", [3, 4])
def test_lookahead_never_uses_the_hidden_cards(n):
    st, opts, rest = public_position(n)
    rng = np.random.default_rng(n)
    deals = [redeal(st, rest, n, rng) for _ in range(4)]
    assert len({tuple(d) for d in deals}) == 4
    for key in range(1, 7):
        picks = {lookahead(d, opts, 0, "lookahead:playouts=30,confidence=0", key) for d in deals}
        assert len(picks) == 1
    # ... and the check is not trivial: the decision does depend on the key.
    picks = {lookahead(deals[0], opts, 0, "lookahead:playouts=30,confidence=0", key) for key in range(1, 25)}
    assert len(picks) > 1


def blocking_position():
    """Descente, 4 players, every card dealt: seat 0 holds red 7 (30 s) and
    blue 3 (10 s, the bottom of its column); the red 6, 5, 4, 3 are in the
    other hands (1, 1, 2 cards). Red 7 opens the red 6 to an opponent, who may
    then empty their hand; blue 3 leaves them stuck and seat 0 wins next turn."""
    hands = [[card(RED, 7), card(BLUE, 3)], [card(RED, 5)], [card(RED, 6)], [card(RED, 4), card(RED, 3)]]
    st, opts = position(4, K.DESCENTE, hands, jokers=[0] * 4)
    lay_all(st, 1, card(RED, 10), card(RED, 9), card(RED, 8))
    lay_all(st, 2, *[card(BLUE, v) for v in range(10, 3, -1)])
    lay_all(st, 3, *[card(GREEN, v) for v in range(10, 2, -1)], *[card(YELLOW, v) for v in range(10, 2, -1)])
    return st, opts


def test_lookahead_takes_the_winning_move_its_heuristic_misses():
    st, opts = blocking_position()
    # Its heuristic without the blocking term sheds the dear card first ...
    _, prm = policies(4, "lookahead:block=0")
    lg = st[K.S_HAND] & K.legal_mask(st, opts)
    assert cards_of(lg) == [card(RED, 7), card(BLUE, 3)]
    assert K.choose_card(st, opts, 0, lg, K.POL_HEURISTIC, prm[0], np.uint64(1))[0] == card(RED, 7)
    # ... the look-ahead sees the red 6 waiting, whoever holds it.
    for key in range(1, 4):
        assert lookahead(st, opts, 0, "lookahead:block=0", key) == card(BLUE, 3)
    # In the game's own turn, then the stage: seat 0 wins.
    pids, prm = policies(4, ["lookahead:block=0"] + ["heuristic"] * 3)
    rec = new_record()
    st[K.S_TURN] = 0
    pkeys = np.arange(1, 5).astype(np.uint64)
    K.play_turn_top(st, opts, pids, prm, np.uint64(7), pkeys, rec, K.lookahead_for(pids))
    assert cards_of(st[K.S_HAND]) == [card(RED, 7)]
    while K.stage_status(st, opts) == 0:
        K.next_turn(st)
        K.play_turn_top(st, opts, pids, prm, np.uint64(7), pkeys, rec, K.lookahead_for(pids))
    assert st[K.S_FINISH] == 1


def test_lookahead_takes_the_plaine_sprint():
    hands = [[card(RED, 7), card(BLUE, 5)], [card(RED, 8)], [card(BLUE, 4)], [card(GREEN, 3)]]
    st, opts = position(4, K.PLAINE, hands, jokers=[0] * 4)
    lay_all(st, 3, card(RED, 6), card(BLUE, 6))
    pids, prm = policies(4, ["lookahead"] + ["heuristic"] * 3)
    st[K.S_TURN] = 0
    K.play_turn_top(st, opts, pids, prm, np.uint64(7), np.arange(1, 5).astype(np.uint64), new_record(),
                    K.lookahead_for(pids))
    assert st[K.S_HAND] == 0 and K.stage_status(st, opts) == 1
