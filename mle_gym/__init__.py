"""mle_gym: every MLE-bench competition as a Gymnasium environment.

Importing the package registers `mle/<id>-v0` for every competition, so
`gym.make("mle_gym:mle/<id>-v0")` works in fresh worker processes too.
"""

from mle_gym.envs.registration import register_all
from mle_gym.runner import run_episode as run_episode
from mle_gym.vector import make_vec  # noqa: F401  (mle_gym.make_vec)

__version__ = "0.1.0"

ENV_IDS = register_all()

__all__ = ["ENV_IDS", "__version__"]
