"""User policies of any game: a function of the user's, compiled against the
game's published signature (kernels/race_user.py: the race games;
kernels/bremen.py, USER_POLICY_SIGNATURE: Bremer Stadtmusikanten).

Every user function is compiled to its game's one signature and passed to
the kernel in a tuple of first-class functions of fixed length, so the
kernel compiles once and is cached.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
from pathlib import Path

from numba import njit, types
from numba.core.errors import NumbaError


class UserPolicyError(ValueError):
    pass


def source_hash(spec: str) -> str:
    """The hash of the file of `path/to/file.py:function` ("" if it is gone):
    it tells runs of an edited policy apart (resume, replay)."""
    source = Path(spec.rpartition(":")[0])
    return hashlib.sha256(source.read_bytes()).hexdigest()[:16] if source.is_file() else ""


def compile_user_policy(spec: str, signature, parameter_names: tuple[str, ...]):
    """`path/to/file.py:function` -> the function compiled to `signature`
    (int64 return, the move's index), whose parameters are `parameter_names`."""
    path_text, _, name = spec.rpartition(":")
    path = Path(path_text)
    if not path_text.endswith(".py") or not name:
        raise UserPolicyError(f"user policy {spec!r}: expected path/to/file.py:function")
    if not path.exists():
        raise UserPolicyError(f"user policy {spec!r}: no file {path}")
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
    if not callable(python_function):
        raise UserPolicyError(f"user policy {spec!r}: {name!r} is not a function")
    parameters = list(inspect.signature(python_function).parameters)
    if len(parameters) != len(parameter_names):
        raise UserPolicyError(
            f"user policy {spec!r}: takes ({', '.join(parameters)}), but a policy takes "
            f"({', '.join(parameter_names)}) and returns the index of its move")
    written = f"int64 {name}({', '.join(parameter_names)})"
    try:
        compiled = njit(signature)(python_function)
    except NumbaError as exc:
        first = str(exc).strip().splitlines()
        raise UserPolicyError(
            f"user policy {spec!r} does not compile to the policy signature {written}: {' '.join(first[:6])}") from None
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
