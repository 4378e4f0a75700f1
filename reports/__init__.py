"""Reports: one HTML page with a Markdown twin, figures drawn by matplotlib."""
import os
from pathlib import Path

import numba

from ..kernels import can_write


def _matplotlib_config() -> None:
    """Where matplotlib's own folder cannot be written (a shared install's
    user without a home folder of their own), it warned on every report and
    built its font cache anew each time (8 s): it gets one beside the kernel
    cache, which etappe has made sure can be written."""
    if os.environ.get("MPLCONFIGDIR"):
        return
    own = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "matplotlib"
    if not can_write(own):
        os.environ["MPLCONFIGDIR"] = str(Path(numba.config.CACHE_DIR) / "matplotlib")


_matplotlib_config()
