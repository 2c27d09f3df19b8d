"""Writes the ckw wheel (//:wheel): the tree's `ckw/` package as it is, the generated libraries and
the data they read under `ckw/_libs/` at their workspace paths, no weights.

    build_wheel --files FILES --lock requirements_lock.txt --module MODULE.bazel --out_dir DIR

FILES: one `source<TAB>path in the workspace` per line (the rule's inputs). A workspace path
`ckw/...` goes to the same path in the wheel, byte for byte; any other file goes to
`ckw/_libs/<path>` (ckw/runfiles.py finds it there). Python outside `ckw/` is refused: nothing the
package imports may live elsewhere. The wheel is `ckw-<version>-py3-none-<manylinux tag>.whl`: the
version is MODULE.bazel's, the tag the glibc the libraries need (tools/wheel/elf.py), the
dependencies every third-party module the package imports, bounded below by the lock. Two builds of
the same inputs give the same bytes.
"""

import argparse
import ast
import base64
import hashlib
import os
import re
import sys
import zipfile

from tools.wheel import elf

NAME = "ckw"
LIBS = f"{NAME}/_libs"  # ckw/runfiles.py's LIBS
# Third-party modules the package may import -> their distribution (name in the lock).
DISTRIBUTIONS = {
    "absl": "absl-py",
    "av": "av",
    "huggingface_hub": "huggingface_hub",
    "numpy": "numpy",
    "platformdirs": "platformdirs",
    "soundfile": "soundfile",
    "tokenizers": "tokenizers",
    "tqdm": "tqdm",
    "xxhash": "xxhash",
}
EXTRAS = {"ray": ["ray"], "serve": ["fastapi", "uvicorn", "python-multipart", "prometheus_client"]}
# Modules only the server imports: an extra's, not the package's own dependencies.
EXTRA_MODULES = {"fastapi": "serve", "starlette": "serve", "prometheus_client": "serve", "ray": "ray"}
REQUIRES_PYTHON = ">=3.11"
EPOCH = (1980, 1, 1, 0, 0, 0)  # zip's earliest date: the same bytes on every build


class WheelError(Exception):
    pass


def wheel_path(workspace_path: str) -> str:
    """Where a file of the workspace goes in the wheel (WheelError for Python outside ckw/)."""
    if workspace_path.startswith(NAME + "/"):
        return workspace_path
    if workspace_path.endswith(".py"):
        raise WheelError(
            f"{workspace_path}: the wheel carries Python only from {NAME}/; move the module under "
            f"{NAME}/ or drop the dependency on it"
        )
    return f"{LIBS}/{workspace_path}"


def third_party_imports(source: str, where: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != NAME}


