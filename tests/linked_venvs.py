"""Target venvs made of links into our own site-packages: offline and in about 50 ms, not a pip install."""

from __future__ import annotations

import sys
import venv
from collections.abc import Sequence
from pathlib import Path

import pytest

SITE_PACKAGES = Path(pytest.__file__).resolve().parents[1]
PYTEST_AND_ITS_DEPENDENCIES = ("_pytest", "pytest", "pluggy", "iniconfig", "packaging", "py.py", "pygments")
PYTEST_AND_XDIST = (*PYTEST_AND_ITS_DEPENDENCIES, "xdist", "execnet", "pytest_xdist")


def venv_with(home: Path, packages: Sequence[str]) -> Path:
    """A target interpreter whose environment holds only `packages` (linked from ours), and their dist-info."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(home)
    link_packages(home / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages", packages)
    return home / "bin" / "python"


def link_packages(site: Path, packages: Sequence[str]) -> None:
    """Link `packages` (and their dist-info) from our site-packages into the directory `site`."""
    for name in packages:
        for found in (SITE_PACKAGES / name, *SITE_PACKAGES.glob(f"{name}-*.dist-info")):
            if found.exists():
                (site / found.name).symlink_to(found)
