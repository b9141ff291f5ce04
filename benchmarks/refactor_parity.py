"""Behaviour parity across a refactor: a fixed set of cheap CLI commands and library calls, their outputs
and every record they store, written to a directory in a form two checkouts can be diffed in.

    python benchmarks/refactor_parity.py run OUT [--only CASE,...]    # runs the cases with the mskbench on sys.path
    python benchmarks/refactor_parity.py diff OUT_A OUT_B             # what differs between two runs

Run it once on the code before a change and once after (PYTHONPATH=CHECKOUT/src picks the code), then
``diff``: every command's exit code, stdout and stderr, every results store's rows, every run directory's
run.json / config.json / eval_log.jsonl / best.json and checkpoint arrays (SHA-256 per array), the
demonstration, data-set, model, groups, clip, report and image files. What cannot be equal between two
runs is taken out before anything is written: wall-clock times and rates (keys such as ``wall_time_s``,
``steps_per_s``, ``created_at``; ``N steps/s`` and ``(N s)`` in text), the working directory's path
(``<WORK>``) and the report's build date. Everything else must match byte for byte.

Each case runs in its own folder under OUT/work with ``python -m mskbench`` (stdout piped: no progress
bars; ``COLUMNS=120``), so a case can be rerun alone (``--only``). The whole set takes 20-40 minutes on
two busy cores.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

#: JSON keys whose values are wall-clock measurements, or derive from one (the SHA-256 of a model file that
#: records its fitting time), dropped wherever they occur.
TIMING_KEYS = {"wall_time_s", "wall_s", "steps_per_s", "collect_s", "update_s", "created_at", "built_at",
               "size_mb", "wall_time_s_mean", "fit_s", "elapsed_s", "model_sha256"}
TEXT_RULES = [
    (re.compile(r"\d+(?:\.\d+)? steps/s"), "N steps/s"),
    (re.compile(r"\(\d+(?:\.\d+)? s\)"), "(N s)"),
    (re.compile(r", \d+ s$", re.M), ", N s"),
    (re.compile(r"built \d{4}-\d\d-\d\d \d\d:\d\d UTC"), "built <DATE>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:\+00:00|Z)?"), "<DATETIME>"),
    (re.compile(r"\(\d+(?:\.\d+)? MB\)"), "(N MB)"),
    (re.compile(r"\d+(?:\.\d+)? MB; the checkpoint (\S+) is \d+(?:\.\d+)? MB"), r"N MB; the checkpoint \1 is N MB"),
]


class Case:
    """One case's folder and its record of commands and artefacts."""

    def __init__(self, out: Path, work: Path, name: str):
        self.name, self.work = name, work / name
        self.dir = out / "cases" / name
        for d in (self.work, self.dir):
            if d.exists():
                shutil.rmtree(d)
            d.mkdir(parents=True)
        self.count = 0

    def norm(self, text: str) -> str:
        text = text.replace(str(self.work.resolve()), "<WORK>").replace(str(self.work), "<WORK>")
        text = text.replace(str(self.work.parent.resolve()), "<WORKROOT>")
        for pattern, repl in TEXT_RULES:
            text = pattern.sub(repl, text)
        return text

    def write(self, label: str, text: str) -> None:
        self.count += 1
        (self.dir / f"{self.count:02d}-{label}").write_text(self.norm(text))

    def cli(self, *args: str, label: str | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, "COLUMNS": "120", "MSKBENCH_STORE": str(self.work / "default-store.db")}
        env.pop("DISPLAY", None)
        proc = subprocess.run([sys.executable, "-m", "mskbench", *args], cwd=self.work, env=env, input=stdin,
                              capture_output=True, text=True)
        tag = label or re.sub(r"[^A-Za-z0-9]+", "_", "_".join(args[:2]))[:40]
        self.write(f"cli-{tag}.txt", f"$ mskbench {' '.join(args)}\nexit {proc.returncode}\n--- stdout\n"
                                     f"{clean_text(proc.stdout)}--- stderr\n{proc.stderr}")
        return proc

    def python(self, code: str, label: str) -> None:
        """Run ``code`` (which prints JSON) in a fresh interpreter; its output is recorded."""
        proc = subprocess.run([sys.executable, "-c", code], cwd=self.work, capture_output=True, text=True,
                              env={**os.environ, "PARITY_WORK": str(self.work)})
        body = proc.stdout
        try:
            body = json.dumps(clean(json.loads(proc.stdout)), indent=1, sort_keys=True) + "\n"
        except json.JSONDecodeError:
            pass
        self.write(f"py-{label}.txt", f"exit {proc.returncode}\n--- stdout\n{body}--- stderr\n"
                                      f"{_last_lines(proc.stderr) if proc.returncode else ''}")

    # -- artefacts ---------------------------------------------------------------------------------
    def store(self, path: str, label: str) -> None:
        self.write(f"store-{label}.json", dump_store(self.work / path))

    def files(self, path: str, label: str) -> None:
        """Every file under ``path`` (a file or a folder), as :func:`dump_file` writes it."""
        root = self.work / path
        paths = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        parts = []
        for p in paths:
            rel = p.relative_to(self.work)
            parts.append(f"=== {rel}\n{dump_file(p)}")
        self.write(f"files-{label}.txt", "\n".join(parts) + "\n")


