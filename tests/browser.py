"""Open a page from disk in a real browser: Debian's headless Chromium (`make browser`),
driven by Playwright without any browser download of its own.

What a test reads back is what a person would see and what the page did: console messages
(a Content-Security-Policy refusal is one), uncaught errors, requests that left the page,
whether an injected script ran (`window.__xss`), the visible text, and a screenshot.
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Without the background-networking flags Chromium tries Google's hosts at every start,
# which this machine's closed network refuses; --no-sandbox because the tests run as root.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


@dataclass
class Opened:
    """What the page did and showed once loaded (and once `act` had run)."""

    title: str
    console: list[tuple[str, str]]  # (type, text)
    errors: list[str]  # uncaught exceptions
    requests: list[str]  # every URL the page asked for beyond the file itself
    xss: bool  # a script of the payloads ran
    text: str  # document.body.innerText
    screenshot: Path
    results: list[object] = field(default_factory=list)  # what `act` returned

    @property
    def console_errors(self) -> list[str]:
        """Console messages of type error (CSP refusals included)."""
        return [text for kind, text in self.console if kind == "error"]


def open_file(path: Path, screenshot: Path, *, act: Callable[[Page], object] | None = None,
              width: int = 1280, height: int = 900, full_page: bool = False) -> Opened:
    """Load `path` as file://, run `act(page)` if given, take a screenshot, report."""
    assert Path(CHROMIUM).is_file(), f"no Chromium at {CHROMIUM}: install Debian's chromium (make browser)"
    url = path.resolve().as_uri()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            console: list[tuple[str, str]] = []
            errors: list[str] = []
            requests: list[str] = []
            page.on("console", lambda message: console.append((message.type, message.text)))
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda request: requests.append(request.url) if request.url != url else None)
            page.goto(url, wait_until="load", timeout=120_000)
            results = [act(page)] if act is not None else []
            page.screenshot(path=str(screenshot), full_page=full_page)
            return Opened(title=page.title(), console=console, errors=errors, requests=requests,
                          xss=bool(page.evaluate("() => window.__xss === 1")),
                          text=page.evaluate("() => document.body.innerText"), screenshot=screenshot,
                          results=results)
        finally:
            browser.close()
