import Foundation
import Testing

/// `import` and `log --nmea` read NMEA through one reader, so they agree on every real capture in
/// `../shared/nmea-real/` (most begin with `# comment` lines, some mid-sentence): a log `log --nmea`
/// takes a fix from imports, and one it refuses is refused by `import` with the same reason.
@Suite("import and log --nmea agree on real captures")
struct ImportRealCaptureTests {
    static let captures: [String] = {
        let directory = NMEARealCaptureTests.captures.path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".log") }.sorted().map { directory + "/" + $0 }
    }()

    @Test func thereAreCaptures() {
        #expect(Self.captures.count >= 50, "\(NMEARealCaptureTests.captures.path)")
    }

    @Test(arguments: captures)
    func importTakesWhatLogTakes(_ capture: String) throws {
        let logged = try EnlogHome().run("log", "--nmea", capture, "--no-sync", "--no-geocode")
        let imported = try EnlogHome().run("import", capture)
        let name = (capture as NSString).lastPathComponent
        if logged.status == 0 {
            #expect(imported.status == 0, "\(name): log took a fix, import said: \(imported.standardError)")
            #expect(imported.standardOutput.hasPrefix("read ") && imported.standardOutput.contains(" from NMEA: "),
                    "\(name): \(imported.standardOutput)")
            #expect(!imported.standardOutput.hasPrefix("read 0 "), "\(name): \(imported.standardOutput)")
        } else {
            #expect(imported.status == logged.status, "\(name): log: \(logged.standardError) import: \(imported.standardError)")
            #expect(imported.standardErrorLines == logged.standardErrorLines, "\(name)")
        }
    }
}
