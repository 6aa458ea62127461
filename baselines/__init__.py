"""Policies that drive an mle_gym env through its public API only."""
