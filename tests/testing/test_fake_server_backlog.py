"""The fake server queues a burst of connections (a client with 32-64 requests in flight) instead
of dropping those beyond the standard library's backlog of 5."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler

from citegraph.testing._fake_server import _Server


def test_a_burst_of_64_connections_is_queued_before_accept() -> None:
    server = _Server(("127.0.0.1", 0), BaseHTTPRequestHandler)  # listening, never accepting
    clients = []
    try:
        connected = 0
        for _ in range(64):
            client = socket.socket()
            client.settimeout(1.0)
            clients.append(client)
            try:
                client.connect(server.server_address)
                connected += 1
            except OSError:
                pass
        assert connected == 64
    finally:
        for client in clients:
            client.close()
        server.server_close()


def test_the_standard_backlog_would_drop_them() -> None:
    """A burst of 16 against a backlog of 5 loses some: the check above is not vacuous."""

    class Small(_Server):
        request_queue_size = 5

    server = Small(("127.0.0.1", 0), BaseHTTPRequestHandler)
    clients = []
    try:
        connected = 0
        for _ in range(16):
            client = socket.socket()
            client.settimeout(0.2)
            clients.append(client)
            try:
                client.connect(server.server_address)
                connected += 1
            except OSError:
                pass
        assert connected < 16
    finally:
        for client in clients:
            client.close()
        server.server_close()
