import Foundation

extension FeatureSpec {
    /// Loads and validates a spec from a JSON file (the `features` object of a model, on its own); errors name
    /// the file and the key.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw FeatureSpecError.unreadable(path: url.path, reason: Self.reason(for: error, at: url))
        }
        do {
            self = try FeatureSpec(json: data)
        } catch let error as FeatureSpecError {
            throw FeatureSpecError.inFile(path: url.path, error)
        }
    }

    /// Decodes and validates a spec from JSON text, e.g. a model file's `features` metadata value. Integer keys
    /// must hold JSON integers: `512.0` or `5e2` is refused, as the C core and tools/features.py refuse it.
    public init(json: Data) throws {
        let decoder = JSONDecoder()
        decoder.userInfo[.featureSpecNonIntegerKeys] = Set(
            JSONInteger.keys(Self.integerKeys.map(\.stringValue), notWrittenAsIntegersIn: json))
        do {
            self = try decoder.decode(FeatureSpec.self, from: json)
        } catch let error as FeatureSpecError {
            throw error
        } catch {
            throw FeatureSpecError.wrongType(key: "feature spec", expected: "a JSON object (the text is not valid JSON)")
        }
    }

    /// The JSON form with sorted keys, as a model file or `--spec` file carries it.
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    private static func reason(for error: any Error, at url: URL) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "is a directory" }
        return (error as NSError).localizedFailureReason ?? "not readable"
    }
}
