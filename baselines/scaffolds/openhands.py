"""OpenHands (V1 SDK, `openhands-sdk`/`openhands-tools` 1.58.0; Python >= 3.12) driving an
mle_gym env: its terminal and file-editor tools execute through `env.step`.

The seam is the SDK's `ToolExecutor.__call__(action, conversation) -> Observation`: the
terminal tool takes an executor as a `create` parameter; the file editor's is swapped for
ours on the tool it creates. The conversation's loop runs inverted (`mle_gym.inversion`);
its `finish` tool ends the run, and the policy then submits. `echo MLE_GYM_VALIDATE` in the
terminal is the env's `validate`. The conversation's own workspace is a scratch directory on
the host that nothing runs in.
"""

from __future__ import annotations

import os
import tempfile
import threading
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

# Before the SDK and litellm are imported: no banner, and litellm's bundled cost map
# instead of fetching one from the network.
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from litellm.litellm_core_utils.llm_response_utils import convert_dict_to_response
from openhands.sdk import LLM, Agent, Conversation, Tool
from openhands.sdk.agent import agent as openhands_agent
from openhands.sdk.agent import utils as openhands_agent_utils
from openhands.sdk.tool import ToolExecutor, register_tool
from openhands.tools.file_editor import (
    FileEditorAction,
    FileEditorObservation,
    FileEditorTool,
)
from openhands.tools.terminal import TerminalAction, TerminalObservation, TerminalTool
from openhands.tools.terminal.metadata import CmdOutputMetadata
from pydantic import SecretStr

from mle_gym_baselines.llm_agent.endpoint import Endpoint
from mle_gym_baselines.llm_agent.retry import RetryPolicy
from mle_gym_baselines.scaffolds.common import (
    VALIDATE_HINT,
    VALIDATE_SIGNAL,
    is_signal,
    task_prompt,
)
from mle_gym_baselines.scaffolds.model_json import decode_errors_as_json_errors
from mle_gym.inversion import Bridge, InvertedPolicy

if TYPE_CHECKING:
    from openhands.sdk.conversation.state import ConversationState

decode_errors_as_json_errors(convert_dict_to_response, openhands_agent, openhands_agent_utils)
litellm.suppress_debug_info = True  # no help banner after each failed call

#: The bridges of running episodes, by id: tool parameters must be JSON, so they name one.
_BRIDGES: dict[str, Bridge] = {}
_BRIDGES_LOCK = threading.Lock()


class GymTerminalExecutor(ToolExecutor[TerminalAction, TerminalObservation]):
    """The terminal tool's executor: each command is one env `bash` step."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    def __call__(self, action: TerminalAction, conversation: Any = None) -> TerminalObservation:
        if action.is_input or action.reset:
            return TerminalObservation.from_text(
                "Not available here: each command runs to completion (or to the env's time "
                "limit) in a persistent shell; send a new command instead.",
                is_error=True,
                command=action.command,
            )
        if is_signal(action.command, VALIDATE_SIGNAL):
            answer = self.bridge.step({"tool": "validate"})
            code = 0
        else:
            answer = self.bridge.step({"tool": "bash", "command": action.command})
            code = answer.info.get("exit_code")
        return TerminalObservation.from_text(
            answer.observation,
            command=action.command,
            exit_code=code,
            timeout=bool(answer.info.get("timed_out")),
            metadata=CmdOutputMetadata(exit_code=-1 if code is None else code),
        )


class GymFileEditorExecutor(ToolExecutor[FileEditorAction, FileEditorObservation]):
    """The file editor's executor: view/create/str_replace/insert are the env's own tools."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge

    def __call__(self, action: FileEditorAction, conversation: Any = None) -> FileEditorObservation:
        if action.command == "undo_edit":
            return FileEditorObservation.from_text(
                "undo_edit is not available here; edit the file again instead.",
                is_error=True,
                command=action.command,
                path=action.path,
            )
        fields = ("path", "file_text", "old_str", "new_str", "insert_line", "view_range")
        call = {
            "tool": action.command,
            **{k: getattr(action, k) for k in fields if getattr(action, k) is not None},
        }
        answer = self.bridge.step(call)
        failed = answer.observation.startswith(("Error:", "Invalid action:"))
        return FileEditorObservation.from_text(
            answer.observation, is_error=failed, command=action.command, path=action.path
        )


