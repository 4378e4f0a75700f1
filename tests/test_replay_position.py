"""The position at a turn of a replayed game (`etappe replay --position`,
`analysis.race.replay_position`): what the player on turn sees there, as a
position file that `moves` and `analyze` take.

The deck sizes and deals come from the rules page (../shared/rules/race_games.md);
the moves from the play-by-play of the same game."""
from __future__ import annotations

import tomllib

import numpy as np
import pytest
from typer.testing import CliRunner

from etappe.analysis.race import RaceRun, replay_position, simulate
from etappe.cli.main import app
from etappe.kernels import race as K
from etappe.kernels.race_design import DesignError, load_design
from etappe.kernels.race_position import describe_move, legal_moves_of, play_position_move, position_state
from etappe.kernels.race_replay import replay_hands

runner = CliRunner()

# Rules page: Stap op 99 cards, 5 each; Mille Bornes 101 cards at 2 players (106 less one each of five
# hazards and limits), 6 each; Touring 99 cards at 4 players, 5 each.
DECKS = {("stapop", 4): (99, 5), ("millebornes", 2): (101, 6), ("millebornes", 4): (106, 6), ("touring", 4): (99, 5)}
SIDE_FACTS = ("battle", "limit", "distance", "safeties", "km", "coups", "disqualified")


def cards_in(design, position) -> int:
    """Every card the position accounts for: hands, stock, discard and the tableaux."""
    count = sum(map(len, position["hands"].values())) + sum(position["hand_sizes"].values())
    count += position["stock"] + len(position["discard"])
    keys = {c.key for c in design.cards}
    for side in position["sides"]:
        count += (side["battle"] in keys) + (side["limit"] in keys) + len(side["safeties"])
        count += sum(side["distance"].values()) - sum(side.get("reshuffled", {}).values())
    return count


def played_moves(run: RaceRun, game: int) -> dict[int, tuple[int, str]]:
    """Turn (as the play-by-play counts it) -> (seat, move) of the first hand of `game`."""
    specs = [run.distinct[i] for i in run.seat_policies(np.array([game]))[0]]
    _, log, _, _, _ = next(replay_hands(run.design, run.card_table, run.rules, specs, run.seed, game))
    moves = {}
    for turn, seat, event, card, side, _ in log:
        if event in (K.EV_PLAY, K.EV_DISCARD):
            target = K.DISCARD if event == K.EV_DISCARD else side
            moves[int(turn)] = (int(seat), describe_move(run.design, int(card) * 8 + target, seat % run.sides))
    return moves


@pytest.mark.parametrize("deck,players", list(DECKS))
def test_the_first_turn_is_the_deal_and_one_draw(deck, players):
    size, hand = DECKS[deck, players]
    position = replay_position(deck, game=5, turn=1, players=players, seed=3)
    play_by_play = RaceRun(deck, players, "greedy", 3).replay(5)
    assert f"== hand 1 (hand 0 in the records): seat {position['on_turn']} plays first ==" in play_by_play
    assert position["stock"] == size - players * hand - 1
    assert [len(c) for c in position["hands"].values()] == [hand + 1]
    assert position["hand_sizes"] == {str(p): hand for p in range(players) if p != position["on_turn"]}
    assert position["discard"] == []
    # Stap op starts everyone under headwind, Touring's 50 and 75 need a Freeway first
    start = "none" if deck == "millebornes" else "start"
    assert all(s["battle"] == "empty" and s["limit"] == start and s["distance"] == {} for s in position["sides"])


@pytest.mark.parametrize("deck,players", list(DECKS))
def test_positions_through_a_game_hold_every_card_and_the_move_played_leads_to_the_next(deck, players):
    """At every fifth turn of two games: the position holds the whole deck, the
    move the play-by-play shows is among its legal moves, and playing it (from
    the position, by the position code) gives the tableaux of the next turn's
    position (moves that attack are left out: the hidden hands dealt at random
    may hold a coup fourré the game's did not)."""
    design = load_design(deck)
    run = RaceRun(deck, players, "greedy", 8)
    checked = 0
    for game in (0, 1):
        moves = played_moves(run, game)
        for turn in sorted(moves)[::5]:
            position = run.position(game, turn)
            seat, move = moves[turn]
            assert cards_in(design, position) == DECKS[deck, players][0], (game, turn)
            assert position["on_turn"] == seat
            assert move in legal_moves_of(design, position), (game, turn, move)
            if " on side " in move or turn + 1 not in moves:
                continue
            after, what = play_position_move(design, position, move, "greedy")
            following = run.position(game, turn + 1)
            assert what["next_seat"] == following["on_turn"], (game, turn, move)
            assert [{k: s.get(k) for k in SIDE_FACTS} for s in after["sides"]] == \
                   [{k: s.get(k) for k in SIDE_FACTS} for s in following["sides"]], (game, turn, move)
            checked += 1
    assert checked >= 10


