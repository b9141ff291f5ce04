"""The task catalog: every task id, its tags and where its class lives. No simulator imports.

The 22 tasks of the MSK-Bench suite (paper Tables VI–VIII) come first, in the
paper's order. Every task carries tags, as dm_control tags its suites
(:class:`TaskEntry`): its ``family``, whether its episodes are ``gait`` cycles
(an EMG-envelope reference applies), whether its goal is ``walking`` (the body
covers ground on its feet: the evaluation shows its steps, distance and forward
speed), the ``study`` it belongs to and the
``body`` it runs on; :func:`task_ids` selects by them. Results (published
numbers, other codebases) are read, validated and grouped against
:data:`SUITE` without loading MuJoCo; :mod:`mskbench.tasks` imports a task's
class from :data:`TASKS` only when the task is made (and checks its family and
body against the tags), and Gymnasium ids (``mskbench/<id>-v0``) are
registered from it at ``import mskbench``.

Tasks outside the suite (study other than ``suite``) run on the same stack but
are not part of Table II: the mouse-forelimb reaching imitation of Leonardis et
al. (2025; study ``mouse``); the motion-tracking prior (``Track*``, family
``imitation``) and the residual adaptation over it (``Residual*``, family
``residual``), both of study ``residual`` (Sec. III, App. A-J).
"""

from __future__ import annotations

from typing import NamedTuple

#: The suite's task families (Tables VI, VII and VIII).
FAMILIES = ("stabilization", "locomotion", "interaction")


#: The studies tasks belong to: the MSK-Bench suite, the imitation prior with residual adaptation
#: (App. A-J), the mouse-forelimb reaching imitation (Leonardis et al. 2025).
STUDIES = ("suite", "residual", "mouse")
#: Gait tasks: their episodes are walking or running cycles, which an EMG-envelope reference
#: (Eq. 14) and mm-evalkit's gait metrics score.
GAIT = ("Walk", "Run", "Stairs")
#: Walking tasks: the goal has the body cover ground on its feet (walk, run, sidestep, climb, step across);
#: ``mskbench eval`` and ``calibrate`` show their episodes' steps taken, distance and forward speed.
WALKING = ("Walk", "Run", "WalkTurn", "Sidestep", "Stairs", "Hurdle", "StepStones", "OpenDoor", "WalkAndSit",
           "PoleWalk")


class TaskEntry(NamedTuple):
    """A task's tags and where its class lives."""

    family: str
    #: ``module:Class`` of the task.
    path: str
    #: The study it belongs to (:data:`STUDIES`).
    study: str = "suite"
    #: Its episodes are gait cycles (:data:`GAIT`).
    gait: bool = False
    #: The body it runs on (:attr:`mskbench.body.Body.name`).
    body: str = "myofullbody"
    #: Its goal has the body cover ground on its feet (:data:`WALKING`).
    walking: bool = False
    #: Why the evaluation protocol, which makes each task with its default options, cannot evaluate the task
    #: alone, and where it is evaluated instead; None when it can.
    protocol_refusal: str | None = None


def _suite(family: str, *names: str) -> dict[str, TaskEntry]:
    modules = {"SingleLegStand": "single_leg_stand", "WalkTurn": "walk_turn", "StepStones": "step_stones",
               "OpenDoor": "open_door", "WalkAndSit": "walk_and_sit", "ChinUp": "chin_up", "PoleWalk": "pole_walk"}
    return {n: TaskEntry(family, f"mskbench.tasks.{modules.get(n, n.lower())}:{n}", gait=n in GAIT,
                          walking=n in WALKING) for n in names}


_OVER_A_BASE = ("a residual task acts through its base policy (its option base), which neither the protocol nor a "
                "recording sets; evaluate a residual run with mskbench.paradigms.residual.residual_policy(RUN, env) "
                "on the task made with its run's base, or record its base task (docs/residual.md)")

