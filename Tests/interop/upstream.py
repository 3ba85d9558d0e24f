"""A stand-in app upstream for the nginx forward-auth test: answers every request with JSON naming the
identity headers nginx forwarded from Latchkey's /api/v1/authorize answer. Usage: upstream.py PORT"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def answer(self):
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

    do_GET = do_POST = answer

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
