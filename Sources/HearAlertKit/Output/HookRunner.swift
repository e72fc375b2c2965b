import Foundation

/// Runs the person's notification hook (`--hook PROGRAM [ARGS]`) for alerts: a phone push, a smart light.
///
/// The program gets the alert's JSON line on standard input and `HEARALERT_TYPE`, `HEARALERT_LABEL`,
/// `HEARALERT_SCORE`, `HEARALERT_TIME` (ISO 8601), `HEARALERT_STREAM_TIME` and `HEARALERT_SOURCE` in its
/// environment. Event data never reaches a shell: the arguments are the person's own, passed as given.
public final class HookRunner: AlertSink {
    /// Which messages run the hook.
    public enum Trigger: String, Sendable, CaseIterable {
        case start, end, both

        func fires(for message: AlertMessage) -> Bool {
            switch self {
            case .start: message.isStart
            case .end: !message.isStart
            case .both: true
            }
        }
    }

    private let command: [String]
    private let trigger: Trigger
    private let launcher: ProgramLauncher

    /// `command` is the program and its arguments exactly as the person gave them; the launcher bounds how long
    /// and how many hooks run.
    public init(command: [String], trigger: Trigger, launcher: ProgramLauncher) {
        precondition(!command.isEmpty, "a hook needs a program")
        self.command = command
        self.trigger = trigger
        self.launcher = launcher
    }

    public func deliver(_ report: AlertReport) {
        guard trigger.fires(for: report.message) else { return }
        launcher.launch(command, extraEnvironment: Self.environment(for: report),
                        input: Data((AlertLineFormatter.jsonLine(report) + "\n").utf8))
    }

    public func finish() {
        launcher.finish(grace: min(launcher.timeLimit, 2))
    }

    /// The variables a hook sees, for scripts that would rather not parse JSON.
    public static func environment(for report: AlertReport) -> [String: String] {
        [
            "HEARALERT_TYPE": report.message.typeName,
            "HEARALERT_LABEL": report.message.label,
            "HEARALERT_SCORE": String(format: "%.4f", Double(report.message.score)),
            "HEARALERT_TIME": report.isoTime,
            "HEARALERT_STREAM_TIME": String(format: "%.3f", report.message.streamTime),
            "HEARALERT_SOURCE": report.source,
        ]
    }
}
