import Foundation
import XCTest
@testable import ArchiverCore
@testable import ArchiverServer

/// Bodies over 1 MiB are spooled to unnamed files in images/ as they arrive, not held in memory:
/// 32 bodies of 48 MiB in flight once took 730 MiB to 1.5 GiB of resident memory.
final class LargeBodyMemoryTests: XCTestCase {
    /// A valid 48 MiB PNG: 12288 x 4096 grey, stored (uncompressed) deflate blocks.
    private static let bigPNG: Data = {
        let width = 12288, height = 4096
        var raw = Data(count: height * (width + 1))
        raw.withUnsafeMutableBytes { bytes in
            for y in 0..<height {
                let row = y * (width + 1)
                bytes[row] = 0
                for x in 0..<width { bytes[row + 1 + x] = UInt8(truncatingIfNeeded: x &+ y) }
            }
        }
        var zlib = Data([0x78, 0x01])
        var a: UInt64 = 1, b: UInt64 = 0
        raw.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                let end = min(start + 65535, bytes.count)
                let length = UInt16(end - start)
                zlib.append(contentsOf: [end == bytes.count ? 1 : 0, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)])
                zlib.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                // Adler-32, reduced once per block: 64-bit sums cannot overflow within one.
                for byte in bytes[start..<end] {
                    a += UInt64(byte)
                    b += a
                }
                a %= 65521
                b %= 65521
                start = end
            }
        }
        zlib.append(contentsOf: bigEndian(UInt32(b << 16 | a)))
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.append(chunk("IHDR", Data(bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 0, 0, 0, 0])))
        png.append(chunk("IDAT", zlib))
        png.append(chunk("IEND", Data()))
        return png
    }()

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func chunk(_ type: String, _ payload: Data) -> Data {
        var body = Data(type.utf8)
        body.append(payload)
        var crc: UInt32 = 0xFFFF_FFFF
        let table = crcTable
        body.withUnsafeBytes { bytes in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        var out = Data(bigEndian(UInt32(payload.count)))
        out.append(body)
        out.append(contentsOf: bigEndian(~crc))
        return out
    }

    func testThirtyTwo48MiBBodiesInFlightKeepPeakMemoryUnder128MiB() throws {
        let png = Self.bigPNG
        XCTAssertGreaterThan(png.count, 48 << 20)
        let server = try TestServer()
        defer { server.stop() }
        server.route("/big.png", .png(png))
        let directory = Fixtures.temporaryDirectory(self)
        let records = (1...40).map {
            CatalogRecord(albumId: 1, id: RecordID($0), title: "big \($0)", url: "\(Fixtures.host)/big.png?n=\($0)", thumbnailUrl: "")
        }
        let catalog = try Fixtures.writeCatalog(records, to: directory.appendingPathComponent("c.json"))
        let out = directory.appendingPathComponent("out")

        let (run, peak) = try CommandRunner.runMeasuringPeakMemory([
            "run", "--catalog", catalog, "--out", out.path, "--concurrency", "32", "--quiet",
            "--mirror", "\(Fixtures.host)=\(server.baseURL)",
        ])
        XCTAssertEqual(run.status, 0, run.stderr)
        if !Sanitizers.active { XCTAssertLessThan(peak, 128 << 10, "peak RSS \(peak / 1024) MiB for 32 bodies of 48 MiB in flight") }
        XCTAssertEqual(server.count("/big.png"), 40)
        let items = try Fixtures.manifest(in: out).items
        XCTAssertEqual(items.filter { $0.status == .done }.count, 40)
        for id in [1, 40] {
            XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("images/\(id).png")), png, "image \(id)")
        }
    }
}