def _last_lines(text: str, n: int = 30) -> str:
    return "\n".join(text.splitlines()[-n:]) + "\n"


def clean(value):
    """JSON with the timing keys dropped (recursively)."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def clean_text(text: str) -> str:
    """Command output with the JSON in it cleaned (:func:`clean`): a whole JSON document, JSON lines, or
    text lines followed by a JSON document; re-dumped as it was written (``indent`` 2 or one line)."""
    def dump(value, lines: bool) -> str:
        return json.dumps(clean(value)) if lines else json.dumps(clean(value), indent=2)

    try:
        return dump(json.loads(text), False) + "\n"
    except json.JSONDecodeError:
        pass
    out = []
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("{") and line.rstrip().endswith("}"):
            try:
                out.append(dump(json.loads(line), True) + "\n")
                continue
            except json.JSONDecodeError:
                pass
        if line.startswith("{"):
            try:
                return "".join(out) + dump(json.loads("".join(lines[i:])), False) + "\n"
            except json.JSONDecodeError:
                pass
        out.append(line)
    return "".join(out)


def dump_store(path: Path) -> str:
    if not path.exists():
        return f"(no store at {path.name})\n"
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        out = {"user_version": db.execute("PRAGMA user_version").fetchone()[0]}
        for t in tables:
            rows = [clean(dict(r)) for r in db.execute(f"SELECT * FROM {t}")]
            out[t] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
    return json.dumps(out, indent=1, sort_keys=True) + "\n"


def dump_npz(path: Path) -> str:
    lines = []
    with np.load(path, allow_pickle=False) as z:
        for k in sorted(z.files):
            a = z[k]
            if a.dtype.kind == "U" and a.ndim == 0:
                text = str(a)
                try:
                    text = json.dumps(clean(json.loads(text)), sort_keys=True)
                except json.JSONDecodeError:
                    pass
                lines.append(f"{k} str {text}")
            else:
                digest = hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]
                lines.append(f"{k} {a.dtype} {a.shape} {digest}")
    return "\n".join(lines)


def dump_file(p: Path) -> str:
    suffix = p.suffix.lower()
    if suffix == ".npz":
        return dump_npz(p)
    if suffix == ".json":
        try:
            return json.dumps(clean(json.loads(p.read_text())), indent=1, sort_keys=True)
        except json.JSONDecodeError:
            return p.read_text()
    if suffix == ".jsonl":
        return "\n".join(json.dumps(clean(json.loads(line)), sort_keys=True) for line in p.read_text().splitlines())
    if suffix in (".md", ".csv", ".txt", ".html", ".svg"):
        text = p.read_text()
        if suffix == ".svg":  # matplotlib writes the date into the metadata
            text = re.sub(r"<dc:date>.*?</dc:date>", "<dc:date/>", text, flags=re.S)
        return text
    if suffix == ".db":
        return dump_store(p)
    return f"{p.stat().st_size} bytes sha256 {hashlib.sha256(p.read_bytes()).hexdigest()[:16]}"


# -- the cases -------------------------------------------------------------------------------------------
def case_help(c: Case) -> None:
    c.cli("--help", label="help")
    for cmd in ("tasks", "run", "record", "eval", "sweep", "calibrate", "leaderboard", "train", "export-policy",
                "synergies", "report", "render", "mouse", "direct", "latent"):
        c.cli(cmd, "--help", label=f"help-{cmd}")
    for group, subs in (("mouse", ("synth", "replay", "train", "eval")), ("direct", ("start", "act", "report")),
                        ("latent", ("collect", "fit", "eval"))):
        for sub in subs:
            c.cli(group, sub, "--help", label=f"help-{group}-{sub}")
    c.cli("nonsense", label="unknown-command")


def case_tasks(c: Case) -> None:
    c.cli("tasks", "--json")
    c.cli("tasks", label="tasks-table")
    for name in ("Walk", "Catch", "MouseImitation", "ResidualWalk", "TrackStairs"):
        c.cli("tasks", "--options", name, label=f"options-{name}")
    c.cli("tasks", "--options", "Stand", "--json", label="options-json")
    c.cli("tasks", "--options", "nope", label="options-unknown")


def case_run(c: Case) -> None:
    c.cli("run", "Stand", "--policy", "zero", "--episodes", "2", "--seed", "0", "--json", label="stand-zero")
    c.cli("run", "Reach,Walk", "--policy", "random", "--episodes", "1", "--seed", "3", label="reach-walk-random")
    c.cli("run", "Sit", "--policy", "passive", "--episodes", "1", "--json", label="sit-passive")
    c.cli("run", "MouseImitation", "--policy", "random", "--episodes", "1", "--json", label="mouse-random")
    c.cli("run", "Catch", "--policy", "expert", "--episodes", "1", label="catch-expert")
    c.cli("run", "Nope", "--policy", "zero", label="unknown-task")
    c.cli("run", "Stand", "--policy", "nope", label="unknown-policy")


def case_eval(c: Case) -> None:
    c.cli("eval", "--task", "Stand,Reach", "--policy", "random", "--episodes", "2", "--store", "s1.db", "--json",
          label="eval-json")
    c.cli("eval", "--task", "Stand,Reach", "--policy", "random", "--episodes", "2", "--store", "s1.db",
          label="eval-again-table")
    c.cli("eval", "--family", "stabilization", "--policy", "zero", "--episodes", "1", "--store", "s1.db",
          label="eval-family")
    c.cli("eval", "--task", "Walk", "--policy", "passive", "--episodes", "1", "--method", "walker",
          "--store", "s1.db", label="eval-method")
    c.cli("eval", "--task", "ResidualWalk", "--policy", "zero", "--store", "s1.db", label="eval-residual-refused")
    c.cli("eval", "--task", "Stand", "--family", "locomotion", label="eval-task-and-family")
    c.cli("eval", "--task", "Stand", "--policy", "nope.npz", "--store", "s1.db", label="eval-bad-policy")
    c.cli("eval", "--task", "Stand", "--policy", "zero", "--episodes", "1", "--backend", "jax", "--impl", "cpu",
          "--batch-size", "1", "--store", "s2.db", "--json", label="eval-batched")
    c.cli("eval", "--task", "Stand,Sit", "--policy", "random", "--episodes", "3", "--workers", "2", "--store", "s3.db",
          "--json", label="eval-workers")
    c.store("s1.db", "s1")
    c.store("s2.db", "s2")
    c.store("s3.db", "s3")


def case_sweep(c: Case) -> None:
    c.cli("sweep", "--task", "Stand", "--policy", "zero", "--episodes", "1", "--types", "action,observation",
          "--store", "sw.db", "--json", label="sweep-json")
    c.cli("sweep", "--task", "Stand", "--policy", "zero", "--episodes", "1", "--types", "action,observation",
          "--store", "sw.db", label="sweep-table")
    c.cli("sweep", "--task", "Stand", "--types", "gravity", "--store", "sw.db", label="sweep-bad-type")
    c.store("sw.db", "sw")
    c.cli("leaderboard", "--published", label="lb-published")
    c.cli("leaderboard", "--published", "--json", label="lb-published-json")
    c.cli("leaderboard", "--store", "sw.db", "--json", label="lb-store-json")
    c.cli("leaderboard", "--store", "sw.db", "--published", label="lb-store-published")
    c.cli("leaderboard", "--store", "sw.db", "--success", "table-xii", label="lb-table-xii")
    c.cli("leaderboard", "--store", "missing.db", label="lb-missing")


def case_calibrate(c: Case) -> None:
    c.cli("calibrate", "--task", "Stand,Sit", "--policies", "zero,passive", "--episodes", "1", "--store", "cal.db",
          "--json", "cal.json", "--markdown", "cal.md", label="calibrate")
    c.cli("calibrate", "--task", "Stand", "--policies", "zero,nope", "--episodes", "1", "--store", "cal.db",
          label="calibrate-bad-policy")
    c.store("cal.db", "cal")
    c.files("cal.json", "cal-json")
    c.files("cal.md", "cal-md")


def case_record(c: Case) -> None:
    c.cli("record", "Stand", "--policy", "zero", "--episodes", "1", "--out", "stand.npz", label="record-stand")
    c.cli("record", "Walk", "--policy", "random", "--episodes", "1", "--max-steps", "20", "--out", "walk.npz",
          "--evalkit", "walk-kit.npz", label="record-walk")
    c.cli("record", "Stand", "--policy", "zero", "--out", "stand.npz", label="record-exists")
    c.cli("record", "Stand", "--policy", "zero", "--out", "x.npz", "--evalkit", "k.npz", label="record-kit-refused")
    c.files("stand.npz", "stand")
    c.files("walk.npz", "walk")
    c.files("walk-kit.npz", "walk-kit")


PPO_TINY = ["--num-envs", "2", "--rollout", "32", "--hidden", "16", "--minibatch", "32", "--epochs", "1",
            "--eval-every-steps", "64", "--eval-episodes", "1"]
OFF_POLICY = ["--num-envs", "2", "--rollout", "100", "--hidden", "32", "--eval-every-steps", "200",
              "--eval-episodes", "1", "--set", "learning_starts=100", "--set", "buffer_size=4000"]


def case_train_ppo(c: Case) -> None:
    c.cli("train", "Stand", "--out", "ppo", "--steps", "128", *PPO_TINY, label="train")
    c.files("ppo", "ppo")
    c.cli("train", "Stand", "--out", "ppo", "--steps", "192", "--resume", *PPO_TINY, label="resume")
    c.files("ppo", "ppo-resumed")
    c.cli("train", "Stand", "--out", "ppo", "--steps", "64", *PPO_TINY, label="exists")
    c.cli("train", "Stand", "--out", "ppo", "--steps", "256", "--resume", "--num-envs", "3", label="resume-other")
    c.cli("train", "Stand", "--out", "x", "--set", "nonsense=1", label="bad-setting")
    c.cli("train", "Stand", "--out", "x", "--algo", "sac", "--epochs", "2", label="epochs-off-policy")
    c.cli("train", "Stand", "--out", "x", "--algo", "sac", "--backend", "jax", label="sac-on-jax")
    c.cli("eval", "--task", "Stand", "--policy", "ppo", "--episodes", "2", "--store", "t.db", "--json", label="eval")
    c.cli("export-policy", "ppo", "--out", "policy.npz", label="export")
    c.files("policy.npz", "export")
    c.cli("eval", "--task", "Stand", "--policy", "policy.npz", "--method", "exported", "--episodes", "2",
          "--store", "t.db", "--json", label="eval-export")
    c.cli("export-policy", "ppo", "--out", "policy.npz", label="export-exists")
    c.store("t.db", "t")
    c.python(LIB_RUN, "run-load")


LIB_RUN = r"""
import json, os
from mskbench.training import Run
run = Run.load(os.path.join(os.environ["PARITY_WORK"], "ppo"))
print(json.dumps({"task": run.task, "algo": run.algo, "backend": run.backend, "steps": run.steps, "metric": run.metric,
                  "best": run.best, "stopped": run.stopped, "best_path": str(run.best_path), "history": run.history,
                  "settings": run.settings, "peak": list(run.peak_efficiency())}, default=str))
