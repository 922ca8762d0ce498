"""What a project file runs outside its functions, and the functions a cache hides, as the server digests them."""

from __future__ import annotations

from pathlib import Path

from pytest_mcp.adapters.pytest_subprocess.spectrum import ProjectCode
from pytest_mcp.domain.localization import MODULE_CODE, code_key

SOURCE = """\
import functools
from functools import lru_cache, cached_property

RATE = 1.2


@functools.lru_cache(maxsize=None)
def rate_of(country):
    return {"de": 1.19}[country]


@lru_cache
def plain_cached(x):
    return x


class Item:
    TAX = 0.2

    @cached_property
    def gross(self):
        return 1 + self.TAX

    def net(self):
        return 1
"""


def state(root: Path, source: str) -> dict[str, str]:
    root.mkdir()
    (root / "shop.py").write_text(source)
    return ProjectCode(root).state(["shop.py"]).digests


def test_a_files_own_code_has_a_digest_of_its_own_that_a_function_body_does_not_move(tmp_path: Path) -> None:
    module = code_key("shop.py", MODULE_CODE)
    before = state(tmp_path / "a", SOURCE)
    body = state(tmp_path / "b", SOURCE.replace("return 1\n", "return 2\n"))
    constant = state(tmp_path / "c", SOURCE.replace("RATE = 1.2", "RATE = 1.3"))
    attribute = state(tmp_path / "d", SOURCE.replace("TAX = 0.2", "TAX = 0.3"))
    layout = state(tmp_path / "e", SOURCE.replace("RATE = 1.2", "RATE = 1.2  # the rate\n\n"))

    assert module in before
    assert body[module] == before[module], "a function's body is the function's digest, not the file's"
    assert body["shop.py::Item.net"] != before["shop.py::Item.net"]
    assert constant[module] != before[module]
    assert attribute[module] != before[module]
    assert layout[module] == before[module], "comments and layout are no change"


def test_the_functions_a_caching_decorator_holds_are_listed(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(SOURCE)

    code = ProjectCode(tmp_path).state(["shop.py"])

    assert set(code.cached) == {"shop.py::rate_of", "shop.py::plain_cached", "shop.py::Item.gross"}
