"""Numba kernels of etappe: one module per game family, no pandas here.

Numba's on-disk cache only notices edits to a kernel's own file, not to the
modules it imports constants from, so the cache lives in a folder keyed by a
hash of every kernel source: any edit here starts a fresh cache.
ETAPPE_CACHE_DIR moves the parent of the keyed folders; NUMBA_CACHE_DIR, if
set, is used as it is, without the key.
"""
import hashlib
import os
from pathlib import Path

import numba


def _cache_dir() -> str:
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    base = os.environ.get("ETAPPE_CACHE_DIR") or Path.home() / ".cache" / "etappe"
    return str(Path(base) / f"numba-{numba.__version__}-{digest.hexdigest()[:12]}")


if not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = _cache_dir()
