"""Race reports render (Agg) with the sections and numbers they must hold; the CLI helpers."""
import math
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from etappe.analysis.race_summary import summarize
from etappe.analysis.runio import write_parquet
from etappe.analysis.stats import paired_proportion_difference
from etappe.cli.report_cmds import compare_runs, report_command, summarize_run
from etappe.reports import plots
from etappe.reports.race_report import build_comparison_report, build_report

from by_hand import wilson
from test_compare import b_hands
from test_race_summary import make_records, mb_hands, mb_meta, toy_hands, toy_meta

SECTIONS = ["Run", "At a glance", "Outcomes", "Skill matrix", "Length", "Tension", "Progress", "Card balance", "Anomalies", "Caveat"]


@pytest.fixture
def toy():
    meta = toy_meta()
    meta["games"] = 4
    return make_records(toy_hands(), meta)


def _self_contained(html: str) -> None:
    assert "http://" not in html and "https://" not in html
    assert "<script" not in html
    imgs = re.findall(r"<img [^>]*src='([^']*)'", html)
    assert imgs and all(src.startswith("data:image/png;base64,") for src in imgs)


def test_report_sections_and_numbers(toy, tmp_path):
    begun = []  # what the progress bar is told
    rep = build_report(summarize(toy), toy.attrs, on_section=begun.append)
    assert [s.title for s in rep.sections] == SECTIONS == begun
    html_path = rep.write(tmp_path)
    html = html_path.read_text()
    md = (tmp_path / "report.md").read_text()
    _self_contained(html)
    for text in (md, html):
        assert "abc123" in text and "toy.toml" in text  # design file and hash
        assert "--seed 7" in text and "greedy(a=1)" in text
        assert "0.4385" in text  # Wilson low of 3/3: 3 / (3 + 1.96^2), first player
        assert "0.08326" in text  # p of chi2 = 3 on 1 df
        assert "0.04559" in text  # Wilson low of 1/4: seat 0, turn-cap rate
        assert "games 2" in text  # the capped game, for replay
    assert "| turns per game | 4 | 12.5 |" in md  # n, mean
    assert "A turn is one player's turn, so a round of the table is as many turns as there are players. At 2 players, 2 turns make a round." in md
    # progress at the kept round (of the toy's 1, 2, 3) nearest to where 25, 50, 75 and 95 % of the hands had
    # ended, rounds 4, 5, 6 and 10: round 3, where position 1 (the first seat of each game) had laid 100, 100,
    # 50 and 100 km, mean 87.5, sd 25
    progress = md.split("95 % of hands had ended**")[1].split("\n\n")[1].splitlines()[2:]
    assert [row.split(" | ")[1] for row in progress] == ["3", "3"]
    assert progress[0].startswith("| position 1 | 3 | 4 | 87.5 |") and progress[0].endswith("| 25 |")
    # at a glance: the percentage's interval in the same unit, not "100.0 % [43.9, 100.0] %"
    assert "100.0 % [43.9, 100.0] of the 3 games with a winner" in md
    # 3 wins over 2 turn-order positions expect 1.5 each, below Cochran's 5: the p is said to be approximate
    note = "expected counts below 5: the chi-square p is only approximate"
    assert f"chi2 = 3.00, df = 1, p = 0.0833 ({note})." in md
    assert "Expected counts below 5: the chi-square p is only approximate (column expected" in md
    assert "| uniform wins by turn-order position | 3 | 1 | 0.08326 | 3 | 1.5 |" in md  # chi2, df, p, n, expected
    assert "In each hand" not in md  # games of one hand: the hand's first player is the game's
    for fig in rep.figures():
        assert (tmp_path / f"{fig.name}.png").read_bytes()[:4] == b"\x89PNG"
        assert f"({fig.name}.png)" in md


def test_one_hand_is_counted_in_the_singular():
    meta = toy_meta()
    meta["games"] = 1
    one = make_records(toy_hands()[:1], meta)  # 10 turns of 2 players: 5 rounds, past the toy's kept 1, 2, 3
    md = build_report(summarize(one), one.attrs).to_markdown()
    assert "(n = 1 hand; 1 of them (100.0 %) was still being played after round 3 and is not followed further)" in md
    assert "dead if the upper end of the interval of played / drawn is below 10 % (for go" in md


def test_report_p_value_that_underflows():
    """2,000 games all won by the first player: chi2 = 2000 on 1 df, p = erfc(sqrt(1000)) ~ 1e-436, below
    the smallest double, so it computes as 0; a p is never exactly 0, and the report says p < 1e-300."""
    first_wins = [dict(h, game=g, first_seat=g % 2, winner_side=g % 2, trip_side=g % 2)
                  for g, h in enumerate([toy_hands()[0], toy_hands()[3]] * 1000)]
    meta = toy_meta()
    meta["games"] = len(first_wins)
    frame = make_records(first_wins, meta)
    md = build_report(summarize(frame), frame.attrs).to_markdown()
    assert "chi2 = 2000.00, df = 1, p < 1e-300." in md


def test_multi_hand_report(tmp_path):
    frame = make_records(mb_hands(), mb_meta())
    rep = build_report(summarize(frame), frame.attrs)
    md = rep.to_markdown()
    assert "hands per game" in md and "turns per hand" in md
    assert "coups fourrés" in md
    names = {f.name for f in rep.figures()}
    assert {"length_hands_per_game", "length_hand_turns", "length_game_turns"} <= names
    assert "winner's largest deficit in score after a hand" in md
    # mb_hands' one completed trip (game 0's last hand, side 1, first seat 0: position 2)
    hands = [dict(h, trip_side=1) if (h["game"], h.get("hand")) == (0, 2) else h for h in mb_hands()]
    frame = make_records(hands, mb_meta())
    md = build_report(summarize(frame), frame.attrs).to_markdown()
    assert "Hands: the side that completed the trip, by its turn-order position in that hand" in md
    assert "| 2 | 0.5 | 1 | 1 | 1 |" in md  # position, fair share, trips, n, share
    # at a glance: 0 of 1 trips by the hand's first side, Wilson high 1.96^2 / (1 + 1.96^2) = .7935;
    # chi-square of counts [0, 1] against [.5, .5]: 1, p = P(chi2_1 > 1) = erfc(1 / sqrt 2) = .3173
    assert ("In each hand, the side that plays first in it completes 0.0 % [0.0, 79.3] of the 1 completed "
            "trips (fair share 50.0 %); chi-square test of uniform trips over turn order in the hand: chi2 = 1.00, "
            "df = 1, p = 0.317 (expected counts below 5: the chi-square p is only approximate).") in md
    assert "The side that plays first in the game's first hand wins" in md
    from etappe.cli.report_cmds import compare_summaries

    comparison = build_comparison_report(*compare_summaries(frame, frame.attrs, frame, frame.attrs)).to_markdown()
    assert "Hands: the side that completed the trip" in comparison
    assert "Lead changes and the winner's deficit are of distance within the hands" in comparison


