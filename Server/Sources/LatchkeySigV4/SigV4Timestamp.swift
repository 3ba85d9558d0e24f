import Foundation

/// The moment of a signature in SigV4's two forms: `20130524T000000Z` (`X-Amz-Date`) and `20130524` (the scope's date).
package struct SigV4Timestamp: Sendable, Hashable {
    /// `yyyyMMdd'T'HHmmss'Z'` in UTC, fractions of a second dropped.
    package let dateTime: String
    /// `yyyyMMdd` in UTC: the first part of the credential scope.
    package let date: String

    /// The timestamp of `date`, computed with integer arithmetic (the proleptic Gregorian calendar in UTC; Foundation's
    /// `Calendar` costs more than the whole rest of a signature on Linux).
    package init(_ date: Date) {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's civil_from_days.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        self.date = padded(year, 4) + padded(month, 2) + padded(day, 2)
        self.dateTime =
            self.date + "T" + padded(secondOfDay / 3600, 2) + padded(secondOfDay % 3600 / 60, 2) + padded(secondOfDay % 60, 2) + "Z"
    }

    /// `yyyy-MM-dd'T'HH:mm:ss'Z'`: the same moment in ISO 8601's extended form (what JSON bodies carry); `nil` for a
    /// year outside 0…9999.
    package var iso8601: String? {
        let b = Array(self.dateTime.utf8)  // yyyyMMddTHHmmssZ
        guard b.count == 16, b[0..<8].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let (dash, colon) = (UInt8(ascii: "-"), UInt8(ascii: ":"))
        let text = [b[0], b[1], b[2], b[3], dash, b[4], b[5], dash, b[6], b[7], b[8], b[9], b[10], colon, b[11], b[12], colon, b[13], b[14], b[15]]
        return String(decoding: text, as: UTF8.self)
    }
}
