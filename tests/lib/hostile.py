"""Hostile TUIO clients for tests/e2e_flood.sh (loopback only, bounded in time).

    hostile.py pingflood PORT N SECONDS [reconnect]
        N WebSocket clients ping as fast as the socket takes it for SECONDS
        (with "reconnect": connecting again whenever the daemon drops them).
        Prints one JSON line: {"pings_written": ..., "pongs": ...,
        "dropped": ...} (pings the kernel took, pongs read, times dropped).
    hostile.py lockout WSPORT TCPPORT N SECONDS
        N half-open WebSocket handshakes (connect, send nothing) and N TCP
        clients that never read, held for SECONDS and renewed when dropped;
        after 1 s a 17th WebSocket client and a 17th TCP client try to get
        TUIO. Prints {"ws_served_s": S or null, "tcp_served_s": S or null}.
"""
import base64
import json
import os
import select
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def ws_handshake(port, timeout=3.0):
    s = socket.create_connection((HOST, port), timeout=timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    req = ("GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (HOST, port, key))
    s.sendall(req.encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            raise ConnectionError("closed during handshake")
        buf += d
    if not buf.startswith(b"HTTP/1.1 101"):
        raise ConnectionError("no 101")
    return s, buf.split(b"\r\n\r\n", 1)[1]


def ping_frame(payload=b"x"):
    return bytes([0x89, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


def pingflood(port, n, seconds, reconnect):
    stats = {"pings_written": 0, "pongs": 0, "dropped": 0}
    lock = threading.Lock()
    end = time.monotonic() + seconds
    burst = ping_frame() * 512

    def one():
        pings = pongs = reconnects = 0
        while time.monotonic() < end:
            try:
                s, rest = ws_handshake(port)
            except OSError:
                reconnects += 1
                time.sleep(0.01)
                continue
            s.setblocking(False)
            try:
                while time.monotonic() < end:
                    _, w, _ = select.select([], [s], [], 0.05)
                    if w:
                        k = s.send(burst)
                        pings += k // 7
                    try:
                        d = s.recv(65536)
                        if not d:
                            break
                        pongs += d.count(b"\x8a\x01x")
                    except BlockingIOError:
                        pass
            except OSError:
                pass
            s.close()
            reconnects += 1
            if not reconnect:
                break
        with lock:
            stats["pings_written"] += pings
            stats["pongs"] += pongs
            stats["dropped"] += reconnects

    th = [threading.Thread(target=one) for _ in range(n)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    time.sleep(max(0.0, end - time.monotonic()))
    print(json.dumps(stats))


def lockout(ws_port, tcp_port, n, seconds):
    end = time.monotonic() + seconds
    held = []

    def refill():
        # Half-open handshakes and never-reading TCP clients, renewed when
        # the daemon drops them.
        while len(held) < 2 * n:
            try:
                a = socket.create_connection((HOST, ws_port), timeout=2)
                b = socket.create_connection((HOST, tcp_port), timeout=2)
                b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                held.extend([a, b])
            except OSError:
                time.sleep(0.05)

    def prune():
        for s in list(held):
            r, _, _ = select.select([s], [], [], 0)
            if r:
                try:
                    if s.recv(1, socket.MSG_PEEK) == b"":
                        raise OSError
                except OSError:
                    held.remove(s)
                    s.close()

    refill()
    result = {"ws_served_s": None, "tcp_served_s": None}

    def try_ws():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 6 and result["ws_served_s"] is None:
            try:
                s, rest = ws_handshake(ws_port, timeout=1)
                s.settimeout(1)
                data = rest
                while len(data) < 2:
                    data += s.recv(4096)
                if data[0] == 0x82:
                    result["ws_served_s"] = round(time.monotonic() - t0, 3)
                s.close()
            except OSError:
                time.sleep(0.1)

    def try_tcp():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 6 and result["tcp_served_s"] is None:
            try:
                s = socket.create_connection((HOST, tcp_port), timeout=1)
                s.settimeout(1)
                if len(s.recv(4096)) >= 4:
                    result["tcp_served_s"] = round(time.monotonic() - t0, 3)
                s.close()
            except OSError:
                time.sleep(0.1)

    time.sleep(1.0)
    prune()
    refill()
    th = [threading.Thread(target=try_ws), threading.Thread(target=try_tcp)]
    for t in th:
        t.start()
    while any(t.is_alive() for t in th) or time.monotonic() < end:
        prune()
        refill()
        time.sleep(0.2)
    for t in th:
        t.join()
    for s in held:
        s.close()
    print(json.dumps(result))


if __name__ == "__main__":
    if sys.argv[1] == "pingflood":
        pingflood(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5:] == ["reconnect"])
    elif sys.argv[1] == "lockout":
        lockout(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit("usage: see the docstring")
