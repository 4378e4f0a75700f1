"""Mutation sweep: how many small wrong changes to the rules code do the tests catch?

Each mutant changes one thing in the chosen functions of one source file (a
comparison flipped at its boundary or negated, + for -, & for |, * for / or
**, and for or, a `not` or a minus sign dropped, a constant one off, a
statement deleted, an if or while condition made False); the chosen tests run against it. A mutant the
tests pass "survived": either a test is missing, or the change cannot be
seen (an equivalent mutant, e.g. `b + 0` for `b - 0`). Survivors are for a
person to read; this tool gives no verdict.

It mutates files in COPY, a copy of the repository (never the one this tool
sits in), which PYTHON must import etappe from, e.g.:

    mkdir /tmp/copy && git ls-files | tar -cf - -T - | tar -xf - -C /tmp/copy
    python3 -m venv /tmp/copy-venv && /tmp/copy-venv/bin/pip install -e '/tmp/copy[test]'
    python tools/mutation_sweep.py /tmp/copy kernels/race.py legal_moves,apply_move \\
        --python /tmp/copy-venv/bin/python --tests tests/test_race_rules.py --sample 100 --out race.jsonl

The tests run with Numba's JIT off (every mutant would otherwise compile the
kernels anew, a minute each); `--jit` keeps it, for tests that need it. Each
mutant's result is one JSON line in --out, written as it finishes; the same
command again skips the mutants already in it. The file is restored at the
end, also after Ctrl-C.
"""
import argparse
import ast
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

FLIP_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                ast.NotEq: ast.Eq}
SWAP_OPERATOR = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
                 ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult, ast.LShift: ast.RShift, ast.RShift: ast.LShift,
                 ast.Div: ast.Mult, ast.Pow: ast.Mult}


