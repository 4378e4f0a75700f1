"""User policies of any game: a function of the user's, compiled against the
game's published signature (kernels/race_user.py: the race games;
kernels/bremen.py, USER_POLICY_SIGNATURE: Bremer Stadtmusikanten).

Every user function is compiled to its game's one signature and passed to
the kernel in a tuple of first-class functions of fixed length, so the
kernel compiles once and is cached. The signature's arrays are read-only,
so a policy cannot change the game it is shown, and the function is
compiled with Numba's bounds checks, so a read past an array's end is an
IndexError, not a read of other memory.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path

from numba import njit, types


class UserPolicyError(ValueError):
    pass


def is_user_policy(spec) -> bool:
    """Whether a policy spec names a policy of your own, `path/to/file.py:function`."""
    return str(spec).strip().partition(":")[0].endswith(".py")


def source_hash(spec: str) -> str:
    """The hash of the file of `path/to/file.py:function` ("" if it is gone):
    it tells runs of an edited policy apart (resume, replay)."""
    source = Path(spec.rpartition(":")[0])
    return hashlib.sha256(source.read_bytes()).hexdigest()[:16] if source.is_file() else ""


def read_only(array_type: types.Array) -> types.Array:
    """The read-only twin of a signature's array type: a policy that writes
    to its arguments does not compile ("No implementation of function
    setitem"), where it would otherwise change the game unseen."""
    return types.Array(array_type.dtype, array_type.ndim, array_type.layout, readonly=True)


def compile_user_policy(spec: str, signature, parameter_names: tuple[str, ...]):
    """`path/to/file.py:function` -> the function compiled to `signature`
    (int64 return, the move's index), whose parameters are `parameter_names`;
    once per version of the file in a process, so that seats of one policy
    share one function (and it is one policy in the records)."""
    path_text, _, name = spec.rpartition(":")
    path = Path(path_text)
    if not path_text.endswith(".py") or not name:
        raise UserPolicyError(f"user policy {spec!r}: expected path/to/file.py:function")
    if not path.is_file():
        raise UserPolicyError(f"user policy {spec!r}: no file {path}")
    version = (str(path.resolve()), name, source_hash(spec), signature)
    if version not in _compiled:
        _compiled[version] = _compile(spec, path, name, signature, parameter_names)
    return _compiled[version]


_compiled: dict[tuple, object] = {}


def _compile(spec: str, path: Path, name: str, signature, parameter_names: tuple[str, ...]):
    module_name = f"etappe_user_policy_{abs(hash(str(path.resolve())))}"
    loader = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module
    try:
        loader.loader.exec_module(module)
    except Exception as exc:  # the user's file: report whatever it raised
        raise UserPolicyError(f"user policy {spec!r}: importing {path} failed: {exc}") from None
    function = getattr(module, name, None)
    if function is None:
        raise UserPolicyError(f"user policy {spec!r}: {path} has no function {name!r}")
    python_function = getattr(function, "py_func", function)
    if not inspect.isfunction(python_function):
        raise UserPolicyError(f"user policy {spec!r}: {name!r} is not a function (a def) but a "
                              f"{type(python_function).__name__}")
    if inspect.iscoroutinefunction(python_function) or inspect.isgeneratorfunction(python_function):
        raise UserPolicyError(f"user policy {spec!r}: {name!r} is an async or generator function; a policy "
                              "is a plain def that returns the index of its move")
    parameters = list(inspect.signature(python_function).parameters)
    if len(parameters) != len(parameter_names):
        raise UserPolicyError(
            f"user policy {spec!r}: takes ({', '.join(parameters)}), but a policy takes "
            f"({', '.join(parameter_names)}) and returns the index of its move")
    written = f"int64 {name}({', '.join(parameter_names)})"
    try:
        compiled = njit(signature, boundscheck=True)(python_function)
    except Exception as exc:  # Numba's errors, and what its bytecode reader raises for what it does not take
        first = " ".join(str(exc).strip().splitlines()[:6])
        if "No conversion from none" in first:
            first += " (does some path end without a return?)"
        if "setitem(readonly array" in first:
            first = "it writes to an argument, and a policy's arguments are read-only: " + first
        raise UserPolicyError(
            f"user policy {spec!r} does not compile to the policy signature {written}: {first}") from None
    # Numba keeps the return type it infers when no path returns (a body that
    # only raises gives none), and the kernel cannot call that in its tuple.
    returns = compiled.nopython_signatures[0].return_type
    if returns != types.int64:
        raise UserPolicyError(
            f"user policy {spec!r} does not compile to the policy signature {written}: it returns {returns}, "
            "never a move index (does every path raise?)")
    # The signature casts whatever is returned to int64, silently: 0.9 would
    # become move 0. So each value returned must already be a whole number.
    for returned in _returned_types(compiled):
        if not isinstance(returned, types.Integer):
            raise UserPolicyError(
                f"user policy {spec!r} returns a {returned} on some path; a policy returns the index of its move, "
                "a whole number (int(...) if it is computed as a float)")
    return compiled


def _returned_types(compiled) -> list:
    """The types the function's return statements have before the cast to
    the signature's int64 (from Numba's typed IR)."""
    from numba.core import ir

    annotation = compiled.overloads[compiled.signatures[0]].type_annotation
    return [annotation.typemap[statement.value.value.name]
            for block in annotation.blocks.values() for statement in block.body
            if isinstance(statement, ir.Assign) and isinstance(statement.value, ir.Expr)
            and statement.value.op == "cast"]


def user_policy_tuple(compiled: list, stand_in, length: int) -> tuple:
    """The fixed-length tuple a kernel takes; unused places hold `stand_in`
    (compiled to the same signature, never called)."""
    if len(compiled) > length:
        raise UserPolicyError(f"at most {length} different user policies in one run")
    return tuple(compiled) + (stand_in,) * (length - len(compiled))


@contextmanager
def raised_in_policy(specs: list[str], error=UserPolicyError):
    """Name the user policy that raised while a kernel played: the play
    kernels raise nothing themselves, so what comes out of one with user
    policies at the table was raised in one. A parallel kernel cannot stop
    on it: it plays on and returns with the exception set, which Python
    reports as a SystemError caused by it. Either becomes `error` naming the
    policy (the one whose file raised, else all of `specs`), the exception
    and its line; the games it was in are not kept."""
    try:
        yield
    except Exception as exc:
        cause = exc.__cause__ if isinstance(exc, SystemError) and exc.__cause__ is not None else exc
        if not specs or cause is exc and isinstance(exc, SystemError):
            raise
        files = {spec: Path(spec.rpartition(":")[0]).resolve() for spec in specs}
        where = [frame for frame in traceback.extract_tb(cause.__traceback__)
                 if Path(frame.filename).resolve() in files.values()]
        line = f" ({where[-1].filename}, line {where[-1].lineno})" if where else ""
        named = [spec for spec, file in files.items() if where and file == Path(where[-1].filename).resolve()]
        who = (f"user policy {(named or specs)[0]!r}" if len(named or specs) == 1
               else f"one of the user policies {', '.join(map(repr, specs))}")
        raise error(f"{who} raised {type(cause).__name__}: {cause}{line} while playing; a policy returns the "
                    "index of its move and must not raise (an IndexError is a read past an array's end)") from None
