import Foundation

/// The one JSON style of evaluation reports: snake_case keys, as sed_eval and the corpus files use; undefined
/// scores are `null`.
public enum ReportJSON {
    public static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
