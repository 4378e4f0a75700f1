"""kernels/jit.py: the bit helper the move generators iterate hands with,
plain and compiled, and the optional part that keeps the look-ahead out of
runs that do not play it; where the kernel cache goes."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from numba import njit, types

from etappe.kernels.jit import lowest_set_bit, optional_part


@njit
def _compiled_lowest_set_bit(x):
    return lowest_set_bit(x)


def test_lowest_set_bit_plain_and_compiled():
    # the index of the lowest 1 bit: 1 -> 0, 0b1000 -> 3, 0b1100 -> 2, 2**40 + 2**41 -> 40, the sign bit -> 63
    cases = {1: 0, 0b1000: 3, 0b1100: 2, 2**40 + 2**41: 40, 2**62 + 1: 0}
    for x, index in cases.items():
        assert lowest_set_bit(x) == index
        assert _compiled_lowest_set_bit(np.int64(x)) == index
    assert _compiled_lowest_set_bit(np.uint64(2**63)) == 63


def test_an_optional_part_is_compiled_only_when_a_run_needs_it():
    signature = types.int64(types.int64)

    def part(x):
        return x + 1

    @njit(signature)
    def stand_in(x):
        return -1

    argument = optional_part(signature, part, stand_in)
    assert argument(False) == (stand_in,)  # nothing compiled for a run without the part
    (compiled,) = argument(True)
    assert compiled(41) == 42 and compiled is argument(True)[0]  # compiled once, then the same function
    assert compiled.signatures == [signature.args]


def _cache_folder(tmp_path, **environment):
    """The kernel cache folder a fresh process picks, and what it says on stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("ETAPPE_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env |= {"TMPDIR": str(tmp_path / "tmp"), **environment}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-c", "import etappe.kernels, numba; print(numba.config.CACHE_DIR)"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), done.stderr


def test_the_kernel_cache_goes_where_it_can_be_written(tmp_path):
    # README: under ETAPPE_CACHE_DIR (or XDG_CACHE_HOME/etappe), in a folder keyed by the sources; where that
    # cannot be written (a shared install's user without a home of their own) the temporary folder holds
    # it, with a line on stderr, where every command used to fail at import with Numba's traceback
    folder, said = _cache_folder(tmp_path, ETAPPE_CACHE_DIR=str(tmp_path / "cache"))
    assert folder.startswith(str(tmp_path / "cache" / "numba-")) and said == ""
    folder, said = _cache_folder(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert folder.startswith(str(tmp_path / "xdg" / "etappe" / "numba-")) and said == ""
    (tmp_path / "a_file").write_text("")  # a folder inside a file cannot be made, not even by root
    folder, said = _cache_folder(tmp_path, ETAPPE_CACHE_DIR=str(tmp_path / "a_file" / "cache"))
    assert folder.startswith(str(tmp_path / "tmp" / f"etappe-{os.getuid()}" / "numba-"))
    assert said == (f"etappe: {tmp_path / 'a_file' / 'cache'} cannot be written; compiled kernels are kept in "
                    f"{tmp_path / 'tmp' / f'etappe-{os.getuid()}'} (ETAPPE_CACHE_DIR chooses the folder)\n")


def test_a_relative_xdg_cache_home_is_ignored_as_the_xdg_specification_says(tmp_path):
    # a relative XDG_CACHE_HOME put the cache in whichever folder a command ran from
    folder, said = _cache_folder(tmp_path, XDG_CACHE_HOME="xdg", HOME=str(tmp_path / "home"))
    assert folder.startswith(str(tmp_path / "home" / ".cache" / "etappe" / "numba-")) and said == ""


def test_a_thread_count_numba_cannot_take_is_refused_in_words(tmp_path):
    env = {**os.environ, "NUMBA_NUM_THREADS": "0"}
    done = subprocess.run([sys.executable, "-m", "etappe.cli", "decks", "list"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr == ("etappe: NUMBA_NUM_THREADS='0': the number of threads to play on must be a whole "
                           "number above 0; unset it to play on every core\n")


def test_the_temporary_kernel_cache_is_never_a_folder_others_may_write(tmp_path):
    # Numba reads its cache index with pickle: a folder etappe-UID in the shared temporary folder that
    # another user made, or that anybody may write in, could hand this user their code. It is passed over
    # for a fresh folder of this session's own.
    (tmp_path / "a_file").write_text("")
    unwritable = {"ETAPPE_CACHE_DIR": str(tmp_path / "a_file" / "cache")}
    planted = tmp_path / "tmp" / f"etappe-{os.getuid()}"
    planted.mkdir(parents=True)
    planted.chmod(0o777)
    folder, said = _cache_folder(tmp_path, **unwritable)
    assert not folder.startswith(str(planted) + os.sep)
    made = Path(folder).parent
    assert made.parent == tmp_path / "tmp" and made.name.startswith(f"etappe-{os.getuid()}-")
    assert made.stat().st_mode & 0o077 == 0 and f"compiled kernels are kept in {made} " in said
    # the folder it makes itself is its own alone, and used again
    planted.rmdir()
    folder, _ = _cache_folder(tmp_path, **unwritable)
    assert Path(folder).parent == planted and planted.stat().st_mode & 0o777 == 0o700
