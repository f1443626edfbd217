import XCTest
@testable import EvernoteAPI
@testable import Capture

/// Deterministic PRNG so a failing fuzz case can be replayed from its iteration number.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next() % UInt64(bound))
    }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}

/// Feeds valid, mutated and synthetic replies to the same decoding path the clients use. The
/// decoder's `throws(EvernoteError)` already rules out untyped errors; this proves no input traps,
/// hangs or allocates without bound.
final class ThriftFuzzTests: XCTestCase {
    private struct Seed {
        let method: String
        let bytes: [UInt8]
    }

    private func seeds() -> [Seed] {
        let note = Samples.fullNote
        var list = EDAM.NotesMetadataList(startIndex: 0, totalNotes: 3,
                                          notes: [EDAM.NoteMetadata(guid: "a"), EDAM.NoteMetadata(guid: "b")])
        list.notes[0].attributes = note.attributes
        list.notes[0].tagGuids = ["x", "y"]
        var user = EDAM.User()
        user.id = 1; user.username = "u"; user.shardId = "s1"; user.active = true
        var notebook = EDAM.Notebook(name: "Log", stack: "S")
        notebook.guid = "nb"; notebook.serviceCreated = 1
        var nonStrict = ThriftBinaryWriter()
        nonStrict.writeString("listTags")
        nonStrict.writeByte(2)
        nonStrict.writeI32(1)
        nonStrict.writeField(0, [EDAM.Tag(name: "t")])
        nonStrict.writeFieldStop()
        return [
            Seed(method: "createNote", bytes: replyMessage("createNote", seqid: 1) { $0.writeField(0, note) }),
            Seed(method: "getNote", bytes: replyMessage("getNote", seqid: 1) { $0.writeField(0, note) }),
            Seed(method: "listNotebooks", bytes: replyMessage("listNotebooks", seqid: 1) { $0.writeField(0, [notebook, notebook]) }),
            Seed(method: "findNotesMetadata", bytes: replyMessage("findNotesMetadata", seqid: 1) { $0.writeField(0, list) }),
            Seed(method: "getUser", bytes: replyMessage("getUser", seqid: 1) { $0.writeField(0, user) }),
            Seed(method: "getUserUrls", bytes: replyMessage("getUserUrls", seqid: 1) { $0.writeField(0, EDAM.UserUrls(noteStoreUrl: "https://h/n")) }),
            Seed(method: "checkVersion", bytes: replyMessage("checkVersion", seqid: 1) { $0.writeField(0, true) }),
            Seed(method: "getNoteApplicationDataEntry", bytes: replyMessage("getNoteApplicationDataEntry", seqid: 1) { $0.writeField(0, "v") }),
            Seed(method: "createNote", bytes: replyMessage("createNote", seqid: 1) { $0.writeField(1, EDAM.UserException(errorCode: .enmlValidation, parameter: "*")) }),
            Seed(method: "createNote", bytes: replyMessage("createNote", seqid: 1) { $0.writeField(2, EDAM.SystemException(errorCode: .rateLimitReached, message: "m", rateLimitDuration: 7)) }),
            Seed(method: "getNote", bytes: replyMessage("getNote", seqid: 1) { $0.writeField(3, EDAM.NotFoundException(identifier: "Note.guid", key: "g")) }),
            Seed(method: "listTags", bytes: replyMessage("listTags", seqid: 1, type: .exception) { $0.writeField(1, "boom"); $0.writeField(2, Int32(6)) }),
            Seed(method: "listTags", bytes: nonStrict.bytes),
        ]
    }

