"""A checkpoint says how it acts: every kind of run (PPO, SAC, BC, latent, residual over a run, residual over
the expert) exported with ``mskbench export-policy`` evaluates to the same records as its run directory, and
the protocol acts through what the run trained with (``acts_through``, resolved by
:func:`mskbench.eval.protocol.load_policy`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import mskbench
from mskbench.cli import main

pytest.importorskip("flax", reason="flax not installed")

#: The tiniest runs the other tests train (tests/test_residual_expert.py, tests/test_bc.py).
PPO = dict(steps=4, num_envs=1, num_steps=4, minibatch_size=4, epochs=1, hidden=(8,), value_hidden=(8,),
           eval_episodes=1, eval_every_steps=10**6)
SAC = dict(steps=4, num_envs=1, num_steps=4, hidden=(8,), critic_hidden=(8,), batch_size=4, learning_starts=2,
           eval_episodes=1, eval_every_steps=10**6)
BC = dict(steps=8, num_envs=2, num_steps=4, updates=3, hidden=(16,), workers=1, minibatch_size=8, eval_episodes=1,
          eval_every_steps=10**6)
HORIZON = 5  # every task's episodes here: five control steps


@pytest.fixture
def short_episodes(monkeypatch):
    from mskbench.paradigms.residual.tasks import ResidualWalk
    from mskbench.tasks.stand import Stand

    for cls in (Stand, ResidualWalk):
        monkeypatch.setattr(cls, "horizon", HORIZON)


def _latent_model(path):
    from mskbench.paradigms.latent.data import collect
    from mskbench.paradigms.latent.model import fit

    data = collect("Stand", "random", steps=64, seed=3)
    return fit(data, 4, epochs=1, seed=0, batch_size=32, learning_rate=1e-3, embed_dim=8, heads=1, blocks=1,
               encoder_hidden=(16,)).save(path)


def _train(kind: str, out):
    from mskbench.paradigms.latent import LatentPrior
    from mskbench.paradigms.residual import train_expert_residual, train_residual

    if kind == "ppo":
        return "Stand", mskbench.train("Stand", out=out, **PPO)
    if kind == "sac":
        return "Stand", mskbench.train("Stand", algo="sac", out=out, **SAC)
    if kind == "bc":
        return "Stand", mskbench.train("Stand", algo="bc", out=out, **BC)
    if kind == "latent":
        prior = LatentPrior(_latent_model(out.parent / "latent-model.npz"), tube=0.1)
        return "Stand", mskbench.train("Stand", out=out, env_wrapper=prior, **PPO)
    if kind == "residual":
        return "ResidualWalk", train_residual("ResidualWalk", "zero", out=out, **PPO)
    assert kind == "expert-residual"
    return "Stand", train_expert_residual("Stand", out=out, **PPO)


def _records(policy: str, task: str, seeds) -> list[dict]:
    """The protocol's records of ``policy`` (CPU, in this process) on ``task``, without what names the file."""
    from mskbench.eval.executors import JobSpec, run_local
    from mskbench.eval.protocol import Unit

    units = [Unit("m", task, kind, scale, s) for s in seeds for kind, scale in (("none", 0.0), ("action", 0.1))]
    records = list(run_local(units, JobSpec(policy), workers=1))
    for r in records:
        del r["wall_time_s"]
    return records


KINDS = ("ppo", "sac", "bc", "latent", "residual", "expert-residual")
#: How each kind acts: ``None`` = its network alone.
ACTS_THROUGH = {"ppo": None, "sac": None, "bc": None, "latent": "mskbench.paradigms.latent:LatentActing",
                "residual": "mskbench.paradigms.residual.wrapper:ResidualActing",
                "expert-residual": "mskbench.paradigms.residual.expert:ExpertResidualActing"}


