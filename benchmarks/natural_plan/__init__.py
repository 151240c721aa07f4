"""Natural Plan (Zheng et al., Google DeepMind 2024): Trip Planning, Meeting Planning, Calendar Scheduling.

One LLM call per task, no tools; answers are scored by the official scripts' exact rules, quirks included
(`docs/fidelity/natural_plan.md`, reproduced in `evaluation/`).
"""
