import CALSA
import Foundation

/// One PCM device ALSA knows by name, as `hearalert devices` shows it and `--device` / `--output` accept it.
public struct ALSADevice: Sendable, Equatable {
    /// The name to pass to `--device` or `--output`, e.g. `default` or `plughw:CARD=PCH,DEV=0`.
    public var name: String
    /// ALSA's human description, possibly several lines.
    public var description: String
    /// Usable with `--device` (ALSA lists it for input, or for both directions).
    public var canCapture: Bool
    /// Usable with `--output` (ALSA lists it for output, or for both directions).
    public var canPlay: Bool

    /// Lists every PCM the ALSA configuration defines (`snd_device_name_hint`), in ALSA's order.
    public static func all() throws(ALSAError) -> [ALSADevice] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        let status = snd_device_name_hint(-1, "pcm", &hints)
        guard status >= 0, let hints else { throw .cannotList(reason: ALSAError.message(status)) }
        defer { snd_device_name_free_hint(hints) }

        func field(_ hint: UnsafeMutableRawPointer, _ id: String) -> String? {
            guard let value = snd_device_name_get_hint(hint, id) else { return nil }
            defer { free(value) }
            return String(cString: value)
        }
        var devices: [ALSADevice] = []
        var cursor = hints
        while let hint = cursor.pointee {
            defer { cursor += 1 }
            guard let name = field(hint, "NAME") else { continue }
            // IOID is absent for devices that do both directions, else "Input" or "Output".
            let direction = field(hint, "IOID")
            devices.append(ALSADevice(
                name: name, description: field(hint, "DESC") ?? "",
                canCapture: direction != "Output", canPlay: direction != "Input"))
        }
        return devices
    }
}
