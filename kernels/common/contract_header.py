"""Writes a kernel library's contract header for its C tests, so no test copies a constant.

    contract_header --out F.h --guard PATH --isas scalar,avx2,avx512 --map a.json [--map b.json]

Per map: `CKW_<KERNEL>_TOLERANCE_C` (contract.tolerance_c; 0 for exact kernels) and
`CKW_<KERNEL>_EXACT` (1 when the contract is exact). Per library: `CKW_<LIB>_ISAS(X)`, an
X-macro over the ISA paths, oldest first, for the tests' ISA tables.
"""

import argparse
import os
import re
import sys

from tools.codegen import load
from tools.codegen.errors import CompileError


def _macro(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def render(maps, isas, guard: str, library: str) -> str:
    lines = [
        f"// Generated from {', '.join(d.path for d in maps)} by //kernels/common:contract_header. Do not edit.",
        f"#ifndef {_macro(guard)}_",
        f"#define {_macro(guard)}_",
        "",
    ]
    for doc in maps:
        contract = doc.data["contract"]
        kernel = _macro(doc.data["kernel"])
        exact = contract["kind"] == "exact"
        c = 0.0 if exact else float(contract["tolerance_c"])
        lines += [
            f"// {doc.data['kernel']}: {contract['kind']} contract ({doc.path}); "
            "the policy is kernels/common/tolerance.h.",
            f"#define {kernel}_TOLERANCE_C {c!r}",
            f"#define {kernel}_EXACT {int(exact)}",
        ]
    lines += [
        "",
        f"// The ISA paths of {library}, oldest first: X(isa) for each.",
        f"#define CKW_{_macro(library)}_ISAS(X) " + " ".join(f"X({i})" for i in isas),
        "",
        f"#endif  // {_macro(guard)}_",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="contract_header")
    p.add_argument("--out", required=True)
    p.add_argument("--guard", required=True)
    p.add_argument("--isas", default="")
    p.add_argument("--map", action="append", required=True)
    args = p.parse_args(argv)
    try:
        maps = [load.load_kernel_map(path) for path in args.map]
    except CompileError as e:
        print(f"contract_header: error: {e}", file=sys.stderr)
        return 1
    library = os.path.basename(args.out)[: -len("_contract.h")]
    text = render(maps, [i for i in args.isas.split(",") if i], args.guard, library)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
