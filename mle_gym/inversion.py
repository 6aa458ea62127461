"""Inverting a scaffold that owns its loop into a policy the researcher's loop can step.

Agent scaffolds (AIDE, mini-swe-agent, OpenHands, ...) run their own loop and call out to
execute an action. Here such a scaffold runs in a worker thread and, instead of executing its
action, hands it over and blocks until the observation comes back. `InvertedPolicy.act` is the
other side of that hand-off, so the scaffold fits the ordinary step loop

    action = policy.act(obs, info); obs, reward, terminated, truncated, info = env.step(action)

and a vectorised env can step many scaffolds side by side. The scaffold never sees the env.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The action handed to the env when a scaffold finishes without submitting.
SUBMIT: dict[str, Any] = {"tool": "submit"}


class EpisodeEnded(BaseException):
    """Raised inside the scaffold's thread when the episode is over or the policy is reset.

    A BaseException, like SystemExit, so that a scaffold's broad `except Exception` (used for
    retries and error reporting) does not swallow it and keep going.
    """


class ScaffoldError(RuntimeError):
    """The scaffold's thread failed, or gave no action in time; raised from `act`."""


@dataclass(frozen=True)
class Transition:
    """What the env answered to one action, as the scaffold's thread receives it."""

    observation: str
    info: dict[str, Any]


class Bridge:
    """The scaffold's side of the hand-off: `step(action)` blocks until the env has answered.

    Calls from several threads (scaffolds that run tools in parallel) take turns: the env
    steps one action at a time, and each caller gets the answer to its own action.
    """

    def __init__(self, first: Transition) -> None:
        self.first = first
        self._actions: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._observations: queue.Queue[Transition | None] = queue.Queue()
        self._closed = threading.Event()
        self._turn = threading.Lock()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def step(self, action: Any) -> Transition:
        """Hand `action` to the policy's `act`; return the env's answer once it is stepped.

        A submit ends the episode, so it returns no observation: it raises `EpisodeEnded`.
        """
        with self._turn:
            if self.closed:
                raise EpisodeEnded("the episode is over")
            self._actions.put(("action", action))
            if isinstance(action, dict) and action.get("tool") == "submit":
                self._closed.set()
                raise EpisodeEnded("submitted")
            transition = self._observations.get()
            if transition is None:
                raise EpisodeEnded("the episode is over")
            return transition

    # -- the policy's side -------------------------------------------------------------------
    def _deliver(self, transition: Transition) -> None:
        self._observations.put(transition)

    def _finish(self, kind: str, payload: Any) -> None:
        self._closed.set()
        self._actions.put((kind, payload))

    def _close(self) -> None:
        self._closed.set()
        self._observations.put(None)


#: A scaffold run: given the bridge, drive the scaffold until it finishes or submits.
ScaffoldRun = Callable[[Bridge], None]


class InvertedPolicy:
    """A policy whose `act` hands the observation to a scaffold's thread and awaits its action.

    `run(bridge)` runs the whole scaffold; it sees the first observation as `bridge.first` and
    executes every action with `bridge.step`. When `run` returns without submitting, the
    policy submits the submission present then. `act_timeout` bounds the wait for one action
    (the scaffold's thinking time, LLM calls included) so that a stuck scaffold becomes an
    error, never a hang.
    """

    name = "inverted"

    def __init__(
        self, run: ScaffoldRun, *, act_timeout: float = 1800.0, join_timeout: float = 10.0
    ) -> None:
        self._run = run
        self.act_timeout = act_timeout
        self.join_timeout = join_timeout
        self._bridge: Bridge | None = None
        self._thread: threading.Thread | None = None
        self._done = False

    # -- Policy -------------------------------------------------------------------------------
    def reset(self) -> None:
        """Stop the previous episode's scaffold thread, if any, and forget it."""
        self.close()
        self._done = False

    def act(self, observation: str, info: dict[str, Any]) -> Any:
        transition = Transition(observation, info)
        if self._done:
            return SUBMIT
        if self._bridge is None:
            self._start(transition)
        else:
            self._bridge._deliver(transition)
        return self._next_action()

    def close(self) -> None:
        """End the scaffold's thread: a pending `bridge.step` raises `EpisodeEnded` in it."""
        bridge, thread = self._bridge, self._thread
        self._bridge = self._thread = None
        if bridge is not None:
            bridge._close()
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.join_timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- internals ----------------------------------------------------------------------------
    def _start(self, first: Transition) -> None:
        bridge = Bridge(first)
        self._bridge = bridge
        self._thread = threading.Thread(
            target=self._main, args=(bridge,), name=f"scaffold-{self.name}", daemon=True
        )
        self._thread.start()

    def _main(self, bridge: Bridge) -> None:
        try:
            self._run(bridge)
        except EpisodeEnded:
            return
        except BaseException as exc:  # every failure must reach `act`
            bridge._finish("error", exc)
            return
        bridge._finish("finished", None)

    def _next_action(self) -> Any:
        assert self._bridge is not None
        try:
            kind, payload = self._bridge._actions.get(timeout=self.act_timeout)
        except queue.Empty:
            self.close()
            raise ScaffoldError(
                f"{self.name}: the scaffold gave no action within {self.act_timeout:g} s "
                "(is its LLM endpoint reachable?)"
            ) from None
        if kind == "action":
            if isinstance(payload, dict) and payload.get("tool") == "submit":
                self._done = True
                self.close()
            return payload
        self._done = True
        self.close()
        if kind == "error":
            raise ScaffoldError(
                f"{self.name}: the scaffold stopped with {type(payload).__name__}: {payload}"
            ) from payload
        return SUBMIT
