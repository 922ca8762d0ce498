"""The report view in headless Chromium: a harness page plays the MCP Apps host (harness.html).

Debian's chromium and chromedriver (scripts/setup-browser) are driven through Selenium, with
both paths given, so Selenium never fetches a browser or a driver of its own. Screenshots go to
.artifacts/report-view/, which CI keeps.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

HARNESS = Path(__file__).resolve().parent / "harness.html"
ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts" / "report-view"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        why = "chromium and chromedriver are not installed: run scripts/setup-browser"
        if os.environ.get("PYTEST_MCP_THIRD_PARTY") == "required":
            pytest.fail(why)
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1000,900")
    driver = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    try:
        yield driver
    finally:
        driver.quit()


def wire(result: CallToolResult) -> dict[str, Any]:
    """The tool result as a host receives it, and hands it to the view."""
    answer: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return answer


class ReportPage:
    """The harness page with the view loaded in its sandboxed iframe."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def show(self, html: str, tool: str, arguments: dict[str, Any], result: CallToolResult) -> None:
        self.driver.get(HARNESS.as_uri())
        self.driver.execute_script("host.load(...arguments)", html, tool, arguments, wire(result))
        self.wait_until(lambda: self.host("initialized"), "the view never sent ui/notifications/initialized")
        self.wait_until(lambda: self.text("#headline") != "Waiting for a test run", "the view never showed the result")

    def host(self, name: str) -> Any:
        return self.driver.execute_script(f"return window.host.{name}")

    def in_view(self, script: str, *arguments: Any) -> Any:
        """Run `script` inside the view's frame (WebDriver's own channel, not the page's)."""
        from selenium.webdriver.common.by import By

        self.driver.switch_to.frame(self.driver.find_element(By.TAG_NAME, "iframe"))
        try:
            return self.driver.execute_script(script, *arguments)
        finally:
            self.driver.switch_to.default_content()

    def text(self, selector: str) -> str:
        text: str = self.in_view(
            "const n = document.querySelector(arguments[0]); return n ? n.textContent : null", selector
        )
        return text

    def texts(self, selector: str) -> list[str]:
        texts: list[str] = self.in_view(
            "return [...document.querySelectorAll(arguments[0])].map((n) => n.textContent)", selector
        )
        return texts

    def visible(self, section: str) -> bool:
        return not self.in_view("return document.getElementById(arguments[0]).hidden", section)

    def counts(self) -> dict[str, int]:
        items = self.in_view(
            "return [...document.querySelectorAll('#counts li')].map((n) => [n.dataset.outcome, n.dataset.count])"
        )
        return {outcome: int(count) for outcome, count in items}

    def open_groups(self) -> None:
        self.in_view(
            "document.querySelectorAll('#groups details, #collection-errors details').forEach((d) => d.open = true)"
        )
        time.sleep(0.1)  # the toggle events draw the evidence

    def wait_until(self, condition: Callable[[], Any], why: str, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, why
            time.sleep(0.05)

    async def answer_calls(self, client: Client, until: Callable[[], bool], timeout: float = 60) -> None:
        """Answer the view's tools/call requests from the real server, as a host does, until `until()`."""
        with anyio.fail_after(timeout):
            while not until():
                for call in self.host("takeUnanswered()"):
                    params = call["params"]
                    result = await client.call_tool(params["name"], params.get("arguments"))
                    self.driver.execute_script("host.answer(arguments[0], arguments[1])", call["id"], wire(result))
                await anyio.sleep(0.05)

    def screenshot(self, name: str, above: str | None = None) -> Path:
        """The page as the host shows it, in .artifacts/report-view/: whole, or only what is above the
        view's element `above` (the README's picture stops above the command, which names a local path)."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.wait_until(lambda: self.host("sizes"), "the view never said its size")
        time.sleep(0.1)  # the last size-changed applied
        shown = int(self.driver.execute_script("return host.frame.offsetHeight"))
        if above is not None:
            shown = int(self.in_view("return document.querySelector(arguments[0]).offsetTop", above))
        chrome = int(self.driver.execute_script("return window.outerHeight - window.innerHeight"))
        self.driver.set_window_size(1000, shown + chrome)
        path = ARTIFACTS / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path


@pytest.fixture
def page(browser: Any) -> ReportPage:
    return ReportPage(browser)
