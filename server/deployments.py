"""Ray Serve's deployment classes for //tools:serve --ray. Ray ships this module by value; the
replicas import the code they run (server/replicas.py) from the ckw wheel that the job's
runtime_env brought (`ckw.server.replicas`, tools/corpus/shipping.py), so only the standard
library is imported here."""

import importlib


class Engine:
    """One engine of a model: server/replicas.py EngineReplica."""

    def __init__(self, module: str, *args):
        self.replica = importlib.import_module(module).EngineReplica(*args)

    async def transcribe(self, audio: bytes, filename: str, ask):
        async for event in self.replica.transcribe(audio, filename, ask):
            yield event


class Ingress:
    """The HTTP ingress: server/app.py's FastAPI app over the engines' handles, built in the
    replica (serve.ingress() calls __serve_build_asgi_app__ after the constructor)."""

    def __init__(self, module: str, handles: dict, limits: dict, alias: str | None):
        self.module, self.handles, self.limits, self.alias = module, handles, limits, alias

    def __serve_build_asgi_app__(self):
        return importlib.import_module(self.module).ingress_app(self.handles, self.limits, self.alias)
