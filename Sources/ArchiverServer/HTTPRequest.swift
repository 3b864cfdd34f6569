import Foundation

/// One request received by `HTTPServer`: the request line and the headers.
///
/// A request body (announced by `Content-Length`) is read and discarded by the server;
/// nothing in this project needs it.
package struct HTTPRequest: Sendable {
    /// The method as sent, e.g. `GET`.
    var method: String
    /// The request target as sent, including any query string, e.g. `/600/92c952?x=1`.
    var path: String
    /// The headers, names lowercased; repeated headers are joined with `", "`.
    var headers: [String: String]
    /// The protocol version from the request line, e.g. `HTTP/1.1`.
    var version: String

    /// Creates a request; the server builds these, tests may too.
    init(method: String, path: String, headers: [String: String] = [:], version: String = "HTTP/1.1") {
        self.method = method
        self.path = path
        self.headers = headers
        self.version = version
    }

    /// The path without its query string (everything before the first `?`).
    var pathWithoutQuery: String {
        if let mark = path.firstIndex(of: "?") { return String(path[..<mark]) }
        return path
    }

    /// Whether the client wants the connection kept open after this request.
    ///
    /// HTTP/1.1 keeps it unless `Connection: close`; HTTP/1.0 closes unless `Connection: keep-alive`.
    var wantsKeepAlive: Bool {
        let tokens = (headers["connection"] ?? "").lowercased()
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
        return !tokens.contains("close")
    }
}
