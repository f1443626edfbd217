import CLibXML2
import Foundation
import Testing
@testable import Compose

/// The pooled DTD lists the children of mixed content most common first: the same names, so the
/// same verdicts, only found sooner.
@Suite("ENML DTD pool")
struct ENMLDTDPoolTests {
    /// The names `%AnyContent;` lists, read from the DTD's text.
    private static let anyContent: [String] = {
        let text = String(decoding: PackageResources.enml2_dtd, as: UTF8.self)
        guard let start = text.range(of: "<!ENTITY % AnyContent"), let end = text.range(of: ")*", range: start.upperBound..<text.endIndex) else { return [] }
        return text[start.upperBound..<end.lowerBound].split(separator: "|").map { $0.trimmingCharacters(in: .whitespacesAndNewlines.union(["\"", "("])) }
            .filter { $0 != "#PCDATA" }
    }()

    @Test func mixedContentListsTheSameNamesCommonestFirst() throws {
        let dtd = try #require(ENMLDTD.pool.checkOut())
        defer { ENMLDTD.pool.checkIn(dtd) }
        let declaration = try #require("div".withCString { xmlGetDtdElementDesc(dtd, UnsafePointer(OpaquePointer($0))) })
        var names: [String] = []
        var link = declaration.pointee.content
        while let or = link, or.pointee.type == XML_ELEMENT_CONTENT_OR {
            if let first = or.pointee.c1, first.pointee.type == XML_ELEMENT_CONTENT_ELEMENT { names.append(String(cString: first.pointee.name)) }
            link = or.pointee.c2
        }
        if let last = link { names.append(String(cString: last.pointee.name)) }
        #expect(Self.anyContent.count == 63)
        #expect(names.sorted() == Self.anyContent.sorted())
        #expect(Array(names.prefix(DTDPool.commonChildren.count)) == DTDPool.commonChildren)
    }

    @Test func everyListedChildIsStillAcceptedAndOthersAreNot() {
        let validator = ENMLValidator()
        func note(_ child: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
            <en-note><div><\(child)/></div></en-note>
            """
        }
        for name in Self.anyContent {
            let messages = validator.validate(note(name)).errors.map(\.message)
            #expect(!messages.contains { $0.contains("list of possible children") }, "\(name): \(messages)")
        }
        #expect(validator.validate(note("blink")).errors.map(\.message).contains("Element blink is not declared in div list of possible children"))
    }
}
