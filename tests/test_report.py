"""``mskbench report``: the HTML report of a real store and a real training run, opened in headless Chromium;
empty and partial stores; bad arguments as one-line errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mskbench.cli import main

pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install 'mskbench[report]')")

CHROMIUM = shutil.which("chromium")
NO_CHROMIUM = ("chromium is not installed: Debian's 'chromium' package (apt-get install chromium; .ci/run installs "
               "it and says so when it cannot) runs the report in a headless browser")


def _eval_units(store: Path, method: str, units) -> None:
    from mskbench.eval.executors import JobSpec, run_units
    from mskbench.eval.store import ResultsStore

    with ResultsStore(store) as s:
        run_units(s, units, JobSpec(method, None), executor="local", workers=1)


def _chromium(tmp: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium with the network off (a dead proxy, every host unresolvable)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={tmp / 'chromium-profile'}", "--proxy-server=127.0.0.1:9",
           "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0", *args, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def real_store(tmp_path_factory) -> Path:
    """A small real store: two tasks and two built-in policies (2 episodes each), and a two-scale action
    sweep of Stand (1 episode per scale)."""
    from mskbench.eval.protocol import Unit, eval_units

    store = tmp_path_factory.mktemp("store") / "results.db"
    for policy in ("passive", "zero"):
        units = eval_units(policy, ["Stand", "Hurdle"], 0, 2)
        units += [Unit(policy, "Stand", "action", scale, 0) for scale in (0.0, 0.1)]
        _eval_units(store, policy, units)
    return store


def _write_run(run: Path, task: str, evaluations: dict[int, float], every: int = 16) -> None:
    """A run directory as 'mskbench train' writes it (run.json, eval_log.jsonl with one row per iteration and the
    evaluation where there was one, best.json). A real training run costs ~15 s of JAX compilation alone; the
    trainer's writing of these files is tested in tests/test_train.py."""
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({
        "task": task, "task_options": {}, "algo": "ppo", "backend": "cpu", "impl": None, "eval_env": "cpu",
        "eval_episodes": 1, "eval_every_steps": 2 * every, "checkpoint_rule": "best",
        "config": {"total_steps": every * max(evaluations), "num_steps": every, "num_envs": 1},
        "mskbench_version": "0.1.0", "metric": "mean_return"}))
    rows = []
    for i in range(1, max(evaluations) + 1):
        row = {"iteration": i, "steps": every * i, "mean_reward": 15.0, "episode_return": None, "steps_per_s": 90.0,
               "collect_s": 0.2, "update_s": 0.01, "resets": 0}
        if i in evaluations:
            row["eval"] = {"mean_return": evaluations[i], "success_rate": 0.0}
        rows.append(json.dumps(row) + "\n")
    (run / "eval_log.jsonl").write_text("".join(rows))
    best = max(evaluations, key=lambda i: evaluations[i])
    (run / "best.json").write_text(json.dumps({"mean_return": evaluations[best], "steps": every * best}))


