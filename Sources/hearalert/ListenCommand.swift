import ArgumentParser
import Foundation
import HearAlertKit

/// `hearalert listen`: the main job — tell a person, within a fraction of a second, that an alert is sounding.
struct ListenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Listen to a microphone and report alerts as they start and end.",
        discussion: """
            Prints one JSON object per line on stdout for each alert_start and alert_end (fields: type, label, \
            score, stream_time, time, source, detected_at; alert_end adds onset, offset, duration); messages \
            for people go to stderr. With --output, the microphone is played to that device (headphones) through \
            the speech enhancer (lowest-latency mode; low-latency with --noise-estimator learned), which keeps \
            detected alerts audible. Microphone to ear: 7.2-7.8 ms (4.6-5.6 ms with --no-enhance) measured on a \
            sound card simulated in ALSA; the delay actually had is said on stderr when listening ends. \
            Ctrl-C (or SIGTERM) ends any \
            alert still sounding with its alert_end, flushes and exits 0 (1 if alert lines could not be written \
            to stdout).

            A hook is any program: it gets the alert's JSON on stdin and HEARALERT_TYPE, HEARALERT_LABEL, \
            HEARALERT_SCORE, HEARALERT_TIME in its environment, runs off the audio path, and is stopped after \
            --hook-timeout seconds; a failing hook is reported, never fatal. What a hook prints goes to stderr after it \
            exits, with its exit status: its last 4 KB at most. Hook arguments that start with '-' \
            need a wrapper script.

            Examples:
              hearalert listen --format text
              hearalert listen --device plughw:CARD=Headset --output default
              hearalert listen --hook tools/hooks/notify-desktop.sh --hook-on both
              hearalert listen --hook tools/hooks/webhook.sh https://ntfy.sh/my-home
              hearalert listen --threshold smoke_alarm=0.4 --merge-gap 1.5
            """
    )

    @Option(help: ArgumentHelp("ALSA capture device (see `hearalert devices`).", valueName: "NAME"))
    var device = "default"

    @OptionGroup var detection: DetectionOptions

    /// The formats a live stream can use (TSV lists finished events: `detect` only).
    enum Format: String, CaseIterable, ExpressibleByArgument {
        case jsonl, text
    }

    @Option(help: "jsonl (for programs) or text (for people; coloured on a terminal).")
    var format: Format = .jsonl

    @Option(parsing: .upToNextOption,
            help: ArgumentHelp("Program (and its arguments) to run for each alert.", valueName: "PROGRAM ARGS"))
    var hook: [String] = []

    @Option(help: "Run the hook on alert start, end, or both (default: start).")
    var hookOn: HookRunner.Trigger?

    // `.unconditional`: "-1" is a value to refuse with a reason, not an option (see DetectionOptions).
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Seconds a hook may run before it is stopped.", valueName: "S"))
    var hookTimeout: Double = 10

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Hooks and notifications allowed to run at once; beyond it, an alert skips them.",
                               valueName: "N"))
    var hookLimit = 4

    @Option(help: ArgumentHelp("'desktop': a desktop notification for each alert (needs notify-send).",
                               valueName: "KIND"))
    var notify: String?

    @Option(help: ArgumentHelp("ALSA playback device for the enhanced microphone signal (headphones).",
                               valueName: "DEVICE"))
    var output: String?

    @Flag(help: "With --output, play the microphone unchanged instead of enhanced.")
    var noEnhance = false

    @OptionGroup var noise: NoiseEstimatorOptions

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Stop after this many seconds of audio (at most 1e9); default: until stopped.",
                               valueName: "S"))
    var duration: Double?

    @Flag(help: "Also show the ALSA library's own messages (e.g. why a device could not be opened).")
    var verbose = false

    mutating func validate() throws {
        guard notify == nil || notify == "desktop" else { throw ValidationError("--notify knows only 'desktop'") }
        guard hookTimeout > 0, hookLimit > 0 else { throw ValidationError("--hook-timeout and --hook-limit must be positive") }
        if let duration, !(duration > 0 && duration <= ListenConfiguration.longestDuration) {
            throw ValidationError("--duration must be a positive number of seconds up to "
                                  + "\(Int(ListenConfiguration.longestDuration)) (leave it out to listen until stopped); "
                                  + "got \(duration)")
        }
        guard hookOn == nil || !hook.isEmpty else { throw ValidationError("--hook-on needs a --hook to run") }
        guard !noEnhance || output != nil else { throw ValidationError("--no-enhance only makes sense with --output") }
        if let program = hook.first, !ProgramLauncher.canRun(program) {
            throw ValidationError("--hook: cannot run '\(program)': no such executable file (or not on PATH)")
        }
    }

    mutating func run() throws {
        ALSALibraryMessages.route(shown: verbose)
        let (model, settings) = try detection.load()
        let detector = try AlertDetector(model: model, settings: settings)
        let enhancer = output != nil && !noEnhance
            ? try SpeechEnhancer(configuration: try Self.enhancerConfiguration(noise.estimation()),
                                 sampleRate: detector.expectedSampleRate) : nil
        let diagnostics = Diagnostics.standardError
        let launcher = ProgramLauncher(timeLimit: hookTimeout, maxConcurrent: hookLimit, diagnostics: diagnostics)

        let standardOutput = StreamSink(format: format == .jsonl ? .jsonl : .text,
                                        colour: StreamSink.isColourTerminal(.standardOutput))
        var sinks: [any AlertSink] = [standardOutput]
        if !hook.isEmpty {
            sinks.append(HookRunner(command: hook, trigger: hookOn ?? .start, launcher: launcher))
        }
        if notify == "desktop" {
            if let notifier = DesktopNotifier(launcher: launcher) {
                sinks.append(notifier)
            } else {
                diagnostics.report("notify-send is not installed; desktop notifications are off")
            }
        }
        let listener = LiveListener(
            configuration: ListenConfiguration(captureDevice: device, playbackDevice: output, maxDuration: duration),
            diagnostics: diagnostics)
        let signals = StopSignals { listener.stop() }
        defer { withExtendedLifetime(signals) {} }
        try listener.run(detector: detector, enhancer: enhancer, dispatcher: AlertDispatcher(sinks: sinks, source: device))
        // The sink has said how many alert lines were lost; alerts that went nowhere are a failure.
        if standardOutput.lostLineCount > 0 { throw ExitCode.failure }
    }

    /// The headphone enhancer: the lowest-latency framing, so that microphone to ear stays within 10 ms, except
    /// with a learned noise estimate, whose file serves the low-latency framing only (4 ms more delay).
    static func enhancerConfiguration(_ estimation: NoiseEstimation) -> EnhancerConfiguration {
        switch estimation {
        case .mcra: EnhancerConfiguration(mode: .lowestLatency, noiseEstimation: estimation)
        case .learned: EnhancerConfiguration(mode: .lowLatency, noiseEstimation: estimation)
        }
    }
}
