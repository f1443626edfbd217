import CLibXML2
import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// Says, offline, what Evernote's service would say about a note's ENML: libxml2 parses and
/// validates against the embedded ENML 2 DTD during the parse (so errors carry line and column),
/// then the rules the DTD cannot express are applied.
///
/// Each call is synchronous and self-contained, so any number of threads may validate at once.
package struct ENMLValidator: Sendable {
    package enum Rules: Sendable {
        /// Everything the service checks: the DTD and the rules beyond it.
        case evernote
        /// Only what a validating XML parser checks with the ENML DTD (what `xmllint --valid`
        /// says): for cross-checking against independent tools.
        case dtdOnly
    }

    package let rules: Rules

    package init(rules: Rules = .evernote) {
        self.rules = rules
        _ = ENMLDTD.installed
    }

    package func validate(_ text: String) -> ENMLReport {
        var text = text
        return text.withUTF8 { validate(bytes: $0) }
    }

    package func validate(_ data: Data) -> ENMLReport {
        data.withUnsafeBytes { validate(bytes: $0.bindMemory(to: UInt8.self)) }
    }

    package func validate(bytes: UnsafeBufferPointer<UInt8>) -> ENMLReport {
        guard !bytes.isEmpty else {
            // libxml2 cannot even create a parser for zero bytes (it says "out of memory").
            return ENMLReport(diagnostics: [ENMLDiagnostic(
                line: 1, column: 0, code: .xmlSyntax,
                message: "the document is empty; a note is an XML document whose root element is <en-note>")])
        }
        let scan = ENMLTextScan(bytes)
        guard scan.isUTF8 else { return ENMLReport(diagnostics: scan.diagnostics) }
        guard bytes.count <= Int(Int32.max), let base = bytes.baseAddress ?? UnsafePointer(bitPattern: 1) else {
            return ENMLReport(diagnostics: scan.diagnostics)
        }
        let beyondDTD = rules == .evernote
        let run = ENMLValidationRun(applyRulesBeyondDTD: beyondDTD,
                                    controlCharactersReported: beyondDTD && scan.hasControlCharacters)
        run.parse(base, count: bytes.count)
        let diagnostics = (beyondDTD ? scan.diagnostics : []) + run.diagnostics
        return ENMLReport(diagnostics: diagnostics.sorted { ($0.line, $0.column) < ($1.line, $1.column) })
    }
}

/// The state of one parse: libxml2's C callbacks find it again through the parser context.
final class ENMLValidationRun {
    private(set) var diagnostics: [ENMLDiagnostic] = []
    /// The pooled DTD this parse uses, returned to the pool when the parse is over.
    private var borrowedDTD: xmlDtdPtr?
    private let applyRulesBeyondDTD: Bool
    private let controlCharactersReported: Bool

    private static let options = Int32(bitPattern: XML_PARSE_DTDLOAD.rawValue | XML_PARSE_DTDVALID.rawValue
        | XML_PARSE_NONET.rawValue | XML_PARSE_BIG_LINES.rawValue)

    init(applyRulesBeyondDTD: Bool, controlCharactersReported: Bool) {
        self.applyRulesBeyondDTD = applyRulesBeyondDTD
        self.controlCharactersReported = controlCharactersReported
    }

    static func current(of context: xmlParserCtxtPtr) -> ENMLValidationRun? {
        context.pointee._private.map { Unmanaged<ENMLValidationRun>.fromOpaque($0).takeUnretainedValue() }
    }

    func parse(_ base: UnsafePointer<UInt8>, count: Int) {
        // Not xmlCtxtReadMemory: on a malformed document it frees the document, and the pooled
        // DTD with it. Driving xmlParseDocument leaves the document to us, always.
        guard let context = base.withMemoryRebound(to: CChar.self, capacity: count, {
            xmlCreateMemoryParserCtxt($0, Int32(count))
        }) else {
            diagnostics.append(ENMLDiagnostic(line: 0, column: 0, code: .xmlSyntax, message: "out of memory creating the XML parser"))
            return
        }
        defer { xmlFreeParserCtxt(context) }
        _ = xmlCtxtUseOptions(context, Self.options)
        let unmanaged = Unmanaged.passUnretained(self)
        context.pointee._private = unmanaged.toOpaque()
        if applyRulesBeyondDTD {
            context.pointee.sax.pointee.startElementNs = startElementAndCheckRules
        }
        context.pointee.sax.pointee.externalSubset = attachSharedDTD
        context.pointee.sax.pointee.endElementNs = endElementAndFreeItsContent
        defer { if let borrowedDTD { ENMLDTD.pool.checkIn(borrowedDTD) } }
        // libxml2's structured error handler is per thread: install ours for this parse only.
        xmlSetStructuredErrorFunc(unmanaged.toOpaque(), collectLibXMLError)
        defer { xmlSetStructuredErrorFunc(nil, nil) }

        _ = xmlParseDocument(context)
        guard let document = context.pointee.myDoc else { return }
        context.pointee.myDoc = nil
        defer {
            // The pooled DTD is not the document's to free.
            if document.pointee.extSubset == borrowedDTD { document.pointee.extSubset = nil }
            xmlFreeDoc(document)
        }
        guard context.pointee.wellFormed != 0 else { return }
        checkDoctype(document, source: UnsafeBufferPointer(start: base, count: count))
        if applyRulesBeyondDTD, let encoding = document.pointee.encoding.map({ String(cString: $0) }),
           encoding.uppercased() != "UTF-8", encoding.uppercased() != "UTF8" {
            diagnostics.append(ENMLDiagnostic(line: 1, column: 0, code: .notUTF8Encoding,
                                              message: "the XML declaration names encoding '\(encoding)'; ENML must be UTF-8"))
        }
    }

