"""Every folder that holds package data is a package of the build configuration, so
setuptools ships its files as a package's (recent setuptools prints a ~40-line deprecation
banner for each data folder that is not one, on every install)."""

from __future__ import annotations

from pathlib import PurePosixPath

from setuptools.config.setupcfg import read_configuration

from tests.prerequisites import REPO


def test_every_package_data_folder_is_a_configured_package() -> None:
    options = read_configuration(REPO / "setup.cfg")["options"]
    packages = set(options["packages"])
    for package, patterns in options["package_data"].items():
        for pattern in patterns:
            folder = PurePosixPath(package.replace(".", "/"), pattern).parent
            assert ".".join(folder.parts) in packages, (pattern, sorted(packages))
