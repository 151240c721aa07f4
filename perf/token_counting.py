"""Prompt token counting as a ReAct run does it: line by line with remembered lines, beside encoding whole prompts.

Each train query gets a ReAct prompt (the official zero-shot instruction) whose scratchpad grows by one step per
call, each step carrying a real tool output from the query's `reference_information`. Every prompt is counted
three times, as one call counts it: the agent's length check, the gateway's TPM / spend-cap estimate, the mock
server's bill. Baseline, same run: tiktoken encoding each whole prompt. The two counts must agree exactly.

    python perf/token_counting.py              # 45 train queries x 20 steps
    python perf/token_counting.py --smoke   # a smoke size (seconds; CI runs it)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _smoke import parse_args

from benchmarks.travelplanner.dataset import load_queries
from benchmarks.travelplanner.prompts import ZEROSHOT_REACT_INSTRUCTION
from providers import tokens

TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "travelplanner" / "queries" / "train.jsonl"
COUNTS_PER_CALL = 3


def prompts(queries: int, steps: int) -> list[str]:
    """The prompt of every call: per query, the instruction plus a scratchpad one real observation longer each step."""
    out = []
    for query in load_queries(TRAIN)[:queries]:
        observations = [str(entry["Content"]) for entry in query.reference_information or []]
        scratchpad = ""
        for step in range(1, steps + 1):
            observation = observations[(step - 1) % len(observations)]
            scratchpad += (f"Thought {step}: I need the next piece of information.\nAction {step}: "
                           f"CitySearch[Texas]\nObservation {step}: {observation}\n")
            out.append(ZEROSHOT_REACT_INSTRUCTION.format(query=query.query, scratchpad=scratchpad))
    return out


def main(queries: int, steps: int) -> None:
    texts = prompts(queries, steps)
    encoding = tokens.encoding()
    started = time.perf_counter()
    whole = [len(encoding.encode(text, disallowed_special=())) for text in texts for _ in range(COUNTS_PER_CALL)]
    whole_s = time.perf_counter() - started
    tokens._count_chunk.cache_clear()  # start cold: every line is encoded once, in the measured time
    started = time.perf_counter()
    by_line = [tokens.count_text_tokens(text) for text in texts for _ in range(COUNTS_PER_CALL)]
    by_line_s = time.perf_counter() - started
    if by_line != whole:
        raise SystemExit("line-by-line counts differ from whole-text counts")
    calls = len(texts)
    print(f"{calls:,} ReAct calls ({queries} queries x {steps} steps), prompts of {min(map(len, texts)):,} to "
          f"{max(map(len, texts)):,} characters, mean {sum(whole) / len(whole):,.0f} tokens, "
          f"counted {COUNTS_PER_CALL}x per call; counts identical")
    print(f"encode whole prompts (baseline): {whole_s / calls * 1e3:.3f} ms per call")
    print(f"line by line, lines remembered:  {by_line_s / calls * 1e3:.3f} ms per call "
          f"({whole_s / by_line_s:.1f}x faster; {tokens._count_chunk.cache_info().currsize:,} lines remembered)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=45, help="train queries (at most 45)")
    parser.add_argument("--steps", type=int, default=20, help="calls per query, one observation more each")
    args = parse_args(parser, queries=2, steps=5)
    main(args.queries, args.steps)
