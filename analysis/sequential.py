"""Sequential stopping: play until the difference between A and B is decided.

A proper sequential test, not repeated peeking at a p-value. Every
comparison is reduced to a stream of per-game signs:

* policy A vs policy B (one design, seats paired as in a tournament):
  +1 A's side won, -1 B's side won, 0 no winner;
* design A vs design B (or a rule option on vs off) with the same policies
  on the same seeds (common random numbers): for a per-game metric m,
  +1 when m_A > m_B in game i, -1 when m_A < m_B, 0 when equal or undefined
  (for a 0/1 metric these are McNemar's discordant pairs; otherwise a sign test).

Zeros carry no information and are skipped. Over the non-zero signs, q is the
probability of a +1 (q = 1/2: no difference). The test is the Sobel-Wald
three-decision procedure: two of Wald's SPRTs run side by side on the same
signs,

    test "A":  H0 q = 1/2  vs  H1 q = 1/2 + delta,   error rates alpha/2, beta
    test "B":  H0 q = 1/2  vs  H1 q = 1/2 - delta,   error rates alpha/2, beta

each with the log-likelihood ratio LLR = W ln(p1/p0) + L ln((1-p1)/(1-p0))
(W, L: +1 and -1 signs) and Wald's bounds ln((1-beta)/(alpha/2)) (accept H1)
and ln(beta/(1-alpha/2)) (accept H0). A test that accepts H0 stops there.
The comparison stops at the first of: test A accepts H1 ("A better"), test B
accepts H1 ("B better"), both have accepted H0 ("same": no difference of
delta or more). Test A runs as a plain SPRT until it stops, so Wald's
inequalities give P(A better | q = 1/2) <= (alpha/2) / (1 - beta), about
alpha/2, and the same for B (about alpha in all for a false difference),
and P(test A accepts H0 | q = 1/2 + delta) <= beta / (1 - alpha/2), so
P(not "A better" | q = 1/2 + delta) is about beta (the same for B); the
LLR overshoots the bounds, which makes the rates a little smaller
(simulated, alpha = beta = delta = 0.05: 5.1 % false differences at
q = 1/2 in 5,000 runs, 95.8 % "A" at q = 0.55). Between 1/2 and 1/2 +- delta either
"same" or the side may come. A `max_games` cap truncates the test: "undecided".

Games are played chunk by chunk, but the LLRs are scanned game by game in game
order and the decision is taken at the first crossing; games after it (the
rest of the last chunk) are played but not used, so chunking does not change
the test. The estimate and interval reported at the stop (Wilson on q, Student t
on the mean paired difference) are the plain fixed-n ones: after optional
stopping they are biased away from 1/2 and are descriptive only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..kernels.options import whole
from .stats import Z95, difference_text, paired_difference, paired_proportion_difference, wilson_interval

__all__ = ["Sprt", "SequentialTest", "SequentialResult", "sequential_compare", "policy_outcomes",
           "design_outcomes", "paired_signs", "DESIGN_METRICS", "DECISIONS"]

# per-game metrics of analysis.compare.game_metrics that a design duel can use
DESIGN_METRICS = ("game_turns", "hands", "capped", "no_winner", "first_position_won", "first_hand_trip_share",
                  "lead_changes", "winner_deficit", "winner_deficit_share", "final_gap", "hazard_turns",
                  "hazard_decided", "dead_share")
DECISIONS = ("A", "B", "same", "undecided")
# the metrics of 0 or 1 a game (compare.PAIRED_METRICS' unit "rate"); won_s0, won_s1, ... are too
BINARY_METRICS = ("capped", "no_winner", "first_position_won", "hazard_decided")


@dataclass(frozen=True)
class Sprt:
    """Wald's SPRT for a Bernoulli share q: H0 q = p0 vs H1 q = p1."""

    p0: float
    p1: float
    alpha: float
    beta: float

    def __post_init__(self):
        if not (0 < self.p0 < 1 and 0 < self.p1 < 1 and self.p0 != self.p1):
            raise ValueError("p0 and p1 must differ and lie in (0, 1)")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError("alpha and beta must lie in (0, 1) with alpha + beta < 1")

    @property
    def win_step(self) -> float:
        """LLR added by a +1: ln(p1 / p0)."""
        return math.log(self.p1 / self.p0)

    @property
    def loss_step(self) -> float:
        """LLR added by a -1: ln((1 - p1) / (1 - p0))."""
        return math.log((1 - self.p1) / (1 - self.p0))

    @property
    def upper(self) -> float:
        """ln((1 - beta) / alpha): at or above, accept H1."""
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        """ln(beta / (1 - alpha)): at or below, accept H0."""
        return math.log(self.beta / (1 - self.alpha))

    def path(self, llr: float, signs: np.ndarray) -> np.ndarray:
        """The LLR after each of the (non-zero) signs, from `llr`."""
        s = np.asarray(signs)
        return llr + self.win_step * np.cumsum(s > 0) + self.loss_step * np.cumsum(s < 0)

    def first_crossing(self, path: np.ndarray) -> tuple[int, int]:
        """(index, +1 accept H1 / -1 accept H0) of the first crossing; (-1, 0) if none."""
        up = np.flatnonzero(path >= self.upper - 1e-12)
        down = np.flatnonzero(path <= self.lower + 1e-12)
        iu = int(up[0]) if up.size else path.size
        il = int(down[0]) if down.size else path.size
        if iu == il == path.size:
            return -1, 0
        return (iu, 1) if iu < il else (il, -1)


