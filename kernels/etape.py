"""Tape l'étape: Numba kernels (rules: ../shared/rules/tape_l_etape.md).

A race is a series of stages; in each stage the players shed 8 numbered cards
onto four colour columns under the picked stage profile; cards left in hand
cost seconds, bonuses are subtracted, lowest cumulative time wins.

Cards: index c = colour * 12 + (value - 1), colour 0-3, value 1-12. A hand
is a 48-bit mask in one int64 (bit c set = card held).

State: one int64 row per race (`S_SIZE` entries), offsets below:

    +-----+------+------+---------+-------+-------+--------+--------+------+
    | N   | VMIN | VMAX | PROFILE | START | STAGE | NSTAGE | PICKER | TURN |
    +-----+------+------+---------+-------+-------+--------+--------+------+
    | NFIN | LAID (mask of laid cards)                                     |
    +-------------------------------------------------------------------+
    | COLN[4]  cards in each column     | LO[4] / HI[4] column ends        |
    +-------------------------------------------------------------------+
    | HAND[6]    hand masks                                              |
    | JOKERS[6]  jokers left (bits J_*)  | STAGECARDS[6] profiles left    |
    | SKIP[6]    turns to skip (Crevaison) | VBLOCK[6] Vitamine bans      |
    | FINISH[6]  order of emptying this stage (0 = still holds cards)    |
    | TIME[6]    cumulative seconds | MOUNT[6] / SPRINT[6] side points   |
    +-------------------------------------------------------------------+

The state holds only what the players see or own; random keys are passed by
value and returned, never stored, so a policy cannot see the future deal.
Rule options are an int64 vector (`O_*`), policies an id per seat with a
float parameter row (`P_*`); records are int64 rows (`C_*` per stage,
`R_*` per race, per-seat fields at `seat_col(base, field, seat)`).
"""
import numpy as np
from numba import njit, prange, types

from .jit import allocating, allocation_free, optional_part
from .rng import STREAM_CHANCE, STREAM_POLICY_BASE, confident_best, game_key, next_u64, randint, shuffle, uniform

MAX_P = 6
HAND_SIZE = 8
NEVER = 99  # depth of a card that can never be laid

# Stage profiles, in the order of the stage cards.
MONTAGNE, DESCENTE, PLAINE, CLM, BALAI = 0, 1, 2, 3, 4
PROFILE_NAMES = ("montagne", "descente", "plaine", "contre_la_montre", "voiture_balai")
ALL_PROFILES = 31

# Jokers (bits).
J_CREVAISON, J_VITAMINE, J_BRAQUET = 1, 2, 4
JOKER_NAMES = ("crevaison", "vitamine", "braquet")

# ---- state offsets
S_N, S_VMIN, S_VMAX, S_PROFILE, S_START = 0, 1, 2, 3, 4
S_STAGE, S_NSTAGES, S_PICKER, S_TURN, S_NFIN, S_LAID = 5, 6, 7, 8, 9, 10
S_COLN, S_LO, S_HI = 11, 15, 19
S_HAND = 23
S_JOKERS = S_HAND + MAX_P
S_STAGECARDS = S_JOKERS + MAX_P
S_SKIP = S_STAGECARDS + MAX_P
S_VBLOCK = S_SKIP + MAX_P
S_FINISH = S_VBLOCK + MAX_P
S_TIME = S_FINISH + MAX_P
S_MOUNT = S_TIME + MAX_P
S_SPRINT = S_MOUNT + MAX_P
S_SIZE = S_SPRINT + MAX_P

# ---- rule options (int64 vector); names and defaults in analysis/etape.py
O_MODE = 0               # 0 Sprint (one stage per player), 1 Endurance
O_ENDURANCE_STAGES = 1   # stages per player in Endurance (1-5)
O_PICK_AFTER_DEAL = 2    # 1: picker sees the new hand before picking
O_COLUMN_STEP = 3        # 0: +/-1 steps (Sevens), 1: any higher/lower value
O_EXTREME_START = 4      # 0: Montagne/Descente start at value in play, 1: dealt
O_SPRINT_IN_BALAI = 5    # 1: Plaine's two-card sprint also in Voiture balai
O_BLOCKED_WINNER = 6     # 1: a blocked stage's best placed player gets the bonus
O_CREV_STACK = 7         # 1: two Crevaisons on one player skip two turns
O_CREV_ANYTIME = 8       # 1: Crevaison in the window before every turn
O_CREV_CARRY = 9         # 1: a pending skip carries into the next stage
O_TURN_CAP = 10          # turns per stage before it is cut off (recorded)
O_ROTATE = 11            # 1: policies rotate over seats race by race
O_JOKERS = 12            # jokers each player starts with (mask of J_*)
O_WITHHOLD_SEAT = 13     # seat denied the jokers in O_WITHHOLD_MASK (-1 none)
O_WITHHOLD_MASK = 14
O_LOW_SECS = 15          # seconds per card left, values 1-6
O_HIGH_SECS = 16         # seconds per card left, values 7-12
O_WIN_BONUS = 17         # stage winner's bonus
O_BALAI_LAST = 18        # Voiture balai: last to empty
O_BALAI_SECOND = 19      # Voiture balai: the one before
O_SELF_CREV_BALAI = 20   # 1: Crevaison on oneself allowed in Voiture balai too
O_SEAT_ORDER = 21        # 0: classification ties go in seat order from the picker, 1: from seat 0
O_GC_TIE = 22            # 0: a GC tie on time is shared, 1: broken on stage places
O_JOKER_REFRESH = 23     # 0: each joker once per race, 1: the jokers are dealt again every stage
O_CLM_DIRECTION = 24     # 0: Contre-la-montre columns grow up or down, 1: up only
N_OPTIONS = 25

