"""DynSyn's layer: muscle groups from random joint kicks, the group→muscle action map, the weight
bound's schedule, the vector-env wrapper, the groups file and ``mskbench synergies``."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import combinations

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.agents.dynsyn import (MSK_BENCH_SCHEDULE, DynSynActionMap, DynSynActionWrapper, SynergyGroups,
                                    WeightBoundSchedule, allocate_groups, compute_groups, dynsyn_muscle_actions,
                                    fasterpam, kmedoids, learner_action_map, length_similarity, muscle_sides,
                                    stored_map)
from mskbench.cli import main
from mskbench.envs.protocols import VectorEnv
from mskbench.envs.vector import MSKVectorEnv


@pytest.fixture(scope="module")
def walk_groups(shared_envs) -> SynergyGroups:
    """Groups of the Walk body from a short recording (the default 76 groups; 2 k-medoids starts)."""
    return compute_groups(env=shared_envs("Walk"), steps=300, seed=0, restarts=2)


@pytest.fixture(scope="module")
def vec_env():
    env = MSKVectorEnv("Walk", num_envs=2)
    yield env
    env.close()


def _toy() -> SynergyGroups:
    """5 muscles: group 0 = {0, 2} (representative 0), group 1 = {1, 3, 4} (representative 3)."""
    return SynergyGroups.from_lists(["a", "b", "c", "d", "e"], [[1, 3, 4], [0, 2]], representative=[3, 0])


# -- sides and groups -----------------------------------------------------------------------------------
def _twin(name: str) -> str:
    if name.endswith("_r"):
        return name[:-2] + "_l"
    return name + "_left"  # MyoFullBody's right arm: bare names, its left twins end in _left


def test_myofullbody_sides_by_name_agree_with_the_anatomy(shared_envs):
    """208 right and 208 left muscles, none midline; each right muscle's path lies to the right of its
    left twin's (root frame), so the naming rules read MyoFullBody's names correctly."""
    env = shared_envs("Walk")
    env.reset(seed=0)
    m, d, h = env.model, env.data, env.handles
    names = h.muscle_names
    sides = muscle_sides(names)
    assert sides.count("right") == sides.count("left") == 208 and "midline" not in sides
    mujoco.mj_forward(m, d)
    points = d.wrap_xpos.reshape(-1, 3)
    root = h.bodies["root"]
    rot = d.xmat[root].reshape(3, 3)
    lateral = {}
    for name, a in zip(names, h.muscle_ids):
        t = m.actuator_trnid[a, 0]
        p = points[d.ten_wrapadr[t]:d.ten_wrapadr[t] + d.ten_wrapnum[t]]
        lateral[name] = float(((p - d.xpos[root]) @ rot)[:, 0].mean())
    rights = [n for n, s in zip(names, sides) if s == "right"]
    assert all(_twin(n) in lateral for n in rights)
    # Two model quirks, documented in mskbench.agents.dynsyn: the rectus abdominis pair's paths lie on
    # the sides opposite their names, and LTpT_T12_l runs along LTpT_T12_r's (right-side) sites.
    off = {n for n in rights if not lateral[n] < lateral[_twin(n)]}
    assert off == {"rect_abd_r", "LTpT_T12_r"}
    assert lateral["rect_abd_r"] > 0 > lateral["rect_abd_l"]
    assert lateral["LTpT_T12_r"] == lateral["LTpT_T12_l"]
    assert muscle_sides(["x_r", "x_l", "y", "y_left", "z_right", "z", "spine"]) == (
        "right", "left", "right", "left", "right", "left", "midline")


def test_groups_allocation_follows_the_side_sizes():
    assert allocate_groups(76, [208, 208, 0]) == [38, 38, 0]
    assert allocate_groups(7, [10, 10, 2]) == [3, 3, 1]
    with pytest.raises(ValueError, match="between 2 .* and 416"):
        allocate_groups(500, [208, 208, 0])


def test_walk_groups_cover_every_muscle_once_and_never_mix_sides(walk_groups, shared_envs):
    g = walk_groups
    names = shared_envs("Walk").handles.muscle_names
    assert g.muscle_names == names and g.n_muscles == 416 and g.n_groups == 76
    assert sorted(i for grp in g.groups for i in grp) == list(range(416))
    assert sum(g.sizes) == 416 and len(g.group_of) == 416
    sides = muscle_sides(names)
    assert all(len({sides[i] for i in grp}) == 1 for grp in g.groups)
    assert all(g.group_of[r] == k for k, r in enumerate(g.representative))
    assert g.params["groups_per_side"] == {"right": 38, "left": 38}
    assert g.action_size == 416 and g.n_weights == 416 - 76
    # Deterministic given the seed.
    again = compute_groups(env=shared_envs("Walk"), steps=300, seed=0, restarts=2)
    assert again == g


def test_length_similarity_of_known_signals():
    t = np.linspace(0.0, 6.0, 200)
    same = np.sin(t) + 2.0
    x = np.stack([0.1 * same, 0.3 + 0.05 * same, np.full_like(t, 0.2), 0.2 + 0.01 * t], axis=1)
    s = length_similarity(x, window=100)
    assert s.shape == (4, 4) and np.allclose(s, s.T)
    assert s[0, 1] == pytest.approx(1.0)  # the same shape, scaled and shifted
    assert s[2, 0] == s[2, 1] == s[2, 3] == 0.0  # a constant length is like no other muscle
    assert 0.0 < s[0, 3] < 1.0
    with pytest.raises(ValueError, match="multiple of 100"):
        length_similarity(x[:150])


def test_fasterpam_ends_where_no_single_swap_helps_and_finds_tiny_optima():
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(40, 2))
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    med, loss = fasterpam(dist, rng.choice(40, 5, replace=False), rng.permutation(40))
    assert loss == pytest.approx(dist[:, med].min(axis=1).sum())
    for i in range(5):
        for x in set(range(40)) - set(med.tolist()):
            trial = med.copy()
            trial[i] = x
            assert dist[:, trial].min(axis=1).sum() >= loss - 1e-9
    # DynSyn keeps the result found most often, not the best one: on these 9 points 3 of the first 5
    # starts end in a worse local optimum than the other 2; with 8 starts the two tie 4-4 and the
    # smaller loss, here the global optimum, wins.
    small = dist[:9, :9]
    best = min(small[:, list(c)].min(axis=1).sum() for c in combinations(range(9), 3))
    labels, med = kmedoids(small, 3, seed=0, restarts=8)
    assert small[:, med].min(axis=1).sum() == pytest.approx(best)
    assert all(labels[m] == k for k, m in enumerate(med))
    _, frequent = kmedoids(small, 3, seed=0, restarts=5)
    assert small[:, frequent].min(axis=1).sum() > best + 0.1


# -- the map --------------------------------------------------------------------------------------------
def test_bound_zero_gives_every_muscle_its_groups_action(walk_groups):
    g = walk_groups
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (3, g.action_size))
    u = g.muscle_actions(a, 0.0)
    assert u.shape == (3, 416)
    np.testing.assert_array_equal(u, a[:, :g.n_groups][:, g.group_index])


def test_map_matches_hand_computed_values():
    g = _toy()
    assert g.groups == [[0, 2], [1, 3, 4]] and g.representative == (0, 3)
    assert g.weight_index.tolist() == [3, 0, 1, 3, 2]  # muscles 1, 2, 4 weighted; 3 = no weight
    groups_a = np.array([0.5, -0.8])
    weights = np.array([1.0, -0.5, 0.2])
    u = dynsyn_muscle_actions(groups_a, weights, g.group_index, g.weight_index, 0.04, np)
    # muscle 1: -0.8·(1 + clip(0.1, ±0.04)); 2: 0.5·(1 + clip(-0.05, ±0.04)); 4: -0.8·(1 + 0.02)
    np.testing.assert_allclose(u, [0.5, -0.832, 0.48, -0.8, -0.816])
    # The final clip: a full group action scaled up by 10 % stays at 1.
    np.testing.assert_allclose(g.muscle_actions(np.array([1.0, -1.0, 1.0, 1.0, -1.0]), 0.1),
                               [1.0, -1.0, 1.0, -1.0, -0.9])


def test_map_output_stays_in_range(walk_groups):
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (64, walk_groups.action_size))
    for bound in (0.0, 0.05, 0.1, 5.0):
        u = walk_groups.muscle_actions(a, bound)
        assert u.min() >= -1.0 and u.max() <= 1.0


def test_map_numpy_and_jax_agree(walk_groups):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    g = walk_groups
    a = np.random.default_rng(2).uniform(-1, 1, (5, 2, g.action_size)).astype(np.float32)
    want = g.muscle_actions(a, 0.07, np)
    got = jax.jit(lambda x, b: g.muscle_actions(x, b, jnp))(jnp.asarray(a), 0.07)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)


# -- the schedule ---------------------------------------------------------------------------------------
def test_schedule_values_at_start_middle_end_and_after():
    s = WeightBoundSchedule(0.0, 0.1, 100)
    assert [s(t) for t in (0, 50, 100, 250)] == pytest.approx([0.0, 0.05, 0.1, 0.1])
    delayed = WeightBoundSchedule(0.02, 0.1, 100, delay=40)
    assert [delayed(t) for t in (0, 40, 90, 140, 1000)] == pytest.approx([0.02, 0.02, 0.06, 0.1, 0.1])
    # MSK-Bench's: min(max(0, 5e-9·(t − 3e7)), 0.1).
    for t in (0, 2.9e7, 3e7, 3.5e7, 4e7, 5e7, 8e7):
        assert MSK_BENCH_SCHEDULE(t) == pytest.approx(min(max(0.0, 5e-9 * (t - 3e7)), 0.1))
    with pytest.raises(ValueError, match="steps"):
        WeightBoundSchedule(0.0, 0.1, 0)


# -- the wrapper and the learner's map ------------------------------------------------------------------
def test_wrapper_acts_through_the_groups(walk_groups, vec_env):
    w = DynSynActionWrapper(vec_env, walk_groups, WeightBoundSchedule(0.0, 0.1, 100))
    assert isinstance(w, VectorEnv)
    assert w.action_size == 416 and w.single_action_space.shape == (416,) and w.action_space.shape == (2, 416)
    obs = w.reset(seed=0)
    assert obs.shape == (2, vec_env.obs_size)
    a = np.random.default_rng(0).uniform(-1, 1, (2, 416)).astype(np.float32)
    np.testing.assert_allclose(w.actions(a), a[:, :76][:, walk_groups.group_index])  # bound 0 at step 0
    obs, reward, terminated, truncated, info = w.step(a)
    assert obs.shape == (2, vec_env.obs_size) and reward.shape == (2,) and np.isfinite(obs).all()
    assert w.steps == 2 and w.weight_bound == pytest.approx(0.002)
    w.set_step(50)
    assert w.weight_bound == pytest.approx(0.05)
    with pytest.raises(ValueError, match=r"shape \(num_envs, 416\)"):
        w.step(np.zeros((2, 75)))
    with pytest.raises(ValueError, match="these groups are for"):
        DynSynActionWrapper(vec_env, _toy())


def test_learner_map_counts_steps_and_its_record_reproduces_it(walk_groups, vec_env, tmp_path):
    path = walk_groups.to_json(tmp_path / "groups.json")
    settings = {"groups": str(path), "weight_bound_steps": 10, "weight_bound_delay": 0}
    size, amap, record = learner_action_map(settings, vec_env)
    assert size == 416 and isinstance(amap, DynSynActionMap)
    a = np.random.default_rng(4).uniform(-1, 1, (2, 416))
    amap(a)
    amap(a)
    assert record["steps"] == 4 and record["weight_bound"] == pytest.approx(0.04)
    u = amap(a)  # mapped at the bound of the 4 steps before
    stored = stored_map(json.loads(json.dumps(record)))  # the record now holds step 6
    np.testing.assert_allclose(stored(a, np), walk_groups.muscle_actions(a, 0.06))
    np.testing.assert_allclose(u, walk_groups.muscle_actions(a, 0.04))
    with pytest.raises(ValueError, match="unknown DynSyn settings"):
        learner_action_map({"group": "x.json"}, vec_env)


# -- the groups file ------------------------------------------------------------------------------------
def test_json_round_trip_and_mismatch_errors(walk_groups, tmp_path):
    path = tmp_path / "groups.json"
    walk_groups.to_json(path)
    back = SynergyGroups.from_json(path, walk_groups.muscle_names)
    assert back == walk_groups
    with pytest.raises(FileExistsError, match="exists"):
        walk_groups.to_json(path)
    walk_groups.to_json(path, overwrite=True)
    other = tmp_path / "mouse.json"
    SynergyGroups.from_lists(["Lat", "PD", "AD"], [[0, 1], [2]], params={"body": "mouse_forelimb"}).to_json(other)
    with pytest.raises(ValueError, match=r"for mouse_forelimb \(3 muscles\); this model has 416"):
        SynergyGroups.from_json(other, walk_groups.muscle_names)
    swapped = list(walk_groups.muscle_names)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    with pytest.raises(ValueError, match="muscle 0 is 'Ps_L1_VB_r'; this model's muscle 0 is 'Ps_L1_TP_r'"):
        SynergyGroups.from_json(path, swapped)
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="not a DynSyn groups document"):
        SynergyGroups.from_json(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="exactly once"):
        SynergyGroups.from_lists(["a", "b", "c"], [[0, 1], [1, 2]])


# -- the command ----------------------------------------------------------------------------------------
def test_synergies_command_writes_groups_and_refuses_bad_input(tmp_path):
    out = tmp_path / "groups.json"
    args = ["synergies", "walk", "--out", str(out), "--steps", "200", "--groups", "12", "--restarts", "2"]
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["n_groups"] == 12 and sum(printed["sizes"]) == 416 and printed["out"] == str(out)
    groups = SynergyGroups.from_json(out)
    assert groups.n_groups == 12 and groups.params["steps"] == 200 and groups.params["task"] == "Walk"
    runner = CliRunner()
    for bad, needle in (([*args], "exists; pass --force"),
                        (["synergies", "Nope", "--out", str(tmp_path / "x.json")], "valid tasks"),
                        (["synergies", "walk", "--out", str(tmp_path / "no" / "x.json")], "does not exist"),
                        (["synergies", "walk", "--out", str(tmp_path)], "is a directory"),
                        (["synergies", "walk", "--out", str(tmp_path / "x.txt")], "must end in .json"),
                        (["synergies", "walk", "--out", str(tmp_path / "x.json"), "--steps", "0"], "x>=1"),
                        (["synergies", "walk", "--out", str(tmp_path / "x.json"), "--steps", "150"], "multiple"),
                        (["synergies", "walk", "--out", str(tmp_path / "x.json"), "--steps", "100",
                          "--groups", "417"], "between 2")):
        r = runner.invoke(main, bad)
        assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output, (bad, r.output)
    assert json.loads(out.read_text())["n_groups"] == 12  # not overwritten


def test_module_imports_no_jax_and_no_simulator():
    code = ("import sys, mskbench.agents.dynsyn; "
            "print([m for m in ('jax', 'mujoco', 'torch') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
