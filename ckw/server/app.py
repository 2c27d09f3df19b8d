"""The OpenAI-compatible transcription server: a FastAPI app over one Streams per model.

    POST /v1/audio/transcriptions, /v1/audio/translations   openai's audio API (ckw/server/form.py)
    GET  /v1/models                                          the served models
    GET  /health                                             503 until every model is loaded, then 200
    GET  /metrics                                            Prometheus text format

Every request joins its model's one scheduler (ckw/runtime/streams.py), so requests share decode steps
and a short one is not stuck behind a long one. Every accepted request gets exactly one answer:
its result, or an error in openai's shape; a client that disconnects cancels its request, which
frees its sequences at once. Models load in a thread after the server starts (/health says when).
"""

import asyncio
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from ckw.server import render
from ckw.server.form import ApiError, parse
from ckw.server.metrics import Metrics
from ckw.server.served import Job, ServedModel

log = logging.getLogger("ckw.serve")
POLL_S = 0.25  # how often a waiting request checks that its client is still there
FORM_OVERHEAD = 1 << 20  # multipart headers and text fields beside the file
REPLICA_HEADER = "X-Ckw-Replica"  # on Ray Serve: the engine replica that answered, or started a stream (host:pid)


class Limits:
    """What the HTTP side refuses; each model bounds its own queue (ServedModel)."""

    def __init__(self, max_upload_bytes: int, api_key: str | None):
        self.max_upload_bytes, self.api_key = max_upload_bytes, api_key


