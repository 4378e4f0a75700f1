"""Bremen boards written from scratch: etappe promises correct games, records
and a report for any board file a user writes (docs/bremen.md, "Board file
format"). A strategy writes whole board files, valid by construction from the
format's rules alone, over odd topologies; each must load, play cleanly under
the built-in policies, keep the records' accounting (docs/bremen.md
"Records", the rules page) and report without a missing number."""
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from etappe.analysis import bremen as A  # noqa: E402
from etappe.analysis.runio import write_parquet  # noqa: E402
from etappe.kernels import bremen as K  # noqa: E402
from etappe.kernels.bremen_board import MAX_DEGREE, BoardError, load_board  # noqa: E402
from etappe.reports.bremen import build_report  # noqa: E402

from test_generated_designs import no_number_missing  # noqa: E402

AWKWARD_NAMES = ("Wald 1", "Straße", "Ω", "a.b", "x=y", "[b]", '"q"', "r00 ", "7", "-", "ä/ö", "#", "Haus")
PASSABLE = ("road", "forest", "bridge")  # the kinds of the fields between the start fields and the house


@st.composite
def boards(draw) -> tuple[str, dict]:
    """(TOML text, what was built: kinds by name, links) of a board valid by
    docs/bremen.md: the four start fields, one house with a forest
    neighbour, every field linked (at most MAX_DEGREE links), every bridge
    joining two fields or more, the house reachable from every start field
    without entering another start field or passing the house, and from a
    forest field there (a full pyramid never enters a bridge). Around that:
    dead ends, forests, bridges, start fields linked to each other or to the
    house, a part of the board nothing reaches, and links up to the limit."""
    names: list[str] = []
    kinds: dict[str, str] = {}
    links: set[frozenset] = set()
    awkward = iter(draw(st.permutations(AWKWARD_NAMES)))

    def degree(name):
        return sum(name in link for link in links)

    def field(kind, prefix):
        name = f"{prefix}{len(names)}"
        if draw(st.integers(0, 5)) == 0:
            name = next(awkward, name)
        names.append(name)
        kinds[name] = kind
        return name

    def link(u, v, spare=0):
        """Link u and v unless one would be left fewer than `spare` free links."""
        if u != v and degree(u) < MAX_DEGREE - spare and degree(v) < MAX_DEGREE - spare:
            links.add(frozenset((u, v)))
            return True
        return False

    def kind():
        return draw(st.sampled_from(["road", "forest", "forest", "bridge"]))

    # The house and its forest neighbours (the robber's way out).
    house = field("house", "h")
    core = [field("forest", "f") for _ in range(draw(st.integers(1, MAX_DEGREE)))]
    for f in core:
        link(house, f)
    # A connected middle: each new field links to one already there (a tree),
    # then extra links make loops. Until the start fields are linked in, every
    # field keeps a free link for them.
    middle = list(core)
    for _ in range(draw(st.integers(0, 40))):
        new = field(kind(), "m")
        anchors = [m for m in middle if degree(m) < MAX_DEGREE - 1]  # never empty: a tree has leaves
        link(new, draw(st.sampled_from(anchors)), spare=1)
        middle.append(new)
    for _ in range(draw(st.integers(0, 30))):
        link(draw(st.sampled_from(middle)), draw(st.sampled_from(middle)), spare=1)
    if draw(st.booleans()):  # some road or bridge fields next to the house too
        for m in draw(st.lists(st.sampled_from(middle), max_size=3)):
            link(house, m, spare=1)
    # Long dead ends off the middle (a bridge left with one link gets another at the end).
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.sampled_from(middle))
        for _ in range(draw(st.integers(1, 12))):
            new = field(kind(), "d")
            if not link(at, new, spare=1):
                names.pop()
                del kinds[new]
                break
            at = new
            middle.append(new)
    # The start fields: each on a chain (maybe empty) into the middle, maybe
    # also linked to another start field or the house.
    starts = []
    for colour in draw(st.permutations(range(4))):
        start = field(f"start:{colour}", "s")
        chain = [start]
        for _ in range(draw(st.integers(0, 6))):
            chain.append(field(kind(), "c"))
            link(chain[-2], chain[-1])
        entries = [m for m in middle if degree(m) < MAX_DEGREE]
        if len(chain) == 1 and degree(house) < MAX_DEGREE and draw(st.integers(0, 7)) == 0:
            entries = [house]
        link(chain[-1], draw(st.sampled_from(entries)))
        middle += chain[1:]
        starts.append(start)
    for _ in range(draw(st.integers(0, 2))):
        link(draw(st.sampled_from(starts)), draw(st.sampled_from(starts + [house])))
    if draw(st.integers(0, 4)) == 0:  # a part of the board nothing reaches
        a, b = field("forest", "x"), field(draw(st.sampled_from(PASSABLE)), "x")
        link(a, b)
        if kinds[b] == "bridge":
            link(b, field("road", "x"))
    # Fill some field up to the most links a field may have.
    if draw(st.booleans()):
        hub = draw(st.sampled_from(middle))
        while degree(hub) < MAX_DEGREE:
            link(hub, field("road", "e"))
    # A bridge at the end of a chain joins one field: link it once more.
    for name in list(names):
        if kinds[name] == "bridge" and degree(name) < 2:
            link(name, field("road", "e"))

    order = draw(st.permutations(names))  # board order is free
    chains = _chains(draw, links)
    text = _board_toml(draw, order, kinds, chains)
    return text, {"kinds": kinds, "links": links, "house": house, "starts": starts}


