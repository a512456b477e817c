"""The fake server queues a burst of connections (a client with 32-64 requests in flight) instead
of dropping those beyond the standard library's backlog of 5."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler

from citegraph.testing._fake_server import _Server


def connected(server_type: type[_Server], n: int, timeout: float) -> int:
    """How many of ``n`` clients connect to a server that listens but never accepts."""
    server = server_type(("127.0.0.1", 0), BaseHTTPRequestHandler)
    clients = []
    try:
        done = 0
        for _ in range(n):
            client = socket.socket()
            client.settimeout(timeout)
            clients.append(client)
            try:
                client.connect(server.server_address)
                done += 1
            except OSError:
                pass
        return done
    finally:
        for client in clients:
            client.close()
        server.server_close()


def test_a_burst_of_64_connections_is_queued_before_accept() -> None:
    assert connected(_Server, 64, timeout=1.0) == 64


def test_the_standard_backlog_would_drop_them() -> None:
    """A burst of 16 against a backlog of 5 loses some: the check above is not vacuous."""

    class Small(_Server):
        request_queue_size = 5

    assert connected(Small, 16, timeout=0.2) < 16