    private func checkDoctype(_ document: xmlDocPtr, source: UnsafeBufferPointer<UInt8>) {
        let expected = "<!DOCTYPE \(ENMLDTD.rootElement) SYSTEM \"\(ENMLDTD.systemID)\">"
        guard let doctype = document.pointee.intSubset else {
            let line = xmlDocGetRootElement(document).map { Int(xmlGetLineNo($0)) } ?? 1
            diagnostics.append(ENMLDiagnostic(line: max(line, 1), column: 0, code: .missingDoctype,
                                              message: "missing DOCTYPE; ENML must declare \(expected)"))
            return
        }
        let line = Self.lineOfDoctype(in: source)
        let name = doctype.pointee.name.map { String(cString: $0) } ?? ""
        let systemID = doctype.pointee.SystemID.map { String(cString: $0) } ?? ""
        if name != ENMLDTD.rootElement || systemID != ENMLDTD.systemID {
            diagnostics.append(ENMLDiagnostic(line: line, column: 0, code: .wrongDoctype,
                                              message: "DOCTYPE names '\(name)' \"\(systemID)\"; ENML must declare \(expected)"))
        } else if document.pointee.extSubset == nil {
            diagnostics.append(ENMLDiagnostic(line: line, column: 0, code: .wrongDoctype,
                                              message: "the ENML DTD could not be applied, so the note was not validated"))
        }
        if applyRulesBeyondDTD, doctype.pointee.children != nil {
            diagnostics.append(ENMLDiagnostic(line: line, column: 0, code: .internalSubset,
                                              message: "an internal DTD subset ([...] in the DOCTYPE) is not allowed in ENML"))
        }
    }

    private static func lineOfDoctype(in source: UnsafeBufferPointer<UInt8>) -> Int {
        let marker = Array("<!DOCTYPE".utf8)
        var line = 1
        var index = 0
        while index + marker.count <= source.count {
            let byte = source[index]
            if byte == 0x0A { line += 1 } else if byte == marker[0] && source[index..<(index + marker.count)].elementsEqual(marker) { return line }
            index += 1
        }
        return 1
    }

    fileprivate func record(_ error: xmlError) {
        let code = Int32(error.code)
        if controlCharactersReported && code == Int32(XML_ERR_INVALID_CHAR.rawValue) { return }
        // The DOCTYPE checks above say the same thing more usefully.
        if code == Int32(XML_DTD_NO_DTD.rawValue) { return }
        let domain = error.domain
        let isValidity = domain == Int32(XML_FROM_VALID.rawValue) || domain == Int32(XML_FROM_DTD.rawValue)
        let message = LibXMLMessage.text(of: error)
        diagnostics.append(ENMLDiagnostic(
            severity: error.level == XML_ERR_WARNING ? .warning : .error,
            line: Int(error.line), column: Int(error.int2),
            code: isValidity ? .dtdValidity : .xmlSyntax, message: message))
    }

    /// Whether what an element holds may be freed once the element has ended (libxml2 validates an
    /// element's content when it ends, and nothing looks at it again): while the document is
    /// validated against the pooled ENML DTD alone, which declares no ID or IDREF attribute, and
    /// no `xml:id` has made an ID (libxml2 would forget an ID whose attribute is freed).
    fileprivate func mayFreeContent(of document: xmlDocPtr) -> Bool {
        borrowedDTD != nil && document.pointee.extSubset == borrowedDTD && document.pointee.intSubset?.pointee.children == nil
            && document.pointee.ids == nil && document.pointee.refs == nil
    }

    fileprivate func borrowDTD() -> xmlDtdPtr? {
        if borrowedDTD == nil { borrowedDTD = ENMLDTD.pool.checkOut() }
        return borrowedDTD
    }

