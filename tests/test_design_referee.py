"""A referee for user designs: every play of a replayed hand checked against docs/designs.md.

tests/test_generated_designs.py writes whole valid designs over everything the format can say and
audits their records; tests/test_race_invariants.py referees Stap op and Mille Bornes against the
rules page. This file referees the generated designs: it walks a hand's replay log and keeps one
generic tableau per side, written from docs/designs.md alone (the card table's role column, the
"Roles" paragraph and the options table), not from the engine's legal-move code, and checks that
every card played (and every coup fourré) was one the docs allow at that moment.
"""
import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etappe.kernels import race as K
from etappe.kernels.race_design import parse_design
from etappe.kernels.race_policies import parse_policy
from etappe.kernels.race_replay import replay_hands

from test_generated_designs import design_texts

ATTACKS = ("hazard", "limit", "setback")  # the roles laid on an opponent
CANCELLED = "a hazard cancelled by its safety"  # on top of the battle pile
MAX_KM = 32_767  # "a distance card that would take it beyond 32 767 is not laid"


class Game:
    """What the design says about the cards at one player count, by card index."""

    def __init__(self, design, players, options):
        self.cards = design.cards
        self.index = {c.key: i for i, c in enumerate(design.cards)}
        self.options = options
        self.sides = design.sides(players)
        self.set_target = design.target_kind == "set"
        self.need = design.set_target(players)
        self.trip, self.extension = design.trip_for(players)
        self.go = next(i for i, c in enumerate(design.cards) if c.role == "go")

    def role(self, card):
        return self.cards[card].role

    def protects(self, safety, card):
        return self.cards[card].key in self.cards[safety].protects


