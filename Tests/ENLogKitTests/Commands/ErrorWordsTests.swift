import Foundation
import Testing
@testable import Support
@testable import EvernoteAPI
@testable import Configuration
@testable import Network
@testable import Auth
@testable import Capture
@testable import Compose
@testable import Outbox
@testable import Diary
@testable import Sync
@testable import Watch
@testable import Export
@testable import Serve
@testable import enlog

/// Issue 34 item 5: no name of the code reaches the terminal. `sync` printed "stopped:
/// networkDown"; every error's message is one line a person reads, in their words.
/// The Swift runtime's name of an enum value's case (what `print` shows for an enum that has no
/// description of its own).
@_silgen_name("swift_EnumCaseName")
func enumCaseName<T>(_ value: T) -> UnsafePointer<CChar>?

@Suite("Error messages are in words, not the code's names")
struct ErrorWordsTests {
    /// One error of every case of every error enlog has, with ordinary values in its fields.
    static let samples: [any ENLogError] = {
        let rejection = QualityFilter.Rejection.tooInaccurate(accuracy: 57, limit: 40)
        let diagnostic = ENMLDiagnostic(line: 3, column: 7, code: .prohibitedAttribute, message: "attribute 'onclick' is not allowed")
        let output = OutputError(code: ENOSPC, closedAtStart: false)
        let best = try! Fix(latitude: 48.137, longitude: 11.575, horizontalAccuracy: 57, timestamp: Date(timeIntervalSince1970: 1_780_000_000),
                            source: .gpsd)
        var samples: [any ENLogError] = []
        samples += Self.all([
            ReachabilityError.notAnAddress("router.local:443"), .missingPort("1.1.1.1"), .invalidPort("1.1.1.1:0"),
        ] as [ReachabilityError])
        samples += Self.all([
            ThriftHTTPError.unexpectedStatus(status: 503, snippet: "Service Unavailable"),
            .unexpectedContent(contentType: "text/html", snippet: "<html>"),
        ] as [ThriftHTTPError])
        samples += Self.all([
            NetworkEvents.Failure.socket("permission denied"),
        ] as [NetworkEvents.Failure])
        samples += Self.all([
            HTTPError.insecureURL("http://example.org"), .invalidURL("htp:/x"), .couldNotResolveHost("www.evernote.com"),
            .couldNotConnect("127.0.0.1:9 refused"), .timedOut, .connectionLost, .tls("certificate expired"),
            .responseTooLarge, .headerTooLarge, .cancelled, .badReply("no status line"),
            .caFileUnusable(path: "/etc/ca.pem", detail: "no certificate in it"), .other(code: 56, message: "Failure when receiving data"),
        ] as [HTTPError])
        samples += Self.all([
            PhotoError.noGPS(path: "a.jpg"), .badGPS(path: "a.jpg", detail: "latitude 91"),
            .rejected(path: "a.jpg", rejection: rejection), .unsupportedFormat(path: "a.bmp"),
        ] as [PhotoError])
        samples += Self.all([
            LocationError.nonFiniteCoordinate(name: "latitude", value: .nan), .latitudeOutOfRange(91), .longitudeOutOfRange(181),
            .valueOutOfRange(name: "altitude", value: 200_000, limits: -11000...100000, unit: "m"),
            .timeOutOfRange(Date(timeIntervalSince1970: 0)), .systemClockWrong(Date(timeIntervalSince1970: 0)),
            .malformedManualLocation(input: "48,x", problem: "longitude is not a number"),
            .nmeaLogUnreadable(path: "t.nmea", detail: "permission denied"), .nmeaLogEmpty(path: "t.nmea"),
            .nmeaLogHasNoSentences(path: "t.nmea"), .nmeaLogHasNoValidFix(path: "t.nmea", sentences: 12, badChecksums: 1),
            .nmeaLogHasNoCheckedSentence(path: "t.nmea", badChecksums: 4, firstBadLine: 2),
            .nmeaLogHasNoPositionSentences(path: "t.nmea", sentences: 5, kinds: "GSV", badChecksums: 0),
            .nmeaLogHasOnlyInvalidPositions(path: "t.nmea", line: 3, problem: "latitude 91", invalidSentences: 2),
            .nmeaLogHasNoDate(path: "t.nmea"), .invalidGPSDEndpoint("localhost:x"),
            .gpsdUnreachable(endpoint: "127.0.0.1:2947", detail: "connection refused"), .gpsdClosedConnection(endpoint: "127.0.0.1:2947"),
            .gpsdNoFix(endpoint: "127.0.0.1:2947", waited: 30, reports: 4, noDevice: false),
            .gpsdNoFix(endpoint: "127.0.0.1:2947", waited: 30, reports: 0, noDevice: true),
        ] as [LocationError])
        samples += Self.all([
            AuthError.accessDenied, .callbackTimedOut(seconds: 300), .cancelled, .callbackMismatch("state differs"),
            .callbackInvalid("no oauth_verifier"), .pastedURLInvalid("not a URL"), .listenerFailed("address in use"),
            .invalidHost("exa mple"), .missingConsumerKey, .serverRejected(step: "request token", status: 401, detail: "bad key"),
            .malformedResponse(step: "access token", detail: "no oauth_token"), .refreshImpossible("no refresh token"),
            .credentialsMissing(path: "/c.json"), .credentialsInsecure(path: "/c.json", mode: "0644"),
            .credentialsUnreadable(path: "/c.json", detail: "permission denied"), .credentialsInvalid(path: "/c.json"),
            .credentialsUnwritable(path: "/c.json", detail: "read-only file system"), .clientTooOld,
            .apiAccessRefused(host: "www.evernote.com", step: "registration", status: 403, detail: nil),
            .serviceRetired("sandbox.evernote.com"), .insecureNoteStore("http://x/shard/s1/notestore"),
        ] as [AuthError])
        samples += Self.all([
            UndecodedInputError.argument(shown: "caf\\xE9"), .environment(name: "ENLOG_DB", shown: "caf\\xE9"),
        ] as [UndecodedInputError])
        samples += Self.all([
            SyncError.syncInProgress(lockPath: "/d/enlog.sqlite.sync-lock", holderPid: 4242),
            .lockUnavailable(path: "/d/enlog.sqlite.sync-lock", detail: "read-only file system"),
            .reauthenticationRequired(detail: "token expired"),
        ] as [SyncError])
        samples += Self.all([
            MessageError.unreadable(path: "m.txt", reason: "permission denied"), .standardInputClosed, .noEditor, .noTerminal,
            .editorFailed(command: "vi", status: "exit 1", kept: "/tmp/m.txt"), .emptyFromEditor,
        ] as [MessageError])
        samples += Self.all([
            HistoryImportError.unreadable(path: "R.json", detail: "permission denied"), .unknownFormat(path: "x.bin", detail: "binary"),
            .empty(path: "R.json"), .badArchive(path: "t.zip", detail: "truncated"),
            .badFile(path: "R.json", format: .googleRecords, error: HistoryFileError("a point without latitude", at: .line(3))),
            .noHistoryInFolder(path: "/t", passedOver: 2), .outbox(path: "R.json", error: .diskFull(path: "/d/enlog.sqlite")),
            .nothingToImport(path: "R.json", format: .ownTracksRecords, skipped: [.nullIsland: 2]),
        ] as [HistoryImportError])
        samples += Self.all([
            ConfigError.unreadable(path: "/c.toml", reason: "permission denied"),
            .syntax(path: "/c.toml", line: 2, column: 5, message: "expected a value"),
            .unknownSetting(path: "/c.toml", name: "location.minaccuracy"),
            .wrongType(origin: .file("/c.toml"), name: "location.timeout", expected: .number),
            .invalidValue(origin: .environment("ENLOG_GEOCODING_TIMEOUT"), name: "geocoding.timeout", reason: "is '1e17'"),
        ] as [ConfigError])
        samples += Self.all([
            GeocodingError.unreachable("connection refused"), .timedOut(seconds: 3), .httpStatus(503),
            .malformedReply("not JSON"), .noAddress, .rateLimited(waitSeconds: 1.1), .cache("disk full"),
        ] as [GeocodingError])
        samples += Self.all([MQTTError.invalidBroker("is no mqtt:// URL")] as [MQTTError])
        samples += Self.all([
            PhonePayloadError.notJSON(.owntracks, detail: "unexpected end of data"),
            .notExpectedShape(.overland, detail: "no locations array"), .missing(.gpslogger, field: "lat"),
            .notANumber(.traccar, field: "lat", value: "north"), .badTime(.traccar, value: "yesterday"),
            .outOfRange(.owntracks, .latitudeOutOfRange(91)), .tooManyPoints(.overland, count: 20_000, limit: 10_000),
        ] as [PhonePayloadError])
        samples += Self.all([
            SystemdSocketActivation.Failure.badCount("two"), .notOne(2), .notListeningStream(3, "a datagram socket"),
        ] as [SystemdSocketActivation.Failure])
        samples += Self.all([
            ServeError.cannotListen(address: "127.0.0.1:8473", detail: "address in use"), .invalidDeviceName("my phone!"),
            .deviceExists("phone"), .noSuchDevice("phone"),
        ] as [ServeError])
        samples += Self.all([
            ServeExecutableError.missing(path: "/usr/bin/enlog-serve"), .cannotRun(path: "/usr/bin/enlog-serve", reason: "Exec format error"),
        ] as [ServeExecutableError])
        samples += Self.all([
            NoteError.templateNotFound("/t"), .templateUnreadable(path: "/t/title.mustache", reason: "permission denied"),
            .templateSyntax(path: "/t/content.mustache", message: "unclosed section"), .invalidENML(diagnostic, count: 2),
            .invalidTitle("a title with a line break"), .messageTooLong("the message is 6 MB"),
            .templateTooLarge(path: "/t/content.mustache", limit: 1_048_576),
        ] as [NoteError])
        samples += Self.all([
            MapError.disabled, .invalidSettings("map.zoom 25"), .unreachable(host: "tile.example.org", reason: "refused"),
            .httpStatus(host: "tile.example.org", status: 404), .notAnImage(host: "tile.example.org", detail: "text/html"),
            .refusedRedirect(host: "tile.example.org", detail: "to http"), .timedOut(seconds: 10), .cancelled,
            .rendering("cairo error"),
        ] as [MapError])
        samples += Self.all([
            AttachmentError.missing(path: "a.pdf"), .unreadable(path: "a.pdf", reason: "permission denied"), .empty(path: "a.pdf"),
            .tooLarge(path: "a.pdf", size: 30_000_000, limit: 26_214_400), .tooMany(count: 30, limit: 25),
            .noteTooLarge(size: 30_000_000, limit: 26_214_400, largest: "a.pdf"),
        ] as [AttachmentError])
        samples += Self.all([
            WatchError.alreadyRunning(lockPath: "/d/enlog.sqlite.watch-lock", holderPid: 4242),
            .lockUnavailable(path: "/d/enlog.sqlite.watch-lock", detail: "read-only"), .setupFailed("cannot open rtnetlink"),
        ] as [WatchError])
        samples += Self.all([
            EvernoteError.authExpired, .invalidAuth(parameter: "authenticationToken"), .permissionDenied(parameter: "Note"),
            .rateLimited(seconds: 900), .enmlValidation(parameter: "Element type \"script\" must be declared."),
            .badDataFormat(parameter: "Note.title"), .dataRequired(parameter: "Note.title"), .quotaReached(parameter: "Accounting.uploadLimit"),
            .dataConflict(parameter: "Notebook.name"), .limitReached(parameter: "Notebook"),
            .notFound(identifier: "Notebook.guid", key: "1234"), .service(code: .internalError, parameter: nil, message: "try later"),
            .application(type: 1, message: "Invalid method name: 'foo'"), .missingAuthenticationToken,
            .wrongSequenceID(expected: 1, received: 2), .wrongMethodName(expected: "createNote", received: "getNote"),
            .unexpectedMessageType(.call), .missingResult(method: "createNote"), .malformedReply(.badVersion(1)),
        ] as [EvernoteError])
        samples += Self.all([
            ThriftError.truncated(needed: 8, remaining: 2), .invalidType(99), .unexpectedType(expected: .string, found: .i32),
            .negativeLength(-1), .lengthLimitExceeded(length: 300_000_000, limit: 209_715_200),
            .containerLimitExceeded(count: 2_000_000, limit: 1_000_000), .depthLimitExceeded(limit: 64), .badVersion(7),
            .invalidMessageType(9), .missingRequiredField(structName: "NoteMetadata", field: "guid"),
        ] as [ThriftError])
        samples += Self.all([
            ExportError.fileExists(path: "d.enex"), .cannotCreate(path: "/x/d.enex", detail: "no such folder"),
            .writeFailed(path: "d.enex", detail: "disk full"), .standardOutputIsTerminal, .standardOutputFailed(output),
            .notesLeftOut(ids: [3, 4], first: "its map is not a PNG"),
        ] as [ExportError])
        samples += [output, DeadlineExceeded(budget: .seconds(5)), DigestError(day: "2026-11-22"), ResourceLimitError(detail: "a map of 30 MB"),
                    MapOutputError(path: "/m.png", detail: "permission denied"),
                    ExportedButNotPrinted(file: "d.enex", count: 2, error: output), StoredButNotPrinted(ids: [3], error: output)]
        for rejection in [QualityFilter.Rejection.tooOld(age: 40, limit: 15), .fromTheFuture(ahead: 3, tolerance: 2),
                          .fromTheFuture(ahead: 3600, tolerance: 2), .accuracyUnknown(limit: 40), rejection] {
            samples.append(LocationError.gpsdNoAcceptableFix(endpoint: "127.0.0.1:2947", waited: 30, fixesSeen: 9,
                                                             best: best, rejection: rejection))
        }
        samples += [
            OutboxError.locked(path: "/d/enlog.sqlite", waited: 5), .corrupt(path: "/d/enlog.sqlite", detail: "database disk image is malformed"),
            .readOnly(path: "/d/enlog.sqlite", detail: "read-only file system"), .cannotOpen(path: "/d/enlog.sqlite", detail: "it is a directory"),
            .diskFull(path: "/d/enlog.sqlite"), .newerSchema(path: "/d/enlog.sqlite"), .notInitialized(path: "/d/enlog.sqlite"),
            .missing(path: "/d/enlog.sqlite"), .foreign(path: "/d/enlog.sqlite", detail: "it holds tables enlog never creates (customers)"),
            .noteNotFound(id: 99), .duplicateNote(uid: "A1B2"), .storedFixInvalid(id: 3, detail: "latitude 91"),
            .database(path: "/d/enlog.sqlite", detail: "SQL logic error"),
            .vanished(path: "/d/enlog.sqlite", replaced: false, keptIn: "/d/enlog.sqlite", detail: nil),
            .vanished(path: "/d/enlog.sqlite", replaced: true, keptIn: "/d/enlog.sqlite.rescued-1", detail: nil),
            .logLost(path: "/d/enlog.sqlite", kept: true, detail: nil), .logLost(path: "/d/enlog.sqlite", kept: false, detail: "I/O error"),
            .logDeletedElsewhere(path: "/d/enlog.sqlite", holder: "enlog 4242"),
        ]
        for state in OutboxNote.State.allCases {
            for action in [OutboxNote.Action.markSending, .markSynced, .markFailed, .retry, .drop, .park, .resolveAddress] {
                samples.append(OutboxError.invalidTransition(id: 3, state: state, action: action))
            }
        }
        return samples
    }()

