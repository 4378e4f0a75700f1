"""Every check of a design file, one mistake at a time: refused with the field and the problem.

docs/designs.md: "Every mistake is refused with the file, the field and the problem", with the
ranges and the constraints of its tables. Each case makes one mistake in a small design that is
valid as written (the first test), so that the refusal is that mistake's and no other.
"""
import re
from pathlib import Path

import pytest

from etappe.analysis.race import simulate
from etappe.kernels.race_design import R_ROLE_MASKS, ROLES, DesignError, parse_design

DESIGNS_DOC = Path(__file__).parents[1] / "docs" / "designs.md"

TINY = """\
[design]
name = "tiny"
players = [2]
hand_size = 2
stock_exhausted = "play_out"

[target]
kind = "sum"
trip = 100

[[cards]]
key = "go"
role = "go"
count = 6

[[cards]]
key = "km50"
role = "distance"
value = 50
count = 10

[[cards]]
key = "stop"
role = "hazard"
remedy = "go"
count = 2

[[cards]]
key = "flat"
role = "hazard"
remedy = "spare"
count = 2

[[cards]]
key = "spare"
role = "remedy"
count = 2

[[cards]]
key = "limit"
role = "limit"
count = 2

[[cards]]
key = "end_limit"
role = "end_limit"
count = 2

[[cards]]
key = "ace"
role = "safety"
protects = ["flat"]
count = 1

[[cards]]
key = "thief"
role = "setback"
removes = "km50"
count = 1
"""


def card(key, role, extra=""):
    return f'\n[[cards]]\nkey = "{key}"\nrole = "{role}"\ncount = 1\n{extra}'


def test_the_small_design_is_valid_as_written():
    design = parse_design(TINY, "tiny.toml")
    assert [c.key for c in design.cards] == ["go", "km50", "stop", "flat", "spare", "limit", "end_limit", "ace",
                                             "thief"]
    assert sum(design.counts(2).values()) == 28


