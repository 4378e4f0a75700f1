"""Tape l'étape under simulation: invariants over random and heuristic play,
determinism, the turn cap, common random numbers and a known deal probability."""
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pandas as pd
import pytest

from etappe.analysis import etape as E

PROFILES = ("montagne", "descente", "plaine", "contre_la_montre", "voiture_balai")
VALUES = {3: (3, 10), 4: (3, 10), 5: (2, 11), 6: (1, 12)}


def bits(m):
    return {c for c in range(48) if (int(m) >> c) & 1}


def secs(cards):
    return sum(10 if c % 12 < 6 else 30 for c in cards)


def column_cards(row, colour):
    if row[f"coln_{colour}"] == 0:
        return set()
    return {colour * 12 + v - 1 for v in range(row[f"lo_{colour}"], row[f"hi_{colour}"] + 1)}


def legal_now(row, vmin, vmax):
    """The column rule of the rules page, written again independently."""
    legal = set()
    profile, start = row["profile"], row["start"]
    for colour in range(4):
        if row[f"coln_{colour}"] == 0:
            values = [start]
        else:
            values = []
            if profile != "descente" and row[f"hi_{colour}"] < vmax:
                values.append(row[f"hi_{colour}"] + 1)
            if profile != "montagne" and row[f"lo_{colour}"] > vmin:
                values.append(row[f"lo_{colour}"] - 1)
        legal |= {colour * 12 + v - 1 for v in values}
    return legal


def side_points(profile, winner, picker, secs_left, cards_left, seat_order="from_picker"):
    """Side points of one stage, from the rules page written again: 5, 3, 1 on
    Montagne and Plaine stages to the winner, then fewest seconds of cards
    left, then fewer cards, then seat order counted from the picker (or from
    seat 0: option seat_order)."""
    n = len(secs_left)
    points = [0] * n
    if profile not in ("montagne", "plaine"):
        return points
    first = picker if seat_order == "from_picker" else 0
    order = sorted(range(n), key=lambda s: (s != winner, secs_left[s], cards_left[s], (s - first) % n))
    for s, pts in zip(order, (5, 3, 1)):
        points[s] = pts
    return points


def stage_places(winner, secs_left, cards_left, finish):
    """Stage places, from docs/etape.md written again: the winner, then fewest
    seconds, fewer cards, then the later to empty (Voiture balai); riders
    level on all of these share a place (1 + riders strictly before)."""
    n = len(secs_left)
    key = [(s != winner, secs_left[s], cards_left[s], -finish[s]) for s in range(n)]
    return [1 + sum(key[x] < key[s] for x in range(n)) for s in range(n)]


def test_side_points_rule_by_hand():
    # Montagne, seat 2 won; seats 0 and 3 both hold 40 s, seat 0 in 2 cards
    # (10 + 30) and seat 3 in 4 (4 x 10), so seat 0 comes second; seat 1 (70 s) last.
    assert side_points("montagne", 2, 0, [40, 70, 0, 40], [2, 3, 0, 4]) == [3, 0, 5, 1]
    # Plaine, blocked (no winner), picker seat 2: seats 0, 1 and 3 tie on 30 s
    # in one card; seat order from the picker is 3, 0, 1; seat 2 (60 s) last.
    assert side_points("plaine", -1, 2, [30, 30, 60, 30], [1, 1, 2, 1]) == [3, 1, 0, 5]
    # Descente feeds no side classification.
    assert side_points("descente", 0, 0, [0, 10, 20], [0, 1, 2]) == [0, 0, 0]
    # The same Plaine counted from seat 0: seats 0, 1, 3.
    assert side_points("plaine", -1, 2, [30, 30, 60, 30], [1, 1, 2, 1], "from_seat_0") == [5, 3, 0, 1]


def test_stage_places_rule_by_hand():
    # Montagne, seat 2 won; seat 0 and seat 3 level on 40 s in 2 cards share 2nd.
    assert stage_places(2, [40, 70, 0, 40], [2, 3, 0, 2], [0, 0, 1, 0]) == [2, 4, 1, 2]
    # Voiture balai, seat 1 emptied last (the winner), seat 3 before it, seat 0
    # first; seat 2 still holds a card.
    assert stage_places(1, [0, 0, 10, 0], [0, 0, 1, 0], [1, 3, 0, 2]) == [3, 1, 4, 2]


