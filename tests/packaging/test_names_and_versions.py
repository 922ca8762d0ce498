"""One distribution name, also a command; one version, wherever it is shown (ADR 0013)."""

from __future__ import annotations

import re
from importlib.metadata import distribution

import pytest
from mcp import Client

from pytest_mcp import __version__
from pytest_mcp.cli import main
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings
from tests.packaging.packaging_support import ROOT, distribution_name, pyproject

ENTRY_POINT = "pytest_mcp.cli:main"


def test_the_distribution_name_is_also_a_command_of_the_one_entry_point() -> None:
    scripts = pyproject()["project"]["scripts"]

    assert scripts.get(distribution_name()) == ENTRY_POINT, (
        f"`uvx {distribution_name()}` runs the console script named like the distribution: "
        f"[project.scripts] must have {distribution_name()} = {ENTRY_POINT!r}, it has {scripts}"
    )
    assert scripts.get("pytest-mcp") == ENTRY_POINT


def test_the_installed_metadata_names_the_same_command() -> None:
    installed = distribution(distribution_name())
    scripts = {entry.name: entry.value for entry in installed.entry_points if entry.group == "console_scripts"}

    assert installed.metadata["Name"] == distribution_name()
    assert scripts == {distribution_name(): ENTRY_POINT, "pytest-mcp": ENTRY_POINT}


def test_the_version_has_one_source_which_the_metadata_reads() -> None:
    project = pyproject()

    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pytest_mcp.__version__"}
    assert distribution(distribution_name()).version == __version__, (
        "the installed metadata is from before the version changed: run scripts/setup"
    )


def test_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])

    assert capsys.readouterr().out.strip() == f"pytest-mcp {__version__}"


@pytest.mark.anyio
async def test_server_info_carries_it() -> None:
    container = create_container(Settings(root=ROOT, log_level="warning"))
    container.init_resources()
    try:
        async with Client(container.tool_server().server) as client:
            info = client.server_info
    finally:
        container.shutdown_resources()

    assert info is not None
    assert (info.name, info.version) == ("pytest-mcp", __version__)


def test_the_changelog_starts_at_it() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[?([0-9][^\] ]*)\]?", changelog, flags=re.M)

    assert releases, "CHANGELOG.md has no release heading"
    assert releases[0] == __version__