# (what is wrong, the text replaced, its replacement, the field named, the problem); the text "" adds the
# replacement at the end; tuples of them make several edits
MISTAKES = [
    ("no card types", TINY, "cards = []\n" + TINY[:TINY.index("[[cards]]")], "cards", "a design needs cards"),
    # a card given another role lacks that role's field: the message says what the role needs
    ("a remedy turned into a hazard", 'key = "spare"\nrole = "remedy"', 'key = "spare"\nrole = "hazard"',
     "cards[4] (spare).remedy", "missing: a hazard names the card that clears it"),
    ("a hazard turned into a safety", 'key = "flat"\nrole = "hazard"\nremedy = "spare"',
     'key = "flat"\nrole = "safety"', "cards[3] (flat).protects",
     "missing: a safety names the hazards, limits or setbacks it protects from"),
    ("a setback without its card", 'removes = "km50"\n', "", "cards[8] (thief).removes",
     "missing: a setback names the distance card type it takes back"),
    # a field of another role was "unknown field; expected one of: ..." with no word of whose it is
    ("a distance card that protects", "value = 50\n", 'value = 50\nprotects = ["flat"]\n', "cards[1] (km50).protects",
     "belongs to safety cards; this card's role is 'distance' (leave the field out, or make the card a safety card)"),
    ("a key twice", "", card("km50", "distance", "value = 25"), "cards",
     "card key 'km50' appears more than once (cards[1] and cards[9]: [[cards]] tables counted from 0)"),
    ("no go card", 'key = "go"\nrole = "go"', 'key = "go"\nrole = "remedy"', "cards",
     "no card with role 'go'; every design needs one"),
    ("no distance card", 'role = "distance"\nvalue = 50', 'role = "end_limit"', "cards",
     "no card with role 'distance'; every design needs one"),
    ("two go cards", "", card("roll", "go"), "cards",
     "more than one card type with role 'go'; a design has one go card"),
    ("a go card of count 0", 'role = "go"\ncount = 6', 'role = "go"\ncount = 0', "cards[0] (go).count",
     "the go card has count 0: no side could ever start moving"),
    ("a limit and nothing to lift it", 'key = "end_limit"\nrole = "end_limit"',
     'key = "end_limit"\nrole = "limit"',
     "cards", "a limit (or start_under_limit) needs a card with role 'end_limit' to lift it"),
    ("a remedy that is no card", 'remedy = "spare"', 'remedy = "spanner"', "cards[3] (flat).remedy",
     "no card 'spanner' in this design"),
    ("a remedy that is a distance card", 'remedy = "spare"', 'remedy = "km50"', "cards[3] (flat).remedy",
     "'km50' has role 'distance'; a remedy must be a 'remedy' or the 'go' card"),
    ("a remedy of count 0", 'role = "remedy"\ncount = 2', 'role = "remedy"\ncount = 0', "cards[3] (flat).remedy",
     "'spare' has count 0: a side hit by 'flat' could never move again"),
    ("a safety protecting nothing", 'protects = ["flat"]', "protects = []", "cards[7] (ace).protects",
     "a safety must protect at least one hazard, limit or setback"),
    ("a safety protecting no card", 'protects = ["flat"]', 'protects = ["puncture"]', "cards[7] (ace).protects",
     "no card 'puncture' in this design"),
    ("a safety protecting a remedy", 'protects = ["flat"]', 'protects = ["spare"]', "cards[7] (ace).protects",
     "'spare' has role 'remedy'; a safety protects hazards, limits or setbacks"),
    ("two safeties for one hazard", "", card("ace2", "safety", 'protects = ["flat"]'), "cards[9] (ace2).protects",
     "'flat' is already protected by 'ace'"),
    ("one hazard listed twice", 'protects = ["flat"]', 'protects = ["flat", "flat"]', "cards[7] (ace).protects",
     "'flat' is listed twice"),
    ("a setback removing a go card", 'removes = "km50"', 'removes = "go"', "cards[8] (thief).removes",
     "'go' is not a distance card of this design"),
    ("a setback removing no card", 'removes = "km50"', 'removes = "km75"', "cards[8] (thief).removes",
     "'km75' is not a distance card of this design"),
    ("a per-card target in a sum design", "value = 50\n", "value = 50\ntarget = 2\n", "cards[1] (km50).target",
     "per-card targets belong to set targets; this design's target is a sum"),
    ("a remedy for no hazard", "", card("oil", "remedy"), "cards[9] (oil)",
     "a remedy for no hazard: no hazard names it as its remedy"),
    ("hands that take the whole deck", "hand_size = 2", "hand_size = 14", "design.hand_size",
     "14 cards to each of 2 players take 28 of the deck's 28: none would be left to draw"),
    ("a deck over 400 cards", 'value = 50\ncount = 10', 'value = 50\ncount = 383', "cards", "401 cards; at most 400"),
    ("33 card types", "", "".join(card(f"oil{i}", "remedy") for i in range(24)), "cards", "33 card types; at most 32"),
    ("a distance of 0 km", "value = 50", "value = 0", "cards[1] (km50).value", "must be at least 1, not 0"),
    ("a distance beyond 10 000 km", "value = 50", "value = 10001", "cards[1] (km50).value",
     "must be at most 10000, not 10001"),
    # --option's text for a value is not TOML's: "7" was read as 7 and "off" as false, while 7.0 was refused
    ("a blank card name", 'key = "spare"\n', 'key = "spare"\nname = " "\n', "cards[4] (spare).name",
     "' ': reports show cards by name, so a name is text on one line (leave it out to show the key)"),
    ("a card name on two lines", 'key = "spare"\n', 'key = "spare"\nname = "spare\\nwheel"\n',
     "cards[4] (spare).name", "'spare\\nwheel': reports show cards by name, so a name is text on one line (leave "
     "it out to show the key)"),
    ("two names apart by a space only", ('key = "flat"\n', 'key = "spare"\n'),
     ('key = "flat"\nname = "Flat tyre"\n', 'key = "spare"\nname = "Flat tyre "\n'), "cards[4] (spare).name",
     "'Flat tyre ' is also the name of cards[3] (flat); reports show cards by name, so give each card its own"),
    ("a number in quotes", "", '\n[options]\nturn_cap = "7"\n', "options.turn_cap",
     "must be a whole number, written without quotes (turn_cap = 500), not '7'"),
    ("a switch in words", "", '\n[options]\nlimit_on_limit = "off"\n', "options.limit_on_limit",
     "must be true or false, written without quotes (limit_on_limit = false), not 'off'"),
    ("a misspelt rule option", "", "\n[options]\nturn_capp = 500\n", "options.turn_capp",
     "unknown rule option (did you mean 'turn_cap'?); known: coup_fourre, coup_fourre_turn_after_stock_empty, "
     "discard, failed_extension_trip_points, go_with_permanent_go, limit_on_limit, overshoot, roll_after_safety, "
     "safety_extra_turn_after_stock_empty, shutout, tied_game, turn_cap"),
    ("a set target with a trip", 'kind = "sum"', 'kind = "set"', "target.trip",
     "a set target has no trip: the distance cards' own `target` counts make it (cards.KEY.target; a sum target, "
     'kind = "sum", has a trip)'),
    ("an unknown rule option", "", "\n[options]\nrefuel = true\n", "options.refuel",
     "unknown rule option; known: coup_fourre, coup_fourre_turn_after_stock_empty, discard, "
     "failed_extension_trip_points, go_with_permanent_go, limit_on_limit, overshoot, roll_after_safety, "
     "safety_extra_turn_after_stock_empty, shutout, tied_game, turn_cap"),
    ("options that are no table", "[design]", "options = 3\n[design]", "options", "must be a table"),
    ("an empty name", 'name = "tiny"', 'name = " "', "design.name", "must not be empty"),
    # a comparison names a design by its title, a report its distances by the unit
    ("an empty title", 'name = "tiny"', 'name = "tiny"\ntitle = ""', "design.title",
     "must not be empty (leave it out for its default)"),
    ("an empty unit", 'name = "tiny"', 'name = "tiny"\nunit = " "', "design.unit",
     "must not be empty (leave it out for its default)"),
    ("an unknown field of [design]", 'name = "tiny"', 'name = "tiny"\ncolour = "red"', "design.colour",
     "unknown field; expected one of: hand_size, name, notes, players, reconstructed, start_under_limit, "
     "stock_exhausted, title, unit"),
    ("an unknown table", "", '\n[rules]\nfast = true\n', "rules",
     "unknown field; expected one of: cards, design, options, players, scoring, target"),
    ("a target that is no table", ("[design]", '[target]\nkind = "sum"\ntrip = 100\n'), ("target = 3\n[design]", ""),
     "target", "must be a table"),
    ("a flag that is not true or false", "value = 50\n", 'value = 50\nlimited = "yes"\n', "cards[1] (km50).limited",
     "must be true or false, not 'yes'"),
    ("a sum target without its trip", "trip = 100\n", "", "target.trip",
     "missing: a sum target needs its trip in km, even where every player count has a [players.N] trip, which "
     "replaces it for that count"),
    ("a trip for some player counts only", ("players = [2]", "trip = 100\n", ""),
     ("players = [2, 3]", "", "\n[players.2]\ntrip = 100\n"), "target.trip",
     "missing: a sum target needs its trip in km, even where every player count has a [players.N] trip, which "
     "replaces it for that count (3 players: no players.3.trip)"),
    ("a trip for every player count but none of its own", "trip = 100\n", ("\n[players.2]\ntrip = 100\n"),
     "target.trip", "missing: a sum target needs its trip in km, even where every player count has a "
     "[players.N] trip, which replaces it for that count"),
    # [players.N]
    ("a player count the design does not list", "", "\n[players.3]\ntrip = 100\n", "players.3",
     "not one of design.players (2)"),
    ("a player count that is no table", "", "\n[players]\n2 = 5\n", "players.2", "must be a table"),
    # another way of writing 2 would be a second [players.2], the last silently winning
    ("a player count with a leading zero", "", '\n[players."02"]\ntrip = 50\n', "players.02",
     "not a player count as digits write it, such as [players.2]"),
    ("a player count in superscript", "", '\n[players."\u00b2"]\ntrip = 50\n', "players.\u00b2",
     "not a player count as digits write it, such as [players.2]"),
    ("an unknown field of a player count", "", "\n[players.2]\nteams = 2\n", "players.2.teams",
     "unknown field; expected one of: extension, remove, target, team_size, trip"),
    ("teams of 0", "", "\n[players.2]\nteam_size = 0\n", "players.2.team_size", "must be at least 1, not 0"),
    ("one team", "", "\n[players.2]\nteam_size = 2\n", "players.2.team_size", "a game needs at least two sides"),
    ("teams that do not divide the players", "", "\n[players.2]\nteam_size = 3\n", "players.2.team_size",
     "2 players cannot form teams of 3"),
    ("a trip of 0", "", "\n[players.2]\ntrip = 0\n", "players.2.trip", "must be at least 1, not 0"),
    ("an extension no longer than the trip", "", "\n[players.2]\nextension = 100\n", "players.2.extension",
     "the extension must be longer than the trip"),
    ("a removal of no card", "", "\n[players.2]\nremove = { spanner = 1 }\n", "players.2.remove.spanner",
     "no such card in this design"),
    ("a removal of more than the deck has", "", "\n[players.2]\nremove = { flat = 3 }\n",
     "players.2.remove.flat", "removes 3 but the deck has 2"),
    ("a removal that leaves too few to deal", ("hand_size = 2", ""),
     ("hand_size = 13", "\n[players.2]\nremove = { km50 = 2 }\n"), "players.2.remove",
     "leaves 26 cards for 2 players, but 13 cards to each of them take 26: none would be left to draw"),
    # [scoring]
    ("scoring that is no table", "[design]", "scoring = 3\n[design]", "scoring", "must be a table"),
    ("a game target of 0", "", "\n[scoring]\ngame_target = 0\n", "scoring.game_target", "must be at least 1, not 0"),
    ("a safe trip card that is no distance card", "",
     '\n[scoring]\ngame_target = 1000\nsafe_trip = 300\nsafe_trip_card = "go"\n', "scoring.safe_trip_card",
     "'go' is not a distance card of this design"),
]


