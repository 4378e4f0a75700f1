"""Fixtures shared by the report tests."""
import pytest


@pytest.fixture
def drawn_panels(monkeypatch):
    """The figures reports.plots.length_panel draws while the test runs (every
    report calls it through that one module), in the order drawn."""
    from etappe.reports import plots

    panels = []
    real_panel = plots.length_panel

    def keep(*args, **kwargs):
        panels.append(real_panel(*args, **kwargs))
        return panels[-1]

    monkeypatch.setattr(plots, "length_panel", keep)
    return panels
