"""The report of a policy tournament: skill matrix heatmap, ratings, pairings.

`build_tournament_report(result, meta=None)` lays out what
`etappe.analysis.tournament` computed: header (all that is needed to
reproduce it), at a glance, the skill matrix (heatmap of row-vs-column
scores with 95 % intervals), Bradley-Terry / Elo ratings with intervals, the
pairings (wins, losses, no winner, score by who started), method and caveat.
This module computes no statistics of its own.
"""
from __future__ import annotations

import json
import shlex

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from ..analysis.stats import counted
from ..analysis.tournament import TournamentResult, bradley_terry, elo_from_score, head_to_head, pair_table, score_matrix
from ..kernels.options import option_text, unused_options_text
from .document import Report, percent, percent_ci, percent_text
from .race_report import deck_argument, design_name, options_in_play, policy_text, unused_options

__all__ = [
    "build_tournament_report", "skill_heatmap", "rating_chart", "tournament_header", "reproduce_tournament",
    "no_winner_causes", "no_winner_text", "NO_SCORE",
]


def skill_heatmap(h2h: pd.DataFrame, ax: Axes | None = None, title: str = "Skill matrix: score of row vs column",
                  score_label: str = "score (wins + no-winner / 2)") -> Axes:
    """Heatmap of a head_to_head table: cell (row, column) = row's score
    against column, annotated with the 95 % interval; 0.5 is white."""
    m = score_matrix(h2h, "score")
    lo = score_matrix(h2h, "ci_low")
    hi = score_matrix(h2h, "ci_high")
    k = len(m)
    if ax is None:
        size = 1.2 + 1.1 * max(k, 2)
        ax = Figure(figsize=(size + 1.2, size)).add_subplot()
    img = ax.imshow(m.to_numpy(float), cmap="RdBu", vmin=0.0, vmax=1.0)
    for i in range(k):
        for j in range(k):
            v = m.iat[i, j]
            if i == j or not np.isfinite(v):
                ax.text(j, i, "-" if i == j else NO_SCORE.replace(" ", "\n"), ha="center", va="center",
                        fontsize=8, color="#777")
                continue
            dark = abs(v - 0.5) > 0.3
            ax.text(j, i, f"{percent(v)} %\n[{percent(lo.iat[i, j])}, {percent(hi.iat[i, j])}]",
                    ha="center", va="center", fontsize=8, color="white" if dark else "black")
    ax.set_xticks(range(k), [str(c) for c in m.columns], rotation=30, ha="right")
    ax.set_yticks(range(k), [str(r) for r in m.index])
    ax.set_xlabel("opponent")
    ax.set_ylabel("policy")
    ax.set_title(title)
    bar = ax.figure.colorbar(img, ax=ax, fraction=0.046, pad=0.04, label=score_label)
    bar.ax.yaxis.set_major_formatter(PercentFormatter(1.0, symbol=" %"))  # in % as the cells are, "50 %"
    return ax


def rating_chart(ratings: pd.DataFrame, ax: Axes | None = None, title: str = "Elo (Bradley-Terry) with 95 % intervals") -> Axes:
    """Horizontal points with interval bars of a bradley_terry table."""
    r = ratings.iloc[::-1]
    if ax is None:
        ax = Figure(figsize=(6.4, 0.6 + 0.45 * max(len(r), 2))).add_subplot()
    y = np.arange(len(r))
    elo = r["elo"].to_numpy(float)
    err = np.vstack([np.maximum(elo - r["elo_low"].to_numpy(float), 0), np.maximum(r["elo_high"].to_numpy(float) - elo, 0)])
    ax.errorbar(elo, y, xerr=err, fmt="o", color="#1f77b4", capsize=3)
    ax.axvline(0.0, color="#999", lw=0.8, ls="--")
    ax.set_yticks(y, r["policy"].astype(str))
    ax.set_xlabel("Elo")
    ax.set_title(title)
    return ax


