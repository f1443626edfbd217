import Support
// One way to put a value on the wire and read it back, whatever its Thrift type: scalars,
// containers of values, and structs described by one table of their fields.

/// A value with one Thrift wire type that writes and reads itself.
package protocol ThriftValue: Sendable {
    static var thriftType: ThriftType { get }
    /// The type as the IDL spells it (`i32`, `binary`, `list<string>`, `Note`), so a test can
    /// hold every field against `../shared/evernote/idl`.
    static var idlType: String { get }
    init(from reader: inout ThriftBinaryReader) throws(ThriftError)
    func write(to writer: inout ThriftBinaryWriter)
}

extension ThriftBinaryWriter {
    /// Writes one field; an unset optional is simply omitted.
    package mutating func writeField<Value: ThriftValue>(_ id: Int16, _ value: Value?) {
        guard let value else { return }
        writeFieldBegin(Value.thriftType, id: id)
        value.write(to: &self)
    }
}

// MARK: - Scalars

/// What a scalar's conformance says: its wire type, its IDL name, and the reader's and the
/// writer's call for it. The rest of `ThriftValue` follows from these (`ThriftScalar`).
package struct ThriftScalarCoding<Value>: Sendable {
    let type: ThriftType
    let idlType: String
    let read: @Sendable (inout ThriftBinaryReader) throws(ThriftError) -> Value
    let write: @Sendable (inout ThriftBinaryWriter, Value) -> Void

    init(_ type: ThriftType, _ idlType: String, read: @escaping @Sendable (inout ThriftBinaryReader) throws(ThriftError) -> Value,
         write: @escaping @Sendable (inout ThriftBinaryWriter, Value) -> Void) {
        self.type = type
        self.idlType = idlType
        self.read = read
        self.write = write
    }
}

/// A value that is one call of the reader and one of the writer: each conformance is its
/// `ThriftScalarCoding`, one line.
package protocol ThriftScalar: ThriftValue {
    static var thriftScalar: ThriftScalarCoding<Self> { get }
}

extension ThriftScalar {
    package static var thriftType: ThriftType { thriftScalar.type }
    package static var idlType: String { thriftScalar.idlType }
    package init(from reader: inout ThriftBinaryReader) throws(ThriftError) { self = try Self.thriftScalar.read(&reader) }
    package func write(to writer: inout ThriftBinaryWriter) { Self.thriftScalar.write(&writer, self) }
}

// Computed, not stored: the closures capture nothing, so building the coding costs nothing and
// each generic call specializes to the reader's or writer's own method.
extension Bool: ThriftScalar { package static var thriftScalar: ThriftScalarCoding<Self> { .init(.bool, "bool", read: { r throws(ThriftError) in try r.readBool() }, write: { $0.writeBool($1) }) } }
extension Int16: ThriftScalar { package static var thriftScalar: ThriftScalarCoding<Self> { .init(.i16, "i16", read: { r throws(ThriftError) in try r.readI16() }, write: { $0.writeI16($1) }) } }
extension Int32: ThriftScalar { package static var thriftScalar: ThriftScalarCoding<Self> { .init(.i32, "i32", read: { r throws(ThriftError) in try r.readI32() }, write: { $0.writeI32($1) }) } }
extension Int64: ThriftScalar { package static var thriftScalar: ThriftScalarCoding<Self> { .init(.i64, "i64", read: { r throws(ThriftError) in try r.readI64() }, write: { $0.writeI64($1) }) } }
extension Double: ThriftScalar { package static var thriftScalar: ThriftScalarCoding<Self> { .init(.double, "double", read: { r throws(ThriftError) in try r.readDouble() }, write: { $0.writeDouble($1) }) } }
extension String: ThriftScalar { package static var thriftScalar: ThriftScalarCoding<Self> { .init(.string, "string", read: { r throws(ThriftError) in try r.readString() }, write: { $0.writeString($1) }) } }

