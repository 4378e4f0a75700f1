"""Designs written from scratch: etappe's promise is a balance report for any
design a user writes (docs/designs.md), so a strategy writes whole design
files, valid by construction from the format's rules alone, over everything
the format can say; each must be accepted, play cleanly, keep the records'
accounting (docs/records.md, the rules page) and report."""
import json
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etappe.analysis.race import simulate
from etappe.analysis.race_summary import summarize
from etappe.cli.report_cmds import compare_summaries
from etappe.kernels.race_design import MAX_DISTANCE, parse_design
from etappe.reports.race_report import build_comparison_report, build_report

from test_race_properties import plays_two_hands_cleanly

SCORING_FIELDS = ("per_safety", "all_safeties", "coup_fourre", "trip_completed", "delayed_action", "safe_trip",
                  "extension", "shutout")
TRICKY_NAMES = ("Stop (Feu rouge)", "Café crème", "25 km", "l'étape", "Wind mee", "Ω", "a|b", "x * y", "_",
                "<b>")


# docs/designs.md: letters, digits and _, not starting with a digit, not "hazards" (its record
# columns would be the side's); nor a word a report could mistake for a missing number
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True).filter(
    lambda k: k != "hazards" and k.lower() not in ("nan", "inf"))


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return str(value)


def _table(header: str, fields: dict) -> str:
    return f"{header}\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in fields.items()) + "\n"


def _sub_multiset(draw, available: dict[str, int], values: dict[str, int], room: int) -> dict[str, int]:
    """Some copies of the cards in `available` (key: copies), at least one
    card and at most `room` km in all: a distance the deck can lay exactly."""
    keys = [k for k, n in available.items() if n > 0 and values[k] <= room]
    first = draw(st.sampled_from(keys))
    taken = {first: 1}
    total = values[first]
    for key in draw(st.lists(st.sampled_from(keys), max_size=12)):
        if taken.get(key, 0) < available[key] and total + values[key] <= room:
            taken[key] = taken.get(key, 0) + 1
            total += values[key]
    return taken


