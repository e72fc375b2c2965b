import Foundation

/// The librosa-made parity fixtures in Fixtures/features (tools/fixtures/make_feature_fixtures.py).
enum FeatureFixtures {
    static let folder: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/features")

    static func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    struct Manifest: Decodable {
        let clips: [String]
        let specs: [String]
    }

    static func manifest() throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: url("manifest.json")))
    }
}

/// A float32 matrix read from a .npy file, enough of the format (1.0/2.0, `<f4`, C order, 2-D) for fixtures.
struct NPYMatrix {
    let rows: Int
    let columns: Int
    let values: [Float]

    subscript(row: Int, column: Int) -> Float { values[row * columns + column] }

    init(contentsOf url: URL) throws {
        let data = try Data(contentsOf: url)
        let bytes = [UInt8](data)
        guard bytes.count >= 10, bytes[0] == 0x93, String(decoding: bytes[1..<6], as: UTF8.self) == "NUMPY" else {
            throw FixtureError("\(url.lastPathComponent): not a .npy file")
        }
        let major = bytes[6]
        let headerStart = major == 1 ? 10 : 12
        let headerLength = major == 1
            ? Int(bytes[8]) | Int(bytes[9]) << 8
            : Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
        let header = String(decoding: bytes[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        guard header.contains("'descr': '<f4'"), header.contains("'fortran_order': False") else {
            throw FixtureError("\(url.lastPathComponent): expected little-endian float32 in C order: \(header)")
        }
        guard let open = header.range(of: "'shape': ("), let close = header[open.upperBound...].firstIndex(of: ")")
        else { throw FixtureError("\(url.lastPathComponent): no shape in \(header)") }
        let shape = header[open.upperBound..<close].split(separator: ",").compactMap {
            Int($0.trimmingCharacters(in: .whitespaces))
        }
        guard shape.count == 2 else { throw FixtureError("\(url.lastPathComponent): expected 2-D, got \(shape)") }
        let count = shape[0] * shape[1]
        let payload = bytes[(headerStart + headerLength)...]
        guard payload.count == count * 4 else {
            throw FixtureError("\(url.lastPathComponent): \(payload.count) data bytes for shape \(shape)")
        }
        rows = shape[0]
        columns = shape[1]
        values = payload.withUnsafeBytes { raw in
            (0..<count).map { index in
                Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
            }
        }
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