"""


def case_train_sac(c: Case) -> None:
    c.cli("train", "Stand", "--algo", "sac", "--out", "sac", "--steps", "200", *OFF_POLICY, label="sac")
    c.files("sac", "sac")
    c.cli("train", "Stand", "--algo", "sac", "--out", "sac", "--steps", "400", "--resume", *OFF_POLICY,
          label="sac-resume")
    c.files("sac", "sac-resumed")
    c.cli("eval", "--task", "Stand", "--policy", "sac", "--episodes", "1", "--store", "t.db", "--json", label="eval")
    c.cli("export-policy", "sac", "--out", "sac-policy.npz", label="export")
    c.files("sac-policy.npz", "export")
    c.cli("train", "Stand", "--algo", "deprl", "--out", "deprl", "--steps", "200", *OFF_POLICY,
          "--set", "gradient_steps=2", "--set", "train_freq=10",
          "--set", 'dep={"pretrain_steps": 100, "intervention_proba": 0.1}', label="deprl")
    c.files("deprl", "deprl")
    c.cli("eval", "--task", "Stand", "--policy", "deprl", "--method", "deprl", "--episodes", "1", "--store", "t.db",
          label="eval-deprl")
    c.cli("synergies", "Stand", "--out", "groups.json", "--steps", "300", "--groups", "8", "--restarts", "2",
          label="synergies")
    c.files("groups.json", "groups")
    c.cli("synergies", "Stand", "--out", "groups.json", "--steps", "300", label="synergies-exists")
    c.cli("synergies", "Stand", "--out", "g.json", "--steps", "150", label="synergies-window")
    groups = json.dumps({"groups": str(c.work / "groups.json")})
    c.cli("train", "Stand", "--algo", "dynsyn", "--out", "dynsyn", "--steps", "200", *OFF_POLICY,
          "--set", f"dynsyn={groups}", label="dynsyn")
    c.files("dynsyn", "dynsyn")
    c.cli("eval", "--task", "Stand", "--policy", "dynsyn", "--method", "dynsyn", "--episodes", "1", "--store", "t.db",
          label="eval-dynsyn")
    c.store("t.db", "t")



BC_TINY = ["--num-envs", "2", "--hidden", "16", "--minibatch", "8", "--eval-episodes", "1", "--set", "num_steps=4",
           "--set", "updates=3"]


def case_train_bc(c: Case) -> None:
    c.cli("train", "Stand", "--algo", "bc", "--out", "bc", "--steps", "16", *BC_TINY, "--set", "workers=2",
          label="train")
    c.files("bc", "bc")
    c.cli("train", "Stand", "--algo", "bc", "--out", "bc", "--steps", "24", "--resume", *BC_TINY,
          "--set", "workers=2", label="resume")
    c.files("bc", "bc-resumed")
    c.cli("train", "Stand", "--algo", "bc", "--out", "bca", "--steps", "16", *BC_TINY, "--set", "workers=1",
          "--set", "horizon=3", "--set", "ensemble=2", "--set", "loss=activation", label="train-options")
    c.files("bca", "bc-options")
    c.cli("eval", "--task", "Stand", "--policy", "bc", "--episodes", "1", "--store", "t.db", "--json", label="eval")
    c.cli("export-policy", "bc", "--out", "bc-policy.npz", label="export")
    c.files("bc-policy.npz", "export")
    c.cli("eval", "--task", "Stand", "--policy", "bc-policy.npz", "--method", "exported", "--episodes", "1",
          "--store", "t.db", "--json", label="eval-export")
    c.store("t.db", "t")

TINY = ["--num-envs", "1", "--rollout", "8", "--steps", "8", "--hidden", "8", "--minibatch", "8", "--epochs", "1",
        "--eval-episodes", "1"]


def case_paradigms(c: Case) -> None:
    c.cli("train", "Walk", "--out", "agentic", "--algo", "ppo", "--steps", "32", "--num-envs", "2", "--rollout", "16",
          "--hidden", "16", "--minibatch", "32", "--epochs", "1", "--eval-every-steps", "32", "--eval-episodes", "1",
          "--agentic", "rule", "--agentic-every", "8", label="agentic")
    c.files("agentic", "agentic")
    c.cli("train", "Walk", "--out", "x", "--agentic-every", "8", label="agentic-every-alone")
    c.cli("train", "Walk", "--out", "x", "--agentic", "rule", "--backend", "jax", label="agentic-jax")
    c.cli("train", "TrackWalk", "--out", "prior", *TINY, label="prior")
    c.files("prior", "prior")
    c.cli("train", "ResidualWalk", "--base", "prior", "--out", "residual", *TINY, label="residual")
    c.files("residual", "residual")
    c.cli("train", "ResidualWalk", "--out", "x", *TINY, label="residual-no-base")
    c.cli("train", "Walk", "--base", "prior", "--out", "x", *TINY, label="base-not-residual")
    c.cli("train", "ResidualRun", "--base", "nothing", "--out", "x", *TINY, label="base-missing")
    c.cli("train", "ResidualWalk", "--base", "prior", "--agentic", "rule", "--out", "x", *TINY,
          label="base-agentic")
    c.python(LIB_RESIDUAL, "residual-policy")
    c.cli("latent", "collect", "Stand", "--policy", "random", "--steps", "120", "--seed", "3", "--out", "data.npz",
          "--json", label="latent-collect")
    c.files("data.npz", "latent-data")
    c.cli("latent", "fit", "data.npz", "--latent", "4", "--out", "z4.npz", "--epochs", "1", "--batch-size", "32",
          "--embed-dim", "8", "--heads", "1", "--blocks", "1", "--encoder-hidden", "16", "--learning-rate", "1e-3",
          "--json", label="latent-fit")
    c.files("z4.npz", "latent-model")
    c.cli("train", "Stand", "--latent", "z4.npz", "--tube", "0.1", "--out", "latent", "--steps", "100",
          "--num-envs", "1", "--rollout", "100", "--hidden", "16", "--minibatch", "50", "--epochs", "1",
          "--eval-every-steps", "100", "--eval-episodes", "1", label="latent-train")
    c.files("latent", "latent-run")
    c.cli("latent", "eval", "latent", "--episodes", "1", "--json", label="latent-eval")
    c.cli("eval", "--task", "Stand", "--policy", "latent", "--episodes", "1", "--store", "l.db", "--json",
          label="latent-protocol")
    c.store("l.db", "l")
    c.cli("train", "Stand", "--tube", "0.1", "--out", "x", "--steps", "10", label="tube-alone")
    c.cli("train", "Stand", "--latent", "z4.npz", "--agentic", "rule", "--out", "x", label="latent-agentic")
    c.cli("latent", "collect", "Stand,Walk", "--out", "y.npz", label="collect-two")


LIB_RESIDUAL = r"""
import json, os
from mskbench.envs import MSKEnv
from mskbench.eval.episodes import run_episode
from mskbench.tasks import make_task
try:
    from mskbench.paradigms.residual import residual_policy, resolve_base