def mutants(source: str, functions: set[str]) -> list[dict]:
    """Every mutant of the bodies of `functions` in `source` (decorators are
    left alone): dicts with the function, line, kind, the original line and
    the mutated text, and `text`, the whole mutated source."""
    line_starts = [0]
    for line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    lines = source.splitlines()
    found = []

    def add(function, node, replacement, kind):
        start = line_starts[node.lineno - 1] + node.col_offset
        end = line_starts[node.end_lineno - 1] + node.end_col_offset
        found.append({"function": function, "line": node.lineno, "kind": kind,
                      "original": lines[node.lineno - 1].strip(), "mutated": replacement,
                      "text": source[:start] + replacement + source[end:]})

    for function in ast.walk(ast.parse(source)):
        if not (isinstance(function, ast.FunctionDef) and function.name in functions):
            continue
        for node in (n for statement in function.body for n in ast.walk(statement)):
            name = function.name
            if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in FLIP_COMPARE:
                flipped = ast.Compare(node.left, [FLIP_COMPARE[type(node.ops[0])]()], node.comparators)
                add(name, node, ast.unparse(flipped), "compare")
            elif isinstance(node, ast.BinOp) and type(node.op) in SWAP_OPERATOR:
                add(name, node, ast.unparse(ast.BinOp(node.left, SWAP_OPERATOR[type(node.op)](), node.right)),
                    "operator")
            elif isinstance(node, ast.BoolOp):
                other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
                add(name, node, ast.unparse(ast.BoolOp(other, node.values)), "and/or")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                add(name, node, f"({ast.unparse(node.operand)})", "not")
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                add(name, node, f"({ast.unparse(node.operand)})", "sign")
            elif isinstance(node, ast.Constant) and type(node.value) is bool:
                add(name, node, str(not node.value), "constant")
            elif isinstance(node, ast.Constant) and type(node.value) is int:
                add(name, node, "0" if node.value == 1 else str(node.value + 1), "constant")
            elif isinstance(node, ast.Constant) and type(node.value) is float:
                add(name, node, repr(node.value + 1), "constant")
            elif isinstance(node, ast.AugAssign) and type(node.op) in SWAP_OPERATOR:
                swapped = ast.AugAssign(node.target, SWAP_OPERATOR[type(node.op)](), node.value)
                add(name, node, ast.unparse(swapped), "operator")
            if isinstance(node, (ast.Assign, ast.AugAssign)) or (
                    isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
                add(name, node, "pass", "deleted")
            if isinstance(node, (ast.If, ast.While)) and not isinstance(node.test, ast.Constant):
                add(name, node.test, "False", "condition")
    return [m for m in found if _compiles(m["text"])]


def _compiles(text: str) -> bool:
    try:
        compile(text, "mutant", "exec")
    except SyntaxError:
        return False
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("copy", type=Path, help="a copy of the repository, which --python imports etappe from")
    parser.add_argument("file", help="the source file to mutate, relative to the repository")
    parser.add_argument("functions", help="the functions to mutate, comma-separated")
    parser.add_argument("--tests", required=True, help="pytest arguments, e.g. 'tests/test_race_rules.py -k mb'")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--sample", type=int, help="test this many mutants, drawn at random")
    parser.add_argument("--seed", type=int, default=0, help="the draw of --sample")
    parser.add_argument("--mutants", help="test just these mutants, by number (e.g. an earlier sweep's survivors, "
                                          "against more tests), comma-separated")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a mutant's tests may take (a hang: caught)")
    parser.add_argument("--jit", action="store_true", help="run the tests compiled (default: Numba's JIT off)")
    parser.add_argument("--out", type=Path, required=True, help="results, one JSON line a mutant")
    args = parser.parse_args(argv)

    copy = args.copy.resolve()
    if copy == Path(__file__).resolve().parents[1]:
        parser.error("COPY is this repository: mutate a copy of it")
    path = copy / args.file
    original = path.read_text()
    found = mutants(original, set(args.functions.split(",")))
    chosen = range(len(found))
    if args.mutants:
        chosen = sorted({int(k) for k in args.mutants.split(",")})
        if chosen[-1] >= len(found):
            parser.error(f"--mutants: there are {len(found)} mutants, numbered 0 to {len(found) - 1}")
    elif args.sample is not None and args.sample < len(found):
        chosen = sorted(random.Random(args.seed).sample(chosen, args.sample))
    done = {json.loads(line)["mutant"] for line in args.out.read_text().splitlines()} if args.out.exists() else set()
    env = dict(os.environ)
    if not args.jit:
        env["NUMBA_DISABLE_JIT"] = "1"
    print(f"{len(found)} mutants, testing {len(chosen)} ({len(done & set(chosen))} done before)", flush=True)

    def run_tests():
        return subprocess.run([args.python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                               *args.tests.split()], cwd=copy, env=env, capture_output=True, text=True,
                              timeout=args.timeout)

    baseline = run_tests()  # else a wrong --tests or --python would count every mutant as caught
    if baseline.returncode:
        print(f"the tests fail on the unchanged copy:\n{(baseline.stdout + baseline.stderr)[-2000:]}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # restore the file on kill as on Ctrl-C
    try:
        for k in chosen:
            if k in done:
                continue
            mutant = found[k]
            path.write_text(mutant["text"])
            started = time.time()
            try:
                caught = "caught" if run_tests().returncode else "survived"
            except subprocess.TimeoutExpired:
                caught = "caught (timed out)"
            record = {"mutant": k, **{key: mutant[key] for key in ("function", "line", "kind", "original")},
                      "mutated": mutant["mutated"][:200], "result": caught,
                      "seconds": round(time.time() - started, 1)}
            with args.out.open("a") as out:
                out.write(json.dumps(record) + "\n")
            print(k, mutant["function"], mutant["line"], mutant["kind"], caught, flush=True)
    finally:
        path.write_text(original)
    records = [json.loads(line) for line in args.out.read_text().splitlines()]
    survivors = [r for r in records if r["result"] == "survived"]
    print(f"{len(records) - len(survivors)} of {len(records)} caught; survivors:")
    for r in survivors:
        print(f"  {r['mutant']} {r['function']} line {r['line']} ({r['kind']}): {r['original']}  =>  {r['mutated']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
