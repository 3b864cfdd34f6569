"""Archive a catalog as N shards on a Ray cluster, then merge and verify on the driver.

    python archive_shards.py --shards 4 --out bundle \
        --catalog https://jsonplaceholder.typicode.com/photos \
        --mirror https://via.placeholder.com=https://images.example.org

One Ray task per shard runs `archiver run --shard I/N` on whichever node Ray picks, packs the
shard with `archiver pack` and returns the tarball's bytes. They come back to the driver through
Ray's object store, not shared storage: a Ray cluster has no shared file system unless one is
added, the object store is what Ray moves results with between nodes, and a packed shard is
small (a quarter of the 5000-image catalog is about 0.2 MB here; real photos of ~50 KB would
make about 60 MB, which the object store holds and spills to disk if need be). For bundles of
many gigabytes, have each task write its tarball to shared storage (S3, NFS) and return the path.

Each node needs `archiver` on its PATH (or --archiver) and the catalog at the same path or URL:
the catalog's source, as given, is recorded in every shard's manifest and merge requires one.
The driver writes the tarballs to --shards-dir, runs `archiver merge` and `archiver verify`,
and exits with merge's status (0 all done, 1 some items failed, 2 shards refused).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import ray


@ray.remote(num_cpus=1, max_retries=3)
def archive_shard(archiver: str, index: int, count: int, catalog: str, mirrors: list[str]) -> bytes:
    """Runs shard index/count in a directory of its own on this node; returns its packed tarball."""
    with tempfile.TemporaryDirectory(prefix=f"archiver-shard-{index}-") as work:
        out = os.path.join(work, f"shard-{index}")
        command = [archiver, "run", "--catalog", catalog, "--out", out, "--shard", f"{index}/{count}", "--quiet"]
        for mirror in mirrors:
            command += ["--mirror", mirror]
        run = subprocess.run(command, capture_output=True, text=True)
        # 1: some items failed; they are in the shard's manifest and merge carries them over.
        if run.returncode not in (0, 1):
            raise RuntimeError(f"shard {index}/{count}: archiver run exited {run.returncode}: {run.stderr.strip()}")
        tarball = out + ".tar.gz"
        subprocess.run([archiver, "pack", out, "--output", tarball], check=True, capture_output=True)
        with open(tarball, "rb") as file:
            return file.read()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, required=True, help="number of shards, N")
    parser.add_argument("--out", required=True, help="the merged bundle directory (must not exist)")
    parser.add_argument("--catalog", default="https://jsonplaceholder.typicode.com/photos")
    parser.add_argument("--mirror", action="append", default=[], help="FROM=TO, as for archiver run")
    parser.add_argument("--shards-dir", help="where the driver keeps the shard tarballs (default: a temporary directory)")
    parser.add_argument("--archiver", default=shutil.which("archiver") or "archiver")
    parser.add_argument("--address", default=None, help="the Ray cluster (default: RAY_ADDRESS, or a local one)")
    args = parser.parse_args()

    # A relative path would be taken from each worker's directory: make it absolute here.
    catalog = os.path.abspath(args.catalog) if os.path.exists(args.catalog) else args.catalog
    archiver = os.path.abspath(args.archiver) if os.path.exists(args.archiver) else args.archiver

    ray.init(address=args.address, logging_level="WARNING")
    pending = {
        archive_shard.remote(archiver, index, args.shards, catalog, args.mirror): index
        for index in range(1, args.shards + 1)
    }
    shards_dir = args.shards_dir or tempfile.mkdtemp(prefix="archiver-shards-")
    os.makedirs(shards_dir, exist_ok=True)
    paths = []
    # Each tarball is written out as its task finishes, so the driver holds one at a time.
    while pending:
        [done], _ = ray.wait(list(pending))
        index = pending.pop(done)
        path = os.path.join(shards_dir, f"shard-{index}.tar.gz")
        with open(path, "wb") as file:
            file.write(ray.get(done))
        print(f"shard {index}/{args.shards}: {os.path.getsize(path)} bytes -> {path}", file=sys.stderr)
        paths.append(path)
    ray.shutdown()

    merge = subprocess.run([archiver, "merge", "--out", args.out] + sorted(paths))
    if merge.returncode not in (0, 1) or not os.path.isdir(args.out):
        return merge.returncode
    verify = subprocess.run([archiver, "verify", args.out])
    return merge.returncode if verify.returncode == 0 else verify.returncode


if __name__ == "__main__":
    sys.exit(main())
