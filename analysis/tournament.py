"""Round-robin tournaments of policies, head-to-head tables and ratings.

    from etappe.analysis.tournament import play_tournament, head_to_head, bradley_terry
    result = play_tournament("millebornes", 2, ["random", "greedy", "aggressive"], games=2000, seed=1)
    head_to_head(result)        # one row per (policy, opponent): score with its interval
    bradley_terry(result)       # strengths, log-strengths and Elo with 95 % intervals

Method (docs/tournaments.md has the formulas):

* Every unordered pair (A, B) of the K policies plays the same game indices
  0 .. games-1 with the same root seed, so game i deals the same cards in
  every pairing (common random numbers).
* Seats: side s of game g goes to A when (s + g) is even, to B otherwise; a
  seat plays for side seat % sides (teams: partners share a policy). Two
  players: A starts the even games, B the odd ones; four individuals:
  A,B,A,B then B,A,B,A; Mille Bornes with 4 players: A is one team, B the
  other, swapping every game. With an odd number of sides (3 players, or 6
  players in 3 teams) one policy holds more sides in a game; it alternates,
  so the design is the same for A and B.
* Outcome of a game for the pair: +1 A's side won, -1 B's side won, 0 no
  winner (turn cap, or a tie for the lead). Scores count a no-winner game as
  half a win for each (the chess convention).
* Bradley-Terry: P(i beats j) = s_i / (s_i + s_j), fitted by maximum
  likelihood (Newton on log-strengths, sum of log-strengths 0, i.e. the
  geometric mean strength is 1). Intervals from the observed Fisher
  information, or from a bootstrap over game indices (the same indices for
  every pairing, so the correlation the shared deals create is kept). Elo =
  400 log10(s): Elo differences predict scores by 1 / (1 + 10^(-d/400)).
* A policy that won or lost every game has no finite MLE: one virtual draw
  per pairing (a weak prior) keeps the fit finite, and the intervals are
  then likelihood-ratio intervals of that penalized likelihood.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.special import expit

from etappe.kernels import race as K
from etappe.kernels.options import MAX_KEY, whole
from etappe.kernels.race_design import Design, load_design
from etappe.kernels.race_policies import parse_policy

from .race import RaceRun
from .runio import Checkpoint, file_hash, numba_threads, package_version
from .stats import Z95, counted, t_point, wilson_interval

__all__ = [
    "TournamentResult", "PairRun", "side_schedule", "seat_schedule", "pair_outcomes", "play_pair",
    "play_tournament", "pair_table", "head_to_head", "score_matrix", "pair_counts", "bradley_terry",
    "fit_bradley_terry", "elo_from_score", "policy_identity", "check_bootstrap", "ELO_PER_NAT",
]

ELO_PER_NAT = 400.0 / np.log(10.0)   # Elo points per unit of natural log-strength (173.72)
DEFAULT_CHUNK = 10_000


# ------------------------------------------------------------------ schedule
def side_schedule(sides: int, games: np.ndarray) -> np.ndarray:
    """[games, sides] int8: 0 where policy A holds the side, 1 where B does.

    Side s of game g goes to A when (s + g) is even.
    """
    g = np.asarray(games, dtype=np.int64)
    return ((np.arange(sides)[None, :] + g[:, None]) % 2).astype(np.int8)


def seat_schedule(players: int, sides: int, games: np.ndarray) -> np.ndarray:
    """[games, players] int8: 0 = A, 1 = B in each seat (seat p plays for side p % sides)."""
    return np.ascontiguousarray(side_schedule(sides, games)[:, np.arange(players) % sides])


def policy_identity(spec: str) -> tuple:
    """What a policy is, however it is spelled: its family and every
    parameter (`greedy`, `hoarder` and `greedy:attack=1.75` are one policy),
    a policy of your own by its file's resolved path and its function."""
    described = parse_policy(spec).describe()
    if described["family"] == "user":
        path, _, function = described["name"].rpartition(":")
        return "user", str(Path(path).resolve()), function
    return described["family"], tuple(sorted(described["params"].items()))


