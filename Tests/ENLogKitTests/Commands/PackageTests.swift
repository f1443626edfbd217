import Foundation
import XCTest

/// enlog's Debian package (scripts/package), installed as a user installs it, on a bare Debian 12
/// root without the Swift toolchain (scripts/bare-root makes it; .ci/run calls that). The root is
/// never changed: each test mounts a throwaway layer over it (overlayfs in a mount namespace of
/// its own) and runs the commands there with chroot. Root only, as CI is; in CI a missing root or
/// a binary that is not static is a failure, elsewhere a skip that says what to run.
final class PackageTests: XCTestCase {
    static let ci = ProcessInfo.processInfo.environment["CI"] == "true"
    static let bareRoot = ProcessInfo.processInfo.environment["ENLOG_BARE_ROOT"] ?? "/var/cache/enlog/bare-root-bookworm"
    static let scripts = Fixtures.repositoryRoot.appendingPathComponent("scripts")

    struct Unavailable: Error, CustomStringConvertible { var description: String }

    /// Skips here, fails in CI, where everything the test needs is set up by .ci/run.
    func require(_ condition: Bool, _ why: @autoclosure () -> String) throws {
        guard !condition else { return }
        if Self.ci { throw Unavailable(description: why()) }
        throw XCTSkip(why())
    }

    func script(_ name: String, _ arguments: [String]) throws -> ProcessResult {
        try Subprocess.run(Self.scripts.appendingPathComponent(name), arguments, currentDirectory: Fixtures.repositoryRoot)
    }

    /// The tested enlog must be the kind users get: static in Swift's runtime (scripts/test links
    /// it so with scripts/link-static).
    func requireStaticEnlog() throws {
        let check = try script("check-static", [Subprocess.enlog.path])
        try require(check.status == 0, "\(Subprocess.enlog.path) is linked against the toolchain's Swift runtime; run scripts/link-static (scripts/test does): \(check.standardError)")
    }

    /// A throwaway layer over the bare root; `run` chroots into it.
    final class Layer {
        let directory: TemporaryDirectory
        var upper: URL { directory.url.appendingPathComponent("upper") }

        init() throws {
            directory = try TemporaryDirectory()
            for name in ["upper", "work", "merged", "upper/tmp"] {
                try FileManager.default.createDirectory(at: directory.url.appendingPathComponent(name), withIntermediateDirectories: true)
            }
        }

        /// Puts a file at /tmp/NAME inside the root.
        func place(_ file: URL, as name: String) throws {
            try FileManager.default.copyItem(at: file, to: upper.appendingPathComponent("tmp/\(name)"))
        }

