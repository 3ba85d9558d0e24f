"""Free TCP ports on 127.0.0.1, for scripts/seaweedfs.

  free_ports.py N [OFFSET]   N distinct free ports (all held open at once, then released); with OFFSET, one
                             more port P for which P + OFFSET is free too (weed mini's maintenance worker dials
                             the admin gRPC server at admin port + 10000), printed last. Exit 1: none found.
"""
import random
import socket
import sys


def main(argv):
    count = int(argv[1])
    offset = int(argv[2]) if len(argv) > 2 else None
    held = []

    def grab(port=0):
        sock = socket.socket()
        sock.bind(("127.0.0.1", port))
        held.append(sock)
        return sock.getsockname()[1]

    try:
        ports = [grab() for _ in range(count)]
        if offset is not None:
            for _ in range(200):
                port = random.randint(20000, 65535 - offset)
                if port in ports or port + offset in ports:
                    continue
                try:
                    grab(port)
                    grab(port + offset)
                except OSError:
                    continue
                ports.append(port)
                break
            else:
                return 1
    finally:
        for sock in held:
            sock.close()
    print(" ".join(map(str, ports)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
