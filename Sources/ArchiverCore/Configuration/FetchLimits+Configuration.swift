extension FetchLimits {
    /// The limits a run's fetches obey, derived from its configuration in this one place.
    public init(_ configuration: RunConfiguration) {
        self.init(
            concurrency: configuration.concurrency, timeout: configuration.timeout, maxBytes: configuration.maxBytes,
            maxRedirects: configuration.maxRedirects, perHost: configuration.perHost)
    }
}
