"""The race commands through typer's CliRunner."""
import os
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from etappe.analysis.race import RaceRun
from etappe.analysis.runio import ChunkedRun, file_hash, read_metadata, read_parquet, write_parquet
from etappe.cli.main import app
from by_hand import wilson
from interrupts import interrupt_play_after
from etappe.kernels.options import option_text
from etappe.kernels.race_design import DEFAULT_OPTIONS, load_design

runner = CliRunner()
GOLDEN = Path(__file__).parent / "golden"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_decks_list_and_show():
    result = run("decks", "list")
    assert result.exit_code == 0
    for name in ("stapop", "millebornes", "touring"):
        assert name in result.stdout
    shown = run("decks", "show", "millebornes")
    assert shown.exit_code == 0 and "right_of_way" in shown.stdout and "permanent go" in shown.stdout
    # the rules page: hands of 6, no reshuffle, 101 cards for 2 or 3 players, 106 for more; 4 play as two teams
    lines = [line.strip() for line in shown.stdout.splitlines()]
    assert "players 2, 3, 4, 6, hand 6, stock: play out, start under limit: no, unit km" in lines
    assert "2 players: 2 sides, trip 700, extension 1000, deck 101 cards" in lines
    assert "4 players: 2 sides, trip 1000, deck 106 cards" in lines
    # the rules page: every option matters in Mille Bornes, but 4 players (two teams) have no extension
    text = " ".join(shown.stdout.split())
    assert "options that change nothing here" not in text
    assert "options that change nothing at 4 players: failed_extension_trip_points" in text
    # Stap op: no safeties and no scoring table (rules page), so only four options are its own
    shown = run("decks", "show", "stapop").stdout
    # the rules page: 99 cards, hands of 5, reshuffled, everyone starts under headwind, exactly 100 km
    assert "players 2, 3, 4, 5, 6, hand 5, stock: reshuffle, start under limit: yes, unit km" in shown
    assert "4 players: 4 sides, trip 100, deck 99 cards" in shown
    text = " ".join(shown.split())
    assert "options: overshoot=forbid, limit_on_limit=false, discard=always, turn_cap=0" in text
    assert "coup_fourre, coup_fourre_turn_after_stock_empty (no safety protects from an attack)" in text


def test_decks_show_keeps_each_card_key_whole_on_a_narrow_screen(monkeypatch):
    from etappe.cli import common

    monkeypatch.setattr(common.console, "_width", 50)  # a narrow terminal: the other columns wrap
    lines = [line.strip() for line in run("decks", "show", "millebornes").stdout.splitlines()]
    # the key is what a user types (--set cards.KEY...): never cut
    assert all(any(line.startswith(f"│ {key} ") for line in lines) for key in ("puncture_proof", "right_of_way"))


def test_decks_list_keeps_names_and_title_words_whole_on_a_narrow_screen(monkeypatch):
    from etappe.cli import common

    monkeypatch.setattr(common.console, "_width", 60)
    lines = run("decks", "list").stdout.splitlines()
    # the name is what a command takes, and "Touring (reconstructed)" says what kind of design it is
    for name, title in (("millebornes", "Mille Bornes"), ("stapop", "Stap op"), ("touring", "Touring")):
        assert any(line.startswith(f"│ {name} ") and f"│ {title} " in line for line in lines), name
    assert any("│ (reconstructed) │" in line for line in lines)


def test_the_simulate_summary_keeps_its_numbers_whole_on_a_narrow_screen(monkeypatch):
    from etappe.cli import common

    monkeypatch.setattr(common.console, "_width", 40)
    result = run("simulate", "millebornes", "--players", 2, "--games", 50, "--policy", "greedy,random", "--seed", 3)
    assert result.exit_code == 0, result.output
    body = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert body and not any("…" in line for line in body)  # rates were cut to "0.…"
    # every rate and interval bound is there in full, if over several lines
    assert len(re.findall(r"\b[01]\.\d{3}\b", "\n".join(body))) >= 3 * 4  # 2 seats and 2 policies, 3 numbers each
    # and the counts: 4 seats of 300 games had theirs cut to "10…" and "30…"
    result = run("simulate", "millebornes", "--players", 4, "--games", 300, "--policy", "greedy,random", "--seed", 1)
    assert result.exit_code == 0, result.output
    assert "summary" in result.stdout and "…" not in result.stdout


def test_decks_show_toml_prints_the_design_file_to_copy(tmp_path):
    result = run("decks", "show", "stapop", "--toml")
    assert result.exit_code == 0
    copy = tmp_path / "mine.toml"
    copy.write_text(result.stdout)
    assert load_design(copy).text == load_design("stapop").text


def test_decks_show_of_a_run_prints_the_design_it_was_played_with(tmp_path, monkeypatch):
    # a designer edits the design file after the run: the run keeps the design it was played with
    monkeypatch.chdir(tmp_path)
    played = run("decks", "show", "stapop", "--toml").stdout.replace('title = "Stap op"', 'title = "Mine"', 1)
    assert 'title = "Mine"' in played
    Path("mine.toml").write_text(played)
    assert run("simulate", "mine.toml", "--players", 2, "--games", 3, "--out", "run.parquet").exit_code == 0
    Path("mine.toml").write_text(played.replace('title = "Mine"', 'title = "Mine, edited"'))
    result = run("decks", "show", "run.parquet", "--toml")
    assert result.exit_code == 0 and result.stdout == played
    result = run("decks", "show", "run.parquet")
    assert result.exit_code == 0 and result.stdout.startswith("Mine (mine.toml)")
    # a name as some systems write it (RUN.PARQUET) is a run file too, not "not a design file"
    replayed = run("replay", "run.parquet", "--game", 1)
    assert replayed.exit_code == 0 and "Mine" in replayed.stdout
    Path("run.parquet").rename("RUN.PARQUET")
    result = run("decks", "show", "RUN.PARQUET", "--toml")
    assert result.exit_code == 0 and result.stdout == played
    assert run("replay", "RUN.PARQUET", "--game", 1).stdout == replayed.stdout
    Path("RUN.PARQUET").rename("run.parquet")
    # a design given where a run file is not: the refusal says where its design is
    result = run("simulate", "run.parquet", "--games", 3)
    assert result.exit_code == 2 and "`etappe decks show run.parquet --toml` prints the design it was played with" in (
        " ".join(result.stderr.split()))
    assert run("simulate", "bremen", "--players", 2, "--games", 2, "--out", "bremen.parquet").exit_code == 0
    result = run("decks", "show", "bremen.parquet")
    assert result.exit_code == 2 and "a run of Bremer Stadtmusikanten, which has no deck design" in result.stderr


def test_decks_validate_good_and_bad(tmp_path):
    text = (Path(__file__).resolve().parents[1] / "kernels" / "designs" / "stapop.toml").read_text()
    good = tmp_path / "redesign.toml"
    good.write_text(text.replace('name = "stapop"', 'name = "stapop_8_crossings"').replace(
        'role = "hazard"\ncount = 3\nremedy = "barriers_open"', 'role = "hazard"\ncount = 8\nremedy = "barriers_open"'))
    ok = run("decks", "validate", good)
    assert ok.exit_code == 0 and "valid design 'stapop_8_crossings'" in ok.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('remedy = "bike_repairer"', 'remedy = "bike_shop"'))
    refused = run("decks", "validate", bad)
    assert refused.exit_code != 0
    assert "cards[2] (flat_tyre).remedy: no card 'bike_shop'" in refused.stderr


