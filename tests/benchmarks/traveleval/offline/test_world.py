"""The generated world: deterministic, read by the real importer and query loader, and every query of it planned by
the oracle with every preference kept and within budget (the demo's premise)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.traveleval import dataset
from benchmarks.traveleval.offline.mistakes import MISTAKES, NOISY, injected_mistake, make_mistake
from benchmarks.traveleval.offline.plan_builder import build_plan
from benchmarks.traveleval.offline.world import TravelEvalWorld, generate_world
from benchmarks.traveleval.sandbox.sandbox import Sandbox


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*.json*"))
            + sorted(folder.rglob("*.csv"))}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    generate_world(tmp_path / "a", seed=3)
    generate_world(tmp_path / "b", seed=3)
    generate_world(tmp_path / "c", seed=4)
    assert _files(tmp_path / "a") == _files(tmp_path / "b") != _files(tmp_path / "c")


def test_the_real_loaders_read_it(world: TravelEvalWorld, world_sandbox: Sandbox) -> None:
    tasks = dataset.load_tasks(world.folder, "all")
    assert len(tasks) == world.queries == 9
    assert {task.input["tag"] for task in tasks} == {"easy", "medium", "hard"}
    steps = dataset.load_tasks(world.folder, "progressive")
    assert [(task.id, task.input["step"]) for task in steps] == [("G01-1", 1), ("G01-2", 2), ("G01-3", 3)]
    assert set(world_sandbox.cities()) == {"beijing", "shanghai", "hangzhou"}
    for city in ("北京", "上海", "杭州"):
        names = set(world_sandbox.poi_names(city))
        assert {a.name for a in world_sandbox.attractions(city)} <= names
        assert {h.name for h in world_sandbox.hotels(city)} <= names
        assert world_sandbox.trains(city, "上海" if city != "上海" else "北京")


def test_the_oracle_keeps_every_preference_and_the_budget(world: TravelEvalWorld, world_sandbox: Sandbox) -> None:
    tasks = dataset.load_tasks(world.folder, "all") + dataset.load_tasks(world.folder, "progressive")
    for task in tasks:
        query = task.input
        plan = build_plan(world_sandbox, query)
        assert plan is not None
        itinerary = plan["itinerary"]
        assert itinerary["summary"]["is_within_budget"], task.id
        legs = [leg["transportation_to"] for leg in itinerary["intercity_transport"]["transport_type"]]
        wanted = query["transportation"].get("preferences")
        assert not wanted or set(legs) <= set(wanted)
        hotel = world_sandbox.hotel(query["target_city"], itinerary["accommodation"]["hotel_name"])
        assert hotel is not None
        features = query["accommodations"].get("preferences")
        assert not features or hotel.featurehoteltype in features
        meals = {activity["details"]["cuisine"] for day in itinerary["daily_plans"] for activity in day["activities"]
                 if activity["type"] == "meal"}
        assert set(query["diet"].get("preferences") or ()) <= meals
        assert not meals & set(query["diet"].get("constraints") or ())


def test_every_mistake_drawn_for_the_world_is_made(world: TravelEvalWorld, world_sandbox: Sandbox) -> None:
    """The demo checks the noisy model's mistakes by the query alone: none may lack a hold in its plan."""
    drawn = []
    for task in dataset.load_tasks(world.folder, "all") + dataset.load_tasks(world.folder, "progressive"):
        mistake = injected_mistake(task.input, NOISY.default)
        if mistake is not None:
            drawn.append(mistake.name)
            assert make_mistake(world_sandbox, task.input, mistake) is not None, (task.id, mistake.name)
    assert set(drawn) == {mistake.name for mistake in MISTAKES}  # the demo checks every kind
    for mistake in MISTAKES:  # and each kind can be made on some world query
        assert any(mistake.admits(t.input) and make_mistake(world_sandbox, t.input, mistake) is not None
                   for t in dataset.load_tasks(world.folder, "all")), mistake.name
