import Foundation

/// Pops up a desktop notification for each alert start with `notify-send` (libnotify), where it is installed.
public final class DesktopNotifier: AlertSink {
    private let launcher: ProgramLauncher
    private let program: String

    /// Nil when `program` (normally `notify-send`, looked up on `PATH`) is not there; the caller tells the person
    /// that notifications are unavailable.
    public init?(launcher: ProgramLauncher, program: String = "notify-send") {
        guard ProgramLauncher.canRun(program) else { return nil }
        self.launcher = launcher
        self.program = program
    }

    public func deliver(_ report: AlertReport) {
        guard case .started(let label, let score, _, _) = report.message else { return }
        let name = label.replacingOccurrences(of: "_", with: " ")
        launcher.launch([
            program, "--app-name=HearAlert", "--urgency=critical", "--icon=dialog-warning",
            "HearAlert: \(name)", "A \(name) is sounding (score \(String(format: "%.2f", Double(score)))).",
        ])
    }

    public func finish() {
        launcher.finish(grace: min(launcher.timeLimit, 2))
    }
}