def test_figures_say_whether_they_count_games_or_hands(drawn_panels):
    frame = make_records(mb_hands(), mb_meta())
    build_report(summarize(frame), frame.attrs)
    ylabels = {fig.axes[0].get_xlabel(): fig.axes[0].get_ylabel() for fig in drawn_panels}
    assert ylabels["turns per hand"] == "hands"
    assert ylabels["turns per game"] == ylabels["hands per game"] == "games"
    # a game of several hands is decided on its scores: its winner's deficit is drawn in score, not in
    # the distance of one hand
    assert ylabels["winner's largest deficit in score after a hand (points)"] == "games"
    assert "winner's largest deficit (km)" not in ylabels



def test_the_deficit_figure_draws_never_behind_as_a_bar_of_its_own(drawn_panels):
    # every report's deficit figure (race, Bremen, Tape l'étape: sections.tension_figures): 40 games whose
    # winner was never behind, one at each deficit of 1 to 120 (bins of two values)
    import pandas as pd

    from etappe.reports.sections import tension_figures

    counts = np.r_[40, np.ones(120)]
    deficit = pd.DataFrame({"value": np.arange(121), "count": counts, "ecdf": np.cumsum(counts) / counts.sum()})
    lead = pd.DataFrame({"value": [0, 1], "count": [100, 60], "ecdf": [0.625, 1.0]})
    shown = []

    class Section:
        def figure(self, fig, caption, name):
            shown.append((caption, name))

    tension_figures(Section(), lead, deficit, "lead changes", "winner's largest deficit (km)", "lead", "deficit")
    assert shown[1] == ("How far behind the eventual winner was (0, never behind, a bar of its own)", "deficit")
    bars = drawn_panels[-1].axes[0].patches
    assert (bars[0].get_width(), bars[0].get_height()) == (1, 40) and (bars[1].get_x(), bars[1].get_height()) == (0.5, 2)

def test_report_command_reads_in_chunks(tmp_path):
    frame = make_records(mb_hands(), mb_meta())
    run = tmp_path / "run.parquet"
    write_parquet(frame, run, frame.attrs)
    whole = build_report(summarize(frame), frame.attrs, run_file=str(run)).to_markdown()
    summary, meta = summarize_run(run, batch_rows=1)  # every chunk cuts the 3-hand game
    assert summary.games == 2 and meta["design"] == "toy"
    assert build_report(summary, meta, run_file=str(run)).to_markdown() == whole
    out = report_command(run, tmp_path / "rep")
    assert out == tmp_path / "rep" / "report.html" and out.exists()
    assert (tmp_path / "rep" / "report.md").read_text() == whole


