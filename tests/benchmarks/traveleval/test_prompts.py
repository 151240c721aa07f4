"""The prompt contract the offline models rely on: what each strategy shows of the query (its uid and Chinese
request), prompt kinds, and the tool agents' action format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.traveleval import prompts
from benchmarks.traveleval.prompts import ActionError, parse_action

QUERY: dict[str, Any] = {
    "uid": "T0601", "start_city": "北京", "target_city": "上海", "days": 5, "people_number": 2, "budget": 3200,
    "diet": {"preferences": [], "constraints": ["火锅"]},
    "nature_language": "我和朋友想从北京坐高铁去上海玩5天，\n预算3200元。",
}


def _staged_queries(data: Path) -> list[dict[str, Any]]:
    folder = data / "data" / "queries"
    found = [q for name in ("easy", "medium", "hard")
             for q in json.loads((folder / f"{name}.json").read_text())["queries"]]
    groups = json.loads((folder / "progressive.json").read_text())["query_groups"]
    return found + [q for group in groups for q in group]


def test_the_paper_strategies_show_the_uid_and_the_chinese_request_and_nothing_else_of_the_query(
        traveleval_data: Path) -> None:
    queries = _staged_queries(traveleval_data)
    assert len(queries) == 1150
    heads = {"zh": ("查询编号：", "旅行者的请求："), "en": ("Query uid: ", "Request: ")}
    for query in queries:
        for language, (uid, request) in heads.items():
            for kind in ("direct", "cot", "react"):
                user = prompts.paper_user(query, kind, language)
                assert user == (f"{uid}{query['uid']}\n{request}{query['nature_language']}\n\n"
                                f"{prompts.PAPER_TEXTS[language].closing[kind]}")
                assert prompts.find_uid(user) == query["uid"] and prompts.prompt_kind(user) == kind
                system = prompts.paper_system(kind, ["上海虹桥站"], language)
                assert query["nature_language_en"] not in system + user and "QUERY_JSON" not in system + user
            critique = prompts.critique_prompt(json.dumps({"query_uid": query["uid"], "itinerary": {}}), language)
            assert prompts.find_uid(critique) == query["uid"] and prompts.prompt_kind(critique) == "critique"
            assert query["nature_language"] not in critique  # the critic sees only the plan


def test_chinese_is_the_default_of_the_papers_prompts() -> None:
    zh = prompts.PAPER_TEXTS["zh"]
    assert prompts.paper_user(QUERY, "direct") == prompts.paper_user(QUERY, "direct", "zh")
    assert prompts.paper_system("cot", ["上海虹桥站"]) == (f"{zh.role}\n\n{zh.rules['cot']}\n\n"
                                                        f"{zh.stations}上海虹桥站\n\n{zh.plan_format}")
    # the same content in both: the steps of each strategy, the stations, the names' rule and its examples
    for kind in ("direct", "cot", "react"):
        for texts in prompts.PAPER_TEXTS.values():
            assert "故宫博物院" in texts.rules[kind] and "上海迪士尼度假区" in texts.rules[kind]
    assert zh.rules["react"].count("\n   ") == prompts.PAPER_TEXTS["en"].rules["react"].count("\n   ") == 3


OFFICIAL_ENUMS = (
    '"单人房" | "大床房" | "双人房" | "家庭房"',
    '"高铁" | "飞机" | "动车" | "快速" | "特快" | "直达特快"',
    '"步行" | "骑行" | "驾车" | "公交" | "地铁" | "打车" | "包车"',
    '"intercity_transport" | "accommodation",',
)
"""What the official prompt's schema shows as each field's choices (room types, intercity modes, the activities' and
day ends' modes, the day end's types)."""


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_format_gives_the_official_guidance_and_enums_no_more(language: str) -> None:
    shown = prompts.PAPER_TEXTS[language].plan_format
    for enum in OFFICIAL_ENUMS:
        assert enum in shown
    assert shown.count('"步行" | "骑行" | "驾车" | "公交" | "地铁" | "打车" | "包车"') == 2  # activities and day ends
    assert "走路" not in shown and '"accommodation_check_in" | "accommodation"' not in shown  # not in the official's
    for field in ('"transport_time"', '"ticket_type"', '"ticket_price"', '"ticket_number"', '"cuisine"', '"line"',
                  '"bus_number"', '"load_limit"', '"car_number"', '"cost_breakdown"', '"is_within_budget"'):
        assert field in shown
    # what round two added beyond the official guidance is gone; what it left out is there
    for added in ("whole group", "as in the database", "how the group gets", "RMB", "整个团队", "数据库"):
        assert added not in shown
    assert ("intercity transport not among them" if language == "en" else "城际交通不列在这里") in shown
    assert ("transport excluded" if language == "en" else "不含交通") in shown


def test_find_uid_takes_the_first_uid_line_else_the_plans() -> None:
    echoed = {**QUERY, "uid": "T9999"}
    prompt = prompts.react_prompt(QUERY, "tools", ["上海虹桥站"], "\n\nStep 1:\n" + prompts.request_text(echoed))
    assert prompts.find_uid(prompt) == "T0601"
    assert prompts.find_uid('The plan:\n{"query_uid": "G01-2", "itinerary": {}}') == "G01-2"
    assert prompts.find_uid("no query here") is None
    assert prompts.find_uid("  Query uid: T0001") is None  # only at the start of a line
    assert prompts.find_uid("Query uid: ") is None


@pytest.mark.parametrize(("prompt", "kind"), [
    (prompts.paper_user(QUERY, "direct"), "direct"),
    (prompts.paper_user(QUERY, "cot"), "cot"),
    (prompts.paper_user(QUERY, "react"), "react"),
    (prompts.critique_prompt('{"query_uid": "T0601", "itinerary": {}}'), "critique"),
    (prompts.critique_prompt('{"query_uid": "T0601", "itinerary": {}}', "en"), "critique"),
    (prompts.paper_user(QUERY, "cot", "en"), "cot"),
    (prompts.react_prompt(QUERY, "tools", ["上海虹桥站"], "", reflections=["book the hotel first"]), "react-tools"),
    (prompts.reflect_prompt(QUERY, "\n\nStep 1:\nThought: x", "no plan after 30 steps"), "reflect"),
    (prompts.PAPER_CLOSING["direct"], None),  # a closing sentence without a uid is not ours
    (prompts.PAPER_TEXTS["zh"].closing["direct"], None),
    (prompts.request_text(QUERY), None),  # a uid without a task
])
def test_prompt_kind(prompt: str, kind: str | None) -> None:
    assert prompts.prompt_kind(prompt) == kind


def test_a_reflection_is_shown_to_the_next_attempt() -> None:
    prompt = prompts.react_prompt(QUERY, "tools", [], "", reflections=["book the hotel first"])
    assert "- book the hotel first" in prompt
    assert prompt.endswith(prompts.NO_STEPS_YET)  # the first step's prompt (the offline models look for it)


def test_actions_round_trip_through_their_format() -> None:
    step = prompts.format_action("search_hotels", {"city": "上海", "feature": "免费停车"}, thought="a hotel")
    action = parse_action(step)
    assert (action.name, action.arguments, action.thought) == ("search_hotels", {"city": "上海", "feature": "免费停车"},
                                                              "a hotel")
    plan = '{"query_uid": "T0601",\n "itinerary": {}}'
    finish = parse_action(prompts.format_finish(plan, thought="done"))
    assert (finish.name, finish.answer, finish.thought) == ("finish", plan, "done")


@pytest.mark.parametrize(("reply", "name", "arguments"), [
    ("Thought: go\nAction: list_cities", "list_cities", {}),
    ("Thought 3: go\nAction 3: search_trains {\"from_city\": \"北京\", \"to_city\": \"上海\"} trailing words",
     "search_trains", {"from_city": "北京", "to_city": "上海"}),
    ("Action:search_attractions{\"city\":\"上海\"}\nObservation: invented by the model", "search_attractions",
     {"city": "上海"}),
])
def test_parse_action_tolerates_numbering_spacing_and_trailing_text(reply: str, name: str,
                                                                    arguments: dict[str, Any]) -> None:
    action = parse_action(reply)
    assert (action.name, action.arguments) == (name, arguments)


def test_finish_keeps_a_fenced_plan_as_written() -> None:
    reply = 'Thought: ready\nAction: finish\n```json\n{"query_uid": "T1"}\n```'
    assert parse_action(reply).answer == '```json\n{"query_uid": "T1"}\n```'


@pytest.mark.parametrize(("reply", "reason"), [
    ("I think we should search hotels.", "No action found"),
    ("Thought: x\nAction: search_hotels {city: 上海}", "not valid JSON"),
    ("Thought: x\nAction: search_hotels [\"上海\"]", "must be one JSON object"),
    ("Action: search_hotels " + '{"a": ' * 100_000, "nested too deeply"),
])
def test_malformed_steps_are_action_errors_with_a_usable_message(reply: str, reason: str) -> None:
    with pytest.raises(ActionError, match=reason):
        parse_action(reply)
