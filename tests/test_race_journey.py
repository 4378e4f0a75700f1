"""A designer's journey through the race family: their own design files,
bad input and the reports of degenerate runs (every game capped, no
hazards). Each test holds a defect found that way; the expected values come
from the rules and the design files, worked by hand.
"""
import warnings

import pytest
from typer.testing import CliRunner

from etappe.analysis.race import simulate
from etappe.cli.main import app
from etappe.kernels.race_design import DesignError, parse_design

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


# Seven cards: three 50s, two go cards, two Stops cleared by a go card. Played out, never rebuilt.
TINY = """
[design]
name = "tiny"
players = [2, 3]
hand_size = 2
stock_exhausted = "play_out"

[target]
kind = "sum"
trip = 100

[[cards]]
key = "km50"
role = "distance"
value = 50
count = 3

[[cards]]
key = "go"
role = "go"
count = 2

[[cards]]
key = "stop"
role = "hazard"
count = 2
remedy = "go"
"""

# Mille Bornes' 2-player trip is 700 km and at most two 200s count: five distance cards and a Roll
# at the least, six turns of one side, so a hand cut off after 5 turns (of both sides) completes no
# trip and no game has a winner.
NO_TRIP_CAP = "turn_cap=5"


def _write(tmp_path, text, name="mine.toml"):
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def test_a_remove_that_leaves_too_few_cards_to_deal_is_refused(tmp_path):
    # 7 cards; at 3 players `remove` takes 2, leaving 5, but 3 hands of 2 take 6. The whole deck
    # passed the hand-size check, and games were played with cards conjured out of an empty stock.
    text = TINY.replace("[target]", "[players.3]\nremove = { km50 = 1, stop = 1 }\n\n[target]").replace(
        "trip = 100", "trip = 50")
    with pytest.raises(DesignError) as refused:
        parse_design(text, "mine.toml")
    message = str(refused.value)
    assert message.startswith("mine.toml: players.3.remove:")
    assert "leaves 5 cards for 3 players" in message and "take 6" in message
    result = run("decks", "validate", _write(tmp_path, text))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "players.3.remove" in result.output
    # one card fewer removed: 6 cards, 6 dealt, none left to draw, refused as well; none removed: 7, valid
    with pytest.raises(DesignError, match="leaves 6 cards for 3 players"):
        parse_design(text.replace("remove = { km50 = 1, stop = 1 }", "remove = { stop = 1 }"), "mine.toml")
    parse_design(text.replace("remove = { km50 = 1, stop = 1 }", "remove = {}"), "mine.toml")


def test_a_play_out_hand_where_nobody_laid_any_distance_has_no_winner(tmp_path):
    # docs/designs.md: without [scoring], a play-out hand that ends without a completed trip goes to the
    # longest distance; a tie has no winner, and 0 km each is a tie (no side is disqualified here).
    replayed = run("replay", _write(tmp_path, TINY), "--players", 2, "--seed", 1, "--game", 0).stdout.splitlines()
    # (a design without [scoring] plays one hand, decided by the trip: the replay shows no score)
    assert replayed[-3:] == ["   side 0: 0 km", "   side 1: 0 km",
                             "== game over: no winner: nobody completed the trip and the longest distance, 0, is tied"]


