"""docs/tasks.md says what the code does: the observation table's sizes and horizons, and the native-signal
table and its count (each once stale: seven horizons, "thirteen ... ten" for fourteen and eleven)."""

from __future__ import annotations

import re
from pathlib import Path

from mskbench.catalog import suite_ids
from mskbench.tasks import REGISTRY

DOC = Path(__file__).resolve().parents[1] / "docs" / "tasks.md"
BASE_SIZE = 1922
NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                      "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def _rows(header: str) -> dict[str, list[str]]:
    """The table whose header line starts with ``header``: first cell -> cells."""
    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells
    return rows


def test_observation_table_sizes_and_horizons_are_the_codes():
    from test_env import OBS_SIZES  # checked against the envs' observation spaces there

    rows = _rows("| task | family | task blocks | obs size | horizon |")
    assert list(rows) == suite_ids()
    for task, (_, family, blocks, size, horizon) in rows.items():
        assert family == REGISTRY[task].family, task
        assert int(horizon) == REGISTRY[task]().horizon, task
        assert int(size) == OBS_SIZES[task] == BASE_SIZE + sum(int(n) for n in re.findall(r"\((\d+)[,)]", blocks)), task


def test_native_signal_table_and_count_are_the_codes():
    rows = _rows("| task | native solved (original) |")
    assert list(rows) == suite_ids()
    for task, cells in rows.items():
        cls = REGISTRY[task]
        has, counted = cells[1], cells[-1]
        assert has == ("yes" if cls.native_solved is not None else "no"), task
        if cls.native_solved is None:
            assert counted.startswith("— (none"), task
        elif cls.native_counts():
            assert counted == "yes", task
        else:
            assert counted.startswith("**no: degenerate**"), task
    text = " ".join(DOC.read_text().split())
    match = re.search(r"(\w+) tasks have a native signal; (\w+) count", text)
    assert match, "the sentence counting the native signals is gone"
    with_signal = sum(REGISTRY[t].native_solved is not None for t in suite_ids())
    counting = sum(REGISTRY[t].native_counts() for t in suite_ids())
    assert (NUMBERS[match.group(1).lower()], NUMBERS[match.group(2).lower()]) == (with_signal, counting)


def test_balance_ball_is_not_called_free():
    """Balance's ball is fixed to the world ("a free ball", "free bar/board/ball/cube" were said)."""
    balance = DOC.parents[1] / "src" / "mskbench" / "tasks" / "balance.py"
    for path in (DOC, DOC.parents[1] / "README.md", DOC.parent / "gpu.md", DOC.parent / "baselines.md", balance):
        assert not re.search(r"free (\w+/)*ball", path.read_text().lower()), path
    from mskbench.tasks.balance import Balance

    assert "free" not in Balance.summary and "fixed" in Balance.summary  # what `mskbench tasks` prints