    func refusedEntity(_ url: String, context: xmlParserCtxtPtr) {
        let position = Self.position(of: context)
        diagnostics.append(ENMLDiagnostic(line: position.line, column: position.column, code: .wrongDoctype,
                                          message: "external entity '\(url)' refused: ENML may refer only to the ENML 2 DTD"))
    }

    /// Applies the rules beyond the DTD to the element libxml2 has just built, attribute by
    /// attribute, on the bytes libxml2 holds: elements no rule concerns are passed over by name.
    fileprivate func checkRules(of element: xmlNodePtr, context: xmlParserCtxtPtr) {
        guard let name = element.pointee.name, let kind = ENMLRules.Element(name: Self.bytes(name)) else { return }
        var attribute = element.pointee.properties
        while let current = attribute {
            attribute = current.pointee.next
            guard let attributeName = current.pointee.name, let rule = kind.rule(for: Self.bytes(attributeName)),
                  let found = Self.withValue(of: current, in: element.pointee.doc, { ENMLRules.problem(rule, on: kind, value: $0) }),
                  let problem = found else { continue }
            let position = Self.position(of: context)
            diagnostics.append(ENMLDiagnostic(line: position.line, column: position.column, code: problem.code, message: problem.message))
        }
    }

    /// An attribute's value with its entity references replaced, as `xmlNodeListGetString` gives
    /// it: the one text node libxml2 already holds (nearly always), a copy only when references
    /// split the value. Nil, like `xmlNodeListGetString`, when there is no value to give.
    private static func withValue<T>(of attribute: xmlAttrPtr, in document: xmlDocPtr?, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        guard let children = attribute.pointee.children else { return nil }
        if children.pointee.next == nil, children.pointee.type == XML_TEXT_NODE {
            return children.pointee.content.map { body(bytes($0)) }
        }
        guard let value = xmlNodeListGetString(document, children, 1) else { return nil }
        defer { enlog_xml_free(value) }
        return body(bytes(value))
    }

    private static func bytes(_ string: UnsafePointer<xmlChar>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: string, count: Int(xmlStrlen(string)))
    }

    private static func position(of context: xmlParserCtxtPtr) -> (line: Int, column: Int) {
        guard let input = context.pointee.input else { return (0, 0) }
        return (Int(input.pointee.line), Int(input.pointee.col))
    }
}

private let collectLibXMLError: xmlStructuredErrorFunc = { userData, error in
    guard let userData, let error else { return }
    Unmanaged<ENMLValidationRun>.fromOpaque(userData).takeUnretainedValue().record(error.pointee)
}

/// Attaches the pooled, already parsed ENML DTD instead of parsing it again for every document
/// (which costs more than validating a typical note). Any other DTD goes the usual way, through
/// the loader that refuses it; so does a document with declarations of its own (an internal
/// subset), which libxml2 merges with the external one only while parsing that.
private let attachSharedDTD: externalSubsetSAXFunc = { context, name, externalID, systemID in
    guard let parser = context?.assumingMemoryBound(to: xmlParserCtxt.self) else { return }
    if let systemID, String(cString: systemID) == ENMLDTD.systemID,
       let run = ENMLValidationRun.current(of: parser), let document = parser.pointee.myDoc,
       document.pointee.intSubset?.pointee.children == nil,
       let dtd = run.borrowDTD() {
        document.pointee.extSubset = dtd
        return
    }
    xmlSAX2ExternalSubset(context, name, externalID, systemID)
}

private let startElementAndCheckRules: startElementNsSAX2Func = {
    context, localName, prefix, uri, namespaceCount, namespaces, attributeCount, defaultedCount, attributes in
    xmlSAX2StartElementNs(context, localName, prefix, uri, namespaceCount, namespaces, attributeCount, defaultedCount, attributes)
    guard let parser = context?.assumingMemoryBound(to: xmlParserCtxt.self),
          let element = parser.pointee.node,
          let run = ENMLValidationRun.current(of: parser) else { return }
    run.checkRules(of: element, context: parser)
}

/// Ends an element as libxml2 does (which validates its content), then frees that content: the
/// document never holds more than the open elements and their earlier siblings, so the parse
/// reuses a few hot blocks of memory instead of building and then freeing the whole tree.
private let endElementAndFreeItsContent: endElementNsSAX2Func = { context, localName, prefix, uri in
    let parser = context?.assumingMemoryBound(to: xmlParserCtxt.self)
    let element = parser?.pointee.node
    xmlSAX2EndElementNs(context, localName, prefix, uri)
    guard let parser, let element, let document = parser.pointee.myDoc, let children = element.pointee.children,
          ENMLValidationRun.current(of: parser)?.mayFreeContent(of: document) == true else { return }
    element.pointee.children = nil
    element.pointee.last = nil
    xmlFreeNodeList(children)
}
