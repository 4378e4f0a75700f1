"""The numbers the Bremer Stadtmusikanten and Tape l'étape reports print,
recomputed independently from the records.

Small runs are played with the Python API (etappe.analysis.bremen.simulate;
for Tape l'étape cli.etape.simulate_command, which writes the run and stages
files the report reads) and reported through the CLI's own functions
(cli.bremen.report_command, cli.etape.report_command,
cli.report_cmds.compare_game_variants). Each checked number is recomputed
here from the record columns of docs/bremen.md and docs/etape.md with the
formulas of docs/statistics.md written out in this file in numpy / scipy:
nothing from etappe.analysis or etappe.reports computes an expected value.
"""
import json
import math
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from by_hand import fair_share_sides
from scipy import optimize
from scipy import stats as st

from etappe.analysis import bremen as bremen_api
from etappe.analysis import etape as etape_api
from etappe.analysis.runio import write_parquet
from etappe.cli import bremen as bremen_cli
from etappe.cli import etape as etape_cli
from etappe.cli.report_cmds import compare_game_variants

from test_report_recompute import _HtmlTables, holm, inverse_ecdf, md_tables, table, wilson

Z = st.norm.ppf(0.975)
PROFILES = ["montagne", "descente", "plaine", "contre_la_montre", "voiture_balai"]
JOKER_COLUMN = {"crevaison": "crev", "vitamine": "vita", "braquet": "braq"}


# ------------------------------------------------------------ my own formulas (docs/statistics.md)
def clustered_share(num_g, den_g):
    """Ratio sum num / sum den over clusters; Wilson at Korn-Graubard's effective size
    (Kish's (sum y)^2 / sum y^2 where R is 0 or 1 or the variance is 0)."""
    num_g, den_g = np.asarray(num_g, float), np.asarray(den_g, float)
    g, n = len(num_g), den_g.sum()
    p = num_g.sum() / n
    var = g / (g - 1) * ((num_g - p * den_g) ** 2).sum() / n**2
    if p <= 0 or p >= 1 or var <= 0:
        neff = n**2 / (den_g**2).sum()
    else:
        neff = p * (1 - p) / var * (Z / st.t.ppf(0.975, g - 1)) ** 2
    return (p, *wilson(p * neff, neff))


def clustered_mean(values, mask):
    """Mean of the rows values[mask] (G x seats), interval mean +- t_{G-1} sqrt(ratio-estimator var)
    with a game's (race's) rows as its cluster; sd of the rows."""
    y, m = (values * mask).sum(1).astype(float), mask.sum(1).astype(float)
    g, n = len(y), m.sum()
    mean = y.sum() / n
    half = st.t.ppf(0.975, g - 1) * math.sqrt(g / (g - 1) * ((y - mean * m) ** 2).sum() / n**2)
    return int(n), mean, mean - half, mean + half, values[mask].std(ddof=1)


def summary(x):
    x = np.asarray(x)
    return dict(n=len(x), mean=x.mean(), sd=x.std(ddof=1), median=inverse_ecdf(x, 0.5), p95=inverse_ecdf(x, 0.95),
                min=x.min(), max=x.max())


def paired(a, b, bounded=False, df=None):
    """Paired t of a - b: Student's t on the games that differ, less one (docs/statistics.md: on common
    random numbers the spread rests on them), or on `df` degrees of freedom."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = ~np.isnan(a) & ~np.isnan(b)
    d = a[ok] - b[ok]
    n, m, sd = len(d), d.mean(), d.std(ddof=1)
    out = dict(n=n, diff=m, sd=sd, mean_a=a[ok].mean(), mean_b=b[ok].mean())
    if sd < 1e-12:  # every difference the same: sign test, or nothing to test; no spread, so no interval
        return dict(out, lo=float("nan"), hi=float("nan"), p=float("nan") if abs(m) < 1e-12 else min(1.0, 2 / 2**n))
    df = df or max(np.count_nonzero(d) - 1, 1)
    half = st.t.ppf(0.975, df) * sd / math.sqrt(n)
    lo, hi = m - half, m + half
    if bounded:
        lo, hi = max(lo, -1.0), min(hi, 1.0)
    return dict(out, lo=lo, hi=hi, p=2 * st.t.sf(abs(m) / (sd / math.sqrt(n)), df))


def tango(n, n10, n01, z=Z):
    """Tango's score interval for p_a - p_b of two 0/1 rates on the same n games (n10: only A's is 1,
    n01: only B's): the D with |T(D)| <= z, T(D) = (n10 - n01 - n D) / sqrt(n (2 q + D (1 - D))), q the
    maximum-likelihood P(only B) given D (found numerically here); McNemar's exact p."""
    def q_hat(d):
        lo, hi = max(0.0, -d), (1 - d) / 2
        if hi - lo < 1e-15:
            return lo
        def loglik(q):
            return -((n10 * math.log(q + d) if n10 else 0) + (n01 * math.log(q) if n01 else 0)
                     + ((n - n10 - n01) * math.log(1 - 2 * q - d) if n - n10 - n01 else 0))

        return optimize.minimize_scalar(loglik, bounds=(lo + 1e-13, hi - 1e-13), method="bounded",
                                        options={"xatol": 1e-14}).x
    def score(d):
        return (n10 - n01 - n * d) / math.sqrt(n * (2 * q_hat(d) + d * (1 - d)))

    d, e = (n10 - n01) / n, 1e-12
    lo = optimize.brentq(lambda x: score(x) - z, -1 + e, d, xtol=1e-14) if score(-1 + e) > z else -1.0
    hi = optimize.brentq(lambda x: score(x) + z, d, 1 - e, xtol=1e-14) if score(1 - e) < -z else 1.0
    p = min(1.0, 2 * st.binom.cdf(min(n10, n01), n10 + n01, 0.5)) if n10 + n01 else float("nan")
    return lo, hi, p