def test_the_hand_cap_is_not_reported_as_the_turn_cap(tmp_path):
    # A scored design whose game target cannot be reached: a hand scores at most 100 km + 100 for the
    # trip, so 60 hands (the hand cap, docs/designs.md) make at most 12 000 of 1 000 000. A play-out
    # hand lasts at most the deck's 7 turns, under its turn cap of 7 + 2 + 1: no hand hits that.
    text = TINY + "\n[scoring]\ngame_target = 1000000\ntrip_completed = 100\n"
    path = _write(tmp_path, text)
    df = simulate(str(path), players=2, games=4, seed=1)
    last = df[df["last_hand"] == 1]
    assert (last["hand"] == 59).all() and (last["capped"] == 2).all()
    assert (df["capped"] != 1).all() and (df["turns"] <= 7).all() and (df["winner_side"] == -1).all()
    replayed = run("replay", path, "--players", 2, "--seed", 1, "--game", 0).stdout.splitlines()
    assert replayed[-1] == "== game over: no winner: no side reached 1000000 in 60 hands (the hand cap)"
    assert sum(line.startswith("== hand ") for line in replayed) == 60

    out = tmp_path / "run.parquet"
    result = run("simulate", path, "--players", 2, "--games", 4, "--seed", 1, "--out", out)
    assert result.exit_code == 0, result.output
    line = " ".join(result.stdout.split())
    assert "no winner 4, turn cap hit 0, hand cap (60 hands) hit 4" in line
    result = run("report", out, "--out", tmp_path / "rep")
    assert result.exit_code == 0
    assert f"wrote {tmp_path / 'rep' / 'report.html'} and {tmp_path / 'rep' / 'report.md'}" in result.stdout.splitlines()
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| hands that hit the turn cap | 0 | 240 |" in md
    assert "| games that hit the hand cap (no side reached the game target) | 4 | 4 |" in md


def test_a_comparison_with_a_run_that_has_no_winner_says_why(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the all-NaN seat bias warned on the console
        result = run("compare", "millebornes", "--option-b", NO_TRIP_CAP, "--players", 2, "--games", 40,
                     "--seed", 1, "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    assert "RuntimeWarning" not in result.output
    md = (tmp_path / "cmp" / "report.md").read_text()
    name = "Mille Bornes (turn_cap=5)"
    assert (f"| Which has the stronger first-player bias? | n/a | not measured in both runs: no game of {name} "
            "had a winner (40 hit the turn or hand cap) |") in md
    assert f"{name}: No game had a winner" in md
    # the empty tests of B have no p-value to caution about; A's expected counts are 40 / 2 and more
    assert "Expected counts below 5" not in md


def test_a_comparison_with_a_design_without_hazards_says_so(tmp_path):
    # Distance and go cards only: nothing to be hit by, so "more decisive hazards" cannot be asked.
    text = TINY.replace('[[cards]]\nkey = "stop"\nrole = "hazard"\ncount = 2\nremedy = "go"\n', "").replace(
        "players = [2, 3]", "players = [2]")
    result = run("compare", _write(tmp_path, text), "stapop", "--players", 2, "--games", 40, "--seed", 1,
                 "--out", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    md = (tmp_path / "cmp" / "report.md").read_text()
    assert ("| Which has more decisive hazards? | n/a | not measured in both runs: tiny has no hazards, "
            "limits or setbacks |") in md


def test_a_sweep_value_without_winners_is_named_not_left_out(tmp_path):
    result = run("sweep", "millebornes", "--set", "options.turn_cap=5", "--players", 2, "--games", 20,
                 "--seed", 1, "--out", tmp_path / "sweep")
    assert result.exit_code == 0, result.output
    md = (tmp_path / "sweep" / "report.md").read_text()
    line = next(t for t in md.splitlines() if t.startswith("won by the side least hit by hazards:"))
    assert line.endswith("5: not measured: no game of options.turn_cap = 5 had a winner (20 hit the turn or hand cap).")


def test_decks_list_gives_the_target_of_each_player_count():
    # the rules page: Mille Bornes' trip is 700 with an extension to 1000 at 2, 3 and 6 players, 1000 at 4
    # (the list said "exact sum 1000" for all); Touring races 590, or 295 at 3 and 6 players
    result = CliRunner().invoke(app, ["decks", "list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[4].strip() for line in result.stdout.splitlines()
            if line.startswith("│")}
    assert rows["millebornes"] == "exact sum: 2,3,6 players 700 (extension 1000); 4 players 1000"
    assert rows["touring"] == "exact set: 2,4,5 players 590; 3,6 players 295"
    assert rows["stapop"] == "exact set of 100"
