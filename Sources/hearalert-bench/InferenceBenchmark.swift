import Foundation
import HearAlertKit

/// Time per inference of the default model's architecture (issue 3) on one thread, against alertnet's naive
/// direct-convolution oracle. Weights are random: speed does not depend on their values. Target: <= 0.3 ms.
/// Pass a model file in HEARALERT_BENCH_MODEL to time that file instead.
enum InferenceBenchmark {
    static func run() throws {
        let model: AlertModel
        if let path = ProcessInfo.processInfo.environment["HEARALERT_BENCH_MODEL"] {
            model = try AlertModel(path: path)
        } else {
            model = try AlertModel(bytes: DefaultArchitectureFile.bytes(seed: 1))
        }
        var generator = SplitMix(state: 7)
        let window = (0..<model.inputCount).map { _ in Float(generator.nextUnit() * 40 - 60) }  // dB-like values
        var probabilities = [Float](repeating: 0, count: model.labels.count)
        let fast = try window.withUnsafeBufferPointer { input in
            try probabilities.withUnsafeMutableBufferPointer { output in
                try medianSeconds(runs: 2_000) { try model.predict(input, into: output) }
            }
        }
        let naive = try window.withUnsafeBufferPointer { input in
            try probabilities.withUnsafeMutableBufferPointer { output in
                try medianSeconds(runs: 60) { try model.predictWithReferenceOracle(input, into: output) }
            }
        }
        let mflops = model.mflops
        print("inference: \(model.name), input [1, \(model.contextFrames), \(model.featureSpec.binCount)] -> "
            + "\(model.labels.count), \(model.parameterCount) parameters, \(String(format: "%.2f", mflops)) MFLOP")
        print(String(format: "  AlertModel.predict (im2col + OpenBLAS, 1 thread): median %.3f ms over 2000 runs, "
            + "%.1f GFLOP/s (target <= 0.3 ms)", fast * 1e3, mflops / fast / 1e3))
        print(String(format: "  naive direct oracle:                            median %.3f ms over 60 runs, "
            + "%.1f GFLOP/s (%.0fx slower)", naive * 1e3, mflops / naive / 1e3, naive / fast))
    }

    private static func medianSeconds(runs: Int, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<10 { try body() }  // warm caches and OpenBLAS's buffers
        var times = [Double](repeating: 0, count: runs)
        for index in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            times[index] = Double(DispatchTime.now().uptimeNanoseconds - start) * 1e-9
        }
        return times.sorted()[runs / 2]
    }
}

/// A small deterministic generator so every run times the same weights and input.
private struct SplitMix {
    var state: UInt64

    mutating func nextUnit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
}

/// The default architecture as an alertnet file in memory (batch-norm folded, as tools/export.py writes it):
/// conv 5x5/2 -> 16, pool, conv 3x3 -> 32, pool, conv 3x3 -> 64, pool, conv 3x3 -> 128, global average, dense -> 6.
enum DefaultArchitectureFile {
    static func bytes(seed: UInt64) throws -> [UInt8] {
        var generator = SplitMix(state: seed)
        var tensors: [(name: String, shape: [Int])] = []
        var graph: [[String: Any]] = []
        for (index, (out, input, kernel, stride)) in [(16, 1, 5, 2), (32, 16, 3, 1), (64, 32, 3, 1), (128, 64, 3, 1)]
            .enumerated()
        {
            tensors += [("conv\(index).weight", [out, input, kernel, kernel]), ("conv\(index).bias", [out])]
            graph += [
                ["op": "conv2d", "weight": "conv\(index).weight", "bias": "conv\(index).bias", "stride": [stride, stride],
                 "padding": [kernel / 2, kernel / 2]],
                ["op": "relu"],
                index < 3 ? ["op": "maxpool2d", "kernel": [2, 2]] : ["op": "global_avgpool"],
            ]
        }
        tensors += [("dense.weight", [6, 128]), ("dense.bias", [6])]
        graph += [["op": "dense", "weight": "dense.weight", "bias": "dense.bias"], ["op": "sigmoid"]]

        var header: [String: Any] = [:]
        var data: [UInt8] = []
        for tensor in tensors {
            let count = tensor.shape.reduce(1, *)
            let scale = 2 / Double(count / tensor.shape[0])  // keeps activations in a sensible range
            header[tensor.name] = ["dtype": "F32", "shape": tensor.shape, "data_offsets": [data.count, data.count + 4 * count]]
            for _ in 0..<count {
                let value = Float((generator.nextUnit() * 2 - 1) * scale)
                withUnsafeBytes(of: value.bitPattern.littleEndian) { data += $0 }
            }
        }
        let labels = ["siren", "car_horn", "smoke_alarm", "alarm_clock", "doorbell", "phone_ring"]
        header["__metadata__"] = [
            "format": "alertnet", "format_version": "1", "model_name": "random-default-architecture",
            "trained_on": "nothing: random weights", "features": String(decoding: try FeatureSpec().jsonData(), as: UTF8.self),
            "context": #"{"frames": 64, "step": 10}"#, "labels": try json(labels),
            "thresholds": try json([Double](repeating: 0.5, count: labels.count)), "graph": try json(graph),
        ]
        var text = [UInt8](try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        text += [UInt8](repeating: UInt8(ascii: " "), count: (8 - text.count % 8) % 8)
        var bytes: [UInt8] = []
        withUnsafeBytes(of: UInt64(text.count).littleEndian) { bytes += $0 }
        return bytes + text + data
    }

    private static func json(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }
}