def test_decks_validate_names_the_cards_nothing_in_the_deck_calls_for(tmp_path):
    # a designer (or a sweep down to 0) takes out every flat tyre and every headwind: the design is valid,
    # but the bike repairers and the tailwinds are then dead cards, which validate says
    text = (Path(__file__).resolve().parents[1] / "kernels" / "designs" / "stapop.toml").read_text()
    for card, count in (("flat_tyre", 3), ("headwind", 4)):
        text = text.replace(f'key = "{card}"', f'key = "{card}"#', 1)
        head, tail = text.split(f'key = "{card}"#', 1)
        text = head + f'key = "{card}"' + tail.replace(f"count = {count}", "count = 0", 1)
    mine = tmp_path / "no_flats.toml"
    mine.write_text(text)
    result = run("decks", "validate", mine)
    assert result.exit_code == 0 and "valid design" in result.stdout
    notes = [line for line in result.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [
        "note: cards.bike_repairer (remedy) is played only on flat_tyre, of which the deck holds none at 2, 3, 4, "
        "5, 6 players: its copies there can never be played (dead cards)",
        "note: cards.tailwind (end_limit) is played only on headwind, of which the deck holds none at 2, 3, 4, 5, "
        "6 players: its copies there can never be played (dead cards)"]
    assert "note:" not in run("decks", "validate", "stapop").stdout


def test_simulate_writes_parquet_with_identity(tmp_path):
    out = tmp_path / "run.parquet"
    result = run("simulate", "stapop", "--players", 3, "--games", 300, "--seed", 5, "--out", out,
                 "--chunk-size", 100)
    assert result.exit_code == 0, result.stderr
    # the speed is the games'; writing them is said apart (an audit found it as long as the play, unsaid)
    writing = re.search(r"^wrote " + re.escape(str(out)) + r" \(300 games\); ([0-9.]+) s writing the records "
                        r"\(each chunk as it finished, then the joined file\), not in the speed of play$",
                        result.stdout, re.MULTILINE)
    assert writing and float(writing.group(1)) > 0, result.stdout
    assert "writing the records" not in run("simulate", "stapop", "--players", 3, "--games", 30).stdout
    meta = read_metadata(out)
    assert meta["design"] == "stapop" and meta["seed"] == 5 and meta["games"] == 300 and meta["players"] == 3
    assert meta["target"] == 100 and meta["extension"] == 0  # the rules page: 100 km, no extension
    assert len(meta["design_hash"]) == 16
    # the version names the code too (a hash of the kernel and analysis sources): a run is resumed
    # and replayed only by code that plays and records its games the same way
    assert re.fullmatch(r"[0-9][^+]*\+[0-9a-f]{12}", meta["version"]), meta["version"]
    frame = pq.read_table(out).to_pandas()
    assert sorted(frame["game"].unique()) == list(range(300))
    assert not out.with_name("run.parquet.parts").exists()
    assert "summary" in result.stdout


def test_a_finished_run_is_not_played_again(tmp_path):
    out = tmp_path / "run.parquet"
    args = ("simulate", "millebornes", "--players", 2, "--games", 300, "--seed", 9, "--out", out, "--chunk-size", 100)
    first = run(*args)
    assert first.exit_code == 0, first.stderr
    written = out.stat().st_mtime_ns
    again = run(*args[:-1], 50)  # the chunk size is no part of the run
    assert again.exit_code == 0, again.stderr
    assert "already holds this run: nothing to play" in again.stderr and out.stat().st_mtime_ns == written
    assert not out.with_name("run.parquet.parts").exists()
    # the same summary, read from the file
    table = [line for line in first.stdout.splitlines() if line.startswith("│")]
    assert table and table == [line for line in again.stdout.splitlines() if line.startswith("│")]


def test_interrupted_simulate_resumes_from_finished_chunks(tmp_path):
    out = tmp_path / "run.parquet"
    args = ("simulate", "millebornes", "--players", 2, "--games", 200, "--seed", 9, "--out", out,
            "--chunk-size", 100)
    # Play it once completely, then fake an interruption after chunk 0 of a second
    # run whose chunk 0 was marked: the resumed run must reuse it, not replay it.
    assert run(*args).exit_code == 0
    full = pq.read_table(out).to_pandas()
    out.unlink()
    rr = RaceRun("millebornes", 2, ["greedy"], 9)
    meta = rr.metadata(200)
    identity = {k: meta[k] for k in ("design_hash", "players", "policies", "seating", "seed", "games",
                                     "version", "options")}
    marked = rr.play(0, 100)
    marked["lead_changes"] = -7  # a value no real game has
    ChunkedRun(out, identity, chunk_size=100).save(0, marked, seconds=1000.0)
    # resumed with another --chunk-size: in the interrupted run's chunks of 100, chunk 0 reused
    result = run(*args[:-1], 40)
    assert result.exit_code == 0, result.stderr
    # a status line, on stderr: stdout holds the summary a script reads
    assert ("resuming the run at " in result.stderr and "100 of 200 games already played, in its "
            "chunks of 100 (not --chunk-size 40" in " ".join(result.stderr.split()))
    assert "resuming" not in result.stdout
    assert read_metadata(out)["wall_seconds"] >= 1000.0  # the earlier session's time is counted
    resumed = pq.read_table(out).to_pandas()
    assert (resumed.loc[resumed.game < 100, "lead_changes"] == -7).all()
    later = resumed[resumed.game >= 100].reset_index(drop=True)
    pd.testing.assert_frame_equal(later, full[full.game >= 100].reset_index(drop=True), check_dtype=False)


def test_a_run_shared_over_two_machines_joins_into_the_run_of_one(tmp_path):
    import shutil

    args = ("simulate", "stapop", "--games", 250, "--seed", 6, "--chunk-size", 100)
    whole, one, two = (tmp_path / d / "run.parquet" for d in ("whole", "one", "two"))
    for path in (whole, one, two):
        path.parent.mkdir()
    assert run(*args, "--out", whole).exit_code == 0
    # machine one plays chunks 0 and 2 (games 0-99, 200-249), machine two chunk 1; neither joins
    result = run(*args, "--out", one, "--share", "1/2")
    assert result.exit_code == 0, result.stderr
    assert "share 1/2" in result.stderr and "2 of the run's 3 chunks are there" in " ".join(result.stderr.split())
    assert "150 games" in result.stdout and not one.exists()
    assert run(*args, "--out", two, "--share", "2/2").exit_code == 0
    assert sorted(p.name for p in (tmp_path / "two" / "run.parquet.parts").glob("chunk-*")) == ["chunk-000001.parquet"]
    # a chunk of another run put in the folder by mistake is refused, naming it and what differs
    other = tmp_path / "other" / "run.parquet"
    other.parent.mkdir()
    assert run(*args[:-4], "--seed", 7, "--chunk-size", 100, "--out", other, "--share", "2/2").exit_code == 0
    parts = tmp_path / "one" / "run.parquet.parts"
    shutil.copy(tmp_path / "other" / "run.parquet.parts" / "chunk-000001.parquet", parts)
    result = run(*args, "--out", one)
    assert result.exit_code == 2 and ("chunk-000001.parquet is a chunk of another run (seed 7, not 6); remove it "
                                      "or write to another --out\n") in " ".join(result.stderr.split(" "))
    # so is a chunk of another chunk size (its games are not those of this run's chunk 1)
    shutil.rmtree(tmp_path / "other")
    assert run(*args[:-1], 50, "--out", other, "--share", "2/5").exit_code == 0
    shutil.copy(tmp_path / "other" / "run.parquet.parts" / "chunk-000001.parquet", parts)
    result = run(*args, "--out", one)
    assert result.exit_code == 2 and "chunk_size 50, not 100" in result.stderr
    # with machine two's chunk, the run is whole: joined without playing a game, as if one machine played it
    shutil.copy(tmp_path / "two" / "run.parquet.parts" / "chunk-000001.parquet", parts)
    result = run(*args, "--out", one)
    assert result.exit_code == 0, result.stderr
    assert "250 of 250 games already played" in " ".join(result.stderr.split())
    pd.testing.assert_frame_equal(pd.read_parquet(one), pd.read_parquet(whole))


def test_simulate_summary_counts_what_the_records_hold(tmp_path):
    # Mille Bornes at 4: two teams, seats 0 and 2 against 1 and 3 (rules page), games of several hands.
    out = tmp_path / "run.parquet"
    result = run("simulate", "millebornes", "--players", 4, "--games", 30, "--seed", 3, "--policy", "greedy,random",
                 "--out", out)
    assert result.exit_code == 0, result.stderr
    hands = pd.read_parquet(out)
    games = hands[hands["last_hand"] == 1]
    winner = games["winner_side"]
    decided = int((winner >= 0).sum())

    def rate_cells(wins):
        low, high = wilson(wins, decided)
        return f"{wins / decided:.3f} +│ {low:.3f} - {high:.3f}"

    assert f"summary (win rates among the {decided} games with a winner)" in result.stdout
    for seat, side, policy in ((0, 0, "greedy"), (1, 1, "random"), (2, 0, "greedy"), (3, 1, "random")):
        wins = int((winner == side).sum())
        assert re.search(rf"│ {seat} +│ {side} +│ {policy} +│ {wins} +│ {rate_cells(wins)} +│", result.stdout), result.stdout
    # each policy plays one side here: its side-games are the decided games, its wins its side's
    assert re.search(rf"│ greedy +│ {decided} +│ {int((winner == 0).sum())} +│ {rate_cells(int((winner == 0).sum()))} +│",
                     result.stdout), result.stdout
    line = " ".join(result.stdout.split())
    assert (f"30 games, {len(hands)} hands, {games['game_turns'].mean():.1f} turns per game, "
            f"no winner {30 - decided}, turn cap hit {int((games['capped'] == 1).sum())}, hand cap ({read_metadata(out)['hand_cap']} hands) hit "
            f"{int((games['capped'] == 2).sum())};") in line
    assert len(hands) > 30  # several hands a game (to 5000 points), so hands and games are told apart


def test_simulate_summary_of_a_policy_on_two_sides_of_each_game(tmp_path):
    # Stap op at 3: greedy,random,greedy seats greedy at 0 and 2, two of the three sides of every game. It wins at most
    # once a game, so its interval is over games (docs/statistics.md): Wilson's of its wins among the decided
    # games, halved to a rate per side-game.
    out = tmp_path / "run.parquet"
    result = run("simulate", "stapop", "--players", 3, "--games", 40, "--seed", 2, "--policy",
                 "greedy,random,greedy", "--out", out)
    assert result.exit_code == 0, result.stderr
    winner = pd.read_parquet(out)["winner_side"]
    decided = int((winner >= 0).sum())
    greedy_wins, random_wins = int(winner.isin([0, 2]).sum()), int((winner == 1).sum())
    low, high = wilson(greedy_wins, decided)
    assert re.search(rf"│ greedy +│ {2 * decided} +│ {greedy_wins} +│ {greedy_wins / (2 * decided):.3f} +│ "
                     rf"{low / 2:.3f} - {high / 2:.3f} +│", result.stdout), result.stdout
    low, high = wilson(random_wins, decided)
    assert re.search(rf"│ random +│ {decided} +│ {random_wins} +│ {random_wins / decided:.3f} +│ "
                     rf"{low:.3f} - {high:.3f} +│", result.stdout), result.stdout


@pytest.mark.parametrize("args, title", [
    (("stapop", "millebornes"), "# Comparison: Stap op vs Mille Bornes, 2 players"),
    (("bremen", "--option-b", "harder=true"), "# Bremer Stadtmusikanten: harder=false (A) against harder=true (B), "
                                               "4 players")])
def test_compare_without_players_plays_the_documented_default(args, title, tmp_path):
    # --help: "default: 2 for the race designs, 4 for etape and bremen"
    out = tmp_path / "cmp"
    result = run("compare", *args, "--games", 10, "--out", out)
    assert result.exit_code == 0, result.output
    assert f"wrote {out / 'report.html'} and {out / 'report.md'}" in result.stdout.splitlines()
    assert "resuming" not in result.output  # a fresh run has nothing to resume
    assert (out / "report.md").read_text().splitlines()[0] == title


@pytest.mark.parametrize("designs", [("stapop", "millebornes"), ("bremen", "--option-b", "harder=true")])
def test_compare_without_out_writes_the_documented_folder(designs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # --help: "default: compare"
    result = run("compare", *designs, "--games", 10)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "compare" / "report.md").exists() and (tmp_path / "compare" / "report.html").exists()


def test_a_long_path_is_said_on_one_line_never_broken(tmp_path):
    # Output goes to pipes and logs of 80 columns: a path cut by a newline cannot be copied.
    out = tmp_path / ("a_folder_with_a_long_name_" * 3) / "run.parquet"
    result = run("simulate", "stapop", "--games", 10, "--out", out)
    assert result.exit_code == 0 and len(f"wrote {out}") > 80
    assert any(line.startswith(f"wrote {out} (10 games); ") for line in result.stdout.splitlines())
    result = run("report", out.with_name("missing.parquet"))
    assert f"error: {out.with_name('missing.parquet')}: no such run file" in result.stderr.splitlines()


def test_brackets_in_a_title_or_a_path_are_printed_as_written(tmp_path, monkeypatch):
    # the terminal output is styled with Rich, whose markup would drop "[v2]" from a design's title or a
    # path and stop the command at "[/x]": what the user wrote is printed as it is
    monkeypatch.chdir(tmp_path)
    text = run("decks", "show", "stapop", "--toml").stdout
    Path("v2.toml").write_text(text.replace('title = "Stap op"', 'title = "Stap op [v2] [/x]"')
                               .replace('name = "stapop"', 'name = "stapop_v2"'))
    shown = run("decks", "show", "v2.toml")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[0] == "Stap op [v2] [/x] (v2.toml)"
    result = run("simulate", "v2.toml", "--players", 2, "--games", 10, "--out", "run [v2] [/x].parquet")
    assert result.exit_code == 0, result.output
    assert any(line.startswith("wrote run [v2] [/x].parquet (10 games); ") for line in result.stdout.splitlines())
    assert "joining the chunks into run [v2] [/x].parquet" in result.stderr  # the bar's own line
    result = run("compare", "stapop", "v2.toml", "--players", 2, "--sequential", "--games", 200)
    assert result.exit_code == 0, result.output
    assert "Sequential test: Stap op vs Stap op [v2] [/x], game_turns" in " ".join(result.stdout.split())


def test_a_share_is_refused_where_it_cannot_be_played(tmp_path):
    for share, message in (("3/2", "give K/M"), ("0/2", "give K/M"), ("a/b", "give K/M"),
                           ("4/4", "the run has 3 chunks of 100 games, so share 4 has none; use at most 3 shares")):
        result = run("simulate", "stapop", "--games", 250, "--chunk-size", 100, "--out", tmp_path / "r.parquet",
                     "--share", share)
        assert result.exit_code == 2 and message in " ".join(result.stderr.split()), share
    result = run("simulate", "stapop", "--games", 50, "--chunk-size", 100, "--out", tmp_path / "one.parquet",
                 "--share", "2/2")  # one chunk: said in the singular
    assert result.exit_code == 2 and ("the run has 1 chunk of 100 games, so share 2 has none; use at most 1 share, "
                                      "or a smaller --chunk-size") in " ".join(result.stderr.split())
    result = run("simulate", "stapop", "--games", 250, "--share", "1/2")
    assert result.exit_code == 2 and "--share needs --out" in result.stderr


def test_a_misnamed_game_or_design_names_every_choice_and_the_nearest(tmp_path):
    result = run("simulate", "bremmen", "--games", 10)
    assert result.exit_code == 2
    assert "etape and bremen" in result.stderr and "stapop" in result.stderr and "did you mean 'bremen'" in result.stderr
    assert "did you mean 'etape'" in run("policies", "etap").stderr
    assert "did you mean 'stapop'" in run("decks", "show", "stapp").stderr
    result = run("tournament", "etape", "--policies", "random,heuristic")
    assert result.exit_code == 2 and "tournament is for the race designs" in result.stderr
    records = tmp_path / "run.parquet"
    records.write_bytes(b"PAR1\x80\x81")
    result = run("simulate", records, "--games", 10)
    assert result.exit_code == 2 and "a run file, not a design" in result.stderr
    binary = tmp_path / "design.toml"
    binary.write_bytes(b"\x80\x81")
    result = run("decks", "validate", binary)
    assert result.exit_code != 0 and "not a design file" in result.stderr


def test_a_joined_run_file_gives_pandas_the_runs_metadata(tmp_path):
    # pandas reads a frame's attrs back from a Parquet file: they must be the whole
    # run's, not those of the chunk the joined file's schema came from.
    out = tmp_path / "run.parquet"
    chunks = ChunkedRun(out, {"seed": 1})
    for index in range(2):
        frame = pd.DataFrame({"x": [index]})
        frame.attrs = {"races": 1, "wall_seconds": 0.5}  # what the chunk knew of itself
        chunks.save(index, frame)
    chunks.join(2, {"seed": 1, "races": 2, "wall_seconds": 1.0})
    assert pd.read_parquet(out).attrs == read_metadata(out) == {"seed": 1, "races": 2, "wall_seconds": 1.0}


def test_simulate_summary_shows_a_long_policy_name_whole():
    long_name = "greedy:attack=2.5,extension_margin=150,hold_safeties=0"
    result = run("simulate", "millebornes", "--players", "2", "--games", "20", "--policy", f"{long_name},greedy")
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout  # wrapped in its cell, never cut
    assert "hold_safeties=0" in result.stdout


def test_simulate_without_out_holds_no_chunk_but_the_one_it_summarizes(monkeypatch):
    # The audit: without --out every chunk was kept and joined at the end, only
    # to be thrown away (1.26 GB at 400 000 games). Now a chunk is let go once
    # it is summarized: when a chunk is played, no chunk before the previous is alive.
    import gc
    import weakref

    played = []
    real_play = RaceRun.play

    def play(self, start, count):
        gc.collect()
        assert sum(ref() is not None for ref in played) <= 1
        frame = real_play(self, start, count)
        played.append(weakref.ref(frame))
        return frame

    monkeypatch.setattr(RaceRun, "play", play)
    result = run("simulate", "stapop", "--players", 2, "--games", 50, "--chunk-size", 10)
    assert result.exit_code == 0, result.stderr
    assert len(played) == 5 and "50 games, 50 hands" in " ".join(result.stdout.split())


def test_unwritable_out_is_refused_before_any_game_is_played(tmp_path, monkeypatch):
    def no_play(*args):
        raise AssertionError("a game was played")

    monkeypatch.setattr(RaceRun, "play", no_play)
    a_file = tmp_path / "afile"
    a_file.write_text("")
    result = run("simulate", "stapop", "--games", 10, "--out", a_file / "run.parquet")
    assert result.exit_code == 2 and "exists and is not a folder" in result.stderr
    result = run("simulate", "stapop", "--games", 10, "--out", tmp_path)
    assert result.exit_code == 2 and "is a folder; give a file name" in result.stderr
    result = run("simulate", "stapop", "--games", 10, "--out", tmp_path / "run.csv")
    assert result.exit_code == 2 and "give a name ending in .parquet" in result.stderr
    assert not (tmp_path / "run.csv").exists() and not (tmp_path / "run.csv.parts").exists()
    result = run("compare", "stapop", "millebornes", "--games", 10, "--out", a_file)
    assert result.exit_code == 2 and "exists and is not a folder" in result.stderr
    assert "summary" not in result.stdout


def test_compare_refuses_a_design_against_itself(tmp_path):
    result = run("compare", "millebornes", "--option-b", "roll_after_safety=true", "--games", 10,
                 "--out", tmp_path / "cmp")  # true is the default: the same rules twice
    assert result.exit_code == 2 and "A and B are the same design (millebornes" in result.stderr
    assert "every paired difference would be 0" in result.stderr


def test_policies_repeat_around_the_table_in_every_game(tmp_path):
    # --help: "A,B at 4 seats: A,B,A,B"
    out = tmp_path / "etape.parquet"
    result = run("simulate", "etape", "--players", 4, "--games", 4, "--policy", "heuristic,random", "--out", out)
    assert result.exit_code == 0, result.output
    assert [p.split(":")[0] for p in read_metadata(out)["policies"]] == ["heuristic", "random", "heuristic", "random"]
    out = tmp_path / "stapop.parquet"
    result = run("simulate", "stapop", "--players", 4, "--games", 4, "--policy", "greedy,random", "--out", out)
    assert result.exit_code == 0, result.output
    meta = read_metadata(out)
    assert [p["name"] for p in meta["policies"]] == ["greedy", "random", "greedy", "random"]
    frame = pq.read_table(out).to_pandas()
    assert sorted(frame["game"].unique()) == [0, 1, 2, 3]
    for seat, name in enumerate(["greedy", "random", "greedy", "random"]):  # the records: every game, every seat
        assert [meta["policy_names"][k] for k in frame[f"seat{seat}_policy"]] == [name] * len(frame)
    result = run("simulate", "etape", "--players", 4, "--games", 4, "--policy", "heuristic,random,high")
    assert result.exit_code == 2 and "repeats around the table" in result.stderr


def test_sequential_compare_writes_its_report(tmp_path):
    result = run("compare", "stapop", "millebornes", "--players", 2, "--sequential", "--games", 300,
                 "--out", tmp_path / "seq")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "seq" / "report.md").read_text()
    assert "Sequential test" in text and "decision" in text and (tmp_path / "seq" / "report.html").exists()
    assert text.startswith("# Sequential test: Stap op vs Mille Bornes, game_turns, 2 players, seed 0\n")
    assert "| root seed | 0 |" in text and "| policies | greedy |" in text and "| players | 2 |" in text
    assert "Bots are not people: the result holds for the policies named above." in text
    assert f"wrote {tmp_path / 'seq' / 'report.html'} and {tmp_path / 'seq' / 'report.md'}" in " ".join(
        result.stdout.split())
    # one design, two policies (as docs/tournaments.md shows it)
    result = run("compare", "millebornes", "--players", 2, "--sequential", "--policy", "greedy,random",
                 "--games", 300)
    assert result.exit_code == 0, result.output
    assert "greedy vs random on Mille Bornes" in result.stdout



