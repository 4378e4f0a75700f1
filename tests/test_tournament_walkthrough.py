"""A researcher's walkthrough of the policy-pool and decision features
(`etappe tournament`, `etappe sweep`, `etappe compare --sequential`), as the
docs describe them (docs/tournaments.md, docs/designs.md, docs/records.md,
docs/python.md, README.md).

Expected values come from the formulas in the docs, worked out here with
plain numpy / scipy (never with etappe's own statistics), or from the game
records of plain `simulate` runs. The tests after "mistakes that gave a bad
result" pin mistakes of a user that etappe once did not refuse (or answered
wrongly).
"""
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq
from scipy.stats import norm
from typer.testing import CliRunner

from etappe.analysis.race import simulate
from etappe.cli.main import app

runner = CliRunner()
ELO = 400 / math.log(10)            # Elo points per unit of natural log-strength (docs: 173.7)
Z = norm.ppf(0.975)


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def flat(text: str) -> str:
    """Rich wraps long lines and draws tables: one line of words to search in."""
    return " ".join(re.sub(r"[│┃╭╮╰╯─━┏┓┗┛┡┩└┘┌┐]", " ", text or "").split())


def wilson(k, n, z=Z):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def sobel_wald(signs, alpha=0.05, beta=0.05, delta=0.05):
    """The docs' three-decision procedure, game by game: (decision, games used)."""
    up, low = math.log((1 - beta) / (alpha / 2)), math.log(beta / (1 - alpha / 2))
    step = {"A": (math.log(1 + 2 * delta), math.log(1 - 2 * delta)),
            "B": (math.log(1 - 2 * delta), math.log(1 + 2 * delta))}
    llr, done = {"A": 0.0, "B": 0.0}, {"A": False, "B": False}
    for i, s in enumerate(signs):
        if s == 0:
            continue
        for k in "AB":
            if not done[k]:
                llr[k] += step[k][0] if s > 0 else step[k][1]
                if llr[k] >= up - 1e-12:
                    return k, i + 1
                if llr[k] <= low + 1e-12:
                    done[k] = True
        if done["A"] and done["B"]:
            return "same", i + 1
    return "undecided", len(signs)


