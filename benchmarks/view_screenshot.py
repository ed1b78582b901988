"""Screenshot of Inspect View's log list for a log folder, in a real headless browser.

Serves LOG_DIR with ``inspect view`` on a free loopback port, opens its log list in
Debian's Chromium (``apt-get install chromium``) driven by Playwright (``pip install
playwright``; no browser download: it runs ``--chromium`` as its executable) and saves a
PNG, so a person can see what the list shows: each run's task name (the strategy and
protocol) and its score. A check by eye, never a test.

    python benchmarks/view_screenshot.py logs/all-strategies docs/results/view-log-list.png
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, server: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"inspect view exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    sys.exit(f"inspect view did not answer at {url} within {seconds:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=700)
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("needs Playwright: pip install playwright (and apt-get install chromium)")
    if not Path(args.chromium).is_file():
        sys.exit(f"no Chromium at {args.chromium}: apt-get install chromium, or pass --chromium")

    port = free_port()
    inspect = Path(sys.executable).parent / "inspect"
    command = [str(inspect), "view", "--log-dir", str(args.log_dir), "--host", "127.0.0.1",
               "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for(url, server)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            page.goto(url)
            page.wait_for_selector("text=causal_locomo", timeout=60_000)
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(5_000)  # let the list fill in every row's details
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
        print(f"wrote {args.out}")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
