import Foundation

/// What `HTTPServer` sends back for one request: a status, headers and a body that can
/// also script a fault (short body, reset, endless stall).
package struct HTTPResponse: Sendable {
    /// How the body is sent; the fault cases exist to test clients.
    enum Body: Sendable {
        /// The whole body, with `Content-Length: data.count`.
        case data(Data)
        /// Sends `Content-Length: declaredLength`, writes `data`, then closes the connection.
        case truncated(Data, declaredLength: Int)
        /// Sends `Content-Length: data.count`, writes the first half of `data`, then resets
        /// the connection (RST, through `SO_LINGER` 0).
        case reset(Data)
        /// Sends `Content-Length: totalLength` and a body made by repeating `chunk`,
        /// never held in memory whole.
        case stream(chunk: Data, totalLength: Int64)
        /// Never answers; the connection is closed when the client closes it or on `stop()`.
        case hang
    }

    /// The status code, e.g. 200.
    var status: Int
    /// Extra headers, in order. `Content-Length` and `Connection` are written by the server.
    var headers: [(name: String, value: String)]
    /// The body, or the fault to script.
    var body: Body

    /// Creates a response.
    init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .data(Data())) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first header with this name (case-insensitive), if any.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// 200 with `Content-Type: image/png`.
    static func png(_ data: Data) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: .data(data))
    }

    /// A plain-text response with the given status.
    static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: .data(Data(text.utf8))
        )
    }

    /// A redirect (302 unless told otherwise) to `location`.
    static func redirect(to location: String, status: Int = 302) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Location", location)])
    }

    /// The standard reason phrase for a status code, or `Status` when unknown.
    static func reason(for status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Status"
        }
    }
}
