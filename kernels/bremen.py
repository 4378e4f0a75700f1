"""Bremer Stadtmusikanten: Numba kernels (rules, policies, batch driver).

Rules: ../shared/rules/bremer_stadtmusikanten.md; decisions: docs/bremen.md.

Animals are numbered a = 4 * colour + (size - 1): rooster 1, cat 2, dog 3,
donkey 4. A field holds at most one animal of each size and the largest is
always at the bottom, so a stack is fully described by which animal of each
size stands on the field: the occupancy table below.

State: one int32 row per game.

    0         16        32     36 37 38 39 40     44     48     52     56 ...     S_OCC
    | POS[16] | HOME[16]| OWNER | R| S| F| P| PTS | STORM| BONUS| CHASE| counters | OCC[4 * n_fields]
      field     home      seat   robber  |  |   per seat points and their sources
      of a      field     of     field   |  nplayers
                of a      colour        seat on turn, first seat
                          (-1 = neutral)

    counters: S_TURNS, S_ROLLS, S_ROBBER_MOVES, S_SENT_ROBBER, S_SENT_KNOCK,
              S_EXTRA_ROLLS, S_CHAIN_MAX, S_STORMS, S_CHASES, S_WINNER, S_CAPPED
    S_TURBULENT: 0 normal homes, 1 the turbulent variant, 2 turbulent with
    O_TURBULENT_HOME; S_CORNER[4]: start field of colour c (both set by
    init_game: sending home needs them); S_UNFIT: bitmask of the animals whose
    last return broke the turbulent start rule because no placement kept it;
    S_POLICY_ERROR: 1 + the seat whose user policy answered with an index
    that is not a legal move (the game stops there), else 0
    OCC[4 * f + size - 1] = animal of that size on field f, or -1.

Board tables (from kernels/bremen_board.py): kind[f] (K_*; K_START + colour
for a start field), adj[f, j] neighbours (padded -1), deg[f], dist[f] (steps
to the house), binfo (B_HOUSE, B_START + colour, B_N).

Moves are packed int64: slot << 24 | animal << 16 | destination field.
Random keys are passed by value and returned; they never live in the state.

User policies (USER_POLICY_SIGNATURE, docs/bremen.md) choose a seat's moves;
its robber paths are greedy's, with the row the seat is given.
"""
import numpy as np
from numba import njit, prange, types

from .jit import allocating, allocation_free, optional_part
from .rng import STREAM_CHANCE, STREAM_POLICY_BASE, branch, confident_best, game_key, next_u64, randint, uniform
from .user_policy import read_only, user_policy_tuple

# --- state offsets ---------------------------------------------------------
S_POS = 0
S_HOME = 16
S_OWNER = 32
S_ROBBER = 36
S_SEAT = 37
S_FIRST_SEAT = 38
S_NPLAYERS = 39
S_POINTS = 40
S_STORM = 44
S_BONUS = 48
S_CHASE = 52
S_TURNS = 56
S_ROLLS = 57
S_ROBBER_MOVES = 58
S_SENT_ROBBER = 59
S_SENT_KNOCK = 60
S_EXTRA_ROLLS = 61
S_CHAIN_MAX = 62
S_STORMS = 63
S_CHASES = 64
S_WINNER = 65
S_CAPPED = 66
S_TURBULENT = 67   # 1: turbulent variant (homes are re-chosen on return); 2: with O_TURBULENT_HOME
S_CORNER = 68      # start field of colour c (4 entries)
S_UNFIT = 72       # animals placed by a turbulent return that could not keep the start rule (bits)
S_POLICY_ERROR = 73  # 1 + seat whose user policy answered with no legal move, else 0
S_OCC = 74

# --- board tables ------------------------------------------------------------
K_ROAD = 0
K_FOREST = 1
K_BRIDGE = 2
K_HOUSE = 3
K_START = 4  # + colour
B_HOUSE = 0
B_START = 1  # + colour
B_N = 5
B_LEN = 6

# --- rule options (int64 row) ------------------------------------------------
O_HARDER = 0          # extra roll only for climbing without sending anyone home
O_TURBULENT = 1       # mixed start stacks
O_TIE = 2             # 0: the player on turn counts as last on turn; 1: counts first
O_FOREIGN_STACK = 3   # 0: a moved foreign animal must sit directly on an own one
O_BRIDGE_STACK = 4    # 1: a single animal may climb onto a larger one on a bridge
O_TARGET = 5          # points to win
O_MAX_TURNS = 6       # turn cap
O_ROBBER_CLOSED = 7   # 1: only a full pyramid (which chases it) may land on the robber's field
O_HARDER_ROLL = 8     # harder variant judged per roll (1: no move of the roll sent anyone home) or per move (0)
O_NEUTRAL_TO_MOVER = 9  # 1: a stormed neutral animal's point goes to the mover (four points every storm)
O_FIRST_TO_TARGET = 10  # 1: players reaching the target at the same moment: the last on turn wins, not the most points
O_TURBULENT_HOME = 11   # 1: a turbulent return that cannot keep the start rule keeps the animals' homes first
O_ROBBER_FOREST_STOP = 12  # 1: the robber's move ends on a forest field only (bridges and house only passed)
O_BOTH_DICE_FREE = 13  # 1: any first move, whether or not a second can follow (0: both dice when possible)
O_ONE_DIE_LARGER = 14  # 1: when no first move lets both dice be used, the larger die if it has a move
N_OPT = 15

# --- policies ------------------------------------------------------------------
POL_RANDOM = 0
POL_GREEDY = 1
POL_LOOKAHEAD = 2
POL_USER = 16          # user policy k (USER_POLICY_SIGNATURE) has id POL_USER + k
MAX_USER_POLICIES = 4  # the user-policy tuple always has this length: one compiled kernel
# greedy parameter row
P_STORM = 0      # per point the storm brings the mover
P_CHASE = 1      # chasing the robber
P_CLIMB = 2      # sitting on top (another roll)
P_KNOCK = 3      # per size unit of a foreign animal sent home
P_OWN_HOME = 4   # per size unit of an own animal sent home (a cost)
P_PROGRESS = 5   # per own animal carried one step nearer the house
P_BUILD = 6      # per animal in a stack built on an own donkey
P_LEADER = 7     # extra weight on the leader's animals (moves and robber)
P_NOISE = 8      # uniform tie-breaking noise
P_PLAYOUTS = 9   # look-ahead: playouts per decision (divided among the legal moves)
P_HORIZON = 10   # look-ahead: further turns per playout (0 = to the end of the game)
P_CONFIDENCE = 11  # look-ahead: standard errors another move must beat greedy's by
N_PARAM = 12

