"""The baselines' policy factories, which join mle_gym's policy registry (`mle_gym.policies`)
through the `mle_gym.policies` entry points in setup.cfg, one per name.

Each factory imports its policy when called, so a scaffold's optional extra is only needed
when that scaffold is asked for. LLM policies take `base_url`, `model` and `api_key` (from
`--base-url/--model/--api-key`), falling back to OPENAI_BASE_URL, MLE_GYM_MODEL and
OPENAI_API_KEY.
"""

from __future__ import annotations

from typing import Any

from mle_gym.runner import Policy


def scripted(**_options: Any) -> Policy:
    from mle_gym_baselines.scripted import ScriptedTabularPolicy

    return ScriptedTabularPolicy()


def llm(**options: Any) -> Policy:
    from mle_gym_baselines.llm_agent import LLMAgentPolicy

    return LLMAgentPolicy(**options)


class MissingExtra(RuntimeError):
    """A scaffold's optional packages are not installed in this interpreter."""


def _missing(name: str, extra: str, exc: ImportError, note: str = "") -> MissingExtra:
    return MissingExtra(
        f"the {name} policy needs the {extra!r} extra ({exc}): "
        f"pip install 'mle-gym[{extra}]'{note}; see docs/agents.md"
    )


def mini_swe_agent(**options: Any) -> Policy:
    try:
        from mle_gym_baselines.scaffolds.mini_swe_agent import MiniSweAgentPolicy
    except ImportError as exc:
        raise _missing("mini-swe-agent", "mini-swe-agent", exc) from exc
    return MiniSweAgentPolicy(**options)


def aide(**options: Any) -> Policy:
    try:
        from mle_gym_baselines.scaffolds.aide import AidePolicy
    except ImportError as exc:
        raise _missing("aide", "aide", exc, " && pip install --no-deps aideml==0.2.2") from exc
    return AidePolicy(**options)


def openhands(**options: Any) -> Policy:
    try:
        from mle_gym_baselines.scaffolds.openhands import OpenHandsPolicy
    except ImportError as exc:
        raise _missing("openhands", "openhands", exc, " in Python >= 3.12") from exc
    return OpenHandsPolicy(**options)


def mlab(**options: Any) -> Policy:
    from mle_gym_baselines.scaffolds.mlab import MlabPolicy  # our own code: no package to install

    return MlabPolicy(**options)
