import Foundation
@testable import ArchiverCore
@testable import ArchiverServer

/// Builders for valid PNGs and for PNGs broken in one precise way.
enum PNGFixtures {
    /// The eight-byte PNG signature.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A small HTML error page, as a misconfigured server sends instead of an image.
    static let html = Data("<!DOCTYPE html>\n<html><body><h1>404 Not Found</h1></body></html>\n".utf8)

    /// The start of a JPEG (SOI marker followed by an APP0/JFIF segment).
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00])

    /// A valid solid-colour PNG made by the encoder under test.
    static func solid(width: Int = 8, height: Int = 8) -> Data {
        PNGEncoder.solid(width: width, height: height, red: 0x33, green: 0x66, blue: 0x99)
    }

    /// One chunk found in a PNG: where it starts and how long its data is.
    struct ChunkLocation: Equatable {
        var type: String
        var offset: Int
        var length: Int
        var dataOffset: Int { offset + 8 }
        var end: Int { offset + 12 + length }
    }

    /// The chunks of a well-formed PNG, in order.
    static func chunks(in png: Data) -> [ChunkLocation] {
        let bytes = [UInt8](png)
        var result: [ChunkLocation] = []
        var pos = 8
        while pos + 12 <= bytes.count {
            let length = Int(readUInt32(bytes, at: pos))
            let type = String(decoding: bytes[(pos + 4)..<(pos + 8)], as: UTF8.self)
            result.append(ChunkLocation(type: type, offset: pos, length: length))
            pos += 12 + length
        }
        return result
    }

    /// The first chunk of `type`; traps if there is none.
    static func chunk(_ type: String, in png: Data) -> ChunkLocation {
        guard let found = chunks(in: png).first(where: { $0.type == type }) else {
            preconditionFailure("no \(type) chunk in fixture")
        }
        return found
    }

    /// A serialized chunk: length, type, data, then the right CRC or `crc` when given.
    static func chunkBytes(_ type: String, _ payload: [UInt8], crc: UInt32? = nil) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        precondition(typeBytes.count == 4)
        return bigEndian(UInt32(payload.count)) + typeBytes + payload
            + bigEndian(crc ?? crc32(typeBytes + payload))
    }

    /// `png` with `chunk` inserted just before the first chunk of type `before`.
    static func inserting(_ chunk: [UInt8], before type: String, in png: Data) -> Data {
        var bytes = [UInt8](png)
        bytes.insert(contentsOf: chunk, at: self.chunk(type, in: png).offset)
        return Data(bytes)
    }

    /// `png` with the byte at `offset` XORed with `mask`.
    static func flipping(_ png: Data, at offset: Int, mask: UInt8 = 0xFF) -> Data {
        var bytes = [UInt8](png)
        bytes[offset] ^= mask
        return Data(bytes)
    }

    /// `png` with its IHDR width and height replaced and the IHDR CRC made correct again.
    static func withHeaderSize(_ png: Data, width: UInt32, height: UInt32) -> Data {
        var bytes = [UInt8](png)
        let ihdr = chunk("IHDR", in: png)
        bytes.replaceSubrange((ihdr.dataOffset)..<(ihdr.dataOffset + 8), with: bigEndian(width) + bigEndian(height))
        return Data(fixingCRC(of: ihdr, in: bytes))
    }

    /// `png` with one byte of IDAT data changed and the IDAT CRC made correct again, so only
    /// decoding the compressed stream can notice.
    static func withCorruptDeflate(_ png: Data) -> Data {
        var bytes = [UInt8](png)
        let idat = chunk("IDAT", in: png)
        bytes[idat.dataOffset + idat.length / 2] ^= 0x55
        return Data(fixingCRC(of: idat, in: bytes))
    }

    /// A PNG built from raw pixel bytes (8-bit samples), compressed with stored deflate blocks
    /// so any colour type and interlacing can be produced without an encoder.
    static func build(
        width: Int, height: Int, colorType: UInt8, channels: Int, interlaced: Bool = false,
        palette: [UInt8]? = nil, pixel: (Int, Int) -> [UInt8]
    ) -> Data {
        var raw: [UInt8] = []
        let passes: [(x: Int, y: Int, dx: Int, dy: Int)] = interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        for pass in passes {
            let passWidth = max(0, (width - pass.x + pass.dx - 1) / pass.dx)
            guard passWidth > 0 else { continue }
            for y in stride(from: pass.y, to: height, by: pass.dy) {
                raw.append(0)
                for x in stride(from: pass.x, to: width, by: pass.dx) {
                    let sample = pixel(x, y)
                    precondition(sample.count == channels)
                    raw += sample
                }
            }
        }
        var png = signature
        png += chunkBytes("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, colorType, 0, 0, interlaced ? 1 : 0])
        if let palette { png += chunkBytes("PLTE", palette) }
        png += chunkBytes("IDAT", storedZlib(raw))
        png += chunkBytes("IEND", [])
        return Data(png)
    }

    /// CRC-32 as used by PNG (and zlib), bitwise.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func fixingCRC(of chunk: ChunkLocation, in bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let crc = crc32(Array(bytes[(chunk.offset + 4)..<(chunk.dataOffset + chunk.length)]))
        bytes.replaceSubrange((chunk.dataOffset + chunk.length)..<chunk.end, with: bigEndian(crc))
        return bytes
    }

    private static func storedZlib(_ raw: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let end = min(start + 65535, raw.count)
            let length = UInt16(end - start)
            out.append(end == raw.count ? 1 : 0)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            out += raw[start..<end]
            start = end
        } while start < raw.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in raw {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + bigEndian(b << 16 | a)
    }

    private static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
