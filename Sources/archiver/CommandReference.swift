/// What a value on the command line is, as far as a shell can complete it.
enum ValueKind: Sendable, Equatable {
    /// Anything typed (a number, a key, a URL): nothing to offer.
    case text
    case file
    case directory
    case choices([String])

    /// Read from how help shows the value: `json|jsonl|csv|tsv` lists its choices, a `DIR` is a
    /// directory, a `FILE` or `PATH` a file; anything else (`N`, `KEY`, `FROM=TO`) is text.
    init(placeholder: String) {
        let words = placeholder.split(separator: "|").map(String.init)
        if words.count > 1, words.allSatisfy({ $0.allSatisfy { $0.isLowercase || $0.isNumber } }) {
            self = .choices(words)
        } else if placeholder.contains("FILE") || placeholder.contains("PATH") {
            self = .file
        } else if placeholder.contains("DIR") {
            self = .directory
        } else {
            self = .text
        }
    }
}

/// A command as the man page and the shell completions see it: the same name, synopsis, options
/// and notes its `CommandSpec` parses with and prints as help, without the parsing closures.
struct CommandReference: Sendable {
    struct Option: Sendable {
        let name: String
        let alias: String?
        /// nil for a flag.
        let placeholder: String?
        let defaultText: String
        let help: String

        /// The value a shell may complete after the option; nil for a flag.
        var value: ValueKind? { placeholder.map(ValueKind.init(placeholder:)) }
        /// The help line with its default, as `--help` prints it.
        var helpWithDefault: String {
            ["none", "off"].contains(defaultText) ? help : "\(help) (default \(defaultText))"
        }
    }

    let name: String
    let synopsis: String
    let summary: String
    let options: [Option]
    let notes: String
    let operands: ValueKind

    /// The summary on one line up to its first `: `, `; ` or `. `, for a shell's list of commands.
    var shortSummary: String {
        let text = summary.split(whereSeparator: \.isNewline).joined(separator: " ")
        let ends = [": ", "; ", ". "].compactMap { text.range(of: $0)?.lowerBound }
        guard let end = ends.min() else { return text.hasSuffix(".") ? String(text.dropLast()) : text }
        return String(text[..<end])
    }
}

extension CommandSpec {
    var reference: CommandReference {
        CommandReference(
            name: name, synopsis: synopsis, summary: summary,
            options: options.map {
                .init(name: $0.name, alias: $0.alias, placeholder: $0.placeholder, defaultText: $0.defaultText, help: $0.help)
            },
            notes: notes, operands: operands)
    }
}