@dataclass(frozen=True)
class SequentialTest:
    """The three-decision test on q (share of +1 signs): "A", "B", "same"."""

    alpha: float = 0.05
    beta: float = 0.05
    delta: float = 0.05

    def __post_init__(self):
        # each named alone, with its value: "alpha and beta" read as if both were wrong
        for name, value, high in (("delta", self.delta, 0.5), ("alpha", self.alpha, 1), ("beta", self.beta, 0.5)):
            if not 0 < value < high:
                raise ValueError(f"{name} must lie in (0, {high:g}), not {value!r}")

    @property
    def test_a(self) -> Sprt:
        return Sprt(0.5, 0.5 + self.delta, self.alpha / 2, self.beta)

    @property
    def test_b(self) -> Sprt:
        return Sprt(0.5, 0.5 - self.delta, self.alpha / 2, self.beta)

    def scan(self, state: dict, signs: np.ndarray) -> tuple[int, str]:
        """Advance over the non-zero `signs`; `state` (llr_a, llr_b, done_a,
        done_b) is updated in place up to the decision. Returns (index of the
        deciding sign, decision) or (-1, "undecided")."""
        signs = np.asarray(signs)
        if signs.size == 0:
            return -1, "undecided"
        tests = {"a": self.test_a, "b": self.test_b}
        paths, events = {}, {}
        for key, t in tests.items():
            if state[f"done_{key}"]:
                events[key] = None
                continue
            paths[key] = t.path(state[f"llr_{key}"], signs)
            i, kind = t.first_crossing(paths[key])
            events[key] = (i, kind) if i >= 0 else None
        candidates = []
        for key, name in (("a", "A"), ("b", "B")):
            ev = events[key]
            if ev and ev[1] == 1:
                candidates.append((ev[0], name))
        h0 = {}
        for key in ("a", "b"):
            ev = events[key]
            h0[key] = -1 if state[f"done_{key}"] else (ev[0] if ev and ev[1] == -1 else None)
        if h0["a"] is not None and h0["b"] is not None:
            candidates.append((max(h0["a"], h0["b"]), "same"))
        stop, decision = min(candidates) if candidates else (signs.size - 1, "undecided")
        for key in ("a", "b"):
            if state[f"done_{key}"]:
                continue
            ev = events[key]
            if ev and ev[1] == -1 and ev[0] <= stop:     # accepted H0 before the stop: frozen there
                state[f"llr_{key}"] = float(paths[key][ev[0]])
                state[f"done_{key}"] = True
            else:
                state[f"llr_{key}"] = float(paths[key][stop])
        return (stop, decision) if candidates else (-1, "undecided")


