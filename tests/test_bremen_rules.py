"""Bremer Stadtmusikanten rule scenarios, from the rulebook
(../shared/seeds/bremer_stadtmusikanten.nl.txt, digest in
../shared/rules/bremer_stadtmusikanten.md) on the default reconstruction board.

Default board: road r00..r23 with starts r00 (colour 0), r06 (1), r12 (2),
r18 (3); bridge b0 between r03 and m02, b2 between r15 and m10; plain links
r09-m06, r21-m14; middle ring m00..m15 to inner ring i00..i07 at m00-i00,
m04-i02, m08-i04, m12-i06; the house next to i01, i03, i05, i07.
Four players: seat c plays colour c. Every test puts seat 0 on turn.
"""
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from etappe.analysis.bremen import Game, parse_policy, simulate
from etappe.kernels import bremen as K
from etappe.kernels.bremen_board import BoardError, load_board, ring_board
from etappe.kernels.rng import STREAM_CHANCE, STREAM_POLICY_BASE, game_key, randint


def game(players=4, **options):
    g = Game(players=players, options=options)
    g.seat = 0
    return g


def first_roll(seed, game_index):
    """The first roll of Game.play(seed=seed, game_index=game_index), drawn
    as the kernel draws it: the normal die, then the robber die (face 0 is R)."""
    key = np.uint64(game_key(np.uint64(seed), game_index, STREAM_CHANCE))
    d, key = randint(key, 6)
    r, _ = randint(np.uint64(key), 6)
    return int(d) + 1, "R" if r == 0 else int(r) + 1


def rolling(normal, robber, seed):
    """The first game index whose first roll is (normal die, robber die)."""
    return next(i for i in range(5000) if first_roll(seed, i) == (normal, robber))


def dests(moves, colour, animal, die=None):
    return {f for (d, c, a, f) in moves if c == colour and a == animal and (die is None or d == die)}


def park(g, colour, fields):
    """Put a colour's donkey, dog, cat, rooster on the given fields."""
    for animal, field in zip(("donkey", "dog", "cat", "rooster"), fields):
        g.place(colour, animal, field)


# --- the board ----------------------------------------------------------------

def test_default_board_is_the_documented_reconstruction():
    b = load_board()
    assert b.reconstruction and "reconstruction" in b.label
    assert len(b.names) == 24 + 16 + 8 + 2 + 1
    neighbours = {n: {b.names[j] for j in b.adj[i][: b.deg[i]]} for i, n in enumerate(b.names)}
    assert neighbours["house"] == {"i01", "i03", "i05", "i07"}
    assert neighbours["b0"] == {"r03", "m02"} and neighbours["b2"] == {"r15", "m10"}
    assert "m06" in neighbours["r09"] and "m14" in neighbours["r21"]
    assert {"i00", "m01", "m15"} == neighbours["m00"]
    assert [b.names[b.binfo[1 + c]] for c in range(4)] == ["r00", "r06", "r12", "r18"]
    assert all((b.adj[i, b.deg[i]:] == -1).all() for i in range(len(b.names)))  # padded -1, as documented


def _house_behind_a_bridge(text):
    """The ring board with the house linked to the inner ring through a bridge, b9, and to a forest
    field of its own, f9: only a full pyramid enters the house, and a carrying animal never enters a
    bridge."""
    for k in (1, 3, 5, 7):
        text = text.replace(f'  ["i0{k}", "house"],\n', "")
    return (text.replace('house = "house"', 'b9 = "bridge"\nf9 = "forest"\nhouse = "house"')
            .replace("chains = [", 'chains = [["i01", "b9", "house"], ["f9", "house"],'))


def _write(tmp_path, text):
    path = tmp_path / "board.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("edit, field, problem", [
    (lambda t: t.replace('r12 = "start:2"', 'r12 = "road"'), None, "start field of colour 2 missing"),
    (lambda t: t.replace('["r03", "b0", "m02"]', '["r03", "b0"]'), "b0", "a bridge must join two"),
    (lambda t: t.replace('r05 = "road"', 'r05 = "swamp"'), "r05", "unknown kind"),
    (lambda t: t.replace('["r21", "m14"]', '["r21", "m99"]'), "m99", "unknown field"),
    (lambda t: t.replace("reconstruction = true", "reconstruction = true\nfoo = 1"), None, "unknown [board] key"),
    (lambda t: t + "\n[robber]\nstart = 3\n", None, "unknown table(s) 'robber'; a board file has"),
    # a race deck design given as a board (its [design] and [[cards]]) is named as one
    (lambda t: '[design]\nname = "x"\n[[cards]]\nkey = "go"\n', None,
     "this is a deck design of the race games, not a Bremen board; `etappe decks validate` checks it"),
    (lambda t: t.replace("[fields]", "[fields"), None, "not valid TOML"),
    # a field given twice: the message quotes the line, as a TOML file writes it
    (lambda t: t.replace('r05 = "road"', 'r05 = "road"\nr05 = "forest"'), None,
     "not valid TOML (Cannot overwrite a value (at line"),
    (lambda t: t.replace('r05 = "road"', 'r05 = "road"\nr05 = "forest"'), None, "): 'r05 = \"forest\"')"),
    (lambda t: t.replace('r05 = "road"', 'r05 = "start:4"'), "r05", "start colour must be 0..3"),
    (lambda t: t.replace('r05 = "road"', 'r05 = "start:1"'), "r06",
     "second start field of colour 1 (first: 'r05')"),
    (lambda t: t.replace('r05 = "road"', 'r05 = "house"'), None, "exactly one house needed, found 2"),
    (lambda t: t.replace('house = "house"', 'house = "forest"'), None, "exactly one house needed, found 0"),
    (lambda t: t.replace("chains = [", 'chains = [["r04", "r05", "r05"],'), "r05", "linked to itself"),
    (lambda t: t.replace('house = "house"', 'house = "house"\nz = "road"'), "z", "not linked to anything"),
    (lambda t: t.replace('house = "house"', 'house = "house"\n' + "".join(f'z{k} = "road"\n' for k in range(7)))
     .replace("chains = [", "chains = [" + "".join(f'["r05", "z{k}"],' for k in range(7))),
     "r05", "9 links, at most 8"),
    (lambda t: t.replace('i01 = "forest"', 'i01 = "road"').replace('i03 = "forest"', 'i03 = "road"')
     .replace('i05 = "forest"', 'i05 = "road"').replace('i07 = "forest"', 'i07 = "road"'),
     "house", "the house has no forest neighbour"),
    (lambda t: t.replace("[links]", "".join(f'z{k} = "road"\n' for k in range(65_535)) + "[links]"), None,
     "65586 fields, at most 65535"),
    (lambda t: "board = 1\n" + t[t.index("[fields]"):], None, "[board] must be a table (name, reconstruction), got 1"),
    (lambda t: t.replace('r05 = "road"', "r05 = 5"), "r05", "kind must be a string, got 5"),
    (lambda t: t.replace("chains = [", 'chains = [["r05"],'), None,
     "a link chain needs at least two field names, got ['r05']"),
    (lambda t: t.replace("chains = [", 'chains = [["r05", 6],'), None,
     "a link chain holds field names (strings), got 6 in ['r05', 6]"),
    (_house_behind_a_bridge, "r00", "house reachable from the start field of colour 0 only from a bridge"),
    # colour 1's stretch of road, r01 to r11, with its two ways into the forest cut: only through the
    # start fields of colours 0 and 2, which animals never enter
    (lambda t: t.replace('  ["r03", "b0", "m02"],\n', "").replace('  ["r09", "m06"],\n', "")
     .replace('b0 = "bridge"\n', ""), "r06",
     "house unreachable from the start field of colour 1: the walk from it ends at r00, r12, start field(s) of "
     "other colours, which animals never enter"),
])
def test_board_errors_name_file_field_and_problem(tmp_path, edit, field, problem):
    path = _write(tmp_path, edit(ring_board()))
    with pytest.raises(BoardError) as err:
        load_board(path)
    message = str(err.value)
    assert str(path) in message and problem in message
    if field:
        assert f"field '{field}'" in message


def test_ring_board_with_its_defaults_is_the_default_board_file():
    # ring_board's docstring: the defaults give the documented reconstruction (boards/default.toml)
    generated = tomllib.loads(ring_board())
    written = tomllib.loads(Path(load_board().path).read_text())
    assert generated["fields"] == written["fields"] and generated["links"] == written["links"]
    assert generated["board"]["generator"] == written["board"]["generator"]


@pytest.mark.parametrize("chain, shown", [
    ('["zz", "r01", "r02", "r03"]', "(chain ['zz', 'r01', ...])"),
    ('["r01", "r02", "zz", "r03", "r04"]', "(chain [..., 'r02', 'zz', 'r03', ...])"),
    ('["r01", "r02", "zz"]', "(chain [..., 'r02', 'zz'])"),
])
def test_an_unknown_name_in_a_chain_is_shown_with_its_neighbours(tmp_path, chain, shown):
    path = _write(tmp_path, ring_board().replace("chains = [", f"chains = [{chain},"))
    with pytest.raises(BoardError) as err:
        load_board(path)
    assert str(err.value) == f"{path}: field 'zz': link to unknown field: not in [fields] {shown}"


