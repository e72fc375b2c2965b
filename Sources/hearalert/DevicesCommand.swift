import ArgumentParser
import HearAlertKit

/// `hearalert devices`: the names `listen --device` and `--output` accept.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the ALSA capture (microphone) and playback (headphone) devices.",
        discussion: """
            Names come from ALSA's configuration (snd_device_name_hint). `default` follows the system's choice; \
            `plughw:CARD=...` names a card directly with format and rate conversion.

            Examples:
              hearalert devices
              hearalert listen --device plughw:CARD=Headset,DEV=0 --output default
            """
    )

    @Flag(help: "Also show the ALSA library's own messages.")
    var verbose = false

    mutating func run() throws {
        ALSALibraryMessages.route(shown: verbose)
        let devices = try ALSADevice.all()
        for (title, wanted) in [("Capture devices (--device):", \ALSADevice.canCapture),
                                ("Playback devices (--output):", \ALSADevice.canPlay)] {
            print(title)
            let matching = devices.filter { $0[keyPath: wanted] }
            if matching.isEmpty { print("  (none)") }
            for device in matching {
                let summary = device.description.split(separator: "\n").joined(separator: " — ")
                print("  \(device.name)" + (summary.isEmpty ? "" : "\n      \(summary)"))
            }
        }
    }
}
