import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

extension NoteStyle {
    /// What the note's settings require of their values (Evernote's name rules, a real time
    /// zone, a known map link), for `Config` to check when it is read.
    package static let settingChecks: [Setting: SettingCheck] = [
        .timeZone: { TimeZoneName.resolve($0) == nil ? "'\($0)' is not a time zone (e.g. Europe/Paris, UTC)" : nil },
        .map: { ["openstreetmap", "google"].contains($0) ? nil : "must be openstreetmap or google" },
        .notebook: { NoteNames.isValidNotebook($0) ? nil : "'\($0)' \(NoteNames.notebookRule)" },
        .tags: { value in
            let count = value.split(separator: ",").count { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            if count > NoteNames.tagsPerNote {
                return "has \(count) tags; Evernote allows at most \(NoteNames.tagsPerNote) on a note (EDAM_NOTE_TAGS_MAX)"
            }
            guard let tag = value.split(separator: ",").map(String.init)
                .first(where: { !NoteNames.isValidTag($0.trimmingCharacters(in: .whitespaces)) }) else { return nil }
            return "has the tag '\(tag)'; each tag \(NoteNames.tagRule)"
        },
        .geocodingURL: { $0.hasPrefix("https://") || $0.hasPrefix("http://") ? nil : "must be an http(s) URL" },
    ]
}
