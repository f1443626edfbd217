import Foundation
import Testing
@testable import Compose

/// Our DTD verdict must agree with xmllint's, an independent checker built on the same DTD and
/// entity files (through ../shared/evernote/dtd/catalog.xml), on every fixture.
@Suite("ENML cross-check against xmllint")
struct ENMLCrossCheckTests {
    static let fixtures = Fixtures.enml("valid") + Fixtures.enml("invalid")

    @Test(arguments: fixtures)
    func verdictAgreesWithXmllint(_ fixture: URL) throws {
        let xmllint = try #require(Subprocess.which("xmllint"), "xmllint is missing: apt-get install libxml2-utils")
        let catalog = Fixtures.sharedDTDCatalog.path
        try #require(FileManager.default.fileExists(atPath: catalog), "missing \(catalog)")
        let result = try Subprocess.run(xmllint, ["--noout", "--nonet", "--valid", fixture.path],
                                        environment: ["XML_CATALOG_FILES": catalog, "PATH": "/usr/bin:/bin"])
        // xmllint exits 0 even when the DTD failed to load (a warning only), so its output is read too.
        let xmllintValid = result.status == 0 && !result.standardError.contains("error")
        let ours = ENMLValidator(rules: .dtdOnly).validate(try Data(contentsOf: fixture))
        #expect(ours.isValid == xmllintValid,
                "\(fixture.lastPathComponent): enlog says \(ours.isValid ? "valid" : "invalid: \(ours.errors)"), xmllint says \(result.standardError)")
    }

    @Test func corpusHoldsBothVerdicts() {
        #expect(Self.fixtures.count >= 40)
    }
}
