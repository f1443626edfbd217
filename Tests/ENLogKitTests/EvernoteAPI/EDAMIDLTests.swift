import Foundation
import XCTest
@testable import EvernoteAPI

/// Holds enlog's EDAM field tables and service calls against Evernote's own IDL in
/// `../shared/evernote/idl`: every field's id, name, type and requiredness, and every argument a
/// client call puts on the wire (read back from the bytes, structs followed into their fields).
final class EDAMIDLTests: XCTestCase {
    /// Every struct enlog encodes or decodes (TApplicationException is Thrift's own, not EDAM's).
    static let structs: [any ThriftStruct.Type] = [
        EDAM.LazyMap.self, EDAM.Data.self, EDAM.ResourceAttributes.self, EDAM.Resource.self,
        EDAM.NoteAttributes.self, EDAM.Note.self, EDAM.Notebook.self, EDAM.Tag.self, EDAM.User.self,
        EDAM.UserUrls.self, EDAM.NoteFilter.self, EDAM.NotesMetadataResultSpec.self, EDAM.NoteMetadata.self,
        EDAM.NotesMetadataList.self, EDAM.UserException.self, EDAM.SystemException.self,
        EDAM.NotFoundException.self,
    ]

    private static let idl: IDL = {
        let folder = Fixtures.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/evernote/idl")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let text = names.filter { $0.hasSuffix(".thrift") }.sorted().compactMap {
            try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)
        }
        return IDL(text.joined(separator: "\n"))
    }()

    func testTheIDLParsesToWhatItIsKnownToHold() {
        // Guards the parser itself: a few facts read off Types.thrift and NoteStore.thrift by hand.
        XCTAssertEqual(Self.idl.structs["Note"]?[13]?.type, "list<Resource>")
        XCTAssertEqual(Self.idl.structs["Note"]?[6]?.type, "i64")
        XCTAssertEqual(Self.idl.structs["NoteMetadata"]?[1]?.required, true)
        XCTAssertEqual(Self.idl.structs["NoteAttributes"]?[26]?.type, "map<string,string>")
        XCTAssertEqual(Self.idl.functions["findNotesMetadata"]?[5]?.type, "NotesMetadataResultSpec")
        XCTAssertEqual(Self.idl.functions["checkVersion"]?[2]?.type, "i16")
    }

    func testEveryStructFieldMatchesTheIDL() {
        XCTAssertEqual(Self.problems(against: Self.idl), [])
    }

    /// The comparison is not blind: an IDL whose Note.title is an i32 and whose NoteMetadata.guid
    /// is optional is told apart.
    func testAFieldUnlikeTheIDLIsFound() {
        var altered = Self.idl
        altered.structs["Note"]?[2]?.type = "i32"
        altered.structs["NoteMetadata"]?[1]?.required = false
        altered.structs["Tag"]?[4] = nil
        XCTAssertEqual(Self.problems(against: altered), [
            "Note.title: string, the IDL says i32", "Tag.updateSequenceNum: id 4 is not in the IDL",
            "NoteMetadata.guid: required is true, the IDL says false",
        ])
    }

    private static func problems(against idl: IDL) -> [String] {
        var problems: [String] = []
        for type in structs {
            let fields = type.fieldDescriptions
            guard let declared = idl.structs[type.thriftName] else {
                problems.append("\(type.thriftName) is not a struct of the IDL")
                continue
            }
            if fields.map(\.id) != fields.map(\.id).sorted() { problems.append("\(type.thriftName): fields out of id order") }
            if Set(fields.map(\.id)).count != fields.count { problems.append("\(type.thriftName): an id twice") }
            for field in fields {
                let place = "\(type.thriftName).\(field.name)"
                guard let expected = declared[field.id] else {
                    problems.append("\(place): id \(field.id) is not in the IDL")
                    continue
                }
                if field.name != expected.name { problems.append("\(place): id \(field.id) is \(expected.name) in the IDL") }
                if field.idlType != expected.type { problems.append("\(place): \(field.idlType), the IDL says \(expected.type)") }
                if field.required != expected.required {
                    problems.append("\(place): required is \(field.required), the IDL says \(expected.required)")
                }
            }
        }
        return problems
    }

    /// Each call the clients make, with every argument set.
    func testEveryServiceCallSendsTheIDLArguments() async throws {
        let transport = ScriptedTransport { _ in throw CancellationError() }
        let user = UserStoreClient(transport: transport, authenticationToken: "S=s1:U=1")
        let notes = NoteStoreClient(transport: transport, authenticationToken: "S=s1:U=1")
        let calls: [@Sendable () async throws -> Void] = [
            { _ = try await user.checkVersion(clientName: "enlog") },
            { _ = try await user.getUser() },
            { _ = try await user.getUserUrls() },
            { _ = try await notes.listNotebooks() },
            { _ = try await notes.getDefaultNotebook() },
            { _ = try await notes.createNotebook(EDAM.Notebook(name: "n", stack: "s")) },
            { _ = try await notes.listTags() },
            { _ = try await notes.createNote(Samples.fullNote) },
            { _ = try await notes.findNotesMetadata(filter: EDAM.NoteFilter(order: 1, ascending: true, words: "w", notebookGuid: "g"),
                                                    offset: 0, maxNotes: 10,
                                                    resultSpec: EDAM.NotesMetadataResultSpec(includeTitle: true, includeAttributes: true)) },
            { _ = try await notes.getNote(guid: "g", withContent: true, withResourcesData: true) },
            { _ = try await notes.deleteNote(guid: "g") },
            { _ = try await notes.getNoteApplicationDataEntry(guid: "g", key: "k") },
        ]
        for call in calls { _ = try? await call() }
        XCTAssertEqual(transport.requests.count, calls.count)
        for request in transport.requests {
            var reader = ThriftBinaryReader(request)
            let header = try reader.readMessageBegin()
            guard let parameters = Self.idl.functions[header.name] else {
                XCTFail("\(header.name) is not a function of the IDL")
                continue
            }
            var sent: Set<Int16> = []
            try reader.readStructBegin()
            while let field = try reader.readFieldBegin() {
                sent.insert(field.id)
                guard let expected = parameters[field.id] else {
                    XCTFail("\(header.name): argument \(field.id) is not in the IDL")
                    try reader.skip(field.type)
                    continue
                }
                try Self.check(&reader, field.type, against: expected.type, at: "\(header.name).\(expected.name)")
            }
            XCTAssertEqual(sent, Set(parameters.keys), "\(header.name): the arguments sent")
        }
    }

    /// Reads one value of wire type `type` and holds it, and whatever it holds, against `idlType`.
    private static func check(_ reader: inout ThriftBinaryReader, _ type: ThriftType, against idlType: String,
                              at place: String) throws {
        XCTAssertEqual(type, IDL.wireType(idlType), "\(place): \(idlType) sent as \(type)")
        guard type == IDL.wireType(idlType) else { return try reader.skip(type) }
        if let fields = idl.structs[idlType] {
            try reader.readStructBegin()
            while let field = try reader.readFieldBegin() {
                guard let expected = fields[field.id] else {
                    XCTFail("\(place): field \(field.id) is not in \(idlType)")
                    try reader.skip(field.type)
                    continue
                }
                try check(&reader, field.type, against: expected.type, at: "\(place).\(expected.name)")
            }
            reader.readStructEnd()
        } else if let element = IDL.elementType(idlType, container: "list") ?? IDL.elementType(idlType, container: "set") {
            let header = try reader.readListBegin()
            for index in 0..<header.count { try check(&reader, header.elementType, against: element, at: "\(place)[\(index)]") }
            reader.readListEnd()
        } else {
            try reader.skip(type)
        }
    }
}

