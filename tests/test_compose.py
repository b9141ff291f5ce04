"""How paradigms combine in one run (mskbench.paradigms.compose): what train() gets from the paradigm options,
and each refused combination as a one-line ValueError naming its option (the CLI prints it as that option's
error: tests/test_agentic.py, tests/test_residual.py, tests/test_latent.py)."""

from __future__ import annotations

import pytest

from mskbench.paradigms.compose import Composition, OptionError, compose


def test_without_paradigm_options_the_task_trains_as_it_is():
    assert compose("Stand") == Composition(env_wrapper=None, task_options=None, tuner=None)


def test_each_paradigm_is_the_env_wrapper():
    from mskbench.paradigms.agentic import AgenticTuner
    from mskbench.paradigms.residual import ResidualWrapper
    from mskbench.paradigms.residual.expert import ExpertResidualWrapper

    agentic = compose("Walk", agentic="rule", agentic_every=5)
    assert isinstance(agentic.env_wrapper, AgenticTuner) and agentic.tuner is agentic.env_wrapper
    residual = compose("ResidualWalk", base="zero")
    assert isinstance(residual.env_wrapper, ResidualWrapper) and residual.task_options == {"base": "zero"}
    assert residual.tuner is None
    expert = compose("Stand", base="expert", algo="sac")
    assert isinstance(expert.env_wrapper, ExpertResidualWrapper) and expert.task_options is None


@pytest.mark.parametrize("options, option, message", [
    (dict(task="ResidualWalk"), "--base", "ResidualWalk trains a residual over a frozen base policy: give --base RUN"),
    (dict(task="Walk", base="zero"), "--base", "--base is for the residual tasks (ResidualWalk, "),
    (dict(task="Stand", base="expert", backend="jax"), "--base", "--backend cpu, not jax"),
    (dict(task="Stand", base="expert", algo="bc"), "--base", "--algo ppo or sac, not bc"),
    (dict(task="ResidualWalk", base="zero", agentic="rule"), "--base", "--base and --agentic cannot be combined"),
    (dict(task="Stand", agentic_timeout=3.0), "--agentic-timeout", "--agentic-timeout needs --agentic rule|http"),
    (dict(task="Stand", agentic="rule", backend="jax"), "--agentic", "agentic reward tuning trains on --backend cpu"),
    (dict(task="Stand", tube=0.1), "--tube", "--tube needs --latent MODEL"),
    (dict(task="Stand", base="expert", latent="model.npz"), "--latent", "cannot be combined with --agentic or --base"),
    (dict(task="Stand", latent="no-such-model.npz"), "--latent", "no-such-model.npz does not exist"),
])
def test_a_refused_option_is_a_one_line_error_naming_it(options, option, message):
    task = options.pop("task")
    with pytest.raises(OptionError) as err:
        compose(task, **options)
    assert isinstance(err.value, ValueError) and err.value.option == option
    assert message in str(err.value) and "\n" not in str(err.value)
