import Foundation

/// A duration as people type it: seconds, or a number with `s`, `m`, `h` or `d` (`90m`, `30d`).
package enum DurationText {
    /// The seconds `text` stands for; nil unless it is a positive, finite duration.
    package static func seconds(_ text: String) -> TimeInterval? {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text)
        var unit: TimeInterval = 1
        if let last = text.last, let multiplier = units[last] {
            number = text.dropLast()
            unit = multiplier
        }
        guard let value = Double(number), value > 0, value.isFinite, (value * unit).isFinite else { return nil }
        return value * unit
    }
}
