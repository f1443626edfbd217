import Foundation
import XCTest
import GRDB
@testable import EvernoteAPI

/// Text and files that could break an ENEX file: `]]>` and markup in titles and words, control
/// characters, files of no bytes or over Evernote's limits, an outbox row that XML cannot carry,
/// a resource whose bytes changed. Each round-trips, or is refused with one line.
final class ENEXHostileContentTests: XCTestCase {
    var home: EnlogHome!

    override func setUpWithError() throws {
        home = try EnlogHome()
        home.extraEnvironment = ["ENLOG_GEOCODING_ENABLED": "false"]
        // A template whose title and ENML hold `]]>`: in ENML it may stand in an attribute value,
        // which the content's CDATA section cannot carry as it is.
        let templates = home.directory.path("hostile")
        _ = try home.directory.file("hostile/title.mustache", contents: "{{% CONTENT_TYPE: TEXT}}Tower ]]> & <b> \"q\" {{coordinates}}")
        _ = try home.directory.file("hostile/content.mustache", contents: """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note><div title="x]]>y">a]]&gt;b &lt;![CDATA[ c</div>{{#message}}<div>{{#lines}}{{text}}{{/lines}}</div>{{/message}}</en-note>
            """)
        home.extraEnvironment["ENLOG_NOTE_TEMPLATE"] = templates
    }

    func testHostileTextRoundTripsAndWhatCannotIsRefusedWithOneLine() throws {
        let logged = try home.run("log", "--at", "1,2", "-m", "words ]]> with \u{1}\u{7} controls & <tags>", "--no-sync")
        XCTAssertEqual(logged.status, 0, logged.standardError)
        XCTAssertEqual(try home.run("log", "--at", "3,4", "-m", "second", "--no-sync").status, 0)

        // Files Evernote cannot take are refused where they come in, with one line.
        let empty = try home.directory.file("empty.bin", contents: "")
        let huge = home.directory.path("huge.bin")
        XCTAssertTrue(FileManager.default.createFile(atPath: huge, contents: nil))
        XCTAssertEqual(truncate(huge, off_t(ResourceLimits.resourceSizeMax + 1)), 0)
        for file in [empty.path, huge] {
            let refused = try home.run("log", "--at", "5,6", "--attach", file, "--no-sync")
            XCTAssertEqual(refused.status, 2, refused.standardError)
            XCTAssertEqual(refused.standardErrorLines.count, 1, refused.standardError)
        }
        XCTAssertEqual(try home.notesById().count, 2)

        let (file, export) = try home.export("hostile.enex")
        XCTAssertEqual(export.status, 0, export.standardError)
        try ENEXReaders.validateAgainstDTD(file)
        let read = try ENEXReaders.titlesAndContents(file)
        XCTAssertEqual(read.count, 2)
        for ((title, content), id) in zip(read, [1, 2]) {
            XCTAssertEqual(content, try home.storedContent(id), "note \(id)'s ENML, byte for byte")
            XCTAssertEqual(title, try XCTUnwrap(home.notesById()[id]?["title"] as? String))
        }
        XCTAssertTrue(read[0].title.hasPrefix("Tower ]]> & <b> \"q\" "), read[0].title)
        XCTAssertTrue(read[0].content.contains("title=\"x]]>y\""), read[0].content)
        XCTAssertTrue(read[0].content.contains("<div>words ]]&gt; with  controls &amp; &lt;tags&gt;</div>"), read[0].content)
        try ENEXReaders.validateENML(read.map(\.content), in: home.directory)
        let enex2notion = try ENEXReaders.read(file)
        XCTAssertEqual(enex2notion["parser"] as? String, "enex2notion.enex_parser.iter_notes")
        XCTAssertEqual((enex2notion["notes"] as? [[String: Any]])?.first?["title"] as? String, read[0].title)
    }

    /// A row no `log` writes (another tool, an old version, a disk error): a title XML cannot
    /// carry, ENML that no longer validates, a resource whose bytes no longer match their hash.
    /// Each such note is left out and stays as it was; the others are written and marked; one
    /// line says which were left out and why (exit 1).
    func testNotesXMLCannotCarryAreLeftOutAndStayQueued() throws {
        for latitude in 1...4 { XCTAssertEqual(try home.run("log", "--at", "\(latitude),2", "--no-sync").status, 0) }
        let attachment = try home.directory.file("words.txt", contents: "some words")
        XCTAssertEqual(try home.run("log", "--at", "5,2", "--attach", attachment.path, "--no-sync").status, 0)
        let database = try DatabaseQueue(path: home.database)
        try database.write { db in
            try db.execute(sql: "UPDATE note SET title = 'bell' || char(7) || 'title' WHERE id = 2")
            try db.execute(sql: "UPDATE note SET content = '<en-note><script/></en-note>' WHERE id = 3")
            try db.execute(sql: "UPDATE resource SET body = X'00' WHERE noteId = 5")
        }
        let (file, export) = try home.export("some.enex", "--new")
        XCTAssertEqual(export.status, 1, export.standardError)
        XCTAssertEqual(export.standardErrorLines.count, 1, export.standardError)
        XCTAssertTrue(export.standardError.hasPrefix("enlog: error: 3 notes were left out of the export (2, 3, 5); note 2: its title holds U+0007"),
                      export.standardError)
        XCTAssertTrue(export.standardOutput.hasPrefix("exported 2 notes"), export.standardOutput)
        try ENEXReaders.validateAgainstDTD(file)
        XCTAssertEqual(try ENEXReaders.titlesAndContents(file).count, 2)
        let states = try home.notesById().mapValues { $0["state"] as? String }
        XCTAssertEqual(states, [1: "exported", 2: "pending", 3: "pending", 4: "exported", 5: "pending"])

        let verbose = try home.run("export", "--enex", home.directory.path("again.enex"), "--new", "-v")
        XCTAssertEqual(verbose.status, 1)
        for reason in ["note 2 left out: its title holds U+0007", "note 3 left out: its ENML is invalid",
                       "note 5 left out: the bytes of its resource words.txt no longer match their MD5"] {
            XCTAssertTrue(verbose.standardError.contains(reason), verbose.standardError)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: home.directory.path("again.enex")), "no note left to write: no file")
    }
}