def reproduce_tournament(meta: dict) -> str:
    """The `etappe tournament` command that plays the tournament and rates it
    again: the rule options given for it, the bootstrap and anchor the report
    was rated with (meta's "bootstrap", "anchor"), quoted for a shell."""
    parts = ["etappe tournament", shlex.quote(deck_argument(meta)),
             "--policies " + shlex.quote(",".join(meta.get("policies") or [])),
             f"--players {meta.get('players')}", f"--games {meta.get('games')}", f"--seed {meta.get('seed')}"]
    given = meta.get("options_given")
    for key, value in sorted((given if given is not None else meta.get("options") or {}).items()):
        parts.append("--option " + shlex.quote(option_text({key: value})))
    if meta.get("bootstrap") is not None:
        parts.append(f"--bootstrap {meta['bootstrap']}")
    if meta.get("anchor"):
        parts.append("--anchor " + shlex.quote(meta["anchor"]))
    return " ".join(parts)


def tournament_header(meta: dict) -> pd.DataFrame:
    wall = meta.get("wall_seconds")
    total = meta.get("games_total")
    details = [policy_text(p) for p in meta.get("policy_details") or []]
    rows = [
        ("game", meta.get("game", "race")),
        ("design", design_name(meta)),
        ("design file", meta.get("design_file", "")),
        ("design hash", meta.get("design_hash", "")),
        ("rule options", json.dumps(options_in_play(meta), sort_keys=True)),
        ("rule options that change nothing here", unused_options_text(unused_options(meta)) or "none"),
        ("players / sides", f"{meta.get('players')} players, {meta.get('sides')} sides "
                            f"(seat -> side: {meta.get('seat_side')})"),
        ("policies", "; ".join(details) or ", ".join(meta.get("policies") or [])),
        ("seat design", meta.get("seating", "")),
        ("games per pairing", meta.get("games")),
        ("games in all", total),
        ("root seed", meta.get("seed")),
        ("package version", meta.get("version", "")),
        ("wall time", f"{wall:.2f} s" if isinstance(wall, (int, float)) else ""),
        ("games per second", f"{total / wall:.0f}" if isinstance(wall, (int, float)) and wall > 0 and total else ""),
        ("reproduce", reproduce_tournament(meta)),
    ]
    return pd.DataFrame({"item": [r[0] for r in rows], "value": [str(r[1]) for r in rows]})


NO_SCORE = "no winner"  # a pairing's cell where none of its games had a winner: no score to show

# Scores of 55 : 45 and 76 : 24 are 35 and 200 Elo apart (Elo = 400 log10(s / (1 - s))).
LITTLE_SCORE, LOT_SCORE = 0.55, 0.76


def no_winner_causes(meta: dict) -> str:
    """What leaves a game of the tournament without a winner, for a sentence:
    "hit the turn cap of 5 turns a hand or tied" (a tie for the lead)."""
    cap = meta.get("turn_cap")
    caps = f"the turn cap of {counted(int(cap), 'turn')} a hand" if cap else "the turn cap"
    hands = meta.get("hand_cap") or 1
    return f"hit {caps}, the hand cap of {hands} hands, or tied" if hands > 1 else f"hit {caps} or tied"


def no_winner_text(meta: dict, games: int) -> str:
    """Why a tournament none of whose games had a winner has no scores and no ratings."""
    return (f"No game had a winner (all {counted(games, 'game')} {no_winner_causes(meta)}), so there are no scores "
            "and no ratings: counting each game as half a point for either side would rate every policy even by "
            "convention, not by play. Replay a game (etappe replay) to see where it stalls; a long design needs a "
            "higher -o turn_cap.")


