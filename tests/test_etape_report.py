"""Tape l'étape: the simulate command's files and the report."""
import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from etappe.analysis import etape as E  # noqa: E402
from etappe.analysis.runio import read_metadata  # noqa: E402
from etappe.cli import etape as C  # noqa: E402
from etappe.reports.etape import build_report  # noqa: E402

POLICIES = ["heuristic", "random", "blocker", "high"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("etape") / "run.parquet"
    races, stages = C.simulate_command(4, 60, POLICIES, 17, out, {"crevaison_carry": False})
    return out, races, stages


def test_simulate_command_writes_both_files_with_identity(run):
    out, races, stages = run
    assert out.exists() and C.stages_path(out).exists()
    assert C.stages_path(out).name == "run.stages.parquet"
    assert not out.with_name("run.parquet.parts").exists()
    meta = read_metadata(out)
    assert meta["game"] == "etape" and meta["seed"] == 17 and meta["players"] == 4
    assert meta["options"]["crevaison_carry"] is False and len(meta["policies"]) == 4
    back_races, back_stages = C.load_run(out)
    pd.testing.assert_frame_equal(back_races, races)
    pd.testing.assert_frame_equal(back_stages, stages)
    # The files hold the same races simulate() plays with the same seed.
    direct, _ = E.simulate(4, 60, POLICIES, 17, {"crevaison_carry": False})
    pd.testing.assert_frame_equal(direct, races)


def test_simulate_command_resumes_finished_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(C, "CHUNK", 10)
    full = C.simulate_command(3, 25, ["random"], 4, None, {})
    out = tmp_path / "r.parquet"
    real, calls = E.simulate, []

    def interrupted(*args, **kwargs):
        if calls:
            raise KeyboardInterrupt
        calls.append(kwargs["first_race"])
        return real(*args, **kwargs)

    monkeypatch.setattr(C.E, "simulate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        C.simulate_command(3, 25, ["random"], 4, out, {})
    assert not out.exists()
    with pytest.raises(ValueError, match="different run"):  # other seed: parts refused
        C.simulate_command(3, 25, ["random"], 5, out, {})

    def counted(*args, **kwargs):
        calls.append(kwargs["first_race"])
        return real(*args, **kwargs)

    monkeypatch.setattr(C.E, "simulate", counted)
    resumed = C.simulate_command(3, 25, ["random"], 4, out, {})
    assert calls == [0, 10, 20]  # chunk 0 played once, before the interruption
    pd.testing.assert_frame_equal(full[0], resumed[0])
    pd.testing.assert_frame_equal(full[1], resumed[1])


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


def test_report_shows_paired_joker_values_when_given():
    races, stages = E.simulate(4, 30, POLICIES, 2)
    values = E.joker_value(4, 30, POLICIES, 2)
    assert list(values["joker"]) == ["crevaison", "vitamine", "braquet"]
    md = build_report(races, stages, values).to_markdown()
    assert "paired runs on the same deals" in md
