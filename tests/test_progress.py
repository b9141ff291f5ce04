"""Gait progress: steps taken, distance covered and forward speed (:mod:`mskbench.metrics.progress`) on synthetic
traces with closed-form answers, in the episode record (the CPU loop; the batched evaluator's parity is in
tests/test_batched_eval.py), the results store (schema 4, older stores upgraded), the summaries and the tables of
``mskbench eval`` and ``calibrate``."""

from __future__ import annotations

import json
import math
import sqlite3

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.catalog import WALKING, task_ids
from mskbench.cli import main
from mskbench.eval import calibration as cal
from mskbench.eval.episodes import (PROGRESS_FIELDS, PROGRESS_SENSORS, ProgressTrace, episode_record, play_episode,
                                    run_episode)
from mskbench.eval.protocol import load_policy
from mskbench.eval.store import SCHEMA_VERSION, ResultsStore
from mskbench.eval.summary import progress_medians, progress_text, summarize_eval
from mskbench.metrics import foot_loads, gait_progress, touchdowns
from mskbench.metrics.progress import DOWN_FRACTION, FOOT_SENSORS, MIN_AIR_S, UP_FRACTION

DT = 0.01
WEIGHT = 800.0  # N
AIR = math.ceil(MIN_AIR_S / DT)  # samples a foot must stay unloaded to be up: 10
STANCE, SWING = 0.5 * WEIGHT, 0.0


def _foot(*phases: tuple[float, int]) -> np.ndarray:
    """A foot's load: ``(load N, samples)`` phases one after another."""
    return np.concatenate([np.full(n, load) for load, n in phases])


