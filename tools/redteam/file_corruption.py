"""Corrupting HDF5 files byte-wise, and telling whether a corruption changed what the file holds."""
import re
import subprocess


def corrupt(data, rng):
    """Returns (damaged bytes, description). Metadata lives at the front of small HDF5 files, so a share of the
    flips aims there; the rest hit anywhere."""
    data = bytearray(data)
    kind = rng.choice(["flip", "flip_head", "truncate", "zero_block", "append", "flip_many"])
    if kind == "flip":
        where = rng.randrange(len(data))
        data[where] ^= 1 << rng.randrange(8)
        return bytes(data), f"bit flip at byte {where}"
    if kind == "flip_head":
        where = rng.randrange(min(len(data), 4096))
        data[where] = rng.randrange(256)
        return bytes(data), f"byte {where} (metadata area) set at random"
    if kind == "truncate":
        size = rng.randrange(len(data))
        return bytes(data[:size]), f"truncated to {size} of {len(data)} bytes"
    if kind == "zero_block":
        start = rng.randrange(len(data))
        length = rng.choice([8, 64, 512, 4096])
        data[start:start + length] = bytes(min(length, len(data) - start))
        return bytes(data), f"{length} bytes zeroed at {start}"
    if kind == "append":
        return bytes(data) + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5000))), "garbage appended"
    for _ in range(rng.randint(2, 40)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data), "2-40 bytes set at random"


def contents(path, timeout=60):
    """Every group, dataset, datatype, shape, value and attribute of the file, as h5dump prints them (without
    the file name line). None when h5dump itself cannot read the file."""
    try:
        proc = subprocess.run(["h5dump", path], capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        return None
    return re.sub(r'^HDF5 ".*" \{', "HDF5 {", proc.stdout, count=1)


def unchanged(original_path, damaged_path):
    """True when the damage hit bytes that hold nothing the file's reader sees."""
    damaged = contents(damaged_path)
    return damaged is not None and damaged == contents(original_path)
