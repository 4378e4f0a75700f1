"""Numba kernels of the race card family (Stap op, Mille Bornes, Touring, ...).

One engine plays every deck design: the design's card table and rules vector
(kernels/race_design.py) say what each card does. A hand is played on one
small int16 state row; keys (kernels/rng.py) are passed by value, never kept
in the state, so a policy that looks at the state cannot see the future deck.

State row (int16), offsets below::

    0                STOCK_AT                DISCARD_AT      HAND_AT             HAND_N_AT  HELD_AT       SIDE_AT
    | header (16)    | stock: card types,    | discard pile: | hands: card counts | cards per | held types: | per side: SIDE_STRIDE
    | stock_n, turns | top at stock_n - 1    | count per type| [seat][type]       | seat      | bit mask,   | (see SD_*)
    |  ...           | (MAX_DECK)            | (MAX_TYPES)   | (SEATS x TYPES)    | (SEATS)   | 2 x SEATS   | x MAX_SIDES

    side block: battle top | limited | limit top | distance | still needed | disqualified |
                permanent go | limit immune | coups fourrés | laid[type] (counted distance) |
                tableau[type] (physical cards)

Battle top: a card type, or EMPTY (nothing yet), NEEDS_GO (a safety cancelled
the hazard; a go card is still needed) or VIRTUAL_GO (a safety cancelled it
and option roll_after_safety is off). `laid` counts the distance a side has
made; `tableau` the physical cards lying in front of it. They differ only in
reshuffle designs, where laid stages go back into the stock but stay counted.

A move is `card_type * 8 + target`: target is a side index (own side or an
opponent's) or DISCARD.
"""
import numpy as np
from numba import njit, prange

from .race_design import (
    CLEARS_SEVERAL, EMPTY, NEEDS_GO, R_FITS_AT, R_MOVING_AT, VIRTUAL_GO,
    C_ACTS_AS_GO, C_CAP, C_CLEARS, C_COUNT, C_LIMITED, C_REMEDY, C_PROTECTED_BY, C_REMOVES, C_ROLE, C_TARGET, C_VALUE,
    MAX_DECK, MAX_HAND_SIZE, MAX_LAID, MAX_SEATS, MAX_SIDES, MAX_TYPES, R_COUP_FOURRE, R_COUP_POINTS, R_DELAYED_POINTS,
    R_COUP_TURN_EMPTY, R_DISCARD_WHEN_NO_PLAY, R_EXTENSION, R_EXTENSION_POINTS, R_FAILED_EXTENSION_TRIP, R_GO_WITH_PERMANENT_GO, R_HAND_SIZE, R_LIMIT_ON_LIMIT, R_N_SAFETY_TYPES,
    R_NTYPES, R_OVERSHOOT_DISQUALIFY, R_PER_SAFETY, R_ALL_SAFETIES, R_PLAYERS, R_RESHUFFLE,
    R_ROLE_MASKS, R_ROLL_AFTER_SAFETY, R_SAFE_TRIP_POINTS, R_SAFE_TRIP_TYPE, R_SAFETY_EXTRA_TURN_EMPTY, R_SCORING,
    R_SET_TOTAL, R_SHUTOUT_FR, R_SHUTOUT_POINTS, R_SIDES, R_START_LIMITED, R_TARGET_SET, R_TRIP,
    R_TRIP_POINTS, R_TURN_CAP, ROLE_DISTANCE, ROLE_END_LIMIT, ROLE_GO, ROLE_HAZARD, ROLE_LIMIT,
    ROLE_REMEDY, ROLE_SAFETY, ROLE_SETBACK,
)
from .jit import allocating, allocation_free, lowest_set_bit
from .rng import (
    STREAM_CHANCE, STREAM_POLICY_BASE, branch, confident_best, game_key, next_u64, randint, rank, shuffle, uniform,
)

# ---- state layout -----------------------------------------------------------
ST_STOCK_N = 0
ST_TURNS = 1
ST_TRIP = 2            # the trip now in force (km); grows when the extension is called
ST_EXT_SIDE = 3        # side that called the extension, -1
ST_TRIP_SIDE = 4       # side that completed the trip, -1
ST_RESHUFFLES = 5
ST_LEADER = 6          # last strict distance leader, -1
ST_LEAD_CHANGES = 7
ST_STOCK_EXHAUSTED = 8
# Bit s: side s has laid the safe-trip card / any distance card this hand (a setback may have taken
# it off again: the scoring table asks what was laid).
ST_SAFE_TRIP_LAID = 9
ST_DISTANCE_LAID = 10
STOCK_AT = 16
DISCARD_AT = STOCK_AT + MAX_DECK
HAND_AT = DISCARD_AT + MAX_TYPES
HAND_N_AT = HAND_AT + MAX_SEATS * MAX_TYPES
HELD_AT = HAND_N_AT + MAX_SEATS  # per seat: bit t set if it holds card type t, in two 16-bit halves
SIDE_AT = HELD_AT + 2 * MAX_SEATS
SD_BATTLE = 0
SD_LIMITED = 1
SD_LIMIT_TOP = 2
SD_DIST = 3
SD_NEED = 4
SD_DISQ = 5
SD_ROW = 6
SD_LIMIT_IMMUNE = 7
SD_COUPS = 8  # coups fourrés made this hand: in the state, so that a playout from it scores them
SD_LAID = 9
SD_TABLEAU = SD_LAID + MAX_TYPES
SIDE_STRIDE = SD_TABLEAU + MAX_TYPES
STATE_SIZE = SIDE_AT + MAX_SIDES * SIDE_STRIDE

DISCARD = 7
# A held type gives at most one move per side (its own play, or an attack on each
# opponent) besides its discard; a hand holds at most hand_size + 1 types.
MAX_MOVES = (MAX_HAND_SIZE + 1) * MAX_SIDES

# ---- records ----------------------------------------------------------------
# Per hand.
H_FIRST_SEAT = 0
H_TURNS = 1
H_STOCK_EXHAUSTED = 2
H_RESHUFFLES = 3
H_CAPPED = 4
H_TRIP_SIDE = 5
H_EXT_SIDE = 6
H_LEAD_CHANGES = 7
H_POLICY_ERROR = 8      # 1 + seat whose user policy answered with an illegal move, else 0
H_NCOLS = 9
HAND_COLUMNS = ("first_seat", "turns", "stock_exhausted", "reshuffles", "capped", "trip_side",
                "extension_side", "lead_changes", "policy_error")
# Per side (named in the records by race_design.SIDE_COLUMNS).
S_DISTANCE = 0
S_SCORE = 1
S_SAFETIES = 2
S_COUPS = 3
S_HAZARDS_PLAYED = 4
S_HAZARDS_RECEIVED = 5
S_MAX_DEFICIT = 6
S_DISQUALIFIED = 7
S_NCOLS = 8
# Per side and card type (race_design.CARD_COLUMNS).
K_DRAWN = 0
K_PLAYED = 1
K_DISCARDED = 2
K_IN_HAND = 3
K_RECEIVED = 4
K_VICTIM_TURNS = 5
K_COUPS = 6
K_NCOLS = 7
# Rounds at whose end each side's distance is recorded: every round to 12,
# then every 2nd to 20, every 5th to 50, every 10th to 100 and every 20th to
# 200, so that 32 columns follow a long Stap op hand (median 62 rounds with
# four players, longest seen 181) as far as a short one.
PROGRESS_ROUNDS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50,
                   60, 70, 80, 90, 100, 120, 140, 160, 180, 200)
N_PROGRESS = len(PROGRESS_ROUNDS)
LAST_KEPT_ROUND = PROGRESS_ROUNDS[-1]
# KEPT_BY_ROUND[r]: how many of PROGRESS_ROUNDS are r or less (r = 0 .. LAST_KEPT_ROUND). Where it goes
# up, round r is kept, in column KEPT_BY_ROUND[r] - 1. A look-up at each round's end: a countdown to the
# next kept round, one more variable carried through the turn loop, made a turn about a tenth slower
# (docs/speed.md).
KEPT_BY_ROUND = np.searchsorted(np.array(PROGRESS_ROUNDS), np.arange(LAST_KEPT_ROUND + 1), side="right").astype(np.int8)

# ---- replay log -------------------------------------------------------------
# One row per event: turn, seat, event, card, side, value.
EV_DEAL = 0
EV_DRAW = 1
EV_PLAY = 2
EV_DISCARD = 3
EV_COUP_FOURRE = 4
EV_EXTENSION = 5
EV_PASS = 6
EV_RESHUFFLE = 7
EV_DECLINE_EXTENSION = 8
EV_BROKEN_INVARIANT = 9   # only in logged play: check_state found a broken invariant (value: its code)
EV_STOPPED = 10           # only in a replay asked for a position: the hand stopped after this seat's draw
EV_STOCK_EMPTY = 11       # the draw after it takes the stock's last card
LOG_NCOLS = 6

