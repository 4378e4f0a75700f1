"""Refusals shared by every game: run files, chunks, checkpoints, out-of-range numbers, help texts; careless input
refused with a specific message, never silently read as something else (a default, an option that does nothing
here)."""
import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from etappe.analysis import runio
from etappe.analysis.runio import Checkpoint, ChunkedRun, write_parquet
from etappe.cli.main import app
from etappe.reports.document import Report

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_parts_of_another_run_are_refused_naming_what_differs(tmp_path):
    out = tmp_path / "run.parquet"
    ChunkedRun(out, {"seed": 1, "games": 10, "version": "0.1+aaa"}).save(0, pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError) as refused:
        ChunkedRun(out, {"seed": 2, "games": 10, "version": "0.1+aaa"})
    assert "seed 1, not 2" in str(refused.value) and "games" not in str(refused.value)
    # only the code changed: the message says so, since the command itself is the same
    with pytest.raises(ValueError) as refused:
        ChunkedRun(out, {"seed": 1, "games": 10, "version": "0.1+bbb"})
    assert 'version "0.1+aaa", not "0.1+bbb"' in str(refused.value) and "other etappe code" in str(refused.value)


def test_a_command_whose_run_another_command_finished_says_so_not_no_such_file(tmp_path):
    # the same simulate run twice on one --out: the first to finish joins the chunks and removes their
    # folder, and the other failed on its next chunk with "[Errno 2] No such file or directory"
    out, identity = tmp_path / "run.parquet", {"seed": 1, "games": 2}
    first, second = ChunkedRun(out, identity), ChunkedRun(out, identity)
    first.save(0, pd.DataFrame({"x": [0]}))
    first.save(1, pd.DataFrame({"x": [1]}))
    second.join(2, identity, drop=False)  # both joined before either removed the chunks: the same file
    first.join(2, identity)
    second.drop()  # was "[Errno 2] No such file or directory: 'run.parquet.parts'"
    finished_elsewhere = (r"run\.parquet: another command writing the same file finished this run while this one "
                          r"played, and removed its chunks: the file holds the whole run, nothing is lost$")
    for step in (lambda: second.save(1, pd.DataFrame({"x": [1]})), lambda: second.load(0),
                 lambda: second.join(2, identity)):
        with pytest.raises(OSError, match=finished_elsewhere):
            step()
    assert os.listdir(tmp_path) == ["run.parquet"]  # no chunks folder made anew by the save
    # the folder removed by hand, with no run file: said so, and how to go on
    out.unlink()
    third = ChunkedRun(out, identity)
    third.drop()
    with pytest.raises(OSError, match=r"run\.parquet\.parts: removed while this command played .* plays the "
                                      r"missing games again$"):
        third.save(0, pd.DataFrame({"x": [0]}))


def test_what_differs_names_the_policies_not_a_cut_short_json():
    greedy = {"name": "greedy", "family": "greedy", "params": {"attack": 1.75}}
    aggressive = {"name": "aggressive", "family": "greedy", "params": {"attack": 3.0}}
    builder = {"name": "builder", "family": "greedy", "params": {"attack": 0.5}}
    # another number of policies: by their names
    found = runio.differences({"policies": [greedy, aggressive, builder]}, {"policies": [greedy, aggressive]})
    assert found == ['policies "greedy,aggressive,builder", not "greedy,aggressive"']
    # as many: item by item, field by field
    found = runio.differences({"policies": [greedy, aggressive]}, {"policies": [greedy, builder]})
    assert found[0] == 'policies[1].name "aggressive", not "builder"'
    assert 'policies[1].params.attack 3.0, not 0.5' in found


