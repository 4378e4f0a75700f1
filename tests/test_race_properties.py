"""Property tests: whatever a design file says, etappe either refuses it
with a DesignError naming the problem, or plays it without breaking a rule
invariant; and the interval maths behaves for every count."""
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etappe.analysis.stats import wilson_interval
from etappe.kernels import race as K
from etappe.kernels.race_design import DesignError, parse_design
from etappe.kernels.race_policies import parse_policy
from etappe.kernels.race_replay import replay_hands

DESIGNS = Path(__file__).resolve().parents[1] / "kernels" / "designs"
TEXTS = {name: (DESIGNS / f"{name}.toml").read_text() for name in ("stapop", "millebornes", "touring")}
NUMBER = re.compile(r"^(\s*\w+\s*=\s*)(-?\d+)(.*)$", re.M)


def mutate(text: str, which: int, value: int) -> str:
    """Replace the which-th whole-number setting of the file with value."""
    matches = list(NUMBER.finditer(text))
    m = matches[which % len(matches)]
    return text[:m.start()] + m.group(1) + str(value) + m.group(3) + text[m.end():]


def plays_two_hands_cleanly(design, ct, rules, players, seed, label):
    """Random and greedy seats alternating play up to two hands of game 0:
    the engine's invariant audit (check_state) never fires and no hand
    outlasts the turn cap."""
    specs = [parse_policy("random"), parse_policy("greedy")] * 3
    hands = 0
    for hand, log, _, hand_out, _ in replay_hands(design, ct, rules, specs[:players], seed, 0):
        assert not (log[:, 2] == K.EV_BROKEN_INVARIANT).any(), f"{label}: broken invariant in hand {hand}"
        assert hand_out[K.H_TURNS] <= rules[K.R_TURN_CAP]
        hands += 1
        if hand >= 1:
            break
    assert hands >= 1, f"{label}: no hand was played"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(TEXTS)), which=st.integers(0, 200),
       value=st.one_of(st.integers(-3, 40), st.integers(41, 70_000)),  # beyond the engine's limits too
       seed=st.integers(0, 2**32 - 1))
def test_a_mutated_design_is_refused_clearly_or_played_cleanly(name, which, value, seed):
    text = mutate(TEXTS[name], which, value)
    try:
        design = parse_design(text, "mutated.toml")
        players = design.players[seed % len(design.players)]
        ct, rules = design.tables(players)
    except DesignError as exc:
        assert str(exc).startswith("mutated.toml: ")
        return
    plays_two_hands_cleanly(design, ct, rules, players, seed, name)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(TEXTS)), seed=st.integers(0, 2**32 - 1),
       switches=st.fixed_dictionaries({key: st.booleans() for key in (
           "limit_on_limit", "roll_after_safety", "safety_extra_turn_after_stock_empty", "coup_fourre",
           "go_with_permanent_go", "coup_fourre_turn_after_stock_empty", "failed_extension_trip_points")}),
       overshoot=st.sampled_from(["forbid", "disqualify"]), shutout=st.sampled_from(["parker", "fr"]),
       discard=st.sampled_from(["always", "when_no_play"]))
def test_any_combination_of_the_rule_options_a_design_uses_plays_cleanly(name, seed, switches, overshoot, shutout,
                                                                          discard):
    design = parse_design(TEXTS[name], f"{name}.toml")
    players = design.players[seed % len(design.players)]
    options = {**switches, "overshoot": overshoot, "shutout": shutout, "discard": discard}
    # An option that changes nothing in this design is refused when set (tests/test_user_designs.py)
    unused = design.unused_options(players, {**design.options, **options})
    ct, rules = design.tables(players, {k: v for k, v in options.items() if k not in unused})
    plays_two_hands_cleanly(design, ct, rules, players, seed, f"{name} {options}")


@given(k=st.integers(0, 10_000), extra=st.integers(0, 10_000))
def test_wilson_interval_holds_the_rate_inside_zero_one(k, extra):
    n = k + extra
    if n == 0:
        return
    low, high = wilson_interval(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0
    # more of the same evidence never widens the interval
    low4, high4 = wilson_interval(4 * k, 4 * n)
    assert high4 - low4 <= high - low + 1e-12