# ---- policies ---------------------------------------------------------------
POLICY_RANDOM = 0
POLICY_GREEDY = 1
POLICY_LOOKAHEAD = 2
POLICY_USER = 16        # user policy k (kernels/race_user.py) has id POLICY_USER + k
MAX_USER_POLICIES = 4   # the user-policy tuple always has this length: one compiled signature
# Greedy parameter row.
P_ATTACK = 0            # weight of attacking an opponent against laying distance (>1.5: attack first)
P_TARGET_LEADER = 1     # 1: attack the side with the most distance; 0: the next side in turn order
P_HOLD_SAFETIES = 2     # 1: keep safeties for a coup fourré; 0: play them at once for the extra turn
P_EXTENSION_MARGIN = 3  # call the extension when ahead of every opponent by at least this (km)
P_COUP_FOURRE = 4       # probability of calling a coup fourré when it is offered
# Look-ahead parameter row (its coup fourré / extension answers use the greedy rows above).
P_PLAYOUTS = 5          # playouts per decision: about playouts / legal moves determinizations, each tried with every move
P_HORIZON = 6           # turns a playout looks ahead (0: to the end of the hand)
P_CONFIDENCE = 7        # standard errors by which a move must beat greedy's to be played instead
N_PARAMS = 8


@njit(cache=True, inline="always")
def t_of(move):
    return move >> 3


@njit(cache=True, inline="always")
def side_at(side):
    return SIDE_AT + side * SIDE_STRIDE


@njit(cache=True, inline="always")
def side_of(seat, sides):
    """seat % sides without a division (a turn needs it several times): design
    validation keeps teams to at most 3 players, so seat < 3 * sides."""
    if seat >= sides:
        seat -= sides
    if seat >= sides:
        seat -= sides
    return seat


@njit(cache=True, inline="always")
def seat_after(seat, players):
    """(seat + 1) % players without a division."""
    return 0 if seat + 1 == players else seat + 1


@njit(cache=True, inline="always")
def is_moving(state, rules, side):
    """Can the side lay distance as far as its battle pile goes? (the
    design's table by battle top and permanent go: no branches)"""
    b = side_at(side)
    return (rules[R_MOVING_AT + state[b + SD_BATTLE] - VIRTUAL_GO] >> state[b + SD_ROW]) & 1 == 1


@njit(cache=True, inline="always")
def hazard_on_top(rules, top):
    """1 if battle top `top` is a hazard, else 0 (bit 1 of the moving table:
    with a permanent go, a side moves under anything but a hazard)."""
    return 1 - ((rules[R_MOVING_AT + top - VIRTUAL_GO] >> 1) & 1)


@njit(cache=True, inline="always")
def is_limited(state, side):
    b = side_at(side)
    return (state[b + SD_LIMITED] == 1) & (state[b + SD_LIMIT_IMMUNE] == 0)  # & : no branch


@njit(cache=True, inline="always")
def role_mask(rules, role):
    """Bit t: card type t has this role."""
    return np.int64(rules[R_ROLE_MASKS + role]) & 0xFFFFFFFF


@njit(cache=True, inline="always")
def battle_fits(state, rules, side, go_mask):
    """Bit t: go or remedy card type t may be laid on the side's battle pile
    now, for all types at once: the design's table by battle top
    (Design.tables says the rule), less the go card under a permanent go.
    The go card stays where a hazard on top is one that only a go card
    clears (a design whose permanent go does not protect from it, e.g.
    Stap op's Jeugdherberg beside a user's go safety: else the side stays
    stuck), and everywhere under option go_with_permanent_go."""
    b = side_at(side)
    top = state[b + SD_BATTLE]
    fits = np.int64(rules[R_FITS_AT + top - VIRTUAL_GO]) & 0xFFFFFFFF
    # A permanent go makes go cards pointless (refused unless option go_with_permanent_go).
    pointless = state[b + SD_ROW] & (1 - hazard_on_top(rules, top)) & (1 - rules[R_GO_WITH_PERMANENT_GO])
    return fits & ~(go_mask * pointless)


@njit(cache=True, inline="always")
def protected(state, ct, side, card):
    safety = ct[card, C_PROTECTED_BY]
    return safety >= 0 and state[side_at(side) + SD_TABLEAU + safety] > 0


@njit(cache=True, inline="always")
def can_lay_distance(state, ct, rules, side, t):
    b = side_at(side)
    if not is_moving(state, rules, side):
        return False
    if ct[t, C_LIMITED] == 1 and is_limited(state, side):
        return False
    laid = state[b + SD_LAID + t]
    if ct[t, C_CAP] > 0 and laid >= ct[t, C_CAP]:
        return False
    if state[b + SD_DIST] + ct[t, C_VALUE] > MAX_LAID:
        return False  # the 16-bit distance would overflow (only beyond the trip: race_design.MAX_LAID)
    if rules[R_TARGET_SET] == 1:
        return laid < ct[t, C_TARGET] or rules[R_OVERSHOOT_DISQUALIFY] == 1
    return state[b + SD_DIST] + ct[t, C_VALUE] <= state[ST_TRIP] or rules[R_OVERSHOOT_DISQUALIFY] == 1


@njit(cache=True, inline="always")
def can_play_own(state, ct, rules, side, t):
    """May card type t be laid on the player's own side now?"""
    role = ct[t, C_ROLE]
    if role == ROLE_DISTANCE:
        return can_lay_distance(state, ct, rules, side, t)
    if role == ROLE_SAFETY:
        return True
    if role == ROLE_GO or role == ROLE_REMEDY:
        return (battle_fits(state, rules, side, role_mask(rules, ROLE_GO)) >> t) & 1 == 1
    if role == ROLE_END_LIMIT:
        return is_limited(state, side)
    return False


@njit(cache=True, inline="always")
def can_attack(state, ct, rules, target, t):
    """May card type t be laid on side `target` (an opponent)?"""
    role = ct[t, C_ROLE]
    if role != ROLE_HAZARD and role != ROLE_LIMIT and role != ROLE_SETBACK:
        return False
    if protected(state, ct, target, t):
        return False
    b = side_at(target)
    if role == ROLE_HAZARD:
        return is_moving(state, rules, target)
    if role == ROLE_LIMIT:
        if state[b + SD_LIMIT_IMMUNE] == 1:
            return False
        # Option limit_on_limit: also on a side showing a limit card; the
        # starting limit (Stap op's headwind) shows none.
        return state[b + SD_LIMITED] == 0 or (rules[R_LIMIT_ON_LIMIT] == 1 and state[b + SD_LIMIT_TOP] >= 0)
    return state[b + SD_LAID + ct[t, C_REMOVES]] > 0


@njit(cache=True, inline="always")
def held_types(state, seat):
    """Bit t: the seat holds card type t. Kept up to date by add_to_hand and
    take_from_hand (recount_held after writing hands directly), so a
    decision reads it instead of testing all MAX_TYPES counts."""
    at = HELD_AT + 2 * seat
    return (np.int64(state[at]) & 0xFFFF) | ((np.int64(state[at + 1]) & 0xFFFF) << 16)


@njit(cache=True, inline="always")
def as_int16(half):
    """A 16-bit half of a mask, 0..0xFFFF, as the int16 with the same bits."""
    return half - ((half & 0x8000) << 1)


@njit(cache=True, inline="always")
def store_held(state, seat, held):
    at = HELD_AT + 2 * seat
    state[at] = as_int16(held & 0xFFFF)
    state[at + 1] = as_int16((held >> 16) & 0xFFFF)


@allocation_free
def recount_held(state, rules):
    """Rebuild every seat's held-types mask from its card counts, after
    code that writes hands directly (positions, determinizations)."""
    for seat in range(rules[R_PLAYERS]):
        held = 0
        for t in range(rules[R_NTYPES]):
            if state[HAND_AT + seat * MAX_TYPES + t] > 0:
                held |= np.int64(1) << t
        store_held(state, seat, held)


