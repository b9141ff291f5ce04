"""The expert controller (mskbench.control) and the muscle model it reads (mskbench.sim.muscles)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mskbench.envs import MSKEnv
from mskbench.sim.muscles import MuscleParams, activation_after, activation_rate, excitation_for, muscle_gain_bias


@pytest.fixture(scope="module")
def stand_env():
    env = MSKEnv("Stand")
    yield env
    env.close()


def test_muscle_curves_match_mujoco_on_random_states(stand_env):
    m = stand_env.model
    ids = stand_env.handles.muscle_ids
    p = MuscleParams(m, ids)
    rng = np.random.default_rng(0)
    for _ in range(3):
        length = rng.uniform(m.actuator_lengthrange[ids, 0] - 0.03, m.actuator_lengthrange[ids, 1] + 0.03)
        velocity = rng.normal(0.0, 0.6, ids.size)
        gain, bias = muscle_gain_bias(p, length, velocity)
        ref_gain = [mujoco.mju_muscleGain(length[i], velocity[i], m.actuator_lengthrange[j], m.actuator_acc0[j],
                                          m.actuator_gainprm[j, :9]) for i, j in enumerate(ids)]
        ref_bias = [mujoco.mju_muscleBias(length[i], m.actuator_lengthrange[j], m.actuator_acc0[j],
                                          m.actuator_biasprm[j, :9]) for i, j in enumerate(ids)]
        np.testing.assert_allclose(gain, ref_gain, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(bias, ref_bias, rtol=1e-12, atol=1e-9)
        act, ctrl = rng.uniform(0, 1, ids.size), rng.uniform(0, 1, ids.size)
        ref_rate = [mujoco.mju_muscleDynamics(ctrl[i], act[i], m.actuator_dynprm[j, :3]) for i, j in enumerate(ids)]
        np.testing.assert_allclose(activation_rate(p, act, ctrl), ref_rate, rtol=1e-12, atol=1e-12)


def test_activation_over_a_control_step_is_mujocos_and_inverts(stand_env):
    env = stand_env
    h = env.handles
    p = MuscleParams(env.model, h.muscle_ids)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    act0 = env.data.act[h.muscle_act_adr].copy()
    ctrl = rng.uniform(0.0, 1.0, env.n_muscles)
    predicted = activation_after(p, act0, ctrl, env.model.opt.timestep, env.sim.frame_skip)
    env.step(2.0 * ctrl - 1.0)
    np.testing.assert_allclose(predicted, env.data.act[h.muscle_act_adr], atol=1e-12)
    # the excitation that reaches those activations is the one applied
    back = excitation_for(p, act0, predicted, env.model.opt.timestep, env.sim.frame_skip)
    np.testing.assert_allclose(back, ctrl, atol=1e-6)
    # an unreachable target gives the bound
    out = excitation_for(p, np.zeros(3 * 0 + act0.size), np.full(act0.size, 2.0), env.model.opt.timestep, 10)
    assert np.all(out > 1.0 - 1e-6)


# -- the excitation that gives a planned mean activation ------------------------------------------------
def test_excitation_for_a_mean_activation_is_found_within_what_one_step_reaches():
    from mskbench.control import make_controller

    env = MSKEnv("Stand")
    qp = make_controller("expert", env).qp
    rng = np.random.default_rng(3)
    act = rng.uniform(0.0, 1.0, qp.nm)
    low = qp.mean_activation(act, np.zeros(qp.nm))
    high = qp.mean_activation(act, np.ones(qp.nm))
    target = low + rng.uniform(0.0, 1.0, qp.nm) * (high - low)
    u = qp.excitation_for_mean(act, target)
    assert np.all((u >= 0.0) & (u <= 1.0))
    assert np.abs(qp.mean_activation(act, u) - target).max() < 2e-3
    # beyond reach: the bound
    assert np.all(qp.excitation_for_mean(act, high + 0.1) == 1.0)
    assert np.all(qp.excitation_for_mean(act, np.maximum(low - 0.1, -1.0)) == 0.0)


def test_action_maps_invert():
    from mskbench.envs.action_map import ACTION_MAPS, action_for, excitation, excitation_range

    a = np.linspace(-1.0, 1.0, 41)
    for name in ACTION_MAPS:
        u = excitation(a, name, np)
        np.testing.assert_allclose(action_for(u, name, np), a, atol=1e-9)
        lo, hi = excitation_range(name)
        assert np.all(action_for(np.array([lo - 0.1, hi + 0.1]), name, np) == np.array([-1.0, 1.0]))


# -- the capture-point law's geometry --------------------------------------------------------------------
def test_support_polygon_projection():
    from mskbench.control.balance import com_acceleration, convex_hull_2d, project_into

    square = convex_hull_2d(np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]], float))
    assert len(square) == 4
    np.testing.assert_allclose(project_into(square, np.array([0.5, 0.5]), 0.1), [0.5, 0.5])
    np.testing.assert_allclose(project_into(square, np.array([2.0, 0.5]), 0.1), [0.9, 0.5], atol=1e-9)
    # a point inside but nearer the edge than the margin goes in by the margin
    np.testing.assert_allclose(project_into(square, np.array([0.95, 0.5]), 0.1), [0.9, 0.5], atol=1e-9)
    # at rest over the reference: no horizontal push; ahead of it: pushed back
    acc, p = com_acceleration(np.array([0.5, 0.5, 1.0]), np.zeros(3), np.array([0.5, 0.5, 1.0]), square)
    np.testing.assert_allclose(acc, 0.0, atol=1e-12)
    acc, p = com_acceleration(np.array([0.6, 0.5, 1.0]), np.zeros(3), np.array([0.5, 0.5, 1.0]), square)
    assert acc[0] < 0.0 and abs(acc[1]) < 1e-12


# -- the QP ------------------------------------------------------------------------------------------
def _standing_states(n: int):
    """Standing states of Stand with the start noise, random velocities and activations."""
    env = MSKEnv("Stand")
    rng = np.random.default_rng(7)
    for seed in range(n):
        env.reset(seed=seed)
        for _ in range(3):
            env.step(rng.uniform(-1.0, -0.2, env.n_muscles).astype(np.float32))
        yield env


def test_qp_force_identity_on_standing_states():
    """At the QP's solution, inverse dynamics (MuJoCo's mj_inverse at the planned accelerations, its constraint
    solver off: M q̈ + c less the passive forces) equals the muscles' generalised forces at the planned
    activations (MuJoCo's own actuation) plus the constraint, support and reserve forces, on every dof the QP
    covers."""
    import copy

    from mskbench.control import make_controller

    for env in _standing_states(3):
        policy = make_controller("expert", env)
        policy.reset()
        obs = env._observe(env.sim.view(), env.task_state)
        policy.act(obs)
        sol, qp = policy.last, policy.qp
        assert sol.status == "PIQP_SOLVED"
        m = copy.deepcopy(qp.m)
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:], d.qacc[:] = qp.d.qpos, qp.d.qvel, sol.qacc
        d.act[:] = qp.d.act
        d.act[qp.adr] = sol.activation
        mujoco.mj_inverse(m, d)
        mujoco.mj_fwdActuation(m, d)
        muscles = d.qfrc_actuator.copy()
        lhs = d.qfrc_inverse[sol.dofs]
        rhs = (muscles + sol.forces["constraints"] + sol.forces["supports"] + sol.forces["reserves"])[sol.dofs]
        scale = max(1.0, float(np.abs(lhs).max()))
        assert np.abs(lhs - rhs).max() < 1e-4 * scale, np.abs(lhs - rhs).max()
        # the supports carry the body: their vertical forces sum to about its weight
        weight = float(qp.m.body_mass[env.handles.body_tree].sum() * 9.81)
        assert 0.5 * weight < sol.support_force[:, 2].sum() < 1.5 * weight


def test_the_controller_is_not_told_the_dynamics_perturbation_and_reads_it_off_the_forces():
    """Its model copy keeps the nominal gains; within 30 control steps its per-muscle strength estimate (what
    the QP plans with) matches the plant's drawn factors on every muscle that has pulled."""
    from mskbench.control import make_controller
    from mskbench.envs.perturbations import Perturbation

    env = MSKEnv("Stand", perturbation=Perturbation(muscle_gain_range=0.2))
    policy = make_controller("expert", env)
    obs, info = env.reset(seed=1)
    policy.reset(1)
    ids = env.handles.muscle_ids
    assert not np.allclose(env.model.actuator_gainprm[ids, 2], env.sim._gain0)  # the plant changed
    np.testing.assert_array_equal(policy.qp.m.actuator_gainprm[ids, 2], env.sim._gain0)  # not told
    truth = info["muscle_gain"]
    for _ in range(30):
        obs, *_ = env.step(policy.act(obs))
    est = policy.strength.factors()
    pulled = policy.strength._den > 0.5  # what has pulled: the prior's pull towards 1 is below 1e-3·0.2/0.5
    assert pulled.sum() > 150
    dead = np.abs(truth - 1.0) <= policy.strength.deadband  # planned with as nominal
    np.testing.assert_allclose(est[pulled], np.where(dead, 1.0, truth)[pulled], atol=2e-3)
    np.testing.assert_allclose(policy.qp.muscles.force, env.sim._gain0 * est)


def test_on_the_nominal_plant_with_a_clean_observation_strength_and_filter_change_nothing():
    """Every strength factor stays exactly 1 there and the observation counts as clean, so the expert acts bit
    for bit as with the nominal model and the raw observation."""
    from mskbench.control import EXPERT_BEHAVIOURS
    from mskbench.control.expert import ExpertPolicy

    runs = []
    for estimate in (True, False):
        env = MSKEnv("Stand")
        policy = ExpertPolicy(env, EXPERT_BEHAVIOURS["Stand"](), estimate_strength=estimate,
                              filter_observation=estimate)
        obs, _ = env.reset(seed=3)
        policy.reset(3)
        acts = []
        for _ in range(30):
            acts.append(policy.act(obs))
            obs, *_ = env.step(acts[-1])
        runs.append(np.array(acts))
        if estimate:
            assert np.all(policy.strength.factors() == 1.0)
            assert policy.filter.sigma < 1e-6
    np.testing.assert_array_equal(runs[0], runs[1])


def test_kalman_step_averages_then_settles():
    from mskbench.control.filtering import kalman_step

    assert kalman_step(0.3, 0.1, 0.0) == (1.0, 0.0)  # an exact measurement is taken as it is
    var, gains = 1.0, []
    for _ in range(4):  # no process noise: the running mean of the measurements (gains 1/2, 1/3, ...)
        g, var = kalman_step(var, 0.0, 1.0)
        gains.append(g)
    np.testing.assert_allclose(gains, [1 / 2, 1 / 3, 1 / 4, 1 / 5])
    q, r, var = 0.2, 1.0, 0.0
    for _ in range(200):
        g, var = kalman_step(var, q, r)
    prior = 0.5 * (q * q + np.sqrt(q**4 + 4 * q * q * r * r))
    assert g == pytest.approx(prior / (prior + r * r))


def test_the_expert_filters_a_noisy_observation():
    """σ̂ reads the noise level off the observation (≈ 0 when clean); with N(0, 0.05²) on every entry, the
    joint angles the expert plans from are several times closer to the true ones than the observed ones,
    and its dependent joints sit on their couplings."""
    from mskbench.control import make_controller

    env = MSKEnv("Stand")
    policy = make_controller("expert", env)
    obs, _ = env.reset(seed=0)
    policy.reset(0)
    rng = np.random.default_rng(0)
    h = env.handles
    sl = env.obs_layout["qpos"]
    errs, raw, sigmas = [], [], []
    for t in range(60):
        noisy = (obs + 0.05 * rng.standard_normal(obs.shape)).astype(np.float32)
        action = policy.act(noisy)
        sigmas.append(policy.filter.sigma)
        true = env.data.qpos[h.joint_qpos]
        errs.append(policy.qp.d.qpos[h.joint_qpos] - true)
        raw.append(noisy[sl][5:].astype(float) - env.data.qpos[7:h.nq_body])
        assert np.abs(h.couplings.residual(policy.qp.d.qpos)).max() < 1e-9
        obs, *_ = env.step(action)
    assert np.median(sigmas) == pytest.approx(0.05, rel=0.15)
    rms = lambda e: float(np.sqrt(np.mean(np.square(e[20:]))))  # noqa: E731
    assert rms(np.array(errs)) < 0.25 * rms(np.array(raw))


def test_strength_estimate_recovers_factors_from_forces_one_substep_older(stand_env):
    """Synthetic observations as MuJoCo makes them: the force of a scaled muscle at the activation one
    substep before the observed one. With the excitation sent, the factors come back to float precision;
    unobserved muscles keep the prior's 1; the bounds clip."""
    from mskbench.control.strength import StrengthEstimate

    env = stand_env
    ids = env.handles.muscle_ids
    p = MuscleParams(env.model, ids)
    f0 = env.sim._gain0
    dt = float(env.model.opt.timestep)
    rng = np.random.default_rng(0)
    n = ids.size
    truth = 1.0 + 0.2 * (2.0 * rng.random(n) - 1.0)
    truth[0] = 3.0  # beyond the bounds
    est, naive = StrengthEstimate(p, f0, dt, prior=1e-9), StrengthEstimate(p, f0, dt, prior=1e-9)
    lo, hi = env.model.actuator_lengthrange[ids, 0], env.model.actuator_lengthrange[ids, 1]
    silent = np.zeros(n, bool)
    silent[1] = True  # a muscle that never pulls (slack, no activation)
    for _ in range(20):
        length = lo + (hi - lo) * rng.uniform(0.3, 0.7, n)
        velocity = rng.normal(0.0, 0.05, n)
        act = rng.uniform(0.05, 0.9, n)
        u = rng.uniform(0.0, 1.0, n)
        act[silent], u[silent], length[silent] = 0.0, 0.0, lo[silent]
        gain, bias = muscle_gain_bias(p, length, velocity)
        force = truth * (gain * act + bias) / f0
        act_obs = np.clip(act + dt * activation_rate(p, act, u), 0.0, 1.0)  # one Euler substep on
        est.update(force, length, velocity, act_obs, u)
        naive.update(force, length, velocity, act_obs, None)
    got = est.factors()
    expected = np.where(np.abs(truth - 1.0) <= est.deadband, 1.0, truth)  # within the deadband: exactly 1
    np.testing.assert_allclose(got[2:], expected[2:], atol=1e-6)
    assert got[0] == 1.5 and got[1] == 1.0
    assert np.abs(naive.factors()[2:] - truth[2:]).max() > 10 * np.abs(got[2:] - truth[2:]).max()
    with pytest.raises(ValueError, match="prior must be positive"):
        StrengthEstimate(p, f0, dt, prior=0.0)

    # under action noise what reached a muscle is not what was sent: given the activations observed before the
    # step, a muscle whose activation the sent excitation does not explain is left out of that step
    nsub = 3
    est = StrengthEstimate(p, f0, dt, prior=1e-9, substeps=nsub)
    for _ in range(10):
        length = lo + (hi - lo) * rng.uniform(0.3, 0.7, n)
        velocity = rng.normal(0.0, 0.05, n)
        before = rng.uniform(0.05, 0.9, n)
        u = rng.uniform(0.0, 1.0, n)
        reached = u.copy()
        reached[2] = np.clip(u[2] + 0.3, 0.0, 1.0)  # muscle 2: noise on its excitation
        a = before
        for _ in range(nsub - 1):
            a = a + dt * activation_rate(p, a, reached)
        gain, bias = muscle_gain_bias(p, length, velocity)
        force = truth * (gain * a + bias) / f0
        act_obs = np.clip(a + dt * activation_rate(p, a, reached), 0.0, 1.0)
        est.update(force, length, velocity, act_obs, u, previous=before)
    got = est.factors()
    assert got[2] == 1.0 and truth[2] != pytest.approx(1.0, abs=est.deadband)
    np.testing.assert_allclose(got[3:], expected[3:], atol=1e-6)


def test_a_hovering_support_is_brought_down_to_its_surface():
    """With ``support_seat_kp``, a foot whose soles hover above the floor (the body lifted 6 mm, still within
    the candidate points' reach) is planned to accelerate towards the floor; without it, only held still."""
    from mskbench.control import EXPERT_BEHAVIOURS
    from mskbench.control.expert import ExpertPolicy

    env = MSKEnv("Stand")
    policy = ExpertPolicy(env, EXPERT_BEHAVIOURS["Stand"]())
    env.reset(seed=0)
    policy.reset(0)
    env.data.qpos[2] += 0.006
    env.data.qvel[:] = 0.0
    qp = policy.qp
    qp.load(env.data.qpos, env.data.qvel, env.data.act)
    foot = policy.ctx.body("foot_l")
    jac = np.zeros((3, qp.nv))
    rates = {}
    for kp in (0.0, 400.0):
        targets = policy.behaviour.targets(policy.ctx)
        targets.support_seat_kp = kp
        assert foot in targets.supports
        mujoco.mj_jacBody(qp.m, qp.d, jac, None, foot)
        rates[kp] = float((jac @ qp.solve(targets).qacc)[2])
    assert policy.behaviour.seat_kp == 400.0  # Stand's expert seats its supports
    assert rates[400.0] < rates[0.0] - 0.5  # m/s²: at least a fifth of 400 · 6 mm more towards the floor


def test_the_expert_reads_its_body_from_the_observation():
    """Observation noise reaches what the expert believes: its state is the observation's, not the simulator's."""
    from mskbench.control import make_controller

    env = MSKEnv("Stand")
    policy = make_controller("expert", env)
    obs, _ = env.reset(seed=0)
    policy.reset(0)
    noisy = obs.copy()
    sl = env.obs_layout["qpos"]
    noisy[sl.start + 10] += 0.05  # a joint angle
    policy.act(noisy)
    h = env.handles
    believed = policy.qp.d.qpos[h.joint_qpos]
    true = env.data.qpos[h.joint_qpos]
    # the observation is float32: the other joints agree to its precision, the noised one is off by the noise
    assert np.count_nonzero(np.abs(believed - true) > 1e-5) == 1
    assert np.isclose(np.abs(believed - true).max(), 0.05, atol=1e-5)


def test_expert_stands_for_a_second():
    from mskbench.control import make_controller

    env = MSKEnv("Stand")
    policy = make_controller("expert", env)
    obs, _ = env.reset(seed=4)
    policy.reset(4)
    for _ in range(100):
        obs, _, terminated, truncated, info = env.step(policy.act(obs))
        assert not terminated
    assert env.data.xpos[env.handles.bodies["pelvis"]][2] > 0.85
    assert policy.last.status == "PIQP_SOLVED"
    assert np.abs(policy.last.reserve).max() < 5.0  # N·m: the muscles carry it


def test_a_qp_the_solver_did_not_solve_is_an_error_not_a_plan(stand_env, monkeypatch):
    """PIQP's answer is acted on when solved, or stopped at its iteration limit with its equality rows holding
    (the status is kept in the solution); an iterate that breaks them, another status or a non-finite iterate is
    an error naming the status."""
    from mskbench.control import make_controller
    from mskbench.control import qp as qp_module

    policy = make_controller("expert", stand_env)
    obs, _ = stand_env.reset(seed=0)
    policy.reset(0)
    solve = qp_module._solve
    monkeypatch.setattr(qp_module, "_solve", lambda *a: (solve(*a)[0], "PIQP_MAX_ITER_REACHED"))
    policy.act(obs)
    assert policy.last.status == "PIQP_MAX_ITER_REACHED"
    monkeypatch.setattr(qp_module, "_solve", lambda *a: (np.zeros_like(solve(*a)[0]), "PIQP_MAX_ITER_REACHED"))
    with pytest.raises(RuntimeError, match=r"not solved \(PIQP_MAX_ITER_REACHED\)"):
        policy.act(obs)
    monkeypatch.setattr(qp_module, "_solve", lambda *a: (solve(*a)[0], "PIQP_PRIMAL_INFEASIBLE"))
    with pytest.raises(RuntimeError, match=r"not solved \(PIQP_PRIMAL_INFEASIBLE\)"):
        policy.act(obs)
    monkeypatch.setattr(qp_module, "_solve", lambda *a: (np.full_like(solve(*a)[0], np.nan), "PIQP_SOLVED"))
    with pytest.raises(RuntimeError, match="non-finite iterate"):
        policy.act(obs)


def test_activation_rate_smooths_the_experts_actions_and_it_still_stands():
    """The QP's ``activation_rate`` weight keeps the activations near the current ones: over the same
    60 steps from the same start the actions change less from step to step, and the body stays up."""
    from mskbench.control import make_controller

    changes = {}
    for rate in (0.0, 1000.0):
        env = MSKEnv("Stand")
        policy = make_controller("expert", env, activation_rate=rate)
        obs, _ = env.reset(seed=4)
        policy.reset(4)
        actions = []
        for _ in range(60):
            actions.append(policy.act(obs))
            obs, _, terminated, _, _ = env.step(actions[-1])
            assert not terminated
        assert policy.qp.weights.activation_rate == rate
        changes[rate] = float(np.mean(np.diff(np.array(actions), axis=0) ** 2))
    assert changes[1000.0] < 0.3 * changes[0.0], changes
    with pytest.raises(ValueError, match="activation_rate must be >= 0"):
        make_controller("expert", env, activation_rate=-1.0)


@pytest.mark.slow
def test_expert_stand_episode_succeeds():
    from mskbench.control import make_controller
    from mskbench.eval.episodes import run_episode

    env = MSKEnv("Stand")
    result = run_episode(env, make_controller("expert", env), seed=11)
    assert result.success and result.length == 1000
    # Eq. 7, mean squared activation: 0.045 on this seed, median 0.046 over seeds 0-49 (0.042-0.091; the run
    # behind docs/stand_margin_expert_results.json, mean 0.0501); the paper's best Stand policy (SAC) spends 0.0484.
    assert result.activation_cost < 0.06


def test_a_task_without_expert_behaviour_is_a_one_line_error():
    from mskbench.control import EXPERT_BEHAVIOURS, make_controller, serves

    env = MSKEnv("Run")
    with pytest.raises(ValueError, match="no behaviour for Run; it serves Stand, ") as err:
        make_controller("expert", env)
    assert "\n" not in str(err.value) and all(t in str(err.value) for t in EXPERT_BEHAVIOURS)
    assert serves("hold", "Run") and not serves("expert", "MSKBenchRun-v0") and serves("expert", "singlestand")
    with pytest.raises(ValueError, match="privileged built-in policies: hold, expert"):
        make_controller("genius", env)


def test_hold_acts_on_any_task():
    """hold builds on a standing, a hanging (no ground support) and a prone start and keeps its actions valid."""
    from mskbench.control import make_controller

    for task in ("ChinUp", "Crawl", "StepStones"):
        env = MSKEnv(task)
        policy = make_controller("hold", env)
        obs, _ = env.reset(seed=0)
        policy.reset(0)
        for _ in range(3):
            action = policy.act(obs)
            assert action.shape == (env.n_muscles,) and np.all(np.abs(action) <= 1.0)
            obs, *_ = env.step(action)
        env.close()


def test_cli_names_the_tasks_the_expert_serves():
    from click.testing import CliRunner

    from mskbench.cli import main

    result = CliRunner().invoke(main, ["run", "Run", "--policy", "expert", "--episodes", "1"])
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("Error: the expert has no behaviour for Run; it serves Stand")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [
    ["eval", "--task", "Stand,Run", "--policy", "expert", "--episodes", "1", "--workers", "2"],
    ["sweep", "--task", "Run", "--policy", "expert", "--episodes", "1", "--types", "action"],
    ["render", "Run", "--policy", "expert", "--out", "{tmp}/sheet.png"],
], ids=["eval", "sweep", "render"])
def test_commands_refuse_a_task_the_expert_does_not_serve_before_they_start(tmp_path, args):
    # Checked up front: one line naming the tasks it serves, no traceback from a worker, no store created.
    from click.testing import CliRunner

    from mskbench.cli import main

    store = tmp_path / "s.db"
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if args[0] != "render":
        args += ["--store", str(store)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1].startswith(
        "Error: Invalid value for --policy: the expert has no behaviour for Run; it serves Stand")
    assert "Traceback" not in result.output
    assert not store.exists() and not (tmp_path / "sheet.png").exists()


