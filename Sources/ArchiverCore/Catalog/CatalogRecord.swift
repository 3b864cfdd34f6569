/// One record of the catalog: the JSONPlaceholder `/photos` schema, or the same fields found
/// under the keys `CatalogOptions` names.
struct CatalogRecord: Sendable, Equatable, Codable {
    /// The group the gallery files the record under (`--group`; 0 when the record has none).
    var albumId: Int
    var id: RecordID
    var title: String
    /// The image URLs as the catalog gives them, before `--mirror`; `--field` picks one.
    var url: String
    var thumbnailUrl: String
    /// Why the image URL cannot be used as it stands (over 8 KiB, not UTF-8); the record then
    /// fails alone as `invalid-url` with this short reason, and its `url` is empty.
    var urlProblem: String?
    /// The SHA-256 the catalog expects of the image (`--sha256 KEY`), as the catalog wrote it;
    /// nil when there is no such key or it was not asked for.
    var sha256: String?

    init(albumId: Int, id: RecordID, title: String, url: String, thumbnailUrl: String) {
        self.albumId = albumId
        self.id = id
        self.title = title
        self.url = url
        self.thumbnailUrl = thumbnailUrl
    }

    /// The SHA-256 to hold the image to: `sha256` unless it is blank, which is no digest, as a
    /// record without the key has none (a CSV row cannot leave out a column, only empty its cell).
    var expectedSHA256: String? {
        sha256.flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
    }

    /// The URL in the chosen field.
    func url(for field: ImageField) -> String {
        field == .thumbnailUrl ? thumbnailUrl : url
    }
}

/// Which record key holds the image URL to archive (`--field`): `url` by default, `thumbnailUrl`
/// for the JSONPlaceholder thumbnails, or any key a catalog uses (`image_url`).
public struct ImageField: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    static let url = ImageField(rawValue: "url")
    static let thumbnailUrl = ImageField(rawValue: "thumbnailUrl")

    public var description: String { rawValue }
}
