import Foundation

/// The moment of a signature in SigV4's two forms: `20130524T000000Z` (`X-Amz-Date`) and `20130524` (the scope's date).
@available(LatchkeyServer 1.0, *)
package struct SigV4Timestamp: Sendable, Hashable {
    /// `yyyyMMdd'T'HHmmss'Z'` in UTC, fractions of a second dropped.
    package let dateTime: String
    /// `yyyyMMdd` in UTC: the first part of the credential scope.
    package let date: String

    /// The timestamp of `date`.
    package init(_ date: Date) {
        let parts = Self.calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func padded(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        self.date = padded(parts.year, 4) + padded(parts.month, 2) + padded(parts.day, 2)
        self.dateTime = self.date + "T" + padded(parts.hour, 2) + padded(parts.minute, 2) + padded(parts.second, 2) + "Z"
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()
}
