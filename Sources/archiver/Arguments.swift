/// A command-line mistake; the command prints it on one line and exits 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String
}

/// A small `--flag value` / `--flag=value` reader over the arguments of one subcommand.
struct Arguments {
    private var remaining: [String]
    private(set) var positionals: [String] = []

    init(_ arguments: some Sequence<String>) {
        remaining = Array(arguments)
    }

    /// Walks the arguments, handing each option name to `handle`, which reads its value if it takes one.
    mutating func parse(_ handle: (String, inout Arguments) throws -> Void) throws {
        while !remaining.isEmpty {
            let argument = remaining.removeFirst()
            if argument == "--" {
                positionals += remaining
                remaining = []
            } else if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                remaining.insert(String(argument[argument.index(after: eq)...]), at: 0)
                try handle(String(argument[..<eq]), &self)
            } else if argument.hasPrefix("-"), argument.count > 1 {
                try handle(argument, &self)
            } else {
                positionals.append(argument)
            }
        }
    }

    /// The value after option `name`.
    mutating func value(for name: String) throws -> String {
        guard !remaining.isEmpty else { throw UsageError(description: "\(name) needs a value") }
        return remaining.removeFirst()
    }

    /// An integer value within `range`.
    mutating func integer(for name: String, in range: ClosedRange<Int>) throws -> Int {
        let text = try value(for: name)
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(description: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// A number within `range`, in `unit`.
    mutating func number(for name: String, in range: ClosedRange<Double>, unit: String) throws -> Double {
        let text = try value(for: name)
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            throw UsageError(description: "\(name) must be a number of \(unit) from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return number
    }

    /// One of a fixed set of values.
    mutating func choice<T: RawRepresentable & CaseIterable>(for name: String, as _: T.Type) throws -> T
    where T.RawValue == String {
        let text = try value(for: name)
        guard let choice = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(description: "\(name) must be one of \(allowed), not '\(text)'")
        }
        return choice
    }
}
