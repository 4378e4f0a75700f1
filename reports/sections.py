"""Report pieces the race, Bremen and Tape l'étape reports share."""
from __future__ import annotations

import pandas as pd

from . import plots


def tension_figures(section, lead_changes: pd.DataFrame, deficit: pd.DataFrame, lead_label: str,
                    deficit_label: str, lead_name: str, deficit_name: str) -> None:
    """The two tension figures of a report: the histogram of lead changes,
    and the histogram and ECDF of the eventual winner's largest deficit
    (left out when no game has one). The frames are histogram tables
    (value, count, ecdf); the names are the figures' file names."""
    ax = plots.histogram(lead_changes, xlabel=lead_label)
    section.figure(ax.figure, lead_label[0].upper() + lead_label[1:], name=lead_name)
    if len(deficit):
        section.figure(plots.length_panel(deficit, deficit_label), "How far behind the eventual winner was",
                       name=deficit_name)
