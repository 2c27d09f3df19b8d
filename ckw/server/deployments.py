"""Ray Serve's deployment classes for //tools:serve --ray. Ray ships this module by value; the
replicas import the code they run (ckw/server/replicas.py) when they start, from the ckw wheel that
the job's runtime_env brought (ckw/corpus/shipping.py), so nothing is imported at the top."""


class Engine:
    """One engine of a model: ckw/server/replicas.py EngineReplica."""

    def __init__(self, *args):
        from ckw.server import replicas  # the wheel's, in the replica

        self.replica = replicas.EngineReplica(*args)

    async def transcribe(self, audio: bytes, filename: str, ask):
        async for event in self.replica.transcribe(audio, filename, ask):
            yield event


class Ingress:
    """The HTTP ingress: ckw/server/app.py's FastAPI app over the engines' handles, built in the
    replica (serve.ingress() calls __serve_build_asgi_app__ after the constructor)."""

    def __init__(self, handles: dict, limits: dict, alias: str | None):
        self.handles, self.limits, self.alias = handles, limits, alias

    def __serve_build_asgi_app__(self):
        from ckw.server import replicas  # the wheel's, in the replica

        return replicas.ingress_app(self.handles, self.limits, self.alias)