def _walk(cycles: int, swing: int = 30, stance: int = 50) -> np.ndarray:
    """(T, 2) loads: both feet planted, then ``cycles`` strides of each foot, the right half a cycle behind."""
    left = _foot((STANCE, stance), *[p for _ in range(cycles) for p in ((SWING, swing), (STANCE, stance))],
                 (STANCE, stance))
    right = _foot((STANCE, stance + (swing + stance) // 2),
                  *[p for _ in range(cycles) for p in ((SWING, swing), (STANCE, stance))])
    n = min(len(left), len(right))
    return np.stack([left[:n], right[:n]], axis=1)


def _line(n: int, speed: float, direction: float, start=(0.3, -1.2)) -> np.ndarray:
    t = np.arange(n) * DT
    return np.asarray(start) + speed * t[:, None] * np.array([math.cos(direction), math.sin(direction)])


# -- the metric ---------------------------------------------------------------------------------------
def test_standing_feet_take_no_steps_and_cover_no_ground():
    g = gait_progress(np.full((200, 2), STANCE), np.full((200, 2), 0.4), 0.3, DT, WEIGHT)
    assert (g.steps, g.steps_per_foot, g.distance_m, g.forward_distance_m, g.forward_speed_mps) == (0, (0, 0), 0, 0, 0)
    assert g.duration_s == pytest.approx(199 * DT)


@pytest.mark.parametrize("turn", [0.0, math.pi / 3, math.pi / 2, math.pi])
def test_a_steady_gait_gives_its_strides_distance_and_speed_in_closed_form(turn):
    """Each foot swings 4 times: 8 steps. The pelvis moves at 1.3 m/s at ``turn`` from the heading: the forward
    component is cos(turn) of the distance (sideways: 0, backwards: negative)."""
    loads = _walk(4)
    heading = 0.7
    xy = _line(len(loads), 1.3, heading + turn)
    g = gait_progress(loads, xy, heading, DT, WEIGHT)
    assert (g.steps, g.steps_per_foot) == (8, (4, 4))
    duration = (len(loads) - 1) * DT
    assert g.duration_s == pytest.approx(duration)
    assert g.distance_m == pytest.approx(1.3 * duration)
    assert g.forward_distance_m == pytest.approx(1.3 * duration * math.cos(turn), abs=1e-12)
    assert g.forward_speed_mps == pytest.approx(1.3 * math.cos(turn), abs=1e-12)


def test_touchdowns_are_the_first_loaded_sample_after_a_lift_off():
    load = _foot((STANCE, 20), (SWING, 30), (STANCE, 40), (SWING, 25), (STANCE, 10))
    np.testing.assert_array_equal(touchdowns(load, 40.0, 8.0, AIR), [50, 115])
    assert touchdowns(load, 40.0, 8.0, 31).size == 0  # swings of 30 and 25 samples are shorter than 31


def test_load_between_the_thresholds_neither_lifts_nor_lands_a_foot():
    """Hysteresis: 3 % of the body weight lies between lift-off (1 %) and touchdown (5 %)."""
    band = 0.03 * WEIGHT
    assert UP_FRACTION < 0.03 < DOWN_FRACTION
    # a planted foot whose load sags into the band and recovers has not been up
    assert touchdowns(_foot((STANCE, 20), (band, 50), (STANCE, 20)), DOWN_FRACTION * WEIGHT,
                      UP_FRACTION * WEIGHT, AIR).size == 0
    # a swinging foot that brushes the floor with a load in the band has not landed; its landing counts once
    load = _foot((STANCE, 20), (SWING, 20), (band, 5), (SWING, 5), (STANCE, 20))
    np.testing.assert_array_equal(touchdowns(load, DOWN_FRACTION * WEIGHT, UP_FRACTION * WEIGHT, AIR), [50])
    # just above each threshold decides it
    np.testing.assert_array_equal(
        touchdowns(_foot((STANCE, 5), (0.009 * WEIGHT, AIR), (0.051 * WEIGHT, 3)), DOWN_FRACTION * WEIGHT,
                   UP_FRACTION * WEIGHT, AIR), [5 + AIR])
    assert touchdowns(_foot((STANCE, 5), (0.011 * WEIGHT, 20), (STANCE, 3)), DOWN_FRACTION * WEIGHT,
                      UP_FRACTION * WEIGHT, AIR).size == 0


@pytest.mark.parametrize("gap", range(1, AIR + 2))
def test_contact_chatter_shorter_than_the_minimum_air_time_is_not_a_step(gap):
    """A planted heel that unloads for ``gap`` control steps, five times: steps only once a gap lasts 0.1 s."""
    load = _foot((STANCE, 10), *[p for _ in range(5) for p in ((0.0, gap), (STANCE, 10))])
    g = gait_progress(np.stack([load, np.full_like(load, STANCE)], axis=1), np.zeros((len(load), 2)), 0.0, DT,
                      WEIGHT)
    assert g.steps == (5 if gap >= AIR else 0)


@pytest.mark.parametrize("start_up, steps", [(AIR - 1, 0), (AIR, 1), (3 * AIR, 1)])
def test_feet_loaded_at_the_start_do_not_count_and_a_foot_in_the_air_must_have_been_up(start_up, steps):
    loads = np.stack([_foot((SWING, start_up), (STANCE, 30)), np.full(start_up + 30, STANCE)], axis=1)
    assert gait_progress(loads, np.zeros((len(loads), 2)), 0.0, DT, WEIGHT).steps_per_foot == (steps, 0)


def test_foot_loads_sum_each_foot_by_sensor_name():
    names = ("r_toes", "l_foot", "r_foot", "extra", "l_toes")
    touch = np.array([[1.0, 2.0, 4.0, 100.0, 8.0], [0.5, 0.0, 0.25, 100.0, 3.0]])
    np.testing.assert_array_equal(foot_loads(touch, names), [[10.0, 5.0], [3.0, 0.75]])
    assert FOOT_SENSORS == (("l_foot", "l_toes"), ("r_foot", "r_toes"))
    with pytest.raises(ValueError, match="no touch sensor named l_toes"):
        foot_loads(touch[:, :4], names[:4])
    with pytest.raises(ValueError, match="4 columns but 5 touch_names"):
        foot_loads(touch[:, :4], names)


_GOOD = {"foot_load": np.full((5, 2), STANCE), "pelvis_xy": np.zeros((5, 2)), "heading_rad": 0.0, "dt": DT,
         "body_weight_n": WEIGHT}


@pytest.mark.parametrize("bad, message", [
    ({"foot_load": np.full((1, 2), STANCE), "pelvis_xy": np.zeros((1, 2))}, "at least 2 entries"),
    ({"foot_load": np.full(5, STANCE)}, "must be 2-D"),
    ({"pelvis_xy": np.zeros((4, 2))}, r"pelvis_xy must have shape \(5, 2\)"),
    ({"foot_load": np.full((5, 2), -1.0)}, "load must be >= 0 N"),
    ({"pelvis_xy": np.full((5, 2), np.nan)}, "finite"),
    ({"heading_rad": [0.0, 1.0]}, "heading_rad must be 0-D"),
    ({"dt": 0.0}, "dt must be a positive"),
    ({"body_weight_n": -80.0}, "body_weight_n must be a positive"),
    ({"down_fraction": 0.01, "up_fraction": 0.05}, "up_fraction must be below down_fraction"),
    ({"min_air_s": "long"}, "min_air_s must be a positive number"),
])
def test_bad_input_is_a_one_line_value_error(bad, message):
    with pytest.raises(ValueError, match=message) as err:
        gait_progress(**{**_GOOD, **bad})
    assert "\n" not in str(err.value)


# -- the episode record -------------------------------------------------------------------------------
def _record(progress=None, termination="tilted", n=None):
    n = n if n is not None else (len(progress.touch) if progress is not None else 10)
    return episode_record("Walk", 0, 1.0, n, False, termination, np.full((n, 416), 0.5), np.zeros((n, 122)),
                          np.zeros(n), DT, [f"m{i}" for i in range(416)], progress=progress)


def _trace(loads: np.ndarray, xy: np.ndarray, heading: float) -> ProgressTrace:
    """A trace from per-foot loads: each foot's load on its heel, none on its toes."""
    touch = np.zeros((len(loads), 4))
    touch[:, PROGRESS_SENSORS.index("l_foot")] = loads[:, 0]
    touch[:, PROGRESS_SENSORS.index("r_foot")] = loads[:, 1]
    return ProgressTrace(touch, xy, np.full(len(loads), heading), WEIGHT)


def test_the_record_carries_the_figures_of_its_trace():
    loads = _walk(3)
    xy = _line(len(loads), 0.8, 0.2)
    rec = _record(_trace(loads, xy, 0.2))
    g = gait_progress(loads, xy, 0.2, DT, WEIGHT)
    assert (rec.steps_taken, rec.distance_m, rec.forward_distance_m, rec.forward_speed_mps) == (
        6, g.distance_m, g.forward_distance_m, g.forward_speed_mps)
    assert rec.forward_speed_mps == pytest.approx(0.8)
    assert {k: rec.as_dict()[k] for k in PROGRESS_FIELDS} == {
        "steps_taken": 6, "distance_m": g.distance_m, "forward_distance_m": g.forward_distance_m,
        "forward_speed_mps": g.forward_speed_mps}


def test_the_record_drops_a_last_step_without_physical_state_and_says_none_without_a_trace():
    loads = _walk(2)
    xy = _line(len(loads), 0.5, 0.0)
    # the batched env zeroes the last step of an unstable world: no pelvis at the origin, no landing foot
    broken = _trace(np.vstack([loads, [[STANCE, STANCE]]]), np.vstack([xy, [[0.0, 0.0]]]), 0.0)
    rec = _record(broken, termination="physics_unstable")
    assert (rec.steps_taken, rec.distance_m) == (4, pytest.approx(0.5 * (len(loads) - 1) * DT))
    assert {getattr(_record(None), k) for k in PROGRESS_FIELDS} == {None}
    one = _trace(loads[:1], xy[:1], 0.0)  # one physical step: no time elapsed, no figures
    assert {getattr(_record(one), k) for k in PROGRESS_FIELDS} == {None}


def test_a_walk_episode_of_the_zero_policy_takes_no_step_and_its_record_matches_the_sensors(walk_env):
    """The CPU loop reads the four foot sensors and the pelvis: recomputed here from the sensors by name and the
    pelvis's body position, the same figures. The body does not step; it falls, which moves the pelvis less than
    the body's standing height."""
    env = walk_env
    rec = run_episode(env, load_policy("zero", env, 0), 0)
    adr = [env.model.sensor(name).adr[0] for name in PROGRESS_SENSORS]
    pelvis = mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_BODY, "pelvis")
    touch, xy, heights = [], [], []

    def record(env, step):
        heights.append(float(env.data.xpos[mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_BODY, "head"), 2]))
        if step is not None:
            touch.append(env.data.sensordata[adr].copy())
            xy.append(env.data.xpos[pelvis, :2].copy())

    played = play_episode(env, load_policy("zero", env, 0), 0, record)
    assert played.steps == rec.length and played.termination == rec.termination != "time_limit"
    xy = np.array(xy)
    assert rec.distance_m == pytest.approx(float(np.hypot(*(xy[-1] - xy[0]))), rel=1e-12)
    weight = env.handles.total_mass * 9.81
    expected = sum(touchdowns(load, DOWN_FRACTION * weight, UP_FRACTION * weight, AIR).size
                   for load in foot_loads(np.array(touch), PROGRESS_SENSORS).T)
    assert rec.steps_taken == expected == 0
    assert 0.0 < rec.distance_m < heights[0]  # the head's height at the start: the body's standing height
    assert abs(rec.forward_distance_m) <= rec.distance_m
    assert rec.forward_speed_mps == pytest.approx(rec.forward_distance_m / ((rec.length - 1) * env.control_dt_s))