def check_invariants(races, stages):
    n = races.attrs["players"]
    vmin, vmax = VALUES[n]
    in_play = {c * 12 + v - 1 for c in range(4) for v in range(vmin, vmax + 1)}
    options = races.attrs["options"]
    dealt_start = options["extreme_start"] == "dealt"
    assert not stages["capped"].any()
    for row in stages.to_dict("records"):
        dealt = [bits(row[f"dealt_{s}"]) for s in range(n)]
        left = [bits(row[f"hand_{s}"]) for s in range(n)]
        laid = set().union(*(column_cards(row, c) for c in range(4)))
        # The deal: 8 distinct cards each, all in play.
        assert all(len(d) == 8 for d in dealt)
        assert len(set().union(*dealt)) == 8 * n and set().union(*dealt) <= in_play
        # Columns are legal sequences: contiguous, from the start value, the
        # right way for the profile, and as long as the cards laid on them.
        for c in range(4):
            k, lo, hi = row[f"coln_{c}"], row[f"lo_{c}"], row[f"hi_{c}"]
            if k == 0:
                continue
            assert hi - lo + 1 == k and vmin <= lo <= hi <= vmax
            if row["profile"] == "montagne":
                assert lo == row["start"] and (dealt_start or lo == vmin)
            elif row["profile"] == "descente":
                assert hi == row["start"] and (dealt_start or hi == vmax)
            else:
                assert lo <= row["start"] <= hi
        if row["profile"] in ("plaine", "voiture_balai"):
            assert row["start"] == 6
        # Cards are conserved: every dealt card is in a hand or a column, once.
        assert sum(len(h) for h in left) + len(laid) == 8 * n
        assert set().union(*left) | laid == set().union(*dealt)
        assert sum(row[f"laid_{s}"] for s in range(n)) == len(laid)
        for s in range(n):
            # Vitamine swaps one for one, so a hand only shrinks by laying.
            assert row[f"laid_{s}"] + len(left[s]) == 8
            assert row[f"cards_{s}"] == len(left[s]) and row[f"secs_{s}"] == secs(left[s])
        # The stage ends as the rules say.
        held = set().union(*left)
        finished = [s for s in range(n) if not left[s]]
        if row["blocked"]:
            assert held and not (held & legal_now(row, vmin, vmax))
            if row["profile"] != "voiture_balai":
                # No winner, or with blocked_winner the best placed, ties in seat order.
                first = row["picker"] if options["seat_order"] == "from_picker" else 0
                best = min(range(n), key=lambda s: (secs(left[s]), len(left[s]), (s - first) % n))
                assert row["winner"] == (best if options["blocked_winner"] else -1)
        elif row["profile"] == "voiture_balai":
            assert not held
        else:
            assert len(finished) == 1 and row["winner"] == finished[0]
            assert row[f"finish_{finished[0]}"] == 1
        # Stage times: cards left minus the bonuses.
        expect = [secs(left[s]) for s in range(n)]
        if row["profile"] == "voiture_balai":
            order = sorted((row[f"finish_{s}"], s) for s in range(n) if row[f"finish_{s}"])
            if order:
                expect[order[-1][1]] -= 60
                assert row["winner"] == order[-1][1]
            if len(order) >= 2:
                expect[order[-2][1]] -= 30
        elif row["winner"] >= 0:
            expect[row["winner"]] -= 40
        assert [row[f"time_{s}"] for s in range(n)] == expect
        # Side points: who gets them, by the rules (winner, seconds, cards, seat order).
        expect_side = side_points(row["profile"], row["winner"], row["picker"],
                                  [secs(h) for h in left], [len(h) for h in left], options["seat_order"])
        assert [row[f"side_{s}"] for s in range(n)] == expect_side
        assert [row[f"place_{s}"] for s in range(n)] == stage_places(
            row["winner"], [secs(h) for h in left], [len(h) for h in left], [row[f"finish_{s}"] for s in range(n)])
    # Times add up: cumulative per stage, race total, ranks, side totals.
    for s in range(n):
        cum = stages.groupby("race")[f"time_{s}"].cumsum()
        assert (cum == stages[f"cum_{s}"]).all()
        assert (stages.groupby("race")[f"time_{s}"].sum().to_numpy() == races[f"time_{s}"]).all()
        for side, profile in (("mountain", "montagne"), ("sprint", "plaine")):
            pts = stages[f"side_{s}"].where(stages["profile"] == profile, 0).groupby(stages["race"]).sum()
            assert (pts.to_numpy() == races[f"{side}_{s}"]).all()
    # General classification: lowest time; under gc_tie=stage_places a tie
    # goes to the lower sum of stage places, then the better last-stage place.
    places = stages.groupby("race")[[f"place_{s}" for s in range(n)]]
    keys = np.stack([races[[f"time_{s}" for s in range(n)]].to_numpy(),
                     places.sum().to_numpy(), places.last().to_numpy()], axis=2)
    if options["gc_tie"] == "shared":
        keys = keys[:, :, :1]
    for race, key in zip(races.to_dict("records"), keys.tolist()):
        ranks = [1 + sum(key[o] < key[s] for o in range(n)) for s in range(n)]
        assert [race[f"rank_{s}"] for s in range(n)] == ranks
        assert race["winner"] == (ranks.index(1) if ranks.count(1) == 1 else -1)
    # Each joker at most once per player per race.
    for joker in ("crev", "vita", "braq"):
        for s in range(n):
            assert (stages.groupby("race")[f"{joker}_{s}"].apply(lambda x: (x >= 0).sum()) <= 1).all()
    # A Crevaison target can't skip more turns than Crevaisons aimed at them.
    for s in range(n):
        aimed = sum((stages[f"crev_{u}"] == s).groupby(stages["race"]).sum() for u in range(n))
        assert (stages.groupby("race")[f"skipped_{s}"].sum() <= aimed).all()


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("policy", ["random", "mixed"])
def test_invariants_under_play(n, policy):
    pols = ["random"] * n if policy == "random" else (["heuristic", "random", "blocker", "high", "connector", "random"])[:n]
    races, stages = E.simulate(players=n, races=40, policies=pols, seed=100 + n)
    check_invariants(races, stages)
    assert set(stages["profile"].astype(str)) <= set(PROFILES)