def per_game(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-game metrics from the hand rows, as docs/records.md defines them."""
    g = frame.groupby("game")
    last = frame[frame["last_hand"] == 1].set_index("game").sort_index()
    return pd.DataFrame({
        "game_turns": last["game_turns"],
        "hands": g.size(),
        "lead_changes": g["lead_changes"].sum(),
        "no_winner": (last["winner_side"] == -1).astype(float),
        "capped": (g["capped"].max() > 0).astype(float),
    })


# ------------------------------------------------------------------ tournament: ratings against the formulas
def test_two_policy_tournament_ratings_follow_the_score_formulas(tmp_path):
    # cautious against builder in two-player Mille Bornes: well apart (about 65 %), no clean sweep
    out = tmp_path / "tour"
    result = run("tournament", "millebornes", "--policies", "cautious,builder", "--games", 400, "--seed", 2,
                 "--bootstrap", 0, "--out", out)
    assert result.exit_code == 0, result.stderr
    pair = pd.read_csv(out / "pairings.csv").iloc[0]
    ratings = pd.read_csv(out / "ratings.csv").set_index("policy")
    n = 400
    assert pair["wins_a"] + pair["wins_b"] + pair["no_winner"] == n
    s = (pair["wins_a"] + pair["no_winner"] / 2) / n          # chess convention: no winner = half a point
    assert pair["score_a"] == pytest.approx(s)
    assert (pair["ci_low"], pair["ci_high"]) == pytest.approx(wilson(s * n, n))
    assert pair["elo_diff"] == pytest.approx(400 * math.log10(s / (1 - s)))
    # two policies: the MLE difference is the logit of the score; Elo = (400 / ln 10) theta
    d = ratings.loc["cautious", "log_strength"] - ratings.loc["builder", "log_strength"]
    assert d == pytest.approx(math.log(s / (1 - s)), abs=1e-7)
    assert ratings["elo"].to_numpy() == pytest.approx(ELO * ratings["log_strength"].to_numpy())
    assert ratings["log_strength"].sum() == pytest.approx(0, abs=1e-9)     # geometric-mean strength 1
    assert ratings["strength"].to_numpy() == pytest.approx(np.exp(ratings["log_strength"].to_numpy()))
    # Fisher: Var(theta_A - theta_B) = 1 / (n p (1 - p)); each centred theta has half that sd
    se = 0.5 / math.sqrt(n * s * (1 - s))
    assert ratings["se"].to_numpy() == pytest.approx([se, se], rel=1e-6)
    assert ratings.loc["cautious", "elo_low"] == pytest.approx(ELO * (d / 2 - Z * se), rel=1e-6)
    # the far stronger one is ranked first and its interval excludes 0
    assert s > 0.6 and ratings.loc["cautious", "rank"] == 1 and ratings.loc["cautious", "elo_low"] > 0
    assert ratings.loc["builder", "elo_high"] < 0


def test_anchor_puts_the_anchor_at_zero_and_the_other_at_the_implied_difference(tmp_path):
    out = tmp_path / "tour"
    result = run("tournament", "millebornes", "--policies", "cautious,builder", "--games", 400, "--seed", 2,
                 "--bootstrap", 0, "--anchor", "builder", "--out", out)
    assert result.exit_code == 0, result.stderr
    pair = pd.read_csv(out / "pairings.csv").iloc[0]
    ratings = pd.read_csv(out / "ratings.csv").set_index("policy")
    n, s = 400, pair["score_a"]
    assert ratings.loc["builder", ["elo", "elo_low", "elo_high"]].tolist() == pytest.approx([0, 0, 0], abs=1e-9)
    elo = 400 * math.log10(s / (1 - s))
    se = 1 / math.sqrt(n * s * (1 - s))                       # the se of the difference to the anchor
    assert ratings.loc["cautious", "elo"] == pytest.approx(elo, rel=1e-6)
    assert ratings.loc["cautious", "elo_low"] == pytest.approx(elo - ELO * Z * se, rel=1e-6)
    assert ratings.loc["cautious", "elo_low"] > 0
    # an Elo difference d predicts a score of 1 / (1 + 10^(-d / 400))
    assert 1 / (1 + 10 ** (-ratings.loc["cautious", "elo"] / 400)) == pytest.approx(s)


def test_a_clean_sweep_played_through_the_cli_is_rated_by_the_virtual_draw(tmp_path):
    # random never beats greedy in two-player Mille Bornes: the docs' regularized case, n = 200
    out = tmp_path / "tour"
    result = run("tournament", "millebornes", "--policies", "random,greedy", "--games", 200, "--seed", 4,
                 "--bootstrap", 0, "--anchor", "greedy", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "one virtual draw per pairing" in flat(result.stdout)
    pair = pd.read_csv(out / "pairings.csv").iloc[0]
    assert (pair["wins_a"], pair["wins_b"], pair["no_winner"]) == (0, 200, 0)
    r = pd.read_csv(out / "ratings.csv").set_index("policy").loc["random"]
    best = math.log(0.5 / 200.5)                               # the posterior mode under Jeffreys' prior
    assert r["elo"] == pytest.approx(ELO * best, rel=1e-6)
    assert r["elo"] == pytest.approx(-1041, abs=1)             # docs: -1041 Elo for n = 200

    # its likelihood-ratio interval, worked out here: 0.5 points in 201 games, 200.5 against
    def loglik(d):
        return 0.5 * -np.logaddexp(0, -d) + 200.5 * -np.logaddexp(0, d)

    def excess(d):
        return loglik(best) - loglik(d) - Z * Z / 2

    low, high = brentq(excess, best - 20, best), brentq(excess, best, best + 20)
    assert (low, high) == pytest.approx((-10.83, -4.08), abs=0.01)  # the docs' numbers
    assert (r["elo_low"], r["elo_high"]) == pytest.approx((ELO * low, ELO * high), rel=1e-5)


def test_score_when_a_starts_matches_a_rotated_simulation(tmp_path):
    # docs: 2 players, A holds seat 0 in the even games; pair_table gives A's score when A started
    # and when B started. The same seats are `simulate(..., seating="rotate")` (docs).
    games, seed = 300, 6
    out = tmp_path / "tour"
    assert run("tournament", "millebornes", "--policies", "cautious,bold", "--games", games, "--seed", seed,
               "--bootstrap", 0, "--out", out).exit_code == 0
    pair = pd.read_csv(out / "pairings.csv").iloc[0]
    df = simulate("millebornes", players=2, games=games, policies=["cautious", "bold"], seed=seed, seating="rotate")
    names = df.attrs["policy_names"]
    first = df[df["hand"] == 0].set_index("game").sort_index()
    last = df[df["last_hand"] == 1].set_index("game").sort_index()
    starter = np.array([names[first.loc[g, f"seat{first.loc[g, 'first_seat']}_policy"]] for g in first.index])
    win = last["winner_side"].to_numpy()
    winner = np.array(["" if w < 0 else names[last.loc[g, f"seat{w}_policy"]] for g, w in zip(last.index, win)])
    points_a = np.where(win < 0, 0.5, (winner == "cautious").astype(float))
    a_first = starter == "cautious"
    assert a_first.sum() == games // 2                       # each policy starts half the games
    assert pair["score_a"] == pytest.approx(points_a.mean())
    assert pair["score_a_first"] == pytest.approx(points_a[a_first].mean())
    assert pair["score_a_second"] == pytest.approx(points_a[~a_first].mean())


def test_the_report_reproduce_line_plays_and_rates_the_tournament_again(tmp_path, monkeypatch):
    # docs/tournaments.md: the report holds everything needed to reproduce it. Its command once
    # left out --bootstrap and --anchor (other intervals, another zero) and did not quote a path
    # with a space in it.
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my designs").mkdir()
    design = (Path(__file__).parents[1] / "kernels" / "designs" / "stapop.toml").read_text()
    (tmp_path / "my designs" / "s p.toml").write_text(design)
    result = run("tournament", "my designs/s p.toml", "--policies", "random,greedy:attack=3", "--games", 40,
                 "--seed", 4, "--bootstrap", 20, "--anchor", "random", "--option", "overshoot=disqualify",
                 "--out", "a")
    assert result.exit_code == 0, result.output
    line = re.search(r"^\| reproduce \| (etappe tournament .*) \|$", Path("a/report.md").read_text(), re.M)
    # each setting named (with these policies the option and the bootstrap happen not to change the numbers)
    assert line.group(1) == ("etappe tournament 'my designs/s p.toml' --policies random,greedy:attack=3 --players 2 "
                             "--games 40 --seed 4 --option overshoot=disqualify --bootstrap 20 --anchor random")
    result = run(*shlex.split(line.group(1))[1:], "--out", "b")
    assert result.exit_code == 0, result.output
    for table in ("ratings.csv", "pairings.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(Path("b") / table), pd.read_csv(Path("a") / table))
    ratings = pd.read_csv("b/ratings.csv").set_index("policy")
    assert ratings.loc["random", "elo"] == 0  # the anchor came along
    # a built-in design goes by its name
    from etappe.reports.tournament_report import reproduce_tournament

    assert reproduce_tournament({"design": "stapop", "design_file": "builtin:stapop", "policies": ["random", "greedy"],
                                 "players": 2, "games": 10, "seed": 1, "options_given": {}}) == (
        "etappe tournament stapop --policies random,greedy --players 2 --games 10 --seed 1")


# ------------------------------------------------------------------ sequential comparisons
def test_sequential_policy_duel_stops_where_the_bounds_say_with_the_cli_error_rates():
    # greedy never loses to random in two-player Mille Bornes: every game is a +1.
    # alpha = 0.1, beta = 0.2, delta = 0.1: bound ln(0.8 / 0.05) = ln 16, step ln 1.2: 16 games
    n = math.ceil(math.log(0.8 / 0.05) / math.log(1.2))
    assert n == 16
    result = run("compare", "millebornes", "--sequential", "--policy", "greedy,random", "--seed", 1,
                 "--alpha", 0.1, "--beta", 0.2, "--delta", 0.1, "--games", 1000)
    assert result.exit_code == 0, result.stderr
    text = flat(result.stdout)
    assert f"greedy wins more often: decided after {n} games" in text
    assert f"{n} / 0 / 0" in text
    assert f"bounds {math.log(0.2 / 0.95):.3f}, {math.log(16):.3f}" in text
    assert "alpha = 0.1" in text and "beta = 0.2" in text and "+- 0.1" in text


def test_sequential_design_duel_matches_a_reference_scan_of_plain_runs():
    games, seed = 400, 3
    result = run("compare", "stapop", "touring", "--sequential", "--players", 2, "--seed", seed, "--games", games)
    assert result.exit_code == 0, result.stderr
    turns = [per_game(simulate(d, players=2, games=games, seed=seed))["game_turns"].to_numpy(float)
             for d in ("stapop", "touring")]
    signs = np.sign(turns[0] - turns[1])
    decision, used = sobel_wald(signs)
    assert decision in ("A", "B") and used < 150          # clearly different designs stop early
    label = "Stap op" if decision == "A" else "Touring (reconstructed)"
    text = flat(result.stdout)
    assert f"{label} has the higher game_turns in more games: decided after {used} games" in text
    plus, minus = int((signs[:used] > 0).sum()), int((signs[:used] < 0).sum())
    assert f"{plus} / {minus} / {used - plus - minus}" in text
    d = turns[0][:used] - turns[1][:used]
    assert f"{d.mean():.4g}" in text                        # mean paired difference over the games used


def test_same_play_under_two_names_rarely_declares_a_winner():
    # hoarder is greedy (docs/policies.md), and a pairing of it with greedy is refused as one policy given
    # twice; next_target attacks the next player instead of the leader, who at 2 players are the same one:
    # it plays greedy's very games (checked below). q = 1/2 exactly, so "A" or "B" has probability about alpha
    from etappe.analysis.sequential import policy_outcomes, sequential_compare

    with pytest.raises(ValueError, match="policy given twice: greedy and hoarder"):
        policy_outcomes("millebornes", 2, "greedy", "hoarder")
    same = [simulate("millebornes", players=2, games=300, policies=p, seed=5)
            for p in (["greedy", "next_target"], ["greedy", "greedy"])]
    played = [c for c in same[0].columns if not c.endswith("_policy")]
    assert same[0][played].equals(same[1][played])
    decisions = [sequential_compare(policy_outcomes("millebornes", 2, "greedy", "next_target", seed=s),
                                    chunk=500, max_games=6000).decision for s in range(12)]
    false = sum(d in ("A", "B") for d in decisions)
    assert false <= 3, decisions                        # P(4 or more of 12 | 5 %) = 0.2 %
    assert decisions.count("same") >= 8, decisions


# ------------------------------------------------------------------ sweep against plain runs of the files
def test_sweep_values_play_the_games_of_each_variant_written_as_a_file(tmp_path):
    from etappe.analysis.sweep import sweep_design, sweep_table

    text = run("decks", "show", "millebornes", "--toml").stdout
    needle = 'key = "stop"\nname = "Stop (Feu rouge)"\nrole = "hazard"\ncount = 5\n'
    assert needle in text
    path = tmp_path / "eight_stops.toml"
    path.write_text(text.replace(needle, needle.replace("count = 5", "count = 8")))
    games, seed = 300, 7
    by_file = per_game(simulate(path, players=2, games=games, seed=seed))
    as_written = per_game(simulate("millebornes", players=2, games=games, seed=seed))
    sweep = sweep_design("millebornes", "cards.stop.count", [8, 5], players=2, games=games, seed=seed,
                         chunk_size=120)
    table = sweep_table(sweep).set_index(["key", "value"])
    for key in ("game_turns", "hands", "lead_changes", "no_winner"):
        row = table.loc[(key, 8)]
        assert row["variant"] == pytest.approx(by_file[key].mean()), key
        assert row["as_written"] == pytest.approx(as_written[key].mean()), key
        assert row["diff"] == pytest.approx((by_file[key] - as_written[key]).mean()), key
        # the file's own value plays the very same games
        same = table.loc[(key, 5)]
        assert same["variant"] == same["as_written"] == pytest.approx(as_written[key].mean()) and same["diff"] == 0
    # Holm over every value and metric of the sweep, worked out from the raw p-values
    p = table["p_value"].to_numpy(float)
    ok = ~np.isnan(p)
    order = np.argsort(p[ok])
    m = ok.sum()
    adj = np.minimum(1, np.maximum.accumulate(p[ok][order] * (m - np.arange(m))))
    holm = np.empty(m)
    holm[order] = adj
    assert table["p_holm"].to_numpy(float)[ok] == pytest.approx(holm)


# ------------------------------------------------------------------ mistakes refused clearly (pinned)
@pytest.mark.parametrize("args, message", [
    (("tournament", "stapop", "--policies", "greedy:attak=3,random"), "bad greedy parameter 'attak=3'"),
    (("tournament", "stapop", "--policies", "random:attack=3,greedy"), "policy 'random' takes no parameters"),
    (("tournament", "stapop", "--policies", "random,greedy", "--players", 1), "a pairing needs at least 2 players"),
    (("tournament", "millebornes", "--policies", "random,greedy", "--players", 5), "played by 2, 3, 4, 6 players, not 5"),
    (("tournament", "stapop", "--policies", "greedy:attack=3,random", "--anchor", "greedy"),
     "--anchor 'greedy' is not one of the policies: greedy:attack=3, random"),
    (("tournament", "stapop", "--policies", "random,greedy", "--option", "coup_fourre=false"), "changes nothing in Stap op"),
    (("sweep", "millebornes", "--set", "cards.stop.count=3.5"), "must be a whole number, not 3.5"),
    (("sweep", "millebornes", "--set", "cards.stop.count=true"), "must be a whole number, not True"),
    (("sweep", "millebornes", "--set", "cards.roll.count=0"), "the go card has count 0"),
    (("sweep", "millebornes", "--set", "players.5.trip=700"), "players.5: not one of design.players (2, 3, 4, 6)"),
    (("sweep", "millebornes", "--set", "players.4.trip=800"), "changes nothing that is played at 2 players"),
    (("sweep", "millebornes", "--set", "options.coup_fourre=yes"),
     "must be true or false, written without quotes (coup_fourre = false), not 'yes'"),
    (("sweep", "millebornes", "--set", "options.failed_extension_trip_points=true", "--players", 4),
     "options.failed_extension_trip_points = true changes nothing that is played at 4 players"),  # as written
    (("sweep", "millebornes", "--set", "cards.stop.count=3", "--players", 5), "not 5"),
    (("compare", "millebornes", "--sequential", "--policy", "greedy,greedy"), "a pairing needs two different policies"),
    (("compare", "millebornes", "--sequential", "--policy", "greedy,random", "--delta", 0.5), "delta must lie in (0, 0.5)"),
    (("compare", "millebornes", "--sequential", "--policy", "greedy,random", "--alpha", "nan"), "alpha must lie in (0, 1)"),
    (("compare", "millebornes", "--sequential", "--policy", "greedy,random", "--metric", "game_turns"),
     "--metric is for --sequential with two designs"),
    (("compare", "stapop", "touring", "--sequential", "--metric", "first_player_gap"), "unknown metric 'first_player_gap'"),
    (("compare", "stapop", "touring", "--sequential", "--chunk-size", 10), "--chunk-size is not used with --sequential"),
    (("compare", "stapop", "touring", "--sequential", "--seating", "rotate"),
     "--seating rotate is not available with --sequential (its games are paired on the same seats)"),
    (("compare", "stapop", "touring", "--alpha", 0.1), "--alpha: for --sequential only"),
    (("compare", "bremen", "--sequential", "--option-b", "harder=true"), "--sequential is for the race designs"),
    (("compare", "millebornes", "--sequential", "--policy", "greedy,greedy:attack=1.75"),
     "policy given twice: greedy and greedy:attack=1.75 (one policy, spelled differently)"),
    (("compare", "stapop", "touring", "--sequential", "--metric", "won_s5"),
     "unknown metric 'won_s5'; one of: game_turns"),
    (("sweep", "millebornes", "--set", "cards.stop.count=3,,5"), "has an empty value"),
    (("sweep", "millebornes", "--set", "design.players=[2,3]"), "'[2' is not a value: the values are separated by commas"),
])
def test_mistakes_are_refused_by_name(tmp_path, args, message):
    extra = ("--out", tmp_path / "o") if args[0] in ("sweep", "tournament") else ()
    result = run(*args, "--games", 10, *extra)
    assert result.exit_code == 2, (result.stdout, result.exception)
    assert message in flat(result.stderr), result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("changed, differs", [
    (("--policies", "random,greedy,builder", "--games", 12), 'policies[2].name "aggressive", not "builder"'),
    (("--policies", "random,greedy,aggressive", "--games", 20), "games 12, not 20"),
    # an option given to one run only: the refusal named nothing
    (("--policies", "random,greedy,aggressive", "--games", 12, "-o", "turn_cap=400"),
     'options.turn_cap not given before, "400" now'),
])
def test_resuming_a_tournament_with_changed_arguments_is_refused(tmp_path, monkeypatch, changed, differs):
    import etappe.analysis.tournament as T

    out = tmp_path / "t"
    real, calls = T.play_pair, {"n": 0}

    def interrupted(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(T, "play_pair", interrupted)
    assert run("tournament", "millebornes", "--policies", "random,greedy,aggressive", "--games", 12,
               "--out", out).exit_code != 0
    monkeypatch.setattr(T, "play_pair", real)
    result = run("tournament", "millebornes", *changed, "--out", out, "--bootstrap", 0)
    assert result.exit_code == 2 and "belongs to a different run" in flat(result.stderr) and differs in result.stderr


# ------------------------------------------------------------------ mistakes that gave a bad result (fixed)
EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "distance_first.py"


@pytest.mark.parametrize("pool", ["greedy,greedy:attack=1.75",
                                  f"{EXAMPLE}:distance_first,{EXAMPLE.parent}/../examples/distance_first.py:distance_first"])
def test_the_same_policy_spelled_twice_is_refused(tmp_path, pool):
    result = run("tournament", "stapop", "--policies", pool, "--games", 10, "--bootstrap", 0)
    assert result.exit_code == 2 and "twice" in flat(result.stderr)


def test_a_single_bootstrap_resample_gives_no_broken_interval(tmp_path):
    out = tmp_path / "t"
    result = run("tournament", "millebornes", "--policies", "greedy,aggressive", "--games", 40, "--seed", 1,
                 "--bootstrap", 1, "--out", out)
    # refused by name, before any game is played (one refit has no spread)
    assert result.exit_code == 2 and "--bootstrap must be 0" in flat(result.stderr)
    assert not (out / ".tournament-checkpoint.pkl").exists()


def test_sweep_refuses_two_settings(tmp_path):
    result = run("sweep", "millebornes", "--set", "cards.stop.count=3", "--set", "cards.roll.count=10",
                 "--games", 10, "--out", tmp_path / "s")
    assert result.exit_code == 2 and "--set is given 2 times" in flat(result.stderr)


def test_sweeping_an_option_also_given_for_the_run_is_not_silently_overridden(tmp_path):
    # turn_cap 20 cuts every Stap op game (a set of 16 stage cards, 2 players) short; 1000 cuts none
    out = tmp_path / "s"
    result = run("sweep", "stapop", "--set", "options.turn_cap=20", "--option", "turn_cap=1000",
                 "--games", 20, "--out", out)
    assert result.exit_code == 2 and "options.turn_cap is swept and also given for the run" in flat(result.stderr)


@pytest.mark.parametrize("setting, players", [("design.notes=hello", 2),
                                              ("options.failed_extension_trip_points=true", 4)])
def test_sweeping_a_setting_that_changes_nothing_is_refused(tmp_path, setting, players):
    result = run("sweep", "millebornes", "--set", setting, "--players", players, "--games", 10,
                 "--out", tmp_path / "s")
    assert result.exit_code == 2 and "changes nothing" in flat(result.stderr)


@pytest.mark.parametrize("args", [("stapop", "stapop"),
                                  ("millebornes", "--option-b", "roll_after_safety=true")])
def test_sequential_comparison_of_a_design_with_itself_is_refused(args):
    result = run("compare", *args, "--sequential", "--games", 50)
    assert result.exit_code == 2 and "same design" in flat(result.stderr)


def test_sequential_final_gap_between_designs_of_other_units_is_refused():
    result = run("compare", "stapop", "millebornes", "--sequential", "--metric", "final_gap", "--games", 100)
    assert result.exit_code == 2 and "final_gap" in flat(result.stderr)


@pytest.mark.parametrize("kwargs, error, name", [({"games": 2.5}, TypeError, "games"),
                                                 ({"players": "2"}, TypeError, "players"),
                                                 ({"chunk_size": 0}, ValueError, "chunk_size")])
def test_play_tournament_names_a_bad_argument(kwargs, error, name):
    from etappe.analysis.tournament import play_tournament

    with pytest.raises(error, match=name):
        play_tournament(**({"design": "stapop", "players": 2, "policies": ["greedy", "random"], "games": 4} | kwargs))


def test_a_negative_bootstrap_is_refused_by_name():
    from etappe.analysis.tournament import bradley_terry, play_tournament

    res = play_tournament("millebornes", players=2, policies=["greedy", "aggressive"], games=20, seed=1)
    with pytest.raises(ValueError, match="bootstrap"):
        bradley_terry(res, bootstrap=-1)


@pytest.mark.parametrize("call", ["sweep", "design_outcomes"])
def test_a_policy_given_as_a_string_is_one_policy(call):
    from etappe.analysis.sequential import design_outcomes
    from etappe.analysis.sweep import sweep_design

    if call == "sweep":
        s = sweep_design("stapop", "cards.go.count", [10], players=2, games=5, policies="greedy")
        assert s.base_meta["policies"][0]["name"] == "greedy"
    else:
        signs, _ = design_outcomes("stapop", "touring", 2, policies="greedy")(0, 5)
        assert signs.size == 5


def test_sequential_compare_names_a_fractional_chunk():
    from etappe.analysis.sequential import sequential_compare

    with pytest.raises(TypeError, match="chunk"):
        sequential_compare(lambda s, c: np.ones(c, np.int8), chunk=2.5)


def test_a_tournament_of_no_games_is_refused_as_such():
    from etappe.analysis.tournament import TournamentResult, bradley_terry, pair_table

    empty = TournamentResult(["greedy", "random"], [(0, 1)], np.zeros((1, 0), np.int8), {"players": 2, "sides": 2})
    with pytest.raises(ValueError, match="no paired game|no games"):
        bradley_terry(empty)
    with pytest.raises(ValueError, match="no paired game|no games"):
        pair_table(empty)


def test_a_stream_of_even_games_says_why_it_is_undecided():
    from etappe.analysis.sequential import sequential_compare

    res = sequential_compare(lambda start, count: np.zeros(count, np.int8), chunk=30, max_games=100)
    assert res.decision == "undecided" and (res.plus, res.minus, res.zeros) == (0, 0, 100)
    assert "no game had a difference" in res.verdict
