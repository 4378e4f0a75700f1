"""Rules of ../shared/rules/ that the other rules tests leave unpinned.

Found by tracing every sentence of race_games.md, bremer_stadtmusikanten.md
and tape_l_etape.md to the docs and the tests. Each expected value comes
from the rulebook text, worked out by hand; each test names the wrong
behaviour it would catch. The position helpers are those of
test_race_rules.py, test_etape_rules.py and test_bremen_rules.py.
"""
import numpy as np
import pytest

from etappe.analysis import etape as E
from etappe.analysis.bremen import Game
from etappe.kernels import etape as EK
from etappe.kernels.bremen_board import ring_board
from etappe.kernels.race_design import DesignError
from etappe.kernels.race_position import play_position_move

from test_bremen_rules import dests, first_roll
from test_etape_rules import card, cards_of, field, lay_all, mask, new_record
from test_etape_rules import position as position_of_stage
from test_race_rules import MB, SO, TO, legal, position, side



# =================================================================================
# Race games (race_games.md): positions through the position API
# =================================================================================
def plays(moves):
    return {m for m in moves if m.startswith("play")}


def test_stapop_is_for_2_to_6_players_with_5_cards_each():
    # Rules page, section 1 heading: "Stap op (...; 2-6 players)"; "Deal 5 cards each".
    # Catches: a design that refuses a listed player count or accepts 1 or 7 players.
    for players in (2, 3, 4, 5, 6):
        SO.tables(players)  # no error
        assert SO.sides(players) == players  # individual play is the default
    for players in (1, 7):
        with pytest.raises(DesignError):
            SO.tables(players)
    assert SO.hand_size == 5


def test_stapop_tegenwind_is_never_played_on_oneself():
    # "Tegenwind may be played only on an opponent who shows Wind mee." Own side shows Wind mee,
    # the opponent is still under the starting headwind (no Wind mee): Tegenwind goes nowhere,
    # only on the discard pile. Catches: a limit card accepted on the player's own side.
    hand = ["headwind", "km5", "km6", "km5", "km5", "km5"]
    pos = position(2, {0: hand, 1: ["km5"] * 5}, [side("go", "tailwind"), side("go", "start")])
    moves = legal(SO, pos)
    assert not {m for m in moves if "headwind" in m} - {"discard headwind"}
    assert "discard headwind" in moves
    # and with limit_on_limit still never on oneself
    moves = legal(SO, pos, options={"limit_on_limit": True})
    assert "play headwind" not in moves


@pytest.mark.parametrize("battle", ["go", "empty", "youth_hostel"])
def test_stapop_a_remedy_goes_only_on_its_own_hazard(battle):
    # "Crossing and flat tyre ... Cleared by the matching remedy"; Jeugdherberg "is cleared by
    # Stap op alone". With no crossing or flat tyre showing, neither remedy can be laid.
    # Catches: remedies accepted on any battle pile (or on a Jeugdherberg).
    hand = ["barriers_open", "bike_repairer", "km5", "km6", "km5", "km5"]
    pos = position(2, {0: hand, 1: ["km5"] * 5}, [side(battle, "tailwind"), side("go", "start")])
    moves = legal(SO, pos)
    assert not {"play barriers_open", "play bike_repairer"} & moves
    assert {"discard barriers_open", "discard bike_repairer"} <= moves  # "Discarding is always allowed"


@pytest.mark.parametrize("battle", ["roll", "empty", "stop", "flat_tire", "accident"])
def test_mb_a_remedy_goes_only_on_its_own_hazard_and_only_on_ones_own_side(battle):
    # "Remedy on its own hazard, then Roll on a later turn." Gasoline only on Out of Gas:
    # not on a rolling side, an empty pile, Stop (cleared by a Roll) or another hazard; and a
    # remedy is never laid on an opponent, not even on one showing Out of Gas.
    # Catches: a remedy accepted where its hazard is not showing, or on an opponent's pile.
    hand = ["gasoline", "km25", "km50", "km75", "km100", "km200", "end_of_limit"]
    pos = position(2, {0: hand, 1: ["km25", "km50", "km75", "spare_tire", "repairs", "roll"]},
                   [side(battle), side("out_of_gas")])
    moves = legal(MB, pos)
    assert not {m for m in moves if "gasoline" in m} - {"discard gasoline"}
    assert "play gasoline" in legal(MB, position(2, {0: hand}, [side("out_of_gas"), side("out_of_gas")]))


