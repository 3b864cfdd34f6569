import ArchiverCore
import Foundation

/// `archiver(1)` in roff, written from the commands' references: every command's synopsis,
/// summary, options with their defaults, and notes, as `--help` prints them.
enum ManPage {
    static func roff(for commands: [CommandReference], version: String = ArchiverVersion.current) -> String {
        var lines = [
            #".\" archiver(1), written by `archiver man` from the option table its parser reads."#,
            ".TH ARCHIVER 1 \"\" \"archiver \(version)\" \"User Commands\"",
            // No hyphenation, ragged right: paths and URLs stay whole.
            ".nh", ".ad l",
            ".SH NAME",
            #"archiver \- archive a catalog of image URLs into a verified offline bundle"#,
            ".SH SYNOPSIS",
            ".nf",
        ]
        lines += commands.map { code($0.synopsis) }
        lines += [
            #"\fBarchiver help\fR \fICOMMAND\fR"#,
            #"\fBarchiver \-\-version\fR"#,
            ".fi",
            ".SH DESCRIPTION",
            text("""
                archiver turns a catalog of image records (JSON, JSON Lines, CSV or TSV) into a verified, \
                offline bundle: one checked image file per record under images/, a reproducible \
                manifest.json of what was fetched from where with which checksum (and what failed and \
                why), and a paged gallery. Interrupted runs resume; finished work is never redone.
                """),
            ".PP",
            text("archiver COMMAND --help prints the options of one command, from the same table as this page."),
            #".SH COMMANDS"#,
        ]
        for command in commands {
            lines += [".SS \"\(escape("archiver " + command.name))\"", code(command.synopsis), ".PP"]
            lines += paragraphs(command.summary)
            for option in command.options {
                var usage = "\\fB\(flag(option.name))\\fR"
                if let placeholder = option.placeholder { usage += " \\fI\(flag(placeholder))\\fR" }
                if let alias = option.alias { usage += ", \\fB\(flag(alias))\\fR" }
                lines += [".TP", usage, text(option.helpWithDefault)]
            }
            if !command.notes.isEmpty {
                lines += [".PP", ".nf"] + command.notes.split(separator: "\n").map { text(String($0)) } + [".fi"]
            }
        }
        lines += [
            ".SH \"SEE ALSO\"",
            text("The README of the archiver's sources, which shows a run's output and the bundle's layout."),
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Prose on one roff line: backslashes escaped, and a leading `.` or `'` kept literal.
    static func text(_ line: String) -> String {
        let escaped = escape(line)
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }

    /// A summary's lines joined into one paragraph line (help wraps them by hand).
    static func paragraphs(_ summary: String) -> [String] {
        [text(summary.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " "))]
    }

    /// A synopsis: the command in bold, hyphens as the minus signs a terminal can search for.
    static func code(_ synopsis: String) -> String {
        let words = synopsis.split(separator: " ", maxSplits: 2).map(String.init)
        let command = "\\fB" + flag(words.prefix(2).joined(separator: " ")) + "\\fR"
        return words.count > 2 ? command + " " + flag(words[2]) : command
    }

    /// An option or value: escaped, with `-` as roff's `\-` so `man` shows (and searches) ASCII hyphens.
    static func flag(_ word: String) -> String {
        escape(word).replacingOccurrences(of: "-", with: "\\-")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\e")
    }
}
