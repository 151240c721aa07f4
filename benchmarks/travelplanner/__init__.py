"""TravelPlanner (Xie et al., ICML 2024): sandbox tools, agents, evaluator, reproducing the official code."""
