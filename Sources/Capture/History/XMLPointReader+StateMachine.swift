import Foundation
import Support
import Configuration
import Network

/// What the GPX, TCX and KML readers share, as a value told each element's start and end that
/// answers with what its reader should do: the root element checked, the elements open now, and
/// the open records (a point, a track, a Placemark) with the texts read inside them. Each format
/// is only its `Rules` (which elements are records, where a text goes) and what it makes of a
/// closed record; the machine itself reads no value and does no I/O.
struct XMLPointReaderStateMachine {
    struct Rules {
        /// The root element's local name, and the format's name in the error for another root.
        var root: String
        var formatName: String
        /// The namespaces a root may have (a root without one is accepted too); elements of any
        /// other namespace than the root's are then ignored. nil: namespaces are not looked at.
        var namespaces: Set<String>?
        /// Said after the error for another root: what the format's root looks like.
        var rootHint = ""
        /// The elements that open a record, with their level: a record opens only inside records
        /// of a lower level (a GPX point inside a track, never a track inside a point).
        var records: [String: Int]
        /// Where the text of an element goes, given its name and its parent element.
        var destination: (_ name: String, _ parent: XMLStream.Element?) -> Destination?
    }

    enum Destination {
        /// Kept under `key` in the innermost open record of that element name (dropped when none is open).
        case value(record: String, key: String)
        /// Handed to the reader as it ends.
        case reader
    }

    struct Record {
        var element: XMLStream.Element
        var depth: Int
        var level: Int
        var values: [String: [String]] = [:]

        /// The last text kept under `key` (a value given twice: the later one counts).
        func last(_ key: String) -> String? { values[key]?.last }
        func all(_ key: String) -> [String] { values[key] ?? [] }
    }

    enum Action {
        case none
        case fail(HistoryFileError)
        /// A record's element ended: everything read inside it.
        case closed(Record)
        /// An element whose text the rules hand to the reader ended.
        case text(name: String, parent: String?, text: String)
    }

    private enum State {
        case beforeRoot
        /// Inside the root; its namespace when the rules filter by namespace.
        case inRoot(namespace: String?)
    }

    let rules: Rules
    private var state = State.beforeRoot
    private var path: [XMLStream.Element] = []
    private var records: [Record] = []

    init(_ rules: Rules) {
        self.rules = rules
    }

    mutating func handle(_ event: XMLStream.Event) -> Action {
        switch event {
        case .start(let element): return start(element)
        case let .end(name, namespace, text): return end(name, namespace, text)
        }
    }

    /// Whether a record of this element name is open.
    func isOpen(_ record: String) -> Bool {
        records.contains { $0.element.name == record }
    }

    /// Keeps `text` under `key` in the innermost open record named `record`, while that holds
    /// fewer than `limit` texts under it.
    mutating func append(_ text: String, key: String, toRecord record: String, limit: Int = .max) {
        guard let index = records.lastIndex(where: { $0.element.name == record }),
              records[index].values[key, default: []].count < limit else { return }
        records[index].values[key, default: []].append(text)
    }

    private mutating func start(_ element: XMLStream.Element) -> Action {
        path.append(element)
        switch state {
        case .beforeRoot:
            guard element.name == rules.root, rules.namespaces.map({ element.namespace.map($0.contains) ?? true }) ?? true else {
                let namespace = rules.namespaces == nil ? "" : element.namespace.map { " in \($0)" } ?? ""
                return .fail(HistoryFileError("not \(rules.formatName): the root element is <\(element.name)>\(namespace)\(rules.rootHint)",
                                              at: .line(element.line)))
            }
            state = .inRoot(namespace: element.namespace)
        case .inRoot(let namespace):
            guard rules.namespaces == nil || element.namespace == namespace,
                  let level = rules.records[element.name], records.allSatisfy({ $0.level < level }) else { break }
            records.append(Record(element: element, depth: path.count, level: level))
        }
        return .none
    }

    private mutating func end(_ name: String, _ namespace: String?, _ text: String) -> Action {
        let depth = path.count
        path.removeLast()
        guard case .inRoot(let rootNamespace) = state, rules.namespaces == nil || namespace == rootNamespace else { return .none }
        if let record = records.last, record.depth == depth {
            return .closed(records.removeLast())
        }
        switch rules.destination(name, path.last) {
        case .value(let record, let key)?:
            append(text, key: key, toRecord: record)
            return .none
        case .reader?:
            return .text(name: name, parent: path.last?.name, text: text)
        case nil:
            return .none
        }
    }
}