def _glance(ratings: pd.DataFrame, pairs: pd.DataFrame, h2h: pd.DataFrame, meta: dict) -> list[str]:
    games, cut = int(pairs["games"].sum()), int(pairs["no_winner"].sum())
    best, worst = ratings.iloc[0], ratings.iloc[-1]
    regularized = bool(ratings.attrs.get("regularized"))
    lines = [f"Strongest: {best['policy']} (Elo {best['elo']:+.0f} [{best['elo_low']:+.0f}, {best['elo_high']:+.0f}]); "
             f"weakest: {worst['policy']} (Elo {worst['elo']:+.0f} [{worst['elo_low']:+.0f}, {worst['elo_high']:+.0f}]). "
             + _spread(best, worst, regularized, h2h)]
    open_pairs = _undecided_against(best["policy"], h2h)
    if open_pairs:
        lines.append(f"{best['policy']} is rated highest, but its own pairing is not decided at 95 % against "
                     + ", ".join(open_pairs) + ": its score interval there includes 50 %.")
    clear = pairs[(pairs["ci_low"] > 0.5) | (pairs["ci_high"] < 0.5)]
    lines.append(f"{len(clear)} of {len(pairs)} pairings are decided at 95 % (the score interval excludes 50 %; "
                 "each pairing on its own, not corrected for their number).")
    lines.append(skill_verdict(pairs))
    if cut:
        unscored = int((pairs["wins_a"] + pairs["wins_b"] == 0).sum())
        lines.append(f"{cut} of {counted(games, 'game')} ({percent_text(cut / games)}) had no winner (they "
                     f"{no_winner_causes(meta)}); each counts half a point for either side, which pulls the scores "
                     "and ratings towards even."
                     + (f" {unscored} of {len(pairs)} pairings had no game with a winner: they have no score, and "
                        "count in the ratings only as drawn." if unscored else ""))
    if regularized:
        lines.append("A policy won (or lost) every game against the others; the ratings use one virtual "
                     "drawn game per pairing so they stay finite. Such a policy's rating is set partly by that "
                     "virtual draw and the number of games (about 120 Elo farther each time the games double), "
                     "so it is neither measured nor a bound, and its interval's far side comes from the virtual "
                     "draw. As the ratings are centred on their mean, it moves the others' ratings too: read those "
                     "by their differences and the pairings' scores.")
    return lines


def _spread(best: pd.Series, worst: pd.Series, regularized: bool, h2h: pd.DataFrame) -> str:
    """The spread of the ratings. Where the virtual draws set it, the games
    bound it only where the strongest's own pairing with the weakest does:
    the low end of that score's interval, as an Elo difference."""
    spread = f"Spread {best['elo'] - worst['elo']:.0f} Elo"
    if not regularized:
        return spread + "."
    row = next(h2h[(h2h["policy"] == best["policy"]) & (h2h["opponent"] == worst["policy"])].itertuples())
    spread += ", set partly by the virtual draw that keeps the ratings finite"
    if row.ci_low > 0.5:
        return (spread + f"; the games bound it from below: {best['policy']} against {worst['policy']} alone puts it "
                f"at {elo_from_score(row.ci_low):.0f} Elo or more (the low end of its score's 95 % interval, "
                f"{percent(row.ci_low)} %).")
    return (spread + f": not settled by {counted(int(row.games), 'game')} a pairing, as {best['policy']} against "
            f"{worst['policy']} scores {percent_ci(row.score, row.ci_low, row.ci_high)}, which does not show "
            f"{best['policy']} ahead.")


def _undecided_against(policy: str, h2h: pd.DataFrame) -> list[str]:
    """Each opponent whose pairing with `policy` has a score interval
    including 50 %, as "opponent (score s [low, high])" from `policy`'s side
    (the head_to_head row, as the skill matrix shows it)."""
    rows = h2h[(h2h["policy"] == policy) & (h2h["ci_low"] <= 0.5) & (0.5 <= h2h["ci_high"])]
    return [f"{r.opponent} (score {percent_ci(r.score, r.ci_low, r.ci_high)})" for r in rows.itertuples()]


def _se_label(ratings: pd.DataFrame) -> str:
    """What the `se` column of a bradley_terry table is, from how its intervals were made."""
    larger = "se of log strength (larger of the bootstrap sd and the Fisher se)"
    return {"bootstrap": "sd of log strength (bootstrap)", "bootstrap+fisher": larger, "bootstrap+profile": larger,
            }.get(ratings.attrs.get("interval"), "se of log strength (Fisher)")