def edited(text, old, new):
    """text with old replaced once by new, or new added at the end where old is empty; tuples of old and
    new make their edits in turn."""
    for one_old, one_new in zip(old, new) if isinstance(old, tuple) else [(old, new)]:
        assert one_old == "" or one_old in text, one_old
        text = text + one_new if one_old == "" else text.replace(one_old, one_new, 1)
    return text


@pytest.mark.parametrize("old, new, problem", [
    # tomllib's own words, with a table as the file writes it (not Python's ('design',)) and the line quoted
    ("[design]", "[design]\n[design]", "Cannot declare design twice (at line 2, column 8): '[design]'"),
    ('count = 6', 'count = 6\ncount = 7', "Cannot overwrite a value (at line 15, column 10): 'count = 7'"),
    ('key = "go"', 'key = \u201cgo\u201d', "Invalid value (at line 12, column 7): 'key = \u201cgo\u201d'"),
])
def test_a_file_that_is_not_toml_says_where_and_shows_the_line(old, new, problem):
    with pytest.raises(DesignError) as refused:
        parse_design(edited(TINY, old, new), "tiny.toml")
    assert str(refused.value) == f"tiny.toml: not valid TOML: {problem}"


@pytest.mark.parametrize("old, new, field, problem", [m[1:] for m in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_one_mistake_is_refused_naming_the_field_and_the_problem(old, new, field, problem):
    with pytest.raises(DesignError) as refused:
        parse_design(edited(TINY, old, new), "tiny.toml")
    assert str(refused.value) == f"tiny.toml: {field}: {problem}", str(refused.value)


def _card_fields_by_role():
    """docs/designs.md's [[cards]] table: each field given to some roles only, with those roles."""
    section = DESIGNS_DOC.read_text().split("## `[[cards]]`")[1].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)` \| ([\w, ]+) \|", section, re.M)
    return [(field, roles) for field, roles in rows if roles != "all"]


@pytest.mark.parametrize("field, roles", _card_fields_by_role())
def test_a_field_of_another_role_says_which_role_takes_it(field, roles):
    assert roles in ROLES  # one role each, as the table says today
    # the valid small design's remedy card, or its distance card for a field no distance card takes
    key, index, role = ("km50", 1, "distance") if roles != "distance" else ("spare", 4, "remedy")
    text = TINY.replace(f'key = "{key}"\nrole = "{role}"\n', f'key = "{key}"\nrole = "{role}"\n{field} = 1\n', 1)
    assert text != TINY
    with pytest.raises(DesignError) as refused:
        parse_design(text, "tiny.toml")
    assert str(refused.value) == (
        f"tiny.toml: cards[{index}] ({key}).{field}: belongs to {roles} cards; this card's role is {role!r} "
        f"(leave the field out, or make the card a {roles} card)")



@pytest.mark.parametrize("field, close, owner, key, index, role", [
    ("protect", "protects", "safety", "km50", 1, "distance"),  # a misspelt field of another role
    ("valu", "value", "distance", "spare", 4, "remedy"),
])
def test_a_misspelt_field_of_another_role_is_named(field, close, owner, key, index, role):
    text = TINY.replace(f'key = "{key}"\nrole = "{role}"\n', f'key = "{key}"\nrole = "{role}"\n{field} = 1\n', 1)
    assert text != TINY
    with pytest.raises(DesignError) as refused:
        parse_design(text, "tiny.toml")
    assert str(refused.value) == (f"tiny.toml: cards[{index}] ({key}).{field}: unknown field; did you mean {close!r}? "
                                  f"It belongs to {owner} cards, and this card's role is {role!r}")


def test_a_misspelt_field_of_the_cards_own_role_lists_its_fields():
    # "vaule" is closest to the distance card's own value: the list of its fields, not another role's
    text = TINY.replace('key = "km50"\nrole = "distance"\n', 'key = "km50"\nrole = "distance"\nvaule = 1\n', 1)
    with pytest.raises(DesignError) as refused:
        parse_design(text, "tiny.toml")
    assert str(refused.value) == ("tiny.toml: cards[1] (km50).vaule: unknown field; expected one of: cap, count, key, "
                                  "limited, name, role, target, value")

@pytest.mark.parametrize("text, what", [
    # docs/bremen.md: a board file holds [board] and [fields], and [links] only where it has some
    ('[board]\nname = "mine"\n\n[fields]\nhouse = "house"\n',
     "this is a Bremen board file, not a deck design; `etappe bremen validate` checks it, `--board` plays it"),
    # docs/positions.md: a position has on_turn and [[sides]]; `etappe moves pos.toml millebornes` (the two
    # arguments swapped) read it as the design
    ('players = 2\non_turn = 0\nstock = 40\n[[sides]]\nbattle = "roll"\n[[sides]]\n',
     "this is a position, not a deck design; `etappe moves DESIGN POSITION_FILE` lists its legal moves (the "
     "design first)"),
])
def test_another_kind_of_file_given_as_a_design_is_named_as_what_it_is(text, what):
    with pytest.raises(DesignError) as refused:
        parse_design(text, "mine.toml")
    assert str(refused.value) == f"mine.toml: design: missing table: {what}"


def test_32_card_types_are_accepted_and_played():
    text = TINY + "".join(card(f"d{i}", "distance", "value = 1") for i in range(23))
    design = parse_design(text, "tiny.toml")
    assert len(design.cards) == 32
    # the engine holds a role's cards as the bits of an int32: the 32nd card is its sign bit
    _, rules = design.tables(2)
    distance_bits = int(rules[R_ROLE_MASKS + ROLES.index("distance")]) & 0xFFFFFFFF
    assert distance_bits == 1 << 1 | sum(1 << i for i in range(9, 32))  # km50, then d0 to d22
    df = simulate(design, players=2, games=200, seed=1, threads=1)
    assert (df["s0_d22_played"] + df["s1_d22_played"]).sum() > 0


def test_a_hazard_removed_with_its_remedy_or_never_dealt_needs_no_remedy():
    # a side can be hit only by a hazard in the deck: none, then no remedy is needed either (accepted, and
    # dealt without both)
    removed = parse_design(TINY + "\n[players.2]\nremove = { flat = 2, spare = 2 }\n", "tiny.toml")
    never = parse_design(TINY.replace('remedy = "spare"\ncount = 2', 'remedy = "spare"\ncount = 0')
                         .replace('role = "remedy"\ncount = 2', 'role = "remedy"\ncount = 0'), "tiny.toml")
    for design in (removed, never):
        assert (design.counts(2)["flat"], design.counts(2)["spare"]) == (0, 0)
        design.tables(2)  # the engine's tables are built for it as well


LIMITED = TINY.replace("value = 50\n", "value = 50\nlimited = true\n").replace(
    'role = "limit"\ncount = 2', 'role = "limit"\ncount = 1')


@pytest.mark.parametrize("edit, field, none_left", [
    (('role = "end_limit"\ncount = 2', 'role = "end_limit"\ncount = 0'), "cards[6] (end_limit).count",
     "has count 0"),  # in the file: for every player count
    (("", "\n[players.2]\nremove = { end_limit = 2 }\n"), "players.2.remove.end_limit", "has count 0 for 2 players"),
    ((('role = "end_limit"\ncount = 2', ""), ('role = "end_limit"\ncount = 1', "\n[players.2]\nremove = { end_limit = 1 }\n")),
     "players.2.remove.end_limit", "has count 0 for 2 players"),  # the one end_limit card, removed
])
def test_a_limit_nothing_can_lift_on_a_trip_that_needs_limited_cards_is_refused(edit, field, none_left):
    """docs/designs.md: limit cards to play while the target needs distance cards the limit blocks, and
    no end_limit card left (count 0, or after a player count's remove) nor a safety against the limit.
    One limit card is enough to limit a side; the field named is where the end_limit went."""
    parse_design(LIMITED, "tiny.toml")
    text = edited(LIMITED, *edit)
    with pytest.raises(DesignError) as refused:
        parse_design(text, "tiny.toml")
    assert str(refused.value) == (
        f"tiny.toml: {field}: 'end_limit' {none_left} and no safety protects from the limit, but "
        "limit can limit a side and the target for 2 players needs km50, which a limited side cannot lay: no game "
        "could end")
    # a safety against the limit lifts it too
    parse_design(text.replace('protects = ["flat"]', 'protects = ["flat", "limit"]'), "tiny.toml")


SET = TINY.replace('kind = "sum"\ntrip = 100', 'kind = "set"').replace("value = 50\n", "value = 50\ntarget = 2\n")


@pytest.mark.parametrize("old, new, field, problem", [
    ("target = 2", "target = 0", "cards", "the set target is empty for 2 players: give distance cards a `target`"),
    # the file's count is every player count's: it said "the deck has 10 for 2 players"
    ("target = 2", "target = 11", "cards[1] (km50).target", "needs 11 but its count is 10"),
    ("", "\n[players.2]\nremove = { km50 = 9 }\n", "cards[1] (km50).target",
     "needs 2 but the deck has 1 for 2 players: players.2.remove takes 9 of its 10"),
    ("", "\n[players.2]\ntarget = { km50 = 11 }\n", "players.2.target.km50", "needs 11 but its count is 10"),
    ("", "\n[players.2]\ntarget = { km50 = 2 }\nremove = { km50 = 9 }\n", "players.2.target.km50",
     "needs 2 but the deck has 1 for 2 players: players.2.remove takes 9 of its 10"),
    # a player count's set names distance cards: a go card in it left the set empty and every game capped
    ("", "\n[players.2]\ntarget = { go = 3 }\n", "players.2.target.go",
     "'go' is a go card; a set target counts distance cards"),
    ("target = 2", "target = 2\ncap = 1", "cards[1] (km50).target", "needs 2 but cap is 1"),
    ("value = 50\ntarget = 2", "value = 10000\ntarget = 3", "", ""),  # 30 000 km: the most, accepted
    (("value = 50\ntarget = 2", ""), ("value = 10000\ntarget = 3", card("m1", "distance", "value = 1\ntarget = 1")),
     "cards", "the set target is 30001 km for 2 players; at most 30000"),
])
def test_a_set_target_the_deck_cannot_lay_is_refused(old, new, field, problem):
    text = edited(SET, old, new)
    if not field:
        assert parse_design(text, "tiny.toml").trip_for(2) == (30000, 0)
        return
    with pytest.raises(DesignError) as refused:
        parse_design(text, "tiny.toml")
    assert str(refused.value) == f"tiny.toml: {field}: {problem}"


def test_a_player_count_s_set_is_the_whole_set_for_it():
    # docs/designs.md: [players.N] target is "the set for this player count": cards it leaves out need none
    text = SET + card("km25", "distance", "value = 25\ntarget = 1") + "\n[players.2]\ntarget = { km50 = 3 }\n"
    design = parse_design(text, "tiny.toml")
    assert design.set_target(2)["km25"] == 0 and design.trip_for(2) == (150, 0)


def test_a_set_target_may_ask_for_none_of_a_distance_card():
    # docs/designs.md: a distance card's target is 0 to 400; with 0 the kind is complete from the start
    text = TINY.replace('kind = "sum"\ntrip = 100', 'kind = "set"').replace("value = 50\n", "value = 50\ntarget = 2\n")
    text += card("km25", "distance", "value = 25\ntarget = 0")
    design = parse_design(text, "tiny.toml")
    assert [c.target for c in design.cards if c.role == "distance"] == [2, 0]
