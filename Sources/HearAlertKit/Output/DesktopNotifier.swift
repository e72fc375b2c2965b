import Foundation

/// Pops up a desktop notification for each alert start with `notify-send` (libnotify), where it is installed.
public final class DesktopNotifier: AlertSink {
    private let launcher: ProgramLauncher

    /// Nil when `notify-send` is not on `PATH`; the caller tells the person notifications are unavailable.
    public init?(launcher: ProgramLauncher) {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/notify-send") }
        guard found else { return nil }
        self.launcher = launcher
    }

    public func deliver(_ report: AlertReport) {
        guard case .started(let label, let score, _, _) = report.message else { return }
        let name = label.replacingOccurrences(of: "_", with: " ")
        launcher.launch([
            "notify-send", "--app-name=HearAlert", "--urgency=critical", "--icon=dialog-warning",
            "HearAlert: \(name)", "A \(name) is sounding (score \(String(format: "%.2f", Double(score)))).",
        ])
    }

    public func finish() {
        launcher.finish(grace: min(launcher.timeLimit, 2))
    }
}
