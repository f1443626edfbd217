import Foundation
import Testing
@testable import Compose

/// A note template that multiplies (sections nested in sections over the same list) rendered
/// everything in memory before the size check: five `{{#message}}` deep over 40 `-m` made
/// 12.2 GB in 106 s. Rendering stops once the note could pass Evernote's content limit, and the
/// error names the template. Partials and parents, which a note template cannot have, are
/// refused with that reason instead of rendering as nothing.
@Suite("note templates: bounded rendering, partials refused")
struct TemplateBoundsTests {
    static let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\">\n<en-note>"

    static func nested(_ name: String, depth: Int, inner: String) -> String {
        String(repeating: "{{#\(name)}}", count: depth) + inner + String(repeating: "{{/\(name)}}", count: depth)
    }

    /// Three shapes that multiply: the five `{{#message}}` deep, sections over `lines`
    /// inside `message` inside `message` with literal text only, and an empty body (no output at
    /// all, only work).
    static let multiplying: [(name: String, content: String)] = [
        ("five deep", head + nested("message", depth: 5, inner: "<div>{{#lines}}{{text}}{{/lines}}</div>") + "</en-note>"),
        ("literal text", head + nested("message", depth: 4, inner: "{{#lines}}<div>" + String(repeating: "x", count: 200) + "</div>{{/lines}}") + "</en-note>"),
        ("no output", head + nested("message", depth: 6, inner: "") + "</en-note>"),
        ("reversed", head + nested("reversed(message)", depth: 5, inner: "<p>{{messageText}}</p>") + "</en-note>"),
    ]

    @Test(arguments: multiplying)
    func aMultiplyingTemplateStopsInBoundedMemoryAndNamesItself(_ shape: String, _ content: String) throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let template = home.directory.path("template")
        _ = try home.directory.file("template/title.mustache", contents: "Diary")
        _ = try home.directory.file("template/content.mustache", contents: content)
        let words = (1...40).flatMap { ["-m", "paragraph \($0) of the words someone wrote"] }
        let result = try RedirectedRun.run(Subprocess.enlog, ["log", "--at", "48.85,2.29", "--no-sync", "--template", template] + words,
                                           environment: home.environment, memoryLimit: 2 << 30, cpuSeconds: 60)
        let context = "\(shape): status \(result.status), peak \(result.peakKilobytes) KiB, stderr: \(result.standardError)"
        #expect(result.signal == nil, "\(context)")
        #expect(result.status == ExitStatusCode.invalidNote.rawValue, "\(context)")
        #expect(result.errorLines.count == 1, "\(context)")
        #expect(result.standardError.contains("template \(template)/content.mustache renders more than Evernote's content limit"),
                "\(context)")
        // enlog's own peak (`MeasuredRun`): 41 to 54 MB, rendering stopped at the content limit.
        #expect(result.peakKilobytes < 96 << 10, "\(context)")
        if FileManager.default.fileExists(atPath: home.database) { #expect(try home.counts().notes == 0, "nothing stored") }
    }

    /// A long message in a template that shows it once is still the message's fault, found in
    /// CPU time that grows with it: escaping its 500,000 `&` took 200 s of CPU while each one
    /// copied all the text before it (past the CPU limit the kernel ends enlog).
    @Test func aLongMessageInAPlainTemplateIsStillTheMessagesFault() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let big = try home.directory.file("big.txt", contents: String(repeating: "words & more ", count: 500_000)).path
        let result = try RedirectedRun.run(Subprocess.enlog, ["log", "--at", "1,2", "--no-sync", "--message-file", big],
                                           environment: home.environment, cpuSeconds: 60)
        #expect(result.status == ExitStatusCode.usage.rawValue, "\(result.standardError)")
        #expect(result.standardError.contains("the message is too long for a note"), "\(result.standardError)")
        #expect(!result.standardError.contains("template"), "\(result.standardError)")
    }

    /// A message of many paragraphs close to the limit, in the built-in template, is a note.
    @Test func manyParagraphsWithinTheLimitAreANote() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let text = (1...60_000).map { "paragraph \($0) & line\nsecond line" }.joined(separator: "\n\n")
        let file = try home.directory.file("many.txt", contents: text).path
        let result = try home.run("log", "--at", "1,2", "--no-sync", "--message-file", file)
        #expect(result.status == 0, "\(result.standardError)")
    }

    static let unsupported: [(content: String, line: Int, column: Int)] = [
        ("{{>footer}}", 1, 1),
        ("<en-note>\n  {{> footer}}\n</en-note>", 2, 3),
        ("<en-note>{{<parent}}{{/parent}}</en-note>", 1, 10),
        ("<en-note>{{#message}}{{>*dynamic}}{{/message}}</en-note>", 1, 22),
        ("<en-note>{{=<% %>=}}<%> footer%></en-note>", 1, 21),
    ]

    @Test(arguments: unsupported)
    func aPartialOrAParentIsRefusedWithItsReason(_ content: String, _ line: Int, _ column: Int) throws {
        #expect(throws: NoteError.templateSyntax(path: "t/content.mustache:\(line):\(column)",
                                                 message: "partials and inheritance are not supported in note templates")) {
            try NoteTemplate(name: "t", title: "x", content: content)
        }
        #expect(throws: NoteError.templateSyntax(path: "t/title.mustache:\(line):\(column)",
                                                 message: "partials and inheritance are not supported in note templates")) {
            try NoteTemplate(name: "t", title: content, content: "<en-note/>")
        }
    }

    @Test func aPartialInATemplateDirectoryFailsLogWithTheReason() throws {
        var home = try EnlogHome()
        home.extraEnvironment["ENLOG_GEOCODING_ENABLED"] = "false"
        let template = home.directory.path("template")
        _ = try home.directory.file("template/title.mustache", contents: "Diary")
        _ = try home.directory.file("template/content.mustache", contents: Self.head + "{{>footer}}</en-note>")
        let result = try home.run("log", "--at", "1,2", "--no-sync", "--template", template)
        #expect(result.status == ExitStatusCode.invalidNote.rawValue, "\(result.standardError)")
        #expect(result.standardError.contains("partials and inheritance are not supported"), "\(result.standardError)")
        if FileManager.default.fileExists(atPath: home.database) { #expect(try home.counts().notes == 0, "nothing stored") }
    }
}
