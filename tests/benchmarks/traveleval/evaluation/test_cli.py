"""`tripbench evaluate PLANS.jsonl --benchmark traveleval` in a subprocess: one strict-JSON result per line, the
query found by uid (a _schemeN copy included), a bad line reported and counted, the table without --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.traveleval.evaluation import plans
from tests.runner.engine_support import run_cli


def write_plans(folder: Path, lines: list[str]) -> Path:
    path = folder / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_hostile_lines_are_error_results_and_every_other_plan_is_scored(data_dir: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMAP_API_KEY", raising=False)
    plan = {**plans.plan(), "query_uid": "T0201"}
    path = write_plans(tmp_path, ['{"query_uid": NaN, "itinerary": {}}', '{"query_uid": "T0201", "n": ' + "9" * 5000
                                  + "}", "[" * 100_000, json.dumps(plan, ensure_ascii=False)])
    done = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--json", "--data-dir", str(data_dir))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.get("error") for r in results[:3]] == [
        "no TravelEval query with uid nan",
        f"{path}:2: not readable JSON (Exceeds the limit (4300 digits) for integer string conversion: value has "
        "5000 digits)",
        f"{path}:3: JSON nested too deeply (more than 64 levels)"]
    assert "metrics" in results[3]


def test_a_place_name_too_long_to_match_is_left_as_written_and_said(data_dir: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Fuzzy matching costs the product of the lengths: a 100,000-character name took two minutes; it is not matched."""
    monkeypatch.delenv("AMAP_API_KEY", raising=False)
    plan = {**plans.plan(), "query_uid": "T0201"}
    plan["itinerary"]["daily_plans"][0]["activities"][0]["location_name"] = "故宫" * 50_000
    path = write_plans(tmp_path, [json.dumps(plan, ensure_ascii=False)])
    done = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--json", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["not_standardized"] == ["故宫" * 20 + "… (100,000 characters: too long to match)"]
    assert "metrics" in result


def test_json_results_per_plan(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMAP_API_KEY", raising=False)
    plan = plans.plan()
    plan["query_uid"] = "T0201"  # a staged query: 北京 -> 上海, so the plan's own Beijing sandbox differs
    second = {**plan, "query_uid": "T0201_scheme1"}
    unknown = {**plan, "query_uid": "T9999"}
    # the official loop strips "_scheme1", then "_scheme2", then "_scheme3", anywhere; "_scheme4" is never stripped
    third, fifth = {**plan, "query_uid": "T0201_scheme1_scheme2"}, {**plan, "query_uid": "T0201_scheme4"}
    path = write_plans(tmp_path, [json.dumps(p, ensure_ascii=False) for p in (plan, second, unknown, third, fifth)]
                       + ["not json", "[1, 2]"])
    done = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--json", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["query_uid"] for r in results] == ["T0201", "T0201_scheme1", "T9999", "T0201_scheme1_scheme2",
                                                 "T0201_scheme4", None, None]
    assert {(r["mode"], r["distance"]) for r in results} == {("official", "offline")}
    assert results[0]["metrics"] == results[1]["metrics"]
    assert results[0]["metrics"]["space"] == {"RP": 0.0, "CSM": {}}
    assert results[2]["error"] == "no TravelEval query with uid 'T9999'"
    assert results[3]["metrics"] == results[0]["metrics"]
    assert results[4]["error"] == "no TravelEval query with uid 'T0201_scheme4'"
    assert results[5]["error"].startswith(f"{path}:6: not valid JSON")
    assert results[6]["error"] == f"{path}:7: expected a FinalTravelPlan object, got list"

    corrected = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--json", "--data-dir", str(data_dir),
                        "--mode", "corrected", "--distance", "offline")
    first = json.loads(corrected.stdout.splitlines()[0])
    assert first["mode"] == "corrected"
    # the query goes to Shanghai: there the plan's Beijing attractions are all fictitious
    assert results[0]["metrics"]["accuracy"]["fictitious_attraction_rate"] == 0.0
    assert first["metrics"]["accuracy"]["fictitious_attraction_rate"] == 1.0