def test_a_board_file_that_cannot_be_read_is_named_with_why(tmp_path):
    missing = tmp_path / "no_such_board.toml"
    with pytest.raises(BoardError, match=f"^{re.escape(str(missing))}: cannot read board file \\(No such file or directory\\)$"):
        load_board(missing)


def test_unreachable_house_is_an_error(tmp_path):
    # cut all four links between the road and the forest
    text = ring_board()
    for link in ('["r03", "b0", "m02"]', '["r09", "m06"]', '["r15", "b2", "m10"]', '["r21", "m14"]'):
        text = text.replace(link + ",\n", "")
    text = text.replace('b0 = "bridge"\n', "").replace('b2 = "bridge"\n', "")
    with pytest.raises(BoardError, match="house unreachable from the start field of colour 0"):
        load_board(_write(tmp_path, text))


def test_a_house_entered_only_from_bridges_is_an_error(tmp_path):
    # Only a full pyramid may enter the house, and an animal carrying others
    # never enters a bridge: the house's only neighbours here are the bridge
    # b and the forest f behind the house (the robber's way out), so no
    # pyramid could ever storm it, nor chase the robber (it never leaves
    # h, b and f, and f is reached only through the house).
    text = ('[fields]\ns0 = "start:0"\ns1 = "start:1"\ns2 = "start:2"\ns3 = "start:3"\n'
            'r1 = "road"\nr2 = "road"\nr3 = "road"\nr4 = "road"\nb = "bridge"\nh = "house"\nf = "forest"\n'
            '[links]\nchains = [["r1", "r2", "r3", "r4", "r1"], ["s0", "r1"], ["s1", "r2"], ["s2", "r3"], '
            '["s3", "r4"], ["r1", "b", "h", "f"]]\n')
    with pytest.raises(BoardError, match="field 's0': house reachable from the start field of colour 0 only "
                                         "from a bridge"):
        load_board(_write(tmp_path, text))
    # a road field next to the house as well: a pyramid built there storms it
    load_board(_write(tmp_path, text.replace('["r1", "b", "h", "f"]', '["r1", "b", "h", "f"], ["r3", "h"]')))


# --- moving: exact length, any direction, jumping, forbidden fields ----------------

def test_exact_length_any_direction_and_single_animals_cross_bridges():
    g = game()
    g.place(0, "dog", "r03")
    moves = g.first_moves(2, 2)
    assert dests(moves, 0, "dog") == {"r01", "r05", "m02"}  # m02 over the bridge b0


def test_an_animal_carrying_another_cannot_cross_a_bridge():
    g = game()
    g.place(0, "dog", "r03")
    g.place(0, "cat", "r03")
    assert dests(g.first_moves(2, 2), 0, "dog") == {"r01", "r05"}
    assert "m02" in dests(g.first_moves(2, 2), 0, "cat")  # the cat alone may


def test_bridge_stack_option_lets_a_single_animal_climb_on_a_bridge():
    # cat r01 -> r02 -> r03 -> b0: three fields; a foreign donkey stands on the bridge b0
    for bridge_stack in (False, True):
        g = game(bridge_stack=bridge_stack)
        g.place(1, "donkey", "b0")
        g.place(0, "cat", "r01")
        g.place(0, "dog", "r14")
        g.place(0, "rooster", "r14")  # the dog carries the rooster: r14 -> r15 -> b2 is closed to it
        g.place(2, "rooster", "b2")
        assert ("b0" in dests(g.first_moves(3, 3), 0, "cat")) is bridge_stack  # default: no stack on a bridge
        assert dests(g.first_moves(3, 3), 0, "cat") - {"b0"} == {"r04", "r22"}
        assert "b2" not in dests(g.first_moves(2, 2), 0, "dog")  # a carrying animal never enters a bridge
        assert "b2" in dests(g.first_moves(2, 2), 0, "rooster")  # alone it knocks the foreign rooster off
        if bridge_stack:
            eff = g.move(0, "cat", "b0")
            assert g.stack("b0") == [(1, "donkey"), (0, "cat")] and eff["climbed"] and eff["extra_roll"]


def test_an_animal_carrying_another_never_leaves_a_bridge():
    # Seed: "Een dier waarop een kleiner zit, kan dus in geen geval de brug
    # oversteken!" With bridge_stack a cat has climbed onto the donkey on b0:
    # carrying it, the donkey goes to neither side (r03, m02), as that would
    # carry the cat across; the cat alone may leave, and then the donkey.
    g = game(bridge_stack=True)
    g.place(0, "donkey", "b0")
    g.place(0, "cat", "b0")
    moves = g.first_moves(1, 1)
    assert dests(moves, 0, "donkey") == set()
    assert dests(moves, 0, "cat") == {"r03", "m02"}
    g.move(0, "cat", "m02")
    assert dests(g.first_moves(1, 1), 0, "donkey") == {"r03", "m02"}


def test_occupied_fields_are_jumped_and_counted():
    g = game()
    g.place(0, "dog", "r03")
    g.place(1, "donkey", "r04")
    assert "r05" in dests(g.first_moves(2, 2), 0, "dog")


def test_foreign_start_fields_are_never_entered_nor_passed():
    g = game()
    g.place(0, "dog", "r04")
    moves = g.first_moves(3, 3)
    assert dests(moves, 0, "dog") == {"r01", "m02"}  # r07 would pass r06 (colour 1's start)
    g.place(0, "cat", "r05")
    assert "r06" not in dests(g.first_moves(1, 1), 0, "cat")


def test_no_passing_through_the_house():
    g = game()
    g.place(0, "dog", "i01")
    assert "i05" not in dests(g.first_moves(2, 2), 0, "dog")  # only reachable over the house
    assert "i03" in dests(g.first_moves(2, 2), 0, "dog")      # round the ring


def test_only_a_full_pyramid_enters_the_house_with_exact_count():
    g = game()
    park(g, 0, ["i01", "i01", "i01", "r02"])  # donkey, dog, cat: no rooster
    assert "house" not in dests(g.first_moves(1, 1), 0, "donkey")
    g.place(0, "rooster", "i01")
    assert "house" in dests(g.first_moves(1, 4), 0, "donkey", die=1)
    assert "house" not in dests(g.first_moves(1, 4), 0, "donkey", die=4)


# --- the worked example of the rulebook (section 5) --------------------------------

def test_rulebook_example_donkey_and_dog():
    """Own four animals stacked on the start field; five fields further a
    foreign donkey with a rooster on top. Roll 3 and 2: the donkey takes all
    three fields, then the dog (with cat and rooster) two fields onto the
    foreign donkey; the own donkey stays; the foreign rooster goes home; the
    player rolls again."""
    g = game()
    g.place(1, "donkey", "r05")
    g.place(1, "rooster", "r05")
    assert g.stack("r00") == [(0, "donkey"), (0, "dog"), (0, "cat"), (0, "rooster")]
    assert (3, 0, "donkey", "r03") in g.first_moves(3, 2)
    first = g.move(0, "donkey", "r03")
    assert g.stack("r03") == [(0, "donkey"), (0, "dog"), (0, "cat"), (0, "rooster")]
    assert not first["extra_roll"]
    assert (2, 0, "dog", "r05") in g.second_moves(2, first=(0, "donkey"))
    second = g.move(0, "dog", "r05")
    assert g.stack("r05") == [(1, "donkey"), (0, "dog"), (0, "cat"), (0, "rooster")]
    assert g.stack("r03") == [(0, "donkey")]
    assert g.stack("r06") == [(1, "dog"), (1, "cat"), (1, "rooster")]
    assert second["sent_home"] == 1 and second["climbed"] and second["extra_roll"]
    assert g.errors() == 0


def test_both_dice_never_move_the_same_animal():
    g = game()
    park(g, 0, ["r02", "r09", "r10", "r11"])
    assert dests(g.second_moves(2, first=(0, "donkey")), 0, "donkey") == set()


# --- landing: climbing, knocking home -------------------------------------------------

def test_equal_and_smaller_animals_are_knocked_home():
    g = game()
    g.place(0, "dog", "r03")
    g.place(1, "dog", "r05")
    g.place(1, "cat", "r05")
    eff = g.move(0, "dog", "r05")
    assert g.stack("r05") == [(0, "dog")]
    assert eff["sent_home"] == 2 and not eff["climbed"] and not eff["extra_roll"]
    assert g.stack("r06") == [(1, "donkey"), (1, "dog"), (1, "cat"), (1, "rooster")]


def test_larger_stay_smaller_go_and_the_harder_variant_denies_the_roll():
    for harder, extra in ((False, True), (True, False)):
        g = game(harder=harder)
        g.place(0, "dog", "r03")
        g.place(1, "donkey", "r05")
        g.place(1, "cat", "r05")
        eff = g.move(0, "dog", "r05")
        assert g.stack("r05") == [(1, "donkey"), (0, "dog")]
        assert eff["climbed"] and eff["sent_home"] == 1 and eff["extra_roll"] is extra
    g = game(harder=True)
    g.place(0, "dog", "r03")
    g.place(1, "donkey", "r05")
    assert g.move(0, "dog", "r05")["extra_roll"]  # climbing without knocking: still a roll


