import ArgumentParser
import HearAlertKit

/// `hearalert model inspect FILE`: what a model file holds and what it costs to run.
struct ModelInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a model's name, labels and thresholds, feature spec, layers, size and cost.",
        discussion: """
            Shows each layer with its output shape, parameter count and MFLOPs, then the totals. Fails with the \
            loader's reason when the file is not a valid model.

            Example:
              hearalert model inspect models/default.safetensors
            """
    )

    @Argument(help: "The model file (.safetensors in the alertnet format).")
    var file: String

    mutating func run() throws {
        print(try ModelFileError.naming(file) { try AlertModelReport(path: file) }.text)
    }
}