except ImportError:
    from mskbench.agents.residual import residual_policy, resolve_base
run = os.path.join(os.environ["PARITY_WORK"], "residual")
cfg = json.load(open(os.path.join(run, "run.json")))
env = MSKEnv(make_task("ResidualWalk", **{k: v for k, v in cfg["task_options"].items() if k == "base"}))
res = run_episode(env, residual_policy(run, env), 4)
print(json.dumps(res.as_dict()))
"""


def case_direct(c: Case) -> None:
    c.cli("direct", "start", "Walk", "--dir", "s", "--seed", "0", "--hold-steps", "3", "--max-duration", "0.12",
          label="start")
    (c.work / "zero.json").write_text(json.dumps([0.0] * 416))
    (c.work / "bad.json").write_text(json.dumps([0.0] * 3))
    c.cli("direct", "act", "s", "bad.json", label="act-bad")
    for i in range(5):
        c.cli("direct", "act", "s", "zero.json", label=f"act-{i}")
    c.cli("direct", "report", "s", "--json", label="report-json")
    c.cli("direct", "report", "s", label="report")
    c.cli("direct", "start", "Walk", "--dir", "s", label="start-exists")
    c.files("s", "session")


def case_mouse(c: Case) -> None:
    c.cli("mouse", "synth", "--out", "clips", "-n", "2", label="synth")
    c.files("clips", "clips")
    c.cli("mouse", "replay", "--clips", "clips", "--json", label="replay")
    c.cli("mouse", "train", "--clips", "clips", "--out", "mr", "--steps", "512", "--num-envs", "8", "--hidden", "16",
          "--rollout", "32", "--backend", "cpu", "--ctrl-cost", "0.15", "--eval-every", "2", label="train")
    c.files("mr", "mouse-run")
    c.cli("mouse", "eval", "--clips", "clips", "--policy", "mr", "--json", label="eval-json")
    c.cli("mouse", "eval", "--clips", "clips", "--policy", "mr", label="eval")
    c.cli("mouse", "eval", "--clips", "clips", "--policy", "mr", "--tau", "0", label="eval-tau")


def case_report(c: Case) -> None:
    c.cli("eval", "--task", "Stand,Walk", "--policy", "zero", "--episodes", "2", "--store", "r.db", label="eval")
    c.cli("sweep", "--task", "Stand", "--policy", "zero", "--episodes", "1", "--types", "action", "--store", "r.db",
          label="sweep")
    c.cli("train", "Stand", "--out", "runs/ppo", "--steps", "128", *PPO_TINY, label="train")
    c.cli("report", "--store", "r.db", "--out", "rep", "--published", "--runs", "runs", label="report")
    c.files("rep", "report")
    c.cli("report", "--store", "r.db", "--out", "rep2", "--figures-only", "--heatmap-policy", "zero",
          "--heatmap-tasks", "Stand", label="report-heatmap")
    c.files("rep2", "report2")
    c.cli("report", "--store", "nope.db", "--out", "rep3", label="report-no-store")


def case_render(c: Case) -> None:
    c.cli("render", "Stand", "--frames", "1", "--out", "stand.png", "--width", "64", "--height", "48", label="sheet")
    c.cli("render", "Stand", "--policy", "zero", "--steps", "3", "--out", "stand.gif", "--width", "64",
          "--height", "48", label="video")
    c.cli("render", "Stand,Walk", "--out", "two.gif", label="video-two")
    c.files("stand.png", "sheet")
    c.files("stand.gif", "video")


def case_library(c: Case) -> None:
    c.python(LIB_CATALOG, "catalog")
    c.python(LIB_TRAIN, "train")
    c.python(LIB_EPISODE, "episode")


LIB_CATALOG = r"""
import dataclasses, json
import mskbench
from mskbench.catalog import FAMILIES, ORIGINAL_NAMES, SUITE, TASKS, suite_ids, task_id
from mskbench.agents import ALGORITHMS
from mskbench.training import resolve_config
out = {"task_ids": list(mskbench.TASK_IDS), "families": list(FAMILIES), "suite": SUITE,
       "tasks": {n: e.family for n, e in TASKS.items()}, "original": ORIGINAL_NAMES,
       "locomotion": suite_ids("locomotion"), "aliases": [task_id(n) for n in ("door open", "MSKBenchWalk-v0")]}