@pytest.mark.parametrize("options", [
    {"mode": "endurance"},
    {"pick_after_deal": False, "crevaison_carry": False, "crevaison_stack": False},
    {"sprint_in_balai": False, "crevaison_anytime": False, "extreme_start": "dealt"},
    {"gc_tie": "stage_places", "seat_order": "from_seat_0"},
    {"blocked_winner": True},
    {"blocked_winner": True, "seat_order": "from_seat_0", "gc_tie": "stage_places", "mode": "endurance"},
])
def test_invariants_under_options(options):
    races, stages = E.simulate(players=3, races=20, policies=["random", "heuristic", "random"],
                               seed=5, options=options)
    if options.get("extreme_start") == "dealt":
        # Montagne/Descente may start at the lowest/highest value dealt.
        dealt = stages[[f"dealt_{s}" for s in range(3)]].to_numpy()
        for row, hands in zip(stages.to_dict("records"), dealt):
            values = {c % 12 + 1 for h in hands for c in bits(h)}
            if row["profile"] == "montagne":
                assert row["start"] == min(values)
            elif row["profile"] == "descente":
                assert row["start"] == max(values)
    check_invariants(races, stages)


@pytest.mark.parametrize("allowed", [True, False])
def test_self_crevaison_in_balai_under_play(allowed):
    # Random and heuristic seats; with the option off nobody targets
    # themselves in Voiture balai, while random seats still do elsewhere.
    races, stages = E.simulate(players=4, races=300, policies=["random", "heuristic"] * 2, seed=3,
                               options={"self_crevaison_in_balai": str(allowed).lower()})
    check_invariants(races, stages)
    assert stages.attrs["options"]["self_crevaison_in_balai"] is allowed
    balai = stages["profile"] == "voiture_balai"
    on_self = sum(stages[f"crev_{s}"] == s for s in range(4))
    assert (on_self[balai].sum() > 0) == allowed
    assert on_self[~balai].sum() > 0


