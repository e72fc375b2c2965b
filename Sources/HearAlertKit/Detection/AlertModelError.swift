import CAlertNet
import Foundation

/// Why a model file was refused or a prediction could not run; the message is alertnet's own one-liner (it names
/// the tensor, the expected and the found shape...), so `hearalert model check` can print it unchanged.
public enum AlertModelError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The file could not be opened or read (`ALERTNET_ERROR_IO`).
    case unreadable(path: String, message: String)
    /// The bytes are not a valid alertnet model (`ALERTNET_ERROR_FORMAT`), or its feature spec is not one the host
    /// can compute.
    case invalidModel(String)
    /// Out of memory, or the model needs more workspace than `ALERTNET_MAX_WORKSPACE` (`ALERTNET_ERROR_MEMORY`).
    case tooLarge(String)
    /// The file is for another task than the one it was loaded for (`AlertModel.require`).
    case wrongTask(expected: ModelTask, found: ModelTask)
    /// The network keeps a recurrent state (a `gru` layer) but its host feeds it overlapping windows, each read
    /// on its own: the state would see most frames many times over (`AlertModel.require`).
    case statefulNotSupported(ModelTask)
    /// A buffer handed to `predict` has the wrong length.
    case wrongBufferSize(what: String, expected: Int, found: Int)

    public var description: String {
        switch self {
        case .unreadable(_, let message), .invalidModel(let message), .tooLarge(let message):
            return message
        case .wrongTask(let expected, let found):
            return "the model is \(found.fileDescription) (task \(found.rawValue)), not \(expected.fileDescription)"
        case .statefulNotSupported(let task):
            return "the model keeps a recurrent state (a gru layer); \(task.fileDescription) is run on overlapping "
                + "windows, each on its own, so it must be stateless"
        case .wrongBufferSize(let what, let expected, let found):
            return "\(what) holds \(found) values, the model needs \(expected)"
        }
    }

    public var errorDescription: String? { description }

    /// Converts a failed load's status and message, once, for every caller.
    init(status: alertnet_status, message: String, path: String?) {
        switch status {
        case ALERTNET_ERROR_IO: self = .unreadable(path: path ?? "", message: message)
        case ALERTNET_ERROR_MEMORY: self = .tooLarge(message)
        default: self = .invalidModel(message)
        }
    }
}
