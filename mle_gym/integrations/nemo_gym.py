"""mle_gym as a NeMo-Gym resources server: every rollout is one graded episode.

NeMo-Gym (`nemo-gym`, NVIDIA's environment hub for NeMo-RL, veRL and Unsloth) runs three
kinds of HTTP servers under `ng_run`: a model server (`/v1/responses`), an agent server
(e.g. its `simple_agent`) and a resources server, which owns the task's tools and its
verifier. `ng_collect_rollouts` posts each dataset row to the agent's `/run`, which calls
the resources server's `/seed_session`, loops model -> tool endpoints (`POST /<tool>` with the
call's arguments) until the model stops calling tools or `max_steps`, then `/verify`.
Here:

- `/seed_session` makes the session's own env (`competition_id` and `seed` from the row;
  backend, limits and network from the server's config, which a row cannot change) and
  resets it (cheap: the sandbox starts on the first tool call).
- `/bash`, `/view`, `/create`, `/str_replace`, `/insert`, `/validate`, `/submit` step it:
  each body goes through `mle_gym.action_from_tool_call`; a malformed call gets mle_gym's
  message back and spends no step; the tool's output is the plain-text answer.
- `/verify` ends the episode (grading the submission present if the model never called
  `submit`) and answers mle_gym's reward with score, valid, above_median, any_medal, medal,
  normalized_score, steps and submitted; then the session's sandbox is removed.

`dataset_row(competition_id)` builds a row (the task statement as the prompt, the tools in
the Responses API's function layout) and `write_environment(root, ...)` lays out the
`resources_servers/mle_gym` directory `ng_run` starts, with a config that pairs it with
NeMo-Gym's own `simple_agent`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any

from fastapi import Body, FastAPI, Request
from fastapi.responses import PlainTextResponse
from nemo_gym.base_resources_server import (
    BaseResourcesServerConfig,
    BaseSeedSessionRequest,
    BaseSeedSessionResponse,
    BaseVerifyRequest,
    BaseVerifyResponse,
    SimpleResourcesServer,
)
from nemo_gym.server_utils import SESSION_ID_KEY
from pydantic import ConfigDict, PrivateAttr, create_model

import mle_gym
from mle_gym.envs.config import ADAPTER, option_types
from mle_gym.integrations.episode import MAKE_OPTIONS, ToolEpisode

#: The resources server's directory name under resources_servers/ (and its config's key).
SERVER_NAME = "mle_gym"
AGENT_NAME = f"{SERVER_NAME}_simple_agent"

SYSTEM_PROMPT = (
    "You are an expert machine learning engineer solving a Kaggle competition inside a "
    "sandbox. Act only through the tools, one step at a time, and finish by calling `submit` "
    "once the submission file is written and valid; if you stop calling tools, the submission "
    "present then is graded."
)


#: The env options an adapter takes (EnvConfig's "adapter" fields), each optional: a server
#: config sets only those it changes.
_EnvOptions = create_model(
    "_EnvOptions",
    __base__=BaseResourcesServerConfig,
    **{name: (kind | None, None) for name, kind in option_types(ADAPTER).items()},
)


class MleGymResourcesServerConfig(_EnvOptions):
    """The server's own options for every episode (`gym.make` keywords); a row picks only
    the competition and the seed."""

    backend: str = "local"

    def make_options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in MAKE_OPTIONS if getattr(self, k) is not None}


class MleGymSeedSessionRequest(BaseSeedSessionRequest):
    model_config = ConfigDict(extra="allow")
    competition_id: str
    seed: int | None = None


class MleGymVerifyRequest(BaseVerifyRequest):
    model_config = ConfigDict(extra="allow")


class MleGymVerifyResponse(BaseVerifyResponse):
    """mle_gym's reward and the grade behind it (metrics NeMo-Gym aggregates per agent)."""

    model_config = ConfigDict(extra="allow")
    competition_id: str = ""
    score: float | None = None
    valid: bool = False
    above_median: bool = False
    any_medal: bool = False
    medal: str | None = None
    normalized_score: float | None = None
    error: str | None = None
    steps: int = 0
    invalid_calls: int = 0
    #: Whether the model called `submit` (else the episode was ended and graded at /verify).
    submitted: bool = False


class MleGymResourcesServer(SimpleResourcesServer):
    """The env's tools and verifier, one episode per NeMo-Gym session."""

    config: MleGymResourcesServerConfig
    _episodes: dict[str, ToolEpisode] = PrivateAttr(default_factory=dict)

    def setup_webserver(self) -> FastAPI:
        app = super().setup_webserver()
        for schema in mle_gym.tool_schemas():
            name = schema["function"]["name"]
            app.post(f"/{name}", response_class=PlainTextResponse)(self._tool_endpoint(name))
        return app

    def _tool_endpoint(self, name: str) -> Any:
        async def call(request: Request, body: Annotated[Any, Body()] = None) -> PlainTextResponse:
            episode = self._episodes.get(request.session.get(SESSION_ID_KEY, ""))
            if episode is None:
                return PlainTextResponse("No episode in this session: seed it first.", 400)
            output = await asyncio.to_thread(episode.call, name, body)
            return PlainTextResponse(output)

        call.__name__ = name
        return call

    async def seed_session(
        self, request: Request, body: MleGymSeedSessionRequest
    ) -> BaseSeedSessionResponse:
        session_id = request.session[SESSION_ID_KEY]
        episode = await asyncio.to_thread(
            ToolEpisode, body.competition_id, body.seed, **self.config.make_options()
        )
        await asyncio.to_thread(episode.reset)
        previous = self._episodes.pop(session_id, None)
        self._episodes[session_id] = episode
        if previous is not None:
            await asyncio.to_thread(previous.close)
        return BaseSeedSessionResponse()

    async def verify(self, request: Request, body: MleGymVerifyRequest) -> MleGymVerifyResponse:
        episode = self._episodes.pop(request.session.get(SESSION_ID_KEY, ""), None)
        if episode is None:  # never seeded, or verified already: nothing was graded
            return MleGymVerifyResponse(**body.model_dump(), reward=0.0)
        try:
            submitted = episode.done
            outcome = await asyncio.to_thread(episode.finish)
        finally:
            await asyncio.to_thread(episode.close)
        fields = {k: v for k, v in outcome.items() if k in MleGymVerifyResponse.model_fields}
        fields.update(competition_id=episode.competition_id, submitted=submitted)
        return MleGymVerifyResponse(**{**body.model_dump(), **fields})


