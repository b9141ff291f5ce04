"""The built-in privileged policies: ``expert`` (a task's behaviour), ``hold`` (keep the start) and the
cheat probes of :mod:`mskbench.control.probes` (``calf-raise``, ``fall-back``, ``basket``, ``lean``).

``make_controller(name, env)`` builds one for an environment; ``serves(name, task)`` says whether it
has a behaviour for a task (``hold`` serves every task; ``expert`` the tasks of :data:`EXPERT_BEHAVIOURS`;
a probe the tasks it aims at, :data:`mskbench.control.probes.PROBE_TASKS`).
"""

from __future__ import annotations

from mskbench.catalog import task_id
from mskbench.control import behaviours as B
from mskbench.control import courses, hanging, seating, walking
from mskbench.control.expert import Behaviour, ExpertPolicy
from mskbench.control.probes import PROBE_TASKS, PROBES

#: The expert's behaviour per task id.
EXPERT_BEHAVIOURS: dict[str, type[Behaviour]] = {
    cls.tasks[0]: cls
    for cls in (B.Stand, B.Powerlift, B.SingleLegStand, seating.Sit, B.Balance, B.Squat, B.Reach, walking.Walk,
                courses.PoleWalk, courses.WalkTurn, B.OpenDoor, seating.WalkAndSit, B.Catch,
                hanging.ChinUp)
}
#: The tasks the expert walks on (its behaviour is the gait layer's).
WALKING_TASKS = tuple(t for t, cls in EXPERT_BEHAVIOURS.items() if issubclass(cls, walking.Walking))
#: The privileged built-in policies, by name.
CONTROLLERS = ("hold", "expert", *PROBES)


def check_controller(name: str) -> str:
    if name not in CONTROLLERS:
        raise ValueError(f"unknown controller {name!r}; the privileged built-in policies: {', '.join(CONTROLLERS)}")
    return name


def serves(name: str, task: str) -> bool:
    """Whether the controller ``name`` has a behaviour for ``task`` (any accepted task name)."""
    check_controller(name)
    if name in PROBES:
        return task_id(task) in PROBE_TASKS[name]
    return name == "hold" or task_id(task) in EXPERT_BEHAVIOURS


def behaviour_for(name: str, task: str) -> Behaviour:
    """A fresh behaviour of controller ``name`` for ``task``; a ``ValueError`` names the tasks it serves."""
    check_controller(name)
    if name == "hold":
        return B.Hold()
    tid = task_id(task)
    if name in PROBES:
        if tid not in PROBE_TASKS[name]:
            raise ValueError(f"the {name} probe aims at {', '.join(PROBE_TASKS[name])}, not {tid}")
        return PROBES[name]()
    if tid not in EXPERT_BEHAVIOURS:
        raise ValueError(f"the expert has no behaviour for {tid}; it serves {', '.join(EXPERT_BEHAVIOURS)} "
                         "('hold' serves every task)")
    return EXPERT_BEHAVIOURS[tid]()


def make_controller(name: str, env, activation_rate: float = 0.0) -> ExpertPolicy:
    """The privileged built-in policy ``name`` (``expert``, ``hold`` or a cheat probe) for ``env`` (an
    :class:`~mskbench.envs.MSKEnv` or a wrapper of one): it reads that environment's simulator.
    ``activation_rate``: its QP's :attr:`~mskbench.control.qp.Weights.activation_rate` (0, the default:
    the behaviour's own weights)."""
    if not activation_rate >= 0.0:
        raise ValueError(f"activation_rate must be >= 0, got {activation_rate}")
    base = getattr(env, "unwrapped", env)
    policy = ExpertPolicy(base, behaviour_for(name, base.task.name), name=name)
    policy.qp.weights.activation_rate = float(activation_rate)
    return policy
