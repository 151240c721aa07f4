"""`tripbench pack` and `tripbench replay` with the real CLI and the mock server: a run packed, its server stopped,
replayed in a fresh data home with no key and no cache folder, and proven identical; a pack altered anywhere refused."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
from pathlib import Path

from runner.store.pack import open_pack
from tests.runner.engine_support import CLI, PROJECT_ROOT, run_cli


def _bare_cli(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`tripbench ARGS` with no API key and no proxy in its environment, in a data home of its own."""
    env = {name: value for name, value in os.environ.items() if not name.endswith(("_API_KEY", "_PROXY", "_proxy"))}
    env |= {"PYTHONPATH": str(PROJECT_ROOT), "TRIPBENCH_HOME": str(home)}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, check=False, env=env, cwd=cwd)


async def test_a_packed_run_replays_identically_anywhere_and_an_altered_pack_is_refused(
        start_mock_llm, write_spec, tmp_path: Path, toy_on_path) -> None:
    server = await start_mock_llm()
    spec = write_spec(server.base_url, strategies=["scripted", "silent"], options={"tasks": 8, "max_calls": 4})
    run_dir = tmp_path / "runs" / "toy"
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(run_dir), "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    packed = await asyncio.to_thread(run_cli, "pack", str(run_dir))
    assert packed.returncode == 0, packed.stdout + packed.stderr
    pack = tmp_path / "runs" / "toy.tbpack"
    assert pack.is_file() and "cache entries" in packed.stdout
    await server.close()  # no server from here on: every answer must come from the pack

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    info = _bare_cli("replay", str(pack), "--info", home=elsewhere / "home", cwd=elsewhere)
    assert info.returncode == 0, info.stderr
    facts = json.loads(info.stdout)
    assert facts["format_version"] == "2" and facts["run"] == "toy" and facts["replayed"] is False
    assert not (elsewhere / "toy-replay").exists()  # --info runs nothing

    replayed = _bare_cli("replay", str(pack), "--run-dir", str(elsewhere / "again"), home=elsewhere / "home",
                         cwd=elsewhere)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical: 16/16 rollouts, every table equal" in replayed.stdout
    assert not (elsewhere / "home" / "cache").exists()  # no cache folder was made or read
    report = _bare_cli("report", str(elsewhere / "again"), "--out", str(elsewhere / "report"),
                       home=elsewhere / "home", cwd=elsewhere)
    assert report.returncode == 0, report.stderr
    assert json.loads((elsewhere / "report" / "provenance.json").read_text())["replayed"] is True

    original = pack.read_bytes()
    for position in (3, 40, len(original) // 2, len(original) - 1):
        altered = bytearray(original)
        altered[position] ^= 0x01
        (tmp_path / "altered.tbpack").write_bytes(bytes(altered))
        refused = _bare_cli("replay", str(tmp_path / "altered.tbpack"), "--run-dir", str(elsewhere / "bad"),
                            home=elsewhere / "home", cwd=elsewhere)
        assert refused.returncode in (1, 2) and "Traceback" not in refused.stderr, refused.stderr
        assert "altered" in refused.stderr or "not a tripbench pack" in refused.stderr, refused.stderr
        assert not (elsewhere / "bad").exists()  # refused before anything ran
    (tmp_path / "newer.tbpack").write_bytes(original.replace(b"TBPACK 2", b"TBPACK 3", 1))
    newer = _bare_cli("replay", str(tmp_path / "newer.tbpack"), home=elsewhere / "home", cwd=elsewhere)
    assert newer.returncode == 1 and "pack format 3, this tripbench reads format 2 and older" in newer.stderr


VERSION_1_PACK = Path(__file__).parent / "packs" / "calendar-v1.tbpack"
"""`NATURAL_PLAN`'s run on the staged Natural Plan data, packed by the code of pack format 1."""
NATURAL_PLAN = """benchmark = "natural-plan"
split = "calendar"
strategies = ["direct"]
limit = 3

[[models]]
model = "offline:noisy"
"""


def test_data_other_than_the_packed_runs_is_refused_by_name(natural_plan_data: Path, tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    for home in (here, there):
        assert run_cli("data", "import", str(natural_plan_data), home=home).returncode == 0
    spec = tmp_path / "run.toml"
    spec.write_text(NATURAL_PLAN)
    assert run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet", home=here).returncode == 0
    packed = run_cli("pack", str(tmp_path / "run"), "-o", str(tmp_path / "run.tbpack"), home=here)
    assert packed.returncode == 0, packed.stderr
    with open_pack(tmp_path / "run.tbpack") as pack:  # outputs/ is written again on replay: only its digests packed
        assert pack.version == 2 and not [name for name in pack.names() if name.startswith("outputs/")]

    assert "identical: 3/3 rollouts" in _bare_cli("replay", str(tmp_path / "run.tbpack"), "--run-dir",
                                                  str(tmp_path / "same"), home=there, cwd=tmp_path).stdout
    # a pack of the same run written by tripbench's first pack format (zlib, keys stored, outputs/ packed) still replays
    old = _bare_cli("replay", str(VERSION_1_PACK), "--run-dir", str(tmp_path / "old"), home=there, cwd=tmp_path)
    assert "identical: 3/3 rollouts, every table equal" in old.stdout, old.stdout + old.stderr
    assert sorted(path.name for path in (tmp_path / "old" / "outputs").rglob("*.jsonl")) == [
        "submission.jsonl", "trajectories.jsonl"]

    changed = there / "natural_plan" / "calendar_scheduling.json"
    changed.write_bytes(changed.read_bytes().replace(b"Monday", b"Tuesday", 1))
    refused = _bare_cli("replay", str(tmp_path / "run.tbpack"), "--run-dir", str(tmp_path / "other"), home=there,
                        cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "calendar_scheduling.json: sha256" in refused.stderr
    assert "tripbench data fetch natural-plan" in refused.stderr
    assert not (tmp_path / "other").exists()


async def test_a_team_run_is_packed_from_the_team_database(start_mock_llm, write_spec, tmp_path: Path, team_db: str,
                                                           toy_on_path, monkeypatch) -> None:
    monkeypatch.setenv("TRIPBENCH_TEAM_URL_PACK", team_db)
    server = await start_mock_llm()
    spec = write_spec(server.base_url, options={"tasks": 6, "max_calls": 3},
                      team={"url_env": "TRIPBENCH_TEAM_URL_PACK"})
    done = await asyncio.to_thread(run_cli, "run", str(spec), "--run-dir", str(tmp_path / "team-run"), "--quiet",
                                   home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / "cache").exists()  # the answers are in the team database only
    packed = await asyncio.to_thread(run_cli, "pack", str(tmp_path / "team-run"), home=tmp_path / "home")
    assert packed.returncode == 0, packed.stdout + packed.stderr
    await server.close()
    monkeypatch.delenv("TRIPBENCH_TEAM_URL_PACK")
    replayed = _bare_cli("replay", str(tmp_path / "team-run.tbpack"), home=tmp_path / "elsewhere", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "identical: 6/6 rollouts, every table equal" in replayed.stdout


def test_a_run_of_a_users_own_query_file_carries_it_and_replays_from_the_packed_copy(natural_plan_data: Path,
                                                                                     tmp_path: Path) -> None:
    mine = tmp_path / "mine" / "my_calendar.json"
    mine.parent.mkdir()
    mine.write_bytes((natural_plan_data / "calendar_scheduling_100.json").read_bytes())
    spec = tmp_path / "run.toml"
    spec.write_text(NATURAL_PLAN.replace('split = "calendar"', 'queries = "mine/my_calendar.json"'))
    home, there = tmp_path / "home", tmp_path / "there"
    assert run_cli("run", str(spec), "--run-dir", str(tmp_path / "run"), "--quiet", home=home).returncode == 0
    digest = hashlib.sha256(mine.read_bytes()).hexdigest()
    assert json.loads((tmp_path / "run" / "identity.json").read_text())["data"] == {"my_calendar.json": digest}

    mine.write_bytes(mine.read_bytes().replace(b"Monday", b"Tuesday", 1))  # changed since the run read it
    changed = run_cli("pack", str(tmp_path / "run"), home=home)
    assert changed.returncode == 2 and "my_calendar.json: changed since the run read it" in changed.stderr
    mine.write_bytes((natural_plan_data / "calendar_scheduling_100.json").read_bytes())
    packed = run_cli("pack", str(tmp_path / "run"), home=home)
    assert packed.returncode == 0, packed.stderr
    mine.unlink()  # the replay can only read the pack's copy (and this machine has no Natural Plan data at all)

    info = json.loads(_bare_cli("replay", str(tmp_path / "run.tbpack"), "--info", home=there, cwd=tmp_path).stdout)
    assert info["data_sha256"] == {"my_calendar.json": digest}  # the provenance names the query file
    replayed = _bare_cli("replay", str(tmp_path / "run.tbpack"), "--run-dir", str(tmp_path / "again"), home=there,
                         cwd=tmp_path)
    assert "identical: 3/3 rollouts, every table equal" in replayed.stdout, replayed.stdout + replayed.stderr
    copy = tmp_path / "again" / "queries" / "my_calendar.json"
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == digest
    resumed = _bare_cli("status", str(tmp_path / "again"), home=there, cwd=tmp_path)
    assert resumed.returncode == 0 and "3/3" in resumed.stdout, resumed.stdout + resumed.stderr