#: A (tiny) training run of more than half a minute: BC's worlds, the latent model's fit, the expert's worlds.
SLOW = ("bc", "latent", "expert-residual")


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.slow) if k in SLOW else k for k in KINDS])
def test_an_export_evaluates_as_its_run(kind, tmp_path, short_episodes):
    from mskbench.agents.checkpoint import acts_through
    from mskbench.eval.protocol import load_policy
    from mskbench.envs import MSKEnv

    run = tmp_path / "run"
    task, _ = _train(kind, run)
    exported = tmp_path / "policy.npz"
    result = CliRunner().invoke(main, ["export-policy", str(run), "--out", str(exported)])
    assert result.exit_code == 0, result.output
    for src in (run / "best.npz", exported):  # the run's checkpoint (through run.json) and the export (itself)
        acting = acts_through(src)
        assert (acting and acting[0]) == ACTS_THROUGH[kind], (src, acting)
    if ACTS_THROUGH[kind] is not None:
        with np.load(exported) as z:  # the export carries it: it acts so wherever it is copied
            assert str(z["acts_through"]) == ACTS_THROUGH[kind] and json.loads(str(z["acts_settings"])) == acting[1]
        # A run from before acts_through was recorded: the same, inferred from its env_wrapper settings.
        settings = json.loads((run / "run.json").read_text())
        del settings["acts_through"], settings["acts_settings"]
        (run / "run.json").write_text(json.dumps(settings))
        assert acts_through(run / "best.npz") == acting
    # The same actions from the run directory and from the export, through what the run trained with.
    env = MSKEnv(task)
    obs, _ = env.reset(seed=0)
    a, b = load_policy(str(run), env, 0), load_policy(str(exported), env, 0)
    assert type(a).__qualname__ == type(b).__qualname__
    assert (type(a).__name__ == "CheckpointPolicy") == (ACTS_THROUGH[kind] is None), type(a).__name__
    np.testing.assert_array_equal(a.act(obs), b.act(obs))
    if kind == "residual":  # the protocol refuses residual tasks (their base is an option): the episodes themselves
        from mskbench.eval.episodes import run_episode

        episodes = [[{k: v for k, v in run_episode(env, load_policy(p, env, 0), s).as_dict().items()
                      if k != "wall_time_s"} for s in (0, 1)] for p in (str(run), str(exported))]
        assert [e["length"] for e in episodes[0]] == [HORIZON] * 2 and episodes[0] == episodes[1]
        env.close()
        return
    env.close()
    seeds = (0, 1)
    from_run, from_export = _records(str(run), task, seeds), _records(str(exported), task, seeds)
    assert [r["length"] for r in from_run] == [HORIZON] * 4 or kind != "expert-residual"
    assert from_run == from_export


def test_an_old_export_over_the_expert_is_told_by_its_observation_layout():
    """An export from before acts_through of a policy trained over the expert has no run.json beside it: its
    observation layout's block of the expert's action tells it."""
    from mskbench.agents import checkpoint
    from mskbench.paradigms.residual.expert import BASE_BLOCK

    assert checkpoint._EXPERT_BLOCK == BASE_BLOCK
    layout = {"body/qpos": slice(0, 3), BASE_BLOCK: slice(3, 5)}
    assert checkpoint._inferred({}, layout) == (ACTS_THROUGH["expert-residual"], {})
    assert checkpoint._inferred({}, {"body/qpos": slice(0, 3)}) is None


def test_an_unknown_way_of_acting_is_a_one_line_error(tmp_path):
    """A checkpoint whose acts_through names nothing importable: a one-line error naming it (before its
    network is read, so the file needs nothing else)."""
    from mskbench.eval.protocol import load_policy

    bad = tmp_path / "bad.npz"
    np.savez(bad, acts_through=np.array("mskbench.nowhere:Acting"), acts_settings=np.array("{}"))
    with pytest.raises(ValueError, match="acts through 'mskbench.nowhere:Acting'") as err:
        load_policy(str(bad), None, 0)
    assert "\n" not in str(err.value)



#: ``acts_through`` strings naming a module from before its paradigm moved into mskbench.paradigms, and the
#: factory each is read as today.
MOVED = {"mskbench.control.residual:ExpertResidualPolicy": "mskbench.paradigms.residual.expert:ExpertResidualPolicy",
         "mskbench.envs.residual_action:combine": "mskbench.paradigms.residual.action:combine",
         "mskbench.agents.latent:LatentModel": "mskbench.paradigms.latent:LatentModel",
         "mskbench.agents.latent.wrapper:LatentFilteredPolicy": "mskbench.paradigms.latent.wrapper:LatentFilteredPolicy"}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_in_acts_through_is_read_as_its_home_today(old, tmp_path):
    """A checkpoint, or the run.json beside it, naming a module that has since moved acts through that module's
    home today; the names written today are kept as they are."""
    from mskbench.agents.checkpoint import acts_through, current_factory
    from mskbench.eval.protocol import resolve_factory

    assert current_factory(old) == MOVED[old]
    resolve_factory(MOVED[old])  # the new home has it
    ckpt = tmp_path / "policy.npz"
    np.savez(ckpt, acts_through=np.array(old), acts_settings=np.array('{"alpha": 0.5}'))
    assert acts_through(ckpt) == (MOVED[old], {"alpha": 0.5})
    run = tmp_path / "run"
    run.mkdir()
    np.savez(run / "best.npz", w=np.zeros(1))
    (run / "run.json").write_text(json.dumps({"acts_through": old, "acts_settings": {}}))
    assert acts_through(run / "best.npz") == (MOVED[old], {})
    for spec in filter(None, ACTS_THROUGH.values()):  # today's names (the latent one also older runs') resolve
        assert current_factory(spec) == spec
        resolve_factory(spec)