def paired_rate(a, b):
    """A rate of 0 or 1 a game in both runs (docs/statistics.md, "A rate of 0 or 1 a game"): the mean
    difference with Tango's score interval and McNemar's exact p of the discordant games."""
    r = paired(a, b, True)
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = ~np.isnan(a) & ~np.isnan(b)
    assert np.isin(a[ok], (0, 1)).all() and np.isin(b[ok], (0, 1)).all()
    lo, hi, p = tango(int(ok.sum()), int((a[ok] > b[ok]).sum()), int((a[ok] < b[ok]).sum()))
    return dict(r, lo=lo, hi=hi, p=p)


def per_race(x, races):
    """Row sums of a stage x seat array, added up per race."""
    return pd.Series(x.sum(1)).groupby(races).sum().to_numpy()


def chi_square(counts):
    counts = np.asarray(counts, float)
    e = counts.sum() / len(counts)
    x2 = ((counts - e) ** 2 / e).sum()
    return x2, st.chi2.sf(x2, len(counts) - 1)


# ------------------------------------------------------------ reading reports
def printed(cell, value):
    """The reports print floats as %.4g and whole numbers whole."""
    if isinstance(value, (int, np.integer)):
        return cell == str(int(value))
    return cell == f"{float(value):.4g}"


def check_row(row, expected, label=""):
    for col, value in expected.items():
        assert printed(row[col], value), (label, col, row[col], value)


def html_matches_markdown(md, html):
    parser = _HtmlTables()
    parser.feed(html)
    tables, lines, i = [], md.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|(---\|)+$", lines[i + 1]):
            rows, i = [[c.strip().replace("\\|", "|") for c in lines[i].strip("|").split("|")]], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip().replace("\\|", "|") for c in lines[i].strip("|").split("|")])
                i += 1
            tables.append(rows)
            continue
        i += 1
    return bool(tables) and tables == parser.tables


# ------------------------------------------------------------ records
class Bremen:
    """Per-game facts from the Bremen record columns (docs/bremen.md, Records)."""

    def __init__(self, df):
        df = df.sort_values("game").reset_index(drop=True)
        self.df, self.P, self.G = df, df.attrs["players"], len(df)
        self.policy = list(df.attrs["policies"])
        self.winner = df["winner_seat"].to_numpy()
        self.decided = self.winner >= 0
        self.first = df["first_seat"].to_numpy()
        self.points = np.stack([df[f"points_s{s}"].to_numpy() for s in range(self.P)], 1)
        self.maxdef = np.stack([df[f"max_deficit_s{s}"].to_numpy() for s in range(self.P)], 1)

    def col(self, name):
        return self.df[name].to_numpy(float)

    def position_wins(self):
        return np.bincount((self.winner - self.first)[self.decided] % self.P, minlength=self.P)

    def winner_deficit(self):  # NaN without a winner
        out, i = np.full(self.G, np.nan), np.where(self.decided)[0]
        out[i] = self.maxdef[i, self.winner[i]]
        return out

    def final_gap(self):
        out, i = np.full(self.G, np.nan), np.where(self.decided)[0]
        pts = self.points[i].astype(float)
        best = pts[np.arange(len(i)), self.winner[i]].copy()
        pts[np.arange(len(i)), self.winner[i]] = -np.inf
        out[i] = best - pts.max(1)
        return out

    def first_player_won(self):
        return np.where(self.decided, (self.winner == self.first).astype(float), np.nan)

    def ahead(self, i, j):
        """+1 seat i finished ahead of seat j, 0 level, -1 behind: the winner first, then points."""
        c = np.sign(self.points[:, i] - self.points[:, j])
        return np.where(self.winner == i, 1, np.where(self.winner == j, -1, c))


class Etape:
    """Per-race and per-stage facts from the Tape l'étape records (docs/etape.md, Records)."""

    def __init__(self, races, stages, meta):
        self.r = races.sort_values("race").reset_index(drop=True)
        self.s = stages.sort_values(["race", "stage"]).reset_index(drop=True)
        self.meta, self.opts = meta, meta["options"]
        self.P, self.N, self.K = meta["players"], len(self.r), meta["stages_per_race"]
        self.specs = list(meta["policies"])
        seat = self.seat
        self.rank = seat("rank", self.r)
        top = self.rank == 1
        self.share = top / top.sum(1, keepdims=True)  # 1/k of a win to each of k leaders
        self.slot = seat("slot", self.r)
        self.spec = np.array(self.specs, dtype=object)[self.slot]
        self.time = seat("time", self.r)
        self.cum = seat("cum", self.s).reshape(self.N, self.K, self.P)
        self.place = seat("place", self.s).reshape(self.N, self.K, self.P)
        self.stage_spec = np.array(self.specs, dtype=object)[seat("slot", self.s)].reshape(self.N, self.K, self.P)

    def seat(self, field, frame):
        return frame[[f"{field}_{s}" for s in range(self.P)]].to_numpy()

    def slots_of(self, spec):
        return sum(1 for p in self.specs if p == spec)

    def leaders(self):
        """The sole GC leader after each stage (-1: none); under gc_tie=stage_places a tie on time is
        broken by the sum of places so far, then the place in that stage."""
        out = np.full((self.N, self.K), -1)
        for k in range(self.K):
            c = self.cum[:, k]
            best = c == c.min(1, keepdims=True)
            if self.opts["gc_tie"] == "stage_places":
                for tb in (self.place[:, : k + 1].sum(1), self.place[:, k]):
                    tb = np.where(best, tb, np.iinfo(np.int64).max)
                    best &= tb == tb.min(1, keepdims=True)
            sole = best.sum(1) == 1
            out[sole, k] = best[sole].argmax(1)
        return out

    def lead_changes(self):
        out, lead = np.zeros(self.N), self.leaders()
        for g in range(self.N):
            cur = -1
            for who in lead[g]:
                if who >= 0 and who != cur:
                    out[g] += cur >= 0
                    cur = who
        return out

    def winner_deficit(self):
        w, out = self.r["winner"].to_numpy(), np.full(self.N, np.nan)
        i = np.where(w >= 0)[0]
        gaps = self.cum - self.cum.min(2, keepdims=True)
        out[i] = gaps[i, :, w[i]].max(1)
        return out

    def final_gap(self):
        w, out = self.r["winner"].to_numpy(), np.full(self.N, np.nan)
        i = np.where(w >= 0)[0]
        t = self.time[i].astype(float)
        won = t[np.arange(len(i)), w[i]].copy()
        t[np.arange(len(i)), w[i]] = np.inf
        out[i] = t.min(1) - won
        return out

    def leader_before_last_won(self):
        w, lead, out = self.r["winner"].to_numpy(), self.leaders()[:, self.K - 2], np.full(self.N, np.nan)
        ok = (w >= 0) & (lead >= 0)
        out[ok] = lead[ok] == w[ok]
        return out