@dataclass
class SequentialResult:
    decision: str                 # "A", "B", "same" (no difference of delta or more), "undecided" (cap)
    verdict: str                  # in words, with the labels
    games_used: int               # games up to and including the deciding one (the cap if undecided)
    games_played: int             # games actually simulated (whole chunks)
    plus: int                     # +1 signs (A ahead) among the games used
    minus: int                    # -1 signs (B ahead)
    zeros: int                    # even: ties, no winner (a defined difference of 0)
    llr_a: float                  # final LLR of test A (H1: q = 1/2 + delta)
    llr_b: float                  # final LLR of test B (H1: q = 1/2 - delta)
    upper: float                  # accept-H1 bound of each test
    lower: float                  # accept-H0 bound of each test
    alpha: float
    beta: float
    delta: float
    q: float                      # plus / (plus + minus)
    q_low: float
    q_high: float
    mean_diff: float              # mean per-game difference (A - B) over the games used
    diff_low: float
    diff_high: float
    labels: tuple[str, str] = ("A", "B")
    what: str = "wins more often"  # what a +1 says of A, for the reader: "A <what>"
    undefined: int = 0            # games whose difference is undefined (NaN: the metric missing in either)

    @property
    def decided(self) -> bool:
        return self.decision != "undecided"

    def summary_rows(self) -> list[tuple[str, str]]:
        a, b = self.labels
        return [
            ("decision", self.verdict),
            ("games used", f"{self.games_used}"),
            ("games played", f"{self.games_played}" + (" (games after the decision are not used)" if self.decided
                                                        else "")),
            (f"{a} ahead / {b} ahead / even", f"{self.plus} / {self.minus} / {self.zeros}"),
            *([("not measured", f"{self.undefined} (the metric is undefined in the game of either)")]
              if self.undefined else []),
            (f"share of uneven games to {a} (q)", f"{self.q:.4f} [{self.q_low:.4f}, {self.q_high:.4f}]"
             if self.plus + self.minus else "no uneven game"),
            (f"mean difference {a} - {b} per game",
             difference_text(self.mean_diff, self.diff_low, self.diff_high, self.games_used - self.undefined)),
            ("LLR of tests A / B", f"{self.llr_a:.3f} / {self.llr_b:.3f}; bounds {self.lower:.3f}, {self.upper:.3f}"),
            ("test", f"Sobel-Wald: two SPRTs, q = 1/2 vs 1/2 +- {self.delta:g}; alpha = {self.alpha:g} "
                     f"(false difference, both sides), beta = {self.beta:g} (missed difference of delta)"),
        ]


OutcomeFn = Callable[[int, int], "np.ndarray | tuple[np.ndarray, np.ndarray]"]