class Tableau:
    """One side's piles, as docs/designs.md describes them."""

    def __init__(self, game, start_limited):
        self.game = game
        self.battle = None              # top of the battle pile: a card index, CANCELLED or None (empty)
        self.limited = start_limited    # "every side starts under the limit"
        self.shows_limit = False        # a limit card on top of the limit pile (the starting limit shows none)
        self.safeties = set()
        self.laid = Counter()           # distance cards on the table by index ("a copy a setback took off ... no longer counts")
        self.km = 0
        self.disqualified = False       # overshoot = "disqualify": it "can no longer complete the trip"

    def uncorrected_hazard(self):
        return self.battle is not None and self.battle != CANCELLED and self.game.role(self.battle) == "hazard"

    def permanent_go(self):
        return any(self.game.cards[s].acts_as_go for s in self.safeties)

    def moving(self):
        """"go on top, or a permanent go and no uncorrected hazard"; after a safety over its hazard a go is
        still needed unless roll_after_safety = false."""
        if self.permanent_go():
            return not self.uncorrected_hazard()
        if self.battle == CANCELLED:
            return not self.game.options["roll_after_safety"]
        return self.battle == self.game.go

    def protected_from(self, card):
        """By a safety laid; one against a limit makes "the side ... immune to every limit"."""
        if self.game.role(card) == "limit":
            return self.immune_to_limits()
        return any(self.game.protects(s, card) for s in self.safeties)

    def immune_to_limits(self):
        game = self.game
        return any(game.protects(s, i) for s in self.safeties for i, c in enumerate(game.cards) if c.role == "limit")

    def go_fits(self):
        """Where a go card fits: on an empty pile, a remedy, a cancelled hazard or a hazard the go card clears
        (Stop), never on a go or a hazard waiting for its remedy."""
        top, game = self.battle, self.game
        if top is None:
            return True
        if top == CANCELLED:  # roll_after_safety = false: "a go card fits there no more than on a go"
            return game.options["roll_after_safety"]
        if game.role(top) == "hazard":
            return game.cards[top].remedy == game.cards[game.go].key
        return game.role(top) == "remedy"

    def fault(self, card):
        """Why docs/designs.md forbids laying `card` on this side now, or None. (The walk checks apart that
        attacks go to an opponent and every other card to the player's own side.)"""
        game, c = self.game, self.game.cards[card]
        options = game.options
        if c.role == "distance":
            if not self.moving():
                return f"distance on a side that is not moving (battle pile: {self.shown()})"
            if self.limited and c.limited:  # `limited`: "cannot be laid under a limit"
                return "a limited distance card under a limit"
            if c.cap and self.laid[card] >= c.cap:  # "most copies of it a side may have laid at once"
                return f"one {c.key} beyond its cap of {c.cap}"
            if self.km + c.value > MAX_KM:
                return f"beyond {MAX_KM} km"
            if options["overshoot"] == "forbid":  # "never beyond" / "a kind already complete may not be laid"
                if game.set_target and self.laid[card] >= game.need[c.key]:
                    return f"a stage of a complete kind ({self.laid[card]} of {game.need[c.key]} {c.key} laid)"
                if not game.set_target and self.km + c.value > game.trip:
                    return f"beyond the trip: {self.km} + {c.value} > {game.trip}"
        elif c.role == "go":
            # acts_as_go: "a go card is then refused, except on a hazard that only a go card clears";
            # go_with_permanent_go: "may still lay a go card where one fits"
            if self.permanent_go() and not options["go_with_permanent_go"]:
                if not (self.uncorrected_hazard() and self.go_fits()):
                    return f"a go under the permanent go (battle pile: {self.shown()})"
            elif not self.go_fits():
                return f"a go on {self.shown()}"
        elif c.role == "remedy":  # "A remedy goes on its own hazard"
            if not (self.uncorrected_hazard() and game.cards[self.battle].remedy == c.key):
                return f"a remedy on {self.shown()}"
        elif c.role == "end_limit":  # "`end_limit` lifts the limit"
            if not self.limited:
                return "an end of limit on a side not under the limit"
        elif c.role in ATTACKS:
            if self.protected_from(card):
                return "an attack on a side its safety protects"
            if c.role == "hazard" and not self.moving():  # "Hazards land only on an opponent who is moving"
                return f"a hazard on a side that is not moving (battle pile: {self.shown()})"
            if c.role == "limit" and self.limited:  # "not already limited", limit_on_limit: "also on one showing a limit card"
                if not (options["limit_on_limit"] and self.shows_limit):
                    return "a limit on a side already under the limit" + ("" if self.shows_limit else " (the starting one)")
            if c.role == "setback" and self.laid[game.index[c.removes]] == 0:  # "on an opponent who has laid that card"
                return f"a setback on a side with no {c.removes} laid"
        return None  # a safety: "laid on one's own turn", any time

    def shown(self):
        if self.battle is None or self.battle == CANCELLED:
            return self.battle or "empty"
        return self.game.cards[self.battle].key

    def lay(self, card):
        """`card` lands on this side."""
        game, c = self.game, self.game.cards[card]
        if c.role == "distance":
            self.laid[card] += 1
            self.km += c.value
            if game.set_target:
                self.disqualified |= self.laid[card] > game.need[c.key]
            else:
                self.disqualified |= self.km > game.trip
        elif c.role in ("go", "remedy", "hazard"):
            self.battle = card
        elif c.role in ("limit", "end_limit"):
            self.limited = self.shows_limit = c.role == "limit"
        elif c.role == "setback":  # "removes one laid card of it"
            removed = game.index[c.removes]
            self.laid[removed] -= 1
            self.km -= game.cards[removed].value
        else:
            self.lay_safety(card)

    def lay_safety(self, safety):
        """"protects from (and cancels when laid)"; against a limit it lifts the limit, the starting one too."""
        self.safeties.add(safety)
        if self.uncorrected_hazard() and self.game.protects(safety, self.battle):
            self.battle = CANCELLED
        if self.immune_to_limits():
            self.limited = self.shows_limit = False

    def completed(self):
        game = self.game
        if self.disqualified:
            return False
        if game.set_target:
            return all(self.laid[game.index[k]] == n for k, n in game.need.items() if game.role(game.index[k]) == "distance")
        return self.km == game.trip


def plays(game, tableaux, own, cards):
    """The plays the docs allow of `cards` (card type indexes), as (card, side): attacks on each opponent
    showing no fault, the other roles on one's own side."""
    return {(card, s) for card in cards for s, tab in enumerate(tableaux)
            if (s != own) == (game.role(card) in ATTACKS) and tab.fault(card) is None}