def test_a_redesign_that_kept_its_title_is_named_by_its_key(tmp_path, monkeypatch):
    # a copy of `decks show --toml` with a card count changed: both designs are "Stap op", so the
    # sequential test and the comparison report name each by its key ([design] name), as the report does
    monkeypatch.chdir(tmp_path)
    text = run("decks", "show", "stapop", "--toml").stdout
    assert text.count('name = "stapop"') == 1 and text.count("count = 14") == 1
    Path("mine.toml").write_text(text.replace('name = "stapop"', 'name = "fewer_go"').replace("count = 14", "count = 12"))
    result = run("compare", "stapop", "mine.toml", "--players", 2, "--sequential", "--games", 400, "--out", "seq")
    assert result.exit_code == 0, result.output
    assert "Sequential test: Stap op (stapop) vs Stap op (fewer_go), game_turns" in " ".join(result.stdout.split())
    assert Path("seq/report.md").read_text().startswith("# Sequential test: Stap op (stapop) vs Stap op (fewer_go)")
    assert run("compare", "stapop", "mine.toml", "--players", 2, "--games", 50, "--out", "cmp").exit_code == 0
    assert Path("cmp/report.md").read_text().startswith("# Comparison: Stap op (stapop) vs Stap op (fewer_go), 2 players")


@pytest.mark.parametrize("args", [
    ("stapop", "my designs/s p.toml", "-o", "overshoot=disqualify", "--option-b", "overshoot=forbid", "--metric",
     "lead_changes", "--alpha", 0.1),
    ("millebornes", "--policy", "greedy,random", "--delta", 0.1)])
def test_the_sequential_report_names_its_designs_and_the_command_that_plays_it_again(tmp_path, monkeypatch, args):
    # reports.md's header: the design files and their hashes, the rule options, games, seed, wall time
    # and games per second; the command, run as written, takes the same decision on the same games
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my designs").mkdir()
    (tmp_path / "my designs" / "s p.toml").write_text(
        (Path(__file__).parents[1] / "kernels" / "designs" / "stapop.toml").read_text())
    result = run("compare", *args, "--players", 2, "--sequential", "--games", 400, "--seed", 3, "--out", "a")
    assert result.exit_code == 0, result.output
    md = Path("a/report.md").read_text()
    stapop = load_design("stapop")
    # every rule option in force is named, the design's defaults written out
    if args[1] == "my designs/s p.toml":  # the same file under another name: one hash
        for side, given in (("A | Stap op: builtin:stapop", "disqualify"), ("B | Stap op: my designs/s p.toml", "forbid")):
            assert (f"| design {side} (hash {file_hash(stapop.text)}); rule options "
                    f"{option_text(stapop.resolved_options({'overshoot': given}))} |") in md
        assert "overshoot=disqualify" in md and "turn_cap=0" in md
    else:
        mb = load_design("millebornes")
        assert f"| design | Mille Bornes: builtin:millebornes (hash {file_hash(mb.text)}); rule options " in md
        assert option_text(mb.resolved_options({})) in md and "coup_fourre=true" in md
    played = int(re.search(r"\| games played \| (\d+) ", md).group(1))
    wall, speed = re.search(r"\| wall time \| ([0-9.]+) s, loading the kernels included \(([0-9,]+) (?:paired )?"
                            r"games/s\) \|", md).groups()
    assert played / (float(wall) + 0.005) - 1 <= float(speed.replace(",", "")) <= played / max(float(wall) - 0.005, 1e-9) + 1
    command = re.search(r"^\| reproduce \| (etappe compare .*) \|$", md, re.M).group(1)
    result = run(*shlex.split(command)[1:], "--out", "b")
    assert result.exit_code == 0, result.output
    assert md.split("## Sequential test")[1] == Path("b/report.md").read_text().split("## Sequential test")[1]


def test_simulate_refuses_parts_of_another_run(tmp_path):
    out = tmp_path / "run.parquet"
    ChunkedRun(out, {"seed": 1}).save(0, pd.DataFrame({"x": [1]}))
    result = run("simulate", "stapop", "--games", 10, "--out", out)
    assert result.exit_code != 0 and "different run" in result.stderr
    # a folder with no finished chunk (a command refused before its first chunk) holds nothing to keep
    empty = tmp_path / "empty.parquet"
    ChunkedRun(empty, {"seed": 1})
    assert run("simulate", "stapop", "--games", 10, "--out", empty).exit_code == 0


def test_simulate_never_overwrites_another_run(tmp_path):
    out = tmp_path / "run.parquet"
    assert run("simulate", "stapop", "--games", 20, "--seed", 1, "--out", out).exit_code == 0
    first, records = out.read_bytes(), pq.read_table(out).to_pandas()
    result = run("simulate", "stapop", "--games", 20, "--seed", 2, "--out", out)
    assert result.exit_code == 2 and "holds another run (seed 1, not 2)" in result.stderr
    assert out.read_bytes() == first
    # the same run again is written anew, with the same records
    assert run("simulate", "stapop", "--games", 20, "--seed", 1, "--out", out).exit_code == 0
    assert pq.read_table(out).to_pandas().equals(records)
    other = tmp_path / "notes.parquet"
    other.write_text("not a run")
    result = run("simulate", "stapop", "--games", 20, "--out", other)
    assert result.exit_code == 2 and "is not a run file written by etappe" in result.stderr
    assert other.read_text() == "not a run"


