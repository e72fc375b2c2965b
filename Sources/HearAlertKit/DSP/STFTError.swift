import Foundation

/// Why a `StreamingSTFT` cannot be built with the given sizes and windows.
public enum STFTError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// FFT size, hop or window lengths that cannot frame a signal.
    case invalidSize(String)
    /// Some output sample would receive no window weight at this hop, so the input could not be rebuilt.
    case windowsLeaveGap(position: Int)

    public var description: String {
        switch self {
        case .invalidSize(let reason):
            return "STFT: \(reason)"
        case .windowsLeaveGap(let position):
            return "STFT: analysis × synthesis windows sum to zero at offset \(position) of every hop; "
                + "use longer windows or a shorter hop"
        }
    }

    public var errorDescription: String? { description }
}