def test_harder_scope_judges_the_move_or_the_whole_roll():
    # First move: the dog sits on a larger donkey, sending nobody home. Second
    # move: the cat knocks a rooster home without sitting on anything.
    def roll(**options):
        g = game(harder=True, **options)
        g.place(0, "dog", "r03")
        g.place(1, "donkey", "r05")
        g.place(0, "cat", "r08")
        g.place(1, "rooster", "r10")
        first, second = g.move(0, "dog", "r05"), g.move(0, "cat", "r10")
        assert first["climbed"] and first["sent_home"] == 0 and second["sent_home"] == 1 and not second["climbed"]
        state = K.roll_earns(K.roll_earns(0, first["effects"], g.opts), second["effects"], g.opts)
        return state == 1

    assert roll()  # per move (the default): the climbing move sent nobody home
    assert not roll(harder_scope="roll")  # per roll: the roll did send an animal home


def test_the_mover_carries_smaller_riders_and_leaves_larger_animals():
    g = game()
    g.place(0, "donkey", "r03")
    g.place(0, "dog", "r03")
    g.place(2, "cat", "r03")
    g.move(0, "dog", "r05")
    assert g.stack("r05") == [(0, "dog"), (2, "cat")]
    assert g.stack("r03") == [(0, "donkey")]


# --- moving foreign animals ------------------------------------------------------------

def test_a_foreign_animal_may_move_only_onto_an_own_animal():
    g = game()
    g.place(1, "cat", "r10")
    g.place(0, "dog", "r08")
    g.place(2, "donkey", "m04")
    moves = g.first_moves(2, 4)
    assert dests(moves, 1, "cat", die=2) == {"r08"}  # onto the own dog; not the empty m06
    assert dests(moves, 1, "cat", die=4) == set()    # m04 (r09, m06, m05) holds only a foreign donkey
    assert dests(moves, 1, "donkey") == set()         # a foreign donkey can sit on nothing


@pytest.mark.parametrize("rule", ["direct", "stack"])
def test_an_own_animal_on_the_next_field_is_nothing_to_sit_on(rule):
    # "A foreign animal may be moved only if that move ends on top of one of your own animals": on
    # the field it lands on. m06 holds a foreign dog, and an own rooster stands on the field after
    # it in the board's numbering (a field's four places end where the next field's begin): the
    # foreign cat may not land on m06 under either option (foreign_onto "stack" looks through the
    # whole stack below, which holds no own animal).
    g = game(foreign_onto=rule)
    g.place(1, "cat", "r10")
    g.place(0, "dog", "r08")
    g.place(2, "donkey", "m04")
    g.place(2, "dog", "m06")
    g.place(0, "rooster", g.board.names[g.board.index("m06") + 1])
    assert dests(g.first_moves(2, 4), 1, "cat", die=2) == {"r08"}


def test_foreign_animal_onto_own_animal_under_a_foreign_one_is_an_option():
    for rule, allowed in (("direct", False), ("stack", True)):
        g = game(foreign_onto=rule)
        g.place(1, "cat", "r10")
        g.place(0, "donkey", "r08")
        g.place(2, "dog", "r08")  # own donkey below a foreign dog
        assert ("r08" in dests(g.first_moves(2, 2), 1, "cat")) is allowed


# --- the own start field ----------------------------------------------------------------

def test_landing_on_the_own_start_field_first_then_carried_off():
    # The own dog waits on r10, where it could move 3 fields: it must not,
    # because the second move has to carry the rooster off r00 again.
    g = game()
    g.place(0, "dog", "r10")
    g.place(0, "rooster", "r02")  # donkey and cat stay on r00
    assert (2, 0, "rooster", "r00") in g.first_moves(2, 3)
    assert dests(g.second_moves(3, first=(0, "rooster")), 0, "dog") == {"r07", "m05", "m07"}  # the rule ignored
    eff = g.move(0, "rooster", "r00")
    assert eff["climbed"] and eff["sent_home"] == 0
    assert g.stack("r00") == [(0, "donkey"), (0, "cat"), (0, "rooster")]
    second = g.second_moves(3, first=(0, "rooster"), first_field="r00")
    # the cat (with the rooster) or the donkey (with both) leaves r00, 3 fields either way round
    assert second == {(3, 0, animal, field) for animal in ("cat", "donkey") for field in ("r03", "r21")}


def test_own_start_field_needs_a_carrier_and_never_sends_own_animals_home():
    g = game()
    park(g, 0, ["r10", "r11", "r14", "r02"])  # r00 empty: nobody could carry the rooster off
    assert "r00" not in dests(g.first_moves(2, 3), 0, "rooster")
    g = game()
    g.place(0, "cat", "r02")  # rooster still on r00: the cat would knock it home
    assert "r00" not in dests(g.first_moves(2, 3), 0, "cat")


def test_the_second_move_never_lands_on_the_own_start_field():
    g = game()
    g.place(0, "rooster", "r02")
    assert "r00" not in dests(g.second_moves(2, first=(0, "donkey")), 0, "rooster")


# --- a turn: no move, one usable die, the robber die --------------------------------

def corridor_game(tmp_path):
    """The default board plus a dead-end road c1 - c2 off colour 1's start
    field r06 (r06 - c1 - c2), with all four own animals stacked on c2: the
    only way out is through a foreign start field. Colour 1's animals wait on
    r08 (from r06 they could step on the own animals on c2 with a 2); nothing
    else can get in. Only the pyramid itself moving one field to c1 is possible."""
    text = ring_board().replace("\n[links]", 'c1 = "road"\nc2 = "road"\n\n[links]')
    text = text.replace("chains = [\n", 'chains = [\n  ["r06", "c1", "c2"],\n')
    g = Game(board=str(_write(tmp_path, text)), players=4)
    g.seat = 0
    park(g, 0, ["c2", "c2", "c2", "c2"])
    park(g, 1, ["r08", "r08", "r08", "r08"])
    return g


def test_no_possible_move_and_only_one_usable_die(tmp_path):
    g = corridor_game(tmp_path)
    for d in range(2, 7):
        assert g.first_moves(d, d) == set()  # no move possible: the turn passes
    # "If only one die can be used, use it": the 1 moves a unit to c1, nothing can use the 4
    one = {(1, 0, animal, "c1") for animal in ("donkey", "dog", "cat", "rooster")}
    assert g.first_moves(1, 4) == one and g.first_moves(4, 1) == one
    g.move(0, "dog", "c1")
    assert g.second_moves(4, first=(0, "dog")) == set()


def test_a_turn_without_a_possible_move_passes(tmp_path):
    # The simulator's turn from the corridor position: a roll without a 1
    # moves nothing and ends the turn after that one roll.
    passed = 0
    for game_index in range(60):
        g = corridor_game(tmp_path)
        before = g.state[K.S_POS:K.S_POS + 16].copy()
        g.play(["greedy"] * 4, turns=1, seed=5, game_index=game_index)
        if g.state[K.S_ROBBER_MOVES] == 0 and (g.state[K.S_POS:K.S_POS + 16] == before).all():
            passed += 1
            assert g.state[K.S_ROLLS] == 1 and g.state[K.S_EXTRA_ROLLS] == 0
            assert g.robber == "house" and g.seat == 1
    assert passed >= 20  # about 60 * 25/36 = 42 rolls without a 1 (5/6) and without the R (5/6)


def pocket_game(tmp_path, **options):
    """The default board plus two dead ends behind foreign start fields, which
    colour 0 can never enter: c1 - c2 - c3 off r06 (colour 1) and z1 off r12
    (colour 2). Colour 0's dog and cat sit in z1, where they cannot move;
    colours 1 and 2 wait on r08 and r14, where they cannot get into either
    dead end. Colour 0's donkey (placed by the test) moves only inside c1 - c3."""
    text = ring_board().replace("\n[links]", 'c1 = "road"\nc2 = "road"\nc3 = "road"\nz1 = "road"\n\n[links]')
    text = text.replace("chains = [\n", 'chains = [\n  ["r06", "c1", "c2", "c3"],\n  ["r12", "z1"],\n')
    g = Game(board=str(_write(tmp_path, text)), players=4, options=options)
    g.seat = 0
    park(g, 1, ["r08"] * 4)
    park(g, 2, ["r14"] * 4)
    g.place(0, "dog", "z1")
    g.place(0, "cat", "z1")
    return g


@pytest.mark.parametrize("both_dice", ["when_possible", "free"])
def test_option_both_dice(tmp_path, both_dice):
    # Seed 4: each die moves another animal, the player picks which goes
    # first; digest: "If only one die can be used, use it". The donkey on c3
    # can use the 1 (to c2), never the 3; the rooster on r21 can use either.
    # Rooster first with the 1: the 3 is left to nobody (the dog and cat are
    # stuck in z1, and nothing can sit on a rooster). By default that first
    # move is not legal, as another lets both dice be used; "free" allows it
    # and the roll ends after it.
    g = pocket_game(tmp_path, both_dice=both_dice)
    g.place(0, "donkey", "c3")
    g.place(0, "rooster", "r21")
    both = {(1, 0, "donkey", "c2"), (3, 0, "rooster", "m00"), (3, 0, "rooster", "m12")}
    one = {(1, 0, "rooster", field) for field in ("r20", "r22", "m14")}
    assert g.first_moves(1, 3) == (both | one if both_dice == "free" else both)
    assert g.first_moves(3, 1) == g.first_moves(1, 3)
    g.move(0, "rooster", "r20")
    assert g.second_moves(3, first=(0, "rooster")) == set()