@pytest.mark.parametrize("args, message", [
    (("simulate", "stapop", "--players", 7), "not 7"),
    (("simulate", "millebornes", "--players", 5), "not 5"),
    (("simulate", "nosuchdeck"), "no such design file"),
    (("simulate", "stapop", "--policy", "clever"), "unknown policy"),
    (("simulate", "stapop", "--option", "overshoot=sometimes"), "overshoot"),
    (("simulate", "stapop", "--option", "colour=red"), "unknown rule option"),
    # a hand's turns are counted in 16 bits: 2**15 - 1 = 32767 at most
    (("simulate", "stapop", "--option", "turn_cap=4294967297"), "options.turn_cap: must be at most 32767"),
    (("simulate", "stapop", "--option", "turn_cap=99999999999999999999"), "options.turn_cap: must be at most 32767"),
    (("replay", "stapop", "--option", "turn_cap=32768"), "options.turn_cap: must be at most 32767, not 32768"),
    (("simulate", "stapop", "--seed", 2**64), "--seed"),
    (("simulate", "stapop", "--seed", -1), "--seed"),
    (("simulate", "stapop", "--games", 0), "--games"),
    (("simulate", "stapop", "--chunk-size", 0), "--chunk-size"),
    (("simulate", "stapop", "--threads", 10_000), "--threads must be 1 to"),
    (("compare", "stapop", "millebornes", "--threads", 10_000), "--threads must be 1 to"),
    (("simulate", "stapop", "--board", "b.toml"), "--board is for bremen only"),
    (("simulate", "bremen", "--seating", "rotate"), "--seating is for the race games"),
    # accepted before, while Tape l'étape rotated the seats all the same (its option rotate_seats)
    (("simulate", "etape", "--seating", "fixed"), "--seating is for the race games: Tape l'étape rotates seats by"),
    (("compare", "etape", "--option-b", "mode=endurance", "--seating", "fixed"), "--seating is for the race games"),
    (("compare", "stapop", "millebornes", "--games", 0), "--games"),
    (("replay", "stapop", "--game", 2**64), "--game"),
    (("replay", "stapop", "--game", -1), "--game"),
    (("report", "x.stages.parquet"), "no such run file"),
    (("moves", "stapop", "nothere.toml"), "nothere.toml: no such position file"),
    (("analyze", "stapop", "nothere.toml"), "nothere.toml: no such position file"),
])
def test_bad_input_gives_a_clear_error_and_nonzero_exit(args, message):
    result = run(*args)
    assert result.exit_code != 0
    assert message in result.stderr


def test_moves_lists_the_legal_moves(tmp_path):
    position = tmp_path / "p.toml"
    position.write_text("""
players = 2
on_turn = 0
stock = 40
hands = { "0" = ["km100", "km75", "roll", "flat_tire", "extra_tank", "km25", "km50"] }
[[sides]]
battle = "roll"
limit = "speed_limit"
[[sides]]
battle = "roll"
""")
    result = run("moves", "millebornes", position)
    assert result.exit_code == 0, result.stderr
    lines = set(result.stdout.split("\n"))
    # Under Speed Limit only 25 and 50; Roll is already on top; the flat tire
    # goes on the moving opponent; the safety may always be laid.
    assert {"play km25", "play km50", "play flat_tire on side 1", "play extra_tank"} <= lines
    assert "play km100" not in lines and "play km75" not in lines and "play roll" not in lines


def test_a_player_with_no_card_on_an_empty_stock_can_only_pass(tmp_path):
    # Rules page: "a player with no card passes; the hand ends when nobody holds a card".
    from etappe.kernels.race_design import DesignError, load_design
    from etappe.kernels.race_position import play_position_move, read_position_file

    position = tmp_path / "p.toml"
    text = """
players = 2
on_turn = 0
stock = 0
hands = { "0" = [], "1" = ["km25"] }
[[sides]]
battle = "roll"
[[sides]]
battle = "roll"
"""
    position.write_text(text)
    result = run("moves", "millebornes", position)
    assert result.exit_code == 0 and result.stdout.split() == ["pass"]
    assert run("moves", "millebornes", position, "--json").stdout.split() == ['[', '"pass"', ']']
    result = run("analyze", "millebornes", position)
    assert result.exit_code == 2 and "it can only pass" in " ".join(result.stderr.split())
    after, info = play_position_move(load_design("millebornes"), read_position_file(position), "pass")
    assert after["on_turn"] == info["next_seat"] == 1 and after["hands"]["1"] == ["km25"]
    with pytest.raises(DesignError, match="seat 1 holds cards"):
        play_position_move(load_design("millebornes"), after, "pass")
    position.write_text(text.replace('["km25"]', "[]"))
    result = run("moves", "millebornes", position)
    assert result.exit_code == 2 and "nobody holds a card, so the hand is over" in " ".join(result.stderr.split())


GOOD_POSITION = """
players = 2
on_turn = 0
stock = 40
hands = { "0" = ["km100", "km75", "roll", "flat_tire", "extra_tank", "km25", "km50"] }
[[sides]]
battle = "roll"
distance = { km100 = 2 }
[[sides]]
battle = "roll"
"""


@pytest.mark.parametrize("edit, field, problem", [
    (lambda t: t.replace("stock = 40", "stok = 40"), "stok", "unknown field"),
    (lambda t: t.replace('battle = "roll"\ndistance', 'battle = "roll"\nsafetys = []\ndistance'),
     "sides[0].safetys", "unknown field"),
    (lambda t: t.replace("km100 = 2", "km100 = -2"), "sides[0].distance.km100", "whole number >= 0"),
    (lambda t: t.replace("km100 = 2", "km200 = 2, km100 = 3"), "sides[0].distance", "completed the trip"),
    (lambda t: t.replace("km100 = 2", "km200 = 3"), "sides[0].distance.km200", "at most 2"),  # rules: two 200s
    (lambda t: t.replace('hands = { "0" = [', 'hands = [[').replace('"km50"] }', '"km50"]]'), "hands",
     "must be a table"),
    (lambda t: t.replace("stock = 40", 'stock = 40\nhand_sizes = { "1" = "six" }'), "hand_sizes.1", "whole number"),
    # Two players race 700 km, or 1000 after the extension (rules page), and the extension is called by a side
    (lambda t: t.replace("stock = 40", "stock = 40\ntrip = 650"), "trip", "race 700, or 1000 after the extension"),
    (lambda t: t.replace("stock = 40", "stock = 40\ntrip = 1000"), "extension_side",
     "missing: the trip is 1000, so a side called the extension; give that side (0..1)"),
    (lambda t: t.replace("stock = 40", "stock = 40\nextension_side = 1"), "extension_side",
     "1, but the trip is 700: a side calls the extension exactly when the trip is 1000; give trip = 1000"),
    # Mille Bornes takes no distance away: the side that called the extension shows at least 700 km
    (lambda t: t.replace("stock = 40", "stock = 40\ntrip = 1000\nextension_side = 1"), "extension_side",
     "1, but that side shows 0 km: only a side that reached the trip of 700 calls the extension"),
    (lambda t: t.replace("stock = 40", "stock = 40\ntrip = 40000"), "trip", "40000, but 2 players of millebornes"),
    (lambda t: t.replace("players = 2", "players = true"), "players", "missing or not a whole number"),
    (lambda t: t.replace("on_turn = 0", "on_turn = false"), "on_turn", "must be a seat 0..1, not false"),
    (lambda t: t.replace("on_turn = 0", "on_turn = 2026-12-07"), "on_turn",
     "must be a seat 0..1, not datetime.date(2026, 12, 7)"),
    (lambda t: t.replace('"km50"]', '["km50"]]'), "hands.0", "must be a card key (a string), not ['km50']"),
    (lambda t: t.replace('battle = "roll"', 'battle = ["roll"]', 1), "sides[0].battle", "must be a card key"),
    (lambda t: t.replace('"km50"]', '"Roll"]'), "hands.0", "no card 'Roll' in millebornes (did you mean 'roll'?)"),
    (lambda t: t.replace("stock = 40", 'stock = 40\nhand_sizes = { "\u00b9" = 6 }'), "hand_sizes.\u00b9",
     "not a seat 0..1"),
    # Six cards in hand, seven on turn after the draw, while the stock holds cards
    (lambda t: t.replace(', "km50"]', "]"), "hands.0", "6 cards, but a hand holds 7 on turn"),
    (lambda t: t.replace("stock = 40", 'stock = 40\nhand_sizes = { "1" = 5 }'), "hand_sizes.1",
     "5 cards, but a hand holds 6"),
    (lambda t: t.replace("stock = 40", 'stock = 40\nhand_sizes = { "1" = 7 }'), "hand_sizes.1", "at most 6"),
    # Right of Way protects against Speed Limit: laid, it clears one, so the two cannot lie together
    (lambda t: t + 'limit = "speed_limit"\nsafeties = ["right_of_way"]\n', "sides[1].safeties",
     "right_of_way protects against speed_limit"),
    # the design's player counts (Mille Bornes: 2, 3, 4, 6), named as a field of the position file
    (lambda t: t.replace("players = 2", "players = 5"), "players", "Mille Bornes is played by 2, 3, 4, 6 players"),
    # Mille Bornes starts with no limit (only Stap op's headwind is a starting limit)
    (lambda t: t + 'limit = "start"\n', "sides[1].limit", "no side of millebornes starts under the limit"),
])
def test_moves_refuses_a_bad_position_naming_the_field(tmp_path, edit, field, problem):
    position = tmp_path / "p.toml"
    position.write_text(GOOD_POSITION)
    assert run("moves", "millebornes", position).exit_code == 0
    position.write_text(edit(GOOD_POSITION))
    result = run("moves", "millebornes", position)
    assert result.exit_code == 2 and f"{field}:" in result.stderr and problem in result.stderr, result.output


def test_the_position_in_the_docs_is_valid(tmp_path):
    text = (Path(__file__).parent.parent / "docs" / "positions.md").read_text()
    position = tmp_path / "doc.toml"
    position.write_text(text.split("```toml\n")[1].split("```")[0])
    result = run("moves", "millebornes", position)
    assert result.exit_code == 0, result.stderr
    assert "play km100" in result.stdout.split("\n")  # 600 km: the 100 completes the 700


def test_replay_shows_the_recorded_game():
    result = run("replay", "stapop", "--players", 2, "--seed", 3, "--game", 4)
    assert result.exit_code == 0
    frame = RaceRun("stapop", 2, ["greedy"], 3).play(4, 1)
    row = frame.iloc[0]
    assert f"hand over after {row.turns} turns" in result.stdout
    assert f"side 0: {row.s0_distance} km" in result.stdout and f"side 1: {row.s1_distance} km" in result.stdout


def test_replay_of_a_run_file_plays_its_game_from_the_run_metadata(tmp_path, monkeypatch):
    out = tmp_path / "run.parquet"
    how = ("--players", 2, "--policy", "greedy,random", "--seating", "rotate", "--seed", 7)
    assert run("simulate", "millebornes", *how, "--games", 6, "--out", out).exit_code == 0
    result = run("replay", out, "--game", 3)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == run("replay", "millebornes", *how, "--game", 3).stdout
    # every hand as the run recorded it
    frame = pd.read_parquet(out)
    turns = [int(t) for t in re.findall(r"-- hand over after (\d+) turns", result.stdout)]
    assert turns == frame[frame["game"] == 3]["turns"].tolist()
    # what the file says is not given again, and a game the run does not have is refused
    result = run("replay", out, "--game", 3, "--seed", 1)
    assert result.exit_code == 2 and "--seed: the run file" in result.stderr
    result = run("replay", out, "--game", 6)
    assert result.exit_code == 2 and "the run has 6 games (0 to 5)" in result.stderr
    # code that plays games otherwise than the run's is pointed out
    monkeypatch.setattr("etappe.cli.race_cmds.package_version", lambda: "0.0.0+other")
    result = run("replay", out, "--game", 3)
    assert result.exit_code == 0 and "note: the run was played by etappe" in result.stderr