def test_gc_tie_under_play():
    # The same races under both readings: the stages are the same, and only
    # races level on time at the top may change winner; stage_places breaks
    # most of those ties, and the report's GC (race_tension) agrees.
    runs = {tie: E.simulate(players=4, races=1000, policies=["random", "heuristic"] * 2, seed=3,
                            options={"gc_tie": tie}) for tie in ("shared", "stage_places")}
    (shared, shared_stages), (broken, broken_stages) = runs["shared"], runs["stage_places"]
    check_invariants(broken, broken_stages)
    pd.testing.assert_frame_equal(shared_stages, broken_stages)
    changed = (shared["winner"] != broken["winner"]).to_numpy()
    assert changed.any() and (shared["winner"].to_numpy()[changed] == -1).all()
    assert (broken["winner"] == -1).sum() < (shared["winner"] == -1).sum() / 2
    assert (E.race_tension(broken_stages)["winner"].to_numpy() == broken["winner"].to_numpy()).all()
    assert (E.win_shares(broken).groupby("race")["win"].sum() == 1).all()


def test_seat_order_under_play():
    # Three players, most stages blocked, many ties on seconds and cards: the
    # seat order changes side points (and, with blocked_winner, who gets the
    # bonus) but never the play.
    base, other = ({"blocked_winner": True, "seat_order": order} for order in ("from_picker", "from_seat_0"))
    races, stages = E.simulate(players=3, races=300, policies=["random", "heuristic", "heuristic"], seed=4,
                               options=base)
    races2, stages2 = E.simulate(players=3, races=300, policies=["random", "heuristic", "heuristic"], seed=4,
                                 options=other)
    check_invariants(races2, stages2)
    for col in [f"{f}_{s}" for f in ("dealt", "hand", "laid") for s in range(3)] + ["turns"]:
        assert (stages[col] == stages2[col]).all()
    assert (stages[[f"side_{s}" for s in range(3)]] != stages2[[f"side_{s}" for s in range(3)]]).any().any()
    assert (stages["winner"] != stages2["winner"]).any()


def test_free_columns_option_keeps_cards_conserved():
    races, stages = E.simulate(players=4, races=30, policies=["random"], seed=8,
                               options={"column_step": "free"})
    for row in stages.to_dict("records"):
        left = sum(row[f"cards_{s}"] for s in range(4))
        assert left + sum(row[f"coln_{c}"] for c in range(4)) == 32
        assert left + sum(row[f"laid_{s}"] for s in range(4)) == 32


def test_three_players_stages_can_block():
    _, stages = E.simulate(players=3, races=300, policies=["random"], seed=1)
    assert stages["blocked"].any()
    # With every card in play, a column always reaches every card: no block.
    _, stages4 = E.simulate(players=4, races=100, policies=["random"], seed=1)
    assert not stages4["blocked"].any()


def test_deal_leaves_each_card_out_a_quarter_of_the_time_with_three_players():
    # 8 of 32 cards (values 3-10 in four colours) stay out: P(a given card out) = 8/32 = 1/4, for every
    # one of the 32 (each stage is dealt afresh). 32 cards checked at once: 4.5 standard errors each
    # (two-sided 6.8e-6 a card, 2e-4 for all 32); at 3000 stages a card's se is .0079, so a card left
    # out 29 % or 21 % of the time fails.
    _, stages = E.simulate(players=3, races=1000, policies=["random"], seed=2)
    dealt = (stages["dealt_0"] | stages["dealt_1"] | stages["dealt_2"]).to_numpy()
    se = np.sqrt(0.25 * 0.75 / len(dealt))
    for colour in range(4):
        for value in range(3, 11):
            out = ((dealt >> (colour * 12 + value - 1)) & 1) == 0
            assert abs(out.mean() - 0.25) < 4.5 * se, (colour, value, out.mean())


def test_turn_cap_cuts_off_and_records():
    races, stages = E.simulate(players=4, races=5, policies=["random"], seed=4,
                               options={"turn_cap": 3})
    assert stages["capped"].all() and (stages["turns"] == 3).all()
    assert (races["capped_stages"] == 4).all()
    assert (stages["winner"] == -1).all()


def test_simulate_warns_on_stderr_of_stages_cut_off_by_the_turn_cap():
    # as the race games and Bremen warn of their capped games: a cut-off stage is timed on the cards left
    from typer.testing import CliRunner

    from etappe.cli.main import app

    result = CliRunner().invoke(app, ["simulate", "etape", "--games", "5", "--policy", "random", "--seed", "4",
                                      "--option", "turn_cap=3"])
    assert result.exit_code == 0, result.output
    assert ("warning: 20 of 20 stages hit the turn cap of 3 turns: each was cut off and timed on the cards left "
            "in the hands then") in " ".join(result.stderr.split())
    assert "warning" not in result.stdout
    quiet = CliRunner().invoke(app, ["simulate", "etape", "--games", "5", "--seed", "4"])
    assert quiet.exit_code == 0 and "warning" not in quiet.output


