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
        return ENMLDTD.systemID.withCString { xmlParseDTD(nil, UnsafePointer<xmlChar>(OpaquePointer($0))) }
    }

    func checkIn(_ dtd: xmlDtdPtr) {
        lock.withLock { idle.append(dtd) }
    }
}