def test_comparison_report(toy, tmp_path):
    # Two run files, read two games at a time; B is a redesign of the same name.
    b = make_records(b_hands(), dict(toy.attrs, design_hash="redesigned"))
    write_parquet(toy, tmp_path / "a.parquet", toy.attrs)
    write_parquet(b, tmp_path / "b.parquet", b.attrs)
    out = compare_runs(tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "cmp", batch_rows=2)
    html = out.read_text()
    md = (tmp_path / "cmp" / "report.md").read_text()
    _self_contained(html)
    titles = re.findall(r"^## (.*)$", md, flags=re.M)
    assert titles[0] == "Headline" and titles[1] == "Paired differences"
    head = md.split("## Paired differences")[0]
    for q in ("the stronger first-player bias", "longer games", "more decisive hazards", "deader cards"):
        assert f"Which has {q}?" in head
    assert "A: toy" in md and "B: toy" in md  # same design name: labelled A and B
    # every paired metric with its interval: turns per game d = [4, 2, 10, -8], mean 2, sd sqrt(56)
    row = next(line for line in md.splitlines() if line.startswith("| turns per game | turns |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:6] == ["4", "12.5", "10.5", "2"] and cells[6] == "7.483"
    for label in ("turn-cap (stall) rate", "first-player win rate", "first player's distance from the fair share",
                  "lead changes per game", "share of drawn cards wasted", "win rate of seat 0", "Holm"):
        assert label in md
    assert "unpaired, clustered by game" in md
    for name, tag in (("A: toy", "a"), ("B: toy", "b")):  # each design's card fates, drawn
        assert f"![What happens to each card drawn: {name}](card_balance_{tag}.png)" in md
        assert (tmp_path / "cmp" / f"card_balance_{tag}.png").exists()


def test_comparison_report_counts_holm_over_the_tested_rows_and_clips_rates(toy):
    from etappe.analysis.compare import compare_tables
    from etappe.analysis.race_summary import game_table

    b = make_records(b_hands(), toy.attrs)
    md = build_comparison_report(summarize(toy), toy.attrs, summarize(b), b.attrs,
                                 compare_tables(game_table(toy, toy.attrs), game_table(b, b.attrs))).to_markdown()
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in md.split("**Every metric with its interval**")[1].split("\n\n")[1].splitlines()[2:]}
    # 13 rows; a p-value for 7: turns, cap, first player won and its gap, winner's deficit, the two
    # sides' win rates. The others have nothing to test: no winner, lead changes, final gap, turns
    # lost to hazards and dead share are equal in every game, hazard_decided has one pair
    assert len(rows) == 13 and sum(r[9] != "" for r in rows.values()) == 7
    assert "Holm's step-down correction of the p-values across the 7 metrics below that have one" in md
    # first player won, d = [1, 0, 1], 0 or 1 a game: Tango's interval of 2 discordant games of 3, as said
    exact = paired_proportion_difference(3, 2, 0)
    assert rows["first-player win rate"][7:9] == [f"{exact['ci_low']:.4g}", f"{exact['ci_high']:.4g}"]
    assert "for a rate or a share clipped to [-1, 1]" in md and "Tango's score interval" in md


def test_comparison_by_role_says_its_shares_are_clustered_by_game(toy):
    from etappe.analysis.compare import compare_tables
    from etappe.analysis.race_summary import game_table
    from test_compare import role_hands

    b = role_hands()
    md = build_comparison_report(summarize(toy), toy.attrs, summarize(b), b.attrs,
                                 compare_tables(game_table(toy, toy.attrs), game_table(b, b.attrs))).to_markdown()
    assert "pooled by card role" in md and "counts the cards of one game together (clustered by game)" in md
    assert "Newcombe" not in md and "unpaired, clustered by game, pooled by role" in md


def test_a_reconstructed_design_is_marked_once():
    from etappe.reports.race_report import comparison_names, design_name

    # the built-in Touring's title already says it is a reconstruction
    touring = {"design_title": "Touring (reconstructed)", "reconstructed": True}
    assert design_name(touring) == "Touring (reconstructed)"
    assert design_name({"design_title": "My deck", "reconstructed": True}) == "My deck (reconstructed)"
    assert comparison_names({"design_title": "Stap op"}, touring) == ("Stap op", "Touring (reconstructed)")
    # and so does the caveat's sentence, which said "Touring (reconstructed) is a reconstructed deck"
    from etappe.reports.document import Report
    from etappe.reports.race_report import caveat_section

    report = Report("caveat")
    caveat_section(report.section("Caveat"), [touring])
    assert report.to_markdown().lower().count("reconstruct") == 1


def test_a_paragraph_is_plain_text_but_for_bold_and_code():
    from etappe.reports.document import Report

    report = Report("t")
    report.section("s").text("x **y** < z **w** `etappe report a.parquet`")
    assert "<p>x <b>y</b> &lt; z <b>w</b> <code>etappe report a.parquet</code></p>" in report.to_html()
    assert "x **y** < z **w** `etappe report a.parquet`" in report.to_markdown()


def test_a_report_renders_its_sections_tables_and_figures_in_both_twins(tmp_path):
    # one HTML page with everything in it (figures as base64 PNG, nothing to fetch) and a Markdown twin
    # with the figures beside it
    import pandas as pd
    from matplotlib.figure import Figure

    from etappe.reports.document import Report

    report = Report("Title <1>")
    section = report.section("Numbers")
    section.table(pd.DataFrame({"name": ["a|b", "c"], "share": [0.123456, float("nan")]}), "Shares")
    # a table whose columns carry a name of their own (a matrix's "opponent") has the same header in both twins
    matrix = pd.DataFrame({"row \\ column": ["x"], "y": ["1"]}).rename_axis(columns="column")
    section.table(matrix, "Matrix")
    figure = Figure()
    figure.add_subplot().plot([0, 1], [0, 1])
    section.figure(figure, "A line", name="line")
    page = report.to_html()
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</body></html>")
    assert "<title>Title &lt;1&gt;</title>" in page and "<h1>Title &lt;1&gt;</h1>" in page and "<h2>Numbers</h2>" in page
    assert "<p><b>Shares</b></p>" in page and '<table class="dataframe t">' in page
    assert "<td>0.1235</td>" in page and "<td></td>" in page  # 4 significant digits; no value: an empty cell
    assert re.search(r"<tr[^>]*>\s*<th>name</th>\s*<th>share</th>\s*</tr>", page)  # no index column
    assert re.search(r"<tr[^>]*>\s*<th>row \\ column</th>\s*<th>y</th>\s*</tr>", page)
    assert "<figure><img alt='A line' src='data:image/png;base64," in page and "<figcaption>A line</figcaption>" in page
    assert "http" not in page
    md = report.to_markdown()
    assert md.startswith("# Title <1>\n\n## Numbers\n\n**Shares**\n\n| name | share |\n|---|---|\n| a\\|b | 0.1235 |\n| c |  |")
    assert "![A line](line.png)\n\n*A line*" in md
    out = tmp_path / "reports" / "first"  # folders made as needed
    assert report.write(out) == out / "report.html"
    assert (out / "report.html").read_text() == page and (out / "report.md").read_text() == md
    assert (out / "line.png").read_bytes().startswith(b"\x89PNG")


def test_the_markdown_twin_shows_a_designers_text_literally_as_the_html_does():
    # a design titled with Markdown's and HTML's own characters: the HTML page escapes them, and the
    # Markdown twin rendered bold and an <i> that italicised the rest of the page; its own **bold** and
    # `code` stay, and card keys such as km_25 are written as they are
    import pandas as pd

    from etappe.reports.document import Report

    report = Report("Balance report: Mille <b>Bornes</b> & *co*")
    section = report.section("Cards of _mine_")
    section.text("**Mille <b>Bornes</b>** is fairer than *co*: `etappe report a_b.parquet` (p < 0.05, 2 * 3)")
    section.table(pd.DataFrame({"card": ["25|km **big** <i>", "km_25"]}), "Cards of *co*")
    md = report.to_markdown()
    assert md.startswith("# Balance report: Mille \\<b>Bornes\\</b> & \\*co\\*\n\n## Cards of \\_mine\\_\n\n")
    assert ("**Mille \\<b>Bornes\\</b>** is fairer than \\*co\\*: `etappe report a_b.parquet` (p < 0.05, 2 * 3)"
            in md)
    assert "**Cards of \\*co\\***\n\n| card |\n|---|\n| 25\\|km \\*\\*big\\*\\* \\<i> |\n| km_25 |" in md


def test_a_card_name_the_figure_font_lacks_is_said_in_the_caption_not_warned_a_line():
    # a designer's card named in a script the plot font (DejaVu Sans) has no glyphs for: matplotlib warned
    # once a character and figure, with its own source line; the caption says it once instead
    import warnings

    from matplotlib.figure import Figure

    from etappe.reports.document import Report

    figure = Figure()
    figure.add_subplot().set_title("Lekke band \N{BICYCLE} \u5e73 \N{BICYCLE}")
    report = Report("R")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report.section("S").figure(figure, "Cards", name="cards")
    assert "*Cards (its font has no \N{BICYCLE} \u5e73, drawn as boxes: the tables show them)*" in report.to_markdown()
    plain = Figure()
    plain.add_subplot().set_title("Lekke band")
    report.section("T").figure(plain, "Plain", name="plain")
    assert "*Plain*" in report.to_markdown()


def test_a_report_written_over_another_removes_only_the_figures_it_no_longer_has(tmp_path):
    from matplotlib.figure import Figure

    from etappe.reports.document import Report

    def report_of(*names):
        report = Report("R")
        section = report.section("S")
        for name in names:
            figure = Figure()
            figure.add_subplot().plot([0, 1], [0, 1])
            section.figure(figure, f"Figure {name}", name=name)
        return report

    report_of("kept", "dropped").write(tmp_path)
    (tmp_path / "mine.png").write_bytes(b"a file of the user's")
    report_of("kept").write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.png", "mine.png", "report.html", "report.md"]


def test_comparison_names_show_only_the_options_both_designs_take_and_set_differently():
    from etappe.reports.race_report import comparison_names

    plain = {"design_title": "Plain", "options": {"overshoot": "forbid", "turn_cap": 0}}
    mb = {"design_title": "Mille Bornes", "options": {"overshoot": "forbid", "turn_cap": 0, "coup_fourre": True}}
    assert comparison_names(plain, mb) == ("Plain", "Mille Bornes")
    strict = {"design_title": "Mille Bornes", "options": {**mb["options"], "overshoot": "disqualify"}}
    assert comparison_names(plain, strict) == ("Plain (overshoot=forbid)", "Mille Bornes (overshoot=disqualify)")


def test_comparison_names_tell_two_designs_of_one_title_apart():
    from etappe.reports.race_report import comparison_names

    stapop = {"design_title": "Stap op", "design": "stapop", "options": {}}
    redesign = {"design_title": "Stap op", "design": "stapop_few_hostels", "options": {}}
    # a copy of `decks show --toml` with its cards changed and its title kept: its key names it
    assert comparison_names(stapop, redesign) == ("Stap op (stapop)", "Stap op (stapop_few_hostels)")
    # the same key twice (a file edited in place, compared with its first version): A and B
    assert comparison_names(stapop, dict(stapop, design_hash="edited")) == ("A: Stap op", "B: Stap op")


def test_comparison_warns_without_common_seeds(toy, tmp_path):
    from etappe.cli.report_cmds import compare_summaries

    meta_b = dict(toy.attrs, seed=8)
    sa, ma, sb, mb, comp = compare_summaries(toy, toy.attrs, make_records(b_hands(), meta_b), meta_b)
    md = build_comparison_report(sa, ma, sb, mb, comp).to_markdown()
    assert "different root seeds" in md and "paired game by game, Holm-corrected" in md
    assert "paired on the same seeds" not in md
    assert "What differs between the designs" not in md  # the same design: nothing to list
    meta_b = dict(meta_b, options={"limit_on_limit": True})
    sa, ma, sb, mb, comp = compare_summaries(toy, toy.attrs, make_records(b_hands(), meta_b), meta_b)
    md = build_comparison_report(sa, ma, sb, mb, comp).to_markdown()
    assert "What differs between the designs" in md and "| option limit_on_limit | - | true |" in md


def test_plots_take_an_axes(toy):
    from matplotlib.figure import Figure

    from etappe.analysis import race_summary as rs

    s = summarize(toy)
    ax = Figure().add_subplot()
    assert plots.seat_bias(rs.outcomes_by_position(s), ax=ax) is ax
    assert plots.progress_curves(rs.progress_table(s), ax=ax) is ax
    assert plots.card_balance_chart(rs.card_balance(s), ax=ax) is ax
    assert plots.ecdf(rs.hist_frame(s, "game_turns"), ax=ax) is ax
    assert plots.histogram(rs.hist_frame(s, "game_turns"), ax=ax) is ax
    seats = rs.outcomes_by_seat(s)
    assert plots.win_bars(seats, "seat", ax=ax) is ax
    # without an Axes a fresh Figure is made, and pyplot keeps no figure
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    new = plots.seat_bias(rs.outcomes_by_position(s))
    assert new.figure is not ax.figure and plt.get_fignums() == before


def test_progress_band_is_cut_at_zero():
    # a distance is never negative: a mean of 2 with sd 5 draws its spread band from 0 to 7, and a mean of
    # 0.2 whose t interval reaches -0.5 draws it from 0
    import pandas as pd

    curve = pd.DataFrame({"group": ["a", "a"], "round": [1, 2], "mean": [0.2, 4.0], "ci_low": [-0.5, 3.0],
                          "ci_high": [0.9, 5.0], "band_low": [-3.0, -1.0], "band_high": [7.0, 9.0]})
    ax = plots.progress_curves(curve)
    spread, interval = (ax.collections[k].get_paths()[0].vertices for k in (0, 1))
    assert spread[:, 1].min() == 0.0 and spread[:, 1].max() == 9.0
    assert interval[:, 1].min() == 0.0 and interval[:, 1].max() == 5.0


def test_progress_bands_are_cut_at_the_longest_trip_a_side_can_lay():
    # the rules page: Mille Bornes with 2 players races 700 km, extended to 1000; with 4, 1000 and no
    # extension; under option overshoot = "disqualify" a side may lay beyond its trip, so nothing cuts
    import numpy as np

    from etappe.analysis.race_summary import layout_from

    def ceiling(trip, extension, overshoot="forbid"):
        return layout_from({"target": trip, "extension": extension, "options": {"overshoot": overshoot}}).distance_ceiling

    assert ceiling(700, 1000) == 1000 and ceiling(1000, 0) == 1000
    assert ceiling(700, 1000, "disqualify") == np.inf and ceiling(None, 0) == np.inf


def test_cli_report(tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    frame = make_records(mb_hands(), mb_meta())
    run = tmp_path / "run.parquet"
    write_parquet(frame, run, frame.attrs)
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert (tmp_path / "rep" / "report.html").exists()
    assert md == build_report(summarize(frame), frame.attrs, run_file=str(run)).to_markdown()


# ---------------------------------------------------------------- real runs
# One set of small runs of the engine per test session (the first kernel
# compile takes tens of seconds).
GAMES = 300


@pytest.fixture(scope="session")
def real_runs():
    from etappe.analysis import race  # a broken import fails these tests, it does not skip them

    return {
        "stapop": race.simulate("stapop", players=2, games=GAMES, policies=["greedy"], seed=11),
        "millebornes": race.simulate("millebornes", players=2, games=GAMES, policies=["greedy"], seed=11),
        "stapop_disq": race.simulate("stapop", players=2, games=GAMES, policies=["greedy"], seed=11,
                                     options={"overshoot": "disqualify"}),
        "rotate": race.simulate("stapop", players=2, games=GAMES, policies=["greedy", "random"], seed=11,
                                seating="rotate"),
    }


def test_real_run_summary_is_consistent(real_runs):
    from etappe.analysis import race_summary as rs

    for key, frame in real_runs.items():
        s = summarize(frame)
        assert s.games == GAMES, key
        # the summary against the records themselves: one row per game (its last hand)
        games = frame.sort_values(["game", "hand"]).groupby("game").last()
        sides = frame.attrs["sides"]
        assert s.c["side_wins"].tolist() == [int((games["winner_side"] == t).sum()) for t in range(sides)], key
        assert int(s.c["no_winner"]) == int((games["winner_side"] == -1).sum()), key
        seats = rs.outcomes_by_seat(s)
        # a seat wins when its side wins; its rate is among the games with a winner
        wins = [int((games["winner_side"] == p % sides).sum()) for p in range(frame.attrs["players"])]
        n = int((games["winner_side"] >= 0).sum())
        assert seats["wins"].tolist() == wins and (seats["n"] == n).all(), key
        # Wilson score interval, written out here: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
        z = 1.959964
        for w, lo, hi in zip(wins, seats["ci_low"], seats["ci_high"]):
            p = w / n
            half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
            assert (lo, hi) == pytest.approx(((p + z * z / (2 * n) - half) / (1 + z * z / n),
                                              (p + z * z / (2 * n) + half) / (1 + z * z / n)), abs=1e-5), key
        # every card drawn was played, discarded or still held (records invariant)
        assert int(s.c["conservation_breaks"]) == 0, key
        assert list(rs.card_balance(s)["card"]) == [c["key"] for c in frame.attrs["cards"]]
        # turns per game: median and 95th percentile are the inverse ECDF of the games' turns
        turns = rs.length_table(s).iloc[0]
        assert turns["n"] == GAMES and turns["mean"] == pytest.approx(games["game_turns"].mean()), key
        assert (turns["median"], turns["p95"]) == tuple(
            np.quantile(games["game_turns"], [0.5, 0.95], method="inverted_cdf")), key
    mb = summarize(real_runs["millebornes"])
    assert mb.layout.multi_hand and int(mb.c["hands"]) > GAMES


def test_real_first_player_of_the_hand(real_runs):
    from etappe.analysis.race_summary import game_table

    # a game of one hand is won by the side that completes the trip: the hand's first player is the
    # game's, and the two per-game metrics agree game by game
    frame = real_runs["stapop"]
    t = game_table(frame, frame.attrs)
    assert t["first_hand_trip_share"].notna().sum() == GAMES
    assert (t["first_hand_trip_share"] == t["first_position_won"]).all()
    # several hands: per game, the trips of the side playing first in the hand, counted from the records
    frame = real_runs["millebornes"]
    t = game_table(frame, frame.attrs).set_index("game")["first_hand_trip_share"]
    done = frame[frame["trip_side"] >= 0]
    first_side = done["first_seat"] % frame.attrs["sides"]  # two players: a seat is its side
    share = (done["trip_side"] == first_side).groupby(done["game"]).mean()
    assert t.dropna().index.tolist() == share.index.tolist() and np.allclose(t.dropna(), share)


def test_real_rotated_policies(real_runs):
    from etappe.analysis import race_summary as rs

    s = summarize(real_runs["rotate"])
    pol = rs.outcomes_by_policy(s).set_index("policy")
    # two seats, policies swap seats every game: each policy held GAMES seat-games
    assert list(pol["n"]) == [GAMES, GAMES]
    frame = real_runs["rotate"]
    games = frame.sort_values(["game", "hand"]).groupby("game").last()
    # rotated seating with two seats: the policies swap seats from one game to the next
    assert (games["seat0_policy"] == games.index % 2).all() and (games["seat1_policy"] == 1 - games.index % 2).all()
    # a policy wins a game when the seat it held that game is the winner's (two players: seat = side)
    decided = games[games["winner_side"] >= 0]
    held = np.where(decided["winner_side"] == 0, decided["seat0_policy"], decided["seat1_policy"])
    names = frame.attrs["policy_names"]
    assert names == ["greedy", "random"]
    assert pol.loc[names, "wins"].tolist() == [int((held == k).sum()) for k in range(2)]
    assert set(rs.outcomes_by_seat(s)["policy"]) == {"rotated"}


def test_real_report_through_parquet(real_runs, tmp_path):
    frame = real_runs["millebornes"]
    run = tmp_path / "mb.parquet"
    write_parquet(frame, run, frame.attrs)
    out = report_command(run, tmp_path / "rep", batch_rows=997)  # chunks cut games anywhere
    md = (tmp_path / "rep" / "report.md").read_text()
    assert md == build_report(summarize(frame), frame.attrs, run_file=str(run)).to_markdown()
    assert re.findall(r"^## (.*)$", md, flags=re.M) == SECTIONS
    _self_contained(out.read_text())
    assert "Mille Bornes" in md and frame.attrs["design_hash"] in md
    assert "coups fourrés" in md and "hands per game" in md
    # Mille Bornes has a limit (Speed Limit): what its turns lost count is said
    assert "for a limit, turns it could lay only the distances the limit leaves open" in md


def _run_file(frame, path):
    write_parquet(frame, path, frame.attrs)
    return path


def test_real_comparison_of_two_designs(real_runs, tmp_path):
    a, b = (_run_file(real_runs[name], tmp_path / name) for name in ("stapop", "millebornes"))
    out = compare_runs(a, b, tmp_path / "cmp", batch_rows=211)  # chunks cut games anywhere
    md = (tmp_path / "cmp" / "report.md").read_text()
    head = md.split("## Paired differences")[0]
    assert f"{GAMES} games paired" in head
    # a Mille Bornes game is several hands of up to ~100 turns: clearly longer
    assert "Which has longer games? Mille Bornes." in head
    # different scales: the deficit as a share of the trip, no final gap in the paired table
    assert "share of the trip" in md and "final gap (winner minus runner-up) | total" not in md
    assert "pooled by card role" in md
    assert "Every seat plays the same policy, so there is no skill matrix" in md  # greedy on every seat
    assert "unequal play" not in md
    # Mille Bornes plays several hands: the first-player question is answered within the hand
    assert "share of the trips completed by the side playing first in the hand" in md
    assert "the hand's first player's distance from the fair share of completed trips" in head
    # each first-player value says its games, counted here from the records: the paired ones, then each design's own
    won = {k: real_runs[k].groupby("game")["winner_side"].last() >= 0 for k in ("stapop", "millebornes")}
    trip = {k: real_runs[k].groupby("game")["trip_side"].max() >= 0 for k in ("stapop", "millebornes")}
    assert (f"completed trips, over the {int((trip['stapop'] & trip['millebornes']).sum())} games with a completed "
            "trip in both:") in head
    assert (f"fair share of wins, over the {int((won['stapop'] & won['millebornes']).sum())} games with a winner "
            "in both:") in head
    assert (f"over each design's own games with a winner, {int(won['stapop'].sum())} and "
            f"{int(won['millebornes'].sum())}: Stap op") in head
    # the progress curves follow the rounds the records keep (every round to 12, sparser to 200), both
    # designs' up to where 99 % of the hands of the longer-lasting one had ended (two players: round r ends
    # at turn 2 r), and say so
    frames = (("Stap op", real_runs["stapop"]), ("Mille Bornes", real_runs["millebornes"]))
    kept = real_runs["stapop"].attrs["progress_rounds"]
    last = max(min(r for r in kept if 2 * r >= np.quantile(frame["turns"], 0.99, method="inverted_cdf"))
               for _, frame in frames)
    for name, frame in frames:
        longest = int(frame["turns"].max())
        assert f"{name}: rounds 1-12, " in md
        assert (f", {last}, n = {len(frame)} hands; no hand lasted beyond round 200 (the longest took {longest} "
                "turns)") in md
    _self_contained(out.read_text())


def _md_table(md, caption):
    """The rows of the table under `caption` in report.md, each a dict by column."""
    lines = md.split(caption)[1].split("\n\n")[1].splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split("|")))) for line in lines[2:]]