@pytest.mark.parametrize("one_die", ["either", "larger"])
def test_option_one_die(tmp_path, one_die):
    # The donkey on c1 is colour 0's only animal that can move: a 1 takes it
    # to c2, a 2 to c3, and no first move leaves a second. Either die may be
    # used by default; "larger" (as in backgammon) demands the 2, and the
    # smaller only when the larger has no move.
    g = pocket_game(tmp_path, one_die=one_die)
    park(g, 0, ["c1", "z1", "z1", "z1"])
    for dice in ((1, 2), (2, 1)):
        moves = g.first_moves(*dice)
        assert moves == ({(2, 0, "donkey", "c3")} | ({(1, 0, "donkey", "c2")} if one_die == "either" else set()))
        assert all(g.second_moves(1 if d == 2 else 2, first=(0, "donkey")) == set() for d, *_ in moves)
    assert g.first_moves(1, 4) == g.first_moves(4, 1) == {(1, 0, "donkey", "c2")}  # the 4 has no move
    assert g.first_moves(2, 2) == {(2, 0, "donkey", "c3")}


def test_the_dice_options_reach_every_policy(tmp_path):
    # The simulator's turn from test_option_one_die's position, rolls of 1
    # and 2: under "larger" the donkey always goes to c3, whoever picks;
    # under "either" random play sometimes takes it to c2.
    picked = {"either": set(), "larger": set()}
    for seed in range(8):
        for one_die in picked:
            for policy in ("random", "greedy", "lookahead:playouts=8,horizon=1"):
                g = pocket_game(tmp_path, one_die=one_die)
                park(g, 0, ["c1", "z1", "z1", "z1"])
                g.play([policy] + ["greedy"] * 3, turns=1, seed=seed, game_index=rolling(1, 2, seed=seed))
                picked[one_die].add(g.pos(0, "donkey"))
    assert picked == {"either": {"c2", "c3"}, "larger": {"c3"}}


def test_a_robber_roll_moves_the_robber_and_ends_the_turn():
    # From the start position: on a roll with the R the robber leaves its house
    # (sending nobody home: every animal is at home), no animal moves, and the
    # next player is on turn (no extra roll).
    robber_turns = 0
    for game_index in range(90):
        g = game()
        before = g.state[K.S_POS:K.S_POS + 16].copy()
        g.play(["greedy"] * 4, turns=1, seed=7, game_index=game_index)
        if g.state[K.S_ROBBER_MOVES] == 0:
            assert g.robber == "house"
            continue
        robber_turns += 1
        assert g.state[K.S_ROBBER_MOVES] == 1 and g.robber != "house"
        assert g.state[K.S_ROLLS] == 1 and g.state[K.S_EXTRA_ROLLS] == 0 and g.seat == 1
        assert (g.state[K.S_POS:K.S_POS + 16] == before).all() and g.errors() == 0
    assert robber_turns >= 5  # about 90/6 = 15


# --- the robber ----------------------------------------------------------------------

def test_robber_paths_stay_in_forest_bridges_and_house():
    g = game()
    assert g.robber == "house"
    assert g.robber_paths(1) == 4  # i01, i03, i05, i07
    assert g.robber_paths(2) == 8
    g.set_robber("m02")
    assert g.robber_paths(1) == 3  # m01, m03, the bridge b0
    assert g.robber_paths(2) == 2  # the bridge is a dead end: the road is out of bounds


def documented_robber_area():
    """The robber's area on the default board, built from its description (the
    module docstring, docs/bremen.md), not from the board file: the middle ring
    m00..m15, the inner ring i00..i07, m00-i00, m04-i02, m08-i04, m12-i06, the
    house next to i01, i03, i05, i07, and the bridges b0 and b2 off m02 and m10
    (their other ends are on the road, where the robber never goes)."""
    links = [(f"m{k:02d}", f"m{(k + 1) % 16:02d}") for k in range(16)]
    links += [(f"i{k:02d}", f"i{(k + 1) % 8:02d}") for k in range(8)]
    links += [(f"m{4 * k:02d}", f"i{2 * k:02d}") for k in range(4)]
    links += [("house", f"i{2 * k + 1:02d}") for k in range(4)]
    links += [("b0", "m02"), ("b2", "m10")]
    area = {}
    for x, y in links:
        area.setdefault(x, set()).add(y)
        area.setdefault(y, set()).add(x)
    return area


def path_ends(area, start, d):
    """The fields where a path of exactly d fields from start, no field
    twice, can end."""
    ends, paths = set(), [[start]]
    while paths:
        path = paths.pop()
        if len(path) == d + 1:
            ends.add(path[-1])
        else:
            paths += [path + [x] for x in area[path[-1]] if x not in path]
    return ends


def test_the_robber_moves_exactly_the_number_of_the_normal_die():
    # "The robber moves exactly as many fields as the normal die shows": the
    # game's own turn, the first roll (d, R) for every d, with every kind of
    # policy. From its house the robber ends where a path of exactly d fields
    # through its area ends. The area splits into two sides (the house, i00,
    # i02, ... m01, m03, ... on one), every link joining the two, so a path of
    # d fields and one of 7 - d never end on the same field.
    area = documented_robber_area()
    ends = {d: path_ends(area, "house", d) for d in range(1, 7)}
    assert ends[1] == {"i01", "i03", "i05", "i07"}
    assert ends[2] == {"i00", "i02", "i04", "i06"}
    assert ends[3] == {"i01", "i03", "i05", "i07", "m00", "m04", "m08", "m12"}
    assert all(not ends[d] & ends[7 - d] for d in range(1, 7))
    for d in range(1, 7):
        for seed in range(3):
            index = rolling(d, "R", seed=seed)
            for policy in ("random", "greedy", "lookahead:playouts=8,horizon=1"):
                g = game()
                g.play([policy] * 4, turns=1, seed=seed, game_index=index)
                assert g.state[K.S_ROBBER_MOVES] == 1 and g.robber in ends[d], (d, seed, policy, g.robber)


def test_option_robber_stop():
    # "only through forest fields (it may pass the bridges and its house)": by
    # default a robber move may also end on a bridge or in the house;
    # robber_stop = "forest" reads "pass" strictly: it only passes them.
    g = game(robber_stop="forest")
    g.set_robber("m02")
    assert g.robber_paths(1) == 2  # m01, m03; not onto the bridge b0
    g.set_robber("i01")
    assert g.robber_paths(1) == 2  # i00, i02; not into the house
    assert g.robber_paths(2) == 7  # as by default: through the house to i03, i05, i07 is passing it
    g = game()
    g.set_robber("i01")
    assert g.robber_paths(1) == 3


def test_the_robber_may_pass_through_its_house():
    # "De rover mag de bruggen en het rovershuis passeren" (seed 3; rules page:
    # "it may pass the bridges and its house"), no field twice. From i01 (next
    # to i00, i02 and the house) two fields go i01-i00-{i07, m00},
    # i01-i02-{i03, m04} and, through the house, i01-house-{i03, i05, i07}:
    # seven paths, and i05 is reached only through the house.
    expected = [("house", "i03"), ("house", "i05"), ("house", "i07"), ("i00", "i07"),
                ("i00", "m00"), ("i02", "i03"), ("i02", "m04")]
    g = game()
    g.set_robber("i01")
    assert g.robber_paths(2) == len(expected)
    played = []
    for pick in range(len(expected)):
        g = game()
        g.set_robber("i01")
        g.place(1, "dog", "i00")  # markers: the robber sends home what it passes
        g.place(2, "dog", "i02")
        sent = g.rob(2, pick)
        via = "i00" if g.pos(1, "dog") == "r06" else "i02" if g.pos(2, "dog") == "r12" else "house"
        played.append((via, g.robber))
        assert sent == (0 if via == "house" else 1) and g.errors() == 0
    assert sorted(played) == expected


def test_robber_sends_home_every_animal_it_passes_or_stops_on():
    sent = []
    for pick in range(8):
        g = game()
        g.place(1, "dog", "i01")
        g.place(2, "cat", "i00")
        sent.append(g.rob(2, pick))
        if sent[-1] == 2:
            assert g.robber == "i00"
            assert g.pos(1, "dog") == "r06" and g.pos(2, "cat") == "r12"
        assert g.errors() == 0
    # house-i01-i00 takes both; house-i01-i02 the dog; house-i07-i00 the cat
    assert sorted(sent) == [0, 0, 0, 0, 0, 1, 1, 2]


