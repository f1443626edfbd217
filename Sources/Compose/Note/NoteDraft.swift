import Foundation
import Support
import EvernoteAPI
import Configuration
import Network
import Capture

/// What the `log` command hands to the outbox: the note as it will be uploaded.
public struct NoteDraft: Sendable, Equatable {
    /// Written into the note's applicationData so that a retried upload can find an earlier
    /// attempt that reached the server: this is what makes upload exactly-once.
    public var uid: String
    public var title: String
    /// Complete ENML document.
    public var content: String
    /// `nil` uploads into the account's default notebook.
    public var notebookName: String?
    public var tags: [String]
    public var placeName: String?
    public var subjectDate: Date?
    public var source: String?
    public var sourceApplication: String?
    /// The address was not geocoded yet: title, content and placeName must be completed
    /// (`OutboxStore.resolveAddress`) before the note may be uploaded.
    public var addressPending: Bool
    /// Which service/host/user the note was queued for.
    public var account: String?
    /// The place the note was rendered with (kept so a pending map can re-render it).
    public var place: Place?
    /// Files the note carries (its map), stored with it.
    public var resources: [NoteResource] = []
    /// The map could not be made yet: sync makes it before upload.
    public var mapPending = false
    /// The user's words (`log -m`), as given; kept so a re-rendered note keeps them.
    public var message: String?

    public init(uid: String = UUID().uuidString.lowercased(), title: String, content: String,
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
