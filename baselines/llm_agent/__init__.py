"""A compact tool-calling LLM agent on any OpenAI-compatible chat-completions endpoint."""

from mle_gym_baselines.llm_agent.client import ChatClient, EndpointError
from mle_gym_baselines.llm_agent.endpoint import MODEL_VARIABLE, Endpoint
from mle_gym_baselines.llm_agent.policy import LLMAgentPolicy
from mle_gym_baselines.llm_agent.usage import Prices, Usage

__all__ = [
    "MODEL_VARIABLE",
    "ChatClient",
    "Endpoint",
    "EndpointError",
    "LLMAgentPolicy",
    "Prices",
    "Usage",
]