def test_real_comparison_lists_the_safeties_only_mille_bornes_has(real_runs, tmp_path):
    # Stap op has no safety role: pooled by role, Mille Bornes' safeties have nothing to pair with, and
    # their own numbers (coups fourrés included) are listed, summed here over both sides from the records
    a, b = (_run_file(real_runs[name], tmp_path / name) for name in ("stapop", "millebornes"))
    compare_runs(a, b, tmp_path / "cmp")
    md = (tmp_path / "cmp" / "report.md").read_text()
    rows = {r["name"]: r for r in _md_table(md, "**Cards only in Mille Bornes")}
    frame = real_runs["millebornes"]
    safeties = [c for c in frame.attrs["cards"] if c["role"] == "safety"]
    assert len(safeties) == 4 and set(rows) == {c["name"] for c in safeties}
    for card in safeties:
        row = rows[card["name"]]
        for stat in ("drawn", "played", "coups"):
            expected = int(sum(frame[f"s{s}_{card['key']}_{stat}"].sum() for s in range(frame.attrs["sides"])))
            assert int(row[stat]) == expected, (card["key"], stat)
    assert int(rows["Right of Way (Prioritaire)"]["coups"]) > 0
    assert "**Cards only in Stap op" not in md  # every Stap op role is in Mille Bornes
    # each design's attacks, by card (the pooled rows give only a role's), and Mille Bornes' safeties table,
    # summed from the records as above
    for name in ("stapop", "millebornes"):
        frame = real_runs[name]
        attacks = {r["name"]: r for r in _md_table(md, f"**{frame.attrs['design_title']}: attacks")}
        hazards = [c for c in frame.attrs["cards"] if c["role"] in ("hazard", "limit")]
        assert set(attacks) == {c["name"] for c in hazards}
        for card in hazards:
            for stat in ("received", "victim_turns"):
                expected = int(sum(frame[f"s{s}_{card['key']}_{stat}"].sum() for s in range(frame.attrs["sides"])))
                assert int(attacks[card["name"]][stat]) == expected, (name, card["key"], stat)
    coups = {r["name"]: int(r["coups"]) for r in _md_table(md, "**Mille Bornes: safeties")}
    assert coups == {name: int(row["coups"]) for name, row in rows.items()}
    assert "**Stap op: safeties" not in md


