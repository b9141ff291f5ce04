"""``mskbench report``: a static HTML report of a results store, training runs and the mouse evaluation.

The page (``index.html``) opens from disk with no server and no network; every figure is inline
and also written as PNG and SVG beside it (``figures/``). Sections, after the paper's views:
the Table II leaderboard (Table II), method profiles per family (Fig. 1b), learning curves
(Fig. 2), robustness curves (Figs. 3, 5), EMG-envelope similarity (Fig. 6), joint smoothness
(Fig. 7), muscle-family recruitment (Figs. 8–9), activation heatmaps (Figs. 14–15), the mouse
imitation evaluation and links to rollout videos. A section without data says what is missing
and how to get it. docs/report.md describes each section and how its axes are scaled.

Needs matplotlib (``pip install 'mskbench[report]'``), imported only when a report is built:

* :mod:`mskbench.report.data` gathers plain data (no plotting);
* :mod:`mskbench.report.figures` draws it;
* :mod:`mskbench.report.html` writes the page;
* :mod:`mskbench.report.build` ties them together: :func:`build_report`.

:mod:`mskbench.report.contact_sheet` draws what ``mskbench render`` writes (contact sheets of framed,
labelled scenes and a video's frames); it needs Pillow (``pip install 'mskbench[render]'``), not
matplotlib.
"""

from __future__ import annotations

__all__ = ["ReportOptions", "build_report"]


def __getattr__(name: str):
    if name in __all__:
        from mskbench.report import build

        return getattr(build, name)
    raise AttributeError(f"module 'mskbench.report' has no attribute {name!r}")
