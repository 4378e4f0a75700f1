"""The comparison report of two variants of Bremer Stadtmusikanten or Tape
l'étape (`etappe compare bremen --option-b ...`, `etappe report a b`).

It lays out what analysis/variants.py computed: the run and what differs
between the variants, the headline answers, every metric as a paired
difference with its interval and Holm's correction, the method and the
caveat. This module computes no statistics of its own.
"""
from __future__ import annotations

import shlex

import pandas as pd

from ..analysis import bremen as B
from ..analysis import etape as E
from ..analysis.variants import UNIT, VariantComparison, variant_table, what_differs
from ..analysis.stats import alone_text, counted, difference_text, p_text
from ..kernels.options import option_text
from . import bremen as bremen_report
from . import etape as etape_report
from . import plots
from .document import Report, significant
from .sections import option_b_words, option_words, policy_files

__all__ = ["build_variant_report"]

GAME_NAMES = {"bremen": "Bremer Stadtmusikanten", "etape": "Tape l'étape"}
# The headline questions, in order: (metric key, question).
HEADLINES = {
    "bremen": (("turns", "Which variant plays longer games?"),
               ("first_player_gap", "Which gives the first player the larger edge (distance from the fair share)?"),
               ("lead_changes", "Which has more lead changes?"),
               ("capped", "Which stalls more often (turn cap)?")),
    "etape": (("race_turns", "Which variant plays longer races?"),
              ("lead_changes", "Which has more GC lead changes?"),
              ("leader_before_last_won", "In which does the GC leader before the last stage win more often?"),
              ("capped_stages", "Which has more stages cut off by the turn cap?")),
}


def variant_names(differs: pd.DataFrame) -> tuple[str, str]:
    """Short names of A and B: what differs ("harder=false" against "harder=true")."""
    def name(column: str) -> str:
        return ", ".join(f"{item.removeprefix('option ')}={value}" if item.startswith("option ") else value
                         for item, value in zip(differs["item"], differs[column]))
    return name("a"), name("b")


def policy_list(game: str, policies) -> str:
    """The policies by seat (or slot), each without the parameters at their defaults."""
    return ",".join(E.compact_spec(str(p)) if game == "etape" else str(p) for p in policies)


def policy_parameters(game: str, policies) -> str:
    """Each distinct policy with every parameter it plays with (reports.md's header): Tape
    l'étape's canonical specs hold them all, Bremen's only those away from the defaults."""
    if game == "bremen":
        return bremen_report.policy_parameters(policies)
    return "; ".join(dict.fromkeys(map(str, policies)))


def reproduce_command(vc: VariantComparison) -> str:
    """The `etappe compare` command that plays this comparison again: every
    rule option of A written out, as the run recorded it (a later change of a
    default does not change the games), and B's that differ as --option-b."""
    a, b = vc.meta_a, vc.meta_b
    words = [vc.game, "--players", str(a["players"]), "--games", str(vc.games), "--seed", str(a["seed"]),
             "--policy", policy_list(vc.game, a["policies"]),
             *option_words(a["options"]),
             *option_b_words(a["options"], b["options"])]
    if vc.game == "bremen":
        if a.get("board_hash") != B.load_board(None).hash:
            words += ["--board", str(a.get("board_path"))]
        if b.get("board_hash") != a.get("board_hash"):
            words += ["--board-b", str(b.get("board_path"))]
    return "etappe compare " + shlex.join(words)


def common_options(a: dict, b: dict) -> str:
    """The rule options both variants play with, `name=value, ...` by name;
    what_differs gives the others, each variant's value."""
    return option_text({k: v for k, v in sorted(a["options"].items()) if b["options"].get(k) == v})


def _boards(a: dict, b: dict) -> dict[str, bool]:
    """Each board as the report names it -> whether its file says it is a
    reconstruction (a run without the flag: the default board's, true)."""
    if a.get("board_hash") == b.get("board_hash"):
        return {"the board": bool(a.get("board_reconstruction", True))}
    return {f"board {key} ({meta.get('board')})": bool(meta.get("board_reconstruction", True))
            for key, meta in (("A", a), ("B", b))}


def _headline(row: pd.Series, question: str, name_a: str, name_b: str, unit: str = "game") -> str:
    if row["n"] == 0:
        return f"{question} Not measured: no game gives this metric in both variants."
    numbers = f"{row['metric']}: A {significant(row['mean_a'])}, B {significant(row['mean_b'])}"
    if row["diff"] == 0 and (row["sd"] == 0 or row["n"] == 1):
        room = (f"; 95 % interval of A - B [{row['ci_low']:+.4g}, {row['ci_high']:+.4g}]"
                if row["ci_low"] < row["ci_high"] else "")
        pairs = "the one pair" if row["n"] == 1 else f"every one of the {int(row['n'])} pairs"
        return f"{question} Equal in {pairs} ({numbers}{room})."
    if row["n"] == 1 and pd.isna(row["diff"]):  # a distance from the fair share needs two pairs
        return f"{question} Not measured from one pair: play more {unit}s."
    if row["n"] == 1:  # one pair has no spread: no interval, no test
        return (f"{question} One pair only, so no interval and no test: play more {unit}s "
                f"({numbers}; A - B = {row['diff']:+.4g}).")
    larger = name_a if row["diff"] > 0 else name_b
    # equal on average (though not in every pair) leans nowhere; a difference only the test alone finds leans
    alone = alone_text(row["p_value"]) if row["diff"] != 0 else ""
    if row["reject"]:
        answer = f"**{larger}**"
    else:
        answer = f"No clear difference (leaning {larger}: {alone})" if alone else "No clear difference"
    spread = (f"in every one of the {int(row['n'])} pairs" if row["sd"] == 0  # the sign test; no interval
              else f"[{significant(row['ci_low'])}, {significant(row['ci_high'])}]")
    return (f"{question} {answer}. {numbers}; A - B = {row['diff']:+.4g} {spread}, Holm {p_text(row['p_holm'])}, "
            f"n = {int(row['n'])}.")


