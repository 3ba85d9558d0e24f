import Foundation

/// The overview's activity chart: an inline SVG drawn on the server (numbers only, no user text), bars per hour.
enum AdminChart {
    static func svg(signIns: [Int], refreshes: [Int], endingAt end: Date) -> String {
        let (width, height) = (960.0, 240.0)
        let (left, right, top, bottom) = (44.0, 12.0, 12.0, 28.0)
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let hours = max(signIns.count, refreshes.count, 1)
        let peak = max(signIns.max() ?? 0, refreshes.max() ?? 0, 1)
        // Four gridlines at whole numbers: a step of 1, 2 or 5 times a power of ten.
        let scale = 4 * Self.niceCeiling((peak + 3) / 4)
        let slot = plotWidth / Double(hours)
        let bar = max(1, slot * 0.36)
        var parts: [String] = []
        parts.append(
            "<svg id='activity-chart' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 \(Int(width)) \(Int(height))' role='img' aria-label='Sign-ins and refreshes per hour'>"
        )
        parts.append("<title>Sign-ins and refreshes per hour, last 24 hours</title>")
        for step in 0...4 {
            let value = scale * Double(step) / 4
            let y = top + plotHeight - plotHeight * Double(step) / 4
            parts.append(
                "<line x1='\(left)' y1='\(Self.f(y))' x2='\(width - right)' y2='\(Self.f(y))' stroke='#e4e7ec' stroke-width='1'/>")
            parts.append(
                "<text x='\(left - 6)' y='\(Self.f(y + 4))' font-size='11' text-anchor='end' fill='#667085'>\(Self.label(value))</text>")
        }
        let startHour = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: end).hour ?? 0
        for index in 0..<hours {
            let x = left + slot * Double(index) + slot * 0.12
            for (series, values, color) in [(0, signIns, "#3056d3"), (1, refreshes, "#9bb0f0")] {
                let value = index < values.count ? values[index] : 0
                let h = plotHeight * Double(value) / scale
                parts.append(
                    "<rect x='\(Self.f(x + Double(series) * bar))' y='\(Self.f(top + plotHeight - h))' width='\(Self.f(bar))' height='\(Self.f(h))' fill='\(color)' rx='1.5'><title>\(value)</title></rect>"
                )
            }
            if index % 3 == 0 {
                let hour = (startHour + index) % 24
                parts.append(
                    "<text x='\(Self.f(left + slot * Double(index) + slot / 2))' y='\(Int(height - 8))' font-size='11' text-anchor='middle' fill='#667085'>\(String(format: "%02d:00", hour))</text>"
                )
            }
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    /// 1, 2 or 5 times a power of ten, at least `value`.
    static func niceCeiling(_ value: Int) -> Double {
        var magnitude = 1.0
        while magnitude * 10 <= Double(value) { magnitude *= 10 }
        for factor in [1.0, 2.0, 5.0, 10.0] where factor * magnitude >= Double(value) { return factor * magnitude }
        return 10 * magnitude
    }

    private static func label(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value) }
    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }
}
