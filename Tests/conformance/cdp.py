"""A headless Chromium driven over the Chrome DevTools Protocol (one page, JSON-RPC over a WebSocket).

No Selenium or Playwright: Debian's `chromium` package and `websockets` (already in requirements.txt) only.
CARAVAN_CHROMIUM names the browser binary; otherwise `chromium` / `chromium-browser` / `google-chrome` on PATH.
A missing browser is a test failure, never a skip: the admin console's browser test must not pass silently.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str:
    explicit = os.environ.get("CARAVAN_CHROMIUM")
    if explicit:
        return explicit
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        "headless Chromium is required for the admin console browser test and was not found "
        "(install Debian's package: `apt-get install -y chromium`, as .ci/run does, or set CARAVAN_CHROMIUM)"
    )


class Browser:
    """One Chromium process with one page; `evaluate` runs JavaScript in the page and returns its value."""

    def __init__(self, width: int = 1360, height: int = 900):
        self.profile = tempfile.mkdtemp(prefix="caravan-chromium-")
        self.process = subprocess.Popen(
            [
                find_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "--remote-debugging-port=0",
                "--remote-allow-origins=*", "about:blank",
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )
        port = self._devtools_port()
        page = self._page_target(port)
        self.socket = connect(page["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024, open_timeout=20)
        self.ids = itertools.count(1)
        self.errors: list[str] = []
        self.send("Page.enable")
        self.send("Runtime.enable")

    def _devtools_port(self) -> int:
        deadline = time.monotonic() + 30
        lines: list[str] = []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                if self.process.poll() is not None:
                    break
                continue
            lines.append(line)
            match = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if match:
                # Keep draining the browser's log, or a full pipe would stall it.
                self.log = deque(lines, maxlen=200)
                threading.Thread(target=self._drain, daemon=True).start()
                return int(match.group(1))
        self.close()
        pytest.fail("Chromium did not start its DevTools endpoint:\n" + "".join(lines[-20:]))

    def _drain(self) -> None:
        for line in self.process.stderr:
            self.log.append(line)

    @staticmethod
    def _page_target(port: int) -> dict[str, Any]:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=5).json()
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                return pages[0]
            time.sleep(0.1)
        pytest.fail("Chromium opened no page target")

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        """One CDP command; events that arrive meanwhile are scanned for page errors."""
        ident = next(self.ids)
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.socket.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        if message.get("method") == "Runtime.exceptionThrown":
            details = message["params"]["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif message.get("method") == "Runtime.consoleAPICalled" and message["params"].get("type") == "error":
            self.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in message["params"]["args"]))

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        """The value of `expression` (awaited when it is a promise), by value."""
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page error in {expression[:80]!r}: {result['exceptionDetails'].get('exception', {}).get('description')}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20, what: str | None = None) -> Any:
        """Polls `expression` until it is truthy; fails the test with `what` (or the expression) otherwise."""
        deadline = time.monotonic() + timeout
        # A DOM node does not serialize (it would come back as {}): a found node counts as true.
        probe = f"(() => {{ const v = ({expression}); return v instanceof Node ? true : v; }})()"
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(probe)
            except RuntimeError:
                value = None  # the page is navigating: the next poll sees the new document
            if value:
                return value
            time.sleep(0.1)
        body = self.evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''")
        pytest.fail(f"timed out waiting for {what or expression}; page text:\n{body}")

    def fill(self, selector: str, value: str) -> None:
        self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.value = {json.dumps(value)};"
            " e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()"
        )

    def click(self, selector: str) -> None:
        found = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false; e.click(); return true; }})()")
        if not found:
            pytest.fail(f"no element matches {selector}")

    def set_files(self, selector: str, paths: list[Path]) -> None:
        """Chooses `paths` in the file input at `selector`, as a user picking files would."""
        root = self.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = self.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        if not node:
            pytest.fail(f"no file input matches {selector}")
        self.send("DOM.setFileInputFiles", {"nodeId": node, "files": [str(p) for p in paths]})

    def resize(self, width: int, height: int = 900) -> None:
        """Lays the page out at `width` x `height` CSS pixels (a phone at 420), as a window of that size would."""
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            self.socket.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)