@njit(cache=True, inline="always")
def legal_moves(state, ct, rules, seat, moves):
    """Fill `moves` with the legal moves of `seat`; return how many.

    Discarding a held card is legal always (each card's discard follows its
    plays) or, under option discard = "when_no_play", only when no card can
    be played (then the discards alone). Either way a player holding cards
    always has a move.
    """
    sides = rules[R_SIDES]
    side = side_of(seat, sides)
    discard_always = rules[R_DISCARD_WHEN_NO_PLAY] == 0
    held = held_types(state, seat)
    cards = held
    n = 0
    while cards != 0:
        t = lowest_set_bit(cards)
        cards &= cards - 1
        if can_play_own(state, ct, rules, side, t):
            moves[n] = t * 8 + side
            n += 1
        role = ct[t, C_ROLE]
        if role == ROLE_HAZARD or role == ROLE_LIMIT or role == ROLE_SETBACK:
            for other in range(sides):
                if other != side and can_attack(state, ct, rules, other, t):
                    moves[n] = t * 8 + other
                    n += 1
        if discard_always:
            moves[n] = t * 8 + DISCARD
            n += 1
    if n == 0:
        while held != 0:
            t = lowest_set_bit(held)
            held &= held - 1
            moves[n] = t * 8 + DISCARD
            n += 1
    return n


# ---- invariants -------------------------------------------------------------
BROKEN_CONSERVATION = 1
BROKEN_HAND_SIZE = 2
BROKEN_NEGATIVE = 3
BROKEN_DISTANCE = 4
BROKEN_HELD_MASK = 5


@allocating
def check_state(state, ct, rules):
    """0 if the state is consistent after a move, else a BROKEN_* code:
    every card of the deck is in exactly one place, no hand holds more than
    hand_size cards between turns, no count is negative, each seat's
    held-types mask matches its hand, and each side's distance is the sum
    of its laid distance cards."""
    n_types = rules[R_NTYPES]
    players = rules[R_PLAYERS]
    sides = rules[R_SIDES]
    where = np.zeros(n_types, np.int64)
    for i in range(state[ST_STOCK_N]):
        where[state[STOCK_AT + i]] += 1
    for t in range(n_types):
        where[t] += state[DISCARD_AT + t]
        for p in range(players):
            where[t] += state[HAND_AT + p * MAX_TYPES + t]
        for s in range(sides):
            where[t] += state[side_at(s) + SD_TABLEAU + t]
    for t in range(n_types):
        if where[t] != ct[t, C_COUNT]:
            return BROKEN_CONSERVATION
    for p in range(players):
        held = 0
        mask = 0
        for t in range(n_types):
            c = state[HAND_AT + p * MAX_TYPES + t]
            if c < 0:
                return BROKEN_NEGATIVE
            held += c
            if c > 0:
                mask |= np.int64(1) << t
        if held != state[HAND_N_AT + p] or held > rules[R_HAND_SIZE]:
            return BROKEN_HAND_SIZE
        if mask != held_types(state, p):
            return BROKEN_HELD_MASK
    for s in range(sides):
        b = side_at(s)
        dist = 0
        for t in range(n_types):
            if state[b + SD_LAID + t] < 0 or state[b + SD_TABLEAU + t] < 0 or state[DISCARD_AT + t] < 0:
                return BROKEN_NEGATIVE
            if ct[t, C_ROLE] == ROLE_DISTANCE:
                dist += state[b + SD_LAID + t] * ct[t, C_VALUE]
        if dist != state[b + SD_DIST]:
            return BROKEN_DISTANCE
    return 0


# ---- chance -----------------------------------------------------------------
@njit(cache=True, inline="always")
def log_event(log, state, seat, event, card, side, value):
    if log.shape[0] == 0:
        return
    i = log[0, 0]  # row 0 holds the number of events written
    if i + 1 < log.shape[0]:
        row = log[i + 1]
        row[0] = state[ST_TURNS]
        row[1] = seat
        row[2] = event
        row[3] = card
        row[4] = side
        row[5] = value
        log[0, 0] = i + 1


@allocation_free
def shuffle_stock(state, key):
    return shuffle(state[STOCK_AT:], state[ST_STOCK_N], key)


@allocation_free
def rebuild_stock(state, ct, rules, key):
    """Stap op's reshuffle: the discard pile, every laid stage card and every
    battle and limit pile except its top card become the new stock. Laid
    stages stay counted for their owner; safeties stay where they are."""
    n_types = rules[R_NTYPES]
    n = 0
    for t in range(n_types):
        for _ in range(state[DISCARD_AT + t]):
            state[STOCK_AT + n] = t
            n += 1
        state[DISCARD_AT + t] = 0
    for side in range(rules[R_SIDES]):
        b = side_at(side)
        for t in range(n_types):
            keep = 0
            role = ct[t, C_ROLE]
            if role == ROLE_SAFETY:
                continue
            if t == state[b + SD_BATTLE] or t == state[b + SD_LIMIT_TOP]:
                keep = 1
            for _ in range(state[b + SD_TABLEAU + t] - keep):
                state[STOCK_AT + n] = t
                n += 1
            state[b + SD_TABLEAU + t] = keep
    state[ST_STOCK_N] = n
    state[ST_RESHUFFLES] += 1
    return shuffle_stock(state, key)


@njit(cache=True, inline="always")
def add_to_hand(state, seat, t):
    state[HAND_AT + seat * MAX_TYPES + t] += 1
    state[HAND_N_AT + seat] += 1
    store_held(state, seat, held_types(state, seat) | (np.int64(1) << t))


@njit(cache=True, inline="always")
def draw(state, ct, rules, seat, key, cards, log):
    """Draw the top card of the stock into seat's hand (rebuilding the stock
    first in reshuffle designs). Returns (drew a card, key)."""
    if state[ST_STOCK_N] == 0 and rules[R_RESHUFFLE] == 1:
        key = rebuild_stock(state, ct, rules, key)
        log_event(log, state, seat, EV_RESHUFFLE, -1, -1, state[ST_STOCK_N])
    n = state[ST_STOCK_N]
    if n == 0:
        return False, key
    t = state[STOCK_AT + n - 1]
    state[ST_STOCK_N] = n - 1
    if n == 1:
        state[ST_STOCK_EXHAUSTED] = 1
        log_event(log, state, seat, EV_STOCK_EMPTY, -1, -1, 0)
    add_to_hand(state, seat, t)
    cards[side_of(seat, rules[R_SIDES]), t, K_DRAWN] += 1
    log_event(log, state, seat, EV_DRAW, t, -1, 0)
    return True, key


@allocation_free
def deal(state, ct, rules, first_seat, key, cards, log):
    """Fresh state for a hand: shuffled full deck, hand_size cards each."""
    state[:] = 0
    n_types = rules[R_NTYPES]
    n = 0
    for t in range(n_types):
        for _ in range(ct[t, C_COUNT]):
            state[STOCK_AT + n] = t
            n += 1
    state[ST_STOCK_N] = n
    state[ST_TRIP] = rules[R_TRIP]
    state[ST_EXT_SIDE] = -1
    state[ST_TRIP_SIDE] = -1
    state[ST_LEADER] = -1
    for side in range(rules[R_SIDES]):
        b = side_at(side)
        state[b + SD_BATTLE] = EMPTY
        state[b + SD_LIMIT_TOP] = EMPTY
        state[b + SD_LIMITED] = rules[R_START_LIMITED]
        state[b + SD_NEED] = rules[R_SET_TOTAL]
    key = shuffle_stock(state, key)
    players = rules[R_PLAYERS]
    for _ in range(rules[R_HAND_SIZE]):
        for i in range(players):
            seat = (first_seat + i) % players
            n = state[ST_STOCK_N]
            t = state[STOCK_AT + n - 1]
            state[ST_STOCK_N] = n - 1
            add_to_hand(state, seat, t)
            cards[side_of(seat, rules[R_SIDES]), t, K_DRAWN] += 1
            log_event(log, state, seat, EV_DEAL, t, -1, 0)
    return key


# ---- effects ----------------------------------------------------------------
@njit(cache=True, inline="always")
def take_from_hand(state, seat, t):
    left = state[HAND_AT + seat * MAX_TYPES + t] - 1
    state[HAND_AT + seat * MAX_TYPES + t] = left
    state[HAND_N_AT + seat] -= 1
    store_held(state, seat, held_types(state, seat) & ~(np.int64(left == 0) << t))