#: Every task id, in catalog order: the suite in the paper's order, then the other tasks.
TASKS: dict[str, TaskEntry] = {
    **_suite("stabilization", "Stand", "Powerlift", "SingleLegStand", "Sit", "Balance", "Squat"),
    **_suite("locomotion", "Walk", "Crawl", "Run", "Jump", "WalkTurn", "Sidestep"),
    **_suite("interaction", "Stairs", "Hurdle", "StepStones", "Slide", "OpenDoor", "Reach", "WalkAndSit", "ChinUp",
             "Catch", "PoleWalk"),
    "MouseImitation": TaskEntry("imitation", "mskbench.tasks.mouse_imitation:MouseImitation", study="mouse",
                                body="mouse_forelimb"),
    # The imitation prior (motion tracking) and residual adaptation over it (Sec. III, App. A-J).
    **{n: TaskEntry("imitation", f"mskbench.tasks.tracking:{n}", study="residual")
       for n in ("TrackWalk", "TrackRun", "TrackStairs")},
    **{n: TaskEntry("residual", f"mskbench.paradigms.residual.tasks:{n}", study="residual",
                    protocol_refusal=_OVER_A_BASE) for n in ("ResidualWalk", "ResidualRun", "ResidualStairs")},
}

#: The 22 suite task ids and their families, in the paper's order.
SUITE: dict[str, str] = {name: e.family for name, e in TASKS.items() if e.study == "suite"}


def task_ids(*, family: str | None = None, study: str | None = None, gait: bool | None = None,
             body: str | None = None, walking: bool | None = None) -> list[str]:
    """The ids of the tasks with every tag given, in catalog order (``task_ids(gait=True)``: Walk, Run,
    Stairs; ``task_ids(family="residual")``: the residual tasks; ``task_ids(walking=True)``: :data:`WALKING`)."""
    wanted = {"family": family, "study": study, "gait": gait, "body": body, "walking": walking}
    return [n for n, e in TASKS.items()
            if all(value is None or getattr(e, tag) == value for tag, value in wanted.items())]


#: Other names of suite tasks, as users already have them: the authors' original code's ids
#: (``msk_bench/registry.py@a68b6ce``: ``DoorOpen``, env ids ``MSKBench<Task>-v0``) and the paper's
#: spellings (Tables XIII–XV, Fig. 13). Keys are :func:`name_key` forms; any case, spaces,
#: ``-``/``_``, a ``mskbench/`` or ``MSKBench`` prefix and a ``-v0`` suffix are accepted around them.
#: Suite tasks whose name in the original code differs from ours (ours -> theirs).
ORIGINAL_NAMES: dict[str, str] = {"OpenDoor": "DoorOpen"}

ALIASES: dict[str, str] = {
    "dooropen": "OpenDoor",
    "walkforward": "Walk",
    "singlestand": "SingleLegStand",
    "stair": "Stairs",
    "steppingstones": "StepStones",
    "stepstone": "StepStones",
}


def name_key(name: str) -> str:
    """``name`` reduced to the form task names are matched on: lower case, without spaces, ``-``
    and ``_``, a ``mskbench/`` namespace, an ``MSKBench`` prefix or a ``-v<N>`` version suffix."""
    text = str(name).strip().lower()
    text = text.removeprefix("mskbench/")
    head, sep, version = text.rpartition("-v")
    if sep and version.isdigit():
        text = head
    text = "".join(ch for ch in text if ch not in " -_\t")
    if text.startswith("mskbench") and len(text) > len("mskbench"):
        text = text.removeprefix("mskbench")
    return text


def task_id(name: str, *, suite_only: bool = False) -> str:
    """The catalog id for ``name``: an id in any case, or an alias (:data:`ALIASES`: the original
    code's ids such as ``DoorOpen`` or ``MSKBenchWalk-v0``, the paper's spellings such as
    ``open door``). A ``ValueError`` lists the valid ids."""
    ids = SUITE if suite_only else TASKS
    key = name_key(name)
    for candidate in ids:
        if name_key(candidate) == key:
            return candidate
    alias = ALIASES.get(key)
    if alias is not None and alias in ids:
        return alias
    raise ValueError(f"unknown task {name!r}; valid {'suite task ids' if suite_only else 'tasks'}: {', '.join(ids)} "
                     "(any case; the original code's and the paper's names are accepted too)")


def suite_ids(family: str | None = None) -> list[str]:
    """The suite's task ids, optionally only those of one family."""
    if family is not None and family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; valid families: {', '.join(FAMILIES)}")
    return [n for n, f in SUITE.items() if family is None or f == family]
