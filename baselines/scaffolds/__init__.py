"""Agent scaffolds that own their loop (mini-swe-agent, AIDE, OpenHands), inverted into
policies with `mle_gym.inversion`. Each adapter uses only its scaffold's public seams; the
scaffolds are optional extras, imported when their policy is made."""