@njit(cache=True, inline="always")
def land_safety(state, ct, rules, side, s):
    """A safety lands on `side` (on its turn or as a coup fourré): protection
    for the rest of the hand, and the matching hazard or limit in play is
    cancelled (discarded)."""
    b = side_at(side)
    state[b + SD_TABLEAU + s] += 1
    if ct[s, C_ACTS_AS_GO] == 1:
        state[b + SD_ROW] = 1
    top = state[b + SD_BATTLE]
    if top >= 0 and ct[top, C_ROLE] == ROLE_HAZARD and ct[top, C_PROTECTED_BY] == s:
        state[b + SD_TABLEAU + top] -= 1
        state[DISCARD_AT + top] += 1
        state[b + SD_BATTLE] = NEEDS_GO if rules[R_ROLL_AFTER_SAFETY] == 1 else VIRTUAL_GO
    for t in range(rules[R_NTYPES]):
        if ct[t, C_ROLE] == ROLE_LIMIT and ct[t, C_PROTECTED_BY] == s:
            # Immune to every limit, the starting one (Stap op's headwind) included.
            state[b + SD_LIMIT_IMMUNE] = 1
            lim = state[b + SD_LIMIT_TOP]
            if lim == t:
                state[b + SD_TABLEAU + lim] -= 1
                state[DISCARD_AT + lim] += 1
                state[b + SD_LIMIT_TOP] = EMPTY
            state[b + SD_LIMITED] = 0


@njit(cache=True, inline="always")
def update_tension(state, rules, sides_out):
    """After a distance change: lead changes and each side's deficit."""
    sides = rules[R_SIDES]
    best = -1
    leader = -1
    for s in range(sides):
        d = state[side_at(s) + SD_DIST]
        if d > best:
            best = d
            leader = s
        elif d == best:
            leader = -1
    if leader >= 0:
        if state[ST_LEADER] >= 0 and state[ST_LEADER] != leader:
            state[ST_LEAD_CHANGES] += 1
        state[ST_LEADER] = leader
    for s in range(sides):
        gap = best - state[side_at(s) + SD_DIST]
        if gap > sides_out[s, S_MAX_DEFICIT]:
            sides_out[s, S_MAX_DEFICIT] = gap


@njit(cache=True, inline="always")
def trip_complete(state, rules, side):
    b = side_at(side)
    if state[b + SD_DISQ] == 1:
        return False
    if rules[R_TARGET_SET] == 1:
        return state[b + SD_NEED] == 0
    return state[b + SD_DIST] == state[ST_TRIP]


# ---- policies -----------------------------------------------------------------
# keep_value's floor: a distance card that can never be laid. Its formula for
# the others stays above it for hands of up to MAX_HAND_SIZE + 1 cards, so a
# discard (scored -keep_value) never scores above MAX_DISCARD_SCORE.
NEVER_LAID = -10.0
MAX_DISCARD_SCORE = -NEVER_LAID
# Below every discard (the lowest, a safety's, scores -100): a stage card that
# would disqualify its side (overshoot = "disqualify") is never laid by choice;
# nor is a distance card beyond a sum target under that option.
OVERSHOOT_SCORE = -1000.0


@njit(cache=True, inline="always")
def keep_value(state, ct, rules, seat, t):
    """How much a greedy player wants to keep card t (it discards the lowest).
    Cards that can never help are worth least; a second copy of a go,
    remedy or end-of-limit card is worth much less than the first."""
    sides = rules[R_SIDES]
    side = side_of(seat, sides)
    b = side_at(side)
    role = ct[t, C_ROLE]
    held = state[HAND_AT + seat * MAX_TYPES + t]
    if role == ROLE_SAFETY:
        return 100.0
    if role == ROLE_DISTANCE:
        laid = state[b + SD_LAID + t]
        if ct[t, C_CAP] > 0 and laid >= ct[t, C_CAP]:
            return NEVER_LAID
        if rules[R_TARGET_SET] == 1:
            # Every stage card of an incomplete kind is needed.
            return 3.0 if laid + held <= ct[t, C_TARGET] else NEVER_LAID
        if state[b + SD_DIST] + ct[t, C_VALUE] > state[ST_TRIP]:
            return NEVER_LAID
        return 1.0 + 4.0 * ct[t, C_VALUE] / state[ST_TRIP] - 0.5 * (held - 1)
    extra = held > 1
    if role == ROLE_GO:
        if state[b + SD_ROW] == 1:
            return -5.0
        return 0.5 if extra else 2.5
    if role == ROLE_REMEDY:
        # Useless once our safeties protect from every hazard it clears.
        h = ct[t, C_CLEARS]
        if h >= 0:
            if protected(state, ct, side, h):
                return -5.0
        elif h == CLEARS_SEVERAL:  # a user design may give several hazards one remedy
            for hazard in range(rules[R_NTYPES]):
                if (ct[hazard, C_ROLE] == ROLE_HAZARD and ct[hazard, C_REMEDY] == t
                        and not protected(state, ct, side, hazard)):
                    return 0.3 if extra else 2.0
            return -5.0
        return 0.3 if extra else 2.0
    if role == ROLE_END_LIMIT:
        if state[b + SD_LIMIT_IMMUNE] == 1:
            return -5.0
        return 0.3 if extra else 2.0
    # hazards, limits, setbacks: useless once every opponent is protected
    for other in range(sides):
        if other != side and not protected(state, ct, other, t):
            return 1.0 if extra else 1.5
    return -5.0


@njit(cache=True, inline="always")
def attack_score(state, rules, side, target, params):
    """Greedy's score of an attack from `side` on `target`: ranked by the
    target's distance (leader) or by turn order."""
    sides = rules[R_SIDES]
    if params[P_TARGET_LEADER] >= 0.5:
        pick = state[side_at(target) + SD_DIST] / (state[ST_TRIP] + 1.0)
    else:
        pick = 1.0 - ((target - side) % sides) / sides
    return 40.0 * params[P_ATTACK] + pick


@njit(cache=True, inline="always")
def own_score(state, ct, rules, side, t, params):
    """Greedy's score of laying card type t on its own side."""
    role = ct[t, C_ROLE]
    if role == ROLE_DISTANCE:
        if rules[R_TARGET_SET] == 1 and state[side_at(side) + SD_LAID + t] >= ct[t, C_TARGET]:
            return OVERSHOOT_SCORE
        if rules[R_OVERSHOOT_DISQUALIFY] == 1 and state[side_at(side) + SD_DIST] + ct[t, C_VALUE] > state[ST_TRIP]:
            return OVERSHOOT_SCORE  # beyond a sum target (or a side disqualified already)
        return 60.0 + 10.0 * ct[t, C_VALUE] / state[ST_TRIP]
    if role == ROLE_SAFETY:
        b = side_at(side)
        top = state[b + SD_BATTLE]
        fixes = (top >= 0 and ct[top, C_PROTECTED_BY] == t) or (
            is_limited(state, side) and state[b + SD_LIMIT_TOP] >= 0 and ct[state[b + SD_LIMIT_TOP], C_PROTECTED_BY] == t)
        if fixes or params[P_HOLD_SAFETIES] < 0.5:
            return 100.0
        return 0.5  # held for a coup fourré; laid only instead of a discard
    if role == ROLE_END_LIMIT:
        return 50.0
    return 80.0  # go or remedy: get moving again


@njit(cache=True, inline="always")
def consider(m, score, pick, best, word):
    """One step of greedy's choice: keep the move with the highest score so
    far; among equal scores, the one of highest random rank under the
    decision's random word (a uniform choice among them, whatever order
    they are found in). Returns (pick, best)."""
    if score > best:
        return m, score
    if score == best and rank(word, m) > rank(word, pick):
        return m, best
    return pick, best


