import ArgumentParser

/// `hearalert model`: look at or validate a weight file without running audio.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Inspect or validate an alertnet weight file (.safetensors).",
        discussion: """
            A model file carries its weights, layer graph, feature spec, labels and default thresholds \
            (CSources/alertnet/FORMAT.md). Swap the file to change the detector.

            Examples:
              hearalert model inspect models/default.safetensors
              hearalert model check my-model.safetensors && echo usable
            """,
        subcommands: [ModelInspectCommand.self, ModelCheckCommand.self]
    )
}
