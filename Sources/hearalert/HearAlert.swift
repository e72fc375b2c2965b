import ArgumentParser

/// The `hearalert` command: each subcommand is one type in its own file; this type only lists them.
@main
struct HearAlert: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearalert",
        abstract: "Tells a hearing-impaired person when an alert sounds, and cleans speech for headphones.",
        discussion: """
            Detects sirens, car horns, smoke and fire alarms, alarm clocks, doorbells and ringing phones in \
            noisy speech, with a small CNN whose weights load from a portable file.
            """,
        version: "0.1.0",
        subcommands: [
            FeaturesCommand.self,
            ModelCommand.self,
            EnhanceCommand.self,
            ListenCommand.self,
            DetectCommand.self,
            DevicesCommand.self,
            EvaluateCommand.self,
        ]
    )
}
