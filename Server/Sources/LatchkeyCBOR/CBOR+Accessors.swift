extension CBOR {
    /// The value of `key` when this item is a map that has it; `nil` otherwise.
    public subscript(key: CBOR) -> CBOR? {
        self.mapEntries?.first { $0.key == key }?.value
    }

    /// The value of the text key `text` when this item is a map that has it; `nil` otherwise.
    public subscript(text: String) -> CBOR? {
        self[CBOR.text(text)]
    }

    /// The value of the integer key `int` when this item is a map that has it (COSE labels); `nil` otherwise.
    public subscript(int: Int) -> CBOR? {
        self[CBOR(int)]
    }

    /// The integer `value`, as an unsigned or a negative item.
    public init(_ value: Int) {
        self = value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    /// The bytes of a byte string.
    public var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { bytes } else { nil }
    }

    /// The text of a text string.
    public var textValue: String? {
        if case .text(let text) = self { text } else { nil }
    }

    /// The value of an unsigned or negative integer, when it fits an `Int`.
    public var intValue: Int? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): value <= UInt64(Int.max) ? -1 - Int(value) : nil
        default: nil
        }
    }

    /// The entries of a map, in order.
    public var mapEntries: [CBOR.Entry]? {
        if case .map(let entries) = self { entries } else { nil }
    }

    /// The elements of an array.
    public var arrayValue: [CBOR]? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// The value of a boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }
}
