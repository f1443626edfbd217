import CLibXML2
import Foundation
import Support
import Configuration
import Network

/// libxml2's SAX2 push parser over chunks of any size: element starts (with attributes) and ends
/// (with the element's own text), no tree, so memory stays bounded however long the document.
///
/// Defended like the ENML validator: no network (`XML_PARSE_NONET`), entities never substituted,
/// a DOCTYPE stops the parse (no history format has one; refusing it keeps entity expansion and
/// external entities out), libxml2's default limits on depth and text size stay on. White space
/// before the first `<` (a blank line before `<?xml`, written by real exporters) is skipped
/// rather than refused, and lines are still counted from the file's first.
package final class XMLStream {
    /// The local name of the first element of a document whose first bytes are `prefix`,
    /// after white space, the XML declaration, comments and processing instructions; nil when
    /// `prefix` is not the start of XML. How the XML readers recognize their files.
    package static func rootName(_ prefix: ArraySlice<UInt8>) -> String? {
        var index = prefix.startIndex
        func skipSpace() { while index < prefix.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(prefix[index]) { index += 1 } }
        func skip(past terminator: [UInt8]) -> Bool {
            guard let found = prefix[index...].firstRange(of: terminator) else { return false }
            index = found.upperBound
            return true
        }
        while true {
            skipSpace()
            guard index < prefix.endIndex, prefix[index] == UInt8(ascii: "<") else { return nil }
            let rest = prefix[index...]
            if rest.starts(with: Array("<?".utf8)) { guard skip(past: Array("?>".utf8)) else { return nil }; continue }
            if rest.starts(with: Array("<!--".utf8)) { guard skip(past: Array("-->".utf8)) else { return nil }; continue }
            if rest.starts(with: Array("<!".utf8)) {
                // A DOCTYPE's internal subset holds `>` of its own: skip to its `]` first.
                let end = rest.firstIndex(of: UInt8(ascii: ">")) ?? rest.endIndex
                if rest[..<end].contains(UInt8(ascii: "[")) { guard skip(past: Array("]".utf8)) else { return nil } }
                guard skip(past: Array(">".utf8)) else { return nil }
                continue
            }
            let name = rest.dropFirst().prefix { !([0x20, 0x09, 0x0A, 0x0D, 0x2F, 0x3E] as [UInt8]).contains($0) }
            guard !name.isEmpty else { return nil }
            let local = name.split(separator: UInt8(ascii: ":")).last ?? name
            return String(decoding: local, as: UTF8.self)
        }
    }

    package struct Element: Equatable {
        package var name: String
        package var namespace: String?
        package var line: Int
        package var attributes: [String: String]
    }

    package enum Event: Equatable {
        case start(Element)
        /// The element's name and namespace, and the text directly inside it (trimmed).
        case end(name: String, namespace: String?, text: String)
    }

    /// What one element's text may hold: longer text is no value of any history format.
    static let maximumText = 1 << 20
    /// libxml2's own limit without XML_PARSE_HUGE, which its push parser does not apply: held
    /// here, so that nesting costs no more memory in a stream than in a whole document.
    static let maximumDepth = 256

    private var context: xmlParserCtxtPtr?
    fileprivate var events: [Event] = []
    fileprivate var text: [UInt8] = []
    fileprivate var doctypeLine: Int?
    /// Elements open now, and the line where one opened deeper than `maximumDepth`.
    fileprivate var depth = 0
    fileprivate var tooDeepLine: Int?
    private var skippingLeadingSpace = true
    private var skippedLines = 0
    private var bytesFed = 0

    package init() {}

    deinit {
        if let context { xmlFreeParserCtxt(context) }
    }

    /// The events `chunk` completed, in document order.
    package func feed(_ chunk: ArraySlice<UInt8>) throws(HistoryFileError) -> [Event] {
        var chunk = chunk
        if skippingLeadingSpace {
            while let first = chunk.first, [0x20, 0x09, 0x0A, 0x0D].contains(first) {
                if first == 0x0A { skippedLines += 1 }
                chunk = chunk.dropFirst()
            }
            guard !chunk.isEmpty else { return [] }
            skippingLeadingSpace = false
        }
        try parse(chunk, terminate: false)
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// The last events; throws when the document is not complete (a truncated file) or was empty.
    package func finish() throws(HistoryFileError) -> [Event] {
        guard context != nil else { throw HistoryFileError("the file holds only white space") }
        try parse([], terminate: true)
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// The line libxml2 is reading, counted from the file's first.
    package var line: Int {
        (context?.pointee.input.map { Int($0.pointee.line) } ?? 1) + skippedLines
    }

    private func parse(_ chunk: ArraySlice<UInt8>, terminate: Bool) throws(HistoryFileError) {
        let context = try startedContext()
        var offset = chunk.startIndex
        // xmlParseChunk takes an Int32 size; chunks are small, but never trust that.
        repeat {
            let end = min(chunk.endIndex, offset + (1 << 30))
            let last = terminate && end == chunk.endIndex
            let status = chunk[offset..<end].withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                    xmlParseChunk(context, buffer.count == 0 ? nil : $0, Int32(buffer.count), last ? 1 : 0)
                }
            }
            bytesFed += end - offset
            if let doctypeLine { throw HistoryFileError("a DOCTYPE is not allowed (entities are refused)", at: .line(doctypeLine + skippedLines)) }
            if let tooDeepLine {
                throw HistoryFileError("not well-formed XML: elements nested more than \(Self.maximumDepth) deep (libxml2's limit)", at: .line(tooDeepLine))
            }
            if status != 0 || context.pointee.wellFormed == 0 { throw failure(context) }
            offset = end
        } while offset < chunk.endIndex
    }

    private func failure(_ context: xmlParserCtxtPtr) -> HistoryFileError {
        guard let error = xmlCtxtGetLastError(UnsafeMutableRawPointer(context)) else {
            return HistoryFileError("not well-formed XML", at: .line(line))
        }
        let message = LibXMLMessage.text(of: error.pointee)
        let line = error.pointee.line > 0 ? Int(error.pointee.line) + skippedLines : self.line
        let truncated = error.pointee.code == XML_ERR_DOCUMENT_END.rawValue || message.contains("Premature end")
        return HistoryFileError("not well-formed XML\(truncated ? " (cut short?)" : ""): \(HTTPText.oneLine(message))", at: .line(line))
    }

    private static let options = Int32(bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue | XML_PARSE_BIG_LINES.rawValue)

    private func startedContext() throws(HistoryFileError) -> xmlParserCtxtPtr {
        if let context { return context }
        var handler = xmlSAXHandler()
        handler.initialized = XML_SAX2_MAGIC
        handler.startElementNs = streamStartElement
        handler.endElementNs = streamEndElement
        handler.characters = streamCharacters
        handler.cdataBlock = streamCharacters
        handler.internalSubset = streamDoctype
        handler.serror = streamError
        let user = Unmanaged.passUnretained(self).toOpaque()
        // libxml2 copies the handler into the context.
        guard let created = xmlCreatePushParserCtxt(&handler, user, nil, 0, nil) else {
            throw HistoryFileError("the XML parser could not be created")
        }
        _ = xmlCtxtUseOptions(created, Self.options)
        context = created
        return created
    }

    fileprivate func stopTooDeep() {
        tooDeepLine = line
        if let context { xmlStopParser(context) }
    }

    fileprivate func stopAtDoctype() {
        doctypeLine = line - skippedLines
        if let context { xmlStopParser(context) }
    }

    fileprivate func appendText(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard text.count < Self.maximumText else { return }
        text.append(contentsOf: bytes.prefix(Self.maximumText - text.count))
    }

    fileprivate func takeText() -> String {
        defer { text.removeAll(keepingCapacity: true) }
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: text[first...last], as: UTF8.self)
    }
}