def test_what_differs_keeps_the_difference_of_two_long_values_in_view():
    # Tape l'étape's policies are specs: two heuristics alike for their first 60 characters
    common = "heuristic:value=1,pick=1,crevaison=1,vitamine=1,vita_cards=2,braq_min="
    found = runio.differences({"policies": ["random", common + "8,balai=1"]},
                              {"policies": ["random", common + "7,balai=1"]})
    assert found == ['policies[1] ...ta_cards=2,braq_min=8,balai=1", not ...ta_cards=2,braq_min=7,balai=1"']  # 20 before
    # a value still too long from 20 characters before the difference is cut at the end too: 60 in all
    found = runio.differences({"spec": "a" * 70 + "X" + "b" * 100}, {"spec": "a" * 70 + "Y" + "b" * 100})
    assert found == ["spec {}, not {}".format(*("..." + "a" * 20 + c + "b" * 33 + "..." for c in "XY"))]
    assert all(len(side) == 60 for side in runio.brief_pair("a" * 70 + "X" + "b" * 100, "a" * 70 + "Y" + "b" * 100))
    # lists of other lengths too long to show whole (a seat's spec each): their lengths, not two cut lists
    # that showed neither ("policies ...ck=0,balai_w=0.5", ...")
    specs = ["heuristic:value=1,own=1,block=1,crev_cards=2,vita_cards=2,braq_min=8,pick=1,balai_w=0.5"]
    assert runio.differences({"policies": specs * 3}, {"policies": specs * 4}) == ["policies 3 entries, not 4"]
    # a nested table against a value: shown whole, not searched field by field
    assert runio.differences({"options": {"trip": 700}}, {"options": 5}) == ['options {"trip": 700}, not 5']
    # values that fit are shown whole
    assert runio.differences({"seed": 1}, {"seed": 2}) == ["seed 1, not 2"]


def test_a_file_where_the_parts_folder_goes_is_refused(tmp_path):
    (tmp_path / "run.parquet.parts").write_text("x")
    with pytest.raises(ValueError, match=r"run\.parquet\.parts exists and is not a folder"):
        ChunkedRun(tmp_path / "run.parquet", {"seed": 1})


def test_checkpoints_damaged_or_of_another_run_are_refused_by_name(tmp_path):
    path = tmp_path / ".compare-checkpoint.pkl"
    for junk in (b"junk\n", b"garbage\n", b""):
        path.write_bytes(junk)
        with pytest.raises(ValueError, match=r"\.compare-checkpoint\.pkl: not a checkpoint etappe can read"):
            Checkpoint(path, {"seed": 1}).load()
    Checkpoint(path, {"a": {"seed": 1, "games": 5}, "chunk_size": 10}).save({"done": 1})
    with pytest.raises(ValueError, match=r"belongs to a different run \(a\.seed 1, not 2\)"):
        Checkpoint(path, {"a": {"seed": 2, "games": 5}, "chunk_size": 10}).load()
    assert Checkpoint(path, {"a": {"seed": 1, "games": 5}, "chunk_size": 10}).load() == {"done": 1}


def test_a_failed_write_names_the_file_and_leaves_no_partial_file(tmp_path, monkeypatch):
    def disk_full(table, where, **kwargs):
        Path(where).write_bytes(b"PAR1 half a file")  # the disk fills part way through
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runio.pq, "write_table", disk_full)
    target = tmp_path / "chunk-000000.parquet"
    with pytest.raises(OSError, match=r"chunk-000000\.parquet: could not be written .*No space left"):
        write_parquet(pd.DataFrame({"x": [1]}), target, {"seed": 1})
    assert os.listdir(tmp_path) == []


def test_a_report_that_fills_the_disk_leaves_the_earlier_report_whole(tmp_path, monkeypatch):
    def report(words):
        document = Report("Run")
        document.section("Outcomes").text(words)
        return document

    report("the earlier run").write(tmp_path)
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    write_bytes = Path.write_bytes

    def disk_full_at_the_html(self, data):
        if ".html." in self.name:  # the last file of the set, after report.md is written
            raise OSError(28, "No space left on device")
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", disk_full_at_the_html)
    with pytest.raises(OSError, match=r"report\.html: could not be written .*No space left"):
        report("this run").write(tmp_path)
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before


def test_report_refuses_one_chunk_of_an_unfinished_run(tmp_path):
    out = tmp_path / "run.parquet"
    ChunkedRun(out, {"game": "race", "seed": 1}).save(0, pd.DataFrame({"x": [1]}))
    chunk = out.with_name("run.parquet.parts") / "chunk-000000.parquet"
    assert pq.read_table(chunk).num_rows == 1
    result = run("report", chunk, "--out", tmp_path / "rep")
    assert result.exit_code == 2
    assert "one chunk of an unfinished run" in result.stderr and "run.parquet" in result.stderr
    assert not (tmp_path / "rep").exists()
    # the run file itself, before the join: the chunks are named, and how to finish
    result = run("report", out, "--out", tmp_path / "rep")
    assert result.exit_code == 2 and "run.parquet.parts holds the chunks of an unfinished run" in result.stderr
    assert "same `etappe simulate` command finishes the run" in result.stderr
    assert not (tmp_path / "rep").exists()