# ------------------------------------------------------------ the runs
@pytest.fixture(scope="module")
def bremen_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bremen")
    df = bremen_api.simulate(4, 1500, ["greedy", "random"], seed=2, threads=1)
    write_parquet(df, tmp / "b.parquet", df.attrs)
    bremen_cli.report_command(tmp / "b.parquet", tmp / "rb")
    return Bremen(df), (tmp / "rb" / "report.md").read_text(), (tmp / "rb" / "report.html").read_text()


@pytest.fixture(scope="module")
def bremen_capped(tmp_path_factory):
    """One policy on every seat (so a seat chi-square) and a cap low enough that a quarter of the games hit it."""
    tmp = tmp_path_factory.mktemp("bremen_capped")
    df = bremen_api.simulate(4, 800, ["greedy"], seed=6, options={"max_turns": 50}, threads=1)
    write_parquet(df, tmp / "g.parquet", df.attrs)
    bremen_cli.report_command(tmp / "g.parquet", tmp / "rg")
    return Bremen(df), (tmp / "rg" / "report.md").read_text()


def _etape(tmp, players, races, policies, seed, options):
    out = tmp / "e.parquet"
    etape_cli.simulate_command(players, races, policies, seed, out, options)
    etape_cli.report_command(out, tmp / "re")
    meta = json.loads(pq.read_metadata(out).metadata[b"etappe"])
    runs = Etape(pd.read_parquet(out), pd.read_parquet(etape_cli.stages_path(out)), meta)
    return runs, (tmp / "re" / "report.md").read_text(), (tmp / "re" / "report.html").read_text()


@pytest.fixture(scope="module")
def etape_run(tmp_path_factory):
    return _etape(tmp_path_factory.mktemp("etape"), 4, 1000, ["heuristic", "random"], 3, {})


@pytest.fixture(scope="module")
def etape_odd(tmp_path_factory):
    """Seats keep their policies, ties broken on stage places, and seat 1 denied two jokers."""
    return _etape(tmp_path_factory.mktemp("etape_odd"), 4, 600, ["heuristic", "blocker"], 11,
                  {"rotate_seats": False, "gc_tie": "stage_places", "withhold_seat": 1,
                   "withhold_jokers": "vitamine,braquet"})


# ------------------------------------------------------------ Bremen balance report
def test_bremen_outcomes_skill_and_chi_square(bremen_run):
    R, md, _ = bremen_run
    t, n = md_tables(md), int(bremen_run[0].decided.sum())
    for _, row in table(t, "Win rate per seat").iterrows():
        k = int((R.winner == int(row["seat"])).sum())
        check_row(row, dict(n=n, wins=k, win_rate=k / n, ci_low=wilson(k, n)[0], ci_high=wilson(k, n)[1]), "seat")
    for _, row in table(t, "Win rate per policy").iterrows():
        seats = [s for s in range(R.P) if R.policy[s] == row["policy"]]
        k = int(np.isin(R.winner, seats).sum())
        lo, hi = wilson(k, n)  # Wilson over the games won, divided by the policy's seats
        assert row["seats"] == ",".join(map(str, seats))
        check_row(row, dict(n=n * len(seats), wins=k, win_rate=k / (n * len(seats)), ci_low=lo / len(seats),
                            ci_high=hi / len(seats)), "policy")
    counts = R.position_wins()  # by places after the starting player; the report counts from 1, as the race reports
    assert "Win rate by position in the turn order (1 = the drawn starting player)" in md
    assert table(t, "Win rate by position")["turn_position"].astype(int).tolist() == list(range(1, R.P + 1))
    for _, row in table(t, "Win rate by position").iterrows():
        k = int(counts[int(row["turn_position"]) - 1])
        check_row(row, dict(n=n, wins=k, win_rate=k / n, ci_low=wilson(k, n)[0], ci_high=wilson(k, n)[1]), "pos")
    x2, p = chi_square(counts)
    assert f"Turn-order uniformity among decided games: chi-square {x2:.2f}, p = {p:.3g} over {n} games." in md
    for _, row in table(t, "Head to head").iterrows():
        ahead = level = pairs = np.zeros(R.G)
        for i in range(R.P):
            for j in range(R.P):
                if R.policy[i] == row["policy"] and R.policy[j] == row["opponent"]:
                    c = R.ahead(i, j)
                    ahead, level, pairs = ahead + (c > 0), level + (c == 0), pairs + 1
        score, lo, hi = clustered_share(ahead + level / 2, pairs)
        check_row(row, dict(pairs=int(pairs.sum()), ahead=int(ahead.sum()), level=int(level.sum()),
                            behind=int((pairs - ahead - level).sum()), score=score, ci_low=lo, ci_high=hi), "skill")


