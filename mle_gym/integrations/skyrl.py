"""SkyRL-Gym environment: one mle_gym episode as a text-in, text-out `BaseTextEnv`.

SkyRL's generator makes one env per trajectory (`skyrl_gym.make(env_class, env_config=...,
extras=row)`), calls `init(prompt)`, then `step(model_text)` until `done`, and logs
`get_metrics()`. The model calls tools the way Hermes / Qwen chat templates write them:

    <tool_call>
    {"name": "bash", "arguments": {"command": "ls /home/data"}}
    </tool_call>

Each call becomes one mle_gym step (several calls in a reply run in order); the tool's output
comes back as `<tool_response>...</tool_response>` in a user message. The reward is
mle_gym's own terminal reward, on the step that ends the episode.

Importing this module registers the env with skyrl_gym as "mle_gym".
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import skyrl_gym
from omegaconf import DictConfig, OmegaConf
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType

import mle_gym
from mle_gym.integrations.episode import MAKE_OPTIONS, grade, task_prompt
from mle_gym.tools import ActionError
from mle_gym.tools.schemas import decode_json

ENV_ID = "mle_gym"
ENTRY_POINT = f"{__name__}:MleGymTextEnv"

#: Options read from `env_config` and the dataset row (`extras`); the rest of a row is ignored.
ENV_OPTIONS = MAKE_OPTIONS

SYSTEM_PROMPT = """\
You are an expert machine learning engineer solving a Kaggle competition inside a sandbox. \
Act only through the tools below, one step at a time, and finish by calling `submit` once \
the submission file is written and valid. The episode also ends when the turn, step or time \
budget runs out; the submission present then is graded.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

For each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>"""

_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_THINKING = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)


@dataclass(frozen=True)
class ParsedCall:
    """One `<tool_call>` block: the env action, or the error to show the model."""

    name: str | None
    action: dict[str, Any] | None
    error: str | None = None


def parse_tool_calls(text: str) -> list[ParsedCall]:
    """The tool calls in a model's reply, in order.

    A block may lack its closing tag at the very end (trainers often stop generation at
    `</tool_call>`); `<think>` blocks are skipped. Each call is checked with
    `mle_gym.action_from_tool_call`, so a malformed one carries the env's own message.
    """
    calls = []
    for body in _TOOL_CALL.findall(_THINKING.sub("", text)):
        try:
            call = decode_json(body.strip(), "the tool call")
        except ActionError as exc:
            calls.append(ParsedCall(None, None, str(exc)))
            continue
        name = call.get("name") if isinstance(call, dict) else None
        if not isinstance(name, str) or not name:
            error = 'a tool call is a JSON object {"name": ..., "arguments": {...}}'
            calls.append(ParsedCall(None, None, error))
            continue
        try:
            action = mle_gym.action_from_tool_call(name, call.get("arguments"))
        except ActionError as exc:
            calls.append(ParsedCall(name, None, str(exc)))
            continue
        calls.append(ParsedCall(name, action))
    return calls


def system_prompt() -> str:
    """The system message: the tools' JSON schemas in the Hermes / Qwen layout."""
    tools = "\n".join(json.dumps(schema) for schema in mle_gym.tool_schemas())
    return SYSTEM_PROMPT.format(tools=tools)


def _as_dict(config: Any) -> dict[str, Any]:
    """SkyRL hands `env_config` as a dict, an OmegaConf DictConfig or a dataclass."""
    if config is None:
        return {}
    if isinstance(config, DictConfig):
        return OmegaConf.to_container(config, resolve=True)  # type: ignore[return-value]
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    if isinstance(config, Mapping) or hasattr(config, "items"):
        return {str(k): v for k, v in config.items()}
    return dict(vars(config))