@njit(cache=True, inline="always")
def greedy_move(state, ct, rules, seat, params, key):
    """The greedy policy: the legal move with the highest score (own_score,
    attack_score, or minus keep_value for a discard); among equal scores,
    a uniform choice (`consider`).

    It scores the legal moves as it finds them, card role by card role (so
    the branches on a card's role go the same way at each place), and
    looks at discards only when no play scores above the best a discard
    can (under option discard = "when_no_play", only when it found no
    play). The same moves as legal_moves lists (tests/test_race_policies.py
    checks the choice against scoring that list). Returns (move, key)."""
    sides = rules[R_SIDES]
    side = side_of(seat, sides)
    held = held_types(state, seat)
    word, key = next_u64(key)
    pick = -1
    best = -1e18
    # Plays on the own side: first the cards legal whenever held (go and
    # remedy cards that fit the battle pile, end of limit under a limit,
    # safeties), then distance.
    end_limit = role_mask(rules, ROLE_END_LIMIT) if is_limited(state, side) else 0
    cards = held & (battle_fits(state, rules, side, role_mask(rules, ROLE_GO)) | end_limit
                    | role_mask(rules, ROLE_SAFETY))
    while cards != 0:
        t = lowest_set_bit(cards)
        cards &= cards - 1
        pick, best = consider(t * 8 + side, own_score(state, ct, rules, side, t, params), pick, best, word)
    cards = held & role_mask(rules, ROLE_DISTANCE)
    while cards != 0:
        t = lowest_set_bit(cards)
        cards &= cards - 1
        if can_lay_distance(state, ct, rules, side, t):
            pick, best = consider(t * 8 + side, own_score(state, ct, rules, side, t, params), pick, best, word)
    # Attacks on each opponent.
    attacks = held & (role_mask(rules, ROLE_HAZARD) | role_mask(rules, ROLE_LIMIT) | role_mask(rules, ROLE_SETBACK))
    if attacks != 0:
        for other in range(sides):
            if other == side:
                continue
            score = attack_score(state, rules, side, other, params)
            cards = attacks
            while cards != 0:
                t = lowest_set_bit(cards)
                cards &= cards - 1
                if can_attack(state, ct, rules, other, t):
                    pick, best = consider(t * 8 + other, score, pick, best, word)
    # Under option discard = "when_no_play" any play (pick >= 0) rules the discards out.
    if best <= MAX_DISCARD_SCORE and (pick < 0 or rules[R_DISCARD_WHEN_NO_PLAY] == 0):
        cards = held
        while cards != 0:
            t = lowest_set_bit(cards)
            cards &= cards - 1
            pick, best = consider(t * 8 + DISCARD, -keep_value(state, ct, rules, seat, t), pick, best, word)
    return pick, key


@allocation_free
def greedy_move_call(state, ct, rules, seat, params, key):
    """greedy_move as a function call, for the look-ahead and its playouts.
    greedy_move is inlined into the main turn loop, where it is worth 10 %
    of the speed; inlined into every caller, it would add about 40 s to the
    cold compile."""
    return greedy_move(state, ct, rules, seat, params, key)


@njit(cache=True, inline="always")
def random_move(moves, n, key):
    """The random policy: uniform over the n legal moves. Returns (move, key)."""
    i, key = randint(key, n)
    return moves[i], key


@njit(cache=True, inline="always")
def basic_move(state, ct, rules, seat, moves, policy_id, params, key):
    """The random and greedy policies: the look-ahead's playout policies.
    Returns (move, key); `moves` is scratch space."""
    if policy_id == POLICY_GREEDY:
        return greedy_move_call(state, ct, rules, seat, params, key)
    return random_move(moves, legal_moves(state, ct, rules, seat, moves), key)


@allocation_free
def wants_coup_fourre(policy_id, params, key):
    if policy_id == POLICY_RANDOM:
        u, key = uniform(key)
        return u < 0.5, key
    u, key = uniform(key)
    return u < params[P_COUP_FOURRE], key


@allocation_free
def wants_extension(state, rules, seat, policy_id, params, key):
    if policy_id == POLICY_RANDOM:
        u, key = uniform(key)
        return u < 0.5, key
    side = side_of(seat, rules[R_SIDES])
    own = state[side_at(side) + SD_DIST]
    lead = 1 << 30
    for s in range(rules[R_SIDES]):
        if s != side:
            gap = own - state[side_at(s) + SD_DIST]
            if gap < lead:
                lead = gap
    return lead >= params[P_EXTENSION_MARGIN], key


# ---- one hand -----------------------------------------------------------------
@allocation_free
def offer_coup_fourre(state, ct, rules, attacker, target, t, policy_ids, params, pkeys, key, cards, log):
    """A hazard (or limit, or setback) t has just been played on `target`:
    the first player of that side in turn order after the attacker who holds
    the matching safety may lay it at once. Called only when a safety
    protects against t and the design allows coups fourrés.
    Returns (coup seat or -1, key)."""
    s = ct[t, C_PROTECTED_BY]
    players = rules[R_PLAYERS]
    sides = rules[R_SIDES]
    for i in range(1, players):
        seat = (attacker + i) % players
        if side_of(seat, sides) != target or state[HAND_AT + seat * MAX_TYPES + s] == 0:
            continue
        yes, pk = wants_coup_fourre(policy_ids[seat], params[seat], pkeys[seat])
        pkeys[seat] = pk
        if not yes:
            continue
        take_from_hand(state, seat, s)
        land_safety(state, ct, rules, target, s)
        state[DISCARD_AT + t] += 1
        cards[target, s, K_PLAYED] += 1
        cards[target, s, K_COUPS] += 1
        state[side_at(target) + SD_COUPS] += 1
        log_event(log, state, seat, EV_COUP_FOURRE, s, target, t)
        _, key = draw(state, ct, rules, seat, key, cards, log)  # the replacement card
        return seat, key
    return -1, key


@njit(cache=True, inline="always")
def apply_move(ct, rules, state, seat, m, policy_ids, params, pkeys, key, sides_out, cards, log):
    """Play move m for `seat` (a legal move) and everything it sets off:
    coup fourré, extension decision, trip completion. Returns (seat that
    plays next, hand over, chance key)."""
    players = rules[R_PLAYERS]
    sides = rules[R_SIDES]
    side = side_of(seat, sides)
    t = m >> 3
    target = m & 7
    take_from_hand(state, seat, t)
    state[ST_TURNS] += 1
    next_seat = seat_after(seat, players)
    hand_over = False
    if target == DISCARD:
        state[DISCARD_AT + t] += 1
        cards[side, t, K_DISCARDED] += 1
        log_event(log, state, seat, EV_DISCARD, t, -1, 0)
    else:
        cards[side, t, K_PLAYED] += 1
        log_event(log, state, seat, EV_PLAY, t, target, 0)
        role = ct[t, C_ROLE]
        tb = side_at(target)
        if role == ROLE_DISTANCE:
            laid = state[tb + SD_LAID + t]
            state[tb + SD_LAID + t] = laid + 1
            state[tb + SD_TABLEAU + t] += 1
            state[tb + SD_DIST] += ct[t, C_VALUE]
            state[ST_DISTANCE_LAID] |= 1 << target
            if t == rules[R_SAFE_TRIP_TYPE]:
                state[ST_SAFE_TRIP_LAID] |= 1 << target
            if rules[R_TARGET_SET] == 1:
                if laid < ct[t, C_TARGET]:
                    state[tb + SD_NEED] -= 1
                else:
                    state[tb + SD_DISQ] = 1  # option overshoot = "disqualify"
            elif state[tb + SD_DIST] > state[ST_TRIP]:
                state[tb + SD_DISQ] = 1  # the same option, beyond a sum target
            update_tension(state, rules, sides_out)
            if trip_complete(state, rules, side):
                hand_over = True
                if (rules[R_EXTENSION] > 0 and state[ST_EXT_SIDE] < 0
                        and state[ST_TRIP] < rules[R_EXTENSION]):
                    yes, pk = wants_extension(state, rules, seat, policy_ids[seat], params[seat], pkeys[seat])
                    pkeys[seat] = pk
                    if yes:
                        state[ST_EXT_SIDE] = side
                        state[ST_TRIP] = rules[R_EXTENSION]
                        hand_over = False
                        log_event(log, state, seat, EV_EXTENSION, -1, side, rules[R_EXTENSION])
                    else:
                        log_event(log, state, seat, EV_DECLINE_EXTENSION, -1, side, 0)
                if hand_over:
                    state[ST_TRIP_SIDE] = side
        elif role == ROLE_SAFETY:
            land_safety(state, ct, rules, side, t)
            if state[ST_STOCK_N] > 0 or rules[R_RESHUFFLE] == 1 or rules[R_SAFETY_EXTRA_TURN_EMPTY] == 1:
                next_seat = seat  # the extra turn
        elif role == ROLE_GO or role == ROLE_REMEDY:
            state[tb + SD_BATTLE] = t
            state[tb + SD_TABLEAU + t] += 1
        elif role == ROLE_END_LIMIT:
            state[tb + SD_LIMITED] = 0
            state[tb + SD_LIMIT_TOP] = t
            state[tb + SD_TABLEAU + t] += 1
        else:
            # An attack on an opponent: hazard, limit or setback.
            sides_out[side, S_HAZARDS_PLAYED] += 1
            coup = -1
            turn_jump = True
            if ct[t, C_PROTECTED_BY] >= 0 and rules[R_COUP_FOURRE] == 1:  # else no coup fourré is possible
                # the stock as the coup fourré finds it, before its replacement draw
                turn_jump = state[ST_STOCK_N] > 0 or rules[R_RESHUFFLE] == 1 or rules[R_COUP_TURN_EMPTY] == 1
                coup, key = offer_coup_fourre(state, ct, rules, seat, target, t, policy_ids, params, pkeys,
                                              key, cards, log)
            if coup >= 0:
                if turn_jump:
                    next_seat = coup  # the players in between lose their turn
            else:
                sides_out[target, S_HAZARDS_RECEIVED] += 1
                cards[target, t, K_RECEIVED] += 1
                if role == ROLE_HAZARD:
                    state[tb + SD_BATTLE] = t
                    state[tb + SD_TABLEAU + t] += 1
                elif role == ROLE_LIMIT:
                    state[tb + SD_LIMITED] = 1
                    state[tb + SD_LIMIT_TOP] = t
                    state[tb + SD_TABLEAU + t] += 1
                else:
                    lost = ct[t, C_REMOVES]
                    laid = state[tb + SD_LAID + lost]
                    state[tb + SD_LAID + lost] = laid - 1
                    state[tb + SD_DIST] -= ct[lost, C_VALUE]
                    if rules[R_TARGET_SET] == 1 and laid <= ct[lost, C_TARGET]:
                        state[tb + SD_NEED] += 1
                    if state[tb + SD_TABLEAU + lost] > 0:  # it may have gone back into the stock
                        state[tb + SD_TABLEAU + lost] -= 1
                        state[DISCARD_AT + lost] += 1
                    state[DISCARD_AT + t] += 1
                    update_tension(state, rules, sides_out)
    return next_seat, hand_over, key


