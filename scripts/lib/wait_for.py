"""Waits for local services, for scripts/test and scripts/bench.

  wait_for.py health URL PID SECONDS   until GET URL answers 200 while process PID lives
                                       (exit 3: the process died; 4: timed out)
  wait_for.py ports SECONDS PORT...    until each 127.0.0.1:PORT accepts a connection (exit 1: timed out)
"""
import os
import socket
import sys
import time
import urllib.request


def health(url, pid, limit):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return 3  # the server died
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return 0
        except Exception:
            pass
        time.sleep(0.1)
    return 4


def ports(limit, numbers):
    deadline = time.monotonic() + limit
    for port in numbers:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    return 1
                time.sleep(0.1)
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "health":
        sys.exit(health(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
    if sys.argv[1] == "ports":
        sys.exit(ports(float(sys.argv[2]), [int(p) for p in sys.argv[3:]]))
    sys.exit(f"unknown command {sys.argv[1]}")