def _spelled(specs: list[str]) -> str:
    """One policy's specs as given: 'greedy', or 'greedy and hoarder (one policy, spelled differently)'."""
    specs = list(dict.fromkeys(p.strip() for p in specs))
    return specs[0] if len(specs) == 1 else f"{' and '.join(specs)} (one policy, spelled differently)"


class PairRun(RaceRun):
    """A RaceRun of two policies seated by `seat_schedule` (index 0 = A, 1 = B)."""

    def __init__(self, design: str | Path | Design, players: int, policy_a: str, policy_b: str,
                 seed: int, options: dict | None = None):
        if policy_identity(policy_a) == policy_identity(policy_b):
            raise ValueError(f"a pairing needs two different policies; policy given twice: "
                             f"{_spelled([policy_a, policy_b])}")
        players = whole("players", players, low=-MAX_KEY)  # below 2 refused just after, in words
        if players < 2:
            raise ValueError("a pairing needs at least 2 players")
        seats = [policy_a if p % 2 == 0 else policy_b for p in range(players)]
        super().__init__(design, players, seats, seed, options, "fixed")
        self.seating = "paired"

    def seat_policies(self, games: np.ndarray) -> np.ndarray:
        return seat_schedule(self.players, self.sides, games)


def pair_outcomes(frame: pd.DataFrame, sides: int) -> tuple[np.ndarray, np.ndarray]:
    """(games, outcome) from the records of a paired run.

    outcome per game: +1 if the winning side was A's, -1 if B's, 0 no winner.
    A's sides follow `side_schedule` (records need `game`, `last_hand`,
    `winner_side`).
    """
    last = frame[frame["last_hand"] == 1]
    games = last["game"].to_numpy(np.int64)
    winner = last["winner_side"].to_numpy(np.int64)
    sched = side_schedule(sides, games)
    holder = sched[np.arange(games.size), np.clip(winner, 0, sides - 1)]
    out = np.where(winner < 0, 0, np.where(holder == 0, 1, -1)).astype(np.int8)
    order = np.argsort(games, kind="stable")
    return games[order], out[order]


def play_pair(run: PairRun, start: int, count: int) -> np.ndarray:
    """Outcomes (+1 A, -1 B, 0 none) of games start .. start+count-1 of a
    pairing, played in one batch (callers choose the chunks)."""
    games, out = pair_outcomes(run.play(start, count), run.sides)
    if games.size != count or games[0] != start or games[-1] != start + count - 1:
        raise RuntimeError("a chunk of the pairing came back incomplete")
    return out


# ------------------------------------------------------------------ result
@dataclass
class TournamentResult:
    """Outcomes of a round robin: outcomes[k, g] for pair k = pairs[k] = (i, j)
    (A = policies[i], B = policies[j]) and game g: +1 A won, -1 B won, 0 none."""

    policies: list[str]
    pairs: list[tuple[int, int]]
    outcomes: np.ndarray
    meta: dict = field(default_factory=dict)

    @property
    def games(self) -> int:
        return int(self.outcomes.shape[1]) if self.outcomes.ndim == 2 else 0

    def a_starts(self) -> np.ndarray:
        """[games] bool: A held the seat that played first in the game's first hand."""
        players = int(self.meta.get("players", 2))
        games = np.arange(self.games)
        schedule = seat_schedule(players, int(self.meta.get("sides", 2)), games)
        return schedule[games, K.first_seats(games, 0, players)] == 0


