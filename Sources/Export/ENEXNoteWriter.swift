import Foundation
import Support
import EvernoteAPI
import Compose
import Outbox
import Sync

/// One outbox note as an ENEX `<note>`, in the element order Evernote's 4.0 DTD requires
/// (`evernote-export4.dtd`): title, content, created, updated, tags, note-attributes, resources.
///
/// The attributes are the ones `sync` uploads (`SyncEngine.edamNote`, `edamAttributes(of:)`),
/// `enlog.id` among them, so a note that reaches Evernote through an ENEX file can be found by
/// the same lookup as one that was uploaded.
struct ENEXNoteWriter {
    private let validator = ENMLValidator()

    static let dtdURL = "http://xml.evernote.com/pub/evernote-export4.dtd"

    static func header(exportDate: Date) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE en-export SYSTEM "\(dtdURL)">
        <en-export export-date="\(ENEXText.date(exportDate))" application="enlog" version="\(ENEXText.escaped(ENLogVersion.current))">

        """
    }

    static let footer = "</en-export>\n"

    /// Why the note cannot go into an ENEX file that Evernote imports as it is (nil: it can):
    /// text XML cannot carry, ENML Evernote would refuse, a resource whose bytes no longer match
    /// its hash, resources over Evernote's limits.
    func problem(_ note: OutboxNote, resources: [NoteResource]) -> String? {
        var texts: [(String, String?)] = [("title", note.title), ("place name", note.placeName), ("source", note.source),
                                          ("source application", note.sourceApplication)]
        texts += note.tags.map { ("tag", $0) }
        texts += resources.flatMap { [("file name", $0.fileName), ("MIME type", $0.mime)] }
        for case let (name, text?) in texts {
            if let bad = ENEXText.firstNonXMLCharacter(text) { return "its \(name) holds \(bad), which XML cannot carry" }
        }
        let report = validator.validate(note.content)
        if let first = report.errors.first {
            return "its ENML is invalid (line \(first.line): \(first.message))"
        }
        for resource in resources where MapImage.md5Hex(resource.body) != resource.hash {
            return "the bytes of its resource \(resource.fileName ?? resource.hash) no longer match their MD5 \(resource.hash)"
        }
        do {
            try ResourceLimits.check(resources, content: note.content)
        } catch {
            return error.reason
        }
        return nil
    }

    /// Writes the note; `problem` must have said nothing against it.
    func write(_ note: OutboxNote, resources: [NoteResource], to file: ENEXFile) throws(ExportError) {
        let edam = SyncEngine.edamNote(for: note, notebookGuid: nil)
        let created = ENEXText.date(milliseconds: edam.created ?? SyncEngine.milliseconds(note.createdAt))
        var head = "<note>\n  <title>\(ENEXText.escaped(note.title))</title>\n"
        head += "  <content>\(ENEXText.cdata(note.content))</content>\n"
        // The note as a sync creates it: never edited since, so updated is created.
        head += "  <created>\(created)</created>\n  <updated>\(created)</updated>\n"
        for tag in note.tags { head += "  <tag>\(ENEXText.escaped(tag))</tag>\n" }
        if let attributes = edam.attributes { head += Self.noteAttributes(attributes) }
        try file.write(head)
        for resource in resources {
            try write(resource, of: note, to: file)
        }
        try file.write("</note>\n")
    }

    /// `<note-attributes>` in the DTD's order.
    static func noteAttributes(_ attributes: EDAM.NoteAttributes) -> String {
        var lines = elements([
            ("subject-date", attributes.subjectDate.map(ENEXText.date(milliseconds:))),
            ("latitude", attributes.latitude.map(ENEXText.decimal)),
            ("longitude", attributes.longitude.map(ENEXText.decimal)),
            ("altitude", attributes.altitude.map(ENEXText.decimal)),
            ("author", attributes.author),
            ("source", attributes.source),
            ("source-url", attributes.sourceURL),
            ("source-application", attributes.sourceApplication),
            ("place-name", attributes.placeName),
            ("content-class", attributes.contentClass),
        ], indent: "    ")
        for (key, value) in (attributes.applicationData?.fullMap ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("    <application-data key=\"\(ENEXText.escaped(key))\">\(ENEXText.escaped(value))</application-data>")
        }
        guard !lines.isEmpty else { return "" }
        return "  <note-attributes>\n" + lines.joined(separator: "\n") + "\n  </note-attributes>\n"
    }

    /// `<name>value</name>` a line each, for the values there are, in the order given.
    static func elements(_ values: [(name: String, value: String?)], indent: String) -> [String] {
        values.compactMap { name, value in value.map { "\(indent)<\(name)>\(ENEXText.escaped($0))</\(name)>" } }
    }

    /// `<resource>`: the body in base64, 76 characters a line, encoded a slice at a time.
    private func write(_ resource: NoteResource, of note: OutboxNote, to file: ENEXFile) throws(ExportError) {
        try file.write("  <resource>\n    <data encoding=\"base64\">\n")
        let slice = 57 * 1024   // whole 76-character lines per slice
        var start = resource.body.startIndex
        while start < resource.body.endIndex {
            let end = resource.body.index(start, offsetBy: slice, limitedBy: resource.body.endIndex) ?? resource.body.endIndex
            let encoded = resource.body[start..<end].base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed])
            try file.write(encoded + "\n")
            start = end
        }
        var tail = "</data>\n    <mime>\(ENEXText.escaped(resource.mime))</mime>\n"
        if let width = resource.width, width > 0 { tail += "    <width>\(width)</width>\n" }
        if let height = resource.height, height > 0 { tail += "    <height>\(height)</height>\n" }
        var attributes = SyncEngine.edamAttributes(of: resource)
        attributes.timestamp = Self.timestamp(of: resource, in: note)
        tail += Self.resourceAttributes(attributes)
        try file.write(tail + "  </resource>\n")
    }

    /// A resource made where the note's fix was taken (its map, the photo whose GPS tags gave
    /// the fix) was made when the fix was taken.
    static func timestamp(of resource: NoteResource, in note: OutboxNote) -> EDAM.Timestamp? {
        guard let subject = note.subjectDate, let latitude = resource.latitude, let longitude = resource.longitude,
              latitude == note.latitude, longitude == note.longitude else { return nil }
        return SyncEngine.milliseconds(subject)
    }

    /// `<resource-attributes>` in the DTD's order.
    static func resourceAttributes(_ attributes: EDAM.ResourceAttributes) -> String {
        let lines = elements([
            ("source-url", attributes.sourceURL),
            ("timestamp", attributes.timestamp.map(ENEXText.date(milliseconds:))),
            ("latitude", attributes.latitude.map(ENEXText.decimal)),
            ("longitude", attributes.longitude.map(ENEXText.decimal)),
            ("altitude", attributes.altitude.map(ENEXText.decimal)),
            ("camera-make", attributes.cameraMake),
            ("camera-model", attributes.cameraModel),
            ("reco-type", attributes.recoType),
            ("file-name", attributes.fileName),
            ("attachment", attributes.attachment.map { $0 ? "true" : "false" }),
        ], indent: "      ")
        guard !lines.isEmpty else { return "" }
        return "    <resource-attributes>\n" + lines.joined(separator: "\n") + "\n    </resource-attributes>\n"
    }
}
