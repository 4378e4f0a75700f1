"""Designs a user writes: what a designer meets first (docs/designs.md).

Each test comes from writing a design of one's own from the docs alone and
running it through validate, simulate, report and compare: a mistake must be
refused with the file, the field and the problem; a report must say what a
designer's own cards did.
"""

from etappe.kernels.race_design import load_design

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
                            ("coupfourre=false", "unknown rule option 'coupfourre'")):
        result = CliRunner().invoke(app, ["simulate", str(path), "--players", "2", "--games", "5",
                                          "--option", option])
        assert result.exit_code == 2
        text = " ".join(result.output.split())  # rich wraps long lines
        assert problem in text and "given for this run, not in the design file" in text, text
    # the same mistake in the file itself is the file's
    message = refused(tmp_path, edited(MB_TEXT, "coup_fourre = true\n", 'coup_fourre = "maybe"\n'))
    assert message.endswith("options.coup_fourre: must be true or false, not 'maybe'")


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
    table = md[md.index("**Cards only in Stap op + safeties"):]
    for name in ("Spoorpas", "Massieve banden", "Tentje", "Wielrennersbenen"):
        row = _rows(table, name)
        assert len(row) == 1, name
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        assert cells[1] == "safety" and int(cells[2]) > 0 and 0 < float(cells[4]) <= 1  # role, drawn, played share
    header = [c.strip() for c in _rows(table, "name")[0].strip("|").split("|")]
    assert {"played_share", "win_lift", "coups"} <= set(header)
    assert "**Cards only in Stap op**" not in md  # nothing is only in Stap op