# --- records (one int32 row per game) ----------------------------------------
# (no game number: an int32 would cut numbers from 2**31 on; the caller knows them)
R_WINNER = 0
R_CAPPED = 1
R_TURNS = 2
R_ROLLS = 3
R_ROBBER_MOVES = 4
R_SENT_ROBBER = 5
R_SENT_KNOCK = 6
R_EXTRA_ROLLS = 7
R_CHAIN_MAX = 8
R_STORMS = 9
R_CHASES = 10
R_FIRST_SEAT = 11
R_POINTS = 12    # 4 per seat block: points, storm, robber bonus, chase
R_LEAD_CHANGES = R_POINTS + 16  # times the sole points leader changed (checked after every turn)
R_MAX_DEFICIT = R_LEAD_CHANGES + 1  # per seat: largest (leader's points - own) after any turn
R_PROGRESS = R_MAX_DEFICIT + 4      # per seat block of N_PROGRESS: points after PROGRESS_ROUNDS[k]
# Rounds (one turn per player, from the starting player) after which every
# seat's points are recorded; after the game's end its final points carry on.
PROGRESS_ROUNDS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 50)
N_PROGRESS = len(PROGRESS_ROUNDS)
R_POLICY_ERROR = R_PROGRESS + 4 * N_PROGRESS  # S_POLICY_ERROR at the game's end
N_REC = R_POLICY_ERROR + 1

# apply_move effect bits; animals sent home are counted from bit 8 up
E_CLIMB = 1
E_STORM = 2
E_CHASE = 4


@allocation_free
def owner_of(state, a):
    return state[S_OWNER + (a >> 2)]


@allocation_free
def rebuild_occ(state, n_fields):
    """Recompute the occupancy table from the animals' positions."""
    for i in range(4 * n_fields):
        state[S_OCC + i] = -1
    for a in range(16):
        state[S_OCC + 4 * state[S_POS + a] + (a & 3)] = a


@allocation_free
def _neighbour(state, h, a, step):
    """The animal directly below (step 1) or above (step -1) animal a's size
    on field h, or -1."""
    t = (a & 3) + step
    while 0 <= t < 4:
        if state[S_OCC + 4 * h + t] >= 0:
            return state[S_OCC + 4 * h + t]
        t += step
    return -1


@allocation_free
def _breaks_below(state, a, c):
    """Turbulent start rule, animal a on the start field of colour c: is it
    the bottom animal and of colour c, or directly on one of its own colour?"""
    b = _neighbour(state, state[S_CORNER + c], a, 1)
    return (a >> 2) == (c if b < 0 else b >> 2)


@allocation_free
def _breaks_above(state, a, c):
    """Turbulent start rule: does an animal of a's colour sit directly on a?"""
    u = _neighbour(state, state[S_CORNER + c], a, -1)
    return u >= 0 and (u >> 2) == (a >> 2)


@allocation_free
def _count_bits(x):
    n = 0
    while x:
        n += x & 1
        x >>= 1
    return n


@allocation_free
def _start_colour(state, h):
    """The colour whose start field h is."""
    for c in range(4):
        if state[S_CORNER + c] == h:
            return c
    return -1


@allocation_free
def _placement_key(breaks, away, homes_first):
    """Order of turbulent placements, lowest best: fewest rule breaks, then
    fewest animals off their homes; homes_first (O_TURBULENT_HOME): keeping
    the rule, then fewest off their homes, then fewest breaks."""
    if homes_first:
        return min(breaks, 1) * 4096 + away * 64 + breaks
    return breaks * 64 + away


@allocation_free
def _group_breaks(state, group):
    """Turbulent start rule breaks of the animals of bitmask `group`, each on
    a start field: bottom animals of the field's colour, and pairs of one
    colour, one directly on the other (a pair counted once)."""
    n = 0
    for a in range(16):
        if (group >> a) & 1:
            h = state[S_POS + a]
            n += _breaks_below(state, a, _start_colour(state, h))
            u = _neighbour(state, h, a, -1)
            if u >= 0 and (u >> 2) == (a >> 2) and not (group >> u) & 1:
                n += 1
    return n


@allocation_free
def turbulent_return(state, group):
    """Turbulent variant: put the animals of bitmask `group` (not empty),
    lifted off the board, back on start fields together, so that the start
    rule holds: no start field's bottom animal is of its colour and no animal
    sits directly on one of its own colour. An animal may go to any start field where no
    animal of its size stands (a field holds one of each size); one placed
    off its home swaps homes with the animal of its size whose home that
    field was, so every start field stays home to one of each size.

    Every placement is searched (depth first, largest animals first; an
    animal's home first, then the other start fields in colour order after
    the home's); the best by _placement_key is played, the first found among
    equals. The animals of a placement that breaks the rule (when none keeps
    it) are marked in S_UNFIT.
    """
    homes_first = state[S_TURBULENT] == 2
    order = 0  # the animals, largest first, 4 bits each
    k = 0
    for s in range(3, -1, -1):
        for c in range(4):
            if (group >> (4 * c + s)) & 1:
                order |= (4 * c + s) << (4 * k)
                k += 1
    tries = 0  # per depth, 3 bits: the next start field to try (0: the home; 4: all tried)
    below = 0  # per depth, 1 bit: its animal breaks the rule with the animal below it
    away = 0   # per depth, 1 bit: its animal is off its home
    best = 0   # the best placement: colour of the start field per depth, 2 bits each
    best_key = 1 << 30
    depth = 0
    while depth >= 0 and best_key > 0:
        a = (order >> (4 * depth)) & 15
        j = (tries >> (3 * depth)) & 7
        if j == 4:  # every start field tried: back to the animal before, lifted again
            depth -= 1
            if depth >= 0:
                a = (order >> (4 * depth)) & 15
                state[S_OCC + 4 * state[S_POS + a] + (a & 3)] = -1
            continue
        tries += 1 << (3 * depth)
        c = (_start_colour(state, state[S_HOME + a]) + j) & 3
        h = state[S_CORNER + c]
        if state[S_OCC + 4 * h + (a & 3)] >= 0:
            continue
        state[S_OCC + 4 * h + (a & 3)] = a
        state[S_POS + a] = h
        bit = 1 << depth
        below = (below & ~bit) | (bit if _breaks_below(state, a, c) else 0)
        away = (away & ~bit) | (bit if j > 0 else 0)
        # the breaks with the animals below are final (all larger ones are placed): a bound
        key = _placement_key(_count_bits(below & (2 * bit - 1)), _count_bits(away & (2 * bit - 1)), homes_first)
        if key < best_key:
            if depth < k - 1:
                depth += 1
                tries &= ~(7 << (3 * depth))
                continue  # this animal stays while the smaller ones are placed
            key = _placement_key(_group_breaks(state, group), _count_bits(away), homes_first)
            if key < best_key:
                best_key = key
                best = 0
                for d in range(k):
                    b = (order >> (4 * d)) & 15
                    best |= _start_colour(state, state[S_POS + b]) << (2 * d)
        state[S_OCC + 4 * h + (a & 3)] = -1
    for d in range(k):  # lift what the search left placed, then play the best
        a = (order >> (4 * d)) & 15
        if state[S_OCC + 4 * state[S_POS + a] + (a & 3)] == a:
            state[S_OCC + 4 * state[S_POS + a] + (a & 3)] = -1
    for d in range(k):
        a = (order >> (4 * d)) & 15
        h = state[S_CORNER + ((best >> (2 * d)) & 3)]
        state[S_OCC + 4 * h + (a & 3)] = a
        state[S_POS + a] = h
        old = state[S_HOME + a]
        if old != h:
            for b in range(a & 3, 16, 4):
                if state[S_HOME + b] == h:
                    state[S_HOME + b] = old
            state[S_HOME + a] = h
    for d in range(k):
        a = (order >> (4 * d)) & 15
        c = _start_colour(state, state[S_POS + a])
        unfit = _breaks_below(state, a, c) or _breaks_above(state, a, c)
        state[S_UNFIT] = (state[S_UNFIT] & ~(1 << a)) | ((1 << a) if unfit else 0)


