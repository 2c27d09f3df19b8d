"""X-ray parity results on the graph: reads the JSON //tests/e2e:xray_parity_<variant>_test
writes (rows of measured error per tapped edge against openai-whisper) and places each row of
this library's part on the value it measures, through the call IR's taps (`<node>.<port>` ->
tensor id)."""

import io
import json
import os
import zipfile

from tools.codegen.explorer.errors import ExploreError

ROW_KEYS = ("part", "phase", "edge")
METRICS = ("max_abs", "max_rel", "rmse", "rmse_rel")


def _parse(text: str, where: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExploreError(
            f"{where}:{e.lineno}:{e.colno}: invalid JSON ({e.msg}): pass the xray_<variant>.json "
            "an X-ray parity test wrote"
        ) from None
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ExploreError(f"{where}: expected an object with a 'rows' list (the X-ray parity test's JSON)")
    for i, r in enumerate(rows):
        missing = [k for k in ROW_KEYS if not isinstance(r, dict) or not isinstance(r.get(k), str)]
        if missing:
            raise ExploreError(f"{where}: /rows/{i}: missing or not a string: {', '.join(missing)}")
        bad = [k for k in METRICS if k in r and not isinstance(r[k], (int, float))]
        if bad:
            raise ExploreError(f"{where}: /rows/{i}: not a number: {', '.join(bad)}")
    return data


def load(path: str) -> dict:
    """An X-ray JSON: the file itself, a test's outputs.zip holding one, or a test.outputs folder."""
    if os.path.isdir(path):
        found = sorted(f for f in os.listdir(path) if f.startswith("xray_") and f.endswith(".json"))
        if found:
            return load(os.path.join(path, found[0]))
        if os.path.exists(os.path.join(path, "outputs.zip")):
            return load(os.path.join(path, "outputs.zip"))
        raise ExploreError(
            f"--xray {path}: no xray_*.json or outputs.zip in this folder: run the X-ray parity test first"
        )
    if path.endswith(".zip"):
        try:
            with zipfile.ZipFile(path) as z:
                names = sorted(
                    n for n in z.namelist() if os.path.basename(n).startswith("xray_") and n.endswith(".json")
                )
                if not names:
                    raise ExploreError(f"--xray {path}: the archive holds no xray_*.json")
                data = _parse(io.TextIOWrapper(z.open(names[0]), encoding="utf-8").read(), f"{path}!{names[0]}")
        except (zipfile.BadZipFile, OSError) as e:
            raise ExploreError(f"--xray {path}: cannot read the archive: {e}") from None
        return dict(data, source=f"{path}!{names[0]}")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ExploreError(f"--xray {path}: cannot read: {e.strerror}") from None
    return dict(_parse(text, path), source=path)


def taps(ir: dict | None) -> dict[str, dict[str, str]]:
    """phase -> {tap edge: tensor id} from the call IR."""
    if not ir:
        return {}
    return {p["phase"]: {t["edge"]: t["tensor"] for c in p["calls"] for t in c["taps"]} for p in ir["phases"]}


def place(data: dict | None, part: str, ir: dict | None) -> dict | None:
    """The rows of `part`, each with `value`: the tensor id it measures in its phase (None for
    rows no tap reports, e.g. derived edges), and `over`: whether it broke the test's bounds."""
    if data is None:
        return None
    by_phase = taps(ir)
    rows: list[dict] = []
    for r in data["rows"]:
        if r["part"] != part:
            continue
        rows.append(dict(r, value=by_phase.get(r["phase"], {}).get(r["edge"]), over=bool(r.get("error"))))
    return {
        "source": data.get("source", ""),
        "variant": data.get("variant", ""),
        "bounds": data.get("bounds", {}),
        "rows": rows,
    }
