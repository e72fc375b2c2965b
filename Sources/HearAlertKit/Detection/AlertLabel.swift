import CAlertNet

/// What a label in a weight file may be: an identifier of 1 to 32 characters of `a-z`, `0-9` and `_`
/// (`[a-z0-9_]{1,32}`, CSources/alertnet/FORMAT.md). Labels reach terminals, TSV rows, JSON lines and hook
/// environments; as identifiers they can never be read there as anything but a name. The C core refuses any
/// other when it loads a file, and `AlertModel` checks again, so the host relies on no one loader alone.
public enum AlertLabel {
    /// The longest label, in characters (`ALERTNET_MAX_LABEL_LENGTH`).
    public static let maximumLength = Int(ALERTNET_MAX_LABEL_LENGTH)

    /// Whether `label` follows the rule.
    public static func isValid(_ label: String) -> Bool {
        let bytes = label.utf8
        return (1...maximumLength).contains(bytes.count) && bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }

    /// The rule, for messages.
    public static let rule = "1 to \(maximumLength) characters of a-z, 0-9 and _"
}
