import Foundation
import Logging
import Synchronization
import Testing

/// One log message as a server emitted it, with its metadata (the logger's own, the provider's and the call's).
struct CapturedLogLine: Sendable {
    let level: Logger.Level
    let message: String
    let metadata: [String: String]
    let source: String
    let error: String?

    /// Everything the line would put in a log file, as one string.
    var rendered: String {
        let fields = self.metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "\(self.level) [\(self.source)] \(self.message) \(fields)\(self.error.map { " error=\($0)" } ?? "")"
    }
}

/// Every line logged through the loggers a ``CapturingLogHandler`` made, in order; safe from any thread.
final class LogCapture: Sendable {
    private let storage = Mutex<[CapturedLogLine]>([])

    func append(_ line: CapturedLogLine) { self.storage.withLock { $0.append(line) } }

    var lines: [CapturedLogLine] { self.storage.withLock { $0 } }

    /// A logger at `.trace` whose every line lands here.
    func logger(label: String = "latchkey-capture") -> Logger {
        var logger = Logger(label: label) { _ in CapturingLogHandler(capture: self) }
        logger.logLevel = .trace
        return logger
    }
}

/// A `LogHandler` that records instead of printing.
struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    init(capture: LogCapture) { self.capture = capture }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let own = event.metadata { merged.merge(own) { $1 } }
        self.capture.append(
            CapturedLogLine(
                level: event.level, message: event.message.description, metadata: merged.mapValues { "\($0)" }, source: event.source,
                error: event.error.map { String(describing: $0) }))
    }
}
