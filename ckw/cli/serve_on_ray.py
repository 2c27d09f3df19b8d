"""//tools:serve --ray: the server as a Ray Serve application (ckw/server/replicas.py).

One deployment per model holds its engines (--replicas of them, each reserving --threads Ray
CPUs), and one ingress deployment runs ckw/server/app.py's FastAPI app unchanged; Serve's proxy
listens on --host:--port on every node. The replicas run the ckw wheel (//:wheel), which the job's
runtime_env brings to every node (ckw/corpus/shipping.py), and read the checkpoint at the
driver's path: the nodes share its file system, as for the corpus tool.
"""

import logging
import re
import signal
import tempfile
import threading

from ckw.corpus import cluster, shipping
from ckw.server import deployments

APP = "ckw"
INGRESS_MAX_ONGOING = 10_000  # requests the ingress holds at once: each waits on an engine replica

log = logging.getLogger("ckw.serve")


def serve_forever(
    specs: dict[str, dict],
    limits: dict,
    admission: dict,
    alias: str | None,
    *,
    address: str | None,
    replicas: int,
    threads: int,
    host: str,
    port: int,
) -> None:
    """specs: ckw/model_spec.py engine_spec() by model name; limits: ckw/server/app.py Limits' fields;
    admission: each engine's max_streams, max_queue and max_audio_s (ckw/server/served.py ServedModel).
    Deploys, then serves until SIGINT or SIGTERM; cluster.ClusterError when Ray cannot start or
    connect, RuntimeError from Serve when a replica cannot start."""
    ray = cluster.import_ray()
    if address:
        cluster.check_reachable(ray, address)
    with tempfile.TemporaryDirectory(prefix="ckw-serve-") as scratch:
        cluster.connect(ray, address, shipping.runtime_env(threads, scratch))
        from ray import serve

        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        try:
            serve.start(http_options={"host": host, "port": port})
            ray.cloudpickle.register_pickle_by_value(deployments)
            engines = {}
            for name, spec in specs.items():
                engine = serve.deployment(
                    deployments.Engine,
                    name="engine_" + re.sub(r"\W", "_", name),
                    num_replicas=replicas,
                    ray_actor_options={"num_cpus": threads},
                    # one more than the replica admits: its own 429 answers the excess
                    max_ongoing_requests=admission["max_streams"] + admission["max_queue"] + 1,
                )
                engines[name] = engine.bind(
                    name,
                    spec,
                    admission["max_streams"],
                    admission["max_queue"],
                    admission["max_audio_s"],
                    threads,
                )
            ingress = serve.deployment(
                serve.ingress()(deployments.Ingress),
                name="ingress",
                max_ongoing_requests=INGRESS_MAX_ONGOING,
                ray_actor_options={"num_cpus": 0},
            )
            serve.run(ingress.bind(engines, limits, alias), name=APP, route_prefix="/")
            log.info(
                "ckw serve: %s on Ray Serve at http://%s:%d, %d engine replicas each",
                ", ".join(specs),
                host,
                port,
                replicas,
            )
            stop.wait()
        finally:
            if address:
                serve.delete(APP)  # the cluster is not ours: take down this application only
            else:
                serve.shutdown()
            ray.shutdown()