def test_mb_a_safety_is_laid_on_ones_own_side_only():
    # "Safety played on your turn: protects for the rest of the hand" (one's own side): never on
    # an opponent. Catches: a safety offered as "play ... on side 1", protecting the opponent.
    hand = ["puncture_proof", "km25", "km50", "km75", "km100", "roll", "gasoline"]
    pos = position(2, {0: hand, 1: ["km25"] * 6}, [side("roll"), side("flat_tire")])
    moves = legal(MB, pos)
    assert "play puncture_proof" in moves
    assert not {m for m in moves if m.startswith("play puncture_proof on")}


def test_race_the_limit_pile_is_apart_from_the_battle_pile():
    # The tableau has a battle pile and a speed pile (rules page: "A team shares one tableau
    # (battle pile, speed pile, ...)"); "Speed Limit any time". So the end of a limit can be laid
    # while a hazard stops the side, and lifts the limit without clearing the hazard.
    # Catches: Wind mee / End of Limit refused under a hazard, or clearing the hazard too.
    hand = ["tailwind", "barriers_open", "km5", "km6", "km8", "km10"]
    pos = position(2, {0: hand, 1: ["km5"] * 5}, [side("crossing", "start"), side("go", "start")])
    moves = legal(SO, pos)
    assert "play tailwind" in moves and "play barriers_open" in moves
    new, info = play_position_move(SO, pos, "play tailwind")
    assert info["broken_invariant"] == 0
    assert new["sides"][0]["limit"] == "tailwind" and new["sides"][0]["battle"] == "crossing"
    hand = ["end_of_limit", "km25", "km50", "km75", "km100", "roll", "gasoline"]
    pos = position(2, {0: hand, 1: ["km25"] * 6}, [side("accident", "speed_limit"), side()])
    assert "play end_of_limit" in legal(MB, pos) and "play km25" not in legal(MB, pos)
    new, _ = play_position_move(MB, pos, "play end_of_limit")
    assert new["sides"][0]["limit"] == "end_of_limit" and new["sides"][0]["battle"] == "accident"


def test_touring_a_setback_goes_only_on_an_opponent():
    # Section 3 (reconstruction, touring.toml): Burning Oil "remove[s] a laid mileage card of the
    # value shown" - an attack, so on an opponent who has laid a 25, never on oneself.
    # Catches: a setback offered against the player's own laid mileage.
    hand = ["burning_oil", "m25", "m35", "m50", "go", "freeway"]
    pos = position(2, {0: hand, 1: ["m25"] * 5},
                   [side("go", "freeway", {"m25": 2}), side("go", "freeway", {"m25": 1})])
    moves = legal(TO, pos)
    assert "play burning_oil on side 1" in moves
    assert "play burning_oil" not in moves


# =================================================================================
# Tape l'étape (tape_l_etape.md): hand-built stage positions
# =================================================================================
RED, BLUE, GREEN, YELLOW = range(4)


def heuristic_turn(st, opts, seat):
    n = int(st[EK.S_N])
    parsed = E.parse_policy("heuristic")
    pid, prm = parsed[0], parsed[1]
    st[EK.S_TURN] = seat
    rec = new_record()
    EK.play_turn(st, opts, np.array([pid] * n, np.int64), np.stack([prm] * n), np.uint64(7),
                 np.arange(1, n + 1).astype(np.uint64), rec)
    return rec


# Seat 0 emptied its hand; seat 1 holds a 3 and a 9 (10 + 30 = 40 s), seat 2 a 4, 5, 6
# (3 x 10 = 30 s), seat 3 a 7 and an 8 (2 x 30 = 60 s). By the rules page: times -40, 40, 30, 60;
# places winner (seat 0), then fewest seconds: seat 2 (30), seat 1 (40), seat 3 (60).
END_HANDS = [[], [card(RED, 3), card(BLUE, 9)], [card(RED, 4), card(RED, 5), card(RED, 6)],
             [card(GREEN, 7), card(GREEN, 8)]]


@pytest.mark.parametrize("profile, mountain, sprint", [
    (EK.MONTAGNE, [5, 1, 3, 0], [0, 0, 0, 0]),
    (EK.PLAINE, [0, 0, 0, 0], [5, 1, 3, 0]),
    (EK.DESCENTE, [0, 0, 0, 0], [0, 0, 0, 0]),
    (EK.CLM, [0, 0, 0, 0], [0, 0, 0, 0]),
])
def test_etape_side_points_only_on_montagne_and_plaine_stages(profile, mountain, sprint):
    # "Side classifications on Montagne stages (mountain) and Plaine stages (sprint): 5, 3, 1
    # points for the first three of the stage". Descente and Contre-la-montre feed neither; a
    # Montagne feeds only the mountain, a Plaine only the sprint classification. The times are
    # the same for the four profiles (+10 s / +30 s a card, 40 s bonus for the winner).
    # Catches: side points on every profile, or into the wrong classification.
    st, opts = position_of_stage(4, profile, END_HANDS, start=6 if profile == EK.CLM else None)
    st[EK.S_NFIN], st[EK.S_FINISH] = 1, 1
    st[EK.S_PICKER] = 0
    rec = new_record()
    winner = EK.score_stage(st, opts, rec, 1)
    assert winner == 0
    assert [field(rec, EK.F_TIME, s) for s in range(4)] == [-40, 40, 30, 60]
    assert list(st[EK.S_MOUNT:EK.S_MOUNT + 4]) == mountain
    assert list(st[EK.S_SPRINT:EK.S_SPRINT + 4]) == sprint