def play_tournament(design: str | Path | Design, players: int, policies: Sequence[str], games: int,
                    seed: int = 0, options: dict | None = None,
                    progress: Callable[[int], None] | None = None,
                    chunk_size: int = DEFAULT_CHUNK, threads: int | None = None,
                    checkpoint: Path | None = None,
                    on_resume: Callable[[int], None] | None = None) -> TournamentResult:
    """Every pair of `policies` plays games 0 .. games-1 (same seed, same deals).

    progress: called with the number of games finished (summed over pairs;
    the total is games * K (K - 1) / 2).
    checkpoint: a file where the outcomes are saved atomically after every
    chunk; a tournament started again with the same arguments resumes from
    it (the caller removes it once the results are safe elsewhere), and
    calls on_resume with the games already played (summed over pairs).
    """
    if isinstance(policies, str):  # a list of its letters otherwise
        raise TypeError(f"policies is a list of at least two specs, e.g. ['greedy', 'random'], not {policies!r}")
    policies = [parse_policy(p).name for p in policies]  # the specs stripped; refuses one that is not a string
    if len(policies) < 2:
        raise ValueError("a tournament needs at least two policies")
    spellings: dict[tuple, list[str]] = {}
    for p in policies:
        spellings.setdefault(policy_identity(p), []).append(p)
    dup = [_spelled(specs) for specs in spellings.values() if len(specs) > 1]
    if dup:
        raise ValueError(f"policy given twice: {'; '.join(dup)}")
    games, chunk_size = whole("games", games, 1), whole("chunk_size", chunk_size, 1)
    d = design if isinstance(design, Design) else load_design(design)
    pairs = list(itertools.combinations(range(len(policies)), 2))
    saved = None
    if checkpoint is not None:
        identity = {"design_hash": file_hash(d.text), "players": players,
                    "policies": [parse_policy(p).describe() for p in policies], "games": games,
                    "seed": seed, "options": dict(options or {}),  # any chunk size plays the same games
                    "version": package_version()}
        saved = Checkpoint(Path(checkpoint), identity)
    state = (saved.load() if saved else None) or {
        "outcomes": np.zeros((len(pairs), games), np.int8),
        "games_done": [0] * len(pairs),  # per pairing, in whole chunks
        "seconds": 0.0,
    }
    outcomes = state["outcomes"]
    if on_resume and sum(state["games_done"]):
        on_resume(sum(state["games_done"]))
    if progress and sum(state["games_done"]):
        progress(sum(state["games_done"]))
    with numba_threads(threads):
        for k, (i, j) in enumerate(pairs):
            run = PairRun(d, players, policies[i], policies[j], seed, options)
            run.load_kernels()  # the compile is not playing time
            if progress:
                progress(0)  # the kernels are ready
            for first in range(state["games_done"][k], games, chunk_size):
                started = time.perf_counter()
                count = min(chunk_size, games - first)
                outcomes[k, first:first + count] = play_pair(run, first, count)
                if progress:
                    progress(count)
                state["games_done"][k] = first + count
                state["seconds"] += time.perf_counter() - started
                if saved:
                    saved.save(state)
    meta = run.metadata(games) | {
        "options_given": dict(options or {}),
        "policies": policies,
        "policy_details": [parse_policy(p).describe() for p in policies],
        "seating": "paired: side s of game g to A when s + g is even; seat p plays for side p % sides",
        "games_total": int(games * len(pairs)),
        "wall_seconds": round(state["seconds"], 3),
    }
    return TournamentResult(policies, pairs, outcomes, meta)


