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

    /// Refuses arguments that are not UTF-8 before parsing: Swift would turn their bad bytes into U+FFFD, and a
    /// file name in another encoding would then be reported as missing instead of as what it is.
    static func main() {
        if let error = ArgumentEncodingError.firstInvalidArgument() { exit(withError: error) }
        main(nil)
    }
}
