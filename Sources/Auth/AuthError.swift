import Foundation
import Support
import EvernoteAPI
import Configuration
import Network

/// Everything that can go wrong while logging in, refreshing or storing credentials.
/// No case ever carries a token, secret, verifier or authorization code.
package enum AuthError: ENLogError, Equatable {
    /// The user pressed "Decline" on the authorization page.
    case accessDenied
    /// Nobody completed the authorization within the time limit.
    case callbackTimedOut(seconds: Int)
    /// The login was cancelled (Ctrl-C, task cancellation).
    case cancelled
    /// The callback did not belong to this login (oauth_token or state mismatch).
    case callbackMismatch(String)
    /// The callback lacked a parameter it needs (`code`, `oauth_verifier`…), or carried `error=`.
    case callbackInvalid(String)
    /// A pasted redirect URL could not be read.
    case pastedURLInvalid(String)
    /// The loopback listener could not be set up.
    case listenerFailed(String)
    /// A host setting is unusable.
    case invalidHost(String)
    /// Missing consumer key/secret for OAuth 1.0a.
    case missingConsumerKey
    /// The server answered with an unexpected status or body.
    case serverRejected(step: String, status: Int, detail: String?)
    /// The server's answer could not be understood.
    case malformedResponse(step: String, detail: String)
    /// A refresh was needed but impossible (no refresh token, or the refresh token expired).
    case refreshImpossible(String)
    /// Credential file problems.
    case credentialsMissing(path: String)
    case credentialsInsecure(path: String, mode: String)
    case credentialsUnreadable(path: String, detail: String)
    /// The file is there and readable but is not enlog's credentials (garbage, truncated, edited).
    case credentialsInvalid(path: String)
    case credentialsUnwritable(path: String, detail: String)
    /// UserStore.checkVersion said no.
    case clientTooOld
    /// The OAuth 2.0 authorization server will not let enlog in: discovery or client
    /// registration refused (Evernote refuses it for plans without API access).
    case apiAccessRefused(host: String, step: String, status: Int, detail: String?)
    /// A service that no longer exists (Evernote's sandbox).
    case serviceRetired(String)
    /// The NoteStore URL (from the sign-in's `edam_noteStoreUrl`, `getUserUrls` or the user) is
    /// plain http:// to a host that is not loopback: every sync would refuse it.
    case insecureNoteStore(String)

    /// One line whatever the payloads hold: some quote the server or the browser (an `error=`
    /// value, a token endpoint's error code), which may carry line breaks and control characters.
    package var reason: String {
        HTTPText.oneLine(unflattenedReason, limit: 1000)
    }

    private var unflattenedReason: String {
        switch self {
        case .accessDenied:
            return "you denied access: Evernote did not authorize enlog"
        case .callbackTimedOut(let seconds):
            return "no authorization arrived within \(seconds) seconds"
        case .cancelled:
            return "login cancelled"
        case .callbackMismatch(let what):
            return "the authorization callback does not belong to this login (\(what) mismatch)"
        case .callbackInvalid(let what):
            return "the authorization callback is unusable: \(what)"
        case .pastedURLInvalid(let what):
            return "the pasted redirect URL is unusable: \(what)"
        case .listenerFailed(let what):
            return "cannot listen for the authorization callback on 127.0.0.1: \(what)"
        case .invalidHost(let what):
            return "invalid host: \(what)"
        case .missingConsumerKey:
            return "OAuth 1.0a needs a consumer key and secret"
        case .serverRejected(let step, let status, let detail):
            return "the server refused the \(step) (HTTP \(status))" + (detail.map { ": \($0)" } ?? "")
        case .malformedResponse(let step, let detail):
            return "the server's \(step) answer is malformed: \(detail)"
        case .refreshImpossible(let what):
            return "cannot refresh the access token: \(what)"
        case .credentialsMissing(let path):
            return "not logged in (no credentials at \(path))"
        case .credentialsInsecure(let path, let mode):
            return "refusing to read \(path): it is readable by other users (mode \(mode))"
        case .credentialsUnreadable(let path, let detail):
            return "cannot read credentials \(path): \(detail)"
        case .credentialsInvalid(let path):
            return "\(path) is not valid enlog credentials JSON"
        case .credentialsUnwritable(let path, let detail):
            return "cannot write credentials \(path): \(detail)"
        case .clientTooOld:
            return "the service no longer accepts this version of enlog's protocol"
        case let .apiAccessRefused(host, step, status, detail):
            return "\(host) refused enlog's \(step) (HTTP \(status)" + (detail.map { ": \($0)" } ?? "") + ")"
        case .serviceRetired(let what):
            return what
        case .insecureNoteStore(let url):
            return "refusing the NoteStore URL \(url): notes would travel unencrypted over plain http://"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .accessDenied:
            return "run `enlog auth login` again and choose Authorize"
        case .callbackTimedOut:
            return "run `enlog auth login` again; on a machine without a browser use --no-browser and paste the redirect URL"
        case .callbackMismatch:
            return "start a fresh `enlog auth login` and use only the URL it prints"
        case .pastedURLInvalid:
            return "paste the whole address from the browser's address bar after authorizing (it starts with http://127.0.0.1:)"
        case .missingConsumerKey:
            return "set ENLOG_CONSUMER_KEY and ENLOG_CONSUMER_SECRET (or the config's consumer_key/consumer_secret)"
        case .refreshImpossible, .credentialsMissing:
            return "run `enlog auth login`"
        case .credentialsInvalid:
            return "run `enlog auth logout`, then `enlog auth login`"
        case .credentialsInsecure(let path, _):
            return "chmod 600 \(path)"
        case .invalidHost:
            return "use https://HOST, or http:// only for 127.0.0.1/localhost/[::1]"
        case .clientTooOld:
            return "update enlog"
        case .apiAccessRefused:
            return "Evernote admits apps only for plans with API access; without it, `enlog export --enex FILE --new` "
                + "writes the notes as an ENEX file any Evernote client imports (docs/export.md)"
        case .serviceRetired:
            return "for a test server of your own use --service custom --host URL"
        case .insecureNoteStore:
            return "sign in to the service's https:// address (plain http:// is only for loopback test servers); nothing was stored"
        default:
            return nil
        }
    }
}

extension AuthError {
    package var category: ErrorCategory {
        switch self {
        case .invalidHost, .pastedURLInvalid, .serviceRetired: return .usage
        case .missingConsumerKey: return .config
        case .callbackTimedOut, .cancelled: return .temporary
        case .serverRejected(_, let status, _): return .ofHTTPStatus(status)
        case .insecureNoteStore: return .protocolError
        case .malformedResponse: return .protocolError
        case .listenerFailed, .credentialsUnwritable: return .cannotWrite
        // A symbolic link, a directory, a file too large or one enlog may not read: credentials
        // it cannot use (README's 77), not an outbox that cannot be written.
        case .credentialsUnreadable: return .noPermission
        default: return .noPermission
        }
    }
}
