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

    /// How every error line starts, whoever prints it: ArgumentParser for an error that ends a command (it asks
    /// the root command for this prefix), `reportError` for one that lets a command go on to its next input.
    /// Notes and warnings while work goes on start `hearalert: ` instead (`Diagnostics`).
    static var _errorPrefix: String { "Error: " }

    /// Writes one error line to standard error, for a failure that does not end the command.
    static func reportError(_ message: String) {
        try? FileHandle.standardError.write(contentsOf: Data((_errorPrefix + message + "\n").utf8))
    }

    /// ArgumentParser's own `main`, with two checks around it: arguments that are not UTF-8 are refused before
    /// parsing (Swift would turn their bad bytes into U+FFFD, and a file name in another encoding would then be
    /// reported as missing instead of as what it is); and what was printed must have reached standard output, so
    /// a command whose results were lost (a full disk) fails with a message instead of exiting 0.
    static func main() {
        if let error = ArgumentEncodingError.firstInvalidArgument() { exit(withError: error) }
        let outcome = Result {
            var command = try parseAsRoot()
            try command.run()
        }
        let output = Result { try StandardOutput.finish() }
        if case .failure(let error) = outcome {
            if case .failure(let lost) = output, !(error is CleanExit) {
                reportError("\(lost)")
            }
            exit(withError: error)
        }
        if case .failure(let lost) = output { exit(withError: lost) }
    }
}
