import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default fetcher: one URLSession for the process, a session delegate that streams each body
/// under a size cap, counts redirects, and a timer per attempt that the archiver enforces itself
/// (URLSession's own timeout is unreliable on Linux).
public final class URLSessionFetcher: Fetching {
    private let session: URLSession
    private let delegate: SessionDelegate
    private let limits: FetchLimits
    private let timers = DispatchQueue(label: "archiver.fetch.timeouts")

    public init(limits: FetchLimits, userAgent: String = "archiver/\(ArchiverVersion.current)") {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = limits.concurrency
        configuration.timeoutIntervalForRequest = (limits.timeout + 60).rounded(.up)
        configuration.httpAdditionalHeaders = ["User-Agent": userAgent]
        let delegateQueue = OperationQueue()
        delegateQueue.name = "archiver.fetch.delegate"
        delegateQueue.maxConcurrentOperationCount = 1
        self.limits = limits
        self.delegate = SessionDelegate(limits: limits)
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)
    }

    public func fetch(_ url: URL, completion: @escaping @Sendable (FetchOutcome) -> Void) -> any FetchTask {
        var request = URLRequest(url: url)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        delegate.register(task, url: url.absoluteString, completion: completion)
        let timeout = ItemError.timeout(seconds: Int(limits.timeout.rounded(.up)), url: url.absoluteString)
        timers.asyncAfter(deadline: .now() + limits.timeout) { [delegate] in
            delegate.abort(id, because: timeout)
        }
        task.resume()
        return Handle(id: id, delegate: delegate)
    }

    private struct Handle: FetchTask {
        let id: Int
        let delegate: SessionDelegate

        func cancel() {
            delegate.cancel(id)
        }
    }
}

/// Per-task state and the URLSession callbacks that fill it.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct TaskState {
        var url: String
        var completion: @Sendable (FetchOutcome) -> Void
        var body = Data()
        var expected: Int64 = -1
        var status: Int?
        var error: ItemError?
        var retryAfter: Double?
        var cancelled = false
        var redirects = 0
        var task: URLSessionTask?
    }

    let limits: FetchLimits
    private let states = Locked<[Int: TaskState]>([:])

    init(limits: FetchLimits) {
        self.limits = limits
    }

    func register(_ task: URLSessionTask, url: String, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        states.withLock { $0[task.taskIdentifier] = TaskState(url: url, completion: completion, task: task) }
    }

    /// Ends a task in flight with `error` (timeouts, caps); the completion reports it.
    func abort(_ id: Int, because error: ItemError) {
        let task: URLSessionTask? = states.withLock { states in
            guard states[id] != nil, states[id]!.error == nil, !states[id]!.cancelled else { return nil }
            states[id]!.error = error
            return states[id]!.task
        }
        task?.cancel()
    }

    func cancel(_ id: Int) {
        let task: URLSessionTask? = states.withLock { states in
            guard states[id] != nil else { return nil }
            states[id]!.cancelled = true
            return states[id]!.task
        }
        task?.cancel()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 200
        let expected = response.expectedContentLength
        let retryAfter = http.flatMap { header("Retry-After", in: $0) }.flatMap { parseRetryAfter($0) }
        let proceed: Bool = states.withLock { states in
            guard var state = states[id] else { return false }
            defer { states[id] = state }
            state.status = status
            state.expected = expected
            if state.cancelled || state.error != nil { return false }
            if !(200..<300).contains(status) {
                state.error = .httpStatus(status, url: state.url)
                state.retryAfter = retryAfter
                return false
            }
            if expected > limits.maxBytes {
                state.error = .tooLarge(limit: limits.maxBytes, url: state.url)
                return false
            }
            if expected > 0 { state.body.reserveCapacity(Int(expected)) }
            return true
        }
        completionHandler(proceed ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let overflow: Bool = states.withLock { states in
            guard states[id] != nil, states[id]!.error == nil, !states[id]!.cancelled else { return false }
            if Int64(states[id]!.body.count + data.count) > limits.maxBytes {
                states[id]!.error = .tooLarge(limit: limits.maxBytes, url: states[id]!.url)
                states[id]!.body = Data()
                return true
            }
            states[id]!.body.append(data)
            return false
        }
        if overflow { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        let id = task.taskIdentifier
        let follow: Bool = states.withLock { states in
            guard states[id] != nil else { return false }
            states[id]!.redirects += 1
            if states[id]!.redirects > limits.maxRedirects {
                states[id]!.error = .tooManyRedirects(url: states[id]!.url)
                return false
            }
            return !states[id]!.cancelled
        }
        completionHandler(follow ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = states.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        state.completion(outcome(of: state, task: task, error: error))
    }

    private func outcome(of state: TaskState, task: URLSessionTask, error: (any Error)?) -> FetchOutcome {
        if state.cancelled { return .cancelled }
        if let failure = state.error { return .failed(failure, retryAfter: state.retryAfter) }
        let received = Int64(state.body.count)
        if state.expected > 0, received < state.expected {
            return .failed(.truncated(expected: state.expected, received: received, url: state.url), retryAfter: nil)
        }
        if let error {
            let code = (error as? URLError)?.code
            switch code {
            case .timedOut?:
                return .failed(.timeout(seconds: Int(limits.timeout.rounded(.up)), url: state.url), retryAfter: nil)
            case .httpTooManyRedirects?:
                return .failed(.tooManyRedirects(url: state.url), retryAfter: nil)
            case .networkConnectionLost? where received > 0:
                return .failed(.truncated(expected: state.expected, received: received, url: state.url), retryAfter: nil)
            default:
                return .failed(.network(error.localizedDescription, url: state.url), retryAfter: nil)
            }
        }
        let status = state.status ?? (task.response as? HTTPURLResponse)?.statusCode ?? 200
        if !(200..<300).contains(status) {
            return .failed(.httpStatus(status, url: state.url), retryAfter: nil)
        }
        let finalURL = task.currentRequest?.url?.absoluteString ?? state.url
        return .body(state.body, finalURL: finalURL)
    }
}

private func header(_ name: String, in response: HTTPURLResponse) -> String? {
    for (key, value) in response.allHeaderFields {
        if let key = key as? String, key.caseInsensitiveCompare(name) == .orderedSame { return value as? String }
    }
    return nil
}
