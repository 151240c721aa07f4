"""`declared_slots`: the slots an OpenAI-compatible server says it has (llama.cpp's `total_slots` in `GET /props`),
read by the real `openai` SDK over HTTP; what a server says is untrusted, and not saying is no error."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from aiohttp import web

from providers.openai_chat import OpenAIChat
from providers.registry import resolve_model
from runner.mock_server import MockConfig
from tests.local_server import PACKAGES, LlamaServer, gguf_file, model_file


async def declared(url: str, transport: str = "aiohttp", provider: str = "openai-compatible") -> int | None:
    model = resolve_model(f"openai-compatible:smol@{url}" if provider == "openai-compatible" else "openai:gpt-4o-mini",
                          base_url=None if provider == "openai-compatible" else url, transport=transport)
    assert isinstance(model, OpenAIChat)
    try:
        return await model.declared_slots()
    finally:
        await model.aclose()


@pytest.mark.parametrize("transport", ["sdk", "aiohttp"])
async def test_a_server_with_slots_says_how_many(start_mock_llm, transport: str) -> None:
    server = await start_mock_llm(MockConfig(slots=4))
    assert await declared(server.openai_base_url, transport) == 4


async def test_a_server_without_props_says_nothing(mock_llm) -> None:
    assert await declared(mock_llm.openai_base_url) is None  # 404: vLLM's, Ollama's


async def test_openai_itself_is_not_asked(start_mock_llm, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = await start_mock_llm(MockConfig(slots=4))
    assert await declared(server.openai_base_url, provider="openai") is None


@pytest.mark.parametrize("answer", [
    lambda: web.json_response({"total_slots": True}),
    lambda: web.json_response({"total_slots": "4"}),
    lambda: web.json_response({"total_slots": 2.5}),
    lambda: web.json_response({"total_slots": 0}),
    lambda: web.json_response({"total_slots": -3}),
    lambda: web.json_response({"slots": 4}),
    lambda: web.json_response([4]),
    lambda: web.Response(text="<html>not JSON</html>", content_type="text/html"),
    lambda: web.json_response({"error": "unauthorized"}, status=401),
    lambda: web.json_response({"total_slots": 4}, status=500),
], ids=["bool", "string", "float", "zero", "negative", "other-key", "list", "html", "401", "500"])
async def test_an_answer_that_is_no_count_of_slots_says_nothing(props_server, answer) -> None:
    assert await declared(await props_server(answer)) is None


async def test_a_server_that_is_not_running_says_nothing() -> None:
    assert await declared("http://127.0.0.1:9/v1") is None  # nothing listens on the discard port


@pytest.mark.parametrize("native", [True, False], ids=["llama-server", "llama-cpp-python"])
async def test_llama_cpp_servers(tmp_path: Path, native: bool) -> None:
    """llama.cpp's own `llama-server --parallel 3` says 3 (its binary is built from llama.cpp's sources, no package:
    the test runs where `TRIPBENCH_LLAMA_SERVER` names one); llama-cpp-python's server, one request at a time, has no
    `/props` and says nothing."""
    binary = os.environ.get("TRIPBENCH_LLAMA_SERVER") if native else None
    model = gguf_file() if native else model_file()
    if model is None or (native and not binary):
        pytest.skip(f"needs {'TRIPBENCH_LLAMA_SERVER and ' * native}{', '.join(PACKAGES)} (the dev extra)")
    server = LlamaServer(model, n_ctx=512, log=tmp_path / "server.log", native=Path(binary) if binary else None,
                         parallel=3)
    try:
        await asyncio.to_thread(server.wait_ready)
        assert await declared(server.url) == (3 if native else None)
    finally:
        server.stop()


async def test_the_question_goes_where_the_chat_requests_go_not_through_a_proxy_they_do_not_use(
        props_server, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat requests of a compatible server go by aiohttp, which reads no proxy from the environment: the question
    does not either (a proxy would see the key, and could say any number)."""
    proxied: list[str] = []

    def answer() -> web.Response:
        proxied.append("asked")
        return web.json_response({"total_slots": 9})
    proxy = (await props_server(answer)).removesuffix("/v1")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert await declared("http://10.255.255.1:8080/v1") is None  # unroutable: no answer within the 2 s
    assert proxied == []


@pytest.mark.parametrize(("transport", "said"), [("sdk", None), ("aiohttp", 4)])
async def test_an_api_key_a_client_cannot_send_makes_no_error(start_mock_llm, transport: str,
                                                              said: int | None) -> None:
    """httpx refuses a header that is not ASCII before sending (the SDK's chat requests fail the same way, as an
    error of their own); aiohttp sends it."""
    server = await start_mock_llm(MockConfig(slots=4))
    model = OpenAIChat("smol", api_key="sk-é", base_url=server.openai_base_url, provider="openai-compatible",
                       transport=transport)
    try:
        assert await model.declared_slots() == said
    finally:
        await model.aclose()
