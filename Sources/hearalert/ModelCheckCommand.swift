import ArgumentParser
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
        // A failure is thrown: one error line, as every command prints it, and exit status 1.
        let summary = try ModelFileError.naming(file) { try AlertModelCheck.run(path: file) }
        print("\(PrintableText.escaped(file)): OK: \(summary)")
    }
}