# -- store, summaries, tables ---------------------------------------------------------------------------
def _row(seed: int, task: str = "Walk", method: str = "m", steps=None, distance=None, forward=None, speed=None):
    return {"method": method, "task": task, "perturbation": "none", "scale": 0.0, "seed": seed, "success": False,
            "episode_return": 1.0, "length": 100, "termination": "tilted", "activation_cost": None,
            "smoothness": None, "emg": {"absent": "no EMG reference given"}, "steps_taken": steps,
            "distance_m": distance, "forward_distance_m": forward, "forward_speed_mps": speed}


def test_a_record_round_trips_through_the_store(tmp_path):
    rec = _record(_trace(_walk(3), _line(len(_walk(3)), 0.8, 0.5 + 3.0), 0.5)).as_dict()  # 3 rad off: backwards
    rec.update(method="m", perturbation="none", scale=0.0)
    with ResultsStore(tmp_path / "r.db") as store:
        assert store.write(rec)
        assert store.write(_row(1))  # no figures: NULL
        back = store.records()
    assert {k: back[0][k] for k in PROGRESS_FIELDS} == {k: rec[k] for k in PROGRESS_FIELDS}
    assert isinstance(back[0]["steps_taken"], int) and back[0]["forward_distance_m"] < 0  # walked backwards
    assert {back[1][k] for k in PROGRESS_FIELDS} == {None}
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4


