"""Reasoners of agentic reward tuning (Eq. 17): the statistics and the current weights in, a
:class:`Proposal` out.

:class:`RuleReasoner` (deterministic, offline) and :class:`HTTPReasoner` (an OpenAI-compatible
chat-completions API; its prompt and :func:`parse_reply`); :func:`make_reasoner` by name and
:func:`call_with_timeout`, which runs one under a time limit.
"""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mskbench.paradigms.agentic.weights import L1_NORM, RELATIVE_LIMIT, _finite_weights


REASONERS = ("rule", "http")
#: Environment variables of :class:`HTTPReasoner`.
ENV_URL, ENV_MODEL, ENV_KEY = "MSKBENCH_LLM_URL", "MSKBENCH_LLM_MODEL", "MSKBENCH_LLM_KEY"
#: Terminations that are not falls (for the posture rule).
NOT_FALLS = ("time_limit",)


@dataclass(frozen=True)
class Proposal:
    """A reasoner's answer: the weights it wants (every key of the current ones) and why."""

    weights: dict[str, float]
    reason: str = ""


class Reasoner(Protocol):
    """Anything that proposes reward weights from the current ones and the statistics (Eq. 17)."""

    @property
    def name(self) -> str: ...

    def propose(self, weights: Mapping[str, float], stats: Mapping[str, Any]) -> Proposal: ...


@dataclass(frozen=True)
class RuleReasoner:
    """Deterministic rules after App. A-E's examples; offline, no dependencies.

    Each rule that fires raises the named weights' magnitudes by ``step``
    (20 %, the bound); rules whose weights the task lacks are skipped. With
    ``‖w‖₁`` fixed, the projection then takes the mass from the other weights.

    * forward speed below ``speed_fraction`` (80 %) of the target → ``velocity_tracking``;
    * torso pitched forward beyond ``hunch_pitch_rad`` (−0.1 rad; the
      ``no_hunch`` term's own offset) → ``upright`` and ``no_hunch``;
    * posture unstable — at least ``fall_fraction`` (half) of the ended
      episodes ended by a fall condition, or a mean root tilt above
      ``tilt_rad`` (0.3 rad) → ``upright``;
    * joint tracking RMSE above ``tracking_rad`` (0.3 rad) → ``kinematic_imitation``.

    No rule firing proposes the current weights ("no deficiency").
    """

    step: float = 0.2
    speed_fraction: float = 0.8
    hunch_pitch_rad: float = -0.1
    fall_fraction: float = 0.5
    tilt_rad: float = 0.3
    tracking_rad: float = 0.3
    name: str = "rule"

    def propose(self, weights: Mapping[str, float], stats: Mapping[str, Any]) -> Proposal:
        raise_keys: list[str] = []
        reasons: list[str] = []

        def want(keys: tuple[str, ...], why: str) -> None:
            present = [k for k in keys if k in weights and weights[k] != 0.0]
            if present:
                raise_keys.extend(k for k in present if k not in raise_keys)
                reasons.append(f"{why} -> raise {', '.join(present)}")

        speed, target = stats.get("forward_speed_mps"), stats.get("target_speed_mps")
        if speed is not None and target:
            if speed < self.speed_fraction * target:
                want(("velocity_tracking",), f"forward speed {speed:.2f} m/s below {self.speed_fraction:.0%} "
                                             f"of the target {target:.2f} m/s")
        pitch = stats.get("torso_pitch_rad")
        if pitch is not None and pitch < self.hunch_pitch_rad:
            want(("upright", "no_hunch"), f"torso pitched forward ({pitch:.2f} rad < {self.hunch_pitch_rad:g} rad)")
        ended = int(stats.get("episodes_ended") or 0)
        falls = sum(n for k, n in (stats.get("terminations") or {}).items() if k not in NOT_FALLS)
        tilt = stats.get("root_tilt_rad")
        if (ended and falls / ended >= self.fall_fraction) or (tilt is not None and tilt > self.tilt_rad):
            what = f"{falls} of {ended} episodes ended by a fall" if ended else f"mean tilt {tilt:.2f} rad"
            want(("upright",), f"posture unstable ({what})")
        tracking = stats.get("joint_tracking_rmse_rad")
        if tracking is not None and tracking > self.tracking_rad:
            want(("kinematic_imitation",), f"joint tracking RMSE {tracking:.2f} rad > {self.tracking_rad:g} rad")
        new = {k: float(v) * (1.0 + self.step) if k in raise_keys else float(v) for k, v in weights.items()}
        return Proposal(new, "; ".join(reasons) if reasons else "no deficiency found: weights kept")