def test_etape_the_plaine_sprint_lays_only_cards_legal_when_laid():
    # Plaine: "a player may lay their last two cards in one turn" - each still on its colour's
    # column (a column grows by exactly one value). Red 6 is down; seat 0 holds red 7 and blue 9:
    # red 7 goes, blue 9 cannot (the blue column waits for its 6), so one card is left and the
    # stage goes on (seat 1 can lay its blue 6). Catches: a sprint that sheds the second card
    # whether it fits or not.
    hands = [[card(RED, 7), card(BLUE, 9)], [card(BLUE, 6), card(BLUE, 3)], [], [card(YELLOW, 3)]]
    st, opts = position_of_stage(4, EK.PLAINE, hands, jokers=[0, 0, 0, 0])
    lay_all(st, 2, card(RED, 6))
    st[EK.S_HAND + 2] = mask(card(GREEN, 3))
    rec = heuristic_turn(st, opts, 0)
    assert cards_of(st[EK.S_HAND]) == [card(BLUE, 9)]
    assert field(rec, EK.F_LAID, 0) == 1
    assert EK.stage_status(st, opts) == 0


def test_etape_no_sprint_in_descente():
    # The two-card sprint is Plaine's (and Voiture balai's, "as Plaine"): in Descente a player
    # with red 9 and red 8 left, red 10 down, lays one card a turn. Catches: the sprint allowed
    # on every profile (test_etape_rules pins Montagne only).
    hands = [[card(RED, 9), card(RED, 8)], [card(BLUE, 3)], [], [card(YELLOW, 3)]]
    st, opts = position_of_stage(4, EK.DESCENTE, hands, jokers=[0, 0, 0, 0])
    lay_all(st, 2, card(RED, 10))
    st[EK.S_HAND + 2] = mask(card(GREEN, 3))
    rec = heuristic_turn(st, opts, 0)
    assert cards_of(st[EK.S_HAND]) == [card(RED, 8)]
    assert field(rec, EK.F_LAID, 0) == 1


@pytest.mark.parametrize("players, lo, hi", [(4, 3, 10), (6, 1, 12)])
def test_etape_contre_la_montre_start_is_a_value_in_play(players, lo, hi):
    # "Contre-la-montre: the active player names the start value" - a value of the cards in play
    # (3-10 with 3-4 players, 1-12 with 6), else no column could ever start. Random pickers name
    # the value at random. Catches: a start value outside the cards in play.
    _, stages = E.simulate(players=players, races=6, policies=["random"], seed=4,
                           options={"mode": "endurance"})
    clm = stages[stages["profile"].astype(str).str.lower().str.startswith("contre")]
    assert len(clm) == 6 * players  # every player has one Contre-la-montre stage card in endurance
    assert clm["start"].between(lo, hi).all()


# =================================================================================
# Bremer Stadtmusikanten (bremer_stadtmusikanten.md): the default board and a probe board
# =================================================================================
def bremen_game(players=4, board=None, **options):
    g = Game(board=board, players=players, options=options)
    g.seat = 0
    return g


def test_bremen_a_pyramid_passing_over_the_robber_does_not_chase_it():
    # "a full pyramid ... landing exactly on the robber's field outside its house sends the robber
    # home". The pyramid on m03 with a 3 passes the robber on m05 and ends on m06: no chase, no
    # point, the robber stays. Catches: a chase on passing over the robber.
    g = bremen_game()
    g.set_robber("m05")
    for animal in ("donkey", "dog", "cat", "rooster"):
        g.place(0, animal, "m03")
    assert "m06" in dests(g.first_moves(3, 3), 0, "donkey")
    eff = g.move(0, "donkey", "m06")
    assert not eff["chase"] and g.robber == "m05" and g.points(0) == 0
    assert g.stack("m06") == [(0, "donkey"), (0, "dog"), (0, "cat"), (0, "rooster")]


