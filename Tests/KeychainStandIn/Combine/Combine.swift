// A stand-in for the part of Combine that `AuthObservableObject` uses (`ObservableObject`, `@Published`), so that the
// Apple-only code compiles and runs on Linux (scripts/check-keychain). Never part of the SDK.
//
// As in Combine, an `ObservableObject` whose publisher is an `ObservableObjectPublisher` gets `objectWillChange` for
// free, and setting a `@Published` property sends it (through the enclosing-instance subscript, as Combine does).
import Foundation

/// `ObservableObjectPublisher`: counts what it sent.
public final class ObservableObjectPublisher: @unchecked Sendable {
    private let lock = NSLock()
    private var sent = 0

    public init() {}

    public func send() { self.lock.withLock { self.sent += 1 } }

    /// How many times `send()` was called.
    public var sendCount: Int { self.lock.withLock { self.sent } }
}

/// `ObservableObject`.
public protocol ObservableObject: AnyObject {
    associatedtype ObjectWillChangePublisher = ObservableObjectPublisher
    var objectWillChange: ObjectWillChangePublisher { get }
}

/// Each object's publisher (kept for the life of the test process; Combine keeps it in the object).
private final class Publishers: @unchecked Sendable {
    static let shared = Publishers()
    private let lock = NSLock()
    private var byObject: [ObjectIdentifier: (object: AnyObject, publisher: ObservableObjectPublisher)] = [:]

    func publisher(for object: AnyObject) -> ObservableObjectPublisher {
        self.lock.withLock {
            if let entry = self.byObject[ObjectIdentifier(object)] { return entry.publisher }
            let publisher = ObservableObjectPublisher()
            self.byObject[ObjectIdentifier(object)] = (object, publisher)
            return publisher
        }
    }
}

extension ObservableObject where ObjectWillChangePublisher == ObservableObjectPublisher {
    public var objectWillChange: ObservableObjectPublisher { Publishers.shared.publisher(for: self) }
}

/// `@Published`.
@propertyWrapper
public struct Published<Value> {
    private var value: Value

    public init(wrappedValue: Value) { self.value = wrappedValue }

    @available(*, unavailable, message: "@Published is only available on properties of classes")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    public static subscript<Instance: ObservableObject>(
        _enclosingInstance instance: Instance, wrapped wrappedKeyPath: ReferenceWritableKeyPath<Instance, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Instance, Self>
    ) -> Value {
        get { instance[keyPath: storageKeyPath].value }
        set {
            (instance.objectWillChange as? ObservableObjectPublisher)?.send()
            instance[keyPath: storageKeyPath].value = newValue
        }
    }
}
