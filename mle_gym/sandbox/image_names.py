"""The tags of the images mle_gym builds, apart from the builder: naming the default image
(a Harbor export does) needs no Docker SDK."""

DEFAULT_IMAGE = "mle-gym-agent:latest"
OFFLINE_IMAGE = "mle-gym-agent:offline"
