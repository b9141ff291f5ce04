"""The package's layers point down only and its modules import no cycle (function-local imports included).

Layers, bottom to top (DESIGN.md): catalog / protocols / metrics, body, sim, tasks,
envs, agents, eval, training, cli. The mouse slice is a task on the same stack: its
data and registration sit at the body layer, its task at the tasks layer, its
evaluation at the eval layer and its commands at the cli layer.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "mskbench"

#: Module (or package prefix) -> layer; the longest matching prefix decides.
LAYERS = {
    "mskbench.catalog": 0, "mskbench._jax": 0, "mskbench._version": 0, "mskbench.metrics": 0,
    "mskbench.body": 1, "mskbench.mouse": 1,  # the mouse slice's data: clips, registration, replay, synthesis
    "mskbench.sim": 2,
    "mskbench.tasks": 3,
    "mskbench.envs": 4, "mskbench.policies": 4, "mskbench.jax_env": 4,
    "mskbench.control": 4.5,  # training-free experts: they read the envs' simulators
    "mskbench.agents": 5,
    "mskbench.eval": 6,
    "mskbench.training": 7,
    "mskbench.paradigms": 8,  # agentic tuning and direct control: built on training and the envs
    "mskbench.report": 8,  # the HTML report: reads the store, runs and published tables, rolls out for heatmaps;
                           # and the contact sheets and video frames of `mskbench render` (contact_sheet.py)
    "mskbench.cli": 9,
    "mskbench.__main__": 9, "mskbench": 9,
}


def _modules() -> dict[str, Path]:
    out = {}
    for f in (SRC / PKG).rglob("*.py"):
        rel = f.relative_to(SRC).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        out[name] = f
    return out


def _layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports anywhere in its file (functions included)."""
    is_pkg = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = name if is_pkg else name.rsplit(".", 1)[0]
            if node.level:
                parts = base.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                mod = base + ("." + node.module if node.module else "")
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:
                t = t.rsplit(".", 1)[0] if "." in t else ""
            if t and t != name:
                found.add(t)
    return found


@pytest.fixture(scope="module")
def graph():
    modules = _modules()
    return {m: _imports(m, f, modules) for m, f in modules.items()}


def test_every_module_has_a_layer(graph):
    assert all(m == PKG or m.startswith(PKG + ".") for m in graph)
    assert {_layer(m) for m in graph} <= set(LAYERS.values())


def upward_imports(graph) -> list[str]:
    return sorted(f"{m} (layer {_layer(m)}) imports {t} (layer {_layer(t)})"
                  for m, targets in graph.items() for t in targets
                  if _layer(t) > _layer(m) and not m.startswith(t + "."))  # a package's own __init__ is fine


def test_no_upward_import(graph):
    upward = upward_imports(graph)
    assert not upward, "\n".join(upward)


def test_no_import_cycle(graph):
    # Tarjan's strongly connected components; importing a parent package's __init__ is not an edge.
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in edges:
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_the_checker_sees_a_function_local_upward_import(tmp_path):
    """The walk includes imports inside functions (the kind that hid the mouse CLI's upward import)."""
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from mskbench.training import train\n    return train\n")
    modules = {"mskbench.sim.m": path, "mskbench.training": path}
    found = {"mskbench.sim.m": _imports("mskbench.sim.m", path, modules)}
    assert found == {"mskbench.sim.m": {"mskbench.training"}}
    assert upward_imports(found) == ["mskbench.sim.m (layer 2) imports mskbench.training (layer 7)"]


def test_a_paradigm_package_imports_no_jax_nor_simulator():
    """``mskbench.paradigms.latent`` hands its model, wrappers and run on lazily (a checkpoint's
    ``acts_through`` names ``mskbench.paradigms.latent:LatentActing``)."""
    code = ("import sys, mskbench.paradigms.latent as p; p.PenaltySchedule; "
            "print([m for m in ('jax', 'flax', 'mujoco') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_catalog_and_leaderboard_import_no_simulator():
    code = ("import sys, mskbench, mskbench.catalog, mskbench.eval.leaderboard, mskbench.agents, mskbench.cli; "
            "heavy = [m for m in ('mujoco', 'jax', 'mskbench.tasks.stand', 'mskbench.envs.cpu_env') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
