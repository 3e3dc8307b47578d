#!/usr/bin/env python3
"""Storage throughput (`/storage/v1`): upload and download MB/s of 1 MiB and 5 MiB random objects at concurrency 1
and 8, beside a `cp` of the same files on the same disk, same run. Prints JSON.

A fresh deployment (SQLite by default: a temporary data directory, so the objects' bytes land in
`<data dir>/storage/`), served on a free loopback port. With the service key: a private bucket, then for each size
and each concurrency N uploads (`POST /storage/v1/object/{bucket}/{key}`, the raw bytes as the body with
`Content-Type: application/octet-stream`) of N different random objects, then N downloads
(`GET /storage/v1/object/{bucket}/{key}`) of the same objects. Every downloaded body is checked against the uploaded
bytes (SHA-256) and its ETag against their MD5 before anything is reported. Throughput is the bytes of the N requests
divided by the wall time from the first request sent to the last response read (MB = 2^20 bytes); p50/p99 are per
request (send → whole response read). One warm-up upload and download of each size is not counted. `server_cpu_s`
is the server process's user + system CPU time during the phase (/proc/PID/stat), `client_cpu_s` this script's
(httpx), `postgres_cpu_s` the PostgreSQL cluster's processes' (PostgreSQL only); `server_peak_rss_mib` is the
server's VmHWM at the end.

Reference in the same run, on the filesystem of the data directory (a folder inside it): the same N objects written
as source files first (not timed), then
  - `cp SRC DST && sync DST` per file (coreutils; `sync FILE` fsyncs that file), 1 and 8 at a time;
  - Python write + fsync + rename + folder fsync per file (what `FileByteStore` does), 1 and 8 at a time;
  - a plain read of every copied file back (open, read, close; the page cache is warm, as for the server's reads).

Usage: bench/storage_bench.py CARAVAN_BIN [objects_1mb=48] [objects_5mb=16]

With CARAVAN_BENCH_DATABASE_URL set to a postgres:// URL of a running cluster (e.g. the `postgres` maintenance
database that `scripts/postgres-cluster start` prints), the deployment lives in PostgreSQL instead (object bytes as
base64 1 MiB chunks in `storage_object_chunks`): the script creates a fresh database on that cluster with psql
(`caravan_storage_bench_<pid>`), migrates and serves with `--database`, and drops the database at the end. The `cp`
reference then runs in the temporary data directory (same disk as the cluster's directory under /tmp here).
"""
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embedding_bench import Caravan as Deployment  # noqa: E402  (the deployment the benches share)

MIB = 1 << 20
BUCKET = "bench"
CONCURRENCIES = (1, 8)


