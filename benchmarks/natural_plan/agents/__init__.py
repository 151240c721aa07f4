"""Natural Plan's strategies: `direct`, the official prompt in one call."""