def test_same_seed_same_records_and_other_seed_differs():
    a = E.simulate(players=5, races=30, policies=["random", "heuristic"] * 2 + ["blocker"], seed=11)
    b = E.simulate(players=5, races=30, policies=["random", "heuristic"] * 2 + ["blocker"], seed=11)
    c = E.simulate(players=5, races=30, policies=["random", "heuristic"] * 2 + ["blocker"], seed=12)
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1], b[1])
    assert not a[1]["dealt_0"].equals(c[1]["dealt_0"])


def test_one_thread_equals_many_threads_and_chunks():
    many = E.simulate(players=4, races=64, policies=["random", "heuristic", "random", "high"], seed=21,
                      threads=max(2, numba.config.NUMBA_NUM_THREADS))  # several threads even on one core
    one = E.simulate(players=4, races=64, policies=["random", "heuristic", "random", "high"], seed=21,
                     threads=1, chunk=10)
    pd.testing.assert_frame_equal(many[0], one[0])
    pd.testing.assert_frame_equal(many[1], one[1])
    tail = E.simulate(players=4, races=14, policies=["random", "heuristic", "random", "high"], seed=21,
                      first_race=50)
    pd.testing.assert_frame_equal(tail[1].reset_index(drop=True),
                                  many[1][many[1]["race"] >= 50].reset_index(drop=True))


def test_jit_disabled_gives_the_same_records():
    code = textwrap.dedent("""
        import sys
        from etappe.analysis import etape as E
        races, stages = E.simulate(players=3, races=2, policies=["random", "heuristic", "blocker"], seed=33)
        races.to_csv(sys.stdout, index=False); stages.to_csv(sys.stdout, index=False)
    """)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=300).stdout
    races, stages = E.simulate(players=3, races=2, policies=["random", "heuristic", "blocker"], seed=33)
    assert out == races.to_csv(index=False) + stages.to_csv(index=False)


def test_withholding_a_joker_keeps_the_deals():
    pols = ["heuristic", "random", "heuristic", "random"]
    _, base = E.simulate(players=4, races=20, policies=pols, seed=6)
    _, without = E.simulate(players=4, races=20, policies=pols, seed=6,
                            options={"withhold_seat": 0, "withhold_jokers": "vitamine,crevaison"})
    for s in range(4):
        assert base[f"dealt_{s}"].equals(without[f"dealt_{s}"])
    assert (without["vita_0"] == -1).all() and (without["crev_0"] == -1).all()
    assert (base["vita_0"] >= 0).any()


def test_policies_rotate_over_seats():
    races, stages = E.simulate(players=4, races=8, policies=["random", "heuristic", "high", "blocker"], seed=3)
    for s in range(4):
        assert (races[f"slot_{s}"] == (s + races["race"]) % 4).all()
    fixed, _ = E.simulate(players=4, races=8, policies=["random", "heuristic", "high", "blocker"], seed=3,
                          options={"rotate_seats": False})
    assert all((fixed[f"slot_{s}"] == s).all() for s in range(4))


def test_heuristic_beats_random():
    races, _ = E.simulate(players=4, races=400, policies=["heuristic", "random", "random", "random"], seed=7)
    rates = E.win_rates(races, "policy").set_index("policy")
    heuristic = rates.loc[rates.index.str.startswith("heuristic")].iloc[0]
    assert heuristic["ci_low"] > 0.25  # better than a fair share of 4


def test_side_classification_tops_by_hand():
    # Two races of 3 players; race 1 has the slots (policies) rotated by one seat.
    races = pd.DataFrame({"race": [0, 1], "time_0": [10, 10], "time_1": [20, 20], "time_2": [30, 30],
                          "slot_0": [0, 1], "slot_1": [1, 2], "slot_2": [2, 0],
                          "rank_0": [1, 1], "rank_1": [2, 2], "rank_2": [3, 3],
                          "mountain_0": [5, 3], "mountain_1": [3, 3], "mountain_2": [1, 0],
                          "sprint_0": [0, 0], "sprint_1": [0, 0], "sprint_2": [0, 0]})
    races.attrs = {"players": 3, "policies": ["A", "B", "C"]}
    side = E.side_classifications(races).set_index("policy")
    # A tops race 0 alone; in race 1 B (seat 0) and C (seat 1) share the top.
    assert side["mountain_top"].to_dict() == {"A": 0.5, "B": 0.25, "C": 0.25}
    assert side["mountain_points"].to_dict() == {"A": 2.5, "B": 3.0, "C": 2.0}
    assert np.allclose(side["sprint_top"], 1 / 3)  # nobody scored: a three-way tie each race