def skill_verdict(pairs: pd.DataFrame) -> str:
    """How much skill matters, from the pairings' 95 % score intervals rather
    than from the ratings' point estimates: a lot when some pairing's interval
    lies beyond 76 : 24 (200 Elo), little when every interval lies within
    55 : 45 (35 Elo), otherwise the games do not settle it."""
    far = np.maximum(pairs["ci_low"], 1 - pairs["ci_high"])  # the side of the interval nearest an even score
    near = np.maximum(pairs["ci_high"], 1 - pairs["ci_low"])  # its side farthest from it
    if (far > LOT_SCORE).any():
        return ("Skill matters a lot here: at least one pairing scores beyond 76 : 24 (200 Elo) over its whole "
                "95 % interval.")
    if (near < LITTLE_SCORE).all():
        return "Skill matters little here: every pairing's 95 % interval lies within 55 : 45 (35 Elo)."
    return (f"How much skill matters is not settled by these games: the pairings' intervals reach "
            f"{100 * near.max():.0f} : {100 * (1 - near.max()):.0f}; more games narrow them.")


def _ratings_section(rt, ratings: pd.DataFrame, anchor: str | None) -> None:
    """How the ratings were fitted and whence their intervals; their chart and table."""
    how = (f"bootstrap over game indices ({ratings.attrs.get('bootstrap')} resamples, the same indices in every pairing)"
           if ratings.attrs.get("method") == "bootstrap" else "the observed Fisher information")
    scale = f"{anchor} fixed at 0" if anchor else "mean 0 (geometric-mean strength 1)"
    rt.text(f"Bradley-Terry strengths fitted by maximum likelihood, P(i beats j) = s_i / (s_i + s_j); "
            f"games without a winner count half a win each. Elo = 400 log10(s), {scale}; "
            f"95 % intervals from {how}. An Elo difference d predicts a score of 1 / (1 + 10^(-d/400)).")
    if ratings.attrs.get("regularized"):
        rt.text("No finite maximum-likelihood fit exists (a policy won or lost every game), so one virtual game "
                "scored half-half is added to every pairing (a weak prior, as in BayesElo) and the intervals "
                "are the likelihood-ratio (profile) intervals of that penalized likelihood: the ratings within "
                "1.92 log-likelihood units of the best, finite on both sides."
                + (" With the bootstrap each interval is the union of the two, since resampling a clean sweep "
                   "gives the same sweep every time." if ratings.attrs.get("method") == "bootstrap" else ""))
    elif ratings.attrs.get("interval") == "bootstrap+fisher":
        rt.text("Every game of a pairing ended alike, so each resample repeats that pairing and the bootstrap "
                "cannot show its spread: each interval is the union of the bootstrap and Fisher intervals.")
    rt.figure(rating_chart(ratings).figure, "Elo ratings with 95 % intervals", name="ratings")
    show = ratings[["rank", "policy", "games", "score", "elo", "elo_low", "elo_high", "strength", "log_strength", "se"]]
    rt.table(show.rename(columns={"elo_low": "Elo 95 % low", "elo_high": "Elo 95 % high", "elo": "Elo",
                                  "se": _se_label(ratings)}), "Ratings")


