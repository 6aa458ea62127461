# Where the test setup puts its large caches: the optional integrations' venvs and Dolos go
# under $MLE_GYM_HOME (default ~/.cache/mle-gym), beside the prepared data and the agent
# runtime; each variable below places one alone. Exported, so that .ci/setup.d/*.sh installs
# where the tests (and `mle-gym audit plagiarism`) then look. Sourced by tests/run.sh and by
# each setup script, so one run alone installs where the tests look.
cache_root="${MLE_GYM_HOME:-$HOME/.cache/mle-gym}"
export MLE_GYM_OPENHANDS_VENV="${MLE_GYM_OPENHANDS_VENV:-$cache_root/venv-openhands}"
export MLE_GYM_HARBOR_VENV="${MLE_GYM_HARBOR_VENV:-$cache_root/venv-harbor}"
export MLE_GYM_FLOORS_VENV="${MLE_GYM_FLOORS_VENV:-$cache_root/venv-floors}"
export MLE_GYM_NEMO_GYM_VENV="${MLE_GYM_NEMO_GYM_VENV:-$cache_root/venv-nemo-gym}"
export MLE_GYM_OPENENV_VENV="${MLE_GYM_OPENENV_VENV:-$cache_root/venv-openenv}"
export MLE_GYM_DOLOS_DIR="${MLE_GYM_DOLOS_DIR:-$cache_root/dolos}"
unset cache_root