class MleGymTextEnv(BaseTextEnv):
    """One mle_gym episode for SkyRL.

    Options (later wins): keyword arguments (e.g. the `kwargs` given at registration),
    `env_config` (the trainer's config for this env class), then the dataset row `extras`.
    `competition_id` is required; `backend`, `time_limit`, `max_steps`, `step_timeout`,
    `max_output_chars`, `data`, `reward_mode`, `network`, `network_policy`, `sandbox_options`
    go to `gym.make`; `seed` to `reset`; `max_turns` (SkyRL's generator sets it) bounds the
    model's replies, and the env's `max_steps` defaults to it. `observation_role="tool"`
    returns each tool output as a `{"role": "tool"}` message for chat templates that wrap
    tool results themselves.
    """

    def __init__(
        self, env_config: Any = None, extras: Mapping[str, Any] | None = None, **options: Any
    ) -> None:
        super().__init__()
        merged = {**options, **_as_dict(env_config), **dict(extras or {})}
        if not merged.get("competition_id"):
            raise ValueError(
                "mle_gym needs a competition_id (a dataset column, env_config or keyword)"
            )
        self.competition_id = str(merged["competition_id"])
        self.seed = None if merged.get("seed") is None else int(merged["seed"])
        self.max_turns = int(merged.get("max_turns") or 50)
        self.observation_role = merged.get("observation_role") or "user"
        if self.observation_role not in ("user", "tool"):
            raise ValueError(
                f"observation_role must be 'user' or 'tool', not {self.observation_role!r}"
            )
        make_options = {k: merged[k] for k in ENV_OPTIONS if merged.get(k) is not None}
        make_options.setdefault("max_steps", self.max_turns)
        if make_options.get("sandbox_options") is not None:
            make_options["sandbox_options"] = _as_dict(make_options["sandbox_options"])
        self.env = gym.make(f"mle/{self.competition_id}-v0", **make_options)
        self._clear()

    def _clear(self) -> None:
        self.turns = 0
        self.done = False
        self.steps = 0
        self.invalid_calls = 0
        #: The episode's rewards so far, summed (dense: the changes paid, then the rest).
        self.reward = 0.0
        self.outcome: dict[str, Any] = {}

    def init(
        self, prompt: ConversationType | None = None
    ) -> tuple[ConversationType, dict[str, Any]]:
        """Reset the episode (cheap: the sandbox starts on the first tool call). An empty
        `prompt` becomes [system with the tools, user with the task]; a dataset's prompt
        (e.g. from `dataset_row`; a JSON string is decoded) is kept as it is."""
        if isinstance(prompt, str):
            prompt = json.loads(prompt)
        self._clear()
        _, info = self.env.reset(seed=self.seed)
        messages = list(prompt or []) or [
            {"role": "system", "content": system_prompt()},
            {"role": "user", "content": task_prompt(info)},
        ]
        return messages, {"competition_id": self.competition_id, "seed": info.get("seed")}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Run the reply's tool calls; the episode ends at `submit`, at the env's budget, or
        after `max_turns` replies (then the submission present is graded)."""
        if self.done:
            return BaseTextEnvStepOutput(observations=[], reward=0.0, done=True, metadata={})
        self.turns += 1
        before = self.reward
        calls = parse_tool_calls(action)
        outputs: list[str] = []
        metadata: dict[str, Any] = {"turn": self.turns, "tool_calls": [], "errors": []}
        if not calls:
            self.invalid_calls += 1
            error = "No tool call found. Call a tool as <tool_call>{...}</tool_call>."
            metadata["errors"].append(error)
            outputs.append(error)
        for call in calls:
            if call.action is None:
                self.invalid_calls += 1
                metadata["errors"].append(call.error)
                outputs.append(f"Invalid tool call: {call.error}")
                continue
            metadata["tool_calls"].append(call.name)
            outputs.append(self._run(call.action, metadata))
            if self.done:
                break
        if not self.done and self.turns >= self.max_turns:
            self._run({"tool": "submit"}, metadata)
            metadata["truncated"] = True
        turn_reward = self.reward - before  # the turn's calls' rewards
        if self.done:
            metadata.update(self._summary())
            return BaseTextEnvStepOutput(
                observations=[], reward=turn_reward, done=True, metadata=metadata
            )
        return BaseTextEnvStepOutput(
            observations=self._messages(outputs),
            reward=turn_reward,
            done=False,
            metadata=metadata,
        )

    def _run(self, action: dict[str, Any], metadata: dict[str, Any]) -> str:
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        self.reward += float(reward)
        if terminated or truncated:
            self.done = True
            report = info.get("report") or {}
            self.outcome = {**grade(self.reward, report), "report": report}
            metadata["truncated"] = bool(truncated)
            if info.get("graded_submission"):  # on the host until close()
                metadata["graded_submission"] = info["graded_submission"]
        return observation

    def _messages(self, outputs: list[str]) -> ConversationType:
        if self.observation_role == "tool":
            return [{"role": "tool", "content": text} for text in outputs]
        content = "\n".join(f"<tool_response>\n{text}\n</tool_response>" for text in outputs)
        return [{"role": "user", "content": content}]

    def _summary(self) -> dict[str, Any]:
        return {**self.outcome, "steps": self.steps, "turns": self.turns}

    def get_metrics(self) -> dict[str, Any]:
        """Episode metrics SkyRL logs per env class (numbers; booleans average to rates)."""
        keys = ("reward", "score", "normalized_score", "valid", "above_median", "any_medal")
        keys += ("gold_medal", "silver_medal", "bronze_medal")
        metrics: dict[str, Any] = {k: self.outcome[k] for k in keys if k in self.outcome}
        metrics.update(
            graded=bool(self.outcome),
            turns=self.turns,
            steps=self.steps,
            invalid_calls=self.invalid_calls,
        )
        return {k: v for k, v in metrics.items() if v is not None}

    def close(self) -> None:
        """Stop the sandbox (an unfinished episode is dropped ungraded); safe to repeat."""
        self.env.close()


def dataset_row(competition_id: str, **options: Any) -> dict[str, Any]:
    """A SkyRL dataset row: the prompt `init` would build, env_class "mle_gym", and the
    options as columns (SkyRL passes the other columns to the env as `extras`)."""
    env = MleGymTextEnv(competition_id=competition_id, **options)
    try:
        prompt, _ = env.init([])
    finally:
        env.close()
    return {"prompt": prompt, "env_class": ENV_ID, "competition_id": competition_id, **options}


def register_env(env_id: str = ENV_ID, **defaults: Any) -> None:
    """Register the env with skyrl_gym under `env_id`, with default options (e.g.
    `backend="docker"`); an id already registered is left as it is."""
    if env_id not in skyrl_gym.registry:
        skyrl_gym.register(id=env_id, entry_point=ENTRY_POINT, kwargs=defaults)


register_env()