# ------------------------------------------------------------------ tables
def _pair_frame(results) -> pd.DataFrame:
    """Per pair counts (policy_a, policy_b, games, wins_a, wins_b, no_winner)
    from a TournamentResult or a DataFrame that already has them (`no_winner`
    may be missing: then 0, or called `draws`); ValueError if no pairing
    played a game."""
    if isinstance(results, TournamentResult):
        o = results.outcomes
        f = pd.DataFrame({
            "policy_a": [results.policies[i] for i, _ in results.pairs],
            "policy_b": [results.policies[j] for _, j in results.pairs],
            "games": np.full(len(results.pairs), o.shape[1], np.int64),
            "wins_a": (o == 1).sum(axis=1).astype(np.int64),
            "wins_b": (o == -1).sum(axis=1).astype(np.int64),
            "no_winner": (o == 0).sum(axis=1).astype(np.int64),
        })
    else:
        f = pd.DataFrame(results).copy()
        missing = [c for c in ("policy_a", "policy_b", "wins_a", "wins_b") if c not in f]
        if missing:
            raise ValueError(f"the pairings have no {', '.join(missing)} column (a TournamentResult, or a "
                             "table of policy_a, policy_b, wins_a, wins_b)")
        if "no_winner" not in f:
            f["no_winner"] = f["draws"] if "draws" in f else 0
        if "games" not in f:
            f["games"] = f["wins_a"] + f["wins_b"] + f["no_winner"]
        bad = f["wins_a"] + f["wins_b"] + f["no_winner"] != f["games"]
        if bad.any():
            raise ValueError("wins_a + wins_b + no_winner must equal games in every row")
        f = f[["policy_a", "policy_b", "games", "wins_a", "wins_b", "no_winner"]].reset_index(drop=True)
    if f["games"].sum() == 0:
        raise ValueError("the tournament holds no paired game: play at least one game per pairing")
    return f