    static func all<E: ENLogError>(_ errors: [E]) -> [any ENLogError] { errors }

    /// A word of the code: camelCase (`networkDown`, `notFound`), or a Swift type's name
    /// (`OutboxError`, `DatabaseError`), which reads as a name to no one but a programmer.
    static func codeWords(in text: String) -> [String] {
        // Words of the trade a user meets elsewhere under these very names: products, formats,
        // and the parts of Evernote's published API (EDAM) as its documentation writes them.
        let known: Set<String> = ["NoteStore", "UserStore", "NoteMetadata", "SQLite", "OAuth", "GeoJSON", "OwnTracks",
                                  "iPhone", "macOS", "JavaScript", "FreeType",
                                  "ListenStream"]   // systemd's directive, as a .socket unit spells it
        return text.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init)
            .filter { word in
                guard !known.contains(word) else { return false }
                let camel = word.range(of: #"^[a-z]+[A-Z][A-Za-z]*$"#, options: .regularExpression) != nil
                let typeName = word.range(of: #"^[A-Z][a-z]+[A-Z][a-z]+[A-Za-z]*$"#, options: .regularExpression) != nil
                return camel || typeName
            }
    }

    @Test func noErrorMessageCarriesANameOfTheCode() {
        var found: [String] = []
        for error in Self.samples {
            for text in [error.reason, error.recoverySuggestion ?? ""] {
                let words = Self.codeWords(in: text)
                if !words.isEmpty { found.append("\(type(of: error)).\(Self.caseName(error)): \(words) in \"\(text)\"") }
                #expect(!text.contains("\n"), "one line: \(text)")
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test func syncStopReasonsAreWords() {
        for reason in [SyncSummary.StopReason.completed, .maxNotes, .dryRun, .rateLimited, .networkDown, .serviceFailing,
                       .cancelled, .offline, .noUplink] {
            #expect(Self.codeWords(in: reason.explanation).isEmpty, "\(reason.explanation)")
            #expect(reason.explanation != reason.rawValue)
        }
    }

    /// The check itself sees what it is for.
    @Test func theCheckFindsTheNamesItLooksFor() {
        #expect(Self.codeWords(in: "uploaded 0, 1 remaining; stopped: networkDown") == ["networkDown"])
        #expect(Self.codeWords(in: "internal error: OutboxError.notFound") == ["OutboxError", "notFound"])
        #expect(Self.codeWords(in: "Evernote's server could not be reached; the NoteStore answered").isEmpty)
    }

    /// Every case of every error type in Sources has a sample above: a case added later fails
    /// this test until it has one (and so its message is checked).
    @Test func everyCaseOfEveryErrorHasASample() throws {
        let sampled = Set(Self.samples.map { "\(Self.typeName($0)).\(Self.caseName($0))" })
        let sampledTypes = Set(Self.samples.map { Self.typeName($0) })
        var missing: [String] = []
        let sources = Fixtures.repositoryRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for declaration in text.matches(of: try Regex(#"(?m)^\s*(?:public |package )?(enum|struct) (\w+)\s*:[^{\n]*\bENLogError\b"#, as: (Substring, Substring, Substring).self)) {
                let name = String(declaration.output.2)
                guard sampledTypes.contains(name) else { missing.append("\(file): \(name) (no sample at all)"); continue }
                guard declaration.output.1 == "enum" else { continue }
                for caseName in Self.topLevelCases(of: text[declaration.range.upperBound...]) where !sampled.contains("\(name).\(caseName)") {
                    missing.append("\(file): \(name).\(caseName)")
                }
            }
        }
        #expect(missing.isEmpty, "errors without a sample:\n\(missing.joined(separator: "\n"))")
    }

    static func typeName(_ error: any Error) -> String {
        String(describing: type(of: error)).split(separator: ".").last.map(String.init) ?? ""
    }

    /// The case an enum value is (its description is its message, so the runtime is asked).
    static func caseName(_ error: any Error) -> String {
        func name<T>(_ value: T) -> String { enumCaseName(value).map { String(cString: $0) } ?? "" }
        return Mirror(reflecting: error).displayStyle == .enum ? _openExistential(error, do: name) : ""
    }

    /// The names of the `case`s declared directly in the type body that starts in `text`.
    static func topLevelCases(of text: Substring) -> [String] {
        var depth = 0
        var names: [String] = []
        var started = false
        var line = ""
        for character in text {
            if character == "{" { depth += 1; started = true }
            if character == "}" { depth -= 1; if started && depth == 0 { break } }
            if character == "\n" {
                if depth == 1, let match = line.firstMatch(of: try! Regex(#"^\s*case\s+(.*)$"#, as: (Substring, Substring).self)) {
                    // `case a, b(String)`: every name before a parenthesis, at the top of the list.
                    var parens = 0
                    var current = ""
                    for c in match.output.1 {
                        if c == "(" { parens += 1 }
                        if c == ")" { parens -= 1 }
                        if parens == 0 && c == "," { names.append(current); current = "" } else if parens == 0 && c != ")" { current.append(c) }
                    }
                    names.append(current)
                }
                line = ""
            } else {
                line.append(character)
            }
        }
        return names.map { $0.split(separator: "=").first.map(String.init) ?? $0 }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }
    }
}
