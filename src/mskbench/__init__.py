"""mskbench: a full-body musculoskeletal motor-control benchmark.

Importing the package registers one Gymnasium id per task,
``mskbench/<Task>-v0`` (e.g. ``gymnasium.make("mskbench/Stand-v0")``). The
import is light: MuJoCo and the model load only when an env is made.
"""

from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

#: Task ids registered with Gymnasium (kept in sync with ``mskbench.tasks.REGISTRY``;
#: ``tests/test_env.py`` checks that).
TASK_IDS = (
    "Stand", "Powerlift", "SingleLegStand", "Sit", "Balance", "Squat",
    "Walk", "Crawl", "Run", "Jump", "WalkTurn", "Sidestep",
    "Stairs", "Hurdle", "StepStones", "Slide", "OpenDoor", "Reach", "WalkAndSit", "ChinUp", "Catch", "PoleWalk",
)


def _register() -> None:
    for name in TASK_IDS:
        env_id = f"mskbench/{name}-v0"
        if env_id not in registry:
            register(id=env_id, entry_point="mskbench.envs.cpu_env:MSKEnv", kwargs={"task": name})


_register()