def elo_from_score(score):
    """Elo difference implied by a score s (share of points): 400 log10(s / (1 - s))."""
    s = np.asarray(score, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ELO_PER_NAT * np.log(s / (1.0 - s))
    return float(out) if out.ndim == 0 else out


def _scored(wins, losses, no_winner, games, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Score s = (wins + no_winner / 2) / games and its interval: Wilson's
    at the effective number of games n s (1 - s) / v (z / t_{n-1})^2, v the
    variance of a game's points (1, 1/2 or 0), and never fewer than n. A
    game without a winner, half a point, varies less than a win or a loss:
    Wilson over the games was far too wide where many had none (100 games,
    40 % without a winner: 98.8 %; 90 %: 100 %), this covers 95-97 %; without
    such games v = s (1 - s) and it is Wilson over the games. NaN where no
    game had a winner: half a point each way from every game would read as
    an even pairing measured, where nothing was decided."""
    wins, losses, no_winner = (np.asarray(v, float) for v in (wins, losses, no_winner))
    n = np.where(wins + losses > 0, np.asarray(games, float), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = (wins + 0.5 * no_winner) / n
        v = (wins + 0.25 * no_winner) / n - s * s
        spread = (v > 0) & (s > 0) & (s < 1)
        alike = n * s * (1 - s) / np.where(spread, v, 1.0) * (z / t_point(n, z)) ** 2
        n_eff = np.where(spread, np.fmax(n, alike), n)  # fmax: one game has no t point, and stays n
    low, high = wilson_interval(s * n_eff, n_eff, z)
    return s, low, high


def pair_table(results, z: float = Z95) -> pd.DataFrame:
    """One row per pairing: games, wins_a, wins_b, no_winner, score_a
    ((wins_a + no_winner / 2) / games) with a Wilson interval, the Elo
    difference it implies, and for a TournamentResult the score of A when A
    started and when B started. A pairing none of whose games had a winner
    has no score (NaN)."""
    f = _pair_frame(results)
    f["score_a"], f["ci_low"], f["ci_high"] = _scored(f["wins_a"], f["wins_b"], f["no_winner"], f["games"], z)
    f["elo_diff"] = elo_from_score(f["score_a"].to_numpy(float))
    if isinstance(results, TournamentResult) and results.games:
        first = results.a_starts()
        o = results.outcomes.astype(float)
        pts_g = (o + 1.0) / 2.0
        decided = np.where((results.outcomes != 0).any(axis=1), 1.0, np.nan)
        f["score_a_first"] = pts_g[:, first].mean(axis=1) * decided if first.any() else np.nan
        f["score_a_second"] = pts_g[:, ~first].mean(axis=1) * decided if (~first).any() else np.nan
    return f


def head_to_head(results, z: float = Z95) -> pd.DataFrame:
    """Long table, both directions: policy, opponent, games, wins, losses,
    no_winner, score ((wins + no_winner / 2) / games), ci_low, ci_high
    (Wilson); NaN score and interval where no game of the pairing had a winner."""
    f = _pair_frame(results)
    fwd = pd.DataFrame({"policy": f["policy_a"], "opponent": f["policy_b"], "games": f["games"],
                        "wins": f["wins_a"], "losses": f["wins_b"], "no_winner": f["no_winner"]})
    back = pd.DataFrame({"policy": f["policy_b"], "opponent": f["policy_a"], "games": f["games"],
                         "wins": f["wins_b"], "losses": f["wins_a"], "no_winner": f["no_winner"]})
    out = pd.concat([fwd, back], ignore_index=True)
    out["score"], out["ci_low"], out["ci_high"] = _scored(out["wins"], out["losses"], out["no_winner"], out["games"], z)
    order = _policy_order(results, f)
    out["_p"] = out["policy"].map(order)
    out["_o"] = out["opponent"].map(order)
    return out.sort_values(["_p", "_o"]).drop(columns=["_p", "_o"]).reset_index(drop=True)


def _policy_order(results, f: pd.DataFrame) -> dict:
    if isinstance(results, TournamentResult):
        names = list(results.policies)
    else:
        names = list(dict.fromkeys(list(f["policy_a"]) + list(f["policy_b"])))
    return {n: i for i, n in enumerate(names)}


def score_matrix(h2h: pd.DataFrame, value: str = "score") -> pd.DataFrame:
    """Square matrix (row policy vs column opponent) of a head_to_head column; NaN on the diagonal."""
    names = list(dict.fromkeys(h2h["policy"]))
    m = h2h.pivot(index="policy", columns="opponent", values=value)
    return m.reindex(index=names, columns=names)


# ------------------------------------------------------------------ Bradley-Terry
def pair_counts(results) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, W, N): W[i, j] = points of i against j (wins + no_winner / 2),
    N[i, j] = games between i and j."""
    f = _pair_frame(results)
    names = list(_policy_order(results, f))
    idx = {n: i for i, n in enumerate(names)}
    k = len(names)
    W = np.zeros((k, k))
    N = np.zeros((k, k))
    for row in f.itertuples(index=False):
        i, j = idx[row.policy_a], idx[row.policy_b]
        W[i, j] += row.wins_a + 0.5 * row.no_winner
        W[j, i] += row.wins_b + 0.5 * row.no_winner
        N[i, j] += row.games
        N[j, i] += row.games
    return names, W, N


def _mle_exists(W: np.ndarray) -> bool:
    """The MLE is finite iff the directed graph i -> j (i scored against j) is strongly connected."""
    from scipy.sparse.csgraph import connected_components

    n, _ = connected_components(W > 0, directed=True, connection="strong")
    return n == 1


def _with_virtual_draws(W: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """W, N plus one virtual game scored half-half in every pair that met."""
    met = (N > 0).astype(float)
    return W + 0.5 * met, N + met


def _loglik(theta: np.ndarray, W: np.ndarray) -> float:
    d = theta[:, None] - theta[None, :]
    return float((W * -np.logaddexp(0.0, -d)).sum())


def _gradient(theta: np.ndarray, W: np.ndarray, N: np.ndarray) -> np.ndarray:
    return (W - N * expit(theta[:, None] - theta[None, :])).sum(axis=1)


def _information(theta: np.ndarray, N: np.ndarray) -> np.ndarray:
    """Observed (= expected) Fisher information of the log-strengths."""
    p = expit(theta[:, None] - theta[None, :])
    info = -(N * p * (1 - p))
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(axis=1))
    return info


def _newton(theta: np.ndarray, W: np.ndarray, N: np.ndarray, solve_step, tol: float, max_iter: int) -> np.ndarray:
    """Maximize the (concave) log-likelihood from theta by Newton steps with step halving."""
    ll = _loglik(theta, W)
    for _ in range(max_iter):
        step = solve_step(theta, _gradient(theta, W, N), _information(theta, N))
        t = 1.0
        while True:
            new = theta + t * step
            new -= new.mean()
            new_ll = _loglik(new, W)
            if new_ll >= ll - 1e-12 or t < 1e-8:
                break
            t /= 2
        theta, ll = new, new_ll
        if np.max(np.abs(t * step)) < tol:
            break
    return theta


def fit_bradley_terry(W: np.ndarray, N: np.ndarray, tol: float = 1e-10, max_iter: int = 200):
    """Maximum-likelihood log-strengths theta (sum 0) from points W and games N.

    Returns (theta, covariance, regularized); ValueError when some policies
    never met the others, even through third ones. When the MLE does not exist
    (a policy, or a group, never scored against the rest) one virtual game
    scored half-half is added to every pair that met, and `regularized` is
    True: theta then maximizes that penalized likelihood (for one pairing
    the virtual draw is Jeffreys' Beta(1/2, 1/2) prior on the score, and
    theta the posterior mode of the log-odds). The covariance is the
    pseudo-inverse of the observed Fisher information of the likelihood
    that was maximized (the covariance of the centred estimates).
    """
    W = np.asarray(W, float)
    N = np.asarray(N, float)
    k = W.shape[0]
    if k > 1:
        from scipy.sparse.csgraph import connected_components

        if connected_components(N > 0, directed=False)[0] > 1:
            # nothing links the groups' levels: their ratings relative to each other are undefined
            raise ValueError("the policies fall into groups that never played each other: "
                             "Bradley-Terry ratings across the groups are not defined")
    regularized = False
    if not _mle_exists(W):
        W, N = _with_virtual_draws(W, N)
        regularized = True
    J = np.ones((k, k)) / k
    theta = _newton(np.zeros(k), W, N, lambda th, g, info: np.linalg.solve(info + J, g), tol, max_iter)
    cov = np.linalg.pinv(_information(theta, N))
    return theta, cov, regularized


def _profile_loglik(W: np.ndarray, N: np.ndarray, c: np.ndarray, value: float, start: np.ndarray) -> float:
    """max l(theta) subject to c'theta = value and sum theta = 0 (c sums to 0)."""
    k = start.size
    C = np.column_stack([c, np.ones(k)])
    kkt = np.zeros((k + 2, k + 2))
    kkt[:k, k:], kkt[k:, :k] = C, C.T

    def solve_step(theta, g, info):     # Newton step inside {C's = 0}
        kkt[:k, :k] = info
        return np.linalg.lstsq(kkt, np.concatenate([g, [0.0, 0.0]]), rcond=None)[0][:k]

    theta = start + (value - c @ start) * c / (c @ c)
    return _loglik(_newton(theta - theta.mean(), W, N, solve_step, 1e-10, 200), W)


def _profile_interval(W: np.ndarray, N: np.ndarray, theta: np.ndarray, c: np.ndarray, z: float,
                      scale: float) -> tuple[float, float]:
    """Likelihood-ratio interval of c'theta: where the profile log-likelihood is
    within z^2 / 2 of its maximum (theta, the maximizer of l with W, N)."""
    from scipy.optimize import brentq

    top = _loglik(theta, W)
    est = float(c @ theta)
    if not np.any(c):
        return est, est

    def excess(v):
        return top - _profile_loglik(W, N, c, v, theta) - z * z / 2

    bounds = []
    for sign in (-1.0, 1.0):
        inside, width = est, max(scale, 0.05)
        for _ in range(60):
            out = est + sign * width
            if excess(out) > 0:
                break
            inside, width = out, 2 * width
        else:  # pragma: no cover - the penalized likelihood always falls off
            bounds.append(sign * np.inf)
            continue
        bounds.append(brentq(excess, min(inside, out), max(inside, out), xtol=1e-9))
    return bounds[0], bounds[1]


def bradley_terry(results, z: float = Z95, anchor: str | None = None, bootstrap: int = 0,
                  seed: int = 0) -> pd.DataFrame:
    """Bradley-Terry ratings with intervals, one row per policy, best first.

    Columns: policy, games, score (points / games over all its pairings),
    log_strength (theta; sum 0, or 0 for `anchor`), se, ci_low, ci_high
    (theta +- z se from the observed Fisher information), strength
    (exp theta; geometric mean 1), elo (= 400 log10(strength)), elo_low,
    elo_high, rank. No-winner games count half a win for each side; a
    ValueError where no game had a winner.

    anchor: a policy whose rating is fixed at 0 (its se is then 0 and the
    others' se is that of the difference to it).
    bootstrap: with a TournamentResult, B >= 2 resamples the game indices
    B times (the same indices for every pairing, keeping the common-deal
    correlation) and replaces the intervals by the 2.5 / 97.5 % percentiles
    of the refits (`se` becomes the bootstrap sd); seeded by `seed`. 0: no
    bootstrap; 1 or a negative number is a ValueError.
    attrs: regularized (bool), method ("fisher" or "bootstrap"), interval
    ("fisher", "profile", "bootstrap", "bootstrap+fisher" or
    "bootstrap+profile"), anchor.
    When the MLE does not exist (see fit_bradley_terry) the ratings come
    from the fit with one virtual draw per pairing, and every interval is
    the likelihood-ratio (profile) interval of that penalized likelihood
    (the set of values within z^2 / 2 of its maximum), finite on both
    sides; se is still from its Fisher information. The side of a swept
    policy's interval that the data never reached (below, for one that
    never scored) is set by the virtual draw, not by the games.
    When some pairing's games all ended alike (a clean sweep; every game
    without a winner) every resample repeats that pairing, so a bootstrap
    cannot show its spread: the interval is then the union of the
    percentile interval and the Fisher (or profile) one, and se the larger
    of the two ("bootstrap+fisher", "bootstrap+profile").
    """
    bootstrap = check_bootstrap(bootstrap)
    f = _pair_frame(results)
    if not (f["wins_a"] + f["wins_b"]).any():
        # every game half a point each way would rate every policy 0, by convention and not by play
        raise ValueError(f"no game had a winner ({counted(int(f['games'].sum()), 'game')}, all without one: a turn "
                         "cap or ties), so there are no ratings")
    names, W, N = pair_counts(results)
    k = len(names)
    if k < 2:
        raise ValueError("Bradley-Terry ratings need the pairings of at least two policies")
    fitted, cov, regularized = fit_bradley_terry(W, N)
    theta = fitted
    A = np.eye(k) - 1.0 / k                  # rows: contrasts theta_i - mean (theta is centred)
    if anchor is not None:
        if anchor not in names:
            raise ValueError(f"anchor {anchor!r} is not one of the policies: {', '.join(names)}")
        a = names.index(anchor)
        A = np.eye(k)
        A[:, a] -= 1.0                       # theta_i - theta_anchor
        theta = A @ theta
        cov = A @ cov @ A.T
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    if regularized:
        # The virtual draws are a prior, not data: theta maximizes the penalized
        # likelihood, and a policy that never scored sits where one virtual half
        # point among its games puts it (about 120 Elo lower each time the games
        # double). That likelihood is far from quadratic there, so the interval is
        # its likelihood-ratio (profile) interval: finite on both sides, the side
        # the data never reached bounded by the prior alone.
        Wp, Np = _with_virtual_draws(W, N)
        bounds = np.array([_profile_interval(Wp, Np, fitted, A[i], z, se[i]) for i in range(k)])
        low, high = bounds[:, 0], bounds[:, 1]
        interval = "profile"
    else:
        low, high = theta - z * se, theta + z * se
        interval = "fisher"
    method = "fisher"
    if bootstrap and isinstance(results, TournamentResult):
        boots = _bootstrap_theta(results, names, bootstrap, seed, anchor)
        b_se = boots.std(axis=0, ddof=1)
        alpha = 2 * (1 - _norm_cdf(z))
        b_low = np.quantile(boots, alpha / 2, axis=0)
        b_high = np.quantile(boots, 1 - alpha / 2, axis=0)
        if (results.outcomes == results.outcomes[:, :1]).all(axis=1).any():
            # A pairing whose games all ended alike (a clean sweep, which needs the
            # virtual draws; every game without a winner) is that same pairing in
            # every resample, so the refits hardly move and the percentile interval
            # collapses (onto the prior's value, for a policy that never scored).
            # Keep the union with the Fisher or profile interval (and the larger
            # se): wide enough for both sources of doubt.
            low, high, se = np.minimum(low, b_low), np.maximum(high, b_high), np.maximum(se, b_se)
            interval = f"bootstrap+{interval}"
        else:
            low, high, se = b_low, b_high, b_se
            interval = "bootstrap"
        method = "bootstrap"
    games = N.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = W.sum(axis=1) / games
    out = pd.DataFrame({
        "policy": names,
        "games": games.astype(np.int64),
        "score": score,
        "log_strength": theta,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "strength": np.exp(theta),
        "elo": ELO_PER_NAT * theta,
        "elo_low": ELO_PER_NAT * low,
        "elo_high": ELO_PER_NAT * high,
    })
    out = out.sort_values("log_strength", ascending=False, kind="stable").reset_index(drop=True)
    out["rank"] = np.arange(1, k + 1)
    out.attrs.update({"regularized": bool(regularized), "method": method, "interval": interval, "anchor": anchor,
                      "bootstrap": int(bootstrap) if method == "bootstrap" else 0, "z": z})
    return out


def check_bootstrap(bootstrap) -> int:
    """The number of bootstrap resamples of `bradley_terry`, checked: 0
    (Fisher intervals) or at least 2 (one refit has no spread)."""
    bootstrap = whole("bootstrap", bootstrap)
    if bootstrap == 1:
        raise ValueError("bootstrap must be 0 (Fisher intervals) or at least 2 resamples: one refit has no spread, "
                         "and its 'interval' need not hold the estimate")
    return bootstrap


def _norm_cdf(x: float) -> float:
    from scipy.stats import norm

    return float(norm.cdf(x))


def _bootstrap_theta(result: TournamentResult, names: list[str], reps: int, seed: int,
                     anchor: str | None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = result.games
    o = result.outcomes
    win_a = (o == 1).astype(float)
    win_b = (o == -1).astype(float)
    tie = (o == 0).astype(float)
    k = len(names)
    idx = {n: i for i, n in enumerate(result.policies)}
    order = [idx[n] for n in names]
    out = np.empty((reps, k))
    for r in range(reps):
        w = rng.multinomial(g, np.full(g, 1.0 / g)).astype(float)
        pa, pb, pt = win_a @ w, win_b @ w, tie @ w
        W = np.zeros((k, k))
        N = np.zeros((k, k))
        for p, (i, j) in enumerate(result.pairs):
            W[i, j] += pa[p] + 0.5 * pt[p]
            W[j, i] += pb[p] + 0.5 * pt[p]
            N[i, j] += g
            N[j, i] += g
        theta, _, _ = fit_bradley_terry(W, N)
        theta = theta[order]
        if anchor is not None:
            theta = theta - theta[names.index(anchor)]
        out[r] = theta
    return out
