import Foundation
import Testing
@testable import HearAlertKit

/// AlertModel over the committed fixture models (Fixtures/alertnet, made by
/// tools/fixtures/make_alertnet_fixtures.py); expected probabilities come from the numpy reference
/// tools/alertnet_ref.py.
struct AlertModelTests {
    static func fixture(_ name: String, _ suffix: String) -> String {
        Bundle.module.url(forResource: name, withExtension: suffix, subdirectory: "Fixtures/alertnet")!.path
    }

    static let sigmoidModel = fixture("conv-bn-maxpool-gap-sigmoid", "safetensors")
    static let softmaxModel = fixture("strided-avgpool-flatten-softmax", "safetensors")

    /// The `.expect` format: "input N", N floats, "output K", K floats, repeated per window.
    static func expectations(_ name: String) throws -> [(input: [Float], output: [Float])] {
        let words = try String(contentsOfFile: fixture(name, "expect"), encoding: .utf8)
            .split(whereSeparator: { $0 == " " || $0 == "\n" })
        var cases: [(input: [Float], output: [Float])] = []
        var index = 0
        func block(_ tag: String) -> [Float] {
            precondition(words[index] == tag)
            let count = Int(words[index + 1])!
            defer { index += 2 + count }
            return words[(index + 2)..<(index + 2 + count)].map { Float($0)! }
        }
        while index < words.count { cases.append((block("input"), block("output"))) }
        return cases
    }

