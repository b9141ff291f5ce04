"""``mskbench train``, ``export-policy`` and ``synergies``: training runs, their policies, DynSyn's groups."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from mskbench.agents import ALGORITHMS  # light: no JAX until something trains
from mskbench.cli.common import (TIME_LIMIT_HELP, Duration, make_console, print_table, progress_bar, run_training,
                                 stop_note, task_list)
from mskbench.paradigms.compose import compose  # light: each paradigm is imported when named


def _settings(pairs: tuple[str, ...]) -> dict:
    """``--set KEY=VALUE`` pairs as hyper-parameters (values read as JSON, a comma-separated list of JSON values
    as a tuple (``hidden=2048,2048``), else kept as text)."""
    out = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--set")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            try:
                value = [json.loads(part) for part in text.split(",")] if "," in text else text
            except json.JSONDecodeError:
                value = text
        out[key.strip()] = tuple(value) if isinstance(value, list) else value
    return out


@click.command("train")
@click.argument("task")
@click.option("--algo", type=click.Choice(list(ALGORITHMS)), default="ppo", show_default=True,
              help="Training algorithm (mskbench.agents.ALGORITHMS).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Run directory: run.json, checkpoint.npz (latest), best.npz (best evaluation), eval_log.jsonl.")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Environment steps [default: Table XVI's 2e8].")
@click.option("--backend", type=click.Choice(["cpu", "jax"]), default="cpu", show_default=True,
              help="cpu: MuJoCo C worlds stepped from Python; jax: the batched JAX env "
                   "(mskbench.jax_env), the whole rollout on the device.")
@click.option("--impl", type=click.Choice(["warp", "jax", "cpu"]), default=None,
              help="Physics of --backend jax: warp (MuJoCo Warp, NVIDIA GPU; default), jax (MJX) or "
                   "cpu (MuJoCo C behind the JAX interface, for testing).")
@click.option("--num-envs", type=click.IntRange(min=1), default=None,
              help="Parallel worlds [default: 8 (cpu), 4096 (jax)].")
@click.option("--rollout", type=click.IntRange(min=1), default=None,
              help="Steps per environment per iteration (one log row and checkpoint) [default: PPO 2048 (cpu), "
                   "64 (jax); SAC 1250; DepRL 625; DynSyn-SAC 160].")
@click.option("--hidden", type=click.IntRange(min=1), default=None,
              help="Width of every layer of the actor and the critic(s) [default: 1024].")
@click.option("--minibatch", type=click.IntRange(min=1), default=None,
              help="[default: 256 (cpu); jax: rollout x num-envs / 64, at least 256, i.e. as many gradient "
                   "steps per epoch as Table XVI's 2048 x 8 / 256]")
@click.option("--epochs", type=click.IntRange(min=1), default=None, help="[default: 10]")
@click.option("--learning-rate", type=float, default=None,
              help="[default: PPO 3e-4, SAC 1e-4, DepRL 5e-5 (actor), DynSyn-SAC 5e-4 decaying to 1.25e-4]")
@click.option("--set", "extra", multiple=True, metavar="KEY=VALUE",
              help="Any other hyper-parameter of the algorithm (repeatable), e.g. --set gamma=0.98.")
@click.option("--eval-every-steps", type=click.IntRange(min=1), default=None,
              help="[default: the algorithm's (Table XVI): PPO 500000, SAC 200000, DynSyn-SAC 5000000; "
                   "5000000 on --backend jax]")
@click.option("--eval-episodes", type=click.IntRange(min=1), default=None,
              help="Deterministic episodes per evaluation [default: the algorithm's, Table XVI: 10; DynSyn-SAC 3].")
@click.option("--eval-env", type=click.Choice(["cpu", "jax"]), default=None,
              help="Where the periodic evaluation runs [default: the backend's]: cpu = the protocol's "
                   "MuJoCo C env, episode by episode; jax = the training env's physics, one world per episode, "
                   "batched on the device (--backend jax only).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--resume", is_flag=True, help="Continue the run in --out.")
@click.option("--time-limit", type=Duration(), default=None, help=TIME_LIMIT_HELP)
@click.option("--agentic", type=click.Choice(["rule", "http"]), default=None,
              help="Agentic reward tuning (App. A-E; the paper's learner is --algo deprl): every --agentic-every "
                   "steps a reasoner rewrites the reward weights (each nonzero weight by at most 20% per update, "
                   "||w||_1 = 40). rule: built-in rules, offline; http: an OpenAI-compatible chat API from "
                   "MSKBENCH_LLM_URL, MSKBENCH_LLM_MODEL, MSKBENCH_LLM_KEY. Updates are logged to "
                   "OUT/agentic_updates.jsonl; Table III (survival, tracking RMSE, activation) to "
                   "OUT/agentic_summary.json. --backend cpu only.")
@click.option("--agentic-every", type=click.IntRange(min=1), default=None,
              help="Environment steps between reward-weight updates [default: 20000].")
@click.option("--agentic-timeout", type=Duration(), default=None,
              help="How long the reasoner may take per update before it is abandoned [default: 60s].")
@click.option("--base", default=None, metavar="RUN|expert",
              help="Residual adaptation (Eq. 2 / 38, App. A-J; TASK: ResidualWalk, ResidualRun or ResidualStairs): "
                   "the frozen base policy, a run directory or checkpoint of a tracking prior (mskbench train "
                   "TrackWalk ...; zero or passive for tests). The trained policy is the residual a_res; the "
                   "muscles get clip(a_base + alpha * clip(a_res, -1, 1), -1, 1) (mskbench.paradigms.residual). "
                   "--base expert on a task the expert serves (Stand, Powerlift, SingleLegStand, Sit, Balance, "
                   "Squat, Reach, Walk, PoleWalk, WalkTurn, OpenDoor; --backend cpu, --algo ppo or sac): residual RL "
                   "over the privileged expert, "
                   "bound to each world's simulator, alpha 0.6, the observation with a_base appended; its "
                   "evaluations run the expert in the loop and are marked privileged (mskbench.paradigms.residual.expert).")
@click.option("--latent", "latent_model", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Latent-action RL, hard mode (App. A-G): every muscle action is clipped into a tube around the "
                   "prior this encoder-decoder (mskbench latent fit) decodes from it and the muscle states, and "
                   "the reward pays the decaying deviation penalty (Eqs. 23-28); the evaluation runs through the "
                   "same filter (afterwards: mskbench latent eval OUT). Any --backend: on jax the map runs inside "
                   "the batched step.")
@click.option("--tube", type=click.FloatRange(0.0, 1.0), default=None,
              help="Tube radius delta of --latent, in activation units [default: 0.25, the authors'].")
@click.option("--devices", type=click.IntRange(min=1), default=None,
              help="--backend jax: devices the worlds are sharded over, data-parallel (it must divide --num-envs) "
                   "[default: every device JAX sees]. The run's numbers do not depend on it.")
@click.option("--coordinator", default=None, metavar="HOST:PORT",
              help="A run over several hosts (jax.distributed): process 0's address, the same on every host "
                   "[default: $JAX_COORDINATOR_ADDRESS]. Only process 0 writes --out and evaluates.")
@click.option("--num-processes", type=click.IntRange(min=1), default=None,
              help="Processes of a run over several hosts, one per host [default: $JAX_NUM_PROCESSES].")
@click.option("--process-id", type=click.IntRange(min=0), default=None,
              help="This process's index, 0 .. --num-processes - 1 [default: $JAX_PROCESS_ID].")
@click.option("--init", "init", default=None, metavar="RUN",
              help="PPO from a trained actor: a PPO or BC run directory (or checkpoint) whose actor (mean network, "
                   "log-std) and observation normalisation start the run; the critic learns alone for the first "
                   "--set critic_warmup=N iterations [default: 2] and the normalisation stays the actor's "
                   "(--set update_norm=true to update it from the rollouts).")
def train_cmd(task, algo, out_dir, steps, backend, impl, num_envs, rollout, hidden, minibatch, epochs, learning_rate,
              extra, eval_every_steps, eval_episodes, eval_env, seed, resume, time_limit, agentic, agentic_every,
              agentic_timeout, base, latent_model, tube, devices, coordinator, num_processes, process_id, init):
    """Train an algorithm on TASK with Table XVI's defaults: ppo (2x1024 MLPs, lr 3e-4, batch 256, 2048
    steps x 8 envs, 10 epochs), sac (SBX: 2x1024 actor, twin 2x1024 critics, lr 1e-4, 8 envs, one
    gradient step per vectorised step), deprl (DEP exploration on SAC, 3-step returns, 16 envs, 1e5
    warm-up, 30 updates per 1,000 transitions), dynsyn (SAC through muscle-synergy groups, 3x1024,
    64 envs, lr 5e-4 -> 1.25e-4). The best checkpoint (best.npz) is the highest mean deterministic
    evaluation return; DepRL reports its last checkpoint (checkpoint.npz; best_return.npz is kept).
    The SAC family trains on --backend cpu.

    --backend jax trains the same networks on the batched JAX env (GPU: --impl warp) and writes the
    same checkpoints. Its periodic evaluation (--eval-env jax) runs the deterministic policy on
    --eval-episodes worlds started exactly as the protocol starts seeds 10000, 10001, ... (same
    initial states, no perturbation) until each episode ends; only the physics implementation
    differs from the protocol's MuJoCo C, so best.npz is chosen by returns close to, not identical
    with, what mskbench eval reports. --eval-env cpu evaluates in the protocol env itself (exact,
    but one episode at a time on the host).

    --backend jax shards the worlds over --devices devices (default: all JAX sees) and averages the
    gradients across them. Over several hosts run the same command on each with --coordinator,
    --num-processes and --process-id (docs/gpu.md).

    The same run from Python: mskbench.train(TASK, algo=..., backend=..., out=...). Evaluate the
    result with the shared protocol: mskbench eval --task TASK --policy OUT.
    """
    names = task_list(task)
    if len(names) != 1:
        raise click.BadParameter("train takes one task", param_hint="TASK")
    _start_processes(backend, devices, coordinator, num_processes, process_id)
    config = _settings(extra)
    ppo, bc = algo == "ppo", algo == "bc"
    if epochs is not None and not ppo:
        why = "bc fits --set updates=N Adam steps per iteration" if bc else f"{algo} is off-policy"
        raise click.BadParameter(f"--epochs is PPO's (passes over each rollout); {why}", param_hint="--epochs")
    if init is not None and not ppo:
        raise click.BadParameter(f"--init starts PPO from a trained actor; {algo}'s actor is not PPO's",
                                 param_hint="--init")
    for key, value in (("num_envs", num_envs), ("num_steps", rollout),
                       ("minibatch_size" if ppo or bc else "batch_size", minibatch), ("epochs", epochs),
                       ("learning_rate", learning_rate)):
        if value is not None:
            config[key] = value
    if hidden is not None:  # every layer of the actor and the critic(s) this wide
        from mskbench.training import resolve_config

        layers = len(resolve_config(algo, names[0], backend, {}).hidden)
        config["hidden"] = (hidden,) * layers
        if not bc:  # bc trains no critic
            config["value_hidden" if ppo else "critic_hidden"] = (hidden,) * layers
    if init is not None:
        config["init"] = init
    try:
        paradigm = compose(names[0], algo=algo, backend=backend, agentic=agentic, agentic_every=agentic_every,
                           agentic_timeout=agentic_timeout, base=base, latent=latent_model, tube=tube)
    except ValueError as exc:  # an OptionError names its option
        raise click.BadParameter(str(exc), param_hint=getattr(exc, "option", None)) from None
    run = run_training(names[0], out_dir=out_dir, algo=algo, backend=backend, impl=impl, steps=steps, seed=seed,
                       resume=resume, time_limit_s=time_limit, eval_episodes=eval_episodes,
                       eval_every_steps=eval_every_steps, eval_env=eval_env, env_wrapper=paradigm.env_wrapper,
                       task_options=paradigm.task_options, **({"devices": devices} if devices is not None else {}),
                       **config)
    if run.settings.get("processes", 1) > 1:
        from mskbench.agents.data_parallel import process_index

        if process_index() != 0:
            click.echo(f"trained {run.steps} steps{stop_note(run)} as process {process_index()}; process 0 "
                       "writes the run directory")
            return
    click.echo(f"trained {run.steps} steps{stop_note(run)}; checkpoints in {out_dir}")
    if paradigm.tuner is not None:
        _report_agentic(run, paradigm.tuner)


def _start_processes(backend, devices, coordinator, num_processes, process_id) -> None:
    """``--devices`` and the ``jax.distributed`` flags checked against the backend; the processes of a run
    over several hosts joined (before anything uses a device)."""
    import os

    from mskbench.agents.data_parallel import ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID

    flags = {"--coordinator": coordinator, "--num-processes": num_processes, "--process-id": process_id}
    if backend != "jax":
        if devices is not None:
            raise click.BadParameter("--devices shards the batched JAX env's worlds (--backend jax); --backend cpu "
                                     "steps its worlds on the host", param_hint="--devices")
        given = [k for k, v in flags.items() if v is not None]
        if given:
            raise click.BadParameter("a run over several processes trains with --backend jax", param_hint=given[0])
        return
    if all(v is None for v in flags.values()) and not any(
            os.environ.get(k) for k in (ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID)):
        return
    from mskbench.agents.data_parallel import initialize

    try:
        initialize(coordinator, num_processes, process_id)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


def _report_agentic(run, tuner) -> None:
    """After ``train --agentic``: Table III of the run's checkpoint and where the update log is."""
    from mskbench.paradigms.agentic import SUMMARY_FILE, evaluate_run

    episodes = int(run.settings.get("eval_episodes", 10))
    summary = evaluate_run(run, tuner, episodes=episodes)
    counts = ", ".join(f"{n} {status}" for status, n in sorted(summary["updates"].items())) or "none"
    click.echo(f"agentic ({summary['reasoner']}): weight updates {counts}; log {summary['log']}")
    t3 = summary["table_iii"]
    if "absent" in t3:
        click.echo(f"Table III: {t3['absent']}")
        return
    rmse = "N/A" if t3["tracking_rmse"] is None else f"{t3['tracking_rmse']:.4f}"
    act = "N/A" if t3["mean_activation"] is None else f"{t3['mean_activation']:.4f}"
    click.echo(f"Table III over {t3['episodes']} episodes: survival {t3['survival_steps']:.1f} steps, "
               f"tracking RMSE {rmse} rad, mean activation {act} ({run.out_dir / SUMMARY_FILE})")


