import CAlertNet

/// One layer as `hearalert model inspect` shows it.
public struct AlertModelLayer: Sendable, Equatable {
    /// The op as the file names it: `conv2d`, `batchnorm`, `maxpool2d`, `dense`...
    public let op: String
    /// Its geometry in words, e.g. `1->16 kernel 5x5 stride 2x2 padding 2x2`; empty when there is none.
    public let detail: String
    /// Output shape: `[C, H, W]` or `[N]`.
    public let outputShape: [Int]
    /// Weights and biases the layer holds (after batch-norm folding, as stored).
    public let parameterCount: Int
    /// Millions of floating-point operations per inference, a multiply-add counting as two.
    public let mflops: Double
}

extension AlertModel {
    /// Stored weight values (batch-norm statistics included), a proxy for the model's capacity and file size.
    public var parameterCount: Int { Int(alertnet_parameter_count(handle)) }

    /// Millions of floating-point operations per `predict` (a multiply-add counts as two).
    public var mflops: Double { alertnet_mflops(handle) }

    /// The network, layer by layer, with output shapes and costs.
    public var layers: [AlertModelLayer] {
        (0..<alertnet_layer_count(handle)).compactMap { index in
            var info = alertnet_layer_info()
            guard alertnet_layer(handle, index, &info) == ALERTNET_OK else { return nil }
            let shape = withUnsafeBytes(of: info.shape) { Array($0.bindMemory(to: Int32.self).prefix(Int(info.rank))) }
            return AlertModelLayer(
                op: String(cString: info.op), detail: String(cString: info.detail), outputShape: shape.map(Int.init),
                parameterCount: Int(info.parameters), mflops: info.mflops)
        }
    }
}
