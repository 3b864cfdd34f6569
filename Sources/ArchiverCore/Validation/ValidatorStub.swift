import Foundation
// Temporary until the libpng shim lands.
public struct ImageInfo: Sendable, Equatable { public var width: Int; public var height: Int }
public enum ValidationMode: String, Sendable, CaseIterable { case structure, full }
public protocol ImageValidating: Sendable { func validate(_ data: Data) throws(ItemError) -> ImageInfo }
public struct PNGValidator: ImageValidating {
    public init(mode: ValidationMode = .structure, maxDimension: Int = 16384) {}
    public func validate(_ data: Data) throws(ItemError) -> ImageInfo {
        guard data.starts(with: [0x89, 0x50, 0x4e, 0x47]) else { throw .notPNG("no signature") }
        return ImageInfo(width: 1, height: 1)
    }
}
public enum PNGEncoder {
    public static func solid(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8) -> Data {
        Data([0x89, 0x50, 0x4e, 0x47, red, green, blue])
    }
}