# ---- policies
POL_RANDOM, POL_HEURISTIC, POL_LOOKAHEAD = 0, 1, 2  # look-ahead: heuristic elsewhere
P_JOKER_P = 0      # random: chance to use a held joker at each opportunity
P_MORE_P = 1       # random: chance to lay one more card when allowed
P_W_VALUE = 2      # heuristic: weight of the card's seconds (shed 30 s first)
P_W_OWN = 3        # heuristic: weight of own cards the card leads to
P_W_BLOCK = 4      # heuristic: penalty per card it opens to opponents
P_CREV_CARDS = 5   # heuristic: Crevaison on an opponent with <= this many cards
P_VITA_CARDS = 6   # heuristic: Vitamine on an opponent with <= this many cards
P_BRAQ_MIN = 7     # heuristic: Braquet when it lays >= this many cards
P_PICK = 8         # heuristic: 0 pick the stage fitting the hand, 1 at random
P_BALAI_W = 9      # heuristic: appetite for Voiture balai with a slow hand
P_PLAYOUTS = 10    # look-ahead: playouts per decision (split over the candidates)
P_HORIZON = 11     # look-ahead: turns played on after the move (0 = to the stage end)
P_CONFIDENCE = 12  # look-ahead: standard errors by which a move must beat the heuristic's
N_PARAMS = 13

# ---- stage record (one int64 row per stage)
C_STAGE, C_PICKER, C_PROFILE, C_START, C_WINNER = 0, 1, 2, 3, 4
C_BLOCKED, C_CAPPED, C_TURNS = 5, 6, 7
C_COLN, C_LO, C_HI = 8, 12, 16
C_SEAT = 20
STAGE_SEAT_FIELDS = ("slot", "time", "cum", "cards", "secs", "passes", "skipped",
                     "laid", "crev", "vita", "braq", "finish", "side", "hand", "dealt", "place")
(F_SLOT, F_TIME, F_CUM, F_CARDS, F_SECS, F_PASSES, F_SKIPPED, F_LAID, F_CREV,
 F_VITA, F_BRAQ, F_FINISH, F_SIDE, F_HAND, F_DEALT, F_PLACE) = range(16)
STAGE_COLS = C_SEAT + len(STAGE_SEAT_FIELDS) * MAX_P

# ---- race record (one int64 row per race)
R_WINNER, R_CAPPED, R_BLOCKED = 0, 1, 2
R_SEAT = 3
RACE_SEAT_FIELDS = ("slot", "time", "rank", "mountain", "sprint")
RF_SLOT, RF_TIME, RF_RANK, RF_MOUNT, RF_SPRINT = range(5)
RACE_COLS = R_SEAT + len(RACE_SEAT_FIELDS) * MAX_P


@allocation_free
def seat_col(base, field, seat):
    return base + field * MAX_P + seat


# ---------------------------------------------------------------- helpers
@allocation_free
def bit(card):
    return np.int64(1) << np.int64(card)


@allocation_free
def popcount(mask):
    count = 0
    while mask:
        mask &= mask - 1
        count += 1
    return count


@allocation_free
def nth_card(mask, r):
    """Index of the r-th set bit (r from 0)."""
    for c in range(48):
        if (mask >> c) & 1:
            if r == 0:
                return c
            r -= 1
    return -1


@allocation_free
def card_secs(opts, card):
    return opts[O_LOW_SECS] if card % 12 < 6 else opts[O_HIGH_SECS]


@allocation_free
def hand_secs(opts, mask):
    total = 0
    for c in range(48):
        if (mask >> c) & 1:
            total += card_secs(opts, c)
    return total


@allocation_free
def value_range(n):
    """Values in play: 3-10 (3-4 players), 2-11 (5), 1-12 (6)."""
    if n <= 4:
        return 3, 10
    if n == 5:
        return 2, 11
    return 1, 12


@allocation_free
def in_play(st):
    m = np.int64(0)
    for col in range(4):
        for v in range(st[S_VMIN], st[S_VMAX] + 1):
            m |= bit(col * 12 + v - 1)
    return m


@allocation_free
def stages_per_race(n, opts):
    return n * opts[O_ENDURANCE_STAGES] if opts[O_MODE] == 1 else n


# ---------------------------------------------------------------- rules
@allocation_free
def deal_jokers(st, opts):
    """Every seat's jokers: those of the game, less any withheld from one seat."""
    for s in range(st[S_N]):
        st[S_JOKERS + s] = opts[O_JOKERS]
        if s == opts[O_WITHHOLD_SEAT]:
            st[S_JOKERS + s] &= ~opts[O_WITHHOLD_MASK]


@allocation_free
def init_race(st, n, opts):
    st[:] = 0
    st[S_N] = n
    st[S_VMIN], st[S_VMAX] = value_range(n)
    st[S_NSTAGES] = stages_per_race(n, opts)
    for s in range(n):
        st[S_STAGECARDS + s] = ALL_PROFILES
    deal_jokers(st, opts)


@allocating
def deal(st, key):
    """Shuffle the cards in play and deal 8 to each player; returns the key."""
    n = st[S_N]
    cards = np.empty(48, np.int64)
    m = 0
    for col in range(4):
        for v in range(st[S_VMIN], st[S_VMAX] + 1):
            cards[m] = col * 12 + v - 1
            m += 1
    key = shuffle(cards, m, key)
    for s in range(n):
        h = np.int64(0)
        for k in range(HAND_SIZE):
            h |= bit(cards[s * HAND_SIZE + k])
        st[S_HAND + s] = h
    return key


@allocation_free
def profile_start(st, opts, profile):
    """Start value of every column (Contre-la-montre: chosen, set apart)."""
    if profile == MONTAGNE or profile == DESCENTE:
        if opts[O_EXTREME_START] == 0:
            return st[S_VMIN] if profile == MONTAGNE else st[S_VMAX]
        dealt = np.int64(0)
        for s in range(st[S_N]):
            dealt |= st[S_HAND + s]
        lo, hi = 13, 0
        for c in range(48):
            if (dealt >> c) & 1:
                lo = min(lo, c % 12 + 1)
                hi = max(hi, c % 12 + 1)
        return lo if profile == MONTAGNE else hi
    return 6


