/// Encodes an absent value (`nil`) or an undefined number (NaN, infinity) as JSON `null`, instead of leaving the
/// key out or failing: every report then has the same keys, and "undefined" is visible, as sed_eval's NaN is.
@propertyWrapper
public struct NullWhenUndefined<Value: Encodable & Sendable>: Encodable, Sendable {
    public var wrappedValue: Value

    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let number = wrappedValue as? Double, !number.isFinite {
            try container.encodeNil()
        } else {
            try container.encode(wrappedValue)  // Optional.none encodes as null
        }
    }
}

extension NullWhenUndefined: Equatable where Value: Equatable {}
