"""tools/mutation_sweep.py: the mutants it makes, worked out by hand on a small source."""
import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "mutation_sweep.py"
spec = importlib.util.spec_from_file_location("mutation_sweep", TOOL)
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)

SOURCE = '''\
@njit(cache=True)
def fits(a, b):
    if a < b and not a == 3:
        a += 1
    return a - b


def other(x):
    return x > 0
'''


def test_every_mutant_of_a_small_function():
    found = sweep.mutants(SOURCE, {"fits"})
    lines = [(m["kind"], m["mutated"]) for m in found]
    assert sorted(lines) == sorted([
        ("condition", "False"),                   # if a < b and not a == 3:
        ("and/or", "a < b or not a == 3"),
        ("compare", "a <= b"),
        ("not", "(a == 3)"),
        ("compare", "a != 3"),
        ("constant", "4"),                        # a == 3
        ("operator", "a -= 1"),                   # a += 1
        ("deleted", "pass"),
        ("constant", "0"),                        # += 1
        ("operator", "a + b"),                    # return a - b
    ])
    # the decorator's True and the other function are left alone
    assert all(m["line"] in (3, 4, 5) for m in found)
    assert not any("cache=False" in m["text"] or "x >= 0" in m["text"] for m in found)


def test_the_mutants_of_arithmetic_on_floats():
    source = "def spread(x, n):\n    return -x / n ** 0.5\n"
    lines = [(m["kind"], m["mutated"]) for m in sweep.mutants(source, {"spread"})]
    assert sorted(lines) == sorted([
        ("operator", "-x * n ** 0.5"),            # / for *
        ("sign", "(x)"),                          # -x
        ("operator", "n * 0.5"),                  # ** for *
        ("constant", "1.5"),                      # 0.5
    ])


def test_a_mutant_is_the_source_with_one_place_changed():
    found = sweep.mutants(SOURCE, {"fits"})
    boundary = next(m for m in found if m["mutated"] == "a <= b")
    assert boundary["text"] == SOURCE.replace("if a < b and", "if a <= b and")
    deleted = next(m for m in found if m["kind"] == "deleted")
    assert deleted["text"] == SOURCE.replace("a += 1", "pass")
    assert len({m["text"] for m in found}) == len(found) and SOURCE not in {m["text"] for m in found}


def test_it_refuses_to_mutate_its_own_repository(tmp_path, capsys):
    source = (TOOL.parents[1] / "kernels" / "race.py").read_text()
    with pytest.raises(SystemExit) as exit_:
        sweep.main([str(TOOL.parents[1]), "kernels/race.py", "legal_moves", "--tests", "tests",
                    "--out", str(tmp_path / "out.jsonl")])
    assert exit_.value.code == 2 and "COPY is this repository" in capsys.readouterr().err
    assert (TOOL.parents[1] / "kernels" / "race.py").read_text() == source and not (tmp_path / "out.jsonl").exists()