def test_chasing_the_robber_takes_a_full_pyramid_landing_exactly_on_it():
    g = game()
    g.set_robber("m05")
    for animal in ("donkey", "dog", "cat"):
        g.place(0, animal, "m03")
    eff = g.move(0, "donkey", "m05")  # no rooster: no chase
    assert not eff["chase"] and g.robber == "m05" and g.points(0) == 0
    g = game()
    g.set_robber("m05")
    park(g, 0, ["m03", "m03", "m03"])
    g.place(3, "rooster", "m03")  # any colours make a pyramid
    eff = g.move(0, "donkey", "m05")
    assert eff["chase"] and g.robber == "house" and g.points(0) == 1 and g.points(3) == 0


# Chasing in a real turn: Game.play, `rolling` picks the game whose first roll
# is the one named. Chasing is a choice; CHASER is a greedy player who chases
# whenever it can and otherwise prefers sitting on top to moving nearer the
# house (the default greedy would rather carry the pyramid towards the house).
# Seed 6: "Het verjagen van de rover mag zowel met de eerste als met de tweede
# beweging gebeuren. Afhankelijk of deze speler met zijn andere beweging ergens
# bovenop kon springen is nu dezelfde speler of de volgende speler aan beurt."
# A chasing donkey never sits on top.
CHASER = "greedy:chase=100,climb=50"


def test_a_chase_with_the_first_move_leaves_the_second_and_no_roll_without_a_climb():
    # Own pyramid on m03, robber on m05 (m03-m04-m05). Roll 2 and 3: the 2
    # chases; the 3 then moves a rider off the donkey on m05. No larger animal
    # stands anywhere else (all others are on their start fields), so the
    # other move cannot sit on top: the next player is on turn.
    g = game()
    park(g, 0, ["m03", "m03", "m03", "m03"])
    g.set_robber("m05")
    assert (2, 0, "donkey", "m05") in g.first_moves(2, 3)
    g.play([CHASER] * 4, turns=1, seed=1, game_index=rolling(2, 3, seed=1))
    assert g.state[K.S_CHASES] == 1 and g.points(0) == 1 and g.robber == "house"
    assert g.pos(0, "donkey") == "m05" and len(g.stack("m05")) < 4  # the second move was played
    assert g.state[K.S_ROLLS] == 1 and g.state[K.S_EXTRA_ROLLS] == 0 and g.seat == 1
    assert g.errors() == 0


def test_a_pyramid_completed_on_the_robbers_field_does_not_chase_it():
    # The seed: the player moves "met zijn ezel (met daarop de drie andere ... dieren) precies op het
    # veld met de rover"; a rooster climbing onto a donkey, dog and cat that already stand with the
    # robber (robber_field "open" lets them) completes a pyramid there, but no donkey moved onto it.
    g = game()
    park(g, 0, ["m05", "m05", "m05", "m03"])
    g.set_robber("m05")
    eff = g.move(0, "rooster", "m05")
    assert not eff["chase"] and eff["climbed"]
    assert g.robber == "m05" and g.points(0) == 0 and len(g.stack("m05")) == 4


def test_a_chase_with_the_first_move_then_a_climb_earns_another_roll():
    # As above with a roll of 2 and 2, and a foreign donkey on m07: after the
    # chase a rider on m05 goes m06-m07 onto it (from m03 nothing reaches m07
    # with a 2). The other move sat on top: the same player rolls again.
    g = game()
    park(g, 0, ["m03", "m03", "m03", "m03"])
    g.place(2, "donkey", "m07")
    g.set_robber("m05")
    g.play([CHASER] * 4, turns=1, seed=1, game_index=rolling(2, 2, seed=1))
    assert g.state[K.S_CHASES] == 1 and g.state[K.S_CHASE] == 1  # seat 0's one chase point
    assert g.state[K.S_ROLLS] >= 2 and g.state[K.S_EXTRA_ROLLS] >= 1
    assert g.errors() == 0


def test_a_chase_with_the_second_move_after_a_climb_earns_another_roll():
    # Donkey, dog and cat on m03; the rooster on m00, three fields away
    # (m00-m01-m02-m03); robber on m05. Roll 2 and 3: the pyramid exists only
    # once the rooster has climbed on the cat with the 3, so the chase (the 2,
    # m03-m04-m05) is the second move; the first move sat on top: another roll.
    g = game()
    park(g, 0, ["m03", "m03", "m03", "m00"])
    g.set_robber("m05")
    assert (3, 0, "rooster", "m03") in g.first_moves(2, 3)
    g.play([CHASER] * 4, turns=1, seed=1, game_index=rolling(2, 3, seed=1))
    assert g.state[K.S_CHASES] == 1 and g.state[K.S_CHASE] == 1
    assert g.state[K.S_ROLLS] >= 2 and g.state[K.S_EXTRA_ROLLS] >= 1
    assert g.errors() == 0


def test_the_robbers_field_is_open_by_default_and_closed_as_an_option():
    g = game()
    g.set_robber("m05")
    g.place(0, "dog", "m03")
    assert "m05" in dests(g.first_moves(2, 2), 0, "dog")
    g.move(0, "dog", "m05")
    assert g.robber == "m05" and g.pos(0, "dog") == "m05"  # standing there sends nobody home
    g = game(robber_field="closed")
    g.set_robber("m05")
    g.place(0, "dog", "m03")
    assert "m05" not in dests(g.first_moves(2, 2), 0, "dog")
    assert "m06" in dests(g.first_moves(3, 3), 0, "dog")  # passing over it is still allowed
    park(g, 0, ["m03", "m03", "m03", "m03"])
    assert "m05" in dests(g.first_moves(2, 2), 0, "donkey")  # the pyramid that chases it


def test_animals_on_the_robbers_field_stay_when_it_moves_away():
    # docs/bremen.md: animals on the robber's field "stand there safely until
    # the robber next moves: it sends home only the animals on the fields it
    # passes or stops on", and "the field it starts on is not 'passed'".
    for d in (1, 2, 3):
        paths = game()
        paths.set_robber("m05")
        for pick in range(paths.robber_paths(d)):
            g = game()
            g.set_robber("m05")
            g.place(1, "dog", "m05")
            assert g.rob(d, pick) == 0 and g.robber != "m05"
            assert g.pos(1, "dog") == "m05" and g.errors() == 0
    # In the game's turn: the own dog goes onto the (open) robber's field, then
    # a roll with the R moves the robber d fields away; every other animal is
    # at home, off the robber's area.
    for d in range(1, 7):
        g = game()
        g.set_robber("m05")
        g.place(0, "dog", "m03")
        g.move(0, "dog", "m05")
        g.play(["random"] * 4, turns=1, seed=2, game_index=rolling(d, "R", seed=2))
        assert g.state[K.S_ROBBER_MOVES] == 1 and g.robber != "m05"
        assert g.pos(0, "dog") == "m05" and g.state[K.S_SENT_ROBBER] == 0


# --- storming the house and the end -------------------------------------------------------

def test_storm_scores_per_animal_plus_bonus_when_the_robber_is_home():
    g = game()
    for colour, animal in ((0, "donkey"), (1, "dog"), (0, "cat"), (2, "rooster")):
        g.place(colour, animal, "i01")
    eff = g.move(0, "donkey", "house")
    assert eff["storm"]
    assert [g.points(s) for s in range(4)] == [3, 1, 1, 0]
    assert g.pos(0, "donkey") == "r00" and g.pos(1, "dog") == "r06" and g.pos(2, "rooster") == "r12"
    assert g.errors() == 0


def test_storm_without_the_robber_at_home_gives_no_bonus_and_sends_it_home():
    g = game()
    g.set_robber("m05")
    park(g, 0, ["i01", "i01", "i01", "i01"])
    g.move(0, "donkey", "house")
    assert g.points(0) == 4 and g.robber == "house"


def test_a_storm_ends_the_turn_in_play():
    # The turn as the simulator plays it: a pyramid of all four own animals
    # next to the house storms with the first move; the second move is
    # forfeited (all four are back on r00, none moved off again) and there is
    # no extra roll. Games are tried until a roll lets greedy storm.
    for game_index in range(50):
        g = game()
        park(g, 0, ["i01", "i01", "i01", "i01"])
        g.play(["greedy"] * 4, turns=1, seed=3, game_index=game_index)
        if g.points(0) > 0:
            break
    assert g.points(0) == 5  # four animals, and the robber was at home
    assert [g.pos(0, animal) for animal in ("donkey", "dog", "cat", "rooster")] == ["r00"] * 4
    assert g.state[K.S_ROLLS] == 1 and g.robber == "house"


def test_a_storm_with_the_second_move_ends_the_turn_despite_a_climb():
    # Seed 7: "In elk geval is de volgende speler onmiddellijk aan beurt"
    # (rules page: the next player is on turn, no extra roll). Donkey, dog and
    # cat on i01 next to the house, the rooster on m00 (m00-i00-i01). Roll 1
    # and 2: the rooster climbs on the cat with the 2 - a move that earns
    # another roll - and the pyramid storms with the 1 (i01-house).
    g = game()
    park(g, 0, ["i01", "i01", "i01", "m00"])
    assert "house" not in dests(g.first_moves(1, 2), 0, "donkey")  # no pyramid yet: only a second move storms
    assert (2, 0, "rooster", "i01") in g.first_moves(1, 2)
    h = game()
    park(h, 0, ["i01", "i01", "i01", "m00"])
    assert h.move(0, "rooster", "i01")["extra_roll"]  # on its own the climb would earn a roll
    g.play(["greedy"] * 4, turns=1, seed=3, game_index=rolling(1, 2, seed=3))
    assert g.state[K.S_STORMS] == 1 and g.points(0) == 5  # four animals, the robber at home
    assert [g.pos(0, animal) for animal in ("donkey", "dog", "cat", "rooster")] == ["r00"] * 4
    assert g.state[K.S_ROLLS] == 1 and g.state[K.S_EXTRA_ROLLS] == 0 and g.seat == 1
    assert g.robber == "house" and g.errors() == 0


