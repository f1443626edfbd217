import CLibXML2
import Foundation
import Support
import Configuration
import Network

/// Reads the points of a GPX 1.0 or 1.1 document with libxml2: track points of every track and
/// segment, and route points and waypoints that carry a time (a route or a waypoint without one
/// is a plan, not a place someone was). Extensions and elements of other namespaces are ignored.
/// A `<gpx>` root without a namespace (written by some older tools) is read as GPX too.
///
/// Defended like the ENML validator: no network (`XML_PARSE_NONET`), entities never substituted,
/// a DOCTYPE stops the parse (GPX has none; refusing it keeps entity expansion and external
/// entities out), libxml2's default limits on depth and text size stay on (no `XML_PARSE_HUGE`),
/// and the caller bounds the input's size.
public struct GPXReader: Sendable {
    public struct Result: Sendable, Equatable {
        public var fixes: [Fix] = []
        /// Route points and waypoints left out for having no time.
        public var untimedSkipped = 0
    }

    /// The namespaces of GPX 1.1 and 1.0.
    static let namespaces: Set<String> = ["http://www.topografix.com/GPX/1/1", "http://www.topografix.com/GPX/1/0"]

    let path: String

    public init(path: String) {
        self.path = path
    }

    /// Parses `bytes` as a whole, synchronously (libxml2's error handler is per thread).
    public func read(_ bytes: [UInt8]) throws(TrackError) -> Result {
        let run = GPXParseRun()
        let document = bytes.withUnsafeBufferPointer { buffer -> xmlDocPtr? in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return nil }
            return run.parse(base, count: buffer.count)
        }
        if let line = run.doctypeLine {
            if let document { xmlFreeDoc(document) }
            throw .doctypeRefused(path: path, line: line)
        }
        guard let document else {
            throw .malformedXML(path: path, line: run.firstError?.line ?? 1, message: run.firstError?.message ?? "the file is empty")
        }
        defer { xmlFreeDoc(document) }
        guard let root = xmlDocGetRootElement(document) else { throw .notGPX(path: path, detail: "no root element") }
        let rootName = Self.name(root)
        let namespace = Self.namespace(root)
        guard rootName == "gpx", namespace.map(Self.namespaces.contains) ?? true else {
            throw .notGPX(path: path, detail: "the root element is <\(rootName)>" + (namespace.map { " in \($0)" } ?? "")
                          + "; GPX has <gpx xmlns=\"http://www.topografix.com/GPX/1/1\">")
        }
        var result = Result()
        for child in Self.children(root, namespace: namespace) {
            switch Self.name(child) {
            case "wpt":
                try add(child, namespace: namespace, timeRequired: false, to: &result)
            case "rte":
                for point in Self.children(child, namespace: namespace) where Self.name(point) == "rtept" {
                    try add(point, namespace: namespace, timeRequired: false, to: &result)
                }
            case "trk":
                for segment in Self.children(child, namespace: namespace) where Self.name(segment) == "trkseg" {
                    for point in Self.children(segment, namespace: namespace) where Self.name(point) == "trkpt" {
                        try add(point, namespace: namespace, timeRequired: true, to: &result)
                    }
                }
            default:
                break
            }
        }
        guard !result.fixes.isEmpty else { throw .noPoints(path: path) }
        return result
    }

    private func add(_ point: xmlNodePtr, namespace: String?, timeRequired: Bool, to result: inout Result) throws(TrackError) {
        let line = Int(xmlGetLineNo(point))
        let kind = Self.name(point)
        func number(_ text: String?, _ what: String) throws(TrackError) -> Double? {
            guard let text else { return nil }
            guard let value = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)), value.isFinite else {
                throw .badPoint(path: path, line: line, detail: "<\(kind)> \(what) '\(text.prefix(40))' is not a number")
            }
            return value
        }
        guard let latitude = try number(Self.attribute(point, "lat"), "lat"),
              let longitude = try number(Self.attribute(point, "lon"), "lon") else {
            throw .badPoint(path: path, line: line, detail: "<\(kind)> needs both lat and lon")
        }
        var values: [String: String] = [:]
        for child in Self.children(point, namespace: namespace) { values[Self.name(child)] = Self.text(child) }
        guard let timeText = values["time"] else {
            if timeRequired { throw .badPoint(path: path, line: line, detail: "<\(kind)> has no <time>: it cannot go into the history") }
            result.untimedSkipped += 1
            return
        }
        guard let time = TrackTime.parse(timeText) else {
            throw .badPoint(path: path, line: line, detail: "<time> '\(timeText.prefix(40))' is not an ISO 8601 date and time with a zone")
        }
        let hdop = try number(values["hdop"], "hdop")
        do {
            // GPX 1.0 has <speed> (m/s) and <course> (degrees) in points; 1.1 moved them to extensions.
            result.fixes.append(try Fix(latitude: latitude, longitude: longitude, altitude: try number(values["ele"], "ele"),
                                        horizontalAccuracy: hdop.map { $0 * NMEALogLocation.metresPerHDOP },
                                        speed: try number(values["speed"], "speed"), course: try number(values["course"], "course"),
                                        timestamp: time, source: .gpx))
        } catch let error as TrackError {
            throw error
        } catch {
            throw .badPoint(path: path, line: line, detail: "<\(kind)>: \((error as? any ENLogError)?.reason ?? "\(error)")")
        }
    }

    // MARK: libxml2 tree access

    static func name(_ node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0) } ?? ""
    }

    static func namespace(_ node: xmlNodePtr) -> String? {
        node.pointee.ns?.pointee.href.map { String(cString: $0) }
    }

    /// Element children in the GPX namespace (extensions live in others).
    static func children(_ node: xmlNodePtr, namespace: String?) -> [xmlNodePtr] {
        var found: [xmlNodePtr] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE, Self.namespace(current) == namespace { found.append(current) }
            child = current.pointee.next
        }
        return found
    }

    static func attribute(_ node: xmlNodePtr, _ name: String) -> String? {
        guard let value = xmlGetProp(node, name) else { return nil }
        defer { enlog_xml_free(value) }
        return String(cString: value)
    }

    static func text(_ node: xmlNodePtr) -> String {
        guard let value = xmlNodeGetContent(node) else { return "" }
        defer { enlog_xml_free(value) }
        return String(cString: value)
    }
}