def sequential_compare(outcomes: OutcomeFn, alpha: float = 0.05, beta: float = 0.05, delta: float = 0.05,
                       chunk: int = 500, max_games: int = 100_000, labels: Sequence[str] = ("A", "B"),
                       what: str | None = None, progress: Callable[[int], None] | None = None,
                       z: float = Z95) -> SequentialResult:
    """Play chunks of games until the sequential test decides A vs B, or `max_games`.

    outcomes(start, count): the games start .. start+count-1 as an int array
    of signs (+1 A ahead, -1 B ahead, 0 even), or a pair (signs, diffs) with
    the per-game difference A - B (float, NaN = undefined) for the reported
    mean difference (without diffs, the signs are used). Build one with
    `policy_outcomes` or `design_outcomes`, or pass any function (a
    synthetic stream in tests). An outcome function whose `binary` is True
    (who won, a stall: a difference of two 0-or-1 values) has its mean
    difference's interval from Tango's score interval of the uneven games,
    as compare's paired table gives it; otherwise Student's t.
    alpha: chance of declaring a difference when q = 1/2 (both directions together).
    beta: chance of missing a difference when q = 1/2 +- delta.
    delta: the smallest difference in q worth detecting (q = share of
    uneven games that A wins; for policies, delta = 0.05 is about 35 Elo).
    what: what a +1 says of A, for the verdict ("A <what>"); by default the
    outcome function's own `what` (policy_outcomes: "wins more often";
    design_outcomes: "has the higher <metric> in more games"), else "wins more often".
    progress: called with the games played after each chunk.
    """
    what = what or getattr(outcomes, "what", "wins more often")
    test = SequentialTest(alpha, beta, delta)
    chunk, max_games = whole("chunk", chunk, 1), whole("max_games", max_games, 1)
    a, b = (list(labels) + ["A", "B"])[:2]
    state = {"llr_a": 0.0, "llr_b": 0.0, "done_a": False, "done_b": False}
    played = 0
    plus = minus = zeros = undefined = 0
    n_d, differ_d, s_d, ss_d = 0, 0, 0.0, 0.0
    decision, used = "undecided", 0
    while played < max_games:
        count = min(chunk, max_games - played)
        got = outcomes(played, count)
        signs, diffs = got if isinstance(got, tuple) else (got, None)
        signs = np.sign(np.asarray(signs, dtype=float)).astype(np.int8)
        if signs.size != count:
            raise ValueError(f"outcomes({played}, {count}) returned {signs.size} games")
        diffs = signs.astype(float) if diffs is None else np.asarray(diffs, dtype=float)
        nz = np.flatnonzero(signs)
        hit, decision = test.scan(state, signs[nz])
        stop = int(nz[hit]) + 1 if hit >= 0 else count   # games of this chunk that are used
        used_signs, used_diffs = signs[:stop], diffs[:stop]
        plus += int((used_signs > 0).sum())
        minus += int((used_signs < 0).sum())
        missing = np.isnan(used_diffs)
        undefined += int(missing.sum())
        zeros += int(((used_signs == 0) & ~missing).sum())
        ok = used_diffs[~missing]
        n_d += ok.size
        differ_d += np.count_nonzero(ok)
        s_d += float(ok.sum())
        ss_d += float((ok * ok).sum())
        used = played + stop
        played += count
        if progress:
            progress(count)
        if decision != "undecided" or undefined == played:
            # a metric undefined in every game of the first chunk (hazard_decided of a design without hazards,
            # winner_deficit where every game is capped) would be so up to the cap: nothing for the test to read
            break
    uneven = plus + minus
    q = plus / uneven if uneven else float("nan")
    q_low, q_high = wilson_interval(plus, uneven, z) if uneven else (float("nan"), float("nan"))
    if getattr(outcomes, "binary", False):
        # a 0-or-1 metric (who won, a stall): Tango's interval of the discordant games, as paired_table gives
        exact = paired_proportion_difference(n_d, plus, minus, z)
        d = {"mean": exact["diff"], "ci_low": exact["ci_low"], "ci_high": exact["ci_high"]}
    else:
        d = paired_difference(n_d, s_d, ss_d, z, differ=differ_d)
    verdict = {
        "A": f"{a} {what}: decided after {used} games",
        "B": f"{b} {what}: decided after {used} games",
        "same": (f"no difference of {delta:g} or more in q, the share of uneven games {a} is ahead in (a smaller "
                 f"one is not ruled out: q {q:.4f} [{q_low:.4f}, {q_high:.4f}]): decided after {used} games"),
        "undecided": (f"undecided after {used} games: the metric is undefined in every one of them, so the test "
                      "has nothing to read; stopped instead of playing to the cap") if undefined == used else
                     f"undecided after {used} games (cap reached)"
                     + (": no game had a difference (every game even or undefined), and the test reads only the "
                        "games where A or B is ahead" if not uneven else ""),
    }[decision]
    t = test.test_a
    return SequentialResult(
        decision=decision, verdict=verdict, games_used=used, games_played=played, plus=plus, minus=minus,
        zeros=zeros, llr_a=state["llr_a"], llr_b=state["llr_b"], upper=t.upper, lower=t.lower,
        alpha=alpha, beta=beta, delta=delta, q=q, q_low=float(q_low), q_high=float(q_high),
        mean_diff=float(d["mean"]), diff_low=float(d["ci_low"]), diff_high=float(d["ci_high"]),
        labels=(a, b), what=what, undefined=undefined,
    )


