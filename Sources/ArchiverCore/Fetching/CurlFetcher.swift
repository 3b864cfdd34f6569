import CCurl
import Dispatch
import Foundation

/// A fetcher on libcurl's multi interface: one thread drives every transfer over kept-alive
/// connections, kept per host and reused whatever order the requests come in; at most
/// `limits.perHost` to one host when set. The caller bounds requests in flight.
///
/// Completions run on that thread, so they must not block: a `FetchOperation` decides there
/// and hands the body to the `FetchLoop`'s queue. The C side (`CCurl`) owns every `curl_easy_setopt`, the size cap and the
/// header parsing; this type maps its results onto `FetchOutcome`: a non-2xx answer is
/// `httpStatus` (with `Retry-After`), a body short of its `Content-Length` is `truncated`, a body
/// over `maxBytes` is `tooLarge` (by `Content-Length` at once, else as soon as it streams past).
public final class CurlFetcher: Fetching, @unchecked Sendable {
    // @unchecked: `client` is an immutable pointer to a C object whose functions lock themselves.
    private let client: OpaquePointer?
    private let limits: FetchLimits
    private let passwords: URLPasswords?

    /// Starts the transfer thread; it stops when the fetcher and every task from it are gone.
    ///
    /// `caFile` is a PEM bundle servers are verified against, as curl's `--cacert`; `http2`
    /// offers HTTP/2 through TLS ALPN and multiplexes requests to one host on it. `request` is
    /// what every request carries (headers, user agent, netrc, cookies, proxy), set once per
    /// connection handle; the C side copies it. A URL whose password `passwords` took out gets
    /// it back for libcurl only; messages and results keep the redacted form.
    ///
    /// `spoolDirectory` is where a body over 1 MiB (`CCURL_SPOOL_THRESHOLD`) is written as it
    /// arrives, to an unnamed file (`O_TMPFILE`) that the `Data` handed on maps: bodies in flight
    /// then cost disk, not memory. Without one, or where it cannot hold such a file, every body is
    /// kept in memory.
    public init(
        limits: FetchLimits, caFile: String? = nil, http2: Bool = false, spoolDirectory: String? = nil,
        request: RequestOptions = RequestOptions(), passwords: URLPasswords? = nil
    ) {
        self.limits = limits
        self.passwords = passwords
        // strdup'd C strings for the create call only: ccurl copies what it keeps.
        var owned: [UnsafeMutablePointer<CChar>?] = []
        func c(_ text: String?) -> UnsafePointer<CChar>? {
            guard let text else { return nil }
            owned.append(strdup(text))
            return UnsafePointer(owned[owned.count - 1])
        }
        defer { owned.forEach { free($0) } }
        let headers: [UnsafePointer<CChar>?] = request.headers.map { c($0) }
        client = headers.withUnsafeBufferPointer { lines in
            var options = ccurl_options(
                max_in_flight: max(1, limits.concurrency),
                max_connections: OpenFileLimit.pool(for: max(1, limits.concurrency)),
                max_per_host: max(0, limits.perHost ?? 0),
                ca_file: c(caFile), http2: http2 ? 1 : 0, spool_directory: c(spoolDirectory),
                user_agent: c(request.userAgent), headers: lines.baseAddress, header_count: lines.count,
                netrc: request.netrc || request.netrcFile != nil ? 1 : 0, netrc_file: c(request.netrcFile),
                cookie_file: c(request.cookieFile), proxy: c(request.proxy), noproxy: c(request.noProxy))
            return ccurl_client_create(&options, curlFetcherDidComplete)
        }
    }

    deinit {
        ccurl_client_destroy(client)
    }

