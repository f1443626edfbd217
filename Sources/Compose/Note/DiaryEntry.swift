import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// What the user says and brings beside a fix: the words of `log -m`/`--message-file`/`-e` and
/// the files of `--attach`/`--photo`, as the template shows them.
package struct DiaryEntry: Sendable, Equatable {
    /// The text as given (nil: none); it is cleaned when rendered, not here, so what is stored is
    /// what the user wrote.
    package var message: String?
    package var attachments: [AttachmentReference]

    package init(message: String? = nil, attachments: [AttachmentReference] = []) {
        self.message = message
        self.attachments = attachments
    }

    package init(message: String?, attachments: [NoteResource]) {
        self.init(message: message, attachments: attachments.map(AttachmentReference.init))
    }

    /// Paragraphs of lines, as the template places them: plain text made fit for a note (line
    /// ends unified, characters ENML cannot carry dropped, trailing spaces trimmed); blank lines
    /// separate paragraphs, and a paragraph keeps its line breaks.
    package static func paragraphs(_ text: String) -> [[String]] {
        let unified = ENMLCharacters.cleaned(text.replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\r", with: "\n"))
        var paragraphs: [[String]] = [], current: [String] = []
        for line in unified.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = String(line.reversed().drop(while: { $0.isWhitespace }).reversed())
            if trimmed.isEmpty {
                if !current.isEmpty { paragraphs.append(current); current = [] }
            } else {
                current.append(trimmed)
            }
        }
        if !current.isEmpty { paragraphs.append(current) }
        return paragraphs
    }

    /// `message` (a list of paragraphs, each `lines` of `text` with `break` before all but the
    /// first), `messageText` (the cleaned text in one string) and `attachments` (`hash`, `mime`,
    /// `fileName`, `width`, `height`, `image`); absent when there is nothing to show.
    var templateValues: [String: Any] {
        var values: [String: Any] = [:]
        let paragraphs = message.map(Self.paragraphs) ?? []
        if !paragraphs.isEmpty {
            values["message"] = paragraphs.map { lines -> [String: Any] in
                ["lines": lines.enumerated().map { ["text": $1, "break": $0 > 0] as [String: Any] }]
            }
            values["messageText"] = paragraphs.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
        }
        if !attachments.isEmpty {
            values["attachments"] = attachments.map { file -> [String: Any] in
                var item: [String: Any] = ["hash": file.hash, "mime": file.mime, "image": file.mime.hasPrefix("image/")]
                if let name = file.fileName { item["fileName"] = name }
                if let width = file.width, let height = file.height { item["width"] = width; item["height"] = height }
                return item
            }
        }
        return values
    }
}

/// A file in the note as the template refers to it: `<en-media type="{{mime}}" hash="{{hash}}"/>`.
package struct AttachmentReference: Sendable, Equatable {
    package var hash: String
    package var mime: String
    package var fileName: String?
    package var width: Int?
    package var height: Int?

    package init(_ resource: NoteResource) {
        hash = resource.hash
        mime = resource.mime
        fileName = resource.fileName
        width = resource.width
        height = resource.height
    }
}