@allocation_free
def start_stage(st, opts, profile, start):
    st[S_PROFILE] = profile
    st[S_START] = start
    st[S_NFIN] = 0
    st[S_LAID] = 0
    if opts[O_JOKER_REFRESH] == 1:
        deal_jokers(st, opts)
    for col in range(4):
        st[S_COLN + col] = 0
        st[S_LO + col] = 0
        st[S_HI + col] = 0
    for s in range(MAX_P):
        st[S_FINISH + s] = 0
        st[S_VBLOCK + s] = 0
        if opts[O_CREV_CARRY] == 0:
            st[S_SKIP + s] = 0


@allocation_free
def directions(prof, opts):
    """(up, down): may the columns of profile `prof` grow upwards, downwards?
    The one place that says which way each profile goes."""
    up = prof != DESCENTE
    down = prof != MONTAGNE and not (prof == CLM and opts[O_CLM_DIRECTION] == 1)
    return up, down


@allocation_free
def legal_mask(st, opts):
    """Every card that may be laid now, whoever holds it."""
    up, down = directions(st[S_PROFILE], opts)
    vmin, vmax = st[S_VMIN], st[S_VMAX]
    free = opts[O_COLUMN_STEP] == 1
    m = np.int64(0)
    for col in range(4):
        base = col * 12 - 1  # bit of value v is base + v
        if st[S_COLN + col] == 0:
            m |= bit(base + st[S_START])
            continue
        if up:
            top = vmax if free else min(st[S_HI + col] + 1, vmax)
            for v in range(st[S_HI + col] + 1, top + 1):
                m |= bit(base + v)
        if down:
            bottom = vmin if free else max(st[S_LO + col] - 1, vmin)
            for v in range(bottom, st[S_LO + col]):
                m |= bit(base + v)
    return m


@allocation_free
def lay(st, seat, card):
    col, v = card // 12, card % 12 + 1
    st[S_HAND + seat] &= ~bit(card)
    st[S_LAID] |= bit(card)
    if st[S_COLN + col] == 0:
        st[S_LO + col] = v
        st[S_HI + col] = v
    elif v > st[S_HI + col]:
        st[S_HI + col] = v
    else:
        st[S_LO + col] = v
    st[S_COLN + col] += 1


@allocation_free
def depth(st, opts, card):
    """Cards of the column to lay before `card` can go, plus one (NEVER if it can't)."""
    col, v = card // 12, card % 12 + 1
    up, down = directions(st[S_PROFILE], opts)
    if st[S_COLN + col] == 0:
        d = v - st[S_START]
        if (d > 0 and not up) or (d < 0 and not down):
            return NEVER
        return abs(d) + 1
    hi, lo = st[S_HI + col], st[S_LO + col]
    if v > hi and up:
        return 1 if opts[O_COLUMN_STEP] == 1 else v - hi
    if v < lo and down:
        return 1 if opts[O_COLUMN_STEP] == 1 else lo - v
    return NEVER


@allocation_free
def stage_status(st, opts):
    """0 running, 1 a player emptied their hand, 2 blocked, 3 all hands empty."""
    if st[S_PROFILE] != BALAI and st[S_NFIN] > 0:
        return 1
    held = np.int64(0)
    for s in range(st[S_N]):
        held |= st[S_HAND + s]
    if held == 0:
        return 3
    if held & legal_mask(st, opts) == 0:
        return 2
    return 0


# ---------------------------------------------------------------- policies
@allocation_free
def random_card(mask, key):
    r, key = randint(key, popcount(mask))
    return nth_card(mask, r), key


@allocation_free
def card_score(st, opts, seat, card, prm):
    """Heuristic worth of laying `card` now: seconds shed, own cards it leads
    to (connectors), opponents' cards it opens (blocking)."""
    col, v = card // 12, card % 12 + 1
    hand = st[S_HAND + seat]
    unseen = in_play(st) & ~hand & ~st[S_LAID]
    empty = st[S_COLN + col] == 0
    up, down = directions(st[S_PROFILE], opts)
    up = up and (empty or v > st[S_HI + col])
    down = down and (empty or v < st[S_LO + col])
    own = 0
    opened = 0
    base = col * 12 - 1
    if up:
        for w in range(v + 1, st[S_VMAX] + 1):
            own += (hand >> (base + w)) & 1
        if v < st[S_VMAX]:
            opened += (unseen >> (base + v + 1)) & 1
    if down:
        for w in range(st[S_VMIN], v):
            own += (hand >> (base + w)) & 1
        if v > st[S_VMIN]:
            opened += (unseen >> (base + v - 1)) & 1
    return (prm[P_W_VALUE] * card_secs(opts, card) / 30.0
            + prm[P_W_OWN] * own - prm[P_W_BLOCK] * opened)


@allocation_free
def choose_card(st, opts, seat, legal, pid, prm, key):
    if pid == POL_RANDOM:
        return random_card(legal, key)
    best, best_card = 0.0, -1
    for c in range(48):
        if (legal >> c) & 1:
            score = card_score(st, opts, seat, c, prm)
            # The first legal card stands until one scores higher: huge weights can make every
            # score -inf or nan (inf - inf), and a card must still be laid.
            if best_card < 0 or score > best:
                best, best_card = score, c
    return best_card, key


@allocation_free
def choose_more(st, opts, seat, pid, prm, key):
    """Lay one more card (Contre-la-montre, Braquet, sprint)?"""
    if pid == POL_RANDOM:
        u, key = uniform(key)
        return u < prm[P_MORE_P], key
    # Shed everything in a race to empty; in Voiture balai hold back.
    return st[S_PROFILE] != BALAI, key


