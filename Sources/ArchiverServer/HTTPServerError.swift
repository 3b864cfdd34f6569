import Glibc

extension HTTPServer {
    /// Why an `HTTPServer` could not be set up.
    enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The host is not an IPv4 address in dotted form.
        case invalidHost(String)
        /// Another socket is already bound to this address.
        case addressInUse(host: String, port: UInt16)
        /// A system call failed with this `errno`.
        case systemCall(String, errno: Int32)

        /// One line a user can act on.
        var description: String {
            switch self {
            case .invalidHost(let host):
                "cannot listen on '\(host)': not an IPv4 address such as 127.0.0.1"
            case .addressInUse(let host, let port):
                "cannot listen on \(host):\(port): address already in use (pick another --port, or 0 for any free one)"
            case .systemCall(let call, let code):
                "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
            }
        }
    }
}