@pytest.mark.parametrize("both_dice", ["when_possible", "free"])
def test_a_storm_is_legal_even_when_no_second_move_would_follow(both_dice):
    # Storming forfeits the second move (seed 7), so it counts as using both dice.
    g = game(both_dice=both_dice)
    park(g, 0, ["i01", "i01", "i01", "i01"])
    assert (1, 0, "donkey", "house") in g.first_moves(1, 6)


def test_a_move_that_wins_the_game_is_legal_even_when_no_second_move_would_follow(tmp_path):
    # The game ends as soon as someone has seven points ("Zodra iemand minstens zeven punten heeft
    # verzameld, eindigt het spel"), so a winning first move, like a storm, needs no second. The default
    # board plus two dead ends, q1 off r00 and z1 off r12. Seat 0 has 6 points; its donkey carries
    # colour 2's dog, cat and rooster on m03, the robber is on m05, its cat on q1, its dog and rooster
    # on z1. Roll 1 and 2: the 2 chases (m03-m04-m05) for the seventh point, after which the 1 has no
    # move; the donkey's 1 or the cat's 2 would leave the other die one.
    text = ring_board().replace("\n[links]", '\nq1 = "road"\nz1 = "road"\n\n[links]')
    board = tmp_path / "dead_ends.toml"
    board.write_text(text.replace("chains = [\n", 'chains = [\n  ["r00", "q1"],\n  ["r12", "z1"],\n'))
    g = Game(board=str(board), players=4)
    g.seat = 0
    g.state[K.S_POINTS] = g.state[K.S_CHASE] = 6
    g.place(0, "donkey", "m03")
    for animal in ("dog", "cat", "rooster"):
        g.place(2, animal, "m03")
    for animal, field in (("cat", "q1"), ("dog", "z1"), ("rooster", "z1")):
        g.place(0, animal, field)
    g.set_robber("m05")
    after = Game(board=str(board), players=4)
    after.state[:] = g.state
    assert after.move(0, "donkey", "m05")["chase"] and after.winner == 0
    assert after.second_moves(1, first=(0, "donkey")) == set()
    assert (2, 0, "donkey", "m05") in g.first_moves(1, 2)
    g.play([CHASER] * 4, turns=1, seed=1, game_index=rolling(1, 2, seed=1))
    assert g.winner == 0 and g.points(0) == 7 and g.robber == "house"


def _storm_to_tie(tie_rule, seat0_points, seat1_points, **options):
    g = game(tie_rule=tie_rule, **options)
    g.state[K.S_POINTS], g.state[K.S_STORM] = seat0_points, seat0_points
    g.state[K.S_POINTS + 1], g.state[K.S_STORM + 1] = seat1_points, seat1_points
    for colour, animal in ((0, "donkey"), (1, "dog"), (0, "cat"), (1, "rooster")):
        g.place(colour, animal, "i01")
    g.move(0, "donkey", "house")  # seat 0: 2 + robber bonus 1; seat 1: 2
    return g


def test_first_to_seven_wins_and_equal_points_go_to_the_last_on_turn():
    g = _storm_to_tie("mover_first", 4, 4)
    assert g.points(0) == 7 and g.points(1) == 6 and g.winner == 0
    g = _storm_to_tie("mover_first", 5, 6)  # both reach 8 at the same moment
    assert g.points(0) == g.points(1) == 8 and g.winner == 0
    g = _storm_to_tie("mover_last", 5, 6)  # the other reading: the mover's turn counts first
    assert g.winner == 1
    g = _storm_to_tie("mover_first", 3, 6)  # 6 against 8: more points win
    assert g.winner == 1


def test_a_tie_between_two_players_not_on_turn_goes_to_the_one_on_turn_more_recently():
    # Seat 2 storms with its donkey carrying seat 0's dog and rooster and seat 1's cat: seat 0 (5 points)
    # and seat 1 (6) both reach 7; seat 2 has 2. Looking back from the mover, seat 1 was on turn last
    # (just before seat 2), then seat 0: seat 1 wins, under either tie rule, though seat 0 is the lower seat.
    for tie_rule in ("mover_first", "mover_last"):
        g = game(tie_rule=tie_rule)
        g.seat = 2
        g.state[K.S_POINTS], g.state[K.S_STORM] = 5, 5
        g.state[K.S_POINTS + 1], g.state[K.S_STORM + 1] = 6, 6
        for colour, animal in ((2, "donkey"), (0, "dog"), (1, "cat"), (0, "rooster")):
            g.place(colour, animal, "i01")
        g.move(2, "donkey", "house")
        assert [g.points(s) for s in range(4)] == [7, 7, 2, 0] and g.winner == 1


def test_option_first_to_target_lets_the_last_on_turn_win_among_all_at_the_target():
    # The seed: "De eerste speler die daarin slaagt, is de winnaar"; reaching 7
    # together, all at the target count as equal, and the tie rule decides.
    g = _storm_to_tie("mover_first", 3, 6, first_to_target="last_on_turn")  # 6 against 8
    assert (g.points(0), g.points(1)) == (6, 8) and g.winner == 1  # the mover is not at the target
    g = _storm_to_tie("mover_first", 4, 6, first_to_target="last_on_turn")  # 7 against 8
    assert (g.points(0), g.points(1)) == (7, 8) and g.winner == 0  # the mover was on turn last
    g = _storm_to_tie("mover_last", 4, 6, first_to_target="last_on_turn")
    assert g.winner == 1
    assert _storm_to_tie("mover_first", 4, 6).winner == 1  # default: the most points


def test_option_neutral_storm_point():
    # Three players: colour 3 is neutral. Seat 0's donkey carries the neutral dog,
    # cat and rooster into the house with the robber at home: the rules page gives
    # the neutral animals' points to nobody (1 + robber bonus 1); with "mover" they
    # go to the storming player, so that four points are awarded (the seed).
    for option, points in (("nobody", 2), ("mover", 5)):
        g = game(players=3, neutral_storm_point=option)
        g.place(0, "donkey", "i01")
        for animal in ("dog", "cat", "rooster"):
            g.place(3, animal, "i01")
        assert g.move(0, "donkey", "house")["storm"]
        assert [g.points(s) for s in range(3)] == [points, 0, 0] and g.errors() == 0


def test_the_target_option_sets_the_points_to_win():
    # a storm by four own animals with the robber at home: 4 + 1 = 5 points
    for target, winner in ((5, 0), (6, -1), (7, -1)):
        g = game(target=target) if target != 7 else game()
        park(g, 0, ["i01", "i01", "i01", "i01"])
        g.move(0, "donkey", "house")
        assert g.points(0) == 5 and g.winner == winner


# --- player counts -----------------------------------------------------------------

def test_two_players_play_two_diagonal_colours_each():
    g = game(players=2)
    g.place(2, "dog", "r15")  # colour 2 belongs to seat 0
    assert dests(g.first_moves(2, 2), 2, "dog") == {"r13", "r17", "m10"}  # r12 is its own start: 3 away
    assert "r12" not in dests(g.first_moves(3, 3), 2, "dog")  # would knock its own cat and rooster home
    assert "r11" in dests(g.first_moves(4, 4), 2, "dog")      # passing the own start field is fine
    for colour, animal in ((0, "donkey"), (2, "dog"), (1, "cat"), (3, "rooster")):
        g.place(colour, animal, "i01")
    g.move(0, "donkey", "house")
    assert (g.points(0), g.points(1)) == (3, 2)


def test_two_players_land_on_the_partner_colours_start_field_with_the_first_move_only():
    # Seed: "bekomt elke speler de twee diagonaal tegenover elkaar liggende
    # startvelden": with 2 players seat 0 owns the start fields r00 and r12
    # (colours 0 and 2), so r12 is an own start field for colour 0's animals
    # too: landing there with the first move only, and the second move must
    # carry the animal off again. Colour 2's dog, cat and rooster are away
    # (they are not knocked home); its donkey on r12 can carry the dog off.
    def position(players):
        g = game(players=players)
        for animal, field in (("dog", "i03"), ("cat", "i05"), ("rooster", "i07")):
            g.place(2, animal, field)
        g.place(0, "dog", "r10")
        return g

    g = position(2)
    assert dests(g.first_moves(2, 2), 0, "dog") == {"r08", "m06", "r12"}  # r10-r11-r12 onto the donkey
    first = g.move(0, "dog", "r12")
    assert first["climbed"] and first["sent_home"] == 0 and g.stack("r12") == [(2, "donkey"), (0, "dog")]
    assert g.second_moves(2, first=(0, "dog"), first_field="r12") == {(2, 2, "donkey", "r10"),
                                                                      (2, 2, "donkey", "r14")}
    g = position(2)
    g.move(0, "cat", "r02")  # the first move, another animal
    assert dests(g.second_moves(2, first=(0, "cat")), 0, "dog") == {"r08", "m06"}
    g = position(4)  # with 4 players r12 is seat 2's: a foreign start field
    assert dests(g.first_moves(2, 2), 0, "dog") == {"r08", "m06"}


