"""Where the LLM is: base URL, model and key, from arguments or the usual variables.

Every LLM-driven policy (the tool-calling agent and the wrapped scaffolds) reads its endpoint
here, so `--base-url/--model/--api-key` and the variables mean the same thing for all of them.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The variable naming the model when no `model=` is given (OpenAI's SDK has none of its own).
MODEL_VARIABLE = "MLE_GYM_MODEL"


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible chat-completions endpoint."""

    base_url: str
    model: str
    api_key: str

    @classmethod
    def resolve(
        cls, base_url: str | None = None, model: str | None = None, api_key: str | None = None
    ) -> Endpoint:
        """Arguments first, then OPENAI_BASE_URL, MLE_GYM_MODEL and OPENAI_API_KEY."""
        model = model or os.environ.get(MODEL_VARIABLE)
        if not model:
            raise ValueError(f"no model: pass model= (--model) or set {MODEL_VARIABLE}")
        url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        # a local server needs no key, but clients insist on one
        key = api_key or os.environ.get("OPENAI_API_KEY") or "none"
        if key == "none" and url.rstrip("/") == DEFAULT_BASE_URL:
            warnings.warn(
                f"no API key for {DEFAULT_BASE_URL}: set OPENAI_API_KEY (or --api-key); "
                "without one every request will be refused (HTTP 401)",
                UserWarning,
                stacklevel=2,
            )
        return cls(url.rstrip("/"), model, key)

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"