def create_app(loaders: dict[str, Callable], limits: Limits, alias: str | None = None) -> FastAPI:
    """loaders: model name -> a function returning the model served (a ServedModel; on Ray Serve a
    ckw/server/replicas.py RemoteModel), run in the loading thread;
    alias: a name that means the first model too (whisper-1, which unchanged clients send)."""
    app = FastAPI(title="ckw", docs_url=None, redoc_url=None, openapi_url=None)
    models: dict[str, ServedModel] = {}
    state = {"error": None}
    metrics = Metrics()

    def load() -> None:
        for name, loader in loaders.items():
            try:
                models[name] = loader()
            except Exception as e:  # reported by /health; the server stays up to say so
                state["error"] = f"{name}: {e}"
                log.error("ckw serve: %s could not be loaded: %s", name, e)
                return
            log.info("ckw serve: %s loaded", name)

    @app.on_event("startup")
    async def start() -> None:
        threading.Thread(target=load, name="ckw-serve-load", daemon=True).start()

    @app.on_event("shutdown")
    async def stop() -> None:
        for m in list(models.values()):
            m.close()

    @app.exception_handler(ApiError)
    async def api_error(request: Request, e: ApiError):
        return JSONResponse(e.body(), status_code=e.status, headers=e.headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, e: HTTPException):
        return JSONResponse(ApiError(e.status_code, str(e.detail)).body(), status_code=e.status_code)

    app.add_middleware(Timed, histogram=metrics.latency)

    def authorize(request: Request) -> None:
        if limits.api_key is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {limits.api_key}".encode()):
            raise ApiError(
                401,
                "missing or wrong API key: send the header Authorization: Bearer <--api_key>",
                code="invalid_api_key",
            )

    def served(name: str) -> ServedModel:
        if alias and name == alias:
            name = next(iter(loaders))
        if name not in loaders:
            raise ApiError(
                400, f"model {name!r} is not served here; use one of {', '.join(loaders)}", "model", "model_not_found"
            )
        if name not in models:
            raise ApiError(
                503,
                f"model {name!r} is still loading; retry when GET /health answers 200",
                "model",
                "model_loading",
                kind="server_error",
                headers={"Retry-After": "1"},
            )
        return models[name]

    async def audio_request(request: Request, task: str) -> Response:
        authorize(request)
        limit = limits.max_upload_bytes
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > limit + FORM_OVERHEAD:
            raise ApiError(
                413,
                f"the upload is {int(length)} bytes; this server takes files up to {limit} bytes (--max_upload_mb)",
                "file",
                "file_too_large",
            )
        try:
            form = await request.form(max_files=1, max_fields=64)
        except Exception as e:  # not multipart, or a malformed body
            raise ApiError(
                400,
                f"the body is not a multipart form ({e}); send file and model as multipart/form-data",
                None,
                "invalid_body",
            ) from None
        try:
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                raise ApiError(
                    400,
                    "file is missing; send the audio as the multipart field file",
                    "file",
                    "missing_required_parameter",
                )
            fields = [(k, v) for k, v in form.multi_items() if k != "file"]
            if any(isinstance(v, UploadFile) for _, v in fields):
                raise ApiError(400, "only the field file may be a file", None, "invalid_body")
            ask = parse(fields, task)
            model = served(ask.model)
            audio = await upload.read(limit + 1)
            if len(audio) > limit:
                raise ApiError(
                    413,
                    f"file {upload.filename}: more than {limit} bytes, the most this server takes (--max_upload_mb)",
                    "file",
                    "file_too_large",
                )
            if not audio:
                raise ApiError(400, f"file {upload.filename}: empty; send the audio's bytes", "file", "invalid_audio")
        finally:
            await form.close()
        job = model.submit(audio, upload.filename or "upload", ask, asyncio.get_running_loop())
        try:  # the status is the request's own until it decodes: bad audio, too long, a full replica
            kind, value = await _next(job, request)
            if kind == "error":
                raise value
        except ApiError as e:
            finished(job, e)
            raise
        if ask.stream:  # headers go first: the replica that started it
            return StreamingResponse(_sse(job, request), media_type="text/event-stream", headers=replica(job))
        result = None
        try:
            while result is None:
                kind, value = await _next(job, request)
                if kind == "done":
                    result = value
                elif kind == "error":
                    raise value
        except ApiError as e:
            finished(job, e)
            raise
        finished(job)
        text = render.body(result, ask.response_format, task, job.duration, ask.words)
        return Response(text, media_type=render.MEDIA_TYPES[ask.response_format], headers=replica(job))

    def replica(job: Job) -> dict | None:
        return {REPLICA_HEADER: job.replica} if job.replica else None

    def finished(job: Job, error: ApiError | None = None) -> None:
        outcome = "answered" if error is None else "cancelled" if error.status == 499 else "error"
        metrics.requests.labels(job.model.name, outcome).inc()
        if error is None:
            metrics.audio.labels(job.model.name).inc(job.duration)

    async def _sse(job: Job, request: Request):
        error = ApiError(499, "the client closed the connection", code="client_closed")
        try:
            while True:
                kind, value = await _next(job, request)
                if kind == "segment":
                    yield render.event("delta", delta=value.text)
                elif kind == "done":
                    error = None
                    yield render.event("done", text=value["text"])
                    return
                else:  # the error as openai streams it: an event holding the error object
                    error = value
                    yield "data: " + json.dumps(value.body()) + "\n\n"
                    return
        except ApiError as e:
            error = e
        finally:
            job.cancel()  # a client gone mid-stream (nothing to cancel once it ended)
            finished(job, error)

    @app.post("/v1/audio/transcriptions")
    async def transcriptions(request: Request) -> Response:
        return await audio_request(request, "transcribe")

    @app.post("/v1/audio/translations")
    async def translations(request: Request) -> Response:
        return await audio_request(request, "translate")

    @app.get("/v1/models")
    async def list_models(request: Request):
        authorize(request)
        return {
            "object": "list",
            "data": [{"id": name, "object": "model", "created": 0, "owned_by": "ckw"} for name in loaders],
        }

    @app.get("/health")
    async def health():
        if state["error"]:
            return JSONResponse({"status": "failed", "error": state["error"]}, status_code=503)
        if len(models) < len(loaders):
            return JSONResponse({"status": "loading", "loaded": list(models)}, status_code=503)
        return {"status": "ok", "models": list(models)}

    @app.get("/metrics")
    async def prometheus():
        metrics.observe_models(models)
        return PlainTextResponse(metrics.render(), media_type=metrics.content_type)

    return app


class Timed:
    """Observes each HTTP request's time to its response's start, by path and status. Plain ASGI:
    Starlette's BaseHTTPMiddleware would hide a client's disconnect from the handlers."""

    def __init__(self, app, histogram):
        self.app, self.histogram = app, histogram

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()

        async def timed_send(message):
            if message["type"] == "http.response.start":
                self.histogram.labels(scope["path"], str(message["status"])).observe(time.perf_counter() - t0)
            await send(message)

        await self.app(scope, receive, timed_send)


async def _next(job: Job, request: Request):
    """The job's next event; cancels the job and raises ApiError 499 when the client went away."""
    while True:
        try:
            return await asyncio.wait_for(job.events.get(), POLL_S)
        except asyncio.TimeoutError:
            if await request.is_disconnected():
                job.cancel()
                raise ApiError(499, "the client closed the connection", code="client_closed") from None