def test_real_comparison_under_unequal_play_gives_each_design_s_win_rate_per_policy(tmp_path):
    from etappe.analysis import race

    runs = {name: race.simulate(name, players=2, games=200, policies=["greedy", "random"], seed=3)
            for name in ("stapop", "millebornes")}
    a, b = (_run_file(runs[name], tmp_path / name) for name in runs)
    compare_runs(a, b, tmp_path / "cmp")
    md = (tmp_path / "cmp" / "report.md").read_text()
    head = md.split("## Paired differences")[0]
    assert ("read under unequal play: the sides hold different policies (Stap op: seat 0: greedy; seat 1: random; "
            "Mille Bornes: seat 0: greedy; seat 1: random)") in head
    assert "no skill matrix" not in md
    for name, frame in runs.items():
        # two players, fixed seats: greedy (seat 0) wins the games side 0 won, of the games with a winner
        games = frame.groupby("game")["winner_side"].last()
        rows = {r["policy"]: r for r in _md_table(md, f"**Win rate per policy: {frame.attrs['design_title']}")}
        assert int(rows["greedy"]["wins"]) == int((games == 0).sum())
        assert int(rows["random"]["wins"]) == int((games == 1).sum())
        assert int(rows["greedy"]["n"]) == int((games >= 0).sum())
        # and each design's skill matrix: two players, so a seat pair a game; every game here has a winner,
        # whose side finished ahead
        assert (games >= 0).all()
        part = md.split("## Skill matrix")[1].split("\n## ")[0].split(f"**{frame.attrs['design_title']}**")[1]
        pairs = {(r["policy"], r["opponent"]): r for r in _md_table(part, "**Head to head: finishing ahead")}
        assert [int(pairs["greedy", "random"][k]) for k in ("pairs", "ahead", "behind", "level")] == [
            len(games), int((games == 0).sum()), int((games == 1).sum()), 0]
    paired = md.split("## Paired differences")[1]
    assert "| win rate of seat 0 playing greedy (all games" in paired
    assert "| win rate of seat 1 playing random (all games" in paired


