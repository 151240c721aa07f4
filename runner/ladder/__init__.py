"""The call ladder: what one LLM call goes through (cache, spend cap, rate limits, retries, batch APIs)."""