def test_bremen_length_tension_progress_sources(bremen_run):
    R, md, html = bremen_run
    t = md_tables(md)
    length = table(t, "Per game").set_index("metric")
    for metric in ("turns", "rolls", "robber_moves", "animals_sent_home", "extra_roll_chain_max", "storms", "chases"):
        check_row(length.loc[metric], summary(R.df[metric].to_numpy()), metric)
    tension = table(t, "Tension").set_index("metric")
    for label, x in (("lead changes per game", R.df["lead_changes"].to_numpy()),
                     ("winner's largest deficit (points)", R.winner_deficit()[R.decided].astype(int)),
                     ("final gap: winner minus the best other (points)", R.final_gap()[R.decided].astype(int))):
        check_row(tension.loc[label], summary(x), label)
    ties, decided = int((R.final_gap()[R.decided] == 0).sum()), int(R.decided.sum())
    low, high = wilson(ties, decided)
    assert (f"Decided by the tie rule (final gap 0): {ties} of {decided} decided games ({100 * ties / decided:.1f} % "
            f"[{100 * low:.1f}, {100 * high:.1f}], 95 % Wilson interval).") in md
    progress = table(t, "Mean points after each checkpoint round, per policy")
    assert sorted(set(progress["group"])) == sorted(set(R.policy))   # every policy, at every round
    assert len(progress) == len(set(R.policy)) * progress["round"].nunique() > 0
    for _, row in progress.iterrows():
        values = np.stack([R.df[f"points_r{row['round']}_s{s}"].to_numpy() for s in range(R.P)], 1)
        mask = np.tile([p == row["group"] for p in R.policy], (R.G, 1))
        n, mean, lo, hi, sd = clustered_mean(values, mask)
        check_row(row, dict(n=n, mean=mean, ci_low=lo, ci_high=hi, sd=sd), ("progress", row["group"], row["round"]))
    sources = next(f for _, f in t if "source" in f.columns).set_index("source")
    total = R.points.sum()
    for source in ("storm", "robber_bonus", "chase"):
        x = sum(R.df[f"points_{source}_s{s}"].sum() for s in range(R.P))
        check_row(sources.loc[source], dict(points_per_game=x / R.G, points_per_seat_game=x / (R.G * R.P),
                                            share=x / total), source)
    d = R.df
    assert (f"The robber moved {d.robber_moves.mean():.1f} times per game and sent {d.sent_home_by_robber.mean():.1f} "
            f"animals home; landings knocked {d.sent_home_by_knock.mean():.1f} animals home. Extra rolls: "
            f"{d.extra_rolls.mean():.1f} per game, longest chain {d.extra_roll_chain_max.max()}.") in md
    assert html_matches_markdown(md, html)


def test_bremen_capped_games_and_seat_chi_square(bremen_capped):
    R, md = bremen_capped
    n, capped = int(R.decided.sum()), int(R.df["capped"].sum())
    assert 0 < capped == R.G - n
    seats = table(md_tables(md), "Win rate per seat")
    assert set(seats["n"]) == {str(n)}  # capped games are left out of the win rates
    x2, p = chi_square(np.bincount(R.winner[R.decided], minlength=R.P))
    assert (f"Seat uniformity (one policy on every seat, so only their corners and colours differ): "
            f"chi-square {x2:.2f}, p = {p:.3g} over {n} games.") in md
    lo, hi = wilson(capped, R.G)  # Wilson over all games
    assert (f"{capped} of {R.G} games ({100 * capped / R.G:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}], 95 % Wilson "
            "interval) hit the turn cap of 50 turns;") in md
    tension = table(md_tables(md), "Tension").set_index("metric")
    assert tension.loc["winner's largest deficit (points)", "n"] == str(n)
    check_row(tension.loc["final gap: winner minus the best other (points)"],
              summary(R.final_gap()[R.decided].astype(int)))


