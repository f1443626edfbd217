import Support
/// Carries one Thrift CALL message to the service and returns its one REPLY/EXCEPTION message,
/// both unframed. The production conformer POSTs over HTTP; tests substitute canned replies.
/// Transport failures (network, HTTP status) are the conformer's own errors and pass through.
package protocol ThriftTransport: Sendable {
    func roundTrip(_ request: [UInt8]) async throws -> [UInt8]
}

/// How to read field 0 (`success`) of a `<method>_result` struct.
package struct ThriftResultReader<Value>: Sendable {
    let type: ThriftType
    let read: @Sendable (inout ThriftBinaryReader) throws(ThriftError) -> Value
}

extension ThriftResultReader where Value: ThriftValue {
    /// The result as its own type says: a struct, a list of them, a bool, an i32, a string.
    package static var decoded: ThriftResultReader<Value> {
        ThriftResultReader(type: Value.thriftType) { (r: inout ThriftBinaryReader) throws(ThriftError) in try Value(from: &r) }
    }
}

/// The message-level half of an EDAM call, kept free of I/O so it can be tested byte for byte.
package enum ThriftRPC {
    /// Encodes `<method>_args` as a strict CALL message; `arguments` holds the encoded fields
    /// of the args struct without its STOP.
    static func encodeCall(method: String, seqid: Int32, arguments: [UInt8]) -> [UInt8] {
        var writer = ThriftBinaryWriter(reservingCapacity: arguments.count + method.utf8.count + 16)
        writer.writeMessageBegin(name: method, type: .call, seqid: seqid)
        writer.writeRaw(arguments)
        writer.writeFieldStop()
        return writer.bytes
    }

    private enum Outcome<Value> {
        case success(Value)
        case userException(EDAM.UserException)
        case systemException(EDAM.SystemException)
        case notFound(EDAM.NotFoundException)
        case application(ThriftApplicationException)
        case missingResult
        case wrongName(String)
        case wrongSeqid(Int32)
        case wrongType(ThriftMessageType)
    }

    /// Decodes one REPLY/EXCEPTION message for `method`/`seqid`. Declared exceptions sit at
    /// result fields 1 (user), 2 (system), 3 (not found); an exception wins over a result.
    package static func decodeReply<Value>(_ bytes: [UInt8], method: String, seqid: Int32,
                                   limits: ThriftReaderLimits = .default,
                                   result: ThriftResultReader<Value>) throws(EvernoteError) -> Value {
        let outcome: Outcome<Value>
        do {
            outcome = try parse(bytes, method: method, seqid: seqid, limits: limits, result: result)
        } catch {
            throw .malformedReply(error)
        }
        switch outcome {
        case .success(let value): return value
        case .userException(let e): throw EvernoteError(e)
        case .systemException(let e): throw EvernoteError(e)
        case .notFound(let e): throw EvernoteError(e)
        case .application(let e): throw EvernoteError(e)
        case .missingResult: throw .missingResult(method: method)
        case .wrongName(let name): throw .wrongMethodName(expected: method, received: name)
        case .wrongSeqid(let received): throw .wrongSequenceID(expected: seqid, received: received)
        case .wrongType(let type): throw .unexpectedMessageType(type)
        }
    }

    private static func parse<Value>(_ bytes: [UInt8], method: String, seqid: Int32,
                                     limits: ThriftReaderLimits,
                                     result: ThriftResultReader<Value>) throws(ThriftError) -> Outcome<Value> {
        var reader = ThriftBinaryReader(bytes, limits: limits)
        let header = try reader.readMessageBegin()
        guard header.name == method else { return .wrongName(header.name) }
        guard header.seqid == seqid else { return .wrongSeqid(header.seqid) }
        switch header.type {
        case .reply:
            break
        case .exception:
            return .application(try ThriftApplicationException(from: &reader))
        case .call, .oneway:
            return .wrongType(header.type)
        }

        var value: Value?
        var userException: EDAM.UserException?
        var systemException: EDAM.SystemException?
        var notFound: EDAM.NotFoundException?
        try reader.readStructBegin()
        while let field = try reader.readFieldBegin() {
            switch (field.id, field.type) {
            case (0, result.type): value = try result.read(&reader)
            case (1, .struct): userException = try EDAM.UserException(from: &reader)
            case (2, .struct): systemException = try EDAM.SystemException(from: &reader)
            case (3, .struct): notFound = try EDAM.NotFoundException(from: &reader)
            default: try reader.skip(field.type)
            }
        }
        reader.readStructEnd()

        if let userException { return .userException(userException) }
        if let systemException { return .systemException(systemException) }
        if let notFound { return .notFound(notFound) }
        if let value { return .success(value) }
        return .missingResult
    }
}

/// Issues calls on one transport with increasing sequence ids. An actor so that concurrent
/// callers never share a seqid.
actor ThriftServiceChannel {
    private let transport: any ThriftTransport
    private let limits: ThriftReaderLimits
    private var lastSeqid: Int32 = 0

    init(transport: any ThriftTransport, limits: ThriftReaderLimits) {
        self.transport = transport
        self.limits = limits
    }

    private func nextSeqid() -> Int32 {
        lastSeqid = lastSeqid == Int32.max ? 1 : lastSeqid + 1
        return lastSeqid
    }

    func call<Value>(_ method: String, arguments: [UInt8],
                     result: ThriftResultReader<Value>) async throws -> Value {
        let seqid = nextSeqid()
        let request = ThriftRPC.encodeCall(method: method, seqid: seqid, arguments: arguments)
        let reply = try await transport.roundTrip(request)
        return try ThriftRPC.decodeReply(reply, method: method, seqid: seqid, limits: limits, result: result)
    }
}