def test_partners_of_different_policies_are_said_to_share_their_side_s_result():
    from etappe.analysis import race

    # Mille Bornes at 4: seats 0 and 2 (greedy, greedy) against seats 1 and 3 (random, aggressive)
    frame = race.simulate("millebornes", players=4, games=60, policies=["greedy", "random", "greedy", "aggressive"],
                          seed=5)
    md = build_report(summarize(frame), frame.attrs).to_markdown()
    # random and aggressive get one result, side 1's, counted here from the records
    games = frame.groupby("game")["winner_side"].last()
    rows = {r["policy"]: r for r in _md_table(md, "**Win rate per policy")}
    assert int(rows["random"]["wins"]) == int(rows["aggressive"]["wins"]) == int((games == 1).sum())
    said = ("Partners play different policies: aggressive and random share side 1 (seats 1, 3). Their win rates and "
            "head-to-head results are that side's, not their own; `etappe tournament` measures each policy's own "
            "strength.")
    for section in ("## Outcomes", "## Skill matrix"):
        assert said in md.split(section)[1].split("\n## ")[0], section
    # and under each design's win rate per policy in a comparison (here of the run with itself)
    from etappe.analysis.compare import compare_tables
    from etappe.analysis.race_summary import game_table

    table = game_table(frame, frame.attrs)
    s = summarize(frame)
    md = build_comparison_report(s, frame.attrs, s, frame.attrs, compare_tables(table, table)).to_markdown()
    assert md.split("## Outcomes")[1].split("\n## ")[0].count(said) == 2