private func stream(_ user: UnsafeMutableRawPointer?) -> XMLStream? {
    user.map { Unmanaged<XMLStream>.fromOpaque($0).takeUnretainedValue() }
}

private func string(_ pointer: UnsafePointer<xmlChar>?) -> String? {
    pointer.map { String(cString: $0) }
}

private let streamStartElement: startElementNsSAX2Func = { user, localName, _, uri, _, _, attributeCount, _, attributes in
    guard let stream = stream(user), let localName else { return }
    var values: [String: String] = [:]
    if let attributes {
        // Five pointers per attribute: local name, prefix, URI, value start, value end.
        for index in 0..<Int(attributeCount) {
            guard let name = attributes[index * 5], let start = attributes[index * 5 + 3], let end = attributes[index * 5 + 4] else { continue }
            values[String(cString: name)] = String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
        }
    }
    _ = stream.takeText()
    stream.depth += 1
    if stream.depth > XMLStream.maximumDepth { return stream.stopTooDeep() }
    stream.events.append(.start(.init(name: String(cString: localName), namespace: string(uri), line: stream.line, attributes: values)))
}

private let streamEndElement: endElementNsSAX2Func = { user, localName, _, uri in
    guard let stream = stream(user), let localName else { return }
    stream.depth -= 1
    stream.events.append(.end(name: String(cString: localName), namespace: string(uri), text: stream.takeText()))
}

private let streamCharacters: charactersSAXFunc = { user, characters, length in
    guard let stream = stream(user), let characters, length > 0 else { return }
    stream.appendText(UnsafeBufferPointer(start: characters, count: Int(length)))
}

private let streamDoctype: internalSubsetSAXFunc = { user, _, _, _ in
    stream(user)?.stopAtDoctype()
}

// Errors are read from the context when a chunk fails; this only keeps libxml2 from printing them.
private let streamError: xmlStructuredErrorFunc = { _, _ in }

/// A history reader on `XMLStream`: it handles the stream's events, the stream is fed for it.
package protocol XMLHistoryReader: HistoryReader {
    /// The local name of the document element of this format, by which a file is recognized.
    static var rootElement: String { get }
    var stream: XMLStream { get }
    mutating func handle(_ event: XMLStream.Event, _ emit: (HistoryItem) throws -> Void) throws
}

extension XMLHistoryReader {
    package static func recognizes(prefix: ArraySlice<UInt8>) -> Bool {
        XMLStream.rootName(prefix) == rootElement
    }

    package mutating func feed(_ chunk: ArraySlice<UInt8>, emit: (HistoryItem) throws -> Void) throws {
        for event in try stream.feed(chunk) { try handle(event, emit) }
    }

    package mutating func finish(emit: (HistoryItem) throws -> Void) throws {
        for event in try stream.finish() { try handle(event, emit) }
    }
}
