"""The package type-checks: ``mypy`` with the ``[tool.mypy]`` settings of pyproject.toml reports no error.

mypy checks the protocols (:mod:`mskbench.envs.protocols`) and every annotated signature of
``src/mskbench``; third-party packages without useful types are taken as ``Any`` (see the config).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_type_checks(monkeypatch):
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (it is in the 'test' extra)")
    monkeypatch.chdir(ROOT)  # the config's `files` and mypy's cache are relative to the repository root
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, f"mypy reports errors (exit {status}):\n{stdout}{stderr}"