out["algorithms"] = {n: {"summary": a.summary, "backends": list(a.backends), "rule": a.checkpoint_rule,
                         "eval_episodes": a.eval_episodes, "eval_every_steps": a.eval_every_steps,
                         "cpu": dataclasses.asdict(a.config("cpu"))} for n, a in ALGORITHMS.items()}
out["presets"] = {f"{a}/{t}/{b}": dataclasses.asdict(resolve_config(a, t, b, {}))
                  for a in ("ppo", "sac") for t in ("Walk", "MouseImitation", "TrackWalk", "ResidualRun")
                  for b in ("cpu", "jax") if b in ALGORITHMS[a].backends}
print(json.dumps(out, default=str))
"""

LIB_TRAIN = r"""
import json
import mskbench
rows = []
run = mskbench.train("Stand", steps=64, num_envs=2, num_steps=16, hidden=(16, 16), value_hidden=(16, 16),
                     minibatch_size=16, epochs=1, eval_episodes=1, eval_every_steps=32, seed=3,
                     on_iteration=rows.append)
print(json.dumps({"history": run.history, "rows": rows, "best": run.best, "metric": run.metric, "steps": run.steps,
                  "settings": run.settings, "out": str(run.out_dir)}, default=str))
"""

LIB_EPISODE = r"""
import json
import numpy as np
from mskbench.envs import MSKEnv
from mskbench.eval.episodes import run_episode
from mskbench.eval.protocol import load_policy
out = {}
for task, policy in (("Walk", "random"), ("Catch", "zero"), ("PoleWalk", "passive")):
    env = MSKEnv(task)
    times = []
    r = run_episode(env, load_policy(policy, env, 5), 5, on_step=lambda e, *_: times.append(float(e.data.time)))
    out[task] = {"record": r.as_dict(), "on_step_calls": len(times), "last_time": times[-1],
                 "qpos": float(np.sum(env.data.qpos))}