def test_real_comparison_of_a_rule_option(real_runs, tmp_path):
    a, b = (_run_file(real_runs[name], tmp_path / name) for name in ("stapop", "stapop_disq"))
    compare_runs(a, b, tmp_path / "opt")
    md = (tmp_path / "opt" / "report.md").read_text()
    assert "Stap op (overshoot=forbid) vs Stap op (overshoot=disqualify)" in md
    assert "unpaired, clustered by game" in md and "| card | rate |" in md  # same deck: card by card
    # by name too, as every other card table (designs.md: "reports show cards by name"; rules page: Stap op)
    assert "| Stap op | go | played share |" in md
    # games of one hand: the hand's first player is the game's, and its rows are not repeated
    assert "side playing first in the hand" not in md and "first player's distance from the fair share" in md
    won = [real_runs[k].groupby("game")["winner_side"].last() >= 0 for k in ("stapop", "stapop_disq")]
    assert f"first player's distance from the fair share, over the {int((won[0] & won[1]).sum())} games with a winner in both:" in md
    assert f"over each design's own games with a winner, {int(won[0].sum())} and {int(won[1].sum())}:" in md
    assert "winner's largest deficit | distance" in md  # same scale: km


def test_cli_compare(tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    result = CliRunner().invoke(app, ["compare", "stapop", "millebornes", "--players", "2", "--games", "100",
                                      "--seed", "5", "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "cmp" / "report.md").read_text()
    assert md.startswith("# Comparison: Stap op vs Mille Bornes")
    assert "Which has longer games?" in md.split("## Paired differences")[0]


def test_compare_designs_runs_both_in_chunks(real_runs, tmp_path):
    from etappe.cli.report_cmds import compare_designs

    seen = []
    out = compare_designs("stapop", "stapop", tmp_path / "c", players=2, games=120, seed=11,
                          options_b={"overshoot": "disqualify"}, chunk_size=50,
                          progress=lambda side, done: seen.append((side, done)))
    md = (tmp_path / "c" / "report.md").read_text()
    assert out.exists() and "120 games paired" in md
    assert ("a", 120) in seen and ("b", 120) in seen and ("a", 50) in seen
    assert "Stap op (overshoot=forbid) vs Stap op (overshoot=disqualify)" in md
    # same seed: game i is the stored run's game i, whatever the chunking
    turns = real_runs["stapop"].query("game < 120")["game_turns"].mean()
    assert f"| turns per game | turns | 120 | {turns:.4g} |" in md


def test_at_a_glance_names_flagged_cards_by_reason():
    import pandas as pd

    from etappe.reports.race_report import flagged_card_lines

    flags = pd.DataFrame({"name": ["Dud", "Gasoline", "Bad", "Key", "Fine"],
                          "reason": ["dead: almost never played when held",
                                     "dead: almost never needed: it answers attacks, which call for fewer",
                                     "goes with losing: winners play it less, players of it win far less",
                                     "goes with winning: winners play it more, players of it win far more", ""],
                          "win_when_played": [0.2, 0.3, 0.1, 1.0, 0.5], "win_when_not": [0.5, 0.5, 0.6, 0.0, 0.5]})
    assert flagged_card_lines(flags) == [
        "Dead cards (held or discarded nine times in ten): Dud.",
        "Answer cards rarely needed (more than the attacks call for): Gasoline.",
        "Cards that go with losing: Bad (sides that played it won 10.0 %, the others 60.0 %).",
        "Cards that go with winning by a wide margin: Key (sides that played it won 100.0 %, the others 0.0 %)."]
    assert flagged_card_lines(flags.iloc[4:]) == []


def test_at_a_glance_lines_up_the_flagged_cards(toy, monkeypatch):
    import pandas as pd

    from etappe.analysis import race_summary
    from etappe.reports.race_report import glance

    flags = pd.DataFrame({"name": ["Dud", "Fine"], "reason": ["dead: almost never played when held", ""]})
    flags.attrs.update(withheld="")
    monkeypatch.setattr(race_summary, "worth_playing", lambda summary: flags)
    assert glance(summarize(toy))[-1] == "Dead cards (held or discarded nine times in ten): Dud."


def test_the_turn_cap_how_games_end_and_the_speed_in_a_report(toy):
    # the toy run: 4 games, game 2 hit the turn cap (1 of 4; Wilson [0.0456, 0.6994]), played in 0.5 s
    md = build_report(summarize(toy), {**toy.attrs, "wall_seconds": 0.5}).to_markdown()
    low, high = wilson(1, 4)
    assert f"1 of 4 games (25.0 % [{100 * low:.1f}, {100 * high:.1f}]) hit the cap" in md.split("## Outcomes")[0]
    assert f"| games that hit the cap (stall) | 1 | 4 | 0.25 | {low:.4g} | {high:.4g} |" in md
    assert "| games without a winner | 1 | 4 | 0.25 |" in md
    assert "| games per second | 8 |" in md  # 4 games in 0.5 s


def test_a_report_of_some_of_a_run_s_games_says_so_and_gives_the_run_s_speed(toy):
    # a notebook's df[df.game < 2]: its header said "2 games" beside the 4-game run's command, and 2
    # games in the run's 0.5 s
    some = toy[toy.game < 2]
    md = build_report(summarize(some), {**toy.attrs, "games": 4, "wall_seconds": 0.5}).to_markdown()
    assert "| games | 2 of the run's 4 |" in md
    assert "| games per second | 8 |" in md


def test_headline_says_why_a_metric_has_no_interval_or_test():
    # The headline gave "Holm p = nan" for a metric equal in every game (no test: Holm's m leaves it
    # out) and "[nan, nan]" for one pair of games; it now says which, as the variant report does.
    from etappe.analysis import race
    from etappe.cli.report_cmds import compare_summaries

    def headline(games, deck_b, options_b=None):
        a, b = (race.simulate(deck, players=2, games=games, policies=["greedy"], seed=1, threads=1, options=options)
                for deck, options in (("stapop", None), (deck_b, options_b)))
        md = build_comparison_report(*compare_summaries(a, None, b, None)).to_markdown()
        head = md[md.index("**Answers with"):md.index("## Paired differences")]
        assert not re.search(r"\b(nan|inf)\b", head), head
        return [line.split(" | ")[2] for line in head.splitlines() if line.startswith("| Which")]

    # a turn cap no game reaches changes nothing: the same games, every metric equal in each
    same = headline(20, "stapop", {"turn_cap": 32_767})
    assert len(same) == 4 and all("equal in every one of the 20 paired games" in ev for ev in same), same
    one = headline(1, "millebornes")
    assert any("one paired game only, so no interval and no test" in ev for ev in one), one


def test_a_run_of_no_games_is_refused_with_a_reason():
    # docs/python.md: simulate(games=0) gives an empty table; summarizing it for a report crashed
    from etappe.analysis.race import simulate
    from etappe.analysis.race_summary import summarize

    empty = simulate("stapop", players=2, games=0, seed=1)
    with pytest.raises(ValueError, match="a run of no games has nothing to summarize or report"):
        summarize(empty)


def test_a_small_bound_is_not_written_as_zero():
    # 0 turn-cap games of 100,000: Wilson's upper bound z^2 / (n + z^2) = 3.8415 / 100003.84 = 0.0038 %,
    # which one decimal wrote as "[0.0, 0.0]", as if no game could ever hit the cap.
    from etappe.reports.document import percent

    assert percent(0.0) == "0.0" and percent(0.5) == "50.0" and percent(1.0) == "100.0"
    assert percent(3.8415 / 100_003.84) == "0.0038"  # two significant digits of what is not 0
    assert percent(1 - 3.8415 / 100_003.84) == "99.9962"  # nor 100
    assert percent(0.0004) == "0.040" and percent(0.0005) == "0.1"  # 0.05 % and up round as before
    assert percent(0.00003, 2) == "0.0030" and percent(0.0001, 2) == "0.01"


def test_one_policy_on_every_seat_gets_no_win_rate_interval_around_an_exact_share():
    # it wins every game with a winner, so its rate per side is exactly 1/sides: the report printed greedy
    # 0.5 [0.496, 0.5] as if it were measured (as Bremen's and Tape l'étape's reports no longer do)
    from etappe.analysis.race import simulate

    one = simulate("stapop", players=2, games=30, seed=1)
    md = build_report(summarize(one), one.attrs).to_markdown()
    assert ("One policy (greedy) plays every seat, so it wins every game with a winner: its win rate per side is "
            "1/2 by construction") in md and "Win rate per policy" not in md
    two = simulate("stapop", players=2, games=30, seed=1, policies=["greedy", "random"])
    md = build_report(summarize(two), two.attrs).to_markdown()
    assert "Win rate per policy" in md and "One policy" not in md


def test_a_run_cut_by_the_turn_cap_calls_no_card_dead(tmp_path):
    # Every game of Stap op cut after one turn: no card had a chance to be played, so none is judged;
    # the report had called every distance card "dead" (held or discarded nine times in ten)
    from typer.testing import CliRunner

    from etappe.cli.main import app

    run = tmp_path / "cap.parquet"
    result = CliRunner().invoke(app, ["simulate", "stapop", "--players", "2", "--games", "300", "--seed", "1",
                                      "-o", "turn_cap=1", "--out", str(run)])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "rep" / "report.md").read_text()
    glance = md.split("## At a glance")[1].split("\n## ")[0]
    judged_none = "No card is judged: 300 of the 300 games hit the turn cap"
    assert judged_none in glance and "Dead cards" not in glance
    cards = md.split("## Card balance")[1].split("\n## ")[0]
    assert judged_none in cards and "dead: almost never" not in cards


def test_a_comparison_whose_metrics_never_vary_draws_no_empty_figure(tmp_path):
    # One paired game: no metric has a spread to draw in sd units, so no forest figure (it was an empty frame)
    from typer.testing import CliRunner

    from etappe.cli.main import app

    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", "stapop", "millebornes", "--players", "2", "--games", "1",
                                      "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    md = (out / "report.md").read_text()
    assert not (out / "forest.png").exists() and "forest.png" not in md
    assert "No figure of the differences: no metric varies from game to game here" in md


def test_a_difference_equal_in_every_game_has_no_interval(tmp_path):
    # The extra turn of a safety once the stock is empty comes into play in few Mille Bornes games: none of
    # the first 30 of seed 1 differs in length, and the table printed the 95 % interval [0, 0] (a certainty)
    from typer.testing import CliRunner

    from etappe.cli.main import app

    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["compare", "millebornes", "--option-b", "safety_extra_turn_after_stock_empty=true",
                                      "--players", "2", "--games", "30", "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    md = (out / "report.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| turns per game | turns |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # metric, unit, n, mean_a, mean_b, diff, sd, ci_low, ci_high, p, p_holm, reject
    assert cells[2] == "30" and cells[3] == cells[4] and cells[5] == "0" and cells[6] == "0"
    assert cells[7] == cells[8] == "" and cells[9] == ""
    assert "equal in every one of the 30 paired games" in md
