"""TravelEval through a standalone `tripbench mock-server --reply oracle` (issue #31): a run spec pointing an
`openai-compatible:` model at it gets the oracle's plans, and a prompt no benchmark's offline model recognises is an
HTTP error (never an answer a cache would keep)."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from benchmarks.base import DELIVERED
from runner.store.results import load_run
from tests.runner.engine_support import CLI, PROJECT_ROOT, interrupt, run_cli


def _post(url: str, content: str) -> tuple[int, dict[str, object]]:
    body = json.dumps({"model": "any-name", "messages": [{"role": "user", "content": content}]}).encode()
    request = urllib.request.Request(f"{url}/chat/completions", body, {"Content-Type": "application/json",
                                                                       "Authorization": "Bearer sk-test"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_traveleval_run_through_a_standalone_mock_server(traveleval_home: Path, tmp_path: Path) -> None:
    with subprocess.Popen([*CLI, "mock-server", "--port", "0", "--reply", "oracle"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True,
                          env={"PYTHONPATH": str(PROJECT_ROOT), "TRIPBENCH_HOME": str(traveleval_home)}) as server:
        try:
            assert server.stdout is not None
            openai_url = next(line.split()[-1] for line in server.stdout if "OpenAI base URL" in line)
            spec = tmp_path / "mock.toml"
            spec.write_text('benchmark = "traveleval"\nsplit = "easy"\nstrategies = ["direct", "reflexion"]\n'
                            f'limit = 2\ncache_dir = "cache"\n\n[[models]]\nname = "via-mock"\n'
                            f'model = "openai-compatible:any-name@{openai_url}"\n'
                            'prices = { input = 0.0, output = 0.0 }\n')
            done = run_cli("run", str(spec), "--quiet", home=traveleval_home)
            assert done.returncode == 0, done.stderr
            for _ in range(2):  # refused each time: nothing was made up, so nothing can be replayed
                status, answer = _post(openai_url, "Plan me a trip to Rome.")
                assert status == 400, answer
                assert "no installed benchmark's offline model recognises this prompt" in json.dumps(answer)
        finally:
            interrupt(server)
    with load_run(tmp_path / "runs" / "mock") as results:
        rollouts = results.rollouts
        calls = {(r.key.strategy, r.key.task): len(results.calls(r.id)) for r in rollouts}
    assert {r.status for r in rollouts} == {DELIVERED}, [(r.key, r.error) for r in rollouts]
    assert calls == {("direct", "T0001"): 1, ("direct", "T0002"): 1, ("reflexion", "T0001"): 2,
                     ("reflexion", "T0002"): 2}
