"""The `etappe` command line (cli/main.py).

Run as the `etappe` command, importing it takes seconds (pandas, Numba and
the cached kernels): Ctrl-C then would print a Python traceback. Until
main() starts (and puts Python's own handler back), it ends the command
with one line instead: nothing has been done yet.
"""
import os
import signal
import sys
import threading


# Set by a Ctrl-C while starting. Numba compiles at import time, and an exception raised inside its
# compile callbacks is swallowed there, so main() checks this before doing anything.
interrupted = False


def _interrupted_while_starting(signum, frame):
    global interrupted
    if not interrupted:
        sys.stderr.write("interrupted. Nothing was done: the command was still starting.\n")
    interrupted = True
    raise SystemExit(130)


if (os.path.basename(sys.argv[0] if sys.argv else "") == "etappe"
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
    signal.signal(signal.SIGINT, _interrupted_while_starting)