@allocation_free
def send_home(state, a):
    """Normal game: put animal a back on its home field; return how many
    animals moved. An animal of the same size standing on that home (a
    visitor: every home has one animal of each size) is sent to its own
    home in turn."""
    moved = 0
    while a >= 0:
        s = a & 3
        old = state[S_POS + a]
        if state[S_OCC + 4 * old + s] == a:
            state[S_OCC + 4 * old + s] = -1
        h = state[S_HOME + a]
        b = state[S_OCC + 4 * h + s]
        state[S_POS + a] = h
        state[S_OCC + 4 * h + s] = a
        moved += 1
        a = b if b != a else -1
    return moved


@allocation_free
def send_group_home(state, group):
    """Send the animals of bitmask `group` home together (a knock, a robber
    move, a storm); return how many animals moved. Normal game: largest
    first, each by send_home. Turbulent variant: lifted off the board, then
    placed together by turbulent_return."""
    moved = 0
    if group == 0:  # most landings knock nobody: first_moves tries every one
        return moved
    for s in range(3, -1, -1):
        for c in range(4):
            a = 4 * c + s
            if (group >> a) & 1:
                if state[S_TURBULENT] == 0:
                    moved += send_home(state, a)
                else:
                    f = state[S_POS + a]
                    if state[S_OCC + 4 * f + s] == a:
                        state[S_OCC + 4 * f + s] = -1
                    moved += 1
    if state[S_TURBULENT] > 0:
        turbulent_return(state, group)
    return moved


@allocation_free
def state_errors(state, kind, n_fields):
    """0 if the state is consistent, else a code naming the first broken invariant.

    1: an animal's position and the occupancy table disagree; 2: the table
    lists more or fewer than 16 animals; 3: an animal stands on the house;
    4: the robber is off its area; 5: points differ from the sum of sources;
    6: the start fields are not each home to one animal of each size;
    7 (turbulent variant, between turns): a start field's bottom animal is of
    its colour, or an animal sits directly on one of its own colour, and
    neither is marked in S_UNFIT (put there by a return no placement could
    keep the rule for). The stack rules (one animal per size, largest at the
    bottom) hold by the layout of the occupancy table itself.
    """
    listed = 0
    for f in range(n_fields):
        for t in range(4):
            b = state[S_OCC + 4 * f + t]
            if b >= 0:
                listed += 1
                if (b & 3) != t or state[S_POS + b] != f:
                    return 1
                if kind[f] == K_HOUSE:
                    return 3
    if listed != 16:
        return 2
    k = kind[state[S_ROBBER]]
    if k != K_FOREST and k != K_BRIDGE and k != K_HOUSE:
        return 4
    for o in range(4):
        if state[S_POINTS + o] != state[S_STORM + o] + state[S_BONUS + o] + state[S_CHASE + o]:
            return 5
    for c in range(4):
        for t in range(4):
            homed = 0
            for b in range(t, 16, 4):
                if state[S_HOME + b] == state[S_CORNER + c]:
                    homed += 1
            if homed != 1:
                return 6
    if state[S_TURBULENT] > 0:
        for c in range(4):
            lower = -1
            for t in range(3, -1, -1):
                b = state[S_OCC + 4 * state[S_CORNER + c] + t]
                if b >= 0:
                    unfit = (state[S_UNFIT] >> b) & 1 == 1 or (lower >= 0 and (state[S_UNFIT] >> lower) & 1 == 1)
                    if (b >> 2) == (c if lower < 0 else lower >> 2) and not unfit:
                        return 7
                    lower = b
    return 0


@allocating
def init_game(state, nplayers, binfo, opts, key):
    """Set up a game: stacks on the start fields, robber home, first seat drawn."""
    state[:] = 0
    for c in range(4):
        if nplayers == 4:
            state[S_OWNER + c] = c
        elif nplayers == 2:
            state[S_OWNER + c] = c % 2  # diagonally opposite corners
        else:
            state[S_OWNER + c] = c if c < 3 else -1  # colour 3 is neutral
    if opts[O_TURBULENT] == 1:
        # Layer by layer from the donkeys up: a random permutation of colours
        # per size, redrawn until no donkey is on its own corner and nobody
        # sits directly on its own colour. Every layer has the same number of
        # valid choices, so this draws uniformly from all valid set-ups.
        below = np.arange(4)  # "colour below" of the donkey layer: the corner
        perm = np.empty(4, np.int64)
        for s in range(3, -1, -1):
            ok = False
            while not ok:
                for i in range(4):
                    perm[i] = i
                for i in range(3, 0, -1):
                    j, key = randint(key, i + 1)
                    t = perm[i]
                    perm[i] = perm[j]
                    perm[j] = t
                ok = True
                for corner in range(4):
                    if perm[corner] == below[corner]:
                        ok = False
            for corner in range(4):
                state[S_HOME + 4 * perm[corner] + s] = binfo[B_START + corner]
                below[corner] = perm[corner]
    else:
        for a in range(16):
            state[S_HOME + a] = binfo[B_START + (a >> 2)]
    for a in range(16):
        state[S_POS + a] = state[S_HOME + a]
    rebuild_occ(state, binfo[B_N])
    state[S_TURBULENT] = opts[O_TURBULENT] * (1 + opts[O_TURBULENT_HOME])
    for c in range(4):
        state[S_CORNER + c] = binfo[B_START + c]
    state[S_ROBBER] = binfo[B_HOUSE]
    state[S_NPLAYERS] = nplayers
    first, key = randint(key, nplayers)
    state[S_SEAT] = first
    state[S_FIRST_SEAT] = first
    state[S_WINNER] = -1
    return key


@allocation_free
def unit_count(state, a):
    """Animal a plus the smaller animals riding on it."""
    base = S_OCC + 4 * state[S_POS + a]
    n = 1
    for t in range(a & 3):
        if state[base + t] >= 0:
            n += 1
    return n


@allocation_free
def _landing_ok(state, a, x, seat, first, own_animal, multi, kind, opts):
    """May animal a (moving with its riders) end its move on field x?"""
    s = a & 3
    base = S_OCC + 4 * x
    k = kind[x]
    if k == K_HOUSE:
        return s == 3 and multi == 4  # only a full pyramid storms the house
    if x == state[S_ROBBER] and opts[O_ROBBER_CLOSED] == 1 and not (s == 3 and multi == 4):
        return False
    below = -1  # the animal it would sit directly on
    for t in range(s + 1, 4):
        if state[base + t] >= 0:
            below = state[base + t]
            break
    if k == K_BRIDGE and below >= 0 and opts[O_BRIDGE_STACK] == 0:
        return False
    if k >= K_START:  # an own start field (foreign ones are never entered)
        if not first:
            return False
        for t in range(s + 1):
            b = state[base + t]
            if b >= 0 and (owner_of(state, b) == seat or state[S_HOME + b] == x):
                return False
    if not own_animal:
        if below < 0:
            return False
        if opts[O_FOREIGN_STACK] == 0:
            return owner_of(state, below) == seat
        for t in range(s + 1, 4):
            b = state[base + t]
            if b >= 0 and owner_of(state, b) == seat:
                return True
        return False
    return True