class Caravan(Deployment):
    """A fresh, empty Caravan deployment (SQLite in a temporary data directory, or a fresh PostgreSQL database on the
    cluster of `cluster_url`) served on a free loopback port."""

    def __init__(self, binary: str, cluster_url: str | None = None):
        super().__init__(binary, None, cluster_url, name="storage")

    def cpu_seconds(self) -> float:
        """The server process's user + system CPU time so far."""
        with open(f"/proc/{self.server.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def database_cpu_seconds(self) -> float | None:
        """PostgreSQL deployments: the user + system CPU time of the cluster's processes so far (the postmaster's
        children, plus what exited children left in its cutime/cstime); None on SQLite."""
        if not self.database:
            return None
        if not hasattr(self, "postmaster"):
            data_directory = subprocess.run(["psql", self.cluster_url, "-Atc", "SHOW data_directory"], check=True,
                                            capture_output=True, text=True).stdout.strip()
            with open(os.path.join(data_directory, "postmaster.pid")) as pidfile:
                self.postmaster = int(pidfile.readline())
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.postmaster:
                total += int(fields[11]) + int(fields[12])
            elif int(entry) == self.postmaster:
                total += sum(int(f) for f in fields[11:15])
        return total / os.sysconf("SC_CLK_TCK")

    def peak_rss_mib(self) -> float:
        with open(f"/proc/{self.server.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
        return float("nan")



def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def summary(total_bytes: int, wall: float, latencies: list[float], cpu: dict | None = None) -> dict:
    extra = {f"{k}_cpu_s": round(v, 2) for k, v in (cpu or {}).items() if v is not None}
    return {**extra, "mb_per_s": round(total_bytes / MIB / wall, 1), "wall_s": round(wall, 3),
            "p50_ms": round(percentile(latencies, 50) * 1000, 1), "p99_ms": round(percentile(latencies, 99) * 1000, 1),
            "requests": len(latencies)}


async def run_requests(count: int, concurrency: int, request) -> tuple[float, list[float], list]:
    """`request(i)` for i in 0..<count, `concurrency` at a time; returns (wall seconds, per-request seconds, results)."""
    queue = list(range(count))
    latencies, results = [0.0] * count, [None] * count

    async def worker():
        while queue:
            i = queue.pop(0)
            start = time.perf_counter()
            results[i] = await request(i)
            latencies[i] = time.perf_counter() - start

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start, latencies, results


def cpu_now(caravan: Caravan) -> dict:
    return {"server": caravan.cpu_seconds(), "client": time.process_time(), "postgres": caravan.database_cpu_seconds()}


def cpu_spent(before: dict, after: dict) -> dict:
    return {k: None if before[k] is None else after[k] - before[k] for k in before}


async def measure_caravan(caravan: Caravan, objects: dict[int, list[bytes]]) -> dict:
    limits = httpx.Limits(max_connections=max(CONCURRENCIES), max_keepalive_connections=max(CONCURRENCIES))
    async with httpx.AsyncClient(base_url=caravan.url, headers=caravan.admin(), limits=limits, timeout=120) as http:
        r = await http.post("/storage/v1/bucket", json={"id": BUCKET, "name": BUCKET, "public": False})
        assert r.status_code == 200, r.text

        async def upload(key: str, body: bytes) -> None:
            r = await http.post(f"/storage/v1/object/{BUCKET}/{key}", content=body,
                                headers={"Content-Type": "application/octet-stream"})
            assert r.status_code == 200 and r.json()["Key"] == f"{BUCKET}/{key}", (r.status_code, r.text)

        async def download(key: str) -> tuple[bytes, str]:
            r = await http.get(f"/storage/v1/object/{BUCKET}/{key}")
            assert r.status_code == 200, (r.status_code, r.text[:200])
            return r.content, r.headers.get("etag", "")

        results = {}
        for size, bodies in objects.items():
            await upload(f"warmup/{size}", bodies[0])  # warm-up: not counted
            assert (await download(f"warmup/{size}"))[0] == bodies[0]
            for concurrency in CONCURRENCIES:
                keys = [f"c{concurrency}/{size}mb/{i:03d}.bin" for i in range(len(bodies))]
                total = size * MIB * len(bodies)
                cpu0 = cpu_now(caravan)
                up_wall, up_lat, _ = await run_requests(len(bodies), concurrency, lambda i: upload(keys[i], bodies[i]))
                cpu1 = cpu_now(caravan)
                down_wall, down_lat, got = await run_requests(len(bodies), concurrency, lambda i: download(keys[i]))
                cpu2 = cpu_now(caravan)
                for i, (body, etag) in enumerate(got):  # every byte checked before anything is reported
                    assert hashlib.sha256(body).digest() == hashlib.sha256(bodies[i]).digest(), f"{keys[i]}: bytes differ"
                    assert etag.strip('"') == hashlib.md5(bodies[i]).hexdigest(), f"{keys[i]}: ETag {etag}"
                results[f"{size}MiB_c{concurrency}"] = {
                    "upload": summary(total, up_wall, up_lat, cpu_spent(cpu0, cpu1)),
                    "download": summary(total, down_wall, down_lat, cpu_spent(cpu1, cpu2)),
                    "verified": len(got)}
        return results


def fsync_folder(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def measure_cp(directory: str, objects: dict[int, list[bytes]]) -> dict:
    """The same objects copied on the data directory's filesystem: `cp` + `sync FILE`, and write+fsync+rename, then
    read back; 1 and 8 at a time."""
    results = {}
    source = os.path.join(directory, "cp-source")
    os.makedirs(source)
    for size, bodies in objects.items():
        sources = []
        for i, body in enumerate(bodies):
            path = os.path.join(source, f"{size}mb-{i:03d}.bin")
            with open(path, "wb") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            sources.append(path)
        total = size * MIB * len(bodies)
        for concurrency in CONCURRENCIES:
            target = os.path.join(directory, f"cp-c{concurrency}-{size}mb")
            os.makedirs(target)
            dests = [os.path.join(target, os.path.basename(p)) for p in sources]

            def cp_sync(i: int) -> None:
                subprocess.run(["cp", sources[i], dests[i]], check=True)
                subprocess.run(["sync", dests[i]], check=True)

            def write_fsync_rename(i: int) -> None:
                temporary = dests[i] + ".py.tmp"
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                try:
                    view = memoryview(bodies[i])
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.rename(temporary, dests[i] + ".py")
                fsync_folder(target)

            def read_back(i: int) -> bytes:
                with open(dests[i], "rb") as f:
                    return f.read()

            def timed(fn) -> tuple[float, list[float], list]:
                def one(i):
                    start = time.perf_counter()
                    value = fn(i)
                    return time.perf_counter() - start, value
                start = time.perf_counter()
                with ThreadPoolExecutor(concurrency) as pool:
                    done = list(pool.map(one, range(len(bodies))))
                return time.perf_counter() - start, [d[0] for d in done], [d[1] for d in done]

            cp_wall, cp_lat, _ = timed(cp_sync)
            py_wall, py_lat, _ = timed(write_fsync_rename)
            read_wall, read_lat, read = timed(read_back)
            assert all(hashlib.sha256(b).digest() == hashlib.sha256(bodies[i]).digest() for i, b in enumerate(read))
            results[f"{size}MiB_c{concurrency}"] = {
                "cp_sync": summary(total, cp_wall, cp_lat), "write_fsync_rename": summary(total, py_wall, py_lat),
                "read": summary(total, read_wall, read_lat)}
            shutil.rmtree(target)
    shutil.rmtree(source)
    return results


def main() -> None:
    binary = sys.argv[1]
    counts = {1: int(sys.argv[2]) if len(sys.argv) > 2 else 48, 5: int(sys.argv[3]) if len(sys.argv) > 3 else 16}
    objects = {size: [os.urandom(size * MIB) for _ in range(count)] for size, count in counts.items()}
    caravan = Caravan(binary, os.environ.get("CARAVAN_BENCH_DATABASE_URL") or None)
    try:
        load_before = os.getloadavg()
        measured = asyncio.run(measure_caravan(caravan, objects))
        peak_rss = caravan.peak_rss_mib()
        reference = measure_cp(caravan.data, objects)
        filesystem = subprocess.run(["df", "--output=source,fstype", caravan.data], capture_output=True,
                                    text=True).stdout.split("\n")[1].split()
        result = {"engine": caravan.engine, "objects": {f"{s}MiB": c for s, c in counts.items()},
                  "data_dir_filesystem": filesystem, "load_average_before": load_before,
                  "caravan": measured, "reference": reference, "server_peak_rss_mib": peak_rss,
                  "load_average_after": os.getloadavg()}
        result["ratios"] = {
            case: {"upload_vs_cp_sync": round(m["upload"]["mb_per_s"] / reference[case]["cp_sync"]["mb_per_s"], 3),
                   "upload_vs_write_fsync_rename": round(m["upload"]["mb_per_s"]
                                                         / reference[case]["write_fsync_rename"]["mb_per_s"], 3),
                   "download_vs_read": round(m["download"]["mb_per_s"] / reference[case]["read"]["mb_per_s"], 3)}
            for case, m in measured.items()}
        print(json.dumps(result, indent=1))
    finally:
        caravan.close()


if __name__ == "__main__":
    main()
