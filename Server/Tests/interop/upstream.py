"""A stand-in app upstream for the nginx forward-auth test: answers every request with JSON naming the
identity headers nginx forwarded from Latchkey's /api/v1/authorize answer; a WebSocket handshake gets 101 with
them in X-Seen-* headers, then the connection closes. Usage: upstream.py PORT"""
import base64
import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Handler(BaseHTTPRequestHandler):
    def answer(self):
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.switch_protocols()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps({
            "user_id": self.headers.get("X-Latchkey-User-Id"),
            "device_id": self.headers.get("X-Latchkey-Device-Id"),
            "kind": self.headers.get("X-Latchkey-Kind"),
            "path": self.path,
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def switch_protocols(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
        self.protocol_version = "HTTP/1.1"
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        for name in ("User-Id", "Device-Id", "Kind"):
            self.send_header("X-Seen-" + name, self.headers.get("X-Latchkey-" + name) or "")
        self.send_header("X-Seen-Path", self.path)
        self.end_headers()
        self.close_connection = True

    do_GET = do_POST = answer

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