@click.command("export-policy")
@click.argument("run", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The policy file to write (.npz).")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
def export_policy_cmd(run: Path, out: Path, overwrite: bool):
    """Write the policy of RUN (a run directory, meaning its best.npz, or a checkpoint file) to OUT,
    without the critic, the optimiser state and the RNG key.

    The file is a fraction of the checkpoint's size (Table XVI's Walk networks: 14.3 MB of 80.7 MB),
    evaluates with the same actions (mskbench eval --policy OUT, mskbench mouse eval --policy OUT),
    and cannot be resumed. It records how RUN's policy acts (through a latent map, a residual's base),
    so OUT acts as RUN does wherever it is copied.
    """
    from mskbench.agents.checkpoint import checkpoint_path, export_policy

    try:
        src = checkpoint_path(str(run))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="RUN") from None
    if src is None:
        raise click.BadParameter(f"{run} is neither a run directory nor a .npz checkpoint", param_hint="RUN")
    if out.suffix != ".npz":
        raise click.BadParameter(f"{out} must end in .npz", param_hint="--out")
    if out.exists() and out.resolve() == src.resolve():
        raise click.BadParameter("OUT is the checkpoint itself; write the policy to another file", param_hint="--out")
    if out.exists() and not overwrite:
        raise click.ClickException(f"{out} exists; pass --overwrite to replace it")
    try:
        export_policy(src, out)
    except (ValueError, KeyError) as exc:
        raise click.ClickException(f"cannot export {src}: {exc}") from None
    click.echo(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB; the checkpoint {src} is "
               f"{src.stat().st_size / 1e6:.1f} MB)")