@allocation_free
def animal_moves(state, a, d, slot, seat, first, kind, adj, deg, opts, out, n, path, it, vis):
    """Append to out[n:] the moves of animal a by exactly d fields; return new n.

    Simple paths in any direction, jumping occupied fields; the house only as
    the last field; foreign start fields never; a carrying animal never onto
    nor off a bridge ("in geen geval"). Several paths to one field are one move.
    """
    start = state[S_POS + a]
    multi = unit_count(state, a)
    if multi > 1 and kind[start] == K_BRIDGE:
        return n  # leaving would carry its riders across (bridge_stack lets one climb on it there)
    own_animal = owner_of(state, a) == seat
    n0 = n
    depth = 0
    path[0] = start
    it[0] = 0
    vis[start] = 1
    while depth >= 0:
        f = path[depth]
        i = it[depth]
        if i >= deg[f]:
            vis[f] = 0
            depth -= 1
            continue
        it[depth] = i + 1
        x = adj[f, i]
        if vis[x] == 1:
            continue
        k = kind[x]
        if k >= K_START and state[S_OWNER + k - K_START] != seat:
            continue
        if k == K_BRIDGE and multi > 1:
            continue
        if depth + 1 == d:
            if _landing_ok(state, a, x, seat, first, own_animal, multi, kind, opts):
                m = (slot << 24) | (a << 16) | x
                dup = False
                for j in range(n0, n):
                    if out[j] == m:
                        dup = True
                if not dup:
                    out[n] = m
                    n += 1
            continue
        if k == K_HOUSE:
            continue
        depth += 1
        path[depth] = x
        it[depth] = 0
        vis[x] = 1
    return n


@allocation_free
def second_moves(state, d, slot, seat, first_animal, first_field, kind, adj, deg, opts, out, path, it, vis, limit):
    """Moves for the second die: another animal, never onto an own start field.

    If the first move landed on an own start field (first_field >= 0), the
    second must carry that animal off it again. Stops after `limit` moves.
    """
    n = 0
    for k in range(16):
        a = (k + 4 * seat) & 15  # own animals first: the look-ahead stops early
        if a == first_animal:
            continue
        if first_field >= 0 and not (state[S_POS + a] == first_field and (a & 3) > (first_animal & 3)):
            continue
        if (a & 3) == 3 and owner_of(state, a) != seat:
            continue  # a foreign donkey can never sit on anything
        n = animal_moves(state, a, d, slot, seat, False, kind, adj, deg, opts, out, n, path, it, vis)
        if n >= limit:
            break
    return n


@allocation_free
def apply_move(state, seat, m, binfo, opts):
    """Play packed move m for `seat`; return effect bits + 256 * animals sent home."""
    a = (m >> 16) & 0xFF
    g = m & 0xFFFF
    s = a & 3
    f = state[S_POS + a]
    house = binfo[B_HOUSE]
    if g == house:  # storm: score, then pyramid and robber go home
        for t in range(4):
            o = owner_of(state, state[S_OCC + 4 * f + t])
            if o < 0 and opts[O_NEUTRAL_TO_MOVER] == 1:
                o = seat
            if o >= 0:
                state[S_POINTS + o] += 1
                state[S_STORM + o] += 1
        if state[S_ROBBER] == house:
            o = owner_of(state, a)
            state[S_POINTS + o] += 1
            state[S_BONUS + o] += 1
        pyramid = 0
        for t in range(4):
            pyramid |= 1 << state[S_OCC + 4 * f + t]
        send_group_home(state, pyramid)  # not counted as "sent home"
        state[S_ROBBER] = house
        state[S_STORMS] += 1
        return E_STORM
    eff = 0
    if s == 3 and unit_count(state, a) == 4 and g == state[S_ROBBER]:
        state[S_ROBBER] = house
        state[S_POINTS + seat] += 1
        state[S_CHASE + seat] += 1
        state[S_CHASES] += 1
        eff |= E_CHASE
    for t in range(s + 1, 4):
        if state[S_OCC + 4 * g + t] >= 0:
            eff |= E_CLIMB
    # Lift the animals to be knocked off g (a bitmask), move the unit in,
    # then send them home: a chain of homes can never clash with it.
    knocked = 0
    for t in range(s + 1):
        b = state[S_OCC + 4 * g + t]
        if b >= 0:
            knocked |= 1 << b
            state[S_OCC + 4 * g + t] = -1
        b = state[S_OCC + 4 * f + t]
        if b >= 0:
            state[S_OCC + 4 * f + t] = -1
            state[S_OCC + 4 * g + t] = b
            state[S_POS + b] = g
    sent = send_group_home(state, knocked)
    state[S_SENT_KNOCK] += sent
    return eff | (sent << 8)


@njit(cache=True, inline="always")
def sole_leader(state, skip):
    """The seat other than `skip` (-1: none skipped) with the most points,
    or -1 when several share the most: the leader of the records, and with
    `skip` the mover, the opponent greedy weighs more. Breaking a tie by
    seat order would have every seat pick on the lowest one (at 0-0, all
    on seat 0): a seat bias of the policy that reports would show as one
    of the game."""
    leader = -1
    top = -1
    for o in range(state[S_NPLAYERS]):
        if o != skip:
            points = state[S_POINTS + o]
            if points > top:
                top = points
                leader = o
            elif points == top:
                leader = -1
    return leader