def build_variant_report(vc: VariantComparison, on_section=None) -> Report:
    a, b = vc.meta_a, vc.meta_b
    unit = UNIT[vc.game]
    differs = what_differs(a, b)
    name_a, name_b = variant_names(differs)
    table = variant_table(vc)
    rep = Report(f"{GAME_NAMES[vc.game]}: {name_a} (A) against {name_b} (B), {a['players']} players",
                 on_section=on_section)

    sec = rep.section("Run")
    rows = [("game", GAME_NAMES[vc.game]), ("players", a["players"]),
            ("policies by seat" if vc.game == "bremen" else "policies by slot", policy_list(vc.game, a["policies"])),
            ("policy parameters", policy_parameters(vc.game, a["policies"])),
            *([("policy files", policy_files(a["policy_sources"]))] if a.get("policy_sources") else []),
            ("seed", a["seed"]), (f"{unit}s per variant (paired on the same seeds)", vc.games),
            ("rule options of both (A's and B's that differ: below)", common_options(a, b))]
    if vc.game == "bremen":
        rows += [("board A", f"{a.get('board')} ({a.get('board_hash')})"),
                 ("board B", f"{b.get('board')} ({b.get('board_hash')})")]
    for key, meta in (("A", a), ("B", b)):
        seconds = meta.get("wall_seconds") or 0.0
        rate = f", {vc.games / seconds:,.0f} {unit}s/s" if seconds > 0 else ""
        rows.append((f"wall time {key}", f"{seconds:.2f} s of play{rate}"))
    rows.append(("etappe version", a.get("version")))
    sec.table(pd.DataFrame(rows, columns=["item", "value"]).astype(str), "Everything needed to reproduce the comparison")
    sec.table(differs, "What differs between A and B (every other rule option is the same in both: above)")
    sec.text("Reproduce: " + reproduce_command(vc))
    boards = _boards(a, b) if vc.game == "bremen" else {}
    marked = [name for name, rec in boards.items() if rec]
    if marked:
        sec.text(f"{bremen_report.reconstructions(marked)} (see the caveat).")

    sec = rep.section("At a glance")
    sec.text(f"Both variants play the same {counted(vc.games, unit)} (the same seeds), compared {unit} by {unit}. A variant "
             "is named only where Holm's correction over every metric below still finds the difference.")
    for key, question in HEADLINES[vc.game]:
        rows = table[table["key"] == key]
        if len(rows):
            sec.text(_headline(rows.iloc[0], question, name_a, name_b, unit))

    sec = rep.section("Every metric")
    shown = table.copy()
    shown["A - B [95 % interval]"] = [difference_text(d, lo, hi, n) for d, lo, hi, n
                                      in zip(shown["diff"], shown["ci_low"], shown["ci_high"], shown["n"])]
    sec.table(shown[["metric", "unit", "mean_a", "mean_b", "A - B [95 % interval]", "p_value", "p_holm", "reject",
                     "n"]], f"Paired differences, {unit} by {unit} (A - B)")
    spread = table[table["sd"] > 0]  # in sd units: a constant difference has none (as the race report's forest)
    if len(spread):
        ax = plots.forest(spread, title=f"Paired differences ({name_a} - {name_b})")
        sec.figure(ax.figure, "Paired differences in standard-deviation units (filled: Holm-significant); "
                   "metrics that differ by the same amount in every game have no sd and are not drawn",
                   name="variant_differences")

    sec = rep.section("Method")
    needs_winner = ("the first player's win rate, the winner's deficit, the final gap" if vc.game == "bremen" else
                    "the winner's deficit, the final gap, whether the leader before the last stage won")
    fair = (" The first player's distance from the fair share (1 / players) is |rate - fair| of A minus that of B, "
            "its interval from the same paired games." if vc.game == "bremen" else
            " A shared first place counts 1/k to each of the k seats that share it.")
    # Bremen deals no cards, Tape l'étape rolls no dice
    shared = "the first player drawn, the dice" if vc.game == "bremen" else "the deals"
    sec.text(f"{unit.capitalize()} i of both variants starts from the same keys (root seed and {unit} index), so "
             f"{shared} and the policies' random choices are shared as far as the rules let them be: the "
             f"differences are paired {unit} by {unit} (common random numbers), more precise than two "
             f"independent runs as far as the variants' {unit}s stay alike (the intervals come from the paired "
             f"differences, so they hold either way). Each row is the mean of the per-{unit} differences (A - B) with a 95 % Student t "
             f"interval (on the {unit}s in which the variants differ, less one, as degrees of freedom; for a rate or a "
             f"share, clipped to [-1, 1]); p is the two-sided t-test (where every {unit} differs by the same non-zero amount, the "
             f"exact sign test); a rate of 0 or 1 a {unit} takes instead Tango's score interval and McNemar's exact "
             f"test of the {unit}s in which the variants differ (docs/statistics.md); and Holm's step-down "
             f"correction runs over every row that has a p (a metric equal "
             f"in every {unit} has nothing to test). A metric that needs a winner ({needs_winner}) counts only the "
             f"{unit}s with one in both variants: its n says how many.{fair}")
    caveat = bremen_report.caveat_text(a["policies"], boards) if vc.game == "bremen" else etape_report.caveat_text(a)
    rep.section("Caveat").text(caveat)
    return rep