@allocation_free
def apply_move_call(ct, rules, state, seat, m, policy_ids, params, pkeys, key, sides_out, cards, log):
    """apply_move as a function call, for the look-ahead's first move and
    for Python. apply_move is inlined into the turn loops (play_hand,
    rollout); inlined into evaluate_moves, which keeps Numba's runtime, it
    made that function's compile 20 s longer."""
    return apply_move(ct, rules, state, seat, m, policy_ids, params, pkeys, key, sides_out, cards, log)


@allocation_free
def hand_finished(state, rules):
    """A play-out hand is over when the stock and every hand are empty."""
    if state[ST_STOCK_N] > 0 or rules[R_RESHUFFLE] == 1:
        return False
    for p in range(rules[R_PLAYERS]):
        if state[HAND_N_AT + p] > 0:
            return False
    return True


@allocation_free
def rollout(ct, rules, state, seat, horizon, ids, params, pkeys, key, sides_out, cards, moves, log):
    """Play on from `state` (seat to move next) with basic policies for at
    most `horizon` turns (0: to the end of the hand). Returns (hand over, key)."""
    players = rules[R_PLAYERS]
    start = state[ST_TURNS]
    passes = 0
    while state[ST_TURNS] < rules[R_TURN_CAP] and (horizon == 0 or state[ST_TURNS] - start < horizon):
        _, key = draw(state, ct, rules, seat, key, cards, log)
        if state[HAND_N_AT + seat] == 0:
            passes += 1
            # A pass is no turn: stop once nobody can play, or the loop would not end.
            if passes >= players or hand_finished(state, rules):
                return True, key
            seat = seat_after(seat, players)
            continue
        passes = 0
        m, pk = basic_move(state, ct, rules, seat, moves, ids[seat], params[seat], pkeys[seat])
        pkeys[seat] = pk
        seat, over, key = apply_move(ct, rules, state, seat, m, ids, params, pkeys, key, sides_out, cards, log)
        if over or hand_finished(state, rules):
            return True, key
    return False, key


@allocation_free
def playout_value(ct, rules, state, side, sides_out, win_only):
    """Value of a playout's end for `side`: in scored designs its hand score
    minus the best opponent's; otherwise 1 for completing the trip, 0 for
    another side completing it or for the side's disqualification (it can
    no longer win), and in between the distance lead over the sides still
    in the race. With win_only: 1 if the side wins the hand (completes the
    trip, or in a hand played out without a trip goes strictly furthest;
    has the strictly best hand score in scored designs), else 0."""
    sides = rules[R_SIDES]
    if rules[R_SCORING] == 1:
        for s in range(sides):
            b = side_at(s)
            sides_out[s, S_DISTANCE] = state[b + SD_DIST]
            sides_out[s, S_COUPS] = state[b + SD_COUPS]
            n_safe = 0
            for t in range(rules[R_NTYPES]):
                if ct[t, C_ROLE] == ROLE_SAFETY and state[b + SD_TABLEAU + t] > 0:
                    n_safe += 1
            sides_out[s, S_SAFETIES] = n_safe
        score_hand(state, rules, sides_out)
        best = -1 << 30
        for s in range(sides):
            if s != side and sides_out[s, S_SCORE] > best:
                best = sides_out[s, S_SCORE]
        if win_only:
            return 1.0 if sides_out[side, S_SCORE] > best else 0.0
        return (sides_out[side, S_SCORE] - best) / 1000.0
    if state[ST_TRIP_SIDE] >= 0:
        return 1.0 if state[ST_TRIP_SIDE] == side else 0.0
    if win_only:
        if not hand_finished(state, rules) or state[side_at(side) + SD_DISQ] == 1:
            return 0.0  # still being played (cut off by the cap), or the side can no longer win
        # played out without a trip: the side that went furthest wins, alone (a disqualified side cannot)
        mine = state[side_at(side) + SD_DIST]
        for s in range(sides):
            b = side_at(s)
            if s != side and state[b + SD_DISQ] == 0 and state[b + SD_DIST] >= mine:
                return 0.0
        return 1.0
    if state[side_at(side) + SD_DISQ] == 1:
        return 0.0
    best = 0
    for s in range(sides):
        b = side_at(s)
        if s != side and state[b + SD_DISQ] == 0 and state[b + SD_DIST] > best:
            best = state[b + SD_DIST]
    return 0.5 + 0.5 * (state[side_at(side) + SD_DIST] - best) / state[ST_TRIP]


@allocating
def determinize(state, ct, rules, seat, scratch, unknown, key):
    """Copy `state` into `scratch` with every card `seat` cannot see (the
    stock and the other hands) dealt afresh from the cards it has not seen.

    The unseen cards are computed from public information only (deck, own
    hand, discard pile, tableaux), never read from the stock or the other
    hands, so the look-ahead cannot learn what it should not know.
    unknown [types]: cards of the discard pile that nobody saw (a position
    that does not list its whole discard pile): they are dealt afresh too,
    and the cards left over go back to the discard pile."""
    scratch[:] = state
    n_types = rules[R_NTYPES]
    players = rules[R_PLAYERS]
    pool = np.empty(MAX_DECK, np.int16)
    n = 0
    for t in range(n_types):
        seen = state[HAND_AT + seat * MAX_TYPES + t] + state[DISCARD_AT + t] - unknown[t]
        scratch[DISCARD_AT + t] = state[DISCARD_AT + t] - unknown[t]
        for s in range(rules[R_SIDES]):
            seen += state[side_at(s) + SD_TABLEAU + t]
        for _ in range(ct[t, C_COUNT] - seen):
            pool[n] = t
            n += 1
    key = shuffle(pool, n, key)
    used = 0
    for i in range(state[ST_STOCK_N]):
        scratch[STOCK_AT + i] = pool[used]
        used += 1
    for p in range(players):
        if p == seat:
            continue
        for t in range(n_types):
            scratch[HAND_AT + p * MAX_TYPES + t] = 0
        for _ in range(state[HAND_N_AT + p]):
            scratch[HAND_AT + p * MAX_TYPES + pool[used]] += 1
            used += 1
    for i in range(used, n):
        scratch[DISCARD_AT + pool[i]] += 1
    recount_held(scratch, rules)
    return key