def test_replay_of_a_run_file_plays_the_design_it_holds_after_its_file_was_edited(tmp_path):
    design = tmp_path / "mine.toml"
    design.write_text(load_design("stapop").text, "utf-8")
    out = tmp_path / "run.parquet"
    assert run("simulate", design, "--players", 2, "--games", 3, "--out", out).exit_code == 0
    before = run("replay", out, "--game", 1)
    assert before.exit_code == 0, before.stderr
    design.write_text(load_design("stapop").text.replace("count = 14", "count = 15", 1), "utf-8")
    after = run("replay", out, "--game", 1)
    assert after.exit_code == 0 and after.stdout == before.stdout, after.stderr
    design.unlink()
    assert run("replay", out, "--game", 1).stdout == before.stdout


def test_replay_of_an_older_run_file_without_the_design_text_refuses_an_edited_design_file(tmp_path):
    design = tmp_path / "mine.toml"
    design.write_text(load_design("stapop").text, "utf-8")
    out = tmp_path / "run.parquet"
    assert run("simulate", design, "--players", 2, "--games", 3, "--out", out).exit_code == 0
    frame, meta = read_parquet(out)
    del meta["design_text"]  # as etappe wrote run files before it kept the text
    write_parquet(frame, out, meta)
    assert run("replay", out, "--game", 1).exit_code == 0
    design.write_text(load_design("stapop").text.replace("count = 14", "count = 15", 1), "utf-8")
    result = run("replay", out, "--game", 1)
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "changed since the run (cards[0].count 14, not 15; design_hash" in text, text


def test_replay_elsewhere_of_a_run_given_relative_paths(tmp_path, monkeypatch):
    made, elsewhere = tmp_path / "made", tmp_path / "elsewhere"
    made.mkdir(), elsewhere.mkdir()
    (made / "mine.toml").write_text(load_design("stapop").text, "utf-8")
    monkeypatch.chdir(made)
    assert run("simulate", "mine.toml", "--players", 2, "--games", 3, "--out", "run.parquet").exit_code == 0
    here = run("replay", "run.parquet", "--game", 1)
    monkeypatch.chdir(elsewhere)
    # the design is the run file's own
    assert run("replay", made / "run.parquet", "--game", 1).stdout == here.stdout
    # a policy is its file, read by the path the run was given (this run's metadata says a seat played
    # mine.py:choose, which is not in this folder; the file is named once for the two seats it plays)
    frame, meta = read_parquet(made / "run.parquet")
    meta["policies"][0] = meta["policies"][1] = {"name": "mine.py:choose", "family": "user", "params": {}}
    write_parquet(frame, elsewhere / "own.parquet", meta)
    result = run("replay", elsewhere / "own.parquet", "--game", 1)
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "user policy 'mine.py:choose': no file mine.py" in text, text
    assert "(mine.py: paths relative to the folder the run was made in; run the replay from there)" in text


def test_replay_refuses_metadata_whose_design_plays_other_cards_than_the_run(tmp_path):
    # a design built in Python, as a sweep's variant, keeps its file's text: a replay from that text
    # would play the design as written, not the run's game
    from etappe.analysis.race import replay, simulate
    from etappe.kernels.race_design import design_variant

    variant = design_variant(load_design("millebornes"), "cards.stop.count", 3)
    df = simulate(variant, players=2, games=2, seed=1, threads=1)
    # three stops, one of them out of the two-player deck (players.2.remove), where the file's five leave four
    with pytest.raises(ValueError, match=r"changed since the run \(cards\[\d+\]\.count 2, not 4; "):
        replay(df.attrs, game=0)


# (stapop, 2, 3, 0): side 0 completes the trip, the first side's number
@pytest.mark.parametrize("deck, players, seed, game", [("stapop", 2, 3, 4), ("stapop", 2, 3, 0), ("millebornes", 2, 1, 0),
                                                        ("millebornes", 4, 2, 3), ("touring", 3, 5, 1)])
def test_replay_ends_saying_who_won(deck, players, seed, game):
    result = run("replay", deck, "--players", players, "--seed", seed, "--game", game)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    last_hand = lines.index(next(line for line in reversed(lines) if line.startswith("-- hand over")))
    # The rules page: without scoring the first side to complete the trip wins (the replay gives no scores);
    # Mille Bornes plays hands until a side reaches 5000 and the highest total wins.
    if deck == "millebornes":
        sides = [re.fullmatch(r" +side (\d+): (\d+) \w+, hand score -?\d+(?: \(.*\))?, total (\d+)", line).groups()
                 for line in lines[last_hand + 1:-1]]
        totals = {int(s): int(total) for s, _, total in sides}
        best = max(totals.values())
        assert best >= 5000 and list(totals.values()).count(best) == 1
        winner = max(totals, key=totals.get)
        assert lines[-1] == f"== game over: side {winner} wins with {best} points"
    else:
        assert all(re.fullmatch(r" +side \d+: \d+ \w+", line) for line in lines[last_hand + 1:-1])
        trip = re.search(r"side (\d+) completes the trip", lines[last_hand]).group(1)
        assert lines[-1] == f"== game over: side {trip} wins: it completed the trip"
    record = RaceRun(deck, players, ["greedy"], seed).play(game, 1)
    assert f"side {record['winner_side'].iloc[-1]} wins" in lines[-1]


def test_replay_says_each_extension_decision():
    # The rules page: a side completing 700 km at 2 players may call the extension to 1000; docs/policies.md:
    # cautious never calls it, bold always does.
    cautious = run("replay", "millebornes", "--players", 2, "--policy", "cautious", "--seed", 1, "--game", 0).stdout
    lines = cautious.splitlines()
    ends = [i for i, line in enumerate(lines) if re.match(r"-- hand over after \d+ turns: side \d completes", line)]
    assert ends and "calls the extension" not in cautious
    for i in ends:
        side = re.search(r"side (\d)", lines[i]).group(1)
        assert lines[i - 1].strip() == f"side {side} completes the trip and does not extend"
    bold = run("replay", "millebornes", "--players", 2, "--policy", "bold", "--seed", 1, "--game", 0).stdout
    assert "does not extend" not in bold and "calls the extension to 1000 km" in bold


def test_replay_shows_a_seat_without_cards_passing():
    # The rules page, Mille Bornes: no reshuffle; once the stock is empty the hands are played out and "a player
    # with no card passes". Game 7 (3 players, seed 1) has one: the seat's cards are all gone by then.
    lines = run("replay", "millebornes", "--players", 3, "--seed", 1, "--game", 7).stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.endswith("has no card and passes"))
    seat = re.search(r"seat (\d) has no card", lines[at]).group(1)
    start = max(i for i in range(at) if lines[i].startswith("== hand "))
    held = 0
    for line in lines[start + 1:at]:  # after "== hand N: seat S plays first =="
        if line.strip().startswith(f"seat {seat} is dealt:"):
            held += len(line.split(":")[1].split())
        elif re.search(rf"seat {seat} draws ", line):
            held += 1
        elif re.search(rf"seat {seat} (plays|discards|COUP FOURRÉ) ", line):
            held -= 1
    assert held == 0 and "draws" not in " ".join(lines[start:at][-6:])  # and the stock is empty


def test_replay_of_a_capped_game_says_nobody_won():
    # Stap op: each player needs 16 stage cards, so no 4-player game ends within 30 turns.
    result = run("replay", "stapop", "--players", 4, "--seed", 1, "--game", 0, "--option", "turn_cap=30")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "== game over: no winner: the turn cap cut the last hand off"


@pytest.mark.parametrize("turn_after_empty", ["true", "false"])
def test_replay_says_who_plays_after_a_coup_fourre(turn_after_empty):
    # Rules page: after a coup fourré the player draws a replacement and takes the next
    # turn; on an empty stock there is no card to draw, and the option
    # coup_fourre_turn_after_stock_empty says whether the turn jump still happens.
    # Game 1 of seed 12 (6 players) has a coup fourré on an empty stock.
    result = run("replay", "millebornes", "--players", 6, "--seed", 12, "--game", 1,
                 "-o", f"coup_fourre_turn_after_stock_empty={turn_after_empty}")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    on_empty_stock = 0
    for i, line in enumerate(lines):
        if "COUP FOURRÉ" not in line:
            continue
        attacker = int(next(w for w in reversed(lines[:i]) if " plays " in w).split()[3])
        coup_seat = int(line.split()[1])
        following = next(w for w in lines[i + 1:] if w.startswith("t"))
        if "no card replaces the safety" in line:
            on_empty_stock += 1
            assert ("takes the next turn" in line) == (turn_after_empty == "true"), line
        expected = coup_seat if "takes the next turn" in line else (attacker + 1) % 6
        assert int(following.split()[3]) == expected, (line, following)
    assert on_empty_stock >= 1


def test_golden_playthrough():
    """A seeded game's play-by-play, diffed against the reviewed file.
    After an intended change: ETAPPE_REGENERATE_GOLDEN=1 pytest, then read the diff."""
    result = run("replay", "millebornes", "--players", 2, "--policy", "greedy,random", "--seed", 7, "--game", 2)
    assert result.exit_code == 0
    golden = GOLDEN / "millebornes_2p_seed7_game2.txt"
    if os.environ.get("ETAPPE_REGENERATE_GOLDEN"):
        golden.write_text(result.stdout)
    assert result.stdout == golden.read_text()


MB_KM = {"km25": 25, "km50": 50, "km75": 75, "km100": 100, "km200": 200}
MB_SAFETIES = {"driving_ace", "extra_tank", "puncture_proof", "right_of_way"}


def rescore_mille_bornes_replay(text, deck=101, sides=2):
    """Each hand's scores, worked out from a replay's play-by-play alone with
    the scoring table of the rules page (Parker shut-out): the replay's own
    score lines are not read."""
    scores = []
    for hand in text.split("== hand ")[1:]:
        km, safeties, coups, twohundreds = [0] * sides, [set() for _ in range(sides)], [0] * sides, [0] * sides
        cards_out = 0  # cards dealt and drawn: the stock ran out when the whole deck is out
        extension = trip_side = -1
        for line in hand.splitlines():
            words = line.split()
            if "is dealt:" in line:
                cards_out += len(words) - 4
            elif " draws " in line:
                cards_out += 1
            elif " plays " in line and line.startswith("t"):
                seat, card = int(words[3]), words[5]
                target = int(words[-1]) if " on side " in line else seat % sides
                km[target] += MB_KM.get(card, 0)
                twohundreds[target] += card == "km200"
                if card in MB_SAFETIES:
                    safeties[target].add(card)
            elif "COUP FOURRÉ" in line:
                side = int(words[1]) % sides
                safeties[side].add(words[5])
                coups[side] += 1
            elif "calls the extension" in line:
                extension = int(words[1])
            elif "completes the trip" in line and line.startswith("--"):
                trip_side = int(words[words.index("side") + 1])
        hand_scores = []
        for s in range(sides):
            trip = s == trip_side
            items = {"distance": km[s], "per_safety": 100 * len(safeties[s]),
                     "all_safeties": 300 * (len(safeties[s]) == 4), "coup_fourre": 300 * coups[s],
                     "trip_completed": 400 * trip, "delayed_action": 300 * (trip and cards_out == deck),
                     "safe_trip": 300 * (trip and twohundreds[s] == 0),
                     "shutout": 500 * (trip and all(km[o] == 0 for o in range(sides) if o != s)),
                     "extension": 200 * (extension >= 0 and (s == extension) == (trip_side == extension))}
            hand_scores.append({name: points for name, points in items.items() if points})
        scores.append(hand_scores)
    return scores


def printed_hand_scores(text):
    """Each side's hand score and its items ({"distance": 725, ...}) as a
    play-by-play prints them, hand after hand."""
    scores = []
    for line in text.splitlines():
        found = re.search(r"hand score (\d+)(?: \((.*)\))?,", line)
        if found:
            items = dict(item.rsplit(" ", 1) for item in found[2].split(" + ")) if found[2] else {}
            scores.append((int(found[1]), {name: int(points) for name, points in items.items()}))
    return scores


