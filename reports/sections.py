"""Report pieces the race, Bremen and Tape l'étape reports share."""
from __future__ import annotations

import shlex

import pandas as pd

from ..kernels.options import option_text
from . import plots


def command_line(command: list[str], players: int | None, games: int | None, policies: list[str], options: dict,
                 seed: int | None, extra: tuple[str, ...] = ()) -> str:
    """The etappe command line (`command`: its words after `etappe`, e.g.
    ["simulate", deck]) that plays a run again, record for record: the
    policies by seat as `policy_cycle` gives them; every rule option as the run
    recorded it (a later change of a default does not change the run);
    `extra` options (quoted already) before the seed; quoted for a shell.
    What the run's metadata lacks (None) is left out."""
    parts = ["etappe", shlex.join(command)]
    if players is not None:
        parts.append(f"--players {players}")
    if games is not None:
        parts.append(f"--games {games}")
    if policies:
        parts.append("--policy " + shlex.quote(policy_cycle(policies)))
    if options:
        parts.append(shlex.join(option_words(options)))
    parts.extend(extra)
    if seed is not None:
        parts.append(f"--seed {seed}")
    return " ".join(parts)


def policy_files(sources: dict | None) -> str:
    """The policies of your own of a run (its `policy_sources`) with their
    files' hashes, which tell the version played; "" where it has none."""
    return "; ".join(f"{spec} (file sha256 {digest})" for spec, digest in (sources or {}).items())


def policy_cycle(policies: list[str]) -> str:
    """The policies by seat as `--policy` takes them: the shortest list that
    repeats around the table to them (one for all seats: given once)."""
    size = next(k for k in range(1, len(policies) + 1)
                if len(policies) % k == 0 and policies == policies[:k] * (len(policies) // k))
    return ",".join(policies[:size])


def option_words(options: dict) -> list[str]:
    """`--option NAME=VALUE` words for every rule option given, by name: a
    command that writes each one plays the same games after a default changes."""
    return [word for key, value in sorted(options.items()) for word in ("--option", option_text({key: value}))]


def option_b_words(options_a: dict, options_b: dict) -> list[str]:
    """`etappe compare`'s `--option-b NAME=VALUE` words for B's rule options
    that A's do not already give (compare plays B with A's options but these)."""
    return [word for key, value in sorted(options_b.items()) if options_a.get(key) != value
            for word in ("--option-b", option_text({key: value}))]


def tension_figures(section, lead_changes: pd.DataFrame, deficit: pd.DataFrame, lead_label: str,
                    deficit_label: str, lead_name: str, deficit_name: str, counted: str = "games") -> None:
    """The two tension figures of a report: the histogram of lead changes,
    and the histogram and ECDF of the eventual winner's largest deficit
    (left out when no game has one). The frames are histogram tables
    (value, count, ecdf) of one row per game (or race: `counted`); the
    names are the figures' file names."""
    ax = plots.histogram(lead_changes, xlabel=lead_label, counted=counted)
    section.figure(ax.figure, lead_label[0].upper() + lead_label[1:], name=lead_name)
    if len(deficit):
        section.figure(plots.length_panel(deficit, deficit_label, counted=counted, zero_alone=True),
                       "How far behind the eventual winner was (0, never behind, a bar of its own)", name=deficit_name)


NO_SKILL_MATRIX = ("Every seat plays the same policy, so there is no skill matrix: give the seats different "
                   "policies ({policies}) to see whether skill matters.")


def skill_section(section, h2h: pd.DataFrame, unit: str, ahead: str, policies: str, note: str,
                  figure_name: str) -> None:
    """The skill matrix of one run with different policies at the table
    (h2h from stats.skill_table): its reading, table and heatmap; or one line
    saying there is none. unit: "game" or "race"; ahead: what finishing
    ahead means; policies: an example set of policies to seat."""
    from .tournament_report import skill_heatmap

    if not len(h2h):
        section.text(NO_SKILL_MATRIX.format(policies=policies))
        return
    section.text(f"Head to head within this run: the share of seat pairs (a seat of the row policy against a seat "
                 f"of the column policy on another side of the same {unit}) in which the row policy finished ahead "
                 f"({ahead}). n (pairs) counts seat pairs; the intervals count the pairs of one "
                 f"{unit} together (clustered by {unit}), as they are not independent. {note}")
    section.table(h2h, f"Head to head: finishing ahead (95 % interval, clustered by {unit})")
    ax = skill_heatmap(h2h, title="Skill matrix: row finishes ahead of column", score_label="score (ahead + level / 2)")
    section.figure(ax.figure, "Skill matrix: score of the row policy against the column policy "
                              "((ahead + level / 2) / seat pairs)",
                   figure_name)
