# Helpers shared by scripts/test and scripts/bench; source it after setting ROOT.

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_for_health URL PID SECONDS: until GET URL/api/v1/health/ready answers 200 (the database prepared: on
# PostgreSQL the server listens before that) while process PID lives. Exit status 3: the process died; 4: timed out.
wait_for_health() {
  python3 "$ROOT/scripts/lib/wait_for.py" health "$1/api/v1/health/ready" "$2" "$3"
}

# wait_for_ports SECONDS PORT...: until each 127.0.0.1:PORT accepts connections.
wait_for_ports() {
  python3 "$ROOT/scripts/lib/wait_for.py" ports "$@"
}
