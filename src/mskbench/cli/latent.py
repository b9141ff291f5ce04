"""``mskbench latent collect|fit|eval``: hard-mode latent-action RL's expert data, encoder–decoder and evaluation.

    mskbench latent collect Walk --policy runs/ppo-walk --steps 50000 --out walk.npz
    mskbench latent fit walk.npz --latent 64 --out walk-z64.npz
    mskbench train Walk --algo deprl --latent walk-z64.npz --tube 0.25 --out runs/latent-walk
    mskbench latent eval runs/latent-walk --episodes 10
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from mskbench.catalog import task_id
from mskbench.cli.common import Duration, make_console, progress_bar


def _task(task: str) -> str:
    try:
        return task_id(task.strip())
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="TASK") from None


@click.group("latent", short_help="Latent-action RL, hard mode (App. A-G): expert data, encoder-decoder, evaluation.")
def latent() -> None:
    """Latent-action RL, hard mode (App. A-G, Eqs. 21-28).

    'collect' records (state, action) data from any policy; 'fit' trains the encoder-decoder on it by
    behaviour cloning (Eq. 22) and reports the reconstruction error and explained variance on held-out
    episodes; 'mskbench train TASK --latent MODEL --tube R' trains a learner whose muscle actions are
    clipped into a tube of radius R around the decoded prior (Eqs. 23-26), with the decaying deviation
    penalty (Eqs. 27-28); 'eval' runs a policy through the same filter.
    """


def _out_path(out: Path, force: bool, suffix: str = ".npz") -> None:
    if out.suffix.lower() != suffix:
        raise click.BadParameter(f"{out} must end in {suffix}", param_hint="--out")
    if not out.parent.is_dir():
        raise click.BadParameter(f"directory {out.parent} does not exist", param_hint="--out")
    if out.exists() and not force:
        raise click.UsageError(f"{out} exists; pass --force to replace it")


@latent.command("collect")
@click.argument("task")
@click.option("--policy", "policy_spec", default="random", show_default=True,
              help="The expert: a built-in (zero, passive, random), a checkpoint of any trainer (.npz or run "
                   "directory) or 'package.module:factory'.")
@click.option("--steps", type=click.IntRange(min=2), default=None,
              help="Control steps (samples) to record [default: 50000, the authors'].")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The data set (.npz).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Episode e uses seed+e.")
@click.option("--noise", "noise_std", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
              help="Standard deviation of Gaussian noise on the executed actions (the recorded ones are the "
                   "policy's).")
@click.option("--force", "--overwrite", "force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def collect_cmd(task, policy_spec, steps, out, seed, noise_std, force, as_json):
    """Record TASK's (state, action) pairs under a policy: actions, observations, muscle states
    (length, velocity, force, activation), the muscle-joint moment matrix (its fixed sparse pattern once,
    the nonzeros per step) and the muscle priors."""
    from mskbench.paradigms.latent.data import DEFAULT_SAMPLES
    from mskbench.eval.protocol import check_policy_spec
    from mskbench.paradigms.latent.run import collect_expert

    if task.strip().lower() == "all" or "," in task:
        raise click.BadParameter("collect takes one task", param_hint="TASK")
    name = _task(task)
    _out_path(out, force)
    try:
        check_policy_spec(policy_spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--policy") from None
    n = DEFAULT_SAMPLES if steps is None else steps
    with progress_bar(make_console()) as progress:
        job = progress.add_task(f"{name}: collecting", total=n)
        try:
            data = collect_expert(name, policy_spec, steps=n, seed=seed, noise_std=noise_std,
                                  progress=lambda done, total: progress.update(job, completed=done))
        except (ValueError, TypeError) as exc:
            raise click.ClickException(str(exc)) from None
    data.save(out)
    meta = data.meta
    returns = meta["episode_returns"]
    summary = {"out": str(out), "task": meta["task"], "policy": policy_spec, "samples": data.n_samples,
               "muscles": data.n_muscles, "nv": data.nv, "moment_nonzeros": int(data.moment_index.shape[0]),
               "episodes_finished": meta["episodes_finished"],
               "mean_return": float(sum(returns) / len(returns)) if returns else None,
               "mean_length": float(sum(meta["episode_lengths"]) / len(returns)) if returns else None,
               "wall_s": meta["wall_s"], "size_mb": round(out.stat().st_size / 1e6, 1)}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    ret = "-" if summary["mean_return"] is None else f"{summary['mean_return']:.2f}"
    click.echo(f"wrote {data.n_samples} samples of {meta['task']} under {policy_spec} to {out} "
               f"({summary['size_mb']} MB): {summary['episodes_finished']} finished episodes, mean return {ret}, "
               f"{data.n_muscles} muscles x {data.nv} dofs ({summary['moment_nonzeros']} moment nonzeros), "
               f"{meta['wall_s']:.0f} s")


def _widths(text: str | None, option: str):
    if text is None:
        return None
    try:
        widths = tuple(int(w) for w in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of widths", param_hint=option) from None
    if not widths or min(widths) < 1:
        raise click.BadParameter("widths must be positive", param_hint=option)
    return widths


@latent.command("fit")
@click.argument("data_path", metavar="DATA", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--latent", "latent_dim", type=click.IntRange(min=1), default=64, show_default=True,
              help="Latent size (the paper's: 16, 32, 64, 128).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The model file (.npz).")
@click.option("--epochs", type=click.IntRange(min=1), default=40, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=256, show_default=True)
@click.option("--learning-rate", type=click.FloatRange(min=0.0, min_open=True), default=1e-4, show_default=True)
@click.option("--max-updates", type=click.IntRange(min=1), default=None, help="Stop after this many gradient steps.")
@click.option("--time-limit", type=Duration(), default=None, help="Stop after the first gradient step past this "
              "wall-clock time (90s, 3m).")
@click.option("--holdout", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.2,
              show_default=True, help="Share of the episodes held out for the statistics.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--embed-dim", type=click.IntRange(min=1), default=None, help="Decoder token width [default: 256].")
@click.option("--heads", type=click.IntRange(min=1), default=None, help="Attention heads [default: 8].")
@click.option("--blocks", type=click.IntRange(min=1), default=None, help="Attention blocks [default: 3].")
@click.option("--encoder-hidden", default=None, help="Encoder widths, comma-separated [default: 256,128].")
@click.option("--feature-widths", default=None, metavar="P,S,M",
              help="Widths of the decoder's prior, state and moment embeddings [default: 64,64,128].")
@click.option("--force", "--overwrite", "force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def fit_cmd(data_path, latent_dim, out, epochs, batch_size, learning_rate, max_updates, time_limit, holdout, seed,
            embed_dim, heads, blocks, encoder_hidden, feature_widths, force, as_json):
    """Fit the encoder-decoder to DATA by behaviour cloning and report held-out reconstruction and
    explained variance.

    The encoder-decoder of Eq. 21, the loss of Eq. 22; the statistics are those of the held-out
    episodes, beside the training samples' and a PCA code of the same size (how compressible the
    actions are)."""
    from mskbench.paradigms.latent.data import LatentData
    from mskbench.paradigms.latent.model import fit

    _out_path(out, force)
    sizes = {k: v for k, v in (("embed_dim", embed_dim), ("heads", heads), ("blocks", blocks),
                               ("encoder_hidden", _widths(encoder_hidden, "--encoder-hidden"))) if v is not None}
    widths = _widths(feature_widths, "--feature-widths")
    if widths is not None:
        if len(widths) != 3:
            raise click.BadParameter("give three widths: prior, state, moment", param_hint="--feature-widths")
        sizes.update(prior_width=widths[0], state_width=widths[1], moment_width=widths[2])
    try:
        data = LatentData.load(data_path)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="DATA") from None

    def report(row):
        if not as_json:
            loss = "-" if row["train_loss"] is None else f"{row['train_loss']:.5f}"
            click.echo(f"epoch {row['epoch']} updates {row['updates']} train loss {loss} ({row['wall_s']:.0f} s)")

    try:
        model = fit(data, latent_dim, epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
                    holdout=holdout, seed=seed, max_updates=max_updates, time_limit_s=time_limit, progress=report,
                    **sizes)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    model.save(out)
    m = model.metrics
    if as_json:
        click.echo(json.dumps({"out": str(out), **{k: v for k, v in m.items() if k != "history"}}, indent=2))
        return
    click.echo(f"wrote {out}: latent {latent_dim}, {m['updates']} updates ({m['stopped']}), {m['n_train']} training / "
               f"{m['n_heldout']} held-out samples (by {m['heldout_by']})")
    if m["heldout_seen_in_train"] > 0.5:
        click.echo(f"  warning: {100 * m['heldout_seen_in_train']:.0f}% of the held-out actions also occur in the "
                   "training data (a deterministic expert repeating its episodes?): collect with --noise")
    for name in ("heldout", "train", "pca_heldout"):
        s = m[name]
        click.echo(f"  {name:12s} mse {s['mse']:.5f}  rmse {s['rmse']:.4f}  explained variance "
                   f"{s['explained_variance']:.4f}  r2 {s['r2']:.4f}  per-muscle EV {s['explained_variance_per_muscle']:.4f}")


@latent.command("eval")
@click.argument("policy_spec", metavar="POLICY")
@click.option("--task", default=None, help="The task [default: the run's, when POLICY is a latent run directory].")
@click.option("--model", "model_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The encoder-decoder [default: the run's].")
@click.option("--tube", type=click.FloatRange(0.0, 1.0), default=None, help="Tube radius [default: the run's].")
@click.option("--episodes", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=10_000, show_default=True,
              help="Episode i uses seed+i (10000: the training evaluation's).")
@click.option("--json", "as_json", is_flag=True)
def eval_cmd(policy_spec, task, model_path, tube, episodes, seed, as_json):
    """Deterministic episodes of POLICY (a latent run directory, or any policy with --task and --model)
    with its actions filtered through the encoder-decoder's tube; the task's return, no penalty."""
    from mskbench.paradigms.latent.model import LatentModel
    from mskbench.paradigms.latent.run import evaluate_through

    from mskbench.agents.run_dir import RunDir

    settings: dict = {}
    if RunDir(policy_spec).is_run():
        run = RunDir(policy_spec).settings()
        settings = run.get("env_wrapper") or {}
        if settings.get("paradigm") != "latent":
            settings = {}
        task = task or run.get("task")
    if task is None:
        raise click.UsageError("give --task (POLICY is not a latent run directory)")
    model_path = model_path or (Path(settings["model"]) if "model" in settings else None)
    if model_path is None:
        raise click.UsageError("give --model (POLICY is not a latent run directory)")
    tube = tube if tube is not None else settings.get("tube")
    if tube is None:
        from mskbench.paradigms.latent.core import DEFAULT_TUBE

        tube = DEFAULT_TUBE
    name = _task(task)
    try:
        model = LatentModel.load(model_path)
        result = evaluate_through(name, policy_spec, model, tube=tube, mode=settings.get("mode", "hard"),
                                  episodes=episodes, seed=seed)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"{name} through {model_path} (latent {model.latent_dim}, tube {tube:g}): mean return "
               f"{result['mean_return']:.2f}, success {result['success_rate']:.0f}%, mean length "
               f"{result['mean_length']:.1f}, mean L_dev {result['mean_deviation']:.5f} over {episodes} episodes")
