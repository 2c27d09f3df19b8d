"""//tools:serve started as users start it, on a free port of 127.0.0.1: the server's tests and
//tools:benchmark_serve run it through this."""

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

import openai

from ckw import runfiles

SERVE = runfiles.locate("ckw", "ckw/cli/serve")
KEY = "test-key"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, key: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Server:
    """tools/serve on a free port, its output in `log_dir`; `health` holds every /health answer seen
    until the first 200 (AssertionError if none comes within `timeout` seconds or it exits)."""

    def __init__(self, log_dir, *flags, env: dict | None = None, timeout: float = 180):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(log_dir, f"serve-{self.port}.log"), "w+")
        self.proc = subprocess.Popen([SERVE, f"--port={self.port}", *flags], stdout=self.log, stderr=self.log, env=env)
        self.health = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.output()
            try:
                status, body = get(self.url + "/health")
            except OSError:  # not listening yet
                time.sleep(0.05)
                continue
            try:
                self.health.append((status, json.loads(body)))
            except ValueError:  # not the app yet: Ray Serve's proxy answers before the app is deployed
                self.health.append((status, body))
            if status == 200:
                return
            time.sleep(0.05)
        raise AssertionError(f"no 200 from /health in {timeout:g} s: {self.output()}")

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def client(self, key: str = KEY, timeout: float = 300, **kwargs) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=key, max_retries=0, timeout=timeout, **kwargs)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()
