"""Tape l'étape over everything its rule options, player counts and policies
can say (the sister of test_generated_designs.py): a strategy writes runs
valid by construction from docs/etape.md alone (every documented option
value, 3-6 players, a policy mix per seat with parameters across their
documented ranges), or one of the combinations the docs refuse; each must be
accepted (or refused with the documented message), play to the end, and
keep the records' accounting promised by docs/etape.md "Records" and the
rules page. test_etape_sim.check_invariants checks the default rules; this
audit takes every option into account (free columns, the turn cap, seconds
and bonuses, jokers in the game and withheld, the Crevaison options)."""
import re

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from etappe.analysis import etape as E  # noqa: E402
from etappe.analysis.variants import compare_variants  # noqa: E402
from etappe.reports.etape import build_report  # noqa: E402
from etappe.reports.variant_report import build_variant_report  # noqa: E402

from test_etape_sim import PROFILES, VALUES, bits, side_points, stage_places  # noqa: E402
from test_generated_designs import no_number_missing  # noqa: E402

JOKERS = ("crevaison", "vitamine", "braquet")
JOKER_FIELDS = {"crevaison": "crev", "vitamine": "vita", "braquet": "braq"}
SWITCHES = ("pick_after_deal", "sprint_in_balai", "blocked_winner", "crevaison_stack", "crevaison_anytime",
            "crevaison_carry", "self_crevaison_in_balai", "rotate_seats")
CHOICES = {"mode": ("sprint", "endurance"), "column_step": ("one", "free"), "extreme_start": ("in_play", "dealt"),
           "seat_order": ("from_picker", "from_seat_0"), "gc_tie": ("shared", "stage_places"),
           "joker_refresh": ("race", "stage"), "clm_direction": ("both", "up")}
FALSE = ("false", "off", "0")  # a switch set off, however written
# docs/etape.md: options that rule the Crevaison joker, refused off their defaults without it in the game
CREVAISON_OPTIONS = ("crevaison_stack", "crevaison_anytime", "crevaison_carry", "self_crevaison_in_balai")
SECONDS = ("low_card_seconds", "high_card_seconds", "stage_win_bonus", "balai_last_bonus", "balai_second_bonus")
# docs/etape.md, Policies: the parameters of each family and their valid values
PROBABILITY = st.floats(0, 1)
WEIGHT = st.floats(0, 10) | st.sampled_from([0.0, 1e20, 1e308]) | st.floats(0, 1e308)
HEURISTIC = {"value": WEIGHT, "own": WEIGHT, "block": WEIGHT, "crev_cards": st.integers(0, 8),
             "vita_cards": st.integers(0, 8), "braq_min": st.integers(1, 8), "pick": st.sampled_from([0, 1]),
             "balai_w": WEIGHT}
FAMILIES = {"random": {"joker_p": PROBABILITY, "more_p": PROBABILITY},
            "heuristic": HEURISTIC, "high": HEURISTIC, "blocker": HEURISTIC, "connector": HEURISTIC,
            # few playouts: a look-ahead seat plays a whole stage per playout
            "lookahead": {**HEURISTIC, "playouts": st.integers(1, 12), "horizon": st.integers(0, 8),
                          "confidence": WEIGHT}}


def _switch(value: bool):
    return st.sampled_from([value, str(value).lower(), "on" if value else "off", "1" if value else "0"])


@st.composite
def policy_specs(draw) -> str:
    family = draw(st.sampled_from([f for f in FAMILIES if f != "lookahead"] * 3 + ["lookahead"]))
    params = {k: draw(v) for k, v in FAMILIES[family].items() if draw(st.booleans())}
    if family == "lookahead":  # its cost grows with the playouts: keep them few
        params.setdefault("playouts", draw(st.integers(1, 12)))
    return family + (":" + ",".join(f"{k}={v!r}" for k, v in params.items()) if params else "")