    /// Decodes `bytes` as the reply to `method`, as the matching client method would.
    @discardableResult
    private func decode(_ bytes: [UInt8], method: String) -> Result<Void, EvernoteError> {
        do throws(EvernoteError) {
            switch method {
            case "createNote", "getNote":
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<EDAM.Note>)
            case "listNotebooks":
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<[EDAM.Notebook]>)
            case "listTags":
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<[EDAM.Tag]>)
            case "findNotesMetadata":
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<EDAM.NotesMetadataList>)
            case "getUser":
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<EDAM.User>)
            case "getUserUrls":
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<EDAM.UserUrls>)
            case "checkVersion":
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<Bool>)
            default:
                _ = try ThriftRPC.decodeReply(bytes, method: method, seqid: 1, result: .decoded as ThriftResultReader<String>)
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Deeply nested result bodies (structs in lists in maps …), built once: building them per
    /// iteration dominated the run time in debug builds.
    private lazy var nestings: [[UInt8]] = {
        var rng = SplitMix64(seed: 7)
        return (0..<16).map { _ in
            var body: [UInt8] = [0x0c, 0x00, 0x00]
            for _ in 0..<(1 + rng.below(3000)) {
                switch rng.below(3) {
                case 0: body += [0x0c, 0x00, UInt8(rng.below(30))]                      // struct field
                case 1: body += [0x0f, 0x00, 0x01, 0x0f, 0x00, 0x00, 0x00, 0x01, 0x0c]   // list<list<struct>>
                default: body += [0x0d, 0x00, 0x03, 0x0b, 0x0c, 0x00, 0x00, 0x00, 0x01,   // map<string,struct>
                                  0x00, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x04]
                }
            }
            return body
        }
    }()

    private func mutate(_ input: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        switch rng.below(8) {
        case 0: // flip a few bytes
            for _ in 0..<(1 + rng.below(4)) where !bytes.isEmpty {
                bytes[rng.below(bytes.count)] ^= UInt8(1 + rng.below(255))
            }
        case 1: // truncate
            bytes = Array(bytes.prefix(rng.below(bytes.count + 1)))
        case 2: // overwrite 4 bytes with a hostile length
            let lengths: [UInt32] = [0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x00FF_FFFF, 0x0100_0000, UInt32(truncatingIfNeeded: rng.next())]
            let value = lengths[rng.below(lengths.count)]
            if bytes.count >= 4 {
                let at = rng.below(bytes.count - 3)
                for k in 0..<4 { bytes[at + k] = UInt8(truncatingIfNeeded: value >> UInt32(24 - 8 * k)) }
            }
        case 3: // insert random bytes
            let at = rng.below(bytes.count + 1)
            bytes.insert(contentsOf: (0..<(1 + rng.below(16))).map { _ in rng.byte() }, at: at)
        case 4: // duplicate a slice (repeated fields, nested copies)
            if !bytes.isEmpty {
                let start = rng.below(bytes.count)
                let end = start + rng.below(bytes.count - start) + 1
                bytes.insert(contentsOf: bytes[start..<end], at: rng.below(bytes.count + 1))
            }
        case 5: // deep nesting of structs/lists/maps as the success field
            bytes = Array(input.prefix(headerLength(input))) + nestings[rng.below(nestings.count)]
        case 6: // random garbage, sometimes behind a valid header
            let garbage = (0..<rng.below(64)).map { _ in rng.byte() }
            bytes = (rng.below(2) == 0 ? Array(input.prefix(headerLength(input))) : []) + garbage
        default: // change one type byte to another (possibly invalid) type id
            if !bytes.isEmpty { bytes[rng.below(bytes.count)] = UInt8(rng.below(17)) }
        }
        return bytes
    }

    /// Length of a strict message header (version, name, seqid) at the start of `bytes`.
    private func headerLength(_ bytes: [UInt8]) -> Int {
        guard bytes.count >= 8, bytes[0] == 0x80 else { return 0 }
        let nameLength = Int(bytes[4]) << 24 | Int(bytes[5]) << 16 | Int(bytes[6]) << 8 | Int(bytes[7])
        return min(bytes.count, 12 + nameLength)
    }

    private static func kind(of error: EvernoteError) -> String {
        switch error {
        case .malformedReply: return "malformedReply"
        case .wrongMethodName, .wrongSequenceID, .unexpectedMessageType, .missingResult: return "protocol"
        case .application: return "application"
        default: return "declared"
        }
    }

    private func failure(_ bytes: [UInt8], method: String) -> EvernoteError? {
        if case .failure(let error) = decode(bytes, method: method) { return error }
        return nil
    }

    func testSeedsDecode() {
        for seed in seeds() {
            switch decode(seed.bytes, method: seed.method) {
            case .success: break
            case .failure(let error):
                switch error {
                case .malformedReply, .missingResult, .wrongMethodName, .wrongSequenceID, .unexpectedMessageType:
                    XCTFail("seed for \(seed.method) did not decode: \(error)")
                default: break // declared exceptions are expected outcomes
                }
            }
        }
    }

    func testHundredThousandMutatedReplies() {
        let seeds = seeds()
        var rng = SplitMix64(seed: 0x454E_4C4F_4721)
        var successes = 0
        var failures: [String: Int] = [:]
        let iterations = 100_000
        let started = Date()
        for _ in 0..<iterations {
            let seed = seeds[rng.below(seeds.count)]
            var input = mutate(seed.bytes, &rng)
            if rng.below(4) == 0 { input = mutate(input, &rng) }
            switch decode(input, method: seed.method) {
            case .success: successes += 1
            case .failure(let error):
                failures[Self.kind(of: error), default: 0] += 1
            }
            // The same bytes straight into a struct decoder, past the message layer.
            _ = try? EDAM.Note(thriftEncoded: Array(input.dropFirst(headerLength(input) + 3)))
        }
        let elapsed = Date().timeIntervalSince(started)
        print("fuzz: \(iterations) replies in \(String(format: "%.1f", elapsed)) s, \(successes) decoded, failures \(failures.sorted { $0.key < $1.key })")
        XCTAssertGreaterThan(successes, 1000)
        XCTAssertGreaterThan(failures["malformedReply", default: 0], 10_000)
    }

    func testHostileHandcraftedReplies() {
        // A success list promising 2^31-1 notes, a string claiming 2 GiB, and 100k nested lists.
        let hugeList = replyMessage("listNotebooks", seqid: 1) { w in
            w.writeFieldBegin(.list, id: 0)
            w.writeListBegin(elementType: .struct, count: Int(Int32.max))
        }
        XCTAssertEqual(failure(hugeList, method: "listNotebooks"), (.malformedReply(.containerLimitExceeded(count: Int(Int32.max), limit: 1 << 20))))
        var nested = ThriftBinaryWriter()
        nested.writeMessageBegin(name: "getNote", type: .reply, seqid: 1)
        nested.writeFieldBegin(.list, id: 99)
        for _ in 0..<100_000 { nested.writeListBegin(elementType: .list, count: 1) }
        XCTAssertEqual(failure(nested.bytes, method: "getNote"), (.malformedReply(.depthLimitExceeded(limit: 64))))
        let hugeString = bytes(#"80 01 00 02 00 00 00 07 "getNote" 00 00 00 01 0c 00 00 0b 00 02 7f ff ff f0"#)
        XCTAssertEqual(failure(hugeString, method: "getNote"), (.malformedReply(.lengthLimitExceeded(length: 0x7fff_fff0, limit: 16 << 20))))
    }
}

