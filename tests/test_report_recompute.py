"""The numbers a race report prints, recomputed independently from the records.

A game designer's check of the balance report and of the comparison report:
a small run of Stap op and of a redesign (one Gesloten overweg fewer, one Wind
mee more, hands of 6) is played with the Python API, written as Parquet and
reported through the CLI's own functions (`report_command`, `compare_runs`);
each checked number is then recomputed here from the record columns of
docs/records.md with numpy / scipy formulas written in this file (nothing from
etappe.analysis computes an expected value).
"""
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from by_hand import fair_share_sides
from scipy import stats as st

import etappe.kernels
from etappe.analysis.race import simulate
from etappe.analysis.runio import write_parquet
from etappe.cli.report_cmds import compare_runs, report_command

Z = st.norm.ppf(0.975)
GAMES = 3000
SEED = 7
POLICIES = ["greedy", "random"]


# ------------------------------------------------------------ my own formulas
def wilson(k, n, z=Z):
    p = k / n
    den = 1 + z * z / n
    c = (p + z * z / (2 * n)) / den
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (0.0 if k <= 0 else c - h), (1.0 if k >= n else c + h)


def inverse_ecdf(x, q):
    """Smallest value whose ECDF reaches q (the quantile the other games' docs name)."""
    x = np.sort(np.asarray(x))
    return x[max(int(math.ceil(q * len(x) - 1e-12)), 1) - 1]


def clustered_share(num_g, den_g, z=Z):
    """sum num / sum den over games, with the per-game (ratio-estimator)
    variance, and Wilson's interval at the effective sample size
    p(1-p)/var * (z/t_{G-1})^2 (95 %, or the level whose normal point is z)."""
    num_g, den_g = np.asarray(num_g, float), np.asarray(den_g, float)
    g, n = len(num_g), den_g.sum()
    p = num_g.sum() / n
    var = g / (g - 1) * ((num_g - p * den_g) ** 2).sum() / n**2
    neff = p * (1 - p) / var * (z / st.t.isf(st.norm.sf(z), g - 1)) ** 2
    return (p, *wilson(p * neff, neff, z))


def paired(a, b, bounded=False, df=None):
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = a - b
    d = d[~np.isnan(d)]
    n, m, sd = len(d), d.mean(), d.std(ddof=1)
    if bounded and n > 1 and set(np.unique(a)) <= {0.0, 1.0} and set(np.unique(b)) <= {0.0, 1.0}:
        # a rate of 0 or 1 a game (docs/statistics.md): Tango's interval, McNemar's exact p
        n10, n01 = int((d == 1).sum()), int((d == -1).sum())
        lo, hi = tango(n, n10, n01)
        p = st.binomtest(min(n10, n01), n10 + n01, 0.5).pvalue if n10 + n01 else float("nan")
        return dict(n=n, diff=m, sd=sd, lo=lo, hi=hi, p=p)
    # Student's t on the games that differ, less one (docs/statistics.md: on common random numbers the
    # spread of d rests on them)
    df = df or max(np.count_nonzero(d) - 1, 1)
    half = st.t.ppf(0.975, df) * sd / math.sqrt(n)
    lo, hi = m - half, m + half
    if bounded:
        lo, hi = max(lo, -1.0), min(hi, 1.0)
    p = 2 * st.t.sf(abs(m) / (sd / math.sqrt(n)), df) if sd > 0 else float("nan")
    return dict(n=n, diff=m, sd=sd, lo=lo, hi=hi, p=p)


