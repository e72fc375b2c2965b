import Foundation

/// No model file to load: the person named none that can be tried, and the bundled one is not installed. The
/// message says which places were looked in and how to name one, instead of failing to open an empty path.
enum ModelChoiceError: Error, CustomStringConvertible, LocalizedError {
    /// `--model ""`.
    case emptyOption
    /// `HEARALERT_MODEL=` (set, to the empty string).
    case emptyVariable
    /// No `--model`, no `HEARALERT_MODEL`, and the bundled model is in none of `tried` (`BundledModel`).
    case noBundledModel(tried: [String])

    var description: String {
        switch self {
        case .emptyOption:
            return "--model is empty; name a model file"
        case .emptyVariable:
            return "HEARALERT_MODEL is set but empty; set it to a model file, or unset it to use the bundled model"
        case .noBundledModel(let tried):
            return "no bundled model found (looked for \(tried.joined(separator: ", "))); "
                + "give one with --model FILE or $HEARALERT_MODEL"
        }
    }

    var errorDescription: String? { description }
}