        /// Runs `script` with /bin/sh inside the root, with only the variables given (and PATH).
        /// `offline`: in a network namespace of its own with no interface up, so nothing it does
        /// can reach a network (apt then finds a package in the root's cache or fails).
        func run(_ script: String, environment: [String: String] = [:], offline: Bool = false) throws -> ProcessResult {
            let mount = "mount -t overlay overlay -o \"lowerdir=$1,upperdir=$2,workdir=$3\" \"$4\" && mount -t proc proc \"$4/proc\" && "
                + "mount --rbind /dev \"$4/dev\" && root=$4 && shift 4 && exec chroot \"$root\" \"$@\""
            let variables = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "TZ=UTC", "LANG=C.UTF-8"]
                + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let path = directory.url.path
            return try Subprocess.run(URL(fileURLWithPath: "/usr/bin/unshare"),
                                      (offline ? ["--net"] : []) + ["--mount", "--propagation", "private", "/bin/sh", "-c", mount, "sh",
                                       PackageTests.bareRoot, "\(path)/upper", "\(path)/work", "\(path)/merged",
                                       "/usr/bin/env", "-i"] + variables + ["/bin/sh", "-c", script])
        }
    }

    /// The package installs with apt from the root's cache and nothing else (no download, no
    /// recommended package), and with what its Depends brought in, enlog runs there: it logs a
    /// note with a map drawn from a local tile server (curl, cairo, libpng, FreeType), validates
    /// ENML against the DTD (libxml2) and exports the note as ENEX. The manual page, the
    /// completions, the systemd units, the templates and the sample configuration are installed.
    func testTheDebInstallsAndRunsOnABareDebianRootWithoutTheToolchain() async throws {
        try require(getuid() == 0, "installing into a root and chroot need root (CI runs as root)")
        try require(FileManager.default.isExecutableFile(atPath: "\(Self.bareRoot)/usr/bin/apt-get"),
                    "no bare Debian 12 root at \(Self.bareRoot): make one with scripts/bare-root (root, network; .ci/run does)")
        try require(Subprocess.which("dpkg-shlibdeps") != nil, "scripts/package needs dpkg-shlibdeps (apt-get install dpkg-dev)")
        try requireStaticEnlog()
        let generator = Subprocess.enlog.deletingLastPathComponent().appendingPathComponent("generate-manual")
        try require(FileManager.default.isExecutableFile(atPath: generator.path),
                    "no \(generator.path): swift build --product generate-manual (scripts/test does)")

        let output = try TemporaryDirectory()
        let packaged = try script("package", ["--binary", Subprocess.enlog.path, "--output", output.url.path, "--fast"])
        XCTAssertEqual(packaged.status, 0, packaged.standardError)
        let lines = packaged.standardOutput.split(separator: "\n").map(String.init)
        let depends = try XCTUnwrap(lines.first { $0.hasPrefix("Depends: ") })
        let recommends = try XCTUnwrap(lines.first { $0.hasPrefix("Recommends: ") })
        // Both kinds of need: a linked library (sqlite) and libraries enlog loads on first use.
        for package in ["libc6", "libsqlite3-0", "libcurl4", "libxml2", "libcairo2"] {
            XCTAssertTrue(depends.contains(" \(package) ") || depends.contains(" \(package),"), "\(package) missing from \(depends)")
        }
        XCTAssertTrue(recommends.contains("libarchive13"), recommends)
        XCTAssertFalse(depends.contains("swift"), depends)
        let deb = try XCTUnwrap(lines.first { $0.hasSuffix(".deb") })
        XCTAssertTrue(lines.contains { $0.hasSuffix(".tar.gz") && FileManager.default.fileExists(atPath: $0) }, packaged.standardOutput)

        let layer = try Layer()
        try layer.place(URL(fileURLWithPath: deb), as: "enlog.deb")
        try layer.place(Fixtures.root.appendingPathComponent("enml/valid/entities.enml"), as: "valid.enml")
        try layer.place(Fixtures.root.appendingPathComponent("enml/invalid/attr-class.enml"), as: "invalid.enml")

        // Bare: no Swift anywhere in the root, and none of the libraries enlog needs yet.
        let bare = try layer.run("! command -v swift && ! ls /opt/swift && ! find / -xdev -name 'libswiftCore*' | grep . && ! dpkg -s libcurl4")
        XCTAssertEqual(bare.status, 0, "the root is not bare: \(bare.standardOutput) \(bare.standardError)")

        // (apt's --no-download refuses a .deb given by its path: "Pathname to install is not absolute".)
        let installed = try layer.run("apt-get install -y -q --no-install-recommends /tmp/enlog.deb", environment: ["DEBIAN_FRONTEND": "noninteractive"], offline: true)
        XCTAssertEqual(installed.status, 0, "apt could not install the package from the root's cache (scripts/bare-root lists what it fetches): \(installed.standardError)")
        let recommended = try layer.run("dpkg -s libarchive13")
        XCTAssertNotEqual(recommended.status, 0, "a recommended package was installed: the run below would not show that Depends is enough")

        let version = try layer.run("enlog --version")
        XCTAssertEqual(version.status, 0, version.standardError)
        XCTAssertEqual(version.standardOutput, try Subprocess.enlog("--version").standardOutput)

        let tiles = try TileTestServer()
        defer { tiles.stop() }
        let logged = try layer.run("enlog log --at 48.8584,2.2945,35 --no-geocode --no-sync",
                                   environment: ["ENLOG_MAP_TILE_URL": tiles.tileURL, "ENLOG_GEOCODING_CONTACT": "package-test@example.org"])
        XCTAssertEqual(logged.status, 0, logged.standardError)
        let shown = try layer.run("enlog queue show 1 --json")
        XCTAssertEqual(shown.status, 0, shown.standardError)
        let note = try XCTUnwrap(try? JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any], shown.standardOutput)
        let resources = note["resources"] as? [[String: Any]] ?? []
        XCTAssertEqual(resources.first?["mime"] as? String, "image/png", "the note has no map: \(logged.standardError)")

        let valid = try layer.run("enlog validate /tmp/valid.enml")
        XCTAssertEqual(valid.status, 0, valid.standardOutput + valid.standardError)
        let invalid = try layer.run("enlog validate /tmp/invalid.enml")
        XCTAssertEqual(invalid.status, 1, invalid.standardOutput + invalid.standardError)

        let exported = try layer.run("enlog export --enex /tmp/diary.enex")
        XCTAssertEqual(exported.status, 0, exported.standardError)
        let enex = try String(contentsOf: layer.upper.appendingPathComponent("tmp/diary.enex"), encoding: .utf8)
        XCTAssertTrue(enex.contains("<en-export"), String(enex.prefix(300)))
        XCTAssertTrue(enex.contains("<mime>image/png</mime>"), "the exported note lost its map")

        // `enlog serve` runs the enlog-serve installed beside it, in the same process.
        let serve = try layer.run("enlog serve --check")
        XCTAssertEqual(serve.status, 0, serve.standardError)
        XCTAssertTrue(serve.standardOutput.contains("configuration valid; enlog serve would listen on 127.0.0.1:8473"), serve.standardOutput)

        let files = try layer.run("dpkg -L enlog")
        for path in ["/usr/bin/enlog", "/usr/bin/enlog-serve", "/usr/share/man/man1/enlog.1.gz", "/usr/share/bash-completion/completions/enlog",
                     "/usr/share/zsh/vendor-completions/_enlog", "/usr/share/fish/vendor_completions.d/enlog.fish",
                     "/usr/lib/systemd/user/enlog-watch.service", "/usr/lib/systemd/user/enlog-sync.service",
                     "/usr/lib/systemd/user/enlog-sync.timer", "/usr/share/enlog/templates/classic/title.mustache",
                     "/usr/share/enlog/templates/default/content.mustache", "/usr/share/doc/enlog/examples/config.toml"] {
            XCTAssertTrue(files.standardOutput.split(separator: "\n").contains(Substring(path)), "\(path) is not in the package")
        }
        let unit = try String(contentsOf: layer.upper.appendingPathComponent("usr/lib/systemd/user/enlog-watch.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("ExecStart=/usr/bin/enlog watch"), unit)
        let manual = try layer.run("zcat /usr/share/man/man1/enlog.1.gz")
        XCTAssertTrue(manual.standardOutput.contains(".Dt ENLOG 1"), String(manual.standardOutput.prefix(300)))
        XCTAssertFalse(manual.standardOutput.contains("\n\n"), "an empty line in the manual page (mdoc wants .Pp)")
    }

    /// The package refuses a binary that needs the toolchain at run time (the test bundle, linked
    /// against Swift's shared runtime, is one): such a package would install and not start.
    func testThePackageRefusesABinaryThatNeedsTheToolchain() throws {
        let bundle = Subprocess.enlog.deletingLastPathComponent().appendingPathComponent("enlogPackageTests.xctest")
        try require(FileManager.default.isExecutableFile(atPath: bundle.path), "no test bundle at \(bundle.path)")
        let output = try TemporaryDirectory()
        let packaged = try script("package", ["--binary", bundle.path, "--output", output.url.path, "--fast"])
        XCTAssertEqual(packaged.status, 1, packaged.standardError)
        XCTAssertTrue(packaged.standardError.contains("libswiftCore.so"), packaged.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.url.path), [])
    }

    /// The sample configuration the package installs (contrib/config.toml) names every setting:
    /// with each `#key = value` line uncommented, enlog reads every setting from the file.
    func testTheSampleConfigurationNamesEverySettingWithValidValues() throws {
        let sample = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("contrib/config.toml"), encoding: .utf8)
        let uncommented = sample.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            line.range(of: #"^#[a-z_]+ = "#, options: .regularExpression) != nil ? String(line.dropFirst()) : String(line)
        }.joined(separator: "\n")
        let home = try TemporaryDirectory()
        let file = home.url.appendingPathComponent("config.toml")
        try uncommented.write(to: file, atomically: true, encoding: .utf8)
        let shown = try Subprocess.run(Subprocess.enlog, ["config", "show", "--config", file.path, "--json"],
                                       environment: ["HOME": home.url.path, "PATH": "/usr/bin:/bin", "TZ": "UTC"])
        XCTAssertEqual(shown.status, 0, shown.standardError)
        let settings = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: [String: Any]])
        XCTAssertGreaterThan(settings.count, 30)
        for (name, setting) in settings.sorted(by: { $0.key < $1.key }) {
            XCTAssertEqual(setting["source"] as? String, "file", "\(name) is not in contrib/config.toml")
        }
    }
}
