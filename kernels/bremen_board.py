"""Bremer Stadtmusikanten boards: TOML graph files -> validated numeric tables.

Format (see docs/bremen.md and boards/default.toml):

    [board]
    name = "..."
    reconstruction = true        # say so wherever results are shown
    [fields]                     # name = kind, in board order
    r00 = "start:0"              # start field of colour 0..3
    r01 = "road"                 # road, forest, bridge, house
    [links]
    chains = [["r00", "r01", "r02"], ...]   # consecutive names are linked both ways

Nothing about the geometry is hard-wired: ring_board() writes the family of
ring boards the sweep uses, the default included.
"""
from __future__ import annotations

import hashlib
import tomllib
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bremen import B_HOUSE, B_LEN, B_N, B_START, K_BRIDGE, K_FOREST, K_HOUSE, K_ROAD, K_START
from .options import toml_problem

DEFAULT_BOARD = Path(__file__).with_name("boards") / "default.toml"
MAX_DEGREE = 8
MAX_FIELDS = 0xFFFF  # moves are packed slot << 24 | animal << 16 | destination field
_KINDS = {"road": K_ROAD, "forest": K_FOREST, "bridge": K_BRIDGE, "house": K_HOUSE}


class BoardError(ValueError):
    """A board file that cannot be played; the message names file, field and problem."""


@dataclass(frozen=True)
class Board:
    name: str
    path: str
    hash: str
    reconstruction: bool
    names: tuple[str, ...]
    kind: np.ndarray    # int8 [n]
    adj: np.ndarray     # int64 [n, MAX_DEGREE], -1 padded
    deg: np.ndarray     # int64 [n]
    dist: np.ndarray    # int64 [n], fewest steps to the house (any field)
    binfo: np.ndarray   # int64 [B_LEN]

    def index(self, name: str) -> int:
        return self.names.index(name)

    @property
    def label(self) -> str:
        return f"{self.name} ({'reconstruction' if self.reconstruction else 'board'}, {Path(self.path).name}, sha256 {self.hash})"


