"""A local OpenAI- and Anthropic-compatible LLM server with fault injection, for tests, demos and benchmarks."""

from providers.mock_server.app import create_app
from providers.mock_server.config import Faults, Latency, MockConfig, load_config
from providers.mock_server.faults import FaultPlan
from providers.mock_server.replies import echo_reply
from providers.mock_server.server import RunningServer, serve
from providers.mock_server.state import MOCK_STATE, ReceivedRequest, Tally
from providers.scripted_replies import MockReply, MockRequest

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