def test_an_experts_episode_does_not_depend_on_the_episode_before():
    """A controller reused across episodes (a DAgger world's teacher) acts in an episode as a fresh one:
    Squat's pose table comes from this episode's start, not the first episode's."""
    from mskbench.control import make_controller

    env = MSKEnv("Squat")
    reused = make_controller("expert", env)
    env.reset(seed=1)
    reused.reset(1)
    obs, _ = env.reset(seed=0)
    reused.reset(0)
    after_another = reused.act(obs)
    fresh = make_controller("expert", env)
    fresh.reset(0)
    np.testing.assert_array_equal(fresh.act(obs), after_another)


def test_the_arms_are_the_shoulder_girdles_down_and_single_leg_stand_holds_them_firmer():
    """The arm joints are those below each clavicle (where one hand's ancestry leaves the other's); SingleLegStand
    weighs their posture 10x the others' (it threw an arm overhead in each fall), Stand leaves the QP's uniform
    default."""
    from mskbench.control import make_controller
    from mskbench.control.behaviours import arm_joints, arm_roots

    env = MSKEnv("SingleLegStand")
    policy = make_controller("expert", env)
    m, h = policy.qp.m, env.handles
    roots = arm_roots(m, h.bodies["hand_l"], h.bodies["hand_r"])
    assert [m.body(b).name for b in roots] == ["clavicle_l", "clavicle_r"]
    arms = arm_joints(m, policy.qp.joint_dof, h.bodies["hand_l"], h.bodies["hand_r"])
    names = [m.joint(m.dof_jntid[d]).name for d in policy.qp.joint_dof]
    by_name = dict(zip(names, arms))
    assert by_name["shoulder_elv_r"] and by_name["elbow_flex_l"] and by_name["sternoclavicular_r2_r"]
    assert not by_name["hip_flexion_r"] and not by_name["flex_extension"] and not by_name["knee_angle_l"]

    obs, _ = env.reset(seed=0)
    policy.reset(0)
    weights = policy.behaviour.targets(policy.ctx).posture_weight
    np.testing.assert_allclose(weights[arms], 10.0 * policy.qp.weights.posture)
    np.testing.assert_allclose(weights[~arms], policy.qp.weights.posture)

    stand = make_controller("expert", MSKEnv("Stand"))
    stand.env.reset(seed=0)
    stand.reset(0)
    assert stand.behaviour.targets(stand.ctx).posture_weight is None


