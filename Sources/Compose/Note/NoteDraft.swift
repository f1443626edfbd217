import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// What the `log` command hands to the outbox: the note as it will be uploaded.
package struct NoteDraft: Sendable, Equatable {
    /// Written into the note's applicationData so that a retried upload can find an earlier
    /// attempt that reached the server: this is what makes upload exactly-once.
    package var uid: String
    package var title: String
    /// Complete ENML document.
    package var content: String
    /// `nil` uploads into the account's default notebook.
    package var notebookName: String?
    package var tags: [String]
    package var placeName: String?
    package var subjectDate: Date?
    package var source: String?
    package var sourceApplication: String?
    /// The address was not geocoded yet: title, content and placeName must be completed
    /// (`OutboxStore.resolveAddress`) before the note may be uploaded.
    package var addressPending: Bool
    /// Which service/host/user the note was queued for.
    package var account: String?
    /// The place the note was rendered with (kept so a pending map can re-render it).
    package var place: Place?
    /// Files the note carries (its map), stored with it.
    package var resources: [NoteResource] = []
    /// The map could not be made yet: sync makes it before upload.
    package var mapPending = false
    /// The user's words (`log -m`), as given; kept so a re-rendered note keeps them.
    package var message: String?

    package init(uid: String = UUID().uuidString.lowercased(), title: String, content: String,
                notebookName: String? = nil, tags: [String] = [], placeName: String? = nil,
                subjectDate: Date? = nil, source: String? = nil, sourceApplication: String? = nil,
                addressPending: Bool = false, account: String? = nil) {
        self.uid = uid
        self.title = title
        self.content = content
        self.notebookName = notebookName
        self.tags = tags
        self.placeName = placeName
        self.subjectDate = subjectDate
        self.source = source
        self.sourceApplication = sourceApplication
        self.addressPending = addressPending
        self.account = account
    }
}
