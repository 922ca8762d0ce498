"""--run-store: memory by default, a redis:// or rediss:// URL otherwise, from every settings source;
the container picks the adapter, and no message or display ever shows the password."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mcp.adapters.run_store.memory import InMemoryRunStore
from pytest_mcp.adapters.run_store.redis import RedisRunStore
from pytest_mcp.cli import main
from pytest_mcp.container import create_container
from pytest_mcp.settings import Settings

SECRET = "pa55-w0rd-that-must-never-show"


def test_the_default_is_the_in_memory_store_which_publishes_nothing(tmp_path: Path) -> None:
    store = create_container(Settings(root=tmp_path)).run_store()
    assert isinstance(store, InMemoryRunStore)
    assert not store.shared
    assert create_container(Settings(root=tmp_path)).detached_runs().shared is False


@pytest.mark.parametrize("scheme", ["redis", "rediss"])
def test_a_redis_url_chooses_the_redis_store_named_with_its_password_masked(tmp_path: Path, scheme: str) -> None:
    url = f"{scheme}://:{SECRET}@cache.internal:6380/2"
    container = create_container(Settings(root=tmp_path, run_store=url, run_store_prefix="team-a:"))
    store = container.run_store()
    assert isinstance(store, RedisRunStore)
    assert store.where == f"{scheme}://:****@cache.internal:6380/2"
    assert container.detached_runs().shared


def test_the_run_store_comes_from_the_environment_and_the_project_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.pytest-mcp]\nrun-store = "redis://file:6379/0"\n')
    assert Settings(root=tmp_path).run_store == "redis://file:6379/0"
    monkeypatch.setenv("PYTEST_MCP_RUN_STORE", "redis://env:6379/0")
    assert Settings(root=tmp_path).run_store == "redis://env:6379/0"
    assert Settings(root=tmp_path, run_store="redis://flag:6379/0").run_store == "redis://flag:6379/0"


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (f"http://:{SECRET}@cache:6379/0", "must be memory, or a redis:// or rediss:// URL"),
        (f"redis://:{SECRET}@:6379/0", "names no host"),
        (f"redis://:{SECRET}@cache:6379/zero", "the database after the host must be a number"),
        (f"redis://:{SECRET}@cache:99999/0", "has a port that is not a number"),
    ],
)
def test_a_bad_run_store_is_refused_naming_the_field_without_the_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, reason: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(tmp_path), "--run-store", url, "--print-config"])
    error = capsys.readouterr().err
    assert exited.value.code == 2
    assert "run_store: " in error
    assert reason in error
    assert ":****@" in error
    assert SECRET not in error


def test_print_config_masks_the_run_stores_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PYTEST_MCP_RUN_STORE", f"rediss://user:{SECRET}@cache:6379/0?password={SECRET}")
    with pytest.raises(SystemExit):
        main(["--root", str(tmp_path), "--print-config"])
    shown = json.loads(capsys.readouterr().out)
    assert shown["run_store"] == "rediss://user:****@cache:6379/0?password=****"