def probe_board(tmp_path):
    """The default board plus dead-end roads behind foreign start fields: c1..c7 off r06 and
    z1..z7 off r12 (colour 0 moves only forward there); y1 off r06 and w1, w2 off r18 (nothing
    there can move: their only way out is a foreign start field, and no foreign animal can get
    onto y1: only colour 1 may pass r06, and it is stuck on w1)."""
    extra = "".join(f'{n} = "road"\n' for n in
                    [f"c{i}" for i in range(1, 8)] + [f"z{i}" for i in range(1, 8)] + ["y1", "w1", "w2"])
    text = ring_board().replace("\n[links]", "\n" + extra + "\n[links]")
    chains = ('  ["r06", ' + ", ".join(f'"c{i}"' for i in range(1, 8)) + "],\n"
              '  ["r12", ' + ", ".join(f'"z{i}"' for i in range(1, 8)) + "],\n"
              '  ["r06", "y1"],\n  ["r18", "w1"],\n  ["r18", "w2"],\n')
    text = text.replace("chains = [\n", "chains = [\n" + chains)
    path = tmp_path / "dice.toml"
    path.write_text(text)
    return str(path)


def test_bremen_the_robber_die_shows_r_2_3_4_5_6(tmp_path):
    # "Two dice: a normal die (1-6) and a robber die (R, 2, 3, 4, 5, 6)"; otherwise "two moves,
    # one die each, with two different animals". Colour 0's donkey stands on c1 and its dog on z1,
    # each in a dead end it can only go forward along; cat and rooster are stuck on y1; colours 1
    # and 2 are stuck on w1, w2, and colour 3 can reach none of colour 0's animals. So a turn
    # without the R moves the donkey and the dog one die each, and their steps are the two dice.
    # Catches: a robber die with a 1 (or a 7), or both moves taken from one die.
    board = probe_board(tmp_path)
    faces, rs, games = set(), 0, 90
    for game_index in range(games):
        g = bremen_game(board=board)
        g.place(0, "donkey", "c1")
        g.place(0, "dog", "z1")
        g.place(0, "cat", "y1")
        g.place(0, "rooster", "y1")
        for animal in ("donkey", "dog", "cat", "rooster"):
            g.place(1, animal, "w1")
            g.place(2, animal, "w2")
        g.play(["greedy"] * 4, turns=1, seed=11, game_index=game_index)
        normal, robber = first_roll(11, game_index)
        robber = robber == "R"
        steps = sorted([int(g.pos(0, "donkey")[1:]) - 1, int(g.pos(0, "dog")[1:]) - 1])
        if robber:
            rs += 1
            assert steps == [0, 0]  # a robber move: no animal moves
            continue
        assert normal in steps and 1 <= normal <= 6
        other = steps[1] if steps[0] == normal else steps[0]
        assert 2 <= other <= 6, (game_index, normal, steps)
        faces.add(other)
    assert faces == {2, 3, 4, 5, 6}
    assert 3 <= rs <= 30  # R on one face in six: 15 expected in 90 rolls (sd 3.5)


def test_bremen_a_foreign_animal_may_land_on_the_own_start_field_then_be_carried_off():
    # Rules page: "Your own start field: you may land there (never sending your own animal home)
    # only with the first move, and the second move must leave it again"; the seed says so of own
    # and foreign animals alike ("Ook op het eigen startveld mag met eigen of vreemde dieren
    # geland worden"), and a foreign animal may move when it ends on one of one's own. Own donkey
    # and dog on r00 (cat r10, rooster r11); colour 1's cat on r03. Roll 3 and 2: the foreign
    # cat goes r03-r02-r01-r00 onto the own dog (a climb, nobody sent home); the second move (2)
    # must then take it off r00 again: the dog (carrying it) or the donkey (carrying both), to
    # r02 or r22; the own cat and rooster may not be the second move.
    # Catches: r00 closed to a foreign animal (a "foreign start field" read from the animal's
    # colour), or a second move that leaves the foreign cat on the own start field.
    g = bremen_game()
    g.place(0, "cat", "r10")
    g.place(0, "rooster", "r11")
    g.place(1, "cat", "r03")
    assert (3, 1, "cat", "r00") in g.first_moves(3, 2)
    eff = g.move(1, "cat", "r00")
    assert eff["climbed"] and eff["sent_home"] == 0
    assert g.stack("r00") == [(0, "donkey"), (0, "dog"), (1, "cat")]
    second = g.second_moves(2, first=(1, "cat"), first_field="r00")
    assert second == {(2, 0, animal, f) for animal in ("dog", "donkey") for f in ("r02", "r22")}
