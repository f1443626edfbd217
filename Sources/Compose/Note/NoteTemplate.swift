import Foundation
import Mustache
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

package enum NoteError: ENLogError, Equatable {
    case templateNotFound(String)
    case templateUnreadable(path: String, reason: String)
    case templateSyntax(path: String, message: String)
    /// The rendered ENML breaks a rule; carries the validator's first complaint.
    case invalidENML(ENMLDiagnostic, count: Int)
    case invalidTitle(String)
    /// The note is over Evernote's content length with the user's words and within it without
    /// them: the words are too long, not the template; carries the validator's complaint.
    case messageTooLong(String)
    /// Rendering the template could pass Evernote's content limit (a section repeated inside a
    /// section over the same list multiplies): it was stopped there.
    case templateTooLarge(path: String, limit: Int)

    package var reason: String {
        switch self {
        case .templateNotFound(let path):
            return "template not found: \(path) (a template is a directory holding title.mustache and content.mustache)"
        case .templateUnreadable(let path, let reason):
            return "cannot read template \(path): \(reason)"
        case .templateSyntax(let path, let message):
            return "template \(path): \(message)"
        case .invalidENML(let diagnostic, let count):
            let more = count > 1 ? " (and \(count - 1) more)" : ""
            return "the template rendered invalid ENML: line \(diagnostic.line):\(diagnostic.column): \(diagnostic.message)\(more)"
        case .invalidTitle(let reason):
            return "the template rendered an invalid note title: \(reason)"
        case .messageTooLong(let detail):
            return "the message is too long for a note: with it, the \(detail)"
        case .templateTooLarge(let path, let limit):
            return "template \(path) renders more than Evernote's content limit of \(limit) characters "
                + "(EDAM_NOTE_CONTENT_LEN_MAX); rendering was stopped there"
        }
    }

    package var recoverySuggestion: String? {
        switch self {
        case .templateNotFound, .templateUnreadable:
            return "use --template default or classic, or a directory with title.mustache and content.mustache"
        case .templateSyntax, .invalidENML, .invalidTitle:
            return "fix the template; `enlog validate` checks ENML files; nothing was stored"
        case .templateTooLarge:
            return "fix the template: a section inside a section over the same list repeats it for every item of each; nothing was stored"
        case .messageTooLong:
            return "shorten the message, or attach it as a file with --attach; nothing was stored"
        }
    }
}

