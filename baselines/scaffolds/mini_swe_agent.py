"""mini-swe-agent (2.x) driving an mle_gym env: its `Environment` protocol over `env.step`.

mini-swe-agent's `DefaultAgent.run` owns the loop; it runs inverted (`mle_gym.inversion`) and
every command it executes is one env step. Its completion signal (`echo
COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`) becomes the env's `submit`, and `echo MLE_GYM_VALIDATE`
the env's `validate`. The LLM is litellm's OpenAI-compatible client on the configured endpoint.
"""

from __future__ import annotations

import os
import platform
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mle_gym_baselines.llm_agent.endpoint import Endpoint
from mle_gym_baselines.llm_agent.retry import RetryPolicy
from mle_gym_baselines.scaffolds.common import (
    VALIDATE_HINT,
    VALIDATE_SIGNAL,
    is_signal,
    task_prompt,
)
from mle_gym_baselines.scaffolds.model_json import decode_errors_as_json_errors
from mle_gym.inversion import Bridge, EpisodeEnded, InvertedPolicy

#: mini-swe-agent's own signal word for "done"; its local environment uses the same.
SUBMIT_SIGNAL = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

# Before mini-swe-agent and litellm are imported: no banner, no user config dir written,
# and litellm's bundled cost map instead of fetching one from the network.
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault(
    "MSWEA_GLOBAL_CONFIG_DIR", str(Path.home() / ".cache" / "mle-gym" / "mini-swe-agent")
)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402
import yaml  # noqa: E402
from litellm.litellm_core_utils.llm_response_utils import convert_dict_to_response  # noqa: E402
from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.config import get_config_path  # noqa: E402
from minisweagent.exceptions import Submitted  # noqa: E402
from minisweagent.models import get_model  # noqa: E402

decode_errors_as_json_errors(convert_dict_to_response)  # mini-swe-agent catches any error
litellm.suppress_debug_info = True  # no help banner after each failed call


@dataclass
class GymEnvironmentConfig:
    cwd: str = ""
    env: dict[str, str] = field(default_factory=dict)


class GymEnvironment:
    """mini-swe-agent's Environment protocol: each `execute` is one `env.step` via the bridge.

    The env's shell is persistent and has its own per-step timeout, so `timeout` is unused.
    """

    def __init__(self, bridge: Bridge, **config: Any) -> None:
        self.bridge = bridge
        self.config = GymEnvironmentConfig(**config)
        self._exported = False

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict:
        command = action.get("command", "")
        if is_signal(command, SUBMIT_SIGNAL):
            self._submit("")
        if is_signal(command, VALIDATE_SIGNAL):
            answer = self.bridge.step({"tool": "validate"})
            return {"output": answer.observation, "returncode": 0, "exception_info": ""}
        cwd = cwd or self.config.cwd
        prefix = f"cd {shlex.quote(cwd)} && " if cwd else ""
        if not self._exported:  # the env's shell is persistent: once is enough
            self._exported = True
            exports = (f"export {k}={shlex.quote(v)}; " for k, v in self.config.env.items())
            prefix = "".join(exports) + prefix
        answer = self.bridge.step({"tool": "bash", "command": prefix + command})
        code = answer.info.get("exit_code")
        output = {
            "output": answer.observation,
            "returncode": -1 if code is None else code,
            "exception_info": "the command timed out" if answer.info.get("timed_out") else "",
        }
        lines = answer.observation.lstrip().splitlines()
        if lines and lines[0].strip() == SUBMIT_SIGNAL and code == 0:
            self._submit("\n".join(lines[1:]))
        return output

    def _submit(self, text: str) -> None:
        try:
            self.bridge.step({"tool": "submit"})
        except EpisodeEnded:
            pass
        raise Submitted(
            {
                "role": "exit",
                "content": text,
                "extra": {"exit_status": "Submitted", "submission": text},
            }
        )

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        # the sandbox shares the host's kernel (bubblewrap or Docker)
        return {**asdict(self.config), **platform.uname()._asdict(), **kwargs}

    def serialize(self) -> dict:
        return {
            "info": {
                "config": {
                    "environment": asdict(self.config),
                    "environment_type": f"{__name__}.GymEnvironment",
                }
            }
        }


class MiniSweAgentPolicy(InvertedPolicy):
    """mini-swe-agent's `DefaultAgent` with one of its configs (a builtin name or a path:
    default `mini`, bash tool calls; `mini_textbased`, markdown bash blocks), on an
    OpenAI-compatible endpoint.

    `retries` bounds mini-swe-agent's own retry of a failed LLM call (its
    MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT, a process-wide variable; default: the shared bound
    of baselines/llm_agent/retry.py); `agent` is the last run's
    agent, for its messages and cost.
    """

    name = "mini-swe-agent"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        config: str = "mini",
        retries: int | None = None,
        model_kwargs: dict[str, Any] | None = None,
        act_timeout: float = 1800.0,
    ) -> None:
        super().__init__(self._run, act_timeout=act_timeout)
        self.endpoint = Endpoint.resolve(base_url, model, api_key)
        self.config = yaml.safe_load(get_config_path(config).read_text())
        if "textbased" in config:  # its config names no model class; the default parses tools
            self.config.setdefault("model", {}).setdefault("model_class", "litellm_textbased")
        self.retries = RetryPolicy.from_environment().max_retries if retries is None else retries
        self.model_kwargs = model_kwargs or {}
        self.agent: DefaultAgent | None = None

    def _run(self, bridge: Bridge) -> None:
        os.environ["MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT"] = str(self.retries + 1)
        model_config = dict(self.config.get("model", {}))
        model_config["model_kwargs"] = {
            **model_config.get("model_kwargs", {}),
            "api_base": self.endpoint.base_url,
            "api_key": self.endpoint.api_key,
            "max_retries": 0,  # the OpenAI client's own retries: only the shared bound retries
            **self.model_kwargs,
        }
        model_config["cost_tracking"] = "ignore_errors"  # unknown models have no price
        model = get_model(f"openai/{self.endpoint.model}", model_config)
        agent_config = {k: v for k, v in self.config.get("agent", {}).items() if k != "mode"}
        environment = GymEnvironment(bridge, **self.config.get("environment", {}))
        self.agent = DefaultAgent(model, environment, **agent_config)
        self.agent.run(f"{task_prompt(bridge.first.info)}\n\n{VALIDATE_HINT}")

    @property
    def usage(self) -> dict[str, Any]:
        """LLM calls and cost as mini-swe-agent counted them (cost 0 for unpriced models)."""
        if self.agent is None:
            return {"calls": 0, "cost_usd": 0.0}
        return {"calls": self.agent.n_calls, "cost_usd": self.agent.cost}

    def trajectory(self) -> dict[str, Any]:
        """mini-swe-agent's own serialisation of the run (messages, config, exit status)."""
        return self.agent.serialize() if self.agent is not None else {}