def lock_versions(lock: str) -> dict[str, str]:
    versions = {}
    with open(lock, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", line)
            if m:
                versions[m.group(1).lower().replace("_", "-")] = m.group(2)
    return versions


def requirement(dist: str, versions: dict[str, str], lock: str) -> str:
    version = versions.get(dist.lower().replace("_", "-"))
    if version is None:
        raise WheelError(f"{lock}: no pinned version of {dist}, which the wheel depends on; add it to the lock")
    return f"{dist}>={version}"


def module_version(module_bazel: str) -> str:
    with open(module_bazel, encoding="utf-8") as f:
        m = re.search(r'module\(\s*name\s*=\s*"ckw",\s*version\s*=\s*"([^"]+)"', f.read())
    if not m:
        raise WheelError(f'{module_bazel}: no module(name = "ckw", version = "...")')
    return m.group(1)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build(files: list[tuple[str, str]], lock: str, module_bazel: str, out_dir: str) -> str:
    entries, imports, libraries = {}, set(), []
    for source, workspace_path in files:
        dest = wheel_path(workspace_path)
        with open(source, "rb") as f:
            data = f.read()
        if dest.endswith(".py"):
            imports |= third_party_imports(data.decode("utf-8"), workspace_path)
        elif dest.endswith(".so"):
            libraries.append(source)
        entries[dest] = data
    missing = sorted(
        f"{d}/__init__.py"
        for d in {os.path.dirname(p) for p in entries if p.endswith(".py")}
        if f"{d}/__init__.py" not in entries
    )
    if missing:
        raise WheelError(f"{', '.join(missing)}: missing; every package directory under {NAME}/ has one")

    imports -= set(EXTRA_MODULES)
    unknown = sorted(imports - set(DISTRIBUTIONS))
    if unknown:
        raise WheelError(
            f"the package imports {', '.join(unknown)}, which tools/wheel/build_wheel.py DISTRIBUTIONS "
            "does not map to a distribution; add them"
        )
    versions = lock_versions(lock)
    requires = [f"Requires-Dist: {requirement(DISTRIBUTIONS[m], versions, lock)}" for m in sorted(imports)]
    for extra, dists in EXTRAS.items():
        requires += [f"Provides-Extra: {extra}"] + [
            f'Requires-Dist: {requirement(d, versions, lock)}; extra == "{extra}"' for d in dists
        ]
    metadata = [
        "Summary: Whisper inference compiled from circuit JSON to C, for the CPU",
        f"Requires-Python: {REQUIRES_PYTHON}",
        *requires,
    ]
    return write_wheel(
        entries,
        NAME,
        module_version(module_bazel),
        f"py3-none-{elf.manylinux_tag(libraries)}",
        metadata,
        out_dir,
        entry_points=f"[console_scripts]\n{NAME} = {NAME}.__main__:main\n",
    )


def write_wheel(
    entries: dict[str, bytes],
    name: str,
    version: str,
    tag: str,
    metadata: list[str],
    out_dir: str,
    entry_points: str | None = None,
) -> str:
    """out_dir/<name>-<version>-<tag>.whl holding `entries` (path in the wheel -> bytes) and its
    .dist-info (METADATA with `metadata` lines, WHEEL, entry_points.txt, RECORD), in a fixed order
    with fixed dates: the same entries give the same bytes. Written whole or not at all."""
    info = f"{name}-{version}.dist-info"
    entries = dict(entries)
    entries[f"{info}/METADATA"] = "\n".join(
        ["Metadata-Version: 2.1", f"Name: {name.replace('_', '-')}", f"Version: {version}", *metadata, ""]
    ).encode()
    purelib = "true" if tag.endswith("-any") else "false"
    entries[f"{info}/WHEEL"] = "\n".join(
        [
            "Wheel-Version: 1.0",
            "Generator: ckw tools/wheel/build_wheel.py",
            f"Root-Is-Purelib: {purelib}",
            f"Tag: {tag}",
            "",
        ]
    ).encode()
    if entry_points:
        entries[f"{info}/entry_points.txt"] = entry_points.encode()
    record = [f"{p},{_record_hash(d)},{len(d)}" for p, d in sorted(entries.items())] + [f"{info}/RECORD,,"]
    entries[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}-{version}-{tag}.whl")
    order = sorted(p for p in entries if not p.startswith(info)) + sorted(p for p in entries if p.startswith(info))
    with zipfile.ZipFile(path + ".partial", "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for p in order:
            zi = zipfile.ZipInfo(p, EPOCH)
            zi.external_attr = (0o100755 if p.endswith(".so") else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, entries[p])
    os.replace(path + ".partial", path)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", required=True, help="source<TAB>workspace path, one per line")
    parser.add_argument("--lock", required=True)
    parser.add_argument("--module", required=True, help="MODULE.bazel (the version)")
    parser.add_argument("--out_dir", required=True)
    args = parser.parse_args(argv)
    with open(args.files, encoding="utf-8") as f:
        files = [tuple(line.rstrip("\n").split("\t")) for line in f if line.strip()]
    try:
        print(build(files, args.lock, args.module, args.out_dir))
    except (WheelError, elf.ElfError) as e:
        print(f"build_wheel: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