@st.composite
def design_texts(draw) -> str:
    """A design file, valid by docs/designs.md: every card role, remedies
    shared by hazards or the go card, safeties over hazards, limits and
    setbacks (permanent go or not), sum or set targets with per-player-count
    trips, extensions, removals and teams, a scoring table and the rule
    options that change something in it."""
    players = sorted(draw(st.sets(st.integers(2, 6), min_size=1, max_size=5)))
    reshuffle = draw(st.booleans())
    kind = draw(st.sampled_from(["sum", "set"]))
    cards: list[dict] = []
    own_keys = draw(st.booleans())  # keys as a designer writes them, or role and number

    def add(prefix, role, count, **fields):
        key = f"{prefix}{sum(c['role'] == role for c in cards)}"
        if own_keys:
            key = draw(KEYS.filter(lambda k: k not in {c["key"] for c in cards}))
        card = {"key": key, "role": role, "count": count, **fields}
        cards.append(card)
        return card

    def distance(count, limited=True):
        fields = {"value": draw(st.integers(1, 10_000 if big else 200)), "limited": limited and draw(st.booleans())}
        if draw(st.booleans()):
            fields["cap"] = draw(st.integers(1, count + 2))
        return add("d", "distance", count, **fields)

    big = draw(st.booleans())  # distances near the engine's 16-bit range as well as small ones
    distances = [distance(draw(st.integers(1, 20))) for _ in range(draw(st.integers(1, 8)))]
    go = add("go", "go", draw(st.integers(1, 15)))
    remedies = [add("r", "remedy", draw(st.integers(1, 8))) for _ in range(draw(st.integers(0, 4)))]
    hazards = []
    for i in range(draw(st.integers(len(remedies), len(remedies) + 2))):
        # every remedy is some hazard's; the others take any remedy or the go card (Stop-like)
        remedy = remedies[i] if i < len(remedies) else draw(st.sampled_from(remedies + [go]))
        hazards.append(add("h", "hazard", draw(st.integers(0, 5)), remedy=remedy["key"]))
    limits = [add("lim", "limit", draw(st.integers(0, 4))) for _ in range(draw(st.integers(0, 2)))]
    start_limited = draw(st.booleans())
    setbacks = [add("sb", "setback", draw(st.integers(0, 3)), removes=draw(st.sampled_from(distances))["key"])
                for _ in range(draw(st.integers(0, 2)))]
    attacks = [c["key"] for c in hazards + limits + setbacks]
    protected = draw(st.lists(st.sampled_from(attacks), unique=True)) if attacks else []
    safeties = []
    while protected:  # each attack protected by one safety at most
        cut = draw(st.integers(1, len(protected))) if len(safeties) < 4 else len(protected)
        safeties.append(add("safe", "safety", draw(st.integers(0, 2)), protects=protected[:cut],
                            acts_as_go=draw(st.booleans())))
        protected = protected[cut:]
    # A limit (or the starting one) needs an end of limit card type (without one it is a card that never
    # fits); it may have no copies where a safety lifts the limit or no distance card is limited.
    lifters = [c for c in safeties if c["count"] and set(c["protects"]) & {lim["key"] for lim in limits}]
    unlimited = not any(c["limited"] for c in distances)
    needs_end = not (lifters or unlimited)
    for _ in range(draw(st.integers(1 if limits or start_limited else 0, 2))):
        add("end", "end_limit", draw(st.integers(1 if needs_end else 0, 6)))
    if draw(st.integers(0, 3)) == 0:  # as many card types as the engine takes: its 32-bit masks' top bit
        while len(cards) < 32:
            distances.append(distance(draw(st.integers(0, 2)), limited=not unlimited))
    deck = sum(c["count"] for c in cards)
    distances[0]["count"] += max(0, 2 * max(players) + 1 - deck)  # a deck that deals a card to each and leaves some
    deck = sum(c["count"] for c in cards)

    names = iter(draw(st.permutations(TRICKY_NAMES)))
    for card in cards:
        if draw(st.booleans()):
            card["name"] = next(names, card["key"])
    taken = set()
    for card in cards:  # one name per card, a card's name defaulting to its key
        if card.get("name", card["key"]) in taken | {c["key"] for c in cards if c is not card}:
            card["name"] = card["key"] + "_card"
        taken.add(card.get("name", card["key"]))

    # Per player count: teams, and removals that keep a go card, each remedy, what lifts a limit,
    # one distance card, and more cards than the hands take.
    per: dict[int, dict] = {}
    counts: dict[int, dict[str, int]] = {}
    for n in players:
        spec: dict = {}
        if draw(st.booleans()):  # 1: individual play, as without it
            spec["team_size"] = draw(st.sampled_from([size for size in (1, 2, 3) if n % size == 0 and n // size >= 2]))
        counts[n] = {c["key"]: c["count"] for c in cards}
        if draw(st.booleans()):
            budget = deck - 2 * n - 1
            spec["remove"] = {}
            for card in draw(st.lists(st.sampled_from(cards), unique_by=lambda c: c["key"], max_size=6)):
                keep = 1 if (card["role"] in ("go", "remedy") or card is distances[0]
                             or (card["role"] == "end_limit" and needs_end) or (card in lifters and not unlimited)) else 0
                k = draw(st.integers(0, max(0, min(card["count"] - keep, budget))))
                spec["remove"][card["key"]] = k
                counts[n][card["key"]] -= k
                budget -= k
        per[n] = spec

    values = {c["key"]: c["value"] for c in distances}
    layable = {n: {c["key"]: min(counts[n][c["key"]], c.get("cap", 400)) for c in distances} for n in players}
    own = [n for n in players if draw(st.booleans())]  # player counts with a target of their own
    shared = [n for n in players if n not in own] or players
    shared_layable = {k: min(layable[n][k] for n in shared) for k in values}
    target = {"kind": kind}
    if kind == "sum":
        shared_cards = _sub_multiset(draw, shared_layable, values, MAX_DISTANCE)
        target["trip"] = _km(shared_cards, values)
        for n in players:
            trip_cards = shared_cards
            if n in own:
                trip_cards = _sub_multiset(draw, layable[n], values, MAX_DISTANCE)
                per[n]["trip"] = _km(trip_cards, values)
            trip = _km(trip_cards, values)
            spare = {k: layable[n][k] - trip_cards.get(k, 0) for k in values}
            if draw(st.booleans()) and any(m > 0 and values[k] <= MAX_DISTANCE - trip for k, m in spare.items()):
                # the extension: the trip's cards and more
                per[n]["extension"] = trip + _km(_sub_multiset(draw, spare, values, MAX_DISTANCE - trip), values)
    else:
        def set_target(bounds):
            chosen = _sub_multiset(draw, bounds, values, MAX_DISTANCE)
            return {k: chosen.get(k, 0) for k in values if chosen.get(k) or draw(st.booleans())}

        for card, m in set_target(shared_layable).items():
            next(c for c in distances if c["key"] == card)["target"] = m
        for n in own:
            per[n]["target"] = set_target(layable[n])

    hand_limit = min(20, *((sum(counts[n].values()) - 1) // n for n in players))
    hand_size = draw(st.integers(1, min(hand_limit, 8)) | st.integers(1, hand_limit))
    head = {"name": draw(st.sampled_from(["gen", "my_design", "Ontwerp 1"])),
            "unit": draw(st.sampled_from(["km", "miles"])), "players": players, "hand_size": hand_size,
            "stock_exhausted": "reshuffle" if reshuffle else "play_out", "start_under_limit": start_limited}
    if draw(st.booleans()):
        head["title"] = draw(st.sampled_from(["Generated", "Étape d'essai", "x|y"]))
    if draw(st.booleans()):
        head["reconstructed"] = draw(st.booleans())
        head["notes"] = "what was guessed"  # for the design's readers; the engine does not read it
    text = _table("[design]", head) + _table("[target]", target)
    for n, spec in per.items():
        if spec or draw(st.booleans()):
            text += _table(f"[players.{n}]", spec)

    scoring = None
    if draw(st.booleans()):
        longest = max(target.get("trip", 0), sum(c.get("target", 0) * c["value"] for c in distances))
        scoring = {"game_target": draw(st.integers(1, 4 * longest))}
        # a rebuilt stock never runs out: no delayed action
        fields = [f for f in SCORING_FIELDS if not (reshuffle and f == "delayed_action")]
        for name in draw(st.lists(st.sampled_from(fields), unique=True)):
            scoring[name] = draw(st.integers(0, 500))
        if scoring.get("safe_trip") or draw(st.booleans()):
            scoring["safe_trip_card"] = draw(st.sampled_from(distances))["key"]
        text += _table("[scoring]", scoring)

    # Only options that change something in this design (docs/designs.md refuses the others when set),
    # through cards dealt at one of its player counts at least.
    dealt = {key for n in players for key, count in counts[n].items() if count > 0}
    dealt_limits, dealt_hazards, dealt_safeties = ([c for c in group if c["key"] in dealt]
                                                   for group in (limits, hazards, safeties))
    dealt_attacks = {c["key"] for c in hazards + limits + setbacks if c["key"] in dealt}
    options = {"overshoot": st.sampled_from(["forbid", "disqualify"]), "turn_cap": st.integers(1, 3000),
               "discard": st.sampled_from(["always", "when_no_play"])}
    if dealt_limits:
        options["limit_on_limit"] = st.booleans()
    if any(h["key"] in s["protects"] for s in dealt_safeties for h in dealt_hazards):
        options["roll_after_safety"] = st.booleans()
    if any(s["acts_as_go"] for s in dealt_safeties):
        options["go_with_permanent_go"] = st.booleans()
    if any(dealt_attacks & set(s["protects"]) for s in dealt_safeties):
        options["coup_fourre"] = st.booleans()
    if dealt_safeties and not reshuffle:
        options["safety_extra_turn_after_stock_empty"] = st.booleans()
    if scoring:
        options["shutout"] = st.sampled_from(["parker", "fr"])
        options["tied_game"] = st.sampled_from(["no_winner", "play_on"])
        if any("extension" in spec for spec in per.values()):
            options["failed_extension_trip_points"] = st.booleans()
    chosen = {k: draw(v) for k, v in options.items() if draw(st.booleans())}
    if "coup_fourre" in options and not reshuffle and chosen.get("coup_fourre", True) and draw(st.booleans()):
        chosen["coup_fourre_turn_after_stock_empty"] = draw(st.booleans())
    if chosen or draw(st.booleans()):
        text += _table("[options]", chosen)

    for card in draw(st.permutations(cards)):  # the go card, a limit, ... anywhere in the table
        text += _table("[[cards]]", {k: v for k, v in card.items() if v is not False})
    return text


def _km(cards: dict[str, int], values: dict[str, int]) -> int:
    return sum(values[k] * m for k, m in cards.items())


def _seats(players: int) -> list[str]:
    return (["random", "greedy"] * 3)[:players]


def check_records(frame, design, players: int) -> None:
    """The records of a run keep the accounting docs/records.md and the rules
    page promise, whatever the design."""
    meta = frame.attrs
    sides = meta["sides"]
    assert sides == players // design.per_players.get(players, {}).get("team_size", 1)
    hands = frame.sort_values(["game", "hand"]).reset_index(drop=True)
    _check_cards(hands, design, players, sides)
    _check_hand_ends(hands, design, players, sides)
    if design.scoring:
        _check_scores(hands, design, players, sides)
    else:
        for s in range(sides):
            assert (hands[f"s{s}_score"] == hands[f"s{s}_distance"]).all()
    for s in range(sides):
        assert (hands.groupby("game")[f"s{s}_score"].cumsum() == hands[f"s{s}_total"]).all()
    _check_winners(hands, design, sides)


def _stat(hands, s, card, stat):
    return hands[f"s{s}_{card.key}_{stat}"].to_numpy(np.int64)


def _check_cards(hands, design, players, sides):
    """Every card drawn is laid, discarded or held; a side's distance is its
    laid distance cards less what setbacks took; an attack lands or meets a
    coup fourré; a turn is one card out of a hand (docs/records.md)."""
    cards, zero = design.cards, np.zeros(len(hands), np.int64)
    out_of_hands, coups = zero, zero
    for c in cards:
        for s in range(sides):
            drawn, played, discarded = (_stat(hands, s, c, k) for k in ("drawn", "played", "discarded"))
            assert (drawn == played + discarded + _stat(hands, s, c, "in_hand")).all(), c.key
            out_of_hands = out_of_hands + played + discarded
        if c.role in ("hazard", "limit", "setback"):
            assert (sum(_stat(hands, s, c, "received") for s in range(sides))
                    <= sum(_stat(hands, s, c, "played") for s in range(sides))).all(), c.key
    target = design.set_target(players)
    forbid = hands.attrs["options"]["overshoot"] == "forbid"
    for s in range(sides):
        km, attacks, received, side_coups, safeties, blocked = zero, zero, zero, zero, zero, zero
        for c in cards:
            if c.role == "distance":
                km = km + _stat(hands, s, c, "played") * c.value
                # what lies in front of the side: laid, less what setbacks took off again
                laid = _stat(hands, s, c, "played") - sum(_stat(hands, s, b, "received") for b in cards
                                                          if b.role == "setback" and b.removes == c.key)
                assert not c.cap or (laid <= c.cap).all(), f"{c.key}: beyond its cap"
                assert design.target_kind == "sum" or not forbid or (laid <= target[c.key]).all(), c.key
            if c.role == "setback":  # it takes one laid card of its type off its victim's distance
                km = km - _stat(hands, s, c, "received") * next(d.value for d in cards if d.key == c.removes)
            if c.role not in ("hazard", "limit"):  # only these block a side
                assert (_stat(hands, s, c, "victim_turns") == 0).all(), c.key
            blocked = blocked + _stat(hands, s, c, "victim_turns")
            if c.role in ("hazard", "limit", "setback"):
                attacks = attacks + _stat(hands, s, c, "played")
                received = received + _stat(hands, s, c, "received")
            if c.role == "safety":
                assert (_stat(hands, s, c, "coups") <= _stat(hands, s, c, "played")).all()
                side_coups = side_coups + _stat(hands, s, c, "coups")
                safeties = safeties + (_stat(hands, s, c, "played") > 0)  # a safety stays for the hand
        assert (hands[f"s{s}_distance"].to_numpy() == km).all(), f"side {s}: distance is not what its cards laid"
        assert (hands[f"s{s}_safeties"].to_numpy() == safeties).all()
        assert (blocked <= hands["turns"]).all()
        assert not forbid or (hands[f"s{s}_disqualified"] == 0).all()
        assert (hands[f"s{s}_hazards_played"].to_numpy() == attacks).all()
        assert (hands[f"s{s}_hazards_received"].to_numpy() == received).all()
        assert (hands[f"s{s}_coups"].to_numpy() == side_coups).all()
        coups = coups + side_coups
    assert (sum(hands[f"s{s}_hazards_played"] - hands[f"s{s}_hazards_received"] for s in range(sides)) == coups).all()
    assert (hands["turns"].to_numpy() == out_of_hands - coups).all()  # a coup fourré is laid out of turn
    if not hands.attrs["options"]["coup_fourre"]:
        assert (coups == 0).all()


def _check_hand_ends(hands, design, players, sides):
    """A hand ends on a completed trip (exactly the trip in force, by a side
    still in the race), on the turn cap, or, playing out, when every card is
    out of the hands (the rules page)."""
    meta = hands.attrs
    count = design.counts(players)
    trip, extension = design.trip_for(players)
    in_force = np.where(hands["extension_side"] >= 0, extension, trip)
    assert (extension > 0) or (hands["extension_side"] < 0).all()
    assert (hands["extension_side"] < sides).all() and (hands["trip_side"] < sides).all()
    for s in range(sides):
        if design.target_kind == "sum" and meta["options"]["overshoot"] == "forbid":
            assert (hands[f"s{s}_distance"] <= in_force).all(), "distance beyond the trip"
        mine = (hands["trip_side"] == s).to_numpy()
        assert (hands.loc[mine, f"s{s}_distance"].to_numpy() == in_force[mine]).all()
        assert (hands.loc[mine, f"s{s}_disqualified"] == 0).all()
    assert (hands["turns"] <= meta["turn_cap"]).all()
    assert ((hands["capped"] != 1) | (hands["turns"] == meta["turn_cap"])).all()
    assert ((hands["reshuffles"] == 0) | (hands["stock_exhausted"] == 1)).all()
    # who plays first moves on one seat every `players` games and rotates left each hand
    assert (hands["first_seat"] == (hands["game"] // players + hands["hand"]) % players).all()
    assert (hands.groupby("game")["turns"].transform("sum") == hands["game_turns"]).all()
    km = np.stack([hands[f"s{s}_distance"].to_numpy() for s in range(sides)], axis=1)
    rounds = (hands["turns"] // players).to_numpy()
    for s in range(sides):
        assert (hands[f"s{s}_max_deficit"].to_numpy() >= km.max(axis=1) - km[:, s]).all()
        for r in meta["progress_rounds"]:  # after the hand's last round, its final distance
            assert (hands[f"s{s}_r{r}"].to_numpy()[rounds < r] == km[rounds < r, s]).all()
    if design.reshuffle:
        return
    drawn = {c.key: sum(_stat(hands, s, c, "drawn") for s in range(sides)) for c in design.cards}
    held = sum(_stat(hands, s, c, "in_hand") for s in range(sides) for c in design.cards)
    assert (hands["reshuffles"] == 0).all()
    assert all((drawn[k] <= count[k]).all() for k in drawn), "a card drawn twice with no reshuffle"
    over = ((hands["trip_side"] < 0) & (hands["capped"] == 0)).to_numpy()
    assert (sum(drawn.values())[over] == sum(count.values())).all() and (held[over] == 0).all()
    assert ((sum(drawn.values()) == sum(count.values())) == (hands["stock_exhausted"] == 1)).all()


def _check_scores(hands, design, players, sides):
    """Each hand's score from the scoring table (docs/designs.md, [scoring])."""
    sc, options = design.scoring, hands.attrs["options"]
    dealt = design.counts(players)
    safety_types = sum(c.role == "safety" and dealt[c.key] > 0 for c in design.cards)  # "all safeties" dealt
    trip_side, ext_side = hands["trip_side"].to_numpy(), hands["extension_side"].to_numpy()
    km = np.stack([hands[f"s{s}_distance"].to_numpy(np.int64) for s in range(sides)], axis=1)
    safe_card = next((c for c in design.cards if c.key == sc.get("safe_trip_card")), None)
    for s in range(sides):
        safeties = hands[f"s{s}_safeties"].to_numpy(np.int64)
        score = (km[:, s] + sc["per_safety"] * safeties + sc["coup_fourre"] * hands[f"s{s}_coups"].to_numpy()
                 + sc["all_safeties"] * ((safeties == safety_types) & (safety_types > 0)))
        won = trip_side == s
        score += won * sc["trip_completed"]
        score += (won & (hands["stock_exhausted"].to_numpy() == 1)) * sc["delayed_action"]
        if safe_card is not None:
            score += (won & (_stat(hands, s, safe_card, "played") == 0)) * sc["safe_trip"]
        others = np.delete(km, s, axis=1)
        if options["shutout"] == "parker":  # "if no opponent has laid any distance" (the rules page)
            laid = [sum(_stat(hands, o, c, "played") for c in design.cards if c.role == "distance")
                    for o in range(sides) if o != s]
            score += (won & (np.stack(laid, axis=1) == 0).all(axis=1)) * sc["shutout"]
        else:  # "every side with 0 km gives 500 to each opponent"
            score += (others == 0).sum(axis=1) * sc["shutout"]
        called, missed = ext_side == s, (ext_side >= 0) & (trip_side != ext_side)
        score += (called & ~missed) * sc["extension"] + (~called & missed) * sc["extension"]
        if options["failed_extension_trip_points"]:
            score += (called & missed) * sc["trip_completed"]
        assert (hands[f"s{s}_score"].to_numpy() == score).all(), f"side {s}: hand score"


def _check_winners(hands, design, sides):
    """Every game has a winner, or is counted as capped or as having none
    (docs/designs.md, [scoring])."""
    meta = hands.attrs
    last = hands[hands["last_hand"] == 1]
    assert len(last) == meta["games"] and hands.groupby("game").size().max() <= meta["hand_cap"]
    winner = last["winner_side"].to_numpy()
    capped = last["capped"].to_numpy() > 0
    assert (winner[capped] == -1).all()
    if design.scoring:
        best = np.stack([last[f"s{s}_total"].to_numpy() for s in range(sides)], axis=1)
    else:  # the longest distance of a side still in the race: one disqualified "kan niet meer winnen"
        best = np.stack([np.where(last[f"s{s}_disqualified"] == 0, last[f"s{s}_distance"], -1)
                         for s in range(sides)], axis=1)
    alone = (best == best.max(axis=1, keepdims=True)).sum(axis=1) == 1
    if design.scoring:
        reached = best.max(axis=1) >= design.scoring["game_target"]
        expected = np.where(reached & alone, best.argmax(axis=1), -1)
        more = hands[hands["last_hand"] == 0]  # a game goes on while no side has reached the game target alone
        totals = np.stack([more[f"s{s}_total"].to_numpy() for s in range(sides)], axis=1)
        tied = (totals == totals.max(axis=1, keepdims=True)).sum(axis=1) > 1
        assert ((totals.max(axis=1) < design.scoring["game_target"])
                | (tied & (meta["options"]["tied_game"] == "play_on"))).all()
    else:
        trip_side = last["trip_side"].to_numpy()
        expected = np.where(trip_side >= 0, trip_side, np.where(alone & (best.max(axis=1) >= 0), best.argmax(axis=1), -1))
    assert (winner[~capped] == expected[~capped]).all()


def no_number_missing(md: str) -> None:
    """A report says a number or says why there is none: never nan or inf
    (a table leaves a cell it cannot fill empty)."""
    for line in md.splitlines():
        assert not re.search(r"\b(nan|NaN|inf)\b", line), line


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=design_texts(), seed=st.integers(0, 2**32 - 1))
def test_a_design_written_from_scratch_is_accepted_and_plays_cleanly(text, seed):
    design = parse_design(text, "generated.toml")
    for players in design.players:
        ct, rules = design.tables(players)
        plays_two_hands_cleanly(design, ct, rules, players, seed, f"generated design, {players} players")
    players = design.players[seed % len(design.players)]
    frame = simulate(design, players=players, games=6, policies=_seats(players), seed=seed, threads=1)
    check_records(frame, design, players)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=design_texts(), seed=st.integers(0, 2**32 - 1))
def test_a_design_written_from_scratch_reports_and_compares_with_stap_op(text, seed):
    # Stap op plays 2 to 6 players: every design shares a player count with it
    design = parse_design(text, "generated.toml")
    players = design.players[seed % len(design.players)]
    frame = simulate(design, players=players, games=30, policies=_seats(players), seed=seed, threads=1)
    no_number_missing(build_report(summarize(frame), frame.attrs).to_markdown())
    stapop = simulate("stapop", players=players, games=30, policies=_seats(players), seed=seed, threads=1)
    no_number_missing(build_comparison_report(*compare_summaries(frame, None, stapop, None)).to_markdown())
