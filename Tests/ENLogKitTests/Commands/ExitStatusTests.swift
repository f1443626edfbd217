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
@testable import enlog
@testable import CoreCommands

/// Swift Testing has an `ExitStatus` of its own.
typealias EnlogExit = CoreCommands.ExitStatus

/// The one map from errors to exit codes (`ExitStatus`): total, exhaustive, and the same as the
/// tables in `enlog --help` and docs/exit-status.md.
@Suite("exit status map")
struct ExitStatusTests {
    /// An error that is no `ENLogError`: what a bug would throw.
    struct UnexpectedError: Error, CustomStringConvertible {
        var description: String { "something\nnobody expected" }
    }

    @Test func anErrorWithoutACategoryIsAnInternalError70() {
        #expect(EnlogExit.of(UnexpectedError()) == .internalError)
        #expect(EnlogExit.internalError.rawValue == 70)
        #expect(EnlogExit.of(CocoaError(.fileReadUnknown)) == .internalError)
        let message = CommandMain.internalErrorMessage(for: UnexpectedError())
        #expect(message == "internal error: something nobody expected", "one line: \(message)")
    }

    @Test func argumentParsersOwnErrorsAreToldApart() {
        for arguments in [["--bogus"], ["log", "--help"], ["--version"]] {
            do {
                // `--help` parses into argument-parser's help command, which throws when run.
                var command = try Enlog.parseAsRoot(arguments)
                try command.run()
                Issue.record("\(arguments) ran")
            } catch {
                #expect(CommandMain.isArgumentParsers(error), "\(arguments): \(type(of: error))")
            }
        }
        #expect(!CommandMain.isArgumentParsers(UnexpectedError()))
        #expect(!CommandMain.isArgumentParsers(OutboxError.missing(path: "/x")))
    }

    @Test func anENLogErrorExitsWithItsCategorysCode() {
        #expect(EnlogExit.of(OutboxError.locked(path: "/x", waited: 5)) == .temporary)
        #expect(EnlogExit.of(OutboxError.readOnly(path: "/x", detail: "")) == .cannotWrite)
        #expect(EnlogExit.of(OutboxError.corrupt(path: "/x", detail: "")) == .ioError)
        #expect(EnlogExit.of(GeocodingError.cache("disk I/O error")) == .cannotWrite)
        #expect(EnlogExit.of(ThriftError.negativeLength(-1)) == .protocolError)
    }

    /// Every exit status: reached by exactly one category (success and internal error by none),
    /// in the help table once, and in docs/exit-status.md's table.
    @Test(arguments: EnlogExit.allCases)
    func everyExitStatusIsMappedAndDocumented(_ status: EnlogExit) throws {
        let categories = ErrorCategory.allCases.filter { EnlogExit.of($0) == status }
        switch status {
        case .success, .internalError:
            #expect(categories.isEmpty, "\(status) is not an error category's code: \(categories)")
        default:
            #expect(categories.count == 1, "\(status) must be the code of exactly one category: \(categories)")
        }
        let helpRows = EnlogExit.helpTable.split(separator: "\n").map(String.init)
            .filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("\(status.rawValue)  ") }
        #expect(helpRows.count == 1, "\(EnlogExit.helpTable)")
        let doc = try String(contentsOf: Self.packageRoot.appendingPathComponent("docs/exit-status.md"), encoding: .utf8)
        #expect(doc.contains("\n| \(status.rawValue) | "), "docs/exit-status.md's table lacks \(status.rawValue)")
    }

    @Test func categoriesHaveDistinctCodes() {
        let codes = ErrorCategory.allCases.map { EnlogExit.of($0).rawValue }
        #expect(Set(codes).count == codes.count, "\(codes)")
    }

    static let packageRoot = Fixtures.repositoryRoot
}