def test_a_stap_op_position_after_reshuffles_counts_the_stages_that_went_back():
    """Stap op's reshuffle takes laid stages back into the stock, and they stay
    counted for their owner: the position says so (`reshuffled`), and still
    holds exactly the 99 cards."""
    run = RaceRun("stapop", 4, "greedy", 2)
    turns = max(played_moves(run, 0))
    position = run.position(0, turns)
    assert any(s.get("reshuffled") for s in position["sides"])
    assert cards_in(run.design, position) == 99
    for side in position["sides"]:
        laid = sum(n * int(k.removeprefix("km")) for k, n in side["distance"].items())
        assert side["km"] == laid  # the distance counts the reshuffled stages too


def test_reshuffled_stages_in_a_position_file():
    so = load_design("stapop")
    mb = load_design("millebornes")
    # Stap op holds 24 km5: four sides with 6 laid each and 4 in hand are 28, so some went back
    sides = [{"battle": "go", "limit": "tailwind", "distance": {"km5": 6}} for _ in range(4)]
    position = {"players": 4, "on_turn": 0, "stock": 30, "hands": {"0": ["km5"] * 4 + ["go"] * 2},
                "sides": sides}
    with pytest.raises(DesignError, match="more km5 than the deck holds"):
        position_state(so, position)
    for side in sides:
        side["reshuffled"] = {"km5": 2}
    state, *_ = position_state(so, position)
    assert [state[K.side_at(s) + K.SD_DIST] for s in range(4)] == [30] * 4
    sides[0]["reshuffled"] = {"km5": 7}
    with pytest.raises(DesignError, match=r"sides\[0\].reshuffled.km5: 7, but the side's distance counts 6"):
        position_state(so, position)
    mb_position = {"players": 2, "on_turn": 0, "stock": 40, "hands": {"0": ["km25"] * 7},
                   "sides": [{"battle": "roll", "distance": {"km100": 1}, "reshuffled": {"km100": 1}}, {}]}
    with pytest.raises(DesignError, match=r"sides\[0\].reshuffled: millebornes has no reshuffle"):
        position_state(mb, mb_position)


def test_replay_position_writes_a_position_file_that_moves_and_analyze_take(tmp_path):
    result = runner.invoke(app, ["replay", "millebornes", "-p", "2", "--seed", "1", "--game", "3",
                                 "--position", "20", "-o", "overshoot=disqualify"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("# Mille Bornes, 2 players, seed 1, game 3: hand 1, turn 20, seat ")
    assert "etappe moves millebornes FILE -o overshoot=disqualify" in result.output
    assert tomllib.loads(result.output) == replay_position("millebornes", game=3, turn=20, players=2, seed=1,
                                                           options={"overshoot": "disqualify"})
    path = tmp_path / "pos.toml"
    path.write_text(result.output)
    moves = runner.invoke(app, ["moves", "millebornes", str(path), "-o", "overshoot=disqualify"])
    assert moves.exit_code == 0, moves.output
    seat, move = played_moves(RaceRun("millebornes", 2, "greedy", 1, {"overshoot": "disqualify"}), 3)[20]
    assert move in moves.output.splitlines()


def test_replay_position_of_a_run_file_is_that_of_its_game(tmp_path):
    out = tmp_path / "run.parquet"
    assert runner.invoke(app, ["simulate", "stapop", "--games", "4", "--seed", "9", "--out", str(out)]).exit_code == 0
    result = runner.invoke(app, ["replay", str(out), "--game", "2", "--position", "7"])
    assert result.exit_code == 0, result.output
    frame = simulate("stapop", players=4, games=4, seed=9)
    assert tomllib.loads(result.output) == replay_position(frame.attrs, game=2, turn=7)
    assert "etappe moves stapop FILE\n" in result.output


@pytest.mark.parametrize("args,message", [
    (["--hand", "2"], "--hand: give it with --position"),
    (["--position", "100000"], "turn 100000: hand 1 of game 0 ended after "),
    (["--position", "5", "--hand", "50"], "hand 50: game 0 was over after "),
    (["--position", "0"], "--position"),
])
def test_replay_position_refusals(args, message):
    result = runner.invoke(app, ["replay", "millebornes", "-p", "2"] + args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_replay_position_of_a_run_of_a_design_file_says_where_its_design_is(tmp_path):
    design = tmp_path / "mine.toml"
    design.write_text(load_design("stapop").text.replace('name = "stapop"', 'name = "mine"'))
    out = tmp_path / "run.parquet"
    assert runner.invoke(app, ["simulate", str(design), "--games", "2", "--seed", "9", "--out", str(out)]).exit_code == 0
    result = runner.invoke(app, ["replay", str(out), "--game", "1", "--position", "3"])
    assert result.exit_code == 0, result.output
    assert "# legal moves: etappe moves DESIGN.toml FILE\n" in result.output
    assert f"# DESIGN.toml: the run's design, as etappe decks show {out} --toml > DESIGN.toml writes it\n" in result.output
