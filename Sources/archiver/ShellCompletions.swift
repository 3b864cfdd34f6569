/// The completion scripts of `archiver completions bash|zsh|fish`, written from the commands'
/// references, so every option the parser takes is completed and no other.
enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish

    /// The whole script for this shell.
    func script(for commands: [CommandReference]) -> String {
        switch self {
        case .bash: ShellCompletions.bash(commands)
        case .zsh: ShellCompletions.zsh(commands)
        case .fish: ShellCompletions.fish(commands)
        }
    }
}

enum ShellCompletions {
    /// The top-level words besides the commands.
    static let topLevel: [(word: String, help: String)] = [
        ("help", "print a command's options"), ("--help", "print the commands"),
        ("--version", "print the version and the commit it was built from"),
    ]

    /// A function with no dependency on the bash-completion package's helpers, so it works once
    /// sourced; bash splits `--out=DIR` at `=`, which it undoes.
    static func bash(_ commands: [CommandReference]) -> String {
        func words(_ list: [String]) -> String { "$'" + list.joined(separator: "\\n") + "'" }
        func reply(_ kind: ValueKind) -> String {
            switch kind {
            case .text: "return 0"
            case .file: #"compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return 0"#
            case .directory: #"compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return 0"#
            case .choices(let values): #"COMPREPLY=($(compgen -W "# + words(values) + #" -- "$cur")); return 0"#
            }
        }
        var lines = [
            "# bash completion for archiver, written by `archiver completions bash` from the option table its",
            "# parser reads. Installed as /usr/share/bash-completion/completions/archiver; or: source <(archiver completions bash)",
            "_archiver() {",
            "    local IFS=$'\\n' cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
            "    if [[ $cur == = ]]; then cur=\"\"; fi",
            "    if [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi",
            "    if (( COMP_CWORD == 1 )); then",
            "        COMPREPLY=($(compgen -W \(words(commands.map(\.name) + topLevel.map(\.word))) -- \"$cur\"))",
            "        return 0",
            "    fi",
            "    local options",
            "    case ${COMP_WORDS[1]} in",
        ]
        for command in commands {
            let names = command.options.flatMap { [$0.name] + ($0.alias.map { [$0] } ?? []) } + ["--help"]
            lines += ["    \(command.name))", "        options=\(words(names))"]
            // One arm per kind of value: `--id|--title|--group) return 0 ;;`.
            var arms: [(reply: String, spellings: [String])] = []
            for option in command.options {
                guard let value = option.value else { continue }
                let spellings = [option.name] + (option.alias.map { [$0] } ?? [])
                if let index = arms.firstIndex(where: { $0.reply == reply(value) }) {
                    arms[index].spellings += spellings
                } else {
                    arms.append((reply(value), spellings))
                }
            }
            if !arms.isEmpty {
                lines += ["        case $prev in"] + arms.map { "        \($0.spellings.joined(separator: "|"))) \($0.reply) ;;" }
                lines += ["        esac"]
            }
            lines += [
                "        if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$options\" -- \"$cur\")); return 0; fi",
                "        \(reply(command.operands))",
                "        ;;",
            ]
        }
        lines += [
            "    help) \(reply(.choices(commands.map(\.name)))) ;;",
            "    esac",
            "}",
            "complete -F _archiver archiver",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// An autoloadable `_archiver` (`#compdef`) that also registers itself when sourced.
    static func zsh(_ commands: [CommandReference]) -> String {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }
        func described(_ text: String) -> String {
            var escaped = ""
            for character in text {
                if "\\[]:".contains(character) { escaped.append("\\") }
                escaped.append(character)
            }
            return escaped
        }
        func action(_ kind: ValueKind) -> String {
            switch kind {
            case .text: " "
            case .file: "_files"
            case .directory: "_files -/"
            case .choices(let values): "(" + values.joined(separator: " ") + ")"
            }
        }
        let commandList = commands.map { quoted("\($0.name):\(described($0.shortSummary))") }
        var lines = [
            "#compdef archiver",
            "# zsh completion for archiver, written by `archiver completions zsh` from the option table its",
            "# parser reads. Installed as /usr/share/zsh/vendor-completions/_archiver; or: source <(archiver completions zsh)",
            "_archiver() {",
            "    local -a commands",
            "    commands=(" + commandList.joined(separator: " ") + ")",
            "    if (( CURRENT == 2 )); then",
            "        _describe -t commands 'archiver command' commands",
            "        compadd -- " + topLevel.map(\.word).joined(separator: " "),
            "        return",
            "    fi",
            "    local command=${words[2]}",
            "    shift words",
            "    (( CURRENT-- ))",
            "    case $command in",
        ]
        for command in commands {
            var specs = [quoted("--help[print the options of archiver \(command.name)]")]
            for option in command.options {
                let help = "[" + described(option.helpWithDefault) + "]"
                let argument = option.placeholder == nil ? "" : "="
                let value = option.placeholder.map { ":" + described($0) + ":" + action(ValueKind(placeholder: $0)) } ?? ""
                if let alias = option.alias {
                    specs.append(quoted("(\(option.name) \(alias))") + "{\(option.name)\(argument),\(alias)}" + quoted(help + value))
                } else {
                    specs.append(quoted(option.name + argument + help + value))
                }
            }
            if command.operands != .text {
                specs.append(quoted("*:argument:" + action(command.operands)))
            }
            lines.append("    (\(command.name))")
            lines.append("        _arguments -s -S \\\n            " + specs.joined(separator: " \\\n            ") + " ;;")
        }
        lines += [
            "    (help) _describe -t commands 'archiver command' commands ;;",
            "    esac",
            "}",
            "if [[ $funcstack[1] == _archiver ]]; then _archiver \"$@\"; else compdef _archiver archiver; fi",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `complete` lines, one per command and option; fish loads it from vendor_completions.d.
    static func fish(_ commands: [CommandReference]) -> String {
        func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        func value(_ kind: ValueKind) -> String {
            switch kind {
            case .text: "-x"
            case .file: "-r -F"
            case .directory: "-x -a '(__fish_complete_directories (commandline -ct))'"
            case .choices(let values): "-x -a " + quoted(values.joined(separator: " "))
            }
        }
        func spelling(_ name: String) -> String {
            if name.hasPrefix("--") { return "-l " + name.dropFirst(2) }
            return name.count == 2 ? "-s " + name.dropFirst() : "-o " + name.dropFirst()
        }
        var lines = [
            "# fish completion for archiver, written by `archiver completions fish` from the option table its",
            "# parser reads. Installed as /usr/share/fish/vendor_completions.d/archiver.fish",
            "complete -c archiver -f",
        ]
        for command in commands {
            lines.append("complete -c archiver -n __fish_use_subcommand -a \(command.name) -d \(quoted(command.shortSummary))")
        }
        lines.append("complete -c archiver -n __fish_use_subcommand -a help -d \(quoted(topLevel[0].help))")
        lines.append("complete -c archiver -n __fish_use_subcommand -l help -d \(quoted(topLevel[1].help))")
        lines.append("complete -c archiver -n __fish_use_subcommand -l version -d \(quoted(topLevel[2].help))")
        lines.append("complete -c archiver -n '__fish_seen_subcommand_from help' -x -a \(quoted(commands.map(\.name).joined(separator: " ")))")
        for command in commands {
            let condition = "complete -c archiver -n '__fish_seen_subcommand_from \(command.name)'"
            lines.append("\(condition) -l help -d \(quoted("print the options of archiver \(command.name)"))")
            for option in command.options {
                let names = ([spelling(option.name)] + (option.alias.map { [spelling($0)] } ?? [])).joined(separator: " ")
                let argument = option.value.map { " " + value($0) } ?? ""
                lines.append("\(condition) \(names)\(argument) -d \(quoted(option.helpWithDefault))")
            }
            switch command.operands {
            case .text: break
            case .file: lines.append("\(condition) -F")
            case .directory, .choices: lines.append("\(condition) \(value(command.operands).dropFirst(3))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
