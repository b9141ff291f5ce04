"""Direct external control (App. A-F, Table IV): a paused, replayable, file-mediated session.

A controller — a person, a script, a language model — drives the body one
held muscle command at a time, with the simulator paused in between:

1. :meth:`DirectSession.start` (``mskbench direct start TASK --dir D``) resets
   the task's env with the seed and writes ``D/env_info.json`` (the metadata:
   actuator names in action order, bounds, the observation layout after
   Table XVII, timesteps, the hold, the budget), observation 0
   (``D/observations/decision_000.json``) and ``D/session.json``.
2. The controller reads only ``env_info.json`` and the pending observation and
   writes a bare JSON array of one number per muscle.
3. :meth:`DirectSession.act` (``mskbench direct act D action.json``) validates it
   (:func:`validate_action`: exactly ``n_muscles`` entries, numbers, no
   booleans, finite, within [−1, 1]; a rejected action changes nothing and
   says why), rebuilds the seeded env, replays the committed actions (and
   checks that the replay reproduces the pending observation bit for bit),
   applies the new one with zero-order hold for ``hold_steps`` native control
   steps, checks the fall gate after every native step (non-finite state, root
   height < 0.6 m, root tilt > 70°, Eq. 18; the task's own termination ends the
   session too) and writes the next observation — or the outcome.
4. :meth:`DirectSession.report` (``mskbench direct report D``): duration,
   tracking RMSE (Eq. 19) and the first sustained divergence (Eq. 20) against a
   reference rollout.

Files in ``D`` (written atomically; ``session.json`` last, as the commit):
``session.json`` (settings, status, the committed actions, the outcome),
``env_info.json``, ``observations/decision_NNN.json`` (controller-visible) and
``trajectory.npz`` (logging only — every native sample's time, root height,
tilt, fall flag and tracking error; a controller must not read it).

Choices where the paper and the original
(``experiments/gpt6_direct_control/*.py@4ffd2d6`` and
``paused_env_controller.py@d7a2891``) are silent or do not apply to
mskbench — see docs/paradigms.md:

* the observation is mskbench's own policy observation (Walk: 2,046 values,
  416 muscles with length, velocity, force and activation; no touch sensors),
  restructured losslessly after Table XVII's rows;
* the tracked sites of Eq. 19 are the origins of 16 bodies
  (:data:`TRACKED_BODIES`), the reference is the task's own reference motion
  (Walk: the synthetic gait at the episode's phase, placed on the floor, its
  root advancing at the target speed); tasks without one report no tracking;
* Eq. 20's reference rollout (the paper: a MuscleMimic checkpoint) is any
  policy or another session — by default the built-in ``zero`` policy, acting
  at every native step, under the same fall gate.

In two modules: :mod:`~mskbench.paradigms.direct.protocol` (the action contract, the fall gate, the tracking
error, the observation file, the player) and :mod:`~mskbench.paradigms.direct.session` (the session store,
:class:`DirectSession`); every name is importable from here.
"""

from mskbench.paradigms.direct.protocol import (FALL_HEIGHT_M, FALL_TILT_DEG, HOLD_STEPS, MAX_DURATION_S, MUSCLE_FIELDS,
                                                TABLE_XVII, ActionRejected, Outcome, SiteTracker, fall_reason,
                                                flatten_observation, load_action, observation_layout,
                                                serialize_observation, validate_action)
from mskbench.paradigms.direct.session import (DEFAULT_REFERENCE, FORMAT, FORMAT_VERSION, INFO_FILE, OBSERVATIONS_DIR,
                                               SESSION_FILE, TRAJECTORY_FILE, DirectSession, SessionComplete)
from mskbench.tasks.motion_reference import TRACKED_BODIES

__all__ = ["DEFAULT_REFERENCE", "FALL_HEIGHT_M", "FALL_TILT_DEG", "FORMAT", "FORMAT_VERSION", "HOLD_STEPS", "INFO_FILE",
           "MAX_DURATION_S", "MUSCLE_FIELDS", "OBSERVATIONS_DIR", "SESSION_FILE", "TABLE_XVII", "TRACKED_BODIES",
           "TRAJECTORY_FILE", "ActionRejected", "DirectSession", "Outcome", "SessionComplete", "SiteTracker",
           "fall_reason", "flatten_observation", "load_action", "observation_layout", "serialize_observation",
           "validate_action"]
