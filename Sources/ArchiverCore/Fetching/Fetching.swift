import Foundation

/// A response's cache validators, `ETag` and `Last-Modified`, as the server sent them: what a
/// conditional request sends back (`If-None-Match`, `If-Modified-Since`) to learn whether the
/// image changed. Each is nil when the server sent none.
public struct Validators: Sendable, Equatable, Hashable {
    var etag: String?
    var lastModified: String?

    init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag.flatMap(Self.usable)
        self.lastModified = lastModified.flatMap(Self.usable)
    }

    /// Whether there is anything to send.
    var isEmpty: Bool { etag == nil && lastModified == nil }

    /// Longest value kept (`CCURL_VALIDATOR_MAX`): a longer one is dropped, never cut.
    static let maxLength = 255

    /// `value` if it can be sent back in a header as it is (1 to 255 bytes, no control character),
    /// else nil: a validator from a restored manifest must not be able to end a header line.
    static func usable(_ value: String) -> String? {
        guard (1...maxLength).contains(value.utf8.count),
            !value.containsUTF8Byte(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F })
        else { return nil }
        return value
    }
}

/// What one attempt at a URL ended with.
public enum FetchOutcome: Sendable {
    /// A 2xx answer and its whole body; `finalURL` differs from the request after redirects;
    /// `validators` are the answer's `ETag` and `Last-Modified`.
    case body(Data, finalURL: String, validators: Validators)
    /// A 304 to a conditional request: the copy the validators came with is still current.
    case notModified
    /// The attempt failed; `retryAfter` is the server's `Retry-After`, in seconds, if it sent one.
    case failed(ItemError, retryAfter: Double?)
    /// The attempt was cancelled by the caller.
    case cancelled
}

/// A handle on one attempt in flight.
public protocol FetchTask: Sendable {
    func cancel()
}

/// Downloads one URL without blocking the caller; the completion runs exactly once.
public protocol Fetching: Sendable {
    /// `address` is an absolute http(s) URL as text (a `URL`'s `absoluteString`: the pipeline
    /// has it as text, and parsing it into a `URL` per request was 1% of a run's CPU). With
    /// `ifChanged` validators the request is conditional, and a 304 is `notModified`.
    func fetch(
        _ address: String, ifChanged: Validators?, completion: @escaping @Sendable (FetchOutcome) -> Void
    ) -> any FetchTask
}

extension Fetching {
    /// A plain GET.
    func fetch(_ url: URL, completion: @escaping @Sendable (FetchOutcome) -> Void) -> any FetchTask {
        fetch(url.absoluteString, ifChanged: nil, completion: completion)
    }
}

/// Limits every fetch obeys.
public struct FetchLimits: Sendable {
    /// Most requests in flight, and connections kept.
    var concurrency: Int
    /// Seconds one attempt may take.
    var timeout: Double
    /// Largest body accepted.
    var maxBytes: Int64
    /// Redirects followed before `too-many-redirects`.
    var maxRedirects: Int
    /// Most connections to one host at once; nil for no limit beyond `concurrency`.
    var perHost: Int?

    init(
        concurrency: Int = 8, timeout: Double = 30, maxBytes: Int64 = 50 << 20, maxRedirects: Int = 10,
        perHost: Int? = nil
    ) {
        self.concurrency = concurrency
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.maxRedirects = maxRedirects
        self.perHost = perHost
    }
}

/// Parses a `Retry-After` value: delta seconds or an HTTP date. Returns seconds from `now`.
///
/// Always finite: `inf` or `nan` is no number of seconds, so it counts as no `Retry-After` at
/// all; a huge finite value (`1e300`) is kept, and the caller's cap fails the item.
func parseRetryAfter(_ value: String, now: Date = Date()) -> Double? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    if let seconds = Double(trimmed) { return seconds.isFinite && seconds >= 0 ? seconds : nil }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = formatter.date(from: trimmed) else { return nil }
    return max(0, date.timeIntervalSince(now))
}

/// Why a `Retry-After` over `cap` fails the item, with both values as sent (`120.5 s`,
/// `1e+300 s`): a Double of any size is printed, never converted to an integer.
func retryAfterBeyondCapNote(_ retryAfter: Double, cap: Double) -> String {
    "Retry-After \(secondsText(retryAfter)) s is beyond the \(secondsText(cap)) s cap"
}

/// `120` for a whole number of seconds, `120.5` or `1e+300` otherwise.
func secondsText(_ seconds: Double) -> String {
    seconds.rounded() == seconds && abs(seconds) < 1e15 ? String(Int64(seconds)) : "\(seconds)"
}