def referee(design, players, options, log):
    """Walk one hand's log (replay_hands), checking every play and coup fourré; returns what it saw."""
    game = Game(design, players, options)
    tableaux = [Tableau(game, design.start_under_limit) for _ in range(game.sides)]
    hands = [Counter() for _ in range(players)]
    seen = Counter()
    rows = log.tolist()
    finished = None  # the side that completed the target: "the first side to complete the target wins"
    i = 0
    while i < len(rows):
        turn, seat, event, card, side, value = rows[i]
        i += 1
        assert event != K.EV_BROKEN_INVARIANT, f"broken invariant {value} at turn {turn}"
        if event in (K.EV_DEAL, K.EV_DRAW):
            hands[seat][card] += 1
            continue
        if event == K.EV_RESHUFFLE:  # the tops of the piles stay and "laid stages stay counted": no tableau changes
            seen["reshuffle"] += 1
            continue
        if event == K.EV_EXTENSION:
            # "only the side that first reaches exactly the trip may call it, at that moment"
            assert finished is None and game.extension and tableaux[side].km == game.trip, \
                f"turn {turn}: side {side} calls the extension at {tableaux[side].km} km (trip {game.trip})"
            game.trip = game.extension  # "the hand then goes on to the extended trip for everyone"
            seen["extension"] += 1
            continue
        assert event != K.EV_COUP_FOURRE, f"turn {turn}: a coup fourré not right after an attack"
        if event not in (K.EV_PLAY, K.EV_DISCARD):
            continue  # a pass, or an extension declined
        assert finished is None, f"turn {turn}: a card played after side {finished} completed the target"
        assert hands[seat][card] > 0, f"turn {turn}: seat {seat} played a card it did not hold"
        if event == K.EV_DISCARD:
            # discard = "when_no_play": "only when no held card can be played"
            if options["discard"] == "when_no_play":
                held = [t for t, n in hands[seat].items() if n > 0]
                could = plays(game, tableaux, seat % game.sides, held)
                assert not could, (f"turn {turn}: seat {seat} discards {design.cards[card].key} while it could "
                                   f"play {sorted((design.cards[t].key, s) for t, s in could)}")
            hands[seat][card] -= 1
            continue
        hands[seat][card] -= 1
        c, own = design.cards[card], seat % game.sides
        where = f"turn {turn}: seat {seat} lays {c.key} ({c.role}) on side {side}"
        assert (side != own) == (c.role in ATTACKS), f"{where}: attacks go to an opponent, the rest to one's own side"
        fault = tableaux[side].fault(card)
        assert fault is None, f"{where}: {fault}"
        seen[c.role] += 1
        if i < len(rows) and rows[i][2] == K.EV_COUP_FOURRE:
            _, cseat, _, safety, cside, attack = rows[i]
            i += 1
            # "A safety is laid ... out of turn as a coup fourré", against the attack it protects from
            assert options["coup_fourre"], f"{where}: a coup fourré with option coup_fourre = false"
            assert c.role in ATTACKS and attack == card and cside == side == cseat % game.sides, f"{where}: a stray coup fourré"
            assert game.role(safety) == "safety" and game.protects(safety, card), \
                f"{where}: coup fourré with {design.cards[safety].key}, which does not protect from it"
            assert hands[cseat][safety] > 0, f"{where}: a coup fourré with a safety not held"
            hands[cseat][safety] -= 1
            tableaux[side].lay_safety(safety)  # the attack is discarded
            seen["coup fourré"] += 1
            continue
        tableaux[side].lay(card)
        if c.role == "distance" and tableaux[own].completed():
            extended = i < len(rows) and rows[i][2] == K.EV_EXTENSION
            finished = None if extended else own
    return seen


def replay(design, players, options, seats, seed, hands=2):
    """Referee up to `hands` hands of game 0; returns what the referee saw."""
    ct, rules = design.tables(players)
    specs = [parse_policy(seats[p % len(seats)]) for p in range(players)]
    seen = Counter()
    for hand, log, _, _, _ in replay_hands(design, ct, rules, specs, seed, 0):
        seen += referee(design, players, options, log)
        seen["hands"] += 1
        if hand + 1 >= hands:
            break
    return seen


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=design_texts(), seed=st.integers(0, 2**32 - 1), greedy_first=st.booleans())
def test_every_play_of_a_design_written_from_scratch_is_legal(text, seed, greedy_first):
    design = parse_design(text, "generated.toml")
    seats = ["greedy", "random"] if greedy_first else ["random", "greedy"]
    for players in design.players:
        assert replay(design, players, design.resolved_options(), seats, seed)["hands"] >= 1


