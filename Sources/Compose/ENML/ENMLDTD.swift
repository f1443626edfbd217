import CLibXML2
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// The ENML 2 DTD and the three XHTML entity sets it includes, compiled into the binary and handed
/// to libxml2 from memory, so validation never reads a file or touches the network.
enum ENMLDTD {
    static let systemID = "http://xml.evernote.com/pub/enml2.dtd"
    static let rootElement = "en-note"

    /// URL → bytes for every external entity an ENML document may load. The pointers live as long
    /// as the process: libxml2 reads them without copying. `nonisolated(unsafe)`: written once by
    /// the static initialiser, only ever read afterwards.
    nonisolated(unsafe) private static let resources: [String: UnsafeBufferPointer<UInt8>] = {
        func pinned(_ bytes: [UInt8]) -> UnsafeBufferPointer<UInt8> {
            let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
            _ = storage.initialize(from: bytes)
            return UnsafeBufferPointer(storage)
        }
        let w3c = "http://www.w3.org/TR/xhtml1/DTD/"
        return [
            systemID: pinned(PackageResources.enml2_dtd),
            w3c + "xhtml-lat1.ent": pinned(PackageResources.xhtml_lat1_ent),
            w3c + "xhtml-special.ent": pinned(PackageResources.xhtml_special_ent),
            w3c + "xhtml-symbol.ent": pinned(PackageResources.xhtml_symbol_ent),
        ]
    }()

    /// Installs the loader once per process; libxml2's loader hook is process-wide.
    static let installed: Void = {
        xmlInitParser()
        xmlSetExternalEntityLoader(loadEmbeddedEntity)
    }()

    /// Parsed DTDs ready to attach to documents: parsed once per concurrent worker, never per
    /// document. Not shared between threads at once, because libxml2 writes into a DTD while
    /// validating against it (compiled content models, parsed entity content).
    static let pool = DTDPool()

    static func resource(for url: String) -> UnsafeBufferPointer<UInt8>? {
        resources[url] ?? resources[url.replacingOccurrences(of: "https://", with: "http://")]
    }
}

/// Replaces libxml2's loader, and with it XML_PARSE_NONET's check: anything that is not one of
/// the embedded files is refused, local paths included, so a note cannot make us read a file.
private let loadEmbeddedEntity: xmlExternalEntityLoader = { url, publicID, context in
    let requested = url.map { String(cString: $0) } ?? publicID.map { String(cString: $0) } ?? "(unnamed)"
    guard let resource = ENMLDTD.resource(for: requested) else {
        if let context, let collector = ENMLValidationRun.current(of: context) {
            collector.refusedEntity(requested, context: context)
        }
        return nil
    }
    guard let buffer = resource.baseAddress.flatMap({ base in
        base.withMemoryRebound(to: CChar.self, capacity: resource.count) {
            xmlParserInputBufferCreateMem($0, Int32(resource.count), XML_CHAR_ENCODING_NONE)
        }
    }) else { return nil }
    guard let input = xmlNewIOInputStream(context, buffer, XML_CHAR_ENCODING_NONE) else {
        xmlFreeParserInputBuffer(buffer)
        return nil
    }
    input.pointee.filename = UnsafePointer(strdup(requested))
    return input
}

/// Hands out parsed copies of the ENML DTD, one per validation in flight. They live as long as the
/// process: a handful at most (one per core), and each is reused by every later document.
/// `@unchecked`: it hands out libxml2 DTD pointers (not Sendable), each owned by one validation at a time.
final class DTDPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [xmlDtdPtr] = []

    /// A parsed DTD for the caller's exclusive use until `checkIn`; nil if it cannot be parsed.
    func checkOut() -> xmlDtdPtr? {
        if let dtd = lock.withLock({ idle.popLast() }) { return dtd }
        _ = ENMLDTD.installed
        let dtd = ENMLDTD.systemID.withCString { xmlParseDTD(nil, UnsafePointer<xmlChar>(OpaquePointer($0))) }
        if let dtd { Self.listCommonChildrenFirst(in: dtd) }
        return dtd
    }

    func checkIn(_ dtd: xmlDtdPtr) {
        lock.withLock { idle.append(dtd) }
    }

    /// The elements notes hold most, most first: what Evernote's clients write most (counted over
    /// ../shared/enml-wild), then the parts of tables and lists, which come in rows.
    static let commonChildren = ["div", "span", "br", "a", "p", "li", "td", "tr", "en-media", "font", "b", "i", "u",
                                 "strong", "em", "en-todo", "img", "ul", "ol", "table", "tbody", "thead", "th", "col",
                                 "colgroup", "h1", "h2", "h3", "h4", "hr", "cite", "blockquote", "pre", "code", "sub", "sup"]

    /// libxml2 checks each child of an element with mixed content, `(#PCDATA | a | abbr | …)*`, by
    /// comparing its name with each name the DTD lists, in the DTD's order, until one matches. The
    /// ENML DTD gives every element that content, listing 63 names alphabetically: a `<tr>` cost
    /// 59 comparisons, a `<span>` 48. The order means nothing in a mixed content model (any of
    /// them, any number of times) and no message shows it, so each parsed DTD lists them in the
    /// order of `commonChildren`, then the rest as they were.
    static func listCommonChildrenFirst(in dtd: xmlDtdPtr) {
        var node = dtd.pointee.children
        while let current = node {
            node = current.pointee.next
            guard current.pointee.type == XML_ELEMENT_DECL else { continue }
            let declaration = UnsafeMutableRawPointer(current).assumingMemoryBound(to: xmlElement.self)
            guard declaration.pointee.etype == XML_ELEMENT_TYPE_MIXED else { continue }
            // (#PCDATA | a | b | c)* is OR(#PCDATA, OR(a, OR(b, c))): each name is the first branch
            // of an OR but the last, which is the second branch of the last OR.
            var slots: [xmlElementContentPtr] = []
            var link = declaration.pointee.content
            while let or = link, or.pointee.type == XML_ELEMENT_CONTENT_OR {
                if let first = or.pointee.c1, first.pointee.type == XML_ELEMENT_CONTENT_ELEMENT { slots.append(first) }
                link = or.pointee.c2
            }
            if let last = link, last.pointee.type == XML_ELEMENT_CONTENT_ELEMENT { slots.append(last) }
            let names = slots.map { (name: $0.pointee.name, prefix: $0.pointee.prefix) }
            let ranks = names.indices.map { index in
                names[index].name.flatMap { commonChildren.firstIndex(of: String(cString: $0)) } ?? commonChildren.count + index
            }
            for (slot, index) in zip(slots, names.indices.sorted { ranks[$0] < ranks[$1] }) {
                slot.pointee.name = names[index].name
                slot.pointee.prefix = names[index].prefix
            }
        }
    }
}
