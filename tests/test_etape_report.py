"""Tape l'étape: the simulate command's files, the report, and the report's
statistics on small hand-made record tables (values worked out by hand)."""
import contextlib
import re
import shutil
import types

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from by_hand import wilson  # noqa: E402
from etappe.analysis import etape as E  # noqa: E402
from etappe.analysis.runio import read_metadata, write_parquet  # noqa: E402
from etappe.analysis.stats import Z95, IntHistogram  # noqa: E402
from etappe.cli import etape as C  # noqa: E402
from etappe.reports.document import percent_ci, percent_text  # noqa: E402
from etappe.reports.etape import build_report, capped_text  # noqa: E402

POLICIES = ["heuristic", "random", "blocker", "lookahead:playouts=8"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("etape") / "run.parquet"
    C.simulate_command(4, 60, POLICIES, 17, out, {"crevaison_carry": False})
    races, stages = C.load_run(out)
    return out, races, stages


def test_simulate_command_writes_both_files_with_identity(run):
    out, races, stages = run
    assert out.exists() and C.stages_path(out).exists()
    assert C.stages_path(out).name == "run.stages.parquet"
    assert not out.with_name("run.parquet.parts").exists()
    meta = read_metadata(out)
    assert meta["game"] == "etape" and meta["seed"] == 17 and meta["players"] == 4
    assert meta["options"]["crevaison_carry"] is False and len(meta["policies"]) == 4
    # The files hold the same races and stages simulate() plays with the same seed.
    direct_races, direct_stages = E.simulate(4, 60, POLICIES, 17, {"crevaison_carry": False})
    pd.testing.assert_frame_equal(direct_races, races)
    pd.testing.assert_frame_equal(direct_stages, stages)


def interrupt_after_first_chunk(monkeypatch):
    """Make the command's next run stop (Ctrl-C) when it starts its second
    chunk; returns the real simulate and the list of first races played."""
    real, calls = E.simulate, []

    def interrupted(*args, **kwargs):
        if calls:
            raise KeyboardInterrupt
        calls.append(kwargs["first_race"])
        return real(*args, **kwargs)

    monkeypatch.setattr(C.E, "simulate", interrupted)
    return real, calls


def test_simulate_command_resumes_finished_chunks(tmp_path, monkeypatch):
    C.simulate_command(3, 25, ["random"], 4, tmp_path / "full.parquet", {}, chunk_size=10)
    full = C.load_run(tmp_path / "full.parquet")
    out = tmp_path / "r.parquet"
    real, calls = interrupt_after_first_chunk(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        C.simulate_command(3, 25, ["random"], 4, out, {}, chunk_size=10)
    assert not out.exists()
    with pytest.raises(ValueError, match="different run"):  # other seed: parts refused
        C.simulate_command(3, 25, ["random"], 5, out, {}, chunk_size=10)

    def counted(*args, **kwargs):
        calls.append(kwargs["first_race"])
        return real(*args, **kwargs)

    monkeypatch.setattr(C.E, "simulate", counted)
    C.simulate_command(3, 25, ["random"], 4, out, {}, chunk_size=10)
    resumed = C.load_run(out)
    assert calls == [0, 10, 20]  # chunk 0 played once, before the interruption
    pd.testing.assert_frame_equal(full[0], resumed[0])
    pd.testing.assert_frame_equal(full[1], resumed[1])


def test_a_run_shared_over_machines_joins_into_the_run_of_one(tmp_path, monkeypatch):
    C.simulate_command(3, 25, ["random"], 4, tmp_path / "full.parquet", {}, chunk_size=10)
    full = C.load_run(tmp_path / "full.parquet")
    out = tmp_path / "r.parquet"  # one folder for both shares, as on a shared disk
    first, _ = C.simulate_command(3, 25, ["random"], 4, out, {}, chunk_size=10, share=(1, 2))  # races 0-9, 20-24
    assert first.races == 15 and not out.exists()
    second, _ = C.simulate_command(3, 25, ["random"], 4, out, {}, chunk_size=10, share=(2, 2))  # races 10-19
    assert second.races == 10 and not out.exists()
    monkeypatch.setattr(C.E, "simulate", lambda *a, **k: pytest.fail("played a race the shares had played"))
    C.simulate_command(3, 25, ["random"], 4, out, {}, chunk_size=10)  # joins them
    joined = C.load_run(out)
    pd.testing.assert_frame_equal(full[0], joined[0])
    pd.testing.assert_frame_equal(full[1], joined[1])


def test_a_changed_chunk_size_keeps_a_finished_run_and_resumes_an_interrupted_one(tmp_path, monkeypatch):
    # The records do not depend on the chunk size, so neither does the run.
    from typer.testing import CliRunner

    from etappe.cli.main import app

    out = tmp_path / "c.parquet"
    command = ["simulate", "etape", "--players", "4", "--games", "30", "--out", str(out), "--chunk-size"]
    result = CliRunner().invoke(app, command + ["10"])
    assert result.exit_code == 0, result.output
    in_tens = C.load_run(out)
    assert "chunk" not in read_metadata(out)
    written = out.stat().st_mtime_ns
    result = CliRunner().invoke(app, command + ["15"])  # the finished run: not played again
    assert result.exit_code == 0, result.output
    assert "already holds this run: nothing to play" in result.stderr and out.stat().st_mtime_ns == written
    in_fifteens = C.load_run(out)
    pd.testing.assert_frame_equal(in_tens[0], in_fifteens[0])
    pd.testing.assert_frame_equal(in_tens[1], in_fifteens[1])

    # Interrupted after its first chunk of 10, then resumed with --chunk-size 15:
    # in chunks of 10, the first not played again.
    other = tmp_path / "i.parquet"
    real, calls = interrupt_after_first_chunk(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        C.simulate_command(4, 30, ["heuristic"], 0, other, {}, chunk_size=10)

    def counted(*args, **kwargs):
        calls.append(kwargs["first_race"])
        return real(*args, **kwargs)

    monkeypatch.setattr(C.E, "simulate", counted)
    result = CliRunner().invoke(app, command[:-2] + [str(other), "--chunk-size", "15"])
    assert result.exit_code == 0, result.output
    assert (f"resuming the run at {other}: 10 of 30 races already played, in its chunks of 10 "
            "(not --chunk-size 15") in " ".join(result.stderr.split())
    assert calls == [0, 10, 20]
    resumed = C.load_run(other)
    pd.testing.assert_frame_equal(in_tens[0], resumed[0])
    pd.testing.assert_frame_equal(in_tens[1], resumed[1])


def test_stages_chunks_of_another_size_than_the_races_chunks_are_refused(tmp_path, monkeypatch):
    # a race and its stages are saved together, chunk by chunk: with the races' chunks removed by hand and
    # the run started again in chunks of another size, the stages' chunks cannot be used, and it says why
    out = tmp_path / "run.parquet"
    interrupt_after_first_chunk(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        C.simulate_command(4, 30, ["heuristic"], 0, out, {}, chunk_size=10)
    shutil.rmtree(f"{out}.parts")
    with pytest.raises(ValueError) as refused:
        C.simulate_command(4, 30, ["heuristic"], 0, out, {}, chunk_size=15)
    assert str(refused.value) == (f"{tmp_path / 'run.stages.parquet'}.parts holds chunks of 10 races, and {out}.parts "
                                  "of 15; remove them or write to another --out")


def test_option_self_crevaison_in_balai_through_the_command_line(tmp_path, capsys):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    out = tmp_path / "r.parquet"
    result = CliRunner().invoke(app, ["simulate", "etape", "--games", "4", "--out", str(out),
                                      "-o", "self_crevaison_in_balai=false"])
    assert result.exit_code == 0, result.output
    assert read_metadata(out)["options"]["self_crevaison_in_balai"] is False
    result = CliRunner().invoke(app, ["simulate", "etape", "--games", "4", "-o", "self_crevaison_in_balai=maybe"])
    assert result.exit_code == 2
    assert "self_crevaison_in_balai: must be true or false, not 'maybe'" in " ".join(result.stderr.split())
    C.policies_command()
    # written as the option is given on the command line, with the other value it may take
    assert "self_crevaison_in_balai=true (or false)" in capsys.readouterr().out


def test_report_has_every_section_and_the_numbers(run, tmp_path):
    out, races, stages = run
    html = C.report_command(out, tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert html.exists() and (tmp_path / "rep" / "etape_win_policy.png").exists()
    for title in ("Header", "Outcomes", "Stage profiles", "Jokers", "Side classifications",
                  "Anomalies", "Caveat", "Bots are not people"):
        assert title in md
    for profile in set(stages["profile"].astype(str)):
        assert f"Profile: {profile}" in md
    assert "| root seed | 17 |" in md and "| races | 60 |" in md
    assert "stages cut off by the turn cap | 0 |" in md
    # the rules are the package's own (no file a reader of the report could lack): the docs state them
    assert "| rules | built into etappe (docs/etape.md:" in md and "../shared" not in md


def test_report_has_the_design_sections_in_order(run, tmp_path):
    out, races, stages = run
    C.report_command(out, tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    html = (tmp_path / "rep" / "report.html").read_text()
    order = ["Header", "Outcomes", "Skill matrix", "Length", "Tension", "Progress", "Stage profiles",
             "Card balance", "Jokers", "Side classifications", "Variant comparison", "Anomalies", "Caveat"]
    at = [md.index(f"## {title}\n") for title in order]
    assert at == sorted(at)
    for title in order:
        assert f"<h2>{title}</h2>" in html
    for name in ("etape_skill_matrix", "etape_length_stage", "etape_length_race", "etape_lead_changes",
                 "etape_winner_deficit", "etape_progress_policy", "etape_progress_seat", "etape_cards_left"):
        assert (tmp_path / "rep" / f"{name}.png").exists(), name
    assert "| turns per stage | 240 |" in md and "| turns per race | 60 |" in md  # 60 races of 4 stages
    assert "| GC lead changes per race | 60 |" in md
    assert "Every race has 4 stages" in md
    assert "no skill matrix" not in md


def test_a_report_of_some_of_a_run_s_races_says_so_and_gives_the_run_s_speed(run):
    # as the race report: a notebook's filter gave "30 races" at 30 / the whole run's wall time
    _, races, stages = run
    some_races, some_stages = races[races.race < 30], stages[stages.race < 30]
    for frame in (some_races, some_stages):
        frame.attrs = {**races.attrs, "wall_seconds": 0.5}
    md = build_report(some_races, some_stages).to_markdown()
    assert "| races | 30 of the run's 60 |" in md and "| speed | 120 races/s |" in md  # 60 races in 0.5 s


def test_caveat_names_the_policies_of_the_run(run):
    _, races, stages = run
    md = build_report(races, stages).to_markdown()
    caveat = md[md.index("## Caveat"):]
    assert "No look-ahead policy is included yet" not in md
    for spec in races.attrs["policies"]:
        assert spec in caveat
    assert "look-ahead: playouts" in caveat and "random: uniform legal play" in caveat
    only = E.simulate(3, 5, ["heuristic"], 1)
    md = build_report(*only).to_markdown()
    caveat = md[md.index("## Caveat"):]
    assert "heuristic:" in caveat and "look-ahead" not in caveat and "random:" not in caveat
    assert "Every seat plays the same policy, so there is no skill matrix" in md


def test_tension_of_a_simulated_run_agrees_with_the_race_records(run):
    _, races, stages = run
    t = E.race_tension(stages)
    assert (t["race"].to_numpy() == races["race"].to_numpy()).all()
    assert (t["winner"].to_numpy() == races["winner"].to_numpy()).all()
    times = np.sort(races[[f"time_{s}" for s in range(4)]].to_numpy(), axis=1)
    sole = races["winner"].to_numpy() >= 0
    assert (t["final_gap"].to_numpy()[sole] == (times[:, 1] - times[:, 0])[sole]).all()
    assert (t["lead_changes"] <= 3).all()  # four stages: at most three changes
    # lead changes and the winner's deficit from the stage records, written again from their
    # definitions (docs/etape.md): the sole lowest cumulative time leads, a tie keeps the earlier
    # leader, the first leader is no change; the deficit is the winner's largest gap behind the
    # lowest cumulative time after a stage (gc_tie is "shared" in this run)
    by_race = t.set_index("race")
    for race, rows in stages.groupby("race"):
        cums = rows.sort_values("stage")[[f"cum_{s}" for s in range(4)]].to_numpy().tolist()
        changes, last = 0, -1
        for cum in cums:
            if cum.count(min(cum)) == 1:
                changes += last >= 0 and cum.index(min(cum)) != last
                last = cum.index(min(cum))
        assert by_race.loc[race, "lead_changes"] == changes, race
        winner = int(races.loc[races["race"] == race, "winner"].iloc[0])
        if winner >= 0:
            assert by_race.loc[race, "winner_deficit"] == max(cum[winner] - min(cum) for cum in cums), race
    assert (t["winner_deficit"] > 0).any() and (t["lead_changes"] > 0).any()  # not all zeros: both were tried


# ---- statistics on hand-made tables -------------------------------------------------

def _stages(cums, players=3, **columns):
    """A stage table: cums[race][stage] = cumulative times per seat."""
    rows = []
    for r, race in enumerate(cums):
        for g, cum in enumerate(race):
            row = {"race": r, "stage": g}
            row.update({f"cum_{s}": c for s, c in enumerate(cum)})
            rows.append(row)
    df = pd.DataFrame(rows)
    for name, values in columns.items():
        df[name] = values
    df.attrs = {"players": players}
    return df


TENSION = _stages([
    # race 0: leader 0, then 1 (change), a tie keeps 1, then 0 (change): 2 changes;
    # winner 0 was 10 s behind after stage 1; final gap 250 - 230 = 20
    [(100, 120, 130), (150, 140, 160), (200, 200, 210), (230, 250, 260)],
    # race 1: no sole leader, then 2 (first: no change), 0, 1: 2 changes; winner 1
    # was 30 s behind after stage 1; final gap 170 - 160 = 10; leader 0 before the last lost
    [(50, 50, 60), (90, 100, 70), (120, 130, 140), (170, 160, 170)],
    # race 2: seat 0 leads throughout, then a shared first place: no winner
    [(10, 20, 30), (40, 45, 50), (60, 70, 80), (100, 100, 120)],
])


def test_race_tension_by_hand():
    t = E.race_tension(TENSION)
    assert list(t["lead_changes"]) == [2, 2, 0]
    assert list(t["winner"]) == [0, 1, -1]
    assert t["winner_deficit"].tolist()[:2] == [10, 30] and np.isnan(t["winner_deficit"][2])
    assert t["final_gap"].tolist()[:2] == [20, 10] and np.isnan(t["final_gap"][2])
    assert list(t["leader_before_last"]) == [-1, 0, 0]
    assert np.isnan(t["leader_before_last_won"][0]) and t["leader_before_last_won"][1] == 0
    assert np.isnan(t["leader_before_last_won"][2])  # no sole winner
    hold = E.leader_holds(TENSION)
    assert (hold["wins"], hold["n"], hold["rate"]) == (0, 1, 0.0)


def test_race_tension_breaks_gc_ties_on_stage_places_by_hand():
    # TENSION's races with stage places that fit their stage times; under
    # gc_tie=stage_places a tie on time goes to the lower sum of stage places,
    # then the better place in that stage.
    places = [[(1, 2, 3), (3, 1, 2), (1, 3, 1), (1, 2, 2)],
              [(1, 1, 3), (2, 3, 1), (1, 1, 3), (3, 1, 1)],
              [(1, 2, 3), (3, 2, 1), (1, 2, 3), (2, 1, 2)]]
    stages = TENSION.copy()
    for s in range(3):
        stages[f"place_{s}"] = [race[g][s] for race in places for g in range(4)]
    stages.attrs = {"players": 3, "options": {"gc_tie": "stage_places"}}
    t = E.race_tension(stages)
    # race 0: the 200-200 tie after stage 2 goes to seat 0 (places 5 against
    # 6), so seat 0 leads before the last stage and wins: still 2 changes.
    # race 1: the tie after stage 1 is level on places too: as before.
    # race 2: the final 100-100 tie is level on places (7 each) and goes to
    # seat 1 on the last stage: a change, a winner 10 s behind at worst, a 0 s gap.
    assert list(t["lead_changes"]) == [2, 2, 1]
    assert list(t["winner"]) == [0, 1, 1]
    assert list(t["leader_before_last"]) == [0, 0, 0]
    assert t["leader_before_last_won"].tolist() == [1, 0, 0]
    assert t["winner_deficit"].tolist() == [10, 30, 10] and t["final_gap"].tolist() == [20, 10, 0]


def test_race_tension_reads_the_stages_of_each_race_in_order_whatever_the_row_order():
    # the races in reverse (as chunks joined out of order), then every row shuffled
    expected = E.race_tension(TENSION)
    for rows in (TENSION.sort_values(["race", "stage"], ascending=[False, True]),
                 TENSION.sample(frac=1, random_state=3)):
        rows = rows.copy()
        rows.attrs = TENSION.attrs
        pd.testing.assert_frame_equal(E.race_tension(rows), expected)


def test_race_tension_of_two_stage_and_one_stage_races_by_hand():
    # TENSION's first two stages: race 0 led by seat 0 after stage 1, won by seat 1 (140);
    # race 1 without a sole leader after stage 1 (50, 50, 60), won by seat 2 (70);
    # race 2 led and won by seat 0
    t = E.race_tension(TENSION[TENSION["stage"] < 2])
    assert list(t["winner"]) == [1, 2, 0] and list(t["leader_before_last"]) == [0, -1, 0]
    assert t["leader_before_last_won"].tolist()[::2] == [0, 1] and np.isnan(t["leader_before_last_won"][1])
    assert list(t["lead_changes"]) == [1, 0, 0]
    # one stage: no leader before the last
    one = E.race_tension(TENSION[TENSION["stage"] == 0])
    assert list(one["leader_before_last"]) == [-1, -1, -1] and one["leader_before_last_won"].isna().all()
    assert list(one["winner"]) == [0, -1, 0]


def test_tension_table_by_hand():
    table = E.tension_table(TENSION).set_index("metric")
    lead = table.loc["GC lead changes per race"]
    assert (lead["n"], lead["mean"], lead["median"], lead["p95"], lead["max"]) == (3, 4 / 3, 2, 2, 2)
    deficit = table.loc["winner's largest deficit after a stage (s)"]
    assert (deficit["n"], deficit["mean"], deficit["median"], deficit["p95"]) == (2, 20, 10, 30)
    gap = table.loc["final gap: runner-up's time minus the winner's (s)"]
    assert (gap["n"], gap["mean"], gap["median"], gap["min"]) == (2, 15, 10, 10)


def test_length_table_by_hand():
    stages = _stages([[(0, 0, 0)] * 3] * 2, turns=[10, 20, 30, 5, 5, 40],
                     profile=["montagne", "plaine", "descente", "montagne", "plaine", "descente"])
    table = E.length_table(stages).set_index("metric")
    per_stage = table.loc["turns per stage"]  # 5 5 10 20 30 40
    assert (per_stage["n"], per_stage["median"], per_stage["p95"], per_stage["mean"]) == (6, 10, 40, 110 / 6)
    per_race = table.loc["turns per race"]  # 60 and 50
    assert (per_race["n"], per_race["median"], per_race["p95"], per_race["mean"]) == (2, 50, 60, 55)
    assert table.loc["turns per stage: descente", "mean"] == 35
    assert "turns per stage: voiture_balai" not in table.index
    hist = IntHistogram.of(stages["turns"].to_numpy(float)).frame()
    assert list(hist["value"]) == [5, 10, 20, 30, 40] and list(hist["count"]) == [2, 1, 1, 1, 1]
    assert hist["ecdf"].tolist() == pytest.approx([2 / 6, 3 / 6, 4 / 6, 5 / 6, 1])


def test_progress_table_by_hand():
    # seats 0-2; race 0 slots 0 1 2, race 1 slots 1 2 0; policies x y x
    stages = _stages([[(100, 120, 130), (150, 140, 160)], [(50, 60, 40), (90, 100, 70)]],
                     slot_0=[0, 0, 1, 1], slot_1=[1, 1, 2, 2], slot_2=[2, 2, 0, 0])
    stages.attrs["policies"] = ["x", "y", "x"]
    gap = E.progress_table(stages, "policy", "gap").set_index(["group", "after_stage"])
    # after stage 1 the gaps are 0 20 30 and 10 20 0: x has 0, 30, 20, 0; y has 20, 10
    assert gap.loc[("x", 1), "n"] == 4 and gap.loc[("x", 1), "mean"] == 12.5
    y1 = gap.loc[("y", 1)]
    assert (y1["n"], y1["mean"]) == (2, 15) and y1["sd"] == pytest.approx(50 ** 0.5)
    assert y1["ci_low"] == pytest.approx(15 - 12.706205 * 5, abs=1e-5)  # Student's t, 1 degree of freedom
    assert y1["band_high"] == pytest.approx(15 + 50 ** 0.5)
    # after stage 2 the gaps are 10 0 20 and 20 30 0
    assert gap.loc[("x", 2), "mean"] == 15 and gap.loc[("y", 2), "mean"] == 10
    cum = E.progress_table(stages, "policy", "cum").set_index(["group", "after_stage"])
    assert cum.loc[("y", 1), "mean"] == 85  # 120 and 50
    seat = E.progress_table(stages, "seat", "gap").set_index(["group", "after_stage"])
    assert seat.loc[("seat 2", 2), "mean"] == 10  # 20 and 0
    # a table of the second stages only: no rows after stage 1, which has none, and the rows after stage 2 as before
    last = stages[stages["stage"] == 1]
    last.attrs = stages.attrs
    only = E.progress_table(last, "policy", "gap")
    assert list(zip(only["group"], only["after_stage"])) == [("x", 2), ("y", 2)]
    pd.testing.assert_frame_equal(only.set_index(["group", "after_stage"]), gap.loc[[("x", 2), ("y", 2)]])
    # race 0 alone: y is one seat-row a stage (gaps 20, then 0), a row of n = 1 and no spread
    first = stages[stages["race"] == 0]
    first.attrs = stages.attrs
    y = E.progress_table(first, "policy", "gap").set_index(["group", "after_stage"]).loc["y"]
    assert y["n"].tolist() == [1, 1] and y["mean"].tolist() == [20, 0]


def test_head_to_head_by_hand():
    races = pd.DataFrame({"race": [0, 1], "slot_0": [0, 1], "slot_1": [1, 2], "slot_2": [2, 0],
                          "rank_0": [1, 1], "rank_1": [2, 1], "rank_2": [3, 3]})
    races.attrs = {"players": 3, "policies": ["x", "y", "x"]}
    # race 0: seats x y x, ranks 1 2 3: x ahead once, behind once; race 1: seats y x x,
    # ranks 1 1 3: x level once, behind once
    h = E.head_to_head(races).set_index(["policy", "opponent"])
    xy, yx = h.loc[("x", "y")], h.loc[("y", "x")]
    assert (xy["pairs"], xy["ahead"], xy["behind"], xy["level"]) == (4, 1, 2, 1)
    assert xy["score"] == 0.375 and yx["score"] == 0.625
    # interval clustered by race: points / pairs 1 / 2 and .5 / 2, residuals .25, -.25, variance
    # .125 / 16 * 2 = .015625, effective size 15 * (z / t)^2 = 15 * .023794 (t = 12.706205, 1 degree of
    # freedom: two races say little); Wilson at p = .375, n = .356905: centre .489374, half .477002
    assert (xy["ci_low"], xy["ci_high"]) == pytest.approx((0.01237, 0.96638), abs=1e-4)
    assert len(h) == 2  # x against x is no pairing
    races.attrs["policies"] = ["x", "x", "x"]
    assert E.head_to_head(races).empty


def test_card_values_by_hand():
    def mask(*cards):
        return sum(1 << c for c in cards)

    # 3 players: values 3-10. Card = colour * 12 + value - 1.
    stages = _stages([[(0, 0, 0)]], dealt_0=[mask(2, 14, 33)], hand_0=[mask(14)], dealt_1=[mask(26)],
                     hand_1=[0], dealt_2=[mask(9)], hand_2=[mask(9)])
    stages.attrs["options"] = {}
    v = E.card_values(stages).set_index("value")
    assert list(v.index) == list(range(3, 11))
    assert tuple(v.loc[3, ["dealt", "laid", "left", "seconds_if_left"]]) == (3, 2, 1, 10)
    assert v.loc[3, "left_share"] == pytest.approx(1 / 3)
    assert tuple(v.loc[10, ["dealt", "laid", "left", "seconds_if_left"]]) == (2, 1, 1, 30)
    assert v.loc[5, "dealt"] == 0 and np.isnan(v.loc[5, "left_share"])


def test_card_values_left_share_interval_counts_the_cards_of_a_race_together():
    # Two races of one stage, 3 players: seat 0 is dealt two 3s in each (cards 2, 14, then 26, 38),
    # keeps both in race 0 and lays both in race 1: 2 of 4 left, x = (2, 0) of y = (2, 2) by race.
    # Residuals x - y/2 = 1, -1: var = 2/1 (1 + 1) / 4^2 = 1/4, n_eff = (1/4) / (1/4) (z / t_1)^2 with
    # t_1 = 12.7062 (tables): Wilson's interval at that size, far wider than plain Wilson's of 2 of 4.
    def mask(*cards):
        return sum(1 << c for c in cards)

    stages = _stages([[(0, 0, 0)], [(0, 0, 0)]], dealt_0=[mask(2, 14), mask(26, 38)], hand_0=[mask(2, 14), 0],
                     dealt_1=[0, 0], hand_1=[0, 0], dealt_2=[0, 0], hand_2=[0, 0])
    stages.attrs["options"] = {}
    three = E.card_values(stages).set_index("value").loc[3]
    assert (three["dealt"], three["left"], three["left_share"]) == (4, 2, 0.5)
    n_eff = (Z95 / 12.7062) ** 2
    assert (three["left_low"], three["left_high"]) == pytest.approx(wilson(n_eff / 2, n_eff), abs=1e-5)
    assert three["left_high"] - three["left_low"] > 0.95


def test_report_shows_paired_joker_values_when_given():
    races, stages = E.simulate(4, 30, POLICIES, 2)
    values = E.joker_value(4, 30, POLICIES, 2)
    assert list(values["joker"]) == ["crevaison", "vitamine", "braquet"] and (values["races"] == 30).all()
    # a joker's worth is seat 0's mean final time without it minus with it, on the same races
    # (docs/etape.md): here the Vitamine's, from the same races played with it withheld
    without, _ = E.simulate(4, 30, POLICIES, 2, {"withhold_seat": 0, "withhold_jokers": "vitamine"})
    worth = (without["time_0"] - races["time_0"]).mean()
    assert values.set_index("joker").loc["vitamine", "value_s"] == pytest.approx(worth)
    assert list(values.columns) == ["joker", "races", "value_s", "ci_low", "ci_high", "p_value", "p_holm",
                                    "win_rate_gain", "win_gain_low", "win_gain_high"]
    # Holm's correction over the three jokers, by hand: the smallest p times 3, the next times 2, the
    # largest as it is, each at least the one before and at most 1
    order = values["p_value"].sort_values().index
    adjusted, floor = {}, 0.0
    for rank, i in enumerate(order):
        floor = adjusted[i] = min(1.0, max(floor, (3 - rank) * values.loc[i, "p_value"]))
    assert values["p_holm"].tolist() == pytest.approx([adjusted[i] for i in values.index])
    md = build_report(races, stages, values).to_markdown()
    assert "paired runs on the same deals" in md
    for row in values.itertuples():  # the table in the report holds these values
        assert f"| {row.joker} | 30 | {row.value_s:.4g} |" in md, row.joker


# ---- the simulate command: summary, timing, progress; report input -----------------

def _table_rows(text):
    """The cells of the rows of the rich tables printed in `text`."""
    return [[c.strip() for c in line.strip("│ ").split("│")] for line in text.splitlines() if line.startswith("│")]


def test_summary_counts_shared_first_places_1_over_k_like_the_report(capsys):
    # Two 3-player races, slots rotated by one seat in race 1 (policies A, B, C):
    # race 0 times (10, 10, 30): seats 0 and 1 (A, B) share the win, 1/2 each;
    # race 1 times (20, 40, 50), slots (1, 2, 0): seat 0 (B) wins alone.
    # Seats: 1.5, 0.5, 0 of 2 races; policies: A 0.5, B 1.5, C 0 of 2 seat-races.
    # Sprint, 3 players: a stage per player, 6 stages in the 2 races, 3 of them blocked.
    races = pd.DataFrame({"race": [0, 1], "winner": [-1, 0], "capped_stages": [0, 0], "blocked_stages": [2, 1],
                          "time_0": [10, 20], "time_1": [10, 40], "time_2": [30, 50],
                          "slot_0": [0, 1], "slot_1": [1, 2], "slot_2": [2, 0],
                          "rank_0": [1, 1], "rank_1": [1, 2], "rank_2": [3, 3],
                          "mountain_0": [0, 0], "mountain_1": [0, 0], "mountain_2": [0, 0],
                          "sprint_0": [0, 0], "sprint_1": [0, 0], "sprint_2": [0, 0]})
    summary = C.Summary({"players": 3, "policies": ["A", "B", "C"], "stages_per_race": 3, "wall_seconds": 0.5})
    summary.add(races.iloc[:1])  # one race per chunk: the sums over chunks are those of the whole
    summary.add(races.iloc[1:])
    C.print_summary(summary)
    out = capsys.readouterr().out
    assert "shared first places count 1/k" in " ".join(out.split())
    rows = [r[:4] for r in _table_rows(out)]
    assert rows == [["0", "2", "1.5", "0.750"], ["1", "2", "0.5", "0.250"], ["2", "2", "0", "0.000"],
                    ["A", "2", "0.5", "0.250"], ["B", "2", "1.5", "0.750"], ["C", "2", "0", "0.000"]]
    assert "2 races, 1 with a shared first place; of the 6 stages 3 blocked, 0 cut off by the turn cap; 0.50 s" in \
        " ".join(out.split())
    summary = C.Summary({"players": 3, "policies": ["A", "A", "A"], "stages_per_race": 3, "wall_seconds": 0.5})
    summary.add(races)  # one policy: no table per policy
    C.print_summary(summary)
    assert len(_table_rows(capsys.readouterr().out)) == 3


def test_wall_time_is_playing_time_not_compiling(tmp_path, monkeypatch):
    # A run's wall_seconds is the time its races were played: E.simulate first
    # compiles or loads its kernel (a run_batch call on no races) and starts its
    # clock after it, and the command adds up its chunks' times. The clock here
    # moves only when the test says: a compile costs 1000 s, each race 1 s,
    # nothing else any time. 20 races in two chunks of 10 played for exactly
    # 20 s; a clock started before the compile reads 1020 or more, a command
    # keeping one chunk's time 10. (It used to time real races against 0.3 s,
    # with the stand-in compile outside E.simulate, where no clock could see it.)
    clock = [0.0]
    real_batch = E.K.run_batch

    def run_batch(*args):
        race_out = args[6]
        clock[0] += 1000.0 if len(race_out) == 0 else float(len(race_out))
        return real_batch(*args)

    monkeypatch.setattr(E.K, "run_batch", run_batch)
    monkeypatch.setattr(E, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    out = tmp_path / "cold.parquet"
    summary, meta = C.simulate_command(3, 20, ["random"], 1, out, {}, chunk_size=10)
    assert clock[0] >= 2 * 1000 + 20  # each chunk compiled (or loaded) its kernel, then played its races
    assert meta["wall_seconds"] == 20.0
    assert summary.metadata["wall_seconds"] == 20.0
    assert read_metadata(out)["wall_seconds"] == 20.0


def test_progress_moves_within_a_chunk_and_batches_keep_the_records(tmp_path, monkeypatch):
    steps = []

    @contextlib.contextmanager
    def recording_bar(total, what, resumable=True, compiles=False):
        yield steps.append if what.startswith("etape") else (lambda n: None)  # the races, not the joining

    pols = ["random", "heuristic", "lookahead:playouts=8"]
    C.simulate_command(3, 25, pols, 4, tmp_path / "whole.parquet", {}, chunk_size=20, first_batch=1000)
    # The batches after the first chunk follow the speed it was played at: on a clock the test
    # moves (each race `per_race` seconds, nothing else any time), not the machine's.
    clock, per_race = [0.0], [0.01]
    real_batch = E.K.run_batch

    def run_batch(*args):
        clock[0] += per_race[0] * len(args[6])
        return real_batch(*args)

    monkeypatch.setattr(E.K, "run_batch", run_batch)
    monkeypatch.setattr(E, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(C, "progress_bar", recording_bar)
    C.simulate_command(3, 25, pols, 4, tmp_path / "batched.parquet", {}, chunk_size=20, first_batch=6)
    whole, batched = C.load_run(tmp_path / "whole.parquet"), C.load_run(tmp_path / "batched.parquet")
    # Chunk 0 (races 0-19) in batches of 6, 6, 6, 2. It took 0.2 s, so then
    # about C.BATCH_SECONDS (0.5 s) of play a call is 50 races: chunk 1 (races
    # 20-24) in one.
    assert [s for s in steps if s] == [6, 6, 6, 2, 5]
    pd.testing.assert_frame_equal(whole[0], batched[0])
    pd.testing.assert_frame_equal(whole[1], batched[1])
    # Races of 0.2 s: chunk 0 took 4 s, so 0.5 s of play is 2.5 races, 2 a call.
    steps.clear()
    per_race[0] = 0.2
    C.simulate_command(3, 25, pols, 4, tmp_path / "slow.parquet", {}, chunk_size=20, first_batch=6)
    assert [s for s in steps if s] == [6, 6, 6, 2, 2, 2, 1]
    slow = C.load_run(tmp_path / "slow.parquet")
    pd.testing.assert_frame_equal(whole[0], slow[0])
    pd.testing.assert_frame_equal(whole[1], slow[1])


def test_a_run_without_its_stages_file_is_refused_by_name(run, tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    lonely = tmp_path / "lonely.parquet"
    shutil.copy(run[0], lonely)
    with pytest.raises(ValueError, match="stages file .*lonely.stages.parquet is missing"):
        C.load_run(lonely)
    result = CliRunner().invoke(app, ["report", str(lonely), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 2
    assert "lonely.stages.parquet is missing" in " ".join(result.stderr.split())
    assert "Errno" not in result.stderr


def test_the_stages_file_given_for_the_run_file_names_the_run_file(run, tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    stages = run[0].with_name("run.stages.parquet")
    assert stages.exists()
    result = CliRunner().invoke(app, ["report", str(stages), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 2 and not (tmp_path / "rep").exists()
    assert (f"{stages}: this is the stages file of a Tape l'étape run; give the run file run.parquet (its stages "
            "are read beside it)") in " ".join(result.stderr.split())


def test_a_run_from_an_older_etappe_without_stage_places_is_refused_in_words(run, tmp_path):
    # Stage places (place_s) came with the gc_tie option: a run written before has none, and its
    # report would stop on a KeyError.
    import pyarrow.parquet as pq

    old = tmp_path / "old.parquet"
    shutil.copy(run[0], old)
    table = pq.read_table(C.stages_path(run[0]))
    pq.write_table(table.drop_columns([f"place_{s}" for s in range(4)]), C.stages_path(old))
    with pytest.raises(ValueError, match=r"stage records lack place_0, place_1, place_2, place_3; play the run again"):
        C.load_run(old)


@pytest.mark.parametrize("args, message", [
    (["--policy", "heuristic:pick=7"], "pick must be 0 (the profile that fits the hand) or 1 (at random), not 7"),
    (["--policy", "lookahead:playouts=0"], "playouts must be a whole number, 1 to 1000000, not 0"),
    (["--policy", "heuristic:value=abc"], "value must be a number >= 0, not 'abc'"),
    (["-o", "withhold_jokers=vitamine"], "withhold_seat and withhold_jokers go together"),
    (["-o", "endurance_stages=3"], "endurance_stages=3 applies to mode=endurance only"),
])
def test_simulate_refuses_bad_parameters_and_lone_options(args, message):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    result = CliRunner().invoke(app, ["simulate", "etape", "--games", "2", *args])
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_policies_listing_gives_the_valid_values(capsys):
    C.policies_command()
    out = " ".join(capsys.readouterr().out.split())
    for key, (must_be, _) in E.PARAMETER_RANGES.items():
        assert f"{key}: {must_be}" in out
    assert "playouts: a whole number, 1 to 1000000" in out and "joker_p: a probability, 0 to 1" in out
    # each policy with its defaults, as docs/etape.md gives them
    for policy, weights in (("random", "joker_p=0.25, more_p=0.5"), ("heuristic", "value=1, own=1, block=1,"),
                            ("high", "value=3, own=0.5, block=0,"), ("blocker", "value=0.5, own=0.5, block=3,"),
                            ("connector", "value=0.5, own=3, block=0.5,"), ("lookahead", "value=1, own=1, block=1,")):
        assert f"{policy} │ {weights}" in out


# ---- report formatting ---------------------------------------------------------------

Z = 1.959964


def test_every_rate_of_the_outcomes_profiles_and_anomalies_has_its_interval(run):
    _, races, stages = run
    md = build_report(races, stages).to_markdown()
    shared = int((races["winner"] < 0).sum())
    low, high = wilson(shared, 60)
    # as the race report writes a rate: the sign once, after the rate, and the bounds in the same unit
    assert (f"Races with a shared first place: {100 * shared / 60:.1f} % [{100 * low:.1f}, {100 * high:.1f}] (95 % "
            "Wilson interval).") in md
    anomalies = md[md.index("## Anomalies"):]
    assert f"| races with a shared first place | {shared} | 60 | {shared / 60:.4g} | {low:.4g} | {high:.4g} |" in anomalies
    assert "| jokers in the game never used | 0 | 3 | 0 |  |  |" in anomalies  # a count of 3 jokers: no interval
    for profile, group in stages.groupby("profile", observed=True):
        blocked = int(group["blocked"].sum())
        low, high = wilson(blocked, len(group))
        assert f"Blocked {100 * blocked / len(group):.2f} % [{100 * low:.2f}, {100 * high:.2f}]; " in md, profile
        picks = int((group["winner"] == group["picker"]).sum())
        low, high = wilson(picks, len(group))
        assert (f"The picker wins {100 * picks / len(group):.1f} % [{100 * low:.1f}, {100 * high:.1f}] of the "
                "stages, ") in md, profile
        none = int((group["winner"] < 0).sum())
        low, high = wilson(none, len(group))
        assert f"no stage winner in {100 * none / len(group):.2f} % [{100 * low:.2f}, {100 * high:.2f}]." in md, profile
        won = group[group["winner"] >= 0]  # the fair 1/4 is a share of the stages somebody won
        picker = int((won["winner"] == won["picker"]).sum())
        low, high = wilson(picker, len(won))
        assert (f"{100 * picker / len(won):.1f} % [{100 * low:.1f}, {100 * high:.1f}] of those with a winner "
                "(fair 25.0 %)") in md, profile
    assert "gains -" not in md  # a picker behind the others loses seconds
    # 60 races over 4 seats expect 15 wins a seat: no word on small expected counts
    assert "expected counts below 5" not in md


def test_a_seat_test_of_few_races_says_its_p_is_approximate():
    # 8 races over 4 seats expect 2 wins a seat, below Cochran's 5
    races, stages = E.simulate(4, 8, ["heuristic"], 3)
    md = build_report(races, stages).to_markdown()
    assert "(H0: every seat wins 1/4; expected counts below 5: the chi-square p is only approximate)" in md


def _joker_stages(crev):
    """Two races of two stages for three players, every stage field 0 but the Crevaison targets
    crev[race][stage][seat] (-1: not played); no Vitamine nor Braquet played."""
    rows = []
    for r, race in enumerate(crev):
        for g, targets in enumerate(race):
            row = {"race": r, "stage": g, "picker": 0, "profile": "plaine", "winner": 0, "blocked": 0}
            for s in range(3):
                row.update({f"{field}_{s}": 0 for field in E.K.STAGE_SEAT_FIELDS})
                row.update({f"crev_{s}": targets[s], f"vita_{s}": -1, f"braq_{s}": -1})
            rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs = {"players": 3, "policies": ["x", "x", "x"]}
    return df


def test_joker_shares_have_intervals_clustered_by_race():
    # race 0: seat 0 hits seat 1 in stage 0, seat 1 hits itself in the last stage; race 1: all three
    # in stage 0, seat 2 on itself
    stages = _joker_stages([[(1, -1, -1), (-1, 1, -1)], [(1, 2, 2), (-1, -1, -1)]])
    t = E.joker_usage(stages).set_index("joker")
    crev = t.loc["crevaison"]
    assert (crev["uses"], crev["use_rate"], crev["in_last_stage"], crev["on_self"]) == pytest.approx((5, 5 / 6, 0.2, 0.4))
    # per race (x, y), with t = 12.706205 (1 degree of freedom: 2 races), (z / t)^2 = .0237936:
    # use: (2, 3), (3, 3): R = 5/6, residuals -.5, .5, variance 2 * .5 / 36, effective size
    # (5/36) / (1/36) * .0237936 = 5 * .0237936
    # last stage: (1, 2), (0, 3): R = 1/5, residuals .6, -.6, variance 2 * .72 / 25, effective size
    # .16 / .0576 * .0237936; on self: (1, 2), (1, 3): R = 2/5, residuals .2, -.2, variance
    # 2 * .08 / 25, effective size .24 / .0064 * .0237936
    df_factor = (Z / 12.706205) ** 2
    for key, r, n in (("use_rate", 5 / 6, 5), ("in_last_stage", 0.2, 0.16 / 0.0576), ("on_self", 0.4, 0.24 / 0.0064)):
        assert (crev[f"{key}_low"], crev[f"{key}_high"]) == pytest.approx(wilson(r * n * df_factor, n * df_factor),
                                                                          abs=1e-5), key
    # the Vitamine, never played: 0 of 3 players in each of 2 races, taken as wholly alike within a
    # race: Wilson's interval of 0 in 2; of its 0 uses none in the last stage: no share, no interval
    vita = t.loc["vitamine"]
    assert (vita["use_rate"], vita["use_rate_low"]) == (0, 0)
    assert vita["use_rate_high"] == pytest.approx(Z * Z / (2 + Z * Z), abs=1e-6)
    assert np.isnan(vita["in_last_stage_low"]) and np.isnan(vita["on_self_low"])

def test_win_tables_print_wins_as_numbers_and_every_race_counts_once(run):
    _, races, stages = run
    outcomes = build_report(races, stages).sections[1]
    tables = [block[0] for block in outcomes.blocks if isinstance(block, tuple)]
    assert [table.columns[0] for table in tables] == ["policy", "seat"]  # both tables are checked below
    for table in tables:  # per policy, per seat: 60 races, shared wins split 1/k
        assert all(isinstance(w, str) and "e+" not in w for w in table["wins"])
        assert sum(float(w) for w in table["wins"]) == pytest.approx(60, abs=0.1 * len(table))


def test_figures_label_what_they_count_and_name_policies_legibly(run, drawn_panels):
    from etappe.reports import etape as R

    _, races, stages = run
    build_report(races, stages)
    ylabels = {fig.axes[0].get_xlabel(): fig.axes[0].get_ylabel() for fig in drawn_panels}
    assert ylabels["turns per stage"] == "stages" and ylabels["turns per race"] == "races"
    assert ylabels["winner's largest deficit (s)"] == "races"
    # The win-rate bars are labelled by policy family and what differs from its defaults, never cut:
    # the run's look-ahead plays 8 playouts, not the default's.
    ax = R.plot_rates(E.win_rates(races, "policy"), "policy")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["blocker", "heuristic", "lookahead:playouts=8", "random"]
    # Two specs of one family: the parameters that differ, wrapped at commas.
    two, _ = E.simulate(4, 8, ["heuristic", "heuristic:value=2,own=3,block=0.5,crev_cards=1"] * 2, 1)
    ax = R.plot_rates(E.win_rates(two, "policy"), "policy")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["heuristic",
                                                            "heuristic:value=2, own=3,\nblock=0.5, crev_cards=1"]


def test_the_win_rate_picker_and_left_card_figures_draw_the_numbers_of_their_tables():
    from etappe.reports import etape as R

    frame = pd.DataFrame({"seat": [0, 1], "win_rate": [0.5, 0.2], "ci_low": [0.3, 0.1], "ci_high": [0.6, 0.45]})
    ax = R.plot_rates(frame, "seat", fair=0.25)
    bars = ax.containers[-1]  # after the error bars' container
    assert [bar.get_width() for bar in bars] == [0.5, 0.2]
    # each bar's error bar spans its 95 % interval
    spans = [end for segment in bars.errorbar.lines[2][0].get_segments() for end in (segment[0][0], segment[1][0])]
    assert spans == pytest.approx([0.3, 0.6, 0.1, 0.45])
    assert ax.get_xlabel() == "win rate (95 % Wilson interval)"
    ax = R.plot_profile_advantage(pd.DataFrame({"profile": ["Montagne", "Sprint"], "picker_advantage_s": [12.0, -3.0]}))
    assert [bar.get_height() for bar in ax.containers[-1]] == [12.0, -3.0]
    assert list(ax.lines[0].get_ydata()) == [0, 0]  # the line of no advantage
    values = pd.DataFrame({"value": [1, 2], "left_share": [0.25, 0.5], "left_low": [0.2, 0.4], "left_high": [0.3, 0.7]})
    ax = R.plot_left_share(values)
    bars = ax.containers[-1]
    assert [bar.get_height() for bar in bars] == [0.25, 0.5]
    spans = [end for segment in bars.errorbar.lines[2][0].get_segments() for end in (segment[0][1], segment[1][1])]
    assert spans == pytest.approx([0.2, 0.3, 0.4, 0.7])


def test_the_caveat_says_what_each_policy_family_is_once():
    from etappe.reports.etape import caveat_text

    text = caveat_text({"policies": ["heuristic", "blocker:block=5", "random", "heuristic"]})
    assert ("these policies only: heuristic, blocker:block=5, random (heuristics: fixed scoring rules; "
            "random: uniform legal play, jokers at random);") in text


def test_the_report_says_what_its_rule_options_change(run):
    races, stages = E.simulate(4, 8, ["heuristic", "random"], 3, {"rotate_seats": False, "column_step": "free",
                                                                 "withhold_seat": 1, "withhold_jokers": "crevaison",
                                                                 "joker_refresh": "stage"})
    md = build_report(races, stages).to_markdown()
    assert "a player may use each once a stage, so use_rate, uses per player and race, may exceed 1" in md
    assert ("seats keep their policies (rotate_seats=false), so the seats' win rates mix seat and policy: "
            "this tests both") in md
    assert "under column_step=free a column that jumps past values strands them" in md
    assert "crevaison is withheld from seat 1 (rule options withhold_seat, withhold_jokers)" in md
    assert "**Stage time with the joker used minus without" in md
    # 4 players, seats rotating, one step at a time, every joker for every seat: none of those notes
    _, races, stages = run
    md = build_report(races, stages).to_markdown()
    for note in ("rotate_seats=false", "column_step=free a column", "With 3 players", "is withheld from seat",
                 "joker_refresh=stage"):
        assert note not in md


def test_outcomes_open_with_the_stages_the_turn_cap_cut_off(run):
    # turn_cap=1: a stage ends after the picker's turn, so it is cut off unless the picker emptied its hand
    races, stages = E.simulate(4, 20, ["heuristic", "random"], 1, {"turn_cap": 1})
    capped = int(stages["capped"].sum())
    assert capped == ((stages["turns"] == 1) & (stages["winner"] != stages["picker"])).sum() > 40
    md = build_report(races, stages).to_markdown()
    outcomes = md[md.index("## Outcomes\n"):md.index("## Skill matrix\n")]
    assert outcomes.split("\n\n")[1] == capped_text(capped, 80, 1)  # first, before the win rates
    assert "stages cut off by the turn cap | %d | 80 |" % capped in md  # and still under Anomalies
    # a run the cap never cut says nothing of it
    _, races, stages = run
    md = build_report(races, stages).to_markdown()
    assert "turn cap of" not in md[md.index("## Outcomes\n"):md.index("## Skill matrix\n")]


def test_a_rate_and_its_interval_read_as_in_every_report():
    # 1 of 4: Wilson by hand, centre (0.25 + 0.4802) / 1.9604 = 0.3725, half width
    # 1.96 sqrt(0.046875 + 0.060025) / 1.9604 = 0.3269: [0.0456, 0.6994]
    assert percent_ci(0.25, 0.0456, 0.6994) == "25.0 % [4.6, 69.9]"
    assert percent_ci(0.25, 0.0456, 0.6994, 2) == "25.00 % [4.56, 69.94]"
    assert percent_ci(0.25, float("nan"), 0.6994) == "25.0 %"  # no interval, no brackets
    assert percent_ci(1.0, 1 - 3.8415 / 100_003.84, 1.0) == "100.0 % [99.9962, 100.0]"  # percent's digits
    assert percent_text(0.125) == "12.5 %" and percent_text(None) == percent_text(float("nan")) == "n/a"


def test_the_turn_cap_line_is_stronger_when_most_stages_were_cut_off():
    assert capped_text(1, 400, 30) == (
        "1 of 400 stages (0.2 %) hit the turn cap of 30 turns (rule option turn_cap) and was cut off: it was timed "
        "on the cards left in hand then, not played to its end, and the tables below count it so (Anomalies).")
    assert capped_text(200, 400, 30).startswith("200 of 400 stages (50.0 %) hit the turn cap of 30 turns (rule "
                                               "option turn_cap) and were cut off: they were timed")
    most = "; raise turn_cap to play the stages out."
    assert capped_text(201, 400, 30).startswith("Most stages were cut off: 201 of 400 (50.2 %) hit the turn cap of "
                                               "30 turns") and capped_text(201, 400, 30).endswith(most)
    assert capped_text(80, 80, 1).startswith("Every stage was cut off: all 80 stages hit the turn cap of 1 turn "
                                             "(rule option turn_cap). They were timed on the cards left in hand "
                                             "then, not played to their end, so the win rates")


def test_a_stages_file_of_another_run_is_refused_naming_what_differs(run, tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    other = tmp_path / "other.parquet"
    C.simulate_command(4, 20, POLICIES, 9, other, {"crevaison_carry": False})
    mixed = tmp_path / "mixed.parquet"
    shutil.copy(run[0], mixed)  # 60 races at seed 17 ...
    shutil.copy(C.stages_path(other), C.stages_path(mixed))  # ... with the stages of 20 races at seed 9
    with pytest.raises(ValueError, match=r"mixed.stages.parquet belongs to another run \(races 20, not 60; seed 9, not 17\)"):
        C.load_run(mixed)
    result = CliRunner().invoke(app, ["report", str(mixed), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 2
    assert "belongs to another run (races 20, not 60; seed 9, not 17)" in " ".join(result.stderr.split())
    assert not (tmp_path / "rep").exists()


def test_simulate_command_holds_one_chunk_of_records_at_a_time(tmp_path, monkeypatch):
    # Memory must not grow with the races: when a chunk is played, the records
    # of every chunk before the previous one are gone (with and without --out).
    import gc
    import weakref

    real, chunks = E.simulate, []

    def watched(*args, **kwargs):
        gc.collect()
        assert all(ref() is None for pair in chunks[:-1] for ref in pair), "records of earlier chunks are held"
        races, stages = real(*args, **kwargs)
        chunks.append((weakref.ref(races), weakref.ref(stages)))
        return races, stages

    monkeypatch.setattr(C.E, "simulate", watched)
    for out in (None, tmp_path / "r.parquet"):
        chunks.clear()
        summary, _ = C.simulate_command(3, 40, ["random"], 4, out, {}, chunk_size=10)
        assert len(chunks) == 4 and summary.races == 40


def test_simulate_out_says_what_it_wrote(tmp_path):
    from typer.testing import CliRunner

    from etappe.cli.main import app

    out = tmp_path / "run.parquet"
    result = CliRunner().invoke(app, ["simulate", "etape", "--games", "12", "--out", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert f"wrote {out} (12 races) and its stages {tmp_path / 'run.stages.parquet'}" in said
    # and its summary: 4 players by default, in sprint mode a stage per player (rules page): 48 stages
    assert re.search(r"12 races, \d+ with a shared first place; of the 48 stages \d+ blocked", said), said
    result = CliRunner().invoke(app, ["simulate", "etape", "--games", "12"])
    assert "wrote" not in result.stdout


def test_the_report_of_a_run_file_is_that_of_its_records(run, tmp_path):
    # `etappe report` reads the run a batch of chunks at a time into a RunSummary (summarize_run): the same
    # tables and the same report as the whole run's records.
    out, races, stages = run
    rows_read = []
    whole, read = E.summarize(races, stages), C.summarize_run(out, progress=rows_read.append, batch_rows=50)
    assert (read.races, read.stages) == (60, 240) and read.attrs == races.attrs
    assert len(rows_read) > 1 and sum(rows_read) == 60 + 240  # the bar counts the rows of both files
    for table in ("profile_stats", "profile_by_policy", "joker_usage", "joker_stage_effect", "anomalies",
                  "length_table", "tension_table", "card_values", "head_to_head", "side_classifications"):
        pd.testing.assert_frame_equal(getattr(read, table)(), getattr(whole, table)(), check_exact=True, obj=table)
    assert build_report(read).to_markdown() == build_report(races, stages).to_markdown()
    C.report_command(out, tmp_path / "rep")
    assert (tmp_path / "rep" / "report.md").read_text() == build_report(races, stages).to_markdown()


def test_a_run_read_in_batches_of_whole_races_gives_the_paired_metrics_of_the_whole_run(run):
    # `etappe report A B` of two runs reads each a batch of races at a time (iter_run), the stage fields
    # paired_metrics uses only: each batch holds whole races, the same in both files, and together
    # they give the whole run's metrics.
    out, races, stages = run
    batches = list(C.iter_run(out, E.PAIRED_STAGE_FIELDS, batch_rows=9))  # 60 races of 4 stages
    assert len(batches) > 10
    for batch_races, batch_stages in batches:
        assert batch_races.attrs == races.attrs and "coln_0" not in batch_stages and "secs_0" not in batch_stages
        assert list(batch_races["race"]) == sorted(set(batch_stages["race"]))
        assert (batch_stages.groupby("race").size() == 4).all()
    pd.testing.assert_frame_equal(pd.concat([E.paired_metrics(r, s) for r, s in batches]),
                                  E.paired_metrics(races, stages), check_exact=True)


def test_a_run_is_read_as_it_goes_and_a_races_file_cut_short_is_refused(run, tmp_path, monkeypatch):
    out, races, stages = run
    real, pulled = C.iter_parquet, []

    def counting(path, *args):
        for batch in real(path, *args):
            pulled.append(path)
            yield batch

    monkeypatch.setattr(C, "iter_parquet", counting)
    batches = C.iter_run(out, E.PAIRED_STAGE_FIELDS, batch_rows=9)
    first_races, _ = next(batches)
    # the first batch of stages needs the first races only: memory does not grow with the run
    assert pulled.count(out) <= 2 and len(first_races) < 5
    # a races file with the run's metadata but races missing at its end (changed by hand) is refused
    short = tmp_path / "short.parquet"
    write_parquet(races.head(50), short, read_metadata(out))
    shutil.copy(C.stages_path(out), C.stages_path(short))
    with pytest.raises(ValueError, match="short.parquet ends before race 5[0-9] of its stages file"):
        list(C.iter_run(short, E.PAIRED_STAGE_FIELDS, batch_rows=9))


def test_progress_table_equals_mean_curves_of_the_long_table(run):
    # progress_table sums the stage rows with numpy (one row per race and stage); the table is
    # stats.mean_curves' of the long table stage x seat, clustered by race, in any row order.
    from etappe.analysis.stats import mean_curves

    _, _, stages = run
    policies = np.asarray(stages.attrs["policies"], dtype=object)
    shuffled = stages.sample(frac=1, random_state=3)
    doubled = pd.concat([stages, stages.head(7)])  # two rows of one stage: the long table's way
    doubled.attrs = stages.attrs
    for by in ("policy", "seat"):
        for value in ("gap", "cum"):
            for table in (stages, shuffled, doubled):
                cum = table[[f"cum_{s}" for s in range(4)]].to_numpy(np.int64)
                y = cum - cum.min(axis=1, keepdims=True) if value == "gap" else cum
                long = pd.concat([pd.DataFrame({
                    "group": policies[table[f"slot_{s}"].to_numpy()] if by == "policy" else np.full(len(y), f"seat {s}", object),
                    "after_stage": table["stage"].to_numpy() + 1, "race": table["race"].to_numpy(), "y": y[:, s].astype(float)})
                    for s in range(4)], ignore_index=True)
                pd.testing.assert_frame_equal(E.progress_table(table, by, value),
                                              mean_curves(long, "after_stage", cluster="race"), check_exact=True)


def test_simulate_command_takes_a_policy_list_that_repeats_around_the_table(tmp_path, capsys):
    # As simulate (docs/etape.md, Use): A, B at 4 seats plays A, B, A, B, and the run
    # records a policy per seat slot, so its summary and report read every slot.
    out = tmp_path / "run.parquet"
    summary, meta = C.simulate_command(4, 6, ["heuristic", "random"], 5, out, {})
    assert meta["policies"] == [E.parse_policy(p)[2] for p in ["heuristic", "random"] * 2]
    C.print_summary(summary)
    assert "race wins per policy" in capsys.readouterr().out
    races, _ = C.load_run(out)
    pd.testing.assert_frame_equal(races, E.simulate(4, 6, ["heuristic", "random"] * 2, 5)[0])
    with pytest.raises(ValueError, match="3 policies for 4 players"):
        C.simulate_command(4, 6, ["heuristic", "random", "high"], 5, tmp_path / "other.parquet", {})
    assert not list(tmp_path.glob("other*"))


def test_a_report_of_no_races_is_refused_with_a_reason():
    # simulate(races=0) gives empty tables (docs/python.md); the report divided by zero
    races, stages = E.simulate(players=4, races=0, seed=1)
    with pytest.raises(ValueError, match="a run of no races has nothing to report"):
        build_report(races, stages)
