"""Designs a user writes: what a designer meets first (docs/designs.md).

Each test comes from writing a design of one's own from the docs alone and
running it through validate, simulate, report and compare: a mistake must be
refused with the file, the field and the problem; a report must say what a
designer's own cards did.
"""

import re

import numpy as np
import pytest

from etappe.kernels.race_design import DesignError, load_design

from test_race_rules import MB_TEXT, SO_TEXT
from test_race_rules import bad_design as refused


def edited(text, old, new):
    out = text.replace(old, new, 1)
    assert out != text, old
    return out


# ---- validation -----------------------------------------------------------------
def test_safe_trip_points_without_the_card_they_are_about_are_refused(tmp_path):
    # The bonus is for a trip completed without a card: with no card named, it was never scored.
    text = edited(MB_TEXT, 'safe_trip_card = "km200"\n', "")
    message = refused(tmp_path, text)
    assert "bad.toml: scoring.safe_trip:" in message and "safe_trip_card" in message
    # no points, no card: nothing to score, nothing to refuse
    text = edited(text, "safe_trip = 300 ", "safe_trip = 0 ")
    assert load_design(_write(tmp_path, text)).scoring["safe_trip"] == 0


def test_delayed_action_points_in_a_design_whose_stock_is_rebuilt_are_refused(tmp_path):
    # "a rebuilt stock is never empty" (docs/designs.md, options): a trip is never completed after it ran out
    text = SO_TEXT + "\n[scoring]\ngame_target = 500\ndelayed_action = 300\n"
    message = refused(tmp_path, text)
    assert "bad.toml: scoring.delayed_action: 300 points" in message and "never runs out" in message
    assert load_design(_write(tmp_path, text.replace("delayed_action = 300", "delayed_action = 0"))).scoring


def test_a_key_is_letters_digits_and_underscores(tmp_path):
    # docs/designs.md: "_" alone is such a key (it was refused as not being one); a leading digit is not
    design = load_design(_write(tmp_path, edited(SO_TEXT, 'key = "km5"', 'key = "_"')))
    assert [c.key for c in design.cards].count("_") == 1
    message = refused(tmp_path, edited(SO_TEXT, 'key = "km5"', 'key = "5km"'))
    assert message.endswith("cards[8] (5km).key: must be letters, digits and _ , not starting with a digit")


def _write(tmp_path, text, name="ok.toml"):
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def test_two_cards_with_one_name_are_refused_as_reports_show_cards_by_name(tmp_path):
    # A card block copied and given a new key, but not a new name: the reports' rows would be twins.
    text = edited(MB_TEXT, 'name = "Spare Tire (Roue de secours)"', 'name = "Gasoline (Essence)"')
    message = refused(tmp_path, text)
    assert "bad.toml: cards[11] (spare_tire).name: 'Gasoline (Essence)' is also the name of cards[10] (gasoline)" \
        in message
    # the name defaults to the key, so a design without names stays valid
    plain = "".join(line + "\n" for line in MB_TEXT.splitlines() if not line.startswith('name = "') or "millebornes" in line)
    assert len(load_design(_write(tmp_path, plain)).cards) == 19


def test_a_safety_protecting_nothing_is_told_it_may_protect_setbacks_too(tmp_path):
    message = refused(tmp_path, edited(MB_TEXT, 'protects = ["flat_tire"]', "protects = []"))
    assert "cards[16] (puncture_proof).protects: a safety must protect at least one hazard, limit or setback" \
        in message


def test_a_missing_trip_says_which_player_counts_need_it(tmp_path):
    # players 2, 3, 4, 6 and a trip for 2, 4 and 6 only: the 3-player game has none.
    text = edited(MB_TEXT, "kind = \"sum\"                    # exactly the trip, never beyond\ntrip = 1000\n",
                  'kind = "sum"\n')
    text = edited(text, "[players.3]\ntrip = 700\nextension = 1000\n", "[players.3]\n")
    message = refused(tmp_path, text)
    assert "bad.toml: target.trip: missing" in message and "3 players" in message and "players.3.trip" in message
    # a misspelt trip is still pointed out as such
    message = refused(tmp_path, edited(MB_TEXT, "trip = 1000\n", "trp = 1000\n"))
    assert "target.trip: missing (there is a field 'trp': misspelt?)" in message


