import ArchiverCore
import Foundation

/// The checks of `run`'s request options (`--header`, `--netrc-file`, `--cookie`, `--proxy`):
/// each refuses a bad value at start with one line, exit 2, instead of failing every item.
extension RunCommand {
    /// A `--header` argument's lines: the line itself, or each line of `@FILE`; each checked.
    static func headers(_ argument: String) throws -> [String] {
        var lines = [argument]
        if argument.hasPrefix("@") {
            let path = String(argument.dropFirst())
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw UsageError(description: "--header: cannot read '\(path)'; give a file of 'Name: value' lines")
            }
            lines = HeaderLine.lines(ofFile: text)
        }
        return try lines.map { line in
            switch HeaderLine.parse(line) {
            case .success(let header): return header
            case .failure(let problem): throw UsageError(description: "--header: \(problem)")
            }
        }
    }

    /// A credentials file (`--netrc-file`, `--cookie`), checked readable now so a typo fails the
    /// run at once instead of every item as `unauthorized`.
    static func readableFile(_ path: String, option: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
            FileManager.default.isReadableFile(atPath: path)
        else {
            throw UsageError(description: "\(option): cannot read '\(path)'")
        }
        return path
    }

    /// `--proxy`'s URL: a scheme libcurl proxies through. The text is never repeated in an error
    /// beyond its scheme check, since it may hold a password.
    static func proxy(_ text: String) throws -> String {
        let scheme = text.lowercased().split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        guard text.contains("://"), ["http", "https", "socks4", "socks4a", "socks5", "socks5h"].contains(scheme) else {
            throw UsageError(description: "--proxy takes a URL such as http://proxy:3128 or socks5://127.0.0.1:1080 (http, https, socks4, socks5)")
        }
        return text
    }
}
