import CLazyLibraries
import Foundation
import XCTest

/// libcurl, libarchive, libmagic, libexif, yajl, cairo, libpng, FreeType, libxml2 and libmosquitto load on
/// their first call (CLazyLibraries), so that a command that never sends, unpacks, reads a photo,
/// draws or reads XML does not pay for loading them.
final class LazyLibrariesTests: XCTestCase {
    var libraries: [String] { (0..<enlog_lazy_library_count()).map { String(cString: enlog_lazy_library_name($0)) } }

    /// Every function enlog calls is found under the soname it is built against: a Debian update
    /// that renames one fails here, not in a user's first sync.
    func testEveryLibraryHasEveryFunctionEnlogCalls() {
        XCTAssertEqual(libraries, ["libcurl.so.4", "libarchive.so.13", "libmagic.so.1", "libexif.so.12", "libyajl.so.2",
                                   "libcairo.so.2", "libpng16.so.16", "libfreetype.so.6", "libxml2.so.2", "libmosquitto.so.1"])
        for index in 0..<enlog_lazy_library_count() {
            var reason = [CChar](repeating: 0, count: 512)
            XCTAssertEqual(enlog_lazy_library_check(index, &reason, reason.count), 0, String(cString: reason))
            XCTAssertEqual(enlog_lazy_library_is_loaded(index), 1)
        }
    }

    /// The dynamic loader's own account (LD_DEBUG=files) of what a run loaded.
    func loadedLibraries(_ arguments: [String], home: TemporaryDirectory, environment extra: [String: String] = [:]) throws -> (ProcessResult, [String]) {
        var environment = ["HOME": home.url.path, "XDG_CONFIG_HOME": home.url.path, "ENLOG_MAP_STYLE": "none",
                           "ENLOG_DB": home.url.appendingPathComponent("outbox.sqlite").path, "TZ": "UTC", "LD_DEBUG": "files"]
        environment.merge(extra) { _, new in new }
        let result = try Subprocess.run(Subprocess.enlog, arguments, environment: environment)
        return (result, libraries.filter { result.standardError.contains("file=\($0) ") })
    }

    /// A run that sends nothing loads none of them but libxml2, and that only to validate a new
    /// note's ENML.
    func testARunThatSendsNothingLoadsOnlyWhatItUses() throws {
        let home = try TemporaryDirectory()
        let runs: [([String], [String])] = [(["--version"], []), (["log", "--at", "48.8584,2.2945", "--no-geocode", "--no-sync"], ["libxml2.so.2"]),
                                            (["queue", "list"], []), (["history", "--json"], [])]
        for (arguments, expected) in runs {
            let (result, loaded) = try loadedLibraries(arguments, home: home)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.standardErrorLines.filter { !$0.contains("file=") }.prefix(3))")
            XCTAssertEqual(loaded, expected, "\(arguments) loaded \(loaded)")
        }
    }

    /// The opposite, so that the check above can fail: a URL from the configuration is parsed
    /// by libcurl when the configuration is read.
    func testAConfiguredURLLoadsLibcurl() throws {
        let (result, loaded) = try loadedLibraries(["log", "--at", "48.8584,2.2945", "--no-geocode", "--no-sync"], home: try TemporaryDirectory(),
                                                   environment: ["ENLOG_MAP_TILE_URL": "http://127.0.0.1:9/{z}/{x}/{y}.png"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(loaded, ["libcurl.so.4", "libxml2.so.2"])
    }

    /// A library missing at run time is one line naming it and the package, exit 72, not a
    /// crash in the middle of a call. The test hides libcurl from one run by mounting an empty
    /// file over it in a mount namespace of its own (root, as CI is; skipped otherwise).
    func testAMissingLibraryIsOneLineAndExit72() throws {
        guard getuid() == 0, let unshare = Subprocess.which("unshare") else { throw XCTSkip("needs root and unshare(1)") }
        let libcurl = try XCTUnwrap(["/lib/x86_64-linux-gnu/libcurl.so.4", "/usr/lib/x86_64-linux-gnu/libcurl.so.4", "/lib/aarch64-linux-gnu/libcurl.so.4"]
            .first { FileManager.default.fileExists(atPath: $0) })
        let home = try TemporaryDirectory()
        let script = "mount --bind /dev/null \"$0\" && exec \"$@\""
        let result = try Subprocess.run(unshare, ["--mount", "--propagation", "private", "sh", "-c", script, libcurl,
                                                  Subprocess.enlog.path, "log", "--at", "48.8584,2.2945", "--no-geocode", "--no-sync"],
                                        environment: ["HOME": home.url.path, "XDG_CONFIG_HOME": home.url.path, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                                      "ENLOG_DB": home.url.appendingPathComponent("outbox.sqlite").path, "ENLOG_MAP_STYLE": "none",
                                                      "ENLOG_MAP_TILE_URL": "http://127.0.0.1:9/{z}/{x}/{y}.png"])
        XCTAssertEqual(result.status, 72, result.standardError)
        XCTAssertEqual(result.standardErrorLines.count, 1, result.standardError)
        XCTAssertTrue(result.standardError.hasPrefix("enlog: error: cannot load libcurl.so.4 (install Debian's libcurl4): "), result.standardError)
    }
}
