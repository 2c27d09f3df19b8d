"""Connecting to Ray: a local instance sized to this machine, or an existing cluster.

Workers run the Python of the `ray start` that launched their node, with the job's runtime_env
(ckw/corpus/shipping.py: the ckw wheel, the engine's thread count).
"""

import logging
import os
import socket

# Transcripts are all the object store carries (audio is read by the workers from its path).
LOCAL_OBJECT_STORE_BYTES = 128 << 20
CONNECT_TIMEOUT_SECONDS = 5.0


class ClusterError(RuntimeError):
    pass


def import_ray():
    try:
        import ray
    except ImportError as e:
        raise ClusterError(
            f"Ray is not installed in this Python ({e}); run ./bazelw to rebuild .venv from "
            "requirements_lock.txt (it pins ray)"
        ) from None
    return ray


def check_reachable(ray, address: str) -> None:
    """A Ray cluster answers on its GCS port: fail in seconds, not after Ray's own long retries."""
    if address == "auto" or "://" in address:
        return  # resolved by Ray itself (the running local cluster, or Ray Client)
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(
            f"--address={address}: not HOST:PORT (the head's GCS address, as `ray start --head` prints "
            "it, e.g. 10.0.0.1:6379)"
        )
    # Probe where Ray itself will connect: it replaces a loopback host by this machine's address
    # (a private helper; without it the address is probed as given).
    resolve = getattr(getattr(getattr(ray, "_private", None), "services", None), "resolve_ip_for_localhost", None)
    if resolve is not None:
        host = resolve(host)
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_SECONDS).close()
    except OSError as e:
        raise ClusterError(
            f"--address={address}: no Ray cluster answers there ({e.strerror or e}); start its head with "
            f"`ray start --head --port={port}` or fix the address"
        ) from None


def connect(ray, address: str | None, runtime_env: dict) -> None:
    """ray.init for this batch; raises ClusterError with one line when Ray cannot start or connect."""
    # Worker logs stay in Ray's session folder: the driver's stderr carries the batch's progress.
    common = {"runtime_env": runtime_env, "logging_level": logging.WARNING, "log_to_driver": False}
    try:
        if address:
            ray.init(address=address, **common)
        else:
            # "local": a new instance even when `ray start` left one running on this machine. The
            # instance is ours, so Ray's usage report (sent home by default) is off unless asked for.
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(address="local", include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES, **common)
    except ClusterError:
        raise
    except Exception as e:  # noqa: BLE001 (Ray raises ConnectionError, RuntimeError, ValueError, ... by cause)
        where = f"--address={address}" if address else "a local Ray instance"
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ClusterError(
            f"{where}: Ray could not start or connect ({first}); see Ray's log in /tmp/ray/session_latest/logs"
        ) from None


def cluster_cpus(ray) -> int:
    return int(ray.cluster_resources().get("CPU", 0))


def largest_node_cpus(ray) -> int:
    return max((int(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n.get("Alive")), default=0)
