/// One record of the catalog: the JSONPlaceholder `/photos` schema.
public struct CatalogRecord: Sendable, Equatable, Codable {
    public var albumId: Int
    public var id: Int
    public var title: String
    public var url: String
    public var thumbnailUrl: String

    public init(albumId: Int, id: Int, title: String, url: String, thumbnailUrl: String) {
        self.albumId = albumId
        self.id = id
        self.title = title
        self.url = url
        self.thumbnailUrl = thumbnailUrl
    }

    /// The URL in the chosen field.
    public func url(for field: ImageField) -> String {
        switch field {
        case .url: url
        case .thumbnailUrl: thumbnailUrl
        }
    }
}

/// Which record field holds the image URL to archive.
public enum ImageField: String, Sendable, CaseIterable, Codable {
    case url
    case thumbnailUrl
}
