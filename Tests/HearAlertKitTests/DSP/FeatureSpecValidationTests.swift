import Foundation
import Testing
@testable import HearAlertKit

/// A spec the host does not fully understand must be refused with a message naming the key
/// (CSources/alertnet/FORMAT.md); tools/features.py applies the same rules (tools/tests/test_features.py).
@Suite struct FeatureSpecValidationTests {
    static let documented = """
        {"sample_rate": 16000, "n_fft": 512, "win_length": 512, "hop_length": 256, "window": "hann",
         "kind": "log_mel", "n_mels": 64, "fmin": 50.0, "fmax": 8000.0, "mel_scale": "slaney",
         "mel_norm": "slaney", "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": 1e-10,
         "normalization": null}
        """

    /// The documented JSON with one key replaced (or removed when `value` is nil) or added.
    static func json(_ key: String, _ value: String?) -> Data {
        var object = try! JSONSerialization.jsonObject(with: Data(documented.utf8)) as! [String: Any]
        if let value {
            object[key] = try! JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)
        } else {
            object.removeValue(forKey: key)
        }
        return try! JSONSerialization.data(withJSONObject: object)
    }

    static func error(decoding data: Data) -> FeatureSpecError? {
        do {
            _ = try FeatureSpec(json: data)
            return nil
        } catch {
            return error as? FeatureSpecError
        }
    }

    @Test func defaultsAreTheDefaultModelsSpec() throws {
        #expect(try FeatureSpec(json: Data(Self.documented.utf8)) == FeatureSpec())
        #expect(FeatureSpec().winLength == 512 && FeatureSpec().hopLength == 256)
    }

    @Test func roundTripsThroughJSONWithExplicitNull() throws {
        var spec = FeatureSpec(kind: .logPower)
        let data = try spec.jsonData()
        #expect(String(decoding: data, as: UTF8.self).contains("\"normalization\" : null"))
        #expect(try FeatureSpec(json: data) == spec)
        spec.normalization = .init(mean: .init(repeating: 1, count: 257), std: .init(repeating: 2, count: 257))
        #expect(try FeatureSpec(json: spec.jsonData()) == spec)
    }

    @Test func normalizationMayBeOmitted() throws {
        #expect(try FeatureSpec(json: Self.json("normalization", nil)).normalization == nil)
    }

    /// The documented JSON text with `key`'s integer literal rewritten by `spelling` (512 -> 512.0), as text: a
    /// round trip through JSONSerialization would write 512.0 back as 512.
    static func text(_ key: String, _ spelling: (String) -> String) -> Data {
        let literal = try! Regex("\"\(key)\": ([0-9]+)")
        let match = Self.documented.firstMatch(of: literal)!
        let digits = String(match.output[1].substring!)
        return Data(Self.documented.replacingCharacters(in: match.range, with: "\"\(key)\": \(spelling(digits))").utf8)
    }

    /// Counts and sizes must be JSON integers (FORMAT.md "Integers"), as tools/features.py and the C core demand,
    /// although `JSONDecoder` alone reads 512.0 as 512: 512.0, 5e2 and true are refused, naming the key.
    @Test(arguments: ["sample_rate", "n_fft", "win_length", "hop_length", "n_mels"])
    func integerKeysRefuseOtherNumbersAndBooleans(key: String) throws {
        #expect(try FeatureSpec(json: Self.text(key) { $0 }) == FeatureSpec(), "written as an integer")
        for spelling in [{ (digits: String) in "\(digits).0" }, { "\($0)e0" }, { _ in "true" }] {
            let text = Self.text(key, spelling)
            #expect(Self.error(decoding: text) == .wrongType(key: key, expected: "an integer"),
                    "\(String(decoding: text, as: UTF8.self))")
        }
    }

    /// As in tools/features.py, every key's type is checked, in the keys' order, before any value's range: a
    /// 64.0 for `n_mels` is named even when `hop_length` (0) is out of range, and an earlier key's wrong type
    /// is named before a later key's spelling.
    @Test func integerSpellingIsATypeErrorInKeyOrder() throws {
        var text = String(decoding: Self.text("n_mels") { "\($0).0" }, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"hop_length\": 256", with: "\"hop_length\": 0")
        #expect(Self.error(decoding: Data(text.utf8)) == .wrongType(key: "n_mels", expected: "an integer"))
        text = text.replacingOccurrences(of: "\"sample_rate\": 16000", with: "\"sample_rate\": \"16000\"")
        #expect(Self.error(decoding: Data(text.utf8)) == .wrongType(key: "sample_rate", expected: "an integer"))
    }

    @Test(arguments: [
        ("n_mel", "64", FeatureSpecError.unknownKeys(["n_mel"])),
        ("n_fft", nil, .missingKey("n_fft")),
        ("n_fft", "\"512\"", .wrongType(key: "n_fft", expected: "an integer")),
        ("n_fft", "512.5", .wrongType(key: "n_fft", expected: "an integer")),
        ("fmin", "null", .wrongType(key: "fmin", expected: "a number")),
        ("window", "\"blackman\"",
         .invalidValue(key: "window", reason: "\"blackman\" is not one of hann, sqrt_hann, hamming")),
        ("normalization", "{\"mean\": [], \"sd\": []}", .unknownKeys(["normalization.sd"])),
        ("normalization", "{\"mean\": []}", .missingKey("normalization.std")),
        ("normalization", "[1, 2]", .wrongType(key: "normalization", expected: "a JSON object")),
    ] as [(String, String?, FeatureSpecError)])
    func refusesMalformedJSON(key: String, value: String?, expected: FeatureSpecError) {
        #expect(Self.error(decoding: Self.json(key, value)) == expected)
    }

    @Test(arguments: [
        ("sample_rate", "0"), ("n_fft", "511"), ("n_fft", "2"), ("win_length", "513"), ("win_length", "0"),
        ("hop_length", "0"), ("n_mels", "0"), ("fmin", "-1"), ("fmax", "8001"), ("fmax", "50"), ("power", "0"),
        ("log_base", "1"), ("log_base", "-10"), ("log_multiplier", "0"), ("log_floor", "0"),
        ("normalization", "{\"mean\": [0], \"std\": [1]}"),
    ])
    func refusesOutOfRangeValues(key: String, value: String) {
        guard case .invalidValue(let named, let reason)? = Self.error(decoding: Self.json(key, value)) else {
            Issue.record("\(key)=\(value) was accepted or gave another error")
            return
        }
        #expect(named == key, "\(reason)")
    }

    @Test func refusesZeroStd() {
        var spec = FeatureSpec(nMels: 2)
        spec.normalization = .init(mean: [0, 0], std: [1, 0])
        #expect(throws: FeatureSpecError.invalidValue(key: "normalization", reason: "std must be finite numbers > 0")) {
            try spec.validate()
        }
    }

    @Test func melParametersDoNotMatterForLogPower() throws {
        try FeatureSpec(kind: .logPower, nMels: 0, fmax: 1e9).validate()
    }

    @Test func fileErrorsNameTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-spec-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let bad = folder.appendingPathComponent("bad.json")
        try Self.json("hop", "160").write(to: bad)
        #expect(throws: FeatureSpecError.inFile(path: bad.path, .unknownKeys(["hop"]))) {
            try FeatureSpec(contentsOf: bad)
        }
        let fractional = folder.appendingPathComponent("fractional.json")
        try Self.text("n_fft") { "\($0).0" }.write(to: fractional)
        #expect(throws: FeatureSpecError.inFile(path: fractional.path, .wrongType(key: "n_fft", expected: "an integer"))) {
            try FeatureSpec(contentsOf: fractional)
        }
        let missing = folder.appendingPathComponent("missing.json")
        #expect(throws: FeatureSpecError.unreadable(path: missing.path, reason: "no such file")) {
            try FeatureSpec(contentsOf: missing)
        }
        let garbage = folder.appendingPathComponent("garbage.json")
        try Data("{not json".utf8).write(to: garbage)
        do {
            _ = try FeatureSpec(contentsOf: garbage)
            Issue.record("garbage accepted")
        } catch {
            let message = "\(error)"
            #expect(message.hasPrefix(garbage.path) && !message.contains("\n"), "\(message)")
        }
    }
}