@allocating
def evaluate_moves(state, ct, rules, seat, moves, n, params, worlds, unknown, key, baseline, win_only, totals,
                   diffs, diff_squares, counts):
    """Flat Monte Carlo over determinizations with common random numbers.

    Each of `worlds` times: deal the cards `seat` cannot see afresh
    (determinize), then for every legal move play it in a copy of that world
    and play on with greedy players (the greedy rows of `params`) for
    params[P_HORIZON] turns, every move with the same random keys, so the
    moves are compared on equal luck. Adds each move's values into
    totals[i], counts[i], and its paired differences with move
    `baseline` into diffs[i], diff_squares[i]. unknown: as determinize
    takes it. Returns the key."""
    players = rules[R_PLAYERS]
    sides = rules[R_SIDES]
    side = side_of(seat, sides)
    horizon = int(params[P_HORIZON])
    world = np.empty(STATE_SIZE, np.int16)
    scratch = np.empty(STATE_SIZE, np.int16)
    ids = np.full(players, POLICY_GREEDY, np.int32)
    rollout_params = np.empty((players, N_PARAMS))
    for p in range(players):
        rollout_params[p] = params
    world_keys = np.empty(players, np.uint64)
    pkeys = np.empty(players, np.uint64)
    sides_out = np.zeros((sides, S_NCOLS), np.int32)
    cards = np.zeros((sides, MAX_TYPES, K_NCOLS), np.int16)
    rollout_moves = np.empty(MAX_MOVES, np.int32)
    no_log = np.zeros((0, LOG_NCOLS), np.int32)
    values = np.empty(n)
    for _ in range(worlds):
        key = determinize(state, ct, rules, seat, world, unknown, key)
        for p in range(players):
            r, key = next_u64(key)
            world_keys[p] = r
        world_chance, key = next_u64(key)
        for i in range(n):
            scratch[:] = world
            pkeys[:] = world_keys
            sides_out[:] = 0
            nxt, over, chance = apply_move_call(ct, rules, scratch, seat, moves[i], ids, rollout_params, pkeys,
                                                world_chance, sides_out, cards, no_log)
            if not over:
                over, chance = rollout(ct, rules, scratch, nxt, horizon, ids, rollout_params, pkeys, chance,
                                       sides_out, cards, rollout_moves, no_log)
            values[i] = playout_value(ct, rules, scratch, side, sides_out, win_only)
        for i in range(n):
            v = values[i]
            d = v - values[baseline]
            totals[i] += v
            diffs[i] += d
            diff_squares[i] += d * d
            counts[i] += 1.0
    return key


