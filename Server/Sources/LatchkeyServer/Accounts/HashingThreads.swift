import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Threads that do nothing but hash passwords, shared by every server of the process and started as needed (as many as
/// the largest `passwords.hashing-threads` asked for). They run at a lower CPU priority than everything else (nice 10 on
/// Linux, the utility QoS class on Apple platforms), so a sign-in flood takes the cores only while the event loops and
/// the task pool (token verification) leave them idle.
final class HashingThreads: @unchecked Sendable {
    static let shared = HashingThreads()

    /// Guards `jobs` and `started`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var next = 0
    private var started = 0

    /// Makes sure `count` threads run.
    func ensure(_ count: Int) {
        self.condition.lock()
        defer { self.condition.unlock() }
        while self.started < count {
            self.started += 1
            let thread = Thread { [self] in self.work() }
            thread.name = "latchkey-hash-\(self.started)"
            thread.start()
        }
    }

    /// Runs `job` on one of the threads, first come first served.
    func submit(_ job: @escaping @Sendable () -> Void) {
        self.condition.lock()
        self.jobs.append(job)
        self.condition.signal()
        self.condition.unlock()
    }

    private func work() {
        Self.lowerPriority()
        while true {
            self.condition.lock()
            while self.next == self.jobs.count { self.condition.wait() }
            let job = self.jobs[self.next]
            self.next += 1
            if self.next == self.jobs.count {
                self.jobs.removeAll(keepingCapacity: true)
                self.next = 0
            }
            self.condition.unlock()
            job()
        }
    }

    private static func lowerPriority() {
        #if os(Linux)
        // On Linux (NPTL) the nice value belongs to each thread: `who` 0 is the calling thread, not the whole process.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #elseif canImport(Darwin)
        _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #endif
    }
}