@pytest.mark.parametrize("n", [3, 5])
def test_lookahead_keeps_the_invariants_and_is_deterministic(n):
    pols = ["lookahead:playouts=40", "heuristic", "random", "lookahead:playouts=40,horizon=6", "high"][:n]
    races, stages = E.simulate(players=n, races=12, policies=pols, seed=40 + n, options={"mode": "endurance",
                                                                                      "endurance_stages": 2})
    check_invariants(races, stages)
    one, _ = E.simulate(players=n, races=12, policies=pols, seed=40 + n, threads=1,
                        options={"mode": "endurance", "endurance_stages": 2})
    pd.testing.assert_frame_equal(races, one)
    assert "lookahead:" in races.attrs["policies"][0] and "playouts=40" in races.attrs["policies"][0]


# ------------------------------------------------------------ bad input
@pytest.mark.parametrize("spec, message", [
    ("lookahead:playouts=0", "'lookahead:playouts=0': playouts must be a whole number, 1 to 1000000, not 0"),
    ("lookahead:playouts=2.5", "playouts must be a whole number, 1 to 1000000, not 2.5"),
    ("lookahead:playouts=1e20", "playouts must be a whole number, 1 to 1000000, not 1e20"),  # int64 would wrap
    ("lookahead:horizon=-1", "horizon must be a whole number, 0 to 100000 (0: to the stage end), not -1"),
    ("lookahead:confidence=-0.5", "confidence must be a number >= 0, not -0.5"),
    ("random:joker_p=2", "'random:joker_p=2': joker_p must be a probability, 0 to 1, not 2"),
    ("random:more_p=-1", "more_p must be a probability, 0 to 1, not -1"),
    ("heuristic:pick=7", "'heuristic:pick=7': pick must be 0 (the profile that fits the hand) or 1 (at random), not 7"),
    ("heuristic:value=abc", "'heuristic:value=abc': value must be a number >= 0, not 'abc'"),
    ("heuristic:value=1,value=2", "'heuristic:value=1,value=2': value is given twice"),
    ("heuristic:value", "value must be a number >= 0, not '' (write value=NUMBER)"),
    ("blocker:block=inf", "block must be a number >= 0, not inf"),
    ("high:own=nan", "own must be a number >= 0, not nan"),
    ("connector:crev_cards=9", "crev_cards must be a whole number of cards, 0 to 8, not 9"),
    ("heuristic:vita_cards=-1", "vita_cards must be a whole number of cards, 0 to 8, not -1"),
    ("heuristic:braq_min=0", "braq_min must be a whole number of cards, 1 to 8, not 0"),
    ("heuristic:balai_w=-2", "balai_w must be a number >= 0, not -2"),
])
def test_policy_parameters_out_of_range_are_refused_by_name(spec, message):
    with pytest.raises(ValueError) as refused:
        E.parse_policy(spec)
    assert message in str(refused.value)


def test_policy_parameters_at_the_ends_of_their_ranges_are_taken():
    for spec in ("lookahead:playouts=1,horizon=0,confidence=0", "random:joker_p=0,more_p=1",
                 "heuristic:pick=1,crev_cards=0,vita_cards=8,braq_min=1,value=0,own=0,block=0,balai_w=0",
                 "heuristic:braq_min=8,crev_cards=8"):
        _, row, canonical = E.parse_policy(spec)
        assert canonical.startswith(spec.split(":")[0] + ":")
    assert E.parse_policy("heuristic:pick=1")[1][E.K.P_PICK] == 1.0
    # Every parameter of every policy family has a range.
    assert {k for _, params in E.POLICIES.values() for k in params} == set(E.PARAMETER_RANGES)


