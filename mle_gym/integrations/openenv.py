"""mle_gym as an OpenEnv environment (the `openenv` package, whose `openenv[core]` TRL's
OpenEnv integration installs): every WebSocket session is one graded episode.

OpenEnv serves an `Environment` (reset / step / state) over HTTP and WebSocket with
`create_app`; each client connection (`EnvClient`, a `/ws` session) gets its own
environment, so its own sandbox. Here:

- `MleGymAction` is one tool call: the tool's name and its arguments, as in
  `mle_gym.tool_schemas()`; `action_from_tool_call` checks it, and a malformed call gets
  mle_gym's message back as the observation and spends no step.
- `MleGymObservation.output` is what the tool printed (at reset: the task statement);
  `reward` and `done` are mle_gym's, and the step that ends the episode (`submit`, or the
  step or time budget) carries the grade: score, valid, above_median, any_medal, medal.
- `reset(seed=..., competition_id=...)` starts a new episode (cheap: the sandbox starts on
  the first tool call); a client picks the competition and seed, the server's operator
  everything else (backend, limits, network), which a client cannot change.
- `MleGymEnvClient` is the typed client; `tool_environment(base_url)` is the class TRL's
  `GRPOTrainer(environment_factory=...)` takes: the tools as methods, `reward` after the
  episode.

Serve it with `python -m mle_gym.integrations.openenv spaceship-titanic --port 8000`, or
`create_server(...)` under any ASGI server.
"""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server import Action, Environment, Observation, State, create_app
from pydantic import Field

import mle_gym
from mle_gym.competitions import get_competition
from mle_gym.integrations.episode import MAKE_OPTIONS, ToolEpisode
from mle_gym.tools.signatures import tool_method
from mle_gym.tools.table import TOOLS

ENV_NAME = "mle_gym"


class MleGymAction(Action):
    """One tool call: `tool` is bash, view, create, str_replace, insert, validate or submit."""

    tool: str = Field(description="the tool's name, as in mle_gym.tool_schemas()")
    arguments: dict[str, Any] = Field(default_factory=dict, description="the tool's arguments")


class MleGymObservation(Observation):
    """What the tool printed; the grade once the episode is over."""

    output: str = ""
    competition_id: str = ""
    grade: dict[str, Any] | None = None


class MleGymState(State):
    """The episode so far (OpenEnv's `state`)."""

    competition_id: str = ""
    done: bool = False
    invalid_calls: int = 0
    grade: dict[str, Any] | None = None