def tango(n, b, c):
    """Tango's (1998) score interval of a paired difference of proportions, b and c the discordant
    counts, each end found with scipy's brentq from the score statistic as the paper writes it."""
    from scipy.optimize import brentq

    def score(delta):
        big_b = -b - c + (2 * n - b + c) * delta
        q = (-big_b + math.sqrt(big_b**2 + 8 * n * c * delta * (1 - delta))) / (4 * n)
        return (b - c - n * delta) / math.sqrt(n * (2 * q + delta * (1 - delta)))

    d, edge = (b - c) / n, 1 - 1e-12
    lo = -1.0 if d <= -edge or score(-edge) < Z else brentq(lambda x: score(x) - Z, -edge, d, xtol=1e-14)
    hi = 1.0 if d >= edge or score(edge) > -Z else brentq(lambda x: score(x) + Z, d, edge, xtol=1e-14)
    return lo, hi


def holm(ps):
    ps = np.asarray(ps, float)
    out, run = np.empty(len(ps)), 0.0
    for rank, i in enumerate(np.argsort(ps, kind="stable")):
        run = max(run, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = run
    return out


class Records:
    """Per-game facts read from the hand rows (docs/records.md)."""

    def __init__(self, df):
        self.meta = md = df.attrs
        self.S, self.P, self.seat_side = md["sides"], md["players"], md["seat_side"]
        g = df.sort_values(["game", "hand"]).groupby("game", sort=True)
        first, last = g.first(), g.last()
        self.G = len(first)
        self.winner = first["winner_side"].to_numpy()
        self.has_w = self.winner >= 0
        self.first_seat = first["first_seat"].to_numpy()
        self.turns = first["game_turns"].to_numpy()
        self.lead_changes = g["lead_changes"].sum().to_numpy()
        self.total = np.stack([last[f"s{s}_total"].to_numpy() for s in range(self.S)], 1)
        self.maxdef = np.stack([g[f"s{s}_max_deficit"].max().to_numpy() for s in range(self.S)], 1)
        self.policy = np.stack([first[f"seat{p}_policy"].to_numpy() for p in range(self.P)], 1)
        self.cards = md["cards"]
        self.card = {(c["key"], stat): np.stack([g[f"s{s}_{c['key']}_{stat}"].sum().to_numpy() for s in range(self.S)], 1)
                     for c in self.cards for stat in ("drawn", "played", "discarded", "in_hand", "received", "victim_turns")}

    def position_wins(self):
        start = np.array(self.seat_side)[self.first_seat]
        pos = (self.winner[self.has_w] - start[self.has_w]) % self.S
        return np.bincount(pos, minlength=self.S), int(self.has_w.sum())

    def winner_deficit(self):
        w = self.has_w
        return self.maxdef[w][np.arange(w.sum()), self.winner[w]]

    def final_gap(self):
        w = self.has_w
        t, wi = self.total[w].astype(float), self.winner[w]
        best = t[np.arange(len(wi)), wi].copy()
        t[np.arange(len(wi)), wi] = -np.inf
        return best - t.max(1)

    def hazard_turns(self):
        keys = [c["key"] for c in self.cards if c["role"] in ("hazard", "limit", "setback")]
        return sum(self.card[(k, "victim_turns")] for k in keys)

    def hazard_decided(self):
        ht, out = self.hazard_turns(), np.full(self.G, np.nan)
        for i in np.where(self.has_w & (ht.sum(1) > 0))[0]:
            w = self.winner[i]
            out[i] = float((ht[i, w] < np.delete(ht[i], w)).all())
        return out

    def dead_share(self):
        keys = [c["key"] for c in self.cards]
        drawn = sum(self.card[(k, "drawn")] for k in keys).sum(1)
        dead = sum(self.card[(k, "discarded")] + self.card[(k, "in_hand")] for k in keys).sum(1)
        return dead / drawn


# ------------------------------------------------------------ reading reports
def md_tables(text):
    """[(caption, DataFrame of strings)] for every table, its caption the **bold** line above it."""
    out, cap, lines, i = [], None, text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^\*\*(.+)\*\*$", lines[i].strip())
        if m:
            cap = m.group(1)
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|(---\|)+$", lines[i + 1]):
            head = [c.strip() for c in lines[i].strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
            out.append((cap, pd.DataFrame(rows, columns=head)))
            cap = None
            continue
        i += 1
    return out


def table(tables, prefix):
    return next(f for cap, f in tables if cap and cap.startswith(prefix))


class _HtmlTables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self._t, self._cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._t = []
        elif tag == "tr" and self._t is not None:
            self._t.append([])
        elif tag in ("td", "th") and self._t is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "table":
            self.tables.append(self._t)
            self._t = None
        elif tag in ("td", "th") and self._t is not None:
            self._t[-1].append(self._cell.strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def printed(cell, value):
    """The report prints floats as %.4g: the printed text equals my value so printed."""
    if isinstance(value, (int, np.integer)):
        return cell == str(int(value))
    return cell == f"{float(value):.4g}"


# ------------------------------------------------------------ the runs
def _redesign(path: Path) -> Path:
    text = (Path(etappe.kernels.__file__).parent / "designs" / "stapop.toml").read_text()
    text = text.replace('name = "stapop"', 'name = "mystapop"').replace("hand_size = 5", "hand_size = 6")
    text = re.sub(r'(key = "crossing"\n(?:.*\n)*?count = )3', r"\g<1>2", text, count=1)
    text = re.sub(r'(key = "tailwind"\n(?:.*\n)*?count = )5', r"\g<1>6", text, count=1)
    assert text.count("count = 2\nremedy = \"barriers_open\"") == 1 and "hand_size = 6" in text
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("recompute")
    mine = _redesign(tmp / "mine.toml")
    out = {}
    for tag, design in (("a", "stapop"), ("b", str(mine))):
        df = simulate(design, players=4, games=GAMES, policies=POLICIES, seed=SEED, seating="rotate", threads=1)
        write_parquet(df, tmp / f"{tag}.parquet", df.attrs)
        out[tag] = Records(df)
    df = simulate("millebornes", players=4, games=GAMES, policies=POLICIES, seed=SEED, seating="rotate", threads=1)
    write_parquet(df, tmp / "mb.parquet", df.attrs)
    out["mb"] = Records(df)
    report_command(tmp / "a.parquet", tmp / "ra")
    compare_runs(tmp / "a.parquet", tmp / "b.parquet", tmp / "rab")
    compare_runs(tmp / "a.parquet", tmp / "mb.parquet", tmp / "ramb")
    out["ramb"] = (tmp / "ramb" / "report.md").read_text()
    out["ra"] = (tmp / "ra" / "report.md").read_text()
    out["rab"] = (tmp / "rab" / "report.md").read_text()
    out["ra_html"] = (tmp / "ra" / "report.html").read_text()
    out["rab_html"] = (tmp / "rab" / "report.html").read_text()
    return out


# ------------------------------------------------------------ balance report
def test_seat_and_position_win_rates_and_chi_square(runs):
    R, t = runs["a"], md_tables(runs["ra"])
    n = int(R.has_w.sum())
    seats = table(t, "Win rate per seat")
    for _, row in seats.iterrows():
        wins = int((R.winner[R.has_w] == R.seat_side[int(row["seat"])]).sum())
        lo, hi = wilson(wins, n)
        assert row["wins"] == str(wins) and row["n"] == str(n)
        assert printed(row["win rate"], wins / n) and printed(row["95 % low"], lo) and printed(row["95 % high"], hi)
    counts, n = R.position_wins()
    pos = table(t, "Win rate by turn-order position")
    for _, row in pos.iterrows():
        k = counts[int(row["position"]) - 1]
        assert row["wins"] == str(k)
        assert all(printed(c, v) for c, v in zip(row[["win rate", "95 % low", "95 % high"]], (k / n, *wilson(k, n))))
    e = n / R.S
    chi2 = ((counts - e) ** 2 / e).sum()
    row = table(t, "Seat uniformity").set_index("test").loc["uniform wins by turn-order position"]
    assert printed(row["chi2"], chi2) and printed(row["p_value"], st.chi2.sf(chi2, R.S - 1)) and row["df"] == str(R.S - 1)
    lo, hi = wilson(counts[0], n)
    assert f"wins {100 * counts[0] / n:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] of the {n} games with a winner" in runs["ra"]


def test_length_and_tension(runs):
    R, t = runs["a"], md_tables(runs["ra"])
    row = table(t, "Length").set_index("metric").loc["turns per game"]
    assert row["median"] == str(inverse_ecdf(R.turns, 0.5)) and row["p95"] == str(inverse_ecdf(R.turns, 0.95))
    assert printed(row["mean"], R.turns.mean()) and printed(row["sd"], R.turns.std(ddof=1))
    low, high = st.t.interval(0.95, len(R.turns) - 1, loc=R.turns.mean(), scale=st.sem(R.turns))
    assert printed(row["ci_low"], low) and printed(row["ci_high"], high)
    assert (f"A game lasts {inverse_ecdf(R.turns, 0.5)} turns (median; 95th percentile "
            f"{inverse_ecdf(R.turns, 0.95)}; mean {R.turns.mean():.1f}, 95 % interval [{low:.1f}, {high:.1f}])"
            ) in runs["ra"]
    tension = table(t, "Tension").set_index("metric")
    for label, x in (("lead changes per game", R.lead_changes), ("winner's largest deficit (km)", R.winner_deficit()),
                     ("final gap (winner minus runner-up, total)", R.final_gap())):
        row = tension.loc[label]
        assert row["n"] == str(len(x)) and printed(row["mean"], x.mean()) and printed(row["sd"], x.std(ddof=1))
        low, high = st.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=st.sem(x))
        assert printed(row["ci_low"], low) and printed(row["ci_high"], high)
        assert printed(row["median"], inverse_ecdf(x, 0.5)) and printed(row["p95"], inverse_ecdf(x, 0.95))


def test_card_balance(runs):
    R, t = runs["a"], md_tables(runs["ra"])
    byname = {c["name"]: c["key"] for c in R.cards}
    balance = table(t, "Card balance: drawn")
    for _, row in balance.iterrows():
        key = byname[row["name"]]
        d, p, x, h = (R.card[(key, s)] for s in ("drawn", "played", "discarded", "in_hand"))
        assert [row[c] for c in ("drawn", "played", "discarded", "in_hand")] == [str(int(v.sum())) for v in (d, p, x, h)]
        assert printed(row["played_per_game"], p.sum() / R.G) and printed(row["dead_share"], (x.sum() + h.sum()) / d.sum())
        share, lo, hi = clustered_share(p.sum(1), d.sum(1))
        assert printed(row["played_share"], share) and printed(row["played_share_low"], lo)
        assert printed(row["played_share_high"], hi)
        w = R.has_w
        by_winner = p[w][np.arange(w.sum()), R.winner[w]]
        assert all(printed(c, v) for c, v in zip(row[["winner_share", "winner_share_low", "winner_share_high"]],
                                                  clustered_share(by_winner, p[w].sum(1))))
    lift = table(t, "Win rate of a side when it played").set_index("name")
    won = np.zeros((int(R.has_w.sum()), R.S), bool)
    won[np.arange(len(won)), R.winner[R.has_w]] = True
    for name, key in byname.items():
        hit = R.card[(key, "played")][R.has_w] > 0
        row = lift.loc[name]
        assert row["n_played"] == str(int(hit.sum())) and printed(row["win_when_played"], won[hit].mean())
        if (~hit).any():
            assert printed(row["win_lift"], won[hit].mean() - won[~hit].mean())
    attacks = table(t, "Attacks").set_index("name")
    for name, row in attacks.iterrows():
        key = byname[name]
        vt, rc = R.card[(key, "victim_turns")].sum(), R.card[(key, "received")].sum()
        assert row["victim_turns"] == str(int(vt)) and printed(row["turns_lost_per_hazard"], vt / rc)
        # the victims' win rate: game x side units hit at least once, in the games with a winner
        hit = R.card[(key, "received")][R.has_w] > 0
        units = hit.sum(1)
        assert row["n_victims"] == str(int(units.sum()))
        if units.sum():
            rate_lo_hi = clustered_share((hit & won).sum(1), units)
            assert all(printed(row[c], v) for c, v in zip(["victim_win_rate", "victim_win_low", "victim_win_high"],
                                                          rate_lo_hi))
    decided = R.hazard_decided()
    decided = decided[~np.isnan(decided)]
    lo, hi = wilson(decided.sum(), len(decided))
    assert (f"In {100 * decided.mean():.1f} % [{100 * lo:.1f}, {100 * hi:.1f}] of the {len(decided)} games with a "
            "winner and some turns lost to hazards") in runs["ra"]


# ------------------------------------------------------------ comparison report
def test_paired_differences_holm_and_headline(runs):
    A, B, t = runs["a"], runs["b"], md_tables(runs["rab"])
    every = table(t, "Every metric").set_index("metric")
    start_a, start_b = (np.array(R.seat_side)[R.first_seat] for R in (A, B))
    fp_a = np.where(A.has_w, (A.winner == start_a).astype(float), np.nan)
    fp_b = np.where(B.has_w, (B.winner == start_b).astype(float), np.nan)
    wd_a, wd_b = np.full(A.G, np.nan), np.full(B.G, np.nan)
    wd_a[A.has_w], wd_b[B.has_w] = A.winner_deficit(), B.winner_deficit()
    fg_a, fg_b = np.full(A.G, np.nan), np.full(B.G, np.nan)
    fg_a[A.has_w], fg_b[B.has_w] = A.final_gap(), B.final_gap()
    metrics = {
        "turns per game": (A.turns, B.turns, False),
        "first-player win rate": (fp_a, fp_b, True),
        "lead changes per game": (A.lead_changes, B.lead_changes, False),
        "winner's largest deficit": (wd_a, wd_b, False),
        "final gap (winner minus runner-up)": (fg_a, fg_b, False),
        "turns lost to hazards per game": (A.hazard_turns().sum(1), B.hazard_turns().sum(1), False),
        "won by the side least hit by hazards": (A.hazard_decided(), B.hazard_decided(), True),
        "share of drawn cards wasted (discarded or held)": (A.dead_share(), B.dead_share(), True),
    }
    for s in range(A.S):
        metrics[f"win rate of seat {s} (all games: one without a winner counts as a loss)"] = (
            (A.winner == s).astype(float), (B.winner == s).astype(float), True)
    mine = {}
    for label, (a, b, bounded) in metrics.items():
        ok = ~np.isnan(a) & ~np.isnan(b)
        mine[label] = r = paired(a[ok], b[ok], bounded)
        row = every.loc[label]
        assert row["n"] == str(r["n"])
        for col, key in (("diff", "diff"), ("sd", "sd"), ("ci_low", "lo"), ("ci_high", "hi"), ("p_value", "p")):
            assert printed(row[col], r[key]), (label, col, row[col], r[key])
    # the first player's distance from the fair share: |mean - 1/sides|, A - B; with each mean's side of the
    # fair share its per-game difference is a sign-flipped first-player difference. A side is known only where
    # the mean's own t interval leaves the fair share out; else both are tried, and the row is the union of
    # the intervals and the largest p (docs/statistics.md)
    fair = 1 / A.S
    ok = ~np.isnan(fp_a) & ~np.isnan(fp_b)
    # (on n - 1 degrees of freedom: the kept sums do not say in how many games g is 0)
    tried = [paired(sa * (fp_a[ok] - fair), sb * (fp_b[ok] - fair), True, df=ok.sum() - 1)
             for sa in fair_share_sides(fp_a[ok], fair) for sb in fair_share_sides(fp_b[ok], fair)]
    gap = {**tried[0], "lo": min(t["lo"] for t in tried), "hi": max(t["hi"] for t in tried),
           "p": max(t["p"] for t in tried)}
    mine["first player's distance from the fair share"] = gap
    row = every.loc["first player's distance from the fair share"]
    assert printed(row["diff"], abs(fp_a[ok].mean() - fair) - abs(fp_b[ok].mean() - fair))
    assert printed(row["ci_low"], gap["lo"]) and printed(row["ci_high"], gap["hi"])
    assert printed(row["p_value"], gap["p"])
    # Holm over every metric that has a p-value (the two rates that never vary here have none)
    labels = [k for k in mine if not np.isnan(mine[k]["p"])]
    assert sorted(labels) == sorted(every.index[every["p_value"] != ""])
    for label, adjusted in zip(labels, holm([mine[k]["p"] for k in labels])):
        assert printed(every.loc[label, "p_holm"], adjusted), label
        assert every.loc[label, "reject"] == str(bool(adjusted < 0.05))
    differs = table(t, "What differs between the designs").set_index("item")
    assert list(differs.loc["hand size"]) == ["5", "6"]
    assert sorted(differs.index) == sorted(["hand size", "card Gesloten overweg (closed level crossing) (crossing)",
                                            "card Wind mee (tailwind) (tailwind)"])
    answers = table(t, "Answers with their evidence").set_index("question")
    longer = answers.loc["Which has longer games?"]
    r = mine["turns per game"]
    # the redesign kept Stap op's title: the two are told apart by their design keys
    assert longer["answer"] == ("Stap op (stapop)" if r["diff"] > 0 else "Stap op (mystapop)")
    assert f"[{r['lo']:.4g}, {r['hi']:.4g}]" in longer["evidence"]


def two_run_share_difference(A, keys_a, B, keys_b):
    """The played share of cards `keys_a` in run A minus that of `keys_b` in B (docs/statistics.md, two
    runs' card shares): each share clustered by game, the Newcombe (MOVER, rho 0) interval of the two
    Wilson intervals, and the p at which that interval just reaches 0 (its level found with brentq)."""
    from scipy.optimize import brentq
    counts = [(sum(R.card[(k, "played")].sum(1) for k in keys).astype(float),
               sum(R.card[(k, "drawn")].sum(1) for k in keys).astype(float)) for R, keys in ((A, keys_a), (B, keys_b))]

    def mover(z):
        (ra, la, ua), (rb, lb, ub) = (clustered_share(played, drawn, z) for played, drawn in counts)
        return ra - rb, ra - rb - math.hypot(ra - la, ub - rb), ra - rb + math.hypot(ua - ra, rb - lb)

    d, lo, hi = mover(Z)
    near = 1 if d > 0 else 2  # the end of the interval on 0's side
    if d == 0:
        p = 1.0
    else:  # 0 where the interval leaves 0 out even at z = 37.5, the limit of a float's p
        p = 2 * st.norm.sf(brentq(lambda z: mover(z)[near], 1e-9, 37.5)) if mover(37.5)[near] * d < 0 else 0.0
    (da, db) = (drawn.sum() for _, drawn in counts)
    return dict(a=counts[0][0].sum() / da, b=counts[1][0].sum() / db, n_a=da, n_b=db, diff=d, lo=lo, hi=hi, p=p)


@pytest.mark.parametrize("other, by", [("b", "card"), ("mb", "role")])
def test_unpaired_card_shares_of_a_comparison(runs, other, by):
    # Stap op against its redesign: the cards both decks have; against Mille Bornes, whose card keys are
    # all others, the cards pooled by role
    A, B = runs["a"], runs[other]
    t = md_tables(runs["rab" if other == "b" else "ramb"])
    printed_rows = table(t, "Played and dead shares (unpaired)")
    if by == "card":
        groups = {c["key"]: ([c["key"]], [c["key"]]) for c in A.cards if c["key"] in {d["key"] for d in B.cards}}
    else:
        roles_b = {d["role"] for d in B.cards}
        groups = {r: ([c["key"] for c in A.cards if c["role"] == r], [d["key"] for d in B.cards if d["role"] == r])
                  for r in dict.fromkeys(c["role"] for c in A.cards) if r in roles_b}
    assert len(groups) >= 4 and sorted(set(printed_rows[by])) == sorted(groups)
    mine = {g: two_run_share_difference(A, ka, B, kb) for g, (ka, kb) in groups.items()}
    adjusted = dict(zip(mine, holm([m["p"] for m in mine.values()])))
    name_a, _, name_b = printed_rows.columns[list(printed_rows.columns).index("rate") + 1:][:3]
    for _, row in printed_rows.iterrows():
        m, dead = mine[row[by]], row["rate"] == "dead share"
        sign = -1 if dead else 1
        assert row["rate"] in ("played share", "dead share")
        assert printed(row[name_a], 1 - m["a"] if dead else m["a"]) and printed(row[name_b], 1 - m["b"] if dead else m["b"])
        assert row["n_a"] == str(int(m["n_a"])) and row["n_b"] == str(int(m["n_b"]))
        low, high = (-m["hi"], -m["lo"]) if dead else (m["lo"], m["hi"])
        assert printed(row["diff"], sign * m["diff"]) and printed(row["ci_low"], low) and printed(row["ci_high"], high)
        assert printed(row["p_value"], m["p"]) and printed(row["p_holm"], adjusted[row[by]])


def test_html_twin_carries_the_markdown_numbers(runs):
    for name in ("ra", "rab"):
        parser = _HtmlTables()
        parser.feed(runs[f"{name}_html"])
        md_all, lines, i = [], runs[name].splitlines(), 0
        while i < len(lines):  # every table, captioned or not, in order
            if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|(---\|)+$", lines[i + 1]):
                rows, i = [[c.strip().replace("\\|", "|") for c in lines[i].strip("|").split("|")]], i + 2
                while i < len(lines) and lines[i].startswith("|"):
                    rows.append([c.strip().replace("\\|", "|") for c in lines[i].strip("|").split("|")])
                    i += 1
                md_all.append(rows)
                continue
            i += 1
        assert md_all and len(md_all) == len(parser.tables)
        for mine, html_rows in zip(md_all, parser.tables):
            assert mine == html_rows


# ------------------------------------------------------------ discrepancies found
def test_policy_win_rate_interval_counts_one_game_once(runs):
    R, t = runs["a"], md_tables(runs["ra"])
    row = table(t, "Win rate per policy").set_index("policy").loc["greedy"]
    greedy = R.meta["policy_names"].index("greedy")
    plays = R.policy[R.has_w] == greedy  # one seat per side here
    won = plays[np.arange(len(plays)), R.winner[R.has_w]]
    games_won = int(won.sum())
    # greedy holds two sides of every game and wins on at most one: the games are the trials
    lo, hi = (v / 2 for v in wilson(games_won, len(won)))
    assert printed(row["95 % low"], lo) and printed(row["95 % high"], hi), (row, lo, hi)


def test_share_of_trip_interval_holds_its_estimate(tmp_path):
    recs = {}
    for design in ("stapop", "millebornes"):
        df = simulate(design, players=2, games=3, seed=8, threads=1)
        write_parquet(df, tmp_path / f"{design}.parquet", df.attrs)
        recs[design] = Records(df)
    compare_runs(tmp_path / "stapop.parquet", tmp_path / "millebornes.parquet", tmp_path / "r")
    row = table(md_tables((tmp_path / "r" / "report.md").read_text()), "Every metric").set_index("metric") \
        .loc["winner's largest deficit (share of the trip)"]
    a, b = (recs[d].winner_deficit() / recs[d].meta["target"] for d in ("stapop", "millebornes"))
    assert printed(row["diff"], (a - b).mean())  # the estimate itself is right
    assert float(row["ci_low"]) <= float(row["diff"]) <= float(row["ci_high"])
