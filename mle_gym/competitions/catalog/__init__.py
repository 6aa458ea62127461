"""One module per competition; each defines `COMPETITION` (see `mle_gym.competitions.spec`)."""
