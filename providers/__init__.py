"""Every LLM behind one async interface, the price table, and a local OpenAI/Anthropic-compatible mock server."""