def test_golden_playthrough_scores_follow_the_rules_page():
    """The reviewed play-by-play's hand scores, item by item, are those of the
    rules page's scoring table, worked out from its moves by the scorer above."""
    text = (GOLDEN / "millebornes_2p_seed7_game2.txt").read_text()
    worked = [items for hand in rescore_mille_bornes_replay(text) for items in hand]
    assert len(worked) == 6
    # where the distance is the whole score the play-by-play shows no items
    expected = [(sum(items.values()), items if set(items) - {"distance"} else {}) for items in worked]
    assert printed_hand_scores(text) == expected


def test_replayed_scores_follow_the_rules_page():
    """Fresh games' hand scores, item by item, are the rules page's, worked
    out from their moves; between them the games score every item."""
    seen = set()
    for seed in (1, 2, 7):  # seed 7's game 0 scores every item
        result = run("replay", "millebornes", "--players", 2, "--seed", seed, "--game", 0)
        assert result.exit_code == 0
        worked = [items for hand in rescore_mille_bornes_replay(result.stdout) for items in hand]
        expected = [(sum(items.values()), items if set(items) - {"distance"} else {}) for items in worked]
        assert printed_hand_scores(result.stdout) == expected
        seen.update(name for items in worked for name in items)
    assert seen == {"distance", "per_safety", "all_safeties", "coup_fourre", "trip_completed", "delayed_action",
                    "safe_trip", "shutout", "extension"}


MB_REMEDY = {"gasoline": "out_of_gas", "spare_tire": "flat_tire", "repairs": "accident"}
MB_PROTECTS = {"extra_tank": {"out_of_gas"}, "puncture_proof": {"flat_tire"}, "driving_ace": {"accident"},
               "right_of_way": {"stop", "speed_limit"}}
MB_HAZARDS = {"out_of_gas", "flat_tire", "accident", "stop"}


def referee_mille_bornes_replay(text, deck=101):
    """Check every move of a two-player Mille Bornes play-by-play against the
    rules page (default options), keeping each hand, pile and tableau from
    the replay's own lines: the card was held; distance only on a Roll (or
    with Right of Way and no uncorrected hazard), 25 and 50 only under Speed
    Limit, at most two 200s, never beyond the trip; hazards only on an
    opponent showing Roll (or with Right of Way a remedy or nothing), never
    on a protected side; Speed Limit never on a limited or protected side;
    a remedy only on its hazard; a Roll only where one is needed; End of
    Limit only under a limit; the next turn to the same seat after a safety
    while the stock lasts, to the coup fourré's seat after one, else to the
    other seat. Returns the number of moves checked."""
    checked = 0
    for hand in text.split("== hand ")[1:]:
        lines = hand.splitlines()
        seat_to_move = int(lines[0].split("seat ")[1].split()[0])
        held = [Counter(), Counter()]
        top = [None, None]  # battle pile: None (empty), a card, or "cancelled" (a safety over its hazard)
        limited, safeties, km, twohundreds = [False, False], [set(), set()], [0, 0], [0, 0]
        trip, stock = 700, deck
        last_play = None  # (seat, card, stock when played) of the last play, for who moves next
        for line in lines[1:]:
            words = line.split()
            if "is dealt:" in line:
                held[int(words[1])].update(words[4:])
                stock -= len(words) - 4
            elif "to replace the safety" in line:
                held[int(words[1])][words[3]] += 1
                stock -= 1
            elif " draws " in line:
                seat = int(words[3])
                if last_play is not None:
                    played_by, card, stock_then = last_play
                    extra = card in MB_PROTECTS and stock_then > 0
                    assert seat == (played_by if extra else 1 - played_by), line
                assert seat == seat_to_move or last_play is not None, line
                held[seat][words[5]] += 1
                stock -= 1
                last_play = None
            elif " plays " in line or " discards " in line:
                seat, card = int(words[3]), words[5]
                assert held[seat][card] > 0, f"{line}: not held"
                held[seat][card] -= 1
                checked += 1
                if " discards " in line:
                    last_play = (seat, None, stock)
                    continue
                last_play = (seat, card, stock)
                side = int(words[-1]) if " on side " in line else seat
                own, row = side == seat, "right_of_way" in safeties[side]
                if card in MB_KM:
                    moving = top[side] == "roll" or (row and top[side] not in MB_HAZARDS)
                    assert own and moving, line
                    assert not (limited[side] and MB_KM[card] > 50), line
                    assert twohundreds[side] < 2 or card != "km200", line
                    assert km[side] + MB_KM[card] <= trip, line
                    km[side] += MB_KM[card]
                    twohundreds[side] += card == "km200"
                elif card in MB_HAZARDS:
                    shows = top[side] == "roll" or (row and top[side] not in MB_HAZARDS)
                    assert not own and shows and not any(card in MB_PROTECTS[s] for s in safeties[side]), line
                    top[side] = card
                elif card == "speed_limit":
                    assert not own and not limited[side] and not row, line
                    limited[side] = True
                elif card in MB_REMEDY:
                    assert own and top[side] == MB_REMEDY[card], line
                    top[side] = card
                elif card == "roll":
                    assert own and not row and top[side] in (None, "cancelled", "stop", *MB_REMEDY), line
                    top[side] = "roll"
                elif card == "end_of_limit":
                    assert own and limited[side], line
                    limited[side] = False
                else:  # a safety
                    assert own and card in MB_PROTECTS, line
                    safeties[side].add(card)
                    if top[side] in MB_PROTECTS[card]:
                        top[side] = "cancelled"  # option roll_after_safety: a Roll is still needed
                    limited[side] = limited[side] and "speed_limit" not in MB_PROTECTS[card]
            elif "COUP FOURRÉ" in line:
                seat, safety, hazard = int(words[1]), words[5], words[7].rstrip(";")
                assert held[seat][safety] > 0 and hazard in MB_PROTECTS[safety], line
                held[seat][safety] -= 1
                side = seat
                safeties[side].add(safety)
                if hazard == "speed_limit":
                    limited[side] = False
                else:
                    top[side] = "cancelled"
                last_play = (1 - seat, None, 0)  # the coup's seat takes the next turn
            elif "calls the extension" in line:
                assert km[int(words[1])] == trip == 700, line
                trip = int(words[-2])
            elif "has no card and passes" in line:
                assert stock == 0 and sum(held[int(words[1])].values()) == 0, line
                last_play = None
    return checked


def test_replayed_moves_follow_the_rules_page():
    """The reviewed golden play-by-play and fresh games of random play (which
    tries every kind of move) are legal move by move under the referee."""
    texts = [(GOLDEN / "millebornes_2p_seed7_game2.txt").read_text()]
    for seed in (1, 4, 5):
        result = run("replay", "millebornes", "--players", 2, "--policy", "random", "--seed", seed, "--game", 0)
        assert result.exit_code == 0
        texts.append(result.stdout)
    for text in texts:
        turns = sum(int(n) for n in re.findall(r"hand over after (\d+) turns", text))
        assert referee_mille_bornes_replay(text) == turns > 200  # every move of every hand checked


# Both sides need one stage card; only laying the 10 km now is a sure win.
KM10_WINS_POSITION = """
players = 2
on_turn = 0
stock = 30
hands = { "0" = ["km10", "km5", "go", "crossing", "tailwind", "km6"] }
[[sides]]
battle = "go"
limit = "tailwind"
distance = { km5 = 8, km6 = 4, km8 = 2, km10 = 1 }
[[sides]]
battle = "go"
limit = "tailwind"
distance = { km5 = 7, km6 = 4, km8 = 2, km10 = 2 }
"""


def test_analyze_plays_at_least_one_playout(tmp_path):
    position = tmp_path / "p.toml"
    position.write_text(KM10_WINS_POSITION)
    result = run("analyze", "stapop", position, "--playouts", 1)  # the fewest
    assert result.exit_code == 0
    # one playout a move: Wilson's interval of 1 of 1 is [0.2065, 1] and of 0 of 1 [0, 0.7935], so every
    # other move reaches the best one's interval, and the note says these playouts cannot tell them apart
    moves = [line for line in result.stdout.split("\n") if line.startswith("│")]
    assert len(moves) > 2 and all(("0.207 - 1.000" in m) or ("0.000 - 0.793" in m) for m in moves)
    assert (f"{len(moves) - 1} other moves reach the best move's interval: these playouts do not tell them apart"
            in " ".join(result.stdout.split()))
    result = run("analyze", "stapop", position, "--playouts", 0)
    assert result.exit_code == 2 and "--playouts" in result.stderr and "greater than or equal to 1" in result.stderr


def test_analyze_prefers_the_winning_card(tmp_path):
    position = tmp_path / "p.toml"
    position.write_text(KM10_WINS_POSITION)
    result = run("analyze", "stapop", position, "--playouts", 40)
    assert result.exit_code == 0, result.stderr
    first_row = next(line for line in result.stdout.split("\n") if line.startswith("│"))
    assert "play km10" in first_row and "1.000" in first_row
    second_row = [line for line in result.stdout.split("\n") if line.startswith("│")][1]
    assert "1.000" not in second_row
    # 40 wins of 40: Wilson's low end 40 / (40 + 1.96^2) = 0.912; the note counts the moves whose printed
    # interval reaches it
    assert "0.912 - 1.000" in first_row
    highs = [float(line.split("│")[3].split(" - ")[1]) for line in result.stdout.split("\n") if line.startswith("│")]
    near = sum(high >= 0.912 for high in highs[1:])
    said = " ".join(result.stdout.split())
    assert (f"{near} other move{'s' if near > 1 else ''} reach{'es' if near == 1 else ''} the best move's interval"
            in said) if near else "the best move's interval" not in said


def test_analyze_in_batches_plays_the_deals_of_one_call():
    """analyze calls the kernel in batches for its progress bar; the deals
    must be those one call for every playout makes, whatever the batch."""
    import numpy as np

    from etappe.kernels import race as K
    from etappe.kernels.race_design import load_design
    from etappe.kernels.race_policies import parse_policy
    from etappe.kernels.race_position import ANALYZE_BATCH, analyze_position, position_in_play

    design = load_design("stapop")
    position = {"players": 2, "on_turn": 0, "stock": 30,
                "hands": {"0": ["km10", "km5", "go", "crossing", "tailwind", "km6"]},
                "sides": [{"battle": "go", "distance": {"km5": 3}}, {"battle": "go", "distance": {"km6": 2}}]}
    playouts = 2 * ANALYZE_BATCH + 37
    steps = []
    rows = analyze_position(design, position, playouts, seed=5, progress=steps.append)
    assert sum(steps) == playouts and len(steps) == 3

    state, ct, rules, seat = position_in_play(design, position, "position", None, 5)
    moves = np.empty(K.MAX_MOVES, np.int32)
    n = K.legal_moves(state, ct, rules, seat, moves)
    params = np.array(parse_policy("greedy").params, np.float64)
    params[K.P_HORIZON] = 0
    sums = [np.zeros(n) for _ in range(4)]
    unknown = state[K.DISCARD_AT:K.DISCARD_AT + K.MAX_TYPES].copy()  # the position lists no discard
    K.evaluate_moves(state, ct, rules, seat, moves, n, params, playouts, unknown, np.uint64(6), 0, True, *sums)
    assert [row["wins"] for row in rows] == [int(round(w)) for w in sums[0]]


