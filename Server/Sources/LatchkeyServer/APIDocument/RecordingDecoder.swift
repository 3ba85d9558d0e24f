/// The decoder ``SchemaRecorder`` hands a type: every value asked for is recorded in an ``ObjectRecord`` and answered
/// with a stand-in.
struct RecordingDecoder: Decoder {
    let recorder: SchemaRecorder
    let object: ObjectRecord
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedRecorder<Key>(recorder: self.recorder, object: self.object))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { EmptyUnkeyedContainer() }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self.object.isSingleValue = true
        return SingleValueRecorder(recorder: self.recorder, object: self.object)
    }
}

private struct KeyedRecorder<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: SchemaRecorder
    let object: ObjectRecord
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        // A type that asks is one whose key may hold null (and is then decoded when it does not).
        self.object.nullable.insert(key.stringValue)
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        self.object.record(key.stringValue, try self.recorder.schema(of: type), required: true)
        return try self.recorder.standIn(type)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try self.decodeIfPresent(generic: type, forKey: key)
    }

    private func decodeIfPresent<T: Decodable>(generic type: T.Type, forKey key: Key) throws -> T? {
        self.object.record(key.stringValue, try self.recorder.schema(of: type), required: false)
        return nil
    }

    // The protocol's default `decodeIfPresent` for these types asks `decode` after `contains`, which would record a
    // required key: each goes to the generic one instead.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try self.decodeIfPresent(generic: type, forKey: key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try self.decodeIfPresent(generic: type, forKey: key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(KeyedRecorder<NestedKey>(recorder: self.recorder, object: ObjectRecord()))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { EmptyUnkeyedContainer() }
    func superDecoder() throws -> any Decoder { RecordingDecoder(recorder: self.recorder, object: self.object) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RecordingDecoder(recorder: self.recorder, object: ObjectRecord()) }
}

private struct SingleValueRecorder: SingleValueDecodingContainer {
    let recorder: SchemaRecorder
    let object: ObjectRecord
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        self.object.singleValue = try self.recorder.schema(of: type)
        return try self.recorder.standIn(type)
    }
}

/// Collections decode as empty: their element type is read from the collection's type instead.
private struct EmptyUnkeyedContainer: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    mutating func decodeNil() throws -> Bool { true }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "an empty collection"))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "an empty collection"))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { self }
    mutating func superDecoder() throws -> any Decoder {
        throw DecodingError.valueNotFound(Void.self, .init(codingPath: [], debugDescription: "an empty collection"))
    }
}