@pytest.mark.parametrize("options, message", [
    ({"withhold_jokers": "vitamine"}, "withhold_seat and withhold_jokers go together"),
    ({"withhold_seat": 1}, "withhold_seat and withhold_jokers go together"),
    ({"endurance_stages": 3}, "endurance_stages=3 applies to mode=endurance only"),
    ({"mode": "sprint", "endurance_stages": 1}, "endurance_stages=1 applies to mode=endurance only"),
    # the Crevaison options rule a joker: without it in the game (option jokers) they change nothing
    ({"jokers": "vitamine,braquet", "crevaison_stack": False},
     "crevaison_stack=false rules the Crevaison joker, which is not in the game"),
    ({"jokers": "", "crevaison_anytime": "false", "self_crevaison_in_balai": False},
     "crevaison_anytime=false, self_crevaison_in_balai=false rule the Crevaison joker"),
])
def test_options_that_mean_nothing_alone_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        E.simulate(players=4, races=1, options=options)


def test_options_that_go_together_are_taken_together():
    full = E.resolve_options({"withhold_seat": 1, "withhold_jokers": "braquet"})
    assert (full["withhold_seat"], full["withhold_jokers"]) == (1, "braquet")
    assert E.resolve_options({"mode": "endurance", "endurance_stages": 3})["endurance_stages"] == 3
    assert E.resolve_options({"jokers": "crevaison", "crevaison_carry": False})["crevaison_carry"] is False
    assert E.resolve_options({"jokers": "", "crevaison_carry": True})["crevaison_carry"] is True  # the default
    # A full option set (defaults filled in, as runs store them) is taken back as it is.
    assert E.resolve_options(E.resolve_options({})) == E.resolve_options({})


# ------------------------------------------------------------ 3 players: why stages block
def chain_ok(cards, dealt, start, step):
    """Can every card of `cards` be reached on a Montagne (step +1) or
    Descente (step -1) column from `start`, i.e. was every value between the
    start and it, of its colour, dealt to somebody? (The rules page: a column
    grows by exactly one value; an undealt card can never be laid. The start
    is the lowest/highest value in play or dealt: no card lies beyond it.)"""
    for c in cards:
        colour, value = divmod(c, 12)
        if any(colour * 12 + v - 1 not in dealt for v in range(start, value + 1, step)):
            return False
    return True


@pytest.mark.parametrize("extreme_start", ["in_play", "dealt"])
def test_three_player_montagne_and_descente_block_unless_a_hand_has_no_gap(extreme_start):
    # Without jokers (no Vitamine swaps, no Braquet), a Montagne or Descente
    # stage can end with a winner only if some player's whole hand lies on
    # gap-free runs from the start value; and if one does, a column can
    # always go on while they hold cards, so the stage cannot block. With 8 of
    # the 32 cards out of play this is rare: most such stages block.
    _, stages = E.simulate(players=3, races=300, policies=["heuristic", "random", "blocker"], seed=12,
                           options={"jokers": "", "extreme_start": extreme_start})
    rows = stages[stages["profile"].isin(["montagne", "descente"])].to_dict("records")
    assert len(rows) > 200
    for row in rows:
        hands = [bits(row[f"dealt_{s}"]) for s in range(3)]
        dealt = set().union(*hands)
        step = 1 if row["profile"] == "montagne" else -1
        someone = any(chain_ok(h, dealt, row["start"], step) for h in hands)
        assert row["blocked"] == (not someone), row
    assert np.mean([r["blocked"] for r in rows]) > 0.9


def test_out_of_range_whole_number_options_are_refused_by_name():
    from typer.testing import CliRunner

    from etappe.cli.main import app

    for option, message in (("turn_cap=99999999999999999999", "turn_cap must be 1 to 100000, not 99999999999999999999"),
                            ("turn_cap=0", "turn_cap must be 1 to 100000, not 0"),
                            ("stage_win_bonus=99999999999999999999", "stage_win_bonus must be 0 to 10000"),
                            ("low_card_seconds=-1", "low_card_seconds must be 0 to 10000, not -1")):
        result = CliRunner().invoke(app, ["simulate", "etape", "--games", "1", "--option", option])
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.stderr.split()) and "Traceback" not in result.output
    with pytest.raises(ValueError, match="withhold_seat must be -1 to 5, not 99999999999999999999"):
        E.resolve_options({"withhold_seat": "99999999999999999999", "withhold_jokers": "vitamine"})


