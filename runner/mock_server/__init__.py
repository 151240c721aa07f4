"""A local OpenAI- and Anthropic-compatible LLM server with fault injection, for tests, demos and benchmarks.

A development tool, not a provider: `tripbench mock-server` and `tripbench demo` start it, and the providers reach it
over HTTP as they reach the APIs it imitates."""

from providers.scripted_replies import MockReply, MockRequest
from runner.mock_server.app import create_app
from runner.mock_server.config import Faults, Latency, MockConfig, load_config
from runner.mock_server.faults import FaultPlan
from runner.mock_server.replies import echo_reply
from runner.mock_server.server import RunningServer, serve
from runner.mock_server.state import MOCK_STATE, ReceivedRequest, Tally

__all__ = [
    "MOCK_STATE",
    "FaultPlan",
    "Faults",
    "Latency",
    "MockConfig",
    "MockReply",
    "MockRequest",
    "ReceivedRequest",
    "RunningServer",
    "Tally",
    "create_app",
    "echo_reply",
    "load_config",
    "serve",
]
