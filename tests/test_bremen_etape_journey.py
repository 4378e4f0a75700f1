"""A user's journey through Bremer Stadtmusikanten and Tape l'étape: defects
found by running the documented commands with bad and degenerate input.

Each test checks a fact known without the code: what a board file says, what
a rule option takes out of the game, which seats hold a joker, what one pair
of equal numbers shows."""
import re

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from etappe.analysis import bremen as B  # noqa: E402
from etappe.analysis import etape as E  # noqa: E402
from etappe.cli import bremen as C  # noqa: E402
from etappe.cli.main import app as main_app  # noqa: E402
from etappe.kernels.bremen_board import BoardError, load_board, ring_board  # noqa: E402
from etappe.reports import variant_report as V  # noqa: E402
from etappe.reports.bremen import build_report  # noqa: E402
from etappe.reports.etape import build_report as build_etape_report  # noqa: E402

runner = CliRunner()


def _board(tmp_path, text, name="b.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------ board files
@pytest.mark.parametrize("edit, problem", [
    # a [board] that is not a table: was AttributeError 'int' object has no attribute 'get'
    (lambda t: "board = 3\n" + t[t.index("[fields]"):], "[board] must be a table"),
    # [links] as a plain value: was AttributeError
    (lambda t: 'links = 5\n' + t[:t.index("[links]")], "[links] must be a table"),
    # a chain entry that is a list, not a field name: was TypeError unhashable type: 'list'
    (lambda t: t.replace("chains = [", 'chains = [[["r00"], "r01"],'), "a link chain holds field names"),
    # a misspelt key under [links] was reported as "no [links] chains"
    (lambda t: t.replace("chains = [", "chainz = ["), "unknown [links] key(s) ['chainz']"),
    # `reconstruction = "no"` was read as true (a non-empty string), and said so in every report
    (lambda t: t.replace("reconstruction = true", 'reconstruction = "no"'), "reconstruction must be true or false"),
    (lambda t: t.replace('name = "ring-r24-m16-i8-l301"', "name = 5"), "name must be a non-empty string"),
])
def test_malformed_board_files_are_refused_by_name(tmp_path, edit, problem):
    text = edit(ring_board())
    path = _board(tmp_path, text)
    with pytest.raises(BoardError) as err:
        load_board(path)
    assert str(path) in str(err.value) and problem in str(err.value), str(err.value)


def test_a_malformed_board_stops_the_cli_with_exit_2_and_no_traceback(tmp_path):
    path = _board(tmp_path, ring_board().replace("chains = [", 'chains = [[["r00"], "r01"],'))
    result = runner.invoke(main_app, ["simulate", "bremen", "--games", "1", "--board", str(path)])
    assert result.exit_code == 2, result.output
    assert "b.toml" in result.output and "Traceback" not in result.output


# ------------------------------------------------------------ the board caveat
def test_a_board_not_marked_as_a_reconstruction_is_not_called_one(tmp_path):
    # The board file says `reconstruction = false`: the header already said "board file",
    # but the caveat of the report (and of a comparison) said "The board is a reconstruction".
    own = _board(tmp_path, ring_board().replace("reconstruction = true", "reconstruction = false"), "own.toml")
    df = B.simulate(4, 5, ["greedy"] * 4, 1, board=str(own), options={"max_turns": 200})
    caveat = build_report(df).to_markdown().split("## Caveat", 1)[1]
    assert "The board is a reconstruction" not in caveat and "No board here is marked as a reconstruction" in caveat
    # the default board is one, and still says so
    default = B.simulate(4, 5, ["greedy"] * 4, 1, options={"max_turns": 200})
    assert "The board is a reconstruction" in build_report(default).to_markdown().split("## Caveat", 1)[1]
    # the header names the built-in board so, not by where this install keeps its file; a file by its path
    assert f"| board file | built-in default.toml (sha256 {default.attrs['board_hash']}) |" in build_report(default).to_markdown()
    assert f"| board file | {own} (sha256 {df.attrs['board_hash']}) |" in build_report(df).to_markdown()


# ------------------------------------------------------------ the turn-cap warning
def test_the_all_capped_warning_blames_random_play_only_when_every_seat_is_random(capsys):
    def frame(policies):
        df = pd.DataFrame({"winner_seat": [-1, -1], "turns": [1, 1], "capped": [True, True]})
        df.attrs.update(policies=policies, options={"max_turns": 1})
        return df

    C.warn_capped(frame(["greedy"] * 4))  # greedy games of 1 turn: the cap, not random play
    greedy = capsys.readouterr().err
    assert "all 2 games hit the turn cap of 1 turn:" in greedy and "All-random" not in greedy
    assert "raise -o max_turns" in greedy
    C.warn_capped(frame(["random"] * 4))
    assert "All-random Bremen play practically never ends" in capsys.readouterr().err


# ------------------------------------------------------------ one pair of games
def _row(mean_a, mean_b, n):
    diff = mean_a - mean_b
    return pd.Series({"metric": "lead changes per game", "mean_a": mean_a, "mean_b": mean_b, "diff": diff,
                      "sd": float("nan") if n < 2 else 0.0,  # as paired_table gives them: equal in every pair
                      "ci_low": float("nan") if n < 2 else diff, "ci_high": float("nan") if n < 2 else diff,
                      "p_holm": float("nan"), "reject": False, "n": n})


def test_one_pair_with_equal_values_is_equal_not_leaning():
    # `compare bremen --games 1`: A 0, B 0 was reported "No clear difference (leaning harder=true)"
    text = V._headline(_row(0.0, 0.0, 1), "Which has more lead changes?", "harder=false", "harder=true")
    assert "Equal in the one pair" in text and "leaning" not in text
    text = V._headline(_row(32.0, 37.0, 1), "Which variant plays longer games?", "a", "b", "game")
    assert "One pair only" in text and "nan" not in text and "A - B = -5" in text



def _tested(mean_a, mean_b, low, high, p_holm, n=60, sd=1.0, p_value=None):
    return pd.Series({"metric": "turns per game", "mean_a": mean_a, "mean_b": mean_b, "diff": mean_a - mean_b,
                      "sd": sd, "ci_low": low, "ci_high": high, "p_value": p_holm if p_value is None else p_value,
                      "p_holm": p_holm, "reject": p_holm < 0.05, "n": n})


@pytest.mark.parametrize("row, answer", [
    # Holm finds it: the variant with the larger mean is named, A's or B's
    (_tested(50.0, 40.0, 6.0, 14.0, 0.001), "Q **a**. turns per game: A 50, B 40; A - B = +10 [6, 14], Holm p = 0.001, n = 60."),
    (_tested(40.0, 50.0, -14.0, -6.0, 0.001), "Q **b**."),
    # not found, not even by the test of this metric alone: the sign of the estimate is noise
    (_tested(40.0, 41.0, -3.0, 1.0, 0.5), "Q No clear difference. turns per game: A 40, B 41;"),
    # found by the test alone (its interval clears 0), not after Holm's correction: it leans
    (_tested(40.0, 41.0, -1.9, -0.1, 0.09, p_value=0.03),
     "Q No clear difference (leaning b: p = 0.03 alone, not after Holm's correction). turns per game: A 40, B 41;"),
    (_tested(42.0, 41.0, 0.1, 1.9, 0.09, p_value=0.03), "Q No clear difference (leaning a: p = 0.03 alone"),
    # equal on average but not in every pair: no side to lean to (it said "leaning b")
    (_tested(0.1167, 0.1167, -0.178, 0.178, 1.0), "Q No clear difference. turns per game: A 0.1167, B 0.1167;"),
    # equal in every pair: a count's interval is the point 0; a rate's (Tango's) is not
    (_tested(1.0, 1.0, 0.0, 0.0, float("nan"), sd=0.0), "Q Equal in every one of the 60 pairs (turns per game: A 1, B 1)."),
    (_tested(0.0, 0.0, -0.06, 0.06, float("nan"), sd=0.0),
     "Q Equal in every one of the 60 pairs (turns per game: A 0, B 0; 95 % interval of A - B [-0.06, +0.06])."),
    (_tested(1.0, 1.0, 0.0, 0.0, float("nan"), n=0), "Q Not measured: no game gives this metric in both variants."),
    (_tested(float("nan"), float("nan"), float("nan"), float("nan"), float("nan"), n=1, sd=float("nan")),
     "Q Not measured from one pair: play more games."),
])
def test_a_headline_names_the_larger_variant_only_as_far_as_the_test_allows(row, answer):
    text = V._headline(row, "Q", "a", "b", "game")
    assert text.startswith(answer), text

# ------------------------------------------------------------ jokers out of the game
def _stages(vita, players=3):
    """One race of one stage; vita[s]: seat s's Vitamine target (-1 none); no other joker played."""
    row = {"race": 0, "stage": 0, "picker": 0, "profile": "plaine", "winner": 0, "blocked": 0}
    for s in range(players):
        row.update({f"{field}_{s}": 0 for field in E.K.STAGE_SEAT_FIELDS})
        row.update({f"crev_{s}": -1, f"vita_{s}": vita[s], f"braq_{s}": -1})
    return pd.DataFrame([row])


def test_joker_rates_count_only_the_seats_that_hold_the_joker():
    # withhold_seat=1, withhold_jokers=vitamine: seats 0 and 2 hold it, and both used it,
    # so every player who held it used it: use rate 2 / 2, not 2 / 3.
    df = _stages([2, -1, 0])
    df.attrs = {"players": 3, "policies": ["x"] * 3,
                "options": {"jokers": "crevaison,vitamine,braquet", "withhold_seat": 1, "withhold_jokers": "vitamine"}}
    usage = E.joker_usage(df).set_index("joker")
    assert usage.loc["vitamine", "uses"] == 2 and usage.loc["vitamine", "use_rate"] == pytest.approx(1.0)
    assert usage.loc["crevaison", "use_rate"] == 0.0  # all three held it, none used it


def test_jokers_not_in_the_game_have_no_rows_and_the_report_says_so():
    # jokers=vitamine: nobody holds a Crevaison or a Braquet, so "used by 0 %, interval 0-2 %"
    # was a statement about jokers that were never dealt.
    df = _stages([1, -1, -1])
    df.attrs = {"players": 3, "policies": ["x"] * 3, "options": {"jokers": "vitamine"}}
    assert list(E.joker_usage(df)["joker"]) == ["vitamine"]
    assert list(E.joker_stage_effect(df)["joker"]) == ["vitamine"]
    races, stages = E.simulate(4, 4, ["heuristic"], 1, {"jokers": "vitamine"})
    jokers = build_etape_report(races, stages).to_markdown().split("## Jokers", 1)[1].split("## ", 1)[0]
    assert "Not in this game (rule option jokers): crevaison, braquet" in jokers
    assert "| crevaison |" not in jokers and "| braquet |" not in jokers and "| vitamine |" in jokers


def test_the_docs_position_by_hand_example_runs_as_written():
    # docs/bremen.md "Positions by hand (Python)": a player's way to check a rule, with no doc beyond it
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "bremen.md").read_text()
    block = text.split("### Positions by hand (Python)")[1].split("```python\n")[1].split("```")[0]
    position, play_on = block.split("g.second_moves")
    scope: dict = {}
    exec(position, scope)
    g = scope["g"]
    # the move it plays is legal by the rules page: 3 fields in any direction from r05 (r04, r03, r02), no
    # foreign start field entered or passed; its donkey lands on colour 1's smaller dog, which goes home
    # and is stacked on its start field, r06, "largest at the bottom"
    assert (3, 0, "donkey", "r02") in scope["moves"] and (3, 0, "donkey", "r08") not in scope["moves"]  # r08 passes r06
    assert scope["effects"]["sent_home"] == 1 and not scope["effects"]["climbed"]
    assert g.stack("r02") == [(0, "donkey")]
    assert g.stack("r06") == [(1, "donkey"), (1, "dog"), (1, "cat"), (1, "rooster")]
    exec("g.second_moves" + play_on, scope)
    assert g.errors() == 0 and g.state[B.K.S_TURNS] > 0  # it played on from the position


