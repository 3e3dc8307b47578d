"""A loopback TCP proxy in front of one server, whose faults a run switches on for a while: delay, drop (new
connections refused), cut (connections cut after a random number of bytes), and blackhole both ways, client to
server only, or server to client only (bytes swallowed; when the blackhole ends its connections are cut, as a
partition's would time out)."""
from __future__ import annotations

import random
import socket
import threading
import time

MODES = ("delay", "drop", "cut", "blackhole", "blackhole-up", "blackhole-down")


class Link:
    def __init__(self, downstream: socket.socket) -> None:
        self.downstream = downstream
        self.upstream: socket.socket | None = None
        self.budget: int | None = None
        self.holed = False

    def close(self) -> None:
        for s in (self.downstream, self.upstream):
            if s is None:
                continue
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass


class FaultProxy:
    def __init__(self, target_port: int, seed: int) -> None:
        self.target_port = target_port
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.mode = "pass"
        self.until = 0.0
        self.delay = 0.0
        self.links: list[Link] = []
        self.cuts = 0
        self.closed = False
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()
        threading.Thread(target=self._tick, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def current(self) -> str:
        with self.lock:
            if self.mode != "pass" and time.monotonic() >= self.until:
                self.mode = "pass"
            return self.mode

    def inject(self, mode: str, seconds: float) -> None:
        """Switches `mode` on for `seconds` (delay: each chunk waits 50–1,000 ms)."""
        with self.lock:
            self.mode = mode
            self.until = time.monotonic() + seconds
            self.delay = self.rng.uniform(0.05, 1.0)
            if mode == "cut":
                for link in self.links:
                    link.budget = self.rng.randint(1, 20_000)

    def heal(self) -> None:
        """No fault from now on; connections a blackhole held are cut."""
        with self.lock:
            self.mode = "pass"
            self.until = 0.0
        self._release_holed()

    def _release_holed(self) -> None:
        with self.lock:
            holed = [link for link in self.links if link.holed]
            self.links = [link for link in self.links if not link.holed]
        for link in holed:
            link.close()

    def _tick(self) -> None:
        while not self.closed:
            time.sleep(0.2)
            if not self.current().startswith("blackhole"):
                self._release_holed()

    def _accept(self) -> None:
        while not self.closed:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            if self.current() == "drop":
                downstream.close()
                continue
            link = Link(downstream)
            with self.lock:
                if self.mode == "cut":
                    link.budget = self.rng.randint(1, 20_000)
                self.links.append(link)
            threading.Thread(target=self._serve, args=(link,), daemon=True).start()

    def _serve(self, link: Link) -> None:
        try:
            link.upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            link.upstream.settimeout(None)
        except OSError:
            link.close()
            self._forget(link)
            return
        threading.Thread(target=self._pump, args=(link, link.downstream, link.upstream, "up"), daemon=True).start()
        self._pump(link, link.upstream, link.downstream, "down")
        self._forget(link)

    def _forget(self, link: Link) -> None:
        with self.lock:
            if link in self.links:
                self.links.remove(link)

    def _pump(self, link: Link, src: socket.socket, dst: socket.socket, direction: str) -> None:
        try:
            while True:
                data = src.recv(16384)
                if not data:
                    break
                mode = self.current()
                if mode == "blackhole" or mode == f"blackhole-{direction}":
                    link.holed = True
                    continue
                if mode == "delay":
                    time.sleep(self.delay)
                with self.lock:
                    if link.budget is not None:
                        link.budget -= len(data)
                        if link.budget <= 0:
                            self.cuts += 1
                            raise OSError("cut")
                dst.sendall(data)
        except OSError:
            pass
        finally:
            link.close()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        with self.lock:
            links, self.links = self.links, []
        for link in links:
            link.close()
