import ArgumentParser
import Foundation

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

    /// ArgumentParser's own `main`, plus the check that what was printed reached standard output: a command
    /// whose results were lost (a full disk) fails with a message instead of exiting 0.
    static func main() {
        let outcome = Result {
            var command = try parseAsRoot()
            try command.run()
        }
        let output = Result { try StandardOutput.finish() }
        if case .failure(let error) = outcome {
            if case .failure(let lost) = output, !(error is CleanExit) {
                FileHandle.standardError.write(Data("Error: \(lost)\n".utf8))
            }
            exit(withError: error)
        }
        if case .failure(let lost) = output { exit(withError: lost) }
    }
}