@allocation_free
def mean_depth(st, opts, mask):
    total, count = 0, 0
    for c in range(48):
        if (mask >> c) & 1:
            total += min(depth(st, opts, c), 12)
            count += 1
    return total / max(count, 1)


@allocation_free
def best_clm_start(st, opts, seat):
    """Start value (columns empty, profile CLM set) that most favours `seat`'s
    hand against the unseen cards; returns (start, advantage in mean depth)."""
    hand = st[S_HAND + seat]
    unseen = in_play(st) & ~hand
    best, best_start = -1e18, 6
    for start in range(st[S_VMIN], st[S_VMAX] + 1):
        st[S_START] = start
        adv = mean_depth(st, opts, unseen) - mean_depth(st, opts, hand)
        if adv > best:
            best, best_start = adv, start
    return best_start, best


@allocation_free
def choose_profile(st, opts, seat, pid, prm, key):
    left = st[S_STAGECARDS + seat]
    if pid == POL_RANDOM or prm[P_PICK] == 1:
        r, key = randint(key, popcount(left))
        return nth_card(left, r), key
    # Fit: the profile whose columns reach this hand sooner than the unseen
    # cards (columns are empty at the pick; depth is measured from the start).
    hand = st[S_HAND + seat]
    unseen = in_play(st) & ~hand
    best, best_p = 0.0, -1
    for p in range(5):
        if not (left >> p) & 1:
            continue
        st[S_PROFILE] = p
        if p == CLM:
            adv = best_clm_start(st, opts, seat)[1]
        else:
            st[S_START] = profile_start(st, opts, p)
            adv = mean_depth(st, opts, unseen) - mean_depth(st, opts, hand)
            if p == BALAI:
                adv = -prm[P_BALAI_W] * adv  # a slow hand lasts longest
        if best_p < 0 or adv > best:  # as choose_card: a huge balai_w can make the only profile left -inf
            best, best_p = adv, p
    return best_p, key


@allocation_free
def choose_start(st, opts, seat, pid, prm, key):
    """Contre-la-montre start value, named by the picker (profile already set)."""
    if pid == POL_RANDOM:
        r, key = randint(key, st[S_VMAX] - st[S_VMIN] + 1)
        return st[S_VMIN] + r, key
    return best_clm_start(st, opts, seat)[0], key


@allocation_free
def jokers_lapse(st, opts):
    """Are the jokers not used in this stage lost at its end? In the race's
    last stage, and in every stage when they are dealt again each stage."""
    return st[S_STAGE] == st[S_NSTAGES] - 1 or opts[O_JOKER_REFRESH] == 1


@allocation_free
def crevaison_targets(st, opts, seat):
    """Seats `seat` may puncture (bit s = seat s): anyone, oneself included,
    except oneself in Voiture balai without O_SELF_CREV_BALAI (there a
    chosen skip would be the pass that profile forbids to a player who can lay)."""
    m = (np.int64(1) << st[S_N]) - 1
    if st[S_PROFILE] == BALAI and opts[O_SELF_CREV_BALAI] == 0:
        m &= ~bit(seat)
    return m


@allocation_free
def choose_crevaison(st, opts, seat, on_turn, pid, prm, key):
    """Target of `seat`'s Crevaison in the window before `on_turn` plays, or -1."""
    n = st[S_N]
    targets = crevaison_targets(st, opts, seat)
    if pid == POL_RANDOM:
        u, key = uniform(key)
        if u >= prm[P_JOKER_P]:
            return -1, key
        return random_card(targets, key)
    limit = prm[P_CREV_CARDS] + (2 if jokers_lapse(st, opts) else 0)
    cards = popcount(st[S_HAND + on_turn])
    if st[S_SKIP + on_turn] > 0 or cards == 0:
        return -1, key
    if st[S_PROFILE] == BALAI:
        # Skipping one's own turn keeps cards in hand longer: last to empty.
        others = 0
        for s in range(n):
            if s != seat:
                others += popcount(st[S_HAND + s])
        if on_turn == seat and cards <= limit and others > 0 and (targets >> seat) & 1:
            return seat, key
        return -1, key
    if on_turn != seat and cards <= limit:
        return on_turn, key
    return -1, key


@allocation_free
def vitamine_targets(st, seat):
    """Opponents `seat` may draw from: cards in hand, not barred by retaliation."""
    m = 0
    for s in range(st[S_N]):
        if s != seat and st[S_HAND + s] != 0 and not (st[S_VBLOCK + seat] >> s) & 1:
            m |= 1 << s
    return m


@allocation_free
def choose_vitamine(st, opts, seat, pid, prm, key):
    """(target, card given) for `seat`'s Vitamine on its own turn, or (-1, -1)."""
    targets = vitamine_targets(st, seat)
    hand = st[S_HAND + seat]
    if targets == 0 or hand == 0:
        return -1, -1, key
    if pid == POL_RANDOM:
        u, key = uniform(key)
        if u >= prm[P_JOKER_P]:
            return -1, -1, key
        target, key = random_card(targets, key)
        give, key = random_card(hand, key)
        return target, give, key
    if st[S_PROFILE] == BALAI:
        return -1, -1, key
    n = st[S_N]
    target, fewest = -1, 99
    for j in range(1, n):
        s = (seat + j) % n
        if (targets >> s) & 1 and popcount(st[S_HAND + s]) < fewest:
            target, fewest = s, popcount(st[S_HAND + s])
    # Give the card furthest from being laid (then the dearest); never one
    # that can be laid now (depth 1).
    give, worst = -1, 0.0
    for c in range(48):
        if (hand >> c) & 1:
            d = depth(st, opts, c)
            bad = d + card_secs(opts, c) / 100.0
            if d > 1 and bad > worst:
                give, worst = c, bad
    if give < 0:
        return -1, -1, key  # every card can be laid now
    if fewest <= prm[P_VITA_CARDS] or jokers_lapse(st, opts):
        return target, give, key
    return -1, -1, key