def test_one_policy_on_every_seat_gets_no_win_rate_interval_around_an_exact_share():
    # It wins every decided game (race), so its rate is exactly 1/players: the report printed 0.25 with the
    # interval [0.2453, 0.25]. Two policies keep the table (and Tape l'étape its figure).
    one = build_report(B.simulate(players=4, games=40, seed=1)).to_markdown()
    assert "One policy (greedy) plays every seat, so it wins every decided game" in one
    assert "Win rate per policy" not in one
    two = build_report(B.simulate(players=4, games=40, seed=1, policies=["greedy", "random"])).to_markdown()
    assert "Win rate per policy" in two and "One policy" not in two
    races, stages = E.simulate(players=3, races=20, seed=1)
    one = build_etape_report(races, stages).to_markdown()
    assert "One policy (heuristic) plays every seat, so it wins every race: its win rate per seat is 1/3" in one
    assert "Race win rate per policy" not in one and "etape_win_policy" not in one
    # so do its rates per profile and its side classification tops (they printed 0.25 [0.2498, 0.25] at
    # 4 players); each profile's section says why instead, and the points per seat-race stay
    assert "Per policy in this profile" not in one and "_top" not in one
    profiles = one.split("## Profile: ")[1:]
    assert len(profiles) == stages["profile"].nunique()
    for section in profiles:
        assert ("One policy (heuristic) plays every seat, so it wins every stage with a winner: its win rate per "
                "seat is 1/3 of those by construction") in section
    sides = one.split("## Side classifications")[1].split("## ")[0]
    assert "its share of their tops per seat is 1/3 by construction" in sides
    points = [races[[f"{side}_{s}" for s in range(3)]].to_numpy().mean() for side in ("mountain", "sprint")]
    assert "| policy | n | mountain_points | sprint_points |" in sides
    row = next(line for line in sides.splitlines() if line.startswith("| heuristic")).strip("| ").split(" | ")
    assert row[1] == "60" and [float(v) for v in row[2:]] == pytest.approx(points, rel=1e-3)  # 20 races x 3 seats
    two = build_etape_report(*E.simulate(players=3, races=20, seed=1, policies=["heuristic", "random", "high"]))
    two = two.to_markdown()
    assert "Race win rate per policy" in two and "Per policy in this profile" in two
    assert "| mountain_top | mountain_top_low | mountain_top_high |" in two


@pytest.mark.parametrize("game, what", [("bremen", "(30 games)"), ("etape", "(30 races) and its stages")])
def test_simulate_out_says_the_time_it_spent_writing_in_every_game(tmp_path, game, what):
    # as the race games': the speed printed is the games', writing them is said apart
    out = tmp_path / "run.parquet"
    result = runner.invoke(main_app, ["simulate", game, "--games", "30", "--chunk-size", "10", "--out", str(out)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.stdout.splitlines() if line.startswith(f"wrote {out} {what}"))
    assert re.search(r"; [0-9.]+ s writing the records \(each chunk as it finished, then the joined file\), not "
                     r"in the speed of play$", line), line