def _chains(draw, links) -> list[list[str]]:
    """The links as chains of consecutive names, walked from a random link;
    some links written twice, or in both directions (a link is a link)."""
    left = [tuple(link) for link in draw(st.permutations(sorted(links, key=sorted)))]
    chains = []
    while left:
        chain = list(left.pop())
        while True:
            step = next((link for link in left if chain[-1] in link), None)
            if step is None or draw(st.integers(0, 3)) == 0:
                break
            left.remove(step)
            chain.append(step[0] if step[1] == chain[-1] else step[1])
        chains.append(chain)
    for chain in draw(st.lists(st.sampled_from(chains), max_size=2)):
        chains.append(chain[::-1])
    return chains


def _board_toml(draw, order, kinds, chains) -> str:
    head = []
    if draw(st.booleans()):
        head.append(f"name = {json.dumps(draw(st.sampled_from(['mein Brett', 'Ω-board', 'x|y', '<b>'])))}")
    if draw(st.booleans()):
        head.append(f"reconstruction = {json.dumps(draw(st.booleans()))}")
    text = "[board]\n" + "".join(line + "\n" for line in head) + "\n[fields]\n"
    text += "".join(f"{json.dumps(n, ensure_ascii=False)} = \"{kinds[n]}\"\n" for n in order)
    written = ",\n  ".join("[" + ", ".join(json.dumps(n, ensure_ascii=False) for n in c) + "]" for c in chains)
    return text + f"\n[links]\nchains = [\n  {written},\n]\n"


# Rule options (docs/bremen.md "Rule options") that matter on any board, each
# valid with the others; the ones that need another option or 3 players follow.
RULE_OPTIONS = {
    "harder": st.booleans(), "turbulent": st.booleans(),
    "tie_rule": st.sampled_from(["mover_first", "mover_last"]),
    "foreign_onto": st.sampled_from(["direct", "stack"]), "bridge_stack": st.booleans(),
    "target": st.sampled_from([1, 2, 3, 5, 7]), "robber_stop": st.sampled_from(["anywhere", "forest"]),
    "robber_field": st.sampled_from(["open", "closed"]), "both_dice": st.sampled_from(["when_possible", "free"]),
    "first_to_target": st.sampled_from(["most_points", "last_on_turn"]),
}


@st.composite
def rule_options(draw, players: int) -> dict:
    options = {k: draw(v) for k, v in RULE_OPTIONS.items() if draw(st.booleans())}
    if options.get("harder") and draw(st.booleans()):
        options["harder_scope"] = draw(st.sampled_from(["move", "roll"]))
    if options.get("turbulent") and draw(st.booleans()):
        options["turbulent_no_fit"] = draw(st.sampled_from(["fewest", "home"]))
    if options.get("both_dice", "when_possible") == "when_possible" and draw(st.booleans()):
        options["one_die"] = draw(st.sampled_from(["either", "larger"]))
    if players == 3 and draw(st.booleans()):
        options["neutral_storm_point"] = draw(st.sampled_from(["nobody", "mover"]))
    return options