class MleGymEnvironment(Environment[MleGymAction, MleGymObservation, MleGymState]):
    """One session's episodes of a competition; each `reset` starts a fresh one."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session owns its own env and sandbox

    def __init__(self, competition_id: str = "sklearn-digits", **make_options: Any) -> None:
        super().__init__()
        unknown = set(make_options) - set(MAKE_OPTIONS)
        if unknown:
            raise TypeError(f"unknown mle_gym options: {sorted(unknown)}")
        self.competition_id = competition_id
        self.make_options = make_options
        self._episode: ToolEpisode | None = None
        self._episode_id: str | None = None

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        competition_id: str | None = None,
        **_ignored: Any,
    ) -> MleGymObservation:
        """A new episode of `competition_id` (default: the server's); other keys are ignored,
        so a dataset row's columns can be passed as they are."""
        self.close()
        competition = competition_id or self.competition_id
        self._episode = ToolEpisode(competition, seed, **self.make_options)
        self._episode_id = episode_id or uuid.uuid4().hex
        statement = self._episode.reset()
        return MleGymObservation(output=statement, competition_id=competition, reward=0.0)

    def step(
        self, action: MleGymAction, timeout_s: float | None = None, **_ignored: Any
    ) -> MleGymObservation:
        episode = self._episode
        if episode is None:
            return MleGymObservation(output="Call reset first: no episode is running.", done=True)
        output = episode.call(action.tool, action.arguments)
        grade = None
        if episode.done:
            grade = {**episode.outcome, "steps": episode.steps}
        return MleGymObservation(
            output=output,
            competition_id=episode.competition_id,
            done=episode.done,
            reward=episode.last_reward,  # this step's (dense: a change paid); grade: the sum
            grade=grade,
        )

    @property
    def state(self) -> MleGymState:
        episode = self._episode
        if episode is None:
            return MleGymState(competition_id=self.competition_id)
        return MleGymState(
            episode_id=self._episode_id,
            step_count=episode.steps,
            competition_id=episode.competition_id,
            done=episode.done,
            invalid_calls=episode.invalid_calls,
            grade=episode.outcome or None,
        )

    def close(self) -> None:
        """Stop the episode's sandbox (OpenEnv calls this when a session ends)."""
        episode, self._episode = self._episode, None
        if episode is not None:
            episode.close()


def create_server(
    competition_id: str = "sklearn-digits", max_concurrent_envs: int = 8, **make_options: Any
) -> Any:
    """OpenEnv's FastAPI app serving `MleGymEnvironment`s: one per WebSocket session, at most
    `max_concurrent_envs` at once (their default memory limits share the host among them)."""
    make_options.setdefault("concurrent_episodes", max_concurrent_envs)
    MleGymEnvironment(competition_id, **make_options)  # bad options fail here, not per session
    return create_app(
        lambda: MleGymEnvironment(competition_id, **make_options),
        MleGymAction,
        MleGymObservation,
        env_name=ENV_NAME,
        max_concurrent_envs=max_concurrent_envs,
    )


class MleGymEnvClient(EnvClient[MleGymAction, MleGymObservation, MleGymState]):
    """OpenEnv's WebSocket client with mle_gym's types."""

    def _step_payload(self, action: MleGymAction) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[MleGymObservation]:
        fields = dict(payload.get("observation") or {})
        fields.update(reward=payload.get("reward"), done=bool(payload.get("done")))
        observation = MleGymObservation.model_validate(fields)
        return StepResult(observation, observation.reward, observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> MleGymState:
        return MleGymState.model_validate(payload)


class MleGymToolEnv:
    """An episode for TRL's `environment_factory`: the env's tools as methods (TRL makes the
    model's tool schemas from their signatures and docstrings), `reward` once it is over.

    TRL calls `reset(**row)` with a dataset row's columns; `competition_id` and `seed` there
    pick the episode. A call after the end raises, which TRL shows the model as the tool's
    answer. Subclass with `base_url` set, or use `tool_environment(base_url)`.
    """

    base_url = "http://127.0.0.1:8000"
    #: Seconds the client waits for one answer (a training run inside a step can be long).
    message_timeout_s = 3600.0

    def __init__(self) -> None:
        self.client = MleGymEnvClient(
            base_url=self.base_url, message_timeout_s=self.message_timeout_s
        ).sync()
        self.client.connect()
        self.reward = 0.0
        self.done = False
        self.grade: dict[str, Any] | None = None

    def reset(self, **row: Any) -> str:
        options = {k: row[k] for k in ("competition_id", "seed") if row.get(k) is not None}
        result = self.client.reset(**options)
        self.reward, self.done, self.grade = 0.0, False, None
        return result.observation.output

    def _call(self, tool: str, **arguments: Any) -> str:
        if self.done:
            raise ValueError("The episode is over: it was submitted or its budget ran out.")
        action = MleGymAction(
            tool=tool, arguments={k: v for k, v in arguments.items() if v is not None}
        )
        result = self.client.step(action)
        if result.done:
            self.done = True
            self.grade = result.observation.grade
            self.reward = float((self.grade or {}).get("reward", result.reward or 0.0))
        return result.observation.output

    def close(self) -> None:
        self.client.close()


def _docstring(schema: dict[str, Any]) -> str:
    """A tool's description and its arguments, in the layout TRL reads tool schemas from."""
    function = schema["function"]
    properties = function["parameters"].get("properties", {})
    args = "".join(
        f"\n    {name}: {spec.get('description', name)}" for name, spec in properties.items()
    )
    return function["description"] + (f"\n\nArgs:{args}" if args else "")


def _forward(env: MleGymToolEnv, tool: str, arguments: dict[str, Any]) -> str:
    return env._call(tool, **arguments)


# The tools as methods, written from mle_gym's table of tools: TRL reads each one's schema
# from its signature and docstring (the descriptions of `mle_gym.tool_schemas()`).
for _schema in mle_gym.tool_schemas():
    _name = _schema["function"]["name"]
    setattr(MleGymToolEnv, _name, tool_method(TOOLS[_name], _forward, doc=_docstring(_schema)))


def tool_environment(base_url: str) -> type[MleGymToolEnv]:
    """`MleGymToolEnv` bound to a server, for `GRPOTrainer(environment_factory=...)`."""
    return type("MleGymToolEnv", (MleGymToolEnv,), {"base_url": base_url})


def main(argv: list[str] | None = None) -> None:
    """Serve one competition's episodes on HOST:PORT (127.0.0.1 by default)."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m mle_gym.integrations.openenv")
    parser.add_argument("competition_id", nargs="?", default="sklearn-digits")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--backend", default="local", choices=["local", "docker"])
    parser.add_argument("--max-concurrent-envs", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--time-limit", type=float, default=None)
    parser.add_argument("--max-output-chars", type=int, default=None)
    parser.add_argument("--data", default=None, choices=["test", "dev"])
    parser.add_argument("--reward-mode", default=None, dest="reward_mode")
    args = parser.parse_args(argv)
    options = {k: v for k in MAKE_OPTIONS if (v := getattr(args, k, None)) is not None}
    get_competition(args.competition_id)  # an unknown id fails before serving
    app = create_server(args.competition_id, args.max_concurrent_envs, **options)
    uvicorn.run(app, host=args.host, port=args.port)


__all__ = [
    "ENV_NAME",
    "MleGymAction",
    "MleGymEnvClient",
    "MleGymEnvironment",
    "MleGymObservation",
    "MleGymState",
    "MleGymToolEnv",
    "create_server",
    "tool_environment",
]

if __name__ == "__main__":
    main()
