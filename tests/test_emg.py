"""EMG-envelope similarity: alignment, gait-cycle pipeline, reference loader and mapping."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mskbench.metrics import (
    SANTUZ_TO_MYOFULLBODY,
    EMGReference,
    cycle_envelopes,
    emg_envelope_similarity,
    emg_similarity,
    heel_strikes,
    load_emg_reference,
    mean_envelope,
)

# /work/main/tests/test_emg.py -> /work/shared/...
SANTUZ_CSV = Path(__file__).resolve().parents[2] / "shared" / "data" / "emg_reference" / "walking_treadmill_santuz.csv"
SANTUZ_CHANNELS = ("ME", "MA", "FL", "RF", "VM", "VL", "ST", "BF", "TA", "PL", "GM", "GL", "SO")

X = np.arange(101.0)
SMOOTH = np.exp(-(((X - 30) / 8) ** 2)) + 0.5 * np.exp(-(((X - 70) / 10) ** 2))


@pytest.fixture(scope="module")
def santuz():
    if not SANTUZ_CSV.is_file():
        pytest.skip(f"reference EMG file not found at {SANTUZ_CSV} (shared data not checked out)")
    return load_emg_reference(SANTUZ_CSV)


def _brute_force(sim, ref):
    """Best Pearson r over all 101 rolls, via np.corrcoef (independent of the implementation)."""
    rs = np.array([np.corrcoef(np.roll(sim, s), ref)[0, 1] for s in range(101)])
    return rs.max(), rs


# -- single-envelope alignment ------------------------------------------------------------------
@pytest.mark.parametrize("k, undo", [(17, -17), (-30, 30), (60, 41), (0, 0), (50, -50)])
def test_rolled_envelope_is_recovered(k, undo):
    sim = 3.0 * np.roll(SMOOTH, k) + 2.0  # amplitude and offset do not matter
    res = emg_envelope_similarity(sim, SMOOTH)
    assert res.r == pytest.approx(1.0, abs=1e-12)
    assert res.shift == undo
    assert np.allclose(np.roll(sim, res.shift), 3.0 * SMOOTH + 2.0)
    r, shift = res  # NamedTuple unpacking
    assert (r, shift) == (res.r, res.shift)


def test_inverted_envelope_is_well_defined():
    sim = 1.0 - SMOOTH
    # Without shifting, the inverted envelope correlates at exactly -1 ...
    assert np.corrcoef(sim, SMOOTH)[0, 1] == pytest.approx(-1.0)
    res = emg_envelope_similarity(sim, SMOOTH)
    best, rs = _brute_force(sim, SMOOTH)
    # ... but the best cyclic shift finds a partial match, far from 1.
    assert res.r == pytest.approx(best, abs=1e-12)
    assert res.r == pytest.approx(rs[res.shift % 101], abs=1e-12)
    assert 0.0 <= res.r < 0.6 and -50 <= res.shift <= 50


def test_best_r_matches_brute_force_and_is_never_negative():
    # The correlations over all 101 rolls sum to 0, so their maximum is >= 0.
    rng = np.random.default_rng(3)
    for _ in range(5):
        sim, ref = rng.random(101), rng.random(101)
        best, rs = _brute_force(sim, ref)
        res = emg_envelope_similarity(sim, ref)
        assert res.r == pytest.approx(best, abs=1e-12)
        assert rs[res.shift % 101] == pytest.approx(best, abs=1e-12)
        assert abs(rs.sum()) < 1e-9 and res.r >= 0.0


@pytest.mark.parametrize(
    "sim, ref, msg",
    [
        (np.ones(100), SMOOTH, "101"),
        (SMOOTH, np.ones(102), "101"),
        (SMOOTH[None, :], SMOOTH, "101"),
        (np.ones(101), SMOOTH, "constant"),
        (SMOOTH, np.zeros(101), "constant"),
        (np.where(X == 5, np.nan, SMOOTH), SMOOTH, "finite"),
    ],
)
def test_envelope_similarity_errors(sim, ref, msg):
    with pytest.raises(ValueError, match=msg):
        emg_envelope_similarity(sim, ref)


# -- gait-cycle pipeline --------------------------------------------------------------------------
def test_heel_strikes_rising_edges():
    assert heel_strikes([0, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1]).tolist() == [2, 5, 10]
    assert heel_strikes([True, True, False, True]).tolist() == [3]  # sample 0 is never a strike
    assert heel_strikes([0.0, 5.0, 30.0, 50.0, 10.0, 0.0, 25.0], threshold=20.0).tolist() == [2, 6]
    assert heel_strikes(np.zeros(5)).tolist() == []
    with pytest.raises(ValueError, match="1-D"):
        heel_strikes(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        heel_strikes([0.0, np.nan])


def _triangle_signal(lengths, amps, lead=5, tail=7, seed=0):
    """Per cycle i (``lengths[i]`` samples, even): a_i * (1 - |2 phase - 1|); noise outside cycles."""
    rng = np.random.default_rng(seed)
    parts = [rng.random(lead)]
    for length, a in zip(lengths, amps):
        k = np.arange(length)
        parts.append(a * (1.0 - np.abs(2.0 * k / length - 1.0)))
    parts.append(np.concatenate([[0.0], rng.random(tail)]))  # the last strike starts a new cycle at 0
    strikes = lead + np.concatenate([[0], np.cumsum(lengths)])
    return np.concatenate(parts), strikes


def test_cycle_envelopes_reproduce_known_shape():
    lengths, amps = [40, 60, 50], [1.0, 2.0, 3.0]
    sig, strikes = _triangle_signal(lengths, amps)
    cycles = cycle_envelopes(sig, strikes)
    tri = 1.0 - np.abs(2.0 * np.arange(101) / 100.0 - 1.0)  # piecewise linear: interpolation is exact
    assert cycles.shape == (3, 101)
    for i, a in enumerate(amps):
        assert np.allclose(cycles[i], a * tri, atol=1e-12)
    # endpoints are the strike samples themselves
    assert cycles[1, 0] == sig[strikes[1]] and cycles[1, -1] == sig[strikes[2]]
    two = cycle_envelopes(np.stack([sig, 2 * sig], axis=1), strikes, n_points=11)
    assert two.shape == (3, 11, 2) and np.allclose(two[..., 1], 2 * two[..., 0])


def test_mean_envelope_normalisation_and_sd():
    lengths, amps = [40, 60, 50], [1.0, 2.0, 3.0]
    sig, strikes = _triangle_signal(lengths, amps)
    tri = 1.0 - np.abs(2.0 * np.arange(101) / 100.0 - 1.0)
    env = mean_envelope(sig, strikes)
    # raw mean = 2 tri (ptp 2), raw SD (ddof=0) of (1, 2, 3) = sqrt(2/3) tri
    assert env.n_cycles == 3
    assert np.allclose(env.mean, tri, atol=1e-7)
    assert np.allclose(env.std, np.sqrt(2.0 / 3.0) * tri / 2.0, atol=1e-7)
    single = mean_envelope(sig, strikes[:2])
    assert single.n_cycles == 1 and np.all(single.std == 0.0)


def test_cycle_pipeline_on_periodic_sinusoid():
    period, n_cycles = 250, 6
    t = np.arange(period * n_cycles + 1)
    sig = 0.5 + 0.4 * np.sin(2 * np.pi * t / period)
    strikes = heel_strikes(np.sin(2 * np.pi * (t + 0.5) / period) > 0.0)  # contact rises at multiples of period
    assert strikes.tolist() == [period * i for i in range(1, n_cycles + 1)]
    env = mean_envelope(sig, strikes)
    expected = 0.5 + 0.5 * np.sin(2 * np.pi * np.arange(101) / 100)
    assert env.n_cycles == n_cycles - 1
    assert np.allclose(env.mean, expected, atol=2e-4) and np.allclose(env.std, 0.0, atol=1e-12)


@pytest.mark.parametrize(
    "strikes, msg",
    [
        ([10], "at least 2 heel strikes"),
        ([], "at least 2 heel strikes"),
        ([10, 5, 20], "strictly increasing"),
        ([10, 10], "strictly increasing"),
        ([-1, 10], r"lie in \[0, 49\]"),
        ([10, 50], r"lie in \[0, 49\]"),
        ([1.5, 10.0], "integer"),
        ([[1, 10]], "1-D"),
    ],
)
def test_cycle_errors(strikes, msg):
    with pytest.raises(ValueError, match=msg):
        cycle_envelopes(np.zeros(50), strikes)
    with pytest.raises(ValueError, match=msg):
        mean_envelope(np.zeros(50), strikes)


def test_cycle_other_errors():
    with pytest.raises(ValueError, match="n_points"):
        cycle_envelopes(np.zeros(50), [0, 10], n_points=1)
    with pytest.raises(ValueError, match="1-D"):
        cycle_envelopes(np.zeros((50, 2, 2)), [0, 10])
    with pytest.raises(ValueError, match="eps"):
        mean_envelope(np.zeros(50), [0, 10], eps=0.0)


# -- reference loader ---------------------------------------------------------------------------
def test_load_santuz_reference(santuz):
    assert isinstance(santuz, EMGReference)
    assert santuz.muscles == SANTUZ_CHANNELS
    assert santuz.envelopes.shape == (101, 13)
    assert santuz.gait_cycle_pct.tolist() == list(range(101))
    assert np.allclose(santuz.envelopes.min(axis=0), 0.0) and np.allclose(santuz.envelopes.max(axis=0), 1.0)
    peaks = {m: int(np.argmax(santuz[m])) for m in santuz.muscles}
    assert 45 <= peaks["SO"] <= 51  # README: 48 %
    assert 38 <= peaks["GM"] <= 46 and 38 <= peaks["GL"] <= 46
    assert peaks["BF"] >= 85 and peaks["ST"] >= 85  # late swing
    assert peaks["TA"] <= 5 and peaks["ME"] <= 10
    assert set(santuz.as_dict()) == set(SANTUZ_CHANNELS) and "SO" in santuz
    with pytest.raises(KeyError, match="XX"):
        santuz["XX"]


def _write_csv(path, header, rows):
    path.write_text("\n".join([",".join(header)] + [",".join(map(str, r)) for r in rows]) + "\n")
    return path


def _good_rows(k=2):
    return [[p] + [round(0.5 + 0.4 * np.sin(p / 10 + j), 4) for j in range(k)] for p in range(101)]


def test_load_reference_from_tmp_csv(tmp_path):
    ref = load_emg_reference(_write_csv(tmp_path / "ok.csv", ["gait_cycle_pct", "A", "B"], _good_rows()))
    assert ref.muscles == ("A", "B") and ref.envelopes.shape == (101, 2)
    assert ref["B"][10] == pytest.approx(round(0.5 + 0.4 * np.sin(1 + 1), 4))


@pytest.mark.parametrize(
    "mutate, msg",
    [
        (lambda h, r: (h, r[:100]), "101"),
        (lambda h, r: (h, r + [[101, 0.1, 0.2]]), "101"),
        (lambda h, r: (["pct"] + h[1:], r), "gait_cycle_pct"),
        (lambda h, r: (h[:1], [row[:1] for row in r]), "no muscle columns"),
        (lambda h, r: (["gait_cycle_pct", "A", "A"], r), "duplicate"),
        (lambda h, r: (h, r[:5] + [r[5][:2]] + r[6:]), "fields"),
        (lambda h, r: (h, r[:5] + [[5, "abc", 0.1]] + r[6:]), "non-numeric"),
        (lambda h, r: (h, r[:5] + [[5, "nan", 0.1]] + r[6:]), "finite"),
        (lambda h, r: (h, [[row[0] + 1] + row[1:] for row in r]), "0, 1, ..., 100"),
    ],
)
def test_load_reference_errors(tmp_path, mutate, msg):
    header, rows = mutate(["gait_cycle_pct", "A", "B"], _good_rows())
    with pytest.raises(ValueError, match=msg):
        load_emg_reference(_write_csv(tmp_path / "bad.csv", header, rows))


def test_load_reference_empty_and_missing(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_emg_reference(tmp_path / "empty.csv")
    with pytest.raises(FileNotFoundError):
        load_emg_reference(tmp_path / "nope.csv")


# -- mapping and whole comparison ------------------------------------------------------------
def test_mapping_covers_santuz_channels_with_real_actuators():
    assert tuple(SANTUZ_TO_MYOFULLBODY) == SANTUZ_CHANNELS
    assert SANTUZ_TO_MYOFULLBODY["ME"] == ("glmed1_r", "glmed2_r", "glmed3_r")
    assert SANTUZ_TO_MYOFULLBODY["SO"] == ("soleus_r",)
    assert all(n.endswith("_r") for ns in SANTUZ_TO_MYOFULLBODY.values() for n in ns)
    mujoco = pytest.importorskip("mujoco")
    models = pytest.importorskip("musclemimic_models")
    m = mujoco.MjModel.from_xml_path(str(models.get_xml_path("myofullbody")))
    names = {m.actuator(i).name for i in range(m.nu)}
    missing = [n for ns in SANTUZ_TO_MYOFULLBODY.values() for n in ns if n not in names]
    assert missing == []


def _tiled(santuz, period=100, n_cycles=5, seed=0):
    """Activations whose mapped actuators follow the reference envelope, one cycle per ``period`` samples."""
    rng = np.random.default_rng(seed)
    names = [n for ns in SANTUZ_TO_MYOFULLBODY.values() for n in ns] + ["DELT1", "EPL", "soleus_l"]
    t = np.arange(period * n_cycles + 1)
    phase_pct = (t % period) * 100.0 / period
    acts = rng.random((t.size, len(names)))
    for ch, targets in SANTUZ_TO_MYOFULLBODY.items():
        env = np.interp(phase_pct, np.arange(101.0), santuz[ch])
        for j, target in enumerate(targets):
            acts[:, names.index(target)] = env * (0.5 + 0.25 * j)  # heads differ only in scale
    strikes = np.arange(0, t.size, period)
    return acts, names, strikes


def test_emg_similarity_of_reference_itself_is_one(santuz):
    acts, names, strikes = _tiled(santuz)
    res = emg_similarity(acts, names, strikes, santuz)
    assert tuple(res.per_muscle) == SANTUZ_CHANNELS and res.n_cycles == 5
    for ch, m in res.per_muscle.items():
        assert m.r > 0.995, ch
        assert m.shift == 0, ch
    assert res.mean_r == pytest.approx(np.mean(list(res.r.values())))
    assert res.mean_r > 0.995
    assert res.shift["SO"] == 0 and res.sim_envelopes["SO"].shape == (101,)


def test_emg_similarity_recovers_phase_offset(santuz):
    # Strikes 20 samples (= 20 % of a 100-sample cycle) late: each simulated cycle starts at
    # the reference's 20 %, i.e. sim ~ roll(ref, -20), so the returned roll is positive.
    # A roll on the 101-point grid spans 101 intervals, so 20 % of the cycle is 20.2 points:
    # 20 or 21 are both right.
    acts, names, strikes = _tiled(santuz)
    res = emg_similarity(acts, names, strikes[:-1] + 20, santuz)
    assert res.n_cycles == 4
    assert all(m.shift in (20, 21) for m in res.per_muscle.values()), res.shift
    assert res.mean_r > 0.99
    # Undoing the 20-sample delay restores shift 0.
    assert all(m.shift == 0 for m in emg_similarity(acts, names, strikes, santuz).per_muscle.values())


def test_emg_similarity_with_dict_reference_and_custom_mapping(santuz):
    acts, names, strikes = _tiled(santuz)
    ref = {"SO": santuz["SO"], "TA": santuz["TA"], "XX": santuz["GM"]}
    res = emg_similarity(acts, names, strikes, ref, mapping={"SO": "soleus_r", "TA": ["tibant_r"]})
    assert tuple(res.per_muscle) == ("SO", "TA")
    assert res.mean_r == pytest.approx((res.r["SO"] + res.r["TA"]) / 2)


def test_emg_similarity_errors(santuz):
    acts, names, strikes = _tiled(santuz)
    with pytest.raises(ValueError, match="soleus_r"):
        emg_similarity(acts[:, :-1], [n for n in names if n != "soleus_r"][: acts.shape[1] - 1], strikes, santuz)
    with pytest.raises(ValueError, match="no reference channel"):
        emg_similarity(acts, names, strikes, {"XX": santuz["SO"]})
    with pytest.raises(ValueError, match="at least 2 heel strikes"):
        emg_similarity(acts, names, strikes[:1], santuz)
    with pytest.raises(ValueError, match="entries"):
        emg_similarity(acts, names[:-1], strikes, santuz)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        emg_similarity(acts * 2.0, names, strikes, santuz)
    with pytest.raises(ValueError, match="101"):
        emg_similarity(acts, names, strikes, {"SO": santuz["SO"][:100]})
    flat = acts.copy()
    flat[:, names.index("soleus_r")] = 0.0
    with pytest.raises(ValueError, match="'SO'.*constant"):
        emg_similarity(flat, names, strikes, santuz)
    res = emg_similarity(flat, names, strikes, santuz, on_constant="zero")
    assert res.per_muscle["SO"] == (0.0, 0)
    assert res.mean_r == pytest.approx(np.mean([m.r for m in res.per_muscle.values()]))
    with pytest.raises(ValueError, match="on_constant"):
        emg_similarity(acts, names, strikes, santuz, on_constant="skip")
