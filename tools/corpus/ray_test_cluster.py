"""A real Ray cluster on 127.0.0.1 for tests: `ray start --head --block` as the README tells
users (GCS, raylet, object store, workers), with token authentication on, and `cpus` CPUs.

Ray refuses a second node on a loopback-only cluster, so the workers share the one node; the
join of other machines is Ray's own `ray start --address` (README).

Every port is picked free (no clash with another cluster on the machine), state lives in a
short temporary folder (Ray's unix sockets need short paths), HOME points there too, so
nothing is written to the user's ~/.ray. stop() ends exactly the processes this cluster
started: the `ray start` sessions and every process in them, by pid.
"""

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

START_TIMEOUT_SECONDS = 180


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session_members(sid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    pids.append(int(entry))
            except OSError:
                pass
    return pids


class RayTestCluster:
    def __init__(self, cpus: int = 2):
        self.cpus = cpus
        self.dir = tempfile.mkdtemp(prefix="ckw-ray-", dir="/tmp")
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        token = os.path.join(self.dir, "auth_token")
        with open(token, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(32))
        # Ray rewrites a loopback address to the machine's outward IP (and then cannot reach a
        # cluster bound to 127.0.0.1) unless told this is a one-host cluster.
        self.env: dict[str, str] = dict(os.environ, HOME=self.dir, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=token,
                                        RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
        self.proc: subprocess.Popen | None = None

    def start(self) -> "RayTestCluster":
        ports = {flag: free_port() for flag in ("--node-manager-port", "--object-manager-port",
                                                "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
                                                "--runtime-env-agent-port", "--metrics-export-port", "--dashboard-port")}
        cmd = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", f"--port={self.port}",
               "--node-ip-address=127.0.0.1", f"--num-cpus={self.cpus}", f"--temp-dir={self.dir}",
               "--include-dashboard=false", "--object-store-memory=80000000", "--disable-usage-stats",
               *[f"{flag}={port}" for flag, port in ports.items()]]
        with open(os.path.join(self.dir, "ray_start.log"), "w", encoding="utf-8") as log:
            self.proc = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        try:
            self._wait_until_up()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_up(self) -> None:
        probe = ("import ray, time\n"
                 f"ray.init(address={self.address!r}, logging_level='ERROR', log_to_driver=False)\n"
                 f"while ray.cluster_resources().get('CPU', 0) < {self.cpus}: time.sleep(0.5)\n")
        try:
            subprocess.run([sys.executable, "-c", probe], env=self.env, check=True, timeout=START_TIMEOUT_SECONDS,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            with open(os.path.join(self.dir, "ray_start.log"), encoding="utf-8", errors="replace") as f:
                log = f.read()
            raise RuntimeError(f"the test Ray cluster at {self.address} did not come up with {self.cpus} CPUs: "
                               f"{(e.stderr or b'').decode(errors='replace')[-1500:]}\nray start: {log[-1500:]}") from None

    def stop(self) -> None:
        """SIGTERM to `ray start --block` (it stops its node), then SIGKILL whatever is left of
        its session (GCS, raylet, workers), by pid."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            for pid in _session_members(self.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if self.proc.poll() is None:
                self.proc.wait(timeout=10)
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)