class GymTerminalTool(TerminalTool):
    """OpenHands' terminal (same name, schema and description), executing in the env."""

    name = TerminalTool.name

    @classmethod
    def create(
        cls, conv_state: ConversationState, episode: str = "", **_options: Any
    ) -> Sequence[TerminalTool]:
        return TerminalTool.create(conv_state, executor=GymTerminalExecutor(_BRIDGES[episode]))


class GymFileEditorTool(FileEditorTool):
    """OpenHands' file editor (same name, schema and description), executing in the env.

    Its description names the working directory: the sandbox's code directory, not the
    conversation's scratch directory on the host.
    """

    name = FileEditorTool.name

    @classmethod
    def create(
        cls, conv_state: ConversationState, episode: str = "", code_dir: str = ""
    ) -> Sequence[FileEditorTool]:
        scratch = conv_state.workspace.working_dir
        executor = GymFileEditorExecutor(_BRIDGES[episode])
        return [
            tool.model_copy(
                update={
                    "executor": executor,
                    "description": tool.description.replace(scratch, code_dir),
                }
            )
            for tool in FileEditorTool.create(conv_state)
        ]


register_tool(GymTerminalTool.__name__, GymTerminalTool)
register_tool(GymFileEditorTool.__name__, GymFileEditorTool)


class OpenHandsPolicy(InvertedPolicy):
    """An OpenHands `Agent` with its terminal and file editor, on an OpenAI-compatible
    endpoint (through litellm as `openai/<model>`).

    `num_retries`/`retry_min_wait`/`retry_max_wait` are the SDK's LLM retry settings
    (default: the shared bound's retries and waits, baselines/llm_agent/retry.py);
    `max_iterations` bounds the conversation's own loop. `conversation` is the last run's,
    for its events and statistics.
    """

    name = "openhands"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        num_retries: int | None = None,
        retry_min_wait: int | None = None,
        retry_max_wait: int | None = None,
        max_iterations: int = 500,
        act_timeout: float = 1800.0,
    ) -> None:
        super().__init__(self._run, act_timeout=act_timeout)
        self.endpoint = Endpoint.resolve(base_url, model, api_key)
        retry = RetryPolicy.from_environment()
        self.llm_options = {
            "num_retries": retry.max_retries if num_retries is None else num_retries,
            "retry_min_wait": int(retry.backoff) if retry_min_wait is None else retry_min_wait,
            "retry_max_wait": int(retry.max_backoff) if retry_max_wait is None else retry_max_wait,
        }
        self.max_iterations = max_iterations
        self.conversation: Any = None

    def _run(self, bridge: Bridge) -> None:
        llm = LLM(
            model=f"openai/{self.endpoint.model}",
            base_url=self.endpoint.base_url,
            api_key=SecretStr(self.endpoint.api_key),
            usage_id="agent",
            **self.llm_options,
        )
        code_dir = bridge.first.info["paths"]["code"]
        episode = uuid.uuid4().hex
        agent = Agent(
            llm=llm,
            tools=[
                Tool(name=GymTerminalTool.__name__, params={"episode": episode}),
                Tool(
                    name=GymFileEditorTool.__name__,
                    params={"episode": episode, "code_dir": code_dir},
                ),
            ],
        )
        with _BRIDGES_LOCK:
            _BRIDGES[episode] = bridge
        try:
            with tempfile.TemporaryDirectory(prefix="mle-gym-openhands-") as scratch:
                self.conversation = Conversation(
                    agent=agent,
                    workspace=scratch,
                    visualizer=None,
                    max_iteration_per_run=self.max_iterations,
                )
                self.conversation.send_message(
                    f"{task_prompt(bridge.first.info)}\n\nWork in {code_dir}. "
                    f"{VALIDATE_HINT} Call `finish` once the submission is written and valid."
                )
                self.conversation.run()
        finally:
            with _BRIDGES_LOCK:
                _BRIDGES.pop(episode, None)

    @property
    def usage(self) -> dict[str, Any]:
        """Tokens and cost as the SDK counted them (cost 0 for unpriced models)."""
        if self.conversation is None:
            return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
        metrics = self.conversation.conversation_stats.get_combined_metrics()
        tokens = metrics.accumulated_token_usage
        return {
            "calls": len(metrics.token_usages),
            "prompt_tokens": tokens.prompt_tokens if tokens else 0,
            "completion_tokens": tokens.completion_tokens if tokens else 0,
            "cost_usd": metrics.accumulated_cost,
        }