def test_a_run_file_missing_a_record_column_is_refused_not_reported_as_zeros(tmp_path):
    from etappe.analysis.race import simulate

    frame = simulate("millebornes", players=2, games=20, seed=1)
    path = tmp_path / "damaged.parquet"
    write_parquet(frame.drop(columns="turns"), path, frame.attrs)
    result = run("report", path, "--out", tmp_path / "rep")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "no column 'turns', which every race run holds" in " ".join(result.stderr.split())
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("other", ["etape", "bremen"])
def test_a_race_design_compared_with_another_game_is_pointed_at_that_games_compare(other, tmp_path):
    result = run("compare", "stapop", other, "--games", 10, "--out", tmp_path / "cmp")
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(result.stderr.split())
    assert f"two variants of {other}: `etappe compare {other} --option-b NAME=VALUE`" in said
    assert "Python API" not in said


def test_stages_file_names_are_kept_for_tape_l_etape(tmp_path):
    result = run("simulate", "stapop", "--games", 10, "--out", tmp_path / "mine.stages.parquet")
    assert result.exit_code == 2 and "stages files beside Tape l'étape runs" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_folder_given_as_the_design_is_named(tmp_path):
    result = run("simulate", tmp_path, "--games", 10)
    assert result.exit_code == 2 and "is a folder; give a design file" in result.stderr
    for command in ("validate", "show"):
        result = run("decks", command, tmp_path)
        assert result.exit_code == 2 and "a folder, not a design file" in result.stderr


@pytest.mark.parametrize("args", [
    ("simulate", "stapop", "--games", 10**10, "--chunk-size", 10**10),
    ("simulate", "stapop", "--games", 10**20),
    ("compare", "stapop", "millebornes", "--chunk-size", 2_000_000),
    ("tournament", "stapop", "--policies", "greedy,random", "--games", 10**12),
    ("analyze", "millebornes", "position.toml", "--playouts", 10**20),
    ("bremen", "sweep", "--games", 10**20, "--out", "sweep"),
])
def test_numbers_out_of_range_are_refused_before_any_work(args):
    result = run(*args)
    assert result.exit_code == 2 and "Invalid value" in result.output and "Traceback" not in result.output


def test_help_shows_the_policies_command_whole():
    result = runner.invoke(app, ["simulate", "--help"], env={"COLUMNS": "300"})
    assert "etappe policies [etape|bremen]" in result.stdout
    replay = runner.invoke(app, ["replay", "--help"], env={"COLUMNS": "300"})
    assert "Tape l'étape" not in replay.stdout and "--sequential" not in replay.stdout
    sweep = runner.invoke(app, ["sweep", "--help"], env={"COLUMNS": "300"})  # sweep has no --sequential
    assert "--policy" in sweep.stdout and "--sequential" not in sweep.stdout


@pytest.mark.parametrize("command", ["report", "replay"])
def test_a_folder_given_as_a_run_file_is_named_as_one(command, tmp_path):
    folder = tmp_path / "runs.parquet"
    folder.mkdir()
    result = run(command, folder)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{folder}: a folder, not a run file" in " ".join(result.stderr.split())


@pytest.mark.parametrize("command", ["report", "replay"])
def test_a_file_that_is_no_run_file_is_refused_saying_why_once(command, tmp_path):
    notes = tmp_path / "notes.parquet"
    notes.write_text("my notes, not a run")
    result = run(command, notes)
    assert result.exit_code == 2
    # the reader's reason, without the file's name said twice
    assert (f"error: {notes}: not a run file written by `etappe simulate --out` (not a Parquet run file)"
            in " ".join(result.stderr.split()))


