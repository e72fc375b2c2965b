/// Text read from a file (a model's name, its description, a file name), made safe to print for a person.
///
/// A weight file is data from anyone: a `model_name` of `"\u{1B}[2J\u{1B}]0;title\u{07}"` would clear the
/// terminal and set its title if printed raw, and a newline would forge a line of output. Every character that
/// a terminal may act on instead of showing — C0 and C1 controls, DEL, Unicode format characters such as the
/// bidirectional overrides, and the line and paragraph separators — is written as a visible escape instead:
/// `\t`, `\n`, `\r`, else `\u{XX}` (Swift's spelling). Everything else, backslashes included, passes unchanged.
public enum PrintableText {
    /// `text` with every control or format character escaped (see the type's notes).
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return out
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
