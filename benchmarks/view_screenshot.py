"""Inspect View's log list for a log folder, or one run's samples, in a real headless browser:
a PNG, and its rows.

Serves LOG_DIR with ``inspect view`` on a free loopback port, opens its log list in Debian's
Chromium (``apt-get install chromium``) driven by Playwright (``npm install playwright-core``
in any folder, passed as ``--node-modules``; no browser download: Chromium runs as its
executable), waits for the list to load, saves a PNG and prints every row's cells. It exits
1 when a row shows ``-`` where every finished run has a value (task arguments, tags, score,
samples, tokens), naming the row and the columns; a duration under a second shows ``-``
too, and is not counted. Loads the list ``--loads`` times, each in a fresh browser (View
keeps no state between them). With ``--log FILE`` (a log of the folder) it opens that run's
samples instead and exits 1 when a sample's TARGET is empty or ``-``.

    python benchmarks/view_screenshot.py LOG_DIR view.png --node-modules ~/pw/node_modules
    python benchmarks/view_screenshot.py LOG_DIR run.png --node-modules ~/pw/node_modules --log FILE
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
COMPLETE: tuple[str, ...] = ("TASK ARGS", "TAGS", "SCORE", "SAMPLES", "TOKENS")
"""The columns every finished run of the task fills."""
SAMPLE_COMPLETE: tuple[str, ...] = ("TARGET",)
"""The columns every sample of a run fills: its expected answer, where Inspect puts it."""
BROWSE = """
const { chromium } = require('playwright-core');
(async () => {
  const [url, out, chromiumPath, flags, width, height, settle, loaded] = process.argv.slice(1);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: JSON.parse(flags) });
  const page = await browser.newPage({ viewport: { width: +width, height: +height } });
  await page.goto(url);
  await page.waitForSelector('text=' + loaded, { timeout: 60000 });
  await page.waitForFunction(() => !document.body.innerText.includes('Syncing data'),
                             null, { timeout: 60000 });
  await page.waitForTimeout(+settle);
  const rows = await page.$$eval('[role="row"]', rs => rs.map(r => Array.from(
    r.querySelectorAll('[role="columnheader"],[role="gridcell"]')).map(c => c.innerText.trim())));
  await page.screenshot({ path: out });
  await browser.close();
  console.log(JSON.stringify(rows));
})().catch(e => { console.error(String(e)); process.exit(2); });
"""


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


def incomplete(rows: list[list[str]], complete: tuple[str, ...] = COMPLETE) -> list[str]:
    """Each row that shows ``-`` (or nothing) in a column of ``complete``, with those columns."""
    header, *body = rows
    columns = [header.index(c) for c in complete if c in header]
    found = [f"no {c} column" for c in complete if c not in header]
    for row in body:
        empty = [header[i] for i in columns if i < len(row) and row[i] in ("-", "")]
        if empty:
            shown = ("TASK", "MODEL", "COMPLETED", "ID")
            named = [row[header.index(c)] for c in shown if c in header]
            found.append(f"{' | '.join(named)}: {', '.join(empty)}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log_dir", type=Path)
    parser.add_argument("out", type=Path, help="the PNG to write (the last load's)")
    parser.add_argument("--node-modules", type=Path, required=True, help="holds playwright-core")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--width", type=int, default=1600)
    parser.add_argument("--height", type=int, default=700)
    parser.add_argument("--settle", type=int, default=5000, help="ms to wait once loaded")
    parser.add_argument("--loads", type=int, default=1)
    parser.add_argument("--log", help="a log file of LOG_DIR: its samples instead of the list")
    args = parser.parse_args()
    if not (args.node_modules / "playwright-core").is_dir():
        sys.exit(f"no playwright-core in {args.node_modules}: npm install playwright-core")
    if not Path(args.chromium).is_file():
        sys.exit(f"no Chromium at {args.chromium}: apt-get install chromium, or pass --chromium")

    port = free_port()
    inspect = Path(sys.executable).parent / "inspect"
    command = [str(inspect), "view", "--log-dir", str(args.log_dir), "--host", "127.0.0.1",
               "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "NODE_PATH": str(args.node_modules)}
    failed = False
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for(url, server)
        page, loaded, complete = url, "causal_locomo", COMPLETE
        if args.log:
            page, loaded, complete = f"{url}#/logs/{args.log}", "TARGET", SAMPLE_COMPLETE
        args.out.parent.mkdir(parents=True, exist_ok=True)
        for load in range(1, args.loads + 1):
            browse = [page, str(args.out), args.chromium, json.dumps(CHROMIUM_FLAGS),
                      str(args.width), str(args.height), str(args.settle), loaded]  # fmt: skip
            node = ["node", "-e", BROWSE, *browse]
            done = subprocess.run(node, env=env, capture_output=True, text=True, timeout=300)
            if done.returncode:
                sys.exit(f"the browser failed: {done.stderr.strip()[-2000:]}")
            rows = json.loads(done.stdout)
            missing = incomplete(rows, complete)
            print(f"load {load}: {len(rows) - 1} rows, {len(missing)} incomplete")
            for line in missing if missing else (" | ".join(r) for r in rows):
                print(f"  {line}")
            failed = failed or bool(missing)
        print(f"wrote {args.out}")
    finally:
        server.terminate()
        server.wait(timeout=20)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