print(json.dumps(out))
"""

CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def run(out: Path, only: list[str] | None) -> None:
    work = out / "work"
    names = only or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        raise SystemExit(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(CASES)}")
    import mskbench

    (out / "cases").mkdir(parents=True, exist_ok=True)
    (out / "code.txt").write_text(f"{Path(mskbench.__file__).parent}\n")
    for name in names:
        t0 = time.perf_counter()
        case = Case(out, work, name)
        CASES[name](case)
        print(f"{name}: {case.count} outputs in {time.perf_counter() - t0:.0f} s", flush=True)


def diff(a: Path, b: Path) -> int:
    files_a = {p.relative_to(a) for p in (a / "cases").rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in (b / "cases").rglob("*") if p.is_file()}
    differ = 0
    for rel in sorted(files_a ^ files_b):
        print(f"only in {'A' if rel in files_a else 'B'}: {rel}")
        differ += 1
    for rel in sorted(files_a & files_b):
        ta, tb = (a / rel).read_text(), (b / rel).read_text()
        if ta != tb:
            differ += 1
            print("".join(difflib.unified_diff(ta.splitlines(True), tb.splitlines(True), f"A/{rel}", f"B/{rel}", n=1)))
    print(f"{len(files_a & files_b)} outputs compared, {differ} differ")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--only", default=None, help="comma-separated cases: " + ", ".join(CASES))
    d = sub.add_parser("diff")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.cmd == "run":
        run(args.out.resolve(), args.only.split(",") if args.only else None)
    else:
        raise SystemExit(diff(args.a, args.b))


if __name__ == "__main__":
    main()