def test_three_players_leave_a_neutral_colour_that_scores_for_nobody():
    g = game(players=3)
    g.place(0, "dog", "r16")
    assert "r18" not in dests(g.first_moves(2, 2), 0, "dog")  # the neutral start is foreign too
    for colour, animal in ((0, "donkey"), (3, "dog"), (1, "cat"), (3, "rooster")):
        g.place(colour, animal, "i01")
    g.move(0, "donkey", "house")
    assert [g.points(s) for s in range(3)] == [2, 1, 0]


def test_three_players_may_move_the_neutral_colour_as_a_foreign_animal():
    g = game(players=3)
    g.place(3, "cat", "r10")   # neutral (colour 3 has no player)
    g.place(0, "dog", "r08")   # own dog two fields away
    g.place(1, "dog", "m06")   # seat 1's dog, two fields away over r09
    g.place(3, "donkey", "r07")
    moves = g.first_moves(2, 2)
    assert dests(moves, 3, "cat") == {"r08"}  # onto the own dog only; not onto seat 1's dog, r12 is a start
    assert dests(moves, 3, "donkey") == set()  # a foreign donkey can sit on nothing
    assert "r08" in dests(g.second_moves(2, first=(0, "rooster")), 3, "cat")
    eff = g.move(3, "cat", "r08")
    assert g.stack("r08") == [(0, "dog"), (3, "cat")] and eff["climbed"] and eff["extra_roll"]
    g = game(players=4)  # with four players colour 3 is seat 3's: the same cat may go there too
    g.place(3, "cat", "r10")
    g.place(0, "dog", "r08")
    assert dests(g.first_moves(2, 2), 3, "cat") == {"r08"}
    g.seat = 3
    assert dests(g.first_moves(2, 2), 3, "cat") == {"r08", "m06"}  # its owner moves it anywhere


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_starting_player_is_drawn(players):
    # "The starting player is drawn": over 400 games each seat starts 400/P
    # times, within 4 standard errors of the binomial count.
    n = 400
    df = simulate(players=players, games=n, policies=["greedy"] * players, seed=11, options={"max_turns": 1})
    counts = df["first_seat"].value_counts().reindex(range(players), fill_value=0)
    assert counts.sum() == n
    p = 1 / players
    assert (abs(counts - n * p) <= 4 * (n * p * (1 - p)) ** 0.5).all(), counts.to_dict()


def kernel_game(players, max_turns, seed, game_index, policy="greedy"):
    """Game game_index of `seed` as the batch driver plays it (init_game, then
    the kernels' own game loop K.play_game), capped after max_turns turns."""
    g = Game(players=players, options={"max_turns": max_turns})
    b = g.board
    pol, prow, _ = parse_policy(policy)
    pols = np.array([pol] * 4, np.int64)
    params = np.tile(prow, (4, 1))
    pkeys = np.array([game_key(np.uint64(seed), game_index, STREAM_POLICY_BASE + s) for s in range(4)], np.uint64)
    key = np.uint64(game_key(np.uint64(seed), game_index, STREAM_CHANCE))
    key = np.uint64(K.init_game(g.state, players, b.binfo, g.opts, key))
    row = np.zeros(K.N_REC, np.int32)
    K.play_game(g.state, pols, params, pkeys, b.kind, b.adj, b.deg, b.dist, b.binfo, g.opts, key, row,
                K.lookahead_for(pols))
    return g


@pytest.mark.parametrize("players", [3, 4])
def test_play_goes_left_in_the_kernels_game_loop(players):
    # "The starting player is drawn; play goes left." One game, capped after
    # k = 1, 2, ... turns: the seat on turn in the last turn is the starting
    # player's for k = 1, then each next seat in turn. (Game.play steps the
    # seat itself; with 2 players the seat to the left is the one to the right.)
    firsts = set()
    for game_index in range(4):
        seats = []
        for k in range(1, 2 * players + 1):
            g = kernel_game(players, k, seed=4, game_index=game_index)
            assert g.state[K.S_TURNS] == k and g.state[K.S_CAPPED] == 1 and g.winner == -1
            seats.append(g.seat)
        first = int(g.state[K.S_FIRST_SEAT])
        assert seats == [(first + k) % players for k in range(2 * players)]
        firsts.add(first)
        record = simulate(players=players, games=1, policies=["greedy"] * players, seed=4, first_game=game_index,
                          options={"max_turns": 2 * players}).iloc[0]  # the same game as the batch driver's
        assert (record["first_seat"], record["turns"], record["rolls"]) == (first, 2 * players, g.state[K.S_ROLLS])
    assert len(firsts) > 1


# --- going home and the turbulent start ----------------------------------------------------

def test_animals_sent_home_stack_largest_at_the_bottom():
    g = game()
    g.place(1, "donkey", "r08")
    g.place(1, "cat", "r09")
    g.place(0, "donkey", "r10")
    g.move(0, "donkey", "r09")  # knocks the cat home, on top of dog and rooster
    assert g.stack("r06") == [(1, "dog"), (1, "cat"), (1, "rooster")]
    g.move(0, "donkey", "r08")
    assert g.stack("r06") == [(1, "donkey"), (1, "dog"), (1, "cat"), (1, "rooster")]


@pytest.mark.parametrize("seed", range(5))
def test_turbulent_start_stacks(seed):
    g = Game(players=4, options={"turbulent": True}, seed=seed)
    for colour, corner in enumerate(("r00", "r06", "r12", "r18")):
        stack = g.stack(corner)
        assert [a for _, a in stack] == ["donkey", "dog", "cat", "rooster"]
        assert stack[0][0] != colour  # the bottom animal is never the corner's colour
        assert all(lower[0] != upper[0] for lower, upper in zip(stack, stack[1:]))


# Turbulent variant: "Indien dieren naar huis gestuurd worden, moeten ze zodanig
# teruggeplaatst worden dat ze deze regel niet overtreden" (animals sent home are
# put back so that the start rule - bottom animal never of the corner's colour,
# no animal directly on one of its own colour - still holds).

CORNERS = ("r00", "r06", "r12", "r18")  # start fields of colours 0..3


def turbulent_game(away=(), homes=(), **options):
    """A turbulent game with this valid set-up, bottom first: on the start field
    of colour k a donkey of colour k+1, a dog of k, a cat of k+1, a rooster of k
    (mod 4). `homes`: (colour, animal, start field) homed elsewhere (swapped with
    the animal of its size homed there), `away`: (colour, animal, field) put
    elsewhere on the board."""
    g = game(turbulent=True, **options)
    for k, corner in enumerate(CORNERS):
        for animal, shift in zip(("donkey", "dog", "cat", "rooster"), (1, 0, 1, 0)):
            a = g.animal((k + shift) % 4, animal)
            g.state[K.S_HOME + a] = g.state[K.S_POS + a] = g.field(corner)
    K.rebuild_occ(g.state, g.board.binfo[K.B_N])
    for k, corner in enumerate(CORNERS):
        stack = g.stack(corner)
        assert stack[0][0] != k and all(lo[0] != up[0] for lo, up in zip(stack, stack[1:]))
    for colour, animal, field in homes:
        a = g.animal(colour, animal)
        b = next(b for b in range(a & 3, 16, 4) if g.state[K.S_HOME + b] == g.field(field))
        g.state[K.S_HOME + b], g.state[K.S_HOME + a] = g.state[K.S_HOME + a], g.field(field)
        g.state[K.S_POS + a], g.state[K.S_POS + b] = g.state[K.S_HOME + a], g.state[K.S_HOME + b]
    K.rebuild_occ(g.state, g.board.binfo[K.B_N])
    for colour, animal, field in away:
        g.place(colour, animal, field)
    return g


def test_turbulent_home_never_puts_an_animal_directly_on_its_own_colour():
    # r00 keeps donkey(1) and rooster(0): its cat(1) back home would sit on the donkey(1).
    # r12's cat(3) is out too, and the cat(1) fits there: on dog(2), under rooster(2).
    g = turbulent_game(away=[(0, "dog", "r02"), (1, "cat", "r03"), (3, "cat", "r04")])
    g.move(0, "dog", "r03")  # knocks the cat(1) home
    assert g.stack("r00") == [(1, "donkey"), (0, "rooster")]
    assert g.stack("r12") == [(3, "donkey"), (2, "dog"), (1, "cat"), (2, "rooster")]
    assert g.errors() == 0  # still one home animal of each size per start field
    g.move(0, "dog", "r04")  # the cat(3) now goes to r00: on donkey(1), under rooster(0)
    assert g.stack("r00") == [(1, "donkey"), (3, "cat"), (0, "rooster")]
    assert g.errors() == 0


