"""What a shared library asks of the system, read from its ELF dynamic section: the libraries it
links (DT_NEEDED) and the glibc symbol versions it requires, which set a wheel's manylinux tag."""

import re
import struct

# Libraries every manylinux platform provides (auditwheel's policy lists them; libstdc++ comes in
# with Bazel's default link of a cc_binary, and the C kernels use none of its symbols).
SYSTEM_LIBRARIES = {
    "libc.so.6",
    "libm.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "ld-linux-x86-64.so.2",
    "libgcc_s.so.1",
    "libstdc++.so.6",
}
_GLIBC = re.compile(rb"^GLIBC_(\d+)\.(\d+)$")
DT_NEEDED, DT_STRTAB, SHT_DYNAMIC = 1, 5, 6


class ElfError(ValueError):
    pass


def _sections(data: bytes):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not a little-endian 64-bit ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    for i in range(shnum):
        yield struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)


def _string(data: bytes, offset: int) -> bytes:
    return data[offset : data.index(b"\0", offset)]


def dynamic_needs(path: str) -> tuple[list[str], tuple[int, int]]:
    """(DT_NEEDED libraries, the highest GLIBC_x.y version named in the dynamic string table)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        sections = list(_sections(data))
        dynamic = next(s for s in sections if s[1] == SHT_DYNAMIC)
        dynstr = sections[dynamic[6]]  # sh_link of .dynamic: its string table
    except (StopIteration, struct.error, IndexError) as e:
        raise ElfError(f"{path}: no readable dynamic section ({e})") from None
    strings, needed = dynstr[4], []
    for at in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, at)
        if tag == DT_NEEDED:
            needed.append(_string(data, strings + value).decode())
    table = data[strings : strings + dynstr[5]].split(b"\0")
    versions = [tuple(map(int, m.groups())) for m in map(_GLIBC.match, table) if m]
    return needed, max(versions, default=(2, 17))


def manylinux_tag(paths: list[str], arch: str = "x86_64") -> str:
    """manylinux_<glibc>_<arch> for libraries that link only SYSTEM_LIBRARIES; ElfError otherwise."""
    glibc = (2, 17)  # manylinux2014's floor
    for path in paths:
        needed, version = dynamic_needs(path)
        foreign = sorted(set(needed) - SYSTEM_LIBRARIES)
        if foreign:
            raise ElfError(f"{path} links {', '.join(foreign)}, which no manylinux platform provides")
        glibc = max(glibc, version)
    return f"manylinux_{glibc[0]}_{glibc[1]}_{arch}"