@allocation_free
def robber_paths(state, d, seat, mode, pick, params, kind, adj, deg, dist, path, it, vis, key, forest_end):
    """Enumerate the robber's simple paths of exactly d fields in its area
    (with forest_end, O_ROBBER_FOREST_STOP: those that end on a forest field).

    mode 0: return (number of paths, key). mode 1: play path number `pick`,
    sending home every animal on a field passed or stopped on; returns
    (animals sent home, key). mode 2: return (index of the greedy policy's
    best path, key), scoring the animals each path would send home.
    """
    start = state[S_ROBBER]
    count = 0
    best = -1
    best_score = -1e300
    leader = -1
    if mode == 2:
        leader = sole_leader(state, seat)
    depth = 0
    path[0] = start
    it[0] = 0
    vis[start] = 1
    while depth >= 0:
        f = path[depth]
        i = it[depth]
        if i >= deg[f] or depth == d:
            if depth == d and (forest_end == 0 or kind[f] == K_FOREST):
                if mode == 1 and count == pick:
                    victims = 0  # everyone on the path goes home together
                    for j in range(1, d + 1):
                        for t in range(4):
                            b = state[S_OCC + 4 * path[j] + t]
                            if b >= 0:
                                victims |= 1 << b
                    sent = send_group_home(state, victims)
                    for j in range(d + 1):
                        vis[path[j]] = 0
                    state[S_ROBBER] = path[d]
                    state[S_SENT_ROBBER] += sent
                    state[S_ROBBER_MOVES] += 1
                    return sent, key
                if mode == 2:
                    score = 0.0
                    for j in range(1, d + 1):
                        x = path[j]
                        for t in range(4):
                            b = state[S_OCC + 4 * x + t]
                            if b >= 0:
                                o = owner_of(state, b)
                                h = state[S_HOME + b]
                                value = (t + 1) * (1.0 + max(0, dist[h] - dist[x]) / max(1, dist[h]))
                                if o == seat:
                                    score -= params[P_OWN_HOME] * value
                                elif o >= 0:
                                    w = 1.0 + (params[P_LEADER] if o == leader else 0.0)
                                    score += params[P_KNOCK] * value * w
                                else:
                                    score += 0.5 * params[P_KNOCK] * value
                    u, key = uniform(key)
                    score += params[P_NOISE] * u
                    if score > best_score:
                        best_score = score
                        best = count
                count += 1
            vis[f] = 0
            depth -= 1
            continue
        it[depth] = i + 1
        x = adj[f, i]
        if vis[x] == 1:
            continue
        k = kind[x]
        if k != K_FOREST and k != K_BRIDGE and k != K_HOUSE:
            continue
        depth += 1
        path[depth] = x
        it[depth] = 0
        vis[x] = 1
    if mode == 2:
        return best, key
    return count, key


@allocation_free
def greedy_score(state, m, seat, params, dist, binfo):
    """One-step value of packed move m for the greedy family."""
    a = (m >> 16) & 0xFF
    g = m & 0xFFFF
    s = a & 3
    f = state[S_POS + a]
    house = binfo[B_HOUSE]
    own_in_unit = 0
    nu = 0
    for t in range(s + 1):
        b = state[S_OCC + 4 * f + t]
        if b >= 0:
            nu += 1
            if owner_of(state, b) == seat:
                own_in_unit += 1
    if g == house:
        gain = own_in_unit + (1 if state[S_ROBBER] == house else 0)
        return params[P_STORM] * gain
    leader = sole_leader(state, seat)
    score = 0.0
    if nu == 4 and g == state[S_ROBBER]:
        score += params[P_CHASE]
    bottom = a
    for t in range(s + 1, 4):
        b = state[S_OCC + 4 * g + t]
        if b >= 0:
            bottom = b
    if bottom != a:
        score += params[P_CLIMB]
    for t in range(s + 1):
        b = state[S_OCC + 4 * g + t]
        if b >= 0:
            o = owner_of(state, b)
            if o == seat:
                score -= params[P_OWN_HOME] * (t + 1)
            elif o >= 0:
                score += params[P_KNOCK] * (t + 1) * (1.0 + (params[P_LEADER] if o == leader else 0.0))
            else:
                score += 0.5 * params[P_KNOCK] * (t + 1)
    if owner_of(state, a) == seat:
        score += params[P_PROGRESS] * own_in_unit * (dist[f] - dist[g])
    if (bottom & 3) == 3 and owner_of(state, bottom) == seat:
        height = nu
        for t in range(s + 1, 4):
            if state[S_OCC + 4 * g + t] >= 0:
                height += 1
        score += params[P_BUILD] * height
    return score


@allocation_free
def choose(state, moves, n, seat, pol, params, dist, binfo, key, users):
    """The policy's pick among moves[:n]: returns (index, key); index -1 if
    a user policy (in the tuple `users`) answered with no legal move.
    `users` None (the look-ahead's playouts, greedy players only) compiles
    the user policies' branch out."""
    if pol == POL_RANDOM:
        return randint(key, n)
    if users is not None and pol >= POL_USER:
        # The user's key branches off the seat's, which advances one draw
        # whatever the user draws: the numbers of one decision are never
        # those of the next, and the seat's stream does not depend on them.
        index = users[pol - POL_USER](state, dist, moves, np.int64(n), np.int64(seat), params, branch(key))
        _, key = next_u64(key)
        return (index if 0 <= index < n else -1), key
    best = 0
    best_score = -1e300
    for j in range(n):
        u, key = uniform(key)
        sc = greedy_score(state, moves[j], seat, params, dist, binfo) + params[P_NOISE] * u
        if sc > best_score:
            best_score = sc
            best = j
    return best, key


@allocation_free
def first_moves(state, d0, d1, seat, kind, adj, deg, opts, binfo, out, tmp, buf, path, it, vis):
    """Legal first moves for dice (d0, d1), packed into out; return the count.

    Both dice must be used when possible: if some first move leaves a second
    move (or storms the house, which forfeits the second, or wins the game,
    which ends it), only such first moves are legal; with O_BOTH_DICE_FREE
    every first move is. If none leaves a second move, every first move is
    legal; with O_ONE_DIE_LARGER only the larger die's, if it has any.
    Landing on an own start field is legal only if a second move can carry
    it off. Every policy picks from these moves.
    """
    n = 0
    for slot in range(2):
        if slot == 1 and d1 == d0:
            break  # equal dice: one slot is enough
        d = d0 if slot == 0 else d1
        for a in range(16):
            if (a & 3) == 3 and owner_of(state, a) != seat:
                continue
            n = animal_moves(state, a, d, slot, seat, True, kind, adj, deg, opts, out, n, path, it, vis)
    full = 0
    kept = 0
    for j in range(n):
        m = out[j]
        slot = m >> 24
        a = (m >> 16) & 0xFF
        g = m & 0xFFFF
        own_start = kind[g] >= K_START
        for i in range(state.shape[0]):  # tmp[:] = state, which would need Numba's runtime
            tmp[i] = state[i]
        eff = apply_move(tmp, seat, m, binfo, opts)
        if eff & E_STORM or check_end(tmp, seat, opts):
            ok2 = True  # a storm forfeits the second move, and a move that wins the game ends the turn
        else:
            d = d1 if slot == 0 else d0
            ok2 = second_moves(tmp, d, 1 - slot, seat, a, g if own_start else -1,
                               kind, adj, deg, opts, buf, path, it, vis, 1) > 0
        if own_start and not ok2:
            continue
        if ok2:
            full += 1
            m |= 1 << 40  # flag: a second move follows
        out[kept] = m
        kept += 1
    any_first = full == 0 or opts[O_BOTH_DICE_FREE] == 1  # not only the flagged moves
    larger = -1  # only one die can be used: the slot of the larger, if it must be used
    if full == 0 and opts[O_ONE_DIE_LARGER] == 1 and d0 != d1:
        big = 0 if d0 > d1 else 1
        for j in range(kept):
            if out[j] >> 24 == big:  # no move is flagged: this is its slot
                larger = big
    n = 0
    for j in range(kept):
        m = out[j]
        if (any_first or m >> 40) and (larger < 0 or m >> 24 == larger):
            out[n] = m & ((1 << 40) - 1)
            n += 1
    return n