def load_board(path: str | Path | None = None) -> Board:
    """Load and validate a board file (the default reconstruction if None)."""
    path = Path(path) if path is not None else DEFAULT_BOARD
    if path.suffix.lower() == ".parquet":
        raise BoardError(f"{path}: a run file, not a board file; `etappe report {path}` reports on it (its Run "
                         "table names the board it was played on)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BoardError(f"{path}: cannot read board file ({exc.strerror})") from exc
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is not TOML
    except UnicodeDecodeError:
        raise BoardError(f"{path}: not a board file (a board is TOML text, UTF-8)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BoardError(f"{path}: not valid TOML ({toml_problem(exc, text)})") from exc
    # the hash of the text as a design's is (runio.file_hash): one board whatever its line ends or byte-order
    # mark, so a copy checked out on Windows resumes and pairs with the same runs
    lines = text.replace("\r\n", "\n").replace("\r", "\n")
    return _build(data, str(path), hashlib.sha256(lines.encode("utf-8")).hexdigest()[:16])


def _build(data: dict, where: str, digest: str) -> Board:
    def fail(problem: str, field: str | None = None):
        at = f"field '{field}': " if field is not None else ""
        raise BoardError(f"{where}: {at}{problem}")

    unknown = set(data) - {"board", "fields", "links"}
    if {"design", "cards"} <= set(data):  # the tables of a race deck design (docs/designs.md)
        fail("this is a deck design of the race games, not a Bremen board; `etappe decks validate` checks it")
    if unknown:
        fail(f"unknown table(s) {', '.join(map(repr, sorted(unknown)))}; a board file has [board], [fields] and "
             "[links]")
    meta = data.get("board", {})
    if not isinstance(meta, dict):
        fail(f"[board] must be a table (name, reconstruction), got {meta!r}")
    unknown = set(meta) - {"name", "reconstruction", "generator"}
    if unknown:
        fail(f"unknown [board] key(s) {sorted(unknown)}; known: generator, name, reconstruction")
    if "name" in meta and not (isinstance(meta["name"], str) and meta["name"]):
        fail(f"[board] name must be a non-empty string, got {meta['name']!r}")
    if "reconstruction" in meta and not isinstance(meta["reconstruction"], bool):
        fail(f"[board] reconstruction must be true or false, got {meta['reconstruction']!r}")
    fields = data.get("fields")
    if not isinstance(fields, dict):
        fail("no [fields] table")
    if not fields:
        fail("the [fields] table is empty; a board needs its fields (docs/bremen.md)")
    names = list(fields)
    if len(names) > MAX_FIELDS:
        fail(f"{len(names)} fields, at most {MAX_FIELDS} (a move packs its destination field in 16 bits)")
    index = {n: i for i, n in enumerate(names)}
    kind = np.zeros(len(names), np.int8)
    starts = {}
    houses = []
    for name, spec in fields.items():
        if not isinstance(spec, str):
            fail(f"kind must be a string, got {spec!r}", name)
        if spec.startswith("start:"):
            colour = spec[6:]
            if colour not in ("0", "1", "2", "3"):
                fail(f"start colour must be 0..3, got {colour!r}", name)
            if int(colour) in starts:
                fail(f"second start field of colour {colour} (first: '{starts[int(colour)]}')", name)
            starts[int(colour)] = name
            kind[index[name]] = K_START + int(colour)
        elif spec in _KINDS:
            kind[index[name]] = _KINDS[spec]
            if spec == "house":
                houses.append(name)
        else:
            fail(f"unknown kind {spec!r} (road, forest, bridge, house, start:<colour>)", name)
    for colour in range(4):
        if colour not in starts:
            fail(f"start field of colour {colour} missing")
    if len(houses) != 1:
        fail(f"exactly one house needed, found {len(houses)}: {houses}")

    neighbours: list[list[int]] = [[] for _ in names]
    links = data.get("links", {})
    if not isinstance(links, dict):
        fail(f"[links] must be a table holding chains = [[...], ...], got {links!r}")
    unknown = set(links) - {"chains"}
    if unknown:
        fail(f"unknown [links] key(s) {sorted(unknown)}; known: chains")
    chains = links.get("chains")
    if not isinstance(chains, list) or not chains:
        fail("no [links] chains")
    for chain in chains:
        if not isinstance(chain, list) or len(chain) < 2:
            fail(f"a link chain needs at least two field names, got {chain!r}")
        for k, name in enumerate(chain):
            if not isinstance(name, str):
                fail(f"a link chain holds field names (strings), got {name!r} in {chain!r}")
            if name not in index:  # the chain around the name: the first three could miss it
                fail(f"link to unknown field: not in [fields] (chain {_around(chain, k)})", name)
        for u, v in zip(chain, chain[1:]):
            if u == v:
                fail("linked to itself", u)
            i, j = index[u], index[v]
            if j not in neighbours[i]:
                neighbours[i].append(j)
                neighbours[j].append(i)
    for i, name in enumerate(names):
        if len(neighbours[i]) > MAX_DEGREE:
            fail(f"{len(neighbours[i])} links, at most {MAX_DEGREE}", name)
        if kind[i] == K_BRIDGE and len(neighbours[i]) < 2:
            fail(f"bridge links {len(neighbours[i])} field(s); a bridge must join two", name)
        if not neighbours[i]:
            fail("not linked to anything", name)
    house = index[houses[0]]
    if not any(kind[j] == K_FOREST for j in neighbours[house]):
        fail("the house has no forest neighbour: the robber could never leave", houses[0])
    for colour, name in sorted(starts.items()):
        # animals never enter foreign start fields or pass through the house
        seen = _bfs(neighbours, index[name], lambda j: kind[j] < K_START and j != house)
        entries = [j for j in seen if house in neighbours[j]]
        if not entries:
            fences = sorted(names[f] for j in seen for f in neighbours[j] if kind[f] >= K_START and f != index[name])
            why = (f": the walk from it ends at {', '.join(dict.fromkeys(fences))}, start field(s) of other colours, "
                   "which animals never enter" if fences else ": no chain of links joins them")
            fail(f"house unreachable from the start field of colour {colour}{why}", name)
        if all(kind[j] == K_BRIDGE for j in entries):
            # only a full pyramid enters the house, and a carrying animal never enters a bridge
            fail(f"house reachable from the start field of colour {colour} only from a bridge, which a full "
                 "pyramid never enters: nobody could storm it", name)

    adj = np.full((len(names), MAX_DEGREE), -1, np.int64)
    for i, ns in enumerate(neighbours):
        adj[i, : len(ns)] = ns
    deg = np.array([len(ns) for ns in neighbours], np.int64)
    dist = np.full(len(names), 10**6, np.int64)
    for j, d in _bfs(neighbours, house, lambda j: True, depth=True).items():
        dist[j] = d
    binfo = np.zeros(B_LEN, np.int64)
    binfo[B_HOUSE] = house
    for colour, name in starts.items():
        binfo[B_START + colour] = index[name]
    binfo[B_N] = len(names)
    return Board(
        name=str(meta.get("name", Path(where).stem)),
        path=where,
        hash=digest,
        reconstruction=bool(meta.get("reconstruction", False)),
        names=tuple(names),
        kind=kind,
        adj=adj,
        deg=deg,
        dist=dist,
        binfo=binfo,
    )


def house_steps(board: Board, colour: int, carrying: bool = False) -> int | None:
    """Fewest steps from the colour's start field to the house, never entering
    another colour's start field (as the checks of load_board) nor, when
    `carrying` (a stack, as a storming pyramid), a bridge; None: no way."""
    kind, house = board.kind, int(board.binfo[B_HOUSE])
    start = int(board.binfo[B_START + colour])
    neighbours = [list(board.adj[i, : board.deg[i]]) for i in range(len(board.names))]
    seen = _bfs(neighbours, start, lambda j: kind[j] < K_START and j != house
                and not (carrying and kind[j] == K_BRIDGE), depth=True)
    steps = [d + 1 for j, d in seen.items() if house in neighbours[j]]
    return min(steps) if steps else None


def _around(chain: list, k: int) -> str:
    """Chain item k with its neighbours: [..., 'r02', 'b0', 'm02', ...]."""
    part = [repr(n) for n in chain[max(k - 1, 0): k + 2]]
    return "[" + ", ".join(["..."] * (k > 1) + part + ["..."] * (k + 2 < len(chain))) + "]"


def _bfs(neighbours, source, passable, depth=False):
    """Fields reachable from source entering only passable ones (source always)."""
    seen = {source: 0}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in neighbours[u]:
            if v not in seen and passable(v):
                seen[v] = seen[u] + 1
                queue.append(v)
    return seen if depth else set(seen)


def ring_board(road: int = 24, middle: int = 16, inner: int = 8, road_links: int = 3,
               middle_links: int = 0, house_links: int = 1, bridges: tuple[int, ...] = (0, 2),
               name: str | None = None) -> str:
    """TOML text of a three-ring board; the defaults give the documented reconstruction.

    road: outer ring length (a multiple of 4; starts on the corners 0, road/4, ...).
    middle, inner: forest ring lengths (multiples of 4).
    road_links: offset from each corner of the road field linked to the middle
    ring (the middle of each side when road/8), 1 to road/4 - 1: a road field
    between two corners, which are start fields. middle_links: offset of the
    four middle-to-inner links (0 to middle/4 - 1); house_links: offset of the
    four inner fields linked to the house (0 to inner/4 - 1). An offset outside
    its range is refused: it would only name a board in range (or, for
    road_links, put the links on the start fields). bridges: which of the four
    road links (0..3) are bridges.
    """
    for label, n in (("road", road), ("middle", middle), ("inner", inner)):
        if n % 4 or n < 8:
            raise ValueError(f"{label} ring length must be a multiple of 4 and >= 8, got {n}")
    side_r, side_m, side_i = road // 4, middle // 4, inner // 4
    if not 1 <= road_links < side_r:
        raise ValueError(f"road_links {road_links}: the road-to-forest links leave from a road field between two "
                         f"corners (start fields), so 1 to {side_r - 1} on a road of {road}")
    for label, offset, side, ring in (("middle_links", middle_links, side_m, "middle"),
                                      ("house_links", house_links, side_i, "inner")):
        if not 0 <= offset < side:
            raise ValueError(f"{label} {offset}: an offset within a quarter of the {ring} ring, so 0 to {side - 1} "
                             f"on a ring of {side * 4}")
    name = name or f"ring-r{road}-m{middle}-i{inner}-l{road_links}{middle_links}{house_links}"
    w = len(str(max(road, middle, inner) - 1))
    r = [f"r{i:0{w}d}" for i in range(road)]
    m = [f"m{i:0{w}d}" for i in range(middle)]
    n = [f"i{i:0{w}d}" for i in range(inner)]
    lines = [
        "# Generated by etappe.kernels.bremen_board.ring_board: a guess at the",
        "# geometry, not the published board (no source documents it).",
        "[board]",
        f'name = "{name}"',
        "reconstruction = true",
        f"generator = {{ road = {road}, middle = {middle}, inner = {inner}, road_links = {road_links}, "
        f"middle_links = {middle_links}, house_links = {house_links}, bridges = {list(bridges)} }}",
        "",
        "[fields]",
    ]
    for i, f in enumerate(r):
        lines.append(f'{f} = "{"start:" + str(i // side_r) if i % side_r == 0 else "road"}"')
    lines += [f'{f} = "forest"' for f in m + n]
    lines += [f'b{k} = "bridge"' for k in bridges]
    lines += ['house = "house"', "", "[links]", "chains = ["]
    lines.append(f"  {r + [r[0]]},")
    lines.append(f"  {m + [m[0]]},")
    lines.append(f"  {n + [n[0]]},")
    for k in range(4):
        road_f = r[(k * side_r + road_links) % road]
        mid_f = m[(k * side_m + side_m // 2) % middle]
        if k in bridges:
            lines.append(f'  ["{road_f}", "b{k}", "{mid_f}"],')
        else:
            lines.append(f'  ["{road_f}", "{mid_f}"],')
    for k in range(4):
        lines.append(f'  ["{m[(k * side_m + middle_links) % middle]}", "{n[(k * side_i) % inner]}"],')
    for k in range(4):
        lines.append(f'  ["{n[(k * side_i + house_links) % inner]}", "house"],')
    lines.append("]")
    return "\n".join(lines).replace("'", '"') + "\n"
