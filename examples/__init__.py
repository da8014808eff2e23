"""Runnable examples: real local tools, model-style scripts, and an end-to-end demo."""