@allocation_free
def check_end(state, seat, opts):
    """Set the winner once someone has reached the target; return True then.

    Highest points among those at the target; equal points go to the player
    who was on turn last (O_TIE 0: the player on turn now; 1: the one before).
    With O_FIRST_TO_TARGET, every player at the target counts as equal: the
    one who was on turn last wins.
    """
    P = state[S_NPLAYERS]
    best = -1
    for o in range(P):
        if state[S_POINTS + o] >= opts[O_TARGET] and state[S_POINTS + o] > best:
            best = state[S_POINTS + o]
    if best < 0:
        return False
    if opts[O_FIRST_TO_TARGET] == 1:
        best = opts[O_TARGET]
    start = 0 if opts[O_TIE] == 0 else 1
    for back in range(start, start + P):
        o = (seat - back) % P
        if state[S_POINTS + o] >= best:
            state[S_WINNER] = o
            return True
    return True


@allocation_free
def _robber_turn(state, seat, d0, pol, prow, pkeys, kind, adj, deg, dist, path, it, vis, key, forest_end):
    """A robber move: the policy picks the path (the look-ahead and user
    policies as greedy, with the seat's parameter row)."""
    n, key = robber_paths(state, d0, seat, 0, 0, prow, kind, adj, deg, dist, path, it, vis, key, forest_end)
    if n > 0:
        pk = pkeys[seat]
        if pol == POL_RANDOM:
            pick, pk = randint(pk, n)
        else:
            pick, pk = robber_paths(state, d0, seat, 2, 0, prow, kind, adj, deg, dist, path, it, vis, pk, forest_end)
        pkeys[seat] = pk
        robber_paths(state, d0, seat, 1, pick, prow, kind, adj, deg, dist, path, it, vis, key, forest_end)
    return key


@allocation_free
def sim_turn(state, seat, stage, d_other, slot_other, first_animal, first_field, extra, chain,
             pols, params, pkeys, kind, adj, deg, dist, binfo, opts, moves, tmp, buf, path, it, vis, key, users):
    """Play (the rest of) a turn with the random, greedy and user policies
    (`users`); returns the chance key.

    stage 0: a fresh turn. stage 1: a roll's first move (first_animal, landing
    on first_field, -1 unless an own start field) was just played, `extra`
    its roll's extra-roll state (roll_earns); the second move with die
    d_other is pending.
    stage 2: the roll's moves are done. chain: extra rolls so far this turn.
    The look-ahead plays greedy here (its playouts use this function, with
    `users` None). A user policy's answer that is no legal move ends the
    turn with S_POLICY_ERROR set.
    """
    pol = pols[seat]
    prow = params[seat]
    while True:
        if stage == 0:
            state[S_ROLLS] += 1
            d0, key = randint(key, 6)
            d0 += 1
            r, key = randint(key, 6)  # face 0 of the robber die is the R
            if r == 0:
                return _robber_turn(state, seat, d0, pol, prow, pkeys, kind, adj, deg, dist, path, it, vis, key,
                                    opts[O_ROBBER_FOREST_STOP])
            d1 = r + 1
            n = first_moves(state, d0, d1, seat, kind, adj, deg, opts, binfo, moves, tmp, buf, path, it, vis)
            if n == 0:
                return key
            j, pk = choose(state, moves, n, seat, pol, prow, dist, binfo, pkeys[seat], users)
            pkeys[seat] = pk
            if j < 0:
                state[S_POLICY_ERROR] = seat + 1
                return key
            m = moves[j]
            eff = apply_move(state, seat, m, binfo, opts)
            if check_end(state, seat, opts) or eff & E_STORM:
                return key
            extra = roll_earns(0, eff, opts)
            slot = m >> 24
            first_animal = (m >> 16) & 0xFF
            g = m & 0xFFFF
            first_field = g if kind[g] >= K_START else -1
            d_other = d1 if slot == 0 else d0
            slot_other = 1 - slot
            stage = 1
        if stage == 1:
            n = second_moves(state, d_other, slot_other, seat, first_animal, first_field, kind, adj, deg, opts,
                             moves, path, it, vis, moves.shape[0])
            if n > 0:
                j, pk = choose(state, moves, n, seat, pol, prow, dist, binfo, pkeys[seat], users)
                pkeys[seat] = pk
                if j < 0:
                    state[S_POLICY_ERROR] = seat + 1
                    return key
                eff = apply_move(state, seat, moves[j], binfo, opts)
                if check_end(state, seat, opts) or eff & E_STORM:
                    return key
                extra = roll_earns(extra, eff, opts)
        if extra != 1:
            return key
        chain += 1
        state[S_EXTRA_ROLLS] += 1
        if chain > state[S_CHAIN_MAX]:
            state[S_CHAIN_MAX] = chain
        stage = 0
        extra = 0


@allocating
def playout_value(state, seat, dist):
    """A playout's end for `seat`: own points minus the best opponent's, +-5
    for a won or lost game, plus 0.02 per step the own animals are nearer the
    house than at home, minus the same for the most advanced opponent."""
    P = state[S_NPLAYERS]
    best = -1
    for o in range(P):
        if o != seat and state[S_POINTS + o] > best:
            best = state[S_POINTS + o]
    v = float(state[S_POINTS + seat] - best)
    w = state[S_WINNER]
    if w >= 0:
        v += 5.0 if w == seat else -5.0
    prog = np.zeros(4)
    for a in range(16):
        o = owner_of(state, a)
        if o >= 0:
            prog[o] += dist[state[S_HOME + a]] - dist[state[S_POS + a]]
    top = -1e300
    for o in range(P):
        if o != seat and prog[o] > top:
            top = prog[o]
    return v + 0.02 * (prog[seat] - top)