# ------------------------------------------------------------ Tape l'étape balance report
def test_etape_outcomes_skill_tension(etape_run):
    R, md, _ = etape_run
    t, N = md_tables(md), R.N
    for _, row in table(t, "Race win rate per policy").iterrows():
        mine = R.spec == row["policy"]
        wins, slots = (R.share * mine).sum(), R.slots_of(row["policy"])
        lo, hi = wilson(wins, N)  # Wilson over races, per slot the policy holds
        assert row["wins"] == (f"{wins:.1f}" if abs(wins - round(wins)) > 1e-9 else str(round(wins)))
        check_row(row, dict(n=int(mine.sum()), mean_time=R.time[mine].mean(), win_rate=wins / mine.sum(),
                            ci_low=lo / slots, ci_high=hi / slots), "policy")
    wins = R.share.sum(0)
    for _, row in table(t, "Race win rate per seat").iterrows():
        s = int(row["seat"])
        check_row(row, dict(n=N, mean_time=R.time[:, s].mean(), win_rate=wins[s] / N, ci_low=wilson(wins[s], N)[0],
                            ci_high=wilson(wins[s], N)[1]), "seat")
    x2, p = chi_square(wins)
    shared = int((R.r["winner"] < 0).sum())
    lo, hi = wilson(shared, N)
    assert (f"Seat uniformity: chi-square {x2:.2f}, p = {p:.3g} (H0: every seat wins 1/{R.P}). Races with a shared "
            f"first place: {100 * shared / N:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]") in md
    for _, row in table(t, "Head to head").iterrows():
        a, b = (next(s for s in R.specs if s.split(":")[0] == row[c]) for c in ("policy", "opponent"))
        ahead, level, pairs = np.zeros(N), np.zeros(N), np.zeros(N)
        for i in range(R.P):
            for j in range(R.P):
                m = (R.spec[:, i] == a) & (R.spec[:, j] == b) & (i != j)
                ahead += m & (R.rank[:, i] < R.rank[:, j])
                level += m & (R.rank[:, i] == R.rank[:, j])
                pairs += m
        score, lo, hi = clustered_share(ahead + level / 2, pairs)
        check_row(row, dict(pairs=int(pairs.sum()), ahead=int(ahead.sum()), level=int(level.sum()), score=score,
                            ci_low=lo, ci_high=hi), "skill")
    length = table(t, "Length").set_index("metric")
    check_row(length.loc["turns per stage"], summary(R.s["turns"]))
    check_row(length.loc["turns per race"], summary(R.s.groupby("race")["turns"].sum()))
    for profile in PROFILES:
        check_row(length.loc[f"turns per stage: {profile}"], summary(R.s["turns"][R.s["profile"] == profile]), profile)
    tension = table(t, "Tension").set_index("metric")
    sole = R.r["winner"].to_numpy() >= 0
    check_row(tension.loc["GC lead changes per race"], summary(R.lead_changes().astype(int)))
    check_row(tension.loc["winner's largest deficit after a stage (s)"], summary(R.winner_deficit()[sole].astype(int)))
    check_row(tension.loc["final gap: runner-up's time minus the winner's (s)"], summary(R.final_gap()[sole].astype(int)))
    won = R.leader_before_last_won()
    won = won[~np.isnan(won)]
    lo, hi = wilson(won.sum(), len(won))
    assert (f"The GC leader before the last stage won {100 * won.mean():.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] "
            f"of the {len(won)} races with a sole leader then and a sole winner.") in md
    gaps = R.cum - R.cum.min(2, keepdims=True)
    for _, row in table(t, "Mean gap to the GC leader (s) after each stage, per policy").iterrows():
        k = int(row["after_stage"]) - 1
        mask = R.stage_spec[:, k] == next(s for s in R.specs if s.split(":")[0] == row["group"])
        n, mean, lo, hi, sd = clustered_mean(gaps[:, k], mask)
        check_row(row, dict(n=n, mean=mean, ci_low=lo, ci_high=hi, sd=sd), ("progress", row["group"], k))


def test_etape_profiles_cards_jokers_sides_anomalies(etape_run):
    R, md, html = etape_run
    t, S, N, P = md_tables(md), R.s, R.N, R.P
    times, cards = R.seat("time", S), R.seat("cards", S)
    picker, winner = S["picker"].to_numpy(), S["winner"].to_numpy()
    profiles = table(t, "Per profile").set_index("profile")
    for profile in PROFILES:
        m = (S["profile"] == profile).to_numpy()
        n, won = int(m.sum()), int((winner[m] >= 0).sum())
        k = int((winner[m] == picker[m]).sum())
        share = clustered_share(pd.Series(m).groupby(S["race"]).sum(), np.full(N, R.K))
        pt = times[m][np.arange(n), picker[m]]
        others = np.ones((n, P), bool)
        others[np.arange(n), picker[m]] = False
        expected = dict(stages=n, share=share[0], share_lo=share[1], share_hi=share[2], picker_win_rate=k / n,
                        picker_win_lo=wilson(k, n)[0], picker_win_hi=wilson(k, n)[1], picker_share_of_wins=k / won,
                        picker_share_of_wins_lo=wilson(k, won)[0], picker_share_of_wins_hi=wilson(k, won)[1],
                        fair_win_rate=1 / P, picker_time=pt.mean(), others_time=times[m][others].mean(),
                        picker_advantage_s=times[m][others].mean() - pt.mean(), mean_turns=S["turns"][m].mean(),
                        mean_cards_left=cards[m].mean())
        check_row(profiles.loc[profile], expected, profile)
        assert f"Picked in {n} stages ({100 * n / len(S):.1f} %)." in md
        section = table(md_tables(md.split(f"## Profile: {profile}")[1].split("\n## ")[0]), "Per policy")
        for _, row in section.iterrows():
            mine = R.stage_spec.reshape(-1, P)[m] == row["policy"]
            wins = int(((winner[m][:, None] == np.arange(P)) & mine).sum())
            lo, hi = wilson(wins, n)
            slots = R.slots_of(row["policy"])
            check_row(row, dict(n=int(mine.sum()), mean_time=times[m][mine].mean(), wins=wins,
                                win_rate=wins / mine.sum(), ci_low=lo / slots, ci_high=hi / slots), (profile, "policy"))
    dealt, held = R.seat("dealt", S).astype(np.uint64), R.seat("hand", S).astype(np.uint64)
    # the interval is clustered by race, as recomputed below, and the caption says so
    assert "Numbered cards by value (left share: 95 % interval clustered by race)" in [cap for cap, _ in t]
    for _, row in table(t, "Numbered cards by value").iterrows():
        v = int(row["value"])
        # per stage and seat, the cards of value v among the masks; per race, their sums (a race's go together)
        d, h = (per_race(sum((masks >> np.uint64(c * 12 + v - 1)) & np.uint64(1) for c in range(4)).astype(int),
                         S["race"]) for masks in (dealt, held))
        _, lo, hi = clustered_share(h, d)
        check_row(row, dict(seconds_if_left=R.opts["low_card_seconds" if v <= 6 else "high_card_seconds"],
                            dealt=d.sum(), laid=d.sum() - h.sum(), left=h.sum(), left_share=h.sum() / d.sum(),
                            left_low=lo, left_high=hi))
    jokers = table(t, "Use and immediate effect").set_index("joker")
    last = (S["stage"] == R.K - 1).to_numpy()[:, None]
    for joker, column in JOKER_COLUMN.items():
        target = R.seat(column, S)
        used = target >= 0
        uses = per_race(used, S["race"])
        rate, in_last = clustered_share(uses, np.full(N, P)), clustered_share(per_race(used & last, S["race"]), uses)
        expected = dict(uses=int(used.sum()), use_rate=rate[0], use_rate_low=rate[1], use_rate_high=rate[2],
                        in_last_stage=in_last[0], in_last_stage_low=in_last[1], in_last_stage_high=in_last[2])
        if joker == "crevaison":
            on_self = clustered_share(per_race(used & (target == np.arange(P)), S["race"]), uses)
            expected.update(on_self=on_self[0], on_self_low=on_self[1], on_self_high=on_self[2])
        if joker == "braquet":
            expected["cards_per_use"] = target[used].mean()
        check_row(jokers.loc[joker], expected, joker)
    effect = table(t, "Stage time with the joker").set_index("joker")
    for joker, column in JOKER_COLUMN.items():
        used = R.seat(column, S) >= 0
        a, b = times[used], times[~used]
        d, half = a.mean() - b.mean(), Z * math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        check_row(effect.loc[joker], dict(stages_used=len(a), time_used=a.mean(), time_not_used=b.mean(),
                                          difference_s=d, ci_low=d - half, ci_high=d + half), joker)
    sides = next(f for _, f in t if "mountain_top" in f.columns)
    for _, row in sides.iterrows():
        mine, slots = R.spec == row["policy"], R.slots_of(row["policy"])
        expected = dict(n=int(mine.sum()))
        for cls in ("mountain", "sprint"):
            pts = R.seat(cls, R.r)
            top = pts == pts.max(1, keepdims=True)  # shared tops 1/k (a race where all have 0: each 1/players)
            k = (top / top.sum(1, keepdims=True) * mine).sum()
            expected.update({f"{cls}_points": pts[mine].mean(), f"{cls}_top": k / mine.sum(),
                             f"{cls}_top_low": wilson(k, N)[0] / slots, f"{cls}_top_high": wilson(k, N)[1] / slots})
        check_row(row, expected, "sides")
    anomalies = table(t, "Anomalies").set_index("what")
    for label, k, n in (("stages cut off by the turn cap", int(S["capped"].sum()), len(S)),
                        ("stages blocked (nobody can lay)", int(S["blocked"].sum()), len(S)),
                        ("stages without a winner", int((winner < 0).sum()), len(S)),
                        ("races with a shared first place", int((R.r["winner"] < 0).sum()), N)):
        check_row(anomalies.loc[label], dict(count=k, out_of=n, rate=k / n, ci_low=wilson(k, n)[0],
                                             ci_high=wilson(k, n)[1]), label)
    assert html_matches_markdown(md, html)


