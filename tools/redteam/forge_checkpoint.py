"""Forges one value of a Sluice checkpoint and recomputes its checksum, as an attacker or a buggy converter would:
the file stays consistent (every crc32 verifies), only the value is impossible. Needs h5py (not part of the
product: run it with an interpreter that has it, e.g. a venv with `pip install h5py`).

  python forge_checkpoint.py SRC DST SEED  -> prints the dataset, element and value it planted (one line)

Values planted: NaN/+Inf/-Inf in any float dataset (model weights, optimizer moments, normalization statistics,
application arrays are skipped), and a negative number in an Adam second moment (exp_avg_sq) or a normalization
standard deviation, which no run can produce."""
import random
import shutil
import sys
import zlib

import h5py
import numpy

TYPE_NAMES = {numpy.dtype("float32"): "float32", numpy.dtype("float64"): "float64"}


def float_datasets(f):
    found = []
    f.visititems(lambda name, obj: found.append("/" + name) if isinstance(obj, h5py.Dataset) and obj.dtype in
                 TYPE_NAMES and obj.size > 0 and not name.startswith(("application", "samples")) else None)
    return sorted(found)


def bound_crc32(path, dataset):
    dims = ",".join(str(d) for d in dataset.shape)
    line = f"{path}|{TYPE_NAMES[dataset.dtype]}|{dims}".encode()
    return zlib.crc32(dataset[()].tobytes(), zlib.crc32(line)) & 0xFFFFFFFF


def main():
    source, target, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    shutil.copyfile(source, target)
    with h5py.File(target, "r+") as f:
        path = rng.choice(float_datasets(f))
        dataset = f[path]
        values = dataset[()]
        flat = values.reshape(-1)
        element = rng.randrange(flat.size)
        impossible_negative = path.endswith("exp_avg_sq") or "std" in path.rsplit("/", 1)[-1]
        choices = [float("nan"), float("inf"), float("-inf")] + ([-1.0, -1e-3] if impossible_negative else [])
        flat[element] = rng.choice(choices)
        dataset[...] = values
        checksum = numpy.uint32(bound_crc32(path, dataset))
        if "crc32" in dataset.attrs:
            dtype = dataset.attrs["crc32"].dtype
            del dataset.attrs["crc32"]
            dataset.attrs.create("crc32", checksum, dtype=dtype)
        print(f"{path}[{element}] = {flat[element]}")


if __name__ == "__main__":
    main()
