import Foundation

func writeError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
}

func printError(_ line: String) {
    writeError(line + "\n")
}

/// Prints `archiver: <message>` and returns the usage/catalog exit status.
func fail(_ message: String) -> Int32 {
    printError("archiver: \(message)")
    return 2
}