def test_etape_withheld_jokers_and_stage_place_ties(etape_odd):
    R, md, _ = etape_odd
    t, S, N, P = md_tables(md), R.s, R.N, R.P
    tension = table(t, "Tension").set_index("metric")
    check_row(tension.loc["GC lead changes per race"], summary(R.lead_changes().astype(int)))
    sole = R.r["winner"].to_numpy() >= 0
    check_row(tension.loc["winner's largest deficit after a stage (s)"], summary(R.winner_deficit()[sole].astype(int)))
    x2, p = chi_square(R.share.sum(0))
    assert f"Seat uniformity: chi-square {x2:.2f}, p = {p:.3g}" in md
    jokers = table(t, "Use and immediate effect").set_index("joker")
    effect = table(t, "Stage time with the joker").set_index("joker")
    times = R.seat("time", S)
    for joker in ("vitamine", "braquet"):  # denied to seat 1: rates per player-race that held it
        assert f"{joker} is withheld from seat 1" in md
        used = R.seat(JOKER_COLUMN[joker], S) >= 0
        assert not used[:, 1].any()
        rate = clustered_share(pd.Series(used.sum(1)).groupby(S["race"]).sum(), np.full(N, P - 1))
        check_row(jokers.loc[joker], dict(uses=int(used.sum()), use_rate=rate[0], use_rate_low=rate[1],
                                          use_rate_high=rate[2]), joker)
        holder = np.arange(P) != 1  # "without": the stages of the seats that hold it and did not use it
        a, b = times[used], times[~used & holder]
        d, half = a.mean() - b.mean(), Z * math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        check_row(effect.loc[joker], dict(time_not_used=b.mean(), difference_s=d, ci_low=d - half, ci_high=d + half))


# ------------------------------------------------------------ variant comparisons
def _every_metric(md):
    rows = {}
    for label, row in table(md_tables(md), "Paired differences").set_index("metric").iterrows():
        cell = row["A - B [95 % interval]"]
        m = (re.fullmatch(r"([+-][\d.e+-]+) \[([\d.e+-]+), ([\d.e+-]+)\]", cell)
             or re.fullmatch(rf"([+-][\d.e+-]+) \(the same in all {row['n']} pairs: no interval\)()()", cell))
        rows[label] = dict(row, diff=m.group(1), lo=m.group(2), hi=m.group(3))
    return rows


def _check_comparison(md, mine):
    every = _every_metric(md)
    assert sorted(every) == sorted(mine)
    tested = [k for k in mine if not math.isnan(mine[k]["p"])]
    adjusted = dict(zip(tested, holm([mine[k]["p"] for k in tested])))
    for label, r in mine.items():
        row = every[label]
        assert row["n"] == str(r["n"]), label
        assert printed(row["mean_a"], r["mean_a"]) and printed(row["mean_b"], r["mean_b"]), (label, row, r)
        assert row["diff"] == (f"{r['diff']:+.4g}" if r["diff"] != 0 else "+0"), (label, row["diff"], r["diff"])
        if math.isnan(r["lo"]):  # the same difference in every pair: no interval
            assert row["lo"] == row["hi"] == "", (label, row, r)
        else:
            assert printed(row["lo"], r["lo"]) and printed(row["hi"], r["hi"]), (label, row, r)
        if label in adjusted:
            assert printed(row["p_value"], r["p"]) and printed(row["p_holm"], adjusted[label]), (label, row, r)
            assert row["reject"] == str(bool(adjusted[label] < 0.05))
        else:
            assert row["p_value"] == row["p_holm"] == "" and row["reject"] == "False"
    return adjusted