# ---- a small design that has one of everything, for scripted logs ----------------
PROBE = """
[design]
name = "probe"
unit = "km"
players = [2]
hand_size = 4
stock_exhausted = "play_out"
start_under_limit = {start_limited}

[target]
{target}

[options]
{options}

[[cards]]
key = "go"
role = "go"
count = 10

[[cards]]
key = "d25"
role = "distance"
value = 25
count = 12
limited = false

[[cards]]
key = "d50"
role = "distance"
value = 50
count = 6
limited = false

[[cards]]
key = "d100"
role = "distance"
value = 100
count = 8
limited = true
cap = 2

[[cards]]
key = "flat"
role = "hazard"
remedy = "spare"
count = 4

[[cards]]
key = "spare"
role = "remedy"
count = 5

[[cards]]
key = "stop"
role = "hazard"
remedy = "go"
count = 4

[[cards]]
key = "limit"
role = "limit"
count = 4

[[cards]]
key = "end"
role = "end_limit"
count = 5

[[cards]]
key = "thief"
role = "setback"
removes = "d25"
count = 3

[[cards]]
key = "tyres"
role = "safety"
protects = ["flat", "thief"]
count = 1

[[cards]]
key = "siren"
role = "safety"
protects = ["stop", "limit"]
acts_as_go = true
count = 1
"""


SUM_TARGET = 'kind = "sum"\ntrip = 300'
SET_TARGET = 'kind = "set"\n\n[players.2]\ntarget = { d25 = 1, d50 = 1 }'  # 75 km: one 25 and one 50


def probe(target=SUM_TARGET, start_limited=False, **options):
    text = PROBE.replace("{target}", target).replace("{start_limited}", str(start_limited).lower())
    text = text.replace("{options}", "".join(f"{k} = {json.dumps(v)}\n" for k, v in options.items()))
    return parse_design(text, "probe.toml")


def scripted_log(design, deal, turns):
    """A two-player log written by hand: `deal` the seats' cards, `turns` (seat, card drawn, card played,
    side or "discard"), or ("coup", seat, safety, attack) for a coup fourré against the play before it."""
    index = design.card_index
    rows = [[0, p, K.EV_DEAL, index(c), -1, 0] for p in (0, 1) for c in deal[p]]
    for t, (seat, drawn, card, side) in enumerate(turns, 1):
        if seat == "coup":
            rows.append([t - 1, drawn, K.EV_COUP_FOURRE, index(card), drawn, index(side)])
            continue
        rows.append([t - 1, seat, K.EV_DRAW, index(drawn), -1, 0])
        rows.append([t, seat, K.EV_DISCARD, index(card), -1, 0] if side == "discard"
                    else [t, seat, K.EV_PLAY, index(card), side, 0])
    return np.array(rows, np.int32)


DEAL = (["go", "d25", "d100", "tyres"], ["flat", "limit", "stop", "thief"])
GO = (0, "d100", "go", 0)
GO_AND_LIMIT = [GO, (1, "d25", "limit", 0)]


@pytest.mark.parametrize("script,allowed,edited,fault", [
    ([], GO, (0, "go", "d25", 0), "distance on a side that is not moving"),
    (GO_AND_LIMIT, (0, "d25", "d25", 0), (0, "d25", "d100", 0), "a limited distance card under a limit"),
    ([GO, (0, "d100", "d100", 0), (0, "d100", "d100", 0)], (0, "d50", "d50", 0), (0, "d100", "d100", 0),
     "beyond its cap"),
    ([GO, (0, "d100", "d100", 0), (0, "d100", "d100", 0), (0, "d50", "d50", 0), (0, "d25", "d25", 0)],
     (0, "d25", "d25", 0), (0, "d50", "d50", 0), "beyond the trip"),
    ([GO, (0, "d25", "d25", 0)], (0, "d50", "d50", 0), (0, "d25", "d25", 0), "a stage of a complete kind"),
    ([], (1, "d25", "limit", 0), (1, "d25", "flat", 0), "a hazard on a side that is not moving"),
    ([GO, (0, "d25", "tyres", 0)], (1, "d25", "stop", 0), (1, "d25", "flat", 0), "its safety protects"),
    (GO_AND_LIMIT, (1, "limit", "stop", 0), (1, "limit", "limit", 0), "already under the limit"),
    ([], (0, "spare", "go", 0), (0, "spare", "spare", 0), "a remedy on empty"),
    ([GO], (1, "d25", "flat", 0), (1, "d25", "thief", 0), "a setback on a side with no d25 laid"),
    ([], (0, "d25", "go", 0), (0, "end", "end", 0), "an end of limit on a side not under the limit"),
    ([(0, "siren", "siren", 0)], (0, "go", "d25", 0), (0, "go", "go", 0), "a go under the permanent go"),
    ([GO, (0, "d25", "d25", 0)], (1, "spare", "thief", 0), (1, "spare", "thief", 1), "attacks go to an opponent"),
])
def test_referee_catches_an_illegal_play_edited_into_a_log(script, allowed, edited, fault):
    design = probe(target=SET_TARGET if "complete kind" in fault else SUM_TARGET)
    options = design.resolved_options()
    referee(design, 2, options, scripted_log(design, DEAL, script + [allowed]))
    with pytest.raises(AssertionError, match=fault):
        referee(design, 2, options, scripted_log(design, DEAL, script + [edited]))