extension ThriftStruct {
    static var fieldDescriptions: [(id: Int16, name: String, idlType: String, required: Bool)] {
        thriftFields.map { ($0.id, $0.name, $0.idlType, $0.isRequired) }
    }
}

/// Just enough of the Thrift IDL: typedefs and enums (resolved to their base types), the fields
/// of structs and exceptions (`1: optional Type name,`), and the parameters of service functions.
private struct IDL {
    struct Field { var name: String; var type: String; var required: Bool }
    var structs: [String: [Int16: Field]] = [:]
    var functions: [String: [Int16: Field]] = [:]

    init(_ source: String) {
        let text = source.replacingOccurrences(of: #"/\*.*?\*/"#, with: " ", options: .regularExpression)
            .replacingOccurrences(of: #"//[^\n]*"#, with: "", options: .regularExpression)
        var aliases: [String: String] = [:]
        for match in Self.matches(#"typedef\s+([\w.<>, ]+?)\s+(\w+)"#, in: text) { aliases[match[2]] = match[1] }
        for match in Self.matches(#"enum\s+(\w+)\s*\{"#, in: text) { aliases[match[1]] = "i32" }
        func resolve(_ type: String) -> String {
            // Drop `Types.`-style module prefixes, then replace each name by what it stands for.
            let plain = type.replacingOccurrences(of: #"\w+\."#, with: "", options: .regularExpression)
                .replacingOccurrences(of: " ", with: "")
            var resolved = ""
            var word = ""
            for character in plain + " " {
                if character.isLetter || character.isNumber || character == "_" {
                    word.append(character)
                    continue
                }
                resolved += aliases[word].map(resolve) ?? word
                word = ""
                if character != " " { resolved.append(character) }
            }
            return resolved
        }
        func fields(_ body: String) -> [Int16: Field] {
            var result: [Int16: Field] = [:]
            for match in Self.matches(#"(\d+)\s*:\s*(?:(required|optional)\s+)?([\w.]+(?:<[^<>]*(?:<[^<>]*>)?[^<>]*>)?)\s+(\w+)"#, in: body) {
                result[Int16(match[1])!] = Field(name: match[4], type: resolve(match[3]), required: match[2] == "required")
            }
            return result
        }
        for match in Self.matches(#"(?:struct|exception)\s+(\w+)\s*\{(.*?)\n\}"#, in: text) {
            structs[match[1]] = fields(match[2])
        }
        for service in Self.matches(#"service\s+\w+\s*\{(.*?)\n\}"#, in: text) {
            for function in Self.matches(#"(\w+)\s*\(([^()]*)\)\s*(?:throws|,|;|\n)"#, in: service[1]) {
                functions[function[1]] = fields(function[2])
            }
        }
    }

    static func wireType(_ idlType: String) -> ThriftType {
        switch idlType {
        case "bool": return .bool
        case "byte": return .byte
        case "i16": return .i16
        case "i32": return .i32
        case "i64": return .i64
        case "double": return .double
        case "string", "binary": return .string
        default:
            if idlType.hasPrefix("list<") { return .list }
            if idlType.hasPrefix("set<") { return .set }
            if idlType.hasPrefix("map<") { return .map }
            return .struct
        }
    }

    static func elementType(_ idlType: String, container: String) -> String? {
        guard idlType.hasPrefix(container + "<"), idlType.hasSuffix(">") else { return nil }
        return String(idlType.dropFirst(container.count + 1).dropLast())
    }

    private static func matches(_ pattern: String, in text: String) -> [[String]] {
        let expression = try! NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
        let nsText = text as NSString
        return expression.matches(in: text, range: NSRange(location: 0, length: nsText.length)).map { match in
            (0..<match.numberOfRanges).map {
                let range = match.range(at: $0)
                return range.location == NSNotFound ? "" : nsText.substring(with: range)
            }
        }
    }
}
