"""``mskbench mouse``: forelimb clips, kinematic replay, imitation training and evaluation.

Without ``--clips`` every command uses synthetic clips (``--synthetic N``,
seed 0), so the pipeline runs with no external data.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import click

from mskbench.cli.common import TIME_LIMIT_HELP, Duration, run_training, stop_note

log = logging.getLogger("mskbench.mouse")


def _clips(clips_dir: Path | None, synthetic: int, seed: int = 0):
    from mskbench.mouse.clips import load_clips

    if clips_dir is not None:
        try:
            return load_clips(clips_dir)
        except (ValueError, FileNotFoundError) as exc:
            raise click.BadParameter(str(exc), param_hint="--clips") from None
    from mskbench.mouse.synthetic import make_synthetic_clips

    log.info("no --clips: generating %d synthetic clips (seed %d)", synthetic, seed)
    return make_synthetic_clips(synthetic, seed=seed)


clips_option = click.option("--clips", "clips_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
                            default=None, help="Directory of clips (Track-MJX *.h5 or mskbench *.npz).")
synthetic_option = click.option("--synthetic", type=click.IntRange(min=1), default=8, show_default=True,
                                help="Synthetic clips to generate when --clips is not given.")


@click.group("mouse")
def mouse() -> None:
    """Mouse forelimb reaching imitation (Leonardis et al. 2025)."""


@mouse.command("synth")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("-n", "--n", "n", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def synth_cmd(out_dir: Path, n: int, seed: int) -> None:
    """Generate synthetic reaching clips with known activations (mskbench .npz format)."""
    from mskbench.mouse.clips import save_clip
    from mskbench.mouse.synthetic import make_synthetic_clips

    out_dir.mkdir(parents=True, exist_ok=True)
    existing = sorted(out_dir.glob("*.npz"))
    if existing:
        raise click.UsageError(f"{out_dir} already holds {len(existing)} clips; choose an empty directory")
    for clip in make_synthetic_clips(n, seed=seed):
        save_clip(clip, out_dir / f"{clip.name}.npz")
    click.echo(f"wrote {n} synthetic clips to {out_dir}")


@mouse.command("replay")
@clips_option
@synthetic_option
@click.option("--json", "as_json", is_flag=True)
def replay_cmd(clips_dir, synthetic, as_json) -> None:
    """Kinematic replay: the clips' joint angles through our model vs their keypoints (mm)."""
    from mskbench.mouse.replay import replay_errors

    result = replay_errors(_clips(clips_dir, synthetic))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for name, err in result["per_clip"].items():
        click.echo(f"{name}: {err:.3f} mm")
    click.echo(f"mean keypoint error: {result['mean_keypoint_error_mm']:.3f} mm over {len(result['per_clip'])} clips")


@mouse.command("train")
@clips_option
@synthetic_option
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Run directory: run.json, checkpoint.npz (latest), best.npz (lowest evaluated replay error), "
                   "eval_log.jsonl.")
@click.option("--ctrl-cost", type=click.FloatRange(min=0), default=0.0, show_default=True, help="λ_ctrl.")
@click.option("--energy-cost", type=click.FloatRange(min=0), default=0.0, show_default=True, help="λ_energy.")
@click.option("--steps", type=click.IntRange(min=1), default=2_000_000, show_default=True, help="Environment steps.")
@click.option("--num-envs", type=click.IntRange(min=1), default=None,
              help="Parallel worlds (default: 4096 on the JAX backend, 32 on the CPU).")
@click.option("--backend", type=click.Choice(["auto", "cpu", "jax"]), default="auto", show_default=True,
              help="cpu: MuJoCo C worlds in a loop; jax: batched (GPU); auto: jax when JAX sees a GPU.")
@click.option("--impl", type=click.Choice(["jax", "warp", "cpu"]), default="jax", show_default=True,
              help="Physics of --backend jax: jax (MJX), warp (MuJoCo Warp; NVIDIA GPU, or Warp's CPU device) "
                   "or cpu (MuJoCo C behind the JAX interface).")
@click.option("--hidden", type=click.IntRange(min=8), default=512, show_default=True,
              help="Width of the 3-layer encoder and decoder (paper: 512).")
@click.option("--rollout", type=click.IntRange(min=1), default=64, show_default=True,
              help="Steps per world per PPO iteration.")
@click.option("--minibatch", type=click.IntRange(min=1), default=512, show_default=True,
              help="PPO minibatch size (4 epochs over each rollout).")
@click.option("--init-log-std", type=float, default=-1.0, show_default=True,
              help="Initial log standard deviation of the action noise.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--resume", is_flag=True, help="Continue the run in --out.")
@click.option("--eval-every", type=click.IntRange(min=1), default=20, show_default=True,
              help="Iterations between evaluations (replay error on the first four clips, logged).")