def _headline(md, label, r, adjusted):
    holm_text = f"Holm p = {adjusted[label]:.3g}" if adjusted[label] >= 1e-300 else "Holm p < 1e-300"
    assert (f"{label}: A {r['mean_a']:.4g}, B {r['mean_b']:.4g}; A - B = {r['diff']:+.4g} [{r['lo']:.4g}, "
            f"{r['hi']:.4g}], {holm_text}, n = {r['n']}.") in md


def test_bremen_variant_comparison(tmp_path):
    policies, options_a, options_b = ["greedy", "random"], {"max_turns": 60}, {"max_turns": 60, "harder": True}
    compare_game_variants("bremen", 4, 800, policies, 5, options_a, options_b, tmp_path / "c", 800)
    md = (tmp_path / "c" / "report.md").read_text()
    A, B = (Bremen(bremen_api.simulate(4, 800, policies, 5, options=o, threads=1)) for o in (options_a, options_b))
    fa, fb = A.first_player_won(), B.first_player_won()
    ok = ~np.isnan(fa) & ~np.isnan(fb)
    f = 1 / A.P
    # |mean - f| of A minus that of B: a side of f is known where the mean's own t interval leaves f out, else
    # both are tried (union of the intervals, largest p), on n - 1 degrees of freedom (docs/statistics.md)
    tried = [paired(sa * (fa[ok] - f), sb * (fb[ok] - f), True, df=ok.sum() - 1)
             for sa in fair_share_sides(fa[ok], f) for sb in fair_share_sides(fb[ok], f)]
    gap = {**tried[0], "lo": min(t["lo"] for t in tried), "hi": max(t["hi"] for t in tried),
           "p": max(t["p"] for t in tried)}
    gap.update(diff=abs(fa[ok].mean() - f) - abs(fb[ok].mean() - f), mean_a=abs(fa[ok].mean() - f),
               mean_b=abs(fb[ok].mean() - f))
    mine = {"turns per game": paired(A.col("turns"), B.col("turns")),
            "rolls per game": paired(A.col("rolls"), B.col("rolls")),
            "turn-cap (stall) rate": paired_rate(A.col("capped"), B.col("capped")),
            "first player's win rate (games with a winner)": paired_rate(fa, fb),
            "first player's distance from the fair share": gap,
            "lead changes per game": paired(A.col("lead_changes"), B.col("lead_changes")),
            "winner's largest deficit": paired(A.winner_deficit(), B.winner_deficit()),
            "final gap (winner minus the best other seat)": paired(A.final_gap(), B.final_gap()),
            "animals sent home per game": paired(A.col("animals_sent_home"), B.col("animals_sent_home")),
            "houses stormed per game": paired(A.col("storms"), B.col("storms")),
            "robber chases per game": paired(A.col("chases"), B.col("chases")),
            "extra rolls per game": paired(A.col("extra_rolls"), B.col("extra_rolls"))}
    for s in range(A.P):
        mine[f"win rate of seat {s} ({A.policy[s]}; a game without a winner counts as a loss)"] = paired_rate(
            (A.winner == s).astype(float), (B.winner == s).astype(float))
    adjusted = _check_comparison(md, mine)
    for label in ("turns per game", "first player's distance from the fair share", "lead changes per game",
                  "turn-cap (stall) rate"):
        _headline(md, label, mine[label], adjusted)
    assert html_matches_markdown(md, (tmp_path / "c" / "report.html").read_text())


def test_etape_variant_comparison(tmp_path):
    players, policies, options_b = 4, ["heuristic", "random"], {"column_step": "free"}
    compare_game_variants("etape", players, 800, policies, 3, {}, options_b, tmp_path / "c", 800)
    md = (tmp_path / "c" / "report.md").read_text()
    runs = []
    for options in ({}, options_b):
        races, stages = etape_api.simulate(players, 800, policies, 3, options, threads=1)
        runs.append(Etape(races, stages, races.attrs))
    A, B = runs
    def per(R):
        return dict(turns=R.s.groupby("race")["turns"].sum().to_numpy(float),
                    capped=R.r["capped_stages"].to_numpy(float), blocked=R.r["blocked_stages"].to_numpy(float),
                    shared=(R.r["winner"].to_numpy() < 0).astype(float), lc=R.lead_changes(),
                    wd=R.winner_deficit(), fg=R.final_gap(), lb=R.leader_before_last_won())

    a, b = per(A), per(B)
    mine = {"turns per race": paired(a["turns"], b["turns"]),
            "stages cut off by the turn cap per race": paired(a["capped"], b["capped"]),
            "blocked stages per race": paired(a["blocked"], b["blocked"]),
            "races with a shared first place": paired_rate(a["shared"], b["shared"]),
            "GC lead changes per race": paired(a["lc"], b["lc"]),
            "winner's largest deficit after a stage": paired(a["wd"], b["wd"]),
            "final gap: runner-up's time minus the winner's": paired(a["fg"], b["fg"]),
            "GC leader before the last stage wins the race": paired_rate(a["lb"], b["lb"])}
    for s in range(players):
        mine[f"win share of seat {s}"] = paired(A.share[:, s], B.share[:, s], True)
    for k in range(players):
        mine[f"win share of policy slot {k} ({A.specs[k].split(':')[0]})"] = paired(
            (A.share * (A.slot == k)).sum(1), (B.share * (B.slot == k)).sum(1), True)
    adjusted = _check_comparison(md, mine)
    for label in ("GC lead changes per race", "GC leader before the last stage wins the race"):
        _headline(md, label, mine[label], adjusted)
    assert "Which has more stages cut off by the turn cap? Equal in every one of the 800 pairs" in md
    assert html_matches_markdown(md, (tmp_path / "c" / "report.html").read_text())