@st.composite
def etape_runs(draw):
    """(players, policies, options, refusal): a run valid by docs/etape.md,
    or, with refusal (the message the docs give), one of the combinations
    the docs refuse."""
    players = draw(st.sampled_from(E.PLAYERS))
    slots = draw(st.sampled_from([k for k in range(1, players + 1) if players % k == 0]))
    policies = [draw(policy_specs()) for _ in range(slots)]
    if sum(p.startswith("lookahead") for p in policies) > 1:  # one look-ahead slot is enough, and cheaper
        policies = [p if not p.startswith("lookahead") or i == 0 else "random" for i, p in enumerate(policies)]
    options = {}
    for name, values in CHOICES.items():
        if draw(st.booleans()):
            options[name] = draw(st.sampled_from(values))
    for name in SWITCHES:
        if draw(st.booleans()):
            options[name] = draw(st.booleans().flatmap(_switch))
    if options.get("mode") == "endurance" and draw(st.booleans()):
        options["endurance_stages"] = draw(st.integers(1, 5) | st.sampled_from(["1", "5"]))
    if draw(st.booleans()):  # small caps cut stages off, large ones never bind
        options["turn_cap"] = draw(st.integers(1, 60) | st.sampled_from([100_000, "100000"]))
    if draw(st.booleans()):
        options["jokers"] = ",".join(draw(st.lists(st.sampled_from(JOKERS), unique=True)))
    if draw(st.booleans()):
        options["withhold_seat"] = draw(st.integers(0, players - 1))
        options["withhold_jokers"] = ",".join(draw(st.lists(st.sampled_from(JOKERS), unique=True, min_size=1)))
    for name in SECONDS:
        if draw(st.booleans()):
            options[name] = draw(st.integers(0, 10_000))
    refusal = None
    match draw(st.sampled_from([None] * 12 + ["endurance_stages", "withhold", "seat"])):
        case "endurance_stages":  # docs: any other value than 5 with mode=sprint is refused
            k = draw(st.integers(1, 4))
            options = {**options, "mode": draw(st.sampled_from(["sprint", None])), "endurance_stages": k}
            options = {name: v for name, v in options.items() if v is not None}
            refusal = f"endurance_stages={k} applies to mode=endurance only"
        case "withhold":  # docs: withhold_seat and withhold_jokers given together or not at all
            options.pop("withhold_seat", None), options.pop("withhold_jokers", None)
            if draw(st.booleans()):
                options["withhold_seat"] = draw(st.integers(0, players - 1))
            else:
                options["withhold_jokers"] = draw(st.sampled_from(JOKERS))
            refusal = "withhold_seat and withhold_jokers go together"
        case "seat" if players < 6:  # docs: withhold_seat is a seat of the table
            options.pop("jokers", None)  # (the options are read before the seat: keep them valid)
            options["withhold_seat"] = draw(st.integers(players, 5))
            options["withhold_jokers"] = draw(st.sampled_from(JOKERS))
            refusal = f"withhold_seat must be -1 or a seat 0-{players - 1}"
    crevaison_rules = [name for name in CREVAISON_OPTIONS if str(options.get(name, True)).lower() in FALSE]
    if refusal is None and "crevaison" not in options.get("jokers", "crevaison") and crevaison_rules:
        # docs: the Crevaison options mean nothing without the joker in the game (option jokers)
        refusal = ", ".join(f"{name}=false" for name in crevaison_rules) + " rule"
    if refusal is None and options.get("jokers") == "" and options.get("joker_refresh") == "stage":
        refusal = "joker_refresh=stage rules the jokers, and none is in the game"  # docs: as the Crevaison options
    return players, policies, options, refusal


def _secs(cards, options) -> int:
    return sum(options["low_card_seconds"] if c % 12 < 6 else options["high_card_seconds"] for c in cards)


