import Foundation
import Support

/// Every way an Evernote call can fail above the transport, in terms a sync engine can switch on:
/// re-authenticate, wait, fix the item and drop it from the retry loop, or retry later.
package enum EvernoteError: ENLogError, Equatable, Sendable {
    case authExpired
    case invalidAuth(parameter: String?)
    case permissionDenied(parameter: String?)
    /// Wait this many seconds before any further call for this user (nil: the service gave none).
    case rateLimited(seconds: Int?)
    case enmlValidation(parameter: String?)
    case badDataFormat(parameter: String?)
    case dataRequired(parameter: String?)
    case quotaReached(parameter: String?)
    case dataConflict(parameter: String?)
    case limitReached(parameter: String?)
    case notFound(identifier: String?, key: String?)
    /// Any other EDAMErrorCode from an EDAMUserException/EDAMSystemException.
    case service(code: EDAM.ErrorCode, parameter: String?, message: String?)
    /// A TApplicationException (undeclared server-side failure); `type` is its numeric kind.
    case application(type: Int32, message: String?)
    /// The client has no token to send.
    case missingAuthenticationToken
    case wrongSequenceID(expected: Int32, received: Int32)
    case wrongMethodName(expected: String, received: String)
    case unexpectedMessageType(ThriftMessageType)
    /// A REPLY to a non-void method with neither a result nor a declared exception.
    case missingResult(method: String)
    case malformedReply(ThriftError)

    /// Maps the error code of either EDAM exception; `parameter` is the user exception's, and
    /// `message` the system exception's.
    package init(code: EDAM.ErrorCode, parameter: String? = nil, message: String? = nil, rateLimitDuration: Int32? = nil) {
        switch code {
        case .authExpired: self = .authExpired
        case .invalidAuth: self = .invalidAuth(parameter: parameter)
        case .permissionDenied: self = .permissionDenied(parameter: parameter)
        case .rateLimitReached: self = .rateLimited(seconds: rateLimitDuration.map { Int(max(0, $0)) })
        case .enmlValidation: self = .enmlValidation(parameter: parameter)
        case .badDataFormat: self = .badDataFormat(parameter: parameter)
        case .dataRequired: self = .dataRequired(parameter: parameter)
        case .quotaReached: self = .quotaReached(parameter: parameter)
        case .dataConflict: self = .dataConflict(parameter: parameter)
        case .limitReached: self = .limitReached(parameter: parameter)
        default: self = .service(code: code, parameter: parameter, message: message)
        }
    }

    package init(_ exception: EDAM.UserException) {
        self.init(code: exception.errorCode, parameter: exception.parameter)
    }

    package init(_ exception: EDAM.SystemException) {
        self.init(code: exception.errorCode, message: exception.message,
                  rateLimitDuration: exception.rateLimitDuration)
    }

    package init(_ exception: EDAM.NotFoundException) {
        self = .notFound(identifier: exception.identifier, key: exception.key)
    }

    package init(_ exception: ThriftApplicationException) {
        self = .application(type: exception.type ?? 0, message: exception.message)
    }

    // MARK: What a sync engine asks

    /// The stored credentials are unusable: stop and ask the user to sign in again.
    package var requiresReauthentication: Bool {
        switch self {
        case .authExpired, .invalidAuth, .missingAuthenticationToken: return true
        case .dataRequired(let p), .badDataFormat(let p), .permissionDenied(let p):
            return p == "authenticationToken"
        case .service(let code, _, _):
            return code == .accountClear || code == .ssoAuthenticationRequired
                || code == .businessSecurityLoginRequired
        default: return false
        }
    }

    /// The same request may succeed later unchanged (the item should stay queued).
    package var isTransient: Bool {
        switch self {
        case .rateLimited, .quotaReached, .application, .wrongSequenceID, .wrongMethodName,
             .unexpectedMessageType, .missingResult, .malformedReply:
            return true
        case .service(let code, _, _):
            return code == .internalError || code == .shardUnavailable || code == .unknown
        default:
            return false
        }
    }

    /// Seconds to wait before the next call, when the service said so.
    package var retryAfterSeconds: Int? {
        if case .rateLimited(let seconds) = self { return seconds }
        return nil
    }

    // MARK: ENLogError

    package var reason: String {
        switch self {
        case .authExpired:
            return "Evernote rejected the sign-in: the token has expired or was revoked"
        case .invalidAuth:
            return "Evernote rejected the sign-in: the token is not valid"
        case .permissionDenied(let p):
            return "Evernote denied permission\(Self.about(p))"
        case .rateLimited(let seconds):
            return "Evernote's rate limit was reached" + (seconds.map { "; calls are blocked for \($0) s" } ?? "")
        case .enmlValidation(let p):
            return "Evernote rejected the note content as invalid ENML\(Self.about(p))"
        case .badDataFormat(let p):
            return "Evernote rejected a malformed value\(Self.about(p))"
        case .dataRequired(let p):
            return "Evernote needs a value that was missing\(Self.about(p))"
        case .quotaReached:
            return "the Evernote account's monthly upload quota is used up"
        case .dataConflict(let p):
            return "the change conflicts with data already in Evernote\(Self.about(p))"
        case .limitReached(let p):
            return "an Evernote account limit was reached\(Self.about(p))"
        case .notFound(let identifier, let key):
            let what = Self.clean(identifier) ?? "object"
            return "Evernote could not find the \(what)" + (Self.clean(key).map { " \"\($0)\"" } ?? "")
        case .service(let code, let p, let message):
            var text = "Evernote reported \(code.name) (\(code.rawValue))"
            if let p = Self.clean(p) { text += " for \(p)" }
            if let m = Self.clean(message) { text += ": \(m)" }
            return text
        case .application(let type, let message):
            return "the Evernote service failed (\(ThriftApplicationException.typeName(type)))"
                + (Self.clean(message).map { ": \($0)" } ?? "")
        case .missingAuthenticationToken:
            return "no Evernote token is available for this call"
        case .wrongSequenceID(let expected, let received):
            return "Evernote answered a different request (sequence id \(received), expected \(expected))"
        case .wrongMethodName(let expected, let received):
            return "Evernote answered another request than the one sent (a reply to \(Self.call(received)) for \(Self.call(expected)))"
        case .unexpectedMessageType(let type):
            return "Evernote sent an unexpected Thrift message type \(type.rawValue)"
        case .missingResult(let method):
            return "Evernote's reply to \(Self.call(method)) carried no result"
        case .malformedReply(let error):
            return "Evernote's reply could not be read: \(error.reason)"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .authExpired, .invalidAuth, .missingAuthenticationToken:
            return "run `enlog auth login` to sign in again"
        case .permissionDenied:
            if requiresReauthentication { return "run `enlog auth login` to sign in again" }
            return "check that the account may write to the chosen notebook (an app-notebook key only reaches its own notebook), or sign in again with `enlog auth login`"
        case .rateLimited(let seconds):
            return "wait \(seconds.map { "\($0) seconds" } ?? "a while") before calling Evernote again; queued notes are kept"
        case .enmlValidation:
            return "fix the note's content so it is valid ENML; it will not be retried unchanged"
        case .badDataFormat(let p), .dataRequired(let p):
            if requiresReauthentication { return "run `enlog auth login` to sign in again" }
            return "correct \(Self.clean(p) ?? "the value") and try again; it will not be accepted as it is"
        case .quotaReached:
            return "wait for the next monthly upload cycle or upgrade the Evernote account; queued notes are kept"
        case .dataConflict:
            return "pick a different name or refresh local data from Evernote, then try again"
        case .limitReached:
            return "remove items or make the note smaller (fewer tags, resources or bytes), then try again"
        case .notFound:
            return "check the configured notebook or note; it may have been deleted in Evernote"
        case .service(let code, _, _):
            switch code {
            case .internalError, .shardUnavailable, .unknown:
                return "retry later; the Evernote service is having trouble"
            case .accountClear:
                return "the Evernote account was disabled; run `enlog auth logout` and contact Evernote support"
            case .ssoAuthenticationRequired, .businessSecurityLoginRequired:
                return "sign in through your organisation's single sign-on, then run `enlog auth login`"
            case .deviceLimitReached:
                return "remove an old device from the Evernote account settings, then run `enlog auth login`"
            default:
                return "check the note or request named above and try again"
            }
        case .application:
            return "retry later; if it keeps failing, report the message above"
        case .wrongSequenceID, .wrongMethodName, .unexpectedMessageType, .missingResult, .malformedReply:
            return "retry later; if it persists, check that the configured Evernote host is the real service and no proxy alters its replies"
        }
    }

    private static func about(_ parameter: String?) -> String {
        clean(parameter).map { " (\($0))" } ?? ""
    }

    /// An EDAM call as a message names it: in words, not by its method name (`createNote`).
    static func call(_ method: String) -> String {
        switch method {
        case "checkVersion": return "the version check"
        case "getUser": return "the account request"
        case "getUserUrls": return "the request for the account's addresses"
        case "listNotebooks": return "the notebook list"
        case "getDefaultNotebook": return "the default notebook request"
        case "createNotebook": return "creating a notebook"
        case "listTags": return "the tag list"
        case "createNote": return "creating a note"
        case "findNotesMetadata": return "the note search"
        case "getNote": return "reading a note"
        case "deleteNote": return "deleting a note"
        case "getNoteApplicationDataEntry": return "reading a note's enlog.id"
        default: return "a request enlog never makes"
        }
    }

    /// Server-supplied text goes into a one-line reason: drop control characters and cap length.
    static func clean(_ text: String?) -> String? {
        guard let text else { return nil }
        let scalars = text.unicodeScalars.map { scalar -> Character in
            scalar.properties.generalCategory == .control
                || scalar.properties.generalCategory == .lineSeparator
                || scalar.properties.generalCategory == .paragraphSeparator ? " " : Character(scalar)
        }
        var line = String(scalars).trimmingCharacters(in: .whitespaces)
        if line.count > 200 { line = String(line.prefix(200)) + "…" }
        return line.isEmpty ? nil : line
    }
}

extension EvernoteError {
    /// The one mapping of Evernote's answers to README's exit codes; `sync`'s verdict derives
    /// from it too (`SyncSummary.FailureClass`).
    package var category: ErrorCategory {
        if requiresReauthentication { return .noPermission }
        switch self {
        case .rateLimited, .quotaReached:
            return .temporary
        case .service, .application:
            // An EDAM system error or an undeclared failure: the service is failing.
            return .unavailable
        case .enmlValidation, .badDataFormat, .dataRequired, .limitReached, .dataConflict, .notFound:
            return .invalidNote
        case .permissionDenied, .authExpired, .invalidAuth, .missingAuthenticationToken:
            return .noPermission
        case .wrongSequenceID, .wrongMethodName, .unexpectedMessageType, .missingResult, .malformedReply:
            return .protocolError
        }
    }
}