    @Test func exposesTheFileMetadata() throws {
        let model = try AlertModel(path: Self.sigmoidModel)
        #expect(model.name == "conv-bn-maxpool-gap-sigmoid")
        #expect(model.labels == ["siren", "car_horn", "doorbell"])
        #expect(model.thresholds == [0.5, 0.5, 0.5])
        #expect(model.featureSpec.binCount == 10)
        #expect(model.contextFrames == 12)
        #expect(model.decisionStep == 2)
        #expect(model.inputCount == 120)
        #expect(model.metadata("trained_on") == "nothing: random weights, seed 0")
        #expect(model.metadata("absent") == nil)
        #expect(model.layers.map(\.op) == ["conv2d", "batchnorm", "relu", "maxpool2d", "conv2d", "relu",
                                           "global_avgpool", "dense", "sigmoid"])
        #expect(model.layers[3].outputShape == [4, 6, 5])
        #expect(model.layers[6].outputShape == [6])
        #expect(model.parameterCount == 4 * 9 + 4 + 4 * 4 + 6 * 36 + 6 + 6 * 3 + 3)
        #expect(model.mflops > 0)
    }

    @Test(arguments: ["conv-bn-maxpool-gap-sigmoid", "strided-avgpool-flatten-softmax"])
    func predictsWhatTheNumpyReferencePredicts(name: String) throws {
        let model = try AlertModel(path: Self.fixture(name, "safetensors"))
        let cases = try Self.expectations(name)
        #expect(cases.count == 3)
        var found = [Float](repeating: 0, count: model.labels.count)
        var oracle = found
        for (input, expected) in cases {
            try input.withUnsafeBufferPointer { window in
                try found.withUnsafeMutableBufferPointer { try model.predict(window, into: $0) }
                try oracle.withUnsafeMutableBufferPointer { try model.predictWithReferenceOracle(window, into: $0) }
            }
            for i in expected.indices {
                #expect(abs(found[i] - expected[i]) <= 1e-5, "\(name) output \(i): \(found[i]) vs numpy \(expected[i])")
                #expect(abs(oracle[i] - expected[i]) <= 1e-5)
            }
        }
    }

    /// The recurrent fixture's 12 windows are one stream (one frame each): predicted in order they match numpy, and
    /// after `resetState` the same stream matches again.
    @Test func aRecurrentModelFollowsItsStreamAndResets() throws {
        let name = "gru-dense-sigmoid-stream"
        let model = try AlertModel(path: Self.fixture(name, "safetensors"))
        #expect(model.isStateful)
        #expect(try !AlertModel(path: Self.sigmoidModel).isStateful)
        #expect(model.layers.map(\.op) == ["gru", "dense", "sigmoid"])
        #expect(model.layers[0].outputShape == [1, 5])
        let cases = try Self.expectations(name)
        #expect(cases.count == 12)
        var found = [Float](repeating: 0, count: model.labels.count)
        for pass in 0..<2 {
            for (frame, (input, expected)) in cases.enumerated() {
                try input.withUnsafeBufferPointer { window in
                    try found.withUnsafeMutableBufferPointer { try model.predict(window, into: $0) }
                }
                for i in expected.indices {
                    #expect(abs(found[i] - expected[i]) <= 1e-5, "pass \(pass) frame \(frame) output \(i)")
                }
            }
            model.resetState()
        }
    }

    /// The detector reads overlapping windows, each on its own: a recurrent model there would see most frames many
    /// times over, so it is refused in one line before it runs.
    @Test func theDetectorRefusesARecurrentModel() throws {
        let model = try AlertModel(path: Self.fixture("gru-dense-sigmoid-stream", "safetensors"))
        #expect(model.task == .alertDetection)
        let error = #expect(throws: AlertModelError.statefulNotSupported(.alertDetection)) {
            try AlertDetector(model: model, settings: TrackerSettings(model: model))
        }
        #expect(error?.description == "the model keeps a recurrent state (a gru layer); an alert detector is run on "
                    + "overlapping windows, each on its own, so it must be stateless")
    }

    @Test func loadsFromBytesLikeFromAPath() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.softmaxModel)))
        let model = try AlertModel(bytes: bytes)
        #expect(model.labels == ["a", "b"])
        #expect(model.featureSpec == (try AlertModel(path: Self.softmaxModel)).featureSpec)
    }

    @Test func refusesBadFilesWithTheLoadersMessage() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.sigmoidModel)))
        #expect(throws: AlertModelError.invalidModel("file is 5 bytes, shorter than the 8-byte header length (truncated?)")) {
            try AlertModel(bytes: Array(bytes.prefix(5)))
        }
        var garbled = bytes
        garbled[8] = UInt8(ascii: "x")
        #expect(throws: AlertModelError.invalidModel("header is not valid JSON (near byte 0)")) {
            try AlertModel(bytes: garbled)
        }
        do {
            _ = try AlertModel(path: "/nonexistent/model.safetensors")
            Issue.record("a missing file loaded")
        } catch let error as AlertModelError {
            guard case .unreadable(let path, let message) = error else { throw error }
            #expect(path == "/nonexistent/model.safetensors")
            #expect(message.hasPrefix("cannot open /nonexistent/model.safetensors"))
        }
    }

    @Test func refusesBuffersOfTheWrongLength() throws {
        let model = try AlertModel(path: Self.sigmoidModel)
        let short = [Float](repeating: 0, count: model.inputCount - 1)
        var probabilities = [Float](repeating: 0, count: model.labels.count)
        #expect(throws: AlertModelError.wrongBufferSize(what: "input window", expected: 120, found: 119)) {
            try short.withUnsafeBufferPointer { window in
                try probabilities.withUnsafeMutableBufferPointer { try model.predict(window, into: $0) }
            }
        }
    }

    @Test func reportAndCheckDescribeTheModel() throws {
        let report = try AlertModelReport(path: Self.sigmoidModel).text
        #expect(report.contains("model       conv-bn-maxpool-gap-sigmoid"))
        #expect(report.contains("siren (threshold 0.50)"))
        #expect(report.contains("-> [4, 12, 10]"))
        #expect(report.contains("MFLOP per inference"))
        #expect(try AlertModelCheck.run(path: Self.softmaxModel).hasPrefix("strided-avgpool-flatten-softmax: 2 labels"))
    }
}
