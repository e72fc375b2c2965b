import ArgumentParser
import Foundation
import HearAlertKit

/// `hearalert model check FILE`: a yes/no for scripts and CI, with the reason on failure.
struct ModelCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a model file; exit 0 if usable, 1 with the reason on stderr if not.",
        discussion: """
            Runs every check the detector makes when it loads a model (container, JSON header, tensor ranges, \
            dtypes, shapes against the graph, finite weights, labels, thresholds, feature spec), then one \
            inference on silence-level input.

            Example:
              hearalert model check my-model.safetensors
            """
    )

    @Argument(help: "The model file (.safetensors in the alertnet format).")
    var file: String

    mutating func run() throws {
        do {
            let summary = try ModelFileError.naming(file) { try AlertModelCheck.run(path: file) }
            print("\(file): OK: \(summary)")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}
