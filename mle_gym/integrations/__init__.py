"""Adapters that plug mle_gym into RL trainers; each imports its framework, an extra."""
