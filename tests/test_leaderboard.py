"""Table II leaderboard: CSV reading, aggregation and formatting (mskbench.eval.leaderboard)."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from mskbench.eval.leaderboard import (
    ResultRow,
    compute_leaderboard,
    family_task_counts,
    format_leaderboard,
    read_results_csv,
)
from mskbench.catalog import SUITE as PAPER_TASKS

HEADER = "task,method,perturbation,scale,success_rate"
ACT = (0, 0.05, 0.10, 0.15, 0.20)  # action / dynamics scales (App. A-B2)
OBS = (0, 0.02, 0.05, 0.08, 0.10)  # observation scales


def sweep(task, method, kind, scales, srs, reverse=False):
    lines = [f"{task},{method},{kind},{s},{r}" for s, r in zip(scales, srs)]
    return lines[::-1] if reverse else lines


def write(tmp_path, lines, name="results.csv"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def small_csv(tmp_path):
    """2 methods, 4 tasks (Stand, Squat: stabilization; Walk: locomotion; Stairs: interaction)."""
    lines = [
        HEADER,
        # train-environment success rates; task ids in mixed case
        "stand,Alpha,none,,80",
        "Squat,Alpha,NONE,0,40",
        "WALK,Alpha,none,,60",
        "stairs,Alpha,none,,0",
        "Stand,Beta,none,,20",
        "squat,Beta,None,,0",
        "Walk,Beta,none,,90",
        # Beta has no interaction task -> interaction SR is None
        *sweep("Stand", "Alpha", "action", ACT, (100, 80, 60, 40, 20)),
        *sweep("walk", "Alpha", "Action", ACT, (50, 50, 50, 50, 50)),
        *sweep("Stand", "Alpha", "observation", OBS, (100, 100, 50, 50, 0)),
        *sweep("Stairs", "Alpha", "dynamics", ACT, (0, 0, 0, 0, 0)),
        *sweep("Walk", "Alpha", "dynamics", ACT, (40, 40, 20, 20, 0), reverse=True),  # unsorted on purpose
        *sweep("Walk", "Beta", "action", ACT, (90, 90, 90, 90, 90)),
        *sweep("Stand", "Beta", "DYNAMICS", ACT, (20, 10, 10, 0, 0)),
        # Beta has no observation sweep -> observation and average robustness are None
    ]
    return write(tmp_path, lines)


def test_read_canonicalises(small_csv):
    rows = read_results_csv(small_csv)
    assert len(rows) == 7 + 7 * 5  # 7 none rows, 7 five-point sweeps
    first = rows[0]
    assert (first.task, first.method, first.perturbation, first.scale, first.success_rate) == (
        "Stand",
        "Alpha",
        "none",
        0.0,
        80.0,
    )
    assert first.line == 2
    assert {r.task for r in rows} == {"Stand", "Squat", "Walk", "Stairs"}
    assert {r.perturbation for r in rows} == {"none", "action", "observation", "dynamics"}


def test_hand_computed_table(small_csv):
    board = compute_leaderboard(read_results_csv(small_csv))
    assert list(board) == ["Alpha", "Beta"]
    a, b = board["Alpha"], board["Beta"]

    # --- success rate: mean over tasks of the `none` rows, tasks weighted equally
    assert a["success_rate"]["stabilization"] == pytest.approx((80 + 40) / 2)  # 60
    assert a["success_rate"]["locomotion"] == pytest.approx(60)
    assert a["success_rate"]["interaction"] == pytest.approx(0)  # a real 0, not missing
    # all-task mean (45), not the mean of family means ((60+60+0)/3 = 40)
    assert a["success_rate"]["all"] == pytest.approx((80 + 40 + 60 + 0) / 4)
    assert b["success_rate"]["stabilization"] == pytest.approx((20 + 0) / 2)  # 10
    assert b["success_rate"]["locomotion"] == pytest.approx(90)
    assert b["success_rate"]["interaction"] is None
    assert b["success_rate"]["all"] == pytest.approx((20 + 0 + 90) / 3)

    # --- coverage: SR > 0 strictly
    assert a["coverage"] == [3, 4]  # Stairs 0 does not count
    assert b["coverage"] == [2, 3]  # Squat 0 does not count

    # --- robustness: trapezoid area / scale range per task, mean over tasks
    # Alpha action, Stand: widths .05, midpoints 90,70,50,30 -> 240*.05/.2 = 60 ; Walk: constant 50
    alpha_action = ((90 + 70 + 50 + 30) * 0.05 / 0.20 + 50) / 2  # 55
    # Alpha observation, Stand: 100*.02 + 75*.03 + 50*.03 + 25*.02 = 6.25 -> /.1 = 62.5
    alpha_obs = (100 * 0.02 + 75 * 0.03 + 50 * 0.03 + 25 * 0.02) / 0.10
    # Alpha dynamics: Stairs 0 ; Walk midpoints 40,30,20,10 -> 100*.05/.2 = 25 -> mean 12.5
    alpha_dyn = (0 + (40 + 30 + 20 + 10) * 0.05 / 0.20) / 2
    assert a["robustness"]["action"] == pytest.approx(alpha_action) == pytest.approx(55)
    assert a["robustness"]["observation"] == pytest.approx(alpha_obs) == pytest.approx(62.5)
    assert a["robustness"]["dynamics"] == pytest.approx(alpha_dyn) == pytest.approx(12.5)
    assert a["robustness"]["average"] == pytest.approx((55 + 62.5 + 12.5) / 3)

    assert b["robustness"]["action"] == pytest.approx(90)
    assert b["robustness"]["observation"] is None
    # Beta dynamics, Stand: midpoints 15,10,5,0 -> 30*.05/.2 = 7.5
    assert b["robustness"]["dynamics"] == pytest.approx((15 + 10 + 5 + 0) * 0.05 / 0.20)
    assert b["robustness"]["average"] is None  # not all three types present

    # exact JSON shape
    for entry in board.values():
        assert set(entry) == {"success_rate", "tasks_averaged", "coverage", "robustness", "robustness_tasks",
                              "fell_after_success", "per_task"}
        assert list(entry["success_rate"]) == ["stabilization", "locomotion", "interaction", "all"]
        assert list(entry["tasks_averaged"]) == ["stabilization", "locomotion", "interaction", "all"]
        assert list(entry["robustness"]) == ["action", "observation", "dynamics", "average"]
    back = json.loads(json.dumps(board))
    assert back["Beta"]["success_rate"]["interaction"] is None
    assert back["Alpha"]["coverage"] == [3, 4]
    # how many tasks each average is over; a CSV says nothing of falls after success: unknown, never 0
    assert a["tasks_averaged"] == {"stabilization": 2, "locomotion": 1, "interaction": 1, "all": 4}
    assert b["tasks_averaged"] == {"stabilization": 2, "locomotion": 1, "interaction": 0, "all": 3}
    assert a["robustness_tasks"] == {"action": 2, "observation": 1, "dynamics": 2}
    assert b["robustness_tasks"] == {"action": 1, "observation": 0, "dynamics": 1}
    assert a["fell_after_success"] == {"percent": None, "fell": None, "successes": None}
    assert list(a["per_task"]) == ["Stand", "Squat", "Walk", "Stairs"]  # suite order
    assert a["per_task"]["Stand"] == {"success_rate": 80.0,
                                      "fell_after_success": {"percent": None, "fell": None, "successes": None}}
    assert a["per_task"]["Stairs"]["fell_after_success"]["percent"] is None  # no success: nothing to fall after


def test_no_sweeps_means_none_not_zero():
    rows = [ResultRow("Run", "M", "none", 0, 50)]
    board = compute_leaderboard(rows)
    assert board["M"]["success_rate"] == {"stabilization": None, "locomotion": 50.0, "interaction": None, "all": 50.0}
    assert board["M"]["robustness"] == {"action": None, "observation": None, "dynamics": None, "average": None}
    assert board["M"]["coverage"] == [1, 1]


def test_sweeps_without_none_rows():
    rows = [ResultRow("Run", "M", "action", s, 10) for s in ACT]
    board = compute_leaderboard(rows)
    assert board["M"]["coverage"] == [0, 0]
    assert board["M"]["success_rate"]["all"] is None
    assert board["M"]["robustness"]["action"] == pytest.approx(10)


def test_paper_table_ii_all_is_task_weighted():
    """DynSyn-SAC in Table II: (6*57.33 + 6*81.33 + 10*31.20)/22 = 52.00, from per-task rows."""
    rows = []
    fams = {"stabilization": 57.33, "locomotion": 81.33, "interaction": 31.20}
    for task, fam in PAPER_TASKS.items():
        rows.append(ResultRow(task, "DynSyn-SAC", "none", 0, fams[fam]))
    sr = compute_leaderboard(rows)["DynSyn-SAC"]["success_rate"]
    assert sr["all"] == pytest.approx((6 * 57.33 + 6 * 81.33 + 10 * 31.20) / 22)
    assert round(sr["all"], 2) == 52.00


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("lines", "words"),
    [
        pytest.param(["task,method,perturbation,scale", "Stand,A,none,,50"], ["success_rate", HEADER], id="missing-column"),
        pytest.param([HEADER + ",seed", "Stand,A,none,,50,1"], ["unexpected", "seed", HEADER], id="extra-column"),
        pytest.param([HEADER, "Stand,A,none,,50", "Flyy,A,none,,50"], ["line 3", "Flyy", "valid suite task ids", "Stand", "PoleWalk"], id="unknown-task"),
        pytest.param([HEADER, "Stand,A,wind,0.1,50"], ["line 2", "wind", "none, action, observation, dynamics"], id="unknown-perturbation"),
        pytest.param([HEADER, "Stand,A,none,,120"], ["line 2", "percent", "[0, 100]"], id="sr-above-100"),
        pytest.param([HEADER, "Stand,A,none,,-1"], ["line 2", "percent"], id="sr-negative"),
        pytest.param([HEADER, "Stand,A,none,,nan"], ["line 2", "percent"], id="sr-nan"),
        pytest.param([HEADER, "Stand,A,none,,inf"], ["line 2", "percent"], id="sr-inf"),
        pytest.param([HEADER, "Stand,A,none,,abc"], ["line 2", "success_rate", "number"], id="sr-not-number"),
        pytest.param([HEADER, "Stand,A,none,,"], ["line 2", "success_rate", "required"], id="sr-empty"),
        pytest.param([HEADER, "Stand,A,action,,50"], ["line 2", "scale", "required"], id="empty-scale-sweep"),
        pytest.param([HEADER, "Stand,A,none,0.05,50"], ["line 2", "scale", "none"], id="nonzero-scale-none"),
        pytest.param([HEADER, "Stand,A,action,-0.05,50"], ["line 2", "scale", ">= 0"], id="negative-scale"),
        pytest.param([HEADER, "Stand,A,action,nan,50"], ["line 2", "scale", "finite"], id="nan-scale"),
        pytest.param([HEADER, "Stand,,none,,50"], ["line 2", "method"], id="empty-method"),
        pytest.param([HEADER, "Stand,A,none,,50,7"], ["line 2", "expected 5 fields"], id="extra-field"),
        pytest.param(
            [HEADER, "Stand,A,none,,50", "Walk,A,none,,50", "stand,A,NONE,0,60"],
            ["duplicate", "Stand", "line 2", "line 4"],
            id="duplicate-none",
        ),
        pytest.param(
            [HEADER, "Stand,A,action,0.1,50", "Walk,A,action,0.1,50", "Stand,A,action,0.10,40"],
            ["duplicate", "action", "line 2", "line 4"],
            id="duplicate-sweep",
        ),
    ],
)
def test_bad_csv(tmp_path, lines, words):
    path = write(tmp_path, lines)
    with pytest.raises(ValueError) as info:
        read_results_csv(path)
    msg = str(info.value)
    for word in words:
        assert word in msg, (word, msg)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(ValueError, match="header"):
        read_results_csv(path)


def test_blank_lines_and_whitespace_ok(tmp_path):
    path = write(tmp_path, [" task , method,perturbation,scale,success_rate", "", " walk , A , None , , 12.5 ", ""])
    (row,) = read_results_csv(path)
    assert (row.task, row.method, row.perturbation, row.scale, row.success_rate) == ("Walk", "A", "none", 0.0, 12.5)


def test_single_scale_sweep_is_an_error(tmp_path):
    path = write(tmp_path, [HEADER, "Stand,A,none,,50", "Jump,A,observation,0.05,30"])
    rows = read_results_csv(path)  # a row-level check cannot see this ...
    with pytest.raises(ValueError) as info:  # ... the aggregation does
        compute_leaderboard(rows)
    msg = str(info.value)
    for word in ("Jump", "A", "observation", "at least 2 scales", "line 3"):
        assert word in msg, (word, msg)


def test_compute_rejects_duplicates_without_csv():
    rows = [ResultRow("Stand", "A", "none", 0, 50), ResultRow("STAND", "A", "none", "", 40)]
    with pytest.raises(ValueError, match="duplicate"):
        compute_leaderboard(rows)


# ---------------------------------------------------------------- formatting


def _render(table):
    console = Console(record=True, width=120, color_system="standard")
    console.print(table)
    return console.export_text(styles=True)


def _cells(table, method):
    (col,) = [c for c in table.columns if c.header == method]
    return list(col.cells)


def test_format_small(small_csv):
    rows = read_results_csv(small_csv)
    board = compute_leaderboard(rows)
    table = format_leaderboard(board, task_counts=family_task_counts(rows))
    metric = list(table.columns[1].cells)
    assert metric == [
        "Stabilization (2)",
        "Locomotion (1)",
        "Interaction (0–1)",
        "Average (3–4)",
        "of successes",
        "Action",
        "Observation",
        "Dynamics",
        "Average",
        "SR > 0",
    ]
    alpha = _cells(table, "Alpha")
    beta = _cells(table, "Beta")
    # every average is over fewer tasks than the suite's: each says over how many
    assert [t.plain for t in alpha] == ["60.00 (2 of 6)", "60.00 (1 of 6)", "0.00 (1 of 10)", "45.00 (4 of 22)", "—",
                                        "55.00 (2 of 22)", "62.50 (1 of 22)", "12.50 (2 of 22)", "43.33 (1–2 of 22)",
                                        "3/4 (4 of 22)"]
    assert [t.plain for t in beta] == ["10.00 (2 of 6)", "90.00 (1 of 6)", "—", "36.67 (3 of 22)", "—",
                                       "90.00 (1 of 22)", "—", "7.50 (1 of 22)", "—", "2/3 (3 of 22)"]
    assert metric[4] == "of successes" and "(n of N)" in str(table.caption)

    def bold(t):
        return any("bold" in str(span.style) for span in t.spans) or "bold" in str(t.style)

    # row best is bold: Alpha wins everything except locomotion (the same task count, Beta's 90 is higher); its
    # action score over 2 tasks outranks Beta's higher one over 1
    assert [bold(t) for t in alpha] == [True, False, True, True, False, True, True, True, True, True]
    assert [bold(t) for t in beta] == [False, True, False, False, False, False, False, False, False, False]

    text = _render(table)
    assert "Alpha" in text and "Beta" in text
    assert "3/4" in text and "2/3" in text
    assert "\x1b[1m45.00" in text  # Alpha's average SR is rendered bold
    assert "\x1b[1m36.67" not in text
    assert "—" in text


def test_format_full_suite_ties_and_labels():
    rows = []
    tasks = list(PAPER_TASKS)
    for i, task in enumerate(tasks):
        rows.append(ResultRow(task, "DepRL", "none", 0, 50.0))
        rows.append(ResultRow(task, "PPO", "none", 0, 50.0 if i < 16 else 0.0))
    board = compute_leaderboard(rows)
    assert board["DepRL"]["coverage"] == [22, 22]
    assert board["PPO"]["coverage"] == [16, 22]
    table = format_leaderboard(board)  # full suite -> paper labels without task_counts
    metric = list(table.columns[1].cells)
    assert metric[:4] == ["Stabilization (6)", "Locomotion (6)", "Interaction (10)", "Average (22)"]
    deprl, ppo = _cells(table, "DepRL"), _cells(table, "PPO")
    # first 16 tasks are stabilization + locomotion + 4 interaction: families 1-2 tie -> both bold
    assert deprl[0].plain == ppo[0].plain == "50.00"  # the whole family: no "(n of N)"
    assert table.caption is None

    def bold(t):
        return any("bold" in str(span.style) for span in t.spans)

    assert bold(deprl[0]) and bold(ppo[0])
    assert bold(deprl[2]) and not bold(ppo[2])  # 50 vs 20
    assert ppo[2].plain == "20.00"
    text = _render(table)
    assert "16/22" in text and "22/22" in text
    assert "\x1b[1m22/22" in text and "\x1b[1m16/22" not in text
    assert "DepRL" in text and "PPO" in text


def test_format_partial_without_counts_has_plain_labels():
    board = compute_leaderboard([ResultRow("Walk", "M", "none", 0, 10)])
    metric = list(format_leaderboard(board).columns[1].cells)
    assert metric[:4] == ["Stabilization", "Locomotion", "Interaction", "Average"]


def test_privileged_methods_are_marked():
    """The expert and hold probes read the simulator: their columns say so and come after the observation-only
    ones (by name, without a store's record), a learned method's does not."""
    rows = [ResultRow("Stand", m, "none", 0, sr) for m, sr in (("expert", 96), ("hold", 10), ("PPO", 0))]
    table = format_leaderboard(compute_leaderboard(rows))
    assert [c.header for c in table.columns[2:]] == ["PPO", "expert †", "hold †"]
    assert "privileged" in str(table.caption)
    assert "privileged" not in str(format_leaderboard(compute_leaderboard(rows[2:])).caption)


# ---------------------------------------------------------------- averages over fewer tasks, falls after success


def test_an_average_over_fewer_tasks_says_over_how_many_and_never_outranks_a_full_one():
    """A privileged expert run on 2 tasks beside a method on all 22: its 100.00 says "(2 of 22)", and the 22-task
    average is the row's best (the bold one), not the 2-task one."""
    rows = [ResultRow(t, "expert", "none", 0, 100) for t in ("Stand", "Reach")]
    rows += [ResultRow(t, "random", "none", 0, 50 if t == "Stand" else 0) for t in PAPER_TASKS]
    board = compute_leaderboard(rows)
    assert board["expert"]["tasks_averaged"] == {"stabilization": 1, "locomotion": 0, "interaction": 1, "all": 2}
    assert board["random"]["tasks_averaged"] == {"stabilization": 6, "locomotion": 6, "interaction": 10, "all": 22}
    table = format_leaderboard(board, family_task_counts(rows))
    expert, rand = _cells(table, "expert †"), _cells(table, "random")
    assert expert[3].plain == "100.00 (2 of 22)" and rand[3].plain == "2.27"
    assert expert[-1].plain == "2/2 (2 of 22)" and rand[-1].plain == "1/22"

    def bold(t):
        return any("bold" in str(span.style) for span in t.spans)

    assert bold(rand[3]) and not bold(expert[3])  # the only 22-task average
    assert bold(rand[-1]) and not bold(expert[-1])
    console = Console(record=True, width=200)
    console.print(table)
    text = console.export_text()
    assert "100.00 (2 of 22)" in text and "not the paper's average" in text


def test_fell_after_success_is_pooled_over_a_methods_successful_episodes():
    rows = [ResultRow("Squat", "expert", "none", 0, 100, successes=4, fell_after_success=4),
            ResultRow("Stand", "expert", "none", 0, 50, successes=2, fell_after_success=0),
            ResultRow("Walk", "expert", "none", 0, 0, successes=0, fell_after_success=0),
            ResultRow("Stand", "csv", "none", 0, 50),  # a CSV row: counts unknown
            ResultRow("Walk", "csv", "none", 0, 0),
            ResultRow("Walk", "none-won", "none", 0, 0, successes=0, fell_after_success=0)]
    board = compute_leaderboard(rows)
    assert board["expert"]["fell_after_success"] == {"percent": pytest.approx(100 * 4 / 6), "fell": 4, "successes": 6}
    assert board["expert"]["per_task"]["Squat"]["fell_after_success"]["percent"] == 100.0
    assert board["expert"]["per_task"]["Stand"]["fell_after_success"]["percent"] == 0.0
    assert board["expert"]["per_task"]["Walk"]["fell_after_success"]["percent"] is None  # no success
    assert board["csv"]["fell_after_success"]["percent"] is None  # unknown, never 0
    assert board["csv"]["per_task"]["Stand"]["fell_after_success"] == {"percent": None, "fell": None,
                                                                        "successes": None}
    assert board["none-won"]["fell_after_success"]["percent"] is None
    table = format_leaderboard(board)
    assert [_cells(table, m)[4].plain for m in ("csv", "none-won", "expert †")] == ["—", "—", "66.67 (4 of 6)"]


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"successes": -1}, ["successes", "int >= 0"]),
    ({"successes": 1.5}, ["successes", "int >= 0"]),
    ({"successes": 2, "fell_after_success": 3}, ["fell_after_success (3)", "successes"]),
    ({"fell_after_success": 1}, ["fell_after_success (1)", "None"]),
])
def test_bad_fall_counts_are_refused(kwargs, words):
    with pytest.raises(ValueError) as info:
        ResultRow("Stand", "M", "none", 0, 50, **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_published_columns_average_the_whole_suite_and_do_not_know_falls():
    from mskbench.eval.leaderboard import published_columns
    from mskbench.eval.published import published_rows, published_table2

    table2 = published_table2()
    cols = published_columns(table2, published_rows())
    assert list(cols) == list(table2)
    for method, entry in cols.items():
        assert entry["success_rate"] == table2[method]["success_rate"]
        assert entry["tasks_averaged"] == {"stabilization": 6, "locomotion": 6, "interaction": 10, "all": 22}
        assert entry["robustness_tasks"] == {"action": 22, "observation": 22, "dynamics": 22}
        assert entry["fell_after_success"]["percent"] is None and len(entry["per_task"]) == 22
    cells = _cells(format_leaderboard(cols), "DepRL")
    assert cells[3].plain == "48.36" and cells[4].plain == "—" and cells[8].plain == "43.67"  # no "(n of N)"