@allocation_free
def run_length(st, opts, hand):
    """Cards of `hand` layable one after another now (Sevens steps)."""
    up, down = directions(st[S_PROFILE], opts)
    total = 0
    for col in range(4):
        base = col * 12 - 1
        if st[S_COLN + col] == 0:
            if not (hand >> (base + st[S_START])) & 1:
                continue
            total += 1
            hi = lo = st[S_START]
        else:
            hi, lo = st[S_HI + col], st[S_LO + col]
        if up:
            v = hi + 1
            while v <= st[S_VMAX] and (hand >> (base + v)) & 1:
                total += 1
                v += 1
        if down:
            v = lo - 1
            while v >= st[S_VMIN] and (hand >> (base + v)) & 1:
                total += 1
                v -= 1
    return total


@allocation_free
def choose_braquet(st, opts, seat, pid, prm, key):
    if pid == POL_RANDOM:
        u, key = uniform(key)
        return u < prm[P_JOKER_P], key
    prof = st[S_PROFILE]
    if prof == BALAI or prof == CLM:
        return False, key  # no use holding back / already free to lay many
    hand = st[S_HAND + seat]
    cards = popcount(hand)
    run = run_length(st, opts, hand)
    if prof == PLAINE and cards == 2:
        return False, key  # the sprint does it for free
    finishes = run == cards and run >= 2
    return run >= prm[P_BRAQ_MIN] or finishes or (jokers_lapse(st, opts) and run >= 2), key


# ---------------------------------------------------------------- play
@allocation_free
def apply_crevaison(st, opts, user, target):
    st[S_JOKERS + user] &= ~J_CREVAISON
    st[S_SKIP + target] = st[S_SKIP + target] + 1 if opts[O_CREV_STACK] == 1 else 1


@allocation_free
def turn_start(st, opts, pids, prm, ckey, pkeys, rec):
    """The turn of st[S_TURN] up to its first card: Crevaison window, skip,
    Vitamine, Braquet. Returns (chance key, legal cards (0: the turn is
    over), braquet declared, sprint allowed); policy keys updated in `pkeys`."""
    n = st[S_N]
    t = st[S_TURN]
    prof = st[S_PROFILE]
    for j in range(n):
        s = (t + j) % n
        if st[S_JOKERS + s] & J_CREVAISON and (opts[O_CREV_ANYTIME] == 1 or s == t):
            target, k = choose_crevaison(st, opts, s, t, pids[s], prm[s], pkeys[s])
            pkeys[s] = k
            if target >= 0:
                apply_crevaison(st, opts, s, target)
                rec[seat_col(C_SEAT, F_CREV, s)] = target
    if st[S_SKIP + t] > 0:
        st[S_SKIP + t] -= 1
        rec[seat_col(C_SEAT, F_SKIPPED, t)] += 1
        return ckey, np.int64(0), False, False
    if st[S_JOKERS + t] & J_VITAMINE:
        target, give, k = choose_vitamine(st, opts, t, pids[t], prm[t], pkeys[t])
        pkeys[t] = k
        if target >= 0:
            theirs = st[S_HAND + target]
            got, ckey = random_card(theirs, ckey)
            st[S_HAND + t] = (st[S_HAND + t] & ~bit(give)) | bit(got)
            st[S_HAND + target] = (theirs & ~bit(got)) | bit(give)
            st[S_VBLOCK + target] |= 1 << t
            st[S_JOKERS + t] &= ~J_VITAMINE
            rec[seat_col(C_SEAT, F_VITA, t)] = target
    legal = st[S_HAND + t] & legal_mask(st, opts)
    if legal == 0:
        rec[seat_col(C_SEAT, F_PASSES, t)] += 1
        return ckey, legal, False, False
    braquet = False
    if st[S_JOKERS + t] & J_BRAQUET:
        braquet, k = choose_braquet(st, opts, t, pids[t], prm[t], pkeys[t])
        pkeys[t] = k
        if braquet:
            st[S_JOKERS + t] &= ~J_BRAQUET
    sprint = prof == PLAINE or (prof == BALAI and opts[O_SPRINT_IN_BALAI] == 1)
    sprint = sprint and popcount(st[S_HAND + t]) == 2
    return ckey, legal, braquet, sprint


@allocation_free
def lay_cards(st, opts, pids, prm, pkeys, rec, legal, braquet, sprint, first):
    """Lay the cards of the turn of st[S_TURN] (legal != 0): `first` (or the
    policy's choice when -1), then more while the turn allows and the policy
    wants; records the turn's end."""
    t = st[S_TURN]
    prof = st[S_PROFILE]
    laid = 0
    while legal != 0:
        if first >= 0:
            card = first
            first = -1
        else:
            card, k = choose_card(st, opts, t, legal, pids[t], prm[t], pkeys[t])
            pkeys[t] = k
        lay(st, t, card)
        laid += 1
        if st[S_HAND + t] == 0 or not (braquet or prof == CLM or (sprint and laid == 1)):
            break
        legal = st[S_HAND + t] & legal_mask(st, opts)
        if legal != 0:
            more, k = choose_more(st, opts, t, pids[t], prm[t], pkeys[t])
            pkeys[t] = k
            if not more:
                break
    rec[seat_col(C_SEAT, F_LAID, t)] += laid
    if braquet:
        rec[seat_col(C_SEAT, F_BRAQ, t)] = laid
    if st[S_HAND + t] == 0:
        st[S_NFIN] += 1
        st[S_FINISH + t] = st[S_NFIN]


