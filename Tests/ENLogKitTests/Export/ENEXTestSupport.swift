import Foundation
import XCTest
@testable import Compose

/// The readers of ENEX that enlog did not write: xmllint with Evernote's 4.0 DTD, and the
/// independent reader built on PyPI enex2notion (`../shared/evernote/enex/read_enex.py`), plus
/// Python's own XML parser for the notes' ENML.
enum ENEXReaders {
    static let shared = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/evernote/enex")
    static var dtd: String { shared.appendingPathComponent("dtd/evernote-export4.dtd").path }

    /// `xmllint --nonet --noout --dtdvalid evernote-export4.dtd FILE`, offline through the DTD catalog.
    static func validateAgainstDTD(_ file: String, dtd: String = dtd, file line: StaticString = #filePath, at number: UInt = #line) throws {
        let xmllint = try XCTUnwrap(Subprocess.which("xmllint"), "xmllint is missing: apt-get install libxml2-utils")
        let result = try Subprocess.run(xmllint, ["--nonet", "--noout", "--dtdvalid", dtd, file],
                                        environment: ["XML_CATALOG_FILES": shared.appendingPathComponent("dtd/catalog.xml").path,
                                                      "PATH": "/usr/bin:/bin"])
        XCTAssertEqual(result.status, 0, "xmllint: \(result.standardError)", file: line, line: number)
        XCTAssertFalse(result.standardError.contains("error"), result.standardError, file: line, line: number)
    }

    /// What enex2notion reads from the file (read_enex.py's JSON), with its own DTD check.
    static func read(_ file: String) throws -> [String: Any] {
        let python = try requirePython()
        let result = try Subprocess.run(URL(fileURLWithPath: python),
                                        [shared.appendingPathComponent("read_enex.py").path, file, "--dtd", dtd])
        guard result.status == 0 else { throw Failure(description: "read_enex.py: \(result.standardError)") }
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    /// Each note's title and ENML as Python's standard XML parser reads them (CDATA sections joined).
    static func titlesAndContents(_ file: String) throws -> [(title: String, content: String)] {
        let python = try requirePython()
        let script = """
            import json, sys
            import xml.etree.ElementTree as ET
            root = ET.parse(sys.argv[1]).getroot()
            json.dump([[n.findtext("title"), n.findtext("content")] for n in root.iter("note")], sys.stdout)
            """
        let result = try Subprocess.run(URL(fileURLWithPath: python), ["-c", script, file])
        guard result.status == 0 else { throw Failure(description: "ElementTree: \(result.standardError)") }
        let pairs = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String]])
        return pairs.map { ($0[0], $0[1]) }
    }

    /// Every note's ENML passes enlog's validator and xmllint against the ENML DTD, as uploads do.
    static func validateENML(_ contents: [String], in directory: TemporaryDirectory,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let xmllint = try XCTUnwrap(Subprocess.which("xmllint"))
        for (index, content) in contents.enumerated() {
            let report = ENMLValidator().validate(content)
            XCTAssertTrue(report.isValid, "note \(index): \(report.errors)", file: file, line: line)
            let path = try directory.file("note-\(index).enml", contents: content).path
            let result = try Subprocess.run(xmllint, ["--noout", "--nonet", "--valid", path],
                                            environment: ["XML_CATALOG_FILES": Fixtures.sharedDTDCatalog.path, "PATH": "/usr/bin:/bin"])
            XCTAssertEqual(result.status, 0, "note \(index): \(result.standardError)", file: file, line: line)
            XCTAssertFalse(result.standardError.contains("error"), result.standardError, file: file, line: line)
        }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }
}

extension EnlogHome {
    /// `enlog export --enex FILE ARGS…` into this home's directory, and the file's path.
    func export(_ name: String, _ arguments: String...) throws -> (path: String, result: ProcessResult) {
        let path = directory.path(name)
        return (path, try run(["export", "--enex", path] + arguments))
    }

    /// A note's ENML as the outbox holds it (`queue show ID --json`).
    func storedContent(_ id: Int) throws -> String {
        let show = try run("queue", "show", "\(id)", "--json")
        let note = try JSONSerialization.jsonObject(with: Data(show.standardOutput.utf8)) as? [String: Any]
        return note?["content"] as? String ?? ""
    }

    /// The outbox's notes by id, as `queue list --json` gives them.
    func notesById() throws -> [Int: [String: Any]] {
        let result = try run("queue", "list", "--json")
        let notes = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: notes.map { ($0["id"] as! Int, $0) })
    }
}
