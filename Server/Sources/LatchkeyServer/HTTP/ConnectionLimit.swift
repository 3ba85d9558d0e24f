import Logging
import NIOCore
import Synchronization

/// `http.max-connections`: how many connections one listener keeps open at once (each listener counts its own; see
/// ``ConnectionGuards``). One more is closed as soon as it is accepted, so a flood of connections that never finish a
/// request cannot use up the process's file descriptors.
///
/// The first refusal logs a warning naming the setting; the next warning comes only after the count fell a tenth
/// below the limit, so a flood writes a line per wave, not per connection.
final class ConnectionLimit: Sendable {
    /// Why a connection's setup ended at once.
    struct Refused: Error {}

    let maximum: Int
    private let state = Mutex<(open: Int, warned: Bool)>((0, false))

    init(maximum: Int) { self.maximum = maximum }

    /// Counts `channel` in until it closes, when there is room; false when there is none.
    func admit(_ channel: any Channel, logger: Logger) -> Bool {
        let (admitted, warn, open) = self.state.withLock { state -> (Bool, Bool, Int) in
            if state.open < self.maximum {
                state.open += 1
                return (true, false, state.open)
            }
            defer { state.warned = true }
            return (false, !state.warned, state.open)
        }
        if admitted {
            channel.closeFuture.whenComplete { _ in self.release() }
        } else if warn {
            logger.warning(
                "Refusing new connections: http.max-connections (\(self.maximum)) are open; each new one is closed until some end",
                metadata: ["http.connections": "\(open)", "http.max_connections": "\(self.maximum)"])
        }
        return admitted
    }

    private func release() {
        self.state.withLock { state in
            state.open -= 1
            if state.open <= self.maximum - max(1, self.maximum / 10) { state.warned = false }
        }
    }
}
