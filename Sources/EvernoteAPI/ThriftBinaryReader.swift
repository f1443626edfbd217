import Support
/// Bounds the work and memory a hostile or corrupt reply can cost. Every length and count is
/// also checked against the bytes actually left, so no limit ever lets the reader allocate more
/// than the input could describe.
package struct ThriftReaderLimits: Sendable, Hashable {
    /// Longest UTF-8 string (titles, ENML content: EDAM caps content at 5 MiB).
    package var maxStringLength: Int
    /// Longest binary value; resource bodies may reach EDAM's 200 MiB premium limit.
    package var maxBinaryLength: Int
    /// Most elements in one list/set/map.
    package var maxContainerCount: Int
    /// Deepest nesting of structs and containers (EDAM types nest at most ~5 levels).
    package var maxDepth: Int

    package init(maxStringLength: Int = 16 << 20,
                maxBinaryLength: Int = 210 << 20,
                maxContainerCount: Int = 1 << 20,
                maxDepth: Int = 64) {
        self.maxStringLength = maxStringLength
        self.maxBinaryLength = maxBinaryLength
        self.maxContainerCount = maxContainerCount
        self.maxDepth = maxDepth
    }

    package static let `default` = ThriftReaderLimits()
}

/// Reads Thrift binary-protocol bytes defensively: every failure is a `ThriftError`.
package struct ThriftBinaryReader: Sendable {
    private let bytes: [UInt8]
    package private(set) var position: Int
    package let limits: ThriftReaderLimits
    private var depth = 0

    package init(_ bytes: [UInt8], limits: ThriftReaderLimits = .default) {
        self.bytes = bytes
        self.position = 0
        self.limits = limits
    }

    package var remaining: Int { bytes.count - position }

    // MARK: Raw bytes

    private mutating func take(_ count: Int) throws(ThriftError) -> Range<Int> {
        guard count <= remaining else { throw .truncated(needed: count, remaining: remaining) }
        let range = position..<(position + count)
        position += count
        return range
    }

    private mutating func readUInt8() throws(ThriftError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(needed: 1, remaining: 0) }
        defer { position += 1 }
        return bytes[position]
    }

    private mutating func readBigEndian(_ width: Int) throws(ThriftError) -> UInt64 {
        let range = try take(width)
        var value: UInt64 = 0
        for index in range { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    private mutating func readType() throws(ThriftError) -> ThriftType {
        let byte = try readUInt8()
        guard let type = ThriftType(rawValue: byte) else { throw .invalidType(byte) }
        return type
    }

    // MARK: Messages

    /// Accepts the strict form (`80 01 00 0T`, name, seqid) and the old one (name, type byte,
    /// seqid): the first bit tells them apart, and old Evernote clients wrote the latter.
    package mutating func readMessageBegin() throws(ThriftError) -> ThriftMessageHeader {
        let first = try readI32()
        let rawType: UInt8
        let name: String
        if first < 0 {
            let word = UInt32(bitPattern: first)
            guard word & 0xFFFF_0000 == 0x8001_0000 else { throw .badVersion(word) }
            rawType = UInt8(truncatingIfNeeded: word)
            name = try readString()
        } else {
            name = try readStringBody(length: first)
            rawType = try readUInt8()
        }
        guard let type = ThriftMessageType(rawValue: rawType) else { throw .invalidMessageType(rawType) }
        let seqid = try readI32()
        return ThriftMessageHeader(name: name, type: type, seqid: seqid)
    }

    // MARK: Structs

    package mutating func readStructBegin() throws(ThriftError) {
        try enter()
    }

    /// Returns nil at STOP, which ends the struct.
    package mutating func readFieldBegin() throws(ThriftError) -> ThriftFieldHeader? {
        let type = try readType()
        if type == .stop { return nil }
        let id = try readI16()
        return ThriftFieldHeader(type: type, id: id)
    }

    package mutating func readStructEnd() {
        leave()
    }

    private mutating func enter() throws(ThriftError) {
        guard depth < limits.maxDepth else { throw .depthLimitExceeded(limit: limits.maxDepth) }
        depth += 1
    }

    private mutating func leave() {
        depth = max(0, depth - 1)
    }

    // MARK: Scalars

    package mutating func readBool() throws(ThriftError) -> Bool {
        try readUInt8() != 0
    }

    package mutating func readByte() throws(ThriftError) -> Int8 {
        Int8(bitPattern: try readUInt8())
    }

    package mutating func readI16() throws(ThriftError) -> Int16 {
        Int16(bitPattern: UInt16(truncatingIfNeeded: try readBigEndian(2)))
    }

    package mutating func readI32() throws(ThriftError) -> Int32 {
        Int32(bitPattern: UInt32(truncatingIfNeeded: try readBigEndian(4)))
    }

    package mutating func readI64() throws(ThriftError) -> Int64 {
        Int64(bitPattern: try readBigEndian(8))
    }

    package mutating func readDouble() throws(ThriftError) -> Double {
        Double(bitPattern: try readBigEndian(8))
    }

    /// Invalid UTF-8 becomes U+FFFD rather than an error: one odd title from the service should
    /// not make a whole notebook listing unreadable.
    package mutating func readString() throws(ThriftError) -> String {
        try readStringBody(length: try readI32())
    }

    package mutating func readBinary() throws(ThriftError) -> [UInt8] {
        let range = try checkedLength(try readI32(), limit: limits.maxBinaryLength)
        return Array(bytes[range])
    }

    private mutating func readStringBody(length: Int32) throws(ThriftError) -> String {
        let range = try checkedLength(length, limit: limits.maxStringLength)
        return String(decoding: bytes[range], as: UTF8.self)
    }

    private mutating func checkedLength(_ length: Int32, limit: Int) throws(ThriftError) -> Range<Int> {
        guard length >= 0 else { throw .negativeLength(length) }
        let count = Int(length)
        guard count <= limit else { throw .lengthLimitExceeded(length: count, limit: limit) }
        return try take(count)
    }

    // MARK: Containers

    package mutating func readListBegin() throws(ThriftError) -> (elementType: ThriftType, count: Int) {
        let elementType = try readType()
        let count = try readCount(elementSize: elementType.minimumEncodedSize, elementType: elementType)
        try enter()
        return (elementType, count)
    }

    package mutating func readListEnd() { leave() }

    package mutating func readSetBegin() throws(ThriftError) -> (elementType: ThriftType, count: Int) {
        try readListBegin()
    }

    package mutating func readSetEnd() { leave() }

    package mutating func readMapBegin() throws(ThriftError) -> (keyType: ThriftType, valueType: ThriftType, count: Int) {
        let keyType = try readType()
        let valueType = try readType()
        let count = try readCount(elementSize: keyType.minimumEncodedSize + valueType.minimumEncodedSize,
                                  elementType: keyType == .stop || keyType == .void ? keyType : valueType)
        try enter()
        return (keyType, valueType, count)
    }

    package mutating func readMapEnd() { leave() }

    /// Validates a container count before anything is allocated for it.
    private mutating func readCount(elementSize: Int, elementType: ThriftType) throws(ThriftError) -> Int {
        let raw = try readI32()
        guard raw >= 0 else { throw .negativeLength(raw) }
        let count = Int(raw)
        if count == 0 { return 0 }
        // STOP/VOID elements take no bytes, so the remaining-bytes bound could not stop a
        // billion of them; they never appear in valid data anyway.
        if elementType == .stop || elementType == .void { throw .invalidType(elementType.rawValue) }
        guard count <= limits.maxContainerCount else {
            throw .containerLimitExceeded(count: count, limit: limits.maxContainerCount)
        }
        guard count * elementSize <= remaining else {
            throw .truncated(needed: count * elementSize, remaining: remaining)
        }
        return count
    }

    // MARK: Lists

    package mutating func readList<T>(of elementType: ThriftType,
                                     _ element: (inout ThriftBinaryReader) throws(ThriftError) -> T) throws(ThriftError) -> [T] {
        let header = try readListBegin()
        guard header.count == 0 || header.elementType == elementType else {
            throw .unexpectedType(expected: elementType, found: header.elementType)
        }
        var result: [T] = []
        result.reserveCapacity(header.count)
        for _ in 0..<header.count { result.append(try element(&self)) }
        readListEnd()
        return result
    }

    // MARK: Skipping

    /// Skips one value of `type`, recursing into structs and containers under the depth limit;
    /// strings are stepped over without being copied.
    package mutating func skip(_ type: ThriftType) throws(ThriftError) {
        switch type {
        case .stop, .void:
            throw .invalidType(type.rawValue)
        case .bool, .byte:
            _ = try take(1)
        case .i16:
            _ = try take(2)
        case .i32:
            _ = try take(4)
        case .i64, .double:
            _ = try take(8)
        case .string:
            let length = try readI32()
            _ = try checkedLength(length, limit: max(limits.maxStringLength, limits.maxBinaryLength))
        case .struct:
            try readStructBegin()
            while let field = try readFieldBegin() { try skip(field.type) }
            readStructEnd()
        case .map:
            let header = try readMapBegin()
            for _ in 0..<header.count {
                try skip(header.keyType)
                try skip(header.valueType)
            }
            readMapEnd()
        case .set, .list:
            let header = try readListBegin()
            for _ in 0..<header.count { try skip(header.elementType) }
            readListEnd()
        }
    }
}