def test_sit_holds_its_arms_firmer_on_the_way_down_and_seated():
    """Sit weighs the arms' posture 3x the other joints' in both of its phases (it flung an arm overhead while
    seated); the walkers keep the uniform default, and the option reaches them."""
    from mskbench.control import make_controller

    env = MSKEnv("Sit")
    policy = make_controller("expert", env)
    env.reset(seed=0)
    policy.reset(0)
    beh = policy.behaviour
    arms = beh.arm_scale > 1.0
    assert arms.sum() > 20 and not arms.all()
    for landed in (False, True):  # the descent, then on the seat
        beh.landed = landed
        weights = beh.targets(policy.ctx).posture_weight
        np.testing.assert_allclose(weights[arms], 3.0 * policy.qp.weights.posture)
        np.testing.assert_allclose(weights[~arms], policy.qp.weights.posture)
    walk = make_controller("expert", MSKEnv("Walk"))
    walk.env.reset(seed=0)
    walk.reset(0)
    assert walk.behaviour.arm_scale is None
    walk.behaviour.arm_posture_scale = 10.0  # the option reaches the walker's own posture weights too
    walk.reset(0)
    weights = walk.behaviour.targets(walk.ctx).posture_weight
    assert np.all(weights[arms] == 10.0 * walk.behaviour.posture_weight)