_V3_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE episodes (method TEXT NOT NULL, task TEXT NOT NULL, perturbation TEXT NOT NULL, scale REAL NOT NULL,
    seed INTEGER NOT NULL, success INTEGER NOT NULL CHECK (success IN (0, 1)), episode_return REAL NOT NULL,
    length INTEGER NOT NULL, termination TEXT NOT NULL, activation_cost REAL, smoothness REAL, recruitment TEXT,
    emg TEXT, wall_time_s REAL, mskbench_version TEXT, created_at TEXT NOT NULL,
    success_table_xii INTEGER CHECK (success_table_xii IN (0, 1)),
    solved_native_seen INTEGER CHECK (solved_native_seen IN (0, 1)),
    success_step INTEGER CHECK (success_step >= 1),
    fell_after_success INTEGER CHECK (fell_after_success IN (0, 1)),
    PRIMARY KEY (method, task, perturbation, scale, seed));
INSERT INTO meta VALUES ('schema_version', '3');
INSERT INTO episodes VALUES ('m', 'Walk', 'none', 0.0, 0, 0, 5.0, 90, 'tilted', 0.1, 2.0, NULL, NULL, 1.0,
    '0.1.0', '2026-01-01T00:00:00+00:00', 0, 1, NULL, 0);
PRAGMA user_version = 3;
"""


def test_a_schema_3_store_is_upgraded_with_unknown_figures_for_its_rows(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(_V3_DDL)
    with ResultsStore(path) as store:
        old = store.records()
        assert [(r["seed"], r["length"], r["fell_after_success"]) for r in old] == [(0, 90, False)]
        assert {old[0][k] for k in PROGRESS_FIELDS} == {None}
        assert "absent" in summarize_eval(old)["Walk"]["progress"]
        assert store.write(_row(1, steps=3, distance=1.5, forward=1.4, speed=0.2))
        assert summarize_eval(store.records())["Walk"]["progress"] == {
            "episodes": 1, "steps_taken": 3.0, "distance_m": 1.5, "forward_distance_m": 1.4, "forward_speed_mps": 0.2}
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "4"


def test_summaries_give_the_median_over_the_episodes_that_have_the_figures():
    rows = [_row(0, steps=2, distance=0.5, forward=0.4, speed=0.1), _row(1, steps=9, distance=3.0, forward=2.9,
                                                                         speed=0.6),
            _row(2, steps=4, distance=1.0, forward=-0.2, speed=-0.05), _row(3), _row(4, task="Stand")]
    got = progress_medians(rows)
    assert got == {"episodes": 3, "steps_taken": 4.0, "distance_m": 1.0, "forward_distance_m": 0.4,
                   "forward_speed_mps": 0.1}
    assert progress_text(got) == "4 · 1.00 m · 0.10 m/s"
    assert summarize_eval(rows)["Walk"]["progress"] == got
    assert progress_text(summarize_eval(rows)["Stand"]["progress"]) == "—"
    even = progress_medians(rows[:2])
    assert (even["steps_taken"], even["distance_m"]) == (5.5, 1.75)


def test_eval_shows_the_medians_for_walking_tasks(tmp_path):
    assert task_ids(walking=True) == list(WALKING) and "Walk" in WALKING and "Stand" not in WALKING
    store = tmp_path / "e.db"
    with ResultsStore(store) as s:  # stored already: the command reruns nothing and summarises them
        for seed, (steps, dist, speed) in enumerate([(3, 1.2, 0.3), (5, 2.4, 0.5)]):
            s.write(_row(seed, method="zero", steps=steps, distance=dist, forward=dist, speed=speed))
            s.write(_row(seed, task="Stand", method="zero", steps=0, distance=0.1, forward=0.1, speed=0.01))
    args = ["eval", "--task", "Stand,Walk", "--policy", "zero", "--episodes", "2", "--store", str(store)]
    out = CliRunner().invoke(main, [*args, "--json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert summary["Walk"]["progress"] == pytest.approx({"episodes": 2, "steps_taken": 4.0, "distance_m": 1.8,
                                                         "forward_distance_m": 1.8, "forward_speed_mps": 0.4})
    table = CliRunner().invoke(main, args, terminal_width=250)
    assert table.exit_code == 0, table.output
    assert "steps · dist. · fwd speed" in table.output and "4 · 1.80 m · 0.40 m/s" in table.output
    assert "0.10 m" not in table.output  # Stand is not a walking task: its cell is empty


def test_calibration_rows_carry_the_medians_and_the_tables_show_them_for_walking_tasks():
    def rec(steps, dist, speed):
        return {"success": False, "fell_after_success": False, "termination": "tilted", "length": 100,
                "episode_return": 1.0, "success_table_xii": False, "solved_native_seen": True,
                "steps_taken": steps, "distance_m": dist, "forward_distance_m": dist, "forward_speed_mps": speed}

    walk = cal._row("Walk", "expert", [rec(8, 2.0, 0.5), rec(10, 2.5, 0.6), rec(4, 1.0, 0.3)], cal._native("Walk"))
    stand = cal._row("Stand", "zero", [rec(0, 0.01, 0.0)], cal._native("Stand"))
    old = cal._row("Walk", "old", [rec(None, None, None)], cal._native("Walk"))
    assert walk["progress"]["steps_taken"] == 8.0 and cal.progress_cell(walk) == "8 · 2.00 m · 0.50 m/s"
    assert cal.progress_cell(stand) == "" and cal.progress_cell(old) == "—"
    md = cal.markdown({"native": {t: cal._native(t) for t in ("Walk", "Stand")}, "rows": [walk, stand]})
    assert "| steps · distance · forward speed (medians; walking tasks) | terminations |" in md
    assert "| 8 · 2.00 m · 0.50 m/s | tilted 3 |" in md and "|  | tilted 1 |" in md


def test_emg_cycles_start_at_the_right_foot_touchdowns_not_at_heel_re_touches():
    """A record's EMG cycles are cut at the right foot's touchdowns (heel and toes, the step counter's
    hysteresis): a heel that lifts for two samples mid-stance while the toes carry the foot does not
    start a cycle, as a bare rising edge of the heel sensor would."""
    from mskbench.eval.episodes import emg_metric, right_foot_strikes
    from mskbench.metrics.emg import SANTUZ_TO_MYOFULLBODY, EMGReference, heel_strikes

    dt, weight, stride, strides = 0.01, 800.0, 100, 4
    T = stride * strides + 1
    touch = np.zeros((T, len(PROGRESS_SENSORS)))
    heel_col, toes_col = PROGRESS_SENSORS.index("r_foot"), PROGRESS_SENSORS.index("r_toes")
    for k in range(strides + 1):
        a = k * stride
        touch[a:a + 60, heel_col] = 0.6 * weight  # stance: 60 samples, swing: 40 (0.4 s in the air)
        touch[a:a + 60, toes_col] = 0.4 * weight
        touch[a + 30:a + 32, heel_col] = 0.0  # the heel lifts for 20 ms mid-stance
    touch = touch[:T]
    trace = ProgressTrace(touch, np.zeros((T, 2)), np.zeros(T), weight)
    strikes = right_foot_strikes(trace, dt, T)
    np.testing.assert_array_equal(strikes, np.arange(1, strides + 1) * stride)  # sample 0 starts down
    assert len(heel_strikes(touch[:, heel_col])) == 2 * strides  # the bare edges: a re-touch per stride too
    channels = tuple(SANTUZ_TO_MYOFULLBODY)[:2]
    muscles = [name for ch in channels for name in np.atleast_1d(SANTUZ_TO_MYOFULLBODY[ch])]
    ref = EMGReference(channels, np.stack([np.sin(np.linspace(0, np.pi, 101))] * 2, 1), np.arange(101.0))
    phase = (np.arange(T) % stride) / stride
    acts = np.stack([np.sin(np.pi * phase)] * len(muscles), 1)
    emg = emg_metric(ref, acts, touch[:, heel_col], "Walk", muscles, strikes=strikes)
    assert emg["cycles"] == strides - 1 and emg["mean_r"] == pytest.approx(1.0, abs=1e-6)
    assert right_foot_strikes(None, dt, T) is None
    # and the record cuts them so (its traces: one row per control step taken)
    rec = episode_record("Walk", 0, 0.0, T, False, "time_limit", acts, np.zeros((T, 3)), touch[:, heel_col], dt,
                         muscles, emg_reference=ref, progress=trace)
    assert rec.emg["cycles"] == strides - 1
