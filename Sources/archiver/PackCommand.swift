import ArchiverCore
import Foundation

/// `archiver pack DIR [--output FILE.tar.gz]`: a reproducible tarball of the bundle.
enum PackCommand {
    static func main(_ arguments: [String]) -> Int32 {
        var output: String?
        var parser = Arguments(arguments)
        let directory: String
        let packer: BundlePacker
        do {
            try parser.parse { name, args in
                switch name {
                case "--output", "-o": output = try args.value(for: name)
                default: throw unknownOption(name, command: "pack")
                }
            }
            guard parser.positionals.count == 1 else {
                throw UsageError(description: "pack takes one bundle directory, e.g. 'archiver pack archive --output archive.tar.gz'")
            }
            directory = parser.positionals[0]
            packer = BundlePacker(modificationTime: try sourceDateEpoch())
        } catch {
            return fail("\(error)")
        }
        let trimmed = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let destination = URL(fileURLWithPath: output ?? trimmed + ".tar.gz")
        do {
            let result = try packer.pack(URL(fileURLWithPath: directory), to: destination)
            print("\(result.sha256)  \(output ?? destination.path)")
            print("packed \(result.entries) entries (\(result.images) images), \(result.bytes) bytes")
            return 0
        } catch {
            return fail(error.description)
        }
    }

    /// Entry mtimes: `SOURCE_DATE_EPOCH` when set (reproducible-builds.org), else 0.
    static func sourceDateEpoch() throws -> Int64 {
        guard let text = ProcessInfo.processInfo.environment["SOURCE_DATE_EPOCH"], !text.isEmpty else { return 0 }
        guard let seconds = Int64(text), seconds >= 0, seconds <= 8_589_934_591 else {
            throw UsageError(description: "SOURCE_DATE_EPOCH must be a whole number of seconds from 0 to 8589934591, not '\(text)'")
        }
        return seconds
    }
}
