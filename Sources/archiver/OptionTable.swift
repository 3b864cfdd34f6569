/// One option of a command, declared once: how it is spelled, what value it takes, its default
/// and its help line drive the parser, `archiver <command> --help`, the man page, the shell
/// completions, and (through a test that reads `run --help`) the README's options table.
struct OptionSpec<Options>: Sendable {
    let name: String
    let alias: String?
    /// The value as help shows it (`N`, `PATH|URL`, `url|thumbnailUrl`); nil for a flag.
    let placeholder: String?
    /// The default as help and the README show it: a value, `none`, or `off` for a flag.
    let defaultText: String
    let help: String
    /// Reads the option's value, if it takes one, and applies it.
    let read: @Sendable (inout Arguments, inout Options) throws -> Void

    /// A switch that is off unless given.
    static func flag(_ name: String, alias: String? = nil, _ help: String, _ set: @escaping @Sendable (inout Options) -> Void) -> Self {
        Self(name: name, alias: alias, placeholder: nil, defaultText: "off", help: help) { _, options in set(&options) }
    }

    /// A value taken as it is written (`set` may still refuse it); never empty
    /// (`--out ""` would otherwise name the current directory).
    static func text(
        _ name: String, alias: String? = nil, _ placeholder: String, default defaultText: String = "none", _ help: String,
        _ set: @escaping @Sendable (inout Options, String) throws -> Void
    ) -> Self {
        Self(name: name, alias: alias, placeholder: placeholder, defaultText: defaultText, help: help) { args, options in
            let value = try args.value(for: name)
            guard !value.isEmpty else { throw UsageError(description: "\(name) needs a \(placeholder), not an empty string") }
            try set(&options, value)
        }
    }

    /// A whole number within `range`; help says the range.
    static func integer(
        _ name: String, _ placeholder: String = "N", in range: ClosedRange<Int>, default defaultText: String = "none",
        _ help: String, _ set: @escaping @Sendable (inout Options, Int) -> Void
    ) -> Self {
        Self(name: name, alias: nil, placeholder: placeholder, defaultText: defaultText,
             help: "\(help), \(range.lowerBound) to \(range.upperBound)") { args, options in
            set(&options, try args.integer(for: name, in: range))
        }
    }

    /// A number within `range`, in `unit`.
    static func number(
        _ name: String, _ placeholder: String, in range: ClosedRange<Double>, unit: String, default defaultText: String = "none",
        _ help: String, _ set: @escaping @Sendable (inout Options, Double) -> Void
    ) -> Self {
        Self(name: name, alias: nil, placeholder: placeholder, defaultText: defaultText, help: help) { args, options in
            set(&options, try args.number(for: name, in: range, unit: unit))
        }
    }

    /// One of a fixed set of values; help lists them.
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, as _: T.Type, default value: T, _ help: String, _ set: @escaping @Sendable (inout Options, T) -> Void
    ) -> Self where T.RawValue == String {
        Self(name: name, alias: nil, placeholder: T.allCases.map(\.rawValue).joined(separator: "|"),
             defaultText: value.rawValue, help: help) { args, options in
            set(&options, try args.choice(for: name, as: T.self))
        }
    }

    /// The option as its help line spells it: `--concurrency N`, `--quiet, -q`.
    var usage: String {
        name + (placeholder.map { " " + $0 } ?? "") + (alias.map { ", " + $0 } ?? "")
    }
}

/// A command's name, synopsis, options and notes: parses its arguments and writes its help.
struct CommandSpec<Options>: Sendable {
    let name: String
    let synopsis: String
    let summary: String
    let options: [OptionSpec<Options>]
    /// Paragraphs after the options in help (exit statuses and the like).
    var notes = ""
    /// What the command's arguments other than options are, for the shell completions.
    var operands: ValueKind = .text

    /// Applies every option to `options` and returns the positional arguments; `--help` is
    /// answered before this is called.
    func parse(_ arguments: [String], into options: inout Options) throws -> [String] {
        var parser = Arguments(arguments)
        try parser.parse { name, args in
            guard let spec = self.options.first(where: { $0.name == name || $0.alias == name }) else {
                throw UsageError(description: "unknown option '\(name)' for 'archiver \(self.name)'; see 'archiver \(self.name) --help'")
            }
            try spec.read(&args, &options)
        }
        if parser.positionals.contains("") {
            throw UsageError(description: "an empty argument names no file or directory; see 'archiver \(self.name) --help'")
        }
        return parser.positionals
    }

    /// `archiver <name> --help`.
    var help: String {
        let width = max(22, (options.map(\.usage.count).max() ?? 0) + 2)
        var lines = ["usage: \(synopsis)", "", summary]
        if !options.isEmpty {
            lines += ["", "options:"]
            for option in options {
                let defaulted = ["none", "off"].contains(option.defaultText) ? "" : " (default \(option.defaultText))"
                let usage = option.usage + String(repeating: " ", count: max(0, width - option.usage.count))
                lines.append("  \(usage)\(option.help)\(defaulted)")
            }
        }
        if !notes.isEmpty { lines += ["", notes] }
        return lines.joined(separator: "\n")
    }
}