def responses_tools() -> list[dict[str, Any]]:
    """mle_gym's tools in the Responses API's function layout (what NeMo-Gym rows carry)."""
    return [
        {"type": "function", "strict": False, **schema["function"]}
        for schema in mle_gym.tool_schemas()
    ]


def dataset_row(competition_id: str, seed: int = 0, **extra: Any) -> dict[str, Any]:
    """One NeMo-Gym dataset row: the task statement as the prompt, the tools, and the
    episode's competition and seed (which `/seed_session` reads)."""
    episode = ToolEpisode(competition_id, seed)
    try:
        statement = episode.reset()
    finally:
        episode.close()
    return {
        "responses_create_params": {
            "input": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": statement},
            ],
            "tools": responses_tools(),
        },
        "competition_id": competition_id,
        "seed": seed,
        **extra,
    }


APP_SOURCE = '''\
"""NeMo-Gym's entrypoint for mle_gym's resources server (written by mle_gym)."""

from mle_gym.integrations.nemo_gym import MleGymResourcesServer

if __name__ == "__main__":
    MleGymResourcesServer.run_webserver()
'''


def write_environment(
    root: Path,
    rows: list[dict[str, Any]],
    *,
    requirement: str = "mle-gym[nemo-gym]",
    max_agent_steps: int = 50,
    **server_options: Any,
) -> Path:
    """Lay out `root/resources_servers/mle_gym/`: its entrypoint, requirements (for the venv
    `ng_run` makes), the dataset `rows` (data/example.jsonl) and a config pairing the
    server (with `server_options`, e.g. backend="docker") with NeMo-Gym's `simple_agent`
    (at most `max_agent_steps` model calls). Returns the config's path, for
    `ng_run "+config_paths=[...]"`."""
    MleGymResourcesServerConfig.model_validate(
        {"host": "127.0.0.1", "port": 0, "entrypoint": "app.py", "name": SERVER_NAME}
        | server_options
    )  # a bad option fails here, not when ng_run starts the server
    server_dir = Path(root) / "resources_servers" / SERVER_NAME
    (server_dir / "configs").mkdir(parents=True, exist_ok=True)
    (server_dir / "data").mkdir(exist_ok=True)
    (server_dir / "app.py").write_text(APP_SOURCE)
    (server_dir / "requirements.txt").write_text(f"{requirement}\n")
    data = server_dir / "data" / "example.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    options = "".join(
        f"\n      {key}: {json.dumps(value)}" for key, value in sorted(server_options.items())
    )
    config = server_dir / "configs" / f"{SERVER_NAME}.yaml"
    config.write_text(
        textwrap.dedent(f"""\
        {SERVER_NAME}:
          resources_servers:
            {SERVER_NAME}:
              entrypoint: app.py
              domain: coding
              verified: false
              description: Kaggle competitions of MLE-bench, graded as mle_gym grades them
        """).rstrip("\n")
        + options
        + textwrap.dedent(f"""
        {AGENT_NAME}:
          responses_api_agents:
            simple_agent:
              entrypoint: app.py
              max_steps: {int(max_agent_steps)}
              resources_server:
                type: resources_servers
                name: {SERVER_NAME}
              model_server:
                type: responses_api_models
                name: policy_model
              datasets:
              - name: example
                type: example
                jsonl_fpath: {data.relative_to(root).as_posix()}
        """)
    )
    return config


#: The servers a `write_environment` config runs: ours, NeMo-Gym's agent and model server.
SERVER_DIRS = (
    f"resources_servers/{SERVER_NAME}",
    "responses_api_agents/simple_agent",
    "responses_api_models/vllm_model",
)


def share_venv(
    root: Path, venv: Path | None = None, servers: tuple[str, ...] = SERVER_DIRS
) -> Path:
    """A `uv_venv_dir` in which every server's venv is `venv` (default: this interpreter's),
    for `ng_run +skip_venv_if_present=true +uv_venv_dir=...`: ng_run otherwise builds a uv
    venv per server from its requirements, which needs an index that serves mle-gym."""
    venvs = Path(root) / "venvs"
    target = Path(venv or sys.prefix)
    for server in servers:
        link = venvs / server / ".venv"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(target)
    return venvs


__all__ = [
    "AGENT_NAME",
    "SERVER_NAME",
    "MleGymResourcesServer",
    "MleGymResourcesServerConfig",
    "MleGymVerifyResponse",
    "dataset_row",
    "responses_tools",
    "share_venv",
    "write_environment",
]