def test_a_bar_says_the_kernels_compile_until_its_first_progress():
    # A first run compiles for half a minute before any game is played; the
    # bar must not sit at 0 without saying why, nor say it once games run.
    from etappe.cli.common import progress_bar

    with progress_bar(10, "stapop x4", compiles=True) as bar:
        assert bar._progress.tasks[0].description == "stapop x4 (compiling the kernels)"
        bar(1)
        assert bar._progress.tasks[0].description == "stapop x4"
    with progress_bar(10, "joining", compiles=False) as bar:
        assert bar._progress.tasks[0].description == "joining"



@pytest.mark.parametrize("then", ["a next step", "the end"])
def test_a_ctrl_c_a_library_swallowed_stops_the_bar_at_its_next_step_or_end(capsys, then):
    # pyarrow, converting a frame to write a chunk, asks pandas for attributes where any exception means
    # "none": the KeyboardInterrupt of the Ctrl-C handler raised there was lost, and one Tape l'étape run
    # in forty with --out played to its end and exited 0 after Ctrl-C
    import signal

    from etappe.cli.common import interrupt, interruption_told, progress_bar

    try:
        with pytest.raises(KeyboardInterrupt):
            with progress_bar(10, "etape x4", "The finished chunks are kept.") as bar:
                bar(1)
                try:
                    interrupt(signal.SIGINT, None)
                except KeyboardInterrupt:
                    pass  # lost, as in pyarrow
                if then == "a next step":
                    bar(1)
                    pytest.fail("the bar went on after Ctrl-C")
        assert "interrupted. The finished chunks are kept." in " ".join(capsys.readouterr().err.split())
    finally:
        interruption_told(forget=True)  # a new command

def test_a_report_bar_names_the_section_it_builds_and_says_done_at_the_end():
    from etappe.cli.common import progress_bar

    with progress_bar(10, "reading records") as bar:  # a bar with a total: the report on a line below
        bar(10)
        bar.stage("Cards")
        assert bar._progress.tasks[1].description == "report: Cards"
    assert bar._progress.tasks[1].description == "report: done"  # not the last section's name
    assert bar._progress.tasks[1].total == bar._progress.tasks[1].completed == 1  # and drawn full
    with progress_bar(None, "report") as bar:  # a bar of unknown length: the report on its own line
        bar.stage("Caveat")
        assert bar._progress.tasks[0].description == "report: Caveat"
    assert bar._progress.tasks[0].description == "report: done"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, where no folder can be made")
def test_an_out_where_no_folder_can_be_made_is_refused_in_words():
    result = run("simulate", "stapop", "--games", 10, "--out", "/proc/run.parquet")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "cannot make" in result.stderr and "where the run keeps its finished chunks" in result.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc, where no folder can be made")
@pytest.mark.parametrize("args", [
    ("report", "RUN"),
    ("compare", "stapop", "millebornes", "--games", 10),
    ("sweep", "millebornes", "--set", "cards.stop.count=3", "--games", 10),
    ("tournament", "stapop", "--policies", "greedy,random", "--games", 10),
    ("compare", "bremen", "--option-b", "harder=true", "--games", 10),
    ("bremen", "sweep", "--games", 10),
])
def test_an_out_folder_that_cannot_be_made_is_refused_before_the_work(args, tmp_path):
    # /proc looks writable to root, but no folder can be made in it: the report was computed, then
    # refused with the raw "[Errno 2] No such file or directory"
    if args[0] == "report":
        from etappe.analysis.race import simulate

        frame = simulate("stapop", players=2, games=10, seed=1)
        write_parquet(frame, tmp_path / "run.parquet", frame.attrs)
        args = ("report", tmp_path / "run.parquet")
    result = run(*args, "--out", "/proc/etappe-out")
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(result.stderr.split())
    assert "--out /proc/etappe-out: cannot make this folder (No such file or directory)" in said
    assert "Errno" not in said
    # a report's folder named like a report file was made as a folder of that name, holding report.html
    result = run(*args, "--out", tmp_path / "mine.html")
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and f"--out {tmp_path / 'mine.html'}: is the folder the report is written in" in said
    assert f"give a folder name, e.g. {tmp_path / 'mine'}" in said and not (tmp_path / "mine.html").exists()



def wide(*args):
    """As `run`, on a wide terminal: typer's own refusals are boxed and wrapped to the terminal's width."""
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "300"})
    return result, " ".join(result.output.split())