def _legal(row, colour, vmin, vmax, free, up_only) -> set[int]:
    """Cards of `colour` that may be laid on its column (the rules page; with
    column_step=free any value beyond an end, with clm_direction=up
    Contre-la-montre upwards only, docs/etape.md)."""
    profile = row["profile"]
    if row[f"coln_{colour}"] == 0:
        values = {row["start"]}
    else:
        hi, lo = row[f"hi_{colour}"], row[f"lo_{colour}"]
        values = set()
        if profile != "descente":
            values |= set(range(hi + 1, (vmax if free else min(hi + 1, vmax)) + 1))
        if profile != "montagne" and not (profile == "contre_la_montre" and up_only):
            values |= set(range(vmin if free else max(lo - 1, vmin), lo))
    return {colour * 12 + v - 1 for v in values}


def check_stage(row, n, options):
    """One stage record against the rules page and docs/etape.md, "Records"."""
    vmin, vmax = VALUES[n]
    free = options["column_step"] == "free"
    profile = row["profile"]
    assert profile in PROFILES
    dealt = [bits(row[f"dealt_{s}"]) for s in range(n)]
    left = [bits(row[f"hand_{s}"]) for s in range(n)]
    every = set().union(*dealt)
    # The deal: 8 cards each, distinct, all in play; Vitamine swaps one for one.
    assert all(len(d) == 8 for d in dealt) and len(every) == 8 * n
    assert every <= {c * 12 + v - 1 for c in range(4) for v in range(vmin, vmax + 1)}
    assert set().union(*left) <= every
    laid = every - set().union(*left)
    for s in range(n):
        assert row[f"laid_{s}"] + len(left[s]) == 8
        assert row[f"cards_{s}"] == len(left[s]) and row[f"secs_{s}"] == _secs(left[s], options)
    # Start values and columns: what was laid is on the columns, from the start value, the profile's way.
    dealt_values = {c % 12 + 1 for c in every}
    start = row["start"]
    if profile == "montagne":
        assert start == (min(dealt_values) if options["extreme_start"] == "dealt" else vmin)
    elif profile == "descente":
        assert start == (max(dealt_values) if options["extreme_start"] == "dealt" else vmax)
    elif profile == "contre_la_montre":
        assert vmin <= start <= vmax
    else:
        assert start == 6
    for colour in range(4):
        values = sorted(c % 12 + 1 for c in laid if c // 12 == colour)
        assert row[f"coln_{colour}"] == len(values)
        if not values:
            continue
        lo, hi = row[f"lo_{colour}"], row[f"hi_{colour}"]
        assert (values[0], values[-1]) == (lo, hi) and start in values
        assert profile != "montagne" or lo == start
        assert profile != "descente" or hi == start
        assert profile != "contre_la_montre" or options["clm_direction"] == "both" or lo == start
        assert free or values == list(range(lo, hi + 1))
    # How the stage ended.
    held = set().union(*left)
    finished = sorted((row[f"finish_{s}"], s) for s in range(n) if row[f"finish_{s}"])
    assert {s for _, s in finished} == {s for s in range(n) if not left[s]}
    assert [k for k, _ in finished] == list(range(1, len(finished) + 1))
    assert row["turns"] <= options["turn_cap"]
    assert not (row["blocked"] and row["capped"])
    if row["capped"]:
        assert row["turns"] == options["turn_cap"] and held
    if row["blocked"]:
        up_only = options["clm_direction"] == "up"
        legal = set().union(*(_legal(row, c, vmin, vmax, free, up_only) for c in range(4)))
        assert held and not held & legal
    if profile == "voiture_balai":
        assert row["capped"] or row["blocked"] or not held
        assert row["winner"] == (finished[-1][1] if finished else -1)  # the last to empty
    else:
        assert len(finished) <= 1
        if not (row["blocked"] or row["capped"]):
            assert finished and row["winner"] == finished[0][1]
        elif row["blocked"] and options["blocked_winner"]:
            first = row["picker"] if options["seat_order"] == "from_picker" else 0
            best = min(range(n), key=lambda s: (_secs(left[s], options), len(left[s]), (s - first) % n))
            assert row["winner"] == best
        else:
            assert row["winner"] == -1
    # Stage times: seconds of the cards left, less the bonuses.
    expect = [_secs(h, options) for h in left]
    if profile == "voiture_balai":
        for (_, s), bonus in zip(finished[::-1], (options["balai_last_bonus"], options["balai_second_bonus"])):
            expect[s] -= bonus
    elif row["winner"] >= 0:
        expect[row["winner"]] -= options["stage_win_bonus"]
    assert [row[f"time_{s}"] for s in range(n)] == expect
    secs_left, cards_left = [_secs(h, options) for h in left], [len(h) for h in left]
    assert [row[f"side_{s}"] for s in range(n)] == side_points(profile, row["winner"], row["picker"], secs_left,
                                                               cards_left, options["seat_order"])
    assert [row[f"place_{s}"] for s in range(n)] == stage_places(row["winner"], secs_left, cards_left,
                                                                 [row[f"finish_{s}"] for s in range(n)])
    # Turns: each one a skip, a pass or a turn that lays; one card a turn unless Braquet,
    # Contre-la-montre or the two-card sprint (Plaine, and Voiture balai under sprint_in_balai).
    skips = sum(row[f"skipped_{s}"] for s in range(n))
    passes = sum(row[f"passes_{s}"] for s in range(n))
    cards = sum(row[f"laid_{s}"] for s in range(n))
    assert passes + skips + (cards > 0) <= row["turns"] <= passes + skips + cards
    one_a_turn = profile in ("montagne", "descente") or (profile == "voiture_balai"
                                                         and not options["sprint_in_balai"])
    if one_a_turn and all(row[f"braq_{s}"] < 0 for s in range(n)):
        assert row["turns"] == passes + skips + cards
    # Jokers: only those the seat holds, on a legal target.
    for s in range(n):
        assert row[f"crev_{s}"] in range(-1, n) and row[f"vita_{s}"] in range(-1, n)
        assert row[f"vita_{s}"] != s
        assert row[f"braq_{s}"] == -1 or 1 <= row[f"braq_{s}"] <= row[f"laid_{s}"]
        v = row[f"vita_{s}"]
        assert v < 0 or row[f"vita_{v}"] != s  # the target may not answer in the same stage
        if profile == "voiture_balai" and not options["self_crevaison_in_balai"]:
            assert row[f"crev_{s}"] != s


def check_run(races, stages, players, policies, options):
    """The records of a run against docs/etape.md, whatever its options."""
    n = players
    full = races.attrs["options"]
    assert set(full) == set(E.OPTIONS)
    k = full["endurance_stages"] if full["mode"] == "endurance" else 1
    assert stages.attrs["stages_per_race"] == n * k and len(stages) == len(races) * n * k
    assert len(races.attrs["policies"]) == n
    assert [p.split(":")[0] for p in races.attrs["policies"]] == [p.split(":")[0] for p in policies] * (
        n // len(policies))
    holders = {j: set(range(n)) if j in full["jokers"].split(",") else set() for j in JOKERS}
    for j in filter(None, full["withhold_jokers"].split(",")):
        holders[j].discard(full["withhold_seat"])
    for race, group in zip(races.to_dict("records"), (g for _, g in stages.groupby("race", sort=True))):
        rows = group.sort_values("stage").to_dict("records")
        assert [r["stage"] for r in rows] == list(range(n * k))
        assert [r["picker"] for r in rows] == [g % n for g in range(n * k)]  # the pick rotates from seat 0
        for s in range(n):
            picked = [r["profile"] for r in rows if r["picker"] == s]
            assert len(set(picked)) == len(picked) == k  # each stage card once
            slot = (s + race["race"]) % n if full["rotate_seats"] else s
            assert race[f"slot_{s}"] == slot and all(r[f"slot_{s}"] == slot for r in rows)
            for joker, field in JOKER_FIELDS.items():  # once a race, or once a stage under joker_refresh=stage
                used = [r[f"{field}_{s}"] >= 0 for r in rows]
                per_stage = full["joker_refresh"] == "stage"
                assert (max(used) if per_stage else sum(used)) <= (s in holders[joker]), (joker, s)
            # a skip is served only for a Crevaison aimed earlier (this stage, or an earlier one under carry)
            aimed = np.array([sum(r[f"crev_{u}"] == s for u in range(n)) for r in rows])
            skipped = np.array([r[f"skipped_{s}"] for r in rows])
            if full["crevaison_carry"]:
                assert (np.cumsum(skipped) <= np.cumsum(aimed)).all()
            else:
                assert (skipped <= aimed).all()
        for r in rows:
            check_stage(r, n, full)
        # The general classification: times add up, lowest wins, ties per gc_tie.
        times = [sum(r[f"time_{s}"] for r in rows) for s in range(n)]
        for s in range(n):
            assert [r[f"cum_{s}"] for r in rows] == list(np.cumsum([r[f"time_{s}"] for r in rows]))
            assert race[f"time_{s}"] == times[s]
            assert race[f"mountain_{s}"] == sum(r[f"side_{s}"] for r in rows if r["profile"] == "montagne")
            assert race[f"sprint_{s}"] == sum(r[f"side_{s}"] for r in rows if r["profile"] == "plaine")
        key = [(times[s],) for s in range(n)]
        if full["gc_tie"] == "stage_places":
            key = [(times[s], sum(r[f"place_{s}"] for r in rows), rows[-1][f"place_{s}"]) for s in range(n)]
        ranks = [1 + sum(key[o] < key[s] for o in range(n)) for s in range(n)]
        assert [race[f"rank_{s}"] for s in range(n)] == ranks
        assert race["winner"] == (ranks.index(1) if ranks.count(1) == 1 else -1)
        assert race["capped_stages"] == sum(r["capped"] for r in rows)
        assert race["blocked_stages"] == sum(r["blocked"] for r in rows)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=etape_runs(), seed=st.integers(0, 2**32 - 1))
def test_any_rule_options_players_and_policies_play_cleanly(run, seed):
    players, policies, options, refusal = run
    if refusal:
        with pytest.raises(ValueError, match=re.escape(refusal)):
            E.simulate(players=players, races=1, policies=policies, seed=seed, options=options, threads=1)
        return
    races, stages = E.simulate(players=players, races=3, policies=policies, seed=seed, options=options, threads=1)
    check_run(races, stages, players, policies, options)
    # docs/etape.md, Records: df.attrs holds everything needed to replay the races
    meta = races.attrs
    again = E.simulate(players=meta["players"], races=meta["races"], policies=meta["policies"], seed=meta["seed"],
                       options=meta["options"], threads=1)
    for played, replayed in zip((races, stages), again):
        pd.testing.assert_frame_equal(played, replayed)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=etape_runs().filter(lambda run: run[3] is None and not any(p.startswith("lookahead") for p in run[1])),
       seed=st.integers(0, 2**32 - 1), flip=st.sampled_from(["mode", "column_step", "gc_tie", "blocked_winner"]))
def test_any_run_reports_and_compares_with_a_variant(run, seed, flip):
    players, policies, options, _ = run
    # Without the turn cap and the seconds: a cap of a few turns or cards worth 0 s leave most races
    # level, and a metric of sole winners measured on one race has no interval.
    options = {k: v for k, v in options.items() if k not in ("turn_cap", *SECONDS)}
    races, stages = E.simulate(players=players, races=30, policies=policies, seed=seed, options=options, threads=1)
    no_number_missing(build_report(races, stages).to_markdown())
    # variant B changes one option of A to another documented value
    value = races.attrs["options"][flip]
    other = {"mode": {"sprint": "endurance", "endurance": "sprint"}, "column_step": {"one": "free", "free": "one"},
             "gc_tie": {"shared": "stage_places", "stage_places": "shared"}}.get(flip, {True: False, False: True})
    options_b = {**options, flip: other[value]}
    if flip == "mode":  # endurance_stages goes with mode=endurance only
        options_b.pop("endurance_stages", None)
    comparison = compare_variants("etape", players, 30, policies, seed, options, options_b)
    no_number_missing(build_variant_report(comparison).to_markdown())