@allocating
def lookahead_choice(state, seat, moves, n, stage, d0, d1, extra, chain, prow,
                     kind, adj, deg, dist, binfo, opts, pkey):
    """The look-ahead policy's pick among moves[:n]: returns (index, key).

    Flat Monte Carlo with common random numbers: max(2, playouts // n) times,
    draw a chance key and four policy keys from the seat's policy key; for
    every move, play it in a copy of the state, finish the turn and play
    `horizon` further turns with greedy players (this row's greedy weights),
    all moves with the same keys; value each end with playout_value. Greedy's
    move is kept unless another beats it by more than `confidence` standard
    errors of the paired difference. stage 0: first moves for dice (d0, d1);
    stage 1: second moves, `extra` = the roll's extra-roll state after the first move (roll_earns).
    """
    base, pkey = choose(state, moves, n, seat, POL_GREEDY, prow, dist, binfo, pkey, None)
    if n == 1:
        return base, pkey
    P = state[S_NPLAYERS]
    nf = binfo[B_N]
    worlds = max(2, int(prow[P_PLAYOUTS]) // n)
    horizon = int(prow[P_HORIZON])
    rpols = np.full(4, POL_GREEDY, np.int64)
    rparams = np.empty((4, prow.shape[0]))
    for s in range(4):
        rparams[s] = prow
    keys0 = np.empty(4, np.uint64)
    rkeys = np.empty(4, np.uint64)
    scratch = np.empty_like(state)
    tmp = np.empty_like(state)
    mv = np.empty(32 * nf, np.int64)
    bf = np.empty(32 * nf, np.int64)
    path = np.empty(8, np.int64)
    it = np.empty(8, np.int64)
    vis = np.zeros(nf, np.int8)
    values = np.empty(n)
    diffs = np.zeros(n)
    diff_sq = np.zeros(n)
    for _ in range(worlds):
        for s in range(4):
            r, pkey = next_u64(pkey)
            keys0[s] = r
        chance0, pkey = next_u64(pkey)
        for i in range(n):
            scratch[:] = state
            rkeys[:] = keys0
            ck = chance0
            m = moves[i]
            eff = apply_move(scratch, seat, m, binfo, opts)
            if not check_end(scratch, seat, opts) and not (eff & E_STORM):
                if stage == 0:
                    slot = m >> 24
                    g = m & 0xFFFF
                    ck = sim_turn(scratch, seat, 1, d1 if slot == 0 else d0, 1 - slot, (m >> 16) & 0xFF,
                                  g if kind[g] >= K_START else -1, roll_earns(0, eff, opts), chain,
                                  rpols, rparams, rkeys, kind, adj, deg, dist, binfo, opts, mv, tmp, bf,
                                  path, it, vis, ck, None)
                else:
                    ck = sim_turn(scratch, seat, 2, 0, 0, -1, -1, roll_earns(extra, eff, opts), chain,
                                  rpols, rparams, rkeys, kind, adj, deg, dist, binfo, opts, mv, tmp, bf,
                                  path, it, vis, ck, None)
            s = seat
            t = 0
            while scratch[S_WINNER] < 0 and (horizon == 0 or t < horizon):
                if scratch[S_TURNS] >= opts[O_MAX_TURNS]:
                    break
                scratch[S_TURNS] += 1
                s = (s + 1) % P
                ck = sim_turn(scratch, s, 0, 0, 0, -1, -1, 0, 0, rpols, rparams, rkeys, kind, adj, deg,
                              dist, binfo, opts, mv, tmp, bf, path, it, vis, ck, None)
                t += 1
            values[i] = playout_value(scratch, seat, dist)
        for i in range(n):
            d = values[i] - values[base]
            diffs[i] += d
            diff_sq[i] += d * d
    return confident_best(diffs, diff_sq, worlds, base, prow[P_CONFIDENCE]), pkey


@allocation_free
def lookahead_turn(state, seat, pols, params, pkeys, kind, adj, deg, dist, binfo, opts,
                   moves, buf, tmp, path, it, vis, key):
    """A turn of a look-ahead seat: sim_turn with lookahead_choice for the moves."""
    prow = params[seat]
    chain = 0
    while True:
        state[S_ROLLS] += 1
        d0, key = randint(key, 6)
        d0 += 1
        r, key = randint(key, 6)
        if r == 0:
            return _robber_turn(state, seat, d0, POL_GREEDY, prow, pkeys, kind, adj, deg, dist, path, it, vis, key,
                                opts[O_ROBBER_FOREST_STOP])
        d1 = r + 1
        n = first_moves(state, d0, d1, seat, kind, adj, deg, opts, binfo, moves, tmp, buf, path, it, vis)
        if n == 0:
            return key
        j, pk = lookahead_choice(state, seat, moves, n, 0, d0, d1, 0, chain, prow,
                                 kind, adj, deg, dist, binfo, opts, pkeys[seat])
        pkeys[seat] = pk
        m = moves[j]
        eff = apply_move(state, seat, m, binfo, opts)
        if check_end(state, seat, opts) or eff & E_STORM:
            return key
        extra = roll_earns(0, eff, opts)
        slot = m >> 24
        a = (m >> 16) & 0xFF
        g = m & 0xFFFF
        n = second_moves(state, d1 if slot == 0 else d0, 1 - slot, seat, a,
                         g if kind[g] >= K_START else -1, kind, adj, deg, opts, moves, path, it, vis, moves.shape[0])
        if n > 0:
            j, pk = lookahead_choice(state, seat, moves, n, 1, d0, d1, extra, chain, prow,
                                     kind, adj, deg, dist, binfo, opts, pkeys[seat])
            pkeys[seat] = pk
            eff = apply_move(state, seat, moves[j], binfo, opts)
            if check_end(state, seat, opts) or eff & E_STORM:
                return key
            extra = roll_earns(extra, eff, opts)
        if extra != 1:
            return key
        chain += 1
        state[S_EXTRA_ROLLS] += 1
        if chain > state[S_CHAIN_MAX]:
            state[S_CHAIN_MAX] = chain


@allocation_free
def play_turn(state, seat, pols, params, pkeys, kind, adj, deg, dist, binfo, opts,
              moves, buf, tmp, path, it, vis, key, parts):
    """One player's turn with all its extra rolls; returns the chance key.
    `parts`: ((lookahead_turn,), the user-policy tuple) from lookahead_for."""
    if pols[seat] == POL_LOOKAHEAD:
        return parts[0][0](state, seat, pols, params, pkeys, kind, adj, deg, dist, binfo, opts,
                           moves, buf, tmp, path, it, vis, key)
    return sim_turn(state, seat, 0, 0, 0, -1, -1, 0, 0, pols, params, pkeys, kind, adj, deg, dist, binfo,
                    opts, moves, tmp, buf, path, it, vis, key, parts[1])


@allocation_free
def roll_earns(extra, eff, opts):
    """Fold a move's effects `eff` into its roll's extra-roll state `extra`:
    1 another roll is earned, 0 not yet, -1 not in this roll whatever comes
    (the harder variant judged per roll, after a move sent an animal home).
    A roll earns another when a move sits on a larger animal; under the
    harder variant only if that move (per move) or no move of the roll (per
    roll) sent any animal home."""
    climbed = (eff & E_CLIMB) != 0
    sent = (eff >> 8) != 0
    if extra < 0 or (opts[O_HARDER] == 1 and opts[O_HARDER_ROLL] == 1 and sent):
        return -1
    if extra == 1 or (climbed and not (opts[O_HARDER] == 1 and sent)):
        return 1
    return 0


@allocation_free
def track_tension(state, leader, row):
    """After a turn: count a change of the sole points leader (a tie keeps the
    last one; the first leader is no change) and raise each seat's largest
    deficit in row. Returns the leader (-1 while nobody has led alone)."""
    P = state[S_NPLAYERS]
    top = sole_leader(state, -1)
    best = 0
    for o in range(P):
        best = max(best, state[S_POINTS + o])
    if top >= 0:
        if leader >= 0 and top != leader:
            row[R_LEAD_CHANGES] += 1
        leader = top
    for o in range(P):
        gap = best - state[S_POINTS + o]
        if gap > row[R_MAX_DEFICIT + o]:
            row[R_MAX_DEFICIT + o] = gap
    return leader


@allocation_free
def record_progress(state, k, row):
    """Every seat's points into progress checkpoint k of row."""
    for o in range(state[S_NPLAYERS]):
        row[R_PROGRESS + N_PROGRESS * o + k] = state[S_POINTS + o]


@allocating
def play_game(state, pols, params, pkeys, kind, adj, deg, dist, binfo, opts, key, row, parts):
    """Play a set-up game to its end, the turn cap or a user policy's answer
    that is no legal move (S_POLICY_ERROR); returns the chance key.

    Also fills row's tension columns (R_LEAD_CHANGES, R_MAX_DEFICIT) and
    points at the PROGRESS_ROUNDS checkpoints (R_PROGRESS), all measured
    after whole turns."""
    nf = binfo[B_N]
    moves = np.empty(32 * nf, np.int64)
    buf = np.empty(32 * nf, np.int64)
    tmp = np.empty_like(state)
    path = np.empty(8, np.int64)
    it = np.empty(8, np.int64)
    vis = np.zeros(nf, np.int8)
    seat = state[S_SEAT]
    P = state[S_NPLAYERS]
    leader = -1
    checkpoint = 0
    while state[S_WINNER] < 0:
        if state[S_TURNS] >= opts[O_MAX_TURNS]:
            state[S_CAPPED] = 1
            break
        state[S_TURNS] += 1
        state[S_SEAT] = seat
        key = play_turn(state, seat, pols, params, pkeys, kind, adj, deg, dist, binfo, opts,
                        moves, buf, tmp, path, it, vis, key, parts)
        if state[S_POLICY_ERROR] > 0:
            break
        leader = track_tension(state, leader, row)
        if (checkpoint < N_PROGRESS and state[S_TURNS] % P == 0
                and state[S_TURNS] // P == PROGRESS_ROUNDS[checkpoint]):
            record_progress(state, checkpoint, row)
            checkpoint += 1
        seat = (seat + 1) % P
    for k in range(checkpoint, N_PROGRESS):  # the game is over: its final points carry on
        record_progress(state, k, row)
    return key


@njit(parallel=True, cache=True)
def play_batch(root_seed, first_game, nplayers, pols, params, kind, adj, deg, dist, binfo, opts, out, parts):
    """Play games first_game .. first_game + len(out) - 1; row i of out is game i.

    pols[seat] policy id, params[seat] its parameter row; out: int32 (n, N_REC);
    parts: lookahead_for(pols, users).
    """
    nf = binfo[B_N]
    # Taken apart here and put together again in the loop: a tuple of tuples
    # cannot enter a parallel loop.
    lookahead = parts[0]
    users = parts[1]
    for i in prange(out.shape[0]):
        g = first_game + i
        state = np.empty(S_OCC + 4 * nf, np.int32)
        pkeys = np.empty(4, np.uint64)
        for s in range(4):
            pkeys[s] = game_key(root_seed, g, STREAM_POLICY_BASE + s)
        key = game_key(root_seed, g, STREAM_CHANCE)
        key = init_game(state, nplayers, binfo, opts, key)
        row = out[i]
        row[:] = 0
        play_game(state, pols, params, pkeys, kind, adj, deg, dist, binfo, opts, key, row, (lookahead, users))
        row[R_WINNER] = state[S_WINNER]
        row[R_CAPPED] = state[S_CAPPED]
        row[R_TURNS] = state[S_TURNS]
        row[R_ROLLS] = state[S_ROLLS]
        row[R_ROBBER_MOVES] = state[S_ROBBER_MOVES]
        row[R_SENT_ROBBER] = state[S_SENT_ROBBER]
        row[R_SENT_KNOCK] = state[S_SENT_KNOCK]
        row[R_EXTRA_ROLLS] = state[S_EXTRA_ROLLS]
        row[R_CHAIN_MAX] = state[S_CHAIN_MAX]
        row[R_STORMS] = state[S_STORMS]
        row[R_CHASES] = state[S_CHASES]
        row[R_FIRST_SEAT] = state[S_FIRST_SEAT]
        row[R_POLICY_ERROR] = state[S_POLICY_ERROR]
        for s in range(4):
            row[R_POINTS + 4 * s] = state[S_POINTS + s]
            row[R_POINTS + 4 * s + 1] = state[S_STORM + s]
            row[R_POINTS + 4 * s + 2] = state[S_BONUS + s]
            row[R_POINTS + 4 * s + 3] = state[S_CHASE + s]


# ---- user policies (kernels/user_policy.py) ----------------------------------
# Every user function is compiled to this one signature and reaches the
# kernel in a tuple of MAX_USER_POLICIES first-class functions, so the kernel
# compiles once and is cached; a run without user policies passes stand-ins.
# The arrays are read-only (user_policy.read_only): a policy reads the game, never changes it.
USER_POLICY_SIGNATURE = types.int64(
    read_only(types.int32[::1]),        # state
    read_only(types.int64[::1]),        # dist: steps from each field to the house
    read_only(types.int64[::1]),        # moves
    types.int64,                        # n_moves
    types.int64,                        # seat
    read_only(types.float64[::1]),      # params
    types.uint64,                       # key
)
USER_PARAMETER_NAMES = ("state", "dist", "moves", "n_moves", "seat", "params", "key")


@njit(USER_POLICY_SIGNATURE, cache=True)
def no_user_policy(state, dist, moves, n_moves, seat, params, key):
    """Fills the unused places of the user-policy tuple; never called."""
    return 0


def user_policies(compiled: list) -> tuple:
    """The kernels' user-policy tuple: user policy k (id POL_USER + k) is compiled[k]."""
    return user_policy_tuple(compiled, no_user_policy, MAX_USER_POLICIES)


# ---- the look-ahead as an optional part (kernels/jit.py) ------------------------
# A run without a look-ahead seat compiles the kernel without it (it is
# about half of the kernel's compile).
_I64 = types.int64[::1]
LOOKAHEAD_TURN_SIGNATURE = types.uint64(
    types.int32[::1], types.int64, _I64, types.float64[:, ::1], types.uint64[::1],         # state .. pkeys
    types.int8[::1], types.int64[:, ::1], _I64, _I64, _I64, _I64,                          # kind .. opts
    _I64, _I64, types.int32[::1], _I64, _I64, types.int8[::1], types.uint64)               # moves .. key


@njit(LOOKAHEAD_TURN_SIGNATURE, cache=True, _nrt=False)
def no_lookahead_turn(state, seat, pols, params, pkeys, kind, adj, deg, dist, binfo, opts,
                      moves, buf, tmp, path, it, vis, key):
    """Holds the look-ahead's place when no seat plays it; never called."""
    return key


def lookahead_turn_call(state, seat, pols, params, pkeys, kind, adj, deg, dist, binfo, opts,
                        moves, buf, tmp, path, it, vis, key):
    """lookahead_turn, compiled to LOOKAHEAD_TURN_SIGNATURE on first use."""
    return lookahead_turn(state, seat, pols, params, pkeys, kind, adj, deg, dist, binfo, opts,
                          moves, buf, tmp, path, it, vis, key)


_lookahead_argument = optional_part(LOOKAHEAD_TURN_SIGNATURE, lookahead_turn_call, no_lookahead_turn)


def lookahead_for(pols, users: list = ()) -> tuple:
    """The kernels' `parts` argument for seat policies `pols`: the look-ahead
    turn in a tuple (a stand-in when no seat plays it) and the tuple of the
    compiled user policies `users` (user_policies). Each function sits in a
    tuple of its own kind, where Numba types it by its signature."""
    return _lookahead_argument(POL_LOOKAHEAD in pols), user_policies(list(users))