@st.composite
def setups(draw):
    text, built = draw(boards())
    players = draw(st.sampled_from([2, 3, 4]))
    return text, built, players, draw(rule_options(players))


def write_board(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("boards") / "generated.toml"
    path.write_text(text, encoding="utf-8")
    return path


def check_board(board, built) -> None:
    """The loaded tables are the board written."""
    assert set(board.names) == set(built["kinds"])
    for i, name in enumerate(board.names):
        neighbours = {board.names[j] for j in board.adj[i][: board.deg[i]]}
        assert neighbours == {n for link in built["links"] if name in link for n in link if n != name}
    assert board.names[board.binfo[K.B_HOUSE]] == built["house"]
    assert [built["kinds"][board.names[board.binfo[K.B_START + c]]] for c in range(4)] == [f"start:{c}" for c in range(4)]


def check_position(g: A.Game) -> None:
    """Between turns (docs/bremen.md, the rules page): 16 animals, four of
    each colour, one of each size per stack (the table's layout), none in
    the house, the robber in its area (forest, bridge, house), points the
    sum of their sources, and every animal on a start field is at home
    there (only the first move may land on the own start field, and the
    second must carry it off)."""
    assert g.errors() == 0, f"state invariant {g.errors()} broken at turn {g.state[K.S_TURNS]}"
    board, state = g.board, g.state
    stacks = {name: g.stack(name) for name in board.names}
    assert sorted(c for s in stacks.values() for c, _ in s) == sorted(list(range(4)) * 4)
    assert not stacks[board.names[board.binfo[K.B_HOUSE]]]
    assert board.kind[state[K.S_ROBBER]] in (K.K_FOREST, K.K_BRIDGE, K.K_HOUSE)
    for a in range(16):
        f = state[K.S_POS + a]
        if board.kind[f] >= K.K_START:
            assert state[K.S_HOME + a] == f, f"animal {a} on a start field that is not its home"


def path_ends(board, start: int, d: int, allowed, pass_house: bool = False) -> list[int]:
    """The last field of every simple path of exactly d steps from `start`
    whose fields after the start are `allowed`, passing (not ending on) no
    house unless `pass_house` (the robber): one entry per path."""
    house = board.binfo[K.B_HOUSE]
    ends = []

    def walk(path):
        if len(path) == d + 1:
            ends.append(path[-1])
            return
        if len(path) > 1 and path[-1] == house and not pass_house:
            return
        for x in board.adj[path[-1]][: board.deg[path[-1]]]:
            if x not in path and allowed(x):
                walk(path + [x])

    walk([start])
    return ends


def check_moves(g: A.Game, free: A.Game, d0: int, d1: int) -> None:
    """The legal first moves against the move rule (docs/bremen.md "Rules
    implemented"): exactly d fields along a simple path, never passing the
    house, never entering a foreign (or the neutral) start field, a carrying
    animal never on a bridge. Every move the kernel lists has such a path;
    with both_dice = free (`free`, the same position) every own animal's move
    onto an empty road or forest field off the robber's field is listed. And
    the robber has one move per simple path in its area (forest fields; it
    may pass the bridges and its house), as the kernel counts them."""
    board, state, seat = g.board, g.state, g.seat
    owner = [int(state[K.S_OWNER + c]) for c in range(4)]

    def enterable(carrying):
        def allowed(x):
            k = board.kind[x]
            return not ((k >= K.K_START and owner[k - K.K_START] != seat) or (carrying and k == K.K_BRIDGE))
        return allowed

    def reference(colour, size, die):
        """The fields the animal (with its riders) can reach in exactly `die` steps."""
        a = 4 * colour + A.SIZES[size] - 1
        f = state[K.S_POS + a]
        carrying = any(state[K.S_OCC + 4 * f + t] >= 0 for t in range(a & 3))
        if carrying and board.kind[f] == K.K_BRIDGE:
            return set()
        return set(path_ends(board, int(f), die, enterable(carrying)))

    for die, colour, size, dest in g.first_moves(d0, d1):
        assert board.index(dest) in reference(colour, size, die), (die, colour, size, dest)
    listed = free.first_moves(d0, d1)
    for die in {d0, d1}:
        for colour in (c for c in range(4) if owner[c] == seat):
            for size in A.SIZES:
                for x in reference(colour, size, die):
                    empty = all(state[K.S_OCC + 4 * x + t] < 0 for t in range(4))
                    if empty and board.kind[x] in (K.K_ROAD, K.K_FOREST) and x != state[K.S_ROBBER]:
                        assert (die, colour, size, board.names[x]) in listed, (die, colour, size, board.names[x])
    area = (K.K_FOREST, K.K_BRIDGE, K.K_HOUSE)
    robber = int(state[K.S_ROBBER])
    robber_ends = path_ends(board, robber, d0, lambda x: board.kind[x] in area, pass_house=True)
    if g.options["robber_stop"] == "forest":
        robber_ends = [x for x in robber_ends if board.kind[x] == K.K_FOREST]
    assert g.robber_paths(d0) == len(robber_ends)


def expected_winner(row, players: int, options: dict) -> int:
    """The winner by the end rule (docs/bremen.md: tie_rule, first_to_target):
    among the seats at the target, the most points (or all of them alike
    with first_to_target = last_on_turn), equal ones to the last on turn:
    the seat on turn now (mover_first) or, looking back, the one before."""
    target = options.get("target", 7)
    points = [row[f"points_s{s}"] for s in range(players)]
    at_target = [s for s in range(players) if points[s] >= target]
    if options.get("first_to_target", "most_points") == "most_points":
        at_target = [s for s in at_target if points[s] == max(points)]
    mover = (row["first_seat"] + row["turns"] - 1) % players
    back = range(players) if options.get("tie_rule", "mover_first") == "mover_first" else range(1, players + 1)
    return next((mover - b) % players for b in back if (mover - b) % players in at_target)


def check_records(df, players: int, options: dict, max_turns: int) -> None:
    """Every game's record keeps docs/bremen.md "Records" and the rules page."""
    target = options.get("target", 7)
    seats = range(players)
    for _, row in df.iterrows():
        points = [row[f"points_s{s}"] for s in seats]
        assert 1 <= row["turns"] <= max_turns and 0 <= row["first_seat"] < players
        # a turn is a roll and another for each sitting on top
        assert row["rolls"] == row["turns"] + row["extra_rolls"]
        assert row["robber_moves"] <= row["rolls"]
        assert 0 <= row["extra_roll_chain_max"] <= row["extra_rolls"]
        assert (row["extra_roll_chain_max"] > 0) == (row["extra_rolls"] > 0)
        assert row["animals_sent_home"] == row["sent_home_by_robber"] + row["sent_home_by_knock"] >= 0
        for s in seats:
            sources = [row[f"points_{src}_s{s}"] for src in A.SOURCES]
            assert min(sources) >= 0 and points[s] == sum(sources)
        # a storm: a point per animal of a pyramid (a neutral one's for nobody
        # unless neutral_storm_point = mover), a bonus for the robber at home
        storm_points = sum(row[f"points_storm_s{s}"] for s in seats)
        if players == 3 and options.get("neutral_storm_point", "nobody") == "nobody":
            # the mover's own donkey carries the pyramid: a point at least
            assert row["storms"] <= storm_points <= 4 * row["storms"]
        else:
            assert storm_points == 4 * row["storms"]
        assert sum(row[f"points_robber_bonus_s{s}"] for s in seats) <= row["storms"]
        assert sum(row[f"points_chase_s{s}"] for s in seats) == row["chases"]
        if row["capped"]:
            assert row["winner_seat"] == -1 and row["turns"] == max_turns and max(points) < target
        else:
            assert max(points) >= target and row["winner_seat"] == expected_winner(row, players, options)
        # tension and progress, after whole turns; points never go down
        assert 0 <= row["lead_changes"] < row["turns"]
        for s in seats:
            assert max(points) - points[s] <= row[f"max_deficit_s{s}"] <= max(points)
            progress = [row[f"points_r{r}_s{s}"] for r in K.PROGRESS_ROUNDS]
            assert progress == sorted(progress) and progress[-1] <= points[s]
            for r, p in zip(K.PROGRESS_ROUNDS, progress):
                if r * players >= row["turns"]:  # the game was over by then
                    assert p == points[s]
        for r in K.PROGRESS_ROUNDS:
            at_round = [row[f"points_r{r}_s{s}"] for s in seats]
            assert all(max(at_round) - p <= row[f"max_deficit_s{s}"] for s, p in zip(seats, at_round))


EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "bremen_nearest_house.py"
SEATINGS = (["greedy"], ["random", "greedy"], [f"{EXAMPLE}:nearest_house", "greedy"])


def _policies(players: int, seating: list[str]) -> list[str]:
    return (seating * 4)[:players]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(setup=setups(), seed=st.integers(0, 2**32 - 1))
def test_a_board_written_from_scratch_loads_and_plays_cleanly(tmp_path_factory, setup, seed):
    text, built, players, options = setup
    board = load_board(write_board(tmp_path_factory, text))
    check_board(board, built)
    seating = SEATINGS[seed % len(SEATINGS)]
    g = A.Game(board=board, players=players, options=options, seed=seed)
    free = A.Game(board=board, players=players, options={**options, "both_dice": "free", "one_die": "either"})
    dice = np.random.default_rng(seed)

    def check(g):
        check_position(g)
        if g.winner < 0 and g.state[K.S_TURNS] % 3 == 0:  # a third of the positions: the time
            free.state[:] = g.state
            check_moves(g, free, *dice.integers(1, 7, 2))

    g.play(_policies(players, seating), turns=60, seed=seed, check=check)
    max_turns = 150
    options = {**options, "max_turns": max_turns}
    df = A.simulate(players=players, games=4, policies=_policies(players, seating), seed=seed, board=board,
                    options=options, threads=1)
    check_records(df, players, options, max_turns)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(setup=setups(), seed=st.integers(0, 2**32 - 1))
def test_a_board_written_from_scratch_reports(tmp_path_factory, setup, seed):
    text, _, players, options = setup
    board = load_board(write_board(tmp_path_factory, text))
    df = A.simulate(players=players, games=30, policies=_policies(players, ["greedy", "random"]), seed=seed,
                    board=board, options={**options, "max_turns": 200}, threads=1)
    run = tmp_path_factory.mktemp("runs") / "run.parquet"
    write_parquet(df, run, df.attrs)
    no_number_missing(build_report(A.summarize_run_file(run)).to_markdown())  # as `etappe report` reads it


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(setup=boards(), data=st.data())
def test_a_board_that_breaks_one_rule_is_refused_by_name(tmp_path_factory, setup, data):
    # One edit of a valid board against one rule of docs/bremen.md "Board
    # file format": the loader names the field (where there is one) and the problem.
    _, built = setup
    kinds, chains = dict(built["kinds"]), [sorted(link) for link in built["links"]]
    field = data.draw(st.sampled_from([n for n, k in kinds.items() if k in PASSABLE]))
    colour = data.draw(st.integers(0, 3))
    start = next(n for n, k in kinds.items() if k == f"start:{colour}")
    edit = data.draw(st.sampled_from(["unlinked", "no start", "two starts", "colour", "two houses", "self link",
                                      "nine links", "bridge end"]))
    if edit == "unlinked":
        kinds["zz"] = "road"
        named, problem = "zz", "not linked to anything"
    elif edit == "no start":
        kinds[start] = "road"
        named, problem = None, f"start field of colour {colour} missing"
    elif edit == "two starts":
        kinds["zz"] = f"start:{colour}"
        chains.append([field, "zz"])
        named, problem = "zz", f"second start field of colour {colour}"  # zz comes last in board order
    elif edit == "colour":
        kinds[start] = "start:4"
        named, problem = start, "start colour must be 0..3"
    elif edit == "two houses":
        kinds[field] = "house"
        named, problem = None, "exactly one house needed, found 2"
    elif edit == "self link":
        chains.append([field, field])
        named, problem = field, "linked to itself"
    elif edit == "nine links":
        kinds.update({f"z{k}": "road" for k in range(9)} | {"hub": "road"})
        chains += [["hub", f"z{k}"] for k in range(9)]
        named, problem = "hub", "9 links, at most 8"
    else:
        kinds.update({"zz": "road", "zb": "bridge"})
        chains.append(["zz", "zb"])
        named, problem = "zb", "a bridge must join two"
    text = _board_toml(data.draw, list(kinds), kinds, chains)
    with pytest.raises(BoardError) as err:
        load_board(write_board(tmp_path_factory, text))
    assert problem in str(err.value), str(err.value)
    if named is not None:
        assert f"field '{named}'" in str(err.value), str(err.value)