def test_bad_joker_names_are_refused_naming_the_option():
    from typer.testing import CliRunner

    from etappe.cli.main import app

    # docs/etape.md: a bad option value is refused with the option named; a joker list
    # may be jokers or withhold_jokers, so the message says which.
    for options, message in ((["jokers=Crevaison"], "etape rule option jokers: unknown joker 'Crevaison'"),
                             (["withhold_seat=0", "withhold_jokers=all"],
                              "etape rule option withhold_jokers: unknown joker 'all'"),
                             (["withhold_seat=4", "withhold_jokers=vitamine"],
                              "withhold_seat must be -1 or a seat 0-3 (4 players), not 4")):
        args = ["simulate", "etape", "--players", "4", "--games", "1"]
        for option in options:
            args += ["--option", option]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert message in " ".join(result.stderr.split()) and "Traceback" not in result.output


def test_a_set_of_jokers_is_one_option_value_however_written():
    # The jokers of a game are a set: the order written and repeats change nothing, so a
    # run records one spelling and two variants that differ only in it are the same.
    assert E.resolve_options({"jokers": "braquet, vitamine,braquet"})["jokers"] == "vitamine,braquet"
    assert E.resolve_options({"withhold_seat": 0, "withhold_jokers": "braquet,crevaison"})["withhold_jokers"] == (
        "crevaison,braquet")
    from etappe.analysis.variants import compare_variants

    with pytest.raises(ValueError, match="the two variants are the same"):
        compare_variants("etape", 4, 2, ["heuristic"], 1, {"jokers": "crevaison,vitamine"},
                         {"jokers": "vitamine,crevaison"})


def test_the_record_tables_have_the_documented_columns_and_types():
    # docs/etape.md, Records, written out: the race and stage fields, per colour c and per seat s
    races, stages = E.simulate(players=3, races=4, seed=1)
    seat = ["slot", "time", "rank", "mountain", "sprint"]
    assert list(races.columns) == ["race", "winner", "capped_stages", "blocked_stages"] + [
        f"{field}_{s}" for field in seat for s in range(3)]
    seat = ["slot", "time", "cum", "cards", "secs", "passes", "skipped", "laid", "crev", "vita", "braq", "finish",
            "side", "hand", "dealt", "place"]
    assert list(stages.columns) == ["race", "stage", "picker", "profile", "start", "winner", "blocked", "capped",
                                    "turns"] + [f"{field}_{c}" for c in range(4) for field in ("coln", "lo", "hi")] + [
        f"{field}_{s}" for field in seat for s in range(3)]
    assert stages["blocked"].dtype == bool and stages["capped"].dtype == bool
    assert list(stages["profile"].cat.categories) == ["montagne", "descente", "plaine", "contre_la_montre",
                                                      "voiture_balai"]
    assert sorted(races.attrs) == ["first_race", "game", "options", "players", "policies", "races", "seed",
                                   "stages_per_race", "version", "wall_seconds"]


def test_the_policies_a_run_records_play_it_again():
    # docs/etape.md, Records: df.attrs holds the canonical specs with every parameter,
    # everything needed to replay a race; a parameter of 8 digits is recorded as given.
    policies = ["heuristic:value=1.4142135", "random:joker_p=0.123456789"]
    races, stages = E.simulate(players=4, races=30, policies=policies, seed=3)
    assert races.attrs["policies"][0].startswith("heuristic:value=1.4142135,")
    again = E.simulate(players=4, races=30, policies=races.attrs["policies"], seed=3, options=races.attrs["options"])
    pd.testing.assert_frame_equal(again[0], races)
    pd.testing.assert_frame_equal(again[1], stages)


@pytest.mark.parametrize("kwargs, message", [
    ({"seed": 2**63}, "seed and race numbers must be below 2\\*\\*63, not seed=9223372036854775808"),
    ({"first_race": 2**63 - 1, "races": 2}, "races 9223372036854775807 to 9223372036854775808"),
    ({"first_race": -1}, "races, seed and first_race must be >= 0"),
])
def test_seeds_and_race_numbers_out_of_range_are_value_errors(kwargs, message):
    # docs/python.md: mistakes raise a ValueError with the message; a race's keys are
    # 64-bit (the command line's --seed is at most 2**63 - 1), and races are numbered from 0.
    with pytest.raises(ValueError, match=message):
        E.simulate(**{"players": 4, "races": 1, **kwargs})
