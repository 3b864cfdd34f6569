// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "archiver",
    products: [
        .executable(name: "archiver", targets: ["archiver"]),
        .library(name: "ArchiverCore", targets: ["ArchiverCore"]),
    ],
    targets: [
        .target(
            name: "CPNG",
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("z")]
        ),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),
        .target(name: "ArchiverCore", dependencies: ["CPNG", "CCurl", "CLibCrypto", "CLibArchive"]),
        .executableTarget(name: "archiver", dependencies: ["ArchiverCore"]),
        .testTarget(name: "ArchiverCoreTests", dependencies: ["ArchiverCore"]),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
