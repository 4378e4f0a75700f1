"""Numba kernels of etappe: one module per game family, no pandas here.

Numba's on-disk cache only notices edits to a kernel's own file, not to the
modules it imports constants from, so the cache lives in a folder keyed by a
hash of every kernel source: any edit here starts a fresh cache.
ETAPPE_CACHE_DIR moves the parent of the keyed folders (default: etappe in
XDG_CACHE_HOME, or ~/.cache where that is unset or relative); where it
cannot be written, the system's temporary folder holds it, and a line on
stderr says so. NUMBA_CACHE_DIR, if set, is used as it is, without the key.
"""
import hashlib
import os
import sys
import tempfile
from pathlib import Path

_threads = os.environ.get("NUMBA_NUM_THREADS")
if _threads is not None and not (_threads.strip().isdigit() and int(_threads) > 0):
    # Numba's own refusal is a traceback raised while importing it, before any command could say why
    sys.exit(f"etappe: NUMBA_NUM_THREADS={_threads!r}: the number of threads to play on must be a whole number "
             "above 0; unset it to play on every core")

import numba  # noqa: E402  (after the check above)


def _cache_home() -> Path:
    """XDG_CACHE_HOME, or ~/.cache where it is unset or relative, which the
    XDG specification says to ignore: a relative one would scatter caches
    into whichever folder a command is run from."""
    value = os.environ.get("XDG_CACHE_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".cache"


def can_write(folder: Path) -> bool:
    """Make `folder` if need be and check that a file can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _private(folder: Path) -> bool:
    """Make `folder` (only we may enter it) or check that it is ours alone:
    in the shared temporary folder, anybody can make a folder of any name."""
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        status = folder.lstat()
    except OSError:
        return False
    return (folder.is_dir() and not folder.is_symlink() and status.st_mode & 0o022 == 0
            and (not hasattr(os, "getuid") or status.st_uid == os.getuid()))


def _cache_dir() -> str:
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    base = Path(os.environ.get("ETAPPE_CACHE_DIR")
                or _cache_home() / "etappe")
    keyed = f"numba-{numba.__version__}-{digest.hexdigest()[:12]}"
    if can_write(base / keyed):
        return str(base / keyed)
    # Numba's own fallbacks are the package's folder (read-only in a shared
    # install, and left behind by pip uninstall) and ~/.cache; with neither
    # writable, every command failed at import.
    user = os.getuid() if hasattr(os, "getuid") else os.getpid()
    instead = Path(tempfile.gettempdir()) / f"etappe-{user}"
    if not _private(instead):
        # Numba reads its cache index with pickle: a folder of that name that another user made (or may
        # write in) could hand us their code, so this session compiles into a fresh folder of its own
        instead = Path(tempfile.mkdtemp(prefix=f"etappe-{user}-"))
    if not can_write(instead / keyed):
        raise RuntimeError(f"etappe: no folder to keep compiled kernels in: neither {base} nor {instead} can be "
                           "written; set ETAPPE_CACHE_DIR to a folder that can")
    print(f"etappe: {base} cannot be written; compiled kernels are kept in {instead} (ETAPPE_CACHE_DIR "
          "chooses the folder)", file=sys.stderr)
    return str(instead / keyed)


if not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = _cache_dir()
