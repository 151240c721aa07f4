"""The official prompts keep their fields and their typos (a "fixed" prompt changes the benchmark's numbers)."""

from __future__ import annotations

import string

import pytest

from benchmarks.travelplanner import prompts
from benchmarks.travelplanner.agents.planner_tool import template_parts


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize(("template", "expected"), [
    (prompts.ZEROSHOT_REACT_INSTRUCTION, {"query", "scratchpad"}),
    (prompts.PLANNER_INSTRUCTION, {"text", "query"}),
    (prompts.COT_PLANNER_INSTRUCTION, {"text", "query"}),
    (prompts.REACT_PLANNER_INSTRUCTION, {"text", "query", "scratchpad"}),
    (prompts.REACT_REFLECT_PLANNER_INSTRUCTION, {"text", "query", "scratchpad", "reflections"}),
    (prompts.REFLECT_INSTRUCTION, {"text", "query", "scratchpad"}),
])
def test_template_fields(template, expected):
    assert fields(template) == expected


@pytest.mark.parametrize(("template", "sic"), [
    (prompts.ZEROSHOT_REACT_INSTRUCTION, "collect engough information to input to the Planner tool. \n\nEach action"),
    (prompts.ZEROSHOT_REACT_INSTRUCTION, "the information stroed in Notebook.\nParameters: \nQuery:"),
    (prompts.ZEROSHOT_REACT_INSTRUCTION, "GoogleDistanceMatrix[Paris, Lyon, self-driving]"),  # renamed in 1a796cb
    (prompts.PLANNER_INSTRUCTION, "7 people from Ithaca to Charlotte spanning 3 days, from March 8th to March 14th"),
    (prompts.PLANNER_INSTRUCTION, "Day 3:\nCurrent City: from Charlotte to Ithaca\n"),
    (prompts.COT_PLANNER_INSTRUCTION, "(i.e., from A to B). \n\n***** Example *****"),
    (prompts.REACT_PLANNER_INSTRUCTION, 'CostEnquiry[{{"people_number": 7,"day": 1,'),
    (prompts.REACT_PLANNER_INSTRUCTION, "You can call Finish like Finish[Day: 1\nCurrent City:"),
    (prompts.REACT_PLANNER_INSTRUCTION, "You must use Finish to indict you have finished the task."),
    (prompts.REFLECT_INSTRUCTION, "based on self refection."),
    (prompts.REFLECT_INSTRUCTION, "Use complete sentences.  \n\nGiven information:"),
])
def test_official_wording_is_kept(template, sic):
    assert sic in template


def test_endings():
    assert prompts.COT_PLANNER_INSTRUCTION.endswith("Travel Plan: Let's think step by step. First, ")
    assert prompts.REACT_PLANNER_INSTRUCTION.endswith("Query: {query}{scratchpad} ")
    assert prompts.REACT_REFLECT_PLANNER_INSTRUCTION.endswith("Query: {query}{scratchpad} ")
    assert prompts.REFLECTION_HEADER.endswith("correctly planning.\n")
    rendered = prompts.REACT_PLANNER_INSTRUCTION.format(text="T", query="Q", scratchpad="")
    assert 'CostEnquiry[{"people_number": 7,' in rendered  # the template's doubled braces render single


def test_the_extraction_prefix_is_never_formatted():
    prompt = prompts.extraction_prompt("Day 1: {x}")
    assert prompt.startswith(prompts.EXTRACTION_PREFIX) and prompt.endswith("Text:\nDay 1: {x}\nJSON:\n")
    assert ' [{{\n        "days": 1,' in prompt and '"accommodation": "-"\n    }}]\n-----EXAMPLE END-----' in prompt


@pytest.mark.parametrize(("template", "names"), [
    (prompts.ZEROSHOT_REACT_INSTRUCTION, ("query", "scratchpad")),
    (prompts.PLANNER_INSTRUCTION, ("text", "query")),
    ("{a}{{literal}}{b}", ("a", "b")),
    ("{a} ends with a field: {b}", ("a", "b")),
])
def test_a_template_filled_by_its_parts_is_what_format_writes(template, names):
    parts = template_parts(template, *names)
    values = {name: f"<{name} with {{braces}} and\nlines>" for name in names}
    filled = parts[0] + "".join(values[name] + part for name, part in zip(names, parts[1:], strict=True))
    assert filled == template.format(**values)


@pytest.mark.parametrize("names", [("scratchpad", "query"), ("query",), ("query", "scratchpad", "extra")])
def test_template_parts_refuse_other_fields(names):
    with pytest.raises(ValueError, match="template fields"):
        template_parts(prompts.ZEROSHOT_REACT_INSTRUCTION, *names)
