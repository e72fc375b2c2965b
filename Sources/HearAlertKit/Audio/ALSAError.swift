import CALSA
import Foundation

/// Why an ALSA device could not be used; each case reads as one line for the person at the terminal.
public enum ALSAError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// `snd_pcm_open` failed: usually a misspelt device name, or the device is busy.
    case cannotOpen(device: String, direction: ALSAPCM.Direction, reason: String)
    /// The device refused the format, rate or period sizes even through ALSA's `plug` conversion layer.
    case cannotConfigure(device: String, step: String, reason: String)
    /// Reading or writing failed in a way `snd_pcm_recover` cannot repair: the device was unplugged or died.
    case deviceLost(device: String, reason: String)
    /// `snd_device_name_hint` could not list the devices.
    case cannotList(reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let device, let direction, let reason):
            // The direction tells which of `listen --device` and `--output` to correct.
            "cannot open audio device '\(device)' for \(direction == .capture ? "capture" : "playback"): \(reason) "
                + "(see `hearalert devices`)"
        case .cannotConfigure(let device, let step, let reason):
            "audio device '\(device)' refused \(step): \(reason)"
        case .deviceLost(let device, let reason):
            "audio device '\(device)' stopped working: \(reason)"
        case .cannotList(let reason):
            "cannot list audio devices: \(reason)"
        }
    }

    public var errorDescription: String? { description }

    /// ALSA's message for a negative status code (`snd_strerror`).
    static func message(_ code: Int32) -> String {
        String(cString: snd_strerror(code))
    }
}