@pytest.mark.parametrize("args, refusal", [
    # --players 0 was read as "not given" (`players or 2`): the default player count, played without a word
    (("compare", "stapop", "--option-b", "overshoot=disqualify", "--players", 0), "played by 2, 3, 4, 5, 6 players, not 0"),
    (("compare", "stapop", "millebornes", "--sequential", "--players", 0), "played by 2, 3, 4, 5, 6 players, not 0"),
    (("compare", "bremen", "--option-b", "harder=true", "--players", 0), "takes 2 to 4 players, got 0"),
    (("replay", "stapop", "--players", 0), "played by 2, 3, 4, 5, 6 players, not 0"),
])
def test_zero_players_is_refused_not_read_as_the_default(args, refusal, tmp_path):
    result = run(*args, "--games", 10, "--out", tmp_path / "out") if args[0] == "compare" else run(*args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert refusal in result.stderr


@pytest.mark.parametrize("args, refusal", [
    # a count far beyond any game's was made into a list of that many seats first: an overflow traceback,
    # a memory error, or a minute's wait before the game's own refusal
    (("simulate", "etape", "--players", 10**20), "Tape l'étape is played by 3 to 6 players, not 100000000000000000000"),
    (("simulate", "bremen", "--players", 10**7), "takes 2 to 4 players, got 10000000"),
    (("compare", "bremen", "--option-b", "harder=true", "--players", 2**63 - 1), "takes 2 to 4 players, got"),
    (("compare", "etape", "--option-b", "mode=endurance", "--players", 10**20), "played by 3 to 6 players"),
    # a negative count is refused by the game, in its words, as 0 is
    (("simulate", "stapop", "--players", -3), "Stap op is played by 2, 3, 4, 5, 6 players, not -3"),
    (("replay", "millebornes", "--players", -3), "Mille Bornes is played by 2, 3, 4, 6 players, not -3"),
    (("tournament", "stapop", "--policies", "greedy,random", "--players", -2), "a pairing needs at least 2 players"),
])
def test_player_counts_no_game_takes_are_refused_at_once_in_the_games_words(args, refusal, tmp_path):
    out = {"simulate": tmp_path / "run.parquet", "compare": tmp_path / "cmp", "tournament": tmp_path / "tour"}
    result = run(*args, "--games", 10, "--out", out[args[0]]) if args[0] in out else run(*args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert refusal in " ".join(result.stderr.split())


@pytest.mark.parametrize("args, refusal", [
    (("compare", "stapop", "millebornes", "--alpha", 2), "--alpha: for --sequential only"),
    (("compare", "stapop", "millebornes", "--metric", "nosuch", "--delta", 0.1), "--metric, --delta: for --sequential only"),
    # not "for --sequential only": --sequential is refused for bremen and etape in turn
    (("compare", "bremen", "--option-b", "harder=true", "--beta", 0.1), "--beta: for the race designs' --sequential only"),
    (("compare", "stapop", "millebornes", "--sequential", "--chunk-size", 10), "--chunk-size is not used with --sequential"),
    (("compare", "stapop", "--policy", "greedy,random", "--sequential", "--metric", "lead_changes"),
     "--metric is for --sequential with two designs"),
])
def test_options_of_another_mode_of_compare_are_refused_not_ignored(args, refusal, tmp_path):
    result = run(*args, "--games", 10, "--out", tmp_path / "cmp")
    assert result.exit_code == 2 and refusal in result.stderr
    assert not (tmp_path / "cmp").exists()  # refused before any game is played or folder made


@pytest.mark.parametrize("args, flag", [
    (("simulate", "stapop", "--policy", ""), "--policy"),
    (("simulate", "stapop", "--policy", ",,,"), "--policy"),
    (("simulate", "stapop", "--policy", "greedy,"), "--policy"),
    (("simulate", "bremen", "--policy", ",greedy"), "--policy"),
    (("replay", "stapop", "--policy", ","), "--policy"),
    (("tournament", "stapop", "--policies", ",greedy,,random"), "--policies"),
    (("bremen", "sweep", "--policy", "greedy,,random"), "--policy"),
])
def test_an_empty_policy_name_is_refused_not_read_as_the_default(args, flag):
    # "--policy ''" and ",,," played greedy; ",greedy,,random" was a tournament of greedy and random
    result, text = wide(*args, "--games", 10) if args[0] != "replay" else wide(*args)
    assert result.exit_code == 2
    assert f"Invalid value for '{flag}'" in text and "has an empty policy name" in text


def test_policy_parameters_with_commas_still_pass_the_empty_name_check():
    result = run("simulate", "stapop", "--games", 10, "--policy", "greedy:attack=1,target_leader=0.5")
    assert result.exit_code == 2  # refused by the policy for its value, not for an empty name
    assert "target_leader must be 0 or 1, not 0.5" in result.stderr and "empty policy name" not in result.output


@pytest.mark.parametrize("item", ["harder", "=true", " =true"])
def test_an_option_without_a_name_and_value_is_refused(item):
    result = run("simulate", "stapop", "--games", 10, "--option", item)
    assert result.exit_code == 2
    assert f"--option {item!r}: expected name=value, a rule option and its value (e.g. --option turn_cap=500;" in " ".join(result.stderr.split())


def test_a_policy_list_is_split_between_policies_never_inside_ones_parameters():
    # docs/policies.md: the commas between a policy's key=value parameters stay with it, whichever seat
    from etappe.cli.common import split_policies

    assert split_policies("greedy, random") == ["greedy", "random"]
    assert split_policies("random,greedy:attack=2,hold_safeties=0,lookahead:playouts=10,horizon=5,greedy") == [
        "random", "greedy:attack=2,hold_safeties=0", "lookahead:playouts=10,horizon=5", "greedy"]


def test_an_interrupted_sequential_compare_does_not_promise_to_resume(monkeypatch):
    # The sequential test keeps nothing on disk: Ctrl-C must not say that the same command resumes it.
    from etappe.cli import tournament_cmds

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament_cmds, "sequential_compare", interrupted)
    result = run("compare", "stapop", "millebornes", "--sequential", "--games", 10)
    assert result.exit_code != 0
    assert "interrupted." in result.stderr and "resumes" not in result.stderr


def test_a_colon_with_no_parameters_after_it_is_refused():
    # "greedy:" played greedy and was shown as "greedy:" in the run's tables
    result, text = wide("simulate", "stapop", "--games", 10, "--policy", "greedy:,random")
    assert result.exit_code == 2 and "has a ':' with no parameters after it" in text


def test_analyze_refuses_a_policy_per_seat(tmp_path, monkeypatch):
    from test_race_cli import GOOD_POSITION

    position = tmp_path / "position.toml"
    position.write_text(GOOD_POSITION)
    result = run("analyze", "millebornes", position, "--policy", "greedy,random")
    assert result.exit_code == 2
    assert "analyze plays the hand out with one policy for every seat" in " ".join(result.stderr.split())
    # a policy outside the greedy family is refused before a bar says the kernels compile
    from etappe.cli import race_cmds

    def no_bar(*args, **kwargs):
        raise AssertionError("the progress bar started")

    monkeypatch.setattr(race_cmds, "progress_bar", no_bar)
    result = run("analyze", "millebornes", position, "--policy", "random")
    assert result.exit_code == 2, result.output  # the bar raising would exit 1
    assert "analyze plays the hand out with a greedy-family policy, not 'random'" in " ".join(result.stderr.split())


@pytest.mark.parametrize("command, what", [(("decks", "validate"), "not a design file"),
                                           (("moves", "millebornes"), "not a position file")])
def test_a_file_that_is_not_utf8_text_is_named_as_such(command, what, tmp_path):
    binary = tmp_path / "latin1.toml"
    binary.write_bytes("name = \"caf\xe9\"\n".encode("latin-1"))
    result = run(*command, binary)
    assert result.exit_code == 2 and f"{what}" in result.stderr and "UTF-8" in result.stderr
    assert "codec" not in result.stderr


def test_a_run_file_of_another_design_is_refused_by_the_design_s_name(tmp_path):
    out = tmp_path / "run.parquet"
    assert run("simulate", "stapop", "--games", 20, "--out", out).exit_code == 0
    result = run("simulate", "millebornes", "--games", 20, "--out", out)
    assert result.exit_code == 2
    assert "holds another run, of Stap op (design_hash" in " ".join(result.stderr.split())


def test_a_tape_l_etape_run_stopped_between_its_two_joins_keeps_every_chunk(tmp_path, monkeypatch):
    # The races file was joined, and its chunks dropped, before the stages file: a run stopped while the
    # (larger) stages file was joined played every race again.
    args = ("simulate", "etape", "--games", 40, "--chunk-size", 10, "--seed", 3)
    join = ChunkedRun.join

    def stopped_at_the_stages(self, *a, **k):
        if self.out.name.endswith(".stages.parquet"):
            raise KeyboardInterrupt
        return join(self, *a, **k)

    monkeypatch.setattr(ChunkedRun, "join", stopped_at_the_stages)
    assert run(*args, "--out", tmp_path / "run.parquet").exit_code != 0
    monkeypatch.setattr(ChunkedRun, "join", join)
    result = run(*args, "--out", tmp_path / "run.parquet")
    assert result.exit_code == 0 and "40 of 40 races already played" in " ".join(result.stderr.split())
    assert run(*args, "--out", tmp_path / "whole.parquet").exit_code == 0
    for resumed, whole in (("run", "whole"), ("run.stages", "whole.stages")):
        assert pd.read_parquet(tmp_path / f"{resumed}.parquet").equals(pd.read_parquet(tmp_path / f"{whole}.parquet"))
    assert not list(tmp_path.glob("*.parts"))


def test_a_policy_of_your_own_is_refused_by_the_games_without_one(tmp_path):
    # docs/policies.md: FILE.py:FUNCTION plays the race games and Bremen, not Tape l'étape
    policy = tmp_path / "mine.py"
    policy.write_text("def mine(state, moves, n_moves, key):\n    return 0\n")
    result = run("simulate", "etape", "--games", 5, "--policy", f"{policy}:mine")
    message = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "plays the race games and Bremen only" in message and "heuristic" in message


@pytest.mark.parametrize("command", [["replay", "bremen", "--game", 3], ["moves", "etape", "position.toml"],
                                     ["analyze", "bremen", "position.toml"]])
def test_the_race_commands_name_the_race_designs_when_given_another_game(command):
    # not "bremen: no such design file": these games have no positions or play-by-play
    result = run(*command)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{command[0]} is for the race designs" in result.output and f"not {command[1]}" in result.output
    # and what that game offers instead (docs/python.md's table)
    assert "has no positions or play-by-play; from Python" in " ".join(result.output.split())


@pytest.mark.parametrize("command", [["decks", "show", "etape"], ["decks", "validate", "bremen"]])
def test_decks_name_the_race_designs_when_given_another_game(command):
    # "etape: no such design file" read as a typo
    result = run(*command)
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(result.stderr.split())
    assert f"{' '.join(command[:2])} is for the race designs" in said and f"not {command[2]}. " in said
    assert f"has no deck design; `etappe policies {command[2]}` lists its rule options" in said


def test_replay_of_another_games_run_file_names_its_game(tmp_path):
    out = tmp_path / "bremen.parquet"
    assert run("simulate", "bremen", "--games", 5, "--out", out).exit_code == 0
    result = run("replay", out, "--game", 2)
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(result.stderr.split())
    assert f"{out}: a run of bremen; replay is for the race designs" in said
    assert "bremen.simulate(games=1, first_game=N, ...) plays game N's record again" in said
    # decks show of that run names the game as a reader knows it
    result = run("decks", "show", out)
    assert result.exit_code == 2
    assert (f"{out}: a run of Bremer Stadtmusikanten, which has no deck design; `etappe report {out}` shows its "
            "rules") in " ".join(result.stderr.split())


def test_a_run_file_or_an_empty_table_given_as_a_board_says_so(tmp_path):
    out = tmp_path / "bremen.parquet"
    assert run("simulate", "bremen", "--games", 5, "--out", out).exit_code == 0
    result = run("bremen", "validate", out)  # it read the Parquet bytes as TOML: "'utf-8' codec can't decode"
    assert result.exit_code == 2 and "codec" not in result.stderr
    assert f"{out}: a run file, not a board file; `etappe report {out}` reports on it" in " ".join(
        result.stderr.split())
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\x80\x81 board")
    result = run("bremen", "validate", binary)
    assert result.exit_code == 2 and f"{binary}: not a board file (a board is TOML text, UTF-8)" in " ".join(
        result.stderr.split())
    empty = tmp_path / "e.toml"
    empty.write_text('[board]\nname = "x"\n[fields]\n[links]\nchains = []\n')
    result = run("bremen", "validate", empty)  # it said "no [fields] table"
    assert result.exit_code == 2 and "the [fields] table is empty" in result.stderr


@pytest.mark.parametrize("command", ["simulate", "replay"])
def test_a_design_without_four_players_asks_for_players_instead_of_refusing_an_unasked_4(command, tmp_path):
    # simulate and replay play 4 players unless told: a two- and three-player design says that
    # --players was not given, rather than that the user asked for 4
    text = run("decks", "show", "stapop", "--toml").stdout.replace("players = [2, 3, 4, 5, 6]", "players = [2, 3]")
    assert "players = [2, 3]\n" in text
    path = tmp_path / "two_three.toml"
    path.write_text(text, "utf-8")
    result = run(command, path)
    assert result.exit_code == 2 and "played by 2, 3 players; give --players (without it, 4)" in result.output
    assert run(command, path, "--players", 3, *(["--games", 5] if command == "simulate" else [])).exit_code == 0


def test_version_prints_what_runs_record():
    # run files and reports record package_version(); the command line had no way to ask for it
    from etappe.analysis.runio import package_version

    result = run("--version")
    assert result.exit_code == 0 and result.stdout == f"etappe {package_version()}\n"


def _etappe(*args, cwd=None, **environment):
    """The real command in a child process (the locale and the terminal are the process's own)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "etappe.cli", *map(str, args)], capture_output=True,
                          env={**os.environ, **environment}, cwd=cwd, timeout=600)


def test_a_locale_that_cannot_write_the_text_neither_breaks_the_command_nor_the_files(tmp_path):
    # Under a Latin-1 locale `decks show --toml > my.toml` wrote "coup fourré" in Latin-1, which `decks
    # validate` then refused; under ASCII, `etappe --help` ("Tape l'étape") ended in a UnicodeEncodeError
    shown = _etappe("decks", "show", "millebornes", "--toml", PYTHONIOENCODING="latin-1")
    assert shown.returncode == 0 and "coup fourré".encode("utf-8") in shown.stdout
    design = tmp_path / "mb.toml"
    design.write_bytes(shown.stdout)
    assert run("decks", "validate", design).exit_code == 0
    position = _etappe("replay", "stapop", "--players", "2", "--seed", "1", "--game", "0", "--position", "5",
                       PYTHONIOENCODING="latin-1")
    assert position.returncode == 0 and position.stdout.decode("utf-8").startswith("#")
    helped = _etappe("--help", PYTHONIOENCODING="ascii")
    assert helped.returncode == 0 and b"Tape l'?tape" in helped.stdout and b"Traceback" not in helped.stderr


def test_run_file_names_pyarrow_cannot_write_are_refused_before_any_game(tmp_path):
    # a name that is not UTF-8 (a Latin-1 byte) failed in pyarrow after every game was played; so did one
    # whose temporary name (with the host and the process) is longer than the file system takes
    latin = os.fsdecode(b"r\xe9n.parquet")
    result = run("simulate", "stapop", "--players", 2, "--games", 10, "--out", tmp_path / latin)
    assert result.exit_code == 2 and "the name is not UTF-8 text" in " ".join(result.stderr.split())
    long = tmp_path / ("c" * 230 + ".parquet")
    result = run("simulate", "stapop", "--players", 2, "--games", 10, "--out", long)
    said = " ".join(result.stderr.split())
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")  # 255 on Linux's file systems
    assert result.exit_code == 2 and "the name is too long" in said and f"over the {limit} this file system takes" in said
    assert os.listdir(tmp_path) == []


def test_a_tilde_the_shell_left_names_the_folder_etappe_writes(tmp_path):
    # `--out=~/x.parquet`: bash leaves the "~" (after "="); etappe made ./~ while pyarrow wrote to the home
    # folder it expands "~" to, and the run failed after its first chunk. Both are ./~ now.
    done = _etappe("simulate", "stapop", "--players", 2, "--games", 20, "--seed", 1, "--out=~/x.parquet",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert runio.read_metadata(tmp_path / "~" / "x.parquet")["games"] == 20