@allocation_free
def play_turn(st, opts, pids, prm, ckey, pkeys, rec):
    """The turn of st[S_TURN] with the built-in choices (the look-ahead seat
    plays its heuristic here; used by the look-ahead's playouts). Returns the
    chance key; policy keys are updated in `pkeys`."""
    ckey, legal, braquet, sprint = turn_start(st, opts, pids, prm, ckey, pkeys, rec)
    if legal != 0:
        lay_cards(st, opts, pids, prm, pkeys, rec, legal, braquet, sprint, -1)
    return ckey


@allocation_free
def next_turn(st):
    n = st[S_N]
    t = (st[S_TURN] + 1) % n
    while st[S_HAND + t] == 0:
        t = (t + 1) % n
    st[S_TURN] = t


# ---------------------------------------------------------------- look-ahead
@allocating
def determinize(st, seat, world, key):
    """Copy `st` into `world` with the other hands dealt afresh from the cards
    `seat` cannot see: the cards in play minus its own hand and the columns
    (with 3 players this pool includes the 8 cards out of play, which stay
    out). Computed from public information only (cards in play, own hand,
    laid cards, hand sizes), never from the other hands' contents, so the
    look-ahead cannot learn what it should not know. (What a player learns
    from its own Vitamine, the card it gave, is not used.) Returns the key."""
    world[:] = st
    pool = np.empty(48, np.int64)
    m = 0
    unseen = in_play(st) & ~st[S_HAND + seat] & ~st[S_LAID]
    for c in range(48):
        if (unseen >> c) & 1:
            pool[m] = c
            m += 1
    key = shuffle(pool, m, key)
    used = 0
    for s in range(st[S_N]):
        if s == seat:
            continue
        h = np.int64(0)
        for _ in range(popcount(st[S_HAND + s])):
            h |= bit(pool[used])
            used += 1
        world[S_HAND + s] = h
    return key


@allocation_free
def playout_value(st, opts, seat, rec):
    """Score the stage as it stands (ended, or cut at the horizon) in a copy:
    the best opponent's stage seconds minus `seat`'s (bonuses included)."""
    rec[:] = 0
    score_stage(st, opts, rec, stage_status(st, opts))
    own = rec[seat_col(C_SEAT, F_TIME, seat)]
    best = np.int64(1) << 40
    for s in range(st[S_N]):
        if s != seat:
            best = min(best, rec[seat_col(C_SEAT, F_TIME, s)])
    return float(best - own)