    public func fetch(
        _ url: String, ifChanged: Validators?, completion: @escaping @Sendable (FetchOutcome) -> Void
    ) -> any FetchTask {
        let address = URLPasswords.redacted(url)
        let target = passwords?.restoring(address) ?? address
        let pending = PendingFetch(url: address, limits: limits, conditional: !(ifChanged?.isEmpty ?? true), completion: completion)
        let context = Unmanaged.passRetained(pending).toOpaque()
        var id: UInt64 = 0
        if let client {
            id = target.withCString { urlText in
                withOptionalCString(ifChanged?.etag) { etag in
                    withOptionalCString(ifChanged?.lastModified) { lastModified in
                        var request = ccurl_request(
                            url: urlText,
                            timeout_ms: Int(max(1, (limits.timeout * 1000).rounded(.up))),
                            max_bytes: limits.maxBytes, max_redirects: max(0, limits.maxRedirects),
                            if_none_match: etag, if_modified_since: lastModified)
                        return ccurl_submit(client, &request, context)
                    }
                }
            }
        }
        if id == 0 {
            Unmanaged<PendingFetch>.fromOpaque(context).release()
            DispatchQueue.global().async {
                completion(.failed(.network("libcurl could not start the transfer", url: address), retryAfter: nil))
            }
        }
        return Handle(fetcher: self, id: id)
    }

    private func cancel(_ id: UInt64) {
        guard let client, id != 0 else { return }
        ccurl_cancel(client, id)
    }

    /// Keeps the fetcher, and so its C client, alive while a caller may still cancel.
    private struct Handle: FetchTask {
        let fetcher: CurlFetcher
        let id: UInt64

        func cancel() {
            fetcher.cancel(id)
        }
    }
}

/// Runs `body` with `text` as a C string, or with NULL when there is none.
private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}

/// The Swift side of one transfer, passed through C as an `Unmanaged` context.
private final class PendingFetch: Sendable {
    let url: String
    let limits: FetchLimits
    /// Whether the request carried validators: only then is a 304 an answer, not an error.
    let conditional: Bool
    let completion: @Sendable (FetchOutcome) -> Void

    init(url: String, limits: FetchLimits, conditional: Bool, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        self.url = url
        self.limits = limits
        self.conditional = conditional
        self.completion = completion
    }

