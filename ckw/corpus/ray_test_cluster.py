"""A real Ray cluster on this machine for tests: `ray start --head --block` as the README tells
users (GCS, raylet, object store, workers), with token authentication on, and more nodes joined
with `ray start --address` as another machine would join, each with `cpus` CPUs.

One node binds 127.0.0.1. Ray refuses to add a node to a loopback-only cluster, so a cluster of
several binds the machine's own address (Ray's choice). The nodes start outside the source
tree: their folder is the cluster's, their environment has no PYTHONPATH or runfiles, so their
workers import only what the job's runtime_env brings.

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
    def __init__(self, cpus: int = 2, nodes: int = 1):
        self.cpus, self.nodes = cpus, nodes
        self.dir = tempfile.mkdtemp(prefix="ckw-ray-", dir="/tmp")
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        token = os.path.join(self.dir, "auth_token")
        with open(token, "w", encoding="ascii") as f:
            f.write(secrets.token_hex(32))
        # Ray rewrites a loopback address to the machine's outward IP (and then cannot reach a
        # cluster bound to 127.0.0.1) unless told this is a one-host cluster.
        self.env: dict[str, str] = dict(
            os.environ,
            HOME=self.dir,
            RAY_AUTH_MODE="token",
            RAY_AUTH_TOKEN_PATH=token,
            RAY_USAGE_STATS_ENABLED="0",
            RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0" if nodes == 1 else "1",
        )
        self.node_env = {k: v for k, v in self.env.items() if k != "PYTHONPATH" and not k.startswith("RUNFILES_")}
        self.procs: list[subprocess.Popen] = []

    def start(self) -> "RayTestCluster":
        try:
            self._start_node(head=True)
            self._wait_until_up(nodes=1)
            for _ in range(self.nodes - 1):
                self._start_node(head=False)
            self._wait_until_up(nodes=self.nodes)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_node(self, head: bool) -> None:
        ports = {
            flag: free_port()
            for flag in (
                "--node-manager-port",
                "--object-manager-port",
                "--dashboard-agent-listen-port",
                "--dashboard-agent-grpc-port",
                "--runtime-env-agent-port",
                "--metrics-export-port",
            )
        }
        if head:
            role = [
                f"--port={self.port}",
                f"--temp-dir={self.dir}",
                "--include-dashboard=false",
                f"--dashboard-port={free_port()}",
            ] + (["--node-ip-address=127.0.0.1"] if self.nodes == 1 else [])
        else:
            role = [f"--address={self.address}"]
        cmd = [
            sys.executable,
            "-m",
            "ray.scripts.scripts",
            "start",
            *(["--head"] if head else []),
            "--block",
            *role,
            f"--num-cpus={self.cpus}",
            "--object-store-memory=80000000",
            "--disable-usage-stats",
            *[f"{flag}={port}" for flag, port in ports.items()],
        ]
        with open(self._log(len(self.procs)), "w", encoding="utf-8") as log:
            self.procs.append(
                subprocess.Popen(
                    cmd, env=self.node_env, cwd=self.dir, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                )
            )

    def _log(self, node: int) -> str:
        return os.path.join(self.dir, f"ray_start_{node}.log")

    def _wait_until_up(self, nodes: int) -> None:
        probe = (
            "import ray, time\n"
            f"ray.init(address={self.address!r}, logging_level='ERROR', log_to_driver=False)\n"
            f"while sum(n['Alive'] for n in ray.nodes()) < {nodes} or "
            f"ray.cluster_resources().get('CPU', 0) < {nodes * self.cpus}: time.sleep(0.5)\n"
        )
        try:
            subprocess.run(
                [sys.executable, "-c", probe],
                env=self.env,
                check=True,
                timeout=START_TIMEOUT_SECONDS,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            logs = []
            for node in range(len(self.procs)):
                with open(self._log(node), encoding="utf-8", errors="replace") as f:
                    logs.append(f"ray start ({node}): {f.read()[-1500:]}")
            raise RuntimeError(
                f"the test Ray cluster at {self.address} did not come up with {nodes} nodes of "
                f"{self.cpus} CPUs: {(e.stderr or b'').decode(errors='replace')[-1500:]}\n" + "\n".join(logs)
            ) from None

    def stop(self) -> None:
        """SIGTERM to each `ray start --block` (it stops its node; the head last), then SIGKILL
        whatever is left of their sessions (GCS, raylets, workers), by pid."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
            for pid in _session_members(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if proc.poll() is None:
                proc.wait(timeout=10)
        self.procs = []
        shutil.rmtree(self.dir, ignore_errors=True)
