"""How long a piece of the answer takes from the window's server to the page, in a browser.

`hookgate window` runs as a subprocess against the loopback chat-completions server of
the tests (`tests/support/chat_server.py`), which streams each answer one byte at a
time, so the pieces arrive spaced as from a real model. Headless Chromium (Debian's
`chromium`, through Selenium) asks the questions. The server stamps each piece when the
model client hands it over (`WindowView.answer_text`); the page notes when the event
arrives and when the frame that shows it is drawn (`requestAnimationFrame`). Both clocks
are this machine's. Pieces that arrive together are shown by one update, stamped with
the oldest piece's arrival. The first delay is the baseline of the same run: what
reaches the page (the server's rendering, SSE through uvicorn, the browser's event
dispatch) before the page itself does anything.

    .venv/bin/python bench/window_latency.py [--turns N] [--pieces N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from hookgate.frontends.window.render import render_markdown
from hookgate.security.trust.record import trust_agent_file
from hookgate.security.trust.store import TrustStore

# The loopback server lives with the tests. Appended, so it shadows no installed package.
TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS) not in sys.path:
    sys.path.append(str(TESTS))

from support.chat_server import ChatServer, ServedReply  # noqa: E402

HOOKGATE = Path(sys.executable).with_name("hookgate")
#: Seconds between the bytes of the model's stream: a piece every ~50 ms, as a fast model.
BYTE_PACE_S = 0.0002
#: Seconds one turn may take before the benchmark gives up.
TURN_TIMEOUT_S = 120.0
#: A paragraph and a code block, repeated: the answer grows as long answers do.
ANSWER_UNIT = (
    "Here is **one step** of the answer, with `inline code` and a list:\n\n"
    "- first point\n- second point\n\n```python\ndef step(n):\n    return n + 1\n```\n\n"
)


def answer_text(pieces: int) -> str:
    return ANSWER_UNIT * max(1, pieces // 8)


def start_window(project: Path, home: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "HOOKGATE_HOME": str(home), "NO_COLOR": "1"}
    process = subprocess.Popen(
        [str(HOOKGATE), "window", "--no-browser"], cwd=project, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def browser() -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1200,900"):  # fmt: skip
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def run(turns: int, pieces: int) -> dict[str, list[float]]:
    text = answer_text(pieces)
    with tempfile.TemporaryDirectory() as scratch, ChatServer() as server:
        project, home = Path(scratch) / "project", Path(scratch) / "home"
        project.mkdir()
        agent = project / "hookgate.yaml"
        model = {"name": "bench", "base_url": server.url, "timeout": 30}
        agent.write_text(json.dumps({"model": model, "tools": []}))
        trust_agent_file(agent, store=TrustStore(home))
        server.queue(*[ServedReply(text=text, pieces=pieces, fault="trickle",
                                   trickle_s=BYTE_PACE_S) for _ in range(turns)])  # fmt: skip
        process, url = start_window(project, home)
        driver = browser()
        try:
            driver.get(url)
            wait = WebDriverWait(driver, TURN_TIMEOUT_S, poll_frequency=0.1)
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#open-sessions li"))
            for turn in range(turns):
                driver.find_element(By.ID, "question").send_keys(f"question {turn}", Keys.ENTER)
                wait.until(lambda d, n=turn: len(d.find_elements(By.CSS_SELECTOR, ".answer")) > n
                           and d.find_element(By.TAG_NAME, "body").get_attribute("data-turn")
                           == "idle")  # fmt: skip
            time.sleep(0.2)  # the last frame's callback
            delays = driver.execute_script("return window.hookgateChunkDelays")
        finally:
            driver.quit()
            process.terminate()
            process.wait(30)
    arrived = [float(pair[0]) for pair in delays]
    shown = [float(pair[1]) for pair in delays]
    return {"arrived": arrived, "shown": shown, "render": render_cost(text, pieces)}


def render_cost(text: str, pieces: int) -> list[float]:
    """ms to render the answer so far, at each piece: the server's own share."""
    step = max(1, len(text) // pieces)
    costs = []
    for end in range(step, len(text) + 1, step):
        started = time.perf_counter()
        render_markdown(text[:end])
        costs.append((time.perf_counter() - started) * 1000)
    return costs


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--pieces", type=int, default=200, help="answer pieces per turn")
    args = parser.parse_args()
    results = run(args.turns, args.pieces)
    print(f"{len(results['shown'])} page updates over {args.turns} turns; answer of "
          f"{len(answer_text(args.pieces))} characters in {args.pieces} pieces\n")  # fmt: skip
    print("| from the piece's arrival at the server to | median | p95 | max |")
    print("| --- | ---: | ---: | ---: |")
    rows = [("its event's arrival in the page (baseline: server render + SSE)", "arrived"),
            ("the frame that shows it, drawn", "shown"),
            ("(server) rendering the answer so far to HTML", "render")]  # fmt: skip
    for label, key in rows:
        values = results[key]
        print(f"| {label} | {statistics.median(values):.1f} ms | "
              f"{quantile(values, 0.95):.1f} ms | {max(values):.1f} ms |")  # fmt: skip
    load = os.getloadavg()[0]
    print(f"\nPython {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {load:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