def test_tiny_runs_quantiles_and_small_expected_counts(tmp_path):
    """A dozen games: the median and 95th percentile are the inverse ECDF (a value that occurred, not
    numpy's interpolation), and the chi-squares say their expected counts are below 5."""
    df = bremen_api.simulate(4, 12, ["greedy"], seed=3, threads=1)
    write_parquet(df, tmp_path / "b.parquet", df.attrs)
    bremen_cli.report_command(tmp_path / "b.parquet", tmp_path / "rb")
    md = (tmp_path / "rb" / "report.md").read_text()
    R, length = Bremen(df), table(md_tables(md), "Per game").set_index("metric")
    differs = 0
    for metric in ("turns", "rolls", "animals_sent_home", "extra_rolls"):
        x = R.df[metric].to_numpy()
        check_row(length.loc[metric], summary(x), metric)
        differs += inverse_ecdf(x, 0.95) != np.quantile(x, 0.95)
    assert differs  # the check tells the two quantiles apart
    x2, p = chi_square(R.position_wins())
    assert (f"chi-square {x2:.2f}, p = {p:.3g} over 12 games (expected counts below 5: the chi-square p is only "
            "approximate)") in md
    runs, md, _ = _etape(tmp_path, 4, 10, ["heuristic"], 2, {})
    x = runs.s.groupby("race")["turns"].sum().to_numpy()
    check_row(table(md_tables(md), "Length").set_index("metric").loc["turns per race"], summary(x))
    assert inverse_ecdf(x, 0.5) != np.quantile(x, 0.5) or inverse_ecdf(x, 0.95) != np.quantile(x, 0.95)
    x2, p = chi_square(runs.share.sum(0))
    assert (f"Seat uniformity: chi-square {x2:.2f}, p = {p:.3g} (H0: every seat wins 1/4; expected counts below 5: "
            "the chi-square p is only approximate)") in md


@pytest.fixture(scope="module")
def jokers_never_played(tmp_path_factory):
    """Random players that never play a joker (joker_p=0)."""
    return _etape(tmp_path_factory.mktemp("no_jokers"), 4, 200, ["random:joker_p=0"], 4, {})


def test_runs_where_nothing_happens(tmp_path, jokers_never_played):
    df = bremen_api.simulate(4, 20, ["random"], seed=1, options={"max_turns": 1}, threads=1)
    write_parquet(df, tmp_path / "b.parquet", df.attrs)
    bremen_cli.report_command(tmp_path / "b.parquet", tmp_path / "rb")
    md = (tmp_path / "rb" / "report.md").read_text()
    never = [name for name, col in (("storm", "storms"), ("chase", "chases"), ("robber move", "robber_moves"),
                                    ("extra roll", "extra_rolls")) if df[col].sum() == 0]
    assert never and f"Rules that never fired in these games: {', '.join(never)}." in md
    lo, hi = wilson(20, 20)
    assert f"20 of 20 games (100.0 % [{100 * lo:.1f}, 100.0], 95 % Wilson interval) hit the turn cap of 1 turn;" in md
    sources = next(f for _, f in md_tables(md) if "source" in f.columns)
    assert set(sources["share"]) == {""}  # no points at all: no share
    R, md, _ = jokers_never_played
    t = md_tables(md)
    row = table(t, "Anomalies").set_index("what").loc["jokers in the game never used"]
    assert [row["count"], row["out_of"], row["detail"]] == ["3", "3", "crevaison, vitamine, braquet"]
    jokers = table(t, "Use and immediate effect").set_index("joker")
    for joker in JOKER_COLUMN:
        # no uses: rate 0 with Wilson at Kish's effective size (sum y)^2 / sum y^2 = the races
        lo, hi = wilson(0, (R.N * R.P) ** 2 / (R.N * R.P**2))
        check_row(jokers.loc[joker], dict(uses=0, use_rate=0.0, use_rate_low=lo, use_rate_high=hi), joker)
        assert jokers.loc[joker, "in_last_stage_low"] == jokers.loc[joker, "in_last_stage_high"] == ""
    assert jokers.loc["crevaison", "on_self"] == "" and jokers.loc["braquet", "cards_per_use"] == ""


def test_share_of_no_joker_uses_is_blank_not_zero(jokers_never_played):
    _, md, _ = jokers_never_played
    jokers = table(md_tables(md), "Use and immediate effect").set_index("joker")
    assert jokers.loc["crevaison", "uses"] == "0"
    assert jokers.loc["crevaison", "in_last_stage"] == ""  # printed: "0"



def test_headline_of_a_rate_equal_in_every_game(tmp_path):
    """No game stalls in either variant: 'Equal in every one of the pairs', with Tango's interval
    of no discordant game, +- z^2 / (n + z^2)."""
    compare_game_variants("bremen", 4, 200, ["greedy"], 0, {}, {"harder": True}, tmp_path / "c", 200)
    md = (tmp_path / "c" / "report.md").read_text()
    capped = [bremen_api.simulate(4, 200, ["greedy"], 0, options=o, threads=1)["capped"].sum()
              for o in ({}, {"harder": True})]
    assert capped == [0, 0]
    lo, hi, p = tango(200, 0, 0)
    assert math.isnan(p) and math.isclose(hi, Z * Z / (200 + Z * Z), rel_tol=1e-6) and math.isclose(lo, -hi, rel_tol=1e-6)
    assert ("Which stalls more often (turn cap)? Equal in every one of the 200 pairs (turn-cap (stall) rate: "
            f"A 0, B 0; 95 % interval of A - B [{lo:+.4g}, {hi:+.4g}]).") in md
    row = _every_metric(md)["turn-cap (stall) rate"]
    assert printed(row["lo"], lo) and printed(row["hi"], hi) and row["p_value"] == row["p_holm"] == ""