@allocating
def lookahead_card(st, opts, seat, legal, braquet, sprint, prm, key):
    """The look-ahead's first card of its turn (st[S_TURN] == seat, legal has
    two or more cards): the heuristic's card, unless playouts show another
    better by more than prm[P_CONFIDENCE] standard errors of the paired
    difference. Each world deals the hidden cards afresh (determinize); each
    candidate is laid in a copy of that world, the turn finished and the stage
    played on by heuristic players (prm's weights) for prm[P_HORIZON] turns,
    every candidate with the same keys (common random numbers). Returns
    (card, key)."""
    n = st[S_N]
    base_card, key = choose_card(st, opts, seat, legal, POL_HEURISTIC, prm, key)
    k = popcount(legal)
    cands = np.empty(k, np.int64)
    baseline = 0
    for i in range(k):
        cands[i] = nth_card(legal, i)
        if cands[i] == base_card:
            baseline = i
    worlds = max(2, int(prm[P_PLAYOUTS]) // k)
    horizon = int(prm[P_HORIZON])
    cap = opts[O_TURN_CAP]
    if horizon > 0:
        cap = min(cap, horizon)
    pids = np.full(n, POL_HEURISTIC, np.int64)
    rprm = np.empty((n, N_PARAMS), np.float64)
    for s in range(n):
        rprm[s] = prm
    world = np.empty(S_SIZE, np.int64)
    sim = np.empty(S_SIZE, np.int64)
    rec = np.zeros(STAGE_COLS, np.int64)
    wkeys = np.empty(n, np.uint64)
    pkeys = np.empty(n, np.uint64)
    values = np.empty(k)
    diffs = np.zeros(k)
    diff_squares = np.zeros(k)
    for _ in range(worlds):
        key = determinize(st, seat, world, key)
        for s in range(n):
            wkeys[s], key = next_u64(key)
        wchance, key = next_u64(key)
        for i in range(k):
            sim[:] = world
            pkeys[:] = wkeys
            ckey = wchance
            lay_cards(sim, opts, pids, rprm, pkeys, rec, legal, braquet, sprint, cands[i])
            turns = 0
            status = stage_status(sim, opts)
            while status == 0 and turns < cap:
                next_turn(sim)
                ckey = play_turn(sim, opts, pids, rprm, ckey, pkeys, rec)
                turns += 1
                status = stage_status(sim, opts)
            values[i] = playout_value(sim, opts, seat, rec)
        for i in range(k):
            d = values[i] - values[baseline]
            diffs[i] += d
            diff_squares[i] += d * d
    return cands[confident_best(diffs, diff_squares, worlds, baseline, prm[P_CONFIDENCE])], key


@allocation_free
def play_turn_top(st, opts, pids, prm, ckey, pkeys, rec, lookahead):
    """The turn of st[S_TURN] in the game itself: as play_turn, but a
    look-ahead seat with a choice of first card decides it by playouts.
    `lookahead`: (lookahead_card,) from lookahead_for."""
    ckey, legal, braquet, sprint = turn_start(st, opts, pids, prm, ckey, pkeys, rec)
    if legal != 0:
        t = st[S_TURN]
        first = -1
        if pids[t] == POL_LOOKAHEAD and popcount(legal) > 1:
            first, k = lookahead[0](st, opts, t, legal, braquet, sprint, prm[t], pkeys[t])
            pkeys[t] = k
        lay_cards(st, opts, pids, prm, pkeys, rec, legal, braquet, sprint, first)
    return ckey


@allocation_free
def placed_before(st, x, y, winner, secs, cards):
    """Does seat x place strictly before seat y in the stage? The winner, then
    fewer seconds of cards left, fewer cards, then the later to empty their
    hand (only Voiture balai has riders who emptied and did not win: its aim
    is to empty last). Seat order is not counted here."""
    if x == winner or y == winner:
        return x == winner and y != winner
    if secs[x] != secs[y]:
        return secs[x] < secs[y]
    if cards[x] != cards[y]:
        return cards[x] < cards[y]
    return st[S_FINISH + x] > st[S_FINISH + y]


@allocating
def score_stage(st, opts, rec, status):
    """Stage times, bonuses, side points and cumulative times; returns the winner."""
    n = st[S_N]
    prof = st[S_PROFILE]
    picker = st[S_PICKER]
    secs = np.zeros(MAX_P, np.int64)
    cards = np.zeros(MAX_P, np.int64)
    for s in range(n):
        secs[s] = hand_secs(opts, st[S_HAND + s])
        cards[s] = popcount(st[S_HAND + s])
    stime = secs.copy()
    winner = -1
    if prof == BALAI:
        nfin = st[S_NFIN]
        for s in range(n):
            if nfin >= 1 and st[S_FINISH + s] == nfin:
                stime[s] -= opts[O_BALAI_LAST]
                winner = s
            elif nfin >= 2 and st[S_FINISH + s] == nfin - 1:
                stime[s] -= opts[O_BALAI_SECOND]
    # Placing order (placed_before), ties in seat order: from the picker, or
    # from seat 0 (O_SEAT_ORDER).
    first = picker if opts[O_SEAT_ORDER] == 0 else 0
    order = np.empty(n, np.int64)
    for j in range(n):
        order[j] = (first + j) % n
    for s in range(n):
        if prof != BALAI and st[S_FINISH + s] == 1:
            winner = s
    for a in range(1, n):  # insertion sort: stable, keeps the seat order on ties
        b = a
        while b > 0 and placed_before(st, order[b], order[b - 1], winner, secs, cards):
            order[b], order[b - 1] = order[b - 1], order[b]
            b -= 1
    if prof != BALAI:
        if winner < 0 and status == 2 and opts[O_BLOCKED_WINNER] == 1:
            winner = order[0]
        if winner >= 0:
            stime[winner] -= opts[O_WIN_BONUS]
    # Stage place: 1 + riders placed strictly before; riders level on
    # everything but seat order share it (the GC tie-break, O_GC_TIE).
    place = 1
    for j in range(n):
        if j > 0 and placed_before(st, order[j - 1], order[j], winner, secs, cards):
            place = j + 1
        rec[seat_col(C_SEAT, F_PLACE, order[j])] = place
    if prof == MONTAGNE or prof == PLAINE:
        side = S_MOUNT if prof == MONTAGNE else S_SPRINT
        for j in range(min(3, n)):
            pts = (5, 3, 1)[j]
            st[side + order[j]] += pts
            rec[seat_col(C_SEAT, F_SIDE, order[j])] = pts
    for s in range(n):
        st[S_TIME + s] += stime[s]
        rec[seat_col(C_SEAT, F_TIME, s)] = stime[s]
        rec[seat_col(C_SEAT, F_CUM, s)] = st[S_TIME + s]
        rec[seat_col(C_SEAT, F_CARDS, s)] = cards[s]
        rec[seat_col(C_SEAT, F_SECS, s)] = secs[s]
        rec[seat_col(C_SEAT, F_FINISH, s)] = st[S_FINISH + s]
        rec[seat_col(C_SEAT, F_HAND, s)] = st[S_HAND + s]
    return winner


@allocation_free
def play_stage(st, opts, pids, prm, skey, pkeys, rec, lookahead):
    """One stage from the pick to the scoring; `skey` is this stage's chance key."""
    n = st[S_N]
    picker = st[S_STAGE] % n
    st[S_PICKER] = picker
    rec[:] = 0
    for s in range(MAX_P):
        for f in (F_CREV, F_VITA, F_BRAQ):
            rec[seat_col(C_SEAT, f, s)] = -1
    if opts[O_PICK_AFTER_DEAL] == 1:
        skey = deal(st, skey)
    else:
        for s in range(n):
            st[S_HAND + s] = 0
    start_stage(st, opts, -1, 0)
    profile, k = choose_profile(st, opts, picker, pids[picker], prm[picker], pkeys[picker])
    pkeys[picker] = k
    st[S_STAGECARDS + picker] &= ~(1 << profile)
    if opts[O_PICK_AFTER_DEAL] == 0:
        skey = deal(st, skey)
    start_stage(st, opts, profile, profile_start(st, opts, profile))
    if profile == CLM:
        start, k = choose_start(st, opts, picker, pids[picker], prm[picker], pkeys[picker])
        st[S_START] = start
        pkeys[picker] = k
    for s in range(n):
        rec[seat_col(C_SEAT, F_DEALT, s)] = st[S_HAND + s]
    st[S_TURN] = picker
    turns = 0
    status = stage_status(st, opts)
    while status == 0:
        if turns >= opts[O_TURN_CAP]:
            rec[C_CAPPED] = 1
            break
        skey = play_turn_top(st, opts, pids, prm, skey, pkeys, rec, lookahead)
        turns += 1
        status = stage_status(st, opts)
        if status == 0:
            next_turn(st)
    rec[C_STAGE] = st[S_STAGE]
    rec[C_PICKER] = picker
    rec[C_PROFILE] = profile
    rec[C_START] = st[S_START]
    rec[C_BLOCKED] = status == 2
    rec[C_TURNS] = turns
    for col in range(4):
        rec[C_COLN + col] = st[S_COLN + col]
        rec[C_LO + col] = st[S_LO + col]
        rec[C_HI + col] = st[S_HI + col]
    rec[C_WINNER] = score_stage(st, opts, rec, status)


@allocation_free
def gc_ahead(st, opts, srows, x, y):
    """Is seat x ahead of seat y in the general classification after the
    stages in srows (st[S_NSTAGES] of them)? Less cumulative time; on a tie
    with O_GC_TIE, a lower sum of stage places, then a better place in the
    last stage."""
    if st[S_TIME + x] != st[S_TIME + y] or opts[O_GC_TIE] == 0:
        return st[S_TIME + x] < st[S_TIME + y]
    px, py = 0, 0
    for g in range(st[S_NSTAGES]):
        px += srows[g, seat_col(C_SEAT, F_PLACE, x)]
        py += srows[g, seat_col(C_SEAT, F_PLACE, y)]
    if px != py:
        return px < py
    last = st[S_NSTAGES] - 1
    return srows[last, seat_col(C_SEAT, F_PLACE, x)] < srows[last, seat_col(C_SEAT, F_PLACE, y)]


@allocation_free
def classify_race(st, opts, srows, rrow):
    """The race row's times, ranks, side points and winner (-1: a first place
    shared by riders level in the general classification)."""
    n = st[S_N]
    leaders = 0
    for s in range(n):
        rank = 1
        for o in range(n):
            if gc_ahead(st, opts, srows, o, s):
                rank += 1
        rrow[seat_col(R_SEAT, RF_TIME, s)] = st[S_TIME + s]
        rrow[seat_col(R_SEAT, RF_RANK, s)] = rank
        rrow[seat_col(R_SEAT, RF_MOUNT, s)] = st[S_MOUNT + s]
        rrow[seat_col(R_SEAT, RF_SPRINT, s)] = st[S_SPRINT + s]
        if rank == 1:
            leaders += 1
            rrow[R_WINNER] = s
    if leaders > 1:
        rrow[R_WINNER] = -1


@allocation_free
def play_race(st, n, opts, pids, prm, ckey, pkeys, rrow, srows, lookahead):
    """All stages of one race; fills its race row and stage rows."""
    init_race(st, n, opts)
    for g in range(st[S_NSTAGES]):
        st[S_STAGE] = g
        # A key per stage: the deals do not depend on draws made earlier.
        play_stage(st, opts, pids, prm, game_key(ckey, g, STREAM_CHANCE), pkeys, srows[g], lookahead)
    rrow[:] = 0
    classify_race(st, opts, srows, rrow)
    for g in range(st[S_NSTAGES]):
        rrow[R_CAPPED] += srows[g, C_CAPPED]
        rrow[R_BLOCKED] += srows[g, C_BLOCKED]


@njit(parallel=True, cache=True)
def run_batch(seed, first_race, n, opts, pids, prm, race_out, stage_out, lookahead):
    """Play races first_race .. first_race + len(race_out) - 1.

    pids (n,) int64 and prm (n, N_PARAMS) float64 are the policy slots; with
    O_ROTATE seat s of race g plays slot (s + g) % n. race_out (R, RACE_COLS)
    and stage_out (R * stages, STAGE_COLS) int64; race i owns row i and rows
    i * stages .. (i + 1) * stages - 1. lookahead: lookahead_for(pids)."""
    n_stages = stages_per_race(n, opts)
    for i in prange(race_out.shape[0]):
        g = first_race + i
        rot = g % n if opts[O_ROTATE] == 1 else 0
        seat_pids = np.empty(n, np.int64)
        seat_prm = np.empty((n, N_PARAMS), np.float64)
        pkeys = np.empty(n, np.uint64)
        for s in range(n):
            slot = (s + rot) % n
            seat_pids[s] = pids[slot]
            for j in range(N_PARAMS):  # element by element: a row assignment compiles seconds of error formatting
                seat_prm[s, j] = prm[slot, j]
            pkeys[s] = game_key(seed, g, STREAM_POLICY_BASE + s)
        st = np.zeros(S_SIZE, np.int64)
        srows = stage_out[i * n_stages:(i + 1) * n_stages]
        play_race(st, n, opts, seat_pids, seat_prm, game_key(seed, g, STREAM_CHANCE),
                  pkeys, race_out[i], srows, lookahead)
        for s in range(n):
            race_out[i, seat_col(R_SEAT, RF_SLOT, s)] = (s + rot) % n
            for k in range(n_stages):
                srows[k, seat_col(C_SEAT, F_SLOT, s)] = (s + rot) % n


# ---- the look-ahead as an optional part (kernels/jit.py) ------------------------
# A run without a look-ahead seat compiles the kernel without it (a third of
# the kernel's compile).
LOOKAHEAD_CARD_SIGNATURE = types.Tuple((types.int64, types.uint64))(
    types.int64[::1], types.int64[::1], types.int64, types.int64, types.boolean, types.boolean,
    types.float64[::1], types.uint64)


@njit(LOOKAHEAD_CARD_SIGNATURE, cache=True, _nrt=False)
def no_lookahead_card(st, opts, seat, legal, braquet, sprint, prm, key):
    """Holds the look-ahead's place when no seat plays it; never called."""
    return -1, key


def lookahead_card_call(st, opts, seat, legal, braquet, sprint, prm, key):
    """lookahead_card, compiled to LOOKAHEAD_CARD_SIGNATURE on first use."""
    return lookahead_card(st, opts, seat, legal, braquet, sprint, prm, key)


_lookahead_argument = optional_part(LOOKAHEAD_CARD_SIGNATURE, lookahead_card_call, no_lookahead_card)


def lookahead_for(pids) -> tuple:
    """The kernels' `lookahead` argument for policy slots `pids`."""
    return _lookahead_argument(POL_LOOKAHEAD in pids)
