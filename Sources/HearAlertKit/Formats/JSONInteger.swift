import Foundation

/// Whether a JSON number was written as an integer: `512`, not `512.0`, `5e2` or `true`.
///
/// Counts and sizes must be JSON integers (CSources/alertnet/FORMAT.md, "Integers"): the C core and the Python
/// tools refuse anything else, and the host must agree with them about which files are valid. `JSONDecoder` cannot
/// tell: it hands `512.0` to an `Int` field as 512. `JSONSerialization` keeps the literal's kind in the number's
/// type (an integer literal becomes an integer `NSNumber`, one with a fraction or exponent a `Double`, `true` and
/// `false` a `Bool`), so readers parse with it once more to check the fields that must be integers.
enum JSONInteger {
    /// `NSNumber.objCType` codes of the integer types `JSONSerialization` reads integer literals into. `Bool` is
    /// "c" (a char), and a `Double` "d".
    private static let integerTypeCodes: Set<String> = ["s", "i", "l", "q", "S", "I", "L", "Q"]

    /// True for a value from `JSONSerialization` that was an integer literal; false for any other number, a
    /// boolean, or anything that is not a number.
    static func isWrittenAsInteger(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return integerTypeCodes.contains(String(cString: number.objCType))
    }

    /// Those of `keys` that `object` (from `JSONSerialization`) has with a value not written as an integer, in the
    /// order of `keys`.
    static func keys(_ keys: [String], notWrittenAsIntegersIn object: [String: Any]) -> [String] {
        keys.filter { key in object[key].map { !isWrittenAsInteger($0) } ?? false }
    }

    /// The same for JSON text; empty when the text is no JSON object (the caller's decoder reports that).
    static func keys(_ keys: [String], notWrittenAsIntegersIn text: Data) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: text) as? [String: Any] else { return [] }
        return Self.keys(keys, notWrittenAsIntegersIn: object)
    }
}