def test_report_of_a_real_store_opens_cleanly_in_headless_chromium(real_store, tmp_path):
    store, run = real_store, tmp_path / "runs" / "ppo-stand"
    _write_run(run, "Stand", {2: 667.01, 4: 667.05, 6: 667.03})
    videos = tmp_path / "videos"
    videos.mkdir()
    from PIL import Image  # matplotlib's dependency: a one-frame GIF stands in for 'mskbench render' output

    Image.new("RGB", (8, 8), "red").save(videos / "Stand.gif")
    mouse = tmp_path / "mouse_eval.json"  # the shape 'mskbench mouse eval --json' prints
    mouse.write_text(json.dumps({
        "overall": {"clips": 2, "track_replay_error_mm": 2.5, "keypoint_error_vs_data_mm": 3.0, "joint_mae_rad": 0.1,
                    "stable_clips": 2, "emg_fit_mae": {"absent": "no clip has EMG"},
                    "simplex_rho": {"per_muscle": {"m1": 0.5, "m2": None}, "E": 2, "tau": -1, "Tp": 1}},
        "per_clip": {"clip0": {"track_replay_error_mm": 2.0, "stable": True},
                     "clip1": {"track_replay_error_mm": 3.0, "stable": True}}}))
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", "--store", str(store), "--out", str(out), "--published",
                                       "--runs", str(run.parent), "--heatmap-policy", "passive",
                                       "--heatmap-tasks", "Stand", "--mouse", str(mouse), "--videos", str(videos)])
    assert result.exit_code == 0, result.output
    assert f"open {out / 'index.html'}" in result.output
    manifest = json.loads((out / "report.json").read_text())
    sections = {s["key"]: s for s in manifest["sections"]}
    slugs = [f for s in manifest["sections"] for f in s["figures"]]
    for slug in slugs:  # every figure also as PNG and SVG beside the page
        assert (out / "figures" / f"{slug}.png").stat().st_size > 1000
        assert (out / "figures" / f"{slug}.svg").read_text().lstrip().startswith("<?xml")
    assert {"radar-stabilization", "radar-interaction", "learning-curves", "robustness-Stand", "smoothness",
            "recruitment-Stand", "recruitment-Hurdle", "heatmap-Stand", "mouse-track-error",
            "mouse-simplex-rho"} <= set(slugs)
    # no gait task, no EMG: the section says what is missing and how to get it
    assert sections["emg"]["status"] == "missing"
    assert any("--emg-reference" in m for m in sections["emg"]["missing"])
    page = (out / "index.html").read_text()
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', page)  # nothing to fetch
    # the run's peak efficiency (App. A-B5): the evaluation at 64 steps, the best of three
    assert "<td>ppo-stand</td><td>Stand</td><td>ppo</td><td>mean_return</td><td>96</td><td>3</td><td>64</td>" \
           "<td>667.05</td>" in page
    assert 'href="../videos/Stand.gif"' in page

    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    url = (out / "index.html").resolve().as_uri()
    dom = _chromium(tmp_path, url, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, "\n".join(console)  # the page writes nothing to the console: no error, no warning
    html = dom.stdout
    status = re.search(r'<div class="meta" id="report-status"([^>]*)>', html).group(1)
    attrs = dict(re.findall(r'data-(\w+)="([^"]*)"', status))
    assert attrs["checked"] == "yes", html[:2000]  # the page's own script ran to its end
    assert attrs["errors"] == "0", re.search(r'<pre id="js-errors".*?</pre>', html, re.S).group(0)
    assert int(attrs["figures"]) == len(slugs) == int(attrs["rendered"])
    for slug in slugs:  # every figure is there, an SVG with a non-zero size and shapes in it
        figure = rf'<figure class="report-figure" id="fig-{re.escape(slug)}"[^>]*data-rendered="yes"'
        assert re.search(figure, html), slug
    # the leaderboard: Table II's nine rows, the local columns and the paper's beside them
    board = re.search(r'<table class="leaderboard".*?</table>', html, re.S).group(0)
    rows = re.findall(r'<tr data-row="([\w-]+)"', board)
    assert rows == ["sr-stabilization", "sr-locomotion", "sr-interaction", "sr-all", "fell-after-success",
                    "robustness-action", "robustness-observation", "robustness-dynamics", "robustness-average",
                    "coverage"]
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", board)
    assert headers == ["Group", "Metric", "passive", "zero", "DynSyn-SAC (paper)", "DepRL (paper)", "SAC (paper)",
                       "PPO (paper)"]
    cov = re.search(r'<tr data-row="coverage">(.*?)</tr>', board).group(1)
    # passive bodies fall: no success; 2 of the 22 tasks, and said so
    assert re.findall(r'<td[^>]*>(\d+/\d+) <span class="of">\(2 of 22\)</span></td>', cov) == ["0/2", "0/2"]
    assert "<td class=\"paper best\">22/22</td>" in cov  # DepRL's published coverage, the best over all 22
    average = re.search(r'<tr data-row="sr-all">(.*?)</tr>', board).group(1)
    assert average.count('<span class="of">(2 of 22)</span>') == 2 and "48.36" in average
    fell = re.search(r'<tr data-row="fell-after-success">(.*?)</tr>', board).group(1)
    assert re.findall(r"<td[^>]*>([^<]*)</td>", fell)[2:] == ["—"] * 6  # no success, and the paper reports none
    assert 'class="video" href="../videos/Stand.gif"' in html

    shot = tmp_path / "report.png"
    taken = _chromium(tmp_path, url, f"--screenshot={shot}", "--window-size=1280,2000", "--hide-scrollbars")
    assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]
    if os.environ.get("MSKBENCH_ARTEFACTS"):
        dest = Path(os.environ["MSKBENCH_ARTEFACTS"])
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, dest / "report.png")


def test_an_empty_store_gives_a_report_that_says_what_is_missing(tmp_path):
    from mskbench.eval.store import ResultsStore

    ResultsStore(tmp_path / "empty.db").close()
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", "--store", str(tmp_path / "empty.db"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "10 of 10 sections have no data" in result.output
    sections = json.loads((out / "report.json").read_text())["sections"]
    assert all(s["status"] == "missing" and s["missing"] and not s["figures"] for s in sections)
    page = (out / "index.html").read_text()
    assert "holds no episodes: run e.g. &#x27;mskbench eval" in page
    assert "no training runs given: pass --runs" in page and "no activation heatmap requested" in page
    assert page.count('<div class="missing-note"') >= len(sections)