def test_interrupted_compare_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    out = tmp_path / "cmp"
    args = ("compare", "stapop", "millebornes", "--games", 300, "--chunk-size", 100, "--seed", 2, "--out", out)
    # Interrupt the run during its second chunk pair ...
    real_play = RaceRun.play
    calls = interrupt_play_after(monkeypatch, 2)
    assert run(*args).exit_code != 0
    assert (out / ".compare-checkpoint.pkl").exists() and not (out / "report.md").exists()
    # ... then run it again, in chunks of another size (an audit's resume without its --chunk-size was
    # refused as "a different run", and only removing the checkpoint let it go on): the first chunk pair
    # is not played again.
    calls["n"] = 0
    monkeypatch.setattr(RaceRun, "play", lambda self, start, count: (calls.__setitem__("n", calls["n"] + 1),
                                                                      real_play(self, start, count))[1])
    result = run(*args[:6], 50, *args[7:])
    assert result.exit_code == 0, result.stderr
    assert calls["n"] == 8  # the 200 games left, in four chunk pairs of 50
    # on one line however long the path (soft-wrapped), so that it reads and copies whole
    said = f"resuming the run at {out}: 100 of 300 games per design already played"
    assert len(said) > 80 and any(said in line for line in result.stderr.splitlines()), result.stderr
    assert not (out / ".compare-checkpoint.pkl").exists()
    resumed = (out / "report.md").read_text()
    # The same comparison played in one go gives the same report numbers.
    monkeypatch.setattr(RaceRun, "play", real_play)
    fresh = tmp_path / "fresh"
    assert run(*args[:-1], fresh).exit_code == 0
    def strip(text):
        return [line for line in text.splitlines() if "wall time" not in line and "games per second" not in line]

    assert strip(resumed) == strip((fresh / "report.md").read_text())


def test_report_of_two_run_files_is_the_comparison_report(tmp_path):
    # Two designs simulated apart (on two machines, say) and compared from their files: the
    # report `etappe compare` writes when it plays them itself, on the same seeds.
    args = ("--players", 2, "--games", 150, "--seed", 4)
    for deck in ("stapop", "millebornes"):
        assert run("simulate", deck, *args, "--out", tmp_path / f"{deck}.parquet").exit_code == 0
    result = run("report", tmp_path / "stapop.parquet", tmp_path / "millebornes.parquet", "--out", tmp_path / "two")
    assert result.exit_code == 0, result.stderr
    assert run("compare", "stapop", "millebornes", *args, "--out", tmp_path / "cmp").exit_code == 0

    def strip(text):
        return [line for line in text.splitlines() if "wall time" not in line and "games per second" not in line]

    two = (tmp_path / "two" / "report.md").read_text()
    assert "Paired on common random numbers" in two and "150 games paired" in two
    assert strip(two) == strip((tmp_path / "cmp" / "report.md").read_text())


def test_report_of_two_runs_on_other_seeds_warns_on_the_terminal_too(tmp_path):
    # the report says the runs are not on common random numbers; the terminal did not
    for deck, seed in (("stapop", 1), ("millebornes", 2)):
        assert run("simulate", deck, "--players", 2, "--games", 20, "--seed", seed,
                   "--out", tmp_path / f"{deck}.parquet").exit_code == 0
    result = run("report", tmp_path / "stapop.parquet", tmp_path / "millebornes.parquet", "--out", tmp_path / "r")
    assert result.exit_code == 0, result.stderr
    assert (f"warning: {tmp_path / 'stapop.parquet'} and {tmp_path / 'millebornes.parquet'} have different root "
            "seeds (1 vs 2): game i of each is independent") in " ".join(result.stderr.split())
    assert "different root seeds" in (tmp_path / "r" / "report.md").read_text()


def test_report_of_two_run_files_refuses_runs_that_do_not_pair(tmp_path):
    files = {}
    for name, deck, extra in (("a", "stapop", ()), ("three", "stapop", ("--players", 3)),
                              ("random", "millebornes", ("--policy", "random"))):
        files[name] = tmp_path / f"{name}.parquet"
        assert run("simulate", deck, "--games", 20, "--seed", 1, *extra, "--out", files[name]).exit_code == 0
    files["etape"] = tmp_path / "etape.parquet"
    assert run("simulate", "etape", "--games", 2, "--out", files["etape"]).exit_code == 0
    for b, message in (("three", "differ in players 4 against 3"),
                       ("random", 'differ in policies "greedy,greedy,greedy,greedy" against "random,random,random,random"'),
                       ("a", "same design under the same rule options and seed"),
                       ("etape", "the comparison report is of two runs of the same game")):
        result = run("report", files["a"], files[b], "--out", tmp_path / "cmp")
        assert result.exit_code == 2 and message in " ".join(result.stderr.split()), (b, result.stderr)
    assert not (tmp_path / "cmp").exists()
    result = run("report", files["a"], tmp_path / "missing.parquet")
    assert result.exit_code == 2 and "missing.parquet: no such run file" in result.stderr
    # two versions of one policy file: the names read the same ("rp.py:f,greedy" against "rp.py:f,greedy"),
    # so what differs is said field by field
    for name, source in (("v1", "aaaa"), ("v2", "bbbb")):
        records, meta = read_parquet(files["a"])
        meta["policies"][0] = {**meta["policies"][0], "source_hash": source}
        write_parquet(records, tmp_path / f"{name}.parquet", {**meta, "design_hash": name})
    result = run("report", tmp_path / "v1.parquet", tmp_path / "v2.parquet", "--out", tmp_path / "cmp")
    assert result.exit_code == 2 and 'differ in policies[0].source_hash "aaaa" against "bbbb"' in " ".join(
        result.stderr.split()), result.stderr


def test_a_refused_command_leaves_no_output_folder(tmp_path):
    # Mille Bornes has no rules for 5 players (rules page): refused, and --out is not created
    out = tmp_path / "deep" / "cmp"
    result = run("compare", "stapop", "millebornes", "--players", 5, "--games", 10, "--out", out)
    assert result.exit_code == 2 and "not 5" in result.stderr
    assert not (tmp_path / "deep").exists()
    result = run("tournament", "stapop", "--policies", "greedy,foo", "--games", 10, "--out", out)
    assert result.exit_code == 2 and "unknown policy 'foo'" in result.stderr
    assert not (tmp_path / "deep").exists()
    # refused before any game: the error alone, no empty progress bar before it
    result = run("compare", "stapop", "millebornes", "--policy", "foo", "--games", 10, "--out", out)
    assert result.exit_code == 2 and result.stderr.startswith("error: unknown policy 'foo'")


def test_a_run_without_any_winner_prints_no_nan(tmp_path):
    out = tmp_path / "capped.parquet"
    result = run("simulate", "stapop", "--players", 2, "--games", 20, "--option", "turn_cap=5", "--out", out)
    assert result.exit_code == 0, result.stderr
    assert "nan" not in result.stdout and "no winner 20, turn cap hit 20" in result.stdout
    assert run("report", out, "--out", tmp_path / "rep").exit_code == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "No game had a winner" in md and "nan" not in md.lower()
    # what it says instead: how the games ended, every one at the turn cap
    assert "| games that hit the cap (stall) | 20 | 20 | 1 |" in md.split("## Outcomes")[1].split("## ")[0]


def test_tournament_report_matrix_cells_carry_their_intervals(tmp_path):
    # the report says each cell of the skill matrix has its 95 % Wilson interval (docs/tournaments.md):
    # the Markdown table must show it, around the score, and s(i, j) + s(j, i) = 1
    out = tmp_path / "tour"
    result = run("tournament", "stapop", "--policies", "random,greedy", "--players", 2, "--games", 40,
                 "--seed", 1, "--bootstrap", 0, "--out", out)
    assert result.exit_code == 0, result.output
    text = (out / "report.md").read_text()
    table = text.split("**Score of row vs column (95 % Wilson interval)**")[1].split("\n\n")[1]
    cells = {}
    for line in table.splitlines()[2:]:
        policy, *row = [c.strip() for c in line.strip("|").split("|")]
        cells[policy] = row
    scores = {}
    for policy, j in (("random", 1), ("greedy", 0)):
        m = re.fullmatch(r"([\d.]+) % \[([\d.]+), ([\d.]+)\]", cells[policy][j])
        assert m, cells[policy][j]
        score, low, high = map(float, m.groups())
        assert low <= score <= high
        scores[policy] = score
    assert scores["random"] + scores["greedy"] == pytest.approx(100.0, abs=0.11)


def test_sweep_glance_quotes_the_as_written_number_each_difference_is_from(tmp_path):
    # docs/designs.md: each value is compared with the design as written game by game; a game that
    # measures nothing on one side (no winner: "won by the side least hit by hazards") pairs with
    # nothing, so each value's difference must be that of the two numbers the line gives for it
    out = tmp_path / "sweep"
    result = run("sweep", "millebornes", "--set", "cards.stop.count=2,8", "--players", 2, "--games", 300,
                 "--seed", 1, "--out", out)
    assert result.exit_code == 0, result.output
    glance = (out / "report.md").read_text().split("## At a glance")[1].split("![")[0]
    number = r"([-+]?[\d.]+(?:e-?\d+)?)"
    checked = 0
    for line in glance.splitlines():
        head = re.match(rf"[^:]+: as written {number}", line)
        if not head:
            continue
        for part in line.split("; ")[1:]:
            m = re.match(rf"\S+: {number}(?: against {number} as written on the same \d+ games)? \({number} \[", part)
            if not m:
                continue
            variant, own, diff = m.groups()
            written = float(own if own is not None else head.group(1))
            assert float(variant) - written == pytest.approx(float(diff), abs=0.002 * max(abs(written), 1e-3)), part
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("game, counts", [("stapop", r"1 game, 1 hand, "), ("bremen", r"1 game, [01] without a winner"),
                                          ("etape", r"1 race, [01] with a shared first place; of the 4 stages ")])
def test_a_one_game_run_is_counted_in_the_singular(tmp_path, game, counts):
    out = tmp_path / "run.parquet"
    result = run("simulate", game, "--games", 1, "--out", out)
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stdout.split())
    noun = "race" if game == "etape" else "game"
    assert f"wrote {out} (1 {noun})" in said
    assert re.search(counts, said), said
    assert not re.search(rf"(?<![\d,.])1 {noun}s\b", said), said


@pytest.mark.parametrize("args", [("compare", "stapop", "millebornes"), ("simulate", "bremen"), ("simulate", "etape"),
                                  ("simulate", "millebornes"), ("bremen", "sweep")])
def test_one_game_reports_count_it_in_the_singular(tmp_path, args):
    out = tmp_path / "run.parquet"
    if args[0] == "compare":
        assert run(*args, "--games", 1, "--out", tmp_path / "rep").exit_code == 0
        md = (tmp_path / "rep" / "report.md").read_text()
        assert "game index; 1 game paired." in md
    elif args[0] == "bremen":  # a sweep of the reconstruction alone
        assert run(*args, "--games", 1, "--players", 2, "--roads", "", "--middles", "", "--road-links", "",
                   "--house-links", "", "--out", tmp_path / "rep").exit_code == 0
        md = (tmp_path / "rep" / "report.md").read_text()
        assert md.startswith("# Bremer Stadtmusikanten board sweep: 1 board, 1 game each")
    else:
        players = 3 if args[1] == "etape" else 2
        assert run(*args, "--games", 1, "--players", players, "--out", out).exit_code == 0
        assert run("report", out, "--out", tmp_path / "rep").exit_code == 0
        md = (tmp_path / "rep" / "report.md").read_text()
        if args[1] == "bremen":
            assert re.search(r"over [01] games?\b", md)
    one = re.findall(r".{0,60}(?<![\d,.])1 (?:games|races|stages|boards|turns)\b.{0,20}", md)
    assert not one, one


@pytest.mark.parametrize("deck, args, policy", [
    ("my.toml", ["--players", 4, "--policy", "greedy:attack=3,random", "--option", "overshoot=disqualify",
                 "--seating", "rotate"], "--policy greedy:attack=3,random "),
    ("millebornes", ["--players", 2], "--policy greedy ")])