@click.command("synergies")
@click.argument("task")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="The groups file to write (.json); read back by mskbench.agents.dynsyn.SynergyGroups.from_json.")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Control steps to record, a multiple of the 100-sample correlation window "
                   "[default: 25600, where the DynSyn authors report the grouping converged].")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seeds the kicks, the starts and the k-medoids restarts.")
@click.option("--groups", "n_groups", type=click.IntRange(min=1), default=None,
              help="Number of groups, shared among the body sides by size [default: 76, MSK-Bench's DynSyn-SAC].")
@click.option("--restarts", type=click.IntRange(min=1), default=None,
              help="k-medoids (FasterPAM) starts per body side [default: 20, DynSyn's].")
@click.option("--force", "--overwrite", "force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the groups as JSON instead of a table.")
def synergies_cmd(task, out, steps, seed, n_groups, restarts, force, as_json):
    """DynSyn muscle groups of TASK's body, saved to OUT.

    The body is simulated without excitation, its joints kicked to random
    velocities every 10 control steps (root held, contacts off); muscles whose
    lengths move together (cosine similarity of the min-max normalised
    lengths in 100-sample windows) are grouped by k-medoids, each body side on
    its own, so no group mixes left and right muscles (mskbench.agents.dynsyn).
    """
    from mskbench.agents import dynsyn

    names = task_list(task)
    if len(names) != 1:
        raise click.BadParameter("synergies takes one task", param_hint="TASK")
    if out.is_dir():
        raise click.BadParameter(f"{out} is a directory; give a file name ending in .json", param_hint="--out")
    if out.suffix.lower() != ".json":
        raise click.BadParameter(f"{out} must end in .json", param_hint="--out")
    if not out.parent.is_dir():
        raise click.BadParameter(f"directory {out.parent} does not exist", param_hint="--out")
    if out.exists() and not force:
        raise click.UsageError(f"{out} exists; pass --force to replace it")
    steps = dynsyn.DEFAULT_STEPS if steps is None else steps
    if steps % dynsyn.CORRELATION_WINDOW:
        raise click.BadParameter(f"{steps} is not a multiple of the {dynsyn.CORRELATION_WINDOW}-sample "
                                 "correlation window", param_hint="--steps")
    console = make_console()
    with progress_bar(console) as progress:
        jobs = {}

        def report(stage, done, total):
            if stage not in jobs:
                jobs[stage] = progress.add_task(f"{names[0]}: {stage}", total=total)
            progress.update(jobs[stage], completed=done)

        try:
            groups = dynsyn.compute_groups(
                names[0], steps=steps, seed=seed,
                n_groups=dynsyn.DEFAULT_N_GROUPS if n_groups is None else n_groups,
                restarts=dynsyn.RESTARTS if restarts is None else restarts, progress=report)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    try:
        groups.to_json(out, overwrite=force)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc}") from None
    if as_json:
        click.echo(json.dumps({"out": str(out), "sizes": groups.sizes, **groups.as_dict()}, indent=2))
        return
    sides = dynsyn.muscle_sides(groups.muscle_names)
    table = Table(title=f"{names[0]} ({groups.params['body']}): {groups.n_groups} DynSyn groups of "
                        f"{groups.n_muscles} muscles, {steps} steps, seed {seed}")
    for col in ("group", "side", "size", "representative", "muscles"):
        table.add_column(col, justify="right" if col in ("group", "size") else "left")
    for g, (rep, members) in enumerate(zip(groups.representative, groups.groups)):
        table.add_row(str(g), sides[rep], str(len(members)), groups.muscle_names[rep],
                      ", ".join(groups.muscle_names[i] for i in members))
    print_table(table, console)
    sizes = sorted(groups.sizes)
    click.echo(f"wrote {groups.n_groups} groups (sizes {sizes[0]}..{sizes[-1]}, median "
               f"{sizes[len(sizes) // 2]}) to {out}")