/// Thrift `binary`: the wire type of a string, bytes that are not text. A wrapper because
/// `[UInt8]` would otherwise read as a list.
package struct ThriftBinary: ThriftScalar, Hashable {
    package var bytes: [UInt8]
    package init(_ bytes: [UInt8]) { self.bytes = bytes }
    package static var thriftScalar: ThriftScalarCoding<Self> {
        .init(.string, "binary", read: { r throws(ThriftError) in Self(try r.readBinary()) }, write: { $0.writeBinary($1.bytes) })
    }
}

// MARK: - Containers

extension Array: ThriftValue where Element: ThriftValue {
    package static var thriftType: ThriftType { .list }
    package static var idlType: String { "list<\(Element.idlType)>" }

    package init(from reader: inout ThriftBinaryReader) throws(ThriftError) {
        self = try reader.readList(of: Element.thriftType) { (r: inout ThriftBinaryReader) throws(ThriftError) in
            try Element(from: &r)
        }
    }

    package func write(to writer: inout ThriftBinaryWriter) {
        writer.writeListBegin(elementType: Element.thriftType, count: count)
        for element in self { element.write(to: &writer) }
    }
}

/// Sets go out sorted so that equal values always produce equal bytes.
extension Set: ThriftValue where Element: ThriftValue & Comparable {
    package static var thriftType: ThriftType { .set }
    package static var idlType: String { "set<\(Element.idlType)>" }

    package init(from reader: inout ThriftBinaryReader) throws(ThriftError) {
        let header = try reader.readSetBegin()
        guard header.count == 0 || header.elementType == Element.thriftType else {
            throw .unexpectedType(expected: Element.thriftType, found: header.elementType)
        }
        self.init(minimumCapacity: header.count)
        for _ in 0..<header.count { insert(try Element(from: &reader)) }
        reader.readSetEnd()
    }

    package func write(to writer: inout ThriftBinaryWriter) {
        writer.writeSetBegin(elementType: Element.thriftType, count: count)
        for element in sorted() { element.write(to: &writer) }
    }
}

/// Maps go out sorted by key so that equal values always produce equal bytes.
extension Dictionary: ThriftValue where Key: ThriftValue & Comparable, Value: ThriftValue {
    package static var thriftType: ThriftType { .map }
    package static var idlType: String { "map<\(Key.idlType),\(Value.idlType)>" }

    package init(from reader: inout ThriftBinaryReader) throws(ThriftError) {
        let header = try reader.readMapBegin()
        let keyMatches = header.keyType == Key.thriftType
        guard header.count == 0 || (keyMatches && header.valueType == Value.thriftType) else {
            throw .unexpectedType(expected: keyMatches ? Value.thriftType : Key.thriftType,
                                  found: keyMatches ? header.valueType : header.keyType)
        }
        self.init(minimumCapacity: header.count)
        for _ in 0..<header.count {
            let key = try Key(from: &reader)
            self[key] = try Value(from: &reader)
        }
        reader.readMapEnd()
    }

    package func write(to writer: inout ThriftBinaryWriter) {
        writer.writeMapBegin(keyType: Key.thriftType, valueType: Value.thriftType, count: count)
        for key in keys.sorted() {
            key.write(to: &writer)
            self[key]!.write(to: &writer)
        }
    }
}

// MARK: - Structs