# ------------------------------------------------------------------ stream builders
def paired_signs(a, b) -> tuple[np.ndarray, np.ndarray]:
    """(signs, diffs) of two aligned per-game metric arrays: sign(a - b), 0 where either is NaN."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    signs = np.where(np.isnan(d), 0, np.sign(d)).astype(np.int8)
    return signs, d


def policy_outcomes(design, players: int, policy_a: str, policy_b: str, seed: int = 0,
                    options: dict | None = None) -> OutcomeFn:
    """Signs of policy A vs B on one design, seated as in a tournament pairing
    (analysis.tournament.PairRun): +1 A's side won, -1 B's, 0 no winner."""
    from .tournament import PairRun, play_pair

    run = PairRun(design, players, policy_a, policy_b, seed, options)

    def fn(start: int, count: int) -> np.ndarray:
        return play_pair(run, start, count)

    fn.what = "wins more often"  # type: ignore[attr-defined]
    # +1, -1, 0: whether A's side won less whether B's side won, each 0 or 1
    fn.binary = True  # type: ignore[attr-defined]
    return fn


def design_outcomes(design_a, design_b, players: int, policies: Sequence[str] | str = ("greedy",), seed: int = 0,
                    options_a: dict | None = None, options_b: dict | None = None,
                    metric: str = "game_turns", seating: str = "fixed") -> OutcomeFn:
    """(signs, diffs) of a per-game metric, design A vs design B on the same
    seeds and policies (as `simulate` takes them: one spec for every seat, or
    a list by seat): sign(m_A - m_B) game by game (metrics: `DESIGN_METRICS`,
    from analysis.compare.game_metrics, or won_s{s}). winner_deficit and
    final_gap are refused between designs of another unit, trip or number
    of hands a game."""
    from .compare import SCALED_METRICS, game_metrics
    from .race import RaceRun
    from .race_summary import game_table

    run_a = RaceRun(design_a, players, policies, seed, options_a, seating)
    run_b = RaceRun(design_b, players, policies, seed, options_b, seating)
    sides = min(run_a.sides, run_b.sides)
    if metric not in (*DESIGN_METRICS, *(f"won_s{s}" for s in range(sides))):
        raise ValueError(f"unknown metric {metric!r}; one of: {', '.join(DESIGN_METRICS)}, or won_s0 to "
                         f"won_s{sides - 1} (side 0 won, ...: {sides} sides at {players} players)")
    if metric in SCALED_METRICS:
        scales = [(m["unit"], m["target"], m["multi_hand"]) for m in (run_a.metadata(0), run_b.metadata(0))]
        if scales[0] != scales[1]:
            a, b = (f"a trip of {target} {unit} in {'several hands' if multi else 'one hand'}"
                    for unit, target, multi in scales)
            raise ValueError(f"metric {metric!r} is a distance in each design's own unit: it is compared only between "
                             f"designs of the same unit, trip and hands per game, and A plays {a}, B {b}; "
                             "winner_deficit_share compares the deficit as a share of the trip")

    def values(run, start, count):
        frame = run.play(start, count)
        m = game_metrics(game_table(frame, run.metadata(count)))  # every metric the check above allows
        return m[metric].reindex(np.arange(start, start + count)).to_numpy(float)

    def fn(start: int, count: int):
        return paired_signs(values(run_a, start, count), values(run_b, start, count))

    fn.runs = (run_a, run_b)  # type: ignore[attr-defined]
    fn.what = f"has the higher {metric} in more games"  # a sign test: ahead more often, not a higher mean
    fn.binary = metric in BINARY_METRICS or metric.startswith("won_s")  # type: ignore[attr-defined]
    return fn
