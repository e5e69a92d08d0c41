#!/usr/bin/env python3
"""Copies a shared library without its DT_RPATH/DT_RUNPATH entries (what `chrpath -d` does, with no extra package).

Usage: strip_runpath.py IN.so OUT.so

Why: Bazel links libsluice.so with every linkopt of its dependencies, and under --config=cuda those include the
rpath to /usr/local/cuda that Bazel's own test binaries use. The installed library must not carry it (docs/GPU.md,
"The installed library"): the CUDA/NCCL libraries are found by the system loader, as for any CUDA application.

The dynamic section keeps its size: the remaining entries move up and the freed slots become DT_NULL, which ends
the list for the loader. The path string stays, unreferenced, in .dynstr. A library without such entries is copied
unchanged. STRIP_RUNPATH_VERBOSE=1 prints what is removed.
"""
import os
import struct
import sys

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_STRTAB, DT_RPATH, DT_RUNPATH = 0, 5, 15, 29


def fail(message):
    sys.exit(f"strip_runpath.py: {message}")


def main(argv):
    if len(argv) != 3:
        fail("usage: strip_runpath.py IN.so OUT.so")
    source, target = argv[1], argv[2]
    with open(source, "rb") as f:
        data = bytearray(f.read())

    if data[:4] != b"\x7fELF":
        fail(f"{source} is not an ELF file")
    elf_class, elf_data = data[4], data[5]
    if elf_class not in (1, 2) or elf_data not in (1, 2):
        fail(f"{source}: unknown ELF class {elf_class} / data encoding {elf_data}")
    order = "<" if elf_data == 1 else ">"
    wide = elf_class == 2
    # Elf{32,64}_Ehdr: e_phoff, e_phentsize, e_phnum; Elf_Phdr: p_type, p_offset, p_vaddr, p_filesz.
    if wide:
        (e_phoff,) = struct.unpack_from(order + "Q", data, 0x20)
        e_phentsize, e_phnum = struct.unpack_from(order + "HH", data, 0x36)
    else:
        (e_phoff,) = struct.unpack_from(order + "I", data, 0x1C)
        e_phentsize, e_phnum = struct.unpack_from(order + "HH", data, 0x2A)

    def program_header(index):
        at = e_phoff + index * e_phentsize
        if wide:
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(order + "IIQQQQ", data, at)
        else:
            p_type, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(order + "IIIII", data, at)
        return p_type, p_offset, p_vaddr, p_filesz

    headers = [program_header(i) for i in range(e_phnum)]
    dynamic = [h for h in headers if h[0] == PT_DYNAMIC]
    if len(dynamic) != 1:
        fail(f"{source} has {len(dynamic)} PT_DYNAMIC segments (expected one: a shared library)")
    _, dyn_offset, _, dyn_size = dynamic[0]

    entry_format = order + ("qQ" if wide else "iI")
    entry_size = struct.calcsize(entry_format)
    entries = []
    for at in range(dyn_offset, dyn_offset + dyn_size - entry_size + 1, entry_size):
        tag, value = struct.unpack_from(entry_format, data, at)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    else:
        fail(f"{source}: dynamic section has no DT_NULL terminator")
    slots = len(entries) + 1  # up to and including the original DT_NULL

    def dynamic_string(offset):
        """The .dynstr string at `offset`, for the log (DT_STRTAB is an address: map it through PT_LOAD)."""
        strtab = next((value for tag, value in entries if tag == DT_STRTAB), None)
        for p_type, p_offset, p_vaddr, p_filesz in headers:
            if strtab is not None and p_type == PT_LOAD and p_vaddr <= strtab < p_vaddr + p_filesz:
                start = strtab - p_vaddr + p_offset + offset
                return data[start:data.index(b"\0", start)].decode(errors="replace")
        return "?"

    removed = [(tag, dynamic_string(value)) for tag, value in entries if tag in (DT_RPATH, DT_RUNPATH)]
    if removed and os.environ.get("STRIP_RUNPATH_VERBOSE"):
        for tag, path in removed:
            print(f"strip_runpath.py: removing {'RUNPATH' if tag == DT_RUNPATH else 'RPATH'} [{path}] from {source}")
    kept = [(tag, value) for tag, value in entries if tag not in (DT_RPATH, DT_RUNPATH)]
    for slot in range(slots):
        tag, value = kept[slot] if slot < len(kept) else (DT_NULL, 0)
        struct.pack_into(entry_format, data, dyn_offset + slot * entry_size, tag, value)

    if os.path.exists(target):
        os.chmod(target, 0o755)
        os.remove(target)
    with open(target, "wb") as f:
        f.write(data)
    os.chmod(target, 0o755)


if __name__ == "__main__":
    main(sys.argv)
