"""Content-addressed disk cache of LLM calls (diskcache, sha256 keys over canonical JSON)."""