def test_the_table_and_a_missing_key(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMAP_API_KEY", raising=False)
    plan = plans.plan()
    plan["query_uid"] = "T0201"
    path = write_plans(tmp_path, [json.dumps(plan, ensure_ascii=False), "{}"])
    done = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--data-dir", str(data_dir))
    assert done.returncode == 0, done.stderr
    assert "1 of 2 plans scored (official mode, offline distances, names standardized)" in done.stdout
    assert "budget_satisfaction" in done.stdout
    rows = {cells[2]: cells[3:] for line in done.stdout.splitlines()
            if len(cells := [cell.strip() for cell in line.split("│")]) > 6}
    assert rows["BCS"][0] == "budget_satisfaction"  # the paper's name, then the official key
    assert rows["ETD (RMB)"][0] == "cost_distribution.intercity_transportation"
    # the official stand-ins (RP 0.0, CSM {}, no transfer checked) are "not measured", as the report says, with
    # the number of plans the value rests on (none) and the number not measured
    for name, key in (("SSR", "RP"), ("CSM P90", "CSM.P90"), ("FRTC", "transportation_breaks")):
        assert rows[name][:4] == [key, "not measured", "0", "1"]
    assert "error: None: no TravelEval query with uid None" in done.stdout
    refused = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--data-dir", str(data_dir),
                      "--distance", "amap")
    assert refused.returncode != 0
    assert "AMAP_API_KEY" in refused.stderr + refused.stdout
    assert "Traceback" not in refused.stderr


@pytest.mark.parametrize("flags", [(), ("--json",)])
def test_an_empty_file_is_named_not_scored(data_dir: Path, tmp_path: Path, flags: tuple[str, ...]) -> None:
    (tmp_path / "plans.jsonl").write_text("")
    done = run_cli("evaluate", str(tmp_path / "plans.jsonl"), "--benchmark", "traveleval", "--data-dir",
                   str(data_dir), *flags)
    assert done.returncode == 1 and "Traceback" not in done.stderr and not done.stdout, done.stdout + done.stderr
    assert "plans.jsonl: empty: expected one FinalTravelPlan object per line" in done.stderr


def test_names_standardized_first_as_the_official_pipeline_does(data_dir: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMAP_API_KEY", raising=False)
    plan = plans.plan()
    plan["query_uid"] = "T0201"
    plan["itinerary"]["daily_plans"][0]["activities"][0]["location_name"] = "游览故宫博物院"  # a verb before the name
    path = write_plans(tmp_path, [json.dumps(plan, ensure_ascii=False)])
    as_given, standardized = (json.loads(run_cli("evaluate", str(path), "--benchmark", "traveleval", "--json",
                                                 "--data-dir", str(data_dir), *flags).stdout)
                              for flags in (("--no-standardize-names",), ()))  # standardized by default
    assert "renamed" not in as_given and as_given["names"] == "as written"
    assert standardized["names"] == "standardized"
    assert as_given["metrics"]["accuracy"]["fictitious_attraction_rate"] == pytest.approx(1 / 3)  # 1 of 3 unknown
    assert standardized["renamed"] == {"游览故宫博物院": "故宫博物院"}
    assert standardized["metrics"]["accuracy"]["fictitious_attraction_rate"] == 0.0
    plan["itinerary"]["daily_plans"][0]["activities"][0]["location_name"] = "故宫博物院"
    exact = write_plans(tmp_path, [json.dumps(plan, ensure_ascii=False)])
    right = json.loads(run_cli("evaluate", str(exact), "--benchmark", "traveleval", "--json", "--data-dir",
                               str(data_dir), "--no-standardize-names").stdout)
    assert standardized["metrics"] == right["metrics"]  # renamed, the plan scores as if written right
    table = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--data-dir", str(data_dir)).stdout
    assert "names standardized" in table


def test_an_evaluator_error_keeps_the_dimensions_before_it(data_dir: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMAP_API_KEY", raising=False)
    plan = {**plans.plan(), "query_uid": "T0201"}
    plan["itinerary"]["daily_plans"][1]["activities"][0]["start_time"] = None  # the time dimension raises
    path = write_plans(tmp_path, [json.dumps(plan, ensure_ascii=False)])
    result = json.loads(run_cli("evaluate", str(path), "--benchmark", "traveleval", "--json", "--data-dir",
                                str(data_dir)).stdout)
    assert result["error"].startswith("time: AttributeError") and list(result["metrics"]) == ["accuracy", "constraint"]
    table = run_cli("evaluate", str(path), "--benchmark", "traveleval", "--data-dir", str(data_dir), "--official-csv",
                    str(tmp_path / "csv"))
    assert "1 of 1 plans scored, 1 of them only partly (an evaluator error" in " ".join(table.stdout.split())
    assert "error: T0201: time: AttributeError" in table.stdout
    header, row = (tmp_path / "csv" / "plans.csv").read_text(encoding="utf-8").splitlines()
    assert row.startswith("T0201,error,") and "detailed_metrics_constraint_budget_satisfaction" in header
    assert "detailed_metrics_time_" not in header  # the official "error" row: the dimensions before it only