def test_chin_up_hangs_on_the_grip_rows_and_pulls_the_head_up():
    """ChinUp has no supports: the bar carries the body through the grip's equality rows, which the QP holds
    (their force on the root balances the weight); the head rises more than 10 cm in the first 0.8 s."""
    from mskbench.control import make_controller

    env = MSKEnv("ChinUp")
    policy = make_controller("expert", env)
    obs, _ = env.reset(seed=0)
    policy.reset(0)
    head = env.handles.bodies["head"]
    z0 = env.data.xpos[head][2]
    for _ in range(40):
        obs, _, terminated, _, _ = env.step(policy.act(obs))
        assert not terminated
        assert policy.last.status == "PIQP_SOLVED" and policy.last.support_force.size == 0
    weight = env.model.body_subtreemass[env.handles.bodies["root"]] * 9.81
    root_z = env.model.body_dofadr[env.handles.bodies["root"]] + 2  # the free root's vertical dof
    assert 0.7 * weight < policy.last.forces["constraints"][root_z] < 2.0 * weight
    assert env.data.xpos[head][2] - z0 > 0.10


@pytest.mark.parametrize("friction", [0.4, 0.8])
def test_support_forces_are_planned_within_the_behaviours_friction(friction):
    """Reach plans its support forces within a friction coefficient of 0.4 (an unloaded foot slid at 0.8):
    the behaviour's coefficient reaches the QP's friction pyramid, and the plan uses what it allows."""
    from mskbench.control.expert import ExpertPolicy
    from mskbench.control.registry import behaviour_for

    env = MSKEnv("Reach")
    behaviour = behaviour_for("expert", "Reach")
    assert behaviour.friction == 0.4
    behaviour.friction = friction
    policy = ExpertPolicy(env, behaviour)
    obs, _ = env.reset(seed=1)
    policy.reset(1)
    ratio = 0.0
    for _ in range(40):
        obs, *_ = env.step(policy.act(obs))
        f = policy.last.support_force
        loaded = f[:, 2] > 1.0  # N: the floor's normal is +z
        ratio = max(ratio, float((np.abs(f[loaded, :2]) / f[loaded, 2:]).max()))
    assert ratio <= friction + 1e-3
    assert ratio > 0.9 * friction  # the limit binds somewhere in 40 steps: the coefficient matters
