"""The 22 task ids of the MSK-Bench suite and their families (paper Tables VI–VIII).

A list of names that needs no simulator: results (published numbers, other
codebases) are read, validated and grouped by family against it.
``mskbench.tasks.REGISTRY`` holds the runnable tasks, in this order (checked
at import).
"""

from __future__ import annotations

PAPER_TASKS: dict[str, str] = {
    # stabilization (Table VI)
    "Stand": "stabilization",
    "Powerlift": "stabilization",
    "SingleLegStand": "stabilization",
    "Sit": "stabilization",
    "Balance": "stabilization",
    "Squat": "stabilization",
    # locomotion (Table VII)
    "Walk": "locomotion",
    "Crawl": "locomotion",
    "Run": "locomotion",
    "Jump": "locomotion",
    "WalkTurn": "locomotion",
    "Sidestep": "locomotion",
    # interaction (Table VIII)
    "Stairs": "interaction",
    "Hurdle": "interaction",
    "StepStones": "interaction",
    "Slide": "interaction",
    "OpenDoor": "interaction",
    "Reach": "interaction",
    "WalkAndSit": "interaction",
    "ChinUp": "interaction",
    "Catch": "interaction",
    "PoleWalk": "interaction",
}


def paper_task_id(name: str) -> str:
    """Canonical id of a suite task, case-insensitive; raises listing the valid ids."""
    for key in PAPER_TASKS:
        if key.lower() == str(name).lower():
            return key
    raise ValueError(f"unknown task {name!r}; valid task ids: {', '.join(PAPER_TASKS)}")
