extension RunConfiguration {
    /// Where the fetcher spools bodies over 1 MiB: the bundle's `images/`, so a spooled body is on
    /// the file system its image file will be on.
    public var spoolDirectory: String { BundleLayout(root: outputDirectory).images.path }
}
