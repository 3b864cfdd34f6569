// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "archiver",
    products: [
        .executable(name: "archiver", targets: ["archiver"]),
        .library(name: "ArchiverCore", targets: ["ArchiverCore"]),
        .library(name: "ArchiverServer", targets: ["ArchiverServer"]),
    ],
    targets: [
        .target(
            name: "CPNG",
            linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("z")]
        ),
        .target(name: "CJPEG", linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "CWebP", linkerSettings: [.linkedLibrary("webpdemux"), .linkedLibrary("webp")]),
        .target(name: "CGIF", linkerSettings: [.linkedLibrary("gif")]),
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
        .target(name: "ArchiverCore", dependencies: [
            "CPNG", "CJPEG", "CWebP", "CGIF", "CCurl", "CLibCrypto", "CLibArchive",
        ]),
        // The built-in image server (`archiver serve`, the demo and the tests); the archiver's own
        // pipeline never calls it.
        .target(name: "ArchiverServer", dependencies: ["ArchiverCore", "CPNG"]),
        .executableTarget(name: "archiver", dependencies: ["ArchiverCore", "ArchiverServer"]),
        .testTarget(name: "ArchiverCoreTests", dependencies: ["ArchiverCore", "ArchiverServer"], exclude: ["Fixtures"]),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