def build_tournament_report(result: TournamentResult, meta: dict | None = None, bootstrap: int = 200,
                            anchor: str | None = None, ratings: pd.DataFrame | None = None, on_section=None) -> Report:
    """The tournament's report; meta defaults to result.meta (extra keys
    override). `ratings`: the table `bradley_terry(result, anchor=anchor,
    bootstrap=bootstrap, seed=meta's seed)` gives, when the caller has it
    already (the bootstrap's resamples are not played twice).
    `on_section(title)` is told each section as it is begun."""
    meta = {**result.meta, "bootstrap": bootstrap, "anchor": anchor, **(meta or {})}
    h2h = head_to_head(result)
    pairs = pair_table(result)
    decided = bool((result.outcomes != 0).any())  # else no scores and no ratings: no_winner_text
    if ratings is None and decided:
        ratings = bradley_terry(result, anchor=anchor, bootstrap=bootstrap, seed=int(meta.get("seed", 0) or 0))
    design = meta.get("design_title") or meta.get("design", "")
    rep = Report(f"Tournament: {design}, {meta.get('players')} players, "
                 f"{len(result.policies)} policies, {counted(result.games, 'game')} per pairing",
                 on_section=on_section)
    rep.section("Run").table(tournament_header(meta))
    at = rep.section("At a glance")
    for line in _glance(ratings, pairs, h2h, meta) if decided else [no_winner_text(meta, int(pairs["games"].sum()))]:
        at.text(line)

    sm = rep.section("Skill matrix")
    sm.text("Each cell: the row policy's score against the column policy (wins plus half the games "
            "without a winner, over all games of the pairing), with its 95 % Wilson interval (over an effective "
            "number of games where some had no winner, as half a point varies less than a win: docs/tournaments.md). "
            "Blue: the row scored above 50 %; red: below (the intervals say which differences are decided)."
            + (f" \"{NO_SCORE}\": no game of that pairing had a winner, so it has no score."
               if h2h["score"].isna().any() else ""))
    sm.figure(skill_heatmap(h2h).figure, "Skill matrix: score of row vs column", name="skill_matrix")
    # each cell with its interval, as the text above says (and as `etappe tournament` prints it)
    score, low, high = (score_matrix(h2h, c) for c in ("score", "ci_low", "ci_high"))
    mat = score.copy().astype(object)
    for i in range(len(score.index)):
        for j in range(len(score.columns)):
            v = score.iat[i, j]
            mat.iat[i, j] = ("" if i == j else percent_ci(v, low.iat[i, j], high.iat[i, j]) if np.isfinite(v)
                             else NO_SCORE)
    sm.table(mat.reset_index().rename(columns={"policy": "policy \\ opponent"}),
             "Score of row vs column (95 % Wilson interval)")

    rt = rep.section("Ratings")
    if not decided:
        rt.text(no_winner_text(meta, int(pairs["games"].sum())))
    else:
        _ratings_section(rt, ratings, anchor)

    pr = rep.section("Pairings")
    cols = ["policy_a", "policy_b", "games", "wins_a", "wins_b", "no_winner", "score_a", "ci_low", "ci_high", "elo_diff"]
    extra = [c for c in ("score_a_first", "score_a_second") if c in pairs]
    pr.table(pairs[cols + extra].rename(columns={"ci_low": "95 % low", "ci_high": "95 % high",
                                                 "score_a_first": "score A when A starts",
                                                 "score_a_second": "score A when B starts"}),
             "Head to head, every pairing on the same games (same deals)")
    if pairs["score_a"].isna().any():
        pr.text("A blank score: no game of that pairing had a winner, so it has none (half a point each way from "
                "every game would read as an even pairing measured).")
    if np.isinf(pairs["elo_diff"]).any():
        pr.text("An elo_diff of inf or -inf: one policy won every game of that pairing, and a score of 1 (or 0) "
                "implies no finite Elo difference.")

    m = rep.section("Method")
    m.text("Every pair of policies plays the same game indices with the same root seed, so game i deals "
           "the same cards in every pairing (common random numbers). " + str(meta.get("seating", "")) + ".")
    m.text("Games are not independent across pairings (they share deals). The bootstrap resamples whole game "
           "indices and keeps that sharing; Fisher intervals (--bootstrap 0) treat the pairings as independent "
           "and can be much too narrow: in one measured Mille Bornes pool a rating's true sd was 1.8 times "
           "its Fisher se.")
    cav = rep.section("Caveat")
    cav.text(f"Bots are not people. {'These ratings hold' if decided else 'Scores and ratings, where there are some, hold'} "
             "for this pool of policies only: "
             + ", ".join(result.policies) + ". Ratings are relative to the pool (adding or removing a policy "
             "moves them), and a policy that beats the pool may lose to a human or to a policy not in it.")
    if meta.get("reconstructed"):
        cav.text(f"{design_name(meta)}: where the sources are silent its rules are assumptions, so its numbers "
                 "describe that reading of the rules.")
    return rep
