"""Ctrl-C faked inside a test's own process, for the resume tests."""
from etappe.analysis.race import RaceRun

PLAY = RaceRun.play  # as imported, before any test patches it: a second interruption wraps the real play


def interrupt_play_after(monkeypatch, calls: int) -> dict:
    """RaceRun.play raises KeyboardInterrupt from its call number `calls` + 1
    on; returns the count of calls so far ({"n": ...})."""
    seen = {"n": 0}

    def play(self, first, count):
        seen["n"] += 1
        if seen["n"] > calls:
            raise KeyboardInterrupt
        return PLAY(self, first, count)

    monkeypatch.setattr(RaceRun, "play", play)
    return seen
