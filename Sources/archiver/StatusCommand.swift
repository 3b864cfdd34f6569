import ArchiverCore
import Foundation

/// `archiver status [DIR] [--json]`: what a bundle holds, from its journal.
enum StatusCommand {
    static let spec = CommandSpec<Bool>(
        name: "status", synopsis: "archiver status [DIR] [--json]",
        summary: "Done, failed and pending counts of a bundle (default ./archive), failures grouped by kind.",
        options: [.flag("--json", "print the status as JSON") { $0 = true }], operands: .directory)

    static func main(_ arguments: [String]) -> Int32 {
        var json = false
        let positionals: [String]
        do {
            positionals = try spec.parse(arguments, into: &json)
            guard positionals.count <= 1 else {
                throw UsageError(description: "status takes one directory, not \(positionals.count)")
            }
        } catch {
            return fail("\(error)")
        }
        let directory = positionals.first ?? "archive"
        guard FileManager.default.fileExists(atPath: directory) else {
            return fail("\(directory) does not exist; give a bundle directory made by 'archiver run'")
        }
        if let refusal = BundleStatus.refusal(directory: URL(fileURLWithPath: directory)) {
            return fail(refusal)
        }
        guard let status = BundleStatus.read(directory: URL(fileURLWithPath: directory)) else {
            let manifest = URL(fileURLWithPath: directory).appendingPathComponent("manifest.json").path
            if FileManager.default.fileExists(atPath: manifest) {
                return fail(
                    "\(directory) has manifest.json but no .archiver/ (a bundle restored from its tarball?): "
                        + "'archiver verify \(directory)' checks it; 'archiver run --out \(directory)' (with --refresh to "
                        + "revalidate) adopts every file that matches the manifest without a request")
            }
            return fail("\(directory) holds no archiver bundle (no .archiver/ inside)")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            print(String(decoding: (try? encoder.encode(status)) ?? Data(), as: UTF8.self))
        } else {
            print(status.text)
        }
        return 0
    }
}