    /// Maps how libcurl ended the transfer onto a `FetchOutcome`; takes ownership of the body.
    func outcome(of result: ccurl_result) -> FetchOutcome {
        var body = Data()
        if result.body_fd >= 0 {
            guard let mapped = Self.map(result.body_fd, length: result.body_length) else {
                let reason = "could not map the \(result.body_length)-byte body spooled to disk: \(String(cString: strerror(errno)))"
                return .failed(.network(reason, url: url), retryAfter: nil)
            }
            body = mapped
        } else if let bytes = result.body {
            if result.body_length > 0 {
                body = Data(bytesNoCopy: bytes, count: result.body_length, deallocator: .free)
            } else {
                free(bytes)
            }
        }
        let outcome = Int(result.outcome)
        // libcurl's last URL, as it used it (a password put back): made, and redacted, only
        // where an outcome names it, never with the password.
        func lastURL() -> String? { result.effective_url.map { URLPasswords.redacted(String(cString: $0)) } }
        let status = result.status
        let received = Int64(body.count)
        let expected = result.content_length
        // A 3xx seen while a transfer failed is a redirect on the way, not the answer.
        let answered = status >= 200 && !((300..<400).contains(status) && outcome != CCURL_OK)
        switch outcome {
        case CCURL_CANCELLED:
            return .cancelled
        case CCURL_TIMEOUT:
            return .failed(.timeout(seconds: Int(limits.timeout.rounded(.up)), url: url), retryAfter: nil)
        case CCURL_TOO_MANY_REDIRECTS:
            return .failed(.tooManyRedirects(url: url), retryAfter: nil)
        case CCURL_REDIRECT_REFUSED:
            return .failed(.invalidURL(CurlFetcher.redirect(to: lastURL(), from: url)), retryAfter: nil)
        case CCURL_HEADER_TOO_LARGE:
            return .failed(.headerTooLarge(limit: Int(CCURL_MAX_HEADER), url: url), retryAfter: nil)
        case CCURL_FORBIDDEN_ADDRESS:
            let final = lastURL() ?? url
            return .failed(.forbiddenAddress(url: final == url ? url : CurlFetcher.redirect(to: final, from: url)), retryAfter: nil)
        default:
            break
        }
        if conditional, outcome == CCURL_OK, status == 304 {
            return .notModified
        }
        if answered, status == 401 || status == 403 {
            return .failed(.unauthorized(status, url: url), retryAfter: nil)
        }
        if answered, !(200..<300).contains(status) {
            let retryAfter = result.retry_after.flatMap { parseRetryAfter(String(cString: $0)) }
            return .failed(.httpStatus(status, url: url), retryAfter: retryAfter)
        }
        if outcome == CCURL_TOO_LARGE {
            return .failed(.tooLarge(limit: limits.maxBytes, url: url), retryAfter: nil)
        }
        if answered, expected > 0, received < expected {
            return .failed(.truncated(expected: expected, received: received, url: url), retryAfter: nil)
        }
        if outcome == CCURL_PARTIAL || (outcome == CCURL_RECEIVE_ERROR && received > 0) {
            return .failed(.truncated(expected: expected, received: received, url: url), retryAfter: nil)
        }
        if outcome == CCURL_TLS {
            let message = result.error.map { String(cString: $0) } ?? ""
            return .failed(.tls(message.isEmpty ? "libcurl error \(result.curl_code)" : message, url: url), retryAfter: nil)
        }
        guard outcome == CCURL_OK else {
            let message = result.error.map { String(cString: $0) } ?? ""
            // After a redirect the host asked for answered; only the one redirected to did not.
            if outcome == CCURL_UNREACHABLE, result.redirects == 0 {
                return .failed(.unreachable(message.isEmpty ? "libcurl error \(result.curl_code)" : message, url: url), retryAfter: nil)
            }
            return .failed(.network(message.isEmpty ? "libcurl error \(result.curl_code)" : message, url: url), retryAfter: nil)
        }
        let finalURL = result.redirects > 0 ? lastURL() ?? url : url
        let validators = Validators(
            etag: result.etag.map { String(cString: $0) }, lastModified: result.last_modified.map { String(cString: $0) })
        return .body(body, finalURL: finalURL, validators: validators)
    }
}

extension PendingFetch {
    /// A spooled body as `Data` over a read-only mapping of its file, unmapped when the `Data`
    /// goes: its pages are read from the page cache as the validator and the hash walk them, so a
    /// 48 MiB body costs no 48 MiB of heap. Closes `fd` (the mapping keeps the file).
    static func map(_ fd: Int32, length: Int) -> Data? {
        defer { FileDescriptor(rawValue: fd).close() }
        guard length > 0 else { return Data() }
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), address != MAP_FAILED else { return nil }
        return Data(bytesNoCopy: address, count: length, deallocator: .custom { pointer, count in munmap(pointer, count) })
    }
}

extension CurlFetcher {
    /// `<final URL> (redirected to from <url>)`, the final URL (redacted) cut to 1024 bytes, never
    /// inside a character (libcurl keeps a user name's or a fragment's UTF-8): a `Location` may be
    /// up to 100 KiB, and the message goes into the manifest.
    static func redirect(to final: String?, from url: String) -> String {
        var target = final ?? "an unknown URL"
        if target.utf8.count > 1024 { target = target.prefix(utf8Bytes: 1024) + "..." }
        return "\(target) (redirected to from \(url))"
    }
}

/// The C completion: runs once per submitted transfer, on the client's thread.
private func curlFetcherDidComplete(_ context: UnsafeMutableRawPointer?, _ result: UnsafePointer<ccurl_result>?) {
    guard let context, let result else { return }
    let pending = Unmanaged<PendingFetch>.fromOpaque(context).takeRetainedValue()
    pending.completion(pending.outcome(of: result.pointee))
}
