"""Run records on disk: Parquet with the run's identity in its metadata.

A long run is played in chunks. Each finished chunk is written atomically
(temporary file, then rename) into `<out>.parts/`, so an interrupted run loses
no finished work; running the same command again skips the chunks already
there (after checking they belong to the same run) and, once all are done,
joins them into `<out>` and removes the parts folder.

Work that is not a table of records (a comparison's running summaries, a
tournament's outcomes) is saved the same way as a `Checkpoint`.
"""
from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import json
import os
import pickle
import shutil
import socket
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

METADATA_KEY = b"etappe"


@contextlib.contextmanager
def numba_threads(threads: int | None):
    """Numba's threads for the work inside the `with` (None: as they are, all
    cores unless set), put back as they were after it."""
    import numba

    from etappe.kernels.options import whole

    previous = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(whole("threads", threads, 1, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


@functools.cache
def package_version() -> str:
    """The installed version and a short hash of the kernel and analysis
    sources (e.g. "0.2.0+3f2a9c1d0b7e"): what made a run's records. Runs keep
    it in their metadata and identity, so an interrupted run is not resumed,
    nor its chunks joined, by code that plays or records games differently."""
    import etappe.kernels

    try:
        installed = version("etappe")
    except PackageNotFoundError:  # running from a source tree without install
        installed = "0"
    digest = hashlib.sha256()
    for folder in (Path(etappe.kernels.__file__).parent, Path(__file__).parent):
        for source in sorted(folder.glob("*.py")):
            digest.update(source.name.encode())
            digest.update(source.read_bytes())
    return f"{installed}+{digest.hexdigest()[:12]}"


def file_hash(text: str | bytes) -> str:
    """Short SHA-256 of a rules file's bytes, for the record metadata."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:16]


def _table(frame: pd.DataFrame, metadata: dict) -> pa.Table:
    # pandas reads a frame's attrs back from the file: make them the run's
    # metadata, not the attrs of whichever chunk the joined file's schema
    # came from (a 10,000-race file said races 2000).
    frame = frame.copy(deep=False)
    frame.attrs = json.loads(json.dumps(metadata))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    merged = dict(table.schema.metadata or {})
    merged[METADATA_KEY] = json.dumps(metadata, sort_keys=True).encode("utf-8")
    return table.replace_schema_metadata(merged)


def _put_in_place(tmp: Path, path: Path) -> None:
    """Rename the written `tmp` to `path`, its bytes on disk first: after a
    power cut `path` is the old file or the whole new one, never torn."""
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _temporary(path: Path) -> Path:
    """The temporary file `path` is written as, named for this process: two
    commands writing one file at once (a slip, or machines sharing a disk)
    never write into each other's bytes."""
    return path.with_name(f"{path.name}.{socket.gethostname()}.{os.getpid()}.tmp")


def run_file_name_problem(path: Path) -> str | None:
    """Why a run file cannot be written at `path` under its own name, or
    None: pyarrow opens paths as UTF-8 text (a Latin-1 byte in a name failed
    after every game was played), and the temporary name it is written as
    (`_temporary`) must fit the file system's limit on a name."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return "the name is not UTF-8 text, which the Parquet library cannot open; give another name"
    # the longest name a run writes: the temporary of a Tape l'étape run's stages file beside it
    longest = _temporary(path.with_suffix(".stages.parquet")).name
    limit = os.pathconf(path.parent if path.parent.exists() else ".", "PC_NAME_MAX")
    if len(os.fsencode(longest)) > limit:
        return (f"the name is too long: the files beside it are written first under names such as {longest!r}, "
                f"{len(os.fsencode(longest))} bytes, over the {limit} this file system takes; give a shorter one")
    return None


def _arrow_path(path: str | os.PathLike) -> str:
    """A path as pyarrow is given it: absolute, so that a "~" the shell left
    (`--out=~/run.parquet`) names the folder etappe checked and made, not
    the home folder pyarrow would expand it to."""
    return os.path.abspath(path)


def _remove_stale_temporaries(path: Path) -> None:
    """Remove the temporary files of `path` that a killed process of this
    machine left (SIGKILL gives no chance to clean up; a joined run's can be
    gigabytes), keeping any of a process still running."""
    prefix = f"{path.name}.{socket.gethostname()}."
    for tmp in path.parent.glob(f"{glob.escape(prefix)}*.tmp"):
        pid = tmp.name[len(prefix):-len(".tmp")]
        if pid.isdigit() and not _running(int(pid)):
            tmp.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Write a whole file at once: a temporary file, then a rename, so an
    interrupted write never leaves a partial file under `path`."""
    write_all_atomic({Path(path): data})


def write_all_atomic(files: dict[Path, str | bytes]) -> None:
    """Write files that belong together (a report's HTML, Markdown and
    figures): every one to its temporary file first, and only when all are
    written (a full disk fails here) put them in place, so a failed write
    leaves the earlier set whole, never a new report.md beside an old
    report.html."""
    written = []
    try:
        for path, data in files.items():
            tmp = _temporary(path)
            written.append((path, tmp))
            try:
                tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
            except OSError as exc:
                raise OSError(f"{path}: could not be written ({exc})") from None
        for path, tmp in written:
            _put_in_place(tmp, path)
    finally:
        for _, tmp in written:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _writing(path: Path, tmp: Path):
    """Around writing `tmp` in place of `path`, then puts it in place: a
    failed write (a full disk) leaves no partial file and names the file,
    which Arrow's errors do not; an interrupted one (Ctrl-C, also while the
    bytes go to disk before the rename) leaves no partial file either."""
    try:
        yield
        _put_in_place(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(f"{path}: could not be written ({exc})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_parquet(frame: pd.DataFrame, path: str | os.PathLike, metadata: dict) -> None:
    """Write `frame` with `metadata` (JSON-able) atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    with _writing(path, tmp):
        pq.write_table(_table(frame, metadata), _arrow_path(tmp))


def read_metadata(path: str | os.PathLike) -> dict:
    try:
        schema = pq.read_schema(_arrow_path(path))
    except pa.ArrowInvalid:
        raise ValueError(f"{path}: not a Parquet run file") from None
    metadata = _etappe_metadata(schema)
    if metadata is None:
        raise ValueError(f"{path}: not an etappe run file (no etappe metadata)")
    return metadata


def row_count(path: str | os.PathLike) -> int:
    """The records in a Parquet file (from its footer: nothing else is read)."""
    return pq.ParquetFile(_arrow_path(path)).metadata.num_rows


def column_names(path: str | os.PathLike) -> list[str]:
    """The columns of a Parquet file (from its footer)."""
    return pq.read_schema(_arrow_path(path)).names


def _etappe_metadata(schema: pa.Schema) -> dict | None:
    """The run metadata an Arrow schema holds under the etappe key, or None."""
    raw = (schema.metadata or {}).get(METADATA_KEY)
    return json.loads(raw) if raw is not None else None


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """Return (records, metadata) of a run file; only `columns` if given.
    The records' attrs are the metadata too."""
    metadata = read_metadata(path)
    return _with_metadata(pq.read_table(_arrow_path(path), columns=columns), metadata), metadata


def _with_metadata(table, metadata: dict) -> pd.DataFrame:
    """`table` (an Arrow table or batch) as a DataFrame whose attrs are the
    run's metadata, from the file's etappe key: pyarrow reads attrs back
    from pandas' own metadata only from version 22 on."""
    frame = table.to_pandas()
    frame.attrs = json.loads(json.dumps(metadata))
    return frame


# The module that reads each game's records (their columns differ from game to game).
GAME_MODULES = {"race": "etappe.analysis.race_summary", "bremen": "etappe.analysis.bremen",
                "etape": "etappe.analysis.etape"}
GAME_NAMES = {"race": "a race design", "bremen": "Bremer Stadtmusikanten", "etape": "Tape l'étape"}
# What the games without positions or a play-by-play offer instead (docs/python.md)
NO_PLAY_BY_PLAY = {
    "bremen": "Bremer Stadtmusikanten has no positions or play-by-play; from Python, "
              "bremen.simulate(games=1, first_game=N, ...) plays game N's record again and bremen.Game sets up a "
              "position by hand (docs/python.md)",
    "etape": "Tape l'étape has no positions or play-by-play; from Python, etape.simulate(races=1, first_race=N, "
             "...) plays race N's records again (docs/python.md)",
}


def check_game(meta: dict, game: str, what: str = "the frame is") -> None:
    """Refuse the records of another game by name, and records without their
    run's metadata, not with an error from deep inside a summary."""
    if not meta:
        raise ValueError("no run metadata with these records (their attrs are empty: pd.concat of two runs and "
                         "some other pandas operations drop them): keep one run per frame, or pass the run's "
                         "metadata (read_parquet's second value, or the attrs of the frame simulate returned)")
    other = meta.get("game")
    if other is not None and other != game:
        raise ValueError(f"{what} from the {other!r} game, not {game!r}: read it with "
                         f"{GAME_MODULES.get(other, 'its own game module')}")


# Rows of a run file read at once: one saved chunk of a race run (50,000
# games), two of a Bremen run; more costs memory and saves no time.
BATCH_ROWS = 50_000


def iter_parquet(path: str | os.PathLike, batch_rows: int = BATCH_ROWS, columns: list[str] | None = None):
    """Yield the records of a run file (`columns` only, if given) in
    DataFrame chunks of at most `batch_rows` rows, in order (bounded memory).

    Whole row groups (a run's saved chunks) are read together while they
    fit in `batch_rows`, and a larger one is read in slices: pyarrow's
    iter_batches over the whole file reads ahead and holds several row
    groups' columns, 2.8 GB of memory for a 2-million-game Stap op run (530
    MB on disk), against 0.7 GB read this way; and a run of small saved
    chunks (Tape l'étape's 2,000 races) read one at a time costs its
    summary 40 % more time in per-chunk work."""
    parquet = pq.ParquetFile(_arrow_path(path))
    metadata = _etappe_metadata(parquet.schema_arrow) or {}
    together: list[int] = []
    rows = 0
    for group in range(parquet.metadata.num_row_groups):
        size = parquet.metadata.row_group(group).num_rows
        if together and rows + size > batch_rows:
            yield _with_metadata(parquet.read_row_groups(together, columns=columns), metadata)
            together, rows = [], 0
        if size > batch_rows:
            for batch in parquet.iter_batches(batch_size=batch_rows, row_groups=[group], columns=columns):
                yield _with_metadata(batch, metadata)
        else:
            together.append(group)
            rows += size
    if together:
        yield _with_metadata(parquet.read_row_groups(together, columns=columns), metadata)


def differences(earlier: dict, mine: dict, prefix: str = "", versus: str = ", not ") -> list[str]:
    """What differs between two run identities, field by field ("seed 1,
    not 2"; nested fields as "a.seed", list items as "policies[1].name";
    `versus` joins the two values). Fields only one side has are left out:
    a finished file's metadata holds more than the identity."""
    found = []
    for key in sorted(mine):
        if key not in earlier or earlier[key] == mine[key]:
            continue
        a, b = earlier[key], mine[key]
        if isinstance(a, dict) and isinstance(b, dict):
            found += differences(a, b, f"{prefix}{key}.", versus)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                if isinstance(x, dict) and isinstance(y, dict):
                    found += differences(x, y, f"{prefix}{key}[{i}].", versus)
                elif x != y:
                    found.append(f"{prefix}{key}[{i}] {versus.join(brief_pair(x, y))}")
        elif isinstance(a, list) and isinstance(b, list) and max(len(json.dumps(_names(v))) for v in (a, b)) > 60:
            # long lists (policy specs by seat) cut short would show neither: their lengths say what differs
            found.append(f"{prefix}{key} {len(a)} entries{versus}{len(b)}")
        else:
            found.append(f"{prefix}{key} {versus.join(brief_pair(a, b))}")
    return found


def _one_sided(earlier: dict, mine: dict, prefix: str = "") -> list[str]:
    """The fields, at any depth, that only one of two identities has (a rule
    option given to one run only): what `differences` leaves out."""
    found = []
    for key in sorted(set(earlier) | set(mine)):
        if key not in mine:
            found.append(f"{prefix}{key} {brief_pair(earlier[key], None)[0]} before, not given now")
        elif key not in earlier:
            found.append(f"{prefix}{key} not given before, {brief_pair(None, mine[key])[1]} now")
        elif isinstance(earlier[key], dict) and isinstance(mine[key], dict):
            found += _one_sided(earlier[key], mine[key], f"{prefix}{key}.")
    return found


def _names(value):
    """A list of named things (policies) by their names, else the value."""
    if isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        return ",".join(str(v["name"]) for v in value)
    return value


def brief_pair(a, b, width: int = 60) -> tuple[str, str]:
    """Two differing values of a run's identity or metadata as messages show
    them: named things (policies) by their names, and long values cut alike
    from a little before where they first differ, so that the difference
    stays in view (two policy specs can be alike for their first 60 characters)."""
    x, y = (json.dumps(_names(v), sort_keys=True) for v in (a, b))
    first = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    start = max(first - 20, 0) if max(len(x), len(y)) > width else 0

    def cut(text):
        text = text if start == 0 else "..." + text[start:]
        return text if len(text) <= width else text[:width - 3] + "..."
    return cut(x), cut(y)


def another_run(what: str, earlier: dict, mine: dict) -> str:
    """The refusal of `what` (a file, a folder of chunks, a checkpoint) that
    holds another run: what differs, and that the code changed if the
    version did (the same command then cannot resume what older code played)."""
    mine = json.loads(json.dumps(mine))
    found = differences(earlier, mine) or _one_sided(earlier, mine)
    text = f"{what} ({'; '.join(found)})" if found else what
    if any(f.startswith("version ") or ".version " in f for f in found):
        text += "; it was written by other etappe code, whose records would not match this code's"
    return text + "; remove it or write to another --out"


def holds_this_run(path: Path, identity: dict) -> bool:
    """True if the run file at `path` is the run `identity` describes,
    False if there is no file. Any other file (another run, or not a run
    file) is refused with a ValueError that says what differs: another
    run's results are never overwritten."""
    if not path.exists():
        return False
    try:
        earlier = read_metadata(path)
    except (OSError, ValueError, pa.ArrowException):
        raise ValueError(f"{path} exists and is not a run file written by etappe; "
                         "remove it or write to another --out") from None
    if differences(earlier, json.loads(json.dumps(identity))):
        what = f"{path} holds another run"
        if "design_title" in earlier and earlier.get("design_hash") != identity.get("design_hash"):
            what += f", of {earlier['design_title']}"  # the hash alone does not tell the user which design
        raise ValueError(another_run(what, earlier, identity))
    return True


def finished(path: Path, identity: dict) -> bool:
    """holds_this_run, and where the file holds the run, its chunks folder
    removed if a stop between writing the file and removing the folder left
    it behind (the file was renamed into place whole: its chunks are in it)."""
    if not holds_this_run(path, identity):
        return False
    shutil.rmtree(path.with_name(path.name + ".parts"), ignore_errors=True)
    return True


class ChunkedRun:
    """Finished chunks of one run, kept safe on disk until the run is joined.

    `identity` is everything that determines the results (game, design hash,
    policies, seed, players, games, version); parts written under another
    identity are refused instead of silently mixed in, and so is an
    existing file at `out` that is not this run (another run's results are
    never overwritten; the commands do not play a finished run again, and
    written anew it would be the same).

    The chunk size does not change the records, but it does which games a
    chunk file holds: `chunk_size` is the size asked for, and
    `self.chunk_size` the one to play in, which is that of the interrupted
    run whose chunks wait in the parts folder, whatever is asked now.
    """

    def __init__(self, out: str | os.PathLike, identity: dict, chunk_size: int | None = None):
        self.out = Path(out)
        self.identity = identity
        self.chunk_size = chunk_size
        holds_this_run(self.out, identity)
        self.parts = self.out.with_name(self.out.name + ".parts")
        if self.parts.exists() and not self.parts.is_dir():
            raise ValueError(f"{self.parts} exists and is not a folder; a run keeps its finished chunks there: "
                             "remove it or write to another --out")
        try:
            self.parts.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"cannot make {self.parts}, where the run keeps its finished chunks "
                             f"({exc.strerror}); write to another --out") from None
        stamp = self.parts / "identity.json"
        if stamp.exists() and any(self.parts.glob("chunk-*.parquet")):  # with no chunk there is nothing to keep
            earlier = json.loads(stamp.read_text())
            earlier_chunk_size = earlier.pop("chunk_size", None)
            if earlier != json.loads(json.dumps(identity)):
                raise ValueError(another_run(f"{self.parts} holds chunks of a different run", earlier, identity))
            if earlier_chunk_size is not None:
                self.chunk_size = earlier_chunk_size
        else:
            # machines sharing a disk (simulate --share) may stamp the folder at once
            tmp = _temporary(stamp)
            stamped = identity if chunk_size is None else {**identity, "chunk_size": chunk_size}
            with _writing(stamp, tmp):
                tmp.write_text(json.dumps(stamped, sort_keys=True))
        for leftover in [self.out, *self.parts.glob("chunk-*.parquet")]:
            _remove_stale_temporaries(leftover)
        self._check_chunks()

    def _part(self, index: int) -> Path:
        return self.parts / f"chunk-{index:06d}.parquet"

    def _check_chunks(self) -> None:
        """Refuse a chunk of another run, or of chunks of another size, in
        the parts folder: folders may be put together by hand from several
        machines (simulate --share)."""
        for part in sorted(self.parts.glob("chunk-*.parquet")):
            try:
                saved = read_metadata(part)
            except ValueError as exc:  # torn (a power cut) or not etappe's
                raise ValueError(f"{exc}: remove it, and the same command plays its games again") from None
            self._check_chunk(part, saved)

    def _check_chunk(self, part: Path, saved: dict) -> None:
        mine = {**json.loads(json.dumps(self.identity)), "chunk_size": self.chunk_size}
        if differences({"chunk_size": self.chunk_size, **saved}, mine):  # chunks saved before sizes were kept pass
            raise ValueError(another_run(f"{part} is a chunk of another run", saved, mine))

    def done(self, index: int) -> bool:
        return self._part(index).exists()

    @contextlib.contextmanager
    def _parts_kept(self):
        """Around reading or writing the parts folder: where it is gone, say
        why instead of "No such file": another command writing the same
        --out (the same command run twice) joined the run and removed it."""
        try:
            yield
        except OSError:
            try:
                done_elsewhere = finished(self.out, self.identity)
            except ValueError as exc:  # a command with other settings wrote the same --out meanwhile
                raise OSError(f"{exc}, written while this command played") from None
            if done_elsewhere:
                raise OSError(f"{self.out}: another command writing the same file finished this run while this "
                              "one played, and removed its chunks: the file holds the whole run, nothing is "
                              "lost") from None
            if not self.parts.is_dir():
                raise OSError(f"{self.parts}: removed while this command played (by hand, or by another "
                              "command writing the same --out); the same command plays the missing games "
                              "again") from None
            raise

    def save(self, index: int, frame: pd.DataFrame, seconds: float = 0.0) -> None:
        """Save chunk `index`, with the seconds it took to play (so a resumed
        run still reports the time of all its games) and the chunk size."""
        with self._parts_kept():
            if not self.parts.is_dir():  # not made anew by write_parquet: its chunks went into the joined file
                raise FileNotFoundError(self.parts)
            write_parquet(frame, self._part(index),
                          {**self.identity, "seconds": seconds, "chunk_size": self.chunk_size})

    def load(self, index: int) -> pd.DataFrame:
        with self._parts_kept():
            return pq.read_table(_arrow_path(self._part(index))).to_pandas()

    def seconds(self, index: int) -> float:
        with self._parts_kept():
            return float(read_metadata(self._part(index))["seconds"])

    def join(self, n_chunks: int, metadata: dict, progress=None, drop: bool = True) -> Path:
        """Join parts 0..n_chunks-1 into the output file and drop the parts
        (unless `drop` is False: a run of two files drops them once both are
        joined); `progress(1)` after each part (millions of games take seconds)."""
        tmp = _temporary(self.out)
        writer = None
        with self._parts_kept(), _writing(self.out, tmp):
            try:
                for index in range(n_chunks):
                    table = pq.read_table(_arrow_path(self._part(index)))
                    # again here: a command writing the same --out at once (another seed, say) may have put
                    # its chunk in place since the start; the file is refused, not labelled with this run
                    self._check_chunk(self._part(index), json.loads(table.schema.metadata[METADATA_KEY]))
                    if writer is None:
                        schema = _table(table.slice(0, 0).to_pandas(), metadata).schema
                        writer = pq.ParquetWriter(_arrow_path(tmp), schema)
                    writer.write_table(table.cast(schema).replace_schema_metadata(schema.metadata))
                    if progress:
                        progress(1)
            finally:
                if writer is not None:
                    writer.close()
        if drop:
            self.drop()
        return self.out

    def drop(self) -> None:
        """Remove the parts folder (its chunks are in the joined file), if
        another command writing the same file has not removed it already."""
        try:
            shutil.rmtree(self.parts)
        except FileNotFoundError:
            pass


class Checkpoint:
    """A pickled state saved atomically, refused if it belongs to another run."""

    def __init__(self, path: Path, identity: dict):
        self.path = path
        self.identity = identity

    def load(self) -> dict | None:
        if not self.path.exists():
            return None
        try:
            with open(self.path, "rb") as handle:
                saved = pickle.load(handle)
            earlier, state = saved["identity"], saved["state"]
        except Exception as exc:  # a damaged or foreign file: unpickling can fail in many ways
            raise ValueError(f"{self.path}: not a checkpoint etappe can read ({type(exc).__name__}); "
                             "remove it to start the run afresh") from None
        if earlier != self.identity:
            raise ValueError(another_run(f"{self.path} belongs to a different run", earlier, self.identity))
        return state

    def save(self, state: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temporary(self.path)
        with _writing(self.path, tmp), open(tmp, "wb") as handle:
            pickle.dump({"identity": self.identity, "state": state}, handle)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)