def test_the_report_reproduce_line_plays_the_same_run_again(tmp_path, monkeypatch, deck, args, policy):
    # a balance report names the command that replays its run (reports.md: everything to reproduce it);
    # run as written, it gives the same records
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.toml").write_text((Path(__file__).parents[1] / "kernels" / "designs" / "stapop.toml").read_text())
    assert run("simulate", deck, *args, "--games", 30, "--seed", 9, "--out", "a.parquet").exit_code == 0
    assert run("report", "a.parquet", "--out", "rep").exit_code == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    command = re.search(r"^\| reproduce \| (etappe simulate .*) \|$", md, re.M).group(1)
    assert policy in command + " "  # one policy for all seats is given once
    # the options that change something in the design: Stap op has no safety and plays one hand, so
    # neither coups fourrés nor scoring options; Mille Bornes plays every one
    given = sorted(word.split("=")[0] for word in re.findall(r"--option (\S+)", command))
    assert given == (["discard", "limit_on_limit", "overshoot", "turn_cap"] if deck == "my.toml" else sorted(DEFAULT_OPTIONS))
    unused = re.search(r"^\| rule options that change nothing here \| (.*) \|$", md, re.M).group(1)
    assert ("coup_fourre, coup_fourre_turn_after_stock_empty (no safety protects from an attack)" in unused) == (deck == "my.toml")
    assert deck == "my.toml" or unused == "none"  # Mille Bornes at 2 players plays every option
    result = run(*shlex.split(command)[1:], "--out", "b.parquet")
    assert result.exit_code == 0, result.output
    again, first = pd.read_parquet("b.parquet"), pd.read_parquet("a.parquet")
    pd.testing.assert_frame_equal(again, first)
    # the design file named may change: the report says how to get the one played from the run file
    played_row = re.compile(r"^\| design as played \| kept in the run file: (.*) \|$", re.M)
    show = "etappe decks show a.parquet --toml"
    played = run(*shlex.split(show)[1:])
    assert played.exit_code == 0 and played.output == load_design(deck).text
    if deck == "millebornes":  # a built-in: the package version names it
        assert played_row.search(md).group(1) == show
        return
    again = f"{show} > played.toml, then the reproduce command with played.toml in place of my.toml, plays the run again"
    assert played_row.search(md).group(1) == again
    # edited after the run: the report says so, and the design kept in the run plays the run again
    edited = load_design(deck).text.replace("count = 14", "count = 16", 1)
    Path("my.toml").write_text(edited)
    assert run("report", "a.parquet", "--out", "rep").exit_code == 0
    row = played_row.search((tmp_path / "rep" / "report.md").read_text()).group(1)
    assert row == f"my.toml has changed since the run (now hash {file_hash(edited)}); {again}"
    Path("played.toml").write_text(played.output)
    result = run(*shlex.split(command.replace(" my.toml ", " played.toml "))[1:], "--out", "c.parquet")
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_parquet("c.parquet"), first)
    Path("my.toml").unlink()
    assert run("report", "a.parquet", "--out", "rep").exit_code == 0
    row = played_row.search((tmp_path / "rep" / "report.md").read_text()).group(1)
    assert row == f"my.toml is not here; {again}"


@pytest.mark.parametrize("decks, args", [
    (["my designs/s p.toml", "millebornes"], ["--players", 4, "--policy", "greedy:attack=3,random",
                                              "--option", "overshoot=disqualify", "--seating", "rotate"]),
    (["millebornes"], ["--option-b", "roll_after_safety=false", "--option", "shutout=fr"]),
    (["stapop", "my designs/s p.toml"], ["--option-b", "overshoot=disqualify"])])
def test_the_comparison_report_names_the_compare_command_that_makes_it_again(tmp_path, monkeypatch, decks, args):
    # reports.md: a report holds everything needed to reproduce it; run as written, the command gives the
    # same paired differences
    import shlex

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my designs").mkdir()
    (tmp_path / "my designs" / "s p.toml").write_text(
        (Path(__file__).parents[1] / "kernels" / "designs" / "stapop.toml").read_text())
    assert run("compare", *decks, *args, "--games", 40, "--seed", 5, "--out", "a").exit_code == 0
    md = Path("a/report.md").read_text()
    # in the Headline section, where a reader starts
    head = md.split("## Paired differences")[0]
    command = re.search(r"^Reproduce the comparison: `(etappe compare .*)`\.$", head, re.M).group(1)
    assert ("--seating rotate" in command) == ("rotate" in args)
    assert ("--option-b roll_after_safety=false" in command) == ("roll_after_safety=false" in args)
    assert "--option-b shutout" not in command  # an option both designs play is given once, for both
    # options that change nothing in either design are left out: Stap op has no safety, no scoring table
    assert ("--option coup_fourre=true" in command) == ("millebornes" in decks)
    result = run(*shlex.split(command)[1:], "--out", "b")
    assert result.exit_code == 0, result.output
    paired = [text.split("## Paired differences")[1].split("## Runs")[0] for text in (md, Path("b/report.md").read_text())]
    assert paired[0] == paired[1]


def test_a_comparison_of_runs_no_compare_could_play_names_report(tmp_path, monkeypatch):
    # `etappe compare` plays as many games of both designs; runs of 20 and 30 games are compared by `report`
    monkeypatch.chdir(tmp_path)
    assert run("simulate", "stapop", "--players", 2, "--games", 20, "--seed", 2, "--out", "a.parquet").exit_code == 0
    assert run("simulate", "millebornes", "--players", 2, "--games", 30, "--seed", 2, "--out", "b.parquet").exit_code == 0
    assert run("report", "a.parquet", "b.parquet", "--out", "rep").exit_code == 0
    md = Path("rep/report.md").read_text()
    assert ("Reproduce the comparison: `etappe report A.parquet B.parquet` of the two runs that the commands "
            "of the Runs section write (with `--out`).") in md.split("## Paired differences")[0]  # at the top


@pytest.mark.parametrize("game, args", [
    ("bremen", ["--players", 3, "--policy", "greedy:knock=3,random,greedy", "--option", "target=8"]),
    ("bremen", ["--board", "ring.toml"]),
    ("etape", ["--players", 4, "--policy", "blocker:block=5,random", "--option", "crevaison_carry=false"])])
def test_the_bremen_and_etape_reports_reproduce_line_plays_the_same_run_again(tmp_path, monkeypatch, game, args):
    import shlex

    from etappe.kernels.bremen_board import ring_board

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ring.toml").write_text(ring_board(road=16, middle=12, inner=8, road_links=3, middle_links=0,
                                                   house_links=1, name="ring"))
    assert run("simulate", game, *args, "--games", 12, "--seed", 9, "--out", "a.parquet").exit_code == 0
    assert run("report", "a.parquet", "--out", "rep").exit_code == 0
    line = re.search(r"^\| reproduce \| (etappe simulate .*) \|$", (tmp_path / "rep" / "report.md").read_text(), re.M)
    assert ("--board" in line.group(1)) == ("--board" in args)  # the default board goes without saying
    result = run(*shlex.split(line.group(1))[1:], "--out", "b.parquet")
    assert result.exit_code == 0, result.output
    pd.testing.assert_frame_equal(pd.read_parquet("b.parquet"), pd.read_parquet("a.parquet"))
    if game == "etape":
        pd.testing.assert_frame_equal(pd.read_parquet("b.stages.parquet"), pd.read_parquet("a.stages.parquet"))


def test_simulate_warns_when_games_hit_the_turn_cap(tmp_path):
    # the standard: a game that cannot end is cut off by the cap and reported; every game capped is a
    # design (or a cap) to look at, so it is said on stderr, not only counted in the last line
    every = run("simulate", "stapop", "--games", 20, "--seed", 1, "-o", "turn_cap=10")
    assert every.exit_code == 0
    assert "\nwarning: all 20 games hit the turn cap of 10 turns a hand: none has a winner" in every.stderr
    # Stap op's greedy games run about 257 turns at four players: a cap of 257 cuts some of them short
    some = run("simulate", "stapop", "--games", 200, "--seed", 1, "-o", "turn_cap=257")
    capped = int(re.search(r"turn cap hit (\d+)", some.stdout)[1])
    assert 0 < capped < 200
    assert f"warning: {capped} of 200 games hit the turn cap of 257 turns a hand: no winner" in some.stderr
    assert "warning" not in run("simulate", "stapop", "--games", 20, "--seed", 1).stderr
    # a policy of your own that only discards never ends a game: the warning names it among the causes
    discards = tmp_path / "discards.py"
    discards.write_text("def f(state, card_table, rules, seat, moves, n_moves, params, key):\n"
                        "    for i in range(n_moves):\n        if moves[i] % 8 == 7:\n            return i\n"
                        "    return 0\n")
    stalled = run("simulate", "stapop", "--games", 5, "--seed", 1, "--policy", f"{discards}:f", "-o", "turn_cap=100")
    assert "to see where the games stall: a policy of your own may never lay distance;" in " ".join(stalled.stderr.split())


def test_analyze_says_what_winning_a_scored_hand_means_and_when_the_extension_is_asked(tmp_path):
    position = tmp_path / "p.toml"
    # two players race 700 km, or 1000 after the extension (rules page): at 600 km a 100 reaches the trip
    position.write_text(GOOD_POSITION.replace("km100 = 2", "km200 = 2, km100 = 2"))
    text = " ".join(run("analyze", "millebornes", position, "--playouts", 20, "--policy", "cautious").stdout.split())
    assert "P(best hand score)" in text and "a tie is no win" in text
    assert "valued with cautious's own answer to the extension (cautious never calls it)" in text
    text = " ".join(run("analyze", "millebornes", position, "--playouts", 20).stdout.split())
    assert "(greedy calls it when ahead of every other side by at least 100 km)" in text
    # at 200 km no card in hand reaches 700: the extension is not asked, and nothing is said of it
    position.write_text(GOOD_POSITION)
    assert "extension" not in run("analyze", "millebornes", position, "--playouts", 20).stdout
    # Stap op has no scoring table: a hand is won by completing the trip
    position.write_text(KM10_WINS_POSITION)
    assert "P(win the hand)" in run("analyze", "stapop", position, "--playouts", 20).stdout


def test_analyze_says_when_no_move_changes_the_outcome(tmp_path):
    # side 1 is 25 km short of the trip and holds a 25; seat 0, under a Stop with a 25, can only discard
    # it: nothing is left to draw, so side 1 completes the trip (and scores far more) in every playout
    position = tmp_path / "p.toml"
    position.write_text("""
players = 2
on_turn = 0
stock = 0
hands = { "0" = ["km25"], "1" = ["km25"] }
[[sides]]
battle = "stop"
[[sides]]
battle = "roll"
distance = { km200 = 2, km100 = 2, km75 = 1 }
""")
    text = " ".join(run("analyze", "millebornes", position, "--playouts", 10).stdout.split())
    assert "Every move loses the hand in every playout: by the chance to win it, no move is better" in text
    assert "reach the best move's interval" not in text


def test_replay_marks_extra_turns_and_the_stock_running_out():
    # the rules page, Mille Bornes: a safety laid on one's own turn gives an extra turn (none once the stock
    # is empty, the French rule and the default); no reshuffle: the hands are then played out
    safeties = {"driving_ace", "extra_tank", "puncture_proof", "right_of_way"}
    for game in range(6):
        lines = run("replay", "millebornes", "--players", 2, "--seed", 3, "--game", game).stdout.splitlines()
        stock_empty = False
        for i, line in enumerate(lines):
            if line.startswith("== hand "):
                stock_empty = False
            if "that was the stock's last card" in line:
                assert re.match(r"t\s*\d+ seat \d draws ", lines[i - 1]) and not stock_empty
                stock_empty = True
            play = re.match(r"t\s*\d+ seat (\d) plays (\w+)$", line)
            if play and play[2] in safeties:  # its own turn's safety: the next line is the same seat's turn
                following = lines[i + 1]
                assert (f"seat {play[1]} " in following) == (not stock_empty), (game, line, following)
                assert ("(extra turn)" in following) == (not stock_empty), (game, line, following)
            if "(extra turn)" in line:
                assert re.match(r"t\s*\d+ seat \d plays (\w+)$", lines[i - 1])[1] in safeties

