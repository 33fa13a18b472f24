"""A stand-in for torchvision's MNIST mirrors: an HTTP server on 127.0.0.1 serving
full-size MNIST archives (blank digits, so that they compress to a few kB), each of which
can be served whole, truncated, slowly, or not at all."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import threading
import time

import numpy as np

from capsviz.data.mnist import MNIST_FILES


def archives() -> dict[str, bytes]:
    """{archive name: gzip bytes} of four well-formed MNIST files (labels 0..9 in turn)."""
    out = {}
    for name, (count, _) in MNIST_FILES.items():
        if "images" in name:
            body = (0x00000803).to_bytes(4, "big") + b"".join(v.to_bytes(4, "big") for v in (count, 28, 28))
            body += bytes(count * 784)
        else:
            body = (0x00000801).to_bytes(4, "big") + count.to_bytes(4, "big")
            body += (np.arange(count) % 10).astype(np.uint8).tobytes()
        out[name + ".gz"] = gzip.compress(body, compresslevel=1, mtime=0)
    return out


def md5s(files: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.md5(data).hexdigest() for name, data in files.items()}


class Mirror:
    """Serves ``files`` at ``url``; ``mode[name]`` is "whole" (default), "truncated" (says
    the full length, sends half and closes), "slow" (sends in 1 kB pieces 20 ms apart) or
    "missing" (404). ``requests`` lists the paths asked for."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.mode, self.requests = dict(files), {}, []
        mirror = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server name)
                name = self.path.rsplit("/", 1)[-1]
                mirror.requests.append(self.path)
                mode = mirror.mode.get(name, "whole")
                if name not in mirror.files or mode == "missing":
                    self.send_error(404)
                    return
                data = mirror.files[name]
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    if mode == "truncated":
                        self.wfile.write(data[: len(data) // 2])
                    elif mode == "slow":
                        for k in range(0, len(data), 1024):
                            self.wfile.write(data[k : k + 1024])
                            time.sleep(0.02)
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/mnist/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Mirror:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def refused_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: the connection is refused."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/mnist/"