@allocating
def lookahead_move(state, ct, rules, seat, moves, n, params, key):
    """The look-ahead policy: greedy's move, unless playouts show another
    move better by more than params[P_CONFIDENCE] standard errors of the
    paired difference (many moves are near ties, and picking among them by
    noise loses tempo). Returns (move, key)."""
    if n == 1:
        return moves[0], key
    baseline_move, key = greedy_move_call(state, ct, rules, seat, params, key)
    # Not `baseline = 0`: typed first as the literal 0, then as int64, it
    # made Numba compile evaluate_moves twice. For the same reason win_only
    # is not the literal False below: `analyze` (race_position.py) calls
    # evaluate_moves with a plain bool, and one compiled version serves both.
    baseline = np.int64(0)
    win_only = np.bool_(False)
    for i in range(n):
        if moves[i] == baseline_move:
            baseline = i
    totals = np.zeros(n)
    diffs = np.zeros(n)
    diff_squares = np.zeros(n)
    counts = np.zeros(n)
    worlds = max(2, int(params[P_PLAYOUTS]) // n)
    unknown = np.zeros(MAX_TYPES, np.int16)  # in a game the discard pile is in plain view
    key = evaluate_moves(state, ct, rules, seat, moves, n, params, worlds, unknown, key, baseline, win_only, totals,
                         diffs, diff_squares, counts)
    return moves[confident_best(diffs, diff_squares, worlds, baseline, params[P_CONFIDENCE])], key


@njit(cache=True, inline="always")
def choose_move(state, ct, rules, seat, moves, policy_id, params, key, lookahead, user_policies):
    """The decision point: random and greedy by id; the look-ahead and the
    user policies are first-class functions, each in a tuple (`lookahead`:
    kernels/jit.py, optional_part, says why). Returns (move, key); move -1
    if a user policy answered with an index that is not a legal move.
    `moves` is scratch space for the policies that look at the list of
    legal moves."""
    if policy_id == POLICY_GREEDY:
        return greedy_move(state, ct, rules, seat, params, key)
    n = legal_moves(state, ct, rules, seat, moves)
    if policy_id >= POLICY_USER:
        # The user's key branches off the seat's: a policy that draws several
        # numbers from it must not meet the next decision's. (Computing it
        # here, with the seat's key advanced after the call, keeps the hot
        # loop's code as fast as before: other orders cost 2 to 4 %.)
        index = user_policies[policy_id - POLICY_USER](state, ct, rules, seat, moves, n, params, branch(key))
        _, key = next_u64(key)
        if index < 0 or index >= n:
            return -1, key
        return moves[index], key
    if policy_id == POLICY_LOOKAHEAD:
        return lookahead[0](state, ct, rules, seat, moves, n, params, key)
    return random_move(moves, n, key)


@allocation_free
def play_hand(ct, rules, policy_ids, params, first_seat, key, pkeys, state, moves, hand_out, sides_out, cards, progress,
              log, stop_turn, lookahead, user_policies):
    """Deal and play one hand to its end. Writes the hand's records into
    hand_out [H_NCOLS], sides_out [sides, S_NCOLS], cards [sides, types,
    K_NCOLS], progress [sides, N_PROGRESS]; returns the chance key.
    pkeys [seats] holds each seat's policy key and is updated in place;
    moves [MAX_MOVES] is scratch space for the legal moves. stop_turn >= 0
    (a replay asking for a position) stops the hand after the draw of the
    turn that starts with stop_turn turns played, leaving the state there."""
    players = rules[R_PLAYERS]
    sides = rules[R_SIDES]
    n_types = rules[R_NTYPES]
    cap = rules[R_TURN_CAP]
    # a replay's stop shares the cap's test, so that a batch run, which has none, tests once a turn as before
    limit = cap if stop_turn < 0 else min(cap, stop_turn)
    key = deal(state, ct, rules, first_seat, key, cards, log)
    seat = first_seat
    capped = 0
    round_left = players  # turns to the end of the round: counted down, as a division every turn costs 2 %
    while True:
        turns = state[ST_TURNS]
        if turns >= limit:
            if turns >= cap:
                capped = 1
            else:  # the replay's turn: its draw, then the state is the position
                _, key = draw(state, ct, rules, seat, key, cards, log)
                log_event(log, state, seat, EV_STOPPED, -1, -1, 0)
            break
        side = side_of(seat, sides)
        b = side_at(side)
        # Turns lost: the side starts the turn blocked by a hazard, else by a
        # limit card. Counted without branches (adding 0 when not blocked):
        # which way they go is as random as the game, and this runs every turn.
        top = state[b + SD_BATTLE]
        hazard = hazard_on_top(rules, top)
        limit_top = state[b + SD_LIMIT_TOP]
        blocker = top if hazard == 1 else limit_top
        blocked = hazard | (is_limited(state, side) & (limit_top >= 0))
        cards[side, max(blocker, 0), K_VICTIM_TURNS] += blocked
        _, key = draw(state, ct, rules, seat, key, cards, log)
        if state[HAND_N_AT + seat] == 0:
            # Play-out: nothing to draw and nothing in hand, so pass.
            log_event(log, state, seat, EV_PASS, -1, -1, 0)
            empty = state[ST_STOCK_N] == 0
            for p in range(players):
                if state[HAND_N_AT + p] > 0:
                    empty = False
            if empty:
                break
            seat = seat_after(seat, players)
            continue
        m, pk = choose_move(state, ct, rules, seat, moves, policy_ids[seat], params[seat], pkeys[seat],
                            lookahead, user_policies)
        pkeys[seat] = pk
        if m < 0:
            hand_out[H_POLICY_ERROR] = seat + 1  # a user policy answered with no legal move
            capped = 1
            break
        next_seat, hand_over, key = apply_move(ct, rules, state, seat, m, policy_ids, params, pkeys, key,
                                               sides_out, cards, log)
        if log.shape[0] > 0:  # replays and tests audit every move
            broken = check_state(state, ct, rules)
            if broken:
                log_event(log, state, seat, EV_BROKEN_INVARIANT, t_of(m), -1, broken)
        round_left -= 1
        if round_left == 0:
            round_left = players
            rounds = state[ST_TURNS] // players
            if rounds <= LAST_KEPT_ROUND and KEPT_BY_ROUND[rounds] > KEPT_BY_ROUND[rounds - 1]:
                for s in range(sides):
                    progress[s, KEPT_BY_ROUND[rounds] - 1] = state[side_at(s) + SD_DIST]
        if hand_over:
            break
        if state[ST_STOCK_N] == 0 and rules[R_RESHUFFLE] == 0:
            empty = True
            for p in range(players):
                if state[HAND_N_AT + p] > 0:
                    empty = False
            if empty:
                break
        seat = next_seat

    # ---- records ----
    rounds = state[ST_TURNS] // players
    for s in range(sides):  # a hand that has ended keeps its final distance
        for k in range(KEPT_BY_ROUND[min(rounds, LAST_KEPT_ROUND)], N_PROGRESS):
            progress[s, k] = state[side_at(s) + SD_DIST]
    for p in range(players):
        for t in range(n_types):
            cards[p % sides, t, K_IN_HAND] += state[HAND_AT + p * MAX_TYPES + t]
    hand_out[H_FIRST_SEAT] = first_seat
    hand_out[H_TURNS] = state[ST_TURNS]
    hand_out[H_STOCK_EXHAUSTED] = state[ST_STOCK_EXHAUSTED]
    hand_out[H_RESHUFFLES] = state[ST_RESHUFFLES]
    hand_out[H_CAPPED] = capped
    hand_out[H_TRIP_SIDE] = state[ST_TRIP_SIDE]
    hand_out[H_EXT_SIDE] = state[ST_EXT_SIDE]
    hand_out[H_LEAD_CHANGES] = state[ST_LEAD_CHANGES]
    for s in range(sides):
        b = side_at(s)
        sides_out[s, S_DISTANCE] = state[b + SD_DIST]
        sides_out[s, S_DISQUALIFIED] = state[b + SD_DISQ]
        sides_out[s, S_COUPS] = state[b + SD_COUPS]
        n_safe = 0
        for t in range(n_types):
            if ct[t, C_ROLE] == ROLE_SAFETY and state[b + SD_TABLEAU + t] > 0:
                n_safe += 1
        sides_out[s, S_SAFETIES] = n_safe
    score_hand(state, rules, sides_out)
    return key


# The items of a hand's score, named as the design file's [scoring] fields
# (the replay prints them). Item 0 is the distance, the whole score of a
# design without a scoring table.
SCORE_ITEMS = ("distance", "per_safety", "all_safeties", "coup_fourre", "trip_completed", "delayed_action",
               "safe_trip", "shutout", "extension")


@allocation_free
def score_hand(state, rules, sides_out):
    """Hand scores: the sum of each side's score items. Each item is its own
    inlined call with a constant `item`, so that the compiler keeps only its
    branch (a loop over the items made a Mille Bornes hand 4 % slower)."""
    for s in range(rules[R_SIDES]):
        score = score_item(state, rules, sides_out, s, 0)
        if rules[R_SCORING]:
            score += (score_item(state, rules, sides_out, s, 1) + score_item(state, rules, sides_out, s, 2)
                      + score_item(state, rules, sides_out, s, 3) + score_item(state, rules, sides_out, s, 4)
                      + score_item(state, rules, sides_out, s, 5) + score_item(state, rules, sides_out, s, 6)
                      + score_item(state, rules, sides_out, s, 7) + score_item(state, rules, sides_out, s, 8))
        sides_out[s, S_SCORE] = score


@njit(cache=True, inline="always")
def score_item(state, rules, sides_out, s, item):
    """Side s's points for SCORE_ITEMS[item] at the end of a hand (the scoring
    table's; sides_out holds the hand's distances, safeties and coups)."""
    trip_side = state[ST_TRIP_SIDE]
    ext_side = state[ST_EXT_SIDE]
    points = 0
    if item == 0:
        points = sides_out[s, S_DISTANCE]
    elif item == 1:
        points = rules[R_PER_SAFETY] * sides_out[s, S_SAFETIES]
    elif item == 2:
        if sides_out[s, S_SAFETIES] == rules[R_N_SAFETY_TYPES] and sides_out[s, S_SAFETIES] > 0:
            points = rules[R_ALL_SAFETIES]
    elif item == 3:
        points = rules[R_COUP_POINTS] * sides_out[s, S_COUPS]
    elif item == 4:
        if s == trip_side:
            points = rules[R_TRIP_POINTS]
        elif s == ext_side and rules[R_FAILED_EXTENSION_TRIP] == 1:
            points = rules[R_TRIP_POINTS]  # for the trip it completed before calling the extension
    elif item == 5:
        if s == trip_side and state[ST_STOCK_N] == 0:
            points = rules[R_DELAYED_POINTS]
    elif item == 6:
        # "without laying that card": one laid and taken off by a setback was laid
        if s == trip_side and rules[R_SAFE_TRIP_TYPE] >= 0 and (state[ST_SAFE_TRIP_LAID] >> s) & 1 == 0:
            points = rules[R_SAFE_TRIP_POINTS]
    elif item == 7:
        if rules[R_SHUTOUT_FR] == 1:  # 500 from each opponent with no distance
            for o in range(rules[R_SIDES]):
                if o != s and sides_out[o, S_DISTANCE] == 0:
                    points += rules[R_SHUTOUT_POINTS]
        elif s == trip_side:
            # "if no opponent has laid any distance", also where a setback took it off again
            shut_out = True
            for o in range(rules[R_SIDES]):
                if o != s and (state[ST_DISTANCE_LAID] >> o) & 1 == 1:
                    shut_out = False
            if shut_out:
                points = rules[R_SHUTOUT_POINTS]
    elif item == 8:
        # to the caller who completes the extended trip, else to each opponent
        if ext_side >= 0 and (s == ext_side) == (trip_side == ext_side):
            points = rules[R_EXTENSION_POINTS]
    return points


# ---- batch driver ---------------------------------------------------------------
def first_seats(games, hand, players):
    """The seat that plays first in `hand` of each of `games` (game indices).

    The dealer rotates left each hand. Who starts the first hand moves on
    one seat every `players` games, so over any players x players games in a
    row each seat starts equally often, with each seat's policy whether
    seating is fixed or rotated (rotated seating moves the policies one
    seat on every game): turn order is then not mixed up with seat or
    policy, and the first player's edge can be measured."""
    return ((np.asarray(games, np.int64) // players + hand) % players).astype(np.int32)


@allocation_free
def initial_keys(seed, games, players, chance_keys, policy_keys):
    """Keys of each game's chance stream and of each seat's policy stream."""
    for i in range(games.shape[0]):
        chance_keys[i] = game_key(seed, games[i], STREAM_CHANCE)
        for p in range(players):
            policy_keys[i, p] = game_key(seed, games[i], STREAM_POLICY_BASE + p)


@njit(cache=True, parallel=True)
def play_hands(ct, rules, policy_ids, policy_params, seat_policy, first_seats, chance_keys, policy_keys,
               hand_out, sides_out, cards_out, progress_out, lookahead, user_policies):
    """Play one hand of each game i (in parallel); game i owns row i of every
    output array and its keys, which come back advanced for the next hand.

    policy_ids [K] and policy_params [K, N_PARAMS] describe the policies in
    play; seat_policy [games, seats] says which one sits where in each game.
    """
    no_log = np.zeros((0, LOG_NCOLS), np.int32)
    players = rules[R_PLAYERS]
    for i in prange(first_seats.shape[0]):
        state = np.empty(STATE_SIZE, np.int16)
        moves = np.empty(MAX_MOVES, np.int32)
        ids = np.empty(players, np.int32)
        params = np.empty((players, N_PARAMS), np.float64)
        for p in range(players):
            ids[p] = policy_ids[seat_policy[i, p]]
            for j in range(N_PARAMS):  # element by element: a row assignment compiles 3 s of error formatting
                params[p, j] = policy_params[seat_policy[i, p], j]
        chance_keys[i] = play_hand(ct, rules, ids, params, first_seats[i], chance_keys[i],
                                   policy_keys[i], state, moves, hand_out[i], sides_out[i], cards_out[i],
                                   progress_out[i], no_log, np.int64(-1), lookahead, user_policies)  # -1: no stop


@allocating
def play_hand_logged(ct, rules, policy_ids, params, first_seat, chance_key, pkeys, state, hand_out,
                     sides_out, cards, progress, log, stop_turn, lookahead, user_policies):
    """play_hand for one game from Python: the chance key lives in a 1-element
    uint64 array so it never crosses into Python as a (signed) int. The
    first seat is made an int32 and the stop turn an int64, as in
    play_hands: the same compiled play_hand serves both (another integer
    type would compile it again)."""
    chance_key[0] = play_hand(ct, rules, policy_ids, params, np.int32(first_seat), chance_key[0], pkeys, state,
                              np.empty(MAX_MOVES, np.int32), hand_out, sides_out, cards, progress, log,
                              np.int64(stop_turn), lookahead, user_policies)


@allocation_free
def apply_move_boxed(ct, rules, state, seat, m, policy_ids, params, pkeys, chance_key, sides_out, cards, log,
                     result):
    """apply_move from Python (positions, tests): keys in arrays, results in
    result = [next seat, hand over]."""
    next_seat, hand_over, k = apply_move_call(ct, rules, state, seat, m, policy_ids, params, pkeys, chance_key[0],
                                              sides_out, cards, log)
    chance_key[0] = k
    result[0] = next_seat
    result[1] = hand_over