/// The state of one parse, found again by libxml2's C callbacks through the context.
final class GPXParseRun {
    private(set) var firstError: (line: Int, message: String)?
    fileprivate(set) var doctypeLine: Int?

    private static let options = Int32(bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue
        | XML_PARSE_BIG_LINES.rawValue)

    func parse(_ base: UnsafePointer<UInt8>, count: Int) -> xmlDocPtr? {
        guard count <= Int(Int32.max), let context = base.withMemoryRebound(to: CChar.self, capacity: count, {
            xmlCreateMemoryParserCtxt($0, Int32(count))
        }) else {
            firstError = (0, "the XML parser could not be created")
            return nil
        }
        defer { xmlFreeParserCtxt(context) }
        _ = xmlCtxtUseOptions(context, Self.options)
        let unmanaged = Unmanaged.passUnretained(self)
        context.pointee._private = unmanaged.toOpaque()
        context.pointee.sax.pointee.internalSubset = stopAtDoctype
        xmlSetStructuredErrorFunc(unmanaged.toOpaque(), recordGPXError)
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        _ = xmlParseDocument(context)
        let document = context.pointee.myDoc
        context.pointee.myDoc = nil
        guard context.pointee.wellFormed != 0, doctypeLine == nil else {
            if let document { xmlFreeDoc(document) }
            return nil
        }
        return document
    }

    fileprivate func record(_ error: xmlError) {
        guard firstError == nil, error.level != XML_ERR_WARNING else { return }
        let message = LibXMLMessage.text(of: error)
        firstError = (Int(error.line), message)
    }
}

private let recordGPXError: xmlStructuredErrorFunc = { userData, error in
    guard let userData, let error else { return }
    Unmanaged<GPXParseRun>.fromOpaque(userData).takeUnretainedValue().record(error.pointee)
}

private let stopAtDoctype: internalSubsetSAXFunc = { context, _, _, _ in
    guard let parser = context?.assumingMemoryBound(to: xmlParserCtxt.self),
          let run = parser.pointee._private.map({ Unmanaged<GPXParseRun>.fromOpaque($0).takeUnretainedValue() }) else { return }
    run.doctypeLine = parser.pointee.input.map { Int($0.pointee.line) } ?? 1
    xmlStopParser(parser)
}
