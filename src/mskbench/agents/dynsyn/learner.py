"""DynSyn for a learner: its settings (``SACConfig.dynsyn``) → the groups (read from a file or computed) →
the action map (:func:`learner_action_map`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mskbench.agents.dynsyn.action_map import (MSK_BENCH_SCHEDULE, DynSynActionMap, SynergyGroups, WeightBoundSchedule,
                                               _env_muscles)
from mskbench.agents.dynsyn.grouping import DEFAULT_N_GROUPS, DEFAULT_STEPS, compute_groups

if TYPE_CHECKING:
    from mskbench.envs.protocols import VectorEnv


#: Keys of ``SACConfig.dynsyn`` (:func:`learner_action_map`).
LEARNER_SETTINGS = ("groups", "n_groups", "steps", "seed", "weight_bound_start", "weight_bound_end",
                    "weight_bound_steps", "weight_bound_delay")


def learner_action_map(settings: Mapping[str, Any], env: "VectorEnv") -> tuple[int, DynSynActionMap, dict]:
    """``(action_size, map, record)`` for a learner on ``env`` (an MSKVectorEnv).

    ``settings``: ``groups`` (a groups JSON path; absent/None: computed for
    the env's task with ``n_groups``, ``steps``, ``seed``, defaults 76,
    25,600, 0), ``weight_bound_start``/``_end``/``_steps``/``_delay`` (default:
    :data:`MSK_BENCH_SCHEDULE`). The map counts one transition per world and
    call; ``record`` is the map's live record (see :class:`DynSynActionMap`).
    """
    unknown = sorted(set(settings) - set(LEARNER_SETTINGS))
    if unknown:
        raise ValueError(f"unknown DynSyn settings {unknown}; valid: {', '.join(LEARNER_SETTINGS)}")
    names = _env_muscles(env)
    path = settings.get("groups")
    if path is not None:
        try:
            groups = SynergyGroups.from_json(path, names)
        except FileNotFoundError:
            raise ValueError(f"DynSyn groups file {path} does not exist (make one with 'mskbench synergies')") \
                from None
    else:
        from mskbench.envs.vector import worlds

        envs = worlds(env, "computing DynSyn groups (else pass settings['groups'], a JSON file)")
        groups = compute_groups(None, env=envs[0], n_groups=int(settings.get("n_groups", DEFAULT_N_GROUPS)),
                                steps=int(settings.get("steps", DEFAULT_STEPS)), seed=int(settings.get("seed", 0)))
    if groups.n_muscles != env.action_size:
        raise ValueError(f"the groups cover {groups.n_muscles} muscles; the env acts on {env.action_size}")
    d = MSK_BENCH_SCHEDULE
    schedule = WeightBoundSchedule(float(settings.get("weight_bound_start", d.start)),
                                   float(settings.get("weight_bound_end", d.end)),
                                   int(settings.get("weight_bound_steps", d.steps)),
                                   int(settings.get("weight_bound_delay", d.delay)))
    amap = DynSynActionMap(groups, schedule)
    return groups.action_size, amap, amap.record