def test_turbulent_home_bottom_animal_is_never_of_the_corners_colour():
    # r00 has lost its donkey(1): its dog(0) back home would be the bottom animal
    # on colour 0's start. r06 has only its donkey(2) left: the dog(0) fits on it.
    g = turbulent_game(away=[(1, "donkey", "r21"), (0, "dog", "i01"),
                             (1, "dog", "r08"), (2, "cat", "r08"), (1, "rooster", "r08")])
    for pick in range(g.robber_paths(1)):  # the robber's one-step path from its house to i01
        h = turbulent_game()
        h.rob(1, pick)
        if h.robber == "i01":
            break
    assert g.rob(1, pick) == 1 and g.robber == "i01"  # the robber sends the dog(0) home
    assert g.stack("r06") == [(2, "donkey"), (0, "dog")]
    assert g.stack("r00") == [(1, "cat"), (0, "rooster")]
    assert g.errors() == 0


def test_turbulent_animals_returning_together_are_placed_together():
    # r00 keeps the donkey(1) and the rooster(0); its dog(0), carrying its cat(1),
    # stands on r03. r12 holds only the donkey(3) and a rooster(1) (homed there,
    # the rooster(2) homed on r06 instead): it has room for a dog and a cat. The
    # dog(2) knocks the dog(0) and the cat(1) home together. Placements: the
    # dog(0) on r00 alone sits under the rooster(0), the cat(1) on r00 alone on
    # the donkey(1), both on r12 the cat(1) under the rooster(1); only both on
    # r00 keep the rule - the stack r00 started with. (Placed one at a time, the
    # dog(0) would have gone to r12 and the cat(1) would have broken the rule.)
    g = turbulent_game(homes=[(1, "rooster", "r12")],
                       away=[(0, "dog", "r03"), (1, "cat", "r03"), (2, "dog", "r01"), (3, "cat", "m05"),
                             (2, "rooster", "i03")])
    assert g.stack("r00") == [(1, "donkey"), (0, "rooster")] and g.stack("r12") == [(3, "donkey"), (1, "rooster")]
    assert g.errors() == 0
    g.seat = 2
    assert g.move(2, "dog", "r03")["sent_home"] == 2
    assert g.stack("r00") == [(1, "donkey"), (0, "dog"), (1, "cat"), (0, "rooster")]
    assert g.stack("r12") == [(3, "donkey"), (1, "rooster")]
    assert g.state[K.S_UNFIT] == 0 and g.errors() == 0


def test_turbulent_return_that_no_placement_keeps_the_rule_is_marked():
    # Every start field but r00 holds its cat, and r00 has lost its dog(0): the
    # cat(1) can only go back there (a field holds one cat), onto the donkey(1).
    # No placement keeps the rule; the cat is marked as put there by such a return.
    g = turbulent_game(away=[(0, "dog", "r02"), (1, "cat", "r03")])
    assert g.move(0, "dog", "r03")["sent_home"] == 1
    assert g.stack("r00") == [(1, "donkey"), (1, "cat"), (0, "rooster")]
    assert g.state[K.S_UNFIT] == 1 << g.animal(1, "cat") and g.errors() == 0
    g.state[K.S_UNFIT] = 0  # unmarked, the same stack is a broken invariant
    assert g.errors() == 7


@pytest.mark.parametrize("no_fit", ["fewest", "home"])
def test_option_turbulent_no_fit(no_fit):
    # The donkey(1), carrying the rooster(1) on r03, is knocked home by the
    # donkey(3). Room for a donkey: r00 (its home, now the cat(1) and the
    # rooster(0)) and r12 (the donkey(3) and the dog(2) are out: the cat(3) and
    # the rooster(2)); for a rooster only r06 (its home), where the cat(2) is out:
    # the rooster(1) must sit on the dog(1). No placement keeps the rule.
    # "fewest": the donkey(1) goes to r12, where it breaks nothing (1 break in
    # all); "home": both go home, the donkey(1) under the cat(1) (2 breaks).
    g = turbulent_game(away=[(1, "donkey", "r03"), (1, "rooster", "r03"), (0, "dog", "r09"), (2, "cat", "m05"),
                             (3, "donkey", "r05"), (2, "dog", "i03")], turbulent_no_fit=no_fit)
    assert g.stack("r00") == [(1, "cat"), (0, "rooster")] and g.stack("r12") == [(3, "cat"), (2, "rooster")]
    assert g.stack("r06") == [(2, "donkey"), (1, "dog")] and g.errors() == 0
    g.seat = 3
    assert g.move(3, "donkey", "r03")["sent_home"] == 2
    assert g.stack("r06") == [(2, "donkey"), (1, "dog"), (1, "rooster")]
    donkey, rooster = g.animal(1, "donkey"), g.animal(1, "rooster")
    if no_fit == "fewest":
        assert g.stack("r12") == [(1, "donkey"), (3, "cat"), (2, "rooster")]
        assert g.stack("r00") == [(1, "cat"), (0, "rooster")]
        assert g.board.names[g.state[K.S_HOME + donkey]] == "r12"  # it took the donkey(3)'s home,
        assert g.board.names[g.state[K.S_HOME + g.animal(3, "donkey")]] == "r00"  # which got its old one
        assert g.state[K.S_UNFIT] == 1 << rooster
    else:
        assert g.stack("r00") == [(1, "donkey"), (1, "cat"), (0, "rooster")]
        assert g.stack("r12") == [(3, "cat"), (2, "rooster")]
        assert g.state[K.S_UNFIT] == (1 << donkey) | (1 << rooster)
    assert g.errors() == 0


def _rule_breaks(stacks, group):
    """The turbulent start rule's breaks that involve an animal of `group`:
    stacks[c] lists the animals (4 * colour + size - 1) on colour c's start
    field, bottom first. A bottom animal of colour c breaks it, and so does
    each pair of one colour, one directly on the other."""
    breaks = 0
    for c, stack in enumerate(stacks):
        if stack and stack[0] // 4 == c and stack[0] in group:
            breaks += 1
        breaks += sum(lo // 4 == up // 4 and (lo in group or up in group) for lo, up in zip(stack, stack[1:]))
    return breaks


@pytest.mark.parametrize("no_fit", ["fewest", "home"])
def test_turbulent_returns_keep_the_rule_whenever_a_placement_can(no_fit):
    # Random positions from turbulent set-ups: the tops of start stacks taken off
    # (as moves take them) and some of them sent home again, then a random group
    # of the animals out sent home together. Every placement of the group is
    # tried here (each animal onto a start field where no animal of its size
    # stands): the kernel's must keep the rule whenever one does, and otherwise
    # be the best by the option: "fewest" rule breaks, then fewest animals off
    # their homes; "home": fewest off their homes, then fewest breaks.
    import itertools

    rng = np.random.default_rng(5)
    board = load_board()
    corners = [board.index(f) for f in CORNERS]

    def stacks():
        return [sorted((a for a in range(16) if g.state[K.S_POS + a] == h), key=lambda a: -(a & 3))
                for h in corners]

    kept = broken = 0
    for case in range(120):
        g = Game(players=4, options={"turbulent": True, "turbulent_no_fit": no_fit}, seed=case)
        # one animal each on a forest or road field (a road field next to a start field included)
        spots = list(rng.permutation([f for f in board.names if f[0] in "mi" or (f[0] == "r" and f not in CORNERS)]))
        for _ in range(2):
            for corner in CORNERS:
                stack = g.stack(corner)
                for colour, animal in stack[len(stack) - int(rng.integers(0, len(stack) + 1)):]:
                    g.place(colour, animal, spots.pop())
            group = 0
            for a in range(16):
                if g.state[K.S_POS + a] not in corners:
                    group |= int(rng.integers(0, 2)) << a
            if not group:
                continue
            members = [a for a in range(16) if group >> a & 1]
            spots += [g.board.names[g.state[K.S_POS + a]] for a in members]
            before = stacks()
            homes = {a: corners.index(g.state[K.S_HOME + a]) for a in members}
            keys = []
            for choice in itertools.product(range(4), repeat=len(members)):
                slots = [(c, a & 3) for a, c in zip(members, choice)]
                if len(set(slots)) < len(slots) or any(s in {b & 3 for b in before[c]} for c, s in slots):
                    continue  # a field holds one animal of each size
                placed = [sorted(st + [a for a, c2 in zip(members, choice) if c2 == c], key=lambda a: -(a & 3))
                          for c, st in enumerate(before)]
                breaks = _rule_breaks(placed, set(members))
                off = sum(c != homes[a] for a, c in zip(members, choice))
                keys.append((breaks, off) if no_fit == "fewest" else (breaks > 0, off, breaks))
            K.send_group_home(g.state, group)
            breaks = _rule_breaks(stacks(), set(members))
            off = sum(corners.index(g.state[K.S_POS + a]) != homes[a] for a in members)
            played = (breaks, off) if no_fit == "fewest" else (breaks > 0, off, breaks)
            assert played == min(keys), (case, members)
            assert g.errors() == 0
            kept += breaks == 0
            broken += breaks > 0
    assert kept > 100 and broken > 5  # both kinds of position were tried
