"""`python -m mle_gym.cli`: the `mle-gym` command."""

import sys

from mle_gym.cli import main

sys.exit(main())
