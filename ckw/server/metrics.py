"""The server's Prometheus metrics, in a registry of its own (one per app)."""

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self):
        self.registry = CollectorRegistry()
        self.queue_depth = Gauge(
            "ckw_queue_depth", "Requests accepted and waiting for a decoding slot", ["model"], registry=self.registry
        )
        self.running = Gauge("ckw_running_requests", "Requests decoding now", ["model"], registry=self.registry)
        self.sequences = Gauge(
            "ckw_active_sequences",
            "Sequences (beams, samples) in the model's decoder now",
            ["model"],
            registry=self.registry,
        )
        self.audio = Counter(
            "ckw_audio_seconds", "Seconds of audio transcribed (requests answered)", ["model"], registry=self.registry
        )
        self.requests = Counter(
            "ckw_requests",
            "Transcription requests by how they ended: answered, error (a bad "
            "file, an option the model cannot honour) or cancelled (the client left)",
            ["model", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "ckw_request_seconds",
            "Time to the response's start (a stream: its first byte), by path and HTTP status",
            ["path", "status"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )

    def observe_models(self, models: dict) -> None:
        """The gauges read from each loaded model's scheduler, at scrape time."""
        for name, model in models.items():
            load = model.load()
            self.queue_depth.labels(name).set(max(0, load["pending"] - load["running"]))
            self.running.labels(name).set(load["running"])
            if "sequences" in load:  # known where the decoder is: not at a Ray Serve ingress
                self.sequences.labels(name).set(load["sequences"])

    def render(self) -> bytes:
        return generate_latest(self.registry)
