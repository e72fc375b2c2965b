import Foundation
import HearAlertKit

// Benchmarks print figures; they never assert. Each benchmark lives in its own file and is listed here.
// Usage: hearalert-bench [NAME ...]   (no names: run all)

let benchmarks: [(name: String, run: () throws -> Void)] = [
    ("evaluation", EvaluationBenchmark.run),
    ("features", FeatureBenchmark.run),
    ("inference", InferenceBenchmark.run),
    ("detection", DetectionBenchmark.run),
    ("enhancer", EnhancementBenchmark.run),
]

let wanted = Set(CommandLine.arguments.dropFirst())
let unknown = wanted.subtracting(benchmarks.map(\.name))
if !unknown.isEmpty {
    FileHandle.standardError.write(Data("unknown benchmark(s): \(unknown.sorted().joined(separator: ", ")); known: \(benchmarks.map(\.name).joined(separator: ", "))\n".utf8))
    exit(2)
}
for benchmark in benchmarks where wanted.isEmpty || wanted.contains(benchmark.name) {
    do {
        try benchmark.run()
    } catch {
        FileHandle.standardError.write(Data("benchmark \(benchmark.name) failed: \(error)\n".utf8))
        exit(1)
    }
}