def test_a_bad_option_given_for_a_run_is_not_blamed_on_the_design_file(tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    path = _write(tmp_path, MB_TEXT, "mine.toml")
    for option, problem in (("coup_fourre=maybe", "options.coup_fourre: must be true or false, not 'maybe'"),
                            ("coupfourre=false", "unknown rule option 'coupfourre' given for this run, not in the "
                                                 "design file (did you mean 'coup_fourre'?); known:")):
        result = CliRunner().invoke(app, ["simulate", str(path), "--players", "2", "--games", "5",
                                          "--option", option])
        assert result.exit_code == 2
        text = " ".join(result.output.split())  # rich wraps long lines
        assert problem in text and "given for this run, not in the design file" in text, text
    # the same mistake in the file itself is the file's
    message = refused(tmp_path, edited(MB_TEXT, "coup_fourre = true\n", 'coup_fourre = "maybe"\n'))
    assert message.endswith("options.coup_fourre: must be true or false, written without quotes "
                            "(coup_fourre = false), not 'maybe'")


def test_an_option_that_changes_nothing_in_the_design_is_refused_not_ignored(tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    def run_with(deck, players, *options):
        args = ["simulate", deck, "--players", str(players), "--games", "5"]
        result = CliRunner().invoke(app, args + [x for o in options for x in ("--option", o)])
        return result.exit_code, " ".join(result.output.split())

    # The rules page: Stap op has "no safeties, so no coup fourré", and no scoring table;
    # Mille Bornes at 4 players has no extension (two teams, trip 1000), at 2 players one to 1000.
    for deck, players, option, why in (
            ("stapop", 4, "coup_fourre=false", "no safety protects from an attack"),
            ("stapop", 2, "roll_after_safety=false", "no safety cancels a hazard"),
            ("stapop", 4, "shutout=fr", "it has no scoring table"),
            ("millebornes", 4, "failed_extension_trip_points=true", "it has no extension at 4 players")):
        code, text = run_with(deck, players, option)
        assert code == 2 and f"option {option} given for this run changes nothing in" in text and why in text, text
    assert run_with("millebornes", 2, "failed_extension_trip_points=true")[0] == 0
    # one option that needs another: the coup fourré's turn once the stock is empty, with no coup fourré
    code, text = run_with("millebornes", 2, "coup_fourre=false", "coup_fourre_turn_after_stock_empty=false")
    assert code == 2 and "coup_fourre is false" in text, text
    assert run_with("millebornes", 2, "coup_fourre=false")[0] == 0
    # a stock rebuilt when it runs out is never empty (Mille Bornes with Stap op's stock rule; its
    # delayed-action bonus, for a trip after the stock ran out, goes too), and a deck without a limit
    # card (two players of a small design) cannot lay a limit on a limit
    rebuilt = _write(tmp_path, edited(edited(MB_TEXT, 'stock_exhausted = "play_out"', 'stock_exhausted = "reshuffle"'),
                                      "delayed_action = 300", "# delayed_action = 300"), "rebuilt.toml")
    no_limit = _write(tmp_path, _small_design(100, [(25, 10)], tables=""), "no_limit.toml")
    for deck, option, why in (
            (rebuilt, "safety_extra_turn_after_stock_empty=true", "its stock is rebuilt when it runs out, so it is never empty"),
            (rebuilt, "coup_fourre_turn_after_stock_empty=false", "its stock is rebuilt when it runs out, so it is never empty"),
            (no_limit, "limit_on_limit=true", "its deck has no limit card")):
        code, text = run_with(str(deck), 2, option)
        assert code == 2 and f"option {option} given for this run changes nothing in" in text and why in text, text
    # an option set to its default changes nothing anywhere, and is no mistake
    assert run_with("stapop", 4, "coup_fourre=true")[0] == 0
    # a comparison applies --option to both designs: the refusal says how to set it for one
    result = CliRunner().invoke(app, ["compare", "stapop", "millebornes", "--games", "5", "--option",
                                      "coup_fourre=false", "--out", str(tmp_path / "cmp")])
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "changes nothing in Stap op" in text and "--option-b to design B alone" in text
    # the design file's own options: a Stap op copy that switches coups fourrés off
    message = refused(tmp_path, SO_TEXT.replace("[options]\n", "[options]\ncoup_fourre = false\n", 1))
    assert message.endswith("options.coup_fourre: coup_fourre=false changes nothing in this design: "
                            "no safety protects from an attack; leave it out")


# ---- reports ----------------------------------------------------------------------
def _markdown_report(tmp_path, design, players, games=400, seed=1):
    import matplotlib

    matplotlib.use("Agg")
    from etappe.analysis.race import simulate
    from etappe.analysis.race_summary import summarize
    from etappe.reports.race_report import build_report

    df = simulate(design, players=players, games=games, seed=seed)
    build_report(summarize(df), df.attrs).write(tmp_path)
    return (tmp_path / "report.md").read_text()


def _rows(md, first_cell):
    return [line for line in md.splitlines() if line.startswith(f"| {first_cell} |")]


def test_a_setback_is_not_reported_as_costing_no_turns(tmp_path):
    # Touring's Burning Oil takes a laid 25 from its victim: it stops nobody, so "0 turns lost per
    # hazard" read as "this card does nothing"; the report says what a setback costs instead.
    md = _markdown_report(tmp_path, "touring", 3)
    attacks = md[md.index("**Attacks"):]
    attacks = attacks[:attacks.index("\n\n", attacks.index("|---"))]
    oil = _rows(attacks, "Burning Oil")
    assert len(oil) == 1
    cells = [c.strip() for c in oil[0].strip("|").split("|")]
    assert cells[3] == "" and cells[4] == "", oil  # victim_turns, turns_lost_per_hazard: not measured
    assert "A setback stops nobody" in md


def test_anomalies_name_the_cards_as_the_tables_do(tmp_path):
    # docs/designs.md: "reports show cards by name"; the anomalies listed the keys of cards never drawn
    text = edited(SO_TEXT, 'role = "hazard"\ncount = 2', 'role = "hazard"\ncount = 0')  # no Jeugdherberg
    md = _markdown_report(tmp_path, _write(tmp_path, text), 2, games=50)
    assert "| card types never drawn | 1 | 12 | Jeugdherberg (youth hostel) |" in md


SAFETIES = "".join(
    f'\n[[cards]]\nkey = "{key}"\nname = "{name}"\nrole = "safety"\ncount = 1\nprotects = ["{hazard}"]\n'
    for key, name, hazard in (("level_pass", "Spoorpas", "crossing"), ("solid_tyres", "Massieve banden", "flat_tyre"),
                              ("tent", "Tentje", "youth_hostel"), ("racing_legs", "Wielrennersbenen", "headwind")))


def test_a_comparison_gives_the_numbers_of_the_cards_only_one_design_has(tmp_path):
    # "Stap op with Mille Bornes safeties" against Stap op: the safeties are the change, and the
    # comparison only listed their keys; it now gives what they did, as the single report does.
    from typer.testing import CliRunner

    from etappe.cli.main import app

    text = edited(SO_TEXT, 'name = "stapop"\ntitle = "Stap op"', 'name = "stapop_safeties"\ntitle = "Stap op + safeties"')
    path = _write(tmp_path, text + SAFETIES, "stapop_safeties.toml")
    result = CliRunner().invoke(app, ["compare", str(path), "stapop", "--players", "2", "--games", "400", "--seed", "1",
                                      "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "cmp" / "report.md").read_text()
    table = md[md.index("**Cards only in Stap op + safeties"):].split("\n\n")[1]  # that table alone
    header = [c.strip() for c in _rows(table, "name")[0].strip("|").split("|")]
    assert {"played_share", "win_lift", "coups"} <= set(header)
    for name in ("Spoorpas", "Massieve banden", "Tentje", "Wielrennersbenen"):
        row = _rows(table, name)
        assert len(row) == 1, name
        cells = dict(zip(header, (c.strip() for c in row[0].strip("|").split("|"))))
        assert cells["role"] == "safety" and int(cells["drawn"]) > 0 and 0 < float(cells["played_share"]) <= 1
    assert "**Cards only in Stap op**" not in md  # nothing is only in Stap op
    # what differs names what each new safety protects from, not only "1 x safety"
    differs = md[md.index("**What differs"):md.index("**Everything needed")]
    assert "| card Spoorpas (level_pass) | 1 x safety; protects crossing | - |" in differs
    assert "| card Wielrennersbenen (racing_legs) | 1 x safety; protects headwind | - |" in differs


# ---- play -------------------------------------------------------------------------
OVERSHOOT = '[options]\novershoot = "disqualify"\n'


def _small_design(trip, stages, tables=OVERSHOOT, more_cards=""):
    """Two players, play-out, a sum trip, four go cards and distance cards of (value, count): by default
    under overshoot = "disqualify", where random players lay beyond the trip."""
    cards = "".join(f'\n[[cards]]\nkey = "km{value}"\nrole = "distance"\nvalue = {value}\ncount = {count}\n'
                    for value, count in stages)
    return (f'[design]\nname = "small"\nplayers = [2]\nhand_size = 3\nstock_exhausted = "play_out"\n\n'
            f'[target]\nkind = "sum"\ntrip = {trip}\n\n{tables}\n'
            f'[[cards]]\nkey = "go"\nrole = "go"\ncount = 4\n{cards}{more_cards}')


def test_a_side_disqualified_by_overshooting_cannot_win_on_the_longest_distance(tmp_path):
    # docs/designs.md: a play-out hand that ends without a completed trip goes to the longest distance,
    # and a side past the trip under overshoot = "disqualify" "kan niet meer winnen" (can no longer win).
    from etappe.analysis.race import replay, simulate

    df = simulate(_write(tmp_path, _small_design(10, [(3, 12), (1, 2)])), players=2, games=200,
                  policies=["random"], seed=1, threads=1)
    km = df[["s0_distance", "s1_distance"]].to_numpy()
    out = df[["s0_disqualified", "s1_disqualified"]].to_numpy() == 1
    ahead = km.argmax(axis=1)
    # no trip completed, and the side that went furthest (strictly) is disqualified
    lost_lead = (df["trip_side"] < 0).to_numpy() & (km[:, 0] != km[:, 1]) & out[range(len(df)), ahead]
    assert lost_lead.sum() >= 5  # the case arises
    other = 1 - ahead[lost_lead]
    expected = np.where(out[lost_lead, other], -1, other)
    assert (df["winner_side"].to_numpy()[lost_lead] == expected).all()
    game = int(df["game"][lost_lead].iloc[0])
    assert replay(df.attrs, game=game).endswith(
        f"side {expected[0]} wins: nobody completed the trip and it went furthest of the sides not disqualified"
        if expected[0] >= 0 else "no winner: nobody completed the trip and every side is disqualified")


def test_overshooting_never_takes_a_distance_beyond_what_the_engine_holds(tmp_path):
    # docs/designs.md: no distance may overflow the engine's integers (a hand's distances are 16-bit). A
    # side past a 20 000 km trip under overshoot = "disqualify" could lay on to 39 999 km; it stops at
    # the last card that keeps it within 32 767.
    from etappe.analysis.race import simulate
    from etappe.kernels.race_position import legal_moves_of

    path = _write(tmp_path, _small_design(20_000, [(9999, 12), (10_000, 12)]))
    df = simulate(path, players=2, games=300, policies=["random"], seed=1, threads=1)
    for s in range(2):
        km = df[f"s{s}_distance"]
        assert (km == 9999 * df[f"s{s}_km9999_played"] + 10_000 * df[f"s{s}_km10000_played"]).all()
        assert km.between(0, 32_767).all()
    assert ((df["s0_distance"] > 20_000) | (df["s1_distance"] > 20_000)).sum() >= 5  # sides did overshoot
    # a side at 29 999 km holding another 9 999 or 10 000 may only discard it
    at_29999 = {"battle": "go", "limit": "none", "distance": {"km9999": 1, "km10000": 2}, "safeties": []}
    position = {"players": 2, "on_turn": 0, "stock": 10, "hands": {"0": ["km9999", "km10000", "go", "go"]},
                "sides": [at_29999, {"battle": "go", "limit": "none", "distance": {}, "safeties": []}]}
    assert set(legal_moves_of(load_design(path), position)) == {"discard km9999", "discard km10000", "discard go"}
    # and a position beyond it could never arise: refused with the field, not wrapped round
    at_29999["distance"] = {"km9999": 1, "km10000": 3}
    with pytest.raises(DesignError, match=r"sides\[0\]\.distance: 39999 km, but no side's distance goes beyond 32767"):
        legal_moves_of(load_design(path), position)


def test_a_card_a_setback_took_off_again_was_laid_for_the_scoring_table(tmp_path):
    # docs/designs.md, [scoring]: safe_trip scores a trip completed "without laying that card" (the rules
    # page: "no 200 played"), the Parker shut-out one where "no opponent has laid any distance". A
    # setback taking the card off again does not undo the laying.
    from etappe.analysis.race import simulate

    scoring = '[scoring]\ngame_target = 1\nsafe_trip = 1000\nsafe_trip_card = "km2"\nshutout = 10000\n'
    oil = '\n[[cards]]\nkey = "oil"\nrole = "setback"\nremoves = "km2"\ncount = 6\n'
    df = simulate(_write(tmp_path, _small_design(4, [(1, 10), (2, 6)], scoring, oil)), players=2, games=2000,
                  policies=["random"], seed=1, threads=1)
    cases = {"safe": 0, "shut": 0}
    for s in range(2):
        o = 1 - s
        won = df["trip_side"] == s
        laid_km2 = df[f"s{s}_km2_played"] > 0
        opponent_laid = df[f"s{o}_km1_played"] + df[f"s{o}_km2_played"] > 0
        expected = 4 + 1000 * ~laid_km2 + 10_000 * ~opponent_laid  # the trip's 4 km and the bonuses
        assert (df.loc[won, f"s{s}_score"] == expected[won]).all()
        cases["safe"] += int((won & laid_km2 & (df[f"s{s}_km2_played"] == df[f"s{s}_oil_received"])).sum())
        cases["shut"] += int((won & opponent_laid & (df[f"s{o}_distance"] == 0)).sum())
    assert min(cases.values()) >= 5, cases  # both arise: every such card was taken off again


def test_all_safeties_are_the_safeties_dealt_at_that_player_count(tmp_path):
    # docs/designs.md, [scoring]: all_safeties is for all the safeties in the deck. A `remove` that takes
    # Mille Bornes' Puncture-Proof out of the 2-player deck leaves three: laying those is laying them all
    # (it could never score before: the bonus counted the design's four safety types).
    from test_race_scoring import hand_end, tab

    text = edited(MB_TEXT, "remove = { stop = 1,", "remove = { puncture_proof = 1, stop = 1,")
    design = load_design(_write(tmp_path, text))
    three = tab({}, ["extra_tank", "driving_ace", "right_of_way"])
    assert hand_end(2, [three, tab({"km25": 1})], stock=10, design=design)[0] == 3 * 100 + 300
    # at 4 players all four are dealt, and three are not all (the rules page's "all four safeties")
    assert hand_end(4, [three, tab({"km25": 1})], stock=10, design=design)[0] == 3 * 100


def test_an_option_about_safeties_changes_nothing_where_none_are_dealt(tmp_path):
    from etappe.kernels.race_design import UnusedOptionError

    every_safety = "extra_tank = 1, puncture_proof = 1, driving_ace = 1, right_of_way = 1"
    design = load_design(_write(tmp_path, edited(MB_TEXT, "remove = { stop = 1,", f"remove = {{ {every_safety}, stop = 1,")))
    with pytest.raises(UnusedOptionError, match="no safety protects from an attack"):
        design.tables(2, {"coup_fourre": False})
    design.tables(4, {"coup_fourre": False})  # 4 players are dealt all four


def test_a_replay_shows_every_turn_of_a_long_hand(tmp_path):
    # The play-by-play of a hand held its first 20 000 events only, and so did the invariant audit of
    # tests that read it: a design of 400 cards plays hands of up to 40 x 400 turns (docs/designs.md,
    # turn_cap), and random players who overshoot (option overshoot = "disqualify") can no longer win.
    from etappe.analysis.race import replay

    text = re.sub(r"^count = (\d+)", lambda m: f"count = {4 * int(m.group(1))}", SO_TEXT, flags=re.M)
    out = replay(_write(tmp_path, text), game=0, players=2, policies=["random"], seed=1,
                 options={"overshoot": "disqualify"})
    turns = int(re.search(r"hand over after (\d+) turns", out).group(1))
    assert turns > 10_000  # a long hand: two events or more a turn
    # a turn is one card out of a hand (docs/records.md): a play or a discard, each on a line of its own
    assert len(re.findall(r"^t *\d+ seat \d+ (?:plays|discards) ", out, flags=re.M)) == turns
