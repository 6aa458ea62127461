"""One episode's MLE-bench container layout (`task="mlebench"`): its files at MLE-bench's
paths, read-only, and its validation endpoint on the sandbox's own localhost:5000.

Before the sandbox starts: MLE-bench's text (from the user's checkout) is written to a host
directory of this process's own and shown at /home/instructions.txt,
/home/validate_submission.sh and /home/data/description.md (beside the public data, which
is not touched), and the host side of the endpoint listens on a unix socket. Once the
sandbox runs: only its agent may connect, and the relay starts on 127.0.0.1:5000. With a
writable /home (an MLE-bench agent folder, mle_gym.harness) the instructions are instead
copied into it then, as the agent's own to edit.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from mle_gym.envs.mlebench_task import (
    DESCRIPTION_NAME,
    INSTRUCTIONS_PATH,
    OBFUSCATED_INSTRUCTIONS_PATH,
    VALIDATE_SCRIPT_PATH,
    VALIDATION_PORT,
    MLEBenchTask,
)
from mle_gym.sandbox.base import ReadOnlyBind, ReadOnlyFile, Sandbox
from mle_gym.sandbox.nvidia_devices import listed_gpus
from mle_gym.sandbox.scratch import owned_dir
from mle_gym.sandbox.socket_route import RELAY_NAME, open_route, reopen_note

#: Inside the sandbox: the relay script and the endpoint's socket.
ENDPOINT_DIR = "/opt/mle-gym-grading"
#: Inside the sandbox, with a writable /home: the instructions copied into it at the start.
HOME_COPY_DIR = "/opt/mle-gym-home"
_SOCKET = "grading.sock"


def hardware(gpus: Any) -> str:
    """What MLE-bench's start scripts put in $HARDWARE: "a CPU", or the GPUs by name and
    count as nvidia-smi lists them (here, the host's, as many as the sandbox gets)."""
    if not gpus:
        return "a CPU"
    names = [name for name, _driver in listed_gpus()]
    if isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0:
        names = names[:gpus]
    counts = Counter(names)
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "a GPU"


class MLEBenchSetup:
    """The files and the endpoint of one episode; `close()` removes both."""

    def __init__(self, task: MLEBenchTask, endpoint_options: dict[str, Any]) -> None:
        from mle_gym.envs.grading_endpoint import GradingEndpoint  # only in this mode

        self.task = task
        self._files_dir = owned_dir("mlebench-files")
        self._endpoint_dir = owned_dir("mlebench-endpoint")
        self._upload_dir = owned_dir("mlebench-upload")
        self._copy_home = False
        self.endpoint = GradingEndpoint(
            self._endpoint_dir / _SOCKET, self._upload_dir, **endpoint_options
        )

    def mounts(
        self, data_dir: str, copy_home: bool = False
    ) -> tuple[list[ReadOnlyBind], list[ReadOnlyFile]]:
        """Write the files, start the endpoint; what the sandbox must show. `copy_home`:
        the instructions are not shown read-only but copied into the (writable) /home by
        `connect`, so that an agent may edit them as MLE-bench's do."""
        task = self.task
        instructions = {INSTRUCTIONS_PATH: task.instructions}
        if task.other_instructions is not None:
            instructions[OBFUSCATED_INSTRUCTIONS_PATH] = task.other_instructions
        shown = {
            f"{data_dir}/{DESCRIPTION_NAME}": task.description,
            VALIDATE_SCRIPT_PATH: task.validate_script,
        }
        binds = [ReadOnlyBind(self._endpoint_dir, ENDPOINT_DIR)]
        if copy_home:
            home = self._files_dir / "home"
            home.mkdir(mode=0o755)
            for target, text in instructions.items():
                (home / Path(target).name).write_text(text, encoding="utf-8")
                (home / Path(target).name).chmod(0o644)
            binds.append(ReadOnlyBind(home, HOME_COPY_DIR))
            self._copy_home = True
        else:
            shown.update(instructions)
        files = []
        for index, (target, text) in enumerate(shown.items()):
            source = self._files_dir / f"{index}-{Path(target).name}"
            source.write_text(text, encoding="utf-8")
            source.chmod(0o755 if target == VALIDATE_SCRIPT_PATH else 0o644)
            files.append(ReadOnlyFile(source, target))
        from mle_gym.sandbox import socket_relay as relay

        shutil.copyfile(relay.__file__, self._endpoint_dir / RELAY_NAME)
        self.endpoint.start()
        return binds, files

    def connect(self, sandbox: Sandbox) -> None:
        """Let the sandbox's agent (and nobody else) reach the endpoint, and start the relay
        on the sandbox's localhost:5000."""
        before = ""
        if self._copy_home:  # once: later shells find them where the agent left them
            self._copy_home = False
            before = f"cp -R {HOME_COPY_DIR}/. /home/"
        open_route(
            sandbox,
            self.endpoint,
            VALIDATION_PORT,
            ENDPOINT_DIR,
            "MLE-bench's validation endpoint",
            before=before,
        )

    def reconnect(self, sandbox: Sandbox) -> str:
        """After a new shell (on the local backend a new sandbox process, in new namespaces):
        admit it and start the relay again; or a note for the agent saying why not."""
        return reopen_note(lambda: self.connect(sandbox))

    def close(self) -> None:
        self.endpoint.close()
        for directory in (self._files_dir, self._endpoint_dir, self._upload_dir):
            shutil.rmtree(directory, ignore_errors=True)
