import Foundation
import Testing
@testable import Compose

/// Real notes Evernote's clients wrote and the service stored (`../shared/enml-wild/`, read in
/// place, never copied): what the ENML DTD accepts, `enlog validate` must accept; what it refuses,
/// enlog must refuse for the reason the corpus's remark gives.
@Suite("ENML written by Evernote itself", .enabled(if: WildNote.corpusIsPresent, "../shared/enml-wild/ is absent"))
struct ENMLWildCorpusTests {
    @Test(arguments: WildNote.all)
    func verdictMatchesTheDTDAndTheRemark(_ note: WildNote) throws {
        let xmllint = try #require(Subprocess.which("xmllint"), "xmllint is missing: apt-get install libxml2-utils")
        let catalog = Fixtures.sharedDTDCatalog.path
        try #require(FileManager.default.fileExists(atPath: catalog), "missing \(catalog)")
        let dtd = try Subprocess.run(xmllint, ["--noout", "--nonet", "--valid", note.url.path],
                                     environment: ["XML_CATALOG_FILES": catalog, "PATH": "/usr/bin:/bin"])
        // xmllint exits 0 even when the DTD failed to load (a warning only), so its output is read too.
        let dtdAccepts = dtd.status == 0 && !dtd.standardError.contains("error")
        let ours = ENMLValidator().validate(try Data(contentsOf: note.url))
        if dtdAccepts {
            #expect(ours.isValid, "\(note): the DTD accepts it, enlog says \(ours.errors)")
            return
        }
        let expected = try #require(note.expectedRefusal(xmllintOutput: dtd.standardError),
                                    "\(note): the DTD refuses it (\(dtd.standardError.prefix(200))) but the corpus gives no reason")
        #expect(ours.errors.map(\.code).contains(expected), "\(note): expected \(expected.rawValue), enlog says \(ours.errors)")
    }

    @Test func corpusHoldsBothKinds() {
        #expect(WildNote.all.count >= 170)
        #expect(WildNote.all.contains { $0.remark.isEmpty } && WildNote.all.contains { !$0.remark.isEmpty })
    }
}

/// One note of the corpus and the remark `SOURCES.tsv` keeps beside it.
struct WildNote: CustomTestStringConvertible, CustomStringConvertible, Sendable {
    static let directory = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/enml-wild")
    static var corpusIsPresent: Bool { FileManager.default.fileExists(atPath: directory.appendingPathComponent("SOURCES.tsv").path) }

    static let all: [WildNote] = {
        guard let table = try? String(contentsOf: directory.appendingPathComponent("SOURCES.tsv"), encoding: .utf8) else { return [] }
        let rows = table.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        guard let header = rows.first, let file = header.firstIndex(of: "file"), let remark = header.firstIndex(of: "remark") else { return [] }
        return rows.dropFirst().filter { $0.count > max(file, remark) }
            .map { WildNote(url: directory.appendingPathComponent($0[file]), remark: $0[remark]) }
    }()

    var url: URL
    var remark: String

    var description: String { url.lastPathComponent + (remark.isEmpty ? "" : " (\(remark))") }
    var testDescription: String { url.lastPathComponent }

    /// The diagnostic a refusal must carry: the one the remark names, else the class of xmllint's
    /// complaint. Nil when the remark gives no reason to refuse an Evernote-written note.
    func expectedRefusal(xmllintOutput: String) -> ENMLDiagnostic.Code? {
        guard !remark.isEmpty else { return nil }
        let text = remark.lowercased()
        if text.contains("doctype") { return .wrongDoctype }
        let broken = ["pretty-printed", "stray", "unclosed", "corrupt", "not well-formed", "no en-note"]
        if broken.contains(where: text.contains) { return .xmlSyntax }
        if text.contains("provenance uncertain") {
            return xmllintOutput.contains("validity error") ? .dtdValidity : .xmlSyntax
        }
        return nil
    }
}