#: The system message of :class:`HTTPReasoner` (``{l1}`` and ``{limit}`` are filled in).
SYSTEM_PROMPT = (
    "You tune the reward weights of a reinforcement-learning agent that controls a muscle-driven human "
    "body. The reward is the weighted sum of named terms. Reply with one JSON object and nothing else: "
    '{{"weights": {{<every key of the current weights>: <number>}}, "reason": "<one sentence>"}}. '
    "Keep each weight's sign, change each nonzero weight by at most {limit:.0%}, keep zero weights at zero; "
    "the weights are then rescaled to a total absolute value of {l1}."
)
#: The user message of :class:`HTTPReasoner` (``{task}``, ``{weights}``, ``{steps}``, ``{stats}``).
USER_PROMPT = (
    "Task: {task}.\n"
    "Current reward weights: {weights}\n"
    "Statistics over the last {steps} environment steps (speeds in m/s, angles in rad; torso_pitch_rad is "
    "positive when leaning back and negative when hunched forward; root_tilt_rad is the angle from vertical; "
    "terminations counts ended episodes per cause; reward_terms are the unweighted terms' means): {stats}\n"
    "Raise the weights of the deficient aspects (for example velocity_tracking when the forward speed is "
    "below the target, upright and no_hunch when the torso pitches forward) and return the new weights."
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_reply(content: str, keys) -> Proposal:
    """The :class:`Proposal` in a model's reply text.

    The reply's first JSON object (inside a ```json fence if there is one) is
    either ``{"weights": {...}, "reason": "..."}`` or the weights themselves.
    The weights must name exactly ``keys``, each a finite number (not a
    boolean). Raises ``ValueError`` saying what is wrong.
    """
    if not isinstance(content, str):
        raise ValueError(f"the reply must be text, got {type(content).__name__}")
    fenced = _FENCE.search(content)
    text = fenced.group(1) if fenced else content
    start = text.find("{")
    if start < 0:
        raise ValueError("the reply holds no JSON object")
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply's JSON object does not parse: {exc}") from None
    if not isinstance(obj, dict):
        raise ValueError("the reply's JSON is not an object")
    weights = obj["weights"] if isinstance(obj.get("weights"), dict) else obj
    reason = obj.get("reason", "") if weights is not obj else ""
    keys = list(keys)
    missing, extra = sorted(set(keys) - set(weights)), sorted(set(weights) - set(keys))
    if missing or extra:
        raise ValueError(f"the reply's weights must name exactly {', '.join(keys)} "
                         f"(missing: {', '.join(missing) or '-'}; unknown: {', '.join(extra) or '-'})")
    return Proposal(_finite_weights({k: weights[k] for k in keys}, "the reply's weights"), str(reason))


class HTTPReasoner:
    """An OpenAI-compatible chat-completions API as a reasoner (standard library only).

    ``url`` (``MSKBENCH_LLM_URL``) is the endpoint — ``.../chat/completions``
    is appended unless the URL already ends with it (so
    ``https://api.openai.com/v1`` works) —; ``model`` (``MSKBENCH_LLM_MODEL``)
    is required; ``key`` (``MSKBENCH_LLM_KEY``, optional for local servers) is
    sent as ``Authorization: Bearer``. One request per update: a system message
    (:data:`SYSTEM_PROMPT`) and a user message (:data:`USER_PROMPT`) with the
    current weights and the statistics as JSON; the reply's
    ``choices[0].message.content`` is parsed by :func:`parse_reply`.
    """

    name = "http"

    def __init__(self, url: str | None = None, model: str | None = None, key: str | None = None, *,
                 task: str = "", timeout_s: float = 30.0, temperature: float = 0.2,
                 l1_norm: float | None = L1_NORM, relative_limit: float = RELATIVE_LIMIT):
        url = url if url is not None else os.environ.get(ENV_URL, "")
        model = model if model is not None else os.environ.get(ENV_MODEL, "")
        if not url or not model:
            raise ValueError(f"the http reasoner needs an endpoint and a model: set {ENV_URL} "
                             f"(e.g. https://api.openai.com/v1) and {ENV_MODEL} (and {ENV_KEY} if the API wants a key)")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"{ENV_URL} must be an http:// or https:// URL, got {url!r}")
        self.url = url if url.rstrip("/").endswith("/chat/completions") else url.rstrip("/") + "/chat/completions"
        self.model = model
        self.key = key if key is not None else os.environ.get(ENV_KEY) or None
        self.task = task
        self.timeout_s = float(timeout_s)
        self.temperature = float(temperature)
        self.l1_norm = l1_norm
        self.relative_limit = relative_limit

    def messages(self, weights: Mapping[str, float], stats: Mapping[str, Any]) -> list[dict[str, str]]:
        """The request's messages (the documented template, filled in)."""
        system = SYSTEM_PROMPT.format(limit=self.relative_limit,
                                      l1="unchanged (no normalisation)" if self.l1_norm is None else self.l1_norm)
        user = USER_PROMPT.format(task=self.task or "unknown", weights=json.dumps(dict(weights)),
                                  steps=stats.get("env_steps", "?"), stats=json.dumps(dict(stats)))
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def propose(self, weights: Mapping[str, float], stats: Mapping[str, Any]) -> Proposal:
        body = json.dumps({"model": self.model, "messages": self.messages(weights, stats),
                           "temperature": self.temperature}).encode()
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"{self.url} answered HTTP {exc.code}: {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise RuntimeError(f"cannot reach {self.url}: {exc.reason}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{self.url} did not answer JSON: {exc}") from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ValueError("the answer has no choices[0].message.content") from None
        return parse_reply(content, weights)


def make_reasoner(name: str, **kwargs: Any) -> Reasoner:
    """A reasoner by name (:data:`REASONERS`)."""
    if name == "rule":
        return RuleReasoner()
    if name == "http":
        return HTTPReasoner(**kwargs)
    raise ValueError(f"unknown reasoner {name!r}; valid: {', '.join(map(repr, REASONERS))}")


def call_with_timeout(fn: Callable[..., Any], args: tuple, timeout_s: float) -> Any:
    """``fn(*args)`` in a daemon thread; its result, its exception, or ``TimeoutError`` after ``timeout_s``
    (the thread is then abandoned, its result ignored)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except Exception as exc:  # noqa: BLE001 - handed to the caller as is
            box["error"] = exc

    thread = threading.Thread(target=run, name="mskbench-reasoner", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {timeout_s:g} s")
    if "error" in box:
        raise box["error"]
    if "value" not in box:
        raise RuntimeError("the reasoner's thread ended without an answer")
    return box["value"]
