import ArchiverCore
import Foundation

/// `archiver pack DIR [--output FILE.tar.gz]`: a reproducible tarball of the bundle.
enum PackCommand {
    static let spec = CommandSpec<String?>(
        name: "pack", synopsis: "archiver pack DIR [--output FILE.tar.gz]",
        summary: """
            A reproducible gzip tarball of manifest.json, index.html, pages/ and the images/ files of done
            items (not .archiver/, nor files the manifest does not list): entries sorted, owner root, mtime
            SOURCE_DATE_EPOCH or 0; prints its sha256.
            """,
        options: [.text("--output", alias: "-o", "FILE.tar.gz", default: "DIR.tar.gz", "where the tarball goes") { $0 = $1 }],
        notes: "exit status: 0 packed, 2 when DIR is no bundle", operands: .directory)

    static func main(_ arguments: [String]) -> Int32 {
        var output: String?
        let directory: String
        let packer: BundlePacker
        do {
            let positionals = try spec.parse(arguments, into: &output)
            guard positionals.count == 1 else {
                throw UsageError(description: "pack takes one bundle directory, e.g. 'archiver pack archive --output archive.tar.gz'")
            }
            directory = positionals[0]
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
            let leftOut = result.leftOut
            if leftOut.count > 0 {
                let shown = leftOut.first.joined(separator: ", ") + (leftOut.count > leftOut.first.count ? ", ..." : "")
                printError("archiver: left out \(leftOut.count) file\(leftOut.count == 1 ? "" : "s") of images/ that the manifest does not list for a done item (\(shown))")
            }
            let notPacked = result.notPacked
            if notPacked.count > 0 {
                let shown = notPacked.first.joined(separator: ", ") + (notPacked.count > notPacked.first.count ? ", ..." : "")
                let what = notPacked.count == 1 ? "1 done item's image is" : "\(notPacked.count) done items' images are"
                printError("archiver: \(what) missing or not a regular file, so not in the tarball (\(shown)); 'archiver verify' of it will name \(notPacked.count == 1 ? "it" : "them")")
            }
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