/// A note template: Mustache for the title (plain text) and for the ENML content. Values are
/// escaped for XML in the content (`{{x}}`); `{{{x}}}` inserts raw markup.
package struct NoteTemplate: Sendable {
    package static let defaultName = "default"
    /// The title enlog's first versions wrote, `LocationHistory [time]: address or coordinates`,
    /// over the default content (templates/classic).
    package static let classicName = "classic"

    let name: String
    let title: MustacheTemplate
    let content: MustacheTemplate
    let titleShape: TemplateShape
    let contentShape: TemplateShape

    /// The built-in template, compiled into the binary (templates/default in the repository).
    package static let builtIn = compiledIn(name: defaultName, title: PackageResources.title_mustache)

    /// `classic`, compiled in as `default` is.
    package static let classic = compiledIn(name: classicName, title: PackageResources.ClassicTitle_mustache)

    /// A template compiled into the binary: its own title over the one built-in content.
    private static func compiledIn(name: String, title: [UInt8]) -> NoteTemplate {
        do {
            return try NoteTemplate(name: name, title: String(decoding: title, as: UTF8.self),
                                    content: String(decoding: PackageResources.content_mustache, as: UTF8.self))
        } catch {
            preconditionFailure("the compiled-in template \(name) does not parse: \(error)")
        }
    }

    package init(name: String, title: String, content: String) throws(NoteError) {
        self.name = name
        (self.title, titleShape) = try Self.parse(title, path: name + "/title.mustache")
        (self.content, contentShape) = try Self.parse(content, path: name + "/content.mustache", pragma: ENMLEscaping.pragma)
    }

    /// Parses one template file, with `pragma` in front of its first line; a syntax error is one
    /// line naming the file, line and column. A partial or a parent, which swift-mustache would
    /// render as nothing (a note template has no others to include), is such an error too.
    static func parse(_ text: String, path: String, pragma: String = "") throws(NoteError) -> (MustacheTemplate, TemplateShape) {
        _ = ENMLEscaping.installed
        do {
            let template = try MustacheTemplate(string: pragma + text)
            do {
                return (template, try TemplateShape(text))
            } catch {
                throw NoteError.templateSyntax(path: "\(path):\(error.line):\(error.column)", message: unsupported)
            }
        } catch let error as NoteError {
            throw error
        } catch let error as MustacheTemplate.ParserError {
            let line = error.context.lineNumber
            let column = line == 1 ? max(error.context.columnNumber - pragma.count, 1) : error.context.columnNumber
            throw .templateSyntax(path: "\(path):\(line):\(column)", message: describe(error.error))
        } catch {
            throw .templateSyntax(path: path, message: describe(error))
        }
    }

    private static let unsupported = "partials and inheritance are not supported in note templates"

    /// The template rendered with `context`, or nil when the rendering was stopped because it
    /// could pass Evernote's content limit (`RenderBudget`).
    func render(_ part: Part, _ context: [String: Any]) -> String? {
        let (template, shape) = part == .title ? (title, titleShape) : (content, contentShape)
        let budget = RenderBudget(limit: ENMLTextScan.maximumContentLength, shape: shape, context: context)
        let rendered = template.render(budget.wrap(context))
        return budget.exceeded ? nil : rendered
    }

    enum Part {
        case title, content

        var fileName: String { self == .title ? "title.mustache" : "content.mustache" }
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? MustacheTemplate.Error {
        case .sectionCloseNameIncorrect?: return "a section is closed ({{/name}}) under another name than it was opened with"
        case .unfinishedName?: return "a tag is not finished (missing }})"
        case .expectedSectionEnd?: return "a section ({{#name}} or {{^name}}) is never closed with {{/name}}"
        case .invalidSetDelimiter?: return "a set-delimiter tag ({{=<% %>=}}) is malformed"
        case .invalidConfigVariableSyntax?, .unrecognisedConfigVariable?:
            return "a {{% ...}} tag is not understood (only {{% CONTENT_TYPE: TEXT}} or HTML)"
        case .transformAppliedToInheritanceSection?, .illegalTokenInsideInheritSection?, .textInsideInheritSection?:
            return unsupported
        case nil:
            return String(describing: error).split(separator: "\n").first.map(String.init) ?? "syntax error"
        }
    }

    /// `default`, `classic`, or a directory holding `title.mustache` and `content.mustache`.
    package static func load(_ nameOrDirectory: String) throws(NoteError) -> NoteTemplate {
        if nameOrDirectory == defaultName { return builtIn }
        if nameOrDirectory == classicName { return classic }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: nameOrDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .templateNotFound(nameOrDirectory)
        }
        func read(_ file: String) throws(NoteError) -> String {
            let path = nameOrDirectory + "/" + file
            guard FileManager.default.fileExists(atPath: path) else { throw .templateNotFound(path) }
            do {
                return try FileBytes.readText(path, limit: .smallText, accepting: .regularFilesOnly)
            } catch {
                throw .templateUnreadable(path: path, reason: error.reason)
            }
        }
        return try NoteTemplate(name: nameOrDirectory, title: try read("title.mustache"), content: try read("content.mustache"))
    }
}

extension NoteError {
    package var category: ErrorCategory {
        switch self {
        case .templateNotFound, .templateUnreadable: return .noInput
        case .templateSyntax, .invalidENML, .invalidTitle, .templateTooLarge: return .invalidNote
        case .messageTooLong: return .usage
        }
    }
}
