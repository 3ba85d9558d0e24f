extension QRCode {
    /// The symbol as one inline `<svg>` element: a light square with the quiet zone, then one `<path>` tracing every
    /// run of dark modules in a row as a rectangle (`M x y h n v 1 h -n z`), in module units of the `viewBox`.
    ///
    /// The markup has no script, no external reference and no `style` attribute — colours are `fill` attributes — so
    /// it can be served under a strict Content-Security-Policy.
    ///
    /// - Parameters:
    ///   - moduleSize: The width and height of a module in CSS pixels (the `width` and `height` attributes); at least 1.
    ///   - quietZone: The light margin around the symbol, in modules; the standard asks for 4.
    ///   - label: The accessible name (`aria-label`), escaped; none when `nil`.
    /// - Returns: `<svg xmlns="http://www.w3.org/2000/svg" …>…</svg>`, without an XML declaration.
    public func svg(moduleSize: Int = 4, quietZone: Int = 4, label: String? = nil) -> String {
        precondition(moduleSize >= 1 && quietZone >= 0, "an SVG QR code needs modules of at least 1 pixel and a quiet zone of at least 0")
        let side = self.size + 2 * quietZone
        let pixels = side * moduleSize
        var svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(pixels)" height="\#(pixels)" viewBox="0 0 \#(side) \#(side)""#
        svg += #" role="img" shape-rendering="crispEdges""#
        if let label {
            svg += #" aria-label="\#(Self.escapingXML(label))""#
        }
        svg += ##"><rect width="\##(side)" height="\##(side)" fill="#fff"/><path fill="#000" d=""##
        svg += self.darkRunsPath(offset: quietZone)
        svg += #""/></svg>"#
        return svg
    }

    /// `M x y h n v 1 h -n z` for each horizontal run of dark modules, shifted by `offset` modules.
    private func darkRunsPath(offset: Int) -> String {
        var path = ""
        for y in 0..<self.size {
            var x = 0
            while x < self.size {
                guard self[x, y] else {
                    x += 1
                    continue
                }
                let start = x
                while x < self.size && self[x, y] { x += 1 }
                path += "M\(start + offset) \(y + offset)h\(x - start)v1h-\(x - start)z"
            }
        }
        return path
    }

    private static func escapingXML(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