SAFETY_OVER_FLAT = [GO, (1, "d25", "flat", 0), (0, "d25", "tyres", 0), (0, "d25", "d25", 0)]


@pytest.mark.parametrize("options,start_limited,script,fault", [
    # roll_after_safety: "after a safety laid over its hazard ..., a go is still needed; false: not needed: the
    # side moves at once, and a go card fits there no more than on a go"
    ({}, False, SAFETY_OVER_FLAT, "distance on a side that is not moving"),
    ({"roll_after_safety": False}, False, SAFETY_OVER_FLAT, None),
    ({}, False, SAFETY_OVER_FLAT[:3] + [(0, "go", "go", 0)], None),
    ({"roll_after_safety": False}, False, SAFETY_OVER_FLAT[:3] + [(0, "go", "go", 0)], "a go on a hazard cancelled"),
    # limit_on_limit: "also on one showing a limit card", "never on one under the starting limit"
    ({"limit_on_limit": True}, False, GO_AND_LIMIT + [(1, "limit", "limit", 0)], None),
    ({"limit_on_limit": True}, True, [(1, "limit", "limit", 0)], "already under the limit \\(the starting one\\)"),
    # a safety against a limit "also lifts the starting limit"
    ({}, True, [(0, "siren", "siren", 0), (0, "d100", "d100", 0)], None),
    # go_with_permanent_go: "may still lay a go card where one fits"
    ({"go_with_permanent_go": True}, False, [(0, "siren", "siren", 0), (0, "go", "go", 0)], None),
    ({"go_with_permanent_go": True}, False, [GO, (0, "siren", "siren", 0), (0, "go", "go", 0)], "a go on go"),
    # discard: "always" by default; "when_no_play": only when no held card can be played (seat 0 holds a go
    # that fits its empty pile, and a safety)
    ({}, False, [(0, "d25", "d25", "discard")], None),
    ({"discard": "when_no_play"}, False, [(0, "d25", "d25", "discard")], "discards d25 while it could play"),
])
def test_referee_follows_the_rule_options(options, start_limited, script, fault):
    design = probe(start_limited=start_limited, **options)
    log = scripted_log(design, DEAL, script)
    if fault is None:
        referee(design, 2, design.resolved_options(), log)
    else:
        with pytest.raises(AssertionError, match=fault):
            referee(design, 2, design.resolved_options(), log)


COUP = [GO, (1, "d25", "flat", 0), ("coup", 0, "tyres", "flat")]


def test_referee_follows_a_coup_fourre_and_refuses_a_wrong_one():
    design = probe()
    options = design.resolved_options()
    # the flat tyre was discarded: the side still shows its go and may lay distance
    referee(design, 2, options, scripted_log(design, DEAL, COUP + [(0, "d25", "d25", 0)]))
    with pytest.raises(AssertionError, match="does not protect from it"):
        referee(design, 2, options, scripted_log(design, DEAL, [GO, (1, "d25", "stop", 0), ("coup", 0, "tyres", "stop")]))
    off = probe(coup_fourre=False)
    with pytest.raises(AssertionError, match="coup_fourre = false"):
        referee(off, 2, off.resolved_options(), scripted_log(off, DEAL, COUP))


def test_referee_walks_every_kind_of_play_in_the_probe_design():
    # the scripted logs above test the referee; here the engine's own hands of a design with every role
    # must pass it and show each role played and a coup fourré, so every role's check meets real hands
    design = probe()
    options = design.resolved_options()
    seen = Counter()
    for seed in range(40):
        seen += replay(design, 2, options, ["random", "greedy"], seed, hands=1)
    assert {"distance", "go", "hazard", "remedy", "limit", "end_limit", "setback", "safety", "coup fourré"} <= set(seen)
