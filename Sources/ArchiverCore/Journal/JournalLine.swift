/// The journal's line format: tab-separated fields, one record per line, escaped so that a
/// field can never contain a tab or a newline. Cheap to write with one `write` and to replay
/// a million of (no JSON parsing).
///
///     done    <id> <url> <source> <bytes> <sha256> <width> <height> <attempts>
///     failed  <id> <url> <source> <attempts> <kind> <status or -> <message>
enum JournalLine {
    static func encode(_ record: ItemRecord) -> String {
        var fields = [record.status.rawValue, String(record.id), escape(record.url), escape(record.source)]
        switch record.status {
        case .done, .pending:
            fields += [
                String(record.bytes), record.sha256, String(record.width), String(record.height),
                String(record.attempts),
            ]
        case .failed:
            let error = record.error ?? RecordedError(kind: "io", message: "unknown")
            fields += [
                String(record.attempts), escape(error.kind), error.status.map(String.init) ?? "-",
                escape(error.message),
            ]
        }
        return fields.joined(separator: "\t") + "\n"
    }

    /// Parses one line (without its newline); nil for anything malformed.
    static func decode<S: StringProtocol>(_ line: S) -> ItemRecord? {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count >= 4, let id = Int(fields[1]) else { return nil }
        let url = unescape(fields[2]), source = unescape(fields[3])
        switch fields[0] {
        case "done":
            guard fields.count == 9, let bytes = Int64(fields[4]), let width = Int(fields[6]),
                let height = Int(fields[7]), let attempts = Int(fields[8])
            else { return nil }
            return ItemRecord(
                id: id, url: url, source: source, status: .done, bytes: bytes, sha256: String(fields[5]),
                width: width, height: height, attempts: attempts)
        case "failed":
            guard fields.count == 8, let attempts = Int(fields[4]) else { return nil }
            let error = RecordedError(kind: unescape(fields[5]), status: Int(fields[6]), message: unescape(fields[7]))
            return ItemRecord(id: id, url: url, source: source, status: .failed, attempts: attempts, error: error)
        default:
            return nil
        }
    }

    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x09 || $0 == 0x0a || $0 == 0x0d || $0 == 0x5c }) else { return text }
        var out = ""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\r\n": out += "\\r\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func unescape<S: StringProtocol>(_ text: S) -> String {
        guard text.contains("\\") else { return String(text) }
        var out = ""
        var escaping = false
        for character in text {
            if escaping {
                switch character {
                case "t": out += "\t"
                case "n": out += "\n"
                case "r": out += "\r"
                default: out.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return out
    }
}
