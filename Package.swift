// swift-tools-version:6.0
import PackageDescription

// Linux only (Debian 12 is what CI runs): the sources call Glibc directly, so no other platform is claimed.

let package = Package(
    name: "enlog",
    products: [
        .executable(name: "enlog", targets: ["enlog"]),
        .library(name: "ENLogKit", targets: ["ENLogKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0",
                       providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCairo", pkgConfig: "cairo",
                       providers: [.apt(["libcairo2-dev"])]),
        .systemLibrary(name: "CLibPNG", pkgConfig: "libpng",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CMagic", pkgConfig: "libmagic",
                       providers: [.apt(["libmagic-dev"])]),
        .systemLibrary(name: "CExif", pkgConfig: "libexif",
                       providers: [.apt(["libexif-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // libpng's longjmp errors and FreeType's font loading, kept in C for the map renderer.
        .target(name: "CMapShim", dependencies: ["CLibPNG", "CCairo"],
                linkerSettings: [.linkedLibrary("freetype"), .linkedLibrary("z")]),
        .target(
            name: "ENLogKit",
            dependencies: [
                "CLibXML2",
                "CCurlShim",
                "CCairo",
                "CMapShim",
                "CMagic",
                "CExif",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [
                .embedInCode("ENML/DTD/enml2.dtd"),
                .embedInCode("ENML/DTD/xhtml-lat1.ent"),
                .embedInCode("ENML/DTD/xhtml-special.ent"),
                .embedInCode("ENML/DTD/xhtml-symbol.ent"),
                .embedInCode("Note/DefaultTemplate/title.mustache"),
                .embedInCode("Note/DefaultTemplate/content.mustache"),
            ]
        ),
        .executableTarget(
            name: "enlog",
            dependencies: [
                "ENLogKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ENLogKitTests",
            dependencies: ["ENLogKit", "enlog"]
        ),
    ]
)