/// One field of a Thrift struct: its IDL id and name, said once, and how to read and write it.
package struct ThriftField<Root>: Sendable {
    package let id: Int16
    package let name: String
    package let type: ThriftType
    package let idlType: String
    /// A `required` field: always written, and a struct without it does not decode.
    package let isRequired: Bool
    let read: @Sendable (inout Root, inout ThriftBinaryReader) throws(ThriftError) -> Void
    let write: @Sendable (Root, inout ThriftBinaryWriter) -> Void

    private init<Value: ThriftValue>(_ id: Int16, _ name: String, _: Value.Type, isRequired: Bool,
                                     read: @escaping @Sendable (inout Root, inout ThriftBinaryReader) throws(ThriftError) -> Void,
                                     write: @escaping @Sendable (Root, inout ThriftBinaryWriter) -> Void) {
        self.id = id
        self.name = name
        self.type = Value.thriftType
        self.idlType = Value.idlType
        self.isRequired = isRequired
        self.read = read
        self.write = write
    }

    /// An `optional` field: omitted while nil.
    package init<Value: ThriftValue>(_ id: Int16, _ name: String, _ path: WritableKeyPath<Root, Value?> & Sendable) {
        self.init(id, name, Value.self, isRequired: false,
                  read: { (root: inout Root, r: inout ThriftBinaryReader) throws(ThriftError) in root[keyPath: path] = try Value(from: &r) },
                  write: { root, w in w.writeField(id, root[keyPath: path]) })
    }

    package init<Value: ThriftValue>(_ id: Int16, _ name: String, required path: WritableKeyPath<Root, Value> & Sendable) {
        self.init(id, name, Value.self, isRequired: true,
                  read: { (root: inout Root, r: inout ThriftBinaryReader) throws(ThriftError) in root[keyPath: path] = try Value(from: &r) },
                  write: { root, w in w.writeField(id, root[keyPath: path]) })
    }

    /// An `optional binary` field held as bytes.
    package init(_ id: Int16, _ name: String, binary path: WritableKeyPath<Root, [UInt8]?> & Sendable) {
        self.init(id, name, ThriftBinary.self, isRequired: false,
                  read: { (root: inout Root, r: inout ThriftBinaryReader) throws(ThriftError) in root[keyPath: path] = try r.readBinary() },
                  write: { root, w in w.writeField(id, root[keyPath: path].map(ThriftBinary.init)) })
    }
}

/// A Thrift struct, described by one table of its fields that both decoding and encoding use.
/// Decoding skips unknown field ids and known ids of another type (the service is free to send
/// fields newer than our IDL) and rejects a struct that lacks a `required` field.
package protocol ThriftStruct: ThriftValue {
    /// The struct's name in the IDL.
    static var thriftName: String { get }
    /// Every field this client models, in id order (the order they are written in).
    static var thriftFields: [ThriftField<Self>] { get }
    /// What decoding fills in: optional fields unset, required ones holding a placeholder that
    /// decoding must replace.
    static var decodingStart: Self { get }
}

extension ThriftStruct {
    package static var thriftType: ThriftType { .struct }
    package static var idlType: String { thriftName }

    package init(from reader: inout ThriftBinaryReader) throws(ThriftError) {
        let fields = Self.thriftFields
        var value = Self.decodingStart
        var seen: UInt64 = 0
        try reader.readStructBegin()
        while let header = try reader.readFieldBegin() {
            if let index = fields.firstIndex(where: { $0.id == header.id && $0.type == header.type }) {
                try fields[index].read(&value, &reader)
                seen |= 1 << UInt64(index)
            } else {
                try reader.skip(header.type)
            }
        }
        reader.readStructEnd()
        for (index, field) in fields.enumerated() where field.isRequired && seen & (1 << UInt64(index)) == 0 {
            throw .missingRequiredField(structName: Self.thriftName, field: field.name)
        }
        self = value
    }

    package func write(to writer: inout ThriftBinaryWriter) {
        for field in Self.thriftFields { field.write(self, &writer) }
        writer.writeFieldStop()
    }

    /// Encodes this struct alone (no message header), mostly for tests and golden bytes.
    package func thriftEncoded() -> [UInt8] {
        var writer = ThriftBinaryWriter()
        write(to: &writer)
        return writer.bytes
    }

    package init(thriftEncoded bytes: [UInt8], limits: ThriftReaderLimits = .default) throws(ThriftError) {
        var reader = ThriftBinaryReader(bytes, limits: limits)
        try self.init(from: &reader)
    }
}