def test_a_partial_store_reports_what_it_has_and_what_it_lacks(real_store, tmp_path):
    """One task, one policy, a one-scale sweep (records of the real store): tables and the figures that data
    allows, notes for the rest; --figures-only writes the figures without a page; an earlier report's
    directory is rewritten."""
    from mskbench.eval.store import ResultsStore

    store = tmp_path / "partial.db"
    with ResultsStore(real_store) as full, ResultsStore(store) as part:
        for r in full.records(method="passive", task="Stand"):
            if r["perturbation"] == "none" or r["scale"] == 0.1:
                part.write(r)
    out = tmp_path / "report"
    result = CliRunner().invoke(main, ["report", "--store", str(store), "--out", str(out), "--figures-only"])
    assert result.exit_code == 0, result.output
    assert not (out / "index.html").exists() and "open " not in result.output
    sections = {s["key"]: s for s in json.loads((out / "report.json").read_text())["sections"]}
    assert sections["leaderboard"]["status"] == "partial"
    assert any("action sweep has one scale" in m for m in sections["leaderboard"]["missing"])
    assert sections["robustness"]["figures"] == ["robustness-Stand"]
    assert any("one scale only, no AUC" in m for m in sections["robustness"]["missing"])
    assert sections["radar"]["figures"] == ["radar-stabilization"]
    assert any(m.startswith("locomotion: no method has episodes") for m in sections["radar"]["missing"])
    assert {p.name for p in (out / "figures").iterdir()} >= {"radar-stabilization.png", "radar-stabilization.svg",
                                                              "smoothness.png", "smoothness.svg"}
    # the same directory again, now with the page: an earlier report is rewritten, the old figures go
    (out / "figures" / "stale.png").write_bytes(b"x")
    again = CliRunner().invoke(main, ["report", "--store", str(store), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert (out / "index.html").exists() and not (out / "figures" / "stale.png").exists()


def test_bad_arguments_are_one_line_errors(tmp_path):
    store = tmp_path / "r.db"
    missing = CliRunner().invoke(main, ["report", "--store", str(store), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "results store" in missing.output and "does not exist" in missing.output
    assert not store.exists()  # not created by asking
    from mskbench.eval.store import ResultsStore

    ResultsStore(store).close()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(main, ["report", "--store", str(store), "--out", str(busy)])
    assert refused.exit_code == 2 and "--out" in refused.output and "not empty" in refused.output
    assert (busy / "notes.txt").read_text() == "mine"
    bad_task = CliRunner().invoke(main, ["report", "--store", str(store), "--out", str(tmp_path / "o"),
                                         "--heatmap-policy", "passive", "--heatmap-tasks", "Nope"])
    assert bad_task.exit_code == 2 and "valid tasks: Stand" in bad_task.output
    bad_policy = CliRunner().invoke(main, ["report", "--store", str(store), "--out", str(tmp_path / "o"),
                                           "--heatmap-policy", "clever"])
    assert bad_policy.exit_code == 2 and "zero, passive, random" in bad_policy.output
    not_a_store = tmp_path / "x.db"
    not_a_store.write_text("hello")
    broken = CliRunner().invoke(main, ["report", "--store", str(not_a_store), "--out", str(tmp_path / "o2")])
    assert broken.exit_code == 1 and "not an intact SQLite database" in broken.output
    assert "Traceback" not in broken.output


def test_the_cli_imports_no_matplotlib_and_the_gait_tasks_are_tagged_in_the_catalog():
    code = "import sys, mskbench.cli; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
    from mskbench.catalog import task_ids

    assert task_ids(gait=True) == ["Walk", "Run", "Stairs"]  # what the EMG metric, the report and record read


def test_emg_and_shaded_learning_curves_from_data_the_small_store_lacks(tmp_path):
    """The parts a short real run cannot produce (built-in policies walk no gait cycle): stored per-muscle EMG r
    (synthetic records), envelope overlays and the band of two runs evaluated at the same steps."""
    import numpy as np

    from mskbench.eval.store import ResultsStore
    from mskbench.report.build import ReportOptions, build_report
    from mskbench.report.figures import emg_envelope_figure, report_style, save

    store = tmp_path / "emg.db"
    with ResultsStore(store) as s:
        for seed, r in enumerate((0.4, 0.6)):
            s.write({"method": "m", "task": "Walk", "perturbation": "none", "scale": 0.0, "seed": seed,
                     "success": True, "episode_return": 1.0, "length": 300, "termination": "time_limit",
                     "activation_cost": 0.1, "smoothness": 4.0, "recruitment": {"Glutes (Hip Extensors)": 1.0},
                     "emg": {"mean_r": r, "cycles": 3, "per_muscle": {"TA": r, "SO": r - 0.2}}})
    for name, values in (("a", [1.0, 3.0, 2.0]), ("b", [2.0, 2.5, 4.0])):  # two runs of one task and algorithm
        _write_run(tmp_path / "runs" / name, "Walk", dict(zip((1, 2, 3), values)), every=10)
    result = build_report(ReportOptions(store=store, out=tmp_path / "report", runs=[tmp_path / "runs"]))
    sections = {s.key: s for s in result.sections}
    assert [f.slug for f in sections["emg"].figures] == ["emg-r-Walk"]
    assert any("no envelope overlays" in m for m in sections["emg"].missing)
    page = (tmp_path / "report" / "index.html").read_text()
    assert "0.500" in page  # the mean r over the two episodes, in the per-task table
    learning = sections["learning"]
    assert learning.status == "complete" and [f.slug for f in learning.figures] == ["learning-curves"]
    assert "<td>b</td><td>Walk</td><td>ppo</td><td>mean_return</td><td>30</td><td>3</td><td>30</td><td>4</td>" \
        in learning.tables[0]  # run b peaks last, at step 30
    pct = np.arange(101)
    rollout = {"task": "Walk", "policy": "p", "seed": 0, "emg": {"mean_r": 0.9, "cycles": 2, "channels": {
        "TA": {"r": 0.9, "shift": 3, "sim": (np.sin(pct / 16) + 1) / 2, "ref": (np.sin(pct / 15) + 1) / 2}}}}
    with report_style():
        svg = save(emg_envelope_figure(rollout), tmp_path / "figs" / "env")
    assert "TA: r 0.90, shift +3%" in svg and (tmp_path / "figs" / "env.png").stat().st_size > 1000


def test_report_leads_with_what_it_measured_and_says_once_what_it_lacks(tmp_path):
    """The page opens with what was measured and the paper's methods beside it, then the results; the sections
    without data are named once and listed at the end; Table II and the per-task table give the share of
    successful episodes that then fell, and the partial average says over how many tasks."""
    from mskbench.eval.store import ResultsStore
    from mskbench.report.build import ReportOptions, build_report

    store = tmp_path / "r.db"
    with ResultsStore(store) as s:
        for seed in range(2):
            s.write({"method": "expert", "task": "Squat", "perturbation": "none", "scale": 0.0, "seed": seed,
                     "success": True, "episode_return": 1.0, "length": 80, "termination": "kneeling",
                     "success_step": 40, "fell_after_success": seed == 0, "privileged": True,
                     "recruitment": {"Deltoids": 1.0}, "activation_cost": 0.1, "smoothness": 4.0,
                     "emg": {"absent": "no EMG reference given"}})
    result = build_report(ReportOptions(store=store, out=tmp_path / "report", published=True))
    page = (tmp_path / "report" / "index.html").read_text()
    lead = page[page.index('<p class="lead">'):page.index("</p>", page.index('<p class="lead">'))]
    assert "Measured: <strong>expert</strong> † on 1 of the 22 tasks (Squat), 2 episodes each" in lead
    assert "Beside them: the paper&#x27;s" not in lead and "the paper's DynSyn-SAC, DepRL, SAC and PPO" in lead
    missing = [s.title for s in result.sections if s.status == "missing"]
    assert missing and page.count("Not in this report:") == 1
    absent = page[page.index('<p class="absent">'):page.index("</p>", page.index('<p class="absent">'))]
    assert all(title in absent for title in missing)
    first_section = page.index("<section id=", page.index("</section>", page.index('id="overview"')))
    assert page[first_section:].startswith('<section id="leaderboard"')  # the results come first
    assert page.index('<div id="not-in-report">') > page.index('<section id="recruitment"')
    assert '<tr data-row="fell-after-success"><td class="group">Then fell (%)</td><td class="l">of successes</td>' \
           '<td class="paper">—</td>' in page
    assert '<td class="">50.00 (1 of 2)</td></tr>' in page  # the expert's column, after the paper's four
    robust = re.search(r'<tr data-row="robustness-action">(.*?)</tr>', page).group(1)
    assert "of 22)" not in robust and '<td class="paper best">53.06</td>' in robust  # the paper's: all 22 tasks
    assert "<td>Squat</td><td>expert</td><td>2</td><td>100.0</td><td>50 (1/2)</td>" in page  # the per-task table