@click.option("--time-limit", type=Duration(), default=None, help=TIME_LIMIT_HELP)
def train_cmd(clips_dir, synthetic, out_dir, ctrl_cost, energy_cost, steps, num_envs, backend, impl, hidden,
              rollout, minibatch, init_log_std, seed, resume, eval_every, time_limit) -> None:
    """Train the encoder–decoder imitation policy with PPO (the task MouseImitation: mskbench.train)."""
    from mskbench.training import resolve_config

    if backend == "auto":
        try:
            import jax

            backend = "jax" if jax.default_backend() == "gpu" else "cpu"
        except ImportError:
            backend = "cpu"
    clips = str(clips_dir) if clips_dir is not None else None
    task_options = {"clips": clips, "synthetic_clips": synthetic, "synthetic_seed": seed,
                    "ctrl_cost": ctrl_cost, "energy_cost": energy_cost}
    config = {"num_steps": rollout, "minibatch_size": minibatch, "init_log_std": init_log_std,
              "encoder_hidden": (hidden,) * 3, "decoder_hidden": (hidden,) * 3, "value_hidden": (hidden,) * 2}
    if num_envs is not None:
        config["num_envs"] = num_envs
    batch = rollout * resolve_config("ppo", "MouseImitation", backend, config).num_envs
    run = run_training("MouseImitation", out_dir=out_dir, task_options=task_options, backend=backend,
                       impl=impl if backend == "jax" else None, steps=steps, seed=seed, resume=resume,
                       time_limit_s=time_limit, eval_every_steps=eval_every * batch, **config)
    click.echo(f"trained {run.steps} steps{stop_note(run)}; checkpoints in {out_dir} "
               f"(best.npz: {run.best} mm on the evaluation clips)")


@mouse.command("eval")
@clips_option
@synthetic_option
@click.option("--policy", "run_dir", type=click.Path(exists=True, path_type=Path), required=True,
              help="Run directory from 'mskbench mouse train' (its best.npz, else checkpoint.npz) or a checkpoint file.")
@click.option("--emg", "emg_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Directory of <clip name>.csv EMG envelopes (header: muscle names; rows: frames).")
@click.option("--E", "E", type=click.IntRange(min=1), default=2, show_default=True, help="Simplex embedding dimension.")
@click.option("--tau", type=int, default=-1, show_default=True, help="Simplex lag (negative: past).")
@click.option("--Tp", "Tp", type=int, default=1, show_default=True, help="Simplex prediction horizon.")
@click.option("--json", "as_json", is_flag=True)
def eval_cmd(clips_dir, synthetic, run_dir, emg_dir, E, tau, Tp, as_json) -> None:
    """Track replay error (mm), EMG fit MAE and simplex ρ of a trained policy, per clip and overall."""
    from mskbench.agents.checkpoint import checkpoint_path, load
    from mskbench.mouse.clips import attach_emg
    from mskbench.eval.mouse import SimplexParams, evaluate, evaluation_env
    from mskbench.tasks.mouse_imitation import MouseImitation
    from mskbench.agents.run_dir import RunDir

    if tau == 0:
        raise click.BadParameter("tau must be non-zero", param_hint="--tau")
    try:
        ckpt = checkpoint_path(str(run_dir))
    except ValueError as exc:
        raise click.BadParameter(f"no checkpoint: {exc}", param_hint="--policy") from None
    if ckpt is None:
        raise click.BadParameter(f"no checkpoint at {run_dir} (a .npz file or a run directory)", param_hint="--policy")
    clips = _clips(clips_dir, synthetic)
    if emg_dir is not None:
        try:
            clips = attach_emg(clips, emg_dir)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--emg") from None
    # The task options the policy was trained with (physics step, observation), on these clips.
    run = RunDir(ckpt.parent)
    trained = run.settings().get("task_options", {}) if run.is_run() else {}
    options = {k: v for k, v in trained.items() if k in MouseImitation.options() and not k.startswith(("clips", "synthetic"))}
    task = MouseImitation(clips=tuple(clips), **options)
    probe = evaluation_env(clips[:1], task)
    try:
        policy = load(ckpt, probe.obs_layout, int(probe.observation_space.shape[0])).host_policy()
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--policy") from None
    result = evaluate(policy, clips, task, SimplexParams(E, tau, Tp))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    o = result["overall"]
    click.echo(f"clips: {o['clips']}  track replay error: {o['track_replay_error_mm']:.3f} mm  "
               f"joint MAE: {o['joint_mae_rad']:.4f} rad")
    emg = o["emg_fit_mae"]
    click.echo("EMG fit MAE: " + (f"{emg['mean']:.4f}" if "mean" in emg else f"absent ({emg['absent']})"))
    click.echo("simplex rho: " + ", ".join(f"{m} {v:.3f}" if v is not None else f"{m} —"
                                           for m, v in o["simplex_rho"]["per_muscle"].items()))
